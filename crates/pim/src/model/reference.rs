//! The published measurements the models are calibrated on: DRAMatic's raw results
//! (Tables 2 and 3, in part), `shared/reference/dramatic_calibration.csv`.
//!
//! `shared/` sits beside the repository root (`/work/shared` for the checkout `/work/main`),
//! so the default path is `crates/pim/../../../shared/reference/dramatic_calibration.csv`;
//! the environment variable [`PATH_ENV`] overrides it. Only tests and
//! [`super::calibrate::calibrate`] read it: the model itself carries the fitted constants.
//!
//! ```
//! use pimhe_pim::model::reference;
//! let rows = reference::parse("table,impl,operation,cores,degree,mod_bits,ciphertexts,compute_s,transfer_s,retrieve_s,power_w\n\
//!                              3,DRAMatic,NTT,383,2048,54,32768,1.314,0.102,0.213,364\n").unwrap();
//! let setup = rows[0].dramatic_setup().unwrap();
//! assert_eq!((setup.primes, setup.ranks, setup.group_dpus, setup.subpolys_per_dpu), (2, 6, 191, 344));
//! assert_eq!(setup.bytes, 1 << 30);
//! ```

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::DPUS_PER_RANK;

/// Environment variable that, when set, gives the path of `dramatic_calibration.csv`.
pub const PATH_ENV: &str = "PIMHE_DRAMATIC_CSV";

/// Where `dramatic_calibration.csv` lies when [`PATH_ENV`] is not set.
pub const DEFAULT_PATH: &str =
    concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/reference/dramatic_calibration.csv");

/// Columns of the CSV, in order.
pub const COLUMNS: [&str; 11] = [
    "table",
    "impl",
    "operation",
    "cores",
    "degree",
    "mod_bits",
    "ciphertexts",
    "compute_s",
    "transfer_s",
    "retrieve_s",
    "power_w",
];

/// Published times are rounded to milliseconds: a value `t` stands for `[t - 0.5 ms, t + 0.5 ms]`.
pub const TIME_RESOLUTION_S: f64 = 1e-3;

/// Why the reference data could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReferenceError {
    /// The file is not where it was looked for.
    #[error(
        "DRAMatic calibration data not readable at {path}: it is shared/reference/dramatic_calibration.csv \
         beside the repository root; set {PATH_ENV} to its location ({source})"
    )]
    Missing {
        /// Path tried.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A line does not have the expected shape.
    #[error("dramatic_calibration.csv line {line}: {message}")]
    Parse {
        /// 1-based line number.
        line: usize,
        /// What is wrong.
        message: String,
    },
}

/// One published measurement (one row of the CSV).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReferenceRow {
    /// Table of DRAMatic's appendix (2 or 3).
    pub table: u32,
    /// Implementation measured: `DRAMatic`, `MHY⁺` (previous work) or `SEAL` (CPU).
    pub implementation: String,
    /// `NTT` or `iNTT`.
    pub operation: String,
    /// DPUs used (DRAMatic, MHY⁺) or CPU threads (SEAL).
    pub cores: u32,
    /// Ring degree N.
    pub degree: u32,
    /// Bits of the ciphertext modulus.
    pub mod_bits: u32,
    /// Ciphertexts transformed (two polynomials each).
    pub ciphertexts: u64,
    /// Pure computation seconds.
    pub compute_s: f64,
    /// Host -> DPU seconds.
    pub transfer_s: f64,
    /// DPU -> host seconds.
    pub retrieve_s: f64,
    /// Wall power of the whole machine, W (absent for some rows).
    pub power_w: Option<f64>,
}

/// How DRAMatic splits the work of a run over DPUs (DRAMatic 3.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum SplitMode {
    /// One DPU group per prime, all primes at once.
    Parallel,
    /// All DPUs serve one prime after another: one launch (and transfer) per prime.
    Sequential,
}

/// The work split of one DRAMatic run, derived from its row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct DramaticSetup {
    /// RNS primes of the modulus ([`primes_for_mod_bits`]).
    pub primes: u32,
    /// DPUs used.
    pub dpus: u32,
    /// Ranks touched: `ceil(dpus / 64)`.
    pub ranks: u32,
    /// Parallel, or sequential when the primes outnumber the ranks (see [`ReferenceRow::dramatic_setup`]).
    pub mode: SplitMode,
    /// DPUs serving one prime: `floor(dpus / primes)` in parallel mode, all in sequential.
    pub group_dpus: u32,
    /// Sub-polynomials on the busiest DPU per launch: `ceil(2 * ciphertexts / group_dpus)`.
    pub subpolys_per_dpu: u64,
    /// Launches: 1 in parallel mode, one per prime in sequential mode.
    pub launches: u32,
    /// Bytes moved each way: `ciphertexts * 2 polynomials * primes * N * 4`.
    pub bytes: u64,
}

/// RNS primes DRAMatic uses for a modulus of `mod_bits` bits: 27 -> 1, 54 -> 2, 72 -> 3,
/// 174 -> 6, 377 -> 13, 812 -> 28 (the counts of DRAMatic Table 1; all equal
/// `ceil(mod_bits / 29)`); `None` for other sizes.
///
/// ```
/// assert_eq!(pimhe_pim::model::reference::primes_for_mod_bits(174), Some(6));
/// ```
pub fn primes_for_mod_bits(mod_bits: u32) -> Option<u32> {
    match mod_bits {
        27 => Some(1),
        54 => Some(2),
        72 => Some(3),
        174 => Some(6),
        377 => Some(13),
        812 => Some(28),
        _ => None,
    }
}

impl ReferenceRow {
    /// Whether this row measures DRAMatic (the rows the UPMEM model is calibrated on).
    pub fn is_dramatic(&self) -> bool {
        self.implementation == "DRAMatic"
    }

    /// DRAMatic's work split for this row; `None` for other implementations or unknown
    /// modulus sizes.
    ///
    /// Parallel mode unless the primes outnumber the ranks on a machine of whole ranks
    /// (`dpus >= 64`): DPU groups are allocated in whole ranks (DRAMatic 3.3), so 6 ranks
    /// cannot hold 13 or 28 groups, and DRAMatic's sequential implementation runs those
    /// (at N = 32768 a parallel layout would also need 30 GB, more than 383 DPUs x 60 MB).
    /// Runs on fewer than 64 DPUs (Table 2's 1..16-ciphertext rows) use one DPU per group.
    pub fn dramatic_setup(&self) -> Option<DramaticSetup> {
        if !self.is_dramatic() || self.cores == 0 || self.degree == 0 {
            return None;
        }
        let primes = primes_for_mod_bits(self.mod_bits)?;
        let dpus = self.cores;
        let ranks = dpus.div_ceil(DPUS_PER_RANK);
        let sequential = dpus >= DPUS_PER_RANK && primes > ranks;
        let (mode, group_dpus, launches) = if sequential || dpus < primes {
            (SplitMode::Sequential, dpus, primes)
        } else {
            (SplitMode::Parallel, dpus / primes, 1)
        };
        let subpolys_per_dpu = (2 * self.ciphertexts).div_ceil(group_dpus as u64);
        let bytes = self.ciphertexts * 2 * primes as u64 * self.degree as u64 * 4;
        Some(DramaticSetup { primes, dpus, ranks, mode, group_dpus, subpolys_per_dpu, launches, bytes })
    }
}

/// The path [`load_default`] reads: [`PATH_ENV`] if set, else [`DEFAULT_PATH`].
pub fn default_path() -> PathBuf {
    std::env::var_os(PATH_ENV).map(PathBuf::from).unwrap_or_else(|| PathBuf::from(DEFAULT_PATH))
}

/// Reads and parses the CSV at `path`.
pub fn load(path: &Path) -> Result<Vec<ReferenceRow>, ReferenceError> {
    let text =
        std::fs::read_to_string(path).map_err(|source| ReferenceError::Missing { path: path.to_path_buf(), source })?;
    parse(&text)
}

/// Reads and parses the CSV at [`default_path`].
///
/// ```
/// match pimhe_pim::model::reference::load_default() {
///     Ok(rows) => assert!(rows.iter().any(|r| r.is_dramatic())),
///     Err(e) => assert!(e.to_string().contains("PIMHE_DRAMATIC_CSV")),
/// }
/// ```
pub fn load_default() -> Result<Vec<ReferenceRow>, ReferenceError> {
    load(&default_path())
}

/// Parses the CSV text: a header line equal to [`COLUMNS`], then one row per line (blank
/// lines skipped; an empty `power_w` is `None`).
pub fn parse(text: &str) -> Result<Vec<ReferenceRow>, ReferenceError> {
    let mut lines = text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty());
    let Some((_, header)) = lines.next() else {
        return Err(ReferenceError::Parse { line: 1, message: "empty file, expected a header".into() });
    };
    let names: Vec<&str> = header.split(',').map(str::trim).collect();
    if names != COLUMNS {
        return Err(ReferenceError::Parse { line: 1, message: format!("header is {names:?}, expected {COLUMNS:?}") });
    }
    let mut rows = Vec::new();
    for (index, line) in lines {
        let number = index + 1;
        let fields: Vec<&str> = line.split(',').map(str::trim).collect();
        if fields.len() != COLUMNS.len() {
            return Err(ReferenceError::Parse {
                line: number,
                message: format!("{} fields, expected {}", fields.len(), COLUMNS.len()),
            });
        }
        let err = |column: usize, what: &str| ReferenceError::Parse {
            line: number,
            message: format!("column {} = {:?} is not {what}", COLUMNS[column], fields[column]),
        };
        let int = |c: usize| fields[c].parse::<u64>().map_err(|_| err(c, "an unsigned integer"));
        let small = |c: usize| -> Result<u32, ReferenceError> {
            int(c)?.try_into().map_err(|_| err(c, "a 32-bit unsigned integer"))
        };
        let real = |c: usize| match fields[c].parse::<f64>() {
            Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
            _ => Err(err(c, "a non-negative number")),
        };
        rows.push(ReferenceRow {
            table: small(0)?,
            implementation: fields[1].to_string(),
            operation: fields[2].to_string(),
            cores: small(3)?,
            degree: small(4)?,
            mod_bits: small(5)?,
            ciphertexts: int(6)?,
            compute_s: real(7)?,
            transfer_s: real(8)?,
            retrieve_s: real(9)?,
            power_w: if fields[10].is_empty() { None } else { Some(real(10)?) },
        });
    }
    Ok(rows)
}
