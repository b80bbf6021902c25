//! The users' data: numeric columns read from a CSV file or generated, held exactly as
//! fixed-point integers (no floating point between the file and the plaintext encoding).

use std::io::Read;

use rand_chacha::rand_core::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;

use super::StatsError;

/// Most decimal places a column may carry (10^9 still leaves room in an i64 mantissa).
pub const MAX_DECIMALS: u32 = 9;

/// Selected numeric columns, one row per user, as integers scaled by 10^decimals.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dataset {
    columns: Vec<String>,
    /// rows[user][column] = value * 10^decimals, exactly.
    rows: Vec<Vec<i64>>,
    decimals: u32,
}

impl Dataset {
    /// Reads `columns` of a CSV with a header row. Every selected cell must be a plain decimal
    /// number (`-12.5`, `3`, `0.25`); the scale is 10^d for the most decimal places `d` seen in
    /// the selected columns, unless `decimals` fixes it (cells with more places are errors).
    ///
    /// ```
    /// use pimhe_workloads::stats::Dataset;
    /// let csv = "name,age,income\nann,34,51.5\nbob,29,48.25\n";
    /// let data = Dataset::from_csv(csv.as_bytes(), &["age", "income"], None).unwrap();
    /// assert_eq!(data.decimals(), 2);
    /// assert_eq!(data.rows(), &[vec![3400, 5150], vec![2900, 4825]]);
    /// ```
    pub fn from_csv(reader: impl Read, columns: &[&str], decimals: Option<u32>) -> Result<Self, StatsError> {
        if columns.is_empty() {
            return Err(StatsError::Input("no columns selected (--columns a,b,...)".into()));
        }
        let mut csv = csv::ReaderBuilder::new().has_headers(true).trim(csv::Trim::All).from_reader(reader);
        let header = csv.headers().map_err(|e| StatsError::Input(format!("cannot read the CSV header: {e}")))?.clone();
        let positions = columns
            .iter()
            .map(|&name| {
                header.iter().position(|h| h == name).ok_or_else(|| {
                    let known: Vec<&str> = header.iter().collect();
                    StatsError::Input(format!("no column '{name}' in the CSV header; it has {known:?}"))
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let mut cells: Vec<Vec<Decimal>> = Vec::new();
        for (index, record) in csv.records().enumerate() {
            // Row 1 is the header, so the first data row is row 2 of the file.
            let row = index + 2;
            let record = record.map_err(|e| StatsError::Input(format!("row {row}: {e}")))?;
            let values = positions
                .iter()
                .zip(columns)
                .map(|(&position, &column)| {
                    let cell = record.get(position).unwrap_or("");
                    Decimal::parse(cell).ok_or_else(|| {
                        let what = if cell.is_empty() { "is missing" } else { "is not a plain decimal number" };
                        StatsError::Input(format!("row {row}, column '{column}': the cell '{cell}' {what}"))
                    })
                })
                .collect::<Result<Vec<_>, _>>()?;
            cells.push(values);
        }
        if cells.is_empty() {
            return Err(StatsError::Input("the CSV has no data rows".into()));
        }
        let decimals = match decimals {
            Some(d) => d,
            None => cells.iter().flatten().map(|d| d.places).max().unwrap_or(0),
        };
        if decimals > MAX_DECIMALS {
            return Err(StatsError::Input(format!("{decimals} decimal places; at most {MAX_DECIMALS} are supported")));
        }
        let rows = cells
            .iter()
            .enumerate()
            .map(|(index, row)| {
                row.iter()
                    .zip(columns)
                    .map(|(cell, column)| {
                        cell.scaled(decimals).ok_or_else(|| {
                            StatsError::Input(format!(
                                "row {}, column '{column}': {} does not fit {decimals} decimal places (or 64 bits)",
                                index + 2,
                                cell.text
                            ))
                        })
                    })
                    .collect::<Result<Vec<_>, _>>()
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self { columns: columns.iter().map(|c| c.to_string()).collect(), rows, decimals })
    }

    /// `users` rows of synthetic data from `seed`: features `x1..x8` with one decimal in
    /// [-20, 20], and a response `y = 3 + sum_i (i - 4.5) x_i / 4 + noise` with two decimals,
    /// so a regression has a known answer. Deterministic for a seed.
    pub fn synthetic(users: usize, seed: u64, columns: &[&str]) -> Result<Self, StatsError> {
        const FEATURES: usize = 8;
        let names: Vec<String> = (1..=FEATURES).map(|i| format!("x{i}")).chain(["y".to_string()]).collect();
        if users == 0 {
            return Err(StatsError::Input("--users must be at least 1".into()));
        }
        let positions = columns
            .iter()
            .map(|c| {
                names.iter().position(|n| n == c).ok_or_else(|| {
                    StatsError::Input(format!("synthetic data has columns {names:?}; '{c}' is not one of them"))
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        let rows = (0..users)
            .map(|_| {
                // Hundredths throughout: features are whole tenths, y carries two places.
                let x: Vec<i64> = (0..FEATURES).map(|_| 10 * (rng.next_u32() % 401) as i64 - 2000).collect();
                let trend: i64 = x.iter().enumerate().map(|(i, &xi)| (2 * i as i64 - 7) * xi / 8).sum();
                let noise = (rng.next_u32() % 201) as i64 - 100;
                let all: Vec<i64> = x.iter().copied().chain([300 + trend + noise]).collect();
                positions.iter().map(|&p| all[p]).collect()
            })
            .collect();
        Ok(Self { columns: columns.iter().map(|c| c.to_string()).collect(), rows, decimals: 2 })
    }

    /// Column names, in selection order.
    pub fn columns(&self) -> &[String] {
        &self.columns
    }

    /// Values scaled by 10^decimals: `rows()[user][column]`.
    pub fn rows(&self) -> &[Vec<i64>] {
        &self.rows
    }

    /// Number of users (rows).
    pub fn users(&self) -> usize {
        self.rows.len()
    }

    /// Decimal places of the fixed-point scale.
    pub fn decimals(&self) -> u32 {
        self.decimals
    }

    /// The scale 10^decimals as a float, for reporting.
    pub fn scale(&self) -> f64 {
        10f64.powi(self.decimals as i32)
    }
}

/// A cell parsed exactly: `mantissa / 10^places`.
struct Decimal {
    text: String,
    mantissa: i64,
    places: u32,
}

impl Decimal {
    fn parse(cell: &str) -> Option<Self> {
        let (negative, digits) = match cell.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, cell.strip_prefix('+').unwrap_or(cell)),
        };
        let (whole, fraction) = digits.split_once('.').unwrap_or((digits, ""));
        let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
        if whole.is_empty() && fraction.is_empty() || !all_digits(whole) || !all_digits(fraction) {
            return None;
        }
        let places = u32::try_from(fraction.len()).ok()?;
        let mut magnitude: i64 = 0;
        for digit in whole.bytes().chain(fraction.bytes()) {
            magnitude = magnitude.checked_mul(10)?.checked_add(i64::from(digit - b'0'))?;
        }
        Some(Self { text: cell.to_string(), mantissa: if negative { -magnitude } else { magnitude }, places })
    }

    /// The value times 10^decimals, if exact and in range.
    fn scaled(&self, decimals: u32) -> Option<i64> {
        let shift = decimals.checked_sub(self.places)?;
        self.mantissa.checked_mul(10i64.checked_pow(shift)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals_parse_exactly_and_bad_cells_name_row_and_column() {
        for (text, mantissa, places) in [("0", 0, 0), ("-0.50", -50, 2), ("+7", 7, 0), ("12.", 12, 0), (".5", 5, 1)] {
            let d = Decimal::parse(text).unwrap();
            assert_eq!((d.mantissa, d.places), (mantissa, places), "{text}");
        }
        for bad in ["", "-", ".", "1e3", "abc", "1.2.3", "--1", "99999999999999999999"] {
            assert!(Decimal::parse(bad).is_none(), "{bad}");
        }
        let csv = "a,b\n1,2\n3,x\n";
        let message = Dataset::from_csv(csv.as_bytes(), &["a", "b"], None).unwrap_err().to_string();
        assert!(message.contains("row 3, column 'b'") && message.contains("'x'"), "{message}");
        let missing = Dataset::from_csv("a,b\n1,\n".as_bytes(), &["b"], None).unwrap_err().to_string();
        assert!(missing.contains("row 2, column 'b'") && missing.contains("missing"), "{missing}");
        let unknown = Dataset::from_csv("a,b\n1,2\n".as_bytes(), &["c"], None).unwrap_err().to_string();
        assert!(unknown.contains("no column 'c'"), "{unknown}");
        let too_fine = Dataset::from_csv("a\n1.25\n".as_bytes(), &["a"], Some(1)).unwrap_err().to_string();
        assert!(too_fine.contains("row 2") && too_fine.contains("1 decimal places"), "{too_fine}");
    }

    #[test]
    fn synthetic_data_is_deterministic_and_in_range() {
        let a = Dataset::synthetic(50, 7, &["x1", "y"]).unwrap();
        assert_eq!(a, Dataset::synthetic(50, 7, &["x1", "y"]).unwrap());
        assert_ne!(a, Dataset::synthetic(50, 8, &["x1", "y"]).unwrap());
        assert!(a.rows().iter().all(|r| (-2000..=2000).contains(&r[0]) && r[0] % 10 == 0));
        assert!(Dataset::synthetic(5, 1, &["z"]).is_err());
    }
}
