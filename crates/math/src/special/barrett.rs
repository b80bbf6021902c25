//! Barrett reduction on wide words for moduli without special form: the extended base B, m_sk,
//! m~ and the NTT-friendly primes (section 3.5 of the CE-RAM paper: "Barrett reduction is
//! utilized for modular reduction for components outside of base Q").

use crypto_bigint::NonZero;

use super::arith::WideArith;
use super::wide::{csub, low, mul_wide, pow2, sub_mod, widen, Wide, WideProduct, MAX_MODULUS_BITS};
use crate::error::{MathError, Result};

/// A modulus 2 <= m < 2^[`MAX_MODULUS_BITS`] with its Barrett constants.
///
/// ```
/// use pimhe_math::special::{BarrettModulus, Wide, WideArith};
/// let m = BarrettModulus::new(Wide::from_u64(1_000_003)).unwrap();
/// let x = m.mul(&Wide::from_u64(999_999), &Wide::from_u64(123_456));
/// assert_eq!(x, Wide::from_u64(999_999 * 123_456 % 1_000_003));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BarrettModulus {
    m: Wide,
    /// k = bit length of m.
    k: u32,
    /// floor(2^(2k) / m) < 2^(k+1): the classic Barrett constant for products x < 2^(2k).
    mu: Wide,
    /// floor(2^256 / m): the constant for reducing any 256-bit word.
    mu_word: Wide,
}

impl BarrettModulus {
    /// Barrett constants for m; an error unless 2 <= m < 2^248.
    pub fn new(m: Wide) -> Result<Self> {
        let k = m.bit_width_vartime();
        if !(2..=MAX_MODULUS_BITS).contains(&k) {
            return Err(MathError::InvalidSpecial(format!(
                "a wide Barrett modulus must satisfy 2 <= m < 2^{MAX_MODULUS_BITS}; got a {k}-bit value"
            )));
        }
        let divisor = NonZero::new(widen(&m)).into_option().expect("m >= 2");
        let mu = low(&pow2::<{ WideProduct::LIMBS }>(2 * k).div_rem_vartime(&divisor).0);
        // 2^256 / m < 2^255 for m >= 2, so the quotient fits the low half.
        let mu_word = low(&pow2::<{ WideProduct::LIMBS }>(256).div_rem_vartime(&divisor).0);
        Ok(Self { m, k, mu, mu_word })
    }

    /// The modulus.
    pub fn value(&self) -> &Wide {
        &self.m
    }

    /// Its bit length k.
    pub fn bits(&self) -> u32 {
        self.k
    }

    /// x mod m for x < 2^(2k) (in particular any product of two residues): HAC 14.42 with
    /// q1 = x >> (k-1), q3 = q1 mu >> (k+1), r = x - q3 m < 3m, then two constant-time
    /// corrections.
    #[inline]
    pub fn reduce_product(&self, x: &WideProduct) -> Wide {
        debug_assert!(x.bit_width_vartime() <= 2 * self.k, "Barrett input above 2^(2k)");
        let q1 = low(&x.shr_vartime(self.k - 1));
        let q3 = low(&mul_wide(&q1, &self.mu).shr_vartime(self.k + 1));
        // r < 3m < 2^250, so the low 256 bits of x - q3 m are exact.
        let r = low(x).wrapping_sub(&q3.wrapping_mul(&self.m));
        csub(&csub(&r, &self.m), &self.m)
    }
}

impl WideArith for BarrettModulus {
    fn modulus(&self) -> &Wide {
        &self.m
    }

    #[inline]
    fn add(&self, a: &Wide, b: &Wide) -> Wide {
        csub(&a.wrapping_add(b), &self.m)
    }

    #[inline]
    fn sub(&self, a: &Wide, b: &Wide) -> Wide {
        sub_mod(a, b, &self.m)
    }

    #[inline]
    fn mul(&self, a: &Wide, b: &Wide) -> Wide {
        self.reduce_product(&mul_wide(a, b))
    }

    /// Any 256-bit x: q = floor(x floor(2^256/m) / 2^256) is at most 2 below floor(x/m).
    #[inline]
    fn reduce(&self, x: &Wide) -> Wide {
        let (_, q) = x.widening_mul(&self.mu_word);
        let r = x.wrapping_sub(&q.wrapping_mul(&self.m));
        csub(&csub(&r, &self.m), &self.m)
    }
}
