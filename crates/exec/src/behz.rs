//! BFV's product by the integer-only RNS tools of Bajard, Eynard, Hasan and Zucca ("A Full RNS
//! Variant of FV like Somewhat Homomorphic Encryption Schemes", SAC 2016, Algorithm 2): the
//! bases and constants ([`BehzPlan`]) and the product composed of batch-wide [`Backend`] calls
//! ([`composed`]), which is the default of [`Backend::behz_multiply`] and
//! [`Backend::behz_square`]. The CPU backend runs the same arithmetic limb by limb in cache
//! (`cpu/behz.rs`); every implementation returns the same residues.
//!
//! Bases (the caller picks the primes, all distinct and NTT-friendly at the ring degree):
//! - q: the ciphertext primes;
//! - B: auxiliary primes whose product M_B exceeds the tensor product scaled by t/q;
//! - m_sk: one more prime, Bsk = B u {m_sk}; it lets Shenoy-Kumaresan recover the exact
//!   overflow of FastBConv from B;
//! - m~: the Montgomery prime that removes FastBConv's overflow on the way into Bsk.
//!
//! Lifts of a single residue (the Montgomery quotient r and the SK overflow alpha) are FastBConv
//! from a one-prime base, i.e. the representative in [0, p).

use std::sync::Arc;

use pimhe_math::Modulus;
use pimhe_ring::{Representation, RingBasis};

use crate::backend::Backend;
use crate::error::{ExecError, Result};
use crate::operands::{require, same_shape};

/// The bases and per-step constants of one BFV parameter set's BEHZ product, built once.
///
/// ```
/// use pimhe_exec::BehzPlan;
/// use pimhe_math::ntt_primes;
/// use pimhe_ring::RingBasis;
/// let primes = ntt_primes(30, 16, 7, &[]).unwrap();
/// let q = RingBasis::new(16, &primes[..2]).unwrap();
/// let plan = BehzPlan::new(&q, 65537, &primes[2..5], primes[5], primes[6]).unwrap();
/// assert_eq!(plan.bsk().len(), 4);
/// ```
#[derive(Debug)]
pub struct BehzPlan {
    q: Arc<RingBasis>,
    b: Arc<RingBasis>,
    bsk: Arc<RingBasis>,
    msk: Arc<RingBasis>,
    bsk_mtilde: Arc<RingBasis>,
    mtilde: Arc<RingBasis>,
    q_msk: Arc<RingBasis>,
    /// The plaintext modulus t.
    pub(crate) t: u64,
    /// m~ (the scale before extension).
    pub(crate) mtilde_value: u64,
    /// -q^{-1} mod m~.
    pub(crate) neg_q_inv_mtilde: u64,
    /// m~^{-1} and q m~^{-1} modulo each prime of Bsk.
    pub(crate) mtilde_inv_bsk: Vec<u64>,
    pub(crate) q_mtilde_inv_bsk: Vec<u64>,
    /// q^{-1} modulo each prime of Bsk (fast floor).
    pub(crate) q_inv_bsk: Vec<u64>,
    /// M_B^{-1} mod m_sk and -M_B modulo each prime of q (Shenoy-Kumaresan).
    pub(crate) mb_inv_msk: u64,
    pub(crate) neg_mb_q: Vec<u64>,
}

/// The product of `primes` modulo `p`.
fn product_mod(p: &Modulus, primes: &[u32]) -> u32 {
    primes.iter().fold(1 % p.value(), |acc, &x| p.mul(acc, p.reduce_u64(x.into())))
}

impl BehzPlan {
    /// The plan for ciphertext basis `q` and plaintext modulus `t`, with auxiliary primes
    /// `b_primes` (B), `msk` (m_sk) and `mtilde` (m~), all of the ring degree of `q` (NTT
    /// friendly) and distinct from each other and from q's. Fails naming the clash otherwise.
    pub fn new(q: &Arc<RingBasis>, t: u32, b_primes: &[u32], msk: u32, mtilde: u32) -> Result<Self> {
        let n = q.degree();
        let q_primes = q.primes();
        let all = [q_primes.as_slice(), b_primes, &[msk, mtilde]].concat();
        if let Some(i) = (0..all.len()).find(|&i| all[..i].contains(&all[i])) {
            return Err(ExecError::Setup(format!(
                "BEHZ needs distinct primes for q, B, m_sk and m~; {} is used twice in {all:?}",
                all[i]
            )));
        }
        if b_primes.is_empty() {
            return Err(ExecError::Setup("BEHZ needs at least one prime in B".into()));
        }
        let bsk = RingBasis::new(n, &[b_primes, &[msk]].concat())?;
        let b = bsk.prefix(b_primes.len())?;
        let msk_basis = bsk.select(&[b_primes.len()])?;
        let mtilde_basis = RingBasis::new(n, &[mtilde])?;
        let (mtilde_mod, msk_mod) = (*mtilde_basis.modulus(0), *msk_basis.modulus(0));
        let q_mod_bsk: Vec<u32> = bsk.moduli().iter().map(|p| product_mod(p, &q_primes)).collect();
        let mtilde_inv_bsk: Vec<u32> =
            bsk.moduli().iter().map(|p| p.inv(p.reduce_u64(mtilde.into()))).collect::<pimhe_math::Result<_>>()?;
        let q_mtilde_inv_bsk = bsk
            .moduli()
            .iter()
            .zip(q_mod_bsk.iter().zip(&mtilde_inv_bsk))
            .map(|(p, (&x, &y))| p.mul(x, y) as u64)
            .collect();
        let q_inv_bsk =
            bsk.moduli().iter().zip(&q_mod_bsk).map(|(p, &x)| Ok(p.inv(x)? as u64)).collect::<Result<_>>()?;
        let neg_mb_q = q.moduli().iter().map(|qi| qi.neg(product_mod(qi, b_primes)) as u64).collect();
        Ok(Self {
            t: t.into(),
            mtilde_value: mtilde.into(),
            neg_q_inv_mtilde: mtilde_mod.neg(mtilde_mod.inv(product_mod(&mtilde_mod, &q_primes))?) as u64,
            mtilde_inv_bsk: mtilde_inv_bsk.into_iter().map(u64::from).collect(),
            q_mtilde_inv_bsk,
            q_inv_bsk,
            mb_inv_msk: msk_mod.inv(product_mod(&msk_mod, b_primes))? as u64,
            neg_mb_q,
            q: q.clone(),
            bsk_mtilde: bsk.concat(&mtilde_basis)?,
            q_msk: q.concat(&msk_basis)?,
            b,
            bsk,
            msk: msk_basis,
            mtilde: mtilde_basis,
        })
    }

    /// The ciphertext basis q.
    pub fn q(&self) -> &Arc<RingBasis> {
        &self.q
    }

    /// The auxiliary base B.
    pub fn b(&self) -> &Arc<RingBasis> {
        &self.b
    }

    /// Bsk = B u {m_sk}, where the product is computed beside q.
    pub fn bsk(&self) -> &Arc<RingBasis> {
        &self.bsk
    }

    /// {m_sk} alone.
    pub fn msk(&self) -> &Arc<RingBasis> {
        &self.msk
    }

    /// {m~} alone.
    pub fn mtilde(&self) -> &Arc<RingBasis> {
        &self.mtilde
    }

    /// Bsk u {m~}: where the extension's FastBConv lands.
    pub(crate) fn bsk_mtilde(&self) -> &Arc<RingBasis> {
        &self.bsk_mtilde
    }

    /// q u {m_sk}: where Shenoy-Kumaresan's FastBConv from B lands.
    pub(crate) fn q_msk(&self) -> &Arc<RingBasis> {
        &self.q_msk
    }
}

/// The operands of a BEHZ product (`a`'s two parts, then `b`'s; `b = None` for a square),
/// checked alike on every backend: every operand in NTT form over the plan's q, all of one
/// shape.
pub(crate) fn operands<'a, B: Backend + ?Sized>(
    backend: &B,
    plan: &BehzPlan,
    a: [&'a B::Buffer; 2],
    b: Option<[&'a B::Buffer; 2]>,
) -> Result<Vec<&'a B::Buffer>> {
    let (operation, operands) = match b {
        Some(b) => ("behz_multiply", vec![a[0], a[1], b[0], b[1]]),
        None => ("behz_square", vec![a[0], a[1]]),
    };
    let shape = backend.shape(operands[0]);
    require(operation, &shape, Representation::Ntt)?;
    if shape.basis.degree() != plan.q.degree() || shape.basis.primes() != plan.q.primes() {
        return Err(ExecError::Shape {
            operation,
            detail: format!(
                "operands are over {:?} at degree {}; the plan's ciphertext basis is {:?} at degree {}",
                shape.basis.primes(),
                shape.basis.degree(),
                plan.q.primes(),
                plan.q.degree()
            ),
        });
    }
    for other in &operands[1..] {
        same_shape(operation, &shape, &backend.shape(other))?;
    }
    Ok(operands)
}

/// Steps 1-2 of Algorithm 2: `x` (NTT form over q) to Bsk, NTT form. FastBConv of m~ x
/// into Bsk u {m~} carries an overflow alpha q (0 <= alpha < L); the small Montgomery
/// reduction by m~ adds q r with r = -x' q^{-1} mod m~ in [0, m~) and divides by m~, which
/// leaves x + u q with u in {0, 1}: the same integer modulo q, small enough for the tensor.
/// (The sum is below q (1 + L - 1 + m~ - 1), so the result is in [0, q (1 + (L - 1) / m~))
/// and L <= m~.)
pub fn extend<B: Backend + ?Sized>(backend: &B, plan: &BehzPlan, x: &B::Buffer) -> Result<B::Buffer> {
    let mut coefficients = backend.copy(x)?;
    backend.intt(&mut coefficients)?;
    let scaled = backend.mul_scalar(&coefficients, plan.mtilde_value)?;
    let extended = backend.base_convert(&scaled, &plan.bsk_mtilde)?;
    let r = backend.mul_scalar(&backend.restrict(&extended, &plan.mtilde)?, plan.neg_q_inv_mtilde)?;
    let r_bsk = backend.base_convert(&r, &plan.bsk)?;
    let x_part = backend.mul_limb_constants(&backend.restrict(&extended, &plan.bsk)?, &plan.mtilde_inv_bsk)?;
    let mut out = backend.mul_limb_constants(&r_bsk, &plan.q_mtilde_inv_bsk)?;
    backend.add_assign(&mut out, &x_part)?;
    backend.ntt(&mut out)?;
    Ok(out)
}

/// Step 4: the fast floor. `d_q` and `d_bsk` (coefficient form) hold one integer D over
/// q u Bsk; the result over Bsk is floor(t D / q) - alpha for some 0 <= alpha < L:
/// (t D - FastBConv([t D]_q, q, Bsk)) q^{-1}, an exact division in Bsk.
pub fn fast_floor<B: Backend + ?Sized>(
    backend: &B,
    plan: &BehzPlan,
    d_q: &B::Buffer,
    d_bsk: &B::Buffer,
) -> Result<B::Buffer> {
    let converted = backend.base_convert(&backend.mul_scalar(d_q, plan.t)?, &plan.bsk)?;
    backend.mod_down_epilogue(&backend.mul_scalar(d_bsk, plan.t)?, &converted, &plan.q_inv_bsk)
}

/// Step 5: Shenoy-Kumaresan. `x` over Bsk (coefficient form), |x| < M_B, to q exactly:
/// FastBConv from B gives x + alpha M_B; the m_sk residue gives
/// alpha = (FastBConv(x, B, m_sk) - x_msk) M_B^{-1} mod m_sk, which is then subtracted.
pub fn to_q<B: Backend + ?Sized>(backend: &B, plan: &BehzPlan, x: &B::Buffer) -> Result<B::Buffer> {
    let converted = backend.base_convert(&backend.restrict(x, &plan.b)?, &plan.q_msk)?;
    let difference = backend.sub(&backend.restrict(&converted, &plan.msk)?, &backend.restrict(x, &plan.msk)?)?;
    let alpha = backend.base_convert(&backend.mul_scalar(&difference, plan.mb_inv_msk)?, &plan.q)?;
    let mut out = backend.mul_limb_constants(&alpha, &plan.neg_mb_q)?;
    backend.add_assign(&mut out, &backend.restrict(&converted, &plan.q)?)?;
    Ok(out)
}

/// Algorithm 2 as batch-wide backend calls: `a` and `b` (each a ciphertext's two parts, NTT
/// form over q; `b = None` squares `a`) extended to Bsk, the tensor product in q and in Bsk,
/// scaled by t/q (fast floor) and brought back to q (Shenoy-Kumaresan), NTT form. A square
/// extends its operand once and takes three products per tensor.
pub fn composed<B: Backend + ?Sized>(
    backend: &B,
    plan: &BehzPlan,
    a: [&B::Buffer; 2],
    b: Option<[&B::Buffer; 2]>,
) -> Result<[B::Buffer; 3]> {
    operands(backend, plan, a, b)?;
    let (a0, a1) = (extend(backend, plan, a[0])?, extend(backend, plan, a[1])?);
    let (in_bsk, in_q) = match b {
        None => (backend.tensor_square(&a0, &a1)?, backend.tensor_square(a[0], a[1])?),
        Some(b) => {
            let (b0, b1) = (extend(backend, plan, b[0])?, extend(backend, plan, b[1])?);
            (backend.tensor(&a0, &a1, &b0, &b1)?, backend.tensor(a[0], a[1], b[0], b[1])?)
        }
    };
    let to_q_ntt = |(mut d_q, mut d_bsk): (B::Buffer, B::Buffer)| -> Result<B::Buffer> {
        backend.intt(&mut d_q)?;
        backend.intt(&mut d_bsk)?;
        let mut scaled = to_q(backend, plan, &fast_floor(backend, plan, &d_q, &d_bsk)?)?;
        backend.ntt(&mut scaled)?;
        Ok(scaled)
    };
    let ([q0, q1, q2], [b0, b1, b2]) = (in_q, in_bsk);
    Ok([to_q_ntt((q0, b0))?, to_q_ntt((q1, b1))?, to_q_ntt((q2, b2))?])
}
