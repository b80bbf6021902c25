//! `pimhe bench reproduce gupta --quick` through the built binary: the text and the JSON.

mod common;

use common::{pimhe, stderr};
use serde_json::Value;

fn stdout(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn reproduce_gupta_quick_prints_fig1_and_the_sweep() {
    let output = pimhe(&["bench", "reproduce", "gupta", "--quick", "--skip-cpu"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    for needle in [
        "Gupta et al., Fig. 1 on 12 DPUs at 425 MHz",
        "Tasklet sweep",
        "Comparison with gupta",
        "upmem-v1b@1 (modeled)",
    ] {
        assert!(text.contains(needle), "{needle} missing from\n{text}");
    }
    let output = pimhe(&["bench", "reproduce", "gupta", "--quick", "--skip-cpu", "--json"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let report: Value = serde_json::from_str(stdout(&output).trim()).unwrap();
    assert_eq!(report["paper"], "gupta");
    assert_eq!(report["rows"].as_array().unwrap().len(), 18);
    assert_eq!(report["sweep"].as_array().unwrap().len(), 32);
    let output = pimhe(&["bench", "reproduce", "gupta", "--repeat", "0"]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(stderr(&output).contains("--repeat 0 is not allowed"), "{}", stderr(&output));
}
