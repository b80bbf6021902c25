//! The library's progress hook ([`pimhe_bench::Progress`]) drawn by Python.

use pyo3::prelude::*;

use pimhe_bench::Progress;

/// The library's progress hook drawn by a Python object with `start(total, label)`,
/// `advance(n)` and `finish()` (`pimhe._progress.Bar`). A failing bar is ignored: progress is
/// never worth failing a computation for.
pub struct PyProgress(pub PyObject);

impl Progress for PyProgress {
    fn start(&self, len: u64, label: &str) {
        Python::with_gil(|py| {
            let _ = self.0.call_method1(py, "start", (len, label));
        });
    }

    fn advance(&self, n: u64) {
        Python::with_gil(|py| {
            let _ = self.0.call_method1(py, "advance", (n,));
        });
    }

    fn finish(&self) {
        Python::with_gil(|py| {
            let _ = self.0.call_method1(py, "finish", ());
        });
    }
}
