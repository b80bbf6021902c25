//! `pimhe bench reproduce dramatic|mhy|gupta|anaheim|ceram` through the built binary: each paper its own
//! subcommand with only its own flags (another paper's flag is refused by the parser), and each
//! printing its published figures beside ours in the common rows, in text and JSON.

mod common;

use common::{pimhe, stderr};
use serde_json::Value;

fn stdout(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The fields every comparison row has, whatever the paper (the verdict adds `tolerance` or
/// `why_not`, the basis `model` or `machine`).
const COMMON: [&str; 9] = ["id", "quantity", "unit", "published", "ours", "basis", "ratio", "source", "verdict"];

fn assert_common_rows(rows: &Value) {
    let rows = rows.as_array().unwrap();
    assert!(!rows.is_empty());
    for row in rows {
        for field in COMMON {
            assert!(row.get(field).is_some(), "{field} missing from {row}");
        }
    }
}

#[test]
fn each_paper_refuses_the_other_papers_flags() {
    for (paper, foreign) in [
        ("dramatic", &["--workload-n", "8192"][..]),
        ("dramatic", &["--skip-cpu"][..]),
        ("dramatic", &["--seal-python", "/usr/bin/python3"][..]),
        ("gupta", &["--kernel", "best"][..]),
        ("gupta", &["--workload-n", "8192"][..]),
        ("anaheim", &["--kernel", "best"][..]),
        ("anaheim", &["--what-if", "zero-copy"][..]),
        ("anaheim", &["--skip-cpu"][..]),
        ("anaheim", &["--rows", "t2"][..]),
        ("ceram", &["--workload-n", "8192"][..]),
        ("ceram", &["--kernel", "barrett"][..]),
        ("ceram", &["--max-emulation-s", "2"][..]),
        ("mhy", &["--kernel", "best"][..]),
        ("mhy", &["--repeat", "3"][..]),
    ] {
        let mut args = vec!["bench", "reproduce", paper];
        args.extend_from_slice(foreign);
        let output = pimhe(&args);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        let message = stderr(&output);
        assert!(message.contains(&format!("unexpected argument '{}' found", foreign[0])), "{args:?}: {message}");
        assert!(message.contains(&format!("Usage: pimhe bench reproduce {paper} [OPTIONS]")), "{message}");
        assert!(output.stdout.is_empty());
    }
    let output = pimhe(&["bench", "reproduce", "sealpir"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("unrecognized subcommand 'sealpir'"), "{}", stderr(&output));
}

#[test]
fn each_paper_lists_only_its_own_flags() {
    for (paper, own, others) in [
        ("dramatic", &["--kernel", "--what-if", "--json"][..], &["--workload-n", "--skip-cpu", "--threads"][..]),
        (
            "gupta",
            &["--quick", "--skip-cpu", "--repeat", "--threads", "--seal-json", "--json"][..],
            &["--kernel", "--workload-n", "--seal-python"][..],
        ),
        (
            "anaheim",
            &["--workload-n", "--threads", "--boot", "--boot-n", "--json"][..],
            &["--kernel", "--what-if", "--skip-cpu"][..],
        ),
        (
            "ceram",
            &["--skip-cpu", "--repeat", "--threads", "--seal-python", "--json"][..],
            &["--kernel", "--workload-n"][..],
        ),
        ("mhy", &["--quick", "--skip-cpu", "--json"][..], &["--kernel", "--repeat", "--threads"][..]),
    ] {
        let help = stdout(&pimhe(&["bench", "reproduce", paper, "--help"]));
        for flag in own {
            assert!(help.contains(flag), "{paper} --help lacks {flag}:\n{help}");
        }
        for flag in others {
            assert!(!help.contains(flag), "{paper} --help has {flag}:\n{help}");
        }
    }
}

#[test]
fn dramatic_rows_carry_their_comparison_in_text_and_json() {
    let args = ["bench", "reproduce", "dramatic", "--rows", "t2-ntt-64,t3-bgv-mul-1024", "--max-emulation-s", "2"];
    let output = pimhe(&[&args[..], &["--json"]].concat());
    assert!(output.status.success(), "{}", stderr(&output));
    let lines: Vec<Value> = stdout(&output).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 2, "one object per row, no target");
    for line in &lines {
        // The row's own fields, as before, and its comparison rows.
        for field in ["id", "table", "op", "compute_s", "published_compute_s", "model", "reference"] {
            assert!(line.get(field).is_some(), "{field} missing from {line}");
        }
        assert_common_rows(&line["comparison"]);
        let first = &line["comparison"][0];
        assert_eq!(first["id"], format!("{}/compute", line["id"].as_str().unwrap()));
        assert_eq!(first["ours"], line["compute_s"]);
        assert_eq!(first["published"], line["published_compute_s"]);
        assert_eq!(first["model"], line["model"]);
    }
    let text = stdout(&pimhe(&args));
    assert!(text.starts_with("DRAMatic (Tables 2-5) on the emulated UPMEM backend"), "{text}");
    assert!(text.contains("\nComparison with dramatic (N. Klinger"), "{text}");
    assert!(text.lines().any(|l| l.starts_with("  t3-bgv-mul-1024/compute ")), "{text}");
}

#[test]
fn dramatic_fig3_and_table1_print_as_one_object_each_with_their_comparison() {
    let output = pimhe(&["bench", "reproduce", "dramatic", "--rows", "fig3,table1", "--json"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let lines: Vec<Value> = stdout(&output).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 2, "Fig. 3, then Table 1");
    // Fig. 3: UPMEM's __mulsi3 takes 5 + 32 instructions for two 32-bit factors.
    assert_eq!(
        (lines[0]["widths"][31]["bits"].as_u64(), lines[0]["widths"][31]["native"].as_u64()),
        (Some(32), Some(37))
    );
    assert_common_rows(&lines[0]["comparison"]);
    // Table 1, N = 1024 with 1 modulus on 512 DPUs: "4096 CTs 32 MB".
    let cell = &lines[1]["rows"][0]["cells"][4];
    assert_eq!(
        (cell["dpus"].as_u64(), cell["published_cts"].as_u64(), cell["pimhe"]["cts"].as_u64()),
        (Some(512), Some(4096), Some(4096))
    );
    assert_common_rows(&lines[1]["comparison"]);
    let text = stdout(&pimhe(&["bench", "reproduce", "dramatic", "--rows", "table1"]));
    assert!(text.lines().any(|l| l.starts_with("  t1-4096-2560/cts-pimhe ")), "{text}");
}

#[test]
fn anaheim_ceram_and_mhy_add_the_comparison_to_their_report() {
    for (paper, extra, report_field) in [
        ("anaheim", &["--workload-n", "0"][..], "micro"),
        ("ceram", &["--skip-cpu"][..], "tables"),
        ("mhy", &["--quick", "--skip-cpu"][..], "by_n"),
    ] {
        let mut args = vec!["bench", "reproduce", paper, "--json"];
        args.extend_from_slice(extra);
        let output = pimhe(&args);
        assert!(output.status.success(), "{}", stderr(&output));
        let report: Value = serde_json::from_str(stdout(&output).trim()).unwrap();
        assert_eq!(report["paper"], paper);
        assert!(report[report_field].is_array(), "the paper's own report stays: {paper}");
        assert_common_rows(&report["comparison"]);
        args.remove(3);
        let text = stdout(&pimhe(&args));
        assert!(text.contains(&format!("\n\nComparison with {paper} (")), "{text}");
    }
}
