//! Encrypted statistics against the plaintext computation: every decrypted aggregate must equal
//! the exact integer total, on random and adversarial data, on the CPU and the emulated DPUs.

use pimhe_exec::{Backend, CpuBackend};
use pimhe_math::Sampler;
use pimhe_pim::runtime::placement::Mode;
use pimhe_pim::runtime::{PimBackend, PimConfig};
use pimhe_workloads::stats::{
    bgv_max_plain_bits, bgv_parameters, BgvStats, Dataset, Statistic, StatsError, StatsPlan, StatsReport,
};

const N: usize = 8192;

fn on_cpu(statistic: Statistic, data: Dataset) -> Result<StatsReport, StatsError> {
    let plan = StatsPlan::new(statistic, data, N, max_bits(N))?;
    let backend = CpuBackend::new(Some(2)).unwrap();
    run(&plan, &plan.plain_moduli().iter().map(|_| &backend).collect::<Vec<_>>())
}

/// The client on the CPU, the server on `backends` (one per plaintext modulus).
fn run<B: Backend>(plan: &StatsPlan, backends: &[&B]) -> Result<StatsReport, StatsError> {
    let client = &CpuBackend::new(Some(2)).unwrap();
    let mut schemes = plan
        .plain_moduli()
        .iter()
        .zip(backends)
        .map(|(&t, backend)| BgvStats::new(client, *backend, bgv_parameters(N, t)?, Sampler::from_seed_u64(t.into())))
        .collect::<Result<Vec<_>, _>>()?;
    plan.execute(&mut schemes)
}

fn max_bits(n: usize) -> u32 {
    bgv_max_plain_bits(n).unwrap()
}

fn csv(columns: &[&str], rows: &[Vec<&str>]) -> Dataset {
    let mut text = columns.join(",") + "\n";
    for row in rows {
        text += &(row.join(",") + "\n");
    }
    Dataset::from_csv(text.as_bytes(), columns, None).unwrap()
}

fn assert_close(report: &StatsReport, tolerance: f64) {
    assert!(report.aggregates_exact, "decrypted aggregates differ from the exact totals: {:?}", report.estimates);
    for e in &report.estimates {
        assert!(e.abs_error <= tolerance * e.plaintext.abs().max(1.0), "{}: {e:?}", e.name);
    }
}

#[test]
fn mean_and_variance_of_random_data_match_the_plaintext() {
    let data = Dataset::synthetic(300, 5, &["x1", "x2", "y"]).unwrap();
    for statistic in [Statistic::Mean, Statistic::Variance] {
        let report = on_cpu(statistic, data.clone()).unwrap();
        assert_eq!(report.estimates.len(), 3);
        assert_close(&report, 1e-9);
    }
}

#[test]
fn linear_regression_recovers_the_plaintext_fit() {
    let data = Dataset::synthetic(400, 9, &["x1", "x2", "x3", "y"]).unwrap();
    let report = on_cpu(Statistic::Linreg, data).unwrap();
    let names: Vec<&str> = report.estimates.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, ["intercept", "coef(x1)", "coef(x2)", "coef(x3)", "r2"]);
    assert_close(&report, 1e-6);
    // The synthetic response is 3 + (2i - 9)/8 x_i (i = 1..8) + noise; x4..x8 act as noise here.
    let coefficient = |name: &str| report.estimates.iter().find(|e| e.name == name).unwrap().encrypted;
    assert!((coefficient("coef(x1)") + 0.875).abs() < 0.03, "{:?}", report.estimates);
    assert!((coefficient("coef(x3)") + 0.375).abs() < 0.03, "{:?}", report.estimates);
}

#[test]
fn adversarial_data_zeros_one_user_negatives_and_large_values() {
    let zeros = csv(&["a", "b"], &[vec!["0", "0"], vec!["0.0", "-0"]]);
    let report = on_cpu(Statistic::Variance, zeros).unwrap();
    assert_close(&report, 0.0);
    assert!(report.estimates.iter().all(|e| e.encrypted == 0.0));

    let one_user = csv(&["v"], &[vec!["-17.25"]]);
    let report = on_cpu(Statistic::Mean, one_user).unwrap();
    assert_close(&report, 0.0);
    assert_eq!(report.estimates[0].encrypted, -17.25);

    // Values near the 64-bit edge: their squares need several plaintext moduli and CRT.
    let large = csv(&["v"], &[vec!["-3000000000"], vec!["2999999999"], vec!["123456789012"]]);
    let report = on_cpu(Statistic::Variance, large).unwrap();
    assert!(report.plain_moduli.len() >= 3, "{:?}", report.plain_moduli);
    assert_close(&report, 1e-12);
}

#[test]
fn what_cannot_be_computed_exactly_is_refused_before_encryption() {
    let huge = csv(&["v"], &[vec!["9000000000000000000"], vec!["-9000000000000000000"]]);
    let message = on_cpu(Statistic::Variance, huge).unwrap_err().to_string();
    assert!(message.contains("plaintext moduli"), "{message}");
    let plan = StatsPlan::new(Statistic::Linreg, Dataset::synthetic(10, 1, &["y"]).unwrap(), N, max_bits(N));
    assert!(matches!(plan, Err(StatsError::Input(m)) if m.contains("feature columns")));
    let overflow =
        csv(&["v"], &[vec!["9000000000000000000"], vec!["9000000000000000000"], vec!["-9000000000000000000"]]);
    assert!(matches!(on_cpu(Statistic::Variance, overflow), Err(StatsError::Capacity(m)) if m.contains("2^127")));
    // N = 4096 leaves too little noise budget for a sum of squares over 5000 users.
    let data = Dataset::synthetic(5000, 4, &["x1"]).unwrap();
    let plan = StatsPlan::new(Statistic::Variance, data, 4096, max_bits(4096)).unwrap();
    let backend = CpuBackend::new(Some(1)).unwrap();
    let mut schemes = plan
        .plain_moduli()
        .iter()
        .map(|&t| BgvStats::new(&backend, &backend, bgv_parameters(4096, t).unwrap(), Sampler::from_seed_u64(3)))
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    let message = plan.execute(&mut schemes).unwrap_err().to_string();
    assert!(message.contains("noise budget") && message.contains("--n"), "{message}");
}

#[test]
fn cpu_and_emulated_dpus_give_identical_results() {
    let data = Dataset::synthetic(40, 2, &["x1", "x2", "y"]).unwrap();
    for statistic in [Statistic::Mean, Statistic::Variance, Statistic::Linreg] {
        let plan = StatsPlan::new(statistic, data.clone(), N, max_bits(N)).unwrap();
        let cpu = CpuBackend::new(Some(2)).unwrap();
        let pims: Vec<PimBackend> = plan
            .plain_moduli()
            .iter()
            .map(|&t| {
                let params = bgv_parameters(N, t).unwrap();
                PimBackend::new(PimConfig::new(16, Mode::Parallel), N, &params.primes()).unwrap()
            })
            .collect();
        let on_cpu = run(&plan, &plan.plain_moduli().iter().map(|_| &cpu).collect::<Vec<_>>()).unwrap();
        let on_pim = run(&plan, &pims.iter().collect::<Vec<_>>()).unwrap();
        let values = |r: &StatsReport| r.estimates.iter().map(|e| e.encrypted).collect::<Vec<_>>();
        assert_eq!(values(&on_cpu), values(&on_pim), "{statistic:?}");
        assert!(on_pim.aggregates_exact);
        let report = pims[0].report().unwrap();
        assert!(report.launches > 0, "the DPUs did the sums: {report:?}");
    }
}
