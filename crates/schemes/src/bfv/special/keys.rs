//! Keys of BFV on special moduli: a ternary secret, the public key (-(a s + e), a) and the
//! relinearization key of BEHZ's RNS decomposition: for each q_i,
//! (-(a_i s + e_i) + s^2 (q/q_i), a_i), so that sum_i D_i (q/q_i) = c2 modulo q for the digits
//! D_i = |c2 (q/q_i)^-1|_{q_i}.

use std::sync::Arc;

use pimhe_math::{GaussianTable, Sampler};
use zeroize::Zeroizing;

use super::context::SpecialBfvContext;
use super::ring::WidePoly;
use crate::error::{Result, SchemeError};

/// A secret key: ternary coefficients, wiped on drop.
pub struct SecretKey {
    pub(crate) ctx: Arc<SpecialBfvContext>,
    coefficients: Zeroizing<Vec<i64>>,
}

impl std::fmt::Debug for SecretKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SecretKey { .. }")
    }
}

/// A public key (p0, p1) = (-(a s + e), a) over Q.
#[derive(Debug, Clone)]
pub struct PublicKey {
    pub(crate) ctx: Arc<SpecialBfvContext>,
    pub(crate) p0: WidePoly,
    pub(crate) p1: WidePoly,
}

/// The relinearization key: one pair per modulus of Q.
#[derive(Debug, Clone)]
pub struct RelinKey {
    pub(crate) ctx: Arc<SpecialBfvContext>,
    pub(crate) pairs: Vec<(WidePoly, WidePoly)>,
}

/// -(a s + e) over Q for a fresh uniform a: the first half of every RLWE key.
fn rlwe_sample(ctx: &SpecialBfvContext, s: &WidePoly, sampler: &mut Sampler) -> (WidePoly, WidePoly) {
    let a = ctx.q.uniform(sampler);
    let e = Zeroizing::new(sampler.gaussian(&GaussianTable::default(), ctx.params.degree()));
    let e_q = Zeroizing::new(ctx.q.small(&e));
    let mut b = ctx.q.mul(&a, s);
    ctx.q.add_assign(&mut b, &e_q);
    (ctx.q.neg(&b), a)
}

impl SecretKey {
    /// A fresh ternary secret drawn from `sampler` (seed it from the OS outside tests:
    /// [`Sampler::from_os`]).
    pub fn generate(ctx: &Arc<SpecialBfvContext>, sampler: &mut Sampler) -> Self {
        Self { ctx: ctx.clone(), coefficients: Zeroizing::new(sampler.ternary(ctx.params.degree())) }
    }

    /// s over Q (secret: the caller wipes it).
    pub(crate) fn residues(&self) -> Zeroizing<WidePoly> {
        Zeroizing::new(self.ctx.q.small(&self.coefficients))
    }

    /// The public key of this secret.
    pub fn public_key(&self, sampler: &mut Sampler) -> PublicKey {
        let (p0, p1) = rlwe_sample(&self.ctx, &self.residues(), sampler);
        PublicKey { ctx: self.ctx.clone(), p0, p1 }
    }

    /// The relinearization key of this secret.
    pub fn relin_key(&self, sampler: &mut Sampler) -> RelinKey {
        let ctx = &self.ctx;
        let s = self.residues();
        let s2 = Zeroizing::new(ctx.q.mul(&s, &s));
        let pairs = (0..ctx.q.len())
            .map(|i| {
                let (mut k0, k1) = rlwe_sample(ctx, &s, sampler);
                // s^2 (q/q_i) is zero modulo every q_j but q_i.
                let m = &ctx.q.moduli()[i];
                for (k, s2) in k0[i].iter_mut().zip(&s2[i]) {
                    *k = m.add(k, &m.mul(s2, &ctx.consts.q_hat_q[i]));
                }
                (k0, k1)
            })
            .collect();
        RelinKey { ctx: ctx.clone(), pairs }
    }
}

/// Errors unless two objects were made under the same context (or equal parameters).
pub(crate) fn same_context(a: &Arc<SpecialBfvContext>, b: &Arc<SpecialBfvContext>, what: &str) -> Result<()> {
    if Arc::ptr_eq(a, b) || a.params == b.params {
        Ok(())
    } else {
        Err(SchemeError::ParameterMismatch(format!("{what} was made under {}, not {}", b.params, a.params)))
    }
}
