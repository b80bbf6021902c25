//! `Chebyshev`: the library's `ChebyshevSeries` (CKKS polynomial evaluation).

use pyo3::prelude::*;

use pimhe_schemes::ckks::polynomial::ChebyshevSeries;

use crate::errors::IntoPy;

/// A polynomial as a Chebyshev series on an interval, for `Evaluator.evaluate_polynomial`
/// (CKKS). Build one with `Chebyshev.sigmoid`, `.exp`, `.inverse` or `.from_coefficients`.
#[pyclass(frozen, module = "pimhe._pimhe")]
pub struct Chebyshev {
    pub(crate) inner: ChebyshevSeries,
}

#[pymethods]
impl Chebyshev {
    /// The series of coefficients c_0, c_1, ... on `interval`.
    #[staticmethod]
    fn from_coefficients(coefficients: Vec<f64>, interval: (f64, f64)) -> PyResult<Self> {
        Ok(Self { inner: ChebyshevSeries::from_coefficients(coefficients, interval).py_err()? })
    }

    /// The logistic function 1 / (1 + e^-x) on `interval`, of `degree`.
    #[staticmethod]
    // PyO3 writes a default it cannot render (a tuple) as `...` in `__text_signature__`, which
    // help() and the stub check (mypy's stubtest, .ci/run) read; spelled out here instead.
    #[pyo3(signature = (interval=(-8.0, 8.0), degree=31), text_signature = "(interval=(-8.0, 8.0), degree=31)")]
    fn sigmoid(interval: (f64, f64), degree: usize) -> PyResult<Self> {
        Ok(Self { inner: ChebyshevSeries::sigmoid(interval, degree).py_err()? })
    }

    /// e^x on `interval`, of `degree`.
    #[staticmethod]
    fn exp(interval: (f64, f64), degree: usize) -> PyResult<Self> {
        Ok(Self { inner: ChebyshevSeries::exp(interval, degree).py_err()? })
    }

    /// 1/x on an interval that excludes 0, of `degree`.
    #[staticmethod]
    fn inverse(interval: (f64, f64), degree: usize) -> PyResult<Self> {
        Ok(Self { inner: ChebyshevSeries::inverse(interval, degree).py_err()? })
    }

    /// The coefficients.
    #[getter]
    fn coefficients(&self) -> Vec<f64> {
        self.inner.coefficients().to_vec()
    }

    /// The interval.
    #[getter]
    fn interval(&self) -> (f64, f64) {
        self.inner.interval()
    }

    /// The degree.
    #[getter]
    fn degree(&self) -> usize {
        self.inner.degree()
    }

    /// Levels (rescalings) its evaluation consumes.
    #[getter]
    fn depth(&self) -> usize {
        self.inner.depth()
    }

    /// p(x) in plain floating point (the oracle of a test).
    fn evaluate_plain(&self, x: f64) -> f64 {
        self.inner.evaluate_plain(x)
    }

    fn __repr__(&self) -> String {
        let (a, b) = self.inner.interval();
        format!("Chebyshev(degree={}, interval=({a}, {b}), depth={})", self.inner.degree(), self.inner.depth())
    }
}
