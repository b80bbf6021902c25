//! BFV secret, public and relinearization keys, and the generator that makes them. Unlike BGV's,
//! the key errors are not multiplied by t: BFV's message lives in the top bits.

use std::sync::Arc;

use pimhe_exec::Backend;
use pimhe_math::Sampler;
use pimhe_ring::PolyBatch;

use crate::bfv::context::BfvContext;
use crate::error::{Result, SchemeError};
use crate::keyswitch::{relinearization_key, SwitchingKey};
use crate::noise::{public_pair, ternary_secret, Noise};

/// The secret key s (ternary), in NTT form over the ciphertext primes and the special primes.
/// Its residues are overwritten with zeros when it is dropped.
pub struct SecretKey {
    pub(crate) ctx: Arc<BfvContext>,
    pub(crate) s: PolyBatch,
}

impl Drop for SecretKey {
    fn drop(&mut self) {
        self.s.zeroize();
    }
}

/// The public key (b, a) = (-a s + e, a) over q, NTT form.
#[derive(Clone)]
pub struct PublicKey {
    pub(crate) ctx: Arc<BfvContext>,
    pub(crate) b: PolyBatch,
    pub(crate) a: PolyBatch,
}

/// The relinearization key: a switching key from s^2 to s (the shared hybrid key switching,
/// `keyswitch`: dnum digits of ciphertext primes and the special primes), errors not scaled by t.
#[derive(Clone)]
pub struct RelinKey {
    pub(crate) ctx: Arc<BfvContext>,
    pub(crate) key: SwitchingKey,
}

impl SecretKey {
    /// The parameters this key belongs to.
    pub fn context(&self) -> &Arc<BfvContext> {
        &self.ctx
    }
}

impl PublicKey {
    /// The parameters this key belongs to.
    pub fn context(&self) -> &Arc<BfvContext> {
        &self.ctx
    }
}

impl RelinKey {
    /// The parameters this key belongs to.
    pub fn context(&self) -> &Arc<BfvContext> {
        &self.ctx
    }

    /// Size in bytes of the key material.
    pub fn size_bytes(&self) -> usize {
        self.key.size_bytes()
    }
}

/// Makes the keys of a BFV context. Randomness comes from the OS unless a sampler is given.
///
/// ```
/// use pimhe_exec::CpuBackend;
/// use pimhe_schemes::bfv::{BfvContext, BfvParameters, KeyGenerator};
/// let backend = CpuBackend::new(Some(1)).unwrap();
/// let ctx = BfvContext::new(BfvParameters::preset(4096).unwrap()).unwrap();
/// let mut keygen = KeyGenerator::new(&backend, &ctx).unwrap();
/// let secret = keygen.secret_key().unwrap();
/// let public = keygen.public_key(&secret).unwrap();
/// let relin = keygen.relin_key(&secret).unwrap();
/// assert!(relin.size_bytes() > 0);
/// ```
pub struct KeyGenerator<'a, B: Backend> {
    backend: &'a B,
    ctx: Arc<BfvContext>,
    noise: Noise,
}

impl<'a, B: Backend> KeyGenerator<'a, B> {
    /// A generator seeded from the operating system.
    pub fn new(backend: &'a B, ctx: &Arc<BfvContext>) -> Result<Self> {
        Ok(Self::with_sampler(backend, ctx, Sampler::from_os()?))
    }

    /// A generator with explicit randomness (reproducible keys: tests and benchmarks only).
    pub fn with_sampler(backend: &'a B, ctx: &Arc<BfvContext>, sampler: Sampler) -> Self {
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
        let (b, a) = public_pair(self.backend, &mut self.noise, &secret.s, self.ctx.ciphertext_basis(), 1)?;
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
        let key = relinearization_key(self.backend, basis, &mut self.noise, &secret.s, 1)?;
        Ok(RelinKey { ctx: self.ctx.clone(), key })
    }
}
