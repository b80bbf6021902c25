//! A batch of BGV ciphertexts resident on a backend.

use std::sync::Arc;

use pimhe_exec::Backend;

use crate::bgv::context::BgvContext;

/// `count` BGV ciphertexts at one level, stored component-wise: component j of every
/// ciphertext forms one device batch (`parts[j]`, NTT form), so an operation on the whole
/// batch is one backend call per component.
///
/// Each ciphertext decrypts to `correction * m` modulo t: modulus switching multiplies the
/// message by q^{-1} mod t, and the factor is tracked here and removed at decryption (as SEAL
/// and OpenFHE do) rather than paid for in noise.
pub struct CiphertextBatch<B: Backend> {
    pub(crate) ctx: Arc<BgvContext>,
    pub(crate) parts: Vec<B::Buffer>,
    pub(crate) level: usize,
    pub(crate) count: usize,
    pub(crate) correction: u32,
}

impl<B: Backend> CiphertextBatch<B> {
    /// Number of ciphertexts.
    pub fn count(&self) -> usize {
        self.count
    }

    /// Current level (number of primes minus one).
    pub fn level(&self) -> usize {
        self.level
    }

    /// Number of components: 2 for a fresh or relinearized ciphertext, 3 after a product.
    pub fn size(&self) -> usize {
        self.parts.len()
    }

    /// The parameters the ciphertexts belong to.
    pub fn context(&self) -> &Arc<BgvContext> {
        &self.ctx
    }

    /// The device buffers of the components (component j of every ciphertext).
    pub fn parts(&self) -> &[B::Buffer] {
        &self.parts
    }

    /// The same ciphertexts on another backend, component by component through the host: a
    /// client sending its ciphertexts to a server (or a server returning a result).
    pub fn transfer<T: Backend>(&self, from: &B, to: &T) -> crate::error::Result<CiphertextBatch<T>> {
        let parts = self.parts.iter().map(|p| to.upload(from.download(p)?)).collect::<pimhe_exec::Result<Vec<_>>>()?;
        Ok(CiphertextBatch {
            ctx: self.ctx.clone(),
            parts,
            level: self.level,
            count: self.count,
            correction: self.correction,
        })
    }

    /// The factor the decrypted message is scaled by modulo t (1 until a modulus switch).
    pub fn correction_factor(&self) -> u32 {
        self.correction
    }
}
