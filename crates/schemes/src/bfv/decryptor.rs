//! BFV decryption (BEHZ Algorithm 1, with the gamma correction) and noise-budget measurement.

use std::sync::Arc;

use pimhe_exec::Backend;
use pimhe_math::RnsBase;

use crate::bfv::ciphertext::CiphertextBatch;
use crate::bfv::context::BfvContext;
use crate::bfv::keys::SecretKey;
use crate::encoder::Plaintext;
use crate::error::{Result, SchemeError};
use crate::noise::WipeOnDrop;
use crate::phase::{noise_budgets, DeviceSecret};

/// Decrypts batches and measures their noise budget. Holds the secret key (and its square) on
/// the device; both are wiped when the decryptor is dropped.
///
/// Decryption is BEHZ's Algorithm 1, RNS and integers only: the gamma correction that yields
/// the message also measures the invariant noise [t v]_q to 30 bits, and a ciphertext with less
/// than one bit of budget left is refused with [`SchemeError::NoiseBudgetExhausted`] instead of
/// decrypting to a wrong message. [`Decryptor::noise_budget`] measures the noise exactly
/// (big-integer CRT on the host).
pub struct Decryptor<'a, B: Backend> {
    backend: &'a B,
    ctx: Arc<BfvContext>,
    secret: DeviceSecret<'a, B>,
    rns: RnsBase,
}

impl<'a, B: Backend> Decryptor<'a, B> {
    /// A decryptor for `key`.
    pub fn new(backend: &'a B, key: &SecretKey) -> Result<Self> {
        let ctx = key.ctx.clone();
        let secret = DeviceSecret::upload(backend, &key.s)?;
        let rns = RnsBase::new(&ctx.ciphertext_basis().moduli())?;
        Ok(Self { backend, ctx, secret, rns })
    }

    /// Decrypts every ciphertext of the batch. Fails with
    /// [`SchemeError::NoiseBudgetExhausted`] rather than return a wrong message.
    pub fn decrypt(&self, batch: &CiphertextBatch<B>) -> Result<Vec<Plaintext>> {
        let behz = self.ctx.behz();
        let scaled = behz.scale_to_plain(self.backend, &*self.phase(batch)?)?;
        if let Some(index) = scaled.iter().position(|s| behz.exhausted(s)) {
            return Err(SchemeError::NoiseBudgetExhausted { index });
        }
        Ok(scaled.into_iter().map(|s| Plaintext::from_coefficients(s.message)).collect())
    }

    /// The remaining noise budget of each ciphertext in bits (0 when exhausted): how many more
    /// bits the invariant noise may grow before decryption fails.
    pub fn noise_budget(&self, batch: &CiphertextBatch<B>) -> Result<Vec<u32>> {
        // Over q, of the invariant noise [t v]_q.
        self.ctx.expect_same(&batch.ctx, "the ciphertext batch")?;
        let v = self.secret.phase_on_host(&batch.parts)?;
        noise_budgets(&v, &self.rns, self.ctx.plain_modulus().value())
    }

    /// v = c0 + c1 s (+ c2 s^2) for every ciphertext, coefficient form over q, on the device
    /// (wiped when dropped).
    fn phase(&self, batch: &CiphertextBatch<B>) -> Result<WipeOnDrop<'a, B>> {
        self.ctx.expect_same(&batch.ctx, "the ciphertext batch")?;
        self.secret.phase(&batch.parts)
    }
}
