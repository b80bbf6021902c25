//! The context of BFV on special moduli: the bases Q, Bsk = B u {m_sk}, m~, {t, gamma}, their
//! fast base converters and the constants of BEHZ's Algorithms 1 and 2, computed once.

use std::sync::Arc;

use num_bigint::BigUint;
use pimhe_math::special::{BarrettModulus, DecryptScaler, ExtendedBase, FastBConv, Wide};
use pimhe_math::Modulus;

use super::counts::{OpCounter, OpCounts};
use super::params::SpecialBfvParameters;
use super::ring::{to_big, to_wide, WideBasis, WideModulus};
use crate::encoder::{PlainContext, PlainSpace};
use crate::error::{Result, SchemeError};

/// Everything BFV on special moduli precomputes for one parameter set; shared by keys and
/// ciphertexts through an `Arc`.
///
/// ```
/// use pimhe_schemes::bfv::special::{SpecialBfvContext, SpecialBfvParameters};
/// use pimhe_math::special::SpecialBase;
/// // A small insecure set for a quick look: N = 16, Q = {2^40 - 1, 2^40, 2^40 + 1}.
/// let params = SpecialBfvParameters::new(16, 97, SpecialBase::balanced(40).unwrap(), true).unwrap().allow_insecure();
/// let ctx = SpecialBfvContext::new(params).unwrap();
/// assert!(ctx.extended_base_len() >= 1);
/// ```
#[derive(Debug)]
pub struct SpecialBfvContext {
    pub(crate) params: SpecialBfvParameters,
    pub(crate) plain: Arc<PlainSpace>,
    pub(crate) q: WideBasis,
    /// B u {m_sk} (m_sk last).
    pub(crate) bsk: WideBasis,
    pub(crate) mtilde: WideModulus,
    pub(crate) t: Modulus,
    /// Q -> Bsk u {m~} (extension) and Q -> Bsk (fast floor): special when the parameters are
    /// optimized, generic otherwise.
    pub(crate) q_to_bsk_mtilde: FastBConv,
    pub(crate) q_to_bsk: FastBConv,
    /// Algorithm 1's scaling through {t, gamma}.
    pub(crate) decryption: DecryptScaler,
    /// B -> Q u {m_sk} (Shenoy-Kumaresan; B is not special, so always generic).
    pub(crate) b_to_q_msk: FastBConv,
    pub(crate) consts: Constants,
    /// What the evaluator has run on this context ([`Self::op_counts`]).
    pub(crate) counter: OpCounter,
}

/// The constants of the algorithms, each reduced modulo the modulus it is used with.
#[derive(Debug)]
pub(crate) struct Constants {
    /// m~ mod q_i.
    pub(crate) mtilde_q: Vec<Wide>,
    /// -q^-1 mod m~.
    pub(crate) neg_q_inv_mtilde: Wide,
    /// m~^-1 and q m~^-1 mod each modulus of Bsk.
    pub(crate) mtilde_inv_bsk: Vec<Wide>,
    pub(crate) q_mtilde_inv_bsk: Vec<Wide>,
    /// q^-1 mod each modulus of Bsk (fast floor).
    pub(crate) q_inv_bsk: Vec<Wide>,
    /// t mod q_i and mod each modulus of Bsk.
    pub(crate) t_q: Vec<Wide>,
    pub(crate) t_bsk: Vec<Wide>,
    /// M_B^-1 mod m_sk and -M_B mod q_i (Shenoy-Kumaresan).
    pub(crate) mb_inv_msk: Wide,
    pub(crate) neg_mb_q: Vec<Wide>,
    /// floor(q/t) mod q_i and q mod t (encryption's round(q m / t)).
    pub(crate) delta_q: Vec<Wide>,
    pub(crate) q_mod_t: u64,
    /// (q/q_i) mod q_i: the relinearization key's gadget (zero modulo the other q_j).
    pub(crate) q_hat_q: Vec<Wide>,
}

/// Algorithm 1's correction modulus: the Mersenne prime 2^61 - 1, coprime to t and (checked by
/// [`DecryptScaler::new`]) to Q; its 61 bits measure the noise to 2^-61 of q.
const GAMMA: u64 = (1 << 61) - 1;

fn inverse(x: &BigUint, m: &BigUint, what: &str) -> Result<BigUint> {
    x.modinv(m)
        .ok_or_else(|| SchemeError::InvalidParameters(format!("{what} is not invertible: bases must be coprime")))
}

impl SpecialBfvContext {
    /// Validates the parameters and precomputes the bases and constants.
    pub fn new(params: SpecialBfvParameters) -> Result<Arc<Self>> {
        params.validate()?;
        let n = params.degree();
        let t_value = params.plain_modulus();
        let base = params.base();
        let q = WideBasis::special(base.moduli(), n, params.optimized(), params.products())?;
        let extended = ExtendedBase::new(base, n, t_value as u64)?;
        let mut bsk_values = extended.b().to_vec();
        bsk_values.push(*extended.m_sk());
        let bsk = WideBasis::primes(&bsk_values, n)?;
        let mtilde = WideModulus::Barrett(BarrettModulus::new(*extended.m_tilde())?);

        let q_values: Vec<Wide> = base.moduli().iter().map(|m| *m.value()).collect();
        let q_big = q_values.iter().fold(BigUint::from(1u32), |acc, m| acc * to_big(m));
        let t = Modulus::new(t_value as u64)?;

        let mut bsk_mtilde = bsk_values.clone();
        bsk_mtilde.push(*mtilde.value());
        let from_q = |to: &[Wide]| -> Result<FastBConv> {
            Ok(if params.optimized() { FastBConv::from_special(base, to)? } else { FastBConv::new(&q_values, to)? })
        };
        let mut q_msk = q_values.clone();
        q_msk.push(*extended.m_sk());
        let b_to_q_msk = FastBConv::new(extended.b(), &q_msk)?;

        let mtilde_big = to_big(mtilde.value());
        let msk_big = to_big(extended.m_sk());
        let mb_big = extended.b().iter().fold(BigUint::from(1u32), |acc, b| acc * to_big(b));
        let t_big = BigUint::from(t_value);
        let residues_q = |x: &BigUint| q.moduli().iter().map(|m| m.residue_of(x)).collect::<Vec<_>>();
        let residues_bsk = |x: &BigUint| bsk.moduli().iter().map(|m| m.residue_of(x)).collect::<Vec<_>>();
        let inverses_bsk = |x: &BigUint, what: &str| -> Result<Vec<Wide>> {
            bsk.moduli().iter().map(|m| Ok(to_wide(&inverse(x, &to_big(m.value()), what)?))).collect()
        };
        let mtilde_inv_bsk = inverses_bsk(&mtilde_big, "m~ modulo Bsk")?;
        let q_mtilde_inv_bsk =
            bsk.moduli().iter().zip(&mtilde_inv_bsk).map(|(m, inv)| m.mul(&m.residue_of(&q_big), inv)).collect();
        let neg = |x: &BigUint, m: &BigUint| (m - x % m) % m;
        let consts = Constants {
            mtilde_q: residues_q(&mtilde_big),
            neg_q_inv_mtilde: to_wide(&neg(&inverse(&q_big, &mtilde_big, "q modulo m~")?, &mtilde_big)),
            mtilde_inv_bsk,
            q_mtilde_inv_bsk,
            q_inv_bsk: inverses_bsk(&q_big, "q modulo Bsk")?,
            t_q: residues_q(&t_big),
            t_bsk: residues_bsk(&t_big),
            mb_inv_msk: to_wide(&inverse(&mb_big, &msk_big, "M_B modulo m_sk")?),
            neg_mb_q: q.moduli().iter().map(|m| m.residue_of(&neg(&mb_big, &to_big(m.value())))).collect(),
            delta_q: residues_q(&(&q_big / &t_big)),
            q_mod_t: u64::try_from(&q_big % &t_big).expect("below t"),
            q_hat_q: q
                .moduli()
                .iter()
                .map(|m| {
                    let qi = to_big(m.value());
                    m.residue_of(&((&q_big / &qi) % &qi))
                })
                .collect(),
        };
        Ok(Arc::new(Self {
            plain: PlainSpace::new(n, t_value)?,
            q_to_bsk_mtilde: from_q(&bsk_mtilde)?,
            q_to_bsk: from_q(&bsk_values)?,
            decryption: DecryptScaler::new(base, t_value as u64, GAMMA)?,
            b_to_q_msk,
            q,
            bsk,
            mtilde,
            t,
            consts,
            params,
            counter: OpCounter::default(),
        }))
    }

    /// The parameters.
    pub fn params(&self) -> &SpecialBfvParameters {
        &self.params
    }

    /// The polynomial-level operations the evaluator has run on this context since it was made
    /// or [`Self::reset_op_counts`] (key generation not counted).
    pub fn op_counts(&self) -> OpCounts {
        self.counter.snapshot()
    }

    /// Sets [`Self::op_counts`] back to zero, e.g. before the run of one operation.
    pub fn reset_op_counts(&self) {
        self.counter.reset()
    }

    /// Number of moduli of the extended base Bsk = B u {m_sk}.
    pub fn extended_base_len(&self) -> usize {
        self.bsk.len()
    }
}

impl PlainContext for SpecialBfvContext {
    fn plain_space(&self) -> &Arc<PlainSpace> {
        &self.plain
    }
}
