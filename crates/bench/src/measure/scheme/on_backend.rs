//! A benchmark written once, run on the configured target: cpu, or nearbank with the recorder
//! that plans each timed operation.

use pimhe_exec::{Backend, CpuBackend};
use pimhe_nearbank::NearbankBackend;

use crate::error::Result;
use crate::target::Target;

use super::bandwidth_use::measure_bandwidth;
use super::config::{SchemeConfig, RULES};
use super::modeled::{ModeledOps, OpRecorder};
use super::rounds::BenchOnBackend;

/// A benchmark written once for every backend: `run(backend, observer)` on the backend of
/// `args` (cpu, or nearbank with the recorder that plans each timed operation). Returns the
/// backend's name, its threads, what `run` returned, on nearbank each operation's cost
/// modeled on `--system`, and on the cpu this machine's memory bandwidth measured with the
/// same threads after the run (the limit its memory-bound rows are compared with).
pub(crate) fn on_backend<T>(
    args: &SchemeConfig,
    run: impl BenchOnBackend<T>,
) -> Result<(&'static str, usize, T, Option<ModeledOps>, Option<f64>)> {
    match &args.target {
        Target::Nearbank(nearbank) => {
            let backend = NearbankBackend::new(nearbank.threads)?;
            let recorder = OpRecorder::new(&backend);
            let value = run.call(&backend, Some(&recorder))?;
            let modeled = ModeledOps::of(&nearbank.model, &recorder.programs());
            Ok(("nearbank", backend.threads(), value, Some(modeled), None))
        }
        Target::Cpu { threads } => {
            let backend = CpuBackend::new(*threads)?;
            let value = run.call(&backend, None)?;
            let bandwidth = measure_bandwidth(backend.threads())?;
            Ok(("cpu", backend.threads(), value, None, Some(bandwidth)))
        }
        Target::UpmemEmu(_) => Err(RULES.check(&args.target).expect_err("bench scheme does not run on upmem-emu")),
    }
}
