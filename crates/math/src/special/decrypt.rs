//! The special-moduli variant of Algorithm 1 (full-RNS BFV decryption scaling, BEHZ): from the
//! residues of x = [c0 + c1 s]_q in Q to [round(t x / q)]_t, with FastBConv's first
//! multiplication done by the shift forms of section 3.4.

use super::arith::WideArith;
use super::barrett::BarrettModulus;
use super::base::SpecialBase;
use super::fastbconv::FastBConv;
use super::wide::{mask_of, Wide};
use crate::error::{MathError, Result};

/// Precomputed constants of Algorithm 1 for a special base Q, a plaintext modulus t and a
/// correction modulus gamma (coprime to t and to Q, both below 2^62).
///
/// ```
/// use pimhe_math::special::{DecryptScaler, SpecialBase, Wide};
/// let q = SpecialBase::balanced(8).unwrap(); // q = 255 * 256 * 257 = 16_776_960
/// let dec = DecryptScaler::new(&q, 7, (1 << 61) - 1).unwrap();
/// let delta = 16_776_960u64 / 7;
/// let x = 5 * delta + 1234; // Delta m + small noise
/// let residues: Vec<Wide> = [255u64, 256, 257].iter().map(|m| Wide::from_u64(x % m)).collect();
/// assert_eq!(dec.scale(&residues), 5);
/// ```
#[derive(Clone, Debug)]
pub struct DecryptScaler {
    base: SpecialBase,
    t: u64,
    gamma: u64,
    /// |gamma t|_{q_i}.
    gamma_t_mod_q: Vec<Wide>,
    conv: FastBConv,
    /// |-q^-1|_t and |-q^-1|_gamma.
    neg_q_inv_t: u64,
    neg_q_inv_gamma: u64,
    /// |gamma^-1|_t.
    gamma_inv_t: u64,
    /// |-gamma|_t.
    gamma_neg_t: u64,
    t_mod: BarrettModulus,
    gamma_mod: BarrettModulus,
}

impl DecryptScaler {
    /// The constants; an error if t or gamma is out of range or not coprime to the rest.
    pub fn new(base: &SpecialBase, t: u64, gamma: u64) -> Result<Self> {
        if t < 2 || gamma < 2 || t >= 1 << 62 || gamma >= 1 << 62 {
            return Err(MathError::InvalidSpecial(format!(
                "decryption needs 2 <= t, gamma < 2^62; got t = {t}, gamma = {gamma}"
            )));
        }
        let gamma_t = Wide::from_u64(gamma).wrapping_mul(&Wide::from_u64(t));
        let gamma_t_mod_q = base.moduli().iter().map(|q| q.reduce(&gamma_t)).collect();
        let conv = FastBConv::from_special(base, &[Wide::from_u64(t), Wide::from_u64(gamma)])?;
        let q_mod =
            |m: u64| base.moduli().iter().fold(1u128, |acc, q| acc * value_mod(q.value(), m) % m as u128) as u64;
        let inv = |a: u64, m: u64| {
            inverse_u64(a, m).ok_or_else(|| {
                MathError::InvalidSpecial(format!(
                    "t = {t} and gamma = {gamma} must be coprime to each other and to every modulus of Q ({a} has \
                     no inverse modulo {m})"
                ))
            })
        };
        let neg_q_inv_t = (t - inv(q_mod(t), t)?) % t;
        let neg_q_inv_gamma = (gamma - inv(q_mod(gamma), gamma)?) % gamma;
        let gamma_inv_t = inv(gamma % t, t)?;
        Ok(Self {
            base: base.clone(),
            t,
            gamma,
            gamma_t_mod_q,
            conv,
            neg_q_inv_t,
            neg_q_inv_gamma,
            gamma_inv_t,
            gamma_neg_t: (t - gamma % t) % t,
            t_mod: BarrettModulus::new(Wide::from_u64(t))?,
            gamma_mod: BarrettModulus::new(Wide::from_u64(gamma))?,
        })
    }

    /// The plaintext modulus t.
    pub fn t(&self) -> u64 {
        self.t
    }

    /// The correction modulus gamma.
    pub fn gamma(&self) -> u64 {
        self.gamma
    }

    /// [round(t x / q)]_t in [0, t) for one coefficient given by its residues in Q (Algorithm
    /// 1), by the special FastBConv. Correct when the noise of x leaves some margin (BEHZ: gamma
    /// large against |Q|). Branch-free in the residues: the centring of s^(gamma) is a borrow
    /// mask, not an `if`, and the reductions modulo t and gamma are Barrett (no hardware or
    /// software division).
    pub fn scale(&self, x: &[Wide]) -> u64 {
        self.scale_measured(x, true).message
    }

    /// [`Self::scale`] with the noise measurement, by the special FastBConv (`special`) or the
    /// generic one (the same result). The error |e| = |[s^(gamma)]_gamma| is gamma |[t x]_q| / q
    /// up to |Q| + 1: the invariant noise as a fraction of q, to log2(gamma) bits.
    pub fn scale_measured(&self, x: &[Wide], special: bool) -> Scaled {
        let y: Vec<Wide> =
            x.iter().zip(self.base.moduli()).zip(&self.gamma_t_mod_q).map(|((xi, qi), c)| qi.mul(xi, c)).collect();
        let out = if special { self.conv.convert_special(&y) } else { self.conv.convert_generic(&y) };
        let (tm, gm) = (&self.t_mod, &self.gamma_mod);
        let s_t = tm.mul(&out[0], &Wide::from_u64(self.neg_q_inv_t));
        let s_g = gm.mul(&out[1], &Wide::from_u64(self.neg_q_inv_gamma));
        // [s_g]_gamma = s_g - gamma when s_g > gamma / 2; modulo t that adds t - |gamma|_t.
        let (_, borrow) = Wide::from_u64(self.gamma / 2).borrowing_sub(&s_g, crypto_bigint::Limb::ZERO);
        let above_half = mask_of(borrow.0 >> 63);
        let correction = Wide::from_u64(self.gamma_neg_t).bitand(&above_half);
        let s_g_t = tm.add(&tm.reduce(&s_g), &correction);
        let message = tm.mul(&tm.sub(&s_t, &s_g_t), &Wide::from_u64(self.gamma_inv_t)).to_words()[0];
        // |[s_g]_gamma|: gamma - s_g above gamma / 2, s_g below (selected by the same mask).
        let magnitude =
            Wide::from_u64(self.gamma).wrapping_sub(&s_g).bitand(&above_half).bitor(&s_g.bitand(&!above_half));
        Scaled { message, error: magnitude.to_words()[0] }
    }
}

/// One coefficient scaled by Algorithm 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Scaled {
    /// [round(t x / q)]_t.
    pub message: u64,
    /// |e| = gamma |[t x]_q| / q up to |Q| + 1.
    pub error: u64,
}

/// v mod m for a wide v and m < 2^62 (Horner over the 64-bit words; constants only).
fn value_mod(v: &Wide, m: u64) -> u128 {
    v.to_words().iter().rev().fold(0u128, |acc, &w| ((acc << 64) + w as u128) % m as u128)
}

/// a^-1 mod m by the extended Euclidean algorithm (public values).
fn inverse_u64(a: u64, m: u64) -> Option<u64> {
    let (mut r0, mut r1) = (m as i128, (a % m) as i128);
    let (mut t0, mut t1) = (0i128, 1i128);
    while r1 != 0 {
        let q = r0 / r1;
        (r0, r1) = (r1, r0 - q * r1);
        (t0, t1) = (t1, t0 - q * t1);
    }
    (r0 == 1).then(|| t0.rem_euclid(m as i128) as u64)
}
