//! End-to-end checks of `pimhe advise` through the built binary: the JSON and text reports and
//! the exit status of bad input. No time is asserted.

mod common;

use common::{pimhe, stderr};

const SMALL: [&str; 14] = [
    "advise",
    "--workload",
    "pipeline",
    "--n",
    "2048",
    "--batch",
    "8",
    "--dpus",
    "64,2",
    "--max-batch",
    "16",
    "--repeat",
    "1",
    "--what-if",
];

#[test]
fn json_report_has_every_dpu_count_per_scenario_and_a_verdict_each() {
    let mut args = SMALL.to_vec();
    args.extend(["none", "--what-if", "mul-cycles=1,zero-copy", "--json"]);
    let output = pimhe(&args);
    assert!(output.status.success(), "stderr: {}", stderr(&output));
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).expect("one JSON object");
    let rows = report["rows"].as_array().unwrap();
    let cells: Vec<(String, u64)> =
        rows.iter().map(|r| (r["what_if"].as_str().unwrap().to_string(), r["dpus"].as_u64().unwrap())).collect();
    let expected = [("none", 2), ("none", 64), ("mul-cycles=1/2,zero-copy", 2), ("mul-cycles=1/2,zero-copy", 64)];
    assert_eq!(cells, expected.map(|(w, d)| (w.to_string(), d)));
    for row in rows.iter().filter(|r| r["what_if"] != "none") {
        assert_eq!(row["pim"]["transfer_s"], 0.0);
        assert_eq!(row["pim"]["retrieve_s"], 0.0);
        assert!(row["model"].as_str().unwrap().ends_with("+mul=1/2+zero-copy (modeled)"), "{row}");
    }
    let verdicts = report["verdicts"].as_array().unwrap();
    assert_eq!(verdicts.len(), 2);
    for v in verdicts {
        for against in ["vs_measured", "vs_scaled"] {
            let kind = v[against]["verdict"].as_str().unwrap();
            assert!(["wins", "never", "not-modeled"].contains(&kind), "{v}");
        }
    }
    assert_eq!(report["cpu"]["server"]["facts"]["cores"], 8);
}

#[test]
fn text_report_labels_modeled_and_scaled_figures() {
    let mut args = SMALL.to_vec();
    args.push("none");
    let output = pimhe(&args);
    assert!(output.status.success(), "stderr: {}", stderr(&output));
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(text.starts_with("pimhe advise: pipeline"), "{text}");
    assert!(text.contains("(scaled, not measured)") && text.contains("upmem-v1b@2 (modeled)"), "{text}");
    // Time against both CPUs; energy and EDP against the scaled one, whose power is stated.
    assert_eq!(text.matches("  verdict [none] vs ").count(), 4, "{text}");
    for quantity in ["vs cpu measured here: time: ", "energy: ", "energy-delay product: "] {
        assert!(text.contains(quantity), "{quantity}: {text}");
    }
}

#[test]
fn bad_input_exits_2_with_the_flag_named() {
    for (args, message) in [
        (vec!["advise", "--workload", "ntt", "--n", "2048", "--batch", "8"], "--workload ntt is not known"),
        (vec!["advise", "--workload", "bgv-mul-relin", "--n", "1024", "--batch", "8"], "--n 1024 is not allowed"),
        (vec!["advise", "--workload", "pipeline", "--n", "2048", "--batch", "7"], "--batch 7 is not allowed"),
        (vec!["advise", "--workload", "pipeline", "--n", "2048", "--batch", "8", "--dpus", "4000"], "--dpus 4000"),
        (vec!["advise", "--workload", "median", "--n", "4096", "--users", "8"], "--workload median is not known"),
        (vec!["advise", "--workload", "mean", "--n", "4096", "--users", "0"], "--users 0 is not allowed"),
        (vec!["advise", "--workload", "mean", "--n", "4096", "--batch", "8"], "--workload mean needs --users"),
        (vec!["advise", "--workload", "pipeline", "--n", "2048", "--users", "8"], "--users applies to the statistics"),
        (vec!["advise", "--workload", "pipeline", "--n", "2048"], "--batch"),
    ] {
        let output = pimhe(&args);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert!(stderr(&output).contains(message), "{args:?}: {}", stderr(&output));
    }
}

#[test]
fn ciphertext_major_mode_has_no_fallbacks_and_says_so() {
    let args = [
        "advise",
        "--workload",
        "bgv-mul-relin",
        "--n",
        "4096",
        "--batch",
        "4",
        "--dpus",
        "3,8",
        "--max-batch",
        "4",
        "--repeat",
        "1",
        "--what-if",
        "none",
        "--mode",
        "ciphertext-major",
        "--json",
    ];
    let output = pimhe(&args);
    assert!(output.status.success(), "stderr: {}", stderr(&output));
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).expect("one JSON object");
    assert_eq!(report["mode"], "ciphertext-major");
    assert_eq!(report["fallback_s"], 0.0);
    for row in report["rows"].as_array().unwrap() {
        assert_eq!(row["pim"]["fallback_s"], 0.0, "{row}");
        assert!(row["pim"]["compute_s"].as_f64().unwrap() > 0.0, "{row}");
    }
    let output = pimhe(&["advise", "--workload", "pipeline", "--n", "2048", "--batch", "8", "--mode", "sequential"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("--mode sequential is not allowed for advise"), "{}", stderr(&output));
}

#[test]
fn the_statistics_and_ckks_run_with_auto_and_name_each_rows_placement() {
    for (workload, n, size) in
        [("mean", "4096", ["--users", "8"]), ("ckks-mul-relin-rescale", "8192", ["--batch", "2"])]
    {
        let mut args = vec!["advise", "--workload", workload, "--n", n];
        args.extend(size);
        args.extend(["--dpus", "9", "--repeat", "1", "--what-if", "none", "--mode", "auto", "--json"]);
        let output = pimhe(&args);
        assert!(output.status.success(), "{workload}: {}", stderr(&output));
        let report: serde_json::Value = serde_json::from_slice(&output.stdout).expect("one JSON object");
        assert_eq!(report["mode"], "auto");
        let row = &report["rows"][0];
        let placement = row["placement"].as_str().unwrap();
        assert!(["parallel", "sequential", "hybrid", "ciphertext-major"].contains(&placement), "{row}");
        assert!(row["plan"].as_str().unwrap().contains(&format!("{placement} is the cheapest")), "{row}");
        let verdict = &report["verdicts"][0];
        assert_eq!(verdict["energy"]["quantity"], "energy", "{verdict}");
        assert_eq!(verdict["edp"]["quantity"], "energy-delay-product", "{verdict}");
        assert!(verdict["edp"]["cpu"].as_f64().unwrap() > 0.0, "{verdict}");
    }
}
