//! `pimhe demo` as a library: one of the pipelines of [`pimhe_workloads`] (BGV: a product,
//! relinearized and switched down a modulus; CKKS: sigmoid(rot(x y, 1))) end to end on a
//! target, checked against the plaintext computation, with each step's time as it happens and,
//! on a PIM target, the server's modeled cost beside the same computation measured on the CPU.
//!
//! The text goes line by line to the caller's sink, so that a terminal shows each step as it
//! completes; the CLI prints the lines, nothing else.

mod bgv;
mod ckks;

use std::time::{Duration, Instant};

use pimhe_pim::runtime::placement::Mode;

use crate::error::{BenchError, Result};
use crate::target::{BackendKind, Ran, Target, TargetRules, UpmemFlags};

/// What `demo` accepts of the target flags: every backend (emulated DPUs by default), `--mode`
/// (the planner's choice by default) and `--what-if`; `--threads` sets the CPU client's threads
/// and those of the CPU run beside the emulated one.
pub const RULES: TargetRules = TargetRules {
    backends: &[BackendKind::UpmemEmu, BackendKind::Cpu, BackendKind::Nearbank],
    default: BackendKind::UpmemEmu,
    upmem: UpmemFlags { mode: true, kernel: false, emulate: false, what_if: true },
    threads_beside_upmem: true,
};

/// The demo's scheme.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DemoScheme {
    /// A product of integer vectors, checked exactly.
    Bgv,
    /// A product, a rotation and a sigmoid of real vectors, checked in bits of precision.
    Ckks,
}

impl DemoScheme {
    /// The scheme `--scheme` names.
    pub fn parse(name: &str) -> Result<Self> {
        match name {
            "bgv" => Ok(DemoScheme::Bgv),
            "ckks" => Ok(DemoScheme::Ckks),
            other => Err(BenchError::usage(format!("--scheme {other} is not known; choose bgv or ckks"))),
        }
    }
}

/// What a demo runs.
#[derive(Debug, Clone, PartialEq)]
pub struct DemoConfig {
    /// The pipeline.
    pub scheme: DemoScheme,
    /// Ring degree N of the preset parameters.
    pub n: usize,
    /// Vector pairs (ciphertexts in each of the two batches).
    pub batch: usize,
    /// Where the server computes ([`RULES`]).
    pub target: Target,
    /// Seed of the random input vectors (keys and encryptions use OS randomness).
    pub seed: u64,
}

/// Runs the demo, each line of its text sent to `out` as it is produced. A result that does not
/// match the plaintext computation is an error (after its lines were sent).
///
/// ```
/// use pimhe_bench::demo::{self, DemoConfig, DemoScheme};
/// use pimhe_bench::target::Target;
/// let config = DemoConfig { scheme: DemoScheme::Bgv, n: 4096, batch: 1, target: Target::Cpu { threads: Some(1) }, seed: 1 };
/// let mut lines = Vec::new();
/// demo::run(&config, &mut |line| lines.push(line.to_string())).unwrap();
/// assert_eq!(lines.last().unwrap(), "OK: all 1 x 4096 slot products match the plaintext computation");
/// ```
pub fn run(config: &DemoConfig, out: &mut dyn FnMut(&str)) -> Result<()> {
    if config.batch == 0 {
        return Err(BenchError::usage("--batch must be at least 1"));
    }
    RULES.check(&config.target)?;
    match config.scheme {
        DemoScheme::Bgv => bgv::run(config, out),
        DemoScheme::Ckks => ckks::run(config, out),
    }
}

/// Times `f`, and sends its line (`  name  time ms`, the name padded with its indentation) to
/// `out`.
fn step<T>(out: &mut dyn FnMut(&str), name: &str, f: impl FnOnce() -> Result<T>) -> Result<(T, Duration)> {
    let start = Instant::now();
    let value = f()?;
    let elapsed = start.elapsed();
    out(&step_line(name, elapsed));
    Ok((value, elapsed))
}

/// A step's line: `  name` padded to 40, then the milliseconds.
fn step_line(name: &str, elapsed: Duration) -> String {
    format!("  {name:<40} {:>10.3} ms", elapsed.as_secs_f64() * 1e3)
}

/// On emulated DPUs, the placement the run used; with `--mode auto` the planner's choice and
/// every candidate's price are printed first.
fn placement<T>(target: &Target, ran: &Ran<T>, out: &mut dyn FnMut(&str)) -> Option<Mode> {
    if let Some(plan) = &ran.plan {
        out(&format!("  {}", plan.summary()));
    }
    match target {
        Target::UpmemEmu(upmem) => Some(upmem.mode_of(ran)),
        Target::Cpu { .. } | Target::Nearbank(_) => None,
    }
}
