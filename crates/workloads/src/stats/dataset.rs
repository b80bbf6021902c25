//! The users' data: numeric columns read from a CSV file or generated, held exactly as
//! fixed-point integers (no floating point between the file and the plaintext encoding).

use std::cell::Cell;
use std::collections::HashSet;
use std::fmt;
use std::io::{self, Read};

use pimhe_ring::memory::{bytes, ensure_fits, OutOfMemory};
use rand_chacha::rand_core::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;

use super::StatsError;

/// Most decimal places a column may carry (10^9 still leaves room in an i64 mantissa).
pub const MAX_DECIMALS: u32 = 9;

/// Most CSV rows read between two checks of the memory budget: a check reads /proc/meminfo, so
/// not one per row. The checks come after 1, 2, 4, ... rows up to this many, then every this
/// many, so that a short file of wide rows is not charged for rows it does not have.
const ROWS_PER_MEMORY_CHECK: usize = 1 << 16;

/// Most bytes one CSV record (a row, or the header) may take, its line break included: a row of
/// 8,192 columns of 127 bytes each, or 65,536 columns of 15, beyond the 16,384 columns
/// spreadsheets write. Finite, so that a file without line breaks (`/dev/zero`) or with a quote
/// left open is refused after reading this much, instead of being buffered whole by the CSV
/// reader until memory runs out.
pub const MAX_RECORD_BYTES: usize = 1 << 20;

/// Most bytes one cell may take: a number needs a few dozen, and the text columns beside the
/// numbers (names, notes) rarely a few hundred; spreadsheets stop a cell at 32,767 characters.
pub const MAX_CELL_BYTES: usize = 1 << 16;

/// The CSV reader's own read buffer, in bytes: it may read this far past the record it parses.
const READ_BUFFER_BYTES: usize = 1 << 16;

/// Characters of a cell that a message quotes: an error about a 200 MB cell stays one line.
const QUOTED_CHARS: usize = 40;

/// Column names a message lists: a header of 8,192 names is not echoed whole.
const LISTED_COLUMNS: usize = 16;

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
    /// file whose rows would not fit in memory is refused as they accumulate, a record longer
    /// than [`MAX_RECORD_BYTES`] or a cell longer than [`MAX_CELL_BYTES`] as it is read, and a
    /// column selected twice, or named twice in the header, up front.
    ///
    /// ```
    /// use pimhe_workloads::stats::Dataset;
    /// let csv = "name,age,income\nann,34,51.5\nbob,29,48.25\n";
    /// let data = Dataset::from_csv(csv.as_bytes(), &["age", "income"], None).unwrap();
    /// assert_eq!(data.decimals(), 2);
    /// assert_eq!(data.rows(), &[vec![3400, 5150], vec![2900, 4825]]);
    /// // Which "age" would be meant?
    /// let twice = Dataset::from_csv("age,age\n1,2\n".as_bytes(), &["age"], None).unwrap_err();
    /// assert!(twice.to_string().contains("names column 'age' more than once"));
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
        check_unique(columns)?;
        let mut csv = csv::ReaderBuilder::new()
            .has_headers(false)
            .trim(csv::Trim::All)
            .buffer_capacity(READ_BUFFER_BYTES)
            .from_reader(Bounded::new(reader));
        let mut header = csv::StringRecord::new();
        if !read_record(&mut csv, &mut header, "the CSV header")? {
            return Err(StatsError::Input("the CSV is empty: it needs a header row".into()));
        }
        let positions = columns.iter().map(|&name| position(&header, name)).collect::<Result<Vec<_>, _>>()?;
        // The file's length is unknown up front, so the budget is checked as rows accumulate,
        // before each chunk, for what is not allocated yet: the CSV reader's record (its bytes
        // and, at worst, one field per byte, each buffer up to twice its use), the chunk's
        // cells, and for every row up to the chunk's end its row in the dataset, its place in
        // that list and up to two in the list of cells (which grows by doubling). Every list is
        // allocated at its exact length otherwise, so these bytes bound what is allocated.
        let reader_bytes = bytes(&[2 * (MAX_RECORD_BYTES + 1)], 1 + size_of::<usize>()) + READ_BUFFER_BYTES as u128;
        let cell_row = row_bytes::<Decimal>(columns.len());
        let row_to_come = row_bytes::<i64>(columns.len()).saturating_add(3 * size_of::<Vec<i64>>());
        let mut cells: Vec<Vec<Decimal>> = Vec::new();
        let mut record = csv::StringRecord::new();
        let mut next_check = 0;
        // Row 1 is the header, so the first data row is row 2 of the file.
        for row in 2.. {
            let index = row - 2;
            if index == next_check {
                next_check = index + index.clamp(1, ROWS_PER_MEMORY_CHECK);
                let needed = reader_bytes + bytes(&[next_check - index], cell_row) + bytes(&[next_check], row_to_come);
                fits(&format!("the CSV's rows (more than {index} of them)"), needed)?;
            }
            if !read_record(&mut csv, &mut record, &format!("row {row}"))? {
                break;
            }
            let mut values = Vec::with_capacity(columns.len());
            for (&position, &column) in positions.iter().zip(columns) {
                let cell = record.get(position).unwrap_or("");
                let value = Decimal::parse(cell).map_err(|problem| {
                    StatsError::Input(format!("row {row}, column '{column}': the cell {} {problem}", quoted(cell)))
                })?;
                values.push(value);
            }
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
        let mut rows = Vec::with_capacity(cells.len());
        for (index, row) in cells.into_iter().enumerate() {
            let mut values = Vec::with_capacity(columns.len());
            for (cell, column) in row.iter().zip(columns) {
                values.push(cell.scaled(decimals).map_err(|problem| {
                    StatsError::Input(format!("row {}, column '{column}': {cell} {problem}", index + 2))
                })?);
            }
            rows.push(values);
        }
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
        check_unique(columns)?;
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

/// Refuses a selection that names a column twice: each column is one variable of the
/// statistics, and a repeated one would silently count twice.
fn check_unique(columns: &[&str]) -> Result<(), StatsError> {
    let mut seen = HashSet::new();
    match columns.iter().find(|&&name| !seen.insert(name)) {
        Some(name) => {
            Err(StatsError::Input(format!("column {} is selected twice; select each column once", quoted(name))))
        }
        None => Ok(()),
    }
}

/// The position of the column `name` in the header, refused where the header has no such
/// column or several (which one would be meant?).
fn position(header: &csv::StringRecord, name: &str) -> Result<usize, StatsError> {
    let mut found = header.iter().enumerate().filter(|&(_, h)| h == name).map(|(i, _)| i);
    match (found.next(), found.next()) {
        (Some(first), None) => Ok(first),
        (Some(first), Some(second)) => Err(StatsError::Input(format!(
            "the CSV header names column {} more than once (columns {} and {}); column names must be unique to \
             be selected",
            quoted(name),
            first + 1,
            second + 1
        ))),
        (None, _) => {
            let mut known: Vec<String> = header.iter().take(LISTED_COLUMNS).map(quoted).collect();
            if header.len() > LISTED_COLUMNS {
                known.push(format!("... ({} columns in all)", header.len()));
            }
            Err(StatsError::Input(format!("no column {} in the CSV header; it has {}", quoted(name), known.join(", "))))
        }
    }
}

/// `text` in quotes for a message, cut to its first [`QUOTED_CHARS`] characters (then an
/// ellipsis and its length) so that a huge cell does not make a huge message.
fn quoted(text: &str) -> String {
    match text.char_indices().nth(QUOTED_CHARS) {
        None => format!("'{text}'"),
        Some((end, _)) => format!("'{}...' ({} bytes)", &text[..end], text.len()),
    }
}

/// Reads the next record of `csv` into `record` (`what` names it for messages: "row 7"):
/// false at the end of the file. Refuses a record longer than [`MAX_RECORD_BYTES`] (cut off
/// by [`Bounded`] while it is read, or measured once read) and a cell longer than
/// [`MAX_CELL_BYTES`].
fn read_record<R: Read>(
    csv: &mut csv::Reader<Bounded<R>>,
    record: &mut csv::StringRecord,
    what: &str,
) -> Result<bool, StatsError> {
    let start = csv.position().byte();
    let too_long = || {
        StatsError::Input(format!(
            "{what} is longer than {MAX_RECORD_BYTES} bytes, the most a CSV record may have (a file without line \
             breaks, or a quote left open?)"
        ))
    };
    let more = match csv.read_record(record) {
        Ok(more) => more,
        Err(_) if csv.get_ref().cut_off.get() => return Err(too_long()),
        Err(e) => return Err(StatsError::Input(format!("{what}: {e}"))),
    };
    let end = csv.position().byte();
    csv.get_ref().record_start.set(end);
    if end - start > MAX_RECORD_BYTES as u64 {
        return Err(too_long());
    }
    if let Some((index, cell)) = record.iter().enumerate().find(|(_, cell)| cell.len() > MAX_CELL_BYTES) {
        return Err(StatsError::Input(format!(
            "{what}, column {}: the cell {} is longer than {MAX_CELL_BYTES} bytes, the most a CSV cell may have",
            index + 1,
            quoted(cell)
        )));
    }
    Ok(more)
}

/// The input as the CSV reader sees it, cut off with an error once the record being read runs
/// past [`MAX_RECORD_BYTES`] (plus the reader's buffer, which may run that far ahead): the
/// CSV reader itself would buffer a record without end. [`read_record`] moves the record's
/// start after each record.
struct Bounded<R> {
    inner: R,
    /// Bytes handed to the CSV reader so far.
    read: u64,
    /// Where the record being read starts, in bytes from the start of the input.
    record_start: Cell<u64>,
    /// Whether the input was cut off (so the CSV reader's error is this one).
    cut_off: Cell<bool>,
}

impl<R> Bounded<R> {
    fn new(inner: R) -> Self {
        Self { inner, read: 0, record_start: Cell::new(0), cut_off: Cell::new(false) }
    }
}

impl<R: Read> Read for Bounded<R> {
    fn read(&mut self, buffer: &mut [u8]) -> io::Result<usize> {
        let limit = self.record_start.get() + (MAX_RECORD_BYTES + READ_BUFFER_BYTES) as u64;
        let room = limit.saturating_sub(self.read);
        if room == 0 {
            self.cut_off.set(true);
            return Err(io::Error::other(format!("a CSV record longer than {MAX_RECORD_BYTES} bytes")));
        }
        let length = buffer.len().min(usize::try_from(room).unwrap_or(usize::MAX));
        let count = self.inner.read(&mut buffer[..length])?;
        self.read += count as u64;
        Ok(count)
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
    use std::rc::Rc;

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

    /// A CSV of endless rows, read with a budget of 64 MiB of available memory: refused once
    /// the CSV reader's record, the rows read so far (as a dataset) and the next chunk's cells
    /// pass 75% of it, instead of growing until the allocator aborts.
    #[test]
    fn a_csv_larger_than_memory_is_refused_as_it_is_read() {
        let rows = std::iter::once(&b"v\n"[..]).chain(std::iter::repeat_n(&b"1\n"[..], 4_000_000)).flatten().copied();
        let endless: Vec<u8> = rows.collect();
        let budget = |what: &str, needed| ensure_fits_in(what, needed, Some(64 << 20));
        let Err(refused) = Dataset::from_csv_within(endless.as_slice(), &["v"], None, budget) else {
            panic!("4 million rows read within a budget of 64 MiB");
        };
        let refused = refused.to_string();
        assert!(
            refused.starts_with("the CSV's rows (more than ") && refused.contains("of available memory"),
            "{refused}"
        );
        // The same budget holds a smaller file.
        assert_eq!(Dataset::from_csv_within(&endless[..200_000], &["v"], None, budget).unwrap().users(), 99_999);
    }

    /// The largest estimate a read asked the budget for, and the read's result.
    fn largest_estimate(csv: &[u8], columns: &[&str]) -> (u128, Result<Dataset, StatsError>) {
        let largest = Cell::new(0);
        let result = Dataset::from_csv_within(csv, columns, None, |_, needed| {
            largest.set(largest.get().max(needed));
            Ok(())
        });
        (largest.get(), result)
    }

    #[test]
    fn the_memory_estimate_follows_the_rows_read() {
        // Two rows of 8,192 columns: the estimate was for 65,536 rows of them, 8 GiB.
        let names: Vec<String> = (0..8192).map(|i| format!("c{i}")).collect();
        let row = vec!["1.5"; 8192].join(",");
        let csv = format!("{}\n{row}\n{row}\n", names.join(","));
        let columns: Vec<&str> = names.iter().map(String::as_str).collect();
        let (largest, data) = largest_estimate(csv.as_bytes(), &columns);
        assert_eq!(data.unwrap().users(), 2);
        // The reader's record (at most 18 MiB) and two rows: far below 8 GiB, yet above what
        // the rows take as a dataset and as cells.
        assert!(largest < 20 << 20, "{largest}");
        let held = bytes(&[2], row_bytes::<i64>(8192) + row_bytes::<Decimal>(8192));
        assert!(largest > held, "{largest} <= {held}");
        // Still refused where the budget cannot take that much.
        let budget = |what: &str, needed| ensure_fits_in(what, needed, Some(16 << 20));
        let refused = Dataset::from_csv_within(csv.as_bytes(), &columns, None, budget).unwrap_err().to_string();
        assert!(refused.starts_with("the CSV's rows (more than 0 of them)"), "{refused}");
        // Many narrow rows: checked every 2^16 rows once past them, with the rows to come.
        let csv: Vec<u8> =
            std::iter::once(&b"v\n"[..]).chain(std::iter::repeat_n(&b"1\n"[..], 200_000)).flatten().copied().collect();
        let (largest, data) = largest_estimate(&csv, &["v"]);
        assert_eq!(data.unwrap().users(), 200_000);
        assert!(largest > bytes(&[200_000], row_bytes::<i64>(1)), "{largest}");
    }

    #[test]
    fn duplicate_columns_are_refused_and_named() {
        let header = Dataset::from_csv("a,b,a\n1,2,3\n".as_bytes(), &["a"], None).unwrap_err().to_string();
        assert_eq!(
            header,
            "the CSV header names column 'a' more than once (columns 1 and 3); column names must be unique to be \
             selected"
        );
        // A duplicate that is not selected is no ambiguity.
        assert_eq!(Dataset::from_csv("a,b,a\n1,2,3\n".as_bytes(), &["b"], None).unwrap().rows(), &[vec![2]]);
        let selected = Dataset::from_csv("a,b\n1,2\n".as_bytes(), &["a", "b", "a"], None).unwrap_err().to_string();
        assert_eq!(selected, "column 'a' is selected twice; select each column once");
        let synthetic = Dataset::synthetic(5, 1, &["x1", "x1"]).unwrap_err().to_string();
        assert_eq!(synthetic, "column 'x1' is selected twice; select each column once");
    }

    /// Endless bytes of one value, counting how many were read.
    struct Endless {
        byte: u8,
        read: Rc<Cell<usize>>,
    }

    impl Read for Endless {
        fn read(&mut self, buffer: &mut [u8]) -> io::Result<usize> {
            buffer.fill(self.byte);
            self.read.set(self.read.get() + buffer.len());
            Ok(buffer.len())
        }
    }

    #[test]
    fn an_endless_record_is_refused_after_the_limit_not_buffered() {
        // /dev/zero, a header without end, a row without end, and a quote left open over
        // endless line breaks.
        let cases: [(&[u8], u8, &str); 4] = [
            (b"", 0, "the CSV header"),
            (b"", b'7', "the CSV header"),
            (b"a,b\n1,", b'7', "row 2"),
            (b"a\n1\n\"", b'\n', "row 3"),
        ];
        for (start, byte, what) in cases {
            let read = Rc::new(Cell::new(0));
            let input = start.chain(Endless { byte, read: read.clone() });
            let message = Dataset::from_csv(input, &["a"], None).unwrap_err().to_string();
            assert_eq!(
                message,
                format!(
                    "{what} is longer than 1048576 bytes, the most a CSV record may have (a file without line breaks, \
                     or a quote left open?)"
                )
            );
            // Read up to the limit and the reader's buffer, not on.
            assert!(read.get() <= MAX_RECORD_BYTES + 2 * READ_BUFFER_BYTES, "{what}: {} bytes read", read.get());
        }
    }

    #[test]
    fn records_and_cells_up_to_their_limits_are_read_and_past_them_refused() {
        // 32 cells of 32 KiB less a byte and the comma or line break after each: a record of
        // exactly MAX_RECORD_BYTES.
        let header: Vec<String> = (0..32).map(|i| format!("c{i}")).collect();
        let cell = "1".repeat(MAX_CELL_BYTES / 2 - 1);
        let record = |last: &str| {
            let mut cells = vec![cell.as_str(); 31];
            cells.push(last);
            cells.join(",")
        };
        let csv = |last: &str| format!("{}\n{}\n", header.join(","), record(last));
        // Cells of 32767 digits are too large as numbers, but read: the error is the value's.
        let at_limit = csv(&cell);
        assert_eq!(at_limit.len() - header.join(",").len() - 1, MAX_RECORD_BYTES);
        let message = Dataset::from_csv(at_limit.as_bytes(), &["c0"], None).unwrap_err().to_string();
        assert!(message.contains("row 2, column 'c0'") && message.contains("is too large"), "{message}");
        let past = csv(&format!("{cell}1"));
        let message = Dataset::from_csv(past.as_bytes(), &["c0"], None).unwrap_err().to_string();
        assert!(message.starts_with("row 2 is longer than 1048576 bytes"), "{message}");
        // One cell past its own limit, in a short record: named by row and column, quoted short.
        let long = "9".repeat(MAX_CELL_BYTES + 1);
        let message = Dataset::from_csv(format!("a,b\n1,{long}\n").as_bytes(), &["a"], None).unwrap_err().to_string();
        assert_eq!(
            message,
            format!(
                "row 2, column 2: the cell '{}...' (65537 bytes) is longer than 65536 bytes, the most a CSV cell may \
                 have",
                "9".repeat(40)
            )
        );
        let message = Dataset::from_csv(format!("{long}\n1\n").as_bytes(), &["a"], None).unwrap_err().to_string();
        assert!(message.starts_with("the CSV header, column 1: the cell '999"), "{message}");
    }

    #[test]
    fn messages_quote_a_short_prefix_of_long_cells_and_headers() {
        let cell = "x".repeat(20_000);
        let message = Dataset::from_csv(format!("a\n{cell}\n").as_bytes(), &["a"], None).unwrap_err().to_string();
        assert_eq!(
            message,
            format!(
                "row 2, column 'a': the cell '{}...' (20000 bytes) is not a plain decimal number (like -12.5, 3 or \
                 0.25)",
                "x".repeat(40)
            )
        );
        // Characters, not bytes, are counted: the cut falls between characters.
        assert_eq!(quoted(&"é".repeat(50)), format!("'{}...' (100 bytes)", "é".repeat(40)));
        assert_eq!(quoted("short"), "'short'");
        // A header of many columns is listed in part.
        let names: Vec<String> = (0..1000).map(|i| format!("{}{i}", "n".repeat(100))).collect();
        let csv = format!("{}\n{}\n", names.join(","), vec!["1"; 1000].join(","));
        let message = Dataset::from_csv(csv.as_bytes(), &["z"], None).unwrap_err().to_string();
        assert!(message.starts_with("no column 'z' in the CSV header; it has 'nnnn"), "{message}");
        assert!(message.ends_with("... (1000 columns in all)") && message.len() < 1500, "{message}");
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
