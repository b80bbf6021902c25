//! CKKS bootstrapping (`pimhe_schemes::ckks::bootstrap`): contexts of the INSECURE
//! bootstrappable presets, `BootstrapPlan` (what a bootstrapping needs, before any key: its
//! levels, rotations and Galois keys, which it generates from a secret key), and
//! `Evaluator.bootstrap`, whose transforms `ctx.evaluator(..., bootstrap=plan)` prepares once,
//! as OpenFHE's `EvalBootstrapSetup` / `EvalBootstrapKeyGen` / `EvalBootstrap` do. Only the
//! library's public bootstrapping API is bound (the plan of `BootstrapConfig::default()`), so
//! that its internals can change underneath.

use std::sync::Arc;

use pyo3::prelude::*;

use std::path::PathBuf;

use pyo3::types::{PyBytes, PyType};

use pimhe_schemes::ckks::bootstrap::{
    insecure_parameters, insecure_test_parameters, secure_parameters, BootstrapConfig, BootstrapPlan as Plan,
    Bootstrapper, EncapsulationKeys as Keys, PRESET_LEVELS_AFTER,
};
use pimhe_schemes::ckks::CkksContext;
use pimhe_schemes::rlwe::KeyGenerator;
use pimhe_schemes::serial::Access;
use pimhe_schemes::SchemeError;

use crate::backend::resolve;
use crate::batch::{unwrap, CiphertextBatch};
use crate::context::{AnyContext, Context};
use crate::crypto::Decryptor;
use crate::errors::{error, mismatch, scheme_error, IntoPy, Kind};
use crate::evaluator::{unary, EvFam, Evaluator};
use crate::family::{ByScheme, Dev, DevFamily, OnDev};
use crate::keys::{key_of, sampler, GaloisKeys, SecretF, SecretKey};
use crate::on_dev;
use crate::serial::{not_picklable, read_file, write_file};

/// A CKKS context of the library's INSECURE bootstrapping presets: with `levels_after` None,
/// the test preset of N = 1024 or 2048 (`insecure_test_parameters`: 2 rescalings left after a
/// bootstrapping); with `levels_after`, `insecure_parameters(n, levels_after)` for N = 2^10 to
/// 2^14 and 1 to 30 rescalings left. A sparse ternary secret (Hamming weight 16), scale 2^50,
/// a 60-bit base: tests and experiments only, no security at all.
#[pyfunction]
#[pyo3(signature = (n=1024, *, levels_after=None))]
pub fn insecure_bootstrap_context(py: Python<'_>, n: usize, levels_after: Option<usize>) -> PyResult<Context> {
    let ctx = py
        .allow_threads(|| {
            let params = match levels_after {
                None => insecure_test_parameters(n)?,
                Some(levels) => insecure_parameters(n, levels)?,
            };
            CkksContext::new(params)
        })
        .py_err()?;
    Ok(Context { inner: AnyContext::Ckks(ctx) })
}

/// What bootstrapping under a CKKS context needs, derived before any key exists: the levels it
/// consumes and the level of its output, the rotations its transforms use and the Galois keys
/// (rotations and conjugation) for them. `BootstrapPlan(ctx)` fails with a `ParameterError`
/// for a context that cannot bootstrap (a dense secret, too few levels, a scale too close to
/// q0): make one with `pimhe.ckks.bootstrap.insecure_context`. `slots`: the slot count of the
/// ciphertexts it bootstraps, N/2 (full packing, the default) or a power of two below it
/// (sparse packing: a few more rotations, one EvalMod instead of two).
#[pyclass(frozen, module = "pimhe._pimhe")]
pub struct BootstrapPlan {
    plan: Plan,
    ctx: Arc<CkksContext>,
}

#[pymethods]
impl BootstrapPlan {
    #[new]
    #[pyo3(signature = (ctx, *, slots=None))]
    fn new(py: Python<'_>, ctx: &Context, slots: Option<usize>) -> PyResult<Self> {
        let ctx = ctx.inner.of::<CkksContext>("bootstrapping")?.clone();
        let config = BootstrapConfig { slots, ..BootstrapConfig::for_parameters(ctx.params()) };
        let plan = py.allow_threads(|| Plan::new(&ctx, &config)).py_err()?;
        Ok(Self { plan, ctx })
    }

    /// The slot count of the ciphertexts it bootstraps (N/2: full packing).
    #[getter]
    fn slots(&self) -> usize {
        self.plan.slots()
    }

    /// The level of a bootstrapped ciphertext (the input may be at any level).
    #[getter]
    fn output_level(&self) -> usize {
        self.plan.output_level()
    }

    /// Rescalings a bootstrapped ciphertext has left.
    #[getter]
    fn depth_after(&self) -> usize {
        self.plan.depth_after()
    }

    /// Rescalings one bootstrapping consumes (CoeffToSlot, EvalMod, SlotToCoeff).
    #[getter]
    fn depth(&self) -> usize {
        self.ctx.depth_left(self.ctx.max_level()) - self.plan.depth_after()
    }

    /// The Hamming weight of the context's sparse secret, or of the ephemeral one under
    /// encapsulation, which bounds EvalMod's range.
    #[getter]
    fn hamming_weight(&self) -> usize {
        self.plan.hamming_weight()
    }

    /// Whether the context's secret is dense, so that bootstrapping passes through an ephemeral
    /// sparse secret and needs `encapsulation_keygen`'s keys.
    #[getter]
    fn uses_encapsulation(&self) -> bool {
        self.plan.uses_encapsulation()
    }

    /// The encapsulation keys of the secret key (made under the plan's context), for a plan
    /// that `uses_encapsulation`; on `backend` (default: the CPU); `seed` for tests only.
    #[pyo3(signature = (secret_key, *, seed=None, backend=None))]
    fn encapsulation_keygen(
        &self,
        py: Python<'_>,
        secret_key: &SecretKey,
        seed: Option<u64>,
        backend: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<EncapsulationKeys> {
        if !self.plan.uses_encapsulation() {
            return Err(error(
                Kind::Parameter,
                "this plan's context has a sparse secret: it bootstraps without encapsulation keys",
            ));
        }
        let secret = key_of::<SecretF, CkksContext>(&secret_key.inner, &self.ctx, "secret key")?;
        let sampler = sampler(seed)?;
        let weight = self.plan.hamming_weight();
        let handle = resolve(py, backend, &AnyContext::Ckks(self.ctx.clone()))?;
        let keys = on_dev!(&handle, B, dev => py.allow_threads(|| {
            KeyGenerator::with_sampler(&**dev, &self.ctx, sampler).encapsulation_keys(secret, weight)
        }))
        .py_err()?;
        Ok(EncapsulationKeys { keys })
    }

    /// The slot rotation steps the transforms use, sorted.
    #[getter]
    fn rotations(&self) -> Vec<i64> {
        self.plan.rotations()
    }

    /// The Galois elements whose keys bootstrapping needs: the rotations and conjugation.
    #[getter]
    fn galois_elements(&self) -> Vec<usize> {
        self.plan.galois_elements()
    }

    /// Number of Galois keys (`len(galois_elements)`).
    #[getter]
    fn key_count(&self) -> usize {
        self.plan.galois_elements().len()
    }

    /// Size of those keys in bytes, in memory and in their full encoding (the compressed one
    /// is about half).
    #[getter]
    fn galois_key_bytes(&self) -> usize {
        self.plan.galois_key_bytes()
    }

    /// The client's check that every ciphertext of `a` is within EvalMod's range, with its
    /// `decryptor` (the secret key's): message coefficients at most q0 / 2^5. Beyond it
    /// bootstrapping returns wrong values with no sign of it, and an evaluator, without the
    /// secret key, cannot tell; so a client runs this on what it sends to be bootstrapped.
    /// Raises `ParameterError` saying by how much to scale the values down.
    fn check_message_range(&self, py: Python<'_>, decryptor: &Decryptor, a: &CiphertextBatch) -> PyResult<()> {
        let ByScheme::Ckks(per_dev) = &decryptor.inner else {
            return Err(mismatch(format!("the decryptor is for {}; this plan is CKKS", decryptor.inner.label())));
        };
        on_dev!(per_dev, B, d => {
            let batch = unwrap::<CkksContext, B>(a, d.backend(), "the batch")?;
            d.with_value(|dec| py.allow_threads(|| self.plan.check_message_range(dec, batch))).py_err()
        })
    }

    /// Exactly the plan's Galois keys, from the secret key (made under the plan's context), on
    /// `backend` (default: the CPU). They are public material: save them with
    /// `save(path, compressed=True)`; the secret key is not part of them. `seed` makes them
    /// reproducible (tests only). Bootstrapping also needs the relinearization key.
    #[pyo3(signature = (secret_key, *, seed=None, backend=None))]
    fn keygen(
        &self,
        py: Python<'_>,
        secret_key: &SecretKey,
        seed: Option<u64>,
        backend: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<GaloisKeys> {
        let secret = key_of::<SecretF, CkksContext>(&secret_key.inner, &self.ctx, "secret key")?;
        let sampler = sampler(seed)?;
        let elements = self.plan.galois_elements();
        let handle = resolve(py, backend, &AnyContext::Ckks(self.ctx.clone()))?;
        let keys = on_dev!(&handle, B, dev => py.allow_threads(|| {
            KeyGenerator::with_sampler(&**dev, &self.ctx, sampler).galois_keys(secret, &elements)
        }))
        .py_err()?;
        Ok(GaloisKeys { inner: ByScheme::Ckks(keys) })
    }

    fn __repr__(&self) -> String {
        let params = self.ctx.params();
        format!(
            "BootstrapPlan({}CKKS N={}: depth={}, output_level={}, depth_after={}, {} Galois keys, {:.1} MiB)",
            if params.security_bits().is_none() { "INSECURE " } else { "" },
            params.degree(),
            self.depth(),
            self.output_level(),
            self.depth_after(),
            self.key_count(),
            self.galois_key_bytes() as f64 / f64::from(1 << 20),
        )
    }
}

/// `Bootstrapper<B>`: a plan's transforms prepared on backend B.
pub struct BootF;
impl DevFamily for BootF {
    type On<B: Dev> = Bootstrapper<B>;
}

impl BootstrapPlan {
    /// The plan's transforms prepared on the evaluator `ev` (its backend, keys and context).
    /// Refuses an evaluator of another scheme or context, or one lacking a Galois key of the
    /// plan (the library lists them), the relinearization key (EvalMod multiplies) or, for a
    /// plan with encapsulation, its keys.
    pub fn prepare(
        &self,
        py: Python<'_>,
        ev: &ByScheme<EvFam>,
        has_relin_key: bool,
        encapsulation: Option<&EncapsulationKeys>,
    ) -> PyResult<OnDev<BootF>> {
        let ByScheme::Ckks(per_dev) = ev else {
            return Err(mismatch(format!("bootstrap= is for CKKS; this context is {}", ev.label())));
        };
        let encapsulation =
            match (self.plan.uses_encapsulation(), encapsulation) {
                (true, None) => return Err(error(
                    Kind::MissingKey,
                    "this plan's context has a dense secret, so bootstrapping passes through an ephemeral sparse one: \
                     pass encapsulation_keys=plan.encapsulation_keygen(secret_key) with bootstrap=",
                )),
                (false, Some(_)) => {
                    return Err(error(
                        Kind::Parameter,
                        "encapsulation_keys= is for a plan whose context has a dense secret; this one's is sparse",
                    ))
                }
                (_, keys) => keys.map(|k| &k.keys),
            };
        let prepared = on_dev!(per_dev, B, e => {
            let bootstrapper = e
                .with_value(|e| py.allow_threads(|| match encapsulation {
                    Some(keys) => Bootstrapper::with_encapsulation(e, self.plan.clone(), keys),
                    None => Bootstrapper::new(e, self.plan.clone()),
                }))
                .map_err(|e| match e {
                    // The library lists the elements; say how Python makes them.
                    SchemeError::KeySwitchingUnavailable(_) => {
                        error(Kind::MissingKey, format!("{e}; make them with galois_keys=plan.keygen(secret_key)"))
                    }
                    e => scheme_error(e),
                })?;
            B::wrap::<BootF>(bootstrapper)
        });
        if !has_relin_key {
            return Err(error(
                Kind::MissingKey,
                "bootstrapping needs the relinearization key (EvalMod multiplies): pass relin_key= with bootstrap=",
            ));
        }
        Ok(prepared)
    }
}

#[pymethods]
impl Evaluator {
    /// CKKS: refreshes every ciphertext of `a` to the plan's `output_level`, with the same slots
    /// (up to the bootstrapping error) at a's scale. Needs an evaluator made with
    /// `bootstrap=plan` (else a `MissingKeyError`). `a` may be at any level (it is brought to
    /// the lowest first), must be relinearized, pack the plan's `slots` and have a scale at most q0 / 2^5
    /// (else a `ParameterError`); its values must stay within EvalMod's range, which is not
    /// detectable here.
    fn bootstrap(&self, py: Python<'_>, a: &CiphertextBatch) -> PyResult<CiphertextBatch> {
        let per_dev = self.ckks("bootstrap")?;
        let prepared = self.bootstrapper.as_ref().ok_or_else(|| {
            error(
                Kind::MissingKey,
                "this evaluator has no bootstrapping set up: make it with ctx.evaluator(backend, relin_key=..., \
                 galois_keys=plan.keygen(secret_key), bootstrap=plan), plan = pimhe.BootstrapPlan(ctx)",
            )
        })?;
        on_dev!(per_dev, B, ev => {
            // Made on this evaluator's backend by `prepare`, so the variants agree.
            let bootstrapper = B::get::<BootF>(prepared)
                .ok_or_else(|| error(Kind::Base, "the bootstrapping was prepared on another backend"))?;
            unary::<CkksContext, B>(py, ev, a, |e, x| bootstrapper.bootstrap(e, x))
        })
    }
}

/// The keys of sparse-secret encapsulation (`plan.encapsulation_keygen(secret_key)`), which a
/// plan of a context with a dense secret needs (`plan.uses_encapsulation`): a switch to an
/// ephemeral sparse secret over q0 and back over the whole chain. Public material, saved and
/// loaded like Galois keys; the ephemeral secret itself is wiped once they are made.
#[pyclass(frozen, module = "pimhe._pimhe")]
pub struct EncapsulationKeys {
    pub(crate) keys: Keys,
}

#[pymethods]
impl EncapsulationKeys {
    /// The ephemeral secret's Hamming weight.
    #[getter]
    fn hamming_weight(&self) -> usize {
        self.keys.hamming_weight()
    }

    /// Size of both keys in bytes, in memory and in their full encoding.
    fn size_bytes(&self) -> usize {
        self.keys.size_bytes()
    }

    /// The keys in pimhe's binary format (kind 8); `compressed=True` writes the uniform parts
    /// as their seeds (about half the size; only for keys generated here).
    #[pyo3(signature = (compressed=false))]
    fn to_bytes<'py>(&self, py: Python<'py>, compressed: bool) -> PyResult<Bound<'py, PyBytes>> {
        Ok(PyBytes::new(py, &self.encode(compressed)?))
    }

    /// Writes `to_bytes(compressed)` to a file (`load` reads it).
    #[pyo3(signature = (path, compressed=false))]
    fn save(&self, py: Python<'_>, path: PathBuf, compressed: bool) -> PyResult<()> {
        write_file(py, path, &self.encode(compressed)?, Access::Public)
    }

    /// The keys of `ctx` in `data` (written by `to_bytes`, full or compressed).
    #[classmethod]
    fn from_bytes(_cls: &Bound<'_, PyType>, py: Python<'_>, ctx: &Context, data: &[u8]) -> PyResult<Self> {
        let ctx = ctx.inner.of::<CkksContext>("encapsulation keys")?.clone();
        Ok(Self { keys: py.allow_threads(|| Keys::from_bytes(&ctx, data)).py_err()? })
    }

    /// The keys of `ctx` in a file written by `save`.
    #[classmethod]
    fn load(cls: &Bound<'_, PyType>, py: Python<'_>, ctx: &Context, path: PathBuf) -> PyResult<Self> {
        Self::from_bytes(cls, py, ctx, &read_file(py, path)?)
    }

    /// Refused: the keys need their context; use `to_bytes` and `from_bytes(ctx, data)`.
    fn __reduce__(&self) -> PyResult<PyObject> {
        Err(not_picklable("EncapsulationKeys", "pimhe.EncapsulationKeys.from_bytes(ctx, data)"))
    }

    fn __repr__(&self) -> String {
        format!(
            "EncapsulationKeys(ephemeral Hamming weight {}, {:.1} MiB)",
            self.keys.hamming_weight(),
            self.keys.size_bytes() as f64 / f64::from(1 << 20)
        )
    }
}

impl EncapsulationKeys {
    fn encode(&self, compressed: bool) -> PyResult<Vec<u8>> {
        if compressed {
            self.keys.to_compressed_bytes().py_err()
        } else {
            Ok(self.keys.to_bytes())
        }
    }
}

/// A CKKS context of the library's 128-bit bootstrapping preset (`secure_parameters`): N =
/// 2^16, a uniform ternary secret, sparse-secret encapsulation, `levels_after` (1 to 12; None:
/// the preset's 9) rescalings left after each bootstrapping. Its keys take about 4 GB and a
/// bootstrapping tens of seconds on two cores.
#[pyfunction]
#[pyo3(signature = (*, levels_after=None))]
pub fn secure_bootstrap_context(py: Python<'_>, levels_after: Option<usize>) -> PyResult<Context> {
    let levels = levels_after.unwrap_or(PRESET_LEVELS_AFTER);
    let ctx = py.allow_threads(|| CkksContext::new(secure_parameters(levels)?.0)).py_err()?;
    Ok(Context { inner: AnyContext::Ckks(ctx) })
}
