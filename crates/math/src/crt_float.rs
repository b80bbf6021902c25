//! CRT reconstruction of the centred value to floating point, without big integers: what CKKS
//! decryption needs (the phase's coefficients are a few dozen bits, the modulus hundreds).
//!
//! [`CrtToSmall`](crate::CrtToSmall) gets v/Q to a precision relative to Q, which is useless here:
//! a CKKS coefficient v is about 2^40..2^60 while Q can be 2^900, so v/Q in f64 has no correct
//! bit of v left. Instead this module converts the residues exactly to Garner's mixed-radix
//! digits,
//!
//! ```text
//! v = a_0 + a_1 q_0 + a_2 q_0 q_1 + ... + a_{L-1} q_0 ... q_{L-2},   0 <= a_i < q_i,
//! ```
//!
//! using only word arithmetic modulo each q_i. The digits are an exact positional representation
//! of v in [0, Q), so
//! - the sign of the centred value (v > Q/2 means "negative") is decided exactly, by comparing
//!   the digits of v with those of floor(Q/2) from the top digit down;
//! - the digits of Q - 1 - v are simply (q_i - 1 - a_i) (no borrows), so the magnitude of a
//!   negative value is as easy to get as that of a positive one;
//! - the magnitude is evaluated from its highest non-zero digit by Horner's rule in exact `u128`
//!   arithmetic until the next step would overflow (by then the accumulator is >= 2^98 and the
//!   digits left contribute less than 2^-97 relatively), then scaled once by the correctly
//!   rounded f64 of the remaining prefix product. That is three roundings in all: the result is
//!   within about 3 * 2^-53 of |v| relatively, whatever the number of primes, and exact for
//!   |v| < 2^53.
//!
//! Cost: about L^2 / 2 Shoup multiplications per coefficient for the digits (L = number of
//! primes), vectorised in the batch path ([`CrtToFloat::centered_into`]): for N = 2^16 and 30
//! primes, about 20 ms on one AVX2 core (45 ms scalar, and several times that one coefficient at
//! a time with [`CrtToFloat::centered`]), a few times the inverse NTTs of the same polynomial.

use std::fmt;

use num_bigint::BigUint;
use zeroize::Zeroize;

use crate::error::{MathError, Result};
use crate::modular::Modulus;
use crate::rns::RnsBase;
use crate::simd::lanes::{csub, mul_shoup_lazy, sub_mod, ModVec, ShoupVec};
use crate::simd::{dispatch, Isa, Kernel, Lanes};

/// Coefficients per block in the batch conversion: the digit scratch (L x BLOCK words) stays in
/// the L1/L2 cache while every digit row is streamed over.
const BLOCK: usize = 256;

/// Bases up to this many primes keep the digits of [`CrtToFloat::centered`] on the stack.
const STACK_DIGITS: usize = 64;

/// Maps residues modulo Q = q_0 ... q_{L-1} to the f64 nearest (within ~2^-51 relatively) to the
/// centred value v in (-Q/2, Q/2].
///
/// ```
/// use pimhe_math::{CrtToFloat, Modulus};
/// let primes = [Modulus::new(97).unwrap(), Modulus::new(193).unwrap(), Modulus::new(257).unwrap()];
/// let crt = CrtToFloat::new(&primes).unwrap();
/// // Q = 97 * 193 * 257 = 4811297; v = -1000 is stored as Q - 1000.
/// let residues: Vec<u32> = primes.iter().map(|q| q.reduce_i64(-1000)).collect();
/// assert_eq!(crt.centered(&residues), -1000.0);
/// // Q/2 = 2405648.5: the largest positive value is 2405648, the next one is negative.
/// let top: Vec<u32> = primes.iter().map(|q| q.reduce_i64(2405648)).collect();
/// assert_eq!(crt.centered(&top), 2405648.0);
/// let wrapped: Vec<u32> = primes.iter().map(|q| q.reduce_i64(2405649)).collect();
/// assert_eq!(crt.centered(&wrapped), -2405648.0);
///
/// // Many coefficients at once, limb-major (all residues mod q_0, then all mod q_1, ...).
/// let values = [0i64, 1, -1, 123456, -654321];
/// let data: Vec<u32> = primes.iter().flat_map(|q| values.iter().map(|&v| q.reduce_i64(v))).collect();
/// let mut out = [0.0; 5];
/// crt.centered_limb_major(&data, &mut out).unwrap();
/// assert_eq!(out, [0.0, 1.0, -1.0, 123456.0, -654321.0]);
/// ```
#[derive(Clone)]
pub struct CrtToFloat {
    moduli: Vec<Modulus>,
    /// Row i, column j < i - 1: (q_j mod q_i, its Shoup constant), the Horner multipliers that
    /// evaluate a_0 + a_1 q_0 + ... + a_{i-1} q_0...q_{i-2} modulo q_i. Flat L x L.
    horner: Vec<(u32, u32)>,
    /// (q_0 ... q_{i-1})^{-1} mod q_i and its Shoup constant (row 0 holds (1 mod q_0, ...),
    /// unused).
    prefix_inv: Vec<(u32, u32)>,
    /// Mixed-radix digits of floor(Q/2): v is negative exactly when its digits exceed these.
    half_digits: Vec<u32>,
    /// q_0 ... q_{k-1} as the correctly rounded f64, for k = 0..=L (infinite past 2^1024).
    prefix_f64: Vec<f64>,
}

impl fmt::Debug for CrtToFloat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The tables are L^2 words: show what they were built for.
        let primes: Vec<u32> = self.moduli.iter().map(|q| q.value()).collect();
        f.debug_struct("CrtToFloat").field("moduli", &primes).finish_non_exhaustive()
    }
}

impl CrtToFloat {
    /// Precomputes for the base `moduli`. Fails with [`MathError::InvalidBase`] if `moduli` is
    /// empty or two of them share a factor.
    pub fn new(moduli: &[Modulus]) -> Result<Self> {
        // Validates the base (non-empty, pairwise coprime) and gives Q.
        let base = RnsBase::new(moduli)?;
        let l = moduli.len();
        let mut horner = vec![(0u32, 0u32); l * l];
        let mut prefix_inv = Vec::with_capacity(l);
        for (i, qi) in moduli.iter().enumerate() {
            let mut prefix = 1 % qi.value();
            for (j, qj) in moduli[..i].iter().enumerate() {
                let w = qj.value() % qi.value();
                horner[i * l + j] = (w, qi.shoup(w));
                prefix = qi.mul(prefix, w);
            }
            let inv = qi.inv(prefix)?;
            prefix_inv.push((inv, qi.shoup(inv)));
        }
        let mut rest = base.product() / 2u32;
        let half_digits = moduli
            .iter()
            .map(|q| {
                let digit = (&rest % q.value()).to_u32_digits().first().copied().unwrap_or(0);
                rest /= q.value();
                digit
            })
            .collect();
        let mut prefix_f64 = Vec::with_capacity(l + 1);
        let mut prefix = BigUint::from(1u32);
        prefix_f64.push(1.0);
        for q in moduli {
            prefix *= q.value();
            prefix_f64.push(biguint_to_f64(&prefix));
        }
        Ok(Self { moduli: moduli.to_vec(), horner, prefix_inv, half_digits, prefix_f64 })
    }

    /// The moduli q_0 ... q_{L-1}.
    pub fn moduli(&self) -> &[Modulus] {
        &self.moduli
    }

    /// The centred value of one coefficient given its residues (one per modulus, each reduced
    /// below its modulus), as the f64 within about 3 * 2^-53 of it relatively (exact below 2^53;
    /// +-infinity if |v| >= 2^1024).
    ///
    /// # Panics
    /// If `residues` does not hold exactly one residue per modulus.
    pub fn centered(&self, residues: &[u32]) -> f64 {
        let l = self.moduli.len();
        assert_eq!(residues.len(), l, "centered needs one residue per modulus");
        // The digits on the stack for the usual bases: this is called once per coefficient.
        let mut stack = [0u32; STACK_DIGITS];
        let mut heap = Vec::new();
        let digits = if l <= STACK_DIGITS {
            &mut stack[..l]
        } else {
            heap.resize(l, 0);
            &mut heap[..]
        };
        digits[0] = residues[0];
        for i in 1..l {
            digits[i] = self.garner_digit(i, residues[i], |j| digits[j]);
        }
        let value = self.finish(|i| digits[i]);
        // The digits are the value itself; a decrypted phase carries the noise, which says
        // something about the secret key, so the scratch is wiped like the phase.
        digits.zeroize();
        value
    }

    /// Centred values of many coefficients: `limbs[i]` holds the residues modulo q_i of every
    /// coefficient (reduced), and `out[c]` receives coefficient c. The same values as
    /// [`centered`](Self::centered), computed for blocks of coefficients digit row by digit
    /// row, so the inner loops stream over contiguous slices and run on the vector kernels of
    /// [`Isa::active`] (same words on every instruction set). To use several threads, give
    /// each a range of coefficients: sub-slices of every limb and of `out`.
    ///
    /// Fails with [`MathError::LengthMismatch`] unless there is one limb per modulus and every
    /// limb has `out.len()` residues.
    pub fn centered_into(&self, limbs: &[&[u32]], out: &mut [f64]) -> Result<()> {
        let l = self.moduli.len();
        if limbs.len() != l {
            return Err(MathError::LengthMismatch { what: "limbs (one per modulus)", expected: l, got: limbs.len() });
        }
        if let Some(bad) = limbs.iter().find(|limb| limb.len() != out.len()) {
            return Err(MathError::LengthMismatch {
                what: "residues per limb (one per output coefficient)",
                expected: out.len(),
                got: bad.len(),
            });
        }
        // digits[i * BLOCK + c]: digit i of coefficient `start + c`.
        let mut digits = vec![0u32; l * BLOCK];
        let mut column = vec![0u32; l];
        let isa = Isa::active();
        for start in (0..out.len()).step_by(BLOCK) {
            let len = BLOCK.min(out.len() - start);
            dispatch(isa, GarnerBlock { crt: self, limbs, start, len, digits: &mut digits });
            for (c, dst) in out[start..start + len].iter_mut().enumerate() {
                for (i, d) in column.iter_mut().enumerate() {
                    *d = digits[i * BLOCK + c];
                }
                *dst = self.finish(|i| column[i]);
            }
        }
        // Wiped for the same reason as in `centered`.
        digits.zeroize();
        column.zeroize();
        Ok(())
    }

    /// [`centered_into`](Self::centered_into) for limb-major data of one polynomial (limb i at
    /// `data[i * n..(i + 1) * n]` with n = `out.len()`), the layout of a one-polynomial
    /// `PolyBatch`.
    pub fn centered_limb_major(&self, data: &[u32], out: &mut [f64]) -> Result<()> {
        let n = out.len();
        let l = self.moduli.len();
        if data.len() != l * n {
            return Err(MathError::LengthMismatch {
                what: "limb-major residues (limbs x n)",
                expected: l * n,
                got: data.len(),
            });
        }
        let limbs: Vec<&[u32]> = if n == 0 { vec![&[]; l] } else { data.chunks(n).collect() };
        self.centered_into(&limbs, out)
    }

    /// Digit i > 0 of a value from its residue r_i < q_i and its lower digits `lower(j)`, j < i:
    /// a_i = (r_i - (a_0 + a_1 q_0 + ... + a_{i-1} q_0...q_{i-2})) (q_0...q_{i-1})^{-1} mod q_i,
    /// the sum evaluated by Horner's rule from a_{i-1} down. The running value stays below
    /// 2q_i + 2^30 < 2^32, which the lazy Shoup product accepts, so only the end reduces.
    #[inline(always)]
    fn garner_digit(&self, i: usize, r: u32, lower: impl Fn(usize) -> u32) -> u32 {
        let l = self.moduli.len();
        let qi = &self.moduli[i];
        debug_assert!(r < qi.value(), "residue {r} is not reduced modulo {}", qi.value());
        let mut s = lower(i - 1);
        for j in (0..i - 1).rev() {
            let (w, w_shoup) = self.horner[i * l + j];
            s = qi.mul_shoup_lazy(s, w, w_shoup) + lower(j);
        }
        let (inv, inv_shoup) = self.prefix_inv[i];
        qi.mul_shoup(qi.sub(r, qi.reduce_u64(u64::from(s))), inv, inv_shoup)
    }

    /// The signed f64 of the value whose mixed-radix digits `digit(0..L)` gives.
    #[inline]
    fn finish(&self, digit: impl Fn(usize) -> u32) -> f64 {
        let l = self.moduli.len();
        // v > floor(Q/2) decided at the highest digit where v and floor(Q/2) differ; bitwise
        // bool operations, so the scan has no data-dependent branch.
        let mut negative = false;
        let mut decided = false;
        for i in (0..l).rev() {
            let (a, h) = (digit(i), self.half_digits[i]);
            negative |= !decided & (a > h);
            decided |= a != h;
        }
        // |v| = Q - v = (Q - 1 - v) + 1 for a negative value: digits q_i - 1 - a_i, with the +1
        // folded into digit 0 (which may then equal q_0; Horner does not mind).
        let magnitude_digit = |i: usize| -> u32 {
            let a = digit(i);
            if negative {
                self.moduli[i].value() - a - u32::from(i != 0)
            } else {
                a
            }
        };
        let Some(top) = (0..l).rev().find(|&i| magnitude_digit(i) != 0) else {
            return 0.0;
        };
        // Exact Horner in u128 from the top digit while it fits; when it stops early the
        // accumulator is >= 2^98, so the digits below change the value by < 2^-97 relatively.
        let mut acc = u128::from(magnitude_digit(top));
        let mut k = top;
        while k > 0 {
            let next = acc
                .checked_mul(u128::from(self.moduli[k - 1].value()))
                .and_then(|x| x.checked_add(u128::from(magnitude_digit(k - 1))));
            match next {
                Some(x) => {
                    acc = x;
                    k -= 1;
                }
                None => break,
            }
        }
        // u128 -> f64 rounds to nearest; the prefix product was rounded once in `new`. A
        // magnitude that fits 64 bits (CKKS messages at the usual scales) converts in hardware,
        // to the same nearest f64, where the u128 conversion is a software routine.
        let nearest = match u64::try_from(acc) {
            Ok(small) => small as f64,
            Err(_) => acc as f64,
        };
        let magnitude = nearest * self.prefix_f64[k];
        if negative {
            -magnitude
        } else {
            magnitude
        }
    }
}

/// The mixed-radix digits of coefficients `start..start + len` (at most [`BLOCK`]) into
/// `digits` (row i at `i * BLOCK`), with a scalar and a vector path that give the same words.
struct GarnerBlock<'a> {
    crt: &'a CrtToFloat,
    limbs: &'a [&'a [u32]],
    start: usize,
    len: usize,
    digits: &'a mut [u32],
}

impl GarnerBlock<'_> {
    /// The scalar formulas on coefficients `from..len` of the block: row `i` is first the
    /// running Horner sum (from a_{i-1} down, one digit row per pass, so every pass streams
    /// over contiguous rows), then digit i. Sums stay below 2q_i + 2^30 < 2^32, which the lazy
    /// Shoup product accepts.
    fn scalar_columns(&mut self, from: usize) {
        let crt = self.crt;
        let count = crt.moduli.len();
        let (start, len) = (self.start, self.len);
        self.digits[from..len].copy_from_slice(&self.limbs[0][start + from..start + len]);
        for i in 1..count {
            let qi = &crt.moduli[i];
            let (lower, upper) = self.digits.split_at_mut(i * BLOCK);
            let sums = &mut upper[from..len];
            sums.copy_from_slice(&lower[(i - 1) * BLOCK + from..(i - 1) * BLOCK + len]);
            for j in (0..i - 1).rev() {
                let (w, w_shoup) = crt.horner[i * count + j];
                for (s, &a) in sums.iter_mut().zip(&lower[j * BLOCK + from..j * BLOCK + len]) {
                    *s = qi.mul_shoup_lazy(*s, w, w_shoup) + a;
                }
            }
            let (inv, inv_shoup) = crt.prefix_inv[i];
            for (s, &r) in sums.iter_mut().zip(&self.limbs[i][start + from..start + len]) {
                debug_assert!(r < qi.value(), "residue {r} is not reduced modulo {}", qi.value());
                *s = qi.mul_shoup(qi.sub(r, qi.reduce_u64(u64::from(*s))), inv, inv_shoup);
            }
        }
    }
}

impl Kernel for GarnerBlock<'_> {
    fn scalar(mut self) {
        self.scalar_columns(0);
    }

    #[inline(always)]
    fn lanes<L: Lanes>(mut self, l: L) {
        let crt = self.crt;
        let count = crt.moduli.len();
        let (start, body) = (self.start, self.len - self.len % L::WIDTH);
        self.digits[..body].copy_from_slice(&self.limbs[0][start..start + body]);
        for i in 1..count {
            // The lane form of `scalar_columns`, on the whole vectors of the block.
            let qi = &crt.moduli[i];
            let q = l.splat(qi.value());
            let m = ModVec::new(l, qi);
            let (lower, upper) = self.digits.split_at_mut(i * BLOCK);
            let sums = &mut upper[..body];
            sums.copy_from_slice(&lower[(i - 1) * BLOCK..(i - 1) * BLOCK + body]);
            for j in (0..i - 1).rev() {
                let (w, w_shoup) = crt.horner[i * count + j];
                let w = ShoupVec::splat(l, w, w_shoup);
                let row = &lower[j * BLOCK..j * BLOCK + body];
                for (s, a) in sums.chunks_exact_mut(L::WIDTH).zip(row.chunks_exact(L::WIDTH)) {
                    l.store(s, l.add(mul_shoup_lazy(l, l.load(s), w, q), l.load(a)));
                }
            }
            // s mod q for s < 2^32: a lazy Shoup product by 1 lands in [0, 2q).
            let one = ShoupVec::splat(l, 1, qi.shoup(1));
            let (inv, inv_shoup) = crt.prefix_inv[i];
            let inv = ShoupVec::splat(l, inv, inv_shoup);
            let residues = &self.limbs[i][start..start + body];
            for (s, r) in sums.chunks_exact_mut(L::WIDTH).zip(residues.chunks_exact(L::WIDTH)) {
                let reduced = csub(l, mul_shoup_lazy(l, l.load(s), one, q), q);
                let difference = sub_mod(l, &m, l.load(r), reduced);
                l.store(s, csub(l, mul_shoup_lazy(l, difference, inv, q), q));
            }
        }
        self.scalar_columns(body);
    }
}

/// The f64 nearest to x (ties to even), or +infinity when x >= 2^1024.
fn biguint_to_f64(x: &BigUint) -> f64 {
    let bits = x.bits();
    if bits <= 64 {
        return x.to_u64_digits().first().copied().unwrap_or(0) as f64;
    }
    // The top 64 bits with a sticky bit for anything non-zero below them: rounding those 64 bits
    // to 53 then gives the same result as rounding x itself (64 >= 53 + 2).
    let shift = bits - 64;
    let top = (x >> shift).to_u64_digits()[0];
    let sticky = u64::from(x.trailing_zeros().unwrap_or(0) < shift);
    let mantissa = (top | sticky) as f64;
    if shift + 64 > 1024 {
        return f64::INFINITY;
    }
    // mantissa * 2^shift: a power of two is exact, the product overflows to infinity correctly.
    mantissa * f64::from_bits((1023 + shift) << 52)
}

#[cfg(test)]
mod tests {
    use num_bigint::{BigInt, Sign};
    use num_traits::{One, Signed, Zero};

    use super::*;
    use crate::primes::ntt_primes;

    /// xorshift64: deterministic test inputs without a dependency.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }

        /// A uniform BigUint below `bound`.
        fn below(&mut self, bound: &BigUint) -> BigUint {
            let mut x = BigUint::zero();
            while x.bits() < bound.bits() + 64 {
                x = (x << 64u32) + BigUint::from(self.next());
            }
            x % bound
        }
    }

    fn moduli(primes: &[u32]) -> Vec<Modulus> {
        primes.iter().map(|&p| Modulus::new(u64::from(p)).unwrap()).collect()
    }

    fn product(primes: &[u32]) -> BigInt {
        primes.iter().fold(BigInt::one(), |acc, &p| acc * p)
    }

    fn residues(v: &BigInt, primes: &[u32]) -> Vec<u32> {
        primes
            .iter()
            .map(|&p| {
                let r = v % p;
                let r = if r.sign() == Sign::Minus { r + p } else { r };
                r.to_u32_digits().1.first().copied().unwrap_or(0)
            })
            .collect()
    }

    /// The centred value of v mod Q, as a BigInt: in (-Q/2, Q/2].
    fn centre(v: &BigInt, q: &BigInt) -> BigInt {
        let mut r = ((v % q) + q) % q;
        if &r * 2 > *q {
            r -= q;
        }
        r
    }

    /// Checks the conversion of every value (reduced and centred first) against the correctly
    /// rounded f64 of the exact centred value: exact below 2^53, relative 2^-50 above.
    fn check(primes: &[u32], values: &[BigInt]) {
        let crt = CrtToFloat::new(&moduli(primes)).unwrap();
        let q = product(primes);
        let mut singles = Vec::new();
        for v in values {
            let exact = centre(v, &q);
            let residues = residues(v, primes);
            let got = crt.centered(&residues);
            singles.push(got);
            // Rust's decimal parsing is correctly rounded: an independent reference.
            let expected: f64 = exact.to_string().parse().unwrap();
            if exact.abs().bits() <= 53 {
                assert_eq!(got, expected, "v = {exact} over {} primes", primes.len());
            } else {
                let relative = ((got - expected) / expected).abs();
                assert!(relative <= 2f64.powi(-51), "v = {exact}: {got:e} vs {expected:e} ({relative:e})");
            }
        }
        // The batch path gives the same bits.
        let limbs: Vec<Vec<u32>> =
            (0..primes.len()).map(|i| values.iter().map(|v| residues(v, primes)[i]).collect()).collect();
        let limb_refs: Vec<&[u32]> = limbs.iter().map(Vec::as_slice).collect();
        let mut out = vec![f64::NAN; values.len()];
        crt.centered_into(&limb_refs, &mut out).unwrap();
        assert_eq!(out, singles);
        let data: Vec<u32> = limbs.concat();
        let mut out = vec![f64::NAN; values.len()];
        crt.centered_limb_major(&data, &mut out).unwrap();
        assert_eq!(out, singles);
    }

    /// Random values below Q in magnitude, values near 0, +-Q/2, +-2^60 and the powers of two
    /// around the f64 integer limit.
    fn interesting_values(primes: &[u32], rng: &mut Rng, random: usize) -> Vec<BigInt> {
        let q = product(primes);
        let half = &q / 2;
        let mut values = Vec::new();
        for delta in -3i64..=3 {
            values.push(BigInt::from(delta));
            values.push(&half + delta);
            values.push(-&half + delta);
            values.push(&q + delta);
            for bits in [52u32, 53, 54, 60, 64, 100, 127, 128, 129] {
                let p = BigInt::one() << bits;
                values.push(&p + delta);
                values.push(-&p + delta);
            }
        }
        let q_unsigned = q.magnitude().clone();
        for _ in 0..random {
            values.push(BigInt::from(rng.below(&q_unsigned)));
            // Values of a CKKS-like size: up to 2^62, either sign.
            let small = BigInt::from(rng.next() >> (rng.next() % 64)) >> 2u32;
            values.push(if rng.next().is_multiple_of(2) { small.clone() } else { -small });
        }
        values
    }

    #[test]
    fn single_prime() {
        let mut rng = Rng(1);
        for p in [3u32, 97, 65537, (1 << 30) - 35] {
            let primes = [p];
            let values = interesting_values(&primes, &mut rng, 200);
            check(&primes, &values);
        }
    }

    #[test]
    fn thirty_ntt_primes_random_and_edge_values() {
        let primes = ntt_primes(30, 1 << 16, 30, &[]).unwrap();
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let values = interesting_values(&primes, &mut rng, 2000);
        check(&primes, &values);
    }

    #[test]
    fn few_ntt_primes_of_mixed_sizes() {
        let mut rng = Rng(7);
        for (bits, count) in [(30u32, 2usize), (20, 3), (28, 5), (22, 11)] {
            let primes = ntt_primes(bits, 1 << 10, count, &[]).unwrap();
            let values = interesting_values(&primes, &mut rng, 300);
            check(&primes, &values);
        }
    }

    #[test]
    fn many_small_moduli_exercise_long_exact_windows() {
        // 40 primes of about 10 bits: the u128 window spans many digits, and Q is ~400 bits.
        let primes: Vec<u32> = (1000u32..).filter(|&p| crate::is_prime(u64::from(p))).take(40).collect();
        let mut rng = Rng(11);
        let values = interesting_values(&primes, &mut rng, 500);
        check(&primes, &values);
    }

    #[test]
    fn even_modulus_keeps_q_over_two_positive() {
        // Q = 2 * 3 * 5 * 7 = 210: the centred range is -104..=105.
        let primes = [2u32, 3, 5, 7];
        let crt = CrtToFloat::new(&moduli(&primes)).unwrap();
        for v in 0i64..210 {
            let expected = if v > 105 { v - 210 } else { v };
            let residues: Vec<u32> = primes.iter().map(|&p| (v % i64::from(p)) as u32).collect();
            assert_eq!(crt.centered(&residues), expected as f64, "v = {v}");
        }
    }

    #[test]
    fn large_base_saturates_to_infinity_only_past_f64_range() {
        // 40 primes of 30 bits: Q ~ 2^1200, beyond f64. Values that fit f64 still convert.
        let primes = ntt_primes(30, 1 << 12, 40, &[]).unwrap();
        let q = product(&primes);
        let mut values = vec![BigInt::from(-5), BigInt::one() << 1000u32, -(BigInt::one() << 1023u32)];
        values.push((BigInt::one() << 1023u32) * 3 / 2);
        let crt = CrtToFloat::new(&moduli(&primes)).unwrap();
        let got: Vec<f64> = values.iter().map(|v| crt.centered(&residues(v, &primes))).collect();
        assert_eq!(got[0], -5.0);
        assert_eq!(got[1], 2f64.powi(1000));
        assert_eq!(got[2], -(2f64.powi(1023)));
        assert_eq!(got[3], 1.5 * 2f64.powi(1023));
        let near_half = crt.centered(&residues(&(&q / 2), &primes));
        assert_eq!(near_half, f64::INFINITY);
    }

    #[test]
    fn prefix_products_round_correctly() {
        // 2^64 + 1 and 2^64 + 2^11 + 1 round differently than their top 64 bits alone suggest.
        let cases: [(BigUint, f64); 4] = [
            ((BigUint::one() << 64u32) + 1u32, 2f64.powi(64)),
            ((BigUint::one() << 80u32) + (BigUint::one() << 27u32), 2f64.powi(80)),
            ((BigUint::one() << 80u32) + (BigUint::one() << 27u32) + 1u32, 2f64.powi(80) + 2f64.powi(28)),
            ((BigUint::one() << 1024u32) - 1u32, f64::INFINITY),
        ];
        for (x, expected) in cases {
            assert_eq!(biguint_to_f64(&x), expected, "x = {x}");
            if expected.is_finite() {
                assert_eq!(x.to_string().parse::<f64>().unwrap(), expected);
            }
        }
    }

    #[test]
    fn vector_and_scalar_digits_agree() {
        // Both paths of the digit kernel on the same block, whatever the process's ISA; the
        // length leaves a scalar tail after the whole vectors.
        let primes = ntt_primes(30, 1 << 12, 9, &[]).unwrap();
        let crt = CrtToFloat::new(&moduli(&primes)).unwrap();
        let mut rng = Rng(5);
        let len = BLOCK - 3;
        let limbs: Vec<Vec<u32>> =
            primes.iter().map(|&p| (0..len).map(|_| (rng.next() % u64::from(p)) as u32).collect()).collect();
        let limb_refs: Vec<&[u32]> = limbs.iter().map(Vec::as_slice).collect();
        let mut scalar = vec![0u32; primes.len() * BLOCK];
        let mut best = vec![0u32; primes.len() * BLOCK];
        GarnerBlock { crt: &crt, limbs: &limb_refs, start: 0, len, digits: &mut scalar }.scalar();
        dispatch(Isa::detected(), GarnerBlock { crt: &crt, limbs: &limb_refs, start: 0, len, digits: &mut best });
        assert_eq!(scalar, best);
        // And the digits are the single-coefficient path's.
        for c in 0..len {
            let residues: Vec<u32> = limbs.iter().map(|limb| limb[c]).collect();
            let mut digits = vec![residues[0]];
            for (i, &r) in residues.iter().enumerate().skip(1) {
                let digit = crt.garner_digit(i, r, |j| digits[j]);
                digits.push(digit);
            }
            let column: Vec<u32> = (0..primes.len()).map(|i| scalar[i * BLOCK + c]).collect();
            assert_eq!(column, digits, "coefficient {c}");
        }
    }

    #[test]
    fn rejects_bad_bases_and_lengths() {
        assert!(matches!(CrtToFloat::new(&[]), Err(MathError::InvalidBase(_))));
        assert!(matches!(CrtToFloat::new(&moduli(&[15, 21])), Err(MathError::InvalidBase(_))));
        let crt = CrtToFloat::new(&moduli(&[97, 193])).unwrap();
        assert_eq!(format!("{crt:?}"), "CrtToFloat { moduli: [97, 193], .. }");
        let mut out = [0.0; 3];
        let err = crt.centered_into(&[&[0; 3]], &mut out).unwrap_err();
        assert!(err.to_string().contains("expected 2, got 1"), "{err}");
        let err = crt.centered_into(&[&[0; 3], &[0; 2]], &mut out).unwrap_err();
        assert!(err.to_string().contains("expected 3, got 2"), "{err}");
        let err = crt.centered_limb_major(&[0; 5], &mut out).unwrap_err();
        assert!(err.to_string().contains("expected 6, got 5"), "{err}");
        crt.centered_limb_major(&[], &mut []).unwrap();
    }
}
