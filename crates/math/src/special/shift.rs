//! Multiplication by powers of two modulo the special moduli ("fast modular shifting",
//! Algorithms 5 and 6 of the CE-RAM paper, corrected), and the shift forms of Theorems 1 and 2
//! and Lemma 2 (section 3.4).
//!
//! # Erratum: Algorithms 5 and 6 as printed
//!
//! Checked against num-bigint (tests/special_shift.rs), the printed algorithms are wrong:
//!
//! - Their `lo <- x & ((1 << y) - 1)` keeps the low y bits of x unshifted. The bits of x * 2^y
//!   below 2^g are `(x & ((1 << (g - y)) - 1)) << y`, i.e. `(x << y) & (2^g - 1)`.
//! - The two bodies are swapped. Modulo 2^g - 1, 2^g = 1, so x * 2^y = lo + hi: a left
//!   rotation of the g-bit word, `lo | hi` (the bits do not overlap) — the body printed as
//!   Algorithm 6. Modulo 2^g + 1, 2^g = -1, so x * 2^y = lo - hi: a negacyclic rotation with one
//!   conditional correction — the body printed as Algorithm 5 (whose else branch,
//!   `2^g - 1 - hi + lo`, is also two short of `2^g + 1 - hi + lo`). A counterexample: x = 3,
//!   y = 1 modulo 2^8 - 1: the printed Algorithm 5 returns lo - hi = 1, not 6.
//! - Modulo 2^g + 1 the residue 2^g (= -1) has g + 1 bits; with hi = x >> (g - y) it is handled
//!   by the same formula.
//!
//! Here `y` may be any non-negative exponent: it is reduced modulo the order of 2 (g for
//! 2^g - 1, 2g for 2^g + 1, with y in [g, 2g) a shift by y - g followed by a negation).

use super::arith::WideArith;
use super::modulus::{SpecialForm, SpecialModulus};
use super::wide::{csub, sub_mod, Wide};

impl SpecialModulus {
    /// x * 2^y mod m for a residue x, by shifts, masks and one constant-time correction.
    /// `y` is public (it selects shift amounts); x may be secret.
    ///
    /// ```
    /// use pimhe_math::special::{SpecialModulus, Wide};
    /// let q = SpecialModulus::fermat_like(8).unwrap(); // 257
    /// assert_eq!(q.mul_pow2(&Wide::from_u64(3), 7), Wide::from_u64(3 * 128 % 257));
    /// let q = SpecialModulus::mersenne(8).unwrap(); // 255: a rotation
    /// assert_eq!(q.mul_pow2(&Wide::from_u64(0b1000_0001), 1), Wide::from_u64(0b0000_0011));
    /// ```
    #[inline]
    pub fn mul_pow2(&self, x: &Wide, y: u64) -> Wide {
        let g = self.g();
        match self.form() {
            SpecialForm::PowerOfTwo => {
                if y >= g as u64 {
                    Wide::ZERO
                } else {
                    x.shl_vartime(y as u32).bitand(self.mask())
                }
            }
            SpecialForm::Mersenne => {
                let s = (y % g as u64) as u32;
                if s == 0 {
                    return *x;
                }
                // x < 2^g - 1: a g-bit rotation left by s, never all ones, so already < m.
                x.shl_vartime(s).bitand(self.mask()).bitor(&x.shr_vartime(g - s))
            }
            SpecialForm::FermatLike => {
                let e = y % (2 * g as u64);
                let (s, negate) = if e >= g as u64 { ((e - g as u64) as u32, true) } else { (e as u32, false) };
                let r = if s == 0 {
                    *x
                } else {
                    // hi <= 2^s <= 2^(g-1) < m and lo < 2^g < m: one masked correction.
                    let hi = x.shr_vartime(g - s);
                    let lo = x.shl_vartime(s).bitand(self.mask());
                    sub_mod(&lo, &hi, self.value())
                };
                if negate {
                    self.neg(&r)
                } else {
                    r
                }
            }
        }
    }

    /// x * 2^(-1) mod m for 2^g - 1 and 2^g + 1 (2 is not invertible modulo 2^g: panics).
    ///
    /// - 2^g - 1, Theorem 1 (x * |q0/q|_{q0} with |q0/q|_{q0} = 2^(g-1)):
    ///   `(x >> 1) + ((x & 1) << (g - 1))`, a right rotation by one.
    /// - 2^g + 1, Theorem 2 (x * |q2/q|_{q2} with |q2/q|_{q2} = 2^(g-1) + 1):
    ///   `((x + 1) >> 1) + ((x & 1) << (g - 1))`.
    ///
    /// Erratum: Theorem 1 as printed says "2^g - 1 + (x-1)/2 when x is odd"; its proof and its
    /// formula give 2^(g-1) + (x-1)/2, which is what this computes. (The proof of Theorem 2
    /// also ends "mod 2^g - 1" where 2^g + 1 is meant.)
    #[inline]
    pub fn halve(&self, x: &Wide) -> Wide {
        let g = self.g();
        let odd = x.bitand(&Wide::ONE);
        let top = odd.shl_vartime(g - 1);
        match self.form() {
            SpecialForm::Mersenne => x.shr_vartime(1).wrapping_add(&top),
            SpecialForm::FermatLike => x.wrapping_add(&Wide::ONE).shr_vartime(1).wrapping_add(&top),
            SpecialForm::PowerOfTwo => panic!("2 has no inverse modulo {self}"),
        }
    }

    /// -x mod m. For 2^g this is Lemma 2's `((1 << g) - x) & ((1 << g) - 1)`
    /// (x * |q1/q|_{q1} with |q1/q|_{q1} = 2^g - 1 = -1); for the odd moduli m - x, with 0
    /// mapped to 0 without a branch.
    #[inline]
    pub fn negate(&self, x: &Wide) -> Wide {
        match self.form() {
            SpecialForm::PowerOfTwo => self.value().wrapping_sub(x).bitand(self.mask()),
            _ => csub(&self.value().wrapping_sub(x), self.value()),
        }
    }
}
