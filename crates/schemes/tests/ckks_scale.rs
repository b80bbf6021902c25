//! CKKS scale misuse is refused, not decrypted to garbage (issue 24, item 10): a rescaling
//! that would take the scale below [`CkksParameters::MIN_SCALE`] (after an integer constant,
//! which keeps the scale, or a second rescaling), an encoding or encryption at a scale too
//! small for any precision, and products, encryptions or dropped ciphertexts whose scale
//! reaches half the modulus of their level. And the legitimate boundary still works: a chain
//! of products down to the last level, at the smallest base the builder accepts and at the
//! smallest scale, decrypts to the plaintext computation.

use std::collections::BTreeMap;
use std::sync::Arc;

use num_complex::Complex64;
use pimhe_exec::CpuBackend;
use pimhe_math::Sampler;
use pimhe_schemes::ckks::linear::LinearTransform;
use pimhe_schemes::ckks::*;
use pimhe_schemes::SchemeError;

/// Keys for one (insecure, test-size) parameter set, and its encoder.
struct Fixture {
    backend: CpuBackend,
    ctx: Arc<CkksContext>,
    secret: SecretKey,
    relin: RelinKey,
    encoder: Encoder,
}

impl Fixture {
    fn new(depth: usize, scale_bits: u32, first_prime_bits: u32) -> Self {
        let params = CkksParameters::builder(2048)
            .depth(depth)
            .scale_bits(scale_bits)
            .first_prime_bits(first_prime_bits)
            .allow_insecure()
            .build()
            .unwrap();
        let backend = CpuBackend::new(Some(2)).unwrap();
        let ctx = CkksContext::new(params).unwrap();
        let mut keygen = KeyGenerator::with_sampler(&backend, &ctx, Sampler::from_seed_u64(5));
        let secret = keygen.secret_key().unwrap();
        let relin = keygen.relin_key(&secret).unwrap();
        Self { encoder: Encoder::new(&ctx), backend, ctx, secret, relin }
    }

    /// N = 2048, depth 3, scale 2^40 (two primes per level) on a 60-bit base.
    fn standard() -> Self {
        Self::new(3, 40, 60)
    }

    fn encrypt_plain(&self, plain: CkksPlaintext) -> Result<CiphertextBatch<CpuBackend>, SchemeError> {
        let mut encryptor =
            Encryptor::with_secret_key(&self.backend, &self.secret).unwrap().with_sampler(Sampler::from_seed_u64(6));
        encryptor.encrypt(&[plain])
    }

    fn encrypt(&self, values: &[f64]) -> CiphertextBatch<CpuBackend> {
        self.encrypt_plain(self.encoder.encode_real(values, self.ctx.default_scale()).unwrap()).unwrap()
    }

    fn decrypt(&self, batch: &CiphertextBatch<CpuBackend>) -> Vec<f64> {
        let decryptor = Decryptor::new(&self.backend, &self.secret).unwrap();
        self.encoder.decode_real(&decryptor.decrypt(batch).unwrap()[0]).unwrap()
    }

    fn evaluator(&self) -> Evaluator<'_, CpuBackend> {
        Evaluator::new(&self.backend, &self.ctx).with_relin_key(&self.relin).unwrap()
    }
}

/// The InvalidParameters message, or a panic naming what came instead.
fn refused<T: std::fmt::Debug>(result: Result<T, SchemeError>) -> String {
    match result {
        Err(SchemeError::InvalidParameters(message)) => message,
        other => panic!("expected InvalidParameters, got {other:?}"),
    }
}

/// Asserts a refusal for a scale below the floor: what is wrong and what is allowed.
fn assert_too_small(message: &str) {
    assert!(message.contains("too small for CKKS precision"), "{message}");
    assert!(message.contains("allowed scales are at least 2^19"), "{message}");
}

/// Asserts a refusal for a scale the level's modulus cannot hold.
fn assert_too_large(message: &str, level: usize) {
    assert!(message.contains(&format!("at level {level}")), "{message}");
    assert!(message.contains("not even a value of magnitude 1 would fit"), "{message}");
    assert!(message.contains("allowed scales are below Q/2"), "{message}");
}

fn max_error(got: &[f64], expected: &[f64]) -> f64 {
    got.iter().zip(expected).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max)
}

#[test]
fn rescaling_what_was_not_multiplied_is_refused() {
    let f = Fixture::standard();
    let ev = f.evaluator();
    let x = f.encrypt(&[1.0, 2.0, 3.0]);
    // The case: an integer constant costs no level and keeps the scale 2^40, so the
    // rescaling would leave 2^0 and [1, 2, 3] would decrypt as about [-1935, -1887, -1488].
    let doubled = ev.mul_const(&x, Complex64::new(2.0, 0.0)).unwrap();
    assert_eq!(doubled.tag().scale, x.tag().scale);
    let message = refused(ev.rescale(&doubled));
    assert_too_small(&message);
    // 2^40 divided by two primes near 2^20 each: about 2^0.
    assert!(message.contains("the rescaled ciphertext has scale 2^-0.00"), "{message}");
    assert!(message.contains("an integer mul_const keeps the scale"), "{message}");
    // A fresh ciphertext, and a product rescaled twice (2^40 -> 2^-40 in the issue).
    assert_too_small(&refused(ev.rescale(&x)));
    let product = ev.multiply_relin_rescale(&x, &x).unwrap();
    assert_too_small(&refused(ev.rescale(&product)));
    // What the integer product means: 2 x, one rescaling away only after a real product.
    assert!(max_error(&f.decrypt(&doubled)[..3], &[2.0, 4.0, 6.0]) < 1e-6);
    let halved = ev.rescale(&ev.mul_const(&doubled, Complex64::new(0.5, 0.0)).unwrap()).unwrap();
    assert!(max_error(&f.decrypt(&halved)[..3], &[1.0, 2.0, 3.0]) < 1e-6);
}

#[test]
fn encodings_and_encryptions_at_a_scale_too_small_are_refused() {
    let f = Fixture::standard();
    for scale in [1.0, 2f64.powi(18), CkksParameters::MIN_SCALE * 0.999] {
        let message = refused(f.encoder.encode_real(&[1.0, 2.0, 3.0], scale));
        assert_too_small(&message);
        assert!(message.contains("the encoding has scale"), "{scale}: {message}");
    }
    // Not a number is refused as well, whatever the comparison's order.
    assert_too_small(&refused(f.encoder.encode_real(&[1.0], f64::NAN)));
    // The floor itself is accepted, and decrypts to the values (about 2^-5 precision at N =
    // 2048: the floor is a bound on misuse, not a recommended scale).
    let low = f.encrypt_plain(f.encoder.encode_real(&[1.0, 2.0, 3.0], CkksParameters::MIN_SCALE).unwrap()).unwrap();
    assert!(max_error(&f.decrypt(&low)[..3], &[1.0, 2.0, 3.0]) < 0.1);

    // A plaintext loaded from an encoding skips the encoder: encryption and mul_plain check
    // the scale again. The encoding's scale field, 2^40, rewritten to 1.
    let plain = f.encoder.encode_real(&[1.0, 2.0, 3.0], f.ctx.default_scale()).unwrap();
    let mut bytes = plain.to_bytes(&f.ctx).unwrap();
    let field = f.ctx.default_scale().to_le_bytes();
    let at = bytes.windows(8).position(|w| w == field).expect("the scale is in the encoding");
    bytes[at..at + 8].copy_from_slice(&1f64.to_le_bytes());
    let loaded = CkksPlaintext::from_bytes(&f.ctx, &bytes).unwrap();
    assert_eq!(loaded.scale(), 1.0);
    let message = refused(f.encrypt_plain(loaded.clone()));
    assert_too_small(&message);
    assert!(message.contains("the encryption has scale 2^0.00"), "{message}");
    let x = f.encrypt(&[1.0]);
    assert!(refused(f.evaluator().mul_plain(&x, &[loaded])).contains("the plaintext has scale 2^0.00"));
}

#[test]
fn scales_the_level_cannot_hold_are_refused() {
    let f = Fixture::new(1, 40, 60);
    let ev = f.evaluator();
    let (top, last) = (f.ctx.max_level(), f.ctx.min_level());
    // Encryption: the top modulus is about 2^100, so a scale of 2^100 leaves no room.
    let plain = f.encoder.encode_real(&[1.0], 2f64.powi(100)).unwrap();
    assert_too_large(&refused(f.encrypt_plain(plain)), top);

    let x = f.encrypt(&[1.0, 2.0, 3.0]);
    // A square of 2^80 fits the top level (2^100), not the base (2^60) ...
    let at_last = ev.drop_to_level(&x, last).unwrap();
    let message = refused(ev.multiply(&at_last, &at_last));
    assert_too_large(&message, last);
    assert!(message.contains("the product would have scale 2^80.00"), "{message}");
    // ... whether the square is dropped there, or multiplied by a plaintext there.
    let square = ev.multiply(&x, &x).unwrap();
    assert_too_large(&refused(ev.drop_to_level(&square, last)), last);
    let plain = f.encoder.encode_real(&[0.5], f.ctx.default_scale()).unwrap();
    assert_too_large(&refused(ev.mul_plain(&at_last, std::slice::from_ref(&plain))), last);
    // A product waiting for its rescaling times anything more: 2^120 at the top level.
    let square = ev.relinearize(&square).unwrap();
    assert_too_large(&refused(ev.multiply(&square, &x)), top);
    assert_too_large(&refused(ev.mul_plain(&square, &[plain])), top);
    assert_too_large(&refused(ev.mul_const(&square, Complex64::new(0.5, 0.0))), top);
    let diagonal = BTreeMap::from([(0, vec![Complex64::new(0.5, 0.0); f.ctx.max_slots()])]);
    let transform = LinearTransform::from_diagonals(f.ctx.max_slots(), diagonal).unwrap();
    assert_too_large(&refused(ev.linear_transform(&square, &transform)), top);
    // The same square, rescaled first, is the usual product.
    let product = ev.rescale(&square).unwrap();
    assert!(max_error(&f.decrypt(&product)[..3], &[1.0, 4.0, 9.0]) < 1e-5);
}

/// Multiplies `x` by `y` down to the last level, checking every product against the plaintext
/// product; returns the largest error seen.
fn chain_to_the_last_level(f: &Fixture, x: &[f64], y: &[f64]) -> f64 {
    let ev = f.evaluator();
    let (mut acc, cy) = (f.encrypt(x), f.encrypt(y));
    let mut expected = x.to_vec();
    let mut worst = 0.0f64;
    while f.ctx.depth_left(acc.level()) > 0 {
        acc = ev.multiply_relin_rescale(&acc, &cy).unwrap();
        expected.iter_mut().zip(y).for_each(|(e, y)| *e *= y);
        worst = worst.max(max_error(&f.decrypt(&acc)[..x.len()], &expected));
    }
    assert_eq!(acc.level(), f.ctx.min_level());
    worst
}

#[test]
fn the_legitimate_boundary_still_works() {
    let x = [0.9, -0.75, 0.5, 0.999, -1.0, 0.0, 0.25, -0.6];
    let y = [0.8, 0.95, -1.0, 0.999, -1.0, 0.5, -0.3, 0.7];
    // The smallest base the builder accepts (two bits above the scale): the last product
    // (2^80 over the base and one level, about 2^82) still holds values of magnitude 1; one
    // and two primes per level. And the smallest scale a set may have, whose scale drifts with
    // its primes to about 2^19.9 at the last level: above the floor, thanks to its bit of slack.
    for (depth, scale_bits, first) in [(3, 40, 42), (3, 25, 27), (3, 58, 60), (4, 20, 30)] {
        let f = Fixture::new(depth, scale_bits, first);
        // Each product adds about 2^10.5 / scale (rescaling and relinearization at N = 2048);
        // a product read at a wrong scale or level would be off by the values themselves.
        let bound = 2f64.powi(13 - scale_bits as i32);
        let error = chain_to_the_last_level(&f, &x, &y);
        assert!(error < bound, "2^{scale_bits} on a {first}-bit base: error {error:e} above {bound:e}");
    }
    // One bit less of base is refused when the parameters are built, not at the last product.
    let message = refused(CkksParameters::builder(2048).scale_bits(40).first_prime_bits(41).allow_insecure().build());
    assert!(message.contains("must exceed the scale's 40 bits by at least 2"), "{message}");
}
