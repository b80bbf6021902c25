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

    /// The roots of the butterfly stage of half-width h (a power of two below N/2) in the
    /// special FFT: stage h maps (a, b) at positions (j, j + h) of each block of 2h values to
    /// (a + w_j b, a - w_j b). Bootstrapping's CoeffToSlot and SlotToCoeff evaluate these
    /// stages homomorphically; taking the roots from here keeps them the encoder's own maps,
    /// slot order included.
    pub(crate) fn stage_twiddles(&self, h: usize) -> &[Complex64] {
        &self.twiddles[h..2 * h]
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
#[path = "encoder_tests.rs"]
mod tests;
