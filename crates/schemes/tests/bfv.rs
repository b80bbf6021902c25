//! BFV end to end on the CPU backend, every result checked against the same computation done
//! slot-wise on the plaintext values modulo t. (The BEHZ steps themselves are unit-tested
//! against big integers in src/bfv/behz.rs; the PIM backend is compared with the CPU in
//! crates/pim/tests/runtime_backend.rs.)

use std::sync::Arc;

use pimhe_exec::CpuBackend;
use pimhe_math::Sampler;
use pimhe_schemes::bfv::*;
use pimhe_schemes::SchemeError;

struct Fixture {
    backend: CpuBackend,
    ctx: Arc<BfvContext>,
    secret: SecretKey,
    public: PublicKey,
    relin: Option<RelinKey>,
    encoder: BatchEncoder,
    sampler: Sampler,
}

impl Fixture {
    fn new(params: BfvParameters, seed: u64) -> Self {
        let backend = CpuBackend::new(Some(2)).unwrap();
        let ctx = BfvContext::new(params).unwrap();
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
        Self::new(BfvParameters::preset(n).unwrap(), n as u64)
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

    fn plains(&self, values: &[Vec<u64>]) -> Vec<Plaintext> {
        values.iter().map(|v| self.encoder.encode(v).unwrap()).collect()
    }

    fn encrypt(&mut self, values: &[Vec<u64>]) -> CiphertextBatch<CpuBackend> {
        let sampler = self.sampler.fork();
        let mut encryptor = Encryptor::with_public_key(&self.backend, &self.public).unwrap().with_sampler(sampler);
        encryptor.encrypt(&self.plains(values)).unwrap()
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
    for params in BfvParameters::presets() {
        let n = params.degree();
        let mut f = Fixture::new(params, n as u64);
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
    let batch = Encryptor::with_secret_key(&f.backend, &f.secret).unwrap().encrypt(&f.plains(&values)).unwrap();
    assert_eq!(f.decrypt(&batch).unwrap(), values);
    // Symmetric encryption has less noise than public-key encryption.
    let public_batch = f.encrypt(&values);
    assert!(f.budgets(&batch)[0] > f.budgets(&public_batch)[0]);
}

#[test]
fn linear_operations_match_plaintext() {
    for n in [4096, 8192] {
        let mut f = Fixture::preset(n);
        let t = f.t();
        let (a, b, m) = (f.random_vectors(3), f.random_vectors(3), f.random_vectors(3));
        let (ca, cb) = (f.encrypt(&a), f.encrypt(&b));
        let ev = f.evaluator();
        let plains = f.plains(&m);

        assert_eq!(f.decrypt(&ev.add(&ca, &cb).unwrap()).unwrap(), slotwise(&a, &b, t, |x, y| x + y), "N={n}");
        assert_eq!(f.decrypt(&ev.sub(&ca, &cb).unwrap()).unwrap(), slotwise(&a, &b, t, |x, y| x + t - y));
        let zero: Vec<Vec<u64>> = a.iter().map(|v| vec![0; v.len()]).collect();
        assert_eq!(f.decrypt(&ev.negate(&ca).unwrap()).unwrap(), slotwise(&zero, &a, t, |x, y| x + t - y));
        assert_eq!(f.decrypt(&ev.add_plain(&ca, &plains).unwrap()).unwrap(), slotwise(&a, &m, t, |x, y| x + y));
        let total: Vec<u64> = (0..a[0].len()).map(|slot| a.iter().map(|v| v[slot]).sum::<u64>() % t).collect();
        assert_eq!(f.decrypt(&ev.sum(&ca).unwrap()).unwrap(), vec![total], "sum over the batch");
        assert_eq!(f.decrypt(&ev.mul_plain(&ca, &plains).unwrap()).unwrap(), slotwise(&a, &m, t, |x, y| x * y));
        // One plaintext broadcast to every ciphertext of the batch.
        let broadcast = vec![m[0].clone(); 3];
        assert_eq!(
            f.decrypt(&ev.mul_plain(&ca, &plains[..1]).unwrap()).unwrap(),
            slotwise(&a, &broadcast, t, |x, y| x * y)
        );
        assert_eq!(
            f.decrypt(&ev.add_plain(&ca, &plains[..1]).unwrap()).unwrap(),
            slotwise(&a, &broadcast, t, |x, y| x + y)
        );
    }
}

#[test]
fn multiply_and_relinearize_match_plaintext() {
    // The presets (hybrid key switching with 2 special primes at N = 8192) and the longest q at
    // N = 8192 (one digit per prime, 180 bits, so a larger B).
    let sets = [BfvParameters::preset(4096), BfvParameters::preset(8192), BfvParameters::preset_with_dnum(8192, 6)];
    for (i, params) in sets.into_iter().enumerate() {
        let params = params.unwrap();
        let n = params.degree();
        let mut f = Fixture::new(params, i as u64);
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

        // A square, and a 3-component product combined with a fresh ciphertext.
        let square = ev.relinearize(&ev.multiply(&ca, &ca).unwrap()).unwrap();
        assert_eq!(f.decrypt(&square).unwrap(), slotwise(&a, &a, t, |x, y| x * y), "square, N={n}");
        let sum = ev.add(&product, &cb).unwrap();
        assert_eq!(f.decrypt(&sum).unwrap(), slotwise(&expected, &b, t, |x, y| x + y));
        let difference = ev.sub(&cb, &product).unwrap();
        assert_eq!(f.decrypt(&difference).unwrap(), slotwise(&b, &expected, t, |x, y| x + t - y));
    }
}

#[test]
fn multiplication_chain_runs_until_the_budget_is_spent_then_errors() {
    let mut f = Fixture::preset(8192);
    let t = f.t();
    let values = f.random_vectors(1);
    let mut current = f.encrypt(&values);
    let mut expected = values.clone();
    let mut successful = 0;
    let mut budget = f.budgets(&current)[0];
    loop {
        let operand = f.encrypt(&values);
        let ev = f.evaluator();
        let product = ev.relinearize(&ev.multiply(&current, &operand).unwrap()).unwrap();
        expected = slotwise(&expected, &values, t, |x, y| x * y);
        match f.decrypt(&product) {
            Ok(decrypted) => {
                assert_eq!(decrypted, expected, "product {} decrypted wrongly", successful + 1);
                let now = f.budgets(&product)[0];
                assert!(now < budget, "a product must consume budget: {budget} -> {now}");
                budget = now;
                successful += 1;
            }
            Err(SchemeError::NoiseBudgetExhausted { index: 0 }) => {
                assert_eq!(f.budgets(&product), vec![0]);
                break;
            }
            Err(other) => panic!("unexpected error {other}"),
        }
        assert!(successful < 20, "the budget never ran out");
        current = product;
    }
    assert!(successful >= 3, "N=8192 with a 150-bit q should support a few products, got {successful}");
}

#[test]
fn batches_and_sizes_are_checked() {
    let mut f = Fixture::preset(4096);
    let (a, b) = (f.random_vectors(2), f.random_vectors(3));
    let (ca, cb) = (f.encrypt(&a), f.encrypt(&b));
    let ev = f.evaluator();
    assert!(matches!(ev.add(&ca, &cb), Err(SchemeError::CountMismatch { left: 2, right: 3 })));
    assert!(matches!(ev.multiply(&ca, &cb), Err(SchemeError::CountMismatch { left: 2, right: 3 })));
    let plains = f.plains(&b);
    assert!(matches!(ev.mul_plain(&ca, &plains), Err(SchemeError::CountMismatch { left: 2, right: 3 })));
    assert!(matches!(ev.add_plain(&ca, &plains), Err(SchemeError::CountMismatch { left: 2, right: 3 })));

    let product = ev.multiply(&ca, &ca).unwrap();
    assert!(matches!(ev.multiply(&product, &ca), Err(SchemeError::WrongSize { operation: "multiply", .. })));
    assert!(matches!(ev.relinearize(&ca), Err(SchemeError::WrongSize { operation: "relinearize", .. })));
    let no_key = Evaluator::new(&f.backend, &f.ctx);
    assert!(matches!(no_key.relinearize(&product), Err(SchemeError::KeySwitchingUnavailable(_))));
    let mut encryptor = Encryptor::with_public_key(&f.backend, &f.public).unwrap();
    assert!(matches!(encryptor.encrypt(&[]), Err(SchemeError::InvalidParameters(_))));
    // The operands are sound (they decrypt to their plaintexts), so the errors above come from
    // the mismatched counts and sizes alone. (Borrowed immutably, the failed calls could not
    // have changed them.)
    assert_eq!(f.decrypt(&ca).unwrap(), a);
    assert_eq!(f.decrypt(&cb).unwrap(), b);
}

#[test]
fn objects_of_other_parameters_are_refused() {
    let mut f = Fixture::preset(4096);
    let mut g = Fixture::preset(8192);
    let ca = f.encrypt(&[vec![1, 2, 3]]);
    let cg = g.encrypt(&[vec![1, 2, 3]]);
    assert!(matches!(f.evaluator().add(&ca, &cg), Err(SchemeError::ParameterMismatch(_))));
    assert!(matches!(f.evaluator().multiply(&ca, &cg), Err(SchemeError::ParameterMismatch(_))));
    assert!(matches!(
        Decryptor::new(&f.backend, &f.secret).unwrap().decrypt(&cg),
        Err(SchemeError::ParameterMismatch(_))
    ));
    let foreign_plain = g.encoder.encode(&[1]).unwrap();
    assert!(matches!(
        f.evaluator().add_plain(&ca, std::slice::from_ref(&foreign_plain)),
        Err(SchemeError::ParameterMismatch(_))
    ));
    assert!(matches!(f.evaluator().mul_plain(&ca, &[foreign_plain]), Err(SchemeError::ParameterMismatch(_))));
    assert!(matches!(f.evaluator().with_relin_key(g.relin.as_ref().unwrap()), Err(SchemeError::ParameterMismatch(_))));
    let mut keygen = KeyGenerator::new(&f.backend, &f.ctx).unwrap();
    assert!(matches!(keygen.public_key(&g.secret), Err(SchemeError::ParameterMismatch(_))));
    assert_eq!(f.decrypt(&ca).unwrap()[0][..3], [1, 2, 3]);
}

#[test]
fn encoder_rejects_what_it_cannot_represent() {
    let f = Fixture::preset(4096);
    let t = f.t();
    assert!(matches!(f.encoder.encode(&vec![0; 4097]), Err(SchemeError::TooManyValues { len: 4097, slots: 4096 })));
    match f.encoder.encode(&[1, t]) {
        Err(SchemeError::PlaintextOverflow { index: 1, value, allowed }) => {
            assert_eq!(value, t as i128);
            assert!(allowed.contains("65537"), "{allowed}");
        }
        other => panic!("expected an overflow error, got {other:?}"),
    }
    // Signed values round-trip through encryption.
    let mut f = f;
    let values: Vec<i64> = (-100..100).collect();
    let plain = f.encoder.encode_signed(&values).unwrap();
    let mut encryptor = Encryptor::with_secret_key(&f.backend, &f.secret).unwrap().with_sampler(f.sampler.fork());
    let batch = encryptor.encrypt(&[plain]).unwrap();
    let decrypted = Decryptor::new(&f.backend, &f.secret).unwrap().decrypt(&batch).unwrap();
    assert_eq!(&f.encoder.decode_signed(&decrypted[0]).unwrap()[..200], &values[..]);
}

#[test]
fn parameter_validation() {
    assert!(matches!(BfvParameters::preset(512), Err(SchemeError::InvalidParameters(_))));
    let insecure = BfvParameters::new(4096, 65537, &[30; 4], Some(30)).unwrap();
    match BfvContext::new(insecure.clone()) {
        Err(SchemeError::Insecure { n: 4096, log_q: 150, max_log_q: 109 }) => {}
        Err(other) => panic!("expected an insecure-parameter error, got {other}"),
        Ok(_) => panic!("expected an insecure-parameter error, got a context"),
    }
    assert!(BfvContext::new(insecure.allow_insecure()).is_ok());
    // t must allow batching (t = 1 mod 2N) and be prime.
    assert!(BfvContext::new(BfvParameters::new(4096, 65536, &[27; 3], Some(27)).unwrap()).is_err());
    assert!(BfvContext::new(BfvParameters::new(4096, 257, &[27; 3], Some(27)).unwrap()).is_err());
    assert!(BfvParameters::with_primes(4096, 65537, vec![1_000_003], vec![], 1).is_err());
    for preset in BfvParameters::presets() {
        assert_eq!(preset.security_bits(), Some(128), "{preset}");
        assert!(BfvContext::new(preset).is_ok());
    }
}

#[test]
fn small_presets_refuse_relinearization_with_a_clear_error() {
    let f = Fixture::preset(2048);
    assert!(f.relin.is_none());
    let mut keygen = KeyGenerator::new(&f.backend, &f.ctx).unwrap();
    match keygen.relin_key(&f.secret) {
        Err(SchemeError::KeySwitchingUnavailable(message)) => assert!(message.contains("special prime"), "{message}"),
        Err(other) => panic!("expected KeySwitchingUnavailable, got {other}"),
        Ok(_) => panic!("N = 2048 has no special prime"),
    }
}
