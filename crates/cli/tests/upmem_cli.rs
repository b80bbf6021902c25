//! End-to-end checks of the `upmem-emu` backend through the built binary: `bench OP
//! --backend upmem-emu`, `bench reproduce dramatic` and `demo`.

mod common;

use std::path::PathBuf;
use std::process::{Command, Output};

use common::{assert_refused, pimhe, stderr};
use serde_json::Value;

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Runs and parses every stdout line as a JSON object.
fn json_lines(args: &[&str]) -> Vec<Value> {
    let output = pimhe(args);
    assert!(output.status.success(), "{args:?}: {}", stderr(&output));
    stdout(&output).lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"))).collect()
}

fn json(args: &[&str]) -> Value {
    let mut lines = json_lines(args);
    assert_eq!(lines.len(), 1, "one JSON object for {args:?}");
    lines.remove(0)
}

fn f(v: &Value, field: &str) -> f64 {
    v[field].as_f64().unwrap_or_else(|| panic!("{field} is not a number in {v}"))
}

fn upmem(op: &str, n: &str, primes: &str, batch: &str, extra: &[&str]) -> Value {
    let mut args =
        vec!["bench", op, "--n", n, "--primes", primes, "--batch", batch, "--backend", "upmem-emu", "--json"];
    args.extend_from_slice(extra);
    json(&args)
}

/// The calibration CSV, where the pim crate's reference loader looks for it.
fn reference_csv() -> PathBuf {
    std::env::var_os("PIMHE_DRAMATIC_CSV").map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../pim/../../../shared/reference/dramatic_calibration.csv")
    })
}

#[test]
fn upmem_json_report_has_the_modeled_fields() {
    let r = upmem("ntt", "1024", "2", "16", &["--dpus", "8"]);
    assert_eq!(r["op"], "ntt");
    assert_eq!(r["backend"], "upmem-emu");
    assert_eq!((r["n"].as_u64(), r["primes"].as_u64(), r["prime_bits"].as_u64()), (Some(1024), Some(2), Some(30)));
    assert_eq!((r["batch"].as_u64(), r["dpus"].as_u64()), (Some(16), Some(8)));
    assert_eq!((r["mode"].as_str(), r["kernel"].as_str()), (Some("parallel"), Some("best")));
    assert_eq!(r["emulation"], "full", "a small run is emulated in full under --emulate auto");
    let model = r["model"].as_str().unwrap();
    assert!(model.contains("modeled") && model.starts_with("upmem-v1b"), "{model}");
    for field in ["wall_s", "transfer_s", "compute_s", "retrieve_s", "total_s", "energy_j"] {
        assert!(f(&r, field) > 0.0, "{field} in {r}");
    }
    let sum = f(&r, "transfer_s") + f(&r, "compute_s") + f(&r, "retrieve_s");
    assert!((f(&r, "total_s") - sum).abs() <= 1e-12 * sum);
    // Whole-system power between idle (310 W) and a full 40-rank machine.
    let power = f(&r, "energy_j") / f(&r, "total_s");
    assert!((310.0..700.0).contains(&power), "{power} W");
    // 32 polynomials of N = 1024 on 4 DPUs per prime: 8 each, half a round of 16 tasklets.
    assert!(f(&r, "compute_s") < 1.0 && f(&r, "compute_s") > 1e-3, "{r}");
    assert_eq!(r["launches"], 1);
    assert_eq!(r["fallbacks"], 0);
    assert!(r["counted_instructions"].as_u64().unwrap() > 0);
    assert_eq!(r["bytes_to_dpus"].as_u64(), Some(32 * 1024 * 2 * 4));
    assert_eq!(r["bytes_from_dpus"].as_u64(), Some(32 * 1024 * 2 * 4));
    assert!(r["sources"]["compute_s"].as_str().unwrap().contains("emulated"));

    // Defaults: 64 DPUs, parallel, best.
    let d = upmem("intt", "256", "3", "4", &[]);
    assert_eq!(
        (d["dpus"].as_u64(), d["mode"].as_str(), d["kernel"].as_str()),
        (Some(64), Some("parallel"), Some("best"))
    );
}

#[test]
fn auto_placement_prices_every_mode_and_runs_the_cheapest() {
    // 7 DPUs for 4 primes: parallel mode's groups of one DPU leave three idle.
    for emulate in ["full", "subset"] {
        let auto = upmem("pipeline", "512", "4", "28", &["--dpus", "7", "--emulate", emulate]);
        let candidates = auto["plan"]["candidates"].as_array().unwrap();
        let names: Vec<&str> = candidates.iter().map(|c| c["mode"].as_str().unwrap()).collect();
        assert_eq!(names, ["parallel", "sequential", "hybrid", "ciphertext-major"], "{emulate}");
        for candidate in candidates {
            let mode = candidate["mode"].as_str().unwrap();
            let forced = upmem("pipeline", "512", "4", "28", &["--dpus", "7", "--emulate", emulate, "--mode", mode]);
            assert_eq!(f(candidate, "planned_s"), f(&forced, "total_s"), "{emulate}, {mode}: the forced run's total");
            assert!(f(&auto, "total_s") <= f(&forced, "total_s"), "{emulate}: auto dearer than {mode}");
        }
        assert_eq!(auto["mode"], auto["plan"]["chosen"], "{emulate}: the report is of the chosen placement");
        assert_ne!(auto["mode"], "parallel", "{emulate}: {auto}");
    }
    // Too few DPUs for a group per prime: auto runs a placement that fits, and says why.
    let auto = upmem("ntt", "1024", "3", "4", &["--dpus", "2"]);
    let refused: Vec<&str> = auto["plan"]["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["stopped"] == "refused")
        .map(|c| c["mode"].as_str().unwrap())
        .collect();
    assert_eq!(refused, ["parallel", "hybrid"], "{auto}");
}

#[test]
fn subset_and_full_emulation_agree() {
    for (op, batch, dpus, mode, kernel) in [
        ("ntt", "40", "6", "parallel", "best"),
        ("intt", "10", "3", "sequential", "barrett"),
        ("bgv-mul", "22", "4", "parallel", "barrett"),
        ("pipeline", "24", "5", "sequential", "best"),
        ("pipeline", "34", "7", "parallel", "barrett"),
    ] {
        let flags = |emulate| vec!["--dpus", dpus, "--mode", mode, "--kernel", kernel, "--emulate", emulate];
        let full = upmem(op, "512", "2", batch, &flags("full"));
        let subset = upmem(op, "512", "2", batch, &flags("subset"));
        let what = format!("{op} batch {batch} on {dpus} DPUs, {mode}, {kernel}");
        assert_eq!(full["emulation"], "full", "{what}");
        let emulation = subset["emulation"].as_str().unwrap();
        assert!(emulation.starts_with("subset: 1 emulated DPU per prime group of "), "{what}: {emulation}");
        assert!(emulation.contains("busiest share") && emulation.ends_with("extrapolated"), "{emulation}");
        let (a, b) = (f(&full, "compute_s"), f(&subset, "compute_s"));
        assert!((a - b).abs() <= 0.01 * a, "{what}: full {a} vs subset {b}");
        for field in ["transfer_s", "retrieve_s"] {
            let (a, b) = (f(&full, field), f(&subset, field));
            assert!((a - b).abs() <= 1e-9 * a, "{what}: {field} full {a} vs subset {b}");
        }
        assert_eq!(full["launches"], subset["launches"], "{what}");
        assert_eq!(full["bytes_to_dpus"], subset["bytes_to_dpus"], "{what}");
        assert!(f(&subset, "energy_j") > 0.0);
    }
}

#[test]
fn large_runs_are_modeled_from_a_subset() {
    // 2560 DPUs cannot be emulated in full here; auto picks the subset method.
    let r = upmem("pipeline", "4096", "3", "8192", &["--dpus", "2560", "--mode", "sequential"]);
    let emulation = r["emulation"].as_str().unwrap();
    assert!(emulation.starts_with("subset: 1 emulated DPU per prime group of 2560"), "{emulation}");
    assert_eq!(r["emulated_dpus"], 1);
    assert_eq!(r["busiest_share"], 2, "4096 polynomials per operand over 2560 DPUs");
    assert_eq!(r["launches"], 3, "sequential mode launches once per prime");
    assert!(r["sources"]["transfer_s"].as_str().unwrap().contains("model"));
    assert!(f(&r, "compute_s") > 0.0 && f(&r, "transfer_s") > 0.0);

    // The human report labels modeled figures and says how the numbers were obtained.
    let output = pimhe(&[
        "bench",
        "ntt",
        "--n",
        "2048",
        "--primes",
        "2",
        "--batch",
        "64",
        "--backend",
        "upmem-emu",
        "--dpus",
        "128",
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    assert!(text.starts_with("ntt  backend=upmem-emu n=2048 primes=2x30b batch=64 dpus=128 mode=parallel kernel=best"));
    assert!(text.contains("emulation: subset: 1 emulated DPU per prime group of 64"), "{text}");
    assert!(text.contains("(modeled, upmem-v1b@"), "{text}");
    assert!(text.contains("wall=") && text.contains("compute=") && text.contains("energy="), "{text}");
}

#[test]
fn bad_upmem_flags_exit_2_with_the_allowed_values() {
    let base = ["bench", "ntt", "--n", "1024", "--primes", "3", "--batch", "4"];
    for (extra, expected) in [
        (&["--backend", "nope"][..], &["backend nope", "cpu, upmem-emu"][..]),
        (
            &["--backend", "upmem-emu", "--mode", "diagonal"],
            &["--mode diagonal", "auto, parallel, sequential, ciphertext-major or hybrid"],
        ),
        (&["--backend", "upmem-emu", "--kernel", "montgomery"], &["--kernel montgomery", "barrett or best"]),
        (&["--backend", "upmem-emu", "--dpus", "0"], &["--dpus 0", "1..=2560"]),
        (&["--backend", "upmem-emu", "--dpus", "2561"], &["--dpus 2561", "1..=2560"]),
        (
            &["--backend", "upmem-emu", "--dpus", "2", "--mode", "parallel"],
            &["--dpus 2", "--mode parallel", "3..=2560", "sequential"],
        ),
        (&["--backend", "upmem-emu", "--emulate", "half"], &["--emulate half", "full, subset or auto"]),
        (&["--dpus", "8"], &["--dpus", "upmem-emu"]),
        (&["--backend", "upmem-emu", "--threads", "2"], &["--threads", "cpu"]),
    ] {
        assert_refused(&[&base[..], extra].concat(), expected);
    }
    // The DPU kernels take N up to 2^20, as the CPU does; above it both refuse.
    let output = pimhe(&["bench", "ntt", "--n", "2097152", "--primes", "1", "--batch", "1", "--backend", "upmem-emu"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("--n 2097152"), "{}", stderr(&output));
    let output = pimhe(&["bench", "reproduce", "dramatic", "--kernel", "fast"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("--kernel fast is not allowed: choose barrett or best"));
}

const ROWS: &str = "t2-ntt-64,t2-intt-4096,t3-ntt-1024,t3-bgv-mul-1024,t4-pipeline-8192,target";

#[test]
fn reproduce_dramatic_emits_rows_with_the_published_values() {
    let rows = json_lines(&["bench", "reproduce", "dramatic", "--json", "--rows", ROWS]);
    let ids: Vec<&str> = rows.iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["t2-ntt-64", "t2-intt-4096", "t3-ntt-1024", "t3-bgv-mul-1024", "t4-pipeline-8192", "target"]);
    let have_reference = reference_csv().exists();
    for row in &rows[..5] {
        assert_eq!(row["kernel"], "barrett", "reproduce defaults to DRAMatic's kernel");
        assert_eq!(row["backend"], "upmem-emu");
        assert!(row["model"].as_str().unwrap().contains("modeled"));
        assert!(row["emulation"].as_str().unwrap().starts_with("subset: "), "{row}");
        for field in ["compute_s", "transfer_s", "retrieve_s", "energy_j", "power_w"] {
            assert!(f(row, field) > 0.0, "{field} in {row}");
        }
        let published = !row["published_compute_s"].is_null();
        let in_csv = matches!(row["op"].as_str(), Some("ntt" | "intt"));
        assert_eq!(published, have_reference && in_csv, "{row}");
        if published {
            // The model-fidelity check: DRAMatic's kernel within 20% of its published compute.
            let ratio = f(row, "compute_ratio");
            assert!((0.8..=1.2).contains(&ratio), "{row}");
            assert!((f(row, "compute_s") / f(row, "published_compute_s") - ratio).abs() < 1e-12);
            assert!(row["published_transfer_s"].is_number() && row["published_power_w"].is_number());
        }
    }
    let t2 = &rows[0];
    assert_eq!((t2["n"].as_u64(), t2["primes"].as_u64(), t2["dpus"].as_u64()), (Some(2048), Some(2), Some(128)));
    assert_eq!(rows[4]["mode"], "parallel");
    assert_eq!((rows[4]["dpus"].as_u64(), rows[4]["ciphertexts"].as_u64()), (Some(383), Some(8192)));

    let target = &rows[5];
    assert_eq!(
        (target["op"].as_str(), target["n"].as_u64(), target["dpus"].as_u64()),
        (Some("pipeline"), Some(4096), Some(383))
    );
    assert_eq!(target["kernel"], "best");
    assert_eq!(f(target, "target_s"), 4.0);
    assert_eq!(target["met"].as_bool(), Some(f(target, "compute_s") <= 4.0));
    assert!(f(target, "barrett_compute_s") > f(target, "compute_s"), "the best kernel is faster: {target}");
    assert!(f(target, "ntt_best_over_barrett") < 1.0);

    // The best kernel beats DRAMatic's published compute.
    let best = json_lines(&["bench", "reproduce", "dramatic", "--json", "--kernel", "best", "--rows", "t3-ntt-1024"]);
    assert_eq!(best[0]["kernel"], "best");
    assert!(f(&best[0], "compute_s") < f(&rows[2], "compute_s"));
}

#[test]
fn reproduce_without_the_reference_prints_our_numbers() {
    let output = Command::new(env!("CARGO_BIN_EXE_pimhe"))
        .args(["bench", "reproduce", "dramatic", "--rows", "t2-ntt-1,t2-ntt-64"])
        .env("PIMHE_DRAMATIC_CSV", "/nonexistent/dramatic_calibration.csv")
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    assert!(text.contains("reference missing"), "{text}");
    assert!(text.contains("ntt") && text.contains("2048"), "{text}");
}

#[test]
fn rows_past_the_emulation_budget_are_emulated_in_rounds_and_say_so() {
    let args = |budget| {
        vec!["bench", "reproduce", "dramatic", "--json", "--rows", "t4-pipeline-8192", "--max-emulation-s", budget]
    };
    let exact = json(&args("60"));
    let partial = json(&args("0.000001"));
    assert!(!exact["emulation"].as_str().unwrap().contains("in part"));
    let emulation = partial["emulation"].as_str().unwrap();
    assert!(emulation.contains("busiest DPU emulated in part: 16 of its 33 sub-polynomials"), "{emulation}");
    assert!(emulation.contains("rounds of 16") && emulation.contains("partial round of 1 exactly"), "{emulation}");
    let (a, b) = (f(&exact, "compute_s"), f(&partial, "compute_s"));
    assert!((a - b).abs() <= 0.01 * a, "exact {a} vs scaled {b}");
}

#[test]
fn demo_on_the_emulated_upmem_backend_prints_ok() {
    let output = pimhe(&["demo", "--n", "4096", "--batch", "2", "--dpus", "8"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    assert!(text.contains("upmem-emu backend (8 emulated DPUs"), "{text}");
    for part in ["transfer", "compute", "retrieve", "energy", "modeled, upmem-v1b@", "launches", "fallbacks"] {
        assert!(text.contains(part), "missing {part}: {text}");
    }
    assert!(text.contains("server on cpu (same computation, measured)"), "{text}");
    assert!(text.lines().last().unwrap().starts_with("OK: all 2 x 4096 slot products match"), "{text}");

    // The default (what the README's first command runs): N = 8192, 8 pairs, 64 DPUs, the
    // placement the planner prices cheapest, with every candidate's price printed.
    let output = pimhe(&["demo"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    assert!(text.contains("upmem-emu backend (64 emulated DPUs, placement chosen by modeled cost"), "{text}");
    let plan = text.lines().find(|l| l.contains("placement auto: ")).expect("the plan is printed");
    for mode in ["parallel", "hybrid", "ciphertext-major"] {
        assert!(plan.contains(&format!("{mode} ")), "{mode} is priced: {plan}");
    }
    assert!(text.lines().last().unwrap().starts_with("OK: all 8 x 8192 slot products match"), "{text}");
    // Hybrid mode runs the conversions on the DPUs too: no CPU fallback.
    let output = pimhe(&["demo", "--n", "4096", "--batch", "2", "--dpus", "8", "--mode", "hybrid"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    assert!(text.contains("hybrid, best kernel") && text.contains(", fallbacks 0\n"), "{text}");
    assert!(text.lines().last().unwrap().starts_with("OK: all 2 x 4096 slot products match"), "{text}");
    // Limb-major parallel mode sends base conversion, ModDown and the modulus switch to the CPU.
    let output = pimhe(&["demo", "--n", "4096", "--batch", "2", "--dpus", "8", "--mode", "parallel"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    assert!(text.contains("parallel, best kernel") && !text.contains(", fallbacks 0\n"), "{text}");
    assert!(text.lines().last().unwrap().starts_with("OK: all 2 x 4096 slot products match"), "{text}");

    let output = pimhe(&["demo", "--n", "2048", "--batch", "1", "--backend", "cpu"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(stdout(&output).contains("OK: all 1 x 2048"));
    for (args, expected) in [
        (&["demo", "--backend", "fpga"][..], "--backend fpga is not allowed: choose upmem-emu, cpu or nearbank"),
        (&["demo", "--backend", "cpu", "--dpus", "4"], "--dpus applies to --backend upmem-emu only"),
        (&["demo", "--dpus", "3", "--mode", "parallel"], "--dpus 3 is not allowed"),
        (&["demo", "--mode", "diagonal"], "--mode diagonal is not allowed"),
        (&["demo", "--backend", "cpu", "--mode", "parallel"], "--mode applies to --backend upmem-emu only"),
    ] {
        let output = pimhe(args);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert!(stderr(&output).contains(expected), "{args:?}: {}", stderr(&output));
    }
}

#[test]
fn what_if_flags_change_the_model_and_are_refused_elsewhere() {
    let plain = upmem("ntt", "1024", "2", "4", &["--dpus", "2"]);
    let what_if =
        upmem("ntt", "1024", "2", "4", &["--dpus", "2", "--what-if", "mul-cycles=2", "--what-if", "zero-copy"]);
    assert_eq!(what_if["model"], "upmem-v1b@2+mul=2/4+zero-copy (modeled)");
    assert_eq!(what_if["what_if"], "mul-cycles=2/4,zero-copy");
    assert!(f(&what_if, "compute_s") < f(&plain, "compute_s"), "{what_if} vs {plain}");
    assert_eq!((f(&what_if, "transfer_s"), f(&what_if, "retrieve_s")), (0.0, 0.0));
    let comma = upmem("ntt", "1024", "2", "4", &["--dpus", "2", "--what-if", "zero-copy,mul-cycles=2/4"]);
    assert_eq!(comma["model"], what_if["model"]);
    // The best kernel's text says what the multiplier what-if cannot re-cost.
    let output = pimhe(&[
        "bench",
        "ntt",
        "--n",
        "2048",
        "--primes",
        "1",
        "--batch",
        "2",
        "--backend",
        "upmem-emu",
        "--dpus",
        "1",
        "--what-if",
        "mul-cycles=1",
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    assert!(text.contains("(modeled, upmem-v1b@2+mul=1/2)") && text.contains("what-if caveat: "), "{text}");

    for (args, expected) in [
        (
            ntt(&["--what-if", "zero-copy"]),
            "--what-if applies to --backend upmem-emu only (this run uses --backend cpu)",
        ),
        (ntt(&["--backend", "upmem-emu", "--what-if", "mul-cycles=0"]), "--what-if mul-cycles=0 is not allowed"),
        (ntt(&["--backend", "upmem-emu", "--what-if", "fast"]), "choose mul-cycles=N"),
        (vec!["demo", "--backend", "cpu", "--what-if", "zero-copy"], "--what-if applies to --backend upmem-emu only"),
    ] {
        assert_refused(&args, &[expected]);
    }
}

#[test]
fn reproduce_dramatic_has_the_section5_rows() {
    let rows = json_lines(&["bench", "reproduce", "dramatic", "--json", "--rows", "s5-ntt", "--max-emulation-s", "2"]);
    let ids: Vec<&str> = rows.iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["s5-ntt-4096-base", "s5-ntt-4096-dummy", "s5-ntt-4096-1cycle"]);
    assert_eq!(rows[0]["dpus"], 509);
    assert_eq!(rows[1]["model"], "upmem-v1b@2+mul=4/6 (modeled)");
    assert_eq!(rows[2]["model"], "upmem-v1b@2+mul=1/1 (modeled)");
    assert!(f(&rows[2], "compute_s") < f(&rows[1], "compute_s") && f(&rows[1], "compute_s") < f(&rows[0], "compute_s"));
    assert_eq!(rows[1]["claims"][0]["published"], 2.7);
    assert_eq!(rows[2]["claims"][0]["published"], 1.8);
}

#[test]
fn ciphertext_major_mode_relinearizes_on_the_dpus_without_fallback() {
    // BGV multiply + relinearize of real ciphertexts at N = 4096, the batch not a multiple of the
    // DPU count; the result is decrypted and checked by the command itself.
    let relin = |dpus: &str, extra: &[&str]| {
        let mut args = vec!["bench", "bgv-mul-relin", "--n", "4096", "--batch", "10", "--backend", "upmem-emu"];
        args.extend(["--dpus", dpus, "--json"]);
        args.extend(extra);
        json(&args)
    };
    for emulate in ["full", "subset"] {
        let r = relin("3", &["--mode", "ciphertext-major", "--emulate", emulate]);
        assert_eq!(r["fallbacks"], 0, "{emulate}: {r}");
        assert_eq!(r["mode"], "ciphertext-major", "{r}");
    }
    let parallel = relin("7", &[]);
    assert!(parallel["fallbacks"].as_u64().unwrap() > 0, "limb-major: base conversion on the CPU: {parallel}");
}

#[test]
fn model_flag_picks_the_version_and_is_refused_elsewhere() {
    let v1 = upmem("ntt", "1024", "2", "4", &["--dpus", "2", "--model", "upmem-v1b@1"]);
    let v2 = upmem("ntt", "1024", "2", "4", &["--dpus", "2", "--model", "upmem-v1b@2"]);
    assert_eq!(v1["model"], "upmem-v1b@1 (modeled)");
    assert_eq!(v2["model"], "upmem-v1b@2 (modeled)");
    assert_eq!(upmem("ntt", "1024", "2", "4", &["--dpus", "2"])["model"], v2["model"], "@2 is the default");
    // Barrier intervals only add up what the totals let overlap.
    assert!(f(&v2, "compute_s") >= f(&v1, "compute_s"), "{v2} vs {v1}");
    for (args, expected) in [
        (ntt(&["--model", "upmem-v1b@2"]), "--model applies to --backend upmem-emu only (this run uses --backend cpu)"),
        (
            ntt(&["--backend", "upmem-emu", "--model", "v3"]),
            "--model v3 is not allowed: model v3 is not known: choose upmem-v1b@1 or upmem-v1b@2",
        ),
    ] {
        assert_refused(&args, &[expected]);
    }
}

/// `bench ntt` of two polynomials of N = 1024 over one prime, with `extra` flags.
fn ntt<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    [&["bench", "ntt", "--n", "1024", "--primes", "1", "--batch", "2"][..], extra].concat()
}
