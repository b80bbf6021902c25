//! Ciphertexts of BFV on special moduli and what can be done with them: public-key encryption,
//! decryption by BEHZ's Algorithm 1, addition, subtraction, multiplication by BEHZ's
//! Algorithm 2 and relinearization.

use std::sync::Arc;

use pimhe_math::special::Wide;
use pimhe_math::{GaussianTable, Sampler};
use zeroize::Zeroizing;

use super::context::SpecialBfvContext;
use super::counts::Counted;
use super::keys::{same_context, PublicKey, RelinKey, SecretKey};
use super::ring::{WideBasis, WidePoly};
use crate::encoder::Plaintext;
use crate::error::{Result, SchemeError};

/// A ciphertext over Q: two components, or three after a multiplication (before
/// relinearization).
#[derive(Debug, Clone)]
pub struct Ciphertext {
    ctx: Arc<SpecialBfvContext>,
    components: Vec<WidePoly>,
}

impl Ciphertext {
    /// Number of components (2, or 3 after [`multiply`]).
    pub fn size(&self) -> usize {
        self.components.len()
    }

    /// The components' residues: `components()[k][i][c]` is coefficient c of component k modulo
    /// the i-th modulus of Q.
    pub fn components(&self) -> &[Vec<Vec<Wide>>] {
        &self.components
    }
}

/// Encrypts a plaintext with the public key: (round(q m / t) + p0 u + e1, p1 u + e2).
pub fn encrypt(key: &PublicKey, plain: &Plaintext, sampler: &mut Sampler) -> Result<Ciphertext> {
    let ctx = &key.ctx;
    plain.check(&ctx.plain)?;
    let q = &ctx.q;
    let n = ctx.params.degree();
    let u = Zeroizing::new(q.small(&Zeroizing::new(sampler.ternary(n))));
    let gaussian = GaussianTable::default();
    let e1 = Zeroizing::new(q.small(&Zeroizing::new(sampler.gaussian(&gaussian, n))));
    let e2 = Zeroizing::new(q.small(&Zeroizing::new(sampler.gaussian(&gaussian, n))));
    let mut c0 = q.mul(&key.p0, &u);
    q.add_assign(&mut c0, &e1);
    q.add_assign(&mut c0, &scaled_message(ctx, plain));
    let mut c1 = q.mul(&key.p1, &u);
    q.add_assign(&mut c1, &e2);
    ctx.counter.add(Counted::ProductsQ, 2);
    Ok(Ciphertext { ctx: ctx.clone(), components: vec![c0, c1] })
}

/// round(q m / t) over Q: floor(q/t) m plus the small round([q]_t m / t), which keeps a fresh
/// ciphertext's noise near t e instead of up to [q]_t t.
fn scaled_message(ctx: &SpecialBfvContext, plain: &Plaintext) -> Zeroizing<WidePoly> {
    let t = ctx.t.value() as u64;
    let c = &ctx.consts;
    let rounding: Zeroizing<Vec<i64>> = Zeroizing::new(
        plain.coefficients().iter().map(|&m| ((2 * c.q_mod_t * m as u64 + t) / (2 * t)) as i64).collect(),
    );
    let message: Zeroizing<Vec<i64>> = Zeroizing::new(plain.coefficients().iter().map(|&m| m as i64).collect());
    let q = &ctx.q;
    let mut scaled = Zeroizing::new(q.mul_constants(&q.small(&message), &c.delta_q));
    q.add_assign(&mut scaled, &q.small(&rounding));
    scaled
}

/// Decrypts by Algorithm 1 (gamma-corrected, integer only). An error when the noise has used
/// up the budget (|t v mod q| > q/4): the message would not be trustworthy.
pub fn decrypt(key: &SecretKey, ct: &Ciphertext) -> Result<Plaintext> {
    same_context(&key.ctx, &ct.ctx, "the ciphertext")?;
    let ctx = &ct.ctx;
    let q = &ctx.q;
    let s = key.residues();
    // v = c0 + c1 s + c2 s^2, by Horner from the top component.
    let mut v = Zeroizing::new(ct.components.last().expect("at least two components").clone());
    for component in ct.components.iter().rev().skip(1) {
        let product = Zeroizing::new(q.mul(&v, &s));
        *v = q.add(&product, component);
        ctx.counter.add(Counted::ProductsQ, 1);
    }
    ctx.counter.add(Counted::ScaledToT, 1);
    let scaler = &ctx.decryption;
    let mut column = Zeroizing::new(vec![Wide::ZERO; v.len()]);
    let mut largest_error = 0;
    let mut message = Vec::with_capacity(v[0].len());
    for c in 0..v[0].len() {
        for (slot, limb) in column.iter_mut().zip(v.iter()) {
            *slot = limb[c];
        }
        let scaled = scaler.scale_measured(&column, ctx.params.optimized());
        largest_error = largest_error.max(scaled.error);
        message.push(scaled.message as u32);
    }
    // Less than one bit of budget left (|[t v]_q| > q/4): too close to wrapping to trust.
    if largest_error > scaler.gamma() / 4 {
        return Err(SchemeError::NoiseBudgetExhausted { index: 0 });
    }
    Ok(Plaintext::from_coefficients(message))
}

/// Errors unless both ciphertexts share a context and have `expected` components (any size
/// when `None`, but the same).
fn check_pair(a: &Ciphertext, b: &Ciphertext, operation: &'static str, expected: Option<usize>) -> Result<()> {
    same_context(&a.ctx, &b.ctx, "the second operand")?;
    for ct in [a, b] {
        let want = expected.unwrap_or(a.size());
        if ct.size() != want {
            return Err(SchemeError::WrongSize { operation, expected: want, found: ct.size() });
        }
    }
    Ok(())
}

/// a + b, component-wise.
pub fn add(a: &Ciphertext, b: &Ciphertext) -> Result<Ciphertext> {
    componentwise(a, b, "add", WideBasis::add)
}

/// a - b, component-wise.
pub fn sub(a: &Ciphertext, b: &Ciphertext) -> Result<Ciphertext> {
    componentwise(a, b, "sub", WideBasis::sub)
}

/// `op` of the matching components of two ciphertexts of one context and size.
fn componentwise(
    a: &Ciphertext,
    b: &Ciphertext,
    operation: &'static str,
    op: fn(&WideBasis, &WidePoly, &WidePoly) -> WidePoly,
) -> Result<Ciphertext> {
    check_pair(a, b, operation, None)?;
    let q = &a.ctx.q;
    let components: Vec<WidePoly> = a.components.iter().zip(&b.components).map(|(x, y)| op(q, x, y)).collect();
    a.ctx.counter.add(Counted::Componentwise, components.len());
    Ok(Ciphertext { ctx: a.ctx.clone(), components })
}

/// The tensor (x0 y0, x0 y1 + x1 y0, x1 y1) over one basis, with Karatsuba's three products
/// (Algorithm 2's line 4 as written, and the `ceram` programs, have four), counted as `counted`.
fn tensor(
    ctx: &SpecialBfvContext,
    counted: Counted,
    basis: &WideBasis,
    x: &[WidePoly],
    y: &[WidePoly],
) -> [WidePoly; 3] {
    let product = |a: &WidePoly, b: &WidePoly| {
        ctx.counter.add(counted, 1);
        basis.mul(a, b)
    };
    let low = product(&x[0], &y[0]);
    let high = product(&x[1], &y[1]);
    let cross = product(&basis.add(&x[0], &x[1]), &basis.add(&y[0], &y[1]));
    let middle = basis.sub(&basis.sub(&cross, &low), &high);
    [low, middle, high]
}

/// a * b by BEHZ's Algorithm 2: both operands extended to Bsk, the tensor over Q and Bsk, the
/// fast floor that scales by t/q, Shenoy-Kumaresan back to Q. Three components: relinearize
/// next.
pub fn multiply(a: &Ciphertext, b: &Ciphertext) -> Result<Ciphertext> {
    check_pair(a, b, "multiply", Some(2))?;
    let ctx = &a.ctx;
    let extend = |ct: &Ciphertext| ct.components.iter().map(|c| ctx.extend(c)).collect::<Result<Vec<_>>>();
    let (a_bsk, b_bsk) = (extend(a)?, extend(b)?);
    ctx.counter.add(Counted::Extended, a_bsk.len() + b_bsk.len());
    let over_q = tensor(ctx, Counted::TensorProductsQ, &ctx.q, &a.components, &b.components);
    let over_bsk = tensor(ctx, Counted::TensorProductsBsk, &ctx.bsk, &a_bsk, &b_bsk);
    let components = over_q
        .iter()
        .zip(&over_bsk)
        .map(|(d_q, d_bsk)| ctx.to_q(&ctx.fast_floor(d_q, d_bsk)?))
        .collect::<Result<Vec<_>>>()?;
    ctx.counter.add(Counted::Floored, components.len());
    ctx.counter.add(Counted::ConvertedToQ, components.len());
    Ok(Ciphertext { ctx: ctx.clone(), components })
}

/// Relinearizes a three-component ciphertext: the digits D_i = |c2 (q/q_i)^-1|_{q_i} (the
/// special shift forms when the parameters are optimized), lifted to Q, against the key.
pub fn relinearize(ct: &Ciphertext, key: &RelinKey) -> Result<Ciphertext> {
    same_context(&ct.ctx, &key.ctx, "the relinearization key")?;
    if ct.size() != 3 {
        return Err(SchemeError::WrongSize { operation: "relinearize", expected: 3, found: ct.size() });
    }
    let ctx = &ct.ctx;
    let q = &ctx.q;
    let (mut c0, mut c1) = (ct.components[0].clone(), ct.components[1].clone());
    for (i, (k0, k1)) in key.pairs.iter().enumerate() {
        let digit = ctx.digit(i, &ct.components[2][i]);
        let lifted: WidePoly = q.moduli().iter().map(|m| digit.iter().map(|d| m.reduce(d)).collect()).collect();
        q.add_assign(&mut c0, &q.mul(&lifted, k0));
        q.add_assign(&mut c1, &q.mul(&lifted, k1));
        ctx.counter.add(Counted::Digits, 1);
        ctx.counter.add(Counted::ProductsQ, 2);
    }
    Ok(Ciphertext { ctx: ctx.clone(), components: vec![c0, c1] })
}

impl SpecialBfvContext {
    /// D_i = |x (q/q_i)^-1|_{q_i} for the residues `x` of c2 modulo q_i: the shift form of
    /// section 3.4 when optimized, a Barrett multiply otherwise (the same values).
    fn digit(&self, i: usize, x: &[Wide]) -> Vec<Wide> {
        let base = self.params.base();
        if self.params.optimized() {
            x.iter().map(|v| base.scale_by_q_hat_inv(i, v)).collect()
        } else {
            let m = &self.q.moduli()[i];
            x.iter().map(|v| m.mul(v, &base.q_hat_inv()[i])).collect()
        }
    }
}
