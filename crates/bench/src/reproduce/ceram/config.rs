//! What `pimhe bench reproduce ceram` runs.

use std::path::PathBuf;

use super::published::PAPER_DEGREE;

/// What `pimhe bench reproduce ceram` runs.
#[derive(Debug, Clone, PartialEq)]
pub struct CeramConfig {
    /// Measure the CPU side of Table 6 (pimhe's cpu backend and SEAL); `false` models only.
    pub cpu: bool,
    /// Ring degree of the CPU measurement (4096 .. 32768) [default: 16384, the paper's].
    pub n: usize,
    /// Timed rounds after a warm-up [default: 5].
    pub repeat: usize,
    /// Worker threads of pimhe's cpu backend (`None`: all cores).
    pub threads: Option<usize>,
    /// The Python of an environment with TenSEAL (`None`: the one bench/compare/run.py made
    /// under `$PIMHE_COMPARE_CACHE` or `~/.cache/pimhe-compare`, if any).
    pub seal_python: Option<PathBuf>,
    /// Seed of the keys, randomness and inputs [default: 1].
    pub seed: u64,
}

impl Default for CeramConfig {
    fn default() -> Self {
        Self { cpu: true, n: PAPER_DEGREE, repeat: 5, threads: None, seal_python: None, seed: 1 }
    }
}
