//! What differs per scheme at the Python boundary: numpy arrays to the library's plaintexts
//! and back (BGV and BFV through the `BatchEncoder`, CKKS through its `Encoder`), how a
//! plaintext operand's array is encoded, and the batch's tag as Python reads it. Argument
//! conversion only: encoding, scaling, the operations (plaintext operands and the noise budget
//! included) and every check are the library's, called through its scheme traits.

use std::sync::Arc;

use numpy::ndarray::Array2;
use numpy::{Complex64, IntoPyArray, PyReadonlyArray2};
use pyo3::prelude::*;

use pimhe_exec::Backend;
use pimhe_schemes::bfv::BfvContext;
use pimhe_schemes::bgv::BgvContext;
use pimhe_schemes::ckks::{CkksContext, CkksPlaintext, Encoder};
use pimhe_schemes::encoder::{BatchEncoder, ExactScheme, Plaintext};
use pimhe_schemes::rlwe::CiphertextBatch;
use pimhe_schemes::Result as SResult;

use crate::errors::{error, Kind};
use crate::family::Scheme;

/// How to encode: CKKS's scale and slot count (None: the context's defaults).
#[derive(Clone, Copy, Default)]
pub struct EncodeAt {
    pub scale: Option<f64>,
    pub slots: Option<usize>,
}

/// How to decode: signed integers (BGV, BFV) or complex values (CKKS).
#[derive(Clone, Copy, Default)]
pub struct DecodeAs {
    pub signed: bool,
    pub complex: bool,
}

/// An array argument as a C-contiguous 2-D numpy array (a 1-D array is one row), and the
/// kind of its dtype ('u', 'i', 'b', 'f', 'c', ...).
fn as_2d<'py>(values: &Bound<'py, PyAny>) -> PyResult<(Bound<'py, PyAny>, char)> {
    let np = values.py().import("numpy")?;
    let array = np.call_method1("asarray", (values,))?;
    let ndim: usize = array.getattr("ndim")?.extract()?;
    let array = match ndim {
        1 => array.call_method1("reshape", (1, -1))?,
        2 => array,
        other => {
            return Err(error(
                Kind::Plaintext,
                format!("expected a 1-D array (one vector) or a 2-D array (batch x slots); got {other} dimensions"),
            ))
        }
    };
    let kind: String = array.getattr("dtype")?.getattr("kind")?.extract()?;
    Ok((array, kind.chars().next().unwrap_or('?')))
}

/// The rows of a 2-D array converted to `dtype`.
fn rows<T: numpy::Element + Copy>(array: &Bound<'_, PyAny>, dtype: &str) -> PyResult<Vec<Vec<T>>> {
    let np = array.py().import("numpy")?;
    let converted = np.call_method1("ascontiguousarray", (array, dtype))?;
    let view: PyReadonlyArray2<T> = converted.extract()?;
    Ok(view.as_array().rows().into_iter().map(|r| r.to_vec()).collect())
}

/// A 2-D numpy array of equal-length rows.
fn to_numpy<T: numpy::Element>(py: Python<'_>, rows: Vec<Vec<T>>) -> PyResult<PyObject> {
    let width = rows.first().map_or(0, Vec::len);
    let count = rows.len();
    let flat: Vec<T> = rows.into_iter().flatten().collect();
    let array = Array2::from_shape_vec((count, width), flat).map_err(|e| error(Kind::Base, e.to_string()))?;
    Ok(array.into_pyarray(py).into_any().unbind())
}

/// The per-scheme part of the bindings: numpy arrays in and out, and the batch's tag read for
/// Python.
pub trait PyScheme: Scheme {
    /// Plaintexts of the rows of `values`, encoded as the library does for this scheme.
    fn encode(ctx: &Arc<Self>, values: &Bound<'_, PyAny>, at: EncodeAt) -> PyResult<Vec<Self::Plaintext>>;

    /// The slot values of decrypted plaintexts, as a 2-D array.
    fn decode(py: Python<'_>, ctx: &Arc<Self>, plains: Vec<Self::Plaintext>, how: DecodeAs) -> PyResult<PyObject>;

    /// How to encode a plaintext operand of `a` (CKKS: at a's slot count; `add_plain` also at
    /// a's scale).
    fn operand_at(a: &CiphertextBatch<impl Backend, Self>, for_add: bool) -> EncodeAt;

    /// The scale of a batch (CKKS).
    fn batch_scale<B: Backend>(batch: &CiphertextBatch<B, Self>) -> Option<f64>;

    /// The slots of a batch.
    fn batch_slots<B: Backend>(batch: &CiphertextBatch<B, Self>) -> usize;
}

/// BGV and BFV: integers in [0, t) (or signed in (-t/2, t/2]) through the `BatchEncoder`.
fn encode_integers<C: ExactScheme>(ctx: &Arc<C>, values: &Bound<'_, PyAny>) -> PyResult<Vec<Plaintext>> {
    let (array, kind) = as_2d(values)?;
    let encoder = BatchEncoder::new(ctx);
    let signed = match kind {
        'u' => false,
        'b' => false,
        // Signed arrays holding no negative value are read as [0, t), like unsigned ones.
        'i' => array.call_method0("min")?.extract::<i64>().map(|m| m < 0).unwrap_or(false),
        other => {
            return Err(error(
                Kind::Plaintext,
                format!(
                    "{} encrypts integers; got an array of dtype kind {other:?} (use an integer dtype: values in [0, \
                     t) or signed values in (-t/2, t/2])",
                    C::NAME
                ),
            ))
        }
    };
    let result: SResult<Vec<Plaintext>> = if signed {
        rows::<i64>(&array, "int64")?.iter().map(|r| encoder.encode_signed(r)).collect()
    } else {
        rows::<u64>(&array, "uint64")?.iter().map(|r| encoder.encode(r)).collect()
    };
    result.map_err(crate::errors::scheme_error)
}

fn decode_integers<C: ExactScheme>(
    py: Python<'_>,
    ctx: &Arc<C>,
    plains: Vec<Plaintext>,
    how: DecodeAs,
) -> PyResult<PyObject> {
    let encoder = BatchEncoder::new(ctx);
    if how.signed {
        let rows = py.allow_threads(|| plains.iter().map(|p| encoder.decode_signed(p)).collect::<SResult<Vec<_>>>());
        to_numpy(py, rows.map_err(crate::errors::scheme_error)?)
    } else {
        let rows = py.allow_threads(|| plains.iter().map(|p| encoder.decode(p)).collect::<SResult<Vec<_>>>());
        to_numpy(py, rows.map_err(crate::errors::scheme_error)?)
    }
}

macro_rules! integer_scheme {
    ($ctx:ty) => {
        impl PyScheme for $ctx {
            fn encode(ctx: &Arc<Self>, values: &Bound<'_, PyAny>, _at: EncodeAt) -> PyResult<Vec<Plaintext>> {
                encode_integers(ctx, values)
            }
            fn decode(py: Python<'_>, ctx: &Arc<Self>, plains: Vec<Plaintext>, how: DecodeAs) -> PyResult<PyObject> {
                decode_integers(py, ctx, plains, how)
            }
            fn operand_at(_a: &CiphertextBatch<impl Backend, Self>, _for_add: bool) -> EncodeAt {
                EncodeAt::default()
            }
            fn batch_scale<B: Backend>(_batch: &CiphertextBatch<B, Self>) -> Option<f64> {
                None
            }
            fn batch_slots<B: Backend>(batch: &CiphertextBatch<B, Self>) -> usize {
                batch.context().slots()
            }
        }
    };
}
integer_scheme!(BgvContext);
integer_scheme!(BfvContext);

impl PyScheme for CkksContext {
    fn encode(ctx: &Arc<Self>, values: &Bound<'_, PyAny>, at: EncodeAt) -> PyResult<Vec<CkksPlaintext>> {
        let (array, kind) = as_2d(values)?;
        let encoder = Encoder::new(ctx);
        let scale = at.scale.unwrap_or_else(|| ctx.default_scale());
        let slots = at.slots.unwrap_or_else(|| ctx.max_slots());
        let result: SResult<Vec<CkksPlaintext>> = match kind {
            'c' => rows::<Complex64>(&array, "complex128")?
                .iter()
                .map(|r| encoder.encode_sparse(r, slots, scale))
                .collect(),
            'f' | 'i' | 'u' | 'b' => rows::<f64>(&array, "float64")?
                .iter()
                .map(|r| {
                    let complex: Vec<Complex64> = r.iter().map(|&x| Complex64::new(x, 0.0)).collect();
                    encoder.encode_sparse(&complex, slots, scale)
                })
                .collect(),
            other => {
                return Err(error(
                    Kind::Plaintext,
                    format!("CKKS encrypts real or complex numbers; got an array of dtype kind {other:?}"),
                ))
            }
        };
        result.map_err(crate::errors::scheme_error)
    }

    fn decode(py: Python<'_>, ctx: &Arc<Self>, plains: Vec<CkksPlaintext>, how: DecodeAs) -> PyResult<PyObject> {
        let encoder = Encoder::new(ctx);
        if how.complex {
            let rows = py.allow_threads(|| plains.iter().map(|p| encoder.decode(p)).collect::<SResult<Vec<_>>>());
            to_numpy(py, rows.map_err(crate::errors::scheme_error)?)
        } else {
            let rows = py.allow_threads(|| plains.iter().map(|p| encoder.decode_real(p)).collect::<SResult<Vec<_>>>());
            to_numpy(py, rows.map_err(crate::errors::scheme_error)?)
        }
    }

    fn operand_at(a: &CiphertextBatch<impl Backend, Self>, for_add: bool) -> EncodeAt {
        let tag = a.tag();
        EncodeAt { scale: if for_add { Some(tag.scale) } else { None }, slots: Some(tag.slots) }
    }

    fn batch_scale<B: Backend>(batch: &CiphertextBatch<B, Self>) -> Option<f64> {
        Some(batch.tag().scale)
    }

    fn batch_slots<B: Backend>(batch: &CiphertextBatch<B, Self>) -> usize {
        batch.tag().slots
    }
}
