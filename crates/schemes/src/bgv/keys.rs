//! Secret, public and relinearization keys, and the generator that makes them.

use std::sync::Arc;

use pimhe_exec::Backend;
use pimhe_math::{GaussianTable, Sampler};
use pimhe_ring::{PolyBatch, Representation, RingBasis};
use zeroize::Zeroize;

use crate::bgv::context::BgvContext;
use crate::error::{Result, SchemeError};

/// The secret key s (ternary), in NTT form over every data prime and the special prime.
/// Its residues are overwritten with zeros when it is dropped.
pub struct SecretKey {
    pub(crate) ctx: Arc<BgvContext>,
    pub(crate) s: PolyBatch,
}

impl Drop for SecretKey {
    fn drop(&mut self) {
        self.s.zeroize();
    }
}

/// The public key (b, a) = (-a s + t e, a) over the data primes, NTT form.
#[derive(Clone)]
pub struct PublicKey {
    pub(crate) ctx: Arc<BgvContext>,
    pub(crate) b: PolyBatch,
    pub(crate) a: PolyBatch,
}

/// The relinearization key: one key-switching pair per data prime q_i (RNS digits),
/// `(b_i, a_i) = (-a_i s + t e_i + P g_i s^2, a_i)` over the data primes plus P, where g_i is
/// 1 modulo q_i and 0 modulo every other prime (so `P g_i s^2` lives on limb i alone).
///
/// Key switching decomposes the s^2 component c2 into its residues [c2]_{q_i}, multiplies them
/// with these pairs and divides by the special prime P (the "hybrid" method with one digit per
/// prime, as SEAL does). The division by P removes almost all of the noise the digits bring,
/// so relinearization costs a few bits of budget instead of ~log2(q_i).
#[derive(Clone)]
pub struct RelinKey {
    pub(crate) ctx: Arc<BgvContext>,
    pub(crate) pairs: Vec<(PolyBatch, PolyBatch)>,
}

impl SecretKey {
    /// The parameters this key belongs to.
    pub fn context(&self) -> &Arc<BgvContext> {
        &self.ctx
    }
}

impl PublicKey {
    /// The parameters this key belongs to.
    pub fn context(&self) -> &Arc<BgvContext> {
        &self.ctx
    }
}

impl RelinKey {
    /// The parameters this key belongs to.
    pub fn context(&self) -> &Arc<BgvContext> {
        &self.ctx
    }

    /// Size in bytes of the key material.
    pub fn size_bytes(&self) -> usize {
        self.pairs.iter().map(|(b, a)| 4 * (b.data().len() + a.data().len())).sum()
    }
}

/// Randomness for one encryption or key: ternary secrets and Gaussian errors.
pub(crate) struct Noise {
    pub(crate) sampler: Sampler,
    gaussian: GaussianTable,
}

impl Noise {
    pub(crate) fn new(sampler: Sampler) -> Self {
        Self { sampler, gaussian: GaussianTable::default() }
    }

    pub(crate) fn ternary(&mut self, n: usize) -> Vec<i64> {
        self.sampler.ternary(n)
    }

    /// t * e for a fresh Gaussian e.
    pub(crate) fn scaled_error(&mut self, n: usize, t: u32) -> Vec<i64> {
        let mut e = self.sampler.gaussian(&self.gaussian, n);
        e.iter_mut().for_each(|x| *x *= t as i64);
        e
    }

    /// `count` uniform polynomials over `basis`; uniform in NTT form is uniform, so they are
    /// sampled there directly.
    pub(crate) fn uniform_ntt(&mut self, basis: &Arc<RingBasis>, count: usize) -> Result<PolyBatch> {
        let per_limb = count * basis.degree();
        let mut data = Vec::with_capacity(basis.len() * per_limb);
        for q in basis.moduli() {
            data.extend(self.sampler_uniform(&q, per_limb));
        }
        Ok(PolyBatch::from_data(basis, count, Representation::Ntt, data)?)
    }

    fn sampler_uniform(&mut self, q: &pimhe_math::Modulus, len: usize) -> Vec<u32> {
        self.sampler.uniform_vec(q, len)
    }
}

/// Uploads signed polynomials over `basis` and transforms them to NTT form on the device, then
/// wipes the host copies (they are secrets or encryption randomness).
pub(crate) fn upload_signed<B: Backend>(
    backend: &B,
    basis: &Arc<RingBasis>,
    polys: &mut [Vec<i64>],
) -> Result<B::Buffer> {
    let refs: Vec<&[i64]> = polys.iter().map(|p| p.as_slice()).collect();
    let batch = PolyBatch::from_signed(basis, &refs);
    polys.iter_mut().for_each(|p| p.zeroize());
    let mut buffer = backend.upload(batch?)?;
    backend.ntt(&mut buffer)?;
    Ok(buffer)
}

/// Makes the keys of a context. Randomness comes from the OS unless a seed is given.
///
/// ```
/// use pimhe_exec::CpuBackend;
/// use pimhe_schemes::bgv::{BgvContext, BgvParameters, KeyGenerator};
/// let backend = CpuBackend::new(Some(1)).unwrap();
/// let ctx = BgvContext::new(BgvParameters::preset(4096).unwrap()).unwrap();
/// let mut keygen = KeyGenerator::new(&backend, &ctx).unwrap();
/// let secret = keygen.secret_key().unwrap();
/// let public = keygen.public_key(&secret).unwrap();
/// let relin = keygen.relin_key(&secret).unwrap();
/// assert!(relin.size_bytes() > 0);
/// ```
pub struct KeyGenerator<'a, B: Backend> {
    backend: &'a B,
    ctx: Arc<BgvContext>,
    noise: Noise,
}

impl<'a, B: Backend> KeyGenerator<'a, B> {
    /// A generator seeded from the operating system.
    pub fn new(backend: &'a B, ctx: &Arc<BgvContext>) -> Result<Self> {
        Ok(Self::with_sampler(backend, ctx, Sampler::from_os()?))
    }

    /// A generator with explicit randomness (reproducible keys: tests and benchmarks only).
    pub fn with_sampler(backend: &'a B, ctx: &Arc<BgvContext>, sampler: Sampler) -> Self {
        Self { backend, ctx: ctx.clone(), noise: Noise::new(sampler) }
    }

    /// A fresh ternary secret key.
    pub fn secret_key(&mut self) -> Result<SecretKey> {
        let mut s = vec![self.noise.ternary(self.ctx.degree())];
        let buffer = upload_signed(self.backend, self.ctx.key_basis(), &mut s)?;
        let s = self.backend.download(&buffer);
        let mut buffer = buffer;
        self.backend.zeroize(&mut buffer);
        Ok(SecretKey { ctx: self.ctx.clone(), s: s? })
    }

    /// The public key of `secret`.
    pub fn public_key(&mut self, secret: &SecretKey) -> Result<PublicKey> {
        self.ctx.expect_same(&secret.ctx, "the secret key")?;
        let basis = self.ctx.top_basis().clone();
        let (b, a) = self.key_pair(secret, &basis, None)?;
        Ok(PublicKey { ctx: self.ctx.clone(), b, a })
    }

    /// The relinearization key of `secret`; needs a special prime.
    pub fn relin_key(&mut self, secret: &SecretKey) -> Result<RelinKey> {
        self.ctx.expect_same(&secret.ctx, "the secret key")?;
        let special = self.ctx.params().special_prime().ok_or_else(|| {
            SchemeError::KeySwitchingUnavailable(format!(
                "parameters [{}] have no special prime; use N >= 4096 or add one",
                self.ctx.params()
            ))
        })?;
        let basis = self.ctx.key_basis().clone();
        let mut s = self.backend.upload(secret.s.clone())?;
        let s_squared = self.backend.mul(&s, &s);
        self.backend.zeroize(&mut s);
        let mut s_squared = s_squared?;
        let pairs = (0..self.ctx.params().data_primes().len())
            .map(|digit| {
                let q = *basis.modulus(digit);
                let factor = q.reduce_u64(special as u64);
                self.key_pair(secret, &basis, Some((digit, factor, &s_squared)))
            })
            .collect::<Result<Vec<_>>>();
        self.backend.zeroize(&mut s_squared);
        Ok(RelinKey { ctx: self.ctx.clone(), pairs: pairs? })
    }

    /// (-a s + t e + extra, a) over `basis`, where `extra` (relinearization) is
    /// factor * s^2 on limb `digit` only: P * s^2 * (the CRT idempotent of q_digit).
    fn key_pair(
        &mut self,
        secret: &SecretKey,
        basis: &Arc<RingBasis>,
        extra: Option<(usize, u32, &B::Buffer)>,
    ) -> Result<(PolyBatch, PolyBatch)> {
        let backend = self.backend;
        let a = self.noise.uniform_ntt(basis, 1)?;
        let mut error = vec![self.noise.scaled_error(self.ctx.degree(), self.ctx.plain_modulus().value())];
        let mut error = upload_signed(backend, basis, &mut error)?;
        if let Some((digit, factor, s_squared)) = extra {
            // Only limb `digit` is non-zero, so this is a one-limb constant multiple of s^2.
            let mut term = PolyBatch::zeros(basis, 1, Representation::Ntt);
            let mut s2 = backend.download(s_squared)?;
            let q = *basis.modulus(digit);
            let shoup = q.shoup(factor);
            for (dst, &x) in term.limb_mut(digit).iter_mut().zip(s2.limb(digit)) {
                *dst = q.mul_shoup(x, factor, shoup);
            }
            s2.zeroize();
            let mut term = backend.upload(term)?;
            backend.add_assign(&mut error, &term)?;
            backend.zeroize(&mut term);
        }
        let a_device = backend.upload(a)?;
        let mut s = backend.upload(secret.s.clone())?;
        let a_times_s = backend.mul(&a_device, &s);
        backend.zeroize(&mut s);
        let b = backend.sub(&error, &a_times_s?);
        backend.zeroize(&mut error);
        Ok((backend.download(&b?)?, backend.download(&a_device)?))
    }
}
