//! A batch of ciphertexts of any RLWE scheme, resident on a backend.

use std::sync::Arc;

use pimhe_exec::Backend;
use pimhe_ring::PolyBatch;

use crate::error::{Result, SchemeError};
use crate::rlwe::expect_same_context;
use crate::rlwe::noise::{expand_uniform, Seed};
use crate::rlwe::scheme::RlweScheme;

/// `count` ciphertexts at one level, stored component-wise: component j of every ciphertext
/// forms one device batch (`parts[j]`, NTT form), so an operation on the whole batch is one
/// backend call per component. Besides its level, a batch carries its scheme's tag (BGV's
/// correction factor, CKKS's scale).
pub struct CiphertextBatch<B: Backend, S: RlweScheme> {
    pub(crate) ctx: Arc<S>,
    pub(crate) parts: Vec<B::Buffer>,
    pub(crate) level: usize,
    pub(crate) count: usize,
    pub(crate) tag: S::Tag,
}

/// The shape of the batch (its residues stay on the device).
impl<B: Backend, S: RlweScheme> std::fmt::Debug for CiphertextBatch<B, S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CiphertextBatch")
            .field("scheme", &S::NAME)
            .field("count", &self.count)
            .field("level", &self.level)
            .field("size", &self.parts.len())
            .field("tag", &self.tag)
            .finish()
    }
}

impl<B: Backend, S: RlweScheme> CiphertextBatch<B, S> {
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
    pub fn context(&self) -> &Arc<S> {
        &self.ctx
    }

    /// The device buffers of the components (component j of every ciphertext).
    pub fn parts(&self) -> &[B::Buffer] {
        &self.parts
    }

    /// The scheme's tag of the batch.
    pub fn tag(&self) -> S::Tag {
        self.tag
    }

    /// The same ciphertexts on another backend, component by component through the host: a
    /// client sending its ciphertexts to a server (or a server returning a result).
    pub fn transfer<T: Backend>(&self, from: &B, to: &T) -> Result<CiphertextBatch<T, S>> {
        let parts = self.parts.iter().map(|p| to.upload(from.download(p)?)).collect::<pimhe_exec::Result<Vec<_>>>()?;
        Ok(CiphertextBatch { ctx: self.ctx.clone(), parts, level: self.level, count: self.count, tag: self.tag })
    }

    /// The ciphertexts of several batches as one batch, in order: e.g. the submissions of many
    /// users, which a server gathers to process in one call per operation. The batches must
    /// share context, level, size and tag; the residues go through the host once.
    pub fn concat(backend: &B, batches: &[&Self]) -> Result<Self> {
        let first = batches.first().ok_or_else(|| {
            SchemeError::InvalidParameters("nothing to concatenate: the list of batches is empty".into())
        })?;
        for (index, batch) in batches.iter().enumerate() {
            expect_same_context(&first.ctx, &batch.ctx, "every batch to concatenate")?;
            if (batch.level, batch.parts.len(), batch.tag) != (first.level, first.parts.len(), first.tag) {
                return Err(SchemeError::InvalidParameters(format!(
                    "batch {index} is at level {} with {} components and tag {:?}; batch 0 at level {} with {} and {:?}: \
                     only batches alike concatenate",
                    batch.level,
                    batch.parts.len(),
                    batch.tag,
                    first.level,
                    first.parts.len(),
                    first.tag
                )));
            }
        }
        let parts = (0..first.parts.len())
            .map(|j| {
                let polys =
                    batches.iter().map(|b| backend.download(&b.parts[j])).collect::<pimhe_exec::Result<Vec<_>>>()?;
                Ok(backend.upload(PolyBatch::concat(&polys)?)?)
            })
            .collect::<Result<Vec<_>>>()?;
        let count = batches.iter().map(|b| b.count).sum();
        Ok(Self { ctx: first.ctx.clone(), parts, level: first.level, count, tag: first.tag })
    }

    /// A batch of the same context and count with new components, level and tag.
    pub(crate) fn derive(&self, parts: Vec<B::Buffer>, level: usize, tag: S::Tag) -> Self {
        Self { ctx: self.ctx.clone(), parts, level, count: self.count, tag }
    }
}

/// A batch of fresh secret-key encryptions on the host, with the seed of its uniform component
/// instead of the component: what [`crate::rlwe::Encryptor::encrypt_seeded`] returns. Write it
/// with [`SeededCiphertexts::to_bytes`] (its compressed encoding, [`crate::serial`]) and load it
/// with [`CiphertextBatch::from_bytes`], or put it on a backend with
/// [`SeededCiphertexts::expand`].
pub struct SeededCiphertexts<S: RlweScheme> {
    pub(crate) ctx: Arc<S>,
    /// Component 0 of every ciphertext, NTT form.
    pub(crate) c0: PolyBatch,
    pub(crate) seed: Seed,
    pub(crate) level: usize,
    pub(crate) count: usize,
    pub(crate) tag: S::Tag,
}

impl<S: RlweScheme> SeededCiphertexts<S> {
    /// Number of ciphertexts.
    pub fn count(&self) -> usize {
        self.count
    }

    /// Their level (the top level: they are fresh).
    pub fn level(&self) -> usize {
        self.level
    }

    /// The parameters they belong to.
    pub fn context(&self) -> &Arc<S> {
        &self.ctx
    }

    /// The ciphertexts on `backend`, the seed expanded into their uniform component.
    pub fn expand<B: Backend>(&self, backend: &B) -> Result<CiphertextBatch<B, S>> {
        let a = expand_uniform(&self.seed, self.c0.basis(), self.count)?;
        let parts = vec![backend.upload(self.c0.clone())?, backend.upload(a)?];
        Ok(CiphertextBatch { ctx: self.ctx.clone(), parts, level: self.level, count: self.count, tag: self.tag })
    }
}
