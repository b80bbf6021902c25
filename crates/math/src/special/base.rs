//! Moduli sets of special moduli (section 3.2) and their CRT constants |(q/q_i)^(-1)|_{q_i}, with
//! the shift forms that Lemma 1, Theorems 1-2, Lemma 2 (set S1) and Lemmas 3-4 (set S2) give
//! them (section 3.4, Appendices A and B).
//!
//! With S2 = {q_0 = 2^m - 1, q_i = 2^(2^(i-1) m) + 1 for i = 1..=f+1} (f + 2 moduli), the
//! constants checked against num-bigint in tests/special_fastbconv.rs are
//! |(q/q_0)^(-1)|_{q_0} = 2^(m - (f+1)) (Lemma 3) and |(q/q_i)^(-1)|_{q_i} = 2^(2^(i-1) m - (f - i + 2))
//! (Lemma 4). Errata in the appendix: Lemma 3's proof writes q/q_0 = (2^m + 1)(2^(2m))(2^(4m))...
//! where each factor is 2^(2^j m) + 1; its "2^(m - (k-1))" counts k differently from section
//! 2.3 (k + 1 moduli q_0..q_k), so we state it with f; Lemma 4's statement writes q_i =
//! 2^(2^i m) + 1 where its proof and the set use 2^(2^(i-1) m) + 1.

use crypto_bigint::Odd;

use super::arith::WideArith;
use super::modulus::{SpecialForm, SpecialModulus};
use super::wide::{pow2, Wide};
use crate::error::{MathError, Result};

/// How x * |(q/q_i)^(-1)|_{q_i} mod q_i is computed without a multiplication.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InverseForm {
    /// The constant is 2^(-1) (2^(g-1) for 2^g - 1, 2^(g-1) + 1 for 2^g + 1): Theorems 1 and 2,
    /// [`SpecialModulus::halve`].
    Halve,
    /// The constant is -1: Lemma 2, [`SpecialModulus::negate`].
    Negate,
    /// The constant is 2^e (for 2^g + 1, e in [g, 2g) means -2^(e-g)): Lemmas 3 and 4,
    /// [`SpecialModulus::mul_pow2`].
    Shift(u32),
    /// No shift form: a full multiplication by the constant.
    Multiply,
}

/// Which family a [`SpecialBase`] belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BaseKind {
    /// S1 = {2^g - 1, 2^g, 2^g + 1}.
    Balanced { g: u32 },
    /// S2 = {2^m - 1, 2^m + 1, 2^(2m) + 1, ..., 2^(2^f m) + 1}.
    FermatChain { m: u32, f: u32 },
    /// Any other pairwise-coprime list of special moduli.
    Custom,
}

/// An RNS base Q of pairwise-coprime special moduli with the CRT constants FastBConv needs.
///
/// ```
/// use pimhe_math::special::{InverseForm, SpecialBase};
/// let s1 = SpecialBase::balanced(146).unwrap();
/// assert_eq!(s1.inverse_forms(), &[InverseForm::Halve, InverseForm::Negate, InverseForm::Halve]);
/// // The paper's Case C: {2^110 - 1, 2^110 + 1, 2^220 + 1} (m = 110, f = 1).
/// let s2 = SpecialBase::fermat_chain(110, 1).unwrap();
/// assert_eq!(s2.inverse_forms(), &[InverseForm::Shift(108), InverseForm::Shift(108), InverseForm::Shift(219)]);
/// ```
#[derive(Clone, Debug)]
pub struct SpecialBase {
    kind: BaseKind,
    moduli: Vec<SpecialModulus>,
    /// |(q/q_i)^(-1)|_{q_i}.
    q_hat_inv: Vec<Wide>,
    forms: Vec<InverseForm>,
}

impl SpecialBase {
    /// S1 = {2^g - 1, 2^g, 2^g + 1} (in that order, q0, q1, q2).
    pub fn balanced(g: u32) -> Result<Self> {
        let moduli =
            vec![SpecialModulus::mersenne(g)?, SpecialModulus::power_of_two(g)?, SpecialModulus::fermat_like(g)?];
        Self::build(BaseKind::Balanced { g }, moduli)
    }

    /// S2 = {2^m - 1, 2^m + 1, 2^(2m) + 1, ..., 2^(2^f m) + 1}: f + 2 moduli whose product is
    /// 2^(2^(f+1) m) - 1. The paper's Case C is `fermat_chain(110, 1)`.
    pub fn fermat_chain(m: u32, f: u32) -> Result<Self> {
        let top =
            1u64.checked_shl(f).and_then(|s| s.checked_mul(m as u64)).filter(|&e| e <= SpecialModulus::MAX_G as u64);
        if top.is_none() {
            return Err(MathError::InvalidSpecial(format!(
                "S2 with m = {m}, f = {f} needs 2^(2^f m) + 1 with 2^f m <= {}",
                SpecialModulus::MAX_G
            )));
        }
        let mut moduli = vec![SpecialModulus::mersenne(m)?];
        for i in 0..=f {
            moduli.push(SpecialModulus::fermat_like(m << i)?);
        }
        Self::build(BaseKind::FermatChain { m, f }, moduli)
    }

    /// Any list of pairwise-coprime special moduli (at most one power of two).
    pub fn new(moduli: Vec<SpecialModulus>) -> Result<Self> {
        Self::build(BaseKind::Custom, moduli)
    }

    fn build(kind: BaseKind, moduli: Vec<SpecialModulus>) -> Result<Self> {
        if moduli.is_empty() {
            return Err(MathError::InvalidBase("a special base needs at least one modulus".into()));
        }
        for (i, a) in moduli.iter().enumerate() {
            for b in &moduli[i + 1..] {
                if a.value().gcd_vartime(b.value()) != Wide::ONE {
                    return Err(MathError::InvalidBase(format!(
                        "{a} and {b} share a factor; RNS moduli must be coprime"
                    )));
                }
            }
        }
        let mut q_hat_inv = Vec::with_capacity(moduli.len());
        let mut forms = Vec::with_capacity(moduli.len());
        for (i, qi) in moduli.iter().enumerate() {
            let q_hat = moduli
                .iter()
                .enumerate()
                .filter(|&(j, _)| j != i)
                .fold(qi.reduce(&Wide::ONE), |acc, (_, qj)| qi.mul(&acc, &qi.reduce(qj.value())));
            let inv = invert(qi, &q_hat)?;
            forms.push(inverse_form(qi, &inv));
            q_hat_inv.push(inv);
        }
        Ok(Self { kind, moduli, q_hat_inv, forms })
    }

    /// The family.
    pub fn kind(&self) -> BaseKind {
        self.kind
    }

    /// The moduli q_0, ..., q_{k-1}.
    pub fn moduli(&self) -> &[SpecialModulus] {
        &self.moduli
    }

    /// Number of moduli.
    pub fn len(&self) -> usize {
        self.moduli.len()
    }

    /// Never true (a base has at least one modulus); for clippy's len/is_empty pairing.
    pub fn is_empty(&self) -> bool {
        self.moduli.is_empty()
    }

    /// |(q/q_i)^(-1)|_{q_i} for each i.
    pub fn q_hat_inv(&self) -> &[Wide] {
        &self.q_hat_inv
    }

    /// The shift form of each |(q/q_i)^(-1)|_{q_i}.
    pub fn inverse_forms(&self) -> &[InverseForm] {
        &self.forms
    }

    /// |x * (q/q_i)^(-1)|_{q_i} by the shift form (the special FastBConv's first step).
    #[inline]
    pub fn scale_by_q_hat_inv(&self, i: usize, x: &Wide) -> Wide {
        let qi = &self.moduli[i];
        match self.forms[i] {
            InverseForm::Halve => qi.halve(x),
            InverseForm::Negate => qi.negate(x),
            InverseForm::Shift(e) => qi.mul_pow2(x, e as u64),
            InverseForm::Multiply => qi.mul(x, &self.q_hat_inv[i]),
        }
    }

    /// The bit length of q = prod q_i (an upper bound on log2 q, rounded up).
    pub fn log2_q_ceil(&self) -> u32 {
        self.moduli.iter().map(|q| q.value().bit_width_vartime()).sum()
    }
}

/// a^(-1) mod q_i for a special modulus (odd: Bernstein-Yang in crypto-bigint; 2^g: 2-adic).
fn invert(qi: &SpecialModulus, a: &Wide) -> Result<Wide> {
    let inv = match qi.form() {
        SpecialForm::PowerOfTwo => a.invert_mod2k_vartime(qi.g()).into_option(),
        _ => {
            let odd = Odd::new(*qi.value()).into_option().expect("2^g +- 1 is odd");
            a.invert_odd_mod(&odd).into_option()
        }
    };
    inv.ok_or_else(|| MathError::InvalidBase(format!("the CRT constant q/q_i has no inverse modulo {qi}")))
}

/// The cheapest form of multiplication by the constant c modulo q_i.
fn inverse_form(qi: &SpecialModulus, c: &Wide) -> InverseForm {
    let g = qi.g();
    let m = qi.value();
    let is_pow2 = |x: &Wide| x.bit_width_vartime() > 0 && x.bitand(&x.wrapping_sub(&Wide::ONE)) == Wide::ZERO;
    match qi.form() {
        SpecialForm::PowerOfTwo if *c == m.wrapping_sub(&Wide::ONE) => InverseForm::Negate,
        SpecialForm::Mersenne if *c == pow2::<{ Wide::LIMBS }>(g - 1) => InverseForm::Halve,
        SpecialForm::FermatLike if *c == pow2::<{ Wide::LIMBS }>(g - 1).wrapping_add(&Wide::ONE) => InverseForm::Halve,
        SpecialForm::Mersenne | SpecialForm::FermatLike if is_pow2(c) => InverseForm::Shift(c.bit_width_vartime() - 1),
        // m - c = 2^e: c = -2^e = 2^(g + e) modulo 2^g + 1.
        SpecialForm::FermatLike if is_pow2(&m.wrapping_sub(c)) => {
            InverseForm::Shift(g + m.wrapping_sub(c).bit_width_vartime() - 1)
        }
        SpecialForm::Mersenne if *c == m.wrapping_sub(&Wide::ONE) => InverseForm::Negate,
        _ => InverseForm::Multiply,
    }
}
