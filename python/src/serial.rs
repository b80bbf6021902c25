//! Serialization (`to_bytes` / `from_bytes`) of parameters, keys and ciphertext batches, over
//! the library's versioned binary format (`pimhe_schemes::serial`, docs/SERIALIZATION.md):
//! every check is the library's loader's; this module only erases the scheme and backend
//! types and hands bytes across.

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyType};

use pimhe_schemes::bfv::{BfvContext, BfvParameters};
use pimhe_schemes::bgv::{BgvContext, BgvParameters};
use pimhe_schemes::ckks::{CkksContext, CkksParameters};
use pimhe_schemes::rlwe;

use pimhe_schemes::serial::{SerialScheme, HEADER_LEN};

use crate::backend::resolve;
use crate::batch::{wrap, CiphertextBatch};
use crate::context::{AnyContext, Context};
use crate::errors::IntoPy;
use crate::family::Scheme;
use crate::keys::{GaloisF, GaloisKeys, PublicF, PublicKey, RelinF, RelinKey, SecretF, SecretKey};
use crate::{by_scheme, dispatch, on_dev};

/// Offset of the scheme byte in an encoding's header: after the magic (5) the version (2) and
/// the kind (1).
const SCHEME_BYTE: usize = 8;

#[pymethods]
impl Context {
    /// The parameters in pimhe's binary format (a context is rebuilt from them).
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        let bytes = by_scheme!(&self.inner, S, c => c.params().to_bytes());
        PyBytes::new(py, &bytes)
    }

    /// The context of parameters written by `Context.to_bytes`, of whichever scheme they are.
    #[classmethod]
    fn from_bytes(_cls: &Bound<'_, PyType>, py: Python<'_>, data: &[u8]) -> PyResult<Context> {
        let scheme = data.get(SCHEME_BYTE).copied().filter(|_| data.len() >= HEADER_LEN);
        let inner = py.allow_threads(|| -> PyResult<AnyContext> {
            Ok(match scheme {
                Some(BfvContext::SCHEME_ID) => {
                    AnyContext::Bfv(BfvContext::new(BfvParameters::from_bytes(data).py_err()?).py_err()?)
                }
                Some(CkksContext::SCHEME_ID) => {
                    AnyContext::Ckks(CkksContext::new(CkksParameters::from_bytes(data).py_err()?).py_err()?)
                }
                // BGV's loader also reports what is wrong with anything else.
                _ => AnyContext::Bgv(BgvContext::new(BgvParameters::from_bytes(data).py_err()?).py_err()?),
            })
        })?;
        Ok(Context { inner })
    }

    /// A secret key written by `SecretKey.to_bytes`, for this context.
    fn secret_key_from_bytes(&self, data: &[u8]) -> PyResult<SecretKey> {
        let inner = by_scheme!(&self.inner, S, c => S::wrap::<SecretF>(rlwe::SecretKey::from_bytes(c, data).py_err()?));
        Ok(SecretKey { inner })
    }

    /// A public key written by `PublicKey.to_bytes` (full or compressed), for this context.
    fn public_key_from_bytes(&self, data: &[u8]) -> PyResult<PublicKey> {
        let inner = by_scheme!(&self.inner, S, c => S::wrap::<PublicF>(rlwe::PublicKey::from_bytes(c, data).py_err()?));
        Ok(PublicKey { inner })
    }

    /// A relinearization key written by `RelinKey.to_bytes` (full or compressed).
    fn relin_key_from_bytes(&self, data: &[u8]) -> PyResult<RelinKey> {
        let inner = by_scheme!(&self.inner, S, c => S::wrap::<RelinF>(rlwe::RelinKey::from_bytes(c, data).py_err()?));
        Ok(RelinKey { inner })
    }

    /// Galois keys written by `GaloisKeys.to_bytes` (full or compressed).
    fn galois_keys_from_bytes(&self, data: &[u8]) -> PyResult<GaloisKeys> {
        let inner =
            by_scheme!(&self.inner, S, c => S::wrap::<GaloisF>(rlwe::GaloisKeys::from_bytes(c, data).py_err()?));
        Ok(GaloisKeys { inner })
    }

    /// A ciphertext batch written by `CiphertextBatch.to_bytes` or `Encryptor.encrypt_seeded`,
    /// loaded onto `backend` (default: the CPU).
    #[pyo3(signature = (data, backend=None))]
    fn ciphertext_from_bytes(
        &self,
        py: Python<'_>,
        data: &[u8],
        backend: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<CiphertextBatch> {
        let target = resolve(py, backend, &self.inner)?;
        by_scheme!(&self.inner, S, ctx => on_dev!(&target, B, device => {
            let batch = py.allow_threads(|| rlwe::CiphertextBatch::<B, S>::from_bytes(&**device, ctx, data)).py_err()?;
            Ok(wrap::<S, B>(batch, device.clone()))
        }))
    }
}

#[pymethods]
impl SecretKey {
    /// The secret key in pimhe's binary format: whoever holds these bytes can decrypt.
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        let bytes = zeroize::Zeroizing::new(by_scheme!(&self.inner, S, k => k.to_bytes()));
        PyBytes::new(py, &bytes)
    }
}

#[pymethods]
impl PublicKey {
    /// The key in pimhe's binary format; `compressed=True` stores its uniform part as a seed
    /// (half the size; only for a key made here, not one loaded from a full encoding).
    #[pyo3(signature = (compressed=false))]
    fn to_bytes<'py>(&self, py: Python<'py>, compressed: bool) -> PyResult<Bound<'py, PyBytes>> {
        let bytes =
            by_scheme!(&self.inner, S, k => if compressed { k.to_compressed_bytes().py_err()? } else { k.to_bytes() });
        Ok(PyBytes::new(py, &bytes))
    }
}

#[pymethods]
impl RelinKey {
    /// The key in pimhe's binary format; `compressed=True` as for `PublicKey.to_bytes`.
    #[pyo3(signature = (compressed=false))]
    fn to_bytes<'py>(&self, py: Python<'py>, compressed: bool) -> PyResult<Bound<'py, PyBytes>> {
        let bytes =
            by_scheme!(&self.inner, S, k => if compressed { k.to_compressed_bytes().py_err()? } else { k.to_bytes() });
        Ok(PyBytes::new(py, &bytes))
    }
}

#[pymethods]
impl GaloisKeys {
    /// The keys in pimhe's binary format; `compressed=True` as for `PublicKey.to_bytes`.
    #[pyo3(signature = (compressed=false))]
    fn to_bytes<'py>(&self, py: Python<'py>, compressed: bool) -> PyResult<Bound<'py, PyBytes>> {
        let bytes =
            by_scheme!(&self.inner, S, k => if compressed { k.to_compressed_bytes().py_err()? } else { k.to_bytes() });
        Ok(PyBytes::new(py, &bytes))
    }
}

#[pymethods]
impl CiphertextBatch {
    /// The batch in pimhe's binary format (downloaded from its backend); load it with
    /// `Context.ciphertext_from_bytes`.
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let bytes = dispatch!(&self.inner, S, B, h => py.allow_threads(|| h.batch.to_bytes(&*h.backend)).py_err()?);
        Ok(PyBytes::new(py, &bytes))
    }
}
