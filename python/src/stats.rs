//! The statistics workload of seed 002 (`pimhe.stats`): mean, variance and linear regression
//! over users' rows, each user's row encrypted separately and aggregated by the server, over
//! `pimhe_workloads::stats` (`Dataset`, `StatsPlan`) and the run `pimhe stats` makes
//! (`pimhe_bench::measure::stats`).

use std::sync::Arc;

use pyo3::prelude::*;

use pimhe_bench::measure::stats;
use pimhe_bench::target::Target;
use pimhe_bench::Progress;
use pimhe_workloads::stats::{Dataset, Statistic};

use crate::backend::{default_cpu, report_object, Backend};
use crate::errors::{error, parameter, stats_error, Kind};
use crate::progress::PyProgress;

/// Computes `statistic` ("mean", "variance", "linreg") over the `columns` of a CSV (`csv`:
/// its bytes; a header row, one row per user) with `scheme` on `backend`, and returns a
/// `pimhe._reports.StatsResult`. Called by `pimhe.stats`.
#[pyfunction]
#[pyo3(signature = (statistic, csv, columns, *, decimals=None, scheme="bgv", backend=None, n=8192, seed=None, progress=None))]
#[allow(clippy::too_many_arguments)]
pub fn run_stats(
    py: Python<'_>,
    statistic: &str,
    csv: Vec<u8>,
    columns: Vec<String>,
    decimals: Option<u32>,
    scheme: &str,
    backend: Option<&Bound<'_, PyAny>>,
    n: usize,
    seed: Option<u64>,
    progress: Option<PyObject>,
) -> PyResult<PyObject> {
    let statistic = parse_statistic(statistic)?;
    // The server's target (a PIM backend is made per parameter set from it); the client is the
    // CPU backend given, or the default one.
    let named;
    let backend: Option<&Backend> = match backend {
        None => None,
        Some(b) if b.is_none() => None,
        Some(b) => Some(if let Ok(backend) = b.downcast::<Backend>() {
            backend.get()
        } else if let Ok(name) = b.extract::<String>() {
            named = Backend::named(&name)?;
            &named
        } else {
            return Err(parameter("backend must be a pimhe.Backend or a name (cpu, upmem-emu, nearbank)"));
        }),
    };
    let target = backend.map_or(Target::Cpu { threads: None }, |b| b.target().clone());
    let config = backend.and_then(|b| b.pim_config().cloned());
    let client = match backend.and_then(Backend::cpu_backend) {
        Some(cpu) => cpu,
        None => default_cpu()?,
    };
    let names: Vec<&str> = columns.iter().map(String::as_str).collect();
    let scheme = match scheme {
        "bgv" | "bfv" => scheme,
        other => return Err(parameter(format!("scheme {other:?}: allowed: bgv, bfv"))),
    };
    let progress = progress.map(|bar| Arc::new(PyProgress(bar)) as Arc<dyn Progress>);
    let output = py
        .allow_threads(|| {
            let data = Dataset::from_csv(csv.as_slice(), &names, decimals)?;
            stats::run_statistic(statistic, data, scheme, n, &client, &target, seed, progress)
        })
        .map_err(stats_error)?;
    let json = serde_json::to_string(&output).map_err(|e| error(Kind::Base, e.to_string()))?;
    let upmem = match (&output.upmem, config) {
        (Some(report), Some(config)) => Some(report_object(py, report, &config)?),
        _ => None,
    };
    Ok(py.import("pimhe._reports")?.getattr("StatsResult")?.call_method1("_from_json", (json, upmem))?.unbind())
}

/// A statistic by its Python name.
pub fn parse_statistic(name: &str) -> PyResult<Statistic> {
    match name {
        "mean" => Ok(Statistic::Mean),
        "variance" => Ok(Statistic::Variance),
        "linreg" | "linear_regression" => Ok(Statistic::Linreg),
        other => Err(parameter(format!("statistic {other:?} is not known; choose mean, variance or linreg"))),
    }
}
