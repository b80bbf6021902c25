//! Secret, public and relinearization keys, and the generator that makes them.

use std::sync::Arc;

use pimhe_exec::Backend;
use pimhe_math::Sampler;
use pimhe_ring::PolyBatch;

use crate::bgv::context::BgvContext;
use crate::error::{Result, SchemeError};
use crate::keyswitch::{relinearization_key, SwitchingKey};
use crate::noise::{public_pair, ternary_secret, Noise};

/// The secret key s (ternary), in NTT form over every data prime and the special primes.
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

/// The relinearization key: a switching key from s^2 to s (see the crate's `keyswitch` module), one
/// pair `(b_j, a_j) = (-a_j s + t e_j + P g_j s^2, a_j)` per digit of the data primes, over the
/// data primes plus the special primes. The division by P at the end of the switch removes
/// almost all of the noise the digits bring, so relinearization costs a few bits of budget.
#[derive(Clone)]
pub struct RelinKey {
    pub(crate) ctx: Arc<BgvContext>,
    pub(crate) key: SwitchingKey,
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
        self.key.size_bytes()
    }
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
        let s = ternary_secret(self.backend, &mut self.noise, self.ctx.key_basis())?;
        Ok(SecretKey { ctx: self.ctx.clone(), s })
    }

    /// The public key of `secret`.
    pub fn public_key(&mut self, secret: &SecretKey) -> Result<PublicKey> {
        self.ctx.expect_same(&secret.ctx, "the secret key")?;
        let t = self.ctx.plain_modulus().value();
        let (b, a) = public_pair(self.backend, &mut self.noise, &secret.s, self.ctx.top_basis(), t)?;
        Ok(PublicKey { ctx: self.ctx.clone(), b, a })
    }

    /// The relinearization key of `secret`; needs special primes.
    pub fn relin_key(&mut self, secret: &SecretKey) -> Result<RelinKey> {
        self.ctx.expect_same(&secret.ctx, "the secret key")?;
        let basis = self.ctx.key_switch_basis().ok_or_else(|| {
            SchemeError::KeySwitchingUnavailable(format!(
                "parameters [{}] have no special primes; use N >= 4096 or add them",
                self.ctx.params()
            ))
        })?;
        let t = self.ctx.plain_modulus().value();
        let key = relinearization_key(self.backend, basis, &mut self.noise, &secret.s, t)?;
        Ok(RelinKey { ctx: self.ctx.clone(), key })
    }
}
