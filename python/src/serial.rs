//! Serialization of parameters, keys and ciphertext batches over the library's versioned
//! binary format (`pimhe_schemes::serial`, docs/SERIALIZATION.md): `to_bytes` / `from_bytes`,
//! `save` / `load` (the library's `serial::save_with` / `serial::load`; a secret key's file is
//! its owner's only), pickling of contexts. Every check is the library's loader's; this module
//! only erases the scheme and backend types and hands bytes across.
//!
//! Keys and ciphertexts are only meaningful under their parameters, so their loaders take the
//! context, and pickling them is refused with a `TypeError` that says so; a context pickles as
//! its parameters' encoding.

use std::path::PathBuf;
use std::sync::Arc;

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyType};
use zeroize::Zeroizing;

use pimhe_schemes::bfv::{BfvContext, BfvParameters};
use pimhe_schemes::bgv::{BgvContext, BgvParameters};
use pimhe_schemes::ckks::{CkksContext, CkksParameters};
use pimhe_schemes::rlwe;
use pimhe_schemes::serial::{self, Access, Existing, SerialScheme, HEADER_LEN};
use pimhe_schemes::SchemeError;

use crate::backend::resolve;
use crate::batch::{wrap, CiphertextBatch};
use crate::context::{AnyContext, Context};
use crate::errors::{error, scheme_error, IntoPy, Kind};
use crate::family::{ByScheme, Family, Scheme};
use crate::keys::{GaloisF, GaloisKeys, PublicF, PublicKey, RelinF, RelinKey, SecretF, SecretKey};
use crate::{by_scheme, dispatch, on_dev};

/// Offset of the scheme byte in an encoding's header: after the magic (5) the version (2) and
/// the kind (1).
const SCHEME_BYTE: usize = 8;

/// A loader's result: everything it refuses is a `FormatError` (data made for other
/// parameters too, which elsewhere is a `MismatchError`), except file errors (`OSError`).
fn loaded<T>(result: pimhe_schemes::Result<T>) -> PyResult<T> {
    result.map_err(|e| match e {
        SchemeError::ParameterMismatch(_) => error(Kind::Format, e.to_string()),
        e => scheme_error(e),
    })
}

/// The bytes of a file written by `save` (wiped when dropped: they may hold a secret key).
pub(crate) fn read_file(py: Python<'_>, path: PathBuf) -> PyResult<Zeroizing<Vec<u8>>> {
    py.allow_threads(|| serial::load(&path)).py_err()
}

/// Writes `bytes` to a file (created, or an existing one replaced atomically) readable as
/// `access` says: a secret key's file by its owner only, whatever the umask.
pub(crate) fn write_file(py: Python<'_>, path: PathBuf, bytes: &[u8], access: Access) -> PyResult<()> {
    py.allow_threads(|| serial::save_with(&path, bytes, access, Existing::Replace)).py_err()
}

/// The `TypeError` of pickling an object that needs its context to be loaded.
pub(crate) fn not_picklable(class: &str, hint: &str) -> PyErr {
    PyTypeError::new_err(format!(
        "a {class} cannot be pickled: it is only meaningful under its context's parameters; \
         send data = obj.to_bytes() and load it with {hint} (pickle the Context, or send ctx.to_bytes())"
    ))
}

// ---------------------------------------------------------------- parameters and contexts

/// The context of an encoding of parameters, of the scheme its header names.
fn context_from_bytes(py: Python<'_>, data: &[u8]) -> PyResult<Context> {
    let scheme = data.get(SCHEME_BYTE).copied().filter(|_| data.len() >= HEADER_LEN);
    let inner = py.allow_threads(|| -> PyResult<AnyContext> {
        Ok(match scheme {
            Some(BfvContext::SCHEME_ID) => {
                AnyContext::Bfv(BfvContext::new(loaded(BfvParameters::from_bytes(data))?).py_err()?)
            }
            Some(CkksContext::SCHEME_ID) => {
                AnyContext::Ckks(CkksContext::new(loaded(CkksParameters::from_bytes(data))?).py_err()?)
            }
            // BGV's loader also reports what is wrong with anything else.
            _ => AnyContext::Bgv(BgvContext::new(loaded(BgvParameters::from_bytes(data))?).py_err()?),
        })
    })?;
    Ok(Context { inner })
}

#[pymethods]
impl Context {
    /// The parameters in pimhe's binary format (their header names the scheme); a context is
    /// rebuilt from them by `Context.from_bytes`.
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        let bytes = by_scheme!(&self.inner, S, c => c.params().to_bytes());
        PyBytes::new(py, &bytes)
    }

    /// The context of parameters written by `Context.to_bytes`, of whichever scheme they are.
    #[classmethod]
    fn from_bytes(_cls: &Bound<'_, PyType>, py: Python<'_>, data: &[u8]) -> PyResult<Context> {
        context_from_bytes(py, data)
    }

    /// Writes the parameters to a file (`Context.load` reads it).
    fn save(&self, py: Python<'_>, path: PathBuf) -> PyResult<()> {
        let bytes = by_scheme!(&self.inner, S, c => c.params().to_bytes());
        write_file(py, path, &bytes, Access::Public)
    }

    /// The context of the parameters in a file written by `Context.save`.
    #[classmethod]
    fn load(_cls: &Bound<'_, PyType>, py: Python<'_>, path: PathBuf) -> PyResult<Context> {
        context_from_bytes(py, &read_file(py, path)?)
    }

    /// Pickles as the parameters' encoding (the precomputations are rebuilt when unpickled).
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<(Bound<'py, PyAny>, (Bound<'py, PyBytes>,))> {
        let from_bytes = slf.get_type().getattr("from_bytes")?;
        Ok((from_bytes, (slf.get().to_bytes(slf.py()),)))
    }
}

// ---------------------------------------------------------------- keys

/// The encodings of one kind of key, so that loading and writing are written once for all.
pub trait KeyCodec: Family {
    /// The Python class name.
    const CLASS: &'static str;
    /// The full encoding, or with `compressed` the seeded one (where the key has one).
    fn encode<S: Scheme>(key: &Self::Of<S>, compressed: bool) -> pimhe_schemes::Result<Vec<u8>>;
    /// Loads a key of `ctx` from either encoding.
    fn decode<S: Scheme>(ctx: &Arc<S>, data: &[u8]) -> pimhe_schemes::Result<Self::Of<S>>;
}

macro_rules! key_codec {
    ($family:ident, $ty:ident, $class:literal, |$key:ident, $compressed:ident| $encode:expr) => {
        impl KeyCodec for $family {
            const CLASS: &'static str = $class;
            fn encode<S: Scheme>($key: &rlwe::$ty<S>, $compressed: bool) -> pimhe_schemes::Result<Vec<u8>> {
                $encode
            }
            fn decode<S: Scheme>(ctx: &Arc<S>, data: &[u8]) -> pimhe_schemes::Result<rlwe::$ty<S>> {
                rlwe::$ty::from_bytes(ctx, data)
            }
        }
    };
    ($family:ident, $ty:ident, $class:literal) => {
        key_codec!($family, $ty, $class, |key, compressed| {
            if compressed {
                key.to_compressed_bytes()
            } else {
                Ok(key.to_bytes())
            }
        });
    };
}
// The secret key has no seeded form (its `to_bytes`/`save` take no `compressed`).
key_codec!(SecretF, SecretKey, "SecretKey", |key, _compressed| Ok(key.to_bytes()));
key_codec!(PublicF, PublicKey, "PublicKey");
key_codec!(RelinF, RelinKey, "RelinKey");
key_codec!(GaloisF, GaloisKeys, "GaloisKeys");

/// The encoding of a key (wiped when dropped: it may be the secret key).
fn encode_key<F: KeyCodec>(key: &ByScheme<F>, compressed: bool) -> PyResult<Zeroizing<Vec<u8>>> {
    by_scheme!(key, S, k => F::encode::<S>(k, compressed).map(Zeroizing::new).py_err())
}

/// A key of `ctx` from an encoding.
pub fn decode_key<F: KeyCodec>(py: Python<'_>, ctx: &AnyContext, data: &[u8]) -> PyResult<ByScheme<F>> {
    by_scheme!(ctx, S, c => loaded(py.allow_threads(|| F::decode::<S>(c, data))).map(S::wrap::<F>))
}

/// `from_bytes(ctx, data)`, `load(ctx, path)` and the refusal to pickle, for every key class;
/// `to_bytes` / `save` with `compressed=` for the evaluation keys.
macro_rules! key_methods {
    ($class:ident, $family:ident, $from_ctx:literal) => {
        #[pymethods]
        impl $class {
            #[doc = concat!("The ", stringify!($class), " of `ctx` in `data` (written by `to_bytes`, full or compressed).")]
            #[classmethod]
            fn from_bytes(_cls: &Bound<'_, PyType>, py: Python<'_>, ctx: &Context, data: &[u8]) -> PyResult<Self> {
                Ok(Self { inner: decode_key::<$family>(py, &ctx.inner, data)? })
            }

            #[doc = concat!("The ", stringify!($class), " of `ctx` in a file written by `save`.")]
            #[classmethod]
            fn load(_cls: &Bound<'_, PyType>, py: Python<'_>, ctx: &Context, path: PathBuf) -> PyResult<Self> {
                Ok(Self { inner: decode_key::<$family>(py, &ctx.inner, &read_file(py, path)?)? })
            }

            /// Refused: a key needs its context; use `to_bytes` and `from_bytes(ctx, data)`.
            fn __reduce__(&self) -> PyResult<PyObject> {
                Err(not_picklable(
                    <$family as KeyCodec>::CLASS,
                    concat!("pimhe.", stringify!($class), ".from_bytes(ctx, data) or ", $from_ctx),
                ))
            }
        }
    };
    ($class:ident, $family:ident, $from_ctx:literal, compressible) => {
        key_methods!($class, $family, $from_ctx);

        #[pymethods]
        impl $class {
            /// The key in pimhe's binary format; `compressed=True` writes its uniform parts as
            /// the 32-byte seeds they were expanded from (about half the size; only for a key
            /// generated here, not one loaded from a full encoding). `from_bytes` reads both.
            #[pyo3(signature = (compressed=false))]
            fn to_bytes<'py>(&self, py: Python<'py>, compressed: bool) -> PyResult<Bound<'py, PyBytes>> {
                Ok(PyBytes::new(py, &encode_key(&self.inner, compressed)?))
            }

            /// Writes `to_bytes(compressed)` to a file (`load` reads it).
            #[pyo3(signature = (path, compressed=false))]
            fn save(&self, py: Python<'_>, path: PathBuf, compressed: bool) -> PyResult<()> {
                write_file(py, path, &encode_key(&self.inner, compressed)?, Access::Public)
            }
        }
    };
}
key_methods!(SecretKey, SecretF, "ctx.secret_key_from_bytes(data)");
key_methods!(PublicKey, PublicF, "ctx.public_key_from_bytes(data)", compressible);
key_methods!(RelinKey, RelinF, "ctx.relin_key_from_bytes(data)", compressible);
key_methods!(GaloisKeys, GaloisF, "ctx.galois_keys_from_bytes(data)", compressible);

#[pymethods]
impl SecretKey {
    /// The secret key in pimhe's binary format: whoever holds these bytes can decrypt.
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        Ok(PyBytes::new(py, &encode_key(&self.inner, false)?))
    }

    /// Writes the secret key to a file readable by its owner only (mode 0600 on POSIX, whatever
    /// the umask; a file already there is replaced): whoever reads it can decrypt.
    fn save(&self, py: Python<'_>, path: PathBuf) -> PyResult<()> {
        write_file(py, path, &encode_key(&self.inner, false)?, Access::Secret)
    }
}

#[pymethods]
impl Context {
    /// A secret key written by `SecretKey.to_bytes`, for this context.
    fn secret_key_from_bytes(&self, py: Python<'_>, data: &[u8]) -> PyResult<SecretKey> {
        Ok(SecretKey { inner: decode_key::<SecretF>(py, &self.inner, data)? })
    }

    /// A public key written by `PublicKey.to_bytes` (full or compressed), for this context.
    fn public_key_from_bytes(&self, py: Python<'_>, data: &[u8]) -> PyResult<PublicKey> {
        Ok(PublicKey { inner: decode_key::<PublicF>(py, &self.inner, data)? })
    }

    /// A relinearization key written by `RelinKey.to_bytes` (full or compressed).
    fn relin_key_from_bytes(&self, py: Python<'_>, data: &[u8]) -> PyResult<RelinKey> {
        Ok(RelinKey { inner: decode_key::<RelinF>(py, &self.inner, data)? })
    }

    /// Galois keys written by `GaloisKeys.to_bytes` (full or compressed).
    fn galois_keys_from_bytes(&self, py: Python<'_>, data: &[u8]) -> PyResult<GaloisKeys> {
        Ok(GaloisKeys { inner: decode_key::<GaloisF>(py, &self.inner, data)? })
    }
}

// ---------------------------------------------------------------- ciphertext batches

/// A batch of `ctx` from a full or compressed (seeded) encoding, uploaded to `backend`.
fn decode_batch(
    py: Python<'_>,
    ctx: &AnyContext,
    data: &[u8],
    backend: Option<&Bound<'_, PyAny>>,
) -> PyResult<CiphertextBatch> {
    let target = resolve(py, backend, ctx)?;
    by_scheme!(ctx, S, c => on_dev!(&target, B, device => {
        let batch = loaded(py.allow_threads(|| rlwe::CiphertextBatch::<B, S>::from_bytes(&**device, c, data)))?;
        Ok(wrap::<S, B>(batch, device.clone()))
    }))
}

impl CiphertextBatch {
    fn encode(&self, py: Python<'_>) -> PyResult<Vec<u8>> {
        dispatch!(&self.inner, S, B, h => py.allow_threads(|| h.batch.to_bytes(&*h.backend)).py_err())
    }
}

#[pymethods]
impl Context {
    /// A ciphertext batch written by `CiphertextBatch.to_bytes` or `Encryptor.encrypt_seeded`,
    /// loaded onto `backend` (default: the CPU).
    #[pyo3(signature = (data, backend=None))]
    fn ciphertext_from_bytes(
        &self,
        py: Python<'_>,
        data: &[u8],
        backend: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<CiphertextBatch> {
        decode_batch(py, &self.inner, data, backend)
    }
}

#[pymethods]
impl CiphertextBatch {
    /// The batch in pimhe's binary format (downloaded from its backend); load it with
    /// `CiphertextBatch.from_bytes(ctx, data)` or `ctx.ciphertext_from_bytes(data)`.
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        Ok(PyBytes::new(py, &self.encode(py)?))
    }

    /// Writes `to_bytes()` to a file (`CiphertextBatch.load` reads it).
    fn save(&self, py: Python<'_>, path: PathBuf) -> PyResult<()> {
        write_file(py, path, &self.encode(py)?, Access::Public)
    }

    /// The batch of `ctx` in `data` (written by `to_bytes` or `Encryptor.encrypt_seeded`),
    /// loaded onto `backend` (default: the CPU).
    #[classmethod]
    #[pyo3(signature = (ctx, data, backend=None))]
    fn from_bytes(
        _cls: &Bound<'_, PyType>,
        py: Python<'_>,
        ctx: &Context,
        data: &[u8],
        backend: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<CiphertextBatch> {
        decode_batch(py, &ctx.inner, data, backend)
    }

    /// The batch of `ctx` in a file written by `save`, loaded onto `backend` (default: the CPU).
    #[classmethod]
    #[pyo3(signature = (ctx, path, backend=None))]
    fn load(
        _cls: &Bound<'_, PyType>,
        py: Python<'_>,
        ctx: &Context,
        path: PathBuf,
        backend: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<CiphertextBatch> {
        decode_batch(py, &ctx.inner, &read_file(py, path)?, backend)
    }

    /// Refused: a batch needs its context; use `to_bytes` and `from_bytes(ctx, data)`.
    fn __reduce__(&self) -> PyResult<PyObject> {
        Err(not_picklable("CiphertextBatch", "pimhe.CiphertextBatch.from_bytes(ctx, data, backend)"))
    }
}
