//! `pimhe bench reproduce gupta`: the pricing by rounds against whole emulated shares, the
//! `--quick` run's own checks, and the stated ranges as comparison rows.

use pimhe_bench::reproduce::by_name;
use pimhe_bench::reproduce::gupta::dpu::{emulate, paper_model, CtOp, SharePricer};
use pimhe_bench::reproduce::gupta::fig2::{self, driver_within_noise, Fig2Point};
use pimhe_bench::reproduce::gupta::published::{StatedRange, Versus, FIG1_RANGES, PAPER_DPU_HZ};
use pimhe_bench::reproduce::gupta::{Gupta, GuptaConfig, Width, PRICING_TOLERANCE, QUICK_DPUS, TASKLETS, WIDTHS};
use pimhe_bench::reproduce::{Comparison, Reproduction};
use pimhe_bench::NoProgress;
use pimhe_math::Sampler;
use pimhe_schemes::bfv::BfvContext;
use pimhe_schemes::encoder::ExactScheme;
use pimhe_workloads::stats::sharded::StatsDriver;
use pimhe_workloads::stats::{Dataset, Statistic, StatsError, StatsPlan};

/// The shares priced by rounds equal the same shares emulated whole, cycle for cycle, at sizes that are
/// not whole rounds and at two tasklet counts (the emulated run is the oracle; it checks its
/// own results against the cpu backend).
#[test]
fn pricing_by_rounds_matches_whole_emulated_shares() {
    let model = paper_model(PAPER_DPU_HZ).unwrap();
    let mut pricer = SharePricer::new(model.clone(), 7);
    for width in [WIDTHS[0], WIDTHS[2]] {
        let basis = width.basis().unwrap();
        let limb = pimhe_ring::RingBasis::new(width.n, &basis.primes()[..1]).unwrap();
        for op in CtOp::ALL {
            for (share, tasklets) in [(37, 16), (53, 16), (23, 5)] {
                let priced = pricer.cycles(op, &basis, share, tasklets).unwrap();
                let whole = model.dpu_cycles(&emulate(op, &limb, share, 1, tasklets, &model, 7).unwrap().busiest);
                assert!(
                    priced == whole,
                    "{} N={} share {share}, {tasklets} tasklets: priced {priced} vs emulated {} cycles",
                    op.name(),
                    width.n,
                    whole
                );
            }
        }
    }
    // Rounds are emulated once each and reused.
    let before = pricer.emulations;
    pricer.cycles(CtOp::Add, &WIDTHS[0].basis().unwrap(), 37, 16).unwrap();
    assert_eq!(pricer.emulations, before);
}

/// Bytes an operation streams, by hand: every operand read and every result written once.
#[test]
fn bytes_moved_count_operands_and_results() {
    // add: a + b -> c, 2C polynomials each.
    assert_eq!(CtOp::Add.bytes_moved(1, 1024, 1), 3 * 2 * 1024 * 4);
    // mul: a0, a1, b0, b1 -> d0, d1, d2, C polynomials each, 4 limbs.
    assert_eq!(CtOp::Mul.bytes_moved(10, 4096, 4), 7 * 10 * 4096 * 4 * 4);
}

fn quick() -> pimhe_bench::reproduce::gupta::GuptaReport {
    let config = GuptaConfig { quick: true, repeat: 1, ..GuptaConfig::default() };
    Gupta::run(&config, &NoProgress).unwrap()
}

/// `--quick` emulates every row's whole system as well and agrees with the priced time;
/// the widths are the paper's; the sweep saturates where the revolver does.
#[test]
fn quick_run_checks_every_row_against_the_whole_system() {
    let report = quick();
    assert_eq!(report.dpus, QUICK_DPUS);
    assert_eq!(report.rows.len(), 2 * 3 * 3);
    for row in &report.rows {
        let emulated = row.emulated_kernel_s.expect("every --quick row is emulated whole");
        assert!((row.kernel_s / emulated - 1.0).abs() <= PRICING_TOLERANCE, "{row:?}");
        assert_eq!(row.dpus_per_limb, QUICK_DPUS / row.limbs);
        let cpu = row.cpu_s.expect("the CPU is measured");
        assert!((row.speedup.unwrap() - cpu / row.kernel_s).abs() < 1e-9);
    }
    let widths: Vec<(u32, usize, usize)> = WIDTHS.iter().map(|w: &Width| (w.coefficient_bits, w.n, w.limbs)).collect();
    assert_eq!(widths, [(27, 1024, 1), (54, 2048, 2), (109, 4096, 4)]);
    // One tasklet issues every 11 cycles: 1 -> 11 tasklets is 11x faster on the compute-bound
    // multiplication, and no faster beyond.
    let at = |t: u32| report.sweep.iter().find(|r| r.op == CtOp::Mul && r.tasklets == t).unwrap().kernel_s;
    assert!(at(1) / at(11) > 8.0, "1 tasklet {} vs 11 tasklets {}", at(1), at(11));
    assert!((at(16) / at(11) - 1.0).abs() < 0.02);
    assert_eq!(report.saturation(CtOp::Mul), Some(11));
    // The paper's kernels (MW_ADD; textbook products) are instruction-bound: the textbook
    // multiplication saturates as the revolver does. At 16 tasklets the sweep prices what the
    // multi-word rows do at the largest 109-bit count.
    assert_eq!(report.paper_saturation(CtOp::Mul), Some(11));
    for op in CtOp::ALL {
        let swept = report.sweep.iter().find(|r| r.op == op && r.tasklets == TASKLETS).unwrap();
        let row = report.multiword.iter().rfind(|r| r.op == op && r.coefficient_bits == 109).unwrap();
        assert_eq!(row.ciphertexts, swept.ciphertexts);
        let priced = match op {
            CtOp::Add => row.karatsuba_s,
            CtOp::Mul => row.textbook.as_ref().unwrap().kernel_s,
        };
        assert!((swept.paper_kernel_s / priced - 1.0).abs() < 1e-12, "{op:?}: {} vs {priced}", swept.paper_kernel_s);
    }
    // Fig. 2: the quick points, every row decrypted and checked by the run itself; the
    // representative's compute against the whole system emulated (the products' work is the
    // busiest DPU's share; the steps on the one aggregate differ by a little).
    let ids: Vec<String> = report.fig2.iter().map(|r| r.point.id()).collect();
    assert_eq!(ids, fig2::points(true).iter().map(|p| p.id()).collect::<Vec<_>>());
    assert_eq!(
        ids,
        ["mean-4", "mean-8", "mean-16", "variance-4", "variance-8", "variance-16", "linreg-4x2", "linreg-4x4"]
    );
    for row in &report.fig2 {
        assert_eq!(row.rows, row.point.users * row.point.samples_per_user);
        assert!(!row.plain_moduli.is_empty() && row.kernel_s >= row.compute_s && row.compute_s > 0.0, "{row:?}");
        assert!((row.speedup.unwrap() - row.cpu_s.unwrap() / row.kernel_s).abs() < 1e-9);
        let whole = row.whole_system_compute_s.expect("--quick emulates the whole system");
        if row.point.statistic != Statistic::Mean {
            assert!(
                (whole / row.compute_s - 1.0).abs() < 0.02,
                "{}: whole {whole} vs representative {}",
                row.point.id(),
                row.compute_s
            );
        }
    }
    // The paper's CPU arithmetic, measured at every width, is the CPU side of the textbook rows:
    // per ciphertext times the count, in Fig. 1 and composed in Fig. 2.
    let widths: Vec<u32> = report.paper_cpu.iter().map(|t| t.coefficient_bits).collect();
    assert_eq!(widths, [27, 54, 109]);
    for mw in report.multiword.iter().filter(|r| r.op == CtOp::Mul) {
        let times = report.paper_cpu.iter().find(|t| t.coefficient_bits == mw.coefficient_bits).unwrap();
        let textbook = mw.textbook.as_ref().expect("a multiplication row prices the textbook product");
        let cpu = textbook.cpu_s.expect("the CPU is measured");
        assert!((cpu / (times.mul_s_per_ciphertext * mw.ciphertexts as f64) - 1.0).abs() < 1e-12, "{mw:?}");
        assert!((textbook.speedup_over_cpu.unwrap() - cpu / textbook.kernel_s).abs() < 1e-9);
    }
    let widest = &report.paper_cpu[2];
    for row in &report.fig2 {
        let (adds, muls) = fig2::seal_operations(row.point.statistic);
        let composed =
            row.rows as f64 * (adds as f64 * widest.add_s_per_ciphertext + muls as f64 * widest.mul_s_per_ciphertext);
        assert!((row.textbook_cpu_s.unwrap() / composed - 1.0).abs() < 1e-12, "{}", row.point.id());
    }
    // A quick run judges nothing: its rows say why. Every row has its own id, the textbook
    // product's rows among them over the paper's CPU arithmetic and over SEAL.
    let rows = Gupta::comparison(&report);
    let ids: std::collections::BTreeSet<&str> = rows.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(ids.len(), rows.len());
    for id in ["fig1-mul-cpu-109b-20-textbook", "fig2-variance-cpu-variance-4-textbook"] {
        assert!(ids.contains(id), "{id} missing");
    }
    assert!(rows.iter().all(|r| r.within().is_none()), "a quick run judges no row");
}

/// A stated range is judged inside exactly when our figure lies in it.
#[test]
fn a_range_row_is_within_exactly_inside_the_range() {
    let range: &StatedRange = FIG1_RANGES.iter().find(|r| r.versus == Versus::Cpu && r.low == 20.0).unwrap();
    let basis = pimhe_bench::reproduce::Basis::Modeled { model: "m".into() };
    let judge = |ours: f64| {
        Comparison::new("x", "q", "x", "s", Some(range.middle()), Some(ours), basis.clone())
            .judged(range.tolerance(), None)
            .within()
    };
    assert_eq!([judge(20.001), judge(149.999), judge(85.0)], [Some(true); 3]);
    assert_eq!([judge(19.9), judge(150.5)], [Some(false); 2]);
}

/// Through by_name (Python's path): the options are the flags; bad ones are refused.
#[test]
fn by_name_runs_quick_and_refuses_bad_options() {
    let json = by_name::run("gupta", serde_json::json!({"quick": true, "skip_cpu": true}), &NoProgress).unwrap();
    let report: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(report["paper"], "gupta");
    assert_eq!(report["model"], "upmem-v1b@1 (modeled)");
    assert!(report["rows"].as_array().unwrap().iter().all(|r| r["cpu_s"].is_null()));
    let error = by_name::run("gupta", serde_json::json!({"repeat": 0}), &NoProgress).unwrap_err();
    assert!(error.is_usage() && error.to_string().contains("--repeat 0 is not allowed"), "{error}");
    let error = by_name::run("gupta", serde_json::json!({"fast": true}), &NoProgress).unwrap_err();
    assert!(error.is_usage() && error.to_string().contains("expected one of `quick`"), "{error}");
}

/// SEAL's times come from the file bench/compare/gupta_seal.py prints; a bad file is refused
/// naming it and what is expected.
#[test]
fn seal_times_are_read_from_the_script_output() {
    let dir = std::env::temp_dir().join(format!("pimhe-gupta-seal-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let good = dir.join("seal.json");
    let widths: Vec<serde_json::Value> = WIDTHS
        .iter()
        .map(|w| {
            serde_json::json!({"n": w.n, "coefficient_bits": w.coefficient_bits, "primes": [27],
                "ciphertexts": 64, "add_s_per_ciphertext": 1e-5, "mul_s_per_ciphertext": 2e-3})
        })
        .collect();
    std::fs::write(&good, serde_json::json!({"peer": "seal", "widths": widths}).to_string()).unwrap();
    let config = GuptaConfig { quick: true, skip_cpu: true, seal_json: Some(good), ..GuptaConfig::default() };
    let report = Gupta::run(&config, &NoProgress).unwrap();
    for row in &report.rows {
        let per = if row.op == CtOp::Add { 1e-5 } else { 2e-3 };
        assert!((row.seal_s.unwrap() - per * row.ciphertexts as f64).abs() < 1e-12);
    }
    // Fig. 2's SEAL: its per-ciphertext times (109 bits) times the workload's operations per row.
    for row in &report.fig2 {
        let (adds, muls) = fig2::seal_operations(row.point.statistic);
        let composed = row.rows as f64 * (adds as f64 * 1e-5 + muls as f64 * 2e-3);
        assert!((row.seal_s.unwrap() - composed).abs() < 1e-12, "{}", row.point.id());
    }
    assert_eq!(
        [Statistic::Mean, Statistic::Variance, Statistic::Linreg].map(fig2::seal_operations),
        [(1, 0), (2, 1), (1, 1)]
    );
    let rows = Gupta::comparison(&report);
    let seal = rows.iter().find(|r| r.id == "fig1-mul-128b-seal-109b-20").unwrap();
    let row =
        report.rows.iter().find(|r| r.op == CtOp::Mul && r.coefficient_bits == 109 && r.ciphertexts == 20).unwrap();
    assert!((seal.ours.unwrap() - 20.0 * 2e-3 / row.kernel_s).abs() < 1e-9);

    let bad = dir.join("bad.json");
    std::fs::write(&bad, "{\"widths\": [{\"n\": 1024}]}").unwrap();
    let config = GuptaConfig { quick: true, skip_cpu: true, seal_json: Some(bad), ..GuptaConfig::default() };
    let error = Gupta::run(&config, &NoProgress).unwrap_err();
    assert!(error.is_usage() && error.to_string().contains("not the output of bench/compare/gupta_seal.py"), "{error}");
    let missing = dir.join("missing.json");
    let config = GuptaConfig { quick: true, seal_json: Some(missing), ..GuptaConfig::default() };
    assert!(Gupta::run(&config, &NoProgress).unwrap_err().to_string().contains("cannot read it"));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Fig. 2's variance over 2560 users cannot keep its exact totals in one plaintext modulus at
/// 109 bits: the preset's largest t leaves too little noise budget for the sum of squares, so
/// the search splits the totals over smaller moduli whose noise check passes.
#[test]
fn variance_over_the_papers_users_splits_its_plaintext_modulus_for_noise() {
    let point = Fig2Point { statistic: Statistic::Variance, users: 2560, samples_per_user: 1 };
    let n = WIDTHS[2].n;
    let data = Dataset::synthetic(point.rows(), 1, &["x1"]).unwrap();
    let largest = StatsPlan::new(point.statistic, data, n, BfvContext::max_plain_bits(n).unwrap()).unwrap();
    match StatsDriver::new("bfv", largest, n, Some(1), Sampler::from_seed_u64(1)) {
        Err(StatsError::Capacity(why)) => assert!(why.contains("noise budget"), "{why}"),
        Err(other) => panic!("expected a noise refusal, got {other}"),
        Ok(_) => panic!("the largest t was expected to run out of noise budget"),
    }
    let driver = driver_within_noise(&point, n, Some(1), 1).unwrap();
    let moduli = &driver.header().plain_moduli;
    assert!(moduli.len() >= 2, "{moduli:?}");
    assert!(moduli.iter().all(|&t| u64::from(t) < 1 << BfvContext::max_plain_bits(n).unwrap()), "{moduli:?}");
}

/// Fig. 2's stated ranges are judged against each workload's row in a full run: a speed-up
/// inside the range is within, one outside is not, and each says why.
#[test]
fn fig2_ranges_judge_their_workloads() {
    let mut report = quick();
    report.quick = false;
    for row in &mut report.fig2 {
        // Inside 4.3's mean range (25-100x) and outside the variance one (6-25x), measured and
        // in the paper's arithmetic on both sides.
        row.speedup = Some(50.0);
        row.textbook_cpu_s = Some(50.0 * row.textbook_s);
        // A full run's regressions have the paper's 32 and 64 samples per user.
        if row.point.statistic == Statistic::Linreg {
            row.point.samples_per_user *= fig2::QUICK_SAMPLES_DIVISOR;
        }
    }
    let rows = Gupta::comparison(&report);
    let verdict = |id: &str| rows.iter().find(|r| r.id == id).unwrap_or_else(|| panic!("{id} missing")).within();
    assert_eq!(verdict("fig2-mean-cpu-mean-4"), Some(true));
    assert_eq!(verdict("fig2-mean-cpu-mean-4-textbook"), Some(true));
    assert_eq!(verdict("fig2-variance-cpu-variance-16-textbook"), Some(false));
    assert_eq!(verdict("fig2-variance-cpu-variance-16"), Some(false));
    assert_eq!(verdict("fig2-linreg-32-cpu-linreg-4x32"), Some(false));
    assert_eq!(verdict("fig2-all-cpu-linreg-4x64"), Some(true));
    assert_eq!(verdict("fig2-mean-gpu-mean-8"), None);
    let constant = rows.iter().find(|r| r.id == "fig2-variance-pim-time-over-users").unwrap();
    let (first, last) = (&report.fig2[3], &report.fig2[5]);
    assert!((constant.ours.unwrap() - last.kernel_s / first.kernel_s).abs() < 1e-12);
}
