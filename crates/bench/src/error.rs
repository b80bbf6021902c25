//! The one error type of the crate: what went wrong, and whether it was the caller's input.

use thiserror::Error;

/// A failed benchmark, reproduction or PIM setting.
///
/// The messages name the CLI's flags (`--batch 0 is not allowed: ...`), because that is where
/// the configuration usually comes from; the Python package passes them on as they are.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum BenchError {
    /// Invalid configuration: a value out of range, an unknown backend, a run too large for
    /// this machine. The CLI exits with status 2 on it, like clap's own parse errors.
    #[error("{0}")]
    Usage(String),
    /// The configuration was valid but the run failed (a backend error, a wrong decryption).
    /// The CLI exits with status 1 on it.
    #[error("{0}")]
    Failed(String),
}

impl BenchError {
    /// An invalid-configuration error.
    pub fn usage(message: impl Into<String>) -> Self {
        BenchError::Usage(message.into())
    }

    /// Whether the error is the caller's (an invalid configuration).
    pub fn is_usage(&self) -> bool {
        matches!(self, BenchError::Usage(_))
    }
}

impl From<pimhe_exec::ExecError> for BenchError {
    fn from(e: pimhe_exec::ExecError) -> Self {
        match e {
            // Too large for the DPUs' memory: an argument to change (more DPUs, a smaller batch).
            pimhe_exec::ExecError::Capacity(message) => BenchError::Usage(message),
            e => BenchError::Failed(format!("backend error: {e}")),
        }
    }
}

impl From<pimhe_ring::RingError> for BenchError {
    fn from(e: pimhe_ring::RingError) -> Self {
        BenchError::Failed(format!("ring error: {e}"))
    }
}

impl From<pimhe_schemes::SchemeError> for BenchError {
    fn from(e: pimhe_schemes::SchemeError) -> Self {
        match e {
            // Too large for this machine: an argument to lower, as everywhere else.
            pimhe_schemes::SchemeError::Ring(pimhe_ring::RingError::OutOfMemory(e)) => e.into(),
            pimhe_schemes::SchemeError::Exec(e @ pimhe_exec::ExecError::Capacity(_)) => e.into(),
            e => BenchError::Failed(format!("scheme error: {e}")),
        }
    }
}

impl From<pimhe_ring::memory::OutOfMemory> for BenchError {
    /// A run too large for this machine is an invalid argument, as `bench` has always said.
    fn from(e: pimhe_ring::memory::OutOfMemory) -> Self {
        BenchError::Usage(e.to_string())
    }
}

/// `--threads`, the same for every command: 1 ..= [`pimhe_exec::cpu::MAX_THREADS`].
pub fn check_threads(threads: Option<usize>) -> Result<()> {
    match threads {
        Some(0) => Err(BenchError::usage("--threads 0 is not allowed: at least 1 thread is needed")),
        Some(t) if t > pimhe_exec::cpu::MAX_THREADS => Err(BenchError::usage(format!(
            "--threads {t} is not allowed: at most {} (this machine has {} cores)",
            pimhe_exec::cpu::MAX_THREADS,
            std::thread::available_parallelism().map_or(1, |n| n.get())
        ))),
        _ => Ok(()),
    }
}

/// The most timed repeats (or rounds) `--repeat` may ask for, on every command: a timing's best
/// and mean or median settle long before (a few to a few hundred runs), the timings stay a few
/// MB (8 bytes per repeat, per operation for `bench scheme`), and the fastest kernel is through
/// them in seconds. Without a bound, `--repeat 4294967296` asked for 32 GiB of timings up front
/// and aborted.
pub const MAX_REPEAT: usize = 100_000;

/// `--repeat`, the same for every command: 1 ..= [`MAX_REPEAT`]; `unit` names one repeat in
/// the message ("repeat", "round", "CPU run").
pub fn check_repeat(repeat: usize, unit: &str) -> Result<()> {
    match repeat {
        0 => Err(BenchError::usage(format!("--repeat 0 is not allowed: at least 1 {unit} is needed"))),
        r if r > MAX_REPEAT => Err(BenchError::usage(format!(
            "--repeat {r} is not allowed: at most {MAX_REPEAT} {unit}s (allowed 1..={MAX_REPEAT})"
        ))),
        _ => Ok(()),
    }
}

/// Shorthand for results of this crate.
pub type Result<T> = std::result::Result<T, BenchError>;
