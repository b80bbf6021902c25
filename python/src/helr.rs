//! `helr_json`: HELR logistic-regression training on encrypted data
//! (`pimhe_bench::measure::helr`, what `pimhe helr --json` prints), which `pimhe.helr.train`
//! parses.

use std::path::PathBuf;

use pyo3::prelude::*;

use pimhe_bench::measure::helr::{self, HelrBenchConfig};
use pimhe_bench::target::TargetFlags;
use pimhe_bench::NoProgress;

use crate::errors::{error, IntoPy, Kind};
use crate::progress::PyProgress;

/// `pimhe helr`'s report as JSON: the CSV at `input` with the 0/1 label column `label`, the
/// server on `backend` (its flags as `pimhe.bench_bootstrap` takes them, and `dpus`);
/// `progress` draws one step per iteration (`pimhe._progress.Bar`, or None).
#[pyfunction]
#[pyo3(signature = (
    input, label, *, iterations=32, batch=None, test_fraction=0.25, learning_rate=0.5, n=2048, per_bootstrap=1,
    seed=1, backend="cpu", threads=None, dpus=None, system=None, buffer_entries=None, progress=None
))]
#[allow(clippy::too_many_arguments)]
pub fn helr_json(
    py: Python<'_>,
    input: PathBuf,
    label: &str,
    iterations: usize,
    batch: Option<usize>,
    test_fraction: f64,
    learning_rate: f64,
    n: usize,
    per_bootstrap: usize,
    seed: u64,
    backend: &str,
    threads: Option<usize>,
    dpus: Option<usize>,
    system: Option<String>,
    buffer_entries: Option<usize>,
    progress: Option<PyObject>,
) -> PyResult<String> {
    let flags = TargetFlags {
        backend: Some(backend.to_string()),
        threads,
        dpus,
        system,
        buffer_entries,
        ..TargetFlags::default()
    };
    let config = HelrBenchConfig {
        test_fraction,
        iterations,
        batch,
        learning_rate,
        n,
        per_bootstrap,
        seed,
        target: flags.parse(&helr::RULES).py_err()?,
    };
    let report = py
        .allow_threads(|| {
            let data = helr::load(&input, label)?;
            match progress {
                Some(bar) => helr::run(&data, &config, &PyProgress(bar)),
                None => helr::run(&data, &config, &NoProgress),
            }
        })
        .py_err()?;
    serde_json::to_string(&report).map_err(|e| error(Kind::Base, e.to_string()))
}
