//! Encrypted statistics against the plaintext computation: every decrypted aggregate must equal
//! the exact integer total, on random and adversarial data, with BGV and BFV, on the CPU and the
//! emulated DPUs.

use pimhe_exec::{Backend, CpuBackend};
use pimhe_math::{ntt_primes, Sampler};
use pimhe_pim::runtime::placement::Mode;
use pimhe_pim::runtime::{PimBackend, PimConfig};
use pimhe_schemes::bfv::BfvContext;
use pimhe_schemes::bgv::BgvContext;
use pimhe_schemes::encoder::ExactScheme;
use pimhe_workloads::stats::{Dataset, SchemeStats, Statistic, StatsError, StatsPlan, StatsReport};

const N: usize = 8192;

fn on_cpu<S: ExactScheme>(statistic: Statistic, data: Dataset) -> Result<StatsReport, StatsError> {
    on_cpu_at::<S>(statistic, data, N)
}

fn on_cpu_at<S: ExactScheme>(statistic: Statistic, data: Dataset, n: usize) -> Result<StatsReport, StatsError> {
    let plan = StatsPlan::new(statistic, data, n, S::max_plain_bits(n)?)?;
    let backend = CpuBackend::new(Some(2)).unwrap();
    run::<S, _>(&plan, n, &plan.plain_moduli().iter().map(|_| &backend).collect::<Vec<_>>())
}

/// The client on the CPU, the server on `backends` (one per plaintext modulus).
fn run<S: ExactScheme, B: Backend>(plan: &StatsPlan, n: usize, backends: &[&B]) -> Result<StatsReport, StatsError> {
    let client = &CpuBackend::new(Some(2)).unwrap();
    let mut schemes = plan
        .plain_moduli()
        .iter()
        .zip(backends)
        .map(|(&t, backend)| {
            SchemeStats::<S, _, _>::new(
                client,
                *backend,
                S::preset_with_plain_modulus(n, t)?,
                Sampler::from_seed_u64(t.into()),
            )
        })
        .collect::<Result<Vec<_>, _>>()?;
    plan.execute(&mut schemes)
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

fn mean_and_variance_of_random_data<S: ExactScheme>() {
    let data = Dataset::synthetic(300, 5, &["x1", "x2", "y"]).unwrap();
    for statistic in [Statistic::Mean, Statistic::Variance] {
        let report = on_cpu::<S>(statistic, data.clone()).unwrap();
        assert_eq!(report.estimates.len(), 3);
        assert_close(&report, 1e-9);
    }
}

#[test]
fn bgv_mean_and_variance_of_random_data_match_the_plaintext() {
    mean_and_variance_of_random_data::<BgvContext>();
}

#[test]
fn bfv_mean_and_variance_of_random_data_match_the_plaintext() {
    mean_and_variance_of_random_data::<BfvContext>();
}

fn linear_regression<S: ExactScheme>() {
    let data = Dataset::synthetic(400, 9, &["x1", "x2", "x3", "y"]).unwrap();
    let report = on_cpu::<S>(Statistic::Linreg, data).unwrap();
    let names: Vec<&str> = report.estimates.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, ["intercept", "coef(x1)", "coef(x2)", "coef(x3)", "r2"]);
    assert_close(&report, 1e-6);
    // The synthetic response is 3 + (2i - 9)/8 x_i (i = 1..8) + noise; x4..x8 act as noise here.
    let coefficient = |name: &str| report.estimates.iter().find(|e| e.name == name).unwrap().encrypted;
    assert!((coefficient("coef(x1)") + 0.875).abs() < 0.03, "{:?}", report.estimates);
    assert!((coefficient("coef(x3)") + 0.375).abs() < 0.03, "{:?}", report.estimates);
}

#[test]
fn bgv_linear_regression_recovers_the_plaintext_fit() {
    linear_regression::<BgvContext>();
}

#[test]
fn bfv_linear_regression_recovers_the_plaintext_fit() {
    linear_regression::<BfvContext>();
}

fn adversarial_data<S: ExactScheme>() {
    let zeros = csv(&["a", "b"], &[vec!["0", "0"], vec!["0.0", "-0"]]);
    let report = on_cpu::<S>(Statistic::Variance, zeros).unwrap();
    assert_close(&report, 0.0);
    assert!(report.estimates.iter().all(|e| e.encrypted == 0.0));

    let one_user = csv(&["v"], &[vec!["-17.25"]]);
    let report = on_cpu::<S>(Statistic::Mean, one_user).unwrap();
    assert_close(&report, 0.0);
    assert_eq!(report.estimates[0].encrypted, -17.25);

    let negatives = csv(&["a", "b"], &[vec!["-1", "-2.5"], vec!["-3", "-0.5"], vec!["-8", "-100"]]);
    let report = on_cpu::<S>(Statistic::Variance, negatives).unwrap();
    assert_close(&report, 1e-12);

    // Values near the 64-bit edge: their squares need several plaintext moduli and CRT.
    let large = csv(&["v"], &[vec!["-3000000000"], vec!["2999999999"], vec!["123456789012"]]);
    let report = on_cpu::<S>(Statistic::Variance, large).unwrap();
    assert!(report.plain_moduli.len() >= 3, "{:?}", report.plain_moduli);
    assert_close(&report, 1e-12);

    // The largest values a dataset holds (i64): their sum needs CRT over several moduli.
    let (max, min) = (i64::MAX.to_string(), (i64::MIN + 1).to_string());
    let extreme = csv(&["v"], &[vec![max.as_str()], vec![max.as_str()], vec![min.as_str()]]);
    let report = on_cpu::<S>(Statistic::Mean, extreme).unwrap();
    assert!(report.plain_moduli.len() >= 3, "{:?}", report.plain_moduli);
    assert!(report.aggregates_exact);
}

#[test]
fn bgv_adversarial_data_zeros_one_user_negatives_and_large_values() {
    adversarial_data::<BgvContext>();
}

#[test]
fn bfv_adversarial_data_zeros_one_user_negatives_and_large_values() {
    adversarial_data::<BfvContext>();
}

/// The plan may pick plaintext moduli of up to `max_plain_bits`: the scheme must accept all of
/// them, and refuse the next size up.
fn largest_plaintext_moduli_are_accepted<S: ExactScheme>() {
    for n in [4096, N] {
        let bits = S::max_plain_bits(n).unwrap();
        for t in ntt_primes(bits, n, 4, &[]).unwrap() {
            S::from_params(S::preset_with_plain_modulus(n, t).unwrap()).unwrap();
        }
        let above = ntt_primes(bits + 1, n, 1, &[]).unwrap()[0];
        assert!(S::preset_with_plain_modulus(n, above).and_then(S::from_params).is_err(), "N = {n}, t = {above}");
    }
}

#[test]
fn the_largest_plaintext_moduli_are_accepted() {
    largest_plaintext_moduli_are_accepted::<BgvContext>();
    largest_plaintext_moduli_are_accepted::<BfvContext>();
}

fn refusals<S: ExactScheme>() {
    let huge = csv(&["v"], &[vec!["9000000000000000000"], vec!["-9000000000000000000"]]);
    let message = on_cpu::<S>(Statistic::Variance, huge).unwrap_err().to_string();
    assert!(message.contains("plaintext moduli"), "{message}");
    let plan =
        StatsPlan::new(Statistic::Linreg, Dataset::synthetic(10, 1, &["y"]).unwrap(), N, S::max_plain_bits(N).unwrap());
    assert!(matches!(plan, Err(StatsError::Input(m)) if m.contains("feature columns")));
    let overflow =
        csv(&["v"], &[vec!["9000000000000000000"], vec!["9000000000000000000"], vec!["-9000000000000000000"]]);
    assert!(matches!(on_cpu::<S>(Statistic::Variance, overflow), Err(StatsError::Capacity(m)) if m.contains("2^127")));
}

#[test]
fn what_cannot_be_computed_exactly_is_refused_before_encryption() {
    refusals::<BgvContext>();
    refusals::<BfvContext>();
}

/// N = 4096 leaves too little noise budget for a sum of squares over many users.
#[test]
fn the_noise_budget_check_refuses_too_many_users() {
    let data = Dataset::synthetic(5000, 4, &["x1"]).unwrap();
    let message = on_cpu_at::<BgvContext>(Statistic::Variance, data, 4096).unwrap_err().to_string();
    assert!(message.contains("noise budget") && message.contains("--n") && message.contains("bgv"), "{message}");
    let data = Dataset::synthetic(5000, 4, &["x1"]).unwrap();
    let message = on_cpu_at::<BfvContext>(Statistic::Variance, data, 4096).unwrap_err().to_string();
    assert!(message.contains("noise budget") && message.contains("--n") && message.contains("bfv"), "{message}");
}

/// Per statistic, the estimates of `S` with the server on the CPU and on emulated DPUs.
fn cpu_and_dpus<S: ExactScheme>(statistic: Statistic, data: &Dataset) -> (StatsReport, StatsReport) {
    let plan = StatsPlan::new(statistic, data.clone(), N, S::max_plain_bits(N).unwrap()).unwrap();
    let cpu = CpuBackend::new(Some(2)).unwrap();
    let pims: Vec<PimBackend> = plan
        .plain_moduli()
        .iter()
        .map(|&t| {
            let primes = S::from_params(S::preset_with_plain_modulus(N, t).unwrap()).unwrap().backend_primes();
            PimBackend::new(PimConfig::new(32, Mode::Parallel), N, &primes).unwrap()
        })
        .collect();
    let on_cpu = run::<S, _>(&plan, N, &plan.plain_moduli().iter().map(|_| &cpu).collect::<Vec<_>>()).unwrap();
    let on_pim = run::<S, _>(&plan, N, &pims.iter().collect::<Vec<_>>()).unwrap();
    let report = pims[0].report().unwrap();
    assert!(report.launches > 0, "the DPUs did the sums: {report:?}");
    (on_cpu, on_pim)
}

#[test]
fn cpu_and_emulated_dpus_give_identical_results_and_bgv_and_bfv_agree() {
    let data = Dataset::synthetic(40, 2, &["x1", "x2", "y"]).unwrap();
    let values = |r: &StatsReport| r.estimates.iter().map(|e| e.encrypted).collect::<Vec<_>>();
    for statistic in [Statistic::Mean, Statistic::Variance, Statistic::Linreg] {
        let (bgv_cpu, bgv_pim) = cpu_and_dpus::<BgvContext>(statistic, &data);
        let (bfv_cpu, bfv_pim) = cpu_and_dpus::<BfvContext>(statistic, &data);
        for report in [&bgv_cpu, &bgv_pim, &bfv_cpu, &bfv_pim] {
            assert!(report.aggregates_exact, "{statistic:?}");
        }
        assert_eq!(values(&bgv_cpu), values(&bgv_pim), "{statistic:?}");
        assert_eq!(values(&bfv_cpu), values(&bfv_pim), "{statistic:?}");
        assert_eq!(values(&bgv_cpu), values(&bfv_cpu), "{statistic:?}");
    }
}

#[test]
fn users_aggregated_in_rounds_give_the_exact_totals_and_the_same_statistics() {
    // 23 users in rounds of 5 (the last one short): the server adds the rounds' aggregates,
    // products included (each round relinearized), and the totals stay exact.
    let data = Dataset::synthetic(23, 9, &["x1", "x2", "y"]).unwrap();
    let backend = CpuBackend::new(Some(2)).unwrap();
    for statistic in [Statistic::Variance, Statistic::Linreg] {
        let whole = on_cpu::<BgvContext>(statistic, data.clone()).unwrap();
        let plan = StatsPlan::new(statistic, data.clone(), N, BgvContext::max_plain_bits(N).unwrap())
            .unwrap()
            .with_users_per_round(5);
        let rounds =
            run::<BgvContext, _>(&plan, N, &plan.plain_moduli().iter().map(|_| &backend).collect::<Vec<_>>()).unwrap();
        assert_close(&rounds, 1e-9);
        for (a, b) in rounds.estimates.iter().zip(&whole.estimates) {
            assert_eq!((&a.name, a.encrypted), (&b.name, b.encrypted), "rounds change the result");
        }
    }
}

/// Issue 16: well-posed regressions refused as singular by an f64 pivot test whose threshold
/// depended on the data's units. Both columns must now solve them: the encrypted one exactly
/// (the nearest doubles, from Python's exact `fractions`), the plaintext one (QR) closely.
#[test]
fn regressions_in_any_units_are_solved_exactly_and_only_singular_data_is_refused() {
    let cases = [
        (
            csv(&["x", "y"], &[vec!["1000000000000", "3"], vec!["-2000000000000", "5"], vec!["7", "1"]]),
            [2.714285714287, -8.57142857145e-13, 0.428571428574],
        ),
        (
            csv(&["x", "y"], &[vec!["0.0000001", "1"], vec!["0.0000003", "2"], vec!["0.0000002", "2"]]),
            [0.6666666666666666, 5000000.0, 0.75],
        ),
    ];
    for (data, exact) in cases {
        let report = on_cpu::<BgvContext>(Statistic::Linreg, data).unwrap();
        assert!(report.aggregates_exact);
        let encrypted: Vec<f64> = report.estimates.iter().map(|e| e.encrypted).collect();
        assert_eq!(encrypted, exact);
        for e in &report.estimates {
            assert!(e.abs_error <= 1e-9 * e.encrypted.abs(), "{e:?}");
        }
    }
    // A constant feature: X^T X is singular, refused by the plan, before anything is encrypted.
    let constant = csv(&["x", "y"], &[vec!["2", "1"], vec!["2", "5"], vec!["2", "3"]]);
    let refused = StatsPlan::new(Statistic::Linreg, constant, N, BgvContext::max_plain_bits(N).unwrap()).unwrap_err();
    assert!(matches!(&refused, StatsError::Input(m) if m.contains("singular")), "{refused}");
}

/// Issue 16: N = 1024 has no special primes, so no relinearization key; key generation asked
/// for one anyway and refused even a mean, which needs none. Now the noise check decides, up
/// front: a mean over two users fits, a variance's squares do not.
fn ring_degree_without_relinearization<S: ExactScheme>() {
    let data = csv(&["v"], &[vec!["-3.5"], vec!["12"]]);
    let report = on_cpu_at::<S>(Statistic::Mean, data.clone(), 1024).unwrap();
    assert!(report.aggregates_exact);
    assert_eq!(report.estimates[0].encrypted, 4.25);

    let plan = StatsPlan::new(Statistic::Variance, data, 1024, S::max_plain_bits(1024).unwrap()).unwrap();
    let client = CpuBackend::new(Some(2)).unwrap();
    let t = plan.plain_moduli()[0];
    let mut scheme = SchemeStats::<S, _, _>::new(
        &client,
        &client,
        S::preset_with_plain_modulus(1024, t).unwrap(),
        Sampler::from_seed_u64(3),
    )
    .unwrap();
    let refused = plan.check_noise_budget(&mut scheme).unwrap_err().to_string();
    assert!(refused.contains("noise budget") && refused.contains("--n 2048 or more"), "{refused}");
}

#[test]
fn a_ring_degree_without_relinearization_runs_what_its_noise_budget_allows() {
    ring_degree_without_relinearization::<BgvContext>();
    ring_degree_without_relinearization::<BfvContext>();
}

/// Issue 16: a number outside i64 was "not a plain decimal number"; it is too large, and the
/// message gives the range.
#[test]
fn numbers_outside_64_bits_are_too_large_with_the_range_allowed() {
    let message = Dataset::from_csv("v\n1\n-99999999999999999999\n".as_bytes(), &["v"], None).unwrap_err().to_string();
    assert_eq!(
        message,
        "row 3, column 'v': the cell '-99999999999999999999' is too large: values with 0 decimal places must lie \
         in -9223372036854775808 ..= 9223372036854775807"
    );
    let message = Dataset::from_csv("v\n92233720368547758.08\n".as_bytes(), &["v"], None).unwrap_err().to_string();
    assert!(message.ends_with("must lie in -92233720368547758.08 ..= 92233720368547758.07"), "{message}");
}

/// Issue 16: `--users 18446744073709551615` panicked with "capacity overflow" and 10^9 users
/// aborted in the allocator; runs beyond memory are refused before anything is generated.
#[test]
fn synthetic_users_beyond_memory_are_refused_with_the_memory_they_need() {
    for users in [usize::MAX, 1 << 50] {
        let refused = Dataset::synthetic(users, 1, &["x1"]).unwrap_err();
        assert!(matches!(&refused, StatsError::Capacity(m) if m.contains("users of synthetic data")), "{refused}");
    }
}

/// `with_progress`: the users of every plaintext modulus are counted, round by round.
#[test]
fn progress_counts_the_users_of_every_round() {
    use pimhe_workloads::progress::Recorded;
    use std::sync::Arc;

    let data = Dataset::synthetic(5, 1, &["x1"]).unwrap();
    let recorder = Arc::new(Recorded::default());
    let plan = StatsPlan::new(Statistic::Mean, data, N, BgvContext::max_plain_bits(N).unwrap())
        .unwrap()
        .with_users_per_round(2)
        .with_progress(recorder.clone());
    let moduli = plan.plain_moduli().len();
    let backend = CpuBackend::new(Some(2)).unwrap();
    let report =
        run::<BgvContext, _>(&plan, N, &plan.plain_moduli().iter().map(|_| &backend).collect::<Vec<_>>()).unwrap();
    assert!(report.aggregates_exact);
    let mut expected = vec![format!("start {} users encrypted", 5 * moduli)];
    for _ in 0..moduli {
        expected.extend(["advance 2", "advance 2", "advance 1"].map(String::from));
    }
    expected.push("finish".into());
    assert_eq!(recorder.calls(), expected);
}
