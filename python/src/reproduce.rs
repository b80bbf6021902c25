//! `reproduce_dramatic`, `bench_kernel` and `advise_json`: the library's reproduction of
//! DRAMatic's tables (`pimhe_bench::reproduce::dramatic`, what `pimhe bench reproduce dramatic` prints),
//! its polynomial kernel benchmark (`pimhe_bench::measure::kernels`, `pimhe bench OP`) and the CPU-vs-PIM
//! verdict (`pimhe_bench::advise`, `pimhe advise`), as plain Python data for `pimhe.plots` and
//! `pimhe.advise`.

use pyo3::prelude::*;

use pimhe_bench::advise::{self, AdviseConfig};
use pimhe_bench::measure::kernels::{self, KernelConfig, Op};
use pimhe_bench::reproduce::dramatic::{reproduce, ReproduceConfig};
use pimhe_bench::target::TargetFlags;
use pimhe_bench::NoProgress;

use crate::errors::{error, IntoPy, Kind};

/// The modeled rows (and the target summary when selected) beside the published values, as a
/// JSON string that `pimhe.plots` reads: one object per row with `id`, `table`, `op`, `n`,
/// `ciphertexts`, `dpus`, `compute_s`, `transfer_s`, `retrieve_s`, `energy_j`, `model` and
/// the `published_*` values where the paper has them.
#[pyfunction]
#[pyo3(signature = (kernel="barrett", rows=None))]
pub fn reproduce_dramatic(py: Python<'_>, kernel: &str, rows: Option<String>) -> PyResult<String> {
    let config = ReproduceConfig { kernel: kernel.to_string(), rows, ..ReproduceConfig::default() };
    let report = py.allow_threads(|| reproduce(&config, &NoProgress)).py_err()?;
    serde_json::to_string(&report).map_err(|e| error(Kind::Base, e.to_string()))
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
/// or `never` with its bottleneck. Empty `dpus` / `what_ifs` take the CLI's defaults; `mode` is
/// `--mode` (parallel when None, or ciphertext-major).
#[pyfunction]
#[pyo3(signature = (workload, n, batch, *, dpus=Vec::new(), what_ifs=Vec::new(), max_batch=None, repeat=3, threads=None, seed=1, mode=None))]
#[allow(clippy::too_many_arguments)]
pub fn advise_json(
    py: Python<'_>,
    workload: &str,
    n: usize,
    batch: usize,
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
        ..AdviseConfig::new(workload, n, batch)
    };
    let report = py.allow_threads(|| advise::run(&config)).py_err()?;
    serde_json::to_string(&report).map_err(|e| error(Kind::Base, e.to_string()))
}
