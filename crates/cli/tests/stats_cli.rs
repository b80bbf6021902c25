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
    for backend in ["cpu", "upmem-emu"] {
        let output = pimhe(&[
            "stats",
            "mean",
            "--input",
            path.to_str().unwrap(),
            "--columns",
            "value",
            "--backend",
            backend,
            "--dpus",
            "8",
            "--seed",
            "1",
            "--json",
        ]);
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
        let output = pimhe(&[
            "stats",
            "variance",
            "--input",
            path.to_str().unwrap(),
            "--columns",
            "value",
            "--scheme",
            scheme,
            "--backend",
            backend,
            "--dpus",
            "32",
            "--seed",
            "3",
            "--json",
        ]);
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
