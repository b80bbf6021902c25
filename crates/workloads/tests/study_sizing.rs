//! What a study picks for its submissions from its bounds: the smallest preset and the fewest
//! primes whose worst-case aggregate decrypts exactly. The oracle is exact plaintext arithmetic:
//! the aggregate of the most users at the largest values is built without encrypting them all,
//! as one user's aggregate added to itself (double and add), so every user's noise has the same
//! sign and size: the aggregate's noise is the bound's worst case for that encryption, not a
//! random walk. For products this is the server's real work on one user (multiply, relinearize)
//! copied U times: legitimate because the bound is linear in U (it counts one relinearization per
//! user, the most the server's rounds and shards can make).

use pimhe_exec::CpuBackend;
use pimhe_math::Sampler;
use pimhe_schemes::bfv::BfvContext;
use pimhe_schemes::bgv::BgvContext;
use pimhe_schemes::encoder::ExactScheme;
use pimhe_schemes::rlwe::{CiphertextBatch, Evaluator};
use pimhe_workloads::stats::study::{Aggregates, Identifier, Study, StudyScheme, StudySpec};
use pimhe_workloads::stats::Statistic;

/// Today's (before the choice) two-column mean: values up to 1000, up to a million users.
fn two_column_mean(n: Option<usize>) -> StudySpec {
    StudySpec { n, ..StudySpec::new(Statistic::Mean, &["a", "b"], 0, 1000, 1_000_000, 8192) }
}

fn declare(spec: &StudySpec) -> Study {
    declare_with::<BgvContext>(spec)
}

fn declare_with<S: ExactScheme>(spec: &StudySpec) -> Study {
    Study::new::<S>(spec, Identifier::random(&mut Sampler::from_seed_u64(1))).unwrap()
}

/// `statistic` over `columns`, values up to 1000, up to a million users, N picked.
fn picked(statistic: Statistic, columns: &[&str]) -> StudySpec {
    StudySpec { n: None, ..StudySpec::new(statistic, columns, 0, 1000, 1_000_000, 8192) }
}

/// `copies` times `c`, by doubling and adding (`x - x` is exactly zero, so `x + (x - x)` is
/// an exact copy).
fn times<S: ExactScheme>(
    eval: &Evaluator<'_, CpuBackend, S>,
    c: &CiphertextBatch<CpuBackend, S>,
    copies: usize,
) -> CiphertextBatch<CpuBackend, S> {
    let copy = |x: &CiphertextBatch<CpuBackend, S>| eval.add(x, &eval.sub(x, x).unwrap()).unwrap();
    let (mut result, mut power, mut k) = (None, copy(c), copies);
    while k > 0 {
        if k & 1 == 1 {
            result = Some(match result {
                None => copy(&power),
                Some(r) => eval.add(&r, &power).unwrap(),
            });
        }
        k >>= 1;
        if k > 0 {
            power = eval.add(&power, &power).unwrap();
        }
    }
    result.expect("copies >= 1")
}

#[test]
fn a_two_column_mean_picks_n_4096_two_primes_and_a_quarter_of_the_bytes() {
    let study = declare(&two_column_mean(None));
    assert_eq!((study.n, study.submission_primes, study.plain_moduli.len()), (4096, 2, 2), "{study:?}");
    let sizing = study.sizing::<BgvContext>(false).unwrap();
    assert_eq!(sizing.n_from, "smallest");
    assert_eq!(sizing.default_ciphertext_bytes, 614_400);
    // The file: keys, then one submission, serialized.
    let cpu = CpuBackend::new(Some(2)).unwrap();
    let (_, keys) = study.keygen::<BgvContext, _>(&cpu, Sampler::from_seed_u64(7)).unwrap();
    let submission =
        study.encrypt_row::<BgvContext, _>(&cpu, &keys, &[1000, -1000], Sampler::from_seed_u64(8)).unwrap();
    let bytes = submission.to_bytes(&cpu).unwrap().len();
    assert!(bytes <= 614_536 / 4, "{bytes} bytes per submission");
    assert_eq!(sizing.ciphertext_bytes, 110_592);
    assert!(bytes as u64 - sizing.ciphertext_bytes < 512, "{bytes} vs {}", sizing.ciphertext_bytes);
    // A declared N is kept, with the fewest primes at it.
    let declared = declare(&two_column_mean(Some(8192)));
    assert_eq!((declared.n, declared.submission_primes), (8192, 2), "{declared:?}");
}

#[test]
fn the_most_users_at_the_largest_values_decrypt_exactly() {
    let cpu = CpuBackend::new(Some(2)).unwrap();
    let study = declare(&two_column_mean(None));
    let (secret, keys) = study.keygen::<BgvContext, _>(&cpu, Sampler::from_seed_u64(7)).unwrap();
    let users = study.max_users;
    for (row, seed) in [([1000, -1000], 8), ([-1000, 1000], 9), ([1000, 1000], 10)] {
        let submission = study.encrypt_row::<BgvContext, _>(&cpu, &keys, &row, Sampler::from_seed_u64(seed)).unwrap();
        assert!(submission.ciphertexts.iter().flatten().all(|c| c.level() + 1 == study.submission_primes));
        let ciphertexts = submission
            .ciphertexts
            .iter()
            .zip(&keys.public)
            .map(|(per_modulus, key)| {
                let eval = Evaluator::new(&cpu, key.context());
                per_modulus.iter().map(|c| times(&eval, c, users)).collect()
            })
            .collect();
        let aggregates = Aggregates { study: study.id, users, ciphertexts };
        let result = study.decrypt::<BgvContext, _>(&cpu, &secret, &aggregates).unwrap();
        assert_eq!(result.users, users);
        let means: Vec<f64> = result.estimates.iter().map(|e| e.value).collect();
        assert_eq!(means, vec![row[0] as f64, row[1] as f64], "{row:?}");
        eprintln!("{row:?} x {users}: {} bits of noise budget left", result.noise_budget_bits);
        assert!(result.noise_budget_bits >= 1, "{row:?}: {} bits left", result.noise_budget_bits);
    }
}

#[test]
fn bounds_past_the_small_presets_get_the_bigger_ones() {
    // 10^12 users of values up to 10^9: three moduli, and noise past N = 4096's chain.
    let big = declare(&StudySpec {
        n: None,
        ..StudySpec::new(Statistic::Mean, &["a"], 0, 1_000_000_000, 1_000_000_000_000, 8192)
    });
    assert_eq!(big.n, 8192, "{big:?}");
    assert!(big.submission_primes > 2, "{big:?}");
    // A BFV server that multiplies has no bound: N = 8192 and every prime, as before the choice.
    let variance = declare_with::<BfvContext>(&picked(Statistic::Variance, &["a"]));
    let sizing = variance.sizing::<BfvContext>(false).unwrap();
    assert_eq!((variance.n, variance.submission_primes, sizing.n_from), (8192, sizing.data_primes, "default"));
    assert!(variance.noise_bound::<BfvContext>(sizing.data_primes).unwrap().is_none());
}

/// `study` picked its N and primes by the bound: it holds there, fails with one prime fewer (or,
/// where every prime is kept, at the next smaller preset's full chain). Returns the sizing's
/// (bytes per submission, bytes at N = 8192 with every prime).
fn picked_by_the_bound<S: ExactScheme>(study: &Study) -> (u64, u64) {
    let sizing = study.sizing::<S>(false).unwrap();
    eprintln!("{:?} {:?}: {}", study.statistic, study.columns, sizing.why);
    assert_eq!(sizing.n_from, "smallest", "{sizing:?}");
    let kept = study.submission_primes;
    assert!(study.noise_bound::<S>(kept).unwrap().unwrap().holds());
    if kept > 1 && kept < sizing.data_primes {
        let fewer = study.noise_bound::<S>(kept - 1).unwrap().unwrap();
        assert!(!fewer.holds(), "{kept} - 1 primes: {fewer:?}");
    } else {
        let smaller = study.n / 2;
        let at_smaller = Study::new::<S>(&StudySpec { n: Some(smaller), ..study.spec() }, study.id).unwrap();
        let all = at_smaller.submission_primes;
        assert!(!at_smaller.noise_bound::<S>(all).unwrap().unwrap().holds(), "N = {smaller}, {all} primes");
    }
    (sizing.ciphertext_bytes, sizing.default_ciphertext_bytes)
}

#[test]
fn products_and_bfv_pick_the_smallest_preset_and_fewest_primes_the_bound_allows() {
    let variance = declare(&picked(Statistic::Variance, &["a", "b"]));
    let linreg = declare(&picked(Statistic::Linreg, &["x1", "x2", "x3", "y"]));
    let bfv_mean = declare_with::<BfvContext>(&picked(Statistic::Mean, &["a", "b"]));
    for (study, (bytes, before)) in [
        (&variance, picked_by_the_bound::<BgvContext>(&variance)),
        (&linreg, picked_by_the_bound::<BgvContext>(&linreg)),
        (&bfv_mean, picked_by_the_bound::<BfvContext>(&bfv_mean)),
    ] {
        eprintln!(
            "{} {:?} {:?}: N = {}, {} primes kept, {bytes} bytes of ciphertext per submission (before: {before})",
            study.scheme, study.statistic, study.columns, study.n, study.submission_primes
        );
        assert!(bytes <= before, "{bytes} > {before}");
    }
    // The products keep fewer primes than the chain has at N = 8192.
    assert_eq!((variance.n, linreg.n), (8192, 8192));
    assert!(variance.submission_primes < 5 && linreg.submission_primes < 5, "{variance:?} {linreg:?}");
}

/// The server's real work on one submission of each of `rows` (multiply, relinearize and sum as
/// the study runs it), each copied `users / rows.len()` times, decrypted: the estimates.
fn worst_case_estimates<S: ExactScheme + StudyScheme>(study: &Study, rows: &[Vec<i64>]) -> Vec<f64> {
    let cpu = CpuBackend::new(Some(2)).unwrap();
    let (secret, keys) = study.keygen::<S, _>(&cpu, Sampler::from_seed_u64(7)).unwrap();
    let copies = study.max_users / rows.len();
    let mut total: Option<Aggregates<CpuBackend, S>> = None;
    for (i, row) in rows.iter().enumerate() {
        let submission = study.encrypt_row::<S, _>(&cpu, &keys, row, Sampler::from_seed_u64(8 + i as u64)).unwrap();
        let one = study.aggregate::<S, _>(&cpu, &keys, [&submission]).unwrap();
        let ciphertexts: Vec<Vec<CiphertextBatch<CpuBackend, S>>> = one
            .ciphertexts
            .iter()
            .zip(&keys.public)
            .enumerate()
            .map(|(m, (per_modulus, key))| {
                let eval = Evaluator::new(&cpu, key.context());
                per_modulus
                    .iter()
                    .enumerate()
                    .map(|(a, c)| {
                        let copied = times(&eval, c, copies);
                        match &total {
                            None => copied,
                            Some(t) => eval.add(&t.ciphertexts[m][a], &copied).unwrap(),
                        }
                    })
                    .collect()
            })
            .collect();
        let users = copies * (i + 1);
        total = Some(Aggregates { study: study.id, users, ciphertexts });
    }
    let result = study.decrypt::<S, _>(&cpu, &secret, &total.unwrap()).unwrap();
    assert_eq!(result.users, copies * rows.len());
    eprintln!("{:?} x {}: {} bits of noise budget left", study.statistic, result.users, result.noise_budget_bits);
    result.estimates.iter().map(|e| e.value).collect()
}

#[test]
fn the_most_users_products_at_the_largest_values_decrypt_exactly() {
    // Half the users at (1000, -1000), half at (-1000, 1000): means 0, variances 10^6.
    let variance = declare(&picked(Statistic::Variance, &["a", "b"]));
    let rows = [vec![1000, -1000], vec![-1000, 1000]];
    assert_eq!(worst_case_estimates::<BgvContext>(&variance, &rows), vec![1e6, 1e6]);
    // Four corners of the cube at +-1000, y = x1: intercept 0, coefficients (1, 0, 0), R^2 = 1.
    let linreg = declare(&picked(Statistic::Linreg, &["x1", "x2", "x3", "y"]));
    let corners = [
        vec![1000, 1000, 1000, 1000],
        vec![1000, -1000, -1000, 1000],
        vec![-1000, 1000, -1000, -1000],
        vec![-1000, -1000, 1000, -1000],
    ];
    assert_eq!(worst_case_estimates::<BgvContext>(&linreg, &corners), vec![0.0, 1.0, 0.0, 0.0, 1.0]);
}

#[test]
fn a_bfv_mean_of_the_most_users_decrypts_exactly() {
    let mean = declare_with::<BfvContext>(&picked(Statistic::Mean, &["a", "b"]));
    let rows = [vec![1000, -1000], vec![1000, 1000]];
    assert_eq!(worst_case_estimates::<BfvContext>(&mean, &rows), vec![1000.0, 0.0]);
}

#[test]
fn a_submission_that_keeps_other_primes_is_refused() {
    let cpu = CpuBackend::new(Some(2)).unwrap();
    let study = declare(&two_column_mean(None));
    let (_, keys) = study.keygen::<BgvContext, _>(&cpu, Sampler::from_seed_u64(7)).unwrap();
    let honest = study.encrypt_row::<BgvContext, _>(&cpu, &keys, &[1, 2], Sampler::from_seed_u64(8)).unwrap();
    let mut full = study.clone();
    full.submission_primes = 3;
    let fresh = full.encrypt_row::<BgvContext, _>(&cpu, &keys, &[1, 2], Sampler::from_seed_u64(9)).unwrap();
    let message = study.aggregate::<BgvContext, _>(&cpu, &keys, [&honest, &fresh]).err().unwrap().to_string();
    assert!(
        message.contains("submission 1 holds a ciphertext of 3 primes; the study's submissions keep 2"),
        "{message}"
    );
    // And a study.json whose primes were edited is refused before anything is read against it.
    let message = full.validate::<BgvContext>().unwrap_err().to_string();
    assert!(message.contains("submissions of 3 ciphertext primes"), "{message}");
}

#[test]
fn a_bfv_product_study_picks_the_smallest_preset_its_measured_noise_budget_allows() {
    use pimhe_workloads::stats::study::{keygen_files, Overwrite};
    let cpu = CpuBackend::new(Some(2)).unwrap();
    let keygen = |spec: &StudySpec, name: &str| {
        let dir = std::env::temp_dir().join(format!("pimhe-measured-{}-{name}", std::process::id()));
        let (public, secret) = (dir.join("public"), dir.join("secret"));
        let outcome = keygen_files(&cpu, spec, "bfv", &public, &secret, Some(3), Overwrite::Force).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        outcome
    };
    // Small bounds: N = 4096 keeps budget for the products, and the worst case decrypts exactly.
    let small = StudySpec { n: None, ..StudySpec::new(Statistic::Variance, &["a", "b"], 0, 10, 100, 8192) };
    let outcome = keygen(&small, "small");
    assert_eq!((outcome.study.n, outcome.sizing.n_from), (4096, "measured"), "{}", outcome.sizing.why);
    let rows = [vec![10, -10], vec![-10, 10]];
    assert_eq!(worst_case_estimates::<BfvContext>(&outcome.study, &rows), vec![100.0, 100.0]);
    // The paper-sized bounds: N = 4096 fails keygen's check, so the default stays.
    let outcome = keygen(&picked(Statistic::Variance, &["a", "b"]), "large");
    assert_eq!((outcome.study.n, outcome.sizing.n_from), (8192, "default"), "{}", outcome.sizing.why);
    // A declared N is kept as declared.
    let declared = StudySpec { n: Some(8192), ..small };
    assert_eq!(keygen(&declared, "declared").study.n, 8192);
}
