//! BFV encryption with the public key or the secret key.

use std::sync::Arc;

use pimhe_exec::Backend;
use pimhe_math::Sampler;

use crate::bfv::ciphertext::CiphertextBatch;
use crate::bfv::context::BfvContext;
use crate::bfv::keys::{PublicKey, SecretKey};
use crate::encoder::{PlainContext, Plaintext};
use crate::error::{Result, SchemeError};
use crate::noise::{encrypt_with, ensure_encryption_fits, upload_signed, EncryptionKey, Noise, WipeOnDrop};

/// Encrypts batches of plaintexts, one backend call per step for the whole batch.
///
/// With the public key: `(round(q m / t) + e0 + b u, e1 + a u)`, u ternary. With the secret
/// key: `(round(q m / t) + e - a s, a)`, a uniform (smaller noise, for the data owner).
///
/// ```
/// use pimhe_exec::CpuBackend;
/// use pimhe_schemes::bfv::*;
/// let backend = CpuBackend::new(Some(1)).unwrap();
/// let ctx = BfvContext::new(BfvParameters::preset(4096).unwrap()).unwrap();
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
    ctx: Arc<BfvContext>,
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
        let basis = self.ctx.ciphertext_basis().clone();
        ensure_encryption_fits(&basis, plaintexts.len())?;
        let backend = self.backend;
        let mut part0 = upload_scaled(backend, &self.ctx, plaintexts)?;
        let n = self.ctx.degree();
        let count = plaintexts.len();
        let mut errors: Vec<Vec<i64>> = (0..count).map(|_| self.noise.scaled_error(n, 1)).collect();
        // The errors are wiped once added (on every path).
        let errors = WipeOnDrop::new(backend, upload_signed(backend, &basis, &mut errors)?);
        backend.add_assign(&mut part0, &errors)?;
        let parts = encrypt_with(backend, &mut self.noise, &self.key, &basis, part0, count, 1)?;
        Ok(CiphertextBatch { ctx: self.ctx.clone(), parts, count })
    }
}

/// round(q m / t) for each plaintext, over q in NTT form, after checking each plaintext
/// belongs to `ctx`.
pub(crate) fn upload_scaled<B: Backend>(backend: &B, ctx: &BfvContext, plains: &[Plaintext]) -> Result<B::Buffer> {
    for plain in plains {
        plain.check(ctx.plain_space())?;
    }
    let coefficients: Vec<&[u32]> = plains.iter().map(|p| p.coefficients()).collect();
    ctx.behz().upload_scaled(backend, &coefficients)
}

impl<B: Backend> Drop for Encryptor<'_, B> {
    fn drop(&mut self) {
        if let EncryptionKey::Secret { s } = &mut self.key {
            self.backend.zeroize(s);
        }
    }
}
