//! Decryption for every RLWE scheme: the secret on the device, the phase, and the scheme's own
//! step from phase to message ([`RlweScheme::decrypt`]) and to the noise budget
//! ([`RlweScheme::noise_budget`]).

use std::sync::Arc;

use pimhe_exec::Backend;
use pimhe_ring::PolyBatch;
use zeroize::Zeroizing;

use crate::error::Result;
use crate::rlwe::ciphertext::CiphertextBatch;
use crate::rlwe::expect_same_context;
use crate::rlwe::keys::SecretKey;
use crate::rlwe::noise::WipeOnDrop;
use crate::rlwe::phase::DeviceSecret;
use crate::rlwe::scheme::RlweScheme;

/// Decrypts batches. Holds the secret key (and its square) on the device; both are wiped when
/// the decryptor is dropped, and so is every phase it computes.
pub struct Decryptor<'a, B: Backend, S: RlweScheme> {
    pub(crate) backend: &'a B,
    pub(crate) ctx: Arc<S>,
    secret: DeviceSecret<'a, B>,
}

impl<'a, B: Backend, S: RlweScheme> Decryptor<'a, B, S> {
    /// A decryptor for `key`.
    pub fn new(backend: &'a B, key: &SecretKey<S>) -> Result<Self> {
        let secret = DeviceSecret::upload(backend, &key.s)?;
        Ok(Self { backend, ctx: key.ctx.clone(), secret })
    }

    /// Decrypts every ciphertext of the batch.
    pub fn decrypt(&self, batch: &CiphertextBatch<B, S>) -> Result<Vec<S::Plaintext>> {
        S::decrypt(self, batch)
    }

    /// The remaining noise budget of each ciphertext in bits (0 when exhausted): how many more
    /// bits the noise may grow before decryption fails, measured exactly with big integers (a
    /// diagnostic, off the decryption path). BGV and BFV; CKKS, which is approximate, refuses
    /// (its precision is measured against the expected values instead).
    pub fn noise_budget(&self, batch: &CiphertextBatch<B, S>) -> Result<Vec<u32>> {
        S::noise_budget(self, batch)
    }

    /// The parameters of the key.
    pub fn context(&self) -> &Arc<S> {
        &self.ctx
    }

    /// v = c0 + c1 s (+ c2 s^2) of every ciphertext, in coefficient form on the device, wiped
    /// when dropped; after checking the batch belongs to the key's parameters.
    pub(crate) fn phase(&self, batch: &CiphertextBatch<B, S>) -> Result<WipeOnDrop<'a, B>> {
        expect_same_context(&self.ctx, &batch.ctx, "the ciphertext batch")?;
        self.secret.phase(&batch.parts)
    }

    /// [`Decryptor::phase`] on the host, wiped when dropped.
    pub(crate) fn phase_on_host(&self, batch: &CiphertextBatch<B, S>) -> Result<Zeroizing<PolyBatch>> {
        expect_same_context(&self.ctx, &batch.ctx, "the ciphertext batch")?;
        self.secret.phase_on_host(&batch.parts)
    }
}
