//! Encryption with the public key or the secret key.

use std::sync::Arc;

use pimhe_exec::Backend;
use pimhe_math::Sampler;

use crate::bgv::ciphertext::CiphertextBatch;
use crate::bgv::context::BgvContext;
use crate::bgv::keys::{PublicKey, SecretKey};
use crate::encoder::{PlainContext, Plaintext};
use crate::error::{Result, SchemeError};
use crate::noise::{encrypt_with, ensure_encryption_fits, upload_signed, EncryptionKey, Noise};

/// Encrypts batches of plaintexts at the top level, one backend call per step for the whole
/// batch.
///
/// With the public key: `(b u + t e0 + m, a u + t e1)`, u ternary. With the secret key:
/// `(-a s + t e + m, a)`, a uniform (smaller noise, for the data owner).
///
/// ```
/// use pimhe_exec::CpuBackend;
/// use pimhe_schemes::bgv::*;
/// let backend = CpuBackend::new(Some(1)).unwrap();
/// let ctx = BgvContext::new(BgvParameters::preset(4096).unwrap()).unwrap();
/// let mut keygen = KeyGenerator::new(&backend, &ctx).unwrap();
/// let secret = keygen.secret_key().unwrap();
/// let public = keygen.public_key(&secret).unwrap();
/// let encoder = BatchEncoder::new(&ctx);
/// let mut encryptor = Encryptor::with_public_key(&backend, &public).unwrap();
/// let batch = encryptor.encrypt(&[encoder.encode(&[7, 8]).unwrap()]).unwrap();
/// let decryptor = Decryptor::new(&backend, &secret).unwrap();
/// let decrypted = decryptor.decrypt(&batch).unwrap();
/// assert_eq!(&encoder.decode(&decrypted[0]).unwrap()[..2], &[7, 8]);
/// ```
pub struct Encryptor<'a, B: Backend> {
    backend: &'a B,
    ctx: Arc<BgvContext>,
    key: EncryptionKey<B::Buffer>,
    noise: Noise,
}

impl<'a, B: Backend> Encryptor<'a, B> {
    /// A public-key encryptor with OS randomness.
    pub fn with_public_key(backend: &'a B, key: &PublicKey) -> Result<Self> {
        let key_buffers =
            EncryptionKey::Public { b: backend.upload(key.b.clone())?, a: backend.upload(key.a.clone())? };
        Ok(Self { backend, ctx: key.ctx.clone(), key: key_buffers, noise: Noise::new(Sampler::from_os()?) })
    }

    /// A secret-key encryptor with OS randomness.
    pub fn with_secret_key(backend: &'a B, key: &SecretKey) -> Result<Self> {
        let key_buffers = EncryptionKey::Secret { s: backend.upload(key.s.clone())? };
        Ok(Self { backend, ctx: key.ctx.clone(), key: key_buffers, noise: Noise::new(Sampler::from_os()?) })
    }

    /// Replaces the randomness source (reproducible ciphertexts: tests and benchmarks only).
    pub fn with_sampler(mut self, sampler: Sampler) -> Self {
        self.noise = Noise::new(sampler);
        self
    }

    /// Encrypts each plaintext into one ciphertext of the returned batch.
    pub fn encrypt(&mut self, plaintexts: &[Plaintext]) -> Result<CiphertextBatch<B>> {
        if plaintexts.is_empty() {
            return Err(SchemeError::InvalidParameters("nothing to encrypt: the plaintext list is empty".into()));
        }
        for plain in plaintexts {
            plain.check(self.ctx.plain_space())?;
        }
        ensure_encryption_fits(self.ctx.top_basis(), plaintexts.len())?;
        let n = self.ctx.degree();
        let t = self.ctx.plain_modulus().value();
        let basis = self.ctx.top_basis().clone();
        let backend = self.backend;
        // t e0 + m for every plaintext: the part of component 0 that does not depend on the key.
        let mut message_terms: Vec<Vec<i64>> = plaintexts
            .iter()
            .map(|plain| {
                let mut term = self.noise.scaled_error(n, t);
                term.iter_mut().zip(plain.centered(self.ctx.plain_space())).for_each(|(x, m)| *x += m);
                term
            })
            .collect();
        let count = plaintexts.len();
        let part0 = upload_signed(backend, &basis, &mut message_terms)?;
        let parts = encrypt_with(backend, &mut self.noise, &self.key, &basis, part0, count, t)?;
        Ok(CiphertextBatch { ctx: self.ctx.clone(), parts, level: self.ctx.max_level(), count, correction: 1 })
    }
}

impl<B: Backend> Drop for Encryptor<'_, B> {
    fn drop(&mut self) {
        if let EncryptionKey::Secret { s } = &mut self.key {
            self.backend.zeroize(s);
        }
    }
}
