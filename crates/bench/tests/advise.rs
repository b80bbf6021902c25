//! `pimhe advise` as the library runs it: its modeled PIM figures against a second path (the
//! same point emulated on every DPU by `bench`), the crossover search against brute force on
//! synthetic numbers, the what-ifs, and its usage errors. Nothing here asserts a time.

use pimhe_bench::advise::{self, AdviseConfig, AdviseReport, Bottleneck, Candidate, PimBreakdown, Verdict};
use pimhe_bench::measure::kernels::{self, KernelConfig, KernelReport, Op};
use pimhe_bench::target::upmem::PimOutcome;
use pimhe_bench::target::TargetFlags;
use pimhe_bench::{BenchError, Render};

fn config(workload: &str, n: usize, dpus: &[usize], what_ifs: &[&str]) -> AdviseConfig {
    AdviseConfig {
        dpus: dpus.to_vec(),
        what_ifs: what_ifs.iter().map(|w| w.to_string()).collect(),
        max_batch: Some(8),
        repeat: 1,
        threads: Some(2),
        ..AdviseConfig::new(workload, n, 8)
    }
}

/// The same point through `bench OP --backend upmem-emu --emulate full`: every DPU emulated with
/// its real share, every transfer priced on the bytes it moved.
fn emulated_in_full(op: Op, n: usize, primes: Option<usize>, dpus: usize, what_if: &str) -> PimOutcome {
    let mut bench = KernelConfig::new(op, n, primes, 8);
    let flags = TargetFlags {
        backend: Some("upmem-emu".into()),
        dpus: Some(dpus),
        emulate: Some("full".into()),
        what_if: if what_if == "none" { Vec::new() } else { vec![what_if.to_string()] },
        ..TargetFlags::default()
    };
    bench.target = flags.parse(&kernels::RULES).unwrap();
    match kernels::run(&bench).unwrap() {
        KernelReport::Pim(r) => r.outcome().clone(),
        KernelReport::ExactPim(r) => r.report().outcome().clone(),
        _ => panic!("an upmem-emu report"),
    }
}

fn assert_close(what: &str, got: f64, expected: f64) {
    assert!((got - expected).abs() <= 1e-9 * expected.abs().max(1e-12), "{what}: {got} vs {expected}");
}

/// Every row's modeled transfer, compute and retrieve equal the full emulation's of that point.
fn assert_rows_match_full_emulation(report: &AdviseReport, op: Op, primes: Option<usize>) {
    for row in &report.rows {
        let pim = row.pim.unwrap_or_else(|| panic!("{} DPUs {}: {}", row.dpus, row.what_if, row.emulation));
        let full = emulated_in_full(op, report.n, primes, row.dpus, &row.what_if);
        let at = format!("{} DPUs, what-if {}", row.dpus, row.what_if);
        assert_close(&format!("compute at {at}"), pim.compute_s, full.compute_s);
        assert_close(&format!("transfer at {at}"), pim.transfer_s, full.transfer_s);
        assert_close(&format!("retrieve at {at}"), pim.retrieve_s, full.retrieve_s);
        assert_eq!(row.model, full.model, "{at}");
        assert!(row.emulation.starts_with("subset"), "{at}: {}", row.emulation);
    }
}

#[test]
fn pipeline_rows_are_the_full_emulations_and_zero_copy_moves_nothing() {
    let report = advise::run(&config("pipeline", 2048, &[64, 2], &["none", "zero-copy"])).unwrap();
    assert_eq!(report.primes, 2, "N = 2048's preset has 2 data primes");
    assert_eq!(report.rows.len(), 4);
    assert_eq!(report.rows.iter().map(|r| r.dpus).collect::<Vec<_>>(), [2, 64, 2, 64], "sorted, per what-if");
    assert_rows_match_full_emulation(&report, Op::Pipeline, Some(2));
    for row in report.rows.iter().filter(|r| r.what_if == "zero-copy") {
        let pim = row.pim.unwrap();
        assert_eq!((pim.transfer_s, pim.retrieve_s), (0.0, 0.0), "{} DPUs", row.dpus);
        let none = report.rows.iter().find(|r| r.what_if == "none" && r.dpus == row.dpus).unwrap().pim.unwrap();
        assert_eq!(pim.compute_s, none.compute_s, "zero-copy changes no DPU cycle");
        assert!(none.transfer_s > 0.0 && none.retrieve_s > 0.0);
    }
    // The pipeline has no CPU fallback; the speed-ups are the CPU's time over PIM's total.
    for row in &report.rows {
        let pim = row.pim.unwrap();
        assert_eq!(pim.fallback_s, 0.0);
        assert_close("speed-up", row.speedup_vs_measured.unwrap(), report.cpu.measured_s / pim.total_s());
    }
    assert_close("scaled", report.cpu.scaled_s, report.cpu.measured_s * report.cpu.scale);
    assert_eq!(report.verdicts.len(), 2);
    let json: serde_json::Value = serde_json::from_str(&pimhe_bench::format::to_json(&report).unwrap()).unwrap();
    assert_eq!(json["workload"], "pipeline");
    assert_eq!(json["rows"].as_array().unwrap().len(), 4);
    assert!(json["verdicts"][0]["vs_measured"]["verdict"].is_string());
    let text = report.render();
    assert!(text.contains("verdict [none] vs cpu measured here: "), "{text}");
    assert!(text.contains("(scaled, not measured)"), "{text}");
}

#[test]
fn bgv_rows_are_the_full_emulations_of_real_ciphertexts() {
    // N = 4096: 3 data primes and the special prime on the DPUs; 4 pairs over groups of 1 and 2.
    let report = advise::run(&config("bgv-mul-relin", 4096, &[4, 8], &["none", "mul-cycles=1"])).unwrap();
    assert_eq!(report.primes, 4);
    assert_rows_match_full_emulation(&report, Op::BgvMulRelin, None);
    let fallbacks: Vec<f64> = report.rows.iter().map(|r| r.pim.unwrap().fallback_s).collect();
    assert!(fallbacks.iter().all(|&f| f == report.fallback_s && f > 0.0), "measured once: {fallbacks:?}");
    let compute = |w: &str| report.rows.iter().find(|r| r.what_if == w && r.dpus == 4).unwrap().pim.unwrap().compute_s;
    assert!(compute("mul-cycles=1/2") < compute("none"), "single-cycle multiplies are faster");
}

fn candidate(batch: usize, dpus: usize, pim_s: f64, cpu_s: f64) -> Candidate {
    Candidate { batch, dpus, pim: PimBreakdown { compute_s: pim_s, ..PimBreakdown::default() }, cpu_s }
}

#[test]
fn the_search_finds_the_smallest_winning_batch_then_the_fewest_dpus() {
    // PIM: a fixed cost per launch plus work spread over the DPUs; CPU: linear in the batch.
    let pim = |b: usize, d: usize| 0.05 + 1e-3 * (b as f64 / d as f64).ceil();
    let cpu = |b: usize| 2e-5 * b as f64;
    let dpus = [64, 128, 256, 509, 1024, 2048, 2560];
    let verdict =
        advise::search(8, 1 << 16, &dpus, false, |b, d| Ok(Some(candidate(b, d, pim(b, d), cpu(b))))).unwrap();
    // Brute force over the same grid: the smallest batch where any DPU count wins, then the
    // fewest DPUs at that batch.
    let batches: Vec<usize> = (3..=16).map(|k| 1usize << k).collect();
    let b = *batches.iter().find(|&&b| dpus.iter().any(|&d| pim(b, d) < cpu(b))).unwrap();
    let d = *dpus.iter().find(|&&d| pim(b, d) < cpu(b)).unwrap();
    match verdict {
        Verdict::Wins { at } => assert_eq!((at.batch, at.dpus), (b, d)),
        other => panic!("expected a win, got {other:?}"),
    }
    // Equal is not a win; nothing modeled is no verdict.
    let tie = advise::search(8, 8, &dpus, false, |b, d| Ok(Some(candidate(b, d, 1.0, 1.0)))).unwrap();
    assert!(matches!(tie, Verdict::Never { bottleneck: Bottleneck::Compute, .. }), "{tie:?}");
    let none = advise::search(8, 64, &dpus, false, |_, _| Ok(None)).unwrap();
    assert_eq!(none, Verdict::NotModeled);
}

#[test]
fn never_blames_what_exceeds_the_cpu() {
    let transfer = Candidate {
        batch: 8,
        dpus: 64,
        pim: PimBreakdown { transfer_s: 0.7, compute_s: 0.2, retrieve_s: 0.4, fallback_s: 0.0 },
        cpu_s: 1.0,
    };
    let Verdict::Never { bottleneck, reason, closest } = advise::crossover(&[transfer], false) else { panic!() };
    assert_eq!(bottleneck, Bottleneck::Transfer);
    assert_eq!(closest, transfer);
    assert!(reason.starts_with("transfer: ") && reason.contains("alone take 1.100 s"), "{reason}");
    // The closest candidate decides: the larger batch is nearer even though its compute is larger.
    let far = candidate(8, 64, 10.0, 1.0);
    let near = candidate(16, 64, 2.5, 2.0);
    let Verdict::Never { closest, reason, .. } = advise::crossover(&[far, near], false) else { panic!() };
    assert_eq!(closest.batch, 16);
    assert!(reason.contains("8x8 multiplier"), "{reason}");
    assert!(
        matches!(advise::crossover(&[far, candidate(32, 64, 3.9, 4.0)], false), Verdict::Wins { at } if at.batch == 32)
    );
}

fn usage(config: &AdviseConfig) -> String {
    match advise::run(config) {
        Err(BenchError::Usage(message)) => message,
        other => panic!("expected a usage error, got {other:?}"),
    }
}

#[test]
fn bad_input_is_a_usage_error_naming_the_flag() {
    let base = config("pipeline", 2048, &[64], &["none"]);
    let m = usage(&AdviseConfig { workload: "ntt".into(), ..base.clone() });
    assert!(m.starts_with("--workload ntt is not known") && m.contains("bgv-mul-relin"), "{m}");
    let m = usage(&AdviseConfig { n: 1000, ..base.clone() });
    assert!(m.starts_with("--n 1000 is not allowed") && m.contains("1024"), "{m}");
    let m = usage(&AdviseConfig { workload: "bgv-mul-relin".into(), n: 2048, ..base.clone() });
    assert!(
        m.starts_with("--n 2048 is not allowed for --workload bgv-mul-relin") && m.contains("key-switching"),
        "{m}"
    );
    for batch in [0, 3] {
        let m = usage(&AdviseConfig { batch, ..base.clone() });
        assert!(m.starts_with(&format!("--batch {batch} is not allowed")) && m.contains("even"), "{m}");
    }
    let m = usage(&AdviseConfig { max_batch: Some(4), ..base.clone() });
    assert!(m.starts_with("--max-batch 4 is not allowed"), "{m}");
    for dpus in [0, 2561] {
        let m = usage(&AdviseConfig { dpus: vec![64, dpus], ..base.clone() });
        assert!(m.starts_with(&format!("--dpus {dpus} is not allowed")), "{m}");
    }
    let m = usage(&AdviseConfig { workload: "bgv-mul-relin".into(), n: 4096, dpus: vec![3], ..base.clone() });
    assert!(m.contains("--dpus 3 is too few") && m.contains("4 primes"), "{m}");
    let m = usage(&AdviseConfig { what_ifs: vec!["fast".into()], ..base.clone() });
    assert!(m.starts_with("--what-if \"fast\" is not allowed") && m.contains("zero-copy"), "{m}");
    let m = usage(&AdviseConfig { repeat: 0, ..base });
    assert!(m.starts_with("--repeat 0"), "{m}");
}

/// A whole-job workload's configuration: `users` users (the statistics) or `batch` ciphertexts.
fn job(workload: &str, n: usize, users: Option<usize>, batch: usize, dpus: &[usize], mode: &str) -> AdviseConfig {
    AdviseConfig {
        users,
        mode: Some(mode.to_string()),
        ..AdviseConfig { batch, ..config(workload, n, dpus, &["none"]) }
    }
}

#[test]
fn the_statistics_and_ckks_run_checked_on_every_emulated_dpu_with_energy_and_edp_verdicts() {
    // Each job decrypts its result and checks it against the plaintext computation (the
    // statistics' aggregates exactly, CKKS's slots to CKKS_MIN_BITS bits): a wrong result is
    // an error, not a row.
    for (workload, n, users, batch, dpus) in [
        ("mean", 4096, Some(8), 0, 4),
        ("variance", 8192, Some(6), 0, 7),
        ("linreg", 8192, Some(6), 0, 7),
        ("ckks-mul-relin-rescale", 8192, None, 2, 9),
    ] {
        let report = advise::run(&job(workload, n, users, batch, &[dpus], "parallel")).unwrap();
        let row = &report.rows[0];
        let pim = row.pim.unwrap_or_else(|| panic!("{workload}: {}", row.emulation));
        assert!(pim.compute_s > 0.0 && pim.transfer_s > 0.0 && pim.retrieve_s > 0.0, "{workload}: {pim:?}");
        assert_eq!(row.emulation, format!("full: all {dpus} DPUs emulated"), "{workload}");
        assert_eq!(row.placement, "parallel", "{workload}");
        assert!(row.model.contains("modeled"), "{}", row.model);
        assert_eq!(report.batch_of, if users.is_some() { "users" } else { "ciphertexts" });
        assert_eq!(report.batch, users.unwrap_or(batch));
        // Energy: the DPUs' modeled energy plus the host fallbacks at the server's power; EDP
        // that times the total.
        let energy = row.energy_with_host_j.unwrap();
        let expected = row.energy_j.unwrap() + pim.fallback_s * report.cpu.server.power_w;
        assert_close(&format!("{workload} energy"), energy, expected);
        assert_close(&format!("{workload} EDP"), row.edp_js.unwrap(), energy * pim.total_s());
        let verdicts = &report.verdicts[0];
        assert_eq!(verdicts.energy.pim, Some(energy), "{workload}: one DPU count, its energy");
        assert_close(&format!("{workload} cpu energy"), verdicts.energy.cpu, report.cpu.scaled_energy_j);
        assert_eq!(verdicts.energy.pim_wins, energy < report.cpu.scaled_energy_j);
        assert_close(
            &format!("{workload} cpu EDP"),
            verdicts.edp.cpu,
            report.cpu.scaled_energy_j * report.cpu.scaled_s,
        );
        let text = report.render();
        assert!(text.contains("energy-delay product:") && text.contains("time: "), "{text}");
    }
}

#[test]
fn auto_is_never_dearer_than_a_forced_placement_at_an_advise_point() {
    // linreg relinearizes its sum of products (key switching), over 7 primes on 9 DPUs:
    // parallel mode's groups of one leave 2 idle, sequential's conversions run per prime.
    let total = |mode: &str| {
        let report = advise::run(&job("linreg", 8192, Some(4), 0, &[9], mode)).unwrap();
        let row = report.rows[0].clone();
        (row.pim.unwrap_or_else(|| panic!("{mode}: {}", row.emulation)).total_s(), row)
    };
    let (auto, row) = total("auto");
    assert!(row.plan.as_deref().is_some_and(|p| p.starts_with("placement auto:")), "{row:?}");
    let mut forced = Vec::new();
    for mode in ["parallel", "sequential", "hybrid", "ciphertext-major"] {
        let (seconds, forced_row) = total(mode);
        assert_eq!(forced_row.placement, mode);
        assert!(auto <= seconds * (1.0 + 1e-12), "auto {auto} s is dearer than {mode}'s {seconds} s");
        forced.push((mode, seconds));
    }
    // The row names the placement that ran, and it is the cheapest forced one (the planner's
    // prices are the same deterministic emulation).
    let cheapest = forced.iter().min_by(|a, b| a.1.total_cmp(&b.1)).unwrap();
    assert_close("auto's total", auto, cheapest.1);
    assert_eq!(row.placement, cheapest.0, "{forced:?}");
}

#[test]
fn the_subset_workloads_take_auto_and_name_the_placement_per_row() {
    let auto =
        advise::run(&AdviseConfig { mode: Some("auto".into()), ..config("bgv-mul-relin", 4096, &[4], &["none"]) })
            .unwrap();
    let row = &auto.rows[0];
    let plan = row.plan.as_deref().unwrap();
    assert!(plan.contains("parallel") && plan.contains("ciphertext-major"), "{plan}");
    let forced = |mode: &str| {
        let report =
            advise::run(&AdviseConfig { mode: Some(mode.into()), ..config("bgv-mul-relin", 4096, &[4], &["none"]) })
                .unwrap();
        report.rows[0].pim.unwrap().total_s()
    };
    // Ciphertext-major's total is deterministic (no fallbacks); parallel's includes fallbacks
    // measured on this host in each run, so auto is compared with the forced ciphertext-major.
    let chosen = row.pim.unwrap();
    assert!(["parallel", "ciphertext-major"].contains(&row.placement.as_str()), "{}", row.placement);
    assert!(chosen.total_s() <= forced("ciphertext-major") * (1.0 + 1e-12), "{plan}");
    assert_eq!(auto.mode, "auto");
}

#[test]
fn the_new_workloads_refuse_bad_input_naming_the_flag() {
    let mean = job("mean", 4096, Some(8), 0, &[4], "parallel");
    let m = usage(&AdviseConfig { users: None, ..mean.clone() });
    assert!(m.starts_with("--workload mean needs --users U"), "{m}");
    let m = usage(&AdviseConfig { users: Some(0), ..mean.clone() });
    assert!(m.starts_with("--users 0 is not allowed"), "{m}");
    let m = usage(&AdviseConfig { batch: 6, ..mean.clone() });
    assert!(m.starts_with("--batch does not apply to --workload mean"), "{m}");
    let m = usage(&AdviseConfig { users: Some(8), ..config("pipeline", 2048, &[64], &["none"]) });
    assert!(m.starts_with("--users applies to the statistics"), "{m}");
    let m = usage(&job("ckks-mul-relin-rescale", 4096, None, 2, &[64], "parallel"));
    assert!(
        m.starts_with("--n 4096 is not allowed for --workload ckks-mul-relin-rescale") && m.contains("8192"),
        "{m}"
    );
    for mode in ["sequential", "hybrid"] {
        let m = usage(&AdviseConfig { mode: Some(mode.into()), ..config("pipeline", 2048, &[64], &["none"]) });
        assert!(m.starts_with(&format!("--mode {mode} is not allowed for advise")) && m.contains("auto"), "{m}");
    }
}
