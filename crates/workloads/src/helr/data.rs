//! Labelled samples: numeric features and a 0/1 label per row, read from a CSV or generated.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read};

use pimhe_ring::memory::{bytes, ensure_fits};
use rand_chacha::rand_core::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;

use super::{listed, HelrError};
use crate::stats::dataset::MAX_RECORD_BYTES;
use crate::stats::Dataset;

/// Rows of numeric features, each with a 0/1 label.
#[derive(Debug, Clone, PartialEq)]
pub struct LabeledData {
    features: Vec<String>,
    /// rows[sample][feature].
    rows: Vec<Vec<f64>>,
    labels: Vec<u8>,
}

/// Synthetic linearly separable data and the hyperplane that generated it (the truth a test
/// compares a trained model with).
#[derive(Debug, Clone)]
pub struct Synthetic {
    /// The samples: features `x1..`, label 1 where `direction . x + offset > 0`.
    pub data: LabeledData,
    /// The unit normal of the separating hyperplane.
    pub direction: Vec<f64>,
    /// Its offset: the hyperplane is `direction . x + offset = 0`.
    pub offset: f64,
    /// No sample lies closer than this to the hyperplane (in the units of the features).
    pub gap: f64,
}

impl LabeledData {
    /// Reads a CSV with a header row: the column named `label` holds the labels (0 or 1, as
    /// `0`, `1`, `0.0`, `1.00`...), every other column is a feature. Cells are read as
    /// [`Dataset::from_csv`] reads them (plain decimals of at most
    /// [`crate::stats::dataset::MAX_DECIMALS`] places, within its record, cell and memory
    /// limits), and its errors name the row and column. Refused: no label column, a header
    /// naming a column twice, no feature column, a missing or non-0/1 label, a non-numeric
    /// cell, no data rows.
    ///
    /// ```
    /// use pimhe_workloads::helr::LabeledData;
    /// let data = LabeledData::from_csv("a,b,y\n1,2.5,0\n3,-1,1\n".as_bytes(), "y").unwrap();
    /// assert_eq!(data.features(), &["a", "b"]);
    /// assert_eq!(data.rows(), &[vec![1.0, 2.5], vec![3.0, -1.0]]);
    /// assert_eq!(data.labels(), &[0, 1]);
    /// let bad = LabeledData::from_csv("a,y\n1,2\n".as_bytes(), "y").unwrap_err();
    /// assert_eq!(bad.to_string(), "row 2, column 'y': the label is 2; labels must be 0 or 1");
    /// ```
    pub fn from_csv(reader: impl Read, label: &str) -> Result<Self, HelrError> {
        // The header is read here to learn the feature columns, then handed back in front of
        // the rest, so that one reader (the statistics' Dataset) parses and bounds the file.
        let mut reader = BufReader::new(reader);
        let mut first = Vec::new();
        (&mut reader)
            .take(MAX_RECORD_BYTES as u64 + 1)
            .read_until(b'\n', &mut first)
            .map_err(|e| HelrError::Input(format!("the CSV header could not be read: {e}")))?;
        if first.len() > MAX_RECORD_BYTES {
            return Err(HelrError::Input(format!(
                "the CSV header is longer than {MAX_RECORD_BYTES} bytes, the most a CSV record may have"
            )));
        }
        let header = parse_header(&first)?;
        let positions = unique_positions(&header)?;
        if !positions.contains_key(label) {
            return Err(HelrError::Input(format!(
                "no label column '{label}' in the CSV header; it has {}: name the column of 0/1 labels",
                listed(&header)
            )));
        }
        let features: Vec<&str> = header.iter().map(String::as_str).filter(|&h| h != label).collect();
        if features.is_empty() {
            return Err(HelrError::Input(format!("the CSV has no feature columns besides the label column '{label}'")));
        }
        let mut columns = features.clone();
        columns.push(label);
        let data = Dataset::from_csv(first.as_slice().chain(reader), &columns, None).map_err(|e| {
            let message = e.to_string();
            // A label cell that is not a number is refused by the CSV reader, which does not
            // know that only 0 and 1 would do: say so.
            if message.starts_with("row ") && message.contains(&format!(", column '{label}': ")) {
                HelrError::Input(format!("{message}; labels must be 0 or 1"))
            } else {
                HelrError::from(e)
            }
        })?;
        let scale = 10i64.pow(data.decimals());
        let mut rows = Vec::with_capacity(data.users());
        let mut labels = Vec::with_capacity(data.users());
        for (index, row) in data.rows().iter().enumerate() {
            let (values, last) = row.split_at(features.len());
            labels.push(match last[0] {
                0 => 0,
                v if v == scale => 1,
                v => {
                    return Err(HelrError::Input(format!(
                        "row {}, column '{label}': the label is {}; labels must be 0 or 1",
                        index + 2,
                        v as f64 / scale as f64
                    )))
                }
            });
            rows.push(values.iter().map(|&v| v as f64 / scale as f64).collect());
        }
        Ok(Self { features: features.iter().map(|f| f.to_string()).collect(), rows, labels })
    }

    /// Samples from memory: `rows[i]` has one finite value per name of `features`, `labels[i]`
    /// is 0 or 1.
    ///
    /// ```
    /// use pimhe_workloads::helr::LabeledData;
    /// let data = LabeledData::new(vec!["x".into()], vec![vec![0.5], vec![-1.0]], vec![1, 0]).unwrap();
    /// assert_eq!(data.len(), 2);
    /// assert!(LabeledData::new(vec!["x".into()], vec![vec![0.5]], vec![2]).is_err());
    /// ```
    pub fn new(features: Vec<String>, rows: Vec<Vec<f64>>, labels: Vec<u8>) -> Result<Self, HelrError> {
        unique_positions(&features)?;
        if features.is_empty() {
            return Err(HelrError::Input("no feature columns: at least one is needed".into()));
        }
        if rows.len() != labels.len() {
            return Err(HelrError::Input(format!(
                "{} rows but {} labels: one label per row",
                rows.len(),
                labels.len()
            )));
        }
        for (i, (row, &label)) in rows.iter().zip(&labels).enumerate() {
            if row.len() != features.len() {
                return Err(HelrError::Input(format!(
                    "sample {i} has {} values; there are {} features",
                    row.len(),
                    features.len()
                )));
            }
            if let Some(j) = row.iter().position(|v| !v.is_finite()) {
                return Err(HelrError::Input(format!(
                    "sample {i}, feature '{}': {} is not a finite number",
                    features[j], row[j]
                )));
            }
            if label > 1 {
                return Err(HelrError::Input(format!("sample {i}: the label is {label}; labels must be 0 or 1")));
            }
        }
        Ok(Self { features, rows, labels })
    }

    /// `samples` samples of `features` standard normal features `x1..`, labelled by a random
    /// hyperplane from `seed` (a unit normal, offset 0.3, so the classes are not balanced
    /// exactly), with samples within 0.25 of the hyperplane discarded and redrawn: linearly
    /// separable with a gap, so a linear classifier can be exactly right.
    pub fn synthetic_separable(samples: usize, features: usize, seed: u64) -> Result<Synthetic, HelrError> {
        const OFFSET: f64 = 0.3;
        const GAP: f64 = 0.25;
        if samples == 0 || features == 0 {
            return Err(HelrError::Input(format!(
                "synthetic data of {samples} samples and {features} features: both must be at least 1"
            )));
        }
        // Each row: its vector, its values, and the allocator's header; refused before it is made.
        let row = features.saturating_mul(size_of::<f64>()).saturating_add(size_of::<Vec<f64>>() + 16);
        ensure_fits(&format!("{samples} synthetic samples of {features} features"), bytes(&[samples], row))
            .map_err(|e| HelrError::Capacity(e.to_string()))?;
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        let mut direction: Vec<f64> = (0..features).map(|_| normal(&mut rng)).collect();
        let norm = direction.iter().map(|d| d * d).sum::<f64>().sqrt();
        direction.iter_mut().for_each(|d| *d /= norm);
        // Where the available memory is unknown, an impossible count still fails cleanly here.
        let (mut rows, mut labels) = (Vec::new(), Vec::new());
        rows.try_reserve_exact(samples)
            .and_then(|()| labels.try_reserve_exact(samples))
            .map_err(|e| HelrError::Capacity(format!("{samples} synthetic samples do not fit in memory: {e}")))?;
        while rows.len() < samples {
            let x: Vec<f64> = (0..features).map(|_| normal(&mut rng)).collect();
            let score = dot(&direction, &x) + OFFSET;
            // The score is standard normal plus the offset: about 80% of draws are kept.
            if score.abs() > GAP {
                labels.push(u8::from(score > 0.0));
                rows.push(x);
            }
        }
        let names = (1..=features).map(|i| format!("x{i}")).collect();
        Ok(Synthetic { data: Self { features: names, rows, labels }, direction, offset: OFFSET, gap: GAP })
    }

    /// Feature names, in column order.
    pub fn features(&self) -> &[String] {
        &self.features
    }

    /// Feature values: `rows()[sample][feature]`.
    pub fn rows(&self) -> &[Vec<f64>] {
        &self.rows
    }

    /// Labels, 0 or 1, one per row.
    pub fn labels(&self) -> &[u8] {
        &self.labels
    }

    /// Number of samples.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Whether there are no samples.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The samples at `indices`, in that order (for the split; indices are in range).
    pub(super) fn select(&self, indices: &[usize]) -> Self {
        Self {
            features: self.features.clone(),
            rows: indices.iter().map(|&i| self.rows[i].clone()).collect(),
            labels: indices.iter().map(|&i| self.labels[i]).collect(),
        }
    }

    /// The same labels with other features (standardization's output; shapes agree).
    pub(super) fn with_features(&self, features: Vec<String>, rows: Vec<Vec<f64>>) -> Self {
        Self { features, rows, labels: self.labels.clone() }
    }
}

/// The cells of a header line, trimmed as the CSV reader of the rows trims them.
fn parse_header(line: &[u8]) -> Result<Vec<String>, HelrError> {
    let mut csv = csv::ReaderBuilder::new().has_headers(false).trim(csv::Trim::All).from_reader(line);
    let mut record = csv::StringRecord::new();
    match csv.read_record(&mut record) {
        Ok(true) => Ok(record.iter().map(str::to_string).collect()),
        Ok(false) => Err(HelrError::Input("the CSV is empty: it needs a header row".into())),
        Err(e) => Err(HelrError::Input(format!("the CSV header: {e}"))),
    }
}

/// Each name's position, refused where one is named twice: which column would be meant?
fn unique_positions(names: &[String]) -> Result<HashMap<&str, usize>, HelrError> {
    let mut positions = HashMap::with_capacity(names.len());
    for (i, name) in names.iter().enumerate() {
        if let Some(first) = positions.insert(name.as_str(), i) {
            return Err(HelrError::Input(format!(
                "column '{name}' is named twice (columns {} and {}); column names must be unique",
                first + 1,
                i + 1
            )));
        }
    }
    Ok(positions)
}

/// `a . b`.
pub(super) fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// A standard normal variate (Box-Muller; one of the pair is enough here).
fn normal(rng: &mut ChaCha20Rng) -> f64 {
    // 53 random bits each; u1 in (0, 1] so that its logarithm is finite.
    let u1 = 1.0 - (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
    let u2 = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}
