//! End-to-end checks of `pimhe bench` through the built binary.

mod common;

use common::{pimhe, stderr};

#[test]
fn json_report_of_a_small_ntt() {
    let output = pimhe(&["bench", "ntt", "--n", "1024", "--primes", "2", "--batch", "4", "--json"]);
    assert!(output.status.success(), "stderr: {}", stderr(&output));
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert_eq!(stdout.lines().count(), 1, "one JSON object, on one line: {stdout}");
    let report: serde_json::Value = serde_json::from_str(stdout.trim()).expect("valid JSON");
    let object = report.as_object().expect("a JSON object");

    assert_eq!(report["op"], "ntt");
    assert_eq!(report["backend"], "cpu");
    assert_eq!(report["n"], 1024);
    assert_eq!(report["primes"], 2);
    assert_eq!(report["prime_bits"], 30);
    assert_eq!(report["batch"], 4);
    assert_eq!(report["repeats"], 3);
    assert_eq!(report["seed"], 1);
    assert!(report["threads"].as_u64().unwrap() >= 1);
    for field in ["wall_s", "mean_s", "coefficients_per_s"] {
        assert!(object.contains_key(field), "missing {field}");
    }

    let wall = report["wall_s"].as_f64().unwrap();
    let mean = report["mean_s"].as_f64().unwrap();
    assert!(wall > 0.0 && wall <= mean, "wall {wall} mean {mean}");
    // 4 ciphertexts = 8 polynomials of 1024 residues over 2 primes.
    let rate = report["coefficients_per_s"].as_f64().unwrap();
    let expected = (8 * 1024 * 2) as f64 / wall;
    assert!((rate - expected).abs() <= 1e-9 * expected, "rate {rate}, expected {expected}");

    let moduli = report["moduli"].as_array().unwrap();
    assert_eq!(moduli.len(), 2);
    for q in moduli {
        let q = q.as_u64().unwrap();
        assert!(q % 2048 == 1 && q < 1 << 30 && q > 1 << 29, "{q}");
    }
}

#[test]
fn human_report_is_one_line() {
    let output = pimhe(&["bench", "bgv-mul", "--n", "16", "--primes", "1", "--batch", "2", "--threads", "1"]);
    assert!(output.status.success(), "stderr: {}", stderr(&output));
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert_eq!(stdout.lines().count(), 1);
    assert!(stdout.starts_with("bgv-mul  backend=cpu n=16 primes=1x30b batch=2 threads=1  wall="), "{stdout}");
    assert!(stdout.contains("products/s"), "{stdout}");
}

#[test]
fn bgv_mul_refuses_an_odd_batch() {
    let output = pimhe(&["bench", "bgv-mul", "--n", "1024", "--primes", "2", "--batch", "3"]);
    assert!(!output.status.success());
    assert_eq!(output.status.code(), Some(2));
    let message = stderr(&output);
    assert!(message.contains("--batch 3") && message.contains("even"), "{message}");
    assert!(output.stdout.is_empty());
}

#[test]
fn unknown_backend_is_refused() {
    let output = pimhe(&["bench", "ntt", "--n", "1024", "--primes", "2", "--batch", "4", "--backend", "nope"]);
    assert!(!output.status.success());
    assert_eq!(output.status.code(), Some(2));
    let message = stderr(&output);
    assert!(message.contains("--backend nope is not allowed: choose cpu, upmem-emu or nearbank"), "{message}");
}

#[test]
fn invalid_flags_are_refused_with_their_name() {
    let cases: &[(&[&str], &str)] = &[
        (&["bench", "ntt", "--n", "1000", "--primes", "1", "--batch", "1"], "--n 1000"),
        (&["bench", "ntt", "--n", "8", "--primes", "1", "--batch", "1"], "--n 8"),
        (&["bench", "ntt", "--n", "16", "--primes", "0", "--batch", "1"], "--primes 0"),
        (&["bench", "ntt", "--n", "16", "--primes", "1", "--batch", "0"], "--batch 0"),
        (&["bench", "ntt", "--n", "16", "--primes", "1", "--batch", "1", "--prime-bits", "31"], "--prime-bits 31"),
        (&["bench", "ntt", "--n", "16", "--primes", "1", "--batch", "1", "--threads", "0"], "--threads 0"),
        (&["bench", "ntt", "--n", "16", "--primes", "1", "--batch", "1", "--repeat", "0"], "--repeat 0"),
        (&["bench", "ntt", "--n", "4096", "--primes", "1000", "--prime-bits", "20", "--batch", "1"], "--primes 1000"),
        (&["bench", "pipeline", "--n", "16", "--primes", "1", "--batch", "1"], "--batch 1"),
        // About 2^17 x 2^17 x 2 x 4 bytes = 128 TiB: refused by the memory guard.
        (&["bench", "ntt", "--n", "131072", "--primes", "1", "--batch", "131072"], "available memory"),
    ];
    for (args, needle) in cases {
        let output = pimhe(args);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        let message = stderr(&output);
        assert!(message.contains(needle), "{args:?}: {message}");
    }
}

#[test]
fn unknown_operation_is_a_usage_error() {
    let output = pimhe(&["bench", "fft", "--n", "16", "--primes", "1", "--batch", "1"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("bgv-mul"), "{}", stderr(&output));
}

#[test]
fn bench_scheme_json_has_every_field() {
    let output =
        pimhe(&["bench", "scheme", "--n", "4096", "--batch", "1", "--repeat", "1", "--threads", "1", "--json"]);
    assert!(output.status.success(), "stderr: {}", stderr(&output));
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert_eq!(stdout.lines().count(), 1, "one JSON object, on one line: {stdout}");
    let report: serde_json::Value = serde_json::from_str(stdout.trim()).expect("valid JSON");
    assert_eq!(report["scheme"], "bgv");
    assert_eq!(report["backend"], "cpu");
    assert_eq!(report["n"], 4096);
    assert_eq!(report["batch"], 1);
    assert_eq!(report["threads"], 1);
    assert_eq!(report["repeats"], 1);
    assert_eq!(report["seed"], 1);
    assert_eq!(report["checked"], true);
    let params = &report["params"];
    for field in
        ["n", "plain_modulus", "data_primes", "data_prime_bits", "special_primes", "special_prime_bits", "dnum"]
    {
        assert!(!params[field].is_null(), "missing params.{field}: {params}");
    }
    // The preset of `pimhe params`: three data primes and a special prime of 27 bits, t = 65537.
    assert_eq!(params["plain_modulus"], 65537);
    assert_eq!(params["log_q_ciphertext"], 81);
    assert_eq!(params["log_q_total"], 108);
    for q in params["data_primes"].as_array().unwrap().iter().chain(params["special_primes"].as_array().unwrap()) {
        let q = q.as_u64().unwrap();
        assert!(q % 8192 == 1 && (1 << 26..1 << 27).contains(&q), "{q}");
    }
    let ops = report["ops"].as_array().unwrap();
    let names: Vec<&str> = ops.iter().map(|o| o["op"].as_str().unwrap()).collect();
    assert_eq!(names, ["encrypt", "decrypt", "multiply", "relinearize", "multiply_relin", "mod_switch", "intt", "ntt"]);
    for op in ops {
        for field in ["best_s", "median_s", "best_per_ciphertext_s", "median_per_ciphertext_s"] {
            assert!(op[field].as_f64().is_some_and(|s| s > 0.0), "{field} of {op}");
        }
        assert_eq!(op["times_s"].as_array().unwrap().len(), 1, "{op}");
    }
}

#[test]
fn bench_scheme_bad_n_lists_the_allowed_values() {
    let output = pimhe(&["bench", "scheme", "--n", "3000"]);
    assert_eq!(output.status.code(), Some(2));
    let message = stderr(&output);
    assert!(message.contains("--n 3000 is not allowed: choose one of 4096, 8192, 16384, 32768"), "{message}");
}

#[test]
fn bench_scheme_bfv_has_bgv_rows_but_mod_switch_and_no_upmem_backend() {
    let bfv = pimhe(&[
        "bench",
        "scheme",
        "--scheme",
        "bfv",
        "--n",
        "4096",
        "--batch",
        "1",
        "--repeat",
        "1",
        "--threads",
        "1",
        "--json",
    ]);
    assert!(bfv.status.success(), "stderr: {}", stderr(&bfv));
    let report: serde_json::Value = serde_json::from_slice(&bfv.stdout).expect("valid JSON");
    assert_eq!(report["scheme"], "bfv");
    assert_eq!(report["checked"], true);
    assert_eq!(report["params"]["log_q_ciphertext"], 81);
    let names: Vec<&str> = report["ops"].as_array().unwrap().iter().map(|o| o["op"].as_str().unwrap()).collect();
    assert_eq!(names, ["encrypt", "decrypt", "multiply", "relinearize", "multiply_relin", "intt", "ntt"]);
    let upmem = pimhe(&["bench", "scheme", "--scheme", "bfv", "--n", "4096", "--backend", "upmem-emu"]);
    assert_eq!(upmem.status.code(), Some(2));
    assert!(
        stderr(&upmem).contains("--backend upmem-emu is not allowed: choose cpu or nearbank"),
        "{}",
        stderr(&upmem)
    );
}

/// `bench bfv-mul|bfv-add` on both backends: the common report fields, the preset's primes, the
/// result checked, and on upmem-emu the modeled breakdown with its label and the CPU fallbacks
/// of BEHZ's base conversions (a product has some, a sum none).
#[test]
fn bench_bfv_ops_report_checked_results_on_both_backends() {
    for op in ["bfv-mul", "bfv-add"] {
        for backend in ["cpu", "upmem-emu"] {
            let output = pimhe(&["bench", op, "--n", "4096", "--batch", "2", "--backend", backend, "--json"]);
            assert!(output.status.success(), "{op} {backend}: {}", stderr(&output));
            let report: serde_json::Value = serde_json::from_slice(&output.stdout).expect("valid JSON");
            assert_eq!(report["op"], op);
            assert_eq!(report["backend"], backend);
            assert_eq!(report["n"], 4096);
            assert_eq!(report["batch"], 2);
            assert_eq!(report["checked"], true);
            assert_eq!(report["primes"], 3, "the preset's ciphertext primes: {report}");
            assert!(report["wall_s"].as_f64().is_some_and(|s| s > 0.0), "{report}");
            let computation = report["computation"].as_str().unwrap();
            assert_eq!(computation.contains("BEHZ") && computation.contains("relinearize"), op == "bfv-mul");
            if backend == "upmem-emu" {
                assert!(report["model"].as_str().unwrap().contains("(modeled)"), "{report}");
                let parts: f64 =
                    ["transfer_s", "compute_s", "retrieve_s"].iter().map(|f| report[f].as_f64().unwrap()).sum();
                assert!(parts > 0.0 && (parts - report["total_s"].as_f64().unwrap()).abs() < 1e-9, "{report}");
                let fallbacks = report["fallbacks"].as_u64().unwrap();
                assert_eq!(fallbacks > 0, op == "bfv-mul", "{report}");
            }
        }
    }
}

#[test]
fn bench_bfv_ops_refuse_what_does_not_apply() {
    let cases: [(&[&str], &str); 5] = [
        (&["bench", "bfv-mul", "--n", "4096", "--batch", "3"], "--batch 3 is not allowed for bfv-mul"),
        (
            &["bench", "bfv-mul", "--n", "2048", "--batch", "2"],
            "--n 2048 is not allowed for bfv-mul: choose one of 4096",
        ),
        (
            &["bench", "bgv-mul-relin", "--n", "2048", "--batch", "2"],
            "--n 2048 is not allowed for bgv-mul-relin: choose one of 4096",
        ),
        (&["bench", "bfv-add", "--n", "4096", "--batch", "2", "--primes", "3"], "--primes does not apply to bfv-add"),
        (
            // The representative system of --emulate subset has one DPU per prime, in parallel.
            &[
                "bench",
                "bfv-add",
                "--n",
                "4096",
                "--batch",
                "2",
                "--backend",
                "upmem-emu",
                "--mode",
                "sequential",
                "--emulate",
                "subset",
            ],
            "--emulate subset is not allowed for bfv-add with --mode sequential",
        ),
    ];
    for (args, message) in cases {
        let output = pimhe(args);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert!(stderr(&output).contains(message), "{args:?}: {}", stderr(&output));
    }
    // The kernel operations still need --primes.
    let output = pimhe(&["bench", "ntt", "--n", "16", "--batch", "1"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("--primes"), "{}", stderr(&output));
}

#[test]
fn repeat_is_refused_where_the_backend_runs_once() {
    // upmem-emu emulates one run and nearbank models one: a repeat count there did nothing.
    for (op, backend) in [("ntt", "upmem-emu"), ("ntt", "nearbank"), ("bfv-add", "upmem-emu"), ("bfv-add", "nearbank")]
    {
        let mut args = vec!["bench", op, "--n", "4096", "--batch", "2", "--backend", backend, "--repeat", "2"];
        if op == "ntt" {
            args.extend(["--primes", "1"]);
        }
        let output = pimhe(&args);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {}", stderr(&output));
        let expected = format!("error: --repeat applies to --backend cpu only (this run uses --backend {backend})\n");
        assert_eq!(stderr(&output), expected, "{args:?}");
    }
    // An unknown backend is named as such, whatever else is given.
    let output =
        pimhe(&["bench", "ntt", "--n", "16", "--primes", "1", "--batch", "1", "--backend", "gpu", "--repeat", "2"]);
    assert!(stderr(&output).contains("--backend gpu is not allowed"), "{}", stderr(&output));
}

#[test]
fn bandwidth_reports_the_three_kernels_and_refuses_a_bad_size() {
    let output = pimhe(&["bench", "bandwidth", "--mib", "8", "--repeat", "2", "--threads", "1", "--json"]);
    assert!(output.status.success(), "stderr: {}", stderr(&output));
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).expect("one JSON object");
    let kernels: Vec<&str> =
        report["kernels"].as_array().unwrap().iter().map(|k| k["kernel"].as_str().unwrap()).collect();
    assert_eq!(kernels, ["copy", "add", "triad"]);
    // Copy moves two arrays of 8 MiB, add and triad three.
    let bytes: Vec<u64> =
        report["kernels"].as_array().unwrap().iter().map(|k| k["bytes_per_pass"].as_u64().unwrap()).collect();
    assert_eq!(bytes, [2 * 8 << 20, 3 * 8 << 20, 3 * 8 << 20]);
    assert_eq!((report["threads"].as_u64(), report["array_mib"].as_u64()), (Some(1), Some(8)));
    let refused = pimhe(&["bench", "bandwidth", "--mib", "0"]);
    assert_eq!(refused.status.code(), Some(2));
    assert_eq!(stderr(&refused).trim(), "error: --mib 0 is not allowed: 1..=16384");
}

#[test]
fn bootstrap_restores_the_slots_says_the_preset_is_insecure_and_refuses_what_it_cannot_run() {
    let output = pimhe(&["bench", "bootstrap", "--n", "1024", "--json"]);
    assert!(output.status.success(), "stderr: {}", stderr(&output));
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).expect("one JSON object");
    assert_eq!((report["n"].as_u64(), report["slots"].as_u64()), (Some(1024), Some(512)));
    assert_eq!(report["insecure"], true);
    // The decrypted output against the input: the bootstrapping's precision, far above noise.
    assert!(report["precision"]["min_bits"].as_f64().unwrap() > 15.0, "{report}");
    assert!(report["level_after"].as_u64() > report["level_before"].as_u64());
    assert!(report["rescalings_left"].as_u64().unwrap() >= 1);
    // One Galois key per rotation step of the transforms, and one for the conjugation.
    assert_eq!(report["galois_keys"].as_u64(), report["rotations"].as_u64().map(|r| r + 1));
    // Sparse packing: 64 slots, the trace's rotations among the keys, the same precision.
    let sparse = pimhe(&["bench", "bootstrap", "--n", "1024", "--slots", "64", "--json"]);
    let sparse: serde_json::Value = serde_json::from_slice(&sparse.stdout).expect("one JSON object");
    assert_eq!(sparse["slots"].as_u64(), Some(64));
    assert!(sparse["precision"]["min_bits"].as_f64().unwrap() > 15.0, "{sparse}");
    let text = pimhe(&["bench", "bootstrap", "--n", "1024"]);
    assert!(String::from_utf8_lossy(&text.stdout).lines().next().unwrap().contains("INSECURE test preset"));
    for (args, message) in [
        (vec!["--n", "32768"], "--n 32768 is not allowed"),
        (vec!["--n", "1024", "--slots", "48"], "--slots 48 is not allowed: a power of two from 1 to N/2 = 512"),
        // One DPU per prime: the default rank of 64 DPUs is too few for the preset's 68 primes
        // (`--mode auto` would take the one placement left, ciphertext-major, on one DPU).
        (
            vec!["--n", "1024", "--backend", "upmem-emu", "--mode", "parallel"],
            "--dpus 64 is too few for --mode parallel with 68 primes",
        ),
    ] {
        let refused = pimhe(&[&["bench", "bootstrap"][..], &args].concat());
        assert_eq!(refused.status.code(), Some(2), "{args:?}");
        assert!(stderr(&refused).contains(message), "{args:?}: {}", stderr(&refused));
    }
}

/// `bench scheme --scheme bfv-special --case A|B`: the CE-RAM paper's case at N = 2^14 timed
/// with every result checked, and each flag it cannot take refused with what is allowed.
#[test]
fn bench_scheme_bfv_special_times_a_case_and_refuses_what_it_cannot_take() {
    let output = pimhe(&[
        "bench",
        "scheme",
        "--scheme",
        "bfv-special",
        "--case",
        "B",
        "--repeat",
        "1",
        "--threads",
        "1",
        "--json",
    ]);
    assert!(output.status.success(), "stderr: {}", stderr(&output));
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).expect("valid JSON");
    assert_eq!(
        (&report["scheme"], &report["case"], &report["checked"]),
        (&"bfv-special".into(), &"B".into(), &true.into())
    );
    assert_eq!((&report["n"], &report["batch"], &report["threads"]), (&16384.into(), &1.into(), &1.into()));
    assert_eq!(report["params"]["moduli"], serde_json::json!(["2^146 - 1", "2^146", "2^146 + 1"]));
    assert_eq!((&report["params"]["log_q"], &report["params"]["optimized"]), (&438.into(), &true.into()));
    let names: Vec<&str> = report["ops"].as_array().unwrap().iter().map(|o| o["op"].as_str().unwrap()).collect();
    assert_eq!(names, ["encrypt", "decrypt", "add", "sub", "multiply_relin"]);
    let refused: [(&[&str], &str); 6] = [
        (&["--case", "D"], "--case D is not known; choose A or B"),
        (&["--case", "C"], "--case C is not allowed: its q = 2^440 - 1 is above the 438 bits"),
        (&[], "--scheme bfv-special needs --case: A or B"),
        (&["--case", "A", "--batch", "4"], "--batch 4 is not allowed with --scheme bfv-special"),
        (&["--case", "A", "--n", "8192"], "--n 8192 is not allowed with --scheme bfv-special"),
        (&["--case", "A", "--backend", "nearbank"], "--scheme bfv-special runs on --backend cpu only"),
    ];
    for (flags, message) in refused {
        let output = pimhe(&[&["bench", "scheme", "--scheme", "bfv-special"][..], flags].concat());
        assert_eq!(output.status.code(), Some(2), "{flags:?}");
        assert!(stderr(&output).contains(message), "{flags:?}: {}", stderr(&output));
    }
    let bgv = pimhe(&["bench", "scheme", "--n", "4096", "--case", "A"]);
    assert_eq!(bgv.status.code(), Some(2));
    assert!(stderr(&bgv).contains("--case applies to bfv-special only"), "{}", stderr(&bgv));
}
