//! The CLI's errors are the library's ([`pimhe_bench::BenchError`]); this module maps them to
//! the process exit status.

use std::process::ExitCode;

pub use pimhe_bench::error::check_threads;
pub use pimhe_bench::{BenchError as CliError, Result};

/// The exit status of a failed command.
pub trait ExitStatus {
    /// Invalid arguments (a flag out of range, an unknown backend, a run too large for this
    /// machine): 2, like clap's own parse errors; a command that failed while running: 1.
    fn exit_code(&self) -> ExitCode;
}

impl ExitStatus for CliError {
    fn exit_code(&self) -> ExitCode {
        match self {
            CliError::Usage(_) => ExitCode::from(2),
            CliError::Failed(_) => ExitCode::from(1),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_errors_exit_2_and_failures_1() {
        assert_eq!(CliError::usage("x").exit_code(), ExitCode::from(2));
        assert_eq!(CliError::Failed("x".into()).exit_code(), ExitCode::from(1));
    }
}
