//! Secret, public, relinearization and Galois keys of every RLWE scheme, and the generator that
//! makes them. The schemes differ only in the factor of the key errors
//! ([`RlweScheme::error_scale`]: t for BGV, 1 for BFV and CKKS).

use std::collections::BTreeMap;
use std::sync::Arc;

use pimhe_exec::Backend;
use pimhe_math::Sampler;
use pimhe_ring::PolyBatch;
use rayon::prelude::*;

use crate::error::{Result, SchemeError};
use crate::rlwe::expect_same_context;
use crate::rlwe::keyswitch::{relinearization_key, KeySwitchBasis, SwitchingKey};
use crate::rlwe::noise::{public_pair, secret_key, Noise, Seed, WipeOnDrop};
use crate::rlwe::scheme::RlweScheme;

/// The secret key s (ternary, or sparse ternary where the parameters say so), in NTT form over
/// every data prime and the special primes. Its residues are overwritten with zeros when it is
/// dropped.
pub struct SecretKey<S: RlweScheme> {
    pub(crate) ctx: Arc<S>,
    pub(crate) s: PolyBatch,
}

impl<S: RlweScheme> Drop for SecretKey<S> {
    fn drop(&mut self) {
        self.s.zeroize();
    }
}

/// The public key (b, a) = (-a s + e, a) over the data primes, NTT form (e scaled by t for BGV).
/// It remembers the seed a was expanded from where it is known (a generated key, or one loaded
/// from its compressed encoding), so that it can be written compressed.
pub struct PublicKey<S: RlweScheme> {
    pub(crate) ctx: Arc<S>,
    pub(crate) b: PolyBatch,
    pub(crate) a: PolyBatch,
    pub(crate) a_seed: Option<Seed>,
}

/// The relinearization key: a switching key from s^2 to s (the crate's hybrid key switching),
/// one pair `(b_j, a_j) = (-a_j s + e_j + P g_j s^2, a_j)` per digit of the data primes, over the
/// data primes plus the special primes. The division by P at the end of the switch removes
/// almost all of the noise the digits bring, so relinearization costs a few bits.
pub struct RelinKey<S: RlweScheme> {
    pub(crate) ctx: Arc<S>,
    pub(crate) key: SwitchingKey,
}

/// Galois keys: for each Galois element k (odd, below 2N), the switching key from sigma_k(s) =
/// s(X^k) to s, so that a ciphertext's automorphism X -> X^k can be brought back under s. Slot
/// rotations and conjugation are such automorphisms (`ckks::Evaluator::rotate`).
pub struct GaloisKeys<S: RlweScheme> {
    pub(crate) ctx: Arc<S>,
    pub(crate) keys: BTreeMap<usize, SwitchingKey>,
}

/// The context accessor every key has.
macro_rules! key_context {
    ($($key:ident),*) => {$(
        impl<S: RlweScheme> $key<S> {
            /// The parameters this key belongs to.
            pub fn context(&self) -> &Arc<S> {
                &self.ctx
            }
        }
    )*};
}
key_context!(SecretKey, PublicKey, RelinKey, GaloisKeys);

impl<S: RlweScheme> Clone for PublicKey<S> {
    fn clone(&self) -> Self {
        Self { ctx: self.ctx.clone(), b: self.b.clone(), a: self.a.clone(), a_seed: self.a_seed }
    }
}

impl<S: RlweScheme> Clone for RelinKey<S> {
    fn clone(&self) -> Self {
        Self { ctx: self.ctx.clone(), key: self.key.clone() }
    }
}

impl<S: RlweScheme> RelinKey<S> {
    /// Size in bytes of the key material.
    pub fn size_bytes(&self) -> usize {
        self.key.size_bytes()
    }
}

impl<S: RlweScheme> GaloisKeys<S> {
    /// The Galois elements k there is a key for, in increasing order.
    pub fn elements(&self) -> impl Iterator<Item = usize> + '_ {
        self.keys.keys().copied()
    }

    /// Size in bytes of the key material.
    pub fn size_bytes(&self) -> usize {
        self.keys.values().map(SwitchingKey::size_bytes).sum()
    }
}

/// Makes the keys of a context. Randomness comes from the OS unless a sampler is given.
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
pub struct KeyGenerator<'a, B: Backend, S: RlweScheme> {
    backend: &'a B,
    ctx: Arc<S>,
    noise: Noise,
}

impl<'a, B: Backend, S: RlweScheme> KeyGenerator<'a, B, S> {
    /// A generator seeded from the operating system.
    pub fn new(backend: &'a B, ctx: &Arc<S>) -> Result<Self> {
        Ok(Self::with_sampler(backend, ctx, Sampler::from_os()?))
    }

    /// A generator with explicit randomness (reproducible keys: tests and benchmarks only).
    pub fn with_sampler(backend: &'a B, ctx: &Arc<S>, sampler: Sampler) -> Self {
        Self { backend, ctx: ctx.clone(), noise: Noise::new(sampler) }
    }

    /// The backend and the randomness, for key material a scheme layer makes itself (CKKS
    /// bootstrapping's encapsulation keys).
    pub(crate) fn backend_and_noise(&mut self) -> (&'a B, &mut Noise) {
        (self.backend, &mut self.noise)
    }

    /// A fresh secret key, from the parameters' secret distribution.
    pub fn secret_key(&mut self) -> Result<SecretKey<S>> {
        let rlwe = self.ctx.rlwe();
        let s = secret_key(self.backend, &mut self.noise, rlwe.key_basis(), rlwe.params().secret())?;
        Ok(SecretKey { ctx: self.ctx.clone(), s })
    }

    /// The public key of `secret`.
    pub fn public_key(&mut self, secret: &SecretKey<S>) -> Result<PublicKey<S>> {
        expect_same_context(&self.ctx, &secret.ctx, "the secret key")?;
        let scale = self.ctx.error_scale();
        let (b, a, seed) = public_pair(self.backend, &mut self.noise, &secret.s, self.ctx.rlwe().top_basis(), scale)?;
        Ok(PublicKey { ctx: self.ctx.clone(), b, a, a_seed: Some(seed) })
    }

    /// The relinearization key of `secret`; needs special primes.
    pub fn relin_key(&mut self, secret: &SecretKey<S>) -> Result<RelinKey<S>> {
        expect_same_context(&self.ctx, &secret.ctx, "the secret key")?;
        let basis = key_switch_basis(&*self.ctx)?;
        let key = relinearization_key(self.backend, basis, &mut self.noise, &secret.s, self.ctx.error_scale())?;
        Ok(RelinKey { ctx: self.ctx.clone(), key })
    }

    /// Galois keys of `secret` for each element of `elements` (odd, taken modulo 2N; repeats
    /// are made once); needs special primes. The keys are made in parallel, each from its own
    /// fork of the generator's randomness (so a seeded generator gives the same keys on any
    /// thread count).
    pub fn galois_keys(&mut self, secret: &SecretKey<S>, elements: &[usize]) -> Result<GaloisKeys<S>> {
        expect_same_context(&self.ctx, &secret.ctx, "the secret key")?;
        let two_n = 2 * self.ctx.rlwe().degree();
        let mut wanted: Vec<usize> = Vec::with_capacity(elements.len());
        for &k in elements {
            if k % 2 == 0 {
                return Err(SchemeError::InvalidParameters(format!(
                    "Galois element {k} is even; automorphisms X -> X^k need an odd k (modulo 2N = {two_n})"
                )));
            }
            if !wanted.contains(&(k % two_n)) {
                wanted.push(k % two_n);
            }
        }
        let basis = key_switch_basis(&*self.ctx)?;
        let scale = self.ctx.error_scale();
        let backend = self.backend;
        let forks: Vec<(usize, Noise)> =
            wanted.into_iter().map(|k| (k, Noise::new(self.noise.sampler.fork()))).collect();
        let s = WipeOnDrop::new(backend, backend.upload(secret.s.clone())?);
        let keys = forks
            .into_par_iter()
            .map(|(k, mut noise)| {
                let rotated = WipeOnDrop::new(backend, backend.automorphism(&s, k)?);
                Ok((k, SwitchingKey::generate(backend, basis, &mut noise, &s, &rotated, scale)?))
            })
            .collect::<Result<BTreeMap<_, _>>>()?;
        Ok(GaloisKeys { ctx: self.ctx.clone(), keys })
    }
}

/// The key-switching structure of `ctx`, or the error that its parameters have none.
pub(crate) fn key_switch_basis<S: RlweScheme>(ctx: &S) -> Result<&KeySwitchBasis> {
    ctx.rlwe().key_switch_basis().ok_or_else(|| {
        SchemeError::KeySwitchingUnavailable(format!(
            "parameters [{}] have no special primes; use N >= 4096 or add them",
            ctx.params()
        ))
    })
}
