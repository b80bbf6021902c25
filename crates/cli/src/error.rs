//! The one error type of the CLI: what went wrong and which exit status it maps to.

use std::fmt;
use std::process::ExitCode;

/// A failed command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CliError {
    /// Invalid arguments (a flag out of range, an unknown backend, a run too large for this
    /// machine). Exit status 2, like clap's own parse errors.
    Usage(String),
    /// The command was valid but failed while running (a backend error). Exit status 1.
    Failed(String),
}

impl CliError {
    /// An invalid-argument error.
    pub fn usage(message: impl Into<String>) -> Self {
        CliError::Usage(message.into())
    }

    /// The process exit status for this error.
    pub fn exit_code(&self) -> ExitCode {
        match self {
            CliError::Usage(_) => ExitCode::from(2),
            CliError::Failed(_) => ExitCode::from(1),
        }
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CliError::Usage(message) | CliError::Failed(message) => f.write_str(message),
        }
    }
}

impl std::error::Error for CliError {}

impl From<pimhe_exec::ExecError> for CliError {
    fn from(e: pimhe_exec::ExecError) -> Self {
        CliError::Failed(format!("backend error: {e}"))
    }
}

impl From<pimhe_ring::RingError> for CliError {
    fn from(e: pimhe_ring::RingError) -> Self {
        CliError::Failed(format!("ring error: {e}"))
    }
}

impl From<pimhe_schemes::SchemeError> for CliError {
    fn from(e: pimhe_schemes::SchemeError) -> Self {
        match e {
            // Too large for this machine: an argument to lower, as everywhere else.
            pimhe_schemes::SchemeError::Ring(pimhe_ring::RingError::OutOfMemory(e)) => e.into(),
            e => CliError::Failed(format!("scheme error: {e}")),
        }
    }
}

impl From<pimhe_ring::memory::OutOfMemory> for CliError {
    /// A run too large for this machine is an invalid argument, as `bench` has always said.
    fn from(e: pimhe_ring::memory::OutOfMemory) -> Self {
        CliError::Usage(e.to_string())
    }
}

/// `--threads`, the same for every command: 1 ..= [`pimhe_exec::cpu::MAX_THREADS`].
pub fn check_threads(threads: Option<usize>) -> Result<()> {
    match threads {
        Some(0) => Err(CliError::usage("--threads 0 is not allowed: at least 1 thread is needed")),
        Some(t) if t > pimhe_exec::cpu::MAX_THREADS => Err(CliError::usage(format!(
            "--threads {t} is not allowed: at most {} (this machine has {} cores)",
            pimhe_exec::cpu::MAX_THREADS,
            std::thread::available_parallelism().map_or(1, |n| n.get())
        ))),
        _ => Ok(()),
    }
}

/// Shorthand for results of the CLI.
pub type Result<T> = std::result::Result<T, CliError>;
