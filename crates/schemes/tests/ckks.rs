//! CKKS end to end on the CPU backend: every operation against the same computation on the
//! plaintext complex vectors, with precision bounds tight enough that a wrong rotation index, a
//! wrong scale or a dropped prime breaks them; rotations in both directions, conjugation,
//! hoisting; and the errors of bad input.

use std::sync::Arc;

use num_complex::Complex64;
use pimhe_exec::CpuBackend;
use pimhe_math::Sampler;
use pimhe_schemes::ckks::linear::LinearTransform;
use pimhe_schemes::ckks::*;
use pimhe_schemes::SchemeError;

/// Keys and helpers for one parameter set.
struct Fixture {
    backend: CpuBackend,
    ctx: Arc<CkksContext>,
    secret: SecretKey,
    public: PublicKey,
    relin: RelinKey,
    galois: GaloisKeys,
    sampler: Sampler,
}

/// Rotation steps the fixture has keys for: every power of two in both directions and a few
/// others.
fn steps(slots: usize) -> Vec<i64> {
    let mut steps: Vec<i64> = (0..slots.trailing_zeros()).flat_map(|k| [1i64 << k, -(1i64 << k)]).collect();
    steps.extend([3, 5, -7, 12]);
    steps
}

impl Fixture {
    fn new(params: CkksParameters, seed: u64) -> Self {
        let backend = CpuBackend::new(Some(2)).unwrap();
        let ctx = CkksContext::new(params).unwrap();
        let mut keygen = KeyGenerator::with_sampler(&backend, &ctx, Sampler::from_seed_u64(seed));
        let secret = keygen.secret_key().unwrap();
        let public = keygen.public_key(&secret).unwrap();
        let relin = keygen.relin_key(&secret).unwrap();
        let galois = keygen.galois_keys(&secret, &ctx.galois_elements(&steps(ctx.max_slots()), true)).unwrap();
        Self { backend, ctx, secret, public, relin, galois, sampler: Sampler::from_seed_u64(seed + 1) }
    }

    /// N = 4096, depth 3, scale 2^40 in two primes per level (insecure: a test size).
    fn small() -> Self {
        Self::new(CkksParameters::builder(4096).depth(3).scale_bits(40).allow_insecure().build().unwrap(), 7)
    }

    fn random(&mut self, slots: usize) -> Vec<Complex64> {
        let mut unit = || f64::from(self.sampler.next_u32()) / f64::from(u32::MAX) * 2.0 - 1.0;
        (0..slots).map(|_| Complex64::new(unit(), unit())).collect()
    }

    fn encrypt(&mut self, values: &[Vec<Complex64>], slots: usize) -> CiphertextBatch<CpuBackend> {
        let encoder = Encoder::new(&self.ctx);
        let plains: Vec<_> =
            values.iter().map(|v| encoder.encode_sparse(v, slots, self.ctx.default_scale()).unwrap()).collect();
        let seed = u64::from(self.sampler.next_u32());
        let mut encryptor =
            Encryptor::with_public_key(&self.backend, &self.public).unwrap().with_sampler(Sampler::from_seed_u64(seed));
        encryptor.encrypt(&plains).unwrap()
    }

    fn decrypt(&self, batch: &CiphertextBatch<CpuBackend>) -> Vec<Vec<Complex64>> {
        let encoder = Encoder::new(&self.ctx);
        let decryptor = Decryptor::new(&self.backend, &self.secret).unwrap();
        decryptor.decrypt(batch).unwrap().iter().map(|p| encoder.decode(p).unwrap()).collect()
    }

    fn evaluator(&self) -> Evaluator<'_, CpuBackend> {
        Evaluator::new(&self.backend, &self.ctx)
            .with_relin_key(&self.relin)
            .unwrap()
            .with_galois_keys(&self.galois)
            .unwrap()
    }
}

/// The largest slot error of `got` against `expected`.
fn max_error(got: &[Vec<Complex64>], expected: &[Vec<Complex64>]) -> f64 {
    got.iter().zip(expected).flat_map(|(g, e)| g.iter().zip(e).map(|(a, b)| (a - b).norm())).fold(0.0, f64::max)
}

fn assert_close(got: &[Vec<Complex64>], expected: &[Vec<Complex64>], bound: f64, what: &str) {
    let error = max_error(got, expected);
    assert!(error < bound, "{what}: error {error:e} above {bound:e}");
}

fn map(values: &[Vec<Complex64>], f: impl Fn(usize, usize) -> Complex64) -> Vec<Vec<Complex64>> {
    values.iter().enumerate().map(|(k, v)| (0..v.len()).map(|i| f(k, i)).collect()).collect()
}

fn rotated(v: &[Complex64], steps: i64) -> Vec<Complex64> {
    let n = v.len() as i64;
    (0..n).map(|i| v[(i + steps).rem_euclid(n) as usize]).collect()
}

#[test]
fn encrypt_decrypt_and_linear_operations_match_plaintext() {
    let mut f = Fixture::small();
    let slots = f.ctx.max_slots();
    let (x, y) =
        ((0..2).map(|_| f.random(slots)).collect::<Vec<_>>(), (0..2).map(|_| f.random(slots)).collect::<Vec<_>>());
    let (cx, cy) = (f.encrypt(&x, slots), f.encrypt(&y, slots));
    let m: Vec<Complex64> = f.random(slots);
    assert_close(&f.decrypt(&cx), &x, 1e-6, "encrypt/decrypt");
    let ev = f.evaluator();
    assert_close(&f.decrypt(&ev.add(&cx, &cy).unwrap()), &map(&x, |k, i| x[k][i] + y[k][i]), 1e-6, "add");
    assert_close(&f.decrypt(&ev.sub(&cx, &cy).unwrap()), &map(&x, |k, i| x[k][i] - y[k][i]), 1e-6, "sub");
    assert_close(&f.decrypt(&ev.negate(&cx).unwrap()), &map(&x, |k, i| -x[k][i]), 1e-6, "negate");
    let c = Complex64::new(0.75, -2.5);
    assert_close(&f.decrypt(&ev.add_const(&cx, c).unwrap()), &map(&x, |k, i| x[k][i] + c), 1e-6, "add_const");
    // An integer constant costs no level.
    let tripled = ev.mul_const(&cx, Complex64::new(-3.0, 0.0)).unwrap();
    assert_eq!(tripled.level(), cx.level());
    assert_close(&f.decrypt(&tripled), &map(&x, |k, i| x[k][i] * -3.0), 3e-6, "mul by -3");
    for c in [Complex64::new(0.3, 0.0), Complex64::new(0.25, 1.5)] {
        let scaled = ev.rescale(&ev.mul_const(&cx, c).unwrap()).unwrap();
        assert_eq!(scaled.level(), cx.level() - 2, "one level of two primes");
        assert!((scaled.tag().scale / cx.tag().scale - 1.0).abs() < 1e-6, "the scale comes back");
        assert_close(&f.decrypt(&scaled), &map(&x, |k, i| x[k][i] * c), 1e-5, "mul_const");
    }
    let encoder = Encoder::new(&f.ctx);
    let plain = encoder.encode(&m, f.ctx.default_scale()).unwrap();
    assert_close(
        &f.decrypt(&ev.add_plain(&cx, std::slice::from_ref(&plain)).unwrap()),
        &map(&x, |k, i| x[k][i] + m[i]),
        1e-6,
        "add_plain",
    );
    let product = ev.rescale(&ev.mul_plain(&cx, &[plain]).unwrap()).unwrap();
    assert_close(&f.decrypt(&product), &map(&x, |k, i| x[k][i] * m[i]), 1e-5, "mul_plain");
    let total: Vec<Complex64> = (0..slots).map(|i| x[0][i] + x[1][i]).collect();
    assert_close(&f.decrypt(&ev.sum(&cx).unwrap()), &[total], 2e-6, "sum over the batch");
}

#[test]
fn a_constant_adds_exactly_its_rounded_coefficients() {
    // The decrypted polynomials differ by exactly round(c Delta) in the constant coefficient
    // and round(Im c Delta) in that of X^(N/2), nothing else: the oracle for both of
    // add_const's paths (a real constant added residue-wise, a complex one encoded).
    let mut f = Fixture::small();
    let slots = f.ctx.max_slots();
    let x: Vec<_> = (0..2).map(|_| f.random(slots)).collect();
    let cx = f.encrypt(&x, slots);
    let ev = f.evaluator();
    let decryptor = Decryptor::new(&f.backend, &f.secret).unwrap();
    let before = decryptor.decrypt(&cx).unwrap();
    let n = f.ctx.degree();
    for c in [Complex64::new(0.75, 0.0), Complex64::new(-3.25, 0.0), Complex64::new(0.5, -1.5)] {
        let sum = ev.add_const(&cx, c).unwrap();
        assert_eq!((sum.level(), sum.tag().scale), (cx.level(), cx.tag().scale));
        let after = decryptor.decrypt(&sum).unwrap();
        let scale = cx.tag().scale;
        for (a, b) in after.iter().zip(&before) {
            let difference: Vec<i128> = a.coefficients().iter().zip(b.coefficients()).map(|(a, b)| a - b).collect();
            let mut expected = vec![0i128; n];
            expected[0] = (c.re * scale).round() as i128;
            expected[n / 2] = (c.im * scale).round() as i128;
            assert_eq!(difference, expected, "add_const({c})");
        }
    }
}

#[test]
fn multiplication_chain_to_the_depth_keeps_precision() {
    let mut f = Fixture::small();
    let slots = f.ctx.max_slots();
    let x = vec![f.random(slots)];
    let y = vec![f.random(slots)];
    let (cx, cy) = (f.encrypt(&x, slots), f.encrypt(&y, slots));
    let ev = f.evaluator();
    let mut acc = ev.drop_to_level(&cx, cx.level()).unwrap();
    let mut expected = x.clone();
    for level in 0..f.ctx.params().depth() {
        acc = ev.multiply_relin_rescale(&acc, &cy).unwrap();
        expected = map(&expected, |k, i| expected[k][i] * y[k][i]);
        // |x|, |y| <= sqrt 2; each product adds about 2^-25 relative error at scale 2^40.
        assert_close(&f.decrypt(&acc), &expected, 1e-5, &format!("product {}", level + 1));
        // Reading the wrong scale (a dropped prime not divided out) would be off by 2^20.
        assert!((acc.tag().scale.log2() - 40.0).abs() < 0.1);
    }
    assert_eq!(acc.level(), f.ctx.min_level());
    assert!(matches!(ev.rescale(&acc), Err(SchemeError::LevelExhausted)));
}

#[test]
fn rotations_in_both_directions_conjugation_and_hoisting() {
    let mut f = Fixture::small();
    for slots in [f.ctx.max_slots(), 64, 8] {
        let x = vec![f.random(slots)];
        let cx = f.encrypt(&x, slots);
        let ev = f.evaluator();
        let all = steps(f.ctx.max_slots());
        let usable: Vec<i64> = all.iter().copied().filter(|s| s.unsigned_abs() < slots as u64).collect();
        for &s in &usable {
            let got = f.decrypt(&ev.rotate(&cx, s).unwrap());
            assert_close(&got, &[rotated(&x[0], s)], 1e-5, &format!("rotate {s} of {slots} slots"));
        }
        let hoisted = ev.rotate_hoisted(&cx, &usable).unwrap();
        for (&s, h) in usable.iter().zip(&hoisted) {
            let plain = f.decrypt(&ev.rotate(&cx, s).unwrap());
            assert_close(&f.decrypt(h), &plain, 1e-5, &format!("hoisted rotate {s}"));
        }
        let conjugate = f.decrypt(&ev.conjugate(&cx).unwrap());
        assert_close(&conjugate, &[x[0].iter().map(|z| z.conj()).collect()], 1e-5, "conjugate");
        let total: Complex64 = x[0].iter().sum();
        assert_close(
            &f.decrypt(&ev.sum_slots(&cx).unwrap()),
            &[vec![total; slots]],
            1e-5 * slots as f64,
            "sum over slots",
        );
    }
}

#[test]
fn a_rotation_that_moves_nothing_is_a_copy_without_a_key() {
    let mut f = Fixture::small();
    let slots = f.ctx.max_slots();
    let x = vec![f.random(slots)];
    let cx = f.encrypt(&x, slots);
    // An evaluator with no Galois key at all.
    let ev = Evaluator::new(&f.backend, &f.ctx);
    let original = f.decrypt(&cx);
    for steps in [0, slots as i64, -2 * slots as i64] {
        let same = ev.rotate(&cx, steps).unwrap();
        assert_eq!((same.level(), same.tag()), (cx.level(), cx.tag()));
        assert_eq!(f.decrypt(&same), original, "rotate {steps}: the same ciphertext");
    }
    assert_eq!(ev.rotate_hoisted(&cx, &[0, 0]).unwrap().len(), 2);
    // With keys, hoisting mixes the copies with real rotations in the order asked.
    let ev = f.evaluator();
    let mixed = ev.rotate_hoisted(&cx, &[1, 0, -1]).unwrap();
    for (h, s) in mixed.iter().zip([1, 0, -1]) {
        assert_close(&f.decrypt(h), &[rotated(&x[0], s)], 1e-5, &format!("hoisted {s}"));
    }
    // A rotation that moves slots still needs its key.
    assert!(Evaluator::new(&f.backend, &f.ctx).rotate(&cx, 1).is_err());
}

#[test]
fn linear_transform_matches_the_matrix_product() {
    let mut f = Fixture::small();
    for n in [64usize, 16] {
        let matrix: Vec<Vec<Complex64>> = (0..n).map(|_| f.random(n)).collect();
        let transform = LinearTransform::from_matrix(&matrix).unwrap();
        let x = vec![f.random(n)];
        let cx = f.encrypt(&x, n);
        let mut keygen = KeyGenerator::with_sampler(&f.backend, &f.ctx, Sampler::from_seed_u64(n as u64));
        let keys = keygen.galois_keys(&f.secret, &f.ctx.galois_elements(&transform.rotations(), false)).unwrap();
        let ev = f.evaluator().with_galois_keys(&keys).unwrap();
        let y = ev.linear_transform(&cx, &transform).unwrap();
        assert_eq!(y.level(), cx.level() - 2);
        let expected: Vec<Complex64> = (0..n).map(|i| (0..n).map(|j| matrix[i][j] * x[0][j]).sum()).collect();
        let reference = transform.apply_plain(&x[0]);
        assert!(reference.iter().zip(&expected).all(|(a, b)| (a - b).norm() < 1e-12), "apply_plain is M x");
        // Entries of size sqrt 2 summed over n terms; every term carries the fresh noise.
        assert_close(&f.decrypt(&y), &[expected], 1e-5 * n as f64, &format!("{n} x {n} transform"));
    }
}

#[test]
fn different_levels_and_scales_are_aligned_or_refused() {
    let mut f = Fixture::small();
    let slots = f.ctx.max_slots();
    let (x, y) = (vec![f.random(slots)], vec![f.random(slots)]);
    let (cx, cy) = (f.encrypt(&x, slots), f.encrypt(&y, slots));
    let ev = f.evaluator();
    // A product (one level down, scale Delta^2 / q q') plus a fresh ciphertext: aligned.
    let product = ev.multiply_relin_rescale(&cx, &cy).unwrap();
    let sum = ev.add(&product, &cx).unwrap();
    assert_eq!(sum.level(), product.level());
    assert_close(&f.decrypt(&sum), &map(&x, |k, i| x[k][i] * y[k][i] + x[k][i]), 1e-6, "x y + x");
    let difference = ev.sub(&cy, &product).unwrap();
    assert_close(&f.decrypt(&difference), &map(&x, |k, i| y[k][i] - x[k][i] * y[k][i]), 1e-6, "y - x y");
    // A product still waiting for its rescaling (scale about Delta^2) plus a ciphertext two
    // levels below: one rescaling cannot reconcile the scales without losing the message.
    let unrescaled = ev.relinearize(&ev.multiply(&cx, &cy).unwrap()).unwrap();
    let lower = ev.multiply_relin_rescale(&product, &cx).unwrap();
    assert!(lower.level() < product.level());
    let err = ev.add(&unrescaled, &lower).unwrap_err().to_string();
    assert!(err.contains("rescale that operand first"), "{err}");
    let sum = ev.add(&ev.rescale(&unrescaled).unwrap(), &lower).unwrap();
    let expected = map(&x, |k, i| x[k][i] * y[k][i] + x[k][i] * y[k][i] * x[k][i]);
    assert_close(&f.decrypt(&sum), &expected, 1e-5, "x y + x y x");
    // Same level, a scale off by a factor 3: refused, not garbage.
    let tripled = ev.mul_const(&cx, Complex64::new(3.0, 0.0)).unwrap();
    let encoder = Encoder::new(&f.ctx);
    let off = encoder.encode_real(&[1.0], f.ctx.default_scale() * 3.0).unwrap();
    let err = ev.add_plain(&tripled, &[off]).unwrap_err().to_string();
    assert!(err.contains("scale mismatch"), "{err}");
}

#[test]
fn bad_input_gets_clear_errors() {
    let mut f = Fixture::small();
    let slots = f.ctx.max_slots();
    let encoder = Encoder::new(&f.ctx);
    let scale = f.ctx.default_scale();
    let too_long = vec![Complex64::new(1.0, 0.0); slots + 1];
    assert!(matches!(encoder.encode(&too_long, scale), Err(SchemeError::TooManyValues { .. })));
    for bad in [f64::NAN, f64::INFINITY] {
        let err = encoder.encode_real(&[0.0, bad], scale).unwrap_err().to_string();
        assert!(err.contains("index 1") || err.contains("[1]"), "{err}");
    }
    let overflow = encoder.encode_real(&[1e30], 2f64.powi(110)).unwrap_err().to_string();
    assert!(overflow.contains("overflow"), "{overflow}");
    let x = vec![f.random(slots)];
    let cx = f.encrypt(&x, slots);
    // A rotation without its key.
    let bare = Evaluator::new(&f.backend, &f.ctx);
    let err = bare.rotate(&cx, 1).unwrap_err().to_string();
    assert!(err.contains("no Galois key"), "{err}");
    let err = f.evaluator().rotate(&cx, 9).unwrap_err().to_string();
    assert!(err.contains("no Galois key"), "{err}");
    // Objects of other parameters.
    let other =
        Fixture::new(CkksParameters::builder(4096).depth(2).scale_bits(25).allow_insecure().build().unwrap(), 9);
    let err = other.evaluator().add(&cx, &cx).unwrap_err();
    assert!(matches!(err, SchemeError::ParameterMismatch(_)), "{err}");
    // Insecure parameters without asking.
    assert!(matches!(CkksParameters::builder(4096).depth(3).build(), Err(SchemeError::Insecure { .. })));
    // Mismatched slot counts.
    let short = f.random(8);
    let sparse = f.encrypt(&[short], 8);
    let err = f.evaluator().add(&cx, &sparse).unwrap_err().to_string();
    assert!(err.contains("slots"), "{err}");
    // An approximate scheme has no noise budget to measure.
    let err = Decryptor::new(&f.backend, &f.secret).unwrap().noise_budget(&cx).unwrap_err();
    assert!(matches!(&err, SchemeError::InvalidParameters(m) if m.contains("measure precision instead")), "{err}");
}
