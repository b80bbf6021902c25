//! `pimhe bench reproduce ceram` through the built binary: the model-only run (--skip-cpu); the
//! flags each paper refuses are in reproduce_cli.rs.

mod common;

use common::{pimhe, stderr};
use serde_json::Value;

fn stdout(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn reproduce_ceram_prints_the_tables_modeled() {
    let output = pimhe(&["bench", "reproduce", "ceram", "--skip-cpu"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    let needles = ["Table 2:", "Table 3:", "Table 4:", "Table 6:", "Table 7:", "Table 8:", "Section 4.4:", "Table 9:"];
    for needle in needles.into_iter().chain(["Table 10:", "ceram@1 (modeled)", "skipped (--skip-cpu)"]) {
        assert!(text.contains(needle), "{needle} missing from\n{text}");
    }
    let output = pimhe(&["bench", "reproduce", "ceram", "--skip-cpu", "--json"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let report: Value = serde_json::from_str(stdout(&output).trim()).unwrap();
    assert_eq!(report["tables"].as_array().unwrap().len(), 3);
    assert_eq!(report["model"], "ceram@1 (modeled)");
    assert_eq!(report["table6"]["rows"].as_array().unwrap().len(), 15);
    assert_eq!(report["throughput"].as_array().unwrap().len(), 2);
    assert_eq!(report["two_banks"]["cell"]["published"], 11222.0);
}
