//! Arithmetic modulo a word-size modulus q < 2^30.
//!
//! Residues are `u32`. Keeping q below 2^30 leaves two spare bits, so lazily reduced values in
//! [0, 4q) still fit a word: that is what lets the NTT skip most reductions (Harvey's
//! butterflies). Every reduction here is branch-free: the conditional subtraction is done with a
//! mask, so timing does not depend on secret residues.

use crate::error::{MathError, Result};

/// Largest modulus (exclusive) the arithmetic supports.
pub const MODULUS_LIMIT: u64 = 1 << 30;

/// A modulus together with its precomputed Barrett constant.
///
/// ```
/// use pimhe_math::Modulus;
/// let q = Modulus::new(12289).unwrap();
/// assert_eq!(q.mul(12288, 12288), 1); // (-1)^2
/// assert_eq!(q.sub(3, 5), 12287);
/// assert!(Modulus::new(1 << 30).is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Modulus {
    value: u32,
    /// floor(2^64 / q): one 64x64->128 multiply estimates a quotient that is off by at most one.
    barrett: u64,
}

/// `x - m` if `x >= m`, else `x`, without a branch. Requires `x < 2m` and `m <= 2^31`.
#[inline(always)]
pub fn csub(x: u32, m: u32) -> u32 {
    let r = x.wrapping_sub(m);
    // r's top bit is set exactly when x < m (the subtraction wrapped).
    r.wrapping_add(m & (((r as i32) >> 31) as u32))
}

impl Modulus {
    /// Builds a modulus; `q` must satisfy 2 <= q < 2^30.
    pub fn new(q: u64) -> Result<Self> {
        if !(2..MODULUS_LIMIT).contains(&q) {
            return Err(MathError::ModulusOutOfRange(q));
        }
        let barrett = ((1u128 << 64) / q as u128) as u64;
        Ok(Self { value: q as u32, barrett })
    }

    /// The modulus q.
    #[inline(always)]
    pub fn value(&self) -> u32 {
        self.value
    }

    /// Number of significant bits of q.
    pub fn bits(&self) -> u32 {
        32 - self.value.leading_zeros()
    }

    /// Barrett constant floor(2^64 / q).
    pub fn barrett_constant(&self) -> u64 {
        self.barrett
    }

    /// (a + b) mod q for a, b < q.
    #[inline(always)]
    pub fn add(&self, a: u32, b: u32) -> u32 {
        csub(a + b, self.value)
    }

    /// (a - b) mod q for a, b < q.
    #[inline(always)]
    pub fn sub(&self, a: u32, b: u32) -> u32 {
        csub(a + self.value - b, self.value)
    }

    /// (-a) mod q for a < q.
    #[inline(always)]
    pub fn neg(&self, a: u32) -> u32 {
        // q - a is q when a = 0; the conditional subtraction maps it back to 0.
        csub(self.value - a, self.value)
    }

    /// x mod q for any 64-bit x (Barrett reduction).
    #[inline(always)]
    pub fn reduce_u64(&self, x: u64) -> u32 {
        let quotient = ((x as u128 * self.barrett as u128) >> 64) as u64;
        // The estimate is floor(x/q) or one less, so the remainder is in [0, 2q).
        let r = x.wrapping_sub(quotient.wrapping_mul(self.value as u64)) as u32;
        csub(r, self.value)
    }

    /// x mod q, in [0, q), for a signed x.
    #[inline(always)]
    pub fn reduce_i64(&self, x: i64) -> u32 {
        let r = self.reduce_u64(x.unsigned_abs());
        // Negate r when x < 0, selected by a mask rather than a branch.
        let negative = (x >> 63) as u32; // all ones when x < 0
        let negated = self.neg(r);
        (negated & negative) | (r & !negative)
    }

    /// a * b mod q for a, b < 2^32 (Barrett on the 64-bit product).
    #[inline(always)]
    pub fn mul(&self, a: u32, b: u32) -> u32 {
        self.reduce_u64(a as u64 * b as u64)
    }

    /// a * b + c mod q.
    #[inline(always)]
    pub fn mul_add(&self, a: u32, b: u32, c: u32) -> u32 {
        self.reduce_u64(a as u64 * b as u64 + c as u64)
    }

    /// Shoup's precomputed quotient floor(w * 2^32 / q) for a fixed multiplicand w < q.
    /// Panics if w >= q: the quotient would not fit a word and every product would be wrong.
    /// Computed once per constant, never in an inner loop.
    #[inline]
    pub fn shoup(&self, w: u32) -> u32 {
        assert!(w < self.value, "Shoup constant of {w} needs w < q = {}", self.value);
        (((w as u64) << 32) / self.value as u64) as u32
    }

    /// a * w mod q in [0, 2q), for any a < 2^32, with `w_shoup = self.shoup(w)`.
    /// One high multiply and two low multiplies; no 64-bit division.
    #[inline(always)]
    pub fn mul_shoup_lazy(&self, a: u32, w: u32, w_shoup: u32) -> u32 {
        let quotient = ((a as u64 * w_shoup as u64) >> 32) as u32;
        a.wrapping_mul(w).wrapping_sub(quotient.wrapping_mul(self.value))
    }

    /// a * w mod q in [0, q), with `w_shoup = self.shoup(w)`.
    #[inline(always)]
    pub fn mul_shoup(&self, a: u32, w: u32, w_shoup: u32) -> u32 {
        csub(self.mul_shoup_lazy(a, w, w_shoup), self.value)
    }

    /// Reduces a lazy value in [0, 2q) to [0, q).
    #[inline(always)]
    pub fn reduce_once(&self, a: u32) -> u32 {
        csub(a, self.value)
    }

    /// a^e mod q (square and multiply; the exponent is public).
    pub fn pow(&self, a: u32, mut e: u64) -> u32 {
        let mut base = self.reduce_u64(a as u64);
        let mut acc = 1 % self.value;
        while e > 0 {
            if e & 1 == 1 {
                acc = self.mul(acc, base);
            }
            base = self.mul(base, base);
            e >>= 1;
        }
        acc
    }

    /// a^{-1} mod q, or an error when gcd(a, q) != 1.
    pub fn inv(&self, a: u32) -> Result<u32> {
        inverse_mod(a as u64, self.value as u64).map(|x| x as u32)
    }

    /// The representative of a in (-q/2, q/2], as a signed integer.
    #[inline(always)]
    pub fn center(&self, a: u32) -> i64 {
        let a = a as i64;
        let q = self.value as i64;
        // a - q when a > q/2, selected by a mask.
        let above = ((q / 2 - a) >> 63) & q;
        a - above
    }
}

/// a^{-1} mod m by the extended Euclidean algorithm (public values only).
pub fn inverse_mod(a: u64, m: u64) -> Result<u64> {
    if m < 2 {
        return Err(MathError::NotInvertible { value: a, modulus: m });
    }
    let (mut old_r, mut r) = ((a % m) as i128, m as i128);
    let (mut old_s, mut s) = (1i128, 0i128);
    while r != 0 {
        let quotient = old_r / r;
        (old_r, r) = (r, old_r - quotient * r);
        (old_s, s) = (s, old_s - quotient * s);
    }
    if old_r != 1 {
        return Err(MathError::NotInvertible { value: a, modulus: m });
    }
    Ok(old_s.rem_euclid(m as i128) as u64)
}

/// Reverses the lowest `bits` bits of `x`.
#[inline]
pub fn bit_reverse(x: usize, bits: u32) -> usize {
    if bits == 0 {
        0
    } else {
        x.reverse_bits() >> (usize::BITS - bits)
    }
}
