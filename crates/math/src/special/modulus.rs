//! The special moduli of CE-RAM BFV: 2^g - 1, 2^g and 2^g + 1, with reduction by shifts and adds
//! (section 3.3, Algorithms 3 and 4).

use std::fmt;

use super::arith::WideArith;
use super::barrett::BarrettModulus;
use super::wide::{csub, low, low_mask, mul_wide, pow2, sub_mod, Wide, WideProduct, MAX_MODULUS_BITS};
use crate::error::{MathError, Result};

/// Which of the three forms a special modulus has.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SpecialForm {
    /// 2^g - 1 (Mersenne-like; a Mersenne number, prime or not).
    Mersenne,
    /// 2^g.
    PowerOfTwo,
    /// 2^g + 1 (Fermat-like; a generalised Fermat number).
    FermatLike,
}

/// A modulus 2^g - 1, 2^g or 2^g + 1 with 2 <= g <= 247, and its constants.
///
/// Residues are [`Wide`] values in [0, m) (so a Fermat-like residue may be 2^g itself).
/// Reduction, addition, subtraction and multiplication are branch-free in the values: the
/// paper's `if x >= m` corrections (Algorithms 3 and 4) are done here with borrow masks, so the
/// time does not depend on secret residues.
///
/// ```
/// use pimhe_math::special::{SpecialModulus, Wide, WideArith};
/// let q = SpecialModulus::fermat_like(146).unwrap();
/// let minus_one = q.sub(&Wide::ZERO, &Wide::ONE); // 2^146
/// assert_eq!(q.mul(&minus_one, &minus_one), Wide::ONE);
/// assert_eq!(q.to_string(), "2^146 + 1");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpecialModulus {
    form: SpecialForm,
    g: u32,
    m: Wide,
    /// 2^g - 1.
    mask: Wide,
    /// 2m (Fermat-like reduction adds it before subtracting the high half).
    two_m: Wide,
    /// For reducing arbitrary 256-bit words (rare paths: constants, CRT digits).
    barrett: BarrettModulus,
}

impl SpecialModulus {
    /// The largest g accepted: 2^g + 1 must stay below 2^[`MAX_MODULUS_BITS`].
    pub const MAX_G: u32 = MAX_MODULUS_BITS - 1;

    /// The modulus of the given form; an error unless 2 <= g <= 247.
    pub fn new(form: SpecialForm, g: u32) -> Result<Self> {
        if !(2..=Self::MAX_G).contains(&g) {
            return Err(MathError::InvalidSpecial(format!(
                "g = {g} is not allowed for 2^g - 1, 2^g, 2^g + 1: choose 2 <= g <= {}",
                Self::MAX_G
            )));
        }
        let p = pow2::<{ Wide::LIMBS }>(g);
        let m = match form {
            SpecialForm::Mersenne => p.wrapping_sub(&Wide::ONE),
            SpecialForm::PowerOfTwo => p,
            SpecialForm::FermatLike => p.wrapping_add(&Wide::ONE),
        };
        Ok(Self { form, g, m, mask: low_mask(g), two_m: m.shl_vartime(1), barrett: BarrettModulus::new(m)? })
    }

    /// 2^g - 1.
    pub fn mersenne(g: u32) -> Result<Self> {
        Self::new(SpecialForm::Mersenne, g)
    }

    /// 2^g.
    pub fn power_of_two(g: u32) -> Result<Self> {
        Self::new(SpecialForm::PowerOfTwo, g)
    }

    /// 2^g + 1.
    pub fn fermat_like(g: u32) -> Result<Self> {
        Self::new(SpecialForm::FermatLike, g)
    }

    /// The form.
    pub fn form(&self) -> SpecialForm {
        self.form
    }

    /// The exponent g.
    pub fn g(&self) -> u32 {
        self.g
    }

    /// The modulus as a wide word.
    pub fn value(&self) -> &Wide {
        &self.m
    }

    /// The low-g-bits mask 2^g - 1.
    pub fn mask(&self) -> &Wide {
        &self.mask
    }

    /// The Barrett constants of the same modulus (the generic path, for comparison and for
    /// reducing words that are not products).
    pub fn barrett(&self) -> &BarrettModulus {
        &self.barrett
    }

    /// x mod m for any x < m^2 (a product of two residues, or anything below it).
    ///
    /// - 2^g - 1 (Algorithm 3): x = hi 2^g + lo = hi + lo; the sum is below 2m, one
    ///   constant-time correction.
    /// - 2^g: x & (2^g - 1).
    /// - 2^g + 1 (Algorithm 4): x = hi 2^g + lo = lo - hi. Computed as lo + 2m - hi (never
    ///   negative, below 3m) and two constant-time corrections. This also covers x = m^2 - 1,
    ///   for which the printed Algorithm 4 underflows (hi = 2^g + 2, lo = 0 gives m - hi + lo =
    ///   -1); products of residues are at most (m-1)^2 = 2^(2g), where the printed algorithm
    ///   is right.
    #[inline]
    pub fn reduce_product(&self, x: &WideProduct) -> Wide {
        match self.form {
            SpecialForm::PowerOfTwo => low(x).bitand(&self.mask),
            SpecialForm::Mersenne => {
                debug_assert!(x.bit_width_vartime() <= 2 * self.g, "input above m^2");
                let hi = low(&x.shr_vartime(self.g));
                let lo = low(x).bitand(&self.mask);
                csub(&lo.wrapping_add(&hi), &self.m)
            }
            SpecialForm::FermatLike => {
                debug_assert!(x.bit_width_vartime() <= 2 * self.g + 2, "input above m^2");
                let hi = low(&x.shr_vartime(self.g));
                let lo = low(x).bitand(&self.mask);
                let r = lo.wrapping_add(&self.two_m).wrapping_sub(&hi);
                csub(&csub(&r, &self.m), &self.m)
            }
        }
    }
}

impl WideArith for SpecialModulus {
    fn modulus(&self) -> &Wide {
        &self.m
    }

    #[inline]
    fn add(&self, a: &Wide, b: &Wide) -> Wide {
        match self.form {
            SpecialForm::PowerOfTwo => a.wrapping_add(b).bitand(&self.mask),
            _ => csub(&a.wrapping_add(b), &self.m),
        }
    }

    #[inline]
    fn sub(&self, a: &Wide, b: &Wide) -> Wide {
        match self.form {
            // Lemma 2's shape: (2^g - x) & (2^g - 1) is the negation; any difference masks alike.
            SpecialForm::PowerOfTwo => a.wrapping_sub(b).bitand(&self.mask),
            _ => sub_mod(a, b, &self.m),
        }
    }

    #[inline]
    fn mul(&self, a: &Wide, b: &Wide) -> Wide {
        match self.form {
            // g < 256: the low word of the product already holds every bit that survives the mask.
            SpecialForm::PowerOfTwo => a.wrapping_mul(b).bitand(&self.mask),
            _ => self.reduce_product(&mul_wide(a, b)),
        }
    }

    #[inline]
    fn reduce(&self, x: &Wide) -> Wide {
        match self.form {
            SpecialForm::PowerOfTwo => x.bitand(&self.mask),
            _ => self.barrett.reduce(x),
        }
    }
}

impl fmt::Display for SpecialModulus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.form {
            SpecialForm::Mersenne => write!(f, "2^{} - 1", self.g),
            SpecialForm::PowerOfTwo => write!(f, "2^{}", self.g),
            SpecialForm::FermatLike => write!(f, "2^{} + 1", self.g),
        }
    }
}
