//! The extended base of section 3.5: B, m_sk and m~ for BEHZ's multiplication (Algorithm 2).
//!
//! # Finding: "b_i = 2^g + c with |c| < g" contradicts "b_i = 1 mod 2N"
//!
//! Section 3.5 asks for primes b_i = 2^g + c with |c| < g *and* b_i = 1 mod 2N. When 2N divides
//! 2^g (g >= log2(2N), as for g = 146 and N = 2^14), b_i = 1 mod 2N forces c = 1 mod 2N, so
//! c = 1 or |c| >= 2N - 1 = 32767 > g; and c = 1 gives 2^g + 1, which is in Q (S1) or composite.
//! We keep the requirement that matters for the NTT (b_i = 1 mod 2N) and the one that matters
//! for the cost (b_i has the bit length of the largest modulus of Q), and take the smallest such
//! primes above 2^g: c = 1 + j 2N for small j.

use super::base::SpecialBase;
use super::primes::ntt_primes_above;
use super::wide::Wide;
use crate::error::{MathError, Result};

/// Bits of M_B beyond log2(q t N), as in pimhe-schemes' BEHZ: the tensor product of extended
/// ciphertexts scaled by t/q is below 8.1 N t q, and Shenoy-Kumaresan needs it below M_B.
pub const EXTRA_BITS: u32 = 5;

/// B, m_sk and m~ for a special base Q.
///
/// ```
/// use pimhe_math::special::{ExtendedBase, SpecialBase};
/// let q = SpecialBase::balanced(146).unwrap();
/// let ext = ExtendedBase::new(&q, 1 << 12, 65537).unwrap();
/// assert!(ext.b().len() >= 3);
/// assert!(ext.b().iter().all(|b| b.bit_width_vartime() == 147));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExtendedBase {
    b: Vec<Wide>,
    m_sk: Wide,
    m_tilde: Wide,
    bits: u32,
}

impl ExtendedBase {
    /// The smallest primes above 2^(L-1), L the bit length of Q's largest modulus, that are
    /// 1 mod 2N and not in Q: as many for B as make log2(M_B) >= log2(q) + log2(t) + log2(N) +
    /// [`EXTRA_BITS`], then m_sk and m~ (section 3.6: "chosen similarly", so NTT-friendly too;
    /// BEHZ only needs m~ coprime to the rest and m_sk one more modulus of the same size).
    pub fn new(q: &SpecialBase, n: usize, t: u64) -> Result<Self> {
        if t < 2 {
            return Err(MathError::InvalidSpecial(format!("plaintext modulus t = {t}: it must be at least 2")));
        }
        let bits = q.moduli().iter().map(|m| m.value().bit_width_vartime()).max().expect("non-empty base");
        // Each prime has `bits` bits, so contributes more than bits - 1 to log2(M_B).
        let needed = q.log2_q_ceil() + (64 - t.leading_zeros()) + n.trailing_zeros() + EXTRA_BITS;
        let count = needed.div_ceil(bits - 1) as usize;
        let exclude: Vec<Wide> = q.moduli().iter().map(|m| *m.value()).collect();
        let mut primes = ntt_primes_above(bits - 1, n, count + 2, &exclude).map_err(|e| {
            MathError::InvalidSpecial(format!(
                "the extended base needs {} primes of {bits} bits = 1 mod 2N = {}: {e}",
                count + 2,
                2 * n
            ))
        })?;
        let m_tilde = primes.pop().expect("count + 2 primes");
        let m_sk = primes.pop().expect("count + 2 primes");
        Ok(Self { b: primes, m_sk, m_tilde, bits })
    }

    /// The primes of B.
    pub fn b(&self) -> &[Wide] {
        &self.b
    }

    /// m_sk (Bsk = B u {m_sk}).
    pub fn m_sk(&self) -> &Wide {
        &self.m_sk
    }

    /// m~ (the small-Montgomery modulus).
    pub fn m_tilde(&self) -> &Wide {
        &self.m_tilde
    }

    /// Bsk = B u {m_sk}.
    pub fn bsk(&self) -> Vec<Wide> {
        let mut v = self.b.clone();
        v.push(self.m_sk);
        v
    }

    /// Bsk u {m~}: the target of Algorithm 2's first FastBConv.
    pub fn bsk_m_tilde(&self) -> Vec<Wide> {
        let mut v = self.bsk();
        v.push(self.m_tilde);
        v
    }

    /// The bit length shared by all these primes (that of Q's largest modulus).
    pub fn bits(&self) -> u32 {
        self.bits
    }
}
