//! BEHZ's integer-only RNS steps on polynomials over special moduli: the extension of Q to Bsk
//! with the small Montgomery reduction (Algorithm 2, steps 1-2), the fast floor (step 4),
//! Shenoy-Kumaresan back to Q (step 5). The same steps as `bfv::behz` on 30-bit primes, on wide words; FastBConv from Q
//! takes the special path (section 3.4 of the CE-RAM B/FV paper) when the parameters are
//! optimized.

use pimhe_math::special::Wide;

use super::context::SpecialBfvContext;
use super::ring::WidePoly;
use crate::error::Result;

impl SpecialBfvContext {
    /// `x` over Q to Bsk: FastBConv of m~ x into Bsk u {m~} carries an overflow alpha q
    /// (0 <= alpha < |Q|); adding q r with r = -y q^-1 mod m~ and dividing by m~ leaves x + u q
    /// with u in {0, 1} (BEHZ's small Montgomery reduction; r is taken in [0, m~)).
    pub(crate) fn extend(&self, x: &WidePoly) -> Result<WidePoly> {
        let c = &self.consts;
        let scaled = self.q.mul_constants(x, &c.mtilde_q);
        let mut y = self.q_to_bsk_mtilde.convert_poly(&scaled)?;
        let y_mtilde = y.pop().expect("m~ is the last target");
        let r: Vec<Wide> = y_mtilde.iter().map(|v| self.mtilde.mul(v, &c.neg_q_inv_mtilde)).collect();
        Ok(self
            .bsk
            .moduli()
            .iter()
            .enumerate()
            .zip(y)
            .map(|((j, m), yj)| {
                yj.iter()
                    .zip(&r)
                    .map(|(v, r)| m.add(&m.mul(v, &c.mtilde_inv_bsk[j]), &m.mul(&m.reduce(r), &c.q_mtilde_inv_bsk[j])))
                    .collect()
            })
            .collect())
    }

    /// The fast floor: `d_q` over Q and `d_bsk` over Bsk hold one integer D; the result over Bsk
    /// is floor(t D / q) - alpha for some 0 <= alpha < |Q|: (t D - FastBConv([t D]_q, Q, Bsk))
    /// q^-1, an exact division in Bsk.
    pub(crate) fn fast_floor(&self, d_q: &WidePoly, d_bsk: &WidePoly) -> Result<WidePoly> {
        let c = &self.consts;
        let converted = self.q_to_bsk.convert_poly(&self.q.mul_constants(d_q, &c.t_q))?;
        let difference = self.bsk.sub(&self.bsk.mul_constants(d_bsk, &c.t_bsk), &converted);
        Ok(self.bsk.mul_constants(&difference, &c.q_inv_bsk))
    }

    /// Shenoy-Kumaresan: `x` over Bsk with |x| < M_B, to Q exactly. FastBConv from B gives
    /// x + alpha M_B; the m_sk residue gives alpha = (FastBConv(x, B, m_sk) - x_msk) M_B^-1 mod
    /// m_sk, which is then subtracted.
    pub(crate) fn to_q(&self, x: &WidePoly) -> Result<WidePoly> {
        let c = &self.consts;
        let (b_part, x_msk) = x.split_at(x.len() - 1);
        let mut converted = self.b_to_q_msk.convert_poly(b_part)?;
        let converted_msk = converted.pop().expect("m_sk is the last target");
        let msk = self.bsk.moduli().last().expect("Bsk ends with m_sk");
        let alpha: Vec<Wide> =
            converted_msk.iter().zip(&x_msk[0]).map(|(u, v)| msk.mul(&msk.sub(u, v), &c.mb_inv_msk)).collect();
        Ok(self
            .q
            .moduli()
            .iter()
            .zip(converted)
            .zip(&c.neg_mb_q)
            .map(|((m, ci), neg_mb)| {
                ci.iter().zip(&alpha).map(|(v, a)| m.add(v, &m.mul(&m.reduce(a), neg_mb))).collect()
            })
            .collect())
    }
}
