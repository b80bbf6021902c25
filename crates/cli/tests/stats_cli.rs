//! `pimhe stats` end to end: JSON output against a plaintext computation done here, and the
//! errors for input it cannot use.

mod common;

use common::{pimhe, stderr};

#[test]
fn mean_of_a_csv_matches_the_plaintext_mean_on_both_backends() {
    let dir = std::env::temp_dir().join(format!("pimhe-stats-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("users.csv");
    let values = ["-3.5", "12", "0.25", "7.75", "-100"];
    let mut csv = String::from("name,value\n");
    for (i, v) in values.iter().enumerate() {
        csv += &format!("user{i},{v}\n");
    }
    std::fs::write(&path, csv).unwrap();
    let expected = values.iter().map(|v| v.parse::<f64>().unwrap()).sum::<f64>() / values.len() as f64;
    for (backend, dpus) in [("cpu", &[][..]), ("upmem-emu", &["--dpus", "8"][..])] {
        let mut args =
            vec!["stats", "mean", "--input", path.to_str().unwrap(), "--columns", "value", "--backend", backend];
        args.extend(dpus.iter().chain(&["--seed", "1", "--json"]));
        let output = pimhe(&args);
        assert!(output.status.success(), "{backend}: {}", stderr(&output));
        let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
        assert_eq!(json["aggregates_exact"], true, "{json}");
        assert_eq!(json["users"], 5);
        assert_eq!(json["decimals"], 2);
        let mean = json["estimates"][0]["encrypted"].as_f64().unwrap();
        assert!((mean - expected).abs() < 1e-12, "{backend}: {mean} vs {expected}");
        assert_eq!(json["upmem"].is_null(), backend == "cpu", "{json}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `--scheme bfv` on both backends: the same estimates as BGV, every aggregate exact, and the
/// variance equal to the one computed here in plaintext.
#[test]
fn bfv_variance_matches_bgv_and_the_plaintext_on_both_backends() {
    let dir = std::env::temp_dir().join(format!("pimhe-stats-bfv-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("users.csv");
    let values = [-3.5, 12.0, 0.25, 7.75, -100.0, 0.0, 41.5];
    let csv: String = values.iter().fold(String::from("value\n"), |csv, v| csv + &format!("{v}\n"));
    std::fs::write(&path, csv).unwrap();
    let mean = values.iter().sum::<f64>() / values.len() as f64;
    let expected = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / values.len() as f64;
    let mut estimates = Vec::new();
    for (scheme, backend) in [("bgv", "cpu"), ("bfv", "cpu"), ("bfv", "upmem-emu")] {
        let path = path.to_str().unwrap();
        let mut args = vec!["stats", "variance", "--input", path, "--columns", "value", "--scheme", scheme];
        args.extend(["--backend", backend, "--seed", "3", "--json"]);
        if backend == "upmem-emu" {
            args.extend(["--dpus", "32"]);
        }
        let output = pimhe(&args);
        assert!(output.status.success(), "{scheme} {backend}: {}", stderr(&output));
        let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
        assert_eq!(json["scheme"], scheme);
        assert_eq!(json["aggregates_exact"], true, "{json}");
        let variance = json["estimates"][0]["encrypted"].as_f64().unwrap();
        assert!((variance - expected).abs() < 1e-9, "{scheme} {backend}: {variance} vs {expected}");
        estimates.push(variance);
    }
    assert!(estimates.iter().all(|&v| v == estimates[0]), "{estimates:?}");
    let output = pimhe(&["stats", "mean", "--input", path.to_str().unwrap(), "--columns", "value", "--scheme", "ckks"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("allowed: bgv, bfv"), "{}", stderr(&output));
    let output = pimhe(&[
        "stats",
        "mean",
        "--input",
        path.to_str().unwrap(),
        "--columns",
        "value",
        "--scheme",
        "bfv",
        "--backend",
        "upmem-emu",
        "--dpus",
        "8",
    ]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("--dpus 8 is too few") && stderr(&output).contains("18 primes"),
        "{}",
        stderr(&output)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn unusable_input_is_a_usage_error_naming_the_row_and_column() {
    let dir = std::env::temp_dir().join(format!("pimhe-stats-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("bad.csv");
    std::fs::write(&path, "a,b\n1,2\n3,n/a\n").unwrap();
    let output = pimhe(&["stats", "variance", "--input", path.to_str().unwrap(), "--columns", "a,b"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("row 3, column 'b'"), "{}", stderr(&output));
    let output = pimhe(&["stats", "linreg", "--users", "10", "--synthetic", "1", "--columns", "y"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("feature columns"), "{}", stderr(&output));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Exit status 2 and `needle` in the message.
fn refused(args: &[&str], needle: &str) {
    let output = pimhe(args);
    let message = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{args:?}: {message}");
    assert!(message.contains(needle) && !message.contains("panicked"), "{args:?}: {message}");
    assert!(output.stdout.is_empty(), "{args:?}");
}

#[test]
fn flags_the_run_does_not_use_are_refused() {
    let synthetic = ["stats", "mean", "--users", "3", "--synthetic", "1", "--columns", "x1", "--n", "4096"];
    let with = |flags: &[&'static str]| synthetic.iter().chain(flags).copied().collect::<Vec<_>>();
    // --dpus sizes the emulated DPUs: with the default cpu backend, or nearbank, it did nothing.
    refused(&with(&["--dpus", "8"]), "--dpus applies to --backend upmem-emu only (this run uses --backend cpu)");
    refused(
        &with(&["--backend", "nearbank", "--dpus", "8"]),
        "--dpus applies to --backend upmem-emu only (this run uses --backend nearbank)",
    );
    // Synthetic data has its own two decimals: --decimals only applies to --input.
    refused(&with(&["--decimals", "3"]), "'--synthetic <SYNTHETIC>' cannot be used with '--decimals <DECIMALS>'");
    // Without them the same run is answered.
    let output = pimhe(&synthetic);
    assert!(output.status.success(), "{}", stderr(&output));
}

#[test]
fn csv_input_without_end_or_with_duplicate_columns_is_refused() {
    // /dev/zero has no line break: the header would be read until memory runs out.
    refused(
        &["stats", "mean", "--input", "/dev/zero", "--columns", "a"],
        "the CSV header is longer than 1048576 bytes, the most a CSV record may have",
    );
    let dir = std::env::temp_dir().join(format!("pimhe-stats-duplicates-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("twice.csv");
    std::fs::write(&path, "a,b,a\n1,2,3\n4,5,6\n").unwrap();
    let input = path.to_str().unwrap();
    refused(
        &["stats", "mean", "--input", input, "--columns", "a"],
        "the CSV header names column 'a' more than once (columns 1 and 3)",
    );
    refused(&["stats", "mean", "--input", input, "--columns", "b,b"], "column 'b' is selected twice");
    refused(
        &["stats", "mean", "--users", "3", "--synthetic", "1", "--columns", "x1,x1"],
        "column 'x1' is selected twice",
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
