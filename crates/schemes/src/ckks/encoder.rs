//! The CKKS encoder: vectors of complex numbers to integer polynomials of `Z[X]/(X^N + 1)` and
//! back, through the canonical embedding and the "special FFT" of Cheon, Han, Kim, Kim and Song
//! (HEAAN; SEAL's and Lattigo's CKKS encoders compute the same map), in O(N log N).
//!
//! # Slot order: the contract with rotations and conjugation
//!
//! Let zeta = exp(i pi / N), a primitive 2N-th root of unity. A full packing has N/2 slots and
//!
//! ```text
//! slot j = m(zeta^(5^j mod 2N)),   j = 0 .. N/2 - 1.
//! ```
//!
//! Hence the automorphism X -> X^(5^r mod 2N) rotates the slot vector LEFT by r (new slot j is
//! old slot j + r, indices mod N/2; r < 0 rotates right, with 5^r the inverse of 5^|r| mod 2N),
//! and X -> X^(2N-1) conjugates every slot: m(zeta^(-e)) is the conjugate of m(zeta^e) because
//! m has real coefficients. The scheme's Galois elements rely on exactly this order.
//!
//! Sparse packing: n slots, n any power of two up to N/2. The values are encoded as a
//! polynomial in Y = X^(N/(2n)) (its coefficients sit every N/(2n) positions), i.e. as a full
//! packing of the ring of degree 2n in Y. Slot j is still m(zeta^(5^j)), the same Galois elements
//! 5^r and 2N - 1 rotate and conjugate the n-slot vector (indices mod n), and a full packing is
//! the case n = N/2.
//!
//! # Scale
//!
//! [`CkksEncoder::encode`] returns round(scale * coefficient) as `i128` (magnitudes below
//! 2^126); [`CkksEncoder::decode`] takes the centred coefficients of a decrypted phase as `f64`
//! (from [`pimhe_math::CrtToFloat`], see [`centered_coefficients`]) and divides by the scale.
//! Decoding a sparse packing reads only the coefficients on its grid (multiples of N/(2n)), like
//! HEAAN and Lattigo: after encryption the others hold only noise.

use std::f64::consts::PI;
use std::sync::Arc;

use num_complex::Complex64;
use pimhe_math::{bit_reverse, CrtToFloat, Modulus};
use pimhe_ring::{PolyBatch, Representation, RingBasis};

use crate::error::{Result, SchemeError};

/// Largest ring degree the encoder accepts (the ring layer's limit).
pub const MAX_DEGREE: usize = 1 << 17;

/// Encoded coefficients must stay below this magnitude: 2^126 leaves `i128` a bit of headroom
/// for sums of plaintexts.
const COEFFICIENT_LIMIT: f64 = 85070591730234615865843651857942052864.0; // 2^126

/// The canonical embedding of `Z[X]/(X^N + 1)` for one N: encodes up to N/2 complex slots into
/// integer coefficients and decodes them back, in the slot order of the module documentation.
///
/// ```
/// use num_complex::Complex64;
/// use pimhe_schemes::ckks::encoder::CkksEncoder;
/// let encoder = CkksEncoder::new(16).unwrap();
/// let values = [Complex64::new(1.5, -2.0), Complex64::new(0.25, 3.0)];
/// let scale = 2f64.powi(30);
/// // 4 slots: the two values, then zeros.
/// let coefficients = encoder.encode(&values, 4, scale).unwrap();
/// assert_eq!(coefficients.len(), 16);
/// let as_f64: Vec<f64> = coefficients.iter().map(|&c| c as f64).collect();
/// let decoded = encoder.decode(&as_f64, 4, scale).unwrap();
/// assert!((decoded[0] - values[0]).norm() < 1e-8 && (decoded[1] - values[1]).norm() < 1e-8);
/// assert!(decoded[2].norm() < 1e-8 && decoded[3].norm() < 1e-8);
///
/// // X -> X^5 rotates the slots left by one.
/// let rotated = encoder.decode(&automorphism(&as_f64, 5), 4, scale).unwrap();
/// assert!((rotated[0] - values[1]).norm() < 1e-8 && (rotated[3] - values[0]).norm() < 1e-8);
///
/// fn automorphism(c: &[f64], k: usize) -> Vec<f64> {
///     let n = c.len();
///     let mut out = vec![0.0; n];
///     for (i, &x) in c.iter().enumerate() {
///         let t = i * k % (2 * n);
///         if t < n { out[t] = x } else { out[t - n] = -x }
///     }
///     out
/// }
/// ```
#[derive(Clone)]
pub struct CkksEncoder {
    degree: usize,
    /// The special FFT's twiddles, one table for every slot count: for each stage half-size h
    /// (a power of two below N/2), `twiddles[h + j]` = exp(2 pi i (5^j mod 8h) / (8h)),
    /// j < h. Index 0 is unused. Contiguous per stage, so each stage reads them in order.
    twiddles: Vec<Complex64>,
}

impl std::fmt::Debug for CkksEncoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // N/2 twiddles would drown any context that prints its encoder.
        f.debug_struct("CkksEncoder").field("degree", &self.degree).finish_non_exhaustive()
    }
}

impl CkksEncoder {
    /// The encoder of the ring of degree `degree` (a power of two in 2..=2^17): precomputes the
    /// rotation-group roots of every FFT stage.
    pub fn new(degree: usize) -> Result<Self> {
        if !degree.is_power_of_two() || !(2..=MAX_DEGREE).contains(&degree) {
            return Err(SchemeError::InvalidParameters(format!(
                "CKKS ring degree {degree} is not allowed: N must be a power of two from 2 to 2^17"
            )));
        }
        let half = degree / 2;
        let mut twiddles = vec![Complex64::new(1.0, 0.0); half.max(1)];
        let mut h = 1;
        while h < half {
            let order = 8 * h;
            let mut power = 1usize; // 5^j mod 8h
            for j in 0..h {
                twiddles[h + j] = root_of_unity(power, order);
                power = power * 5 % order;
            }
            h *= 2;
        }
        Ok(Self { degree, twiddles })
    }

    /// Ring degree N.
    pub fn degree(&self) -> usize {
        self.degree
    }

    /// Slots of a full packing, N/2.
    pub fn max_slots(&self) -> usize {
        self.degree / 2
    }

    /// The integer coefficients round(scale * c) of the polynomial whose first `slots` slots
    /// hold `values` (zero-padded to `slots`; see the module documentation for the order and
    /// the sparse layout).
    ///
    /// Fails with [`SchemeError::InvalidParameters`] when `slots` is not a power of two from 1
    /// to N/2, a value is NaN or infinite, `scale` is not finite and positive, or a scaled
    /// coefficient reaches 2^126 ("scale overflow"); with [`SchemeError::TooManyValues`] when
    /// there are more values than slots.
    pub fn encode(&self, values: &[Complex64], slots: usize, scale: f64) -> Result<Vec<i128>> {
        self.check_slots(slots)?;
        check_scale(scale)?;
        if values.len() > slots {
            return Err(SchemeError::TooManyValues { len: values.len(), slots });
        }
        if let Some(index) = values.iter().position(|z| !z.re.is_finite() || !z.im.is_finite()) {
            return Err(SchemeError::InvalidParameters(format!(
                "CKKS value at index {index} is {}: only finite numbers can be encoded (no NaN or infinity)",
                values[index]
            )));
        }
        let mut buffer = values.to_vec();
        buffer.resize(slots, Complex64::new(0.0, 0.0));
        self.inverse_special_fft(&mut buffer);
        // The inverse FFT's 1/n folded into the scale: one multiplication per coefficient.
        let factor = scale / slots as f64;
        let gap = self.degree / (2 * slots);
        let half = self.degree / 2;
        let mut coefficients = vec![0i128; self.degree];
        for (i, z) in buffer.iter().enumerate() {
            for (position, x) in [(i * gap, z.re), (half + i * gap, z.im)] {
                let scaled = x * factor;
                // Also catches a product that overflowed to infinity.
                if scaled.abs() >= COEFFICIENT_LIMIT {
                    return Err(SchemeError::InvalidParameters(format!(
                        "scale overflow: scaling by {scale:e} makes coefficient {position} about {scaled:e}, but CKKS \
                         coefficients must stay below 2^126 in magnitude; the scale is too large for these values \
                         (use a smaller scale or smaller values)"
                    )));
                }
                coefficients[position] = round_to_i128(scaled);
            }
        }
        Ok(coefficients)
    }

    /// [`encode`](Self::encode) for real values (imaginary parts 0).
    pub fn encode_real(&self, values: &[f64], slots: usize, scale: f64) -> Result<Vec<i128>> {
        let complex: Vec<Complex64> = values.iter().map(|&x| Complex64::new(x, 0.0)).collect();
        self.encode(&complex, slots, scale)
    }

    /// The `slots` slot values, divided by `scale`, of the polynomial with the given (centred)
    /// coefficients, N of them. A sparse packing reads only the coefficients on its grid.
    ///
    /// Fails with [`SchemeError::InvalidParameters`] when there are not N coefficients, a
    /// coefficient read is not finite, `slots` is not a power of two from 1 to N/2, or `scale`
    /// is not finite and positive.
    pub fn decode(&self, coefficients: &[f64], slots: usize, scale: f64) -> Result<Vec<Complex64>> {
        self.check_slots(slots)?;
        check_scale(scale)?;
        if coefficients.len() != self.degree {
            return Err(SchemeError::InvalidParameters(format!(
                "CKKS decoding needs the N = {} coefficients of the ring, got {}",
                self.degree,
                coefficients.len()
            )));
        }
        let gap = self.degree / (2 * slots);
        let half = self.degree / 2;
        let inverse_scale = 1.0 / scale;
        let mut buffer = Vec::with_capacity(slots);
        for i in 0..slots {
            let (re, im) = (coefficients[i * gap], coefficients[half + i * gap]);
            if !re.is_finite() || !im.is_finite() {
                let (index, value) = if re.is_finite() { (half + i * gap, im) } else { (i * gap, re) };
                return Err(SchemeError::InvalidParameters(format!(
                    "coefficient {index} is {value}: CKKS decoding needs finite coefficients"
                )));
            }
            buffer.push(Complex64::new(re * inverse_scale, im * inverse_scale));
        }
        self.special_fft(&mut buffer);
        Ok(buffer)
    }

    /// The real parts of [`decode`](Self::decode).
    pub fn decode_real(&self, coefficients: &[f64], slots: usize, scale: f64) -> Result<Vec<f64>> {
        Ok(self.decode(coefficients, slots, scale)?.into_iter().map(|z| z.re).collect())
    }

    fn check_slots(&self, slots: usize) -> Result<()> {
        if slots.is_power_of_two() && slots <= self.max_slots() {
            Ok(())
        } else {
            Err(SchemeError::InvalidParameters(format!(
                "CKKS slot count {slots} is not allowed: it must be a power of two from 1 to N/2 = {} (N = {})",
                self.max_slots(),
                self.degree
            )))
        }
    }

    /// The decoding map of a packing of n slots (n = `values.len()`, a power of two up to
    /// N/2) on complex coefficients, in place: u (u_k = c_k + i c_(k+n)) to the slot values
    /// V u. Bootstrapping's SlotToCoeff applies this V homomorphically; taking it from here
    /// keeps it the encoder's own map, slot order included.
    pub(crate) fn slots_of_coefficients(&self, values: &mut [Complex64]) {
        self.special_fft(values);
    }

    /// The encoding map, the exact inverse of [`Self::slots_of_coefficients`] (the 1/n
    /// included): slot values z to the complex coefficients V^-1 z, in place. Bootstrapping's
    /// CoeffToSlot applies this matrix homomorphically.
    pub(crate) fn coefficients_of_slots(&self, values: &mut [Complex64]) {
        self.inverse_special_fft(values);
        let inverse = 1.0 / values.len() as f64;
        values.iter_mut().for_each(|z| *z *= inverse);
    }

    /// Slot values from the n complex coefficients u_k = c_k + i c_{k+n} of the degree-2n
    /// polynomial in Y: z_j = sum_k u_k w_j^k with w_j = exp(2 pi i 5^j / 4n) (which is p(w_j),
    /// since w_j^n = i). A radix-2 decimation in time over the rotation group.
    fn special_fft(&self, values: &mut [Complex64]) {
        let n = values.len();
        bit_reverse_permute(values);
        let mut h = 1;
        while h < n {
            let twiddles = &self.twiddles[h..2 * h];
            for block in values.chunks_exact_mut(2 * h) {
                let (low, high) = block.split_at_mut(h);
                for ((a, b), &w) in low.iter_mut().zip(high.iter_mut()).zip(twiddles) {
                    let u = *a;
                    let v = *b * w;
                    *a = u + v;
                    *b = u - v;
                }
            }
            h *= 2;
        }
    }

    /// The inverse of [`special_fft`](Self::special_fft) without its 1/n (the caller folds it
    /// into the scale): the stages in reverse with conjugate twiddles, then the bit reversal.
    fn inverse_special_fft(&self, values: &mut [Complex64]) {
        let n = values.len();
        let mut h = n / 2;
        while h >= 1 {
            let twiddles = &self.twiddles[h..2 * h];
            for block in values.chunks_exact_mut(2 * h) {
                let (low, high) = block.split_at_mut(h);
                for ((a, b), &w) in low.iter_mut().zip(high.iter_mut()).zip(twiddles) {
                    let u = *a + *b;
                    let v = (*a - *b) * w.conj();
                    *a = u;
                    *b = v;
                }
            }
            h /= 2;
        }
        bit_reverse_permute(values);
    }
}

/// exp(2 pi i k / order) for `order` a multiple of 8: the angle is brought into [0, pi/4] by
/// exact quarter turns and the reflection exp(i(pi/2 - x)) = (sin x, cos x), so every root is
/// as accurate as sin and cos of a small angle (about one ulp), and the roots at multiples of
/// pi/2 are exact.
fn root_of_unity(k: usize, order: usize) -> Complex64 {
    debug_assert!(order.is_multiple_of(8) && k < order);
    let eighth = order / 8;
    let quarter = order / 4;
    let (turns, rest) = (k / quarter, k % quarter);
    let base = if rest <= eighth {
        let (s, c) = (2.0 * PI * rest as f64 / order as f64).sin_cos();
        Complex64::new(c, s)
    } else {
        let (s, c) = (2.0 * PI * (quarter - rest) as f64 / order as f64).sin_cos();
        Complex64::new(s, c)
    };
    // Multiply by i^turns: exact swaps and negations.
    match turns {
        0 => base,
        1 => Complex64::new(-base.im, base.re),
        2 => -base,
        _ => Complex64::new(base.im, -base.re),
    }
}

/// In-place bit-reversal permutation of a power-of-two-length slice.
fn bit_reverse_permute(values: &mut [Complex64]) {
    let n = values.len();
    let bits = n.trailing_zeros();
    for i in 0..n {
        let j = bit_reverse(i, bits);
        if i < j {
            values.swap(i, j);
        }
    }
}

fn check_scale(scale: f64) -> Result<()> {
    if scale.is_finite() && scale > 0.0 {
        Ok(())
    } else {
        Err(SchemeError::InvalidParameters(format!(
            "CKKS scale {scale} is not allowed: it must be a finite number greater than 0"
        )))
    }
}

/// round(x) for |x| < 2^126; values that fit an i64 take the fast hardware conversion.
#[inline]
fn round_to_i128(x: f64) -> i128 {
    let r = x.round();
    if r.abs() < 9.2e18 {
        i128::from(r as i64)
    } else {
        r as i128
    }
}

/// x mod q in [0, q) for any `i128` x, without a 128-bit division: |x| = hi 2^64 + lo, both
/// halves reduced by Barrett and recombined, then negated for negative x.
#[inline]
pub fn reduce_i128(x: i128, q: &Modulus) -> u32 {
    let magnitude = x.unsigned_abs();
    let (hi, lo) = ((magnitude >> 64) as u64, magnitude as u64);
    // 2^64 mod q = ((2^64 - 1) mod q + 1) mod q.
    let two_64 = q.add(q.reduce_u64(u64::MAX), 1 % q.value());
    let r = q.mul_add(q.reduce_u64(hi), two_64, q.reduce_u64(lo));
    if x < 0 {
        q.neg(r)
    } else {
        r
    }
}

/// The polynomials with the given integer coefficients (N each, as from
/// [`CkksEncoder::encode`]), reduced modulo every prime of `basis`: one batch in coefficient
/// form, polynomial k at index k.
///
/// Fails with [`SchemeError::InvalidParameters`] if a polynomial does not have N = `basis`'s
/// degree coefficients.
///
/// ```
/// use pimhe_schemes::ckks::encoder::to_poly_batch;
/// let basis = pimhe_ring::RingBasis::new(4, &[17, 97]).unwrap();
/// let batch = to_poly_batch(&[vec![-1i128, 2, 1 << 100, 0]], &basis).unwrap();
/// assert_eq!(batch.poly_limb(0, 0)[..2], [16, 2]);
/// assert_eq!(batch.poly_limb(1, 0)[2], ((1u128 << 100) % 97) as u32);
/// ```
pub fn to_poly_batch<C: AsRef<[i128]>>(coefficients: &[C], basis: &Arc<RingBasis>) -> Result<PolyBatch> {
    let n = basis.degree();
    if let Some(index) = coefficients.iter().position(|c| c.as_ref().len() != n) {
        return Err(SchemeError::InvalidParameters(format!(
            "polynomial {index} has {} coefficients; the basis has ring degree {n}",
            coefficients[index].as_ref().len()
        )));
    }
    let mut batch = PolyBatch::zeros(basis, coefficients.len(), Representation::Coefficient);
    for limb in 0..basis.len() {
        let q = *basis.modulus(limb);
        for (k, poly) in coefficients.iter().enumerate() {
            for (dst, &c) in batch.poly_limb_mut(limb, k).iter_mut().zip(poly.as_ref()) {
                *dst = reduce_i128(c, &q);
            }
        }
    }
    Ok(batch)
}

/// The centred coefficients, as `f64`, of every polynomial of a coefficient-form batch (e.g. a
/// decrypted phase), for [`CkksEncoder::decode`]. `crt` must be built for the batch's primes, in
/// order. Uses the batched conversion [`CrtToFloat::centered_into`].
///
/// Fails with [`SchemeError::InvalidParameters`] when `crt` does not match the batch's primes,
/// and with the ring's error when the batch is in NTT form.
///
/// ```
/// use pimhe_math::CrtToFloat;
/// use pimhe_schemes::ckks::encoder::{centered_coefficients, to_poly_batch};
/// let basis = pimhe_ring::RingBasis::new(4, &pimhe_math::ntt_primes(30, 4, 3, &[]).unwrap()).unwrap();
/// let batch = to_poly_batch(&[[-5i128, 1 << 80, 7, -(1 << 70)]], &basis).unwrap();
/// let crt = CrtToFloat::new(&basis.moduli()).unwrap();
/// let centred = centered_coefficients(&batch, &crt).unwrap();
/// assert_eq!(centred, vec![vec![-5.0, 2f64.powi(80), 7.0, -(2f64.powi(70))]]);
/// ```
pub fn centered_coefficients(batch: &PolyBatch, crt: &CrtToFloat) -> Result<Vec<Vec<f64>>> {
    batch.expect(Representation::Coefficient, "reading CKKS coefficients")?;
    let primes = batch.basis().moduli();
    if crt.moduli() != primes.as_slice() {
        return Err(SchemeError::InvalidParameters(format!(
            "the CRT was built for primes {:?}, the batch has {:?}",
            crt.moduli().iter().map(|q| q.value()).collect::<Vec<_>>(),
            primes.iter().map(|q| q.value()).collect::<Vec<_>>()
        )));
    }
    (0..batch.count())
        .map(|k| {
            let limbs: Vec<&[u32]> = (0..primes.len()).map(|limb| batch.poly_limb(limb, k)).collect();
            let mut out = vec![0.0; batch.degree()];
            crt.centered_into(&limbs, &mut out)?;
            Ok(out)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use rand_chacha::rand_core::{Rng, SeedableRng};
    use rand_chacha::ChaCha20Rng;

    use super::*;

    fn rng(seed: u64) -> ChaCha20Rng {
        ChaCha20Rng::seed_from_u64(seed)
    }

    /// Uniform in [-1, 1).
    fn uniform(rng: &mut ChaCha20Rng) -> f64 {
        (rng.next_u64() >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    }

    fn random_values(rng: &mut ChaCha20Rng, count: usize) -> Vec<Complex64> {
        (0..count).map(|_| Complex64::new(uniform(rng), uniform(rng))).collect()
    }

    fn to_f64(coefficients: &[i128]) -> Vec<f64> {
        coefficients.iter().map(|&c| c as f64).collect()
    }

    /// X -> X^k on integer coefficients: X^i goes to X^(ik mod 2N), negated past N.
    fn automorphism(coefficients: &[i128], k: usize) -> Vec<i128> {
        let n = coefficients.len();
        let mut out = vec![0i128; n];
        for (i, &c) in coefficients.iter().enumerate() {
            let t = i * k % (2 * n);
            if t < n {
                out[t] = c;
            } else {
                out[t - n] = -c;
            }
        }
        out
    }

    fn pow_mod(base: usize, mut e: usize, m: usize) -> usize {
        let (mut result, mut base) = (1 % m, base % m);
        while e > 0 {
            if e & 1 == 1 {
                result = result * base % m;
            }
            base = base * base % m;
            e >>= 1;
        }
        result
    }

    /// The Galois element of a left rotation by r (negative: right): 5^r mod 2N.
    fn rotation_element(r: i64, degree: usize) -> usize {
        let k = pow_mod(5, r.unsigned_abs() as usize, 2 * degree);
        if r >= 0 {
            k
        } else {
            (1..2 * degree).step_by(2).find(|&x| x * k % (2 * degree) == 1).unwrap()
        }
    }

    /// The canonical embedding evaluated directly, O(N n): m(zeta^(5^j mod 2N)) for j < slots,
    /// exponents reduced exactly before the trigonometry.
    fn naive_slots(coefficients: &[f64], slots: usize) -> Vec<Complex64> {
        let n = coefficients.len();
        let two_n = 2 * n;
        let mut root = 1usize; // 5^j mod 2N
        let mut out = Vec::with_capacity(slots);
        for _ in 0..slots {
            let mut sum = Complex64::new(0.0, 0.0);
            for (k, &c) in coefficients.iter().enumerate() {
                if c != 0.0 {
                    let e = k * root % two_n;
                    sum += Complex64::from_polar(c, PI * e as f64 / n as f64);
                }
            }
            out.push(sum);
            root = root * 5 % two_n;
        }
        out
    }

    /// What rounding the 2n coefficients to integers can move a slot by, with margin: each
    /// rounding error is at most 1/2 and they add up like a random walk (8 standard
    /// deviations), plus the FFT's own floating-point error.
    fn rounding_tolerance(slots: usize, scale: f64) -> f64 {
        8.0 * (slots as f64 / 6.0).sqrt() / scale + 1e-13
    }

    fn max_distance(a: &[Complex64], b: &[Complex64]) -> f64 {
        assert_eq!(a.len(), b.len());
        a.iter().zip(b).map(|(x, y)| (x - y).norm()).fold(0.0, f64::max)
    }

    /// (N, slots) pairs: full and sparse packings from N = 2 up to 2^12, and 1 slot.
    fn shapes() -> Vec<(usize, usize)> {
        let mut shapes = Vec::new();
        for log_n in [1u32, 2, 3, 5, 8, 12] {
            let degree = 1 << log_n;
            let mut slots = degree / 2;
            while slots >= 1 {
                shapes.push((degree, slots));
                slots /= 2;
            }
        }
        shapes
    }

    #[test]
    fn encode_decode_round_trip_complex_and_real() {
        let scale = 2f64.powi(40);
        let mut rng = rng(1);
        for (degree, slots) in shapes() {
            let encoder = CkksEncoder::new(degree).unwrap();
            let values = random_values(&mut rng, slots);
            let coefficients = encoder.encode(&values, slots, scale).unwrap();
            let decoded = encoder.decode(&to_f64(&coefficients), slots, scale).unwrap();
            let error = max_distance(&decoded, &values);
            assert!(error <= rounding_tolerance(slots, scale), "N = {degree}, {slots} slots: error {error:e}");
            // At scale 2^40 that is 2^-40 relative to the values' size, up to the sqrt(n) of
            // the rounding's random walk.
            assert!(error <= 2f64.powi(-40) * (slots as f64).sqrt() * 4.0, "N = {degree}, {slots} slots: {error:e}");

            let reals: Vec<f64> = values.iter().map(|z| z.re).collect();
            let coefficients = encoder.encode_real(&reals, slots, scale).unwrap();
            let decoded = encoder.decode_real(&to_f64(&coefficients), slots, scale).unwrap();
            let error = decoded.iter().zip(&reals).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
            assert!(error <= rounding_tolerance(slots, scale), "N = {degree}, {slots} real slots: error {error:e}");
        }
    }

    #[test]
    fn round_trip_at_the_largest_degrees() {
        let scale = 2f64.powi(45);
        let mut rng = rng(2);
        for (degree, slots) in [(1 << 15, 1 << 14), (1 << 16, 1 << 15), (1 << 17, 1 << 16), (1 << 17, 8)] {
            let encoder = CkksEncoder::new(degree).unwrap();
            let values = random_values(&mut rng, slots);
            let coefficients = encoder.encode(&values, slots, scale).unwrap();
            let decoded = encoder.decode(&to_f64(&coefficients), slots, scale).unwrap();
            let error = max_distance(&decoded, &values);
            assert!(error <= rounding_tolerance(slots, scale), "N = {degree}, {slots} slots: error {error:e}");
        }
    }

    #[test]
    fn short_inputs_are_zero_padded() {
        let encoder = CkksEncoder::new(64).unwrap();
        let scale = 2f64.powi(40);
        let values = [Complex64::new(0.5, -0.25), Complex64::new(-3.0, 1.0), Complex64::new(7.0, 0.0)];
        for slots in [4, 8, 32] {
            let decoded =
                encoder.decode(&to_f64(&encoder.encode(&values, slots, scale).unwrap()), slots, scale).unwrap();
            assert_eq!(decoded.len(), slots);
            let mut expected = values.to_vec();
            expected.resize(slots, Complex64::new(0.0, 0.0));
            assert!(max_distance(&decoded, &expected) < 1e-10, "{slots} slots");
        }
        // No values at all: the zero polynomial.
        assert!(encoder.encode(&[], 16, scale).unwrap().iter().all(|&c| c == 0));
    }

    #[test]
    fn decode_matches_naive_canonical_embedding() {
        let scale = 2f64.powi(20);
        let mut rng = rng(3);
        for (degree, slots) in shapes() {
            let encoder = CkksEncoder::new(degree).unwrap();
            // Random integer coefficients on the packing's grid (multiples of N/(2n)).
            let gap = degree / (2 * slots);
            let mut coefficients = vec![0.0; degree];
            for c in coefficients.iter_mut().step_by(gap) {
                *c = (uniform(&mut rng) * 2f64.powi(30)).round();
            }
            let fast = encoder.decode(&coefficients, slots, scale).unwrap();
            let naive: Vec<Complex64> = naive_slots(&coefficients, slots).into_iter().map(|z| z / scale).collect();
            let size: f64 = coefficients.iter().map(|c| c.abs()).sum::<f64>() / scale;
            let error = max_distance(&fast, &naive);
            assert!(error <= 1e-13 * size.max(1.0), "N = {degree}, {slots} slots: error {error:e} (size {size:e})");
        }
    }

    #[test]
    fn encode_inverts_the_naive_canonical_embedding() {
        let scale = 2f64.powi(40);
        let mut rng = rng(4);
        for (degree, slots) in shapes() {
            let encoder = CkksEncoder::new(degree).unwrap();
            let values = random_values(&mut rng, slots);
            let coefficients = encoder.encode(&values, slots, scale).unwrap();
            // Off the grid everything is zero.
            let gap = degree / (2 * slots);
            assert!(coefficients.iter().enumerate().all(|(i, &c)| i % gap == 0 || c == 0));
            let naive = naive_slots(&to_f64(&coefficients), slots);
            let expected: Vec<Complex64> = values.iter().map(|z| z * scale).collect();
            let error = max_distance(&naive, &expected) / scale;
            assert!(error <= rounding_tolerance(slots, scale) + 1e-12, "N = {degree}, {slots} slots: error {error:e}");
        }
    }

    #[test]
    fn galois_element_5_to_the_r_rotates_slots_left_by_r() {
        let scale = 2f64.powi(40);
        let mut rng = rng(5);
        for (degree, slots) in [(8, 4), (16, 8), (16, 2), (64, 32), (64, 8), (256, 128), (256, 16), (1024, 64), (32, 1)]
        {
            let encoder = CkksEncoder::new(degree).unwrap();
            let values = random_values(&mut rng, slots);
            let coefficients = encoder.encode(&values, slots, scale).unwrap();
            let n = slots as i64;
            for r in [0, 1, 2, 3, 5, n - 1, n, n + 1, -1, -2, -3, -(n - 1), 2 * n + 3] {
                let k = rotation_element(r, degree);
                let decoded = encoder.decode(&to_f64(&automorphism(&coefficients, k)), slots, scale).unwrap();
                let expected: Vec<Complex64> = (0..n).map(|j| values[(j + r).rem_euclid(n) as usize]).collect();
                let error = max_distance(&decoded, &expected);
                assert!(
                    error <= rounding_tolerance(slots, scale),
                    "N = {degree}, {slots} slots, rotation by {r} (k = {k}): error {error:e}"
                );
            }
        }
    }

    #[test]
    fn galois_element_2n_minus_1_conjugates_every_slot() {
        let scale = 2f64.powi(40);
        let mut rng = rng(6);
        for (degree, slots) in [(2, 1), (8, 4), (64, 32), (64, 4), (1024, 512), (1024, 1)] {
            let encoder = CkksEncoder::new(degree).unwrap();
            let values = random_values(&mut rng, slots);
            let coefficients = encoder.encode(&values, slots, scale).unwrap();
            let decoded = encoder.decode(&to_f64(&automorphism(&coefficients, 2 * degree - 1)), slots, scale).unwrap();
            let expected: Vec<Complex64> = values.iter().map(|z| z.conj()).collect();
            let error = max_distance(&decoded, &expected);
            assert!(error <= rounding_tolerance(slots, scale), "N = {degree}, {slots} slots: error {error:e}");
        }
    }

    #[test]
    fn sparse_decoding_ignores_coefficients_off_the_grid() {
        let encoder = CkksEncoder::new(32).unwrap();
        let scale = 2f64.powi(30);
        let values = random_values(&mut rng(7), 4);
        let mut coefficients = to_f64(&encoder.encode(&values, 4, scale).unwrap());
        // gap = 4: positions 1, 2, 3, 5, ... are off the grid.
        for (i, c) in coefficients.iter_mut().enumerate() {
            if i % 4 != 0 {
                *c = 1000.0 * i as f64;
            }
        }
        let decoded = encoder.decode(&coefficients, 4, scale).unwrap();
        assert!(max_distance(&decoded, &values) <= rounding_tolerance(4, scale));
    }

    fn message(result: Result<impl std::fmt::Debug>) -> String {
        result.unwrap_err().to_string()
    }

    #[test]
    fn rejects_bad_degrees_slots_scales_and_values() {
        for degree in [0, 1, 3, 12, 1 << 18] {
            let err = CkksEncoder::new(degree).unwrap_err().to_string();
            assert!(err.contains(&format!("ring degree {degree} is not allowed")) && err.contains("2^17"), "{err}");
        }
        let encoder = CkksEncoder::new(16).unwrap();
        assert_eq!(format!("{encoder:?}"), "CkksEncoder { degree: 16, .. }");
        let one = [Complex64::new(1.0, 0.0)];
        for slots in [0, 3, 6, 16, 32] {
            let err = message(encoder.encode(&one, slots, 1e6));
            assert!(
                err.contains(&format!("slot count {slots} is not allowed")) && err.contains("from 1 to N/2 = 8"),
                "{err}"
            );
            let err = message(encoder.decode(&[0.0; 16], slots, 1e6));
            assert!(err.contains(&format!("slot count {slots} is not allowed")), "{err}");
        }
        let err = message(encoder.encode(&[Complex64::new(0.0, 0.0); 5], 4, 1e6));
        assert_eq!(err, "5 values do not fit in 4 slots");
        assert_eq!(
            encoder.encode(&[Complex64::new(0.0, 0.0); 5], 4, 1e6).unwrap_err(),
            SchemeError::TooManyValues { len: 5, slots: 4 }
        );
        let err = message(encoder.encode(&[Complex64::new(1.0, 0.0), Complex64::new(0.0, f64::NAN)], 4, 1e6));
        assert!(err.contains("value at index 1") && err.contains("NaN"), "{err}");
        let err = message(encoder.encode_real(&[1.0, 2.0, f64::NEG_INFINITY], 4, 1e6));
        assert!(err.contains("value at index 2") && err.contains("-inf"), "{err}");
        for scale in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            let err = message(encoder.encode(&one, 4, scale));
            assert!(err.contains("scale") && err.contains("finite number greater than 0"), "{scale}: {err}");
            let err = message(encoder.decode(&[0.0; 16], 4, scale));
            assert!(err.contains("finite number greater than 0"), "{scale}: {err}");
        }
        // 2^100 * 2^30 = 2^130 > 2^126.
        let err = message(encoder.encode_real(&[2f64.powi(100)], 1, 2f64.powi(30)));
        assert!(err.starts_with("invalid parameters: scale overflow") && err.contains("too large"), "{err}");
        // A product that overflows f64 itself.
        let err = message(encoder.encode_real(&[1e300], 8, 1e300));
        assert!(err.contains("scale overflow"), "{err}");
        // Just below the limit is fine: one slot puts the value itself in coefficient 0.
        let ok = encoder.encode_real(&[2f64.powi(95)], 1, 2f64.powi(30)).unwrap();
        assert_eq!(ok[0], 1i128 << 125);
        let err = message(encoder.decode(&[0.0; 15], 4, 1.0));
        assert!(err.contains("N = 16 coefficients") && err.contains("got 15"), "{err}");
        let mut bad = [0.0; 16];
        bad[8] = f64::INFINITY;
        let err = message(encoder.decode(&bad, 8, 1.0));
        assert!(err.contains("coefficient 8 is inf"), "{err}");
    }

    #[test]
    fn to_poly_batch_reduces_every_coefficient_modulo_every_prime() {
        let primes = pimhe_math::ntt_primes(30, 16, 3, &[]).unwrap();
        let basis = RingBasis::new(16, &primes).unwrap();
        let special =
            [0i128, 1, -1, i128::MAX, i128::MIN, i128::MIN + 1, 1 << 125, -(1 << 125), 1 << 64, -(1 << 64) - 1];
        let mut rng = rng(8);
        let first: Vec<i128> = special.iter().copied().chain((0..6).map(|_| rng.next_u64() as i128)).collect();
        let second: Vec<i128> = (0..16).map(|_| ((rng.next_u64() as i128) << 60) ^ rng.next_u64() as i128).collect();
        let second: Vec<i128> = second.iter().enumerate().map(|(i, &x)| if i % 2 == 0 { -x } else { x }).collect();
        let batch = to_poly_batch(&[first.as_slice(), second.as_slice()], &basis).unwrap();
        assert_eq!((batch.count(), batch.representation()), (2, Representation::Coefficient));
        for (limb, &q) in primes.iter().enumerate() {
            for (k, poly) in [&first, &second].into_iter().enumerate() {
                let expected: Vec<u32> = poly.iter().map(|&c| c.rem_euclid(i128::from(q)) as u32).collect();
                assert_eq!(batch.poly_limb(limb, k), expected.as_slice(), "prime {q}, polynomial {k}");
            }
        }
        let err = message(to_poly_batch(&[vec![0i128; 15]], &basis));
        assert!(err.contains("polynomial 0 has 15 coefficients") && err.contains("ring degree 16"), "{err}");
    }

    #[test]
    fn rns_round_trip_through_crt_to_float() {
        // encode -> residues -> centred f64 (word-only CRT) -> decode gives the values back.
        let degree = 1 << 10;
        let primes = pimhe_math::ntt_primes(30, degree, 4, &[]).unwrap();
        let basis = RingBasis::new(degree, &primes).unwrap();
        let crt = CrtToFloat::new(&basis.moduli()).unwrap();
        let encoder = CkksEncoder::new(degree).unwrap();
        let scale = 2f64.powi(50);
        let mut rng = rng(9);
        let a = random_values(&mut rng, 512);
        let b = random_values(&mut rng, 64);
        let coefficients = [encoder.encode(&a, 512, scale).unwrap(), encoder.encode(&b, 64, scale).unwrap()];
        let batch = to_poly_batch(&coefficients, &basis).unwrap();
        let centred = centered_coefficients(&batch, &crt).unwrap();
        assert_eq!(centred[0], to_f64(&coefficients[0]));
        assert_eq!(centred[1], to_f64(&coefficients[1]));
        let decoded = encoder.decode(&centred[1], 64, scale).unwrap();
        assert!(max_distance(&decoded, &b) <= rounding_tolerance(64, scale));

        let wrong = CrtToFloat::new(&basis.moduli()[..3]).unwrap();
        assert!(message(centered_coefficients(&batch, &wrong)).contains("the CRT was built for primes"));
        let mut ntt = batch.clone();
        ntt.to_ntt().unwrap();
        assert!(centered_coefficients(&ntt, &crt).is_err());
    }

    #[test]
    fn roots_of_unity_are_accurate_in_every_octant() {
        for order in [8usize, 64, 1 << 17] {
            for k in (0..order).step_by((order / 64).max(1)) {
                let exact = Complex64::from_polar(1.0, 2.0 * PI * k as f64 / order as f64);
                assert!((root_of_unity(k, order) - exact).norm() < 1e-15, "k = {k}, order = {order}");
            }
        }
        assert_eq!(root_of_unity(0, 8), Complex64::new(1.0, 0.0));
        assert_eq!(root_of_unity(2, 8), Complex64::new(0.0, 1.0));
        assert_eq!(root_of_unity(4, 8), Complex64::new(-1.0, 0.0));
        assert_eq!(root_of_unity(6, 8), Complex64::new(0.0, -1.0));
    }
}
