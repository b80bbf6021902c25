//! `pimhe helr` end to end: the JSON report against the plaintext trainer run here (the
//! library's `helr::run` with the command's settings), and the errors for input it cannot use.

mod common;

use common::{pimhe, stderr};
use pimhe_workloads::helr::{run, ConstantFeatures, LabeledData, RunConfig, TrainConfig};

/// A CSV of 80 samples, 3 features (one constant, which the command drops), label `y`.
fn write_csv(dir: &std::path::Path) -> std::path::PathBuf {
    let data = LabeledData::synthetic_separable(80, 2, 4).unwrap().data;
    let mut csv = String::from("x1,flat,x2,y\n");
    for (x, y) in data.rows().iter().zip(data.labels()) {
        csv += &format!("{:.4},7,{:.4},{y}\n", x[0], x[1]);
    }
    let path = dir.join("samples.csv");
    std::fs::write(&path, csv).unwrap();
    path
}

/// Five iterations at N = 2^10, where the trainer's plan (one iteration per bootstrapping once
/// the fresh chain is used up) bootstraps before iterations 4 and 5: the encrypted weights match
/// the plaintext trainer's within 1e-4 (CKKS and bootstrapping err by about 1e-6;
/// tests/helr_encrypted.rs in the workloads crate explains the bound), and the held-out
/// accuracies agree.
#[test]
fn the_json_report_matches_the_plaintext_trainer() {
    let dir = std::env::temp_dir().join(format!("pimhe-helr-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = write_csv(&dir);
    let args = ["helr", "--input", path.to_str().unwrap(), "--label", "y", "--n", "1024", "--iterations", "5"];
    let output = pimhe(&[&args[..], &["--batch", "32", "--json"]].concat());
    assert!(output.status.success(), "{}", stderr(&output));
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!((json["insecure"].as_bool(), json["bootstraps"].as_u64()), (Some(true), Some(2)), "{json}");
    assert_eq!(json["standardization"]["dropped"], serde_json::json!(["flat"]));
    assert_eq!(json["per_iteration"].as_array().unwrap().len(), 5);

    let csv = std::fs::read(&path).unwrap();
    let data = LabeledData::from_csv(csv.as_slice(), "y").unwrap();
    let config = RunConfig {
        constant_features: ConstantFeatures::Drop,
        train: TrainConfig { batch: 32, iterations: 5, learning_rate: 0.5, ..TrainConfig::default() },
        ..RunConfig::default()
    };
    let plain = run(&data, &config).unwrap();
    let weights: Vec<f64> = json["weights"].as_array().unwrap().iter().map(|w| w.as_f64().unwrap()).collect();
    assert_eq!(weights.len(), plain.training.weights.len());
    for (encrypted, expected) in weights.iter().zip(&plain.training.weights) {
        assert!((encrypted - expected).abs() < 1e-4, "{weights:?} vs {:?}", plain.training.weights);
    }
    assert_eq!(json["plaintext"]["accuracy"].as_f64(), Some(plain.test.accuracy));
    assert_eq!(json["encrypted"]["accuracy"].as_f64(), Some(plain.test.accuracy));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_input_is_refused_with_exit_code_2_and_what_is_wrong() {
    let dir = std::env::temp_dir().join(format!("pimhe-helr-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let refused = |csv: &str, extra: &[&str]| {
        let path = dir.join("bad.csv");
        std::fs::write(&path, csv).unwrap();
        let args = [&["helr", "--input", path.to_str().unwrap(), "--label", "y"][..], extra].concat();
        let output = pimhe(&args);
        assert_eq!(output.status.code(), Some(2), "{csv}: {}", stderr(&output));
        stderr(&output)
    };
    assert!(refused("a,y\n1,2\n", &[]).contains("row 2, column 'y': the label is 2; labels must be 0 or 1"));
    assert!(refused("a,y\n1,x\n", &[]).contains("labels must be 0 or 1"));
    assert!(refused("a,b\n1,0\n", &[]).contains("no label column 'y'"));
    let few = "a,y\n1,0\n2,1\n3,0\n4,1\n5,0\n";
    assert!(refused(few, &["--batch", "8"]).contains("fewer than the batch of 8"));
    assert!(refused(few, &["--batch", "2", "--n", "1000"]).contains("--n 1000"));
    let parallel = ["--batch", "2", "--n", "1024", "--backend", "upmem-emu", "--dpus", "8", "--mode", "parallel"];
    assert!(refused(few, &parallel).contains("--dpus 8 is too few for --mode parallel"));
    let missing = pimhe(&["helr", "--input", "/nonexistent/x.csv", "--label", "y"]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(stderr(&missing).contains("cannot open --input /nonexistent/x.csv"));
    std::fs::remove_dir_all(&dir).unwrap();
}
