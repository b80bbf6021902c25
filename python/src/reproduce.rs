//! `reproduce_json`, `bench_kernel`, `advise_json`, `bandwidth_json`, `bootstrap_json` and
//! `scheme_json` (`pimhe bench scheme`): every seed paper's reproduction by name
//! (`pimhe_bench::reproduce::by_name`, what `pimhe bench reproduce PAPER --json` prints), the
//! polynomial kernel benchmark (`pimhe_bench::measure::kernels`, `pimhe bench OP`) and the
//! CPU-vs-PIM verdict (`pimhe_bench::advise`, `pimhe advise`), as JSON that `pimhe.reproduce`,
//! `pimhe.plots` and `pimhe.advise` read.

use pyo3::prelude::*;

use pimhe_bench::advise::{self, AdviseConfig};
use pimhe_bench::measure::bandwidth::{self, BandwidthConfig};
use pimhe_bench::measure::bootstrap::{self, BootstrapBenchConfig};
use pimhe_bench::measure::kernels::{self, KernelConfig, Op};
use pimhe_bench::measure::scheme::{self, SchemeConfig};
use pimhe_bench::reproduce::by_name;
use pimhe_bench::target::TargetFlags;
use pimhe_bench::NoProgress;

use crate::errors::{error, parameter, IntoPy, Kind};
use crate::progress::PyProgress;

/// The reproduction of the paper `name` (dramatic, mhy, gupta, anaheim, ceram) with `options`, a JSON object
/// of its CLI flags by Python's names (a missing one takes its default; an unknown one is a
/// `ParameterError` naming the allowed ones), as the JSON of its whole report: `paper`,
/// `citation`, the paper's own report's fields, and `comparison`, the rows every paper shares.
/// `progress` draws the long steps (`pimhe._progress.Bar`, or None). Called by
/// `pimhe.reproduce`.
#[pyfunction]
#[pyo3(signature = (name, options, *, progress=None))]
pub fn reproduce_json(py: Python<'_>, name: &str, options: &str, progress: Option<PyObject>) -> PyResult<String> {
    let options: serde_json::Value =
        serde_json::from_str(options).map_err(|e| parameter(format!("options are not a JSON object: {e}")))?;
    py.allow_threads(|| match progress {
        Some(bar) => by_name::run(name, options, &PyProgress(bar)),
        None => by_name::run(name, options, &NoProgress),
    })
    .py_err()
}

/// One run of `pimhe bench OP` (`op`: ntt, intt, bgv-mul, pipeline, bfv-mul, bfv-add,
/// bgv-mul-relin) as a JSON string: on `cpu` the measured seconds (`wall_s`), on `upmem-emu` the modeled
/// `transfer_s`, `compute_s`, `retrieve_s`, `total_s` with the model's name (`--json`'s fields).
/// `repeat` (cpu only) times that many runs [default: 3].
#[pyfunction]
#[pyo3(signature = (op, n, batch, *, primes=None, backend="cpu", dpus=None, threads=None, repeat=None))]
#[allow(clippy::too_many_arguments)]
pub fn bench_kernel(
    py: Python<'_>,
    op: &str,
    n: usize,
    batch: usize,
    primes: Option<usize>,
    backend: &str,
    dpus: Option<usize>,
    threads: Option<usize>,
    repeat: Option<usize>,
) -> PyResult<String> {
    let op = Op::from_name(op).ok_or_else(|| {
        let names: Vec<&str> = Op::ALL.iter().map(|op| op.name()).collect();
        error(Kind::Parameter, format!("op {op:?} is not known; choose one of {names:?}"))
    })?;
    let flags = TargetFlags { backend: Some(backend.to_string()), dpus, threads, ..TargetFlags::default() };
    let config = KernelConfig {
        target: flags.parse(&kernels::RULES).py_err()?,
        repeat,
        ..KernelConfig::new(op, n, primes, batch)
    };
    let report = py.allow_threads(|| kernels::run(&config)).py_err()?;
    serde_json::to_string(&report).map_err(|e| error(Kind::Base, e.to_string()))
}

/// `pimhe advise` as a JSON string (`--json`'s report): per DPU count and what-if the modeled
/// PIM time and energy beside the CPU measured here and scaled to the server, and the crossover
/// or `never` with its bottleneck, and the energy and EDP verdicts. Empty `dpus` / `what_ifs`
/// take the CLI's defaults; `mode` is `--mode` (parallel when None, ciphertext-major, auto, or
/// for the statistics and CKKS also sequential or hybrid); `batch` is None for the statistics,
/// which take `users`.
#[pyfunction]
#[pyo3(signature = (workload, n, batch=None, *, users=None, dpus=Vec::new(), what_ifs=Vec::new(), max_batch=None, repeat=3, threads=None, seed=1, mode=None))]
#[allow(clippy::too_many_arguments)]
pub fn advise_json(
    py: Python<'_>,
    workload: &str,
    n: usize,
    batch: Option<usize>,
    users: Option<usize>,
    dpus: Vec<usize>,
    what_ifs: Vec<String>,
    max_batch: Option<usize>,
    repeat: usize,
    threads: Option<usize>,
    seed: u64,
    mode: Option<String>,
) -> PyResult<String> {
    let config = AdviseConfig {
        dpus,
        what_ifs,
        max_batch,
        repeat,
        threads,
        seed,
        mode,
        users,
        // 0: not given (the statistics take `users`; the others are told they need a batch).
        ..AdviseConfig::new(workload, n, batch.unwrap_or(0))
    };
    let report = py.allow_threads(|| advise::run(&config)).py_err()?;
    serde_json::to_string(&report).map_err(|e| error(Kind::Base, e.to_string()))
}

/// `pimhe bench bandwidth` as a JSON string (`--json`'s report): this machine's memory
/// bandwidth, STREAM-style (copy, add, triad; the best of `repeat` passes over three arrays of
/// `mib` MiB on `threads` threads, every core when None). `pimhe.bandwidth` parses it.
#[pyfunction]
#[pyo3(signature = (*, mib=256, repeat=5, threads=None))]
pub fn bandwidth_json(py: Python<'_>, mib: usize, repeat: usize, threads: Option<usize>) -> PyResult<String> {
    let config = BandwidthConfig { mib, repeat, threads };
    let report = py.allow_threads(|| bandwidth::run(&config)).py_err()?;
    serde_json::to_string(&report).map_err(|e| error(Kind::Base, e.to_string()))
}

/// `pimhe bench bootstrap` as a JSON string (`--json`'s report): one CKKS bootstrapping on
/// `backend` (cpu or nearbank, with `system` and `buffer_entries` there), its precision against
/// the input, the levels before and after, the keys it needs; INSECURE test presets (n = 1024
/// or 2048) until a 128-bit one exists. `pimhe.bench_bootstrap` parses it.
#[pyfunction]
#[pyo3(signature = (n, *, slots=None, backend="cpu", threads=None, system=None, buffer_entries=None, repeat=1, seed=1, real=false))]
#[allow(clippy::too_many_arguments)]
pub fn bootstrap_json(
    py: Python<'_>,
    n: usize,
    slots: Option<usize>,
    backend: &str,
    threads: Option<usize>,
    system: Option<String>,
    buffer_entries: Option<usize>,
    repeat: usize,
    seed: u64,
    real: bool,
) -> PyResult<String> {
    let flags =
        TargetFlags { backend: Some(backend.to_string()), threads, system, buffer_entries, ..TargetFlags::default() };
    let target = flags.parse(&bootstrap::RULES).py_err()?;
    let config = BootstrapBenchConfig { n, slots, target, repeat, seed, real };
    let report = py.allow_threads(|| bootstrap::run(&config)).py_err()?;
    serde_json::to_string(&report).map_err(|e| error(Kind::Base, e.to_string()))
}

/// `pimhe bench scheme` as a JSON string (`--json`'s report): a scheme's operations timed on
/// `backend` (cpu or nearbank), every result checked. `scheme` is bgv, bfv, ckks, or
/// bfv-special with `case` "A" or "B" (the CE-RAM B/FV paper's special moduli at its N = 2^14);
/// `n` and `batch` left out take the CLI's defaults (bfv-special: 16384 and 1; the others need
/// `n` and batch 8). `pimhe.bench_scheme` parses it.
#[pyfunction]
#[pyo3(signature = (scheme, *, n=None, case=None, batch=None, backend="cpu", threads=None, system=None, buffer_entries=None, repeat=5, seed=1, dnum=None, scale_bits=None))]
#[allow(clippy::too_many_arguments)]
pub fn scheme_json(
    py: Python<'_>,
    scheme: &str,
    n: Option<usize>,
    case: Option<String>,
    batch: Option<usize>,
    backend: &str,
    threads: Option<usize>,
    system: Option<String>,
    buffer_entries: Option<usize>,
    repeat: usize,
    seed: u64,
    dnum: Option<usize>,
    scale_bits: Option<u32>,
) -> PyResult<String> {
    let n = n
        .or_else(|| SchemeConfig::default_n(scheme))
        .ok_or_else(|| parameter(format!("bench_scheme(\"{scheme}\") needs n (the ring degree)")))?;
    let flags =
        TargetFlags { backend: Some(backend.to_string()), threads, system, buffer_entries, ..TargetFlags::default() };
    let config = SchemeConfig {
        scheme: scheme.to_string(),
        n,
        batch: batch.unwrap_or_else(|| SchemeConfig::default_batch(scheme)),
        target: flags.parse(&scheme::RULES).py_err()?,
        repeat,
        seed,
        dnum,
        scale_bits,
        case,
    };
    let report = py.allow_threads(|| scheme::measure(&config, &NoProgress)).py_err()?;
    serde_json::to_string(&report).map_err(|e| error(Kind::Base, e.to_string()))
}
