//! The statistics workload of seed 002 (`pimhe.stats`): mean, variance and linear regression
//! over users' rows, each user's row encrypted separately and aggregated by the server, over
//! `pimhe_workloads::stats` (`Dataset`, `StatsPlan`) and the run `pimhe stats` makes
//! (`pimhe_bench::measure::stats`).

use std::sync::Arc;

use pyo3::prelude::*;

use pimhe_bench::measure::stats::{self, Server, ServerCost, StatsOutput};
use pimhe_bench::Progress;
use pimhe_math::Sampler;
use pimhe_pim::runtime::PimBackend;
use pimhe_workloads::stats::{Dataset, Statistic, StatsError, StatsPlan};

use crate::backend::{default_cpu, report_object, Backend};
use crate::errors::{error, parameter, stats_error, Kind};

/// The library's progress hook drawn by a Python object with `start(total, label)`,
/// `advance(n)` and `finish()` (`pimhe._progress.Bar`). A failing bar is ignored: progress is
/// never worth failing a computation for.
struct PyProgress(PyObject);

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
    let statistic = match statistic {
        "mean" => Statistic::Mean,
        "variance" => Statistic::Variance,
        "linreg" | "linear_regression" => Statistic::Linreg,
        other => return Err(parameter(format!("statistic {other:?} is not known; choose mean, variance or linreg"))),
    };
    // The server is a CPU backend, a PIM configuration (one backend per parameter set is made
    // from it) or the near-bank recorder with its model.
    let (cpu_server, backend_name, config, nearbank) = match backend {
        None => (Some(default_cpu()?), "cpu", None, None),
        Some(b) if b.is_none() => (Some(default_cpu()?), "cpu", None, None),
        Some(b) => {
            let named;
            let backend: &Backend = if let Ok(backend) = b.downcast::<Backend>() {
                backend.get()
            } else if let Ok(name) = b.extract::<String>() {
                named = Backend::named(&name)?;
                &named
            } else {
                return Err(parameter("backend must be a pimhe.Backend or a name (cpu, upmem-emu, nearbank)"));
            };
            match (backend.cpu_backend(), backend.pim_config(), backend.nearbank_backend()) {
                (Some(cpu), _, _) => (Some(cpu), "cpu", None, None),
                (None, Some(config), _) => (None, "upmem-emu", Some(config.clone()), None),
                (None, None, nearbank) => (None, "nearbank", None, nearbank),
            }
        }
    };
    let client = match &cpu_server {
        Some(cpu) => cpu.clone(),
        None => default_cpu()?,
    };
    let names: Vec<&str> = columns.iter().map(String::as_str).collect();
    let mut sampler = match seed {
        Some(seed) => Sampler::from_seed_u64(seed),
        None => Sampler::from_os().map_err(|e| error(Kind::Base, e.to_string()))?,
    };
    let scheme_name: &'static str = match scheme {
        "bgv" => "bgv",
        "bfv" => "bfv",
        other => return Err(parameter(format!("scheme {other:?}: allowed: bgv, bfv"))),
    };
    let (output, upmem) = py.allow_threads(|| -> PyResult<_> {
        let max_bits = stats::max_plain_bits(scheme_name, n).map_err(stats_error)?;
        let data = Dataset::from_csv(csv.as_slice(), &names, decimals).map_err(stats_error)?;
        let mut plan = StatsPlan::new(statistic, data, n, max_bits).map_err(stats_error)?;
        if let Some(bar) = progress {
            plan = plan.with_progress(Arc::new(PyProgress(bar)));
        }
        let pim = |primes: &[u32]| {
            let config = config.clone().ok_or_else(|| StatsError::Input("no PIM configuration".into()))?;
            PimBackend::new(config, n, primes).map_err(|e| StatsError::Scheme(e.into()))
        };
        let server = match (&cpu_server, &nearbank) {
            (Some(cpu), _) => Server::Cpu(cpu),
            (None, Some((backend, model))) => Server::Nearbank(backend, model),
            (None, None) => Server::Pim(&pim),
        };
        let result = stats::run(scheme_name, &plan, n, &client, &server, &mut sampler).map_err(stats_error)?;
        let upmem = match &result.1 {
            Some(ServerCost::Upmem(report)) => Some(report.clone()),
            _ => None,
        };
        Ok((StatsOutput::new(scheme_name, backend_name, n, result, seed.is_some()), upmem))
    })?;
    let json = serde_json::to_string(&output).map_err(|e| error(Kind::Base, e.to_string()))?;
    let upmem = match (upmem, config) {
        (Some(report), Some(config)) => Some(report_object(py, &report, &config)?),
        _ => None,
    };
    Ok(py.import("pimhe._reports")?.getattr("StatsResult")?.call_method1("_from_json", (json, upmem))?.unbind())
}
