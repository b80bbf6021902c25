//! `Evaluator`: the Rust `Evaluator<'a, B, S>` (the server side: public evaluation keys on a
//! backend) with its backend. Every operation takes and returns `CiphertextBatch`es; the
//! shared operations are written once, generic over scheme and backend, and the
//! scheme-specific ones (modulus switching, rescaling, rotations, polynomials) refuse other
//! schemes with a `MismatchError`.

use num_complex::Complex64;
use pyo3::prelude::*;

use pimhe_schemes::bgv::BgvContext;
use pimhe_schemes::ckks::polynomial::ChebyshevSeries;
use pimhe_schemes::ckks::CkksContext;
use pimhe_schemes::rlwe::{self, CiphertextBatch as Batch};
use pimhe_schemes::Result as SResult;

use crate::backend::resolve;
use crate::batch::{unwrap, wrap, CiphertextBatch};
use crate::bootstrap::{BootF, BootstrapPlan, EncapsulationKeys};
use crate::context::Context;
use crate::errors::{mismatch, IntoPy};
use crate::family::{Anchored, Borrower, ByScheme, Dev, DevFamily, Family, OnDev, Scheme};
use crate::keys::{key_of, GaloisF, GaloisKeys, RelinF, RelinKey};
use crate::polynomial::Chebyshev;
use crate::scheme::PyScheme;
use crate::{by_scheme, dispatch, on_dev};

/// `Evaluator<'a, B, S>` for every `'a`.
pub struct EvL<S>(std::marker::PhantomData<S>);
impl<B: Dev, S: Scheme> Borrower<B> for EvL<S> {
    type At<'a> = rlwe::Evaluator<'a, B, S>;
}
type Ev<B, S> = Anchored<B, EvL<S>>;

pub struct EvF<S>(std::marker::PhantomData<S>);
impl<S: Scheme> DevFamily for EvF<S> {
    type On<B: Dev> = Ev<B, S>;
}
pub struct EvFam;
impl Family for EvFam {
    type Of<S: Scheme> = OnDev<EvF<S>>;
}

/// Homomorphic operations on ciphertext batches with public material only (the server side):
/// the relinearization and Galois keys it was given, resident on its backend. Make one with
/// `ctx.evaluator(backend, relin_key=..., galois_keys=...)`. Two-operand operations need
/// batches of the same count; plaintext operands (numpy arrays) are one row for all
/// ciphertexts or one row per ciphertext.
#[pyclass(frozen, module = "pimhe._pimhe")]
pub struct Evaluator {
    /// The prepared bootstrapping (`bootstrap=`), declared first so that its backend buffers
    /// are freed before the backend the evaluator holds.
    pub(crate) bootstrapper: Option<OnDev<BootF>>,
    inner: ByScheme<EvFam>,
}

#[pymethods]
impl Context {
    /// An evaluator on `backend` (default: the CPU) with the evaluation keys given (uploaded to
    /// the backend once, here). CKKS: `bootstrap` (a `BootstrapPlan` of this context) prepares
    /// its transforms here, for `Evaluator.bootstrap`; it needs `relin_key` and the plan's
    /// Galois keys (`plan.keygen(secret_key)`), and for a dense secret `encapsulation_keys`
    /// (`plan.encapsulation_keygen(secret_key)`), else a `MissingKeyError` naming what is missing.
    #[pyo3(signature = (backend=None, relin_key=None, galois_keys=None, bootstrap=None, encapsulation_keys=None))]
    fn evaluator(
        &self,
        py: Python<'_>,
        backend: Option<&Bound<'_, PyAny>>,
        relin_key: Option<&RelinKey>,
        galois_keys: Option<&GaloisKeys>,
        bootstrap: Option<&BootstrapPlan>,
        encapsulation_keys: Option<&EncapsulationKeys>,
    ) -> PyResult<Evaluator> {
        let handle = resolve(py, backend, &self.inner)?;
        let inner = by_scheme!(&self.inner, S, ctx => on_dev!(handle, B, dev => {
            let relin = relin_key.map(|k| key_of::<RelinF, S>(&k.inner, ctx, "relinearization key")).transpose()?;
            let galois = galois_keys.map(|k| key_of::<GaloisF, S>(&k.inner, ctx, "Galois keys")).transpose()?;
            let anchored = Anchored::<B, EvL<S>>::make(dev, |b| {
                py.allow_threads(|| -> SResult<_> {
                    let mut ev = rlwe::Evaluator::new(b, ctx);
                    if let Some(k) = relin {
                        ev = ev.with_relin_key(k)?;
                    }
                    if let Some(k) = galois {
                        ev = ev.with_galois_keys(k)?;
                    }
                    Ok(ev)
                })
                .py_err()
            })?;
            Ok::<_, PyErr>(S::wrap::<EvFam>(B::wrap::<EvF<S>>(anchored)))
        }))?;
        if bootstrap.is_none() && encapsulation_keys.is_some() {
            return Err(crate::errors::error(
                crate::errors::Kind::Parameter,
                "encapsulation_keys= belongs with bootstrap=plan; pass both",
            ));
        }
        let bootstrapper =
            bootstrap.map(|plan| plan.prepare(py, &inner, relin_key.is_some(), encapsulation_keys)).transpose()?;
        Ok(Evaluator { bootstrapper, inner })
    }
}

/// `op(a)` with the GIL released.
pub(crate) fn unary<S: PyScheme, B: Dev>(
    py: Python<'_>,
    ev: &Ev<B, S>,
    a: &CiphertextBatch,
    op: impl FnOnce(&rlwe::Evaluator<'_, B, S>, &Batch<B, S>) -> SResult<Batch<B, S>> + Send,
) -> PyResult<CiphertextBatch> {
    let x = unwrap::<S, B>(a, ev.backend(), "the batch")?;
    let out = ev.with_value(|e| py.allow_threads(|| op(e, x))).py_err()?;
    Ok(wrap::<S, B>(out, ev.backend().clone()))
}

/// `op(a, b)` with the GIL released.
fn binary<S: PyScheme, B: Dev>(
    py: Python<'_>,
    ev: &Ev<B, S>,
    a: &CiphertextBatch,
    b: &CiphertextBatch,
    op: impl FnOnce(&rlwe::Evaluator<'_, B, S>, &Batch<B, S>, &Batch<B, S>) -> SResult<Batch<B, S>> + Send,
) -> PyResult<CiphertextBatch> {
    let x = unwrap::<S, B>(a, ev.backend(), "the first batch")?;
    let y = unwrap::<S, B>(b, ev.backend(), "the second batch")?;
    let out = ev.with_value(|e| py.allow_threads(|| op(e, x, y))).py_err()?;
    Ok(wrap::<S, B>(out, ev.backend().clone()))
}

/// `a (+|*) m` for plaintext rows `values`, encoded as the scheme does for a's operand.
fn plain_op<S: PyScheme, B: Dev>(
    py: Python<'_>,
    ev: &Ev<B, S>,
    a: &CiphertextBatch,
    values: &Bound<'_, PyAny>,
    add: bool,
) -> PyResult<CiphertextBatch>
where
    S::Plaintext: Send + Sync,
{
    let x = unwrap::<S, B>(a, ev.backend(), "the batch")?;
    let ctx = ev.with_value(|e| e.context().clone());
    let plains = S::encode(&ctx, values, S::operand_at(x, add))?;
    let out = ev
        .with_value(|e| py.allow_threads(|| if add { e.add_plain(x, &plains) } else { e.mul_plain(x, &plains) }))
        .py_err()?;
    Ok(wrap::<S, B>(out, ev.backend().clone()))
}

/// Several results.
fn many<S: PyScheme, B: Dev>(
    py: Python<'_>,
    ev: &Ev<B, S>,
    a: &CiphertextBatch,
    op: impl FnOnce(&rlwe::Evaluator<'_, B, S>, &Batch<B, S>) -> SResult<Vec<Batch<B, S>>> + Send,
) -> PyResult<Vec<CiphertextBatch>> {
    let x = unwrap::<S, B>(a, ev.backend(), "the batch")?;
    let out = ev.with_value(|e| py.allow_threads(|| op(e, x))).py_err()?;
    Ok(out.into_iter().map(|b| wrap::<S, B>(b, ev.backend().clone())).collect())
}

impl Evaluator {
    fn bgv(&self, operation: &str) -> PyResult<&OnDev<EvF<BgvContext>>> {
        match &self.inner {
            ByScheme::Bgv(e) => Ok(e),
            other => Err(mismatch(format!("{operation} is a BGV operation; this evaluator is {}", other.label()))),
        }
    }

    pub(crate) fn ckks(&self, operation: &str) -> PyResult<&OnDev<EvF<CkksContext>>> {
        match &self.inner {
            ByScheme::Ckks(e) => Ok(e),
            other => Err(mismatch(format!("{operation} is a CKKS operation; this evaluator is {}", other.label()))),
        }
    }
}

#[pymethods]
impl Evaluator {
    /// Slot-wise `a + b` (BGV aligns correction factors, CKKS levels; scales must match).
    fn add(&self, py: Python<'_>, a: &CiphertextBatch, b: &CiphertextBatch) -> PyResult<CiphertextBatch> {
        dispatch!(&self.inner, S, B, ev => binary::<S, B>(py, ev, a, b, |e, x, y| e.add(x, y)))
    }

    /// Slot-wise `a - b`.
    fn sub(&self, py: Python<'_>, a: &CiphertextBatch, b: &CiphertextBatch) -> PyResult<CiphertextBatch> {
        dispatch!(&self.inner, S, B, ev => binary::<S, B>(py, ev, a, b, |e, x, y| e.sub(x, y)))
    }

    /// Slot-wise `-a`.
    fn negate(&self, py: Python<'_>, a: &CiphertextBatch) -> PyResult<CiphertextBatch> {
        dispatch!(&self.inner, S, B, ev => unary::<S, B>(py, ev, a, |e, x| e.negate(x)))
    }

    /// Slot-wise `a * b`: 3-component ciphertexts (`relinearize` brings them back to 2).
    fn multiply(&self, py: Python<'_>, a: &CiphertextBatch, b: &CiphertextBatch) -> PyResult<CiphertextBatch> {
        dispatch!(&self.inner, S, B, ev => binary::<S, B>(py, ev, a, b, |e, x, y| e.multiply(x, y)))
    }

    /// Slot-wise `a * a` (the library's product of a batch with itself).
    fn square(&self, py: Python<'_>, a: &CiphertextBatch) -> PyResult<CiphertextBatch> {
        dispatch!(&self.inner, S, B, ev => unary::<S, B>(py, ev, a, |e, x| e.multiply(x, x)))
    }

    /// From 3 components back to 2 (needs the relinearization key).
    fn relinearize(&self, py: Python<'_>, a: &CiphertextBatch) -> PyResult<CiphertextBatch> {
        dispatch!(&self.inner, S, B, ev => unary::<S, B>(py, ev, a, |e, x| e.relinearize(x)))
    }

    /// The slot-wise sum of all ciphertexts of the batch, as a batch of one (an encrypted
    /// aggregate over users).
    fn sum(&self, py: Python<'_>, a: &CiphertextBatch) -> PyResult<CiphertextBatch> {
        dispatch!(&self.inner, S, B, ev => unary::<S, B>(py, ev, a, |e, x| e.sum(x)))
    }

    /// Slot-wise `a + m` for a numpy array m (one row for all ciphertexts, or one per
    /// ciphertext). CKKS encodes m at a's scale and slot count.
    fn add_plain(&self, py: Python<'_>, a: &CiphertextBatch, values: &Bound<'_, PyAny>) -> PyResult<CiphertextBatch> {
        dispatch!(&self.inner, S, B, ev => plain_op::<S, B>(py, ev, a, values, true))
    }

    /// Slot-wise `a * m` for a numpy array m. CKKS encodes m at the context's default scale
    /// (the scales multiply: rescale afterwards).
    fn mul_plain(&self, py: Python<'_>, a: &CiphertextBatch, values: &Bound<'_, PyAny>) -> PyResult<CiphertextBatch> {
        dispatch!(&self.inner, S, B, ev => plain_op::<S, B>(py, ev, a, values, false))
    }

    /// The automorphism X -> X^k of every ciphertext (needs the Galois key of element k):
    /// for CKKS `rotate` and `conjugate` name the common ones.
    fn automorphism(&self, py: Python<'_>, a: &CiphertextBatch, k: usize) -> PyResult<CiphertextBatch> {
        dispatch!(&self.inner, S, B, ev => unary::<S, B>(py, ev, a, |e, x| e.automorphism(x, k)))
    }

    /// `automorphism` for each Galois element, hoisted (one decomposition shared).
    fn automorphisms(
        &self,
        py: Python<'_>,
        a: &CiphertextBatch,
        elements: Vec<usize>,
    ) -> PyResult<Vec<CiphertextBatch>> {
        dispatch!(&self.inner, S, B, ev => many::<S, B>(py, ev, a, |e, x| e.automorphisms(x, &elements)))
    }

    /// Whether the evaluator holds the Galois key of element k.
    fn has_galois_key(&self, k: usize) -> bool {
        dispatch!(&self.inner, S, B, ev => ev.with_value(|e| e.has_galois_key(k)))
    }

    /// BGV: drops the last prime (shrinking the noise with it).
    fn mod_switch_to_next(&self, py: Python<'_>, a: &CiphertextBatch) -> PyResult<CiphertextBatch> {
        on_dev!(self.bgv("mod_switch_to_next")?, B, ev => unary::<BgvContext, B>(py, ev, a, |e, x| e.mod_switch_to_next(x)))
    }

    /// BGV: switches down to `level`.
    fn mod_switch_to(&self, py: Python<'_>, a: &CiphertextBatch, level: usize) -> PyResult<CiphertextBatch> {
        on_dev!(self.bgv("mod_switch_to")?, B, ev => unary::<BgvContext, B>(py, ev, a, |e, x| e.mod_switch_to(x, level)))
    }

    /// CKKS: divides by the primes of the current level (the scale with them).
    fn rescale(&self, py: Python<'_>, a: &CiphertextBatch) -> PyResult<CiphertextBatch> {
        on_dev!(self.ckks("rescale")?, B, ev => unary::<CkksContext, B>(py, ev, a, |e, x| e.rescale(x)))
    }

    /// CKKS: multiply, relinearize and rescale (the usual product).
    fn multiply_relin_rescale(
        &self,
        py: Python<'_>,
        a: &CiphertextBatch,
        b: &CiphertextBatch,
    ) -> PyResult<CiphertextBatch> {
        on_dev!(self.ckks("multiply_relin_rescale")?, B, ev => binary::<CkksContext, B>(py, ev, a, b, |e, x, y| e.multiply_relin_rescale(x, y)))
    }

    /// CKKS: the same ciphertexts over the primes of a lower level (scale unchanged).
    fn drop_to_level(&self, py: Python<'_>, a: &CiphertextBatch, level: usize) -> PyResult<CiphertextBatch> {
        on_dev!(self.ckks("drop_to_level")?, B, ev => unary::<CkksContext, B>(py, ev, a, |e, x| e.drop_to_level(x, level)))
    }

    /// CKKS: a brought down to `level` with its scale moved to `scale` (to add batches that
    /// took different paths).
    fn match_scale(&self, py: Python<'_>, a: &CiphertextBatch, level: usize, scale: f64) -> PyResult<CiphertextBatch> {
        on_dev!(self.ckks("match_scale")?, B, ev => unary::<CkksContext, B>(py, ev, a, |e, x| e.match_scale(x, level, scale)))
    }

    /// CKKS: adds the constant c (real or complex) to every slot.
    fn add_const(&self, py: Python<'_>, a: &CiphertextBatch, c: Complex64) -> PyResult<CiphertextBatch> {
        on_dev!(self.ckks("add_const")?, B, ev => unary::<CkksContext, B>(py, ev, a, |e, x| e.add_const(x, c)))
    }

    /// CKKS: multiplies every slot by c. An integer (a real whole number such as 3, -2 or 3.0,
    /// below 2^53 in magnitude) multiplies the ciphertext as it is: no level is used and the scale
    /// stays, so do not rescale after it (that would divide the values by the primes of a level).
    /// Any other constant (0.25, 1.5, 2+1j) is encoded at the scale of the primes the next
    /// `rescale` drops: the result's scale is a's times those primes, and `rescale` right after it
    /// brings the scale back to a's (using a level).
    fn mul_const(&self, py: Python<'_>, a: &CiphertextBatch, c: Complex64) -> PyResult<CiphertextBatch> {
        on_dev!(self.ckks("mul_const")?, B, ev => unary::<CkksContext, B>(py, ev, a, |e, x| e.mul_const(x, c)))
    }

    /// CKKS: rotates the slots left by `steps` (right when negative); needs its Galois key
    /// (`ctx.keygen(rotations=[steps])`). A rotation by a multiple of N/2 (0 among them) leaves
    /// every slot in place: it returns a copy and needs no key.
    fn rotate(&self, py: Python<'_>, a: &CiphertextBatch, steps: i64) -> PyResult<CiphertextBatch> {
        on_dev!(self.ckks("rotate")?, B, ev => unary::<CkksContext, B>(py, ev, a, |e, x| e.rotate(x, steps)))
    }

    /// CKKS: rotations by each of `steps`, hoisted, in the order of `steps` (a step that moves
    /// nothing gives a copy, as in `rotate`).
    fn rotate_hoisted(&self, py: Python<'_>, a: &CiphertextBatch, steps: Vec<i64>) -> PyResult<Vec<CiphertextBatch>> {
        on_dev!(self.ckks("rotate_hoisted")?, B, ev => many::<CkksContext, B>(py, ev, a, |e, x| e.rotate_hoisted(x, &steps)))
    }

    /// CKKS: the complex conjugate of every slot (`ctx.keygen(conjugation=True)`).
    fn conjugate(&self, py: Python<'_>, a: &CiphertextBatch) -> PyResult<CiphertextBatch> {
        on_dev!(self.ckks("conjugate")?, B, ev => unary::<CkksContext, B>(py, ev, a, |e, x| e.conjugate(x)))
    }

    /// CKKS: the sum over the slots, in every slot (rotation keys 1, 2, 4, ... needed).
    fn sum_slots(&self, py: Python<'_>, a: &CiphertextBatch) -> PyResult<CiphertextBatch> {
        on_dev!(self.ckks("sum_slots")?, B, ev => unary::<CkksContext, B>(py, ev, a, |e, x| e.sum_slots(x)))
    }

    /// CKKS: p(a) in every slot for a Chebyshev series p (`pimhe.Chebyshev`), consuming
    /// `p.depth` levels, or `levels` (at least `p.depth`; one more saves products).
    #[pyo3(signature = (a, p, levels=None))]
    fn evaluate_polynomial(
        &self,
        py: Python<'_>,
        a: &CiphertextBatch,
        p: &Chebyshev,
        levels: Option<usize>,
    ) -> PyResult<CiphertextBatch> {
        let series: &ChebyshevSeries = &p.inner;
        let levels = levels.unwrap_or(series.depth());
        on_dev!(self.ckks("evaluate_polynomial")?, B, ev => unary::<CkksContext, B>(py, ev, a, |e, x| e.evaluate_polynomial_in_levels(x, series, levels)))
    }

    /// Benchmark helper (not API): times `relinearize(multiply(a, b))` `repeats` times inside
    /// Rust, with no Python between the calls, and returns the seconds of each run: the
    /// baseline `python/benchmarks/overhead.py` compares the Python calls against.
    fn _time_multiply_relinearize(
        &self,
        py: Python<'_>,
        a: &CiphertextBatch,
        b: &CiphertextBatch,
        repeats: usize,
    ) -> PyResult<Vec<f64>> {
        dispatch!(&self.inner, S, B, ev => {
            let x = unwrap::<S, B>(a, ev.backend(), "the first batch")?;
            let y = unwrap::<S, B>(b, ev.backend(), "the second batch")?;
            ev.with_value(|e| py.allow_threads(|| {
                (0..repeats)
                    .map(|_| {
                        let start = std::time::Instant::now();
                        let product = e.relinearize(&e.multiply(x, y)?)?;
                        drop(product);
                        Ok(start.elapsed().as_secs_f64())
                    })
                    .collect::<SResult<Vec<f64>>>()
            }))
            .py_err()
        })
    }

    /// The name of the backend the evaluator runs on.
    #[getter]
    fn backend(&self) -> &'static str {
        by_scheme!(&self.inner, S, e => e.backend_name())
    }

    fn __repr__(&self) -> String {
        by_scheme!(&self.inner, S, e => format!("Evaluator({}, backend={})", S::LABEL, e.backend_name()))
    }
}
