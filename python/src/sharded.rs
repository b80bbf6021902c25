//! `pimhe stats` with the server's step sharded, for `pimhe.distributed` (Ray): the driver
//! ([`StatsDriver`], the client: the rows and the secret keys) encrypts one range of users at
//! a time, workers add ranges up (`stats_aggregate_shard`) and combine partials
//! (`stats_combine`), the driver decrypts the last partial into `pimhe stats`'s report. Each is
//! one call of `pimhe_workloads::stats::sharded`, which owns every check; the keys, shards and
//! partials travel as bytes, and no method serializes a secret key.
//!
//! And a shard of an element-wise batch operation (`batch_apply_shard`, over
//! `pimhe_workloads::batch_ops`).

use std::fs::File;
use std::path::PathBuf;

use pyo3::prelude::*;
// Bytes arguments as PyBackedBytes (zero-copy views of Python bytes), not Vec<u8>, which PyO3
// extracts one element at a time.
use pyo3::pybacked::PyBackedBytes;
use pyo3::types::PyBytes;

use pimhe_bench::format::{to_json, Render};
use pimhe_bench::measure::stats::{self, StatsOutput};
use pimhe_bench::measure::workers::{sum_task_costs, task_cost_json};
use pimhe_bench::target::{BackendKind, Device, DeviceNeeds, Job, Target};
use pimhe_exec::Backend as ExecBackend;
use pimhe_math::Sampler;
use pimhe_workloads::batch_ops::{self, BatchOp};
use pimhe_workloads::stats::sharded::{self, header_of};
use pimhe_workloads::stats::{Dataset, StatsError, StatsPlan};

use crate::backend::Backend;
use crate::errors::{bench_error, error, parameter, stats_error, IntoPy, Kind};
use crate::stats::parse_statistic;

/// The client of a distributed `pimhe stats`: the users' rows (a CSV file's `columns`, or
/// `users` synthetic users from seed `synthetic`), the plan, and the keys of every plaintext
/// modulus (the secret ones never leave this object).
#[pyclass(module = "pimhe._pimhe")]
pub struct StatsDriver {
    inner: sharded::StatsDriver,
    scheme: String,
    seeded: bool,
}

#[pymethods]
impl StatsDriver {
    #[new]
    #[pyo3(signature = (statistic, columns, *, input=None, users=None, synthetic=None, decimals=None, scheme="bgv", n=8192, seed=None, threads=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        statistic: &str,
        columns: Vec<String>,
        input: Option<PathBuf>,
        users: Option<usize>,
        synthetic: Option<u64>,
        decimals: Option<u32>,
        scheme: &str,
        n: usize,
        seed: Option<u64>,
        threads: Option<usize>,
    ) -> PyResult<Self> {
        let statistic = parse_statistic(statistic)?;
        if !["bgv", "bfv"].contains(&scheme) {
            return Err(parameter(format!("scheme {scheme:?}: allowed: bgv, bfv")));
        }
        let mut sampler = match seed {
            Some(seed) => Sampler::from_seed_u64(seed),
            None => Sampler::from_os().map_err(|e| error(Kind::Base, e.to_string()))?,
        };
        let names: Vec<&str> = columns.iter().map(String::as_str).collect();
        let inner = py.allow_threads(|| -> PyResult<_> {
            let max_bits = stats::max_plain_bits(scheme, n).map_err(stats_error)?;
            let data = match (input, users, synthetic) {
                (Some(path), None, None) => {
                    if decimals.is_some() && synthetic.is_some() {
                        return Err(parameter("decimals apply to an input file only"));
                    }
                    let file = File::open(&path)
                        .map_err(|e| parameter(format!("cannot open input {}: {e}", path.display())))?;
                    Dataset::from_csv(file, &names, decimals)
                }
                (None, Some(users), Some(seed)) if decimals.is_none() => Dataset::synthetic(users, seed, &names),
                _ => return Err(parameter("give input=FILE.csv, or users=N and synthetic=SEED (without decimals)")),
            }
            .map_err(stats_error)?;
            let plan = StatsPlan::new(statistic, data, n, max_bits).map_err(stats_error)?;
            sharded::StatsDriver::new(scheme, plan, n, threads, sampler.fork()).map_err(stats_error)
        })?;
        Ok(Self { inner, scheme: scheme.to_string(), seeded: seed.is_some() })
    }

    /// The number of users.
    #[getter]
    fn users(&self) -> usize {
        self.inner.header().users
    }

    /// The plaintext moduli, one computation each.
    #[getter]
    fn plain_moduli(&self) -> Vec<u32> {
        self.inner.header().plain_moduli.clone()
    }

    /// What the workers receive, once: the run's header and the relinearization keys.
    fn public_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, self.inner.public_bytes())
    }

    /// Whether `blob` holds a window of the secret keys' bytes (an audit of what was shipped;
    /// it answers yes or no, never the key).
    fn contains_secret(&self, blob: &[u8]) -> bool {
        self.inner.contains_secret(blob)
    }

    /// Users `first..end` encoded and encrypted under every plaintext modulus (a shard).
    fn encrypt_shard(&mut self, py: Python<'_>, first: usize, end: usize) -> PyResult<Py<PyBytes>> {
        if first > end {
            return Err(parameter(format!("users {first}..{end}: first must not pass end")));
        }
        let inner = &mut self.inner;
        let bytes = py.allow_threads(|| inner.encrypt_shard(first..end)).map_err(stats_error)?;
        Ok(PyBytes::new(py, &bytes).unbind())
    }

    /// Decrypts the last partial (refused unless it holds exactly every user) into `pimhe
    /// stats`'s output for a server on `backend` taking `server_s` seconds: `(json, text)`.
    fn finish(
        &self,
        py: Python<'_>,
        partial: PyBackedBytes,
        server_s: f64,
        backend: &str,
    ) -> PyResult<(String, String)> {
        let inner = &self.inner;
        let report = py.allow_threads(|| inner.finish(&partial, server_s)).map_err(stats_error)?;
        let output = StatsOutput::new(&self.scheme, backend, inner.header().n, (report, None), self.seeded);
        Ok((to_json(&output).map_err(bench_error)?, output.render()))
    }
}

/// A worker's shard: the partial (bytes) of the users of `shard`, with the run's public bytes,
/// and the backend's modeled cost of it as JSON (`pimhe_bench::measure::workers::TaskCost`;
/// `None` on the CPU).
#[pyfunction]
#[pyo3(signature = (public, shard, backend="cpu", threads=None))]
pub fn stats_aggregate_shard(
    py: Python<'_>,
    public: PyBackedBytes,
    shard: PyBackedBytes,
    backend: &str,
    threads: Option<usize>,
) -> PyResult<(Py<PyBytes>, Option<String>)> {
    on_backend(py, &public, backend, threads, Step::Shard(&shard))
}

/// The partial (bytes) of every user of `partials`, refused if two hold the same user, and its
/// modeled cost as [`stats_aggregate_shard`]'s.
#[pyfunction]
#[pyo3(signature = (public, partials, backend="cpu", threads=None))]
pub fn stats_combine(
    py: Python<'_>,
    public: PyBackedBytes,
    partials: Vec<PyBackedBytes>,
    backend: &str,
    threads: Option<usize>,
) -> PyResult<(Py<PyBytes>, Option<String>)> {
    let partials: Vec<&[u8]> = partials.iter().map(|p| &p[..]).collect();
    on_backend(py, &public, backend, threads, Step::Combine(&partials))
}

#[derive(Clone, Copy)]
enum Step<'a> {
    Shard(&'a [u8]),
    Combine(&'a [&'a [u8]]),
}

#[derive(Clone, Copy)]
struct OnDevice<'a> {
    public: &'a [u8],
    step: Step<'a>,
}

impl Job for OnDevice<'_> {
    type Output = Result<Vec<u8>, StatsError>;
    fn pricing_copy(&self) -> Option<Self> {
        Some(*self)
    }

    fn adopt(self, _: &Self::Output) -> std::result::Result<(), Self> {
        Ok(()) // it shows nothing while it runs
    }

    fn run<B: ExecBackend>(self, device: &Device<'_, B>) -> Result<Self::Output, pimhe_bench::BenchError> {
        Ok(match self.step {
            Step::Shard(shard) => sharded::aggregate_rows(device.backend, self.public, shard),
            Step::Combine(partials) => sharded::combine_rows(device.backend, self.public, partials),
        })
    }
}

fn on_backend(
    py: Python<'_>,
    public: &[u8],
    backend: &str,
    threads: Option<usize>,
    step: Step<'_>,
) -> PyResult<(Py<PyBytes>, Option<String>)> {
    let header = header_of(public).map_err(stats_error)?;
    let target = match BackendKind::parse(&backend.replace('_', "-"), &BackendKind::ALL).py_err()? {
        BackendKind::Cpu => Target::Cpu { threads },
        BackendKind::UpmemEmu | BackendKind::Nearbank => Backend::named(backend)?.target().clone(),
    };
    let needs = DeviceNeeds { n: header.n, primes: header.backend_primes().map_err(stats_error)? };
    let job = OnDevice { public, step };
    let ran = py.allow_threads(|| target.run(&needs, job)).map_err(bench_error)?;
    let cost = task_cost_json(&ran.cost).map_err(bench_error)?;
    Ok((PyBytes::new(py, &ran.output.map_err(stats_error)?).unbind(), cost))
}

/// The modeled costs of a distributed run's tasks, `(worker, cost JSON)` as the shard and
/// combine functions return them, added up (`pimhe_bench::measure::workers::sum_task_costs`):
/// JSON of the result's `upmem` or `nearbank` entry (`{"upmem": ...}`), `None` without any (a CPU
/// run).
#[pyfunction]
pub fn workers_cost(costs: Vec<(String, String)>) -> PyResult<Option<String>> {
    match sum_task_costs(&costs).map_err(bench_error)? {
        Some(sum) => Ok(Some(to_json(&sum).map_err(bench_error)?)),
        None => Ok(None),
    }
}

/// A worker's shard of an element-wise operation (`pimhe_workloads::batch_ops`): `op`
/// ("multiply": `inputs` = two batches, multiplied and relinearized with the relinearization
/// key `key`; "rotate": one batch, the automorphism of Galois element `element` with the Galois
/// keys `key`) under the parameters `params` (`Context.to_bytes`), on the CPU with `threads`.
#[pyfunction]
#[pyo3(signature = (params, key, op, inputs, element=None, threads=None))]
pub fn batch_apply_shard(
    py: Python<'_>,
    params: PyBackedBytes,
    key: PyBackedBytes,
    op: &str,
    inputs: Vec<PyBackedBytes>,
    element: Option<usize>,
    threads: Option<usize>,
) -> PyResult<Py<PyBytes>> {
    let op = BatchOp::parse(op, element).py_err()?;
    let inputs: Vec<&[u8]> = inputs.iter().map(|p| &p[..]).collect();
    let bytes = py
        .allow_threads(|| {
            let cpu = pimhe_exec::CpuBackend::new(threads).map_err(pimhe_schemes::SchemeError::from)?;
            batch_ops::apply_shard(&cpu, &params, &key, op, &inputs)
        })
        .py_err()?;
    Ok(PyBytes::new(py, &bytes).unbind())
}
