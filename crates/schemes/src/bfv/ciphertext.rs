//! A batch of BFV ciphertexts resident on a backend.

use std::sync::Arc;

use pimhe_exec::Backend;

use crate::bfv::context::BfvContext;

/// `count` BFV ciphertexts over q, stored component-wise: component j of every ciphertext forms
/// one device batch (`parts[j]`, NTT form), so an operation on the whole batch is one backend
/// call per component. Each ciphertext decrypts to floor(q/t) m + e modulo q.
pub struct CiphertextBatch<B: Backend> {
    pub(crate) ctx: Arc<BfvContext>,
    pub(crate) parts: Vec<B::Buffer>,
    pub(crate) count: usize,
}

impl<B: Backend> CiphertextBatch<B> {
    /// Number of ciphertexts.
    pub fn count(&self) -> usize {
        self.count
    }

    /// Number of components: 2 for a fresh or relinearized ciphertext, 3 after a product.
    pub fn size(&self) -> usize {
        self.parts.len()
    }

    /// The parameters the ciphertexts belong to.
    pub fn context(&self) -> &Arc<BfvContext> {
        &self.ctx
    }

    /// The device buffers of the components (component j of every ciphertext).
    pub fn parts(&self) -> &[B::Buffer] {
        &self.parts
    }

    /// The same ciphertexts on another backend, component by component through the host.
    pub fn transfer<T: Backend>(&self, from: &B, to: &T) -> crate::error::Result<CiphertextBatch<T>> {
        let parts = self.parts.iter().map(|p| to.upload(from.download(p)?)).collect::<pimhe_exec::Result<Vec<_>>>()?;
        Ok(CiphertextBatch { ctx: self.ctx.clone(), parts, count: self.count })
    }
}
