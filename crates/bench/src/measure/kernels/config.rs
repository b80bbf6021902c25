//! What `pimhe bench OP` is asked: the operation, the ring, the batch, where it runs and how
//! often ([`KernelConfig`]), and what the command accepts of the target flags ([`RULES`]).

use crate::error::{check_repeat, BenchError, Result};
use crate::target::{BackendKind, Target, TargetRules, UpmemFlags};

use super::workload::Op;

/// Timed repeats of a cpu run when none are asked for.
pub const DEFAULT_REPEAT: usize = 3;

/// What `bench OP` accepts of the target flags: every backend and every UPMEM flag; no
/// `--threads` on upmem-emu, whose emulator uses every core.
pub const RULES: TargetRules = TargetRules {
    backends: &BackendKind::ALL,
    default: BackendKind::Cpu,
    upmem: UpmemFlags { mode: true, kernel: true, emulate: true, what_if: true },
    threads_beside_upmem: false,
};

/// What `pimhe bench OP` runs: the operation, the ring, the batch and where.
#[derive(Debug, Clone, PartialEq)]
pub struct KernelConfig {
    /// Operation to time.
    pub op: Op,
    /// Ring degree N: a power of two from 16 (2^4) to 1048576 (2^20).
    pub n: usize,
    /// Number K of RNS primes; needed by the kernels, refused by bfv-mul, bfv-add and
    /// bgv-mul-relin (they use the preset's).
    pub primes: Option<usize>,
    /// Bits of each prime (2..=30) [default: 30].
    pub prime_bits: u32,
    /// Number C of input ciphertexts (two polynomials each); even for the paired operations.
    pub batch: usize,
    /// Where it runs ([`RULES`]; upmem-emu: auto placement and auto emulation unless set).
    pub target: Target,
    /// Timed repeats on cpu, 1..=[`crate::error::MAX_REPEAT`] [default: [`DEFAULT_REPEAT`]];
    /// refused on the other backends, which run once and model the run.
    pub repeat: Option<usize>,
    /// Seed of the input generator [default: 1].
    pub seed: u64,
}

impl KernelConfig {
    /// `op` over `n` and `batch` with the defaults: `primes` primes of 30 bits, on cpu with all
    /// cores, [`DEFAULT_REPEAT`] repeats, seed 1.
    pub fn new(op: Op, n: usize, primes: Option<usize>, batch: usize) -> Self {
        Self { op, n, primes, prime_bits: 30, batch, target: Target::Cpu { threads: None }, repeat: None, seed: 1 }
    }

    /// The timed repeats: refused off the cpu backend, checked on it.
    pub(super) fn repeats(&self) -> Result<usize> {
        match (&self.target, self.repeat) {
            (Target::Cpu { .. }, repeat) => {
                let repeat = repeat.unwrap_or(DEFAULT_REPEAT);
                check_repeat(repeat, "repeat")?;
                Ok(repeat)
            }
            (_, None) => Ok(1),
            // The other backends run once and model the run: a count would do nothing.
            (target, Some(_)) => Err(BenchError::usage(format!(
                "--repeat applies to --backend cpu only (this run uses --backend {})",
                target.name()
            ))),
        }
    }
}
