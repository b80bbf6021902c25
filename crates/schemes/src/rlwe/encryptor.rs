//! Encryption with the public key or the secret key, for every RLWE scheme.

use std::sync::Arc;

use pimhe_exec::Backend;
use pimhe_math::Sampler;

use crate::error::{Result, SchemeError};
use crate::rlwe::ciphertext::{CiphertextBatch, SeededCiphertexts};
use crate::rlwe::keys::{PublicKey, SecretKey};
use crate::rlwe::noise::{encrypt_with, ensure_encryption_fits, upload_signed, EncryptionKey, Noise, Seed, WipeOnDrop};
use crate::rlwe::scheme::{MessageTerms, RlweScheme};

/// Encrypts batches of plaintexts at the top level, one backend call per step for the whole
/// batch.
///
/// With the public key (b, a): `(M + e0 + b u, e1 + a u)`, u ternary; with the secret key:
/// `(M + e0 - a s, a)`, a uniform (smaller noise, for the data owner). M is the scheme's message
/// term ([`RlweScheme::message_terms`]: m for BGV, round(q m / t) for BFV, the scaled encoding
/// for CKKS) and the errors are scaled by [`RlweScheme::error_scale`].
pub struct Encryptor<'a, B: Backend, S: RlweScheme> {
    backend: &'a B,
    ctx: Arc<S>,
    key: EncryptionKey<B::Buffer>,
    noise: Noise,
}

impl<'a, B: Backend, S: RlweScheme> Encryptor<'a, B, S> {
    /// A public-key encryptor with OS randomness.
    pub fn with_public_key(backend: &'a B, key: &PublicKey<S>) -> Result<Self> {
        let key_buffers =
            EncryptionKey::Public { b: backend.upload(key.b.clone())?, a: backend.upload(key.a.clone())? };
        Ok(Self { backend, ctx: key.ctx.clone(), key: key_buffers, noise: Noise::new(Sampler::from_os()?) })
    }

    /// A secret-key encryptor with OS randomness.
    pub fn with_secret_key(backend: &'a B, key: &SecretKey<S>) -> Result<Self> {
        let key_buffers = EncryptionKey::Secret { s: backend.upload(key.s.clone())? };
        Ok(Self { backend, ctx: key.ctx.clone(), key: key_buffers, noise: Noise::new(Sampler::from_os()?) })
    }

    /// Replaces the randomness source (reproducible ciphertexts: tests and benchmarks only).
    pub fn with_sampler(mut self, sampler: Sampler) -> Self {
        self.noise = Noise::new(sampler);
        self
    }

    /// The parameters this encryptor's key belongs to.
    pub fn context(&self) -> &Arc<S> {
        &self.ctx
    }

    /// Encrypts each plaintext into one ciphertext of the returned batch.
    pub fn encrypt(&mut self, plaintexts: &[S::Plaintext]) -> Result<CiphertextBatch<B, S>> {
        let Fresh { parts, tag, .. } = self.encrypt_parts(plaintexts)?;
        let (level, count) = (self.ctx.rlwe().max_level(), plaintexts.len());
        Ok(CiphertextBatch { ctx: self.ctx.clone(), parts, level, count, tag })
    }

    /// Encrypts each plaintext with the secret key into a batch that remembers the seed of its
    /// uniform part a, so that its encoding ([`SeededCiphertexts::to_bytes`]) stores the 32-byte
    /// seed instead of a: about half the size of a full ciphertext. The ciphertexts are the
    /// ones [`Encryptor::encrypt`] makes. A public-key encryptor is refused: its second
    /// component `a u + e1` is not uniform from a seed.
    pub fn encrypt_seeded(&mut self, plaintexts: &[S::Plaintext]) -> Result<SeededCiphertexts<S>> {
        if let EncryptionKey::Public { .. } = self.key {
            return Err(SchemeError::InvalidParameters(
                "a seeded (compressed) encryption needs the secret key: the second component of a public-key \
                 encryption is a u + e1, which no seed expands to; use Encryptor::with_secret_key"
                    .into(),
            ));
        }
        let Fresh { parts, seed, tag } = self.encrypt_parts(plaintexts)?;
        let seed = seed.expect("a secret-key encryption returns its seed");
        let c0 = self.backend.download(&parts[0])?;
        let (level, count) = (self.ctx.rlwe().max_level(), plaintexts.len());
        Ok(SeededCiphertexts { ctx: self.ctx.clone(), c0, seed, level, count, tag })
    }

    /// Fresh encryptions of `plaintexts`.
    fn encrypt_parts(&mut self, plaintexts: &[S::Plaintext]) -> Result<Fresh<B, S>> {
        if plaintexts.is_empty() {
            return Err(SchemeError::InvalidParameters("nothing to encrypt: the plaintext list is empty".into()));
        }
        let basis = self.ctx.rlwe().top_basis().clone();
        ensure_encryption_fits(&basis, plaintexts.len())?;
        let (backend, count, n) = (self.backend, plaintexts.len(), basis.degree());
        let scale = self.ctx.error_scale();
        let (terms, tag) = self.ctx.message_terms(backend, plaintexts)?;
        // M + e0: the part of component 0 that does not depend on the key.
        let part0 = match terms {
            MessageTerms::Signed(mut terms) => {
                for term in &mut terms {
                    let error = self.noise.scaled_error(n, scale);
                    term.iter_mut().zip(error).for_each(|(x, e)| *x += e);
                }
                upload_signed(backend, &basis, &mut terms)?
            }
            MessageTerms::Device(terms) => {
                let mut part0 = WipeOnDrop::new(backend, terms);
                // The errors are wiped once added (on every path).
                let errors = WipeOnDrop::new(backend, self.noise.upload_errors(backend, &basis, count, scale)?);
                backend.add_assign(&mut part0, &errors)?;
                part0.into_inner()
            }
        };
        let (parts, seed) = encrypt_with(backend, &mut self.noise, &self.key, &basis, part0, count, scale)?;
        Ok(Fresh { parts, seed, tag })
    }
}

/// Fresh encryptions: their components, the seed of their uniform component a (secret-key
/// encryptions only) and the batch's tag.
struct Fresh<B: Backend, S: RlweScheme> {
    parts: Vec<B::Buffer>,
    seed: Option<Seed>,
    tag: S::Tag,
}

impl<B: Backend, S: RlweScheme> Drop for Encryptor<'_, B, S> {
    fn drop(&mut self) {
        if let EncryptionKey::Secret { s } = &mut self.key {
            self.backend.zeroize(s);
        }
    }
}
