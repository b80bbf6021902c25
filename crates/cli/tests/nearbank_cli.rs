//! End-to-end checks of the `nearbank` backend through the built binary: the demos, `bench
//! reproduce anaheim`, and the flags it takes and refuses.

mod common;

use common::{assert_refused, pimhe, stderr};
use serde_json::Value;

fn stdout(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn the_demos_run_on_nearbank_and_print_the_modeled_server_beside_the_gpu_alone() {
    for scheme in ["bgv", "ckks"] {
        let n = if scheme == "bgv" { "4096" } else { "8192" };
        let args = ["demo", "--scheme", scheme, "--backend", "nearbank", "--n", n, "--batch", "1", "--threads", "2"];
        let output = pimhe(&args);
        assert!(output.status.success(), "{scheme}: {}", stderr(&output));
        let text = stdout(&output);
        assert!(text.contains("server on a100-nearbank"), "{text}");
        assert!(text.contains("w/o PIM") && text.contains("anaheim-nb@1 a100-nearbank B=16 (modeled)"), "{text}");
        assert!(text.contains("PAccum("), "key switching's KeyMult is a PAccum: {text}");
        assert!(text.lines().last().unwrap().starts_with("OK"), "{text}");
    }
}

#[test]
fn reproduce_anaheim_prints_fig9_beside_the_published_speedups() {
    let output = pimhe(&["bench", "reproduce", "anaheim", "--workload-n", "0", "--json"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let report: Value = serde_json::from_str(stdout(&output).trim()).unwrap();
    let compared: Vec<&Value> =
        report["micro"].as_array().unwrap().iter().filter(|r| !r["published_speedup"].is_null()).collect();
    assert_eq!(compared.len(), 6);
    for row in compared {
        // The target: within 20% of the speedups the paper states.
        let ratio = row["ratio"].as_f64().unwrap();
        assert!((0.8..=1.2).contains(&ratio), "{row}");
    }
    assert!(report["workloads"].as_array().unwrap().is_empty());
}

#[test]
fn near_bank_flags_are_refused_where_they_do_not_apply() {
    for (args, expected) in [
        (&["demo", "--backend", "cpu", "--system", "a100-nearbank"][..], "--system applies to --backend nearbank only"),
        (
            &[
                "bench",
                "ntt",
                "--n",
                "1024",
                "--primes",
                "1",
                "--batch",
                "2",
                "--backend",
                "nearbank",
                "--system",
                "tpu",
            ],
            "rtx4090-nearbank",
        ),
        (&["bench", "reproduce", "anaheim", "--workload-n", "1000"], "--workload-n 1000 is not allowed"),
    ] {
        assert_refused(args, &[expected]);
    }
}
