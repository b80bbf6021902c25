//! `Context`: a scheme's parameters and their precomputations (the Rust `BgvContext`,
//! `BfvContext`, `CkksContext`), built from the library's presets or its parameter
//! constructors; and `presets()`.

use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::PyDict;

use pimhe_schemes::bfv::{BfvContext, BfvParameters};
use pimhe_schemes::bgv::{BgvContext, BgvParameters};
use pimhe_schemes::ckks::{CkksContext, CkksParameters};
use pimhe_schemes::encoder::ExactScheme;
use pimhe_schemes::rlwe::RlweScheme;

use crate::by_scheme;
use crate::errors::{parameter, IntoPy};
use crate::family::{ByScheme, Family, Scheme};

/// `Arc<S>`: a context of scheme S.
pub struct CtxF;
impl Family for CtxF {
    type Of<S: Scheme> = Arc<S>;
}

/// A context of any scheme.
pub type AnyContext = ByScheme<CtxF>;

impl Clone for AnyContext {
    fn clone(&self) -> Self {
        by_scheme!(self, S, c => S::wrap::<CtxF>(c.clone()))
    }
}

impl AnyContext {
    /// The context of scheme S, or the error naming both schemes.
    pub fn of<S: Scheme>(&self, what: &str) -> PyResult<&Arc<S>> {
        S::get::<CtxF>(self).ok_or_else(|| {
            crate::errors::mismatch(format!("{what} is for {}, this context is {}", S::LABEL, self.label()))
        })
    }

    /// The shared RLWE parameters.
    pub fn rlwe(&self) -> &pimhe_schemes::rlwe::RlweParameters {
        by_scheme!(self, S, c => c.rlwe().params())
    }

    /// The one-line description of the parameters, starting with INSECURE below 128-bit
    /// security (the test and bootstrapping presets) so that no printout hides it.
    pub fn describe(&self) -> String {
        let params = by_scheme!(self, S, c => c.params().to_string());
        if self.rlwe().security_bits().is_none() {
            format!("INSECURE {params}")
        } else {
            params
        }
    }
}

/// The parameters of one of the library's schemes, with everything precomputed from them.
/// Make one with `Context.bgv`, `Context.bfv` or `Context.ckks`; then `keygen`, `encryptor`,
/// `decryptor` and `evaluator` make the objects that work under it.
#[pyclass(frozen, module = "pimhe._pimhe")]
pub struct Context {
    pub(crate) inner: AnyContext,
}

/// BGV parameters from the arguments, as the library builds them.
fn integer_parameters(
    n: usize,
    plain_modulus: Option<u32>,
    prime_bits: Option<Vec<u32>>,
    special_prime_bits: Option<u32>,
    dnum: Option<usize>,
    insecure: bool,
) -> PyResult<BgvParameters> {
    let params = match (prime_bits, plain_modulus) {
        (None, None) => {
            if special_prime_bits.is_some() || dnum.is_some() {
                return Err(parameter("special_prime_bits and dnum need prime_bits"));
            }
            match dnum {
                Some(dnum) => BgvParameters::preset_with_dnum(n, dnum).py_err()?,
                None => BgvParameters::preset(n).py_err()?,
            }
        }
        // The preset of n with another plaintext modulus (the library's statistics build it so).
        (None, Some(t)) => {
            if special_prime_bits.is_some() || dnum.is_some() {
                return Err(parameter("special_prime_bits and dnum need prime_bits"));
            }
            BgvContext::preset_with_plain_modulus(n, t).py_err()?
        }
        (Some(bits), t) => {
            let t = t.unwrap_or(BgvParameters::preset(n).py_err()?.plain_modulus());
            match (special_prime_bits, dnum) {
                (Some(special), Some(dnum)) => BgvParameters::hybrid(n, t, &bits, special, dnum).py_err()?,
                (special, None) => BgvParameters::new(n, t, &bits, special).py_err()?,
                (None, Some(_)) => return Err(parameter("dnum needs special_prime_bits")),
            }
        }
    };
    Ok(if insecure { params.allow_insecure() } else { params })
}

#[pymethods]
impl Context {
    /// A BGV context. With only `n`, the library's 128-bit preset of ring degree n
    /// (`BgvParameters::preset`); `plain_modulus` replaces the preset's t; `prime_bits`
    /// (data prime sizes), `special_prime_bits` and `dnum` build a custom set
    /// (`BgvParameters::new` / `hybrid`); `insecure=True` allows sets below 128-bit security.
    #[staticmethod]
    #[pyo3(signature = (n=8192, plain_modulus=None, *, prime_bits=None, special_prime_bits=None, dnum=None, insecure=false))]
    fn bgv(
        py: Python<'_>,
        n: usize,
        plain_modulus: Option<u32>,
        prime_bits: Option<Vec<u32>>,
        special_prime_bits: Option<u32>,
        dnum: Option<usize>,
        insecure: bool,
    ) -> PyResult<Self> {
        let params = integer_parameters(n, plain_modulus, prime_bits, special_prime_bits, dnum, insecure)?;
        let ctx = py.allow_threads(|| BgvContext::new(params)).py_err()?;
        Ok(Self { inner: ByScheme::Bgv(ctx) })
    }

    /// A BFV context (full-RNS BEHZ): the same parameter sets and arguments as `bgv`.
    #[staticmethod]
    #[pyo3(signature = (n=8192, plain_modulus=None, *, prime_bits=None, special_prime_bits=None, dnum=None, insecure=false))]
    fn bfv(
        py: Python<'_>,
        n: usize,
        plain_modulus: Option<u32>,
        prime_bits: Option<Vec<u32>>,
        special_prime_bits: Option<u32>,
        dnum: Option<usize>,
        insecure: bool,
    ) -> PyResult<Self> {
        let params = integer_parameters(n, plain_modulus, prime_bits, special_prime_bits, dnum, insecure)?;
        let ctx = py.allow_threads(|| BfvContext::new(BfvParameters::from(params))).py_err()?;
        Ok(Self { inner: ByScheme::Bfv(ctx) })
    }

    /// A CKKS context. With only `n`, the library's 128-bit preset (`CkksParameters::preset`);
    /// any of `depth`, `scale_bits`, `first_prime_bits`, `dnum` builds a set with
    /// `CkksParameters::builder(n)` (whose defaults fill the rest: depth 1, scale 2^40, a 60-bit
    /// base); `insecure=True` allows sets below 128-bit security.
    #[staticmethod]
    #[pyo3(signature = (n=16384, *, scale_bits=None, depth=None, first_prime_bits=None, dnum=None, insecure=false))]
    fn ckks(
        py: Python<'_>,
        n: usize,
        scale_bits: Option<u32>,
        depth: Option<usize>,
        first_prime_bits: Option<u32>,
        dnum: Option<usize>,
        insecure: bool,
    ) -> PyResult<Self> {
        let custom = scale_bits.is_some() || depth.is_some() || first_prime_bits.is_some() || dnum.is_some();
        let ctx = py
            .allow_threads(|| {
                let params = if custom || insecure {
                    let mut builder = CkksParameters::builder(n);
                    if let Some(d) = depth {
                        builder = builder.depth(d);
                    }
                    if let Some(b) = scale_bits {
                        builder = builder.scale_bits(b);
                    }
                    if let Some(b) = first_prime_bits {
                        builder = builder.first_prime_bits(b);
                    }
                    if let Some(d) = dnum {
                        builder = builder.dnum(d);
                    }
                    if insecure {
                        builder = builder.allow_insecure();
                    }
                    builder.build()?
                } else {
                    CkksParameters::preset(n)?
                };
                CkksContext::new(params)
            })
            .py_err()?;
        Ok(Self { inner: ByScheme::Ckks(ctx) })
    }

    /// "bgv", "bfv" or "ckks".
    #[getter]
    fn scheme(&self) -> &'static str {
        by_scheme!(&self.inner, S, _c => S::NAME)
    }

    /// Ring degree N.
    #[getter]
    fn n(&self) -> usize {
        self.inner.rlwe().degree()
    }

    /// Plaintext slots per ciphertext: N for BGV and BFV, N/2 for CKKS.
    #[getter]
    fn slots(&self) -> usize {
        match &self.inner {
            ByScheme::Bgv(c) => c.slots(),
            ByScheme::Bfv(c) => c.slots(),
            ByScheme::Ckks(c) => c.max_slots(),
        }
    }

    /// The data primes (a fresh ciphertext holds all of them).
    #[getter]
    fn primes(&self) -> Vec<u32> {
        self.inner.rlwe().data_primes().to_vec()
    }

    /// The special (key-switching) primes; empty without relinearization.
    #[getter]
    fn special_primes(&self) -> Vec<u32> {
        self.inner.rlwe().special_primes().to_vec()
    }

    /// Number of key-switching digits.
    #[getter]
    fn dnum(&self) -> usize {
        self.inner.rlwe().dnum()
    }

    /// The level of fresh ciphertexts (number of data primes minus one).
    #[getter]
    fn max_level(&self) -> usize {
        self.inner.rlwe().max_level()
    }

    /// The lowest level a ciphertext can reach: 0, or for CKKS the level of the base primes
    /// alone (no rescaling left; where bootstrapping starts from).
    #[getter]
    fn min_level(&self) -> usize {
        match &self.inner {
            ByScheme::Ckks(c) => c.min_level(),
            _ => 0,
        }
    }

    /// Total modulus size in bits (every prime, the special primes included).
    #[getter]
    fn log_q(&self) -> u32 {
        self.inner.rlwe().total_bits()
    }

    /// 128 when the parameters meet the HomomorphicEncryption.org bound, else None.
    #[getter]
    fn security_bits(&self) -> Option<u32> {
        self.inner.rlwe().security_bits()
    }

    /// The plaintext modulus t (BGV, BFV); None for CKKS.
    #[getter]
    fn plain_modulus(&self) -> Option<u32> {
        match &self.inner {
            ByScheme::Bgv(c) => Some(c.plain_modulus().value()),
            ByScheme::Bfv(c) => Some(c.plain_modulus().value()),
            ByScheme::Ckks(_) => None,
        }
    }

    /// The default scale 2^scale_bits of fresh encryptions (CKKS); None for BGV and BFV.
    #[getter]
    fn scale(&self) -> Option<f64> {
        match &self.inner {
            ByScheme::Ckks(c) => Some(c.default_scale()),
            _ => None,
        }
    }

    /// log2 of the default scale (CKKS); None for BGV and BFV.
    #[getter]
    fn scale_bits(&self) -> Option<u32> {
        match &self.inner {
            ByScheme::Ckks(c) => Some(c.params().scale_bits()),
            _ => None,
        }
    }

    /// Multiplicative depth: rescalings a fresh ciphertext allows (CKKS); None for BGV and BFV.
    #[getter]
    fn depth(&self) -> Option<usize> {
        match &self.inner {
            ByScheme::Ckks(c) => Some(c.params().depth()),
            _ => None,
        }
    }

    /// CKKS: the Galois elements of rotations by `steps` (and conjugation), as `keygen` takes them.
    #[pyo3(signature = (steps, conjugation=false))]
    fn galois_elements(&self, steps: Vec<i64>, conjugation: bool) -> PyResult<Vec<usize>> {
        Ok(self.inner.of::<CkksContext>("galois_elements (slot rotations)")?.galois_elements(&steps, conjugation))
    }

    fn __repr__(&self) -> String {
        format!("Context({})", self.inner.describe())
    }

    fn __str__(&self) -> String {
        self.inner.describe()
    }
}

/// The library's presets of `scheme` ("bgv", "bfv" or "ckks"), smallest first, as dicts: the
/// rows `pimhe params --json` prints ([`pimhe_bench::params`]), each with its `scheme`.
#[pyfunction]
#[pyo3(signature = (scheme="bgv"))]
pub fn presets(py: Python<'_>, scheme: &str) -> PyResult<Vec<Py<PyDict>>> {
    let rows = py.allow_threads(|| pimhe_bench::params::presets(scheme)).py_err()?;
    let loads = py.import("json")?.getattr("loads")?;
    rows.json_lines()
        .py_err()?
        .lines()
        .map(|line| {
            let row = loads.call1((line,))?.downcast_into::<PyDict>()?;
            row.set_item("scheme", scheme)?;
            Ok(row.unbind())
        })
        .collect()
}
