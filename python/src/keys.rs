//! Keys: `ctx.keygen()` and the key classes. Keys are host-side values of the Rust library
//! (`SecretKey`, `PublicKey`, `RelinKey`, `GaloisKeys`); the secret key leaves Rust only as its
//! encoding (`serial.rs`), and the library overwrites it with zeros when it is dropped.

use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::PyTuple;

use pimhe_math::Sampler;
use pimhe_schemes::ckks::CkksContext;
use pimhe_schemes::rlwe::{self, KeyGenerator, RlweScheme};
use pimhe_schemes::SchemeError;

use crate::backend::DevHandle;
use crate::context::{AnyContext, Context};
use crate::errors::{mismatch, parameter, scheme_error, IntoPy};
use crate::family::{ByScheme, Family, Scheme};
use crate::{by_scheme, on_dev};

/// A kind of key: each key knows the parameters it was made under.
pub trait KeyFamily: Family {
    fn context<S: Scheme>(key: &Self::Of<S>) -> &Arc<S>;
}

macro_rules! key_family {
    ($family:ident, $ty:ident) => {
        pub struct $family;
        impl Family for $family {
            type Of<S: Scheme> = rlwe::$ty<S>;
        }
        impl KeyFamily for $family {
            fn context<S: Scheme>(key: &rlwe::$ty<S>) -> &Arc<S> {
                key.context()
            }
        }
    };
}
key_family!(SecretF, SecretKey);
key_family!(PublicF, PublicKey);
key_family!(RelinF, RelinKey);
key_family!(GaloisF, GaloisKeys);

/// The key of scheme S in `key`, made under `ctx`'s parameters (a context of equal parameters is
/// the same context), or the error naming the schemes or parameters that differ. Every object
/// made from a key works under the key's parameters: one of another context's would silently
/// encrypt or decrypt for that context instead.
pub fn key_of<'k, F: KeyFamily, S: Scheme>(key: &'k ByScheme<F>, ctx: &Arc<S>, what: &str) -> PyResult<&'k F::Of<S>> {
    let key = S::get::<F>(key)
        .ok_or_else(|| mismatch(format!("the {what} is a {} key; this context is {}", key.label(), S::LABEL)))?;
    let made_under = F::context::<S>(key);
    if !Arc::ptr_eq(made_under, ctx) && made_under.params() != ctx.params() {
        return Err(scheme_error(SchemeError::ParameterMismatch(format!(
            "the {what} came from a context of other parameters, [{}], not this context's [{}]: use keys made under \
             this context's parameters",
            made_under.params(),
            ctx.params()
        ))));
    }
    Ok(key)
}

/// The secret key s. It stays in Rust unless asked for its encoding (`to_bytes`, `save`:
/// whoever holds those bytes can decrypt) and is wiped when the object is garbage-collected.
#[pyclass(frozen, module = "pimhe._pimhe")]
pub struct SecretKey {
    pub(crate) inner: ByScheme<SecretF>,
}

/// The public key (b, a) = (-a s + e, a).
#[pyclass(frozen, module = "pimhe._pimhe")]
pub struct PublicKey {
    pub(crate) inner: ByScheme<PublicF>,
}

/// The relinearization key (s^2 -> s), for `Evaluator.relinearize`.
#[pyclass(frozen, module = "pimhe._pimhe")]
pub struct RelinKey {
    pub(crate) inner: ByScheme<RelinF>,
}

/// Galois keys (sigma_k(s) -> s) for automorphisms: slot rotations and conjugation.
#[pyclass(frozen, module = "pimhe._pimhe")]
pub struct GaloisKeys {
    pub(crate) inner: ByScheme<GaloisF>,
}

#[pymethods]
impl SecretKey {
    #[getter]
    fn scheme(&self) -> &'static str {
        by_scheme!(&self.inner, S, _k => S::NAME)
    }
    fn __repr__(&self) -> String {
        format!("SecretKey({}, hidden)", self.inner.label())
    }
}

#[pymethods]
impl PublicKey {
    #[getter]
    fn scheme(&self) -> &'static str {
        by_scheme!(&self.inner, S, _k => S::NAME)
    }
    fn __repr__(&self) -> String {
        format!("PublicKey({})", self.inner.label())
    }
}

#[pymethods]
impl RelinKey {
    #[getter]
    fn scheme(&self) -> &'static str {
        by_scheme!(&self.inner, S, _k => S::NAME)
    }
    /// Size of the key in bytes.
    #[getter]
    fn size_bytes(&self) -> usize {
        by_scheme!(&self.inner, S, k => k.size_bytes())
    }
    fn __repr__(&self) -> String {
        format!("RelinKey({}, {} bytes)", self.inner.label(), self.size_bytes())
    }
}

#[pymethods]
impl GaloisKeys {
    #[getter]
    fn scheme(&self) -> &'static str {
        by_scheme!(&self.inner, S, _k => S::NAME)
    }
    /// The Galois elements k (automorphisms X -> X^k) the keys are for.
    #[getter]
    fn elements(&self) -> Vec<usize> {
        by_scheme!(&self.inner, S, k => k.elements().collect())
    }
    /// Size of the keys in bytes.
    #[getter]
    fn size_bytes(&self) -> usize {
        by_scheme!(&self.inner, S, k => k.size_bytes())
    }
    fn __repr__(&self) -> String {
        format!("GaloisKeys({}, elements={:?})", self.inner.label(), self.elements())
    }
}

/// What `keygen` returns: `secret_key`, `public_key`, `relin_key` (None where the parameters
/// have no special primes, or when not asked for), `galois_keys` (None unless asked for).
/// Unpacks as `sk, pk, rk, gk = ctx.keygen()`.
#[pyclass(frozen, module = "pimhe._pimhe")]
pub struct KeySet {
    #[pyo3(get)]
    secret_key: Py<SecretKey>,
    #[pyo3(get)]
    public_key: Py<PublicKey>,
    #[pyo3(get)]
    relin_key: Option<Py<RelinKey>>,
    #[pyo3(get)]
    galois_keys: Option<Py<GaloisKeys>>,
}

#[pymethods]
impl KeySet {
    fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let items: [PyObject; 4] = [
            self.secret_key.clone_ref(py).into_any(),
            self.public_key.clone_ref(py).into_any(),
            self.relin_key.as_ref().map_or(py.None(), |k| k.clone_ref(py).into_any()),
            self.galois_keys.as_ref().map_or(py.None(), |k| k.clone_ref(py).into_any()),
        ];
        PyTuple::new(py, items)?.into_any().try_iter().map(|i| i.into_any())
    }

    fn __repr__(&self) -> String {
        format!(
            "KeySet(secret_key, public_key, relin_key={}, galois_keys={})",
            if self.relin_key.is_some() { "yes" } else { "None" },
            if self.galois_keys.is_some() { "yes" } else { "None" }
        )
    }
}

/// The randomness of key generation: from `seed` (reproducible: tests only; anyone with the
/// seed can make the keys) or, by default, from the OS.
pub(crate) fn sampler(seed: Option<u64>) -> PyResult<Sampler> {
    match seed {
        Some(seed) => Ok(Sampler::from_seed_u64(seed)),
        None => Sampler::from_os().map_err(|e| parameter(e.to_string())),
    }
}

/// The generated keys of one scheme.
struct Made<S: Scheme> {
    secret: rlwe::SecretKey<S>,
    public: rlwe::PublicKey<S>,
    relin: Option<rlwe::RelinKey<S>>,
    galois: Option<rlwe::GaloisKeys<S>>,
}

fn generate<S: Scheme, B: crate::family::Dev>(
    backend: &B,
    ctx: &Arc<S>,
    sampler: Sampler,
    relin: bool,
    elements: &[usize],
) -> pimhe_schemes::Result<Made<S>> {
    let mut keygen = KeyGenerator::with_sampler(backend, ctx, sampler);
    let secret = keygen.secret_key()?;
    let public = keygen.public_key(&secret)?;
    let has_special = !ctx.rlwe().params().special_primes().is_empty();
    let relin = if relin && has_special { Some(keygen.relin_key(&secret)?) } else { None };
    let galois = if elements.is_empty() { None } else { Some(keygen.galois_keys(&secret, elements)?) };
    Ok(Made { secret, public, relin, galois })
}

#[pymethods]
impl Context {
    /// Generates keys: the secret and public keys, the relinearization key (where the
    /// parameters have special primes and `relin` is true), and Galois keys for the
    /// `galois_elements` given, for CKKS also for slot `rotations` (steps, negative = right)
    /// and `conjugation`. `seed` makes the keys reproducible (tests only: anyone with the
    /// seed can make the secret key); by default the randomness comes from the OS. Keys are
    /// made on `backend` (default: the CPU).
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (*, seed=None, relin=true, galois_elements=None, rotations=None, conjugation=false, backend=None))]
    fn keygen(
        &self,
        py: Python<'_>,
        seed: Option<u64>,
        relin: bool,
        galois_elements: Option<Vec<usize>>,
        rotations: Option<Vec<i64>>,
        conjugation: bool,
        backend: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<KeySet> {
        let mut elements = galois_elements.unwrap_or_default();
        if rotations.is_some() || conjugation {
            let ckks = self.inner.of::<CkksContext>("rotations= and conjugation= (CKKS slot rotations)")?;
            elements.extend(ckks.galois_elements(&rotations.unwrap_or_default(), conjugation));
        }
        let sampler = sampler(seed)?;
        let handle: DevHandle = crate::backend::resolve(py, backend, &self.inner)?;
        let ctx: &AnyContext = &self.inner;
        by_scheme!(ctx, S, c => {
            let made = on_dev!(&handle, B, dev => py.allow_threads(|| generate::<S, B>(dev, c, sampler, relin, &elements)).py_err()?);
            Ok(KeySet {
                secret_key: Py::new(py, SecretKey { inner: S::wrap::<SecretF>(made.secret) })?,
                public_key: Py::new(py, PublicKey { inner: S::wrap::<PublicF>(made.public) })?,
                relin_key: made.relin.map(|k| Py::new(py, RelinKey { inner: S::wrap::<RelinF>(k) })).transpose()?,
                galois_keys: made.galois.map(|k| Py::new(py, GaloisKeys { inner: S::wrap::<GaloisF>(k) })).transpose()?,
            })
        })
    }
}
