//! The statistics workload of seed 002 (`pimhe.stats`): mean, variance and linear regression
//! over users' rows, each user's row encrypted separately and aggregated by the server, over
//! `pimhe_workloads::stats` (`Dataset`, `StatsPlan`, `SchemeStats`).

use std::sync::Arc;

use pyo3::prelude::*;
use serde::Serialize;

use pimhe_exec::{Backend as _, CpuBackend};
use pimhe_math::Sampler;
use pimhe_pim::runtime::{OffloadReport, PimBackend, PimConfig};
use pimhe_workloads::stats::{Bfv, Bgv, Dataset, HeScheme, SchemeStats, Statistic, StatsPlan, StatsReport};

use crate::backend::{default_cpu, report_object, Backend};
use crate::errors::{error, parameter, IntoPy, Kind};

/// What `pimhe.stats.*` returns (read by `pimhe._reports.StatsResult`).
#[derive(Serialize)]
struct StatsOutput {
    scheme: &'static str,
    backend: &'static str,
    n: usize,
    #[serde(flatten)]
    report: StatsReport,
    client_encrypt_s: f64,
    client_decrypt_s: f64,
    server_wall_s: f64,
}

/// Where the server runs.
enum Server {
    Cpu(Arc<CpuBackend>),
    Pim(Box<PimConfig>),
}

// ---------------------------------------------------------------------------------------------
// DUPLICATED FROM crates/cli/src/stats.rs (`run_with`, `execute`, `combined`): the glue from a
// dataset to a report (plaintext moduli -> contexts -> one server per context -> the plan's
// execution -> the servers' reports added up). To be replaced by the `pimhe-bench` library
// crate's function once the CLI's logic moves there.
// ---------------------------------------------------------------------------------------------

/// Runs `plan` with scheme S: the client on `client`, the server as `server` says.
fn run_plan<S: HeScheme>(
    plan: &StatsPlan,
    n: usize,
    client: &CpuBackend,
    server: &Server,
    sampler: &mut Sampler,
) -> Result<(StatsReport, Option<OffloadReport>), PyErr> {
    let contexts = plan
        .plain_moduli()
        .iter()
        .map(|&t| S::context(S::parameters(n, t)?))
        .collect::<Result<Vec<_>, _>>()
        .py_err()?;
    match server {
        Server::Cpu(cpu) => {
            let mut schemes = contexts
                .into_iter()
                .map(|ctx| SchemeStats::<S, _, _>::with_context(client, &**cpu, ctx, sampler.fork()))
                .collect::<Result<Vec<_>, _>>()
                .py_err()?;
            Ok((plan.execute(&mut schemes).py_err()?, None))
        }
        Server::Pim(config) => {
            let servers = contexts
                .iter()
                .map(|ctx| PimBackend::new((**config).clone(), n, &S::backend_primes(ctx)))
                .collect::<Result<Vec<_>, _>>()
                .py_err()?;
            let mut schemes = contexts
                .into_iter()
                .zip(&servers)
                .map(|(ctx, server)| SchemeStats::<S, _, _>::with_context(client, server, ctx, sampler.fork()))
                .collect::<Result<Vec<_>, _>>()
                .py_err()?;
            let report = plan.execute(&mut schemes).py_err()?;
            drop(schemes);
            let costs = servers.iter().map(PimBackend::report).collect::<Result<Vec<_>, _>>().py_err()?;
            let combined = costs.into_iter().reduce(|mut total, r| {
                total.accumulate(&r);
                total
            });
            Ok((report, combined))
        }
    }
}

// --------------------------------------- end of duplicate ------------------------------------

/// Computes `statistic` ("mean", "variance", "linreg") over the `columns` of a CSV (`csv`:
/// its bytes; a header row, one row per user) with `scheme` on `backend`, and returns a
/// `pimhe._reports.StatsResult`. Called by `pimhe.stats`.
#[pyfunction]
#[pyo3(signature = (statistic, csv, columns, *, decimals=None, scheme="bgv", backend=None, n=8192, seed=None))]
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
) -> PyResult<PyObject> {
    let statistic = match statistic {
        "mean" => Statistic::Mean,
        "variance" => Statistic::Variance,
        "linreg" | "linear_regression" => Statistic::Linreg,
        other => return Err(parameter(format!("statistic {other:?} is not known; choose mean, variance or linreg"))),
    };
    let (server, backend_name, config) = match backend {
        None => (Server::Cpu(default_cpu()?), "cpu", None),
        Some(b) if b.is_none() => (Server::Cpu(default_cpu()?), "cpu", None),
        Some(b) => {
            let named;
            let backend: &Backend = if let Ok(backend) = b.downcast::<Backend>() {
                backend.get()
            } else if let Ok(name) = b.extract::<String>() {
                named = Backend::named(&name)?;
                &named
            } else {
                return Err(parameter("backend must be a pimhe.Backend or a name (cpu, upmem-emu)"));
            };
            match (backend.cpu_backend(), backend.pim_config()) {
                (Some(cpu), _) => (Server::Cpu(cpu), "cpu", None),
                (None, Some(config)) => (Server::Pim(Box::new(config.clone())), "upmem-emu", Some(config.clone())),
                (None, None) => unreachable!("a backend is one or the other"),
            }
        }
    };
    let client = match &server {
        Server::Cpu(cpu) => cpu.clone(),
        Server::Pim(_) => default_cpu()?,
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
    let (report, upmem) = py.allow_threads(|| -> PyResult<_> {
        let max_bits = match scheme_name {
            "bgv" => Bgv::max_plain_bits(n),
            _ => Bfv::max_plain_bits(n),
        }
        .py_err()?;
        let data = Dataset::from_csv(csv.as_slice(), &names, decimals).py_err()?;
        let plan = StatsPlan::new(statistic, data, n, max_bits).py_err()?;
        match scheme_name {
            "bgv" => run_plan::<Bgv>(&plan, n, &client, &server, &mut sampler),
            _ => run_plan::<Bfv>(&plan, n, &client, &server, &mut sampler),
        }
    })?;
    let _ = client.threads();
    let sum = |f: fn(&pimhe_workloads::stats::ModulusRun) -> f64| report.runs.iter().map(f).sum::<f64>();
    let output = StatsOutput {
        scheme: scheme_name,
        backend: backend_name,
        n,
        client_encrypt_s: sum(|r| r.client_encrypt_s),
        client_decrypt_s: sum(|r| r.client_decrypt_s),
        server_wall_s: sum(|r| r.server_s),
        report,
    };
    let json = serde_json::to_string(&output).map_err(|e| error(Kind::Base, e.to_string()))?;
    let upmem = match (upmem, config) {
        (Some(report), Some(config)) => Some(report_object(py, &report, &config)?),
        _ => None,
    };
    Ok(py.import("pimhe._reports")?.getattr("StatsResult")?.call_method1("_from_json", (json, upmem))?.unbind())
}
