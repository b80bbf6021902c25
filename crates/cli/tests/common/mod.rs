//! Running the `pimhe` binary from the CLI's integration tests.

use std::process::{Command, Output};

/// Runs `pimhe` with `args`.
pub fn pimhe(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pimhe")).args(args).output().expect("the pimhe binary runs")
}

/// Its standard error as text.
pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}
