//! The client/server statistics end to end through the binary: `keygen`, `encrypt` (users),
//! `eval` (server, with the secret key nowhere in its directories), `decrypt`, against the
//! statistic computed here in plaintext from the same CSV.

mod common;

use std::path::{Path, PathBuf};

use common::pimhe;

fn ok(args: &[&str]) -> serde_json::Value {
    let output = pimhe(args);
    assert!(output.status.success(), "{args:?}: {}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_slice(&output.stdout).expect("one JSON object")
}

/// A fresh directory under the system's temporary one.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("pimhe-study-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Every file under `dir`, recursively.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            found.extend(files_under(&path));
        } else {
            found.push(path);
        }
    }
    found
}

#[test]
fn users_encrypt_the_server_adds_up_and_the_analyst_decrypts_the_variance() {
    let root = scratch("variance");
    let (public, analyst, subs) = (root.join("public"), root.join("analyst"), root.join("server").join("subs"));
    // 25 users: ages and incomes with two decimals, some negative.
    let rows: Vec<(f64, f64)> =
        (0..25).map(|i| (18.0 + (i * 7 % 60) as f64, (i * 1234 % 9000) as f64 / 4.0 - 300.25)).collect();
    let csv = std::iter::once("age,income".to_string())
        .chain(rows.iter().map(|(a, b)| format!("{a},{b:.2}")))
        .collect::<Vec<_>>()
        .join("\n");
    let data = root.join("data.csv");
    std::fs::write(&data, csv).unwrap();
    let s = |p: &Path| p.to_str().unwrap().to_string();

    let keygen = ok(&[
        "keygen",
        "--statistic",
        "variance",
        "--columns",
        "age,income",
        "--decimals",
        "2",
        "--max-value",
        "5000",
        "--max-users",
        "100",
        "--public-dir",
        &s(&public),
        "--secret-dir",
        &s(&analyst),
        "--seed",
        "5",
        "--json",
    ]);
    assert_eq!(keygen["study"]["scheme"], "bgv");
    let encrypted = ok(&["encrypt", "--public-dir", &s(&public), "--input", &s(&data), "--out", &s(&subs), "--json"]);
    assert_eq!(encrypted["users"], 25);

    // The server's side: the public directory and the submissions, no secret key in either.
    let server_files: Vec<PathBuf> = files_under(&public).into_iter().chain(files_under(&subs)).collect();
    assert_eq!(server_files.len(), 2 + 25);
    let secret = std::fs::read(analyst.join("secret-keys.pimhe")).unwrap();
    for file in &server_files {
        let bytes = std::fs::read(file).unwrap();
        assert!(!bytes.windows(64).any(|w| w == &secret[secret.len() - 64..]), "{} holds the secret", file.display());
    }
    let aggregates = root.join("server").join("aggregates.pimhe");
    for backend in ["cpu", "upmem-emu"] {
        let mut eval_args = vec![
            "eval".to_string(),
            "--public-dir".into(),
            s(&public),
            "--submissions".into(),
            s(&subs),
            "--out".into(),
            s(&aggregates),
            "--force".into(),
            "--backend".into(),
            backend.into(),
            "--json".into(),
        ];
        if backend == "upmem-emu" {
            eval_args.extend(["--dpus".into(), "8".into()]);
        }
        let eval = ok(&eval_args.iter().map(String::as_str).collect::<Vec<_>>());
        assert_eq!(eval["users"], 25);
        assert_eq!(eval["upmem"].is_null(), backend == "cpu");
        let result = ok(&[
            "decrypt",
            "--public-dir",
            &s(&public),
            "--secret-dir",
            &s(&analyst),
            "--input",
            &s(&aggregates),
            "--json",
        ]);
        assert_eq!(result["users"], 25);
        let n = rows.len() as f64;
        for (k, column) in [|r: &(f64, f64)| r.0, |r: &(f64, f64)| r.1].iter().enumerate() {
            let mean = rows.iter().map(column).sum::<f64>() / n;
            let variance = rows.iter().map(|r| (column(r) - mean).powi(2)).sum::<f64>() / n;
            let got = result["estimates"][k]["value"].as_f64().unwrap();
            assert!((got - variance).abs() <= 1e-9 * variance.max(1.0), "{backend} column {k}: {got} vs {variance}");
        }
    }
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn bad_inputs_are_clear_usage_errors() {
    let root = scratch("errors");
    let (public, analyst) = (root.join("public"), root.join("analyst"));
    let s = |p: &Path| p.to_str().unwrap().to_string();
    let same = pimhe(&[
        "keygen",
        "--statistic",
        "mean",
        "--columns",
        "a",
        "--max-value",
        "10",
        "--max-users",
        "5",
        "--public-dir",
        &s(&public),
        "--secret-dir",
        &s(&public),
    ]);
    assert_eq!(same.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&same.stderr).contains("are the same"));
    ok(&[
        "keygen",
        "--statistic",
        "mean",
        "--columns",
        "a",
        "--max-value",
        "10",
        "--max-users",
        "5",
        "--public-dir",
        &s(&public),
        "--secret-dir",
        &s(&analyst),
        "--n",
        "4096",
        "--json",
    ]);
    let data = root.join("data.csv");
    std::fs::write(&data, "a\n3\n11\n").unwrap();
    let over = pimhe(&["encrypt", "--public-dir", &s(&public), "--input", &s(&data), "--out", &s(&root.join("subs"))]);
    assert_eq!(over.status.code(), Some(2));
    let message = String::from_utf8_lossy(&over.stderr);
    assert!(message.contains("row 3") && message.contains("exceeds the study's largest value"), "{message}");
    // A damaged submission is named in the server's error.
    let subs = root.join("subs2");
    std::fs::create_dir_all(&subs).unwrap();
    std::fs::write(subs.join("user-1.pimhe"), b"PIMHEBDL garbage").unwrap();
    let eval =
        pimhe(&["eval", "--public-dir", &s(&public), "--submissions", &s(&subs), "--out", &s(&root.join("agg"))]);
    assert_eq!(eval.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&eval.stderr).contains("user-1.pimhe"));
    std::fs::remove_dir_all(&root).unwrap();
}
