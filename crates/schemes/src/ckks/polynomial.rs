//! Polynomials in the Chebyshev basis on encrypted slots: the approximation of a function on an
//! interval ([`ChebyshevSeries`]) and its evaluation in the least multiplicative depth
//! ([`Evaluator::evaluate_polynomial`]), by the baby-step giant-step method of Lattigo's and
//! OpenFHE's Chebyshev evaluators.
//!
//! A series p(y) = sum c_k T_k(y) lives on [a, b] through y = (2x - a - b) / (b - a). The
//! evaluation computes the powers T_k of the encrypted y at the least depth (T_2k = 2 T_k^2 - 1,
//! T_(M+j) = 2 T_M T_j - T_(M-j)), then splits p = q T_M + r at the largest power of two
//! M <= deg p (Chebyshev division), recursively, down to leaves of degree below the baby-step
//! count m ~ sqrt(d): linear combinations of T_0 .. T_(m-1) with constants. That costs about
//! 2 sqrt(d) + log2(d) ciphertext products instead of d.
//!
//! **Depth.** A degree-d series (d >= 2) consumes ceil(log2(d + 1)) levels, one more when the
//! change of variable needs a non-integer factor 2 / (b - a) (it is then one constant product
//! and a rescaling; [-1, 1], [0, 1] and [-1/2, 1/2] map for free). Degree 1 costs one level,
//! degree 0 none. Two devices keep the leaves from adding a level: the sum q T_M + r takes r's
//! terms before the one rescaling of the product (so r costs no rescaling of its own), and a
//! quotient on the critical path whose leaf would need T_k deeper than its budget is split
//! again at a smaller power of two (as Lattigo re-splits its leading leaf). Terms in T_1 are
//! taken from x itself, c T_1 = (c alpha) x + c beta, so only products wait for the change of
//! variable.
//!
//! **Cost.** Every sum ends in one relinearization and one rescaling, whatever it holds: the
//! products q T_M of a sum are added unrelinearized, and a power's 2 T_M T_j - T_(M-j) takes
//! T_(M-j) as a term before the product's rescaling. The least depth has a price: the re-split
//! quotients are products a level more avoids ([`Evaluator::evaluate_polynomial_in_levels`]).
//!
//! **Scales.** Every sum is formed at one level and one scale, decided before its terms are
//! made: the top sum at (input scale) x (the primes its rescaling drops), so that the result
//! comes back exactly on the input's scale; a quotient q multiplied by T_M at the scale that
//! makes the product land on its parent's sum (parent scale x q's dropped primes / T_M's scale);
//! each term c T_k as T_k times the integer round(c x sum scale / T_k's scale), which lands on
//! the sum's scale exactly whatever T_k's scale is. Scales are tracked exactly, so the powers'
//! own scales may drift from the default (squaring doubles a level's small distance from 2^s
//! in log scale); each power's product takes an integer factor K for its 2 (2 T_i T_j =
//! K T_i T_j x 2 / K) that keeps its scale within about a factor 1.5 of the default.
//!
//! ```
//! use pimhe_schemes::ckks::polynomial::ChebyshevSeries;
//! let sigmoid = ChebyshevSeries::sigmoid((-8.0, 8.0), 31).unwrap();
//! assert_eq!(sigmoid.depth(), 6); // ceil(log2 32) = 5, and one for x -> x / 8
//! assert!(sigmoid.max_error_on(|x| 1.0 / (1.0 + (-x).exp()), 1000) < 1e-3);
//! let exp = ChebyshevSeries::exp((-1.0, 1.0), 12).unwrap();
//! assert_eq!(exp.depth(), 4); // [-1, 1] needs no change of variable
//! assert!((exp.evaluate_plain(0.5) - 0.5f64.exp()).abs() < 1e-12);
//! ```

use std::collections::BTreeMap;

use num_complex::Complex64;
use pimhe_exec::Backend;

use crate::ckks::context::{CkksContext, CkksTag};
use crate::ckks::evaluator::at_level;
use crate::error::{Result, SchemeError};
use crate::rlwe::{CiphertextBatch, Evaluator};

/// A CKKS ciphertext batch.
type Batch<B> = CiphertextBatch<B, CkksContext>;

/// The largest degree accepted: beyond what double-precision interpolation and CKKS's
/// precision can use (smooth functions converge long before), and a bound on the work a series
/// may ask for.
pub const MAX_DEGREE: usize = 1023;

/// p(y) = sum c_k T_k(y) for x in [a, b], y = (2x - a - b) / (b - a): a polynomial in the
/// Chebyshev basis of the first kind on an interval, as [`Evaluator::evaluate_polynomial`]
/// evaluates it on encrypted slots.
///
/// ```
/// use pimhe_schemes::ckks::polynomial::ChebyshevSeries;
/// // 1 + 2 T_1 + 3 T_2 on [0, 4]: y = x/2 - 1, T_2(y) = 2 y^2 - 1.
/// let p = ChebyshevSeries::from_coefficients(vec![1.0, 2.0, 3.0], (0.0, 4.0)).unwrap();
/// assert_eq!(p.evaluate_plain(3.0), 1.0 + 2.0 * 0.5 + 3.0 * (2.0 * 0.25 - 1.0));
/// assert_eq!((p.degree(), p.depth()), (2, 3)); // 2 levels, and one for y = x/2 - 1
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct ChebyshevSeries {
    /// c_0 .. c_d; the last is non-zero unless the series is the constant 0.
    coefficients: Vec<f64>,
    interval: (f64, f64),
}

impl ChebyshevSeries {
    /// The series of given coefficients c_0, c_1, ... on `interval` (trailing zeros dropped: the
    /// degree is the polynomial's).
    pub fn from_coefficients(coefficients: Vec<f64>, interval: (f64, f64)) -> Result<Self> {
        check_interval(interval)?;
        if coefficients.is_empty() {
            return Err(SchemeError::InvalidParameters("a Chebyshev series needs at least the coefficient c_0".into()));
        }
        if let Some(k) = coefficients.iter().position(|c| !c.is_finite()) {
            return Err(SchemeError::InvalidParameters(format!(
                "coefficient c_{k} = {} is not finite",
                coefficients[k]
            )));
        }
        let degree = trimmed(&coefficients).len() - 1;
        check_degree(degree)?;
        let mut coefficients = coefficients;
        coefficients.truncate(degree + 1);
        Ok(Self { coefficients, interval })
    }

    /// The interpolant of `f` at the `degree + 1` Chebyshev nodes of `interval`: close to the
    /// best uniform approximation of that degree (within a factor of about 2 + (2/pi) ln d).
    /// With y_j = cos(pi (j + 1/2) / n), n = d + 1, c_k = (2/n) sum_j f(x(y_j)) cos(pi k (j + 1/2) / n)
    /// (c_0 halved). Coefficients below the rounding error of those sums are set to zero, so an
    /// odd or even function's vanishing coefficients are exact zeros and their powers are not
    /// computed.
    pub fn approximate(f: impl Fn(f64) -> f64, interval: (f64, f64), degree: usize) -> Result<Self> {
        check_interval(interval)?;
        check_degree(degree)?;
        let n = degree + 1;
        let (a, b) = interval;
        let angle = |j: usize| std::f64::consts::PI * (j as f64 + 0.5) / n as f64;
        let node = |j: usize| (angle(j).cos() * (b - a) + a + b) / 2.0;
        let values: Vec<f64> = (0..n).map(|j| f(node(j))).collect();
        if let Some(j) = values.iter().position(|v| !v.is_finite()) {
            return Err(SchemeError::InvalidParameters(format!(
                "the function is not finite at the interpolation node x = {}; approximate it on an interval where it is \
                 finite",
                node(j)
            )));
        }
        let mut coefficients: Vec<f64> = (0..n)
            .map(|k| {
                let sum: f64 = values.iter().enumerate().map(|(j, v)| v * (k as f64 * angle(j)).cos()).sum();
                sum * if k == 0 { 1.0 } else { 2.0 } / n as f64
            })
            .collect();
        let noise = n as f64 * f64::EPSILON * values.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        coefficients.iter_mut().filter(|c| c.abs() <= noise).for_each(|c| *c = 0.0);
        Self::from_coefficients(coefficients, interval)
    }

    /// The logistic function 1 / (1 + e^-x) on `interval` (e.g. degree 31 on [-8, 8] for an
    /// error below 1e-5).
    pub fn sigmoid(interval: (f64, f64), degree: usize) -> Result<Self> {
        Self::approximate(|x| 1.0 / (1.0 + (-x).exp()), interval, degree)
    }

    /// e^x on `interval`.
    pub fn exp(interval: (f64, f64), degree: usize) -> Result<Self> {
        Self::approximate(f64::exp, interval, degree)
    }

    /// 1/x on an interval that excludes 0 (0 < a < b or a < b < 0). The error grows quickly as
    /// the interval nears 0: the pole at 0 limits the convergence to about
    /// (r + sqrt(r^2 - 1))^-d for r = (b + a) / (b - a).
    pub fn inverse(interval: (f64, f64), degree: usize) -> Result<Self> {
        check_interval(interval)?;
        let (a, b) = interval;
        if a <= 0.0 && b >= 0.0 {
            return Err(SchemeError::InvalidParameters(format!(
                "1/x has a pole at 0, which the interval [{a}, {b}] contains; approximate it on an interval with \
                 0 < a < b or a < b < 0"
            )));
        }
        Self::approximate(|x| 1.0 / x, interval, degree)
    }

    /// The coefficients c_0 .. c_d.
    pub fn coefficients(&self) -> &[f64] {
        &self.coefficients
    }

    /// The interval [a, b].
    pub fn interval(&self) -> (f64, f64) {
        self.interval
    }

    /// The degree d.
    pub fn degree(&self) -> usize {
        self.coefficients.len() - 1
    }

    /// The levels [`Evaluator::evaluate_polynomial`] consumes: 0 for a constant, 1 for degree 1,
    /// else ceil(log2(d + 1)) plus one when the change of variable takes a non-integer factor
    /// (see [`ChebyshevSeries::map_depth`]).
    pub fn depth(&self) -> usize {
        match self.degree() {
            0 => 0,
            1 => 1,
            d => self.map_depth() + bit_length(d),
        }
    }

    /// The levels the change of variable y = alpha x + beta costs before products: 0 when
    /// alpha = 2 / (b - a) is an integer (a multiplication by it and an added constant), else 1
    /// (a constant product and a rescaling).
    pub fn map_depth(&self) -> usize {
        let (alpha, _) = self.affine();
        usize::from(!(alpha.fract() == 0.0 && alpha < 2f64.powi(53)))
    }

    /// p(x) by Clenshaw's recurrence: the reference the encrypted evaluation is measured against.
    pub fn evaluate_plain(&self, x: f64) -> f64 {
        let (alpha, beta) = self.affine();
        let y = alpha * x + beta;
        let (mut b1, mut b2) = (0.0, 0.0);
        for &c in self.coefficients[1..].iter().rev() {
            (b1, b2) = (c + 2.0 * y * b1 - b2, b1);
        }
        self.coefficients[0] + y * b1 - b2
    }

    /// The largest |p(x) - f(x)| over `samples` evenly spaced points of the interval, ends
    /// included (at least the two ends).
    pub fn max_error_on(&self, f: impl Fn(f64) -> f64, samples: usize) -> f64 {
        let (a, b) = self.interval;
        let steps = samples.max(2) - 1;
        (0..=steps)
            .map(|i| a + (b - a) * i as f64 / steps as f64)
            .map(|x| (self.evaluate_plain(x) - f(x)).abs())
            .fold(0.0, f64::max)
    }

    /// (alpha, beta) of y = alpha x + beta, which maps [a, b] onto [-1, 1].
    fn affine(&self) -> (f64, f64) {
        let (a, b) = self.interval;
        (2.0 / (b - a), -(a + b) / (b - a))
    }
}

fn check_interval((a, b): (f64, f64)) -> Result<()> {
    if !(a.is_finite() && b.is_finite() && a < b) {
        return Err(SchemeError::InvalidParameters(format!(
            "the interval [{a}, {b}] is not an interval of finite reals with a < b"
        )));
    }
    Ok(())
}

fn check_degree(degree: usize) -> Result<()> {
    if degree > MAX_DEGREE {
        return Err(SchemeError::InvalidParameters(format!(
            "a Chebyshev series of degree {degree} is beyond the supported {MAX_DEGREE}"
        )));
    }
    Ok(())
}

/// Bits of n: ceil(log2(n + 1)), the depth of a degree-n polynomial.
fn bit_length(n: usize) -> usize {
    (usize::BITS - n.leading_zeros()) as usize
}

/// The coefficients without trailing zeros (at least c_0).
fn trimmed(coefficients: &[f64]) -> &[f64] {
    &coefficients[..coefficients.iter().rposition(|&c| c != 0.0).map_or(1, |k| k + 1)]
}

/// Chebyshev division by T_m of a series of degree below 2m: p = q T_m + r with deg r < m, from
/// T_(m+j) = 2 T_m T_j - T_(m-j).
fn divide(coefficients: &[f64], m: usize) -> (Vec<f64>, Vec<f64>) {
    let high = &coefficients[m..];
    let quotient = std::iter::once(high[0]).chain(high[1..].iter().map(|c| 2.0 * c)).collect();
    let mut remainder = coefficients[..m].to_vec();
    for (j, c) in high.iter().enumerate().skip(1) {
        remainder[m - j] -= c;
    }
    (quotient, remainder)
}

/// round(value) as an integer multiplier, refused where it is not finite or reaches 2^100 (no
/// sensible scale asks for that).
fn integer(value: f64) -> Result<i128> {
    let rounded = value.round();
    if !rounded.is_finite() || rounded.abs() >= 2f64.powi(100) {
        return Err(SchemeError::InvalidParameters(format!(
            "scale overflow: a polynomial evaluation constant of 2^{:.1}; the ciphertext's scale is far from the \
             parameters' default",
            rounded.abs().log2()
        )));
    }
    Ok(rounded as i128)
}

/// A sum under construction at one level and one scale, waiting for the one rescaling that
/// ends it: the products of the depth-optimal splits (already on the sum's scale, and not yet
/// relinearized: the sum is relinearized once, however many products it holds), the terms
/// c T_k as (k, the integer that lands T_k on the sum's scale), combined in one constant
/// accumulation when the sum is finished, and a constant to add after the rescaling.
struct Pending<B: Backend> {
    level: usize,
    scale: f64,
    products: Option<Batch<B>>,
    terms: Vec<(usize, i128)>,
    constant: f64,
}

impl<B: Backend> Pending<B> {
    fn new(level: usize, scale: f64) -> Self {
        Self { level, scale, products: None, terms: Vec::new(), constant: 0.0 }
    }
}

/// One evaluation: the input, the change of variable, the baby-step count and the powers
/// T_k(y) computed so far (each once, on first use).
struct Evaluation<'a, 'e, B: Backend> {
    evaluator: &'a Evaluator<'e, B, CkksContext>,
    x: &'a Batch<B>,
    alpha: f64,
    beta: f64,
    /// 0 or 1: the levels y costs ([`ChebyshevSeries::map_depth`]).
    map_depth: usize,
    /// Leaves are combinations of T_0 .. T_(baby - 1).
    baby: usize,
    powers: BTreeMap<usize, Batch<B>>,
}

impl<B: Backend> Evaluation<'_, '_, B> {
    /// The level at `depth` rescalings below the input.
    fn level_at(&self, depth: usize) -> usize {
        self.x.level - depth * self.evaluator.ctx.params().primes_per_level()
    }

    /// The depth at which a leaf can use T_k: x itself for T_1 (c T_1 = c alpha x + c beta),
    /// y's depth plus ceil(log2 k) for the others.
    fn source_depth(&self, k: usize) -> usize {
        match k {
            0 | 1 => 0,
            k => self.map_depth + bit_length(k - 1),
        }
    }

    /// Adds p(y) (coefficients without trailing zeros) to `pending`, whose sum is at `depth`:
    /// a leaf's terms directly, or q T_M (q evaluated one level up) and then r's terms.
    fn accumulate(&mut self, coefficients: &[f64], depth: usize, pending: &mut Pending<B>) -> Result<()> {
        let degree = coefficients.len() - 1;
        if degree < self.baby && self.source_depth(degree) <= depth {
            pending.constant += coefficients[0];
            for (k, &c) in coefficients.iter().enumerate().skip(1).filter(|&(_, &c)| c != 0.0) {
                self.add_term(k, c, pending)?;
            }
            return Ok(());
        }
        // Depth-optimal split: T_M is at most at `depth`, q of degree below M fits one level up.
        let m = 1 << degree.ilog2();
        let (quotient, remainder) = divide(coefficients, m);
        if let [c] = quotient[..] {
            self.add_term(m, c, pending)?;
        } else {
            self.ensure(m)?;
            let inner_depth = depth.checked_sub(1).expect("a split leaves q at least one level");
            let level = self.level_at(inner_depth);
            let scale = pending.scale / self.powers[&m].tag.scale * self.rescale_factor(level)?;
            let mut inner = Pending::new(level, scale);
            self.accumulate(&quotient, inner_depth, &mut inner)?;
            let q = self.finish(inner)?;
            let ev = self.evaluator;
            // Relinearized once for the whole sum, by `finish` (a sum often has two products).
            let product = ev.multiply(&q, &self.powers[&m])?;
            debug_assert_eq!(product.level, pending.level);
            add_to(ev, pending, product)?;
        }
        self.accumulate(trimmed(&remainder), depth, pending)
    }

    /// Adds c T_k to `pending`: T_k (x for k = 1) dropped to the sum's level and multiplied by
    /// the integer that lands it on the sum's scale.
    fn add_term(&mut self, k: usize, c: f64, pending: &mut Pending<B>) -> Result<()> {
        let (source, factor) = if k == 1 {
            pending.constant += c * self.beta;
            (self.x, c * self.alpha)
        } else {
            self.ensure(k)?;
            (&self.powers[&k], c)
        };
        pending.terms.push((k, integer(factor * pending.scale / source.tag.scale)?));
        Ok(())
    }

    /// The terms of `pending` in one constant accumulation (CAccum), each T_k first dropped to
    /// the sum's level; `None` without terms.
    fn combine_terms(&self, pending: &Pending<B>) -> Result<Option<Batch<B>>> {
        let ev = self.evaluator;
        let batches: Vec<&Batch<B>> =
            pending.terms.iter().map(|&(k, _)| if k == 1 { self.x } else { &self.powers[&k] }).collect();
        let Some(&first) = batches.first() else { return Ok(None) };
        let sources = batches.iter().map(|b| at_level(ev, b, pending.level)).collect::<Result<Vec<_>>>()?;
        let primes = ev.ctx.level_basis(pending.level)?.primes();
        let constants: Vec<Vec<u64>> = pending
            .terms
            .iter()
            .map(|&(_, m)| primes.iter().map(|&q| m.rem_euclid(i128::from(q)) as u64).collect())
            .collect();
        let parts = (0..first.parts.len())
            .map(|part| {
                let terms: Vec<_> =
                    sources.iter().zip(&constants).map(|(source, c)| (&source[part], c.as_slice())).collect();
                ev.backend.constant_accumulate(&terms, None)
            })
            .collect::<pimhe_exec::Result<Vec<_>>>()?;
        Ok(Some(first.derive(parts, pending.level, CkksTag { scale: pending.scale, ..first.tag })))
    }

    /// The sum relinearized (where it holds products of three components) and rescaled, plus
    /// its constant (added after the rescaling, at the smaller scale, where a constant's
    /// encoding stays far below add_const's 2^100 limit).
    fn finish(&self, mut pending: Pending<B>) -> Result<Batch<B>> {
        let ev = self.evaluator;
        if let Some(terms) = self.combine_terms(&pending)? {
            add_to(ev, &mut pending, terms)?;
        }
        let mut sum = pending.products.expect("a non-constant series adds at least one term");
        if sum.size() == 3 {
            sum = ev.relinearize(&sum)?;
        }
        let sum = ev.rescale(&sum)?;
        if pending.constant == 0.0 {
            return Ok(sum);
        }
        ev.add_const(&sum, Complex64::new(pending.constant, 0.0))
    }

    /// Computes T_k(y) unless it is known: y itself for k = 1, 2 T_(k/2)^2 - 1 for a power of
    /// two, else 2 T_M T_(k-M) - T_(2M-k) for the largest power of two M below k; each at depth
    /// y's + ceil(log2 k). T_(2M-k), strictly higher, is subtracted before the product's
    /// rescaling, as a term of a sum (an integer multiple landing on the product's scale), so
    /// that one rescaling serves both.
    fn ensure(&mut self, k: usize) -> Result<()> {
        if self.powers.contains_key(&k) {
            return Ok(());
        }
        let ev = self.evaluator;
        let power = if k == 1 {
            let scaled = if self.map_depth == 0 {
                ev.mul_const(self.x, Complex64::new(self.alpha, 0.0))?
            } else {
                // Onto the default scale, where the powers' scales are kept.
                let scale = ev.ctx.default_scale() * self.rescale_factor(self.x.level)?;
                ev.rescale(&ev.times_integer(self.x, integer(self.alpha * scale / self.x.tag.scale)?, scale)?)?
            };
            ev.add_const(&scaled, Complex64::new(self.beta, 0.0))?
        } else {
            let m = 1 << (k - 1).ilog2();
            let rest = k - m;
            for j in [m, rest, m - rest] {
                if j > 0 {
                    self.ensure(j)?;
                }
            }
            let double = self.double_product(&self.powers[&m], &self.powers[&rest])?;
            let mut pending = Pending::new(double.level, double.tag.scale);
            pending.products = Some(double);
            match m - rest {
                0 => pending.constant = -1.0,
                j => self.add_term(j, -1.0, &mut pending)?,
            }
            self.finish(pending)?
        };
        self.powers.insert(k, power);
        Ok(())
    }

    /// 2 a b, relinearized, waiting for its rescaling. The 2 is applied as an integer K >= 1
    /// chosen to bring the scale after the rescaling back near the default (2 a b = K a b x
    /// 2 / K: the scale becomes K/2 times a's times b's), so the powers' scales do not drift as
    /// squarings double their distance from the default.
    fn double_product(&self, a: &Batch<B>, b: &Batch<B>) -> Result<Batch<B>> {
        let ev = self.evaluator;
        let product = ev.relinearize(&ev.multiply(a, b)?)?;
        let scale = a.tag.scale * b.tag.scale;
        let after = scale / self.rescale_factor(product.level)?;
        let k = integer(2.0 * ev.ctx.default_scale() / after)?.max(1);
        ev.times_integer(&product, k, scale * k as f64 / 2.0)
    }

    /// The product of the primes the rescaling from `level` drops.
    fn rescale_factor(&self, level: usize) -> Result<f64> {
        Ok(self.evaluator.dropped_primes(level)?.iter().map(|&q| f64::from(q)).product())
    }
}

/// Adds a product (or the combined terms) already at the sum's level and scale; products may
/// be left unrelinearized (three components), the sum then has three.
fn add_to<B: Backend>(ev: &Evaluator<'_, B, CkksContext>, pending: &mut Pending<B>, term: Batch<B>) -> Result<()> {
    match &mut pending.products {
        None => pending.products = Some(term),
        Some(sum) => ev.add_assign(sum, &term)?,
    }
    Ok(())
}

impl<B: Backend> Evaluator<'_, B, CkksContext> {
    /// p(x) in every slot, consuming exactly [`ChebyshevSeries::depth`] levels; the result is
    /// on a's scale. The slots should lie in p's interval (outside it the T_k grow quickly).
    /// Needs the relinearization key for degree 2 and up. Refused before any work when a has
    /// fewer levels left than the depth.
    ///
    /// ```
    /// use pimhe_exec::CpuBackend;
    /// use pimhe_schemes::ckks::polynomial::ChebyshevSeries;
    /// use pimhe_schemes::ckks::*;
    /// let backend = CpuBackend::new(Some(1)).unwrap();
    /// let params = CkksParameters::builder(2048).depth(4).scale_bits(40).allow_insecure().build().unwrap();
    /// let ctx = CkksContext::new(params).unwrap();
    /// let mut keygen = KeyGenerator::new(&backend, &ctx).unwrap();
    /// let secret = keygen.secret_key().unwrap();
    /// let relin = keygen.relin_key(&secret).unwrap();
    /// let encoder = Encoder::new(&ctx);
    /// let mut encryptor = Encryptor::with_secret_key(&backend, &secret).unwrap();
    /// let x = encryptor.encrypt(&[encoder.encode_real(&[-6.0, 0.0, 2.5], ctx.default_scale()).unwrap()]).unwrap();
    ///
    /// let sigmoid = ChebyshevSeries::sigmoid((-8.0, 8.0), 7).unwrap(); // depth 3 + 1
    /// let evaluator = Evaluator::new(&backend, &ctx).with_relin_key(&relin).unwrap();
    /// let y = evaluator.evaluate_polynomial(&x, &sigmoid).unwrap();
    /// assert_eq!(y.level(), x.level() - 4 * ctx.params().primes_per_level());
    ///
    /// let slots = encoder.decode_real(&Decryptor::new(&backend, &secret).unwrap().decrypt(&y).unwrap()[0]).unwrap();
    /// for (got, x) in slots.iter().zip([-6.0, 0.0, 2.5]) {
    ///     assert!((got - sigmoid.evaluate_plain(x)).abs() < 1e-6);
    /// }
    /// ```
    pub fn evaluate_polynomial(&self, a: &Batch<B>, p: &ChebyshevSeries) -> Result<Batch<B>> {
        self.evaluate_polynomial_in_levels(a, p, p.depth())
    }

    /// [`Evaluator::evaluate_polynomial`] given `levels` to consume instead of the least,
    /// [`ChebyshevSeries::depth`] (a constant series consumes none). In the least depth, the
    /// leading quotients cannot use the deepest baby-step powers and are split again at smaller
    /// powers of two, each split a ciphertext product more; one level more than the least
    /// leaves every quotient its leaf (a degree-31 sigmoid on [-8, 8] then takes 10 products
    /// instead of 12, in 7 levels instead of 6, as OpenFHE's evaluation does). Refused below the
    /// depth and beyond the levels a has left.
    ///
    /// ```
    /// use pimhe_exec::CpuBackend;
    /// use pimhe_schemes::ckks::polynomial::ChebyshevSeries;
    /// use pimhe_schemes::ckks::*;
    /// let backend = CpuBackend::new(Some(1)).unwrap();
    /// let params = CkksParameters::builder(2048).depth(6).scale_bits(40).allow_insecure().build().unwrap();
    /// let ctx = CkksContext::new(params).unwrap();
    /// let mut keygen = KeyGenerator::new(&backend, &ctx).unwrap();
    /// let secret = keygen.secret_key().unwrap();
    /// let relin = keygen.relin_key(&secret).unwrap();
    /// let encoder = Encoder::new(&ctx);
    /// let mut encryptor = Encryptor::with_secret_key(&backend, &secret).unwrap();
    /// let x = encryptor.encrypt(&[encoder.encode_real(&[-6.0, 0.0, 2.5], ctx.default_scale()).unwrap()]).unwrap();
    ///
    /// let sigmoid = ChebyshevSeries::sigmoid((-8.0, 8.0), 15).unwrap(); // depth 4 + 1
    /// let evaluator = Evaluator::new(&backend, &ctx).with_relin_key(&relin).unwrap();
    /// let y = evaluator.evaluate_polynomial_in_levels(&x, &sigmoid, 6).unwrap();
    /// assert_eq!(y.level(), x.level() - 6 * ctx.params().primes_per_level());
    /// assert!(evaluator.evaluate_polynomial_in_levels(&x, &sigmoid, 4).is_err()); // below its depth
    ///
    /// let slots = encoder.decode_real(&Decryptor::new(&backend, &secret).unwrap().decrypt(&y).unwrap()[0]).unwrap();
    /// for (got, x) in slots.iter().zip([-6.0, 0.0, 2.5]) {
    ///     assert!((got - sigmoid.evaluate_plain(x)).abs() < 1e-6);
    /// }
    /// ```
    pub fn evaluate_polynomial_in_levels(&self, a: &Batch<B>, p: &ChebyshevSeries, levels: usize) -> Result<Batch<B>> {
        self.check_batch(a)?;
        if a.size() != 2 {
            return Err(SchemeError::WrongSize { operation: "polynomial evaluation", expected: 2, found: a.size() });
        }
        let (needed, available) = (p.depth(), self.ctx.depth_left(a.level));
        let (lo, hi) = p.interval;
        if levels < needed {
            return Err(SchemeError::InvalidParameters(format!(
                "a degree-{} Chebyshev series on [{lo}, {hi}] cannot be evaluated in {levels} levels: it needs at least \
                 {needed}",
                p.degree()
            )));
        }
        if levels > available {
            return Err(SchemeError::InvalidParameters(format!(
                "a degree-{} Chebyshev series on [{lo}, {hi}] needs {levels} levels ({needed} at least, {} of them for the \
                 change of variable); the ciphertext at level {} has {available} left",
                p.degree(),
                if p.degree() < 2 { 0 } else { p.map_depth() },
                a.level
            )));
        }
        let coefficients = p.coefficients();
        if p.degree() == 0 {
            // A constant: 0 x (an integer, no level) plus c_0.
            let zero = self.mul_const(a, Complex64::new(0.0, 0.0))?;
            return self.add_const(&zero, Complex64::new(coefficients[0], 0.0));
        }
        let (alpha, beta) = p.affine();
        let degree = p.degree();
        let mut evaluation = Evaluation {
            evaluator: self,
            x: a,
            alpha,
            beta,
            map_depth: p.map_depth(),
            // m = 2^ceil(l/2) for l = ceil(log2(d + 1)): baby and giant steps balance.
            baby: 1 << bit_length(degree).div_ceil(2),
            powers: BTreeMap::new(),
        };
        let top = levels - 1;
        let level = evaluation.level_at(top);
        let mut sum = Pending::new(level, a.tag.scale * evaluation.rescale_factor(level)?);
        evaluation.accumulate(coefficients, top, &mut sum)?;
        evaluation.finish(sum)
    }

    /// `a` times the integer `k`, read at `scale`: the caller states what the product encodes
    /// (a constant c encoded at round(c scale / a's scale) lands exactly on `scale`).
    fn times_integer(&self, a: &Batch<B>, k: i128, scale: f64) -> Result<Batch<B>> {
        let primes = self.ctx.level_basis(a.level)?.primes();
        let residues: Vec<u64> = primes.iter().map(|&q| k.rem_euclid(i128::from(q)) as u64).collect();
        let parts = a
            .parts
            .iter()
            .map(|p| self.backend.mul_limb_constants(p, &residues))
            .collect::<pimhe_exec::Result<Vec<_>>>()?;
        Ok(a.derive(parts, a.level, CkksTag { scale, ..a.tag }))
    }
}
