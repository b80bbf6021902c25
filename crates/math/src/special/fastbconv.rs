//! FastBConv (equation (1) of the CE-RAM paper; Bajard et al.): from a base Q to a base B,
//!
//! FastBConv(x, Q, B) = ( sum_i |x_i (q/q_i)^(-1)|_{q_i} (q/q_i) ) mod b, for each b in B,
//!
//! which equals x + alpha q for some 0 <= alpha < |Q| (x being the CRT value in [0, q)). Two
//! paths compute the same thing bit for bit: the generic one multiplies by the constants with
//! Barrett reduction; the special one (section 3.4) replaces the first multiplication by the
//! shift forms of [`SpecialBase`]. The target moduli are any wide moduli (NTT-friendly primes of
//! the extended base, m_sk, m~, or small ones such as t and gamma for decryption).

use super::arith::WideArith;
use super::barrett::BarrettModulus;
use super::base::SpecialBase;
use super::wide::Wide;
use crate::error::{MathError, Result};

/// A fast base converter from a base Q (special moduli, or any wide moduli) to a base B.
///
/// ```
/// use pimhe_math::special::{FastBConv, SpecialBase, Wide};
/// let q = SpecialBase::balanced(8).unwrap(); // {255, 256, 257}
/// let conv = FastBConv::from_special(&q, &[Wide::from_u64(65537)]).unwrap();
/// let x = 1_000_000u64; // below q = 16_776_960
/// let residues: Vec<Wide> = [255u64, 256, 257].iter().map(|m| Wide::from_u64(x % m)).collect();
/// let out = conv.convert_special(&residues);
/// assert_eq!(out, conv.convert_generic(&residues));
/// let v = out[0].to_words()[0];
/// assert!((0..3u64).any(|alpha| (x + alpha * 16_776_960) % 65537 == v));
/// ```
#[derive(Clone, Debug)]
pub struct FastBConv {
    /// Generic (Barrett) view of the source moduli.
    from: Vec<BarrettModulus>,
    /// |(q/q_i)^(-1)|_{q_i}.
    q_hat_inv: Vec<Wide>,
    /// The special base, when the source is one (enables the special path).
    special: Option<SpecialBase>,
    to: Vec<BarrettModulus>,
    /// q_hat_mod_b[j][i] = |q/q_i|_{b_j}.
    q_hat_mod_b: Vec<Vec<Wide>>,
}

impl FastBConv {
    /// A converter from a special base Q to the moduli `to` (each 2 <= b < 2^248).
    pub fn from_special(from: &SpecialBase, to: &[Wide]) -> Result<Self> {
        let moduli: Vec<Wide> = from.moduli().iter().map(|q| *q.value()).collect();
        let mut conv = Self::with_inverses(&moduli, from.q_hat_inv().to_vec(), to)?;
        conv.special = Some(from.clone());
        Ok(conv)
    }

    /// A converter between any coprime wide moduli (e.g. from the extended base B back to Q
    /// for the Shenoy-Kumaresan step); only [`FastBConv::convert_generic`] is available.
    pub fn new(from: &[Wide], to: &[Wide]) -> Result<Self> {
        let from_b = from.iter().map(|&m| BarrettModulus::new(m)).collect::<Result<Vec<_>>>()?;
        let mut inv = Vec::with_capacity(from.len());
        for (i, qi) in from_b.iter().enumerate() {
            let q_hat = product_mod(qi, from.iter().enumerate().filter(|&(j, _)| j != i).map(|(_, m)| m));
            let c = q_hat
                .invert_mod(&crypto_bigint::NonZero::new(*qi.value()).into_option().expect("m >= 2"))
                .into_option()
                .ok_or_else(|| MathError::InvalidBase(format!("source moduli are not coprime (modulus {i})")))?;
            inv.push(c);
        }
        Self::with_inverses(from, inv, to)
    }

    fn with_inverses(from: &[Wide], q_hat_inv: Vec<Wide>, to: &[Wide]) -> Result<Self> {
        if from.is_empty() || to.is_empty() {
            return Err(MathError::InvalidBase("FastBConv needs non-empty source and target bases".into()));
        }
        let from_b = from.iter().map(|&m| BarrettModulus::new(m)).collect::<Result<Vec<_>>>()?;
        let to_b = to.iter().map(|&m| BarrettModulus::new(m)).collect::<Result<Vec<_>>>()?;
        let q_hat_mod_b = to_b
            .iter()
            .map(|b| {
                (0..from.len())
                    .map(|i| product_mod(b, from.iter().enumerate().filter(|&(j, _)| j != i).map(|(_, m)| m)))
                    .collect()
            })
            .collect();
        Ok(Self { from: from_b, q_hat_inv, special: None, to: to_b, q_hat_mod_b })
    }

    /// Number of source moduli.
    pub fn from_len(&self) -> usize {
        self.from.len()
    }

    /// The target moduli.
    pub fn to_moduli(&self) -> Vec<Wide> {
        self.to.iter().map(|b| *b.value()).collect()
    }

    /// Sum over i of y_i |q/q_i|_b modulo each target b, given y_i = |x_i (q/q_i)^(-1)|_{q_i}.
    fn accumulate(&self, y: &[Wide]) -> Vec<Wide> {
        self.to
            .iter()
            .zip(&self.q_hat_mod_b)
            .map(|(b, consts)| {
                y.iter().zip(consts).fold(Wide::ZERO, |acc, (yi, c)| b.add(&acc, &b.mul(&b.reduce(yi), c)))
            })
            .collect()
    }

    /// FastBConv of one value with Barrett multiplications throughout. `x[i]` is the residue
    /// modulo the i-th source modulus. Panics if the length is wrong.
    pub fn convert_generic(&self, x: &[Wide]) -> Vec<Wide> {
        assert_eq!(x.len(), self.from.len(), "one residue per source modulus");
        let y: Vec<Wide> = x.iter().zip(&self.from).zip(&self.q_hat_inv).map(|((xi, qi), c)| qi.mul(xi, c)).collect();
        self.accumulate(&y)
    }

    /// FastBConv of one value with the shift forms of section 3.4 for the first step. Panics
    /// if the converter was not built by [`FastBConv::from_special`] or the length is wrong.
    pub fn convert_special(&self, x: &[Wide]) -> Vec<Wide> {
        let base = self.special.as_ref().expect("convert_special needs a converter built from a SpecialBase");
        assert_eq!(x.len(), base.len(), "one residue per source modulus");
        let y: Vec<Wide> = x.iter().enumerate().map(|(i, xi)| base.scale_by_q_hat_inv(i, xi)).collect();
        self.accumulate(&y)
    }

    /// FastBConv of N coefficients stored limb-major (`x[i][c]`: coefficient c modulo source
    /// i), into limb-major output (`out[j][c]` modulo target j), by the special path when
    /// available, else the generic one.
    pub fn convert_poly(&self, x: &[Vec<Wide>]) -> Result<Vec<Vec<Wide>>> {
        if x.len() != self.from.len() {
            return Err(MathError::LengthMismatch { what: "source limbs", expected: self.from.len(), got: x.len() });
        }
        let n = x[0].len();
        if let Some(bad) = x.iter().find(|l| l.len() != n) {
            return Err(MathError::LengthMismatch { what: "coefficients per limb", expected: n, got: bad.len() });
        }
        let mut out = vec![Vec::with_capacity(n); self.to.len()];
        let mut column = vec![Wide::ZERO; x.len()];
        for c in 0..n {
            for (slot, limb) in column.iter_mut().zip(x) {
                *slot = limb[c];
            }
            let converted =
                if self.special.is_some() { self.convert_special(&column) } else { self.convert_generic(&column) };
            for (o, v) in out.iter_mut().zip(converted) {
                o.push(v);
            }
        }
        Ok(out)
    }
}

/// The product of the given moduli, reduced modulo m.
fn product_mod<'a>(m: &BarrettModulus, factors: impl Iterator<Item = &'a Wide>) -> Wide {
    factors.fold(m.reduce(&Wide::ONE), |acc, f| m.mul(&acc, &m.reduce(f)))
}
