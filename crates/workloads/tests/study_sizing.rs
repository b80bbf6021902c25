//! What a study picks for its submissions from its bounds: the smallest preset and the fewest
//! primes whose worst-case sum decrypts exactly. The oracle is exact plaintext arithmetic: the
//! sum of the most users at the largest values is built without encrypting them all, as one
//! submission added to itself (double and add), so every user's noise has the same sign and
//! size: the sum's noise is the bound's worst case for that encryption, not a random walk.

use pimhe_exec::CpuBackend;
use pimhe_math::Sampler;
use pimhe_schemes::bgv::BgvContext;
use pimhe_schemes::rlwe::{CiphertextBatch, Evaluator};
use pimhe_workloads::stats::study::{Aggregates, Identifier, Study, StudySpec};
use pimhe_workloads::stats::Statistic;

/// Today's (before the choice) two-column mean: values up to 1000, up to a million users.
fn two_column_mean(n: Option<usize>) -> StudySpec {
    StudySpec { n, ..StudySpec::new(Statistic::Mean, &["a", "b"], 0, 1000, 1_000_000, 8192) }
}

fn declare(spec: &StudySpec) -> Study {
    Study::new::<BgvContext>(spec, Identifier::random(&mut Sampler::from_seed_u64(1))).unwrap()
}

/// `copies` times `c`, by doubling and adding (`x - x` is exactly zero, so `x + (x - x)` is
/// an exact copy).
fn times(
    eval: &Evaluator<'_, CpuBackend, BgvContext>,
    c: &CiphertextBatch<CpuBackend, BgvContext>,
    copies: usize,
) -> CiphertextBatch<CpuBackend, BgvContext> {
    let copy = |x: &CiphertextBatch<CpuBackend, BgvContext>| eval.add(x, &eval.sub(x, x).unwrap()).unwrap();
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
    // The server multiplies for a variance: N = 8192 and every prime, as before the choice.
    let variance = declare(&StudySpec { n: None, ..StudySpec::new(Statistic::Variance, &["a"], 0, 1000, 1000, 8192) });
    let sizing = variance.sizing::<BgvContext>(false).unwrap();
    assert_eq!((variance.n, variance.submission_primes, sizing.n_from), (8192, sizing.data_primes, "default"));
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
