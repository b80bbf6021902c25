//! BGV end to end on the CPU backend, every result checked against the same computation done
//! slot-wise on the plaintext values modulo t.

use std::sync::Arc;

use pimhe_exec::CpuBackend;
use pimhe_math::Sampler;
use pimhe_schemes::bgv::*;
use pimhe_schemes::SchemeError;
use pimhe_testkit::oracle::{evaluate, pow_mod};

struct Fixture {
    backend: CpuBackend,
    ctx: Arc<BgvContext>,
    secret: SecretKey,
    public: PublicKey,
    relin: Option<RelinKey>,
    encoder: BatchEncoder,
    sampler: Sampler,
}

impl Fixture {
    fn new(params: BgvParameters, seed: u64) -> Self {
        let backend = CpuBackend::new(Some(2)).unwrap();
        let ctx = BgvContext::new(params).unwrap();
        let (secret, public, relin) = {
            let mut keygen = KeyGenerator::with_sampler(&backend, &ctx, Sampler::from_seed_u64(seed));
            let secret = keygen.secret_key().unwrap();
            let public = keygen.public_key(&secret).unwrap();
            let relin = keygen.relin_key(&secret).ok();
            (secret, public, relin)
        };
        let encoder = BatchEncoder::new(&ctx);
        Self { backend, ctx, secret, public, relin, encoder, sampler: Sampler::from_seed_u64(seed + 1) }
    }

    fn preset(n: usize) -> Self {
        Self::new(BgvParameters::preset(n).unwrap(), n as u64)
    }

    fn t(&self) -> u64 {
        self.ctx.params().plain_modulus() as u64
    }

    fn random_vectors(&mut self, count: usize) -> Vec<Vec<u64>> {
        let t = *self.ctx.plain_modulus();
        (0..count)
            .map(|_| self.sampler.uniform_vec(&t, self.ctx.slots()).into_iter().map(u64::from).collect())
            .collect()
    }

    fn encrypt(&self, values: &[Vec<u64>]) -> CiphertextBatch<CpuBackend> {
        let plains: Vec<_> = values.iter().map(|v| self.encoder.encode(v).unwrap()).collect();
        let mut encryptor =
            Encryptor::with_public_key(&self.backend, &self.public).unwrap().with_sampler(Sampler::from_seed_u64(99));
        encryptor.encrypt(&plains).unwrap()
    }

    fn decrypt(&self, batch: &CiphertextBatch<CpuBackend>) -> Result<Vec<Vec<u64>>, SchemeError> {
        let decryptor = Decryptor::new(&self.backend, &self.secret).unwrap();
        Ok(decryptor.decrypt(batch)?.iter().map(|p| self.encoder.decode(p).unwrap()).collect())
    }

    fn budgets(&self, batch: &CiphertextBatch<CpuBackend>) -> Vec<u32> {
        Decryptor::new(&self.backend, &self.secret).unwrap().noise_budget(batch).unwrap()
    }

    fn evaluator(&self) -> Evaluator<'_, CpuBackend> {
        let evaluator = Evaluator::new(&self.backend, &self.ctx);
        match &self.relin {
            Some(key) => evaluator.with_relin_key(key).unwrap(),
            None => evaluator,
        }
    }
}

fn slotwise(a: &[Vec<u64>], b: &[Vec<u64>], t: u64, f: impl Fn(u64, u64) -> u64) -> Vec<Vec<u64>> {
    a.iter().zip(b).map(|(x, y)| x.iter().zip(y).map(|(&x, &y)| f(x, y) % t).collect()).collect()
}

#[test]
fn encrypt_decrypt_round_trip_every_preset() {
    for n in DEGREES {
        let mut f = Fixture::preset(n);
        let values = f.random_vectors(2);
        let batch = f.encrypt(&values);
        assert_eq!(f.decrypt(&batch).unwrap(), values, "N={n}");
        assert!(f.budgets(&batch).iter().all(|&b| b > 0), "N={n}");
    }
}

#[test]
fn secret_key_encryption_round_trip() {
    let mut f = Fixture::preset(4096);
    let values = f.random_vectors(3);
    let plains: Vec<_> = values.iter().map(|v| f.encoder.encode(v).unwrap()).collect();
    let mut encryptor = Encryptor::with_secret_key(&f.backend, &f.secret).unwrap();
    let batch = encryptor.encrypt(&plains).unwrap();
    assert_eq!(f.decrypt(&batch).unwrap(), values);
    // Symmetric encryption has less noise than public-key encryption.
    let public_batch = f.encrypt(&values);
    assert!(f.budgets(&batch)[0] > f.budgets(&public_batch)[0]);
}

#[test]
fn linear_operations_match_plaintext() {
    for n in [1024, 4096] {
        let mut f = Fixture::preset(n);
        let t = f.t();
        let (a, b, m) = (f.random_vectors(3), f.random_vectors(3), f.random_vectors(3));
        let (ca, cb) = (f.encrypt(&a), f.encrypt(&b));
        let ev = f.evaluator();
        let plains: Vec<_> = m.iter().map(|v| f.encoder.encode(v).unwrap()).collect();

        assert_eq!(f.decrypt(&ev.add(&ca, &cb).unwrap()).unwrap(), slotwise(&a, &b, t, |x, y| x + y));
        assert_eq!(f.decrypt(&ev.sub(&ca, &cb).unwrap()).unwrap(), slotwise(&a, &b, t, |x, y| x + t - y));
        let zero: Vec<Vec<u64>> = a.iter().map(|v| vec![0; v.len()]).collect();
        assert_eq!(f.decrypt(&ev.negate(&ca).unwrap()).unwrap(), slotwise(&zero, &a, t, |x, y| x + t - y));
        assert_eq!(f.decrypt(&ev.add_plain(&ca, &plains).unwrap()).unwrap(), slotwise(&a, &m, t, |x, y| x + y));
        let total: Vec<u64> = (0..a[0].len()).map(|slot| a.iter().map(|v| v[slot]).sum::<u64>() % t).collect();
        assert_eq!(f.decrypt(&ev.sum(&ca).unwrap()).unwrap(), vec![total], "sum over the batch");
        let product = ev.mul_plain(&ca, &plains).unwrap();
        if n == 1024 {
            // One 27-bit prime leaves ~4 bits after encryption: a product with a random
            // plaintext (~t sqrt(N)) must be reported as exhausted, never decrypted wrongly.
            assert!(matches!(f.decrypt(&product), Err(SchemeError::NoiseBudgetExhausted { .. })));
            continue;
        }
        assert_eq!(f.decrypt(&product).unwrap(), slotwise(&a, &m, t, |x, y| x * y));
        // One plaintext broadcast to every ciphertext of the batch.
        let broadcast = vec![m[0].clone(); 3];
        assert_eq!(
            f.decrypt(&ev.mul_plain(&ca, &plains[..1]).unwrap()).unwrap(),
            slotwise(&a, &broadcast, t, |x, y| x * y)
        );
    }
}

#[test]
fn multiply_relinearize_and_mod_switch_match_plaintext() {
    for n in [4096, 8192, 16384, 32768] {
        let mut f = Fixture::preset(n);
        let t = f.t();
        let (a, b) = (f.random_vectors(2), f.random_vectors(2));
        let (ca, cb) = (f.encrypt(&a), f.encrypt(&b));
        let ev = f.evaluator();
        let expected = slotwise(&a, &b, t, |x, y| x * y);

        let product = ev.multiply(&ca, &cb).unwrap();
        assert_eq!(product.size(), 3);
        assert_eq!(f.decrypt(&product).unwrap(), expected, "3-component product, N={n}");

        let relinearized = ev.relinearize(&product).unwrap();
        assert_eq!(relinearized.size(), 2);
        assert_eq!(f.decrypt(&relinearized).unwrap(), expected, "relinearized, N={n}");
        // Key switching through the special prime costs only a few bits.
        let (before, after) = (f.budgets(&product)[0], f.budgets(&relinearized)[0]);
        assert!(after + 3 >= before, "relinearization cost {before} -> {after} bits");

        let switched = ev.mod_switch_to_next(&relinearized).unwrap();
        assert_eq!(switched.level(), relinearized.level() - 1);
        assert_ne!(switched.correction_factor(), 1);
        assert_eq!(f.decrypt(&switched).unwrap(), expected, "after modulus switching, N={n}");

        // Fresh ciphertexts switched down combine with the product (different correction factors).
        let cc = ev.mod_switch_to(&ca, switched.level()).unwrap();
        let sum = ev.add(&switched, &cc).unwrap();
        assert_eq!(f.decrypt(&sum).unwrap(), slotwise(&expected, &a, t, |x, y| x + y));
        let plains: Vec<_> = b.iter().map(|v| f.encoder.encode(v).unwrap()).collect();
        let plus_plain = ev.add_plain(&switched, &plains).unwrap();
        assert_eq!(f.decrypt(&plus_plain).unwrap(), slotwise(&expected, &b, t, |x, y| x + y));
    }
}

#[test]
fn multiplication_chain_runs_until_the_budget_is_spent_then_errors() {
    let mut f = Fixture::preset(8192);
    let t = f.t();
    let values = f.random_vectors(1);
    let ev = f.evaluator();
    let fresh = f.encrypt(&values);
    let mut current = fresh;
    let mut expected = values.clone();
    let mut successful = 0;
    loop {
        let operand = ev.mod_switch_to(&f.encrypt(&values), current.level()).unwrap();
        let product = ev.relinearize(&ev.multiply(&current, &operand).unwrap()).unwrap();
        expected = slotwise(&expected, &values, t, |x, y| x * y);
        match f.decrypt(&product) {
            Ok(decrypted) => {
                assert_eq!(decrypted, expected, "product {} decrypted wrongly", successful + 1);
                successful += 1;
            }
            Err(SchemeError::NoiseBudgetExhausted { index: 0 }) => break,
            Err(other) => panic!("unexpected error {other}"),
        }
        current = match ev.mod_switch_to_next(&product) {
            Ok(next) => next,
            Err(SchemeError::LevelExhausted) => {
                // Out of primes: one more product at level 0 must exhaust the budget.
                let operand = ev.mod_switch_to(&f.encrypt(&values), 0).unwrap();
                let last = ev.relinearize(&ev.multiply(&product, &operand).unwrap()).unwrap();
                assert!(matches!(f.decrypt(&last), Err(SchemeError::NoiseBudgetExhausted { .. })));
                break;
            }
            Err(other) => panic!("unexpected error {other}"),
        };
    }
    assert!(successful >= 3, "N=8192 with 6 data primes should support a few products, got {successful}");
}

#[test]
fn batches_and_sizes_are_checked() {
    let mut f = Fixture::preset(4096);
    let (a, b) = (f.random_vectors(2), f.random_vectors(3));
    let ev = f.evaluator();
    let (ca, cb) = (f.encrypt(&a), f.encrypt(&b));
    assert!(matches!(ev.add(&ca, &cb), Err(SchemeError::CountMismatch { left: 2, right: 3 })));
    let plains: Vec<_> = b.iter().map(|v| f.encoder.encode(v).unwrap()).collect();
    assert!(matches!(ev.mul_plain(&ca, &plains), Err(SchemeError::CountMismatch { .. })));

    let low = ev.mod_switch_to_next(&ca).unwrap();
    let ca2 = f.encrypt(&a);
    assert!(matches!(ev.multiply(&low, &ca2), Err(SchemeError::LevelMismatch { .. })));
    assert!(matches!(ev.mod_switch_to(&low, 2), Err(SchemeError::LevelMismatch { .. })));
    let bottom = ev.mod_switch_to(&ca, 0).unwrap();
    assert!(matches!(ev.mod_switch_to_next(&bottom), Err(SchemeError::LevelExhausted)));

    let product = ev.multiply(&ca, &ca2).unwrap();
    assert!(matches!(ev.multiply(&product, &ca2), Err(SchemeError::WrongSize { operation: "multiply", .. })));
    assert!(matches!(ev.relinearize(&ca), Err(SchemeError::WrongSize { operation: "relinearize", .. })));
    let no_key = Evaluator::new(&f.backend, &f.ctx);
    assert!(matches!(no_key.relinearize(&product), Err(SchemeError::KeySwitchingUnavailable(_))));
    // The failed calls did not touch their inputs.
    assert_eq!(f.decrypt(&ca).unwrap(), a);
}

#[test]
fn objects_of_other_parameters_are_refused() {
    let f = Fixture::preset(4096);
    let g = Fixture::preset(8192);
    let ca = f.encrypt(&[vec![1, 2, 3]]);
    let cg = g.encrypt(&[vec![1, 2, 3]]);
    assert!(matches!(f.evaluator().add(&ca, &cg), Err(SchemeError::ParameterMismatch(_))));
    assert!(matches!(
        Decryptor::new(&f.backend, &f.secret).unwrap().decrypt(&cg),
        Err(SchemeError::ParameterMismatch(_))
    ));
    let foreign_plain = g.encoder.encode(&[1]).unwrap();
    assert!(matches!(f.evaluator().add_plain(&ca, &[foreign_plain]), Err(SchemeError::ParameterMismatch(_))));
    assert!(f.evaluator().with_relin_key(g.relin.as_ref().unwrap()).is_err());
}

#[test]
fn encoder_rejects_what_it_cannot_represent() {
    let f = Fixture::preset(4096);
    let t = f.t();
    assert!(matches!(f.encoder.encode(&vec![0; 4097]), Err(SchemeError::TooManyValues { len: 4097, slots: 4096 })));
    match f.encoder.encode(&[1, t]) {
        Err(SchemeError::PlaintextOverflow { index: 1, value, .. }) => assert_eq!(value, t as i128),
        other => panic!("expected an overflow error, got {other:?}"),
    }
    let half = (t as i64 - 1) / 2;
    assert!(f.encoder.encode_signed(&[half, -half]).is_ok());
    assert!(matches!(f.encoder.encode_signed(&[half + 1]), Err(SchemeError::PlaintextOverflow { index: 0, .. })));
    let values: Vec<i64> = (-100..100).collect();
    let decoded = f.encoder.decode_signed(&f.encoder.encode_signed(&values).unwrap()).unwrap();
    assert_eq!(&decoded[..200], &values[..]);
}

#[test]
fn slots_follow_the_two_row_layout() {
    // Slot i of row 0 is m(psi^(3^i)), of row 1 m(psi^(-3^i)); so the Galois map X -> X^3
    // rotates both rows of N/2 slots left by one. Checked by evaluating the polynomials directly.
    let f = Fixture::preset(4096);
    let half = f.ctx.slots() / 2;
    let values: Vec<u64> = (0..f.ctx.slots() as u64).collect();
    let plain = f.encoder.encode(&values).unwrap();
    let coefficients: Vec<u64> = plain.coefficients().iter().map(|&c| c as u64).collect();
    assert_eq!(evaluate_slots(&f, &coefficients), values);

    let basis = pimhe_ring::RingBasis::new(4096, &[f.ctx.params().plain_modulus()]).unwrap();
    let signed: Vec<i64> = coefficients.iter().map(|&c| c as i64).collect();
    let rotated = pimhe_ring::PolyBatch::from_signed(&basis, &[&signed]).unwrap().automorphism(3).unwrap();
    let rotated: Vec<u64> = rotated.poly_limb(0, 0).iter().map(|&c| c as u64).collect();
    let rotated_slots = evaluate_slots(&f, &rotated);
    for row in 0..2 {
        for i in 0..half {
            assert_eq!(rotated_slots[row * half + i], values[row * half + (i + 1) % half]);
        }
    }
}

/// The slots of a plaintext polynomial by their definition: its values at psi^(3^i) (row 0)
/// and psi^(-3^i) (row 1), evaluated directly with Horner's rule in plain `%` arithmetic.
fn evaluate_slots(f: &Fixture, coefficients: &[u64]) -> Vec<u64> {
    let t = f.t();
    let n = f.ctx.slots();
    let table = pimhe_math::NttTable::new(*f.ctx.plain_modulus(), n).unwrap();
    let psi = table.root() as u64;
    let two_n = 2 * n as u64;
    let eval = |exponent: u64| evaluate(coefficients, pow_mod(psi, exponent, t), t);
    let mut slots = vec![0; n];
    let mut power = 1u64;
    for i in 0..n / 2 {
        slots[i] = eval(power);
        slots[n / 2 + i] = eval(two_n - power);
        power = power * 3 % two_n;
    }
    slots
}

#[test]
fn parameter_validation() {
    assert!(matches!(BgvParameters::preset(512), Err(SchemeError::InvalidParameters(_))));
    let insecure = BgvParameters::new(4096, 65537, &[30; 4], Some(30)).unwrap();
    match BgvContext::new(insecure.clone()) {
        Err(SchemeError::Insecure { n: 4096, log_q: 150, max_log_q: 109 }) => {}
        Err(other) => panic!("expected an insecure-parameter error, got {other}"),
        Ok(_) => panic!("expected an insecure-parameter error, got a context"),
    }
    assert!(BgvContext::new(insecure.allow_insecure()).is_ok());
    // t must allow batching (t = 1 mod 2N) and be prime.
    assert!(BgvContext::new(BgvParameters::new(4096, 65536, &[27; 3], Some(27)).unwrap()).is_err());
    assert!(BgvContext::new(BgvParameters::new(4096, 257, &[27; 3], Some(27)).unwrap()).is_err());
    // A data prime that is not 1 mod 2N.
    assert!(BgvParameters::with_primes(4096, 65537, vec![1_000_003], vec![], 1).is_err());
    for preset in BgvParameters::presets() {
        assert_eq!(preset.security_bits(), Some(128), "{preset}");
        assert!(BgvContext::new(preset).is_ok());
    }
}

#[test]
fn dnum_is_validated_and_every_choice_stays_within_128_bits() {
    for n in [4096, 8192, 16384, 32768] {
        let longest = BgvParameters::preset_with_dnum(n, 1_000).err().unwrap().to_string();
        assert!(longest.contains("allowed 1..="), "{longest}");
        let levels_at_one_digit = BgvParameters::preset_with_dnum(n, 1).unwrap().data_primes().len().max(1);
        let max_log_q = pimhe_schemes::security::max_log_q_128(n).unwrap();
        let mut previous_levels = 0;
        for dnum in 1.. {
            let Ok(params) = BgvParameters::preset_with_dnum(n, dnum) else { break };
            // Every prime counts, the special primes included: the bit lengths of the prime
            // values stay within the standard's 128-bit bound (independently of total_bits).
            let all_bits: u32 =
                params.data_primes().iter().chain(params.special_primes()).map(|p| u32::BITS - p.leading_zeros()).sum();
            assert!(all_bits <= max_log_q, "{all_bits} bits > {max_log_q}: {params}");
            assert_eq!(params.security_bits(), Some(128), "{params}");
            assert_eq!(params.dnum(), dnum);
            let data = params.data_primes().len();
            assert!(params.special_primes().len() >= data.div_ceil(dnum), "{params}");
            // More digits never cost levels.
            assert!(data >= previous_levels && data >= levels_at_one_digit, "{params}");
            previous_levels = data;
            assert!(BgvContext::new(params).is_ok());
        }
        assert!(previous_levels > 0);
    }
    for dnum in [0, 6] {
        let err = BgvParameters::hybrid(8192, 65537, &[30; 5], 30, dnum).unwrap_err();
        assert!(err.to_string().contains("allowed 1..=5"), "{err}");
    }
    // Two digits of 2 primes need 2 special primes.
    let primes = BgvParameters::hybrid(8192, 65537, &[30; 4], 30, 2).unwrap().primes();
    let err = BgvParameters::with_primes(8192, 65537, primes[..4].to_vec(), primes[4..5].to_vec(), 2).unwrap_err();
    assert!(err.to_string().contains("at least 2 special primes are needed; got 1"), "{err}");
    assert!(BgvParameters::with_primes(8192, 65537, primes[..4].to_vec(), vec![], 2).is_err());
    assert!(BgvParameters::preset_with_dnum(2048, 1).unwrap_err().to_string().contains("N >= 4096"));
}

#[test]
fn hybrid_relinearization_matches_plaintext_at_every_dnum_and_level() {
    for dnum in [6, 3, 2, 1] {
        let mut f = Fixture::new(BgvParameters::preset_with_dnum(8192, dnum).unwrap(), 80 + dnum as u64);
        let t = f.t();
        let (a, b) = (f.random_vectors(2), f.random_vectors(2));
        let ev = f.evaluator();
        let expected = slotwise(&a, &b, t, |x, y| x * y);
        let (ca, cb) = (f.encrypt(&a), f.encrypt(&b));
        // At the top level and one level down (fewer primes in the last digit).
        for level in [ca.level(), ca.level() - 1] {
            let (x, y) = (ev.mod_switch_to(&ca, level).unwrap(), ev.mod_switch_to(&cb, level).unwrap());
            let product = ev.multiply(&x, &y).unwrap();
            let relinearized = ev.relinearize(&product).unwrap();
            assert_eq!(f.decrypt(&relinearized).unwrap(), expected, "dnum {dnum} level {level}");
            let (before, after) = (f.budgets(&product), f.budgets(&relinearized));
            for (before, after) in before.iter().zip(&after) {
                assert!(
                    after + 3 >= *before,
                    "dnum {dnum} level {level}: relinearization cost {before} -> {after} bits"
                );
            }
        }
    }
}

#[test]
fn small_presets_refuse_relinearization_with_a_clear_error() {
    let f = Fixture::preset(2048);
    assert!(f.relin.is_none());
    let mut keygen = KeyGenerator::new(&f.backend, &f.ctx).unwrap();
    assert!(matches!(keygen.relin_key(&f.secret), Err(SchemeError::KeySwitchingUnavailable(_))));
    // One multiplication without relinearization still works.
    let values = vec![(0..2048u64).collect::<Vec<_>>()];
    let ca = f.encrypt(&values);
    let product = f.evaluator().multiply(&ca, &ca).unwrap();
    let t = f.t();
    assert_eq!(f.decrypt(&product).unwrap(), slotwise(&values, &values, t, |x, y| x * y));
}
