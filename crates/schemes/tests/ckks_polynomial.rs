//! CKKS polynomial evaluation in the Chebyshev basis on the CPU backend: the plaintext
//! approximations against the functions they approximate, the encrypted evaluation against the
//! plaintext one (Clenshaw) slot by slot for degrees around and between powers of two, with
//! bounds tight enough that a wrong coefficient index breaks them, the levels consumed against
//! the stated depth, and the errors of bad input.

use std::sync::Arc;

use pimhe_exec::CpuBackend;
use pimhe_math::Sampler;
use pimhe_schemes::ckks::polynomial::{ChebyshevSeries, MAX_DEGREE};
use pimhe_schemes::ckks::*;
use pimhe_schemes::SchemeError;

/// Keys and helpers for N = 2048 (insecure: a test size).
struct Fixture {
    backend: CpuBackend,
    ctx: Arc<CkksContext>,
    secret: SecretKey,
    public: PublicKey,
    relin: RelinKey,
    sampler: Sampler,
}

impl Fixture {
    /// Depth 8 (a degree-127 series on a mapped interval) at scale 2^`scale_bits`, with a base
    /// of 20 bits more than the scale.
    fn new(scale_bits: u32) -> Self {
        let params = CkksParameters::builder(2048)
            .depth(8)
            .scale_bits(scale_bits)
            .first_prime_bits(scale_bits + 20)
            .allow_insecure()
            .build()
            .unwrap();
        let backend = CpuBackend::new(Some(2)).unwrap();
        let ctx = CkksContext::new(params).unwrap();
        let mut keygen = KeyGenerator::with_sampler(&backend, &ctx, Sampler::from_seed_u64(1));
        let secret = keygen.secret_key().unwrap();
        let public = keygen.public_key(&secret).unwrap();
        let relin = keygen.relin_key(&secret).unwrap();
        Self { backend, ctx, secret, public, relin, sampler: Sampler::from_seed_u64(3) }
    }

    /// A value uniform in [lo, hi].
    fn uniform(&mut self, (lo, hi): (f64, f64)) -> f64 {
        lo + (hi - lo) * f64::from(self.sampler.next_u32()) / f64::from(u32::MAX)
    }

    /// Every slot uniform in the interval, with both ends among them.
    fn inputs(&mut self, interval: (f64, f64)) -> Vec<f64> {
        let mut x: Vec<f64> = (0..self.ctx.max_slots()).map(|_| self.uniform(interval)).collect();
        (x[0], x[1]) = interval;
        x
    }

    fn encrypt(&self, values: &[f64]) -> CiphertextBatch<CpuBackend> {
        self.encrypt_at(values, self.ctx.default_scale())
    }

    fn encrypt_at(&self, values: &[f64], scale: f64) -> CiphertextBatch<CpuBackend> {
        let plain = Encoder::new(&self.ctx).encode_real(values, scale).unwrap();
        let mut encryptor =
            Encryptor::with_public_key(&self.backend, &self.public).unwrap().with_sampler(Sampler::from_seed_u64(2));
        encryptor.encrypt(&[plain]).unwrap()
    }

    fn decrypt(&self, batch: &CiphertextBatch<CpuBackend>) -> Vec<f64> {
        let decryptor = Decryptor::new(&self.backend, &self.secret).unwrap();
        Encoder::new(&self.ctx).decode_real(&decryptor.decrypt(batch).unwrap()[0]).unwrap()
    }

    fn evaluator(&self) -> Evaluator<'_, CpuBackend> {
        Evaluator::new(&self.backend, &self.ctx).with_relin_key(&self.relin).unwrap()
    }

    /// p on encrypted `x`, checked to consume exactly `p.depth()` levels and to come back on
    /// the input's scale; the decrypted slots.
    fn evaluate(&self, x: &[f64], p: &ChebyshevSeries) -> Vec<f64> {
        self.evaluate_at(x, p, self.ctx.default_scale())
    }

    /// [`Fixture::evaluate`] with `x` encrypted at `scale`.
    fn evaluate_at(&self, x: &[f64], p: &ChebyshevSeries, scale: f64) -> Vec<f64> {
        self.evaluate_with(x, p, scale, None)
    }

    /// [`Fixture::evaluate_at`] in `levels` (evaluate_polynomial_in_levels) where given.
    fn evaluate_with(&self, x: &[f64], p: &ChebyshevSeries, scale: f64, levels: Option<usize>) -> Vec<f64> {
        let cx = self.encrypt_at(x, scale);
        let ev = self.evaluator();
        let result = match levels {
            None => ev.evaluate_polynomial(&cx, p),
            Some(levels) => ev.evaluate_polynomial_in_levels(&cx, p, levels),
        }
        .unwrap();
        let per_level = self.ctx.params().primes_per_level();
        let consumed = levels.unwrap_or(p.depth());
        assert_eq!(result.level(), cx.level() - consumed * per_level, "degree {}: levels consumed", p.degree());
        assert!((result.tag().scale / cx.tag().scale - 1.0).abs() < 1e-9, "degree {}: scale", p.degree());
        self.decrypt(&result)
    }
}

/// The largest |got_i - f(x_i)|.
fn max_error(got: &[f64], x: &[f64], f: impl Fn(f64) -> f64) -> f64 {
    got.iter().zip(x).map(|(g, &x)| (g - f(x)).abs()).fold(0.0, f64::max)
}

/// sum c_k cos(k acos y): the series by definition, independent of Clenshaw.
fn by_definition(p: &ChebyshevSeries, x: f64) -> f64 {
    let (a, b) = p.interval();
    let y = ((2.0 * x - a - b) / (b - a)).clamp(-1.0, 1.0);
    p.coefficients().iter().enumerate().map(|(k, c)| c * (k as f64 * y.acos()).cos()).sum()
}

/// A named approximation, the function it approximates and an error bound.
type Approximation = (&'static str, ChebyshevSeries, fn(f64) -> f64, f64);

fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

#[test]
fn plaintext_approximations_converge_and_clenshaw_matches_the_definition() {
    let cases: [Approximation; 5] = [
        ("sigmoid [-8, 8] degree 31", ChebyshevSeries::sigmoid((-8.0, 8.0), 31).unwrap(), sigmoid, 1e-5),
        ("sigmoid [-8, 8] degree 63", ChebyshevSeries::sigmoid((-8.0, 8.0), 63).unwrap(), sigmoid, 1e-9),
        ("exp [-1, 1] degree 12", ChebyshevSeries::exp((-1.0, 1.0), 12).unwrap(), f64::exp, 1e-12),
        ("inverse [1, 8] degree 31", ChebyshevSeries::inverse((1.0, 8.0), 31).unwrap(), |x| 1.0 / x, 1e-9),
        ("inverse [-8, -1] degree 31", ChebyshevSeries::inverse((-8.0, -1.0), 31).unwrap(), |x| 1.0 / x, 1e-9),
    ];
    for (what, p, f, bound) in cases {
        let error = p.max_error_on(f, 4001);
        assert!(error < bound, "{what}: error {error:e} above {bound:e}");
        let (a, b) = p.interval();
        for i in 0..=100 {
            let x = a + (b - a) * f64::from(i) / 100.0;
            assert!((p.evaluate_plain(x) - by_definition(&p, x)).abs() < 1e-12, "{what}: Clenshaw at {x}");
        }
    }
    // Interpolation is exact on polynomials of its degree: T_3 on [-1, 1] is 4x^3 - 3x.
    let t3 = ChebyshevSeries::approximate(|x| 4.0 * x * x * x - 3.0 * x, (-1.0, 1.0), 5).unwrap();
    assert_eq!(t3.degree(), 3, "the vanishing c_4, c_5 are exact zeros: {:?}", t3.coefficients());
    assert!(t3.coefficients().iter().enumerate().all(|(k, &c)| (c - f64::from(u8::from(k == 3))).abs() < 1e-14));
    // The odd part of the sigmoid has exact zeros at the even indices.
    let s = ChebyshevSeries::sigmoid((-8.0, 8.0), 31).unwrap();
    assert!((s.coefficients()[0] - 0.5).abs() < 1e-15);
    assert!(s.coefficients().iter().skip(2).step_by(2).all(|&c| c == 0.0));
}

#[test]
fn depth_is_ceil_log2_of_degree_plus_one_and_one_for_a_non_integer_map() {
    let series = |degree: usize, interval| {
        let mut c = vec![0.5; degree + 1];
        c[degree] = 1.0;
        ChebyshevSeries::from_coefficients(c, interval).unwrap().depth()
    };
    let table =
        [(0, 0), (1, 1), (2, 2), (3, 2), (4, 3), (7, 3), (8, 4), (15, 4), (16, 5), (27, 5), (31, 5), (63, 6), (127, 7)];
    for (degree, depth) in table {
        assert_eq!(series(degree, (-1.0, 1.0)), depth, "degree {degree} on [-1, 1]");
        assert_eq!(series(degree, (0.0, 1.0)), depth, "degree {degree} on [0, 1]: y = 2x - 1 is free");
        let mapped = if degree < 2 { depth } else { depth + 1 };
        assert_eq!(series(degree, (-8.0, 8.0)), mapped, "degree {degree} on [-8, 8]: y = x/8 costs a level");
    }
    // Trailing zeros do not count.
    assert_eq!(ChebyshevSeries::from_coefficients(vec![1.0, 2.0, 0.0, 0.0], (-1.0, 1.0)).unwrap().degree(), 1);
}

/// What CKKS noise may add to p(x): an operation adds up to about 2^16.5 / scale at N = 2048
/// (the two-prime rescaling dominates), and an error d in y moves T_k by up to k^2 d at the
/// ends of the interval (|T_k'| <= k^2): 2^17 / scale per unit of 1 + sum |c_k| max(1, k^2).
/// The measured errors stay below a quarter of it.
fn noise_bound(p: &ChebyshevSeries, scale_bits: u32) -> f64 {
    let weight: f64 = p.coefficients().iter().enumerate().map(|(k, c)| c.abs() * (k * k).max(1) as f64).sum();
    2f64.powi(17 - scale_bits as i32) * (1.0 + weight)
}

/// A series of the given degree with coefficients of magnitude 0.1 .. 1 and random signs, so
/// that every T_k matters.
fn random_series(f: &mut Fixture, degree: usize, interval: (f64, f64)) -> ChebyshevSeries {
    let c = (0..=degree)
        .map(|_| f.uniform((0.1, 1.0)) * if f.sampler.next_u32().is_multiple_of(2) { 1.0 } else { -1.0 })
        .collect();
    ChebyshevSeries::from_coefficients(c, interval).unwrap()
}

/// The largest slot difference between two plaintext series on `x`.
fn distance(p: &ChebyshevSeries, q: &ChebyshevSeries, x: &[f64]) -> f64 {
    x.iter().map(|&x| (p.evaluate_plain(x) - q.evaluate_plain(x)).abs()).fold(0.0, f64::max)
}

/// An interval and the degrees evaluated on it.
type Degrees = ((f64, f64), &'static [usize]);

#[test]
fn encrypted_evaluation_matches_clenshaw_slot_by_slot_for_every_degree() {
    // Degrees around and between powers of two; a mapped interval (y = (x - 1) / 4 costs a
    // level), [-1, 1] and [0, 1] (y = 2x - 1: free). At 2^40 the bound stays ten times below
    // the smallest misplaced coefficient up to degree 63; 2^50 takes degree 127.
    let runs: [(u32, &[Degrees]); 2] = [
        (
            40,
            &[
                ((-3.0, 5.0), &[1, 2, 3, 4, 7, 8, 15, 16, 27, 31, 63]),
                ((-1.0, 1.0), &[1, 2, 3, 7, 8, 31, 63]),
                ((0.0, 1.0), &[5, 27]),
            ],
        ),
        (50, &[((-3.0, 5.0), &[27, 127]), ((-1.0, 1.0), &[127])]),
    ];
    for (scale_bits, cases) in runs {
        let mut f = Fixture::new(scale_bits);
        for &(interval, degrees) in cases {
            for &degree in degrees {
                let what = format!("degree {degree} on {interval:?} at 2^{scale_bits}");
                let p = random_series(&mut f, degree, interval);
                let x = f.inputs(interval);
                let got = f.evaluate(&x, &p);
                let error = max_error(&got, &x, |x| p.evaluate_plain(x));
                let bound = noise_bound(&p, scale_bits);
                assert!(error < bound, "{what}: error {error:e} above {bound:e}");
                // Not vacuous: the top coefficient on T_(d-1) instead of T_d, or every
                // coefficient one index up, moves some slot by ten bounds or more.
                let mut c = p.coefficients().to_vec();
                c.swap(degree, degree - 1);
                c[degree] = 0.0;
                let moved = ChebyshevSeries::from_coefficients(c, interval).unwrap();
                let mut c = p.coefficients().to_vec();
                c.insert(0, 0.0);
                let shifted = ChebyshevSeries::from_coefficients(c, interval).unwrap();
                for wrong in [moved, shifted] {
                    let d = distance(&p, &wrong, &x);
                    assert!(d > 10.0 * bound, "{what}: a wrong index moves the slots by {d:e} only, bound {bound:e}");
                }
            }
        }
    }
}

#[test]
fn ready_approximations_hold_on_encrypted_slots() {
    let mut f = Fixture::new(40);
    let cases: [Approximation; 3] = [
        ("sigmoid on [-8, 8], degree 31", ChebyshevSeries::sigmoid((-8.0, 8.0), 31).unwrap(), sigmoid, 1e-4),
        ("exp on [-1, 1], degree 12", ChebyshevSeries::exp((-1.0, 1.0), 12).unwrap(), f64::exp, 1e-5),
        ("1/x on [1, 8], degree 31", ChebyshevSeries::inverse((1.0, 8.0), 31).unwrap(), |x| 1.0 / x, 1e-5),
    ];
    for (what, p, function, wanted) in cases {
        let x = f.inputs(p.interval());
        let got = f.evaluate(&x, &p);
        // The approximation's own error on these inputs, plus what the noise may add.
        let approximation = max_error(&x.iter().map(|&x| p.evaluate_plain(x)).collect::<Vec<_>>(), &x, function);
        let bound = approximation + noise_bound(&p, 40);
        let error = max_error(&got, &x, function);
        assert!(error < bound, "{what}: error {error:e} above {bound:e}");
        assert!(bound < wanted, "{what}: the bound {bound:e} itself should be below {wanted:e}");
    }
}

#[test]
fn results_of_one_depth_add_and_a_constant_costs_no_level() {
    let mut f = Fixture::new(40);
    let interval = (-2.0, 2.0);
    let x = f.inputs(interval);
    // Two series of one depth land on one level and the input's scale: their sum needs no
    // adjustment; a shallower one is brought down by the addition itself.
    let p = random_series(&mut f, 15, interval);
    let q = random_series(&mut f, 9, interval);
    let r = random_series(&mut f, 3, interval);
    let cx = f.encrypt(&x);
    let ev = f.evaluator();
    assert_eq!((p.depth(), q.depth(), r.depth()), (5, 5, 3));
    let (cp, cq, cr) = (
        ev.evaluate_polynomial(&cx, &p).unwrap(),
        ev.evaluate_polynomial(&cx, &q).unwrap(),
        ev.evaluate_polynomial(&cx, &r).unwrap(),
    );
    assert_eq!(cp.level(), cq.level());
    assert_eq!(cp.tag().scale, cq.tag().scale);
    let sum = ev.sub(&ev.add(&cp, &cq).unwrap(), &cr).unwrap();
    let expected = |x: f64| p.evaluate_plain(x) + q.evaluate_plain(x) - r.evaluate_plain(x);
    let bound = noise_bound(&p, 40) + noise_bound(&q, 40) + 2.0 * noise_bound(&r, 40);
    let error = max_error(&f.decrypt(&sum), &x, expected);
    assert!(error < bound, "p + q - r: error {error:e} above {bound:e}");

    // An input off the default scale comes back on its own scale (the powers are brought to
    // the default one on the way).
    let p = random_series(&mut f, 7, interval);
    let got = f.evaluate_at(&x, &p, 2f64.powi(34));
    let (error, bound) = (max_error(&got, &x, |x| p.evaluate_plain(x)), noise_bound(&p, 34));
    assert!(error < bound, "input at 2^34: error {error:e} above {bound:e}");

    // Degree 0, given with trailing zeros: the constant in every slot, no level consumed.
    let constant = ChebyshevSeries::from_coefficients(vec![0.7, 0.0, 0.0], interval).unwrap();
    assert_eq!((constant.degree(), constant.depth()), (0, 0));
    let got = f.evaluate(&x, &constant);
    assert!(got.iter().all(|v| (v - 0.7).abs() < 1e-9), "a constant");
}

/// The InvalidParameters message, or a panic naming what came instead.
fn invalid(result: Result<ChebyshevSeries, SchemeError>) -> String {
    match result {
        Err(SchemeError::InvalidParameters(message)) => message,
        other => panic!("expected InvalidParameters, got {other:?}"),
    }
}

#[test]
fn bad_series_are_refused_with_the_reason() {
    for interval in [(1.0, 1.0), (2.0, 1.0), (f64::NAN, 1.0), (0.0, f64::INFINITY), (f64::NEG_INFINITY, 0.0)] {
        assert!(invalid(ChebyshevSeries::approximate(f64::sin, interval, 7)).contains("a < b"), "{interval:?}");
        assert!(invalid(ChebyshevSeries::from_coefficients(vec![1.0], interval)).contains("a < b"), "{interval:?}");
        assert!(invalid(ChebyshevSeries::sigmoid(interval, 7)).contains("a < b"), "{interval:?}");
        assert!(invalid(ChebyshevSeries::inverse(interval, 7)).contains("a < b"), "{interval:?}");
    }
    for interval in [(-1.0, 2.0), (0.0, 1.0), (-1.0, 0.0)] {
        assert!(invalid(ChebyshevSeries::inverse(interval, 7)).contains("pole at 0"), "{interval:?}");
    }
    // ln is NaN at the negative nodes.
    assert!(invalid(ChebyshevSeries::approximate(f64::ln, (-1.0, 1.0), 4)).contains("not finite"));
    assert!(invalid(ChebyshevSeries::from_coefficients(vec![], (-1.0, 1.0))).contains("at least"));
    assert!(invalid(ChebyshevSeries::from_coefficients(vec![1.0, f64::NAN], (-1.0, 1.0))).contains("c_1"));
    assert!(invalid(ChebyshevSeries::exp((-1.0, 1.0), MAX_DEGREE + 1)).contains("beyond"));
    assert!(ChebyshevSeries::exp((-1.0, 1.0), MAX_DEGREE).is_ok());
}

#[test]
fn spare_levels_give_the_same_results_in_exactly_the_levels_asked() {
    // One or two levels more than the least: the leading quotients keep their leaves (fewer
    // products), and the result must still be the series on the input's scale, within the
    // same bound, having consumed exactly the levels asked. Mapped and unmapped intervals,
    // degrees that split again in the least depth (7, 15, 31, 63) and some that do not.
    let mut f = Fixture::new(40);
    for interval in [(-3.0, 5.0), (-1.0, 1.0)] {
        for degree in [2, 3, 7, 15, 16, 31, 63] {
            let p = random_series(&mut f, degree, interval);
            let x = f.inputs(interval);
            let bound = noise_bound(&p, 40);
            for extra in [1, 2].into_iter().filter(|extra| p.depth() + extra <= f.ctx.params().depth()) {
                let got = f.evaluate_with(&x, &p, f.ctx.default_scale(), Some(p.depth() + extra));
                let error = max_error(&got, &x, |x| p.evaluate_plain(x));
                assert!(
                    error < bound,
                    "degree {degree} on {interval:?}, {extra} spare: error {error:e} above {bound:e}"
                );
            }
        }
    }
    // Below the depth, or beyond what the ciphertext has left: refused, saying which.
    let sigmoid = ChebyshevSeries::sigmoid((-8.0, 8.0), 31).unwrap();
    let x = f.inputs((-8.0, 8.0));
    let cx = f.encrypt(&x);
    let ev = f.evaluator();
    for (levels, says) in [(5, "cannot be evaluated in 5 levels: it needs at least 6"), (9, "needs 9 levels")] {
        match ev.evaluate_polynomial_in_levels(&cx, &sigmoid, levels) {
            Err(SchemeError::InvalidParameters(message)) => assert!(message.contains(says), "{message}"),
            other => panic!("{levels} levels: expected a refusal, got {other:?}"),
        }
    }
}

#[test]
fn evaluation_is_refused_before_any_work_without_the_depth_or_the_key() {
    let mut f = Fixture::new(40);
    let x = f.inputs((-8.0, 8.0));
    let cx = f.encrypt(&x);
    let ev = f.evaluator();
    let sigmoid = ChebyshevSeries::sigmoid((-8.0, 8.0), 31).unwrap();
    // Two levels left where six are needed.
    let per_level = f.ctx.params().primes_per_level();
    let low = ev.drop_to_level(&cx, f.ctx.min_level() + 2 * per_level).unwrap();
    let refused = |ev: &Evaluator<'_, CpuBackend>| match ev.evaluate_polynomial(&low, &sigmoid) {
        Err(SchemeError::InvalidParameters(message)) => message,
        other => panic!("expected a depth error, got {other:?}"),
    };
    let message = refused(&ev);
    assert!(message.contains("needs 6 levels") && message.contains("2 left"), "{message}");
    // Checked first: an evaluator without the relinearization key reports the depth, so no
    // product was attempted.
    let keyless = Evaluator::new(&f.backend, &f.ctx);
    assert_eq!(refused(&keyless), message);
    // With the depth, a missing key is named; degree 1 needs none.
    assert!(matches!(keyless.evaluate_polynomial(&cx, &sigmoid), Err(SchemeError::KeySwitchingUnavailable(_))));
    let line = ChebyshevSeries::from_coefficients(vec![0.5, 2.0], (-8.0, 8.0)).unwrap();
    let got = f.decrypt(&keyless.evaluate_polynomial(&cx, &line).unwrap());
    let error = max_error(&got, &x, |x| line.evaluate_plain(x));
    assert!(error < noise_bound(&line, 40), "degree 1 without the key: error {error:e}");
    // The last level: nothing left but a constant.
    let last = ev.drop_to_level(&cx, f.ctx.min_level()).unwrap();
    assert!(ev.evaluate_polynomial(&last, &line).is_err());
    let constant = ChebyshevSeries::from_coefficients(vec![-1.5], (-8.0, 8.0)).unwrap();
    assert_eq!(ev.evaluate_polynomial(&last, &constant).unwrap().level(), f.ctx.min_level());
}
