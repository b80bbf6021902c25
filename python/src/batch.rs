//! `CiphertextBatch`: the Rust `CiphertextBatch<B, S>` (count ciphertexts at one level,
//! resident on a backend) with the backend it lives on.

use std::sync::Arc;

use pyo3::prelude::*;

use pimhe_schemes::ckks::CkksContext;
use pimhe_schemes::rlwe::{self, RlweScheme};

use crate::backend::resolve;
use crate::context::{AnyContext, CtxF};
use crate::errors::{mismatch, IntoPy};
use crate::family::{ByScheme, Dev, DevFamily, Family, OnDev, Scheme};
use crate::scheme::PyScheme;
use crate::{dispatch, on_dev};

/// A batch and the backend its buffers live on (kept alive as long as the batch).
pub struct Held<B: Dev, S: Scheme> {
    pub batch: rlwe::CiphertextBatch<B, S>,
    pub backend: Arc<B>,
}

pub struct HeldF<S>(std::marker::PhantomData<S>);
impl<S: Scheme> DevFamily for HeldF<S> {
    type On<B: Dev> = Held<B, S>;
}
pub struct BatchF;
impl Family for BatchF {
    type Of<S: Scheme> = OnDev<HeldF<S>>;
}

/// A batch of any scheme on any backend.
pub type AnyBatch = ByScheme<BatchF>;

/// Wraps a new batch of scheme S on backend B.
pub fn wrap<S: Scheme, B: Dev>(batch: rlwe::CiphertextBatch<B, S>, backend: Arc<B>) -> CiphertextBatch {
    CiphertextBatch { inner: S::wrap::<BatchF>(B::wrap::<HeldF<S>>(Held { batch, backend })) }
}

/// The batch of scheme S on backend B in `batch`, checked to live on `backend` (the same
/// device: buffers of one PIM backend mean nothing to another; CPU buffers are host memory
/// any CPU backend can use).
pub fn unwrap<'b, S: Scheme, B: Dev>(
    batch: &'b CiphertextBatch,
    backend: &Arc<B>,
    what: &str,
) -> PyResult<&'b rlwe::CiphertextBatch<B, S>> {
    let per_dev = S::get::<BatchF>(&batch.inner).ok_or_else(|| {
        mismatch(format!("{what} is a {} ciphertext batch; this object is for {}", batch.inner.label(), S::LABEL))
    })?;
    let backend_name = per_dev.backend_name();
    let held = B::get::<HeldF<S>>(per_dev).ok_or_else(|| {
        mismatch(format!(
            "{what} lives on the {backend_name} backend, this object runs on another; move it with batch.to(backend)"
        ))
    })?;
    let cpu = std::any::TypeId::of::<B>() == std::any::TypeId::of::<pimhe_exec::CpuBackend>();
    if !cpu && !Arc::ptr_eq(&held.backend, backend) {
        return Err(mismatch(format!(
            "{what} lives on another {backend_name} backend than this object's; move it with batch.to(backend)"
        )));
    }
    Ok(&held.batch)
}

/// `count` ciphertexts at one level on one backend, as the Rust library stores them
/// (component-wise, so an operation on the whole batch is a few backend calls). Encrypt one
/// with `Encryptor.encrypt`, operate with an `Evaluator`, read it with `Decryptor.decrypt`.
#[pyclass(frozen, module = "pimhe._pimhe")]
pub struct CiphertextBatch {
    pub(crate) inner: AnyBatch,
}

impl CiphertextBatch {
    /// The batch's context.
    pub fn context(&self) -> AnyContext {
        dispatch!(&self.inner, S, B, h => S::wrap::<CtxF>(h.batch.context().clone()))
    }
}

fn describe<S: PyScheme, B: Dev>(h: &Held<B, S>) -> String {
    let b = &h.batch;
    let mut text = format!(
        "CiphertextBatch({}, backend={}, count={}, level={}, size={}",
        S::LABEL,
        h.backend.name(),
        b.count(),
        b.level(),
        b.size()
    );
    if let Some(scale) = S::batch_scale(b) {
        text += &format!(", scale=2^{:.2}", scale.log2());
    }
    text + ")"
}

#[pymethods]
impl CiphertextBatch {
    /// Number of ciphertexts.
    #[getter]
    fn count(&self) -> usize {
        dispatch!(&self.inner, S, B, h => h.batch.count())
    }

    fn __len__(&self) -> usize {
        self.count()
    }

    /// Current level (number of primes minus one).
    #[getter]
    fn level(&self) -> usize {
        dispatch!(&self.inner, S, B, h => h.batch.level())
    }

    /// Number of components: 2 when fresh or relinearized, 3 after a product.
    #[getter]
    fn size(&self) -> usize {
        dispatch!(&self.inner, S, B, h => h.batch.size())
    }

    /// The scale of the slots (CKKS); None for BGV and BFV.
    #[getter]
    fn scale(&self) -> Option<f64> {
        dispatch!(&self.inner, S, B, h => S::batch_scale(&h.batch))
    }

    /// Slots per ciphertext.
    #[getter]
    fn slots(&self) -> usize {
        dispatch!(&self.inner, S, B, h => S::batch_slots(&h.batch))
    }

    /// BGV's correction factor (the message is scaled by it mod t after modulus switching;
    /// decryption removes it); None for BFV and CKKS.
    #[getter]
    fn correction_factor(&self) -> Option<u32> {
        match &self.inner {
            ByScheme::Bgv(per_dev) => Some(on_dev!(per_dev, B, h => h.batch.correction_factor())),
            _ => None,
        }
    }

    /// CKKS: rescalings left before the last level; None for BGV and BFV.
    #[getter]
    fn depth_left(&self) -> Option<usize> {
        match &self.inner {
            ByScheme::Ckks(per_dev) => Some(on_dev!(per_dev, B, h => {
                let ctx: &Arc<CkksContext> = h.batch.context();
                ctx.depth_left(h.batch.level())
            })),
            _ => None,
        }
    }

    /// "bgv", "bfv" or "ckks".
    #[getter]
    fn scheme(&self) -> &'static str {
        dispatch!(&self.inner, S, B, _h => S::NAME)
    }

    /// The name of the backend the batch lives on.
    #[getter]
    fn backend(&self) -> &'static str {
        dispatch!(&self.inner, S, B, _h => if std::any::TypeId::of::<B>() == std::any::TypeId::of::<pimhe_exec::CpuBackend>() { "cpu" } else { "upmem-emu" })
    }

    /// The same ciphertexts on another backend (through the host, as a client would send them
    /// to a server): `batch.to(pimhe.Backend.upmem_emu())`.
    fn to(&self, py: Python<'_>, backend: &Bound<'_, PyAny>) -> PyResult<CiphertextBatch> {
        let ctx = self.context();
        let target = resolve(py, Some(backend), &ctx)?;
        dispatch!(&self.inner, S, B, h => on_dev!(&target, T, to => {
            let moved = py.allow_threads(|| h.batch.transfer(&*h.backend, &**to)).py_err()?;
            Ok(wrap::<S, T>(moved, to.clone()))
        }))
    }

    fn __repr__(&self) -> String {
        dispatch!(&self.inner, S, B, h => describe::<S, B>(h))
    }
}

#[allow(dead_code)]
fn _assert_context_family(_: &ByScheme<CtxF>) {}
