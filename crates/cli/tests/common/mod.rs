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

/// Runs `pimhe` with `args` and checks it refused them: exit status 2, nothing on standard
/// output, and every one of `expected` in the message.
#[allow(dead_code)] // not every test binary checks refusals
pub fn assert_refused(args: &[&str], expected: &[&str]) {
    let output = pimhe(args);
    assert_eq!(output.status.code(), Some(2), "{args:?}: {}", stderr(&output));
    let message = stderr(&output);
    for part in expected {
        assert!(message.contains(part), "{args:?}: {message:?} should contain {part:?}");
    }
    assert!(output.stdout.is_empty(), "{args:?}");
}
