//! The client/server study (`pimhe.study`): each party's step on files, as `pimhe keygen /
//! encrypt / eval / decrypt` run them (`keygen_files`, ... of `pimhe_workloads::stats::study`),
//! returning the library's outcome as JSON.
//!
//! And the server step in pieces, for `pimhe.distributed` (Ray): the driver reads the
//! public inputs and the submission files, workers add up shards into partial aggregates and
//! combine them, the driver writes the aggregates `pimhe decrypt` reads. Each function is one
//! call of `pimhe_workloads::stats::study` (`server_inputs`, `read_submissions`,
//! `evaluate_shard`, `combine_shards`, `write_aggregates`), which own every check; the study
//! travels as its JSON and the keys, submissions and partials as bytes, so that a worker needs
//! no file and never a secret.

use std::path::PathBuf;

use pyo3::prelude::*;
// Bytes arguments as PyBackedBytes (zero-copy views of Python bytes): a Vec<u8> argument is
// extracted one element at a time, which cost a worker most of its time per shard.
use pyo3::pybacked::PyBackedBytes;
use pyo3::types::PyBytes;

use pimhe_bench::measure::workers::task_cost_json;
use pimhe_bench::target::{BackendKind, Device, DeviceNeeds, Job, Target};
use pimhe_exec::Backend as ExecBackend;
use pimhe_workloads::progress::NoProgress;
use pimhe_workloads::stats::study::{self, Overwrite, ServerInputs, Study, StudySpec};
use pimhe_workloads::stats::StatsError;

use crate::backend::{default_cpu, Backend};
use crate::errors::{bench_error, error, stats_error, IntoPy, Kind};
use crate::stats::parse_statistic;

/// The analyst's keygen: declares the study (`max_value` in fixed point, `value * 10^decimals`)
/// and writes the public and the secret directory. Returns the outcome's JSON.
#[pyfunction]
#[pyo3(signature = (statistic, columns, *, decimals, max_value, max_users, min_users, scheme, n=None, public_dir, secret_dir, seed=None, force=false))]
#[allow(clippy::too_many_arguments)]
pub fn study_keygen(
    py: Python<'_>,
    statistic: &str,
    columns: Vec<String>,
    decimals: u32,
    max_value: u64,
    max_users: usize,
    min_users: usize,
    scheme: &str,
    n: Option<usize>,
    public_dir: PathBuf,
    secret_dir: PathBuf,
    seed: Option<u64>,
    force: bool,
) -> PyResult<String> {
    let spec =
        StudySpec { statistic: parse_statistic(statistic)?, columns, decimals, max_value, max_users, min_users, n };
    let cpu = default_cpu()?;
    let outcome = py
        .allow_threads(|| {
            study::keygen_files(cpu.as_ref(), &spec, scheme, &public_dir, &secret_dir, seed, overwrite(force))
        })
        .map_err(stats_error)?;
    json(&outcome)
}

/// A user's step: one submission file per row of the CSV `input` into `out`. Returns the
/// outcome's JSON.
#[pyfunction]
#[pyo3(signature = (public_dir, input, out, seed=None))]
pub fn study_encrypt(
    py: Python<'_>,
    public_dir: PathBuf,
    input: PathBuf,
    out: PathBuf,
    seed: Option<u64>,
) -> PyResult<String> {
    let cpu = default_cpu()?;
    let outcome = py
        .allow_threads(|| study::encrypt_file(cpu.as_ref(), &public_dir, &input, &out, seed, &NoProgress))
        .map_err(stats_error)?;
    json(&outcome)
}

/// The one-process server on the CPU: adds up every submission of `submissions` into `out`.
/// Returns the outcome's JSON.
#[pyfunction]
#[pyo3(signature = (public_dir, submissions, out, force=false))]
pub fn study_eval(
    py: Python<'_>,
    public_dir: PathBuf,
    submissions: PathBuf,
    out: PathBuf,
    force: bool,
) -> PyResult<String> {
    let cpu = default_cpu()?;
    let outcome = py
        .allow_threads(|| {
            study::evaluate_files(cpu.as_ref(), &public_dir, &submissions, &out, overwrite(force), &NoProgress)
        })
        .map_err(stats_error)?;
    json(&outcome)
}

/// The analyst's decryption of the aggregates file `input`. Returns the outcome's JSON.
#[pyfunction]
pub fn study_decrypt(py: Python<'_>, public_dir: PathBuf, secret_dir: PathBuf, input: PathBuf) -> PyResult<String> {
    let cpu = default_cpu()?;
    let outcome = py
        .allow_threads(|| study::decrypt_files(cpu.as_ref(), &public_dir, &secret_dir, &input))
        .map_err(stats_error)?;
    json(&outcome)
}

fn json(outcome: &impl serde::Serialize) -> PyResult<String> {
    serde_json::to_string(outcome).map_err(|e| error(Kind::Base, e.to_string()))
}

/// `(study_json, public_keys, files, warnings)`, as Python receives [`ServerInputs`].
type ServerInputsTuple = (String, Py<PyBytes>, Vec<PathBuf>, Vec<String>);

/// The public inputs of the server's step: `(study_json, public_keys, files, warnings)`, from
/// the public directory (refused if it holds a secret key) and every `*.pimhe` of
/// `submissions` in name order; refused at once if `out` exists and `force` is false.
#[pyfunction]
#[pyo3(signature = (public_dir, submissions, out, force=false))]
pub fn study_server_inputs(
    py: Python<'_>,
    public_dir: PathBuf,
    submissions: PathBuf,
    out: PathBuf,
    force: bool,
) -> PyResult<ServerInputsTuple> {
    let ServerInputs { study, public_keys, files, warnings } =
        study::server_inputs(&public_dir, &submissions, &out, overwrite(force)).map_err(stats_error)?;
    let warnings = warnings.into_iter().map(str::to_string).collect();
    Ok((study.to_json(), PyBytes::new(py, &public_keys).unbind(), files, warnings))
}

/// The bytes of each submission file of `paths`, in order, each refused unless it is a regular
/// file within a submission's size under the study. A list at a time: reading the study
/// (which checks its parameters) costs more than a file.
#[pyfunction]
pub fn study_read_submissions(py: Python<'_>, study_json: &str, paths: Vec<PathBuf>) -> PyResult<Vec<Py<PyBytes>>> {
    let study = Study::from_json(study_json).map_err(stats_error)?;
    let files = py.allow_threads(|| study::read_submissions(&study, &paths)).map_err(stats_error)?;
    Ok(files.iter().map(|bytes| PyBytes::new(py, bytes).unbind()).collect())
}

/// A shard's partial aggregate (bytes) of `submissions`, `(name, bytes)` pairs, on the backend
/// named `backend` (cpu with `threads`, upmem-emu or nearbank), and the backend's modeled cost
/// of it as JSON (`pimhe_bench::measure::workers::TaskCost`; `None` on the CPU).
#[pyfunction]
#[pyo3(signature = (study_json, public_keys, submissions, backend="cpu", threads=None))]
pub fn study_evaluate_shard(
    py: Python<'_>,
    study_json: &str,
    public_keys: PyBackedBytes,
    submissions: Vec<(String, PyBackedBytes)>,
    backend: &str,
    threads: Option<usize>,
) -> PyResult<(Py<PyBytes>, Option<String>)> {
    on_backend(py, study_json, &public_keys, backend, threads, Step::Shard(&submissions))
}

/// The partial (bytes) of every submission of `partials`, refused if two hold the same
/// submission or together pass the study's most users, and its modeled cost as
/// [`study_evaluate_shard`]'s.
#[pyfunction]
#[pyo3(signature = (study_json, public_keys, partials, backend="cpu", threads=None))]
pub fn study_combine(
    py: Python<'_>,
    study_json: &str,
    public_keys: PyBackedBytes,
    partials: Vec<PyBackedBytes>,
    backend: &str,
    threads: Option<usize>,
) -> PyResult<(Py<PyBytes>, Option<String>)> {
    let partials: Vec<&[u8]> = partials.iter().map(|p| &p[..]).collect();
    on_backend(py, study_json, &public_keys, backend, threads, Step::Combine(&partials))
}

/// Writes the aggregates of the final `partial` to `out` (what `pimhe decrypt` reads), refused
/// unless it holds exactly `expected` submissions; returns the user count.
#[pyfunction]
#[pyo3(signature = (study_json, public_keys, partial, expected, out, force=false))]
pub fn study_write_aggregates(
    py: Python<'_>,
    study_json: &str,
    public_keys: PyBackedBytes,
    partial: PyBackedBytes,
    expected: usize,
    out: PathBuf,
    force: bool,
) -> PyResult<usize> {
    let study = Study::from_json(study_json).map_err(stats_error)?;
    let cpu = default_cpu()?;
    py.allow_threads(|| {
        study::write_aggregates(cpu.as_ref(), &study, &public_keys, &partial, expected, &out, overwrite(force))
    })
    .map_err(stats_error)
}

fn overwrite(force: bool) -> Overwrite {
    if force {
        Overwrite::Force
    } else {
        Overwrite::Refuse
    }
}

/// A worker's step, with its inputs.
#[derive(Clone, Copy)]
enum Step<'a> {
    /// Add up a shard of named submissions.
    Shard(&'a [(String, PyBackedBytes)]),
    /// Combine partials.
    Combine(&'a [&'a [u8]]),
}

/// A step on whichever backend the target builds; the study's error is kept apart from the
/// target's so that each keeps its exception.
#[derive(Clone, Copy)]
struct OnDevice<'a> {
    study: &'a Study,
    public_keys: &'a [u8],
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
            Step::Shard(submissions) => {
                study::evaluate_shard(device.backend, self.study, self.public_keys, submissions)
            }
            Step::Combine(partials) => study::combine_shards(device.backend, self.study, self.public_keys, partials),
        })
    }
}

/// Runs `step` on a backend of the study's primes (the target named `backend`; the CPU with
/// `threads`), the GIL released; returns its bytes.
fn on_backend(
    py: Python<'_>,
    study_json: &str,
    public_keys: &[u8],
    backend: &str,
    threads: Option<usize>,
    step: Step<'_>,
) -> PyResult<(Py<PyBytes>, Option<String>)> {
    let study = Study::from_json(study_json).map_err(stats_error)?;
    // The CPU with the worker's own thread count; another backend with its defaults.
    let target = match BackendKind::parse(&backend.replace('_', "-"), &BackendKind::ALL).py_err()? {
        BackendKind::Cpu => Target::Cpu { threads },
        BackendKind::UpmemEmu | BackendKind::Nearbank => Backend::named(backend)?.target().clone(),
    };
    let needs = DeviceNeeds { n: study.n, primes: study.backend_primes().map_err(stats_error)? };
    let job = OnDevice { study: &study, public_keys, step };
    let ran = py.allow_threads(|| target.run(&needs, job)).map_err(bench_error)?;
    let cost = task_cost_json(&ran.cost).map_err(bench_error)?;
    Ok((PyBytes::new(py, &ran.output.map_err(stats_error)?).unbind(), cost))
}
