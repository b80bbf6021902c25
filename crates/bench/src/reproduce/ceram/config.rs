//! What `pimhe bench reproduce ceram` runs.

use std::path::PathBuf;

use serde::Deserialize;

use super::published::PAPER_DEGREE;

/// What `pimhe bench reproduce ceram` runs: its flags (`--skip-cpu`, `--repeat`, `--threads`,
/// `--seal-python`) by Python's names, and two settings of the library's own (`n`, `seed`) that
/// neither shell sets.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CeramConfig {
    /// Model only: skip the CPU measurement of Table 6 (pimhe's cpu backend and SEAL).
    pub skip_cpu: bool,
    /// Timed rounds after a warm-up [default: 5].
    pub repeat: usize,
    /// Worker threads of pimhe's cpu backend (`None`: all cores).
    pub threads: Option<usize>,
    /// The Python of an environment with TenSEAL (`None`: the one bench/compare/run.py made
    /// under `$PIMHE_COMPARE_CACHE` or `~/.cache/pimhe-compare`, if any).
    pub seal_python: Option<PathBuf>,
    /// Ring degree of the CPU measurement (4096 .. 32768) [default: 16384, the paper's].
    #[serde(skip)]
    pub n: usize,
    /// Seed of the keys, randomness and inputs [default: 1].
    #[serde(skip)]
    pub seed: u64,
}

impl Default for CeramConfig {
    fn default() -> Self {
        Self { skip_cpu: false, repeat: 5, threads: None, seal_python: None, n: PAPER_DEGREE, seed: 1 }
    }
}
