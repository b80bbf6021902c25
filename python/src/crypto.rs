//! `Encryptor` and `Decryptor`: the Rust `Encryptor<'a, B, S>` and `Decryptor<'a, B, S>`
//! (which borrow their backend) kept with the backend they borrow.

use std::sync::{Arc, Mutex};

use pyo3::prelude::*;

use pimhe_math::Sampler;
use pimhe_schemes::rlwe;

use crate::backend::resolve;
use crate::batch::{unwrap, wrap, CiphertextBatch};
use crate::context::Context;
use crate::errors::{error, parameter, IntoPy, Kind};
use crate::family::{Anchored, Borrower, ByScheme, Dev, DevFamily, Family, OnDev, Scheme};
use crate::keys::{key_of, PublicF, PublicKey, SecretF, SecretKey};
use crate::scheme::{DecodeAs, EncodeAt, PyScheme};
use crate::{by_scheme, dispatch, on_dev};

/// `Encryptor<'a, B, S>` for every `'a`.
pub struct EncL<S>(std::marker::PhantomData<S>);
impl<B: Dev, S: Scheme> Borrower<B> for EncL<S> {
    type At<'a> = rlwe::Encryptor<'a, B, S>;
}

/// An encryptor with its parameters. Encrypting draws randomness (`&mut`), so threads sharing
/// the Python object take turns under the lock (`locked`); the parameters are kept outside it,
/// so that values are encoded (with the GIL) before waiting for it.
pub struct Enc<B: Dev, S: Scheme> {
    ctx: Arc<S>,
    encryptor: Mutex<Anchored<B, EncL<S>>>,
}

pub struct EncF<S>(std::marker::PhantomData<S>);
impl<S: Scheme> DevFamily for EncF<S> {
    type On<B: Dev> = Enc<B, S>;
}
pub struct EncFam;
impl Family for EncFam {
    type Of<S: Scheme> = OnDev<EncF<S>>;
}

/// `Decryptor<'a, B, S>` for every `'a`.
pub struct DecL<S>(std::marker::PhantomData<S>);
impl<B: Dev, S: Scheme> Borrower<B> for DecL<S> {
    type At<'a> = rlwe::Decryptor<'a, B, S>;
}

pub struct DecF<S>(std::marker::PhantomData<S>);
impl<S: Scheme> DevFamily for DecF<S> {
    type On<B: Dev> = Anchored<B, DecL<S>>;
}
pub struct DecFam;
impl Family for DecFam {
    type Of<S: Scheme> = OnDev<DecF<S>>;
}

/// Encrypts numpy arrays into ciphertext batches, with a public key (anyone) or the secret
/// key (the data owner; smaller noise). Make one with `ctx.encryptor(key, backend)`.
#[pyclass(frozen, module = "pimhe._pimhe")]
pub struct Encryptor {
    inner: ByScheme<EncFam>,
}

/// Decrypts ciphertext batches into numpy arrays. Holds the secret key on its backend (wiped
/// when dropped). Make one with `ctx.decryptor(secret_key, backend)`.
#[pyclass(frozen, module = "pimhe._pimhe")]
pub struct Decryptor {
    pub(crate) inner: ByScheme<DecFam>,
}

fn sampler(seed: Option<u64>) -> PyResult<Option<Sampler>> {
    Ok(seed.map(Sampler::from_seed_u64))
}

#[pymethods]
impl Context {
    /// An encryptor with `key` (a PublicKey, or the SecretKey for secret-key encryption) on
    /// `backend` (default: the CPU). `seed` makes the encryptions reproducible (tests only).
    #[pyo3(signature = (key, backend=None, *, seed=None))]
    fn encryptor(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        backend: Option<&Bound<'_, PyAny>>,
        seed: Option<u64>,
    ) -> PyResult<Encryptor> {
        let handle = resolve(py, backend, &self.inner)?;
        let sampler = sampler(seed)?;
        let public = key.downcast::<PublicKey>().ok();
        let secret = key.downcast::<SecretKey>().ok();
        if public.is_none() && secret.is_none() {
            return Err(parameter("the encryptor's key must be a PublicKey or a SecretKey"));
        }
        by_scheme!(&self.inner, S, c => on_dev!(handle, B, dev => {
            let anchored = Anchored::<B, EncL<S>>::make(dev, |b| -> PyResult<_> {
                let encryptor = match (&public, &secret) {
                    (Some(k), _) => {
                        let k = key_of::<PublicF, S>(&k.get().inner, c, "public key")?;
                        py.allow_threads(|| rlwe::Encryptor::with_public_key(b, k)).py_err()?
                    }
                    (None, Some(k)) => {
                        let k = key_of::<SecretF, S>(&k.get().inner, c, "secret key")?;
                        py.allow_threads(|| rlwe::Encryptor::with_secret_key(b, k)).py_err()?
                    }
                    (None, None) => unreachable!("checked above"),
                };
                Ok(match sampler { Some(s) => encryptor.with_sampler(s), None => encryptor })
            })?;
            let enc = Enc { ctx: anchored.with_value(|e| e.context().clone()), encryptor: Mutex::new(anchored) };
            Ok(Encryptor { inner: S::wrap::<EncFam>(B::wrap::<EncF<S>>(enc)) })
        }))
    }

    /// A decryptor with the secret key on `backend` (default: the CPU).
    #[pyo3(signature = (secret_key, backend=None))]
    fn decryptor(
        &self,
        py: Python<'_>,
        secret_key: &SecretKey,
        backend: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Decryptor> {
        let handle = resolve(py, backend, &self.inner)?;
        by_scheme!(&self.inner, S, c => on_dev!(handle, B, dev => {
            let key = key_of::<SecretF, S>(&secret_key.inner, c, "secret key")?;
            let anchored =
                Anchored::<B, DecL<S>>::make(dev, |b| py.allow_threads(|| rlwe::Decryptor::new(b, key)).py_err())?;
            Ok(Decryptor { inner: S::wrap::<DecFam>(B::wrap::<DecF<S>>(anchored)) })
        }))
    }
}

/// `run` on the encryptor, under its lock, with the GIL released. Waiting for the lock with the
/// GIL held deadlocks: the thread holding the lock releases the GIL while it encrypts and needs
/// it back to return, while the waiting thread keeps it.
fn locked<S: Scheme, B: Dev, R: Send>(
    py: Python<'_>,
    enc: &Enc<B, S>,
    run: impl FnOnce(&mut Anchored<B, EncL<S>>) -> R + Send,
) -> PyResult<R> {
    py.allow_threads(|| enc.encryptor.lock().map(|mut guard| run(&mut guard)).map_err(drop))
        .map_err(|()| error(Kind::Base, "the encryptor's lock is poisoned"))
}

fn encrypt<S: PyScheme, B: Dev>(
    py: Python<'_>,
    enc: &Enc<B, S>,
    values: &Bound<'_, PyAny>,
    at: EncodeAt,
) -> PyResult<CiphertextBatch>
where
    S::Plaintext: Send + Sync,
{
    let plains = S::encode(&enc.ctx, values, at)?;
    let (batch, backend) = locked(py, enc, |anchored| {
        let backend = anchored.backend().clone();
        anchored.with_value_mut(|e| e.encrypt(&plains)).map(|batch| (batch, backend))
    })?
    .py_err()?;
    Ok(wrap::<S, B>(batch, backend))
}

/// Secret-key encryptions of `values` in their compressed (seeded) encoding.
fn encrypt_seeded<S: PyScheme, B: Dev>(
    py: Python<'_>,
    enc: &Enc<B, S>,
    values: &Bound<'_, PyAny>,
    at: EncodeAt,
) -> PyResult<Vec<u8>>
where
    S::Plaintext: Send + Sync,
{
    let plains = S::encode(&enc.ctx, values, at)?;
    locked(py, enc, |anchored| anchored.with_value_mut(|e| e.encrypt_seeded(&plains).map(|seeded| seeded.to_bytes())))?
        .py_err()
}

#[pymethods]
impl Encryptor {
    /// Encrypts the rows of `values` (a 2-D array, batch x slots; a 1-D array is a batch of
    /// one) into one batch. BGV/BFV: integers in [0, t), or signed values in (-t/2, t/2] when
    /// any is negative. CKKS: real or complex numbers, encoded at `scale` (default the
    /// context's) into `slots` slots (default N/2; a smaller power of two packs sparsely).
    #[pyo3(signature = (values, *, scale=None, slots=None))]
    fn encrypt(
        &self,
        py: Python<'_>,
        values: &Bound<'_, PyAny>,
        scale: Option<f64>,
        slots: Option<usize>,
    ) -> PyResult<CiphertextBatch> {
        let at = EncodeAt { scale, slots };
        dispatch!(&self.inner, S, B, e => encrypt::<S, B>(py, e, values, at))
    }

    /// Like `encrypt`, with the secret key only, but returns the batch's compressed encoding
    /// (bytes): its uniform part is a 32-byte seed, about half the size of
    /// `CiphertextBatch.to_bytes`. Load it with `Context.ciphertext_from_bytes`.
    #[pyo3(signature = (values, *, scale=None, slots=None))]
    fn encrypt_seeded<'py>(
        &self,
        py: Python<'py>,
        values: &Bound<'_, PyAny>,
        scale: Option<f64>,
        slots: Option<usize>,
    ) -> PyResult<Bound<'py, pyo3::types::PyBytes>> {
        let at = EncodeAt { scale, slots };
        let bytes = dispatch!(&self.inner, S, B, e => encrypt_seeded::<S, B>(py, e, values, at))?;
        Ok(pyo3::types::PyBytes::new(py, &bytes))
    }

    /// The name of the backend the encryptions are made on.
    #[getter]
    fn backend(&self) -> &'static str {
        by_scheme!(&self.inner, S, e => e.backend_name())
    }

    fn __repr__(&self) -> String {
        by_scheme!(&self.inner, S, e => format!("Encryptor({}, backend={})", S::LABEL, e.backend_name()))
    }
}

#[pymethods]
impl Decryptor {
    /// The slot values of every ciphertext, as a 2-D array (count x slots). BGV/BFV: uint64 in
    /// [0, t), or int64 in (-t/2, t/2] with `signed=True`; CKKS: float64 (real parts), or
    /// complex128 with `complex=True`. Raises NoiseBudgetError rather than return a wrong value.
    #[pyo3(signature = (batch, *, signed=false, complex=false))]
    fn decrypt(&self, py: Python<'_>, batch: &CiphertextBatch, signed: bool, complex: bool) -> PyResult<PyObject> {
        dispatch!(&self.inner, S, B, d => {
            let b = unwrap::<S, B>(batch, d.backend(), "the batch")?;
            let (ctx, plains) = d.with_value(|d| py.allow_threads(|| d.decrypt(b)).map(|p| (d.context().clone(), p))).py_err()?;
            S::decode(py, &ctx, plains, DecodeAs { signed, complex })
        })
    }

    /// BGV/BFV: the remaining noise budget of each ciphertext in bits (0 when exhausted),
    /// measured exactly by the library.
    fn noise_budget(&self, py: Python<'_>, batch: &CiphertextBatch) -> PyResult<Vec<u32>> {
        dispatch!(&self.inner, S, B, d => {
            let b = unwrap::<S, B>(batch, d.backend(), "the batch")?;
            d.with_value(|dec| py.allow_threads(|| dec.noise_budget(b))).py_err()
        })
    }

    fn __repr__(&self) -> String {
        by_scheme!(&self.inner, S, d => format!("Decryptor({}, backend={})", S::LABEL, d.backend_name()))
    }
}
