//! The limits every command shares, through the binary: runs too large for this machine, thread
//! counts and presets that cannot do the work are refused up front with exit status 2 and a
//! message saying what is allowed (never a panic, an abort or a failure after the work), and
//! runs whose keys come from `--seed` say they are insecure.

mod common;

use std::process::Output;

use common::{pimhe, stderr};

/// Exit status 2, no panic, and `needle` in the message.
fn refused(output: &Output, needle: &str) {
    let message = stderr(output);
    assert_eq!(output.status.code(), Some(2), "{message}");
    assert!(message.starts_with("error: ") && message.contains(needle), "{message}");
    assert!(!message.contains("panicked"), "{message}");
}

#[test]
fn batches_and_user_counts_beyond_memory_are_refused_before_allocating() {
    let runs: [&[&str]; 4] = [
        &["demo", "--n", "1024", "--batch", "18446744073709551615", "--backend", "cpu"],
        &["demo", "--n", "8192", "--batch", "100000000", "--backend", "cpu"],
        &["stats", "mean", "--users", "18446744073709551615", "--synthetic", "1", "--columns", "x1"],
        &["stats", "mean", "--users", "1000000000000", "--synthetic", "1", "--columns", "x1"],
    ];
    for args in runs {
        let output = pimhe(args);
        refused(&output, "of available memory");
        assert!(output.stdout.is_empty() || !String::from_utf8_lossy(&output.stdout).contains("OK"), "{args:?}");
    }
}

#[test]
fn stats_checks_every_flag_before_reading_or_generating_the_data() {
    // Data that would be refused for its size (or take long to generate) is not looked at
    // before a bad flag is reported.
    let users = ["stats", "mean", "--users", "1000000000000", "--synthetic", "1", "--columns", "x1"];
    for (flags, needle) in [
        (&["--backend", "upmem-emu", "--dpus", "2561"][..], "--dpus 2561 is not allowed"),
        (&["--backend", "gpu"][..], "--backend gpu is not allowed: choose cpu, upmem-emu or nearbank"),
        (&["--n", "1000"][..], "--n 1000"),
    ] {
        let args: Vec<&str> = users.iter().chain(flags).copied().collect();
        refused(&pimhe(&args), needle);
    }
}

#[test]
fn an_address_space_limit_counts_as_the_memory_there_is() {
    // 10^8 users of two columns take about 5.6 GB: within the machine's memory maybe, but not
    // within a 4 GiB `ulimit -v`, where allocating them would abort.
    let limited = std::process::Command::new("sh")
        .args(["-c", "ulimit -v 4194304 && exec \"$0\" \"$@\"", env!("CARGO_BIN_EXE_pimhe")])
        .args(["stats", "mean", "--users", "100000000", "--synthetic", "1", "--columns", "x1,x2", "--n", "4096"])
        .output()
        .expect("sh runs");
    refused(&limited, "of available memory");
}

#[test]
fn a_preset_without_budget_for_the_demo_is_refused_before_the_batch_runs() {
    let output = pimhe(&["demo", "--n", "1024", "--backend", "cpu"]);
    refused(&output, "leaves no noise budget after one multiplication; use a ring degree of 2048 or more");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(!stdout.contains("encode + encrypt"), "{stdout}");
    let smallest = pimhe(&["demo", "--n", "2048", "--batch", "1", "--backend", "cpu"]);
    assert!(smallest.status.success(), "{}", stderr(&smallest));
    // A valid parameter set too small for the benchmarked product: refused, not a failure.
    let few_digits = ["bench", "scheme", "--n", "4096", "--batch", "1", "--repeat", "1", "--dnum", "1"];
    refused(&pimhe(&few_digits), "leave no noise budget for the benchmarked product");
}

#[test]
fn thread_counts_are_checked_alike_by_every_command() {
    let commands: [&[&str]; 3] = [
        &["demo", "--n", "2048", "--batch", "1", "--backend", "cpu"],
        &["stats", "mean", "--users", "3", "--synthetic", "1", "--columns", "x1", "--n", "4096"],
        &["bench", "ntt", "--n", "16", "--primes", "1", "--batch", "1"],
    ];
    for command in commands {
        for (threads, needle) in [("0", "at least 1 thread"), ("100000", "at most 1024")] {
            let args: Vec<&str> = command.iter().copied().chain(["--threads", threads]).collect();
            refused(&pimhe(&args), needle);
        }
    }
}

#[test]
fn keys_from_a_seed_are_labelled_insecure() {
    let stats = ["stats", "mean", "--users", "3", "--synthetic", "1", "--columns", "x1", "--n", "4096"];
    let seeded: Vec<&str> = stats.iter().copied().chain(["--seed", "7"]).collect();
    let text = pimhe(&seeded);
    assert!(text.status.success(), "{}", stderr(&text));
    assert!(String::from_utf8_lossy(&text.stdout).contains("insecure: keys from a fixed seed"));
    let json_args: Vec<&str> = seeded.iter().copied().chain(["--json"]).collect();
    let json: serde_json::Value = serde_json::from_slice(&pimhe(&json_args).stdout).unwrap();
    assert_eq!(json["warnings"][0], "insecure: keys from a fixed seed", "{json}");
    let unseeded: Vec<&str> = stats.iter().copied().chain(["--json"]).collect();
    let json: serde_json::Value = serde_json::from_slice(&pimhe(&unseeded).stdout).unwrap();
    assert!(json.get("warnings").is_none(), "{json}");

    let bench = pimhe(&["bench", "bfv-add", "--n", "4096", "--batch", "2", "--backend", "cpu", "--json"]);
    assert!(bench.status.success(), "{}", stderr(&bench));
    let json: serde_json::Value = serde_json::from_slice(&bench.stdout).unwrap();
    assert_eq!(json["keys"], "insecure: keys from a fixed seed", "{json}");
}

#[test]
fn repeat_counts_beyond_the_maximum_are_refused_before_allocating() {
    // 2^32 timings were 32 GiB allocated up front: an abort.
    let runs: [&[&str]; 3] = [
        &["bench", "ntt", "--n", "16", "--primes", "1", "--batch", "1"],
        &["bench", "bfv-add", "--n", "4096", "--batch", "2"],
        &["bench", "scheme", "--n", "4096", "--batch", "1"],
    ];
    for command in runs {
        let args: Vec<&str> = command.iter().copied().chain(["--repeat", "4294967296"]).collect();
        let output = pimhe(&args);
        refused(&output, "--repeat 4294967296 is not allowed: at most 100000");
        assert!(stderr(&output).contains("(allowed 1..=100000)"), "{args:?}");
    }
    // The maximum itself is allowed (a run of tiny NTTs).
    let args = ["bench", "ntt", "--n", "16", "--primes", "1", "--batch", "1", "--repeat", "100000", "--json"];
    let output = pimhe(&args);
    assert!(output.status.success(), "{}", stderr(&output));
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["repeats"], 100_000);
}

#[test]
fn a_short_csv_of_wide_rows_is_charged_for_its_rows_only() {
    // Two rows of 8,192 columns: the memory check charged them as 65,536 rows, 8 GiB, and
    // refused them within a 3 GiB `ulimit -v`; they take a few MB.
    let dir = std::env::temp_dir().join(format!("pimhe-wide-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("wide.csv");
    let names: Vec<String> = (0..8192).map(|i| format!("c{i}")).collect();
    let row = |cell: &str| vec![cell; 8192].join(",");
    std::fs::write(&path, format!("{}\n{}\n{}\n", names.join(","), row("1.5"), row("-2"))).unwrap();
    let limited = std::process::Command::new("sh")
        .args(["-c", "ulimit -v 3145728 && exec \"$0\" \"$@\"", env!("CARGO_BIN_EXE_pimhe")])
        .args(["stats", "mean", "--input", path.to_str().unwrap(), "--columns", &names.join(",")])
        .args(["--n", "16384", "--threads", "1", "--json"])
        .output()
        .expect("sh runs");
    assert!(limited.status.success(), "{}", stderr(&limited));
    let json: serde_json::Value = serde_json::from_slice(&limited.stdout).unwrap();
    assert_eq!(json["users"], 2);
    let estimates = json["estimates"].as_array().unwrap();
    assert_eq!(estimates.len(), 8192);
    assert!(estimates.iter().all(|e| e["encrypted"].as_f64() == Some(-0.25)), "{}", estimates[0]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_reader_that_goes_away_ends_the_command_quietly() {
    // `pimhe params | head -0`: the reader closes before the first line is written.
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_pimhe"))
        .args(["params", "--json"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the pimhe binary runs");
    drop(child.stdout.take());
    let output = child.wait_with_output().unwrap();
    let message = stderr(&output);
    assert!(!message.contains("panicked"), "{message}");
    assert_eq!(output.status.code(), Some(0), "{message}");
}
