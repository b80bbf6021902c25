//! The users' data: numeric columns read from a CSV file or generated, held exactly as
//! fixed-point integers (no floating point between the file and the plaintext encoding).

use std::fmt;
use std::io::Read;

use pimhe_ring::memory::{bytes, ensure_fits, OutOfMemory};
use rand_chacha::rand_core::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;

use super::StatsError;

/// Most decimal places a column may carry (10^9 still leaves room in an i64 mantissa).
pub const MAX_DECIMALS: u32 = 9;

/// CSV rows read between two checks of the memory budget: a check reads /proc/meminfo, so not
/// one per row, and a chunk's cells are small beside a budget.
const ROWS_PER_MEMORY_CHECK: usize = 1 << 16;

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
    /// number (`-12.5`, `3`, `0.25`) of at most [`MAX_DECIMALS`] places that is a 64-bit
    /// fixed-point value: times 10^places, within the range of `i64`. The scale is 10^d for
    /// the most decimal places `d` seen in the selected columns, unless `decimals` fixes it
    /// (cells with more places are errors); every value must stay in `i64` at that scale. A
    /// file whose rows would not fit in memory is refused as they accumulate.
    ///
    /// ```
    /// use pimhe_workloads::stats::Dataset;
    /// let csv = "name,age,income\nann,34,51.5\nbob,29,48.25\n";
    /// let data = Dataset::from_csv(csv.as_bytes(), &["age", "income"], None).unwrap();
    /// assert_eq!(data.decimals(), 2);
    /// assert_eq!(data.rows(), &[vec![3400, 5150], vec![2900, 4825]]);
    /// ```
    pub fn from_csv(reader: impl Read, columns: &[&str], decimals: Option<u32>) -> Result<Self, StatsError> {
        Self::from_csv_within(reader, columns, decimals, ensure_fits)
    }

    /// [`Dataset::from_csv`] with the memory budget `fits` (the machine's, or a test's).
    fn from_csv_within(
        reader: impl Read,
        columns: &[&str],
        decimals: Option<u32>,
        fits: impl Fn(&str, u128) -> Result<(), OutOfMemory>,
    ) -> Result<Self, StatsError> {
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
        // The file's length is unknown up front, so the budget is checked as rows accumulate,
        // before each chunk, for what is not allocated yet: that chunk's cells, and per row read
        // so far its row in the dataset and its place in the list of rows when that doubles.
        let cell_row = row_bytes::<Decimal>(columns.len());
        let row_so_far = row_bytes::<i64>(columns.len()).saturating_add(size_of::<Vec<Decimal>>());
        let mut cells: Vec<Vec<Decimal>> = Vec::new();
        for (index, record) in csv.records().enumerate() {
            if index % ROWS_PER_MEMORY_CHECK == 0 {
                let needed = bytes(&[ROWS_PER_MEMORY_CHECK], cell_row).saturating_add(bytes(&[index], row_so_far));
                fits(&format!("the CSV's rows (more than {index} of them)"), needed)?;
            }
            // Row 1 is the header, so the first data row is row 2 of the file.
            let row = index + 2;
            let record = record.map_err(|e| StatsError::Input(format!("row {row}: {e}")))?;
            let values = positions
                .iter()
                .zip(columns)
                .map(|(&position, &column)| {
                    let cell = record.get(position).unwrap_or("");
                    Decimal::parse(cell).map_err(|problem| {
                        StatsError::Input(format!("row {row}, column '{column}': the cell '{cell}' {problem}"))
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
            .into_iter()
            .enumerate()
            .map(|(index, row)| {
                row.iter()
                    .zip(columns)
                    .map(|(cell, column)| {
                        cell.scaled(decimals).map_err(|problem| {
                            StatsError::Input(format!("row {}, column '{column}': {cell} {problem}", index + 2))
                        })
                    })
                    .collect::<Result<Vec<_>, _>>()
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self { columns: columns.iter().map(|c| c.to_string()).collect(), rows, decimals })
    }

    /// `users` rows of synthetic data from `seed`: features `x1..x8` with one decimal in
    /// [-20, 20], and a response `y = 3 + sum_i (i - 4.5) x_i / 4 + noise` with two decimals,
    /// so a regression has a known answer. Deterministic for a seed. Refused, before anything
    /// is generated, when the rows would not fit in memory.
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
        ensure_fits(&format!("{users} users of synthetic data"), bytes(&[users], row_bytes::<i64>(columns.len())))?;
        // Where the available memory is unknown, an impossible count still fails cleanly here.
        let mut rows = Vec::new();
        rows.try_reserve_exact(users)
            .map_err(|e| StatsError::Capacity(format!("{users} users of synthetic data do not fit in memory: {e}")))?;
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        rows.extend((0..users).map(|_| {
            // Hundredths throughout: features are whole tenths, y carries two places.
            let x: Vec<i64> = (0..FEATURES).map(|_| 10 * i64::from(rng.next_u32() % 401) - 2000).collect();
            let trend: i64 = x.iter().enumerate().map(|(i, &xi)| (2 * i as i64 - 7) * xi / 8).sum();
            let noise = i64::from(rng.next_u32() % 201) - 100;
            let all: Vec<i64> = x.iter().copied().chain([300 + trend + noise]).collect();
            positions.iter().map(|&p| all[p]).collect()
        }));
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

/// Bytes of one row of `columns` values of type `T`, as a dataset holds it: the row's vector
/// and its own allocation of the values, which the C allocator rounds up to 16 bytes past an
/// 8-byte header, 32 bytes at least (glibc's malloc; a row of two values takes 56 bytes, not 40).
fn row_bytes<T>(columns: usize) -> usize {
    const HEADER: usize = 8;
    let values = columns.saturating_mul(size_of::<T>());
    let chunk = values.saturating_add(HEADER).saturating_add(15) / 16 * 16;
    size_of::<Vec<T>>().saturating_add(chunk.max(32))
}

/// A cell parsed exactly: `mantissa / 10^places`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Decimal {
    mantissa: i64,
    places: u32,
}

/// What is wrong with a cell (completes "the cell '...' ").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CellProblem {
    Missing,
    NotANumber,
    TooManyPlaces(u32),
    TooLarge(u32),
}

impl fmt::Display for CellProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            CellProblem::Missing => write!(f, "is missing"),
            CellProblem::NotANumber => write!(f, "is not a plain decimal number (like -12.5, 3 or 0.25)"),
            CellProblem::TooManyPlaces(places) => {
                write!(f, "has {places} decimal places; at most {MAX_DECIMALS} are supported")
            }
            CellProblem::TooLarge(places) => write!(f, "is too large: {}", Decimal::range(places)),
        }
    }
}

/// Why a parsed cell has no value at a dataset's scale (completes "<value> ").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ScaleProblem {
    /// The cell has more places than the scale.
    Finer(u32),
    /// Scaled, it leaves 64 bits.
    TooLarge(u32),
}

impl fmt::Display for ScaleProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            ScaleProblem::Finer(decimals) => write!(f, "has more than the {decimals} decimal places asked for"),
            ScaleProblem::TooLarge(decimals) => write!(
                f,
                "is too large for the {decimals} decimal places of the other cells: {}",
                Decimal::range(decimals)
            ),
        }
    }
}

impl Decimal {
    fn parse(cell: &str) -> Result<Self, CellProblem> {
        if cell.is_empty() {
            return Err(CellProblem::Missing);
        }
        let (negative, digits) = match cell.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, cell.strip_prefix('+').unwrap_or(cell)),
        };
        let (whole, fraction) = digits.split_once('.').unwrap_or((digits, ""));
        let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
        if whole.is_empty() && fraction.is_empty() || !all_digits(whole) || !all_digits(fraction) {
            return Err(CellProblem::NotANumber);
        }
        let places = u32::try_from(fraction.len()).unwrap_or(u32::MAX);
        if places > MAX_DECIMALS {
            return Err(CellProblem::TooManyPlaces(places));
        }
        // Accumulated as a magnitude in i128 so that i64::MIN, one past i64::MAX, is allowed.
        let mut magnitude: i128 = 0;
        for digit in whole.bytes().chain(fraction.bytes()) {
            magnitude = 10 * magnitude + i128::from(digit - b'0');
            if magnitude > 1 << 63 {
                return Err(CellProblem::TooLarge(places));
            }
        }
        let mantissa = i64::try_from(if negative { -magnitude } else { magnitude });
        Ok(Self { mantissa: mantissa.map_err(|_| CellProblem::TooLarge(places))?, places })
    }

    /// The value times 10^decimals, if exact and in range.
    fn scaled(&self, decimals: u32) -> Result<i64, ScaleProblem> {
        let shift = decimals.checked_sub(self.places).ok_or(ScaleProblem::Finer(decimals))?;
        10i64.checked_pow(shift).and_then(|s| self.mantissa.checked_mul(s)).ok_or(ScaleProblem::TooLarge(decimals))
    }

    /// What a value with `places` decimal places may be: a 64-bit integer over 10^places.
    fn range(places: u32) -> String {
        let bound = |mantissa| Decimal { mantissa, places };
        format!("values with {places} decimal places must lie in {} ..= {}", bound(i64::MIN), bound(i64::MAX))
    }
}

impl fmt::Display for Decimal {
    /// The exact value, e.g. `-0.50` for mantissa -50 and 2 places.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let digits = self.mantissa.unsigned_abs().to_string();
        let places = self.places as usize;
        let padded = format!("{digits:0>width$}", width = places + 1);
        let (whole, fraction) = padded.split_at(padded.len() - places);
        let sign = if self.mantissa < 0 { "-" } else { "" };
        if fraction.is_empty() {
            write!(f, "{sign}{whole}")
        } else {
            write!(f, "{sign}{whole}.{fraction}")
        }
    }
}

#[cfg(test)]
mod tests {
    use pimhe_ring::memory::ensure_fits_in;

    use super::*;

    #[test]
    fn decimals_parse_exactly_and_bad_cells_name_row_and_column() {
        for (text, mantissa, places) in [("0", 0, 0), ("-0.50", -50, 2), ("+7", 7, 0), ("12.", 12, 0), (".5", 5, 1)] {
            let d = Decimal::parse(text).unwrap();
            assert_eq!((d.mantissa, d.places), (mantissa, places), "{text}");
        }
        assert_eq!(Decimal::parse("-9223372036854775808").unwrap().mantissa, i64::MIN);
        let problems = [
            ("", CellProblem::Missing),
            ("-", CellProblem::NotANumber),
            (".", CellProblem::NotANumber),
            ("1e3", CellProblem::NotANumber),
            ("abc", CellProblem::NotANumber),
            ("1.2.3", CellProblem::NotANumber),
            ("--1", CellProblem::NotANumber),
            ("9223372036854775808", CellProblem::TooLarge(0)),
            ("-9223372036854775809", CellProblem::TooLarge(0)),
            ("99999999999999999999", CellProblem::TooLarge(0)),
            ("-10000000000000000.000", CellProblem::TooLarge(3)),
            ("0.0000000001", CellProblem::TooManyPlaces(10)),
        ];
        for (bad, problem) in problems {
            assert_eq!(Decimal::parse(bad), Err(problem), "{bad}");
        }
        for text in ["0", "-0.50", "12.25", "-9223372036854775808", "0.000000007"] {
            assert_eq!(Decimal::parse(text).unwrap().to_string(), text);
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
        // A value that fits 64 bits alone but not at the scale of the other cells.
        let scaled = Dataset::from_csv("a\n9223372036854775807\n0.5\n".as_bytes(), &["a"], None).unwrap_err();
        assert_eq!(
            scaled.to_string(),
            "row 2, column 'a': 9223372036854775807 is too large for the 1 decimal places of the other cells: values \
             with 1 decimal places must lie in -922337203685477580.8 ..= 922337203685477580.7"
        );
    }

    /// A CSV of endless rows, read with a budget of 16 MiB of available memory: refused once
    /// the rows read so far (as a dataset) and the next chunk's cells pass 75% of it, instead
    /// of growing until the allocator aborts.
    #[test]
    fn a_csv_larger_than_memory_is_refused_as_it_is_read() {
        let rows = std::iter::once(&b"v\n"[..]).chain(std::iter::repeat_n(&b"1\n"[..], 4_000_000)).flatten().copied();
        let endless: Vec<u8> = rows.collect();
        let budget = |what: &str, needed| ensure_fits_in(what, needed, Some(16 << 20));
        let Err(refused) = Dataset::from_csv_within(endless.as_slice(), &["v"], None, budget) else {
            panic!("4 million rows read within a budget of 16 MiB");
        };
        let refused = refused.to_string();
        assert!(
            refused.starts_with("the CSV's rows (more than ") && refused.contains("of available memory"),
            "{refused}"
        );
        // The same budget holds a smaller file.
        assert_eq!(Dataset::from_csv_within(&endless[..200_000], &["v"], None, budget).unwrap().users(), 99_999);
    }

    #[test]
    fn synthetic_data_is_deterministic_and_in_range() {
        let a = Dataset::synthetic(50, 7, &["x1", "y"]).unwrap();
        assert_eq!(a, Dataset::synthetic(50, 7, &["x1", "y"]).unwrap());
        assert_ne!(a, Dataset::synthetic(50, 8, &["x1", "y"]).unwrap());
        assert!(a.rows().iter().all(|r| (-2000..=2000).contains(&r[0]) && r[0] % 10 == 0));
        assert!(Dataset::synthetic(5, 1, &["z"]).is_err());
    }

    #[test]
    fn synthetic_data_beyond_memory_is_refused_before_it_is_generated() {
        for users in [usize::MAX, 1 << 50] {
            let refused = Dataset::synthetic(users, 1, &["x1"]).unwrap_err();
            assert!(
                matches!(&refused, StatsError::Capacity(m) if m.starts_with(&format!("{users} users of synthetic data"))),
                "{refused}"
            );
        }
    }
}
