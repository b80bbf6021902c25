//! The special-moduli variant of Algorithm 1 (full-RNS BFV decryption scaling, BEHZ): from the
//! residues of x = [c0 + c1 s]_q in Q to [round(t x / q)]_t, with FastBConv's first
//! multiplication done by the shift forms of section 3.4.

use super::arith::WideArith;
use super::base::SpecialBase;
use super::fastbconv::FastBConv;
use super::wide::Wide;
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
        Ok(Self { base: base.clone(), t, gamma, gamma_t_mod_q, conv, neg_q_inv_t, neg_q_inv_gamma, gamma_inv_t })
    }

    /// [round(t x / q)]_t in [0, t) for one coefficient given by its residues in Q (Algorithm
    /// 1). Correct when the noise of x leaves some margin (BEHZ: gamma large against |Q|).
    /// Branch-free in the residues: the centring of s^(gamma) is a mask, not an `if`.
    pub fn scale(&self, x: &[Wide]) -> u64 {
        let y: Vec<Wide> =
            x.iter().zip(self.base.moduli()).zip(&self.gamma_t_mod_q).map(|((xi, qi), c)| qi.mul(xi, c)).collect();
        let out = self.conv.convert_special(&y);
        let (t, gamma) = (self.t as u128, self.gamma as u128);
        let s_t = out[0].to_words()[0] as u128 * self.neg_q_inv_t as u128 % t;
        let s_g = out[1].to_words()[0] as u128 * self.neg_q_inv_gamma as u128 % gamma;
        // [s_g]_gamma = s_g - gamma when s_g > gamma / 2; modulo t that subtracts |gamma|_t.
        let above = ((gamma / 2).wrapping_sub(s_g) >> 127) as u64; // 1 when s_g > gamma / 2
        let s_g_t = (s_g % t + (above as u128) * (t - gamma % t)) % t;
        ((s_t + t - s_g_t) % t * self.gamma_inv_t as u128 % t) as u64
    }
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
