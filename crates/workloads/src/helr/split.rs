//! The seeded train/test split and the standardization fitted on the training split only (a
//! test row must not leak into the scaling the model is trained with).

use rand_chacha::rand_core::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use serde::Serialize;

use super::{listed, HelrError, LabeledData};

/// Training and held-out samples.
#[derive(Debug, Clone, PartialEq)]
pub struct Split {
    /// The samples trained on.
    pub train: LabeledData,
    /// The samples held out for evaluation.
    pub test: LabeledData,
}

impl Split {
    /// Shuffles the samples with `seed` (Fisher-Yates on ChaCha20) and holds out the first
    /// `round(test_fraction * n)` of them (`--test-fraction`, strictly between 0 and 1, leaving
    /// at least one sample on each side). The same data and seed give the same split.
    ///
    /// ```
    /// use pimhe_workloads::helr::{LabeledData, Split};
    /// let data = LabeledData::synthetic_separable(100, 3, 1).unwrap().data;
    /// let split = Split::new(&data, 0.25, 9).unwrap();
    /// assert_eq!((split.train.len(), split.test.len()), (75, 25));
    /// assert_eq!(split, Split::new(&data, 0.25, 9).unwrap());
    /// assert!(Split::new(&data, 1.0, 9).is_err());
    /// ```
    pub fn new(data: &LabeledData, test_fraction: f64, seed: u64) -> Result<Self, HelrError> {
        if !(test_fraction > 0.0 && test_fraction < 1.0) {
            return Err(HelrError::Input(format!(
                "--test-fraction {test_fraction}: it must lie strictly between 0 and 1 (0.25 holds out a quarter)"
            )));
        }
        let n = data.len();
        let held_out = (test_fraction * n as f64).round() as usize;
        if held_out == 0 || held_out >= n {
            return Err(HelrError::Input(format!(
                "--test-fraction {test_fraction} of {n} samples holds out {held_out}, leaving {} to train on: both \
                 sides need at least one sample",
                n - held_out.min(n)
            )));
        }
        let mut order: Vec<usize> = (0..n).collect();
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        for i in (1..n).rev() {
            // The modulo bias of 64 random bits over at most 2^32 samples is below 2^-32.
            let j = (rng.next_u64() % (i as u64 + 1)) as usize;
            order.swap(i, j);
        }
        let (test, train) = order.split_at(held_out);
        Ok(Self { train: data.select(train), test: data.select(test) })
    }
}

/// What to do with a feature that is constant on the training split (its spread is zero, so
/// standardizing it would divide by zero; it carries no information for the model either).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ConstantFeatures {
    /// Refuse the data, naming the constant features.
    Refuse,
    /// Leave them out of the model, and report which were left out.
    Drop,
}

/// The affine map from raw features to standardized ones, fitted on a training split:
/// `(x - mean) / std_dev` per kept feature, the population standard deviation (divided by n).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Standardization {
    /// The features kept, in column order.
    pub features: Vec<String>,
    /// Their means over the training split.
    pub means: Vec<f64>,
    /// Their standard deviations over the training split (all positive).
    pub std_devs: Vec<f64>,
    /// The features left out as constant on the training split ([`ConstantFeatures::Drop`]).
    pub dropped: Vec<String>,
    /// The column of each kept feature in the data it was fitted on.
    #[serde(skip)]
    columns: Vec<usize>,
    /// All feature names of the data it was fitted on, to refuse other data.
    #[serde(skip)]
    fitted_on: Vec<String>,
}

impl Standardization {
    /// Fits the means and standard deviations of `train`'s features. A feature with one value
    /// on every training row is refused or dropped, as `constant` says.
    ///
    /// ```
    /// use pimhe_workloads::helr::{ConstantFeatures, LabeledData, Standardization};
    /// let names = vec!["a".to_string(), "flat".to_string()];
    /// let train = LabeledData::new(names, vec![vec![1.0, 5.0], vec![3.0, 5.0]], vec![0, 1]).unwrap();
    /// let refused = Standardization::fit(&train, ConstantFeatures::Refuse).unwrap_err().to_string();
    /// assert!(refused.starts_with("feature 'flat' is constant on the training split"));
    /// let fitted = Standardization::fit(&train, ConstantFeatures::Drop).unwrap();
    /// assert_eq!((fitted.means.as_slice(), fitted.std_devs.as_slice()), (&[2.0][..], &[1.0][..]));
    /// assert_eq!(fitted.apply(&train).unwrap().rows(), &[vec![-1.0], vec![1.0]]);
    /// ```
    pub fn fit(train: &LabeledData, constant: ConstantFeatures) -> Result<Self, HelrError> {
        let n = train.len();
        if n == 0 {
            return Err(HelrError::Input("the training split has no samples to standardize with".into()));
        }
        let names = train.features();
        let (mut features, mut means, mut std_devs, mut columns, mut dropped) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for (j, name) in names.iter().enumerate() {
            let values = train.rows().iter().map(|row| row[j]);
            let first = train.rows()[0][j];
            // Exactly constant, not "small spread": a tiny but real spread still standardizes.
            if values.clone().all(|v| v == first) {
                dropped.push((name.clone(), first));
                continue;
            }
            let mean = values.clone().sum::<f64>() / n as f64;
            let variance = values.map(|v| (v - mean) * (v - mean)).sum::<f64>() / n as f64;
            features.push(name.clone());
            means.push(mean);
            std_devs.push(variance.sqrt());
            columns.push(j);
        }
        if !dropped.is_empty() && (constant == ConstantFeatures::Refuse || features.is_empty()) {
            let (first, value) = &dropped[0];
            let names: Vec<&str> = dropped.iter().map(|(name, _)| name.as_str()).collect();
            let what =
                if features.is_empty() { "every feature is constant" } else { "standardizing divides by its spread" };
            return Err(HelrError::Input(format!(
                "feature '{first}' is constant on the training split (all {n} values are {value}); {} constant: {}; \
                 {what}: leave such columns out of the CSV or drop them (ConstantFeatures::Drop)",
                if names.len() == 1 { "1 feature is".to_string() } else { format!("{} features are", names.len()) },
                listed(&names)
            )));
        }
        Ok(Self {
            features,
            means,
            std_devs,
            dropped: dropped.into_iter().map(|(name, _)| name).collect(),
            columns,
            fitted_on: names.to_vec(),
        })
    }

    /// `data` standardized with the training split's statistics (dropped features left out).
    /// Refused where `data` has other features than the data it was fitted on.
    pub fn apply(&self, data: &LabeledData) -> Result<LabeledData, HelrError> {
        if data.features() != self.fitted_on.as_slice() {
            return Err(HelrError::Input(format!(
                "the standardization was fitted on features {} and is applied to {}: the same columns are needed",
                listed(&self.fitted_on),
                listed(data.features())
            )));
        }
        let rows = data
            .rows()
            .iter()
            .map(|row| {
                self.columns.iter().enumerate().map(|(k, &j)| (row[j] - self.means[k]) / self.std_devs[k]).collect()
            })
            .collect();
        Ok(data.with_features(self.features.clone(), rows))
    }
}
