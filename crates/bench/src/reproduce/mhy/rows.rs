//! Fig. 3's rows: one raw operation at one length on one DPU count, its CPU side measured (or
//! extrapolated) here and scaled, its DPU side modeled from the slowest DPU's counts, and Table
//! II's alpha.

use pimhe_pim::emulator::EmulatorConfig;
use pimhe_pim::layout::Variant;
use pimhe_pim::model::UpmemModel;
use pimhe_pim::raw_poly::{residues, run, transfer_bytes, RawOp};
use serde::{Deserialize, Serialize};

use super::counts::{slowest_dpu, CountsBasis};
use super::cpu::{self, CpuTime, CPU_CONV_MAX_N};
use super::published::PAPER_Q;
use crate::error::{BenchError, Result};
use crate::measure::machine::CpuFacts;

/// One bar group of Fig. 3.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Fig3Row {
    /// The operation.
    pub op: RawOp,
    /// Coefficients.
    pub n: usize,
    /// DPUs the polynomial is spread over.
    pub dpus: usize,
    /// The single-thread CPU time here.
    pub cpu_here: CpuTime,
    /// `cpu_here` scaled to the paper's CPU ([`cpu::scaling_rule`]): the cpu-time column.
    pub cpu_s: Option<f64>,
    /// Modeled launch time of the slowest DPU, launch overhead included: the dpu-time column.
    pub dpu_s: f64,
    /// Modeled host -> DPU copy of the operands: the host-dpu column.
    pub host_dpu_s: f64,
    /// Modeled DPU -> host copy of the result: the dpu-host column.
    pub dpu_host_s: f64,
    /// How the slowest DPU's counts were obtained.
    #[serde(flatten)]
    pub counts: CountsBasis,
    /// The slowest DPU's instructions, summed over its tasklets.
    pub instructions: u64,
    /// Table II's alpha as the paper counts copies: the kernel's operations / 3n coefficients.
    pub alpha: f64,
    /// Ours: the kernel's operations / the coefficients actually copied (the convolution
    /// sends both whole operands to every DPU).
    pub alpha_copied: f64,
    /// Quick runs: whether the whole operation executed on the emulated DPUs equals the CPU
    /// loop's result (`None`: not executed whole).
    pub executed_equal: Option<bool>,
}

impl Fig3Row {
    /// dpu-time + host-dpu + dpu-host.
    pub fn dpu_with_copies_s(&self) -> f64 {
        self.dpu_s + self.host_dpu_s + self.dpu_host_s
    }
}

/// What every row of a run shares.
pub struct RowSetup<'a> {
    /// The timing model.
    pub model: &'a UpmemModel,
    /// The emulated DPUs' shape (16 tasklets).
    pub config: EmulatorConfig,
    /// The kernels' arithmetic.
    pub variant: Variant,
    /// This machine, for the scaling rule; `None`: the CPU side is skipped.
    pub cpu: Option<&'a CpuFacts>,
    /// Execute the whole operation on the emulator and compare with the CPU loop.
    pub execute: bool,
}

/// The kernel's operations for `op` on n coefficients: n additions, n products, or the
/// negacyclic convolution's n^2 products and n (n - 1) additions or subtractions.
fn kernel_operations(op: RawOp, n: usize) -> f64 {
    let n = n as f64;
    match op {
        RawOp::Add | RawOp::Mul => n,
        RawOp::Conv => n * n + n * (n - 1.0),
    }
}

/// The CPU loops timed so far for one operation: (n, seconds, result), the time of a length
/// shared by every DPU count, the longest convolution the base of the extrapolation.
pub type CpuTimes = Vec<(usize, f64, Vec<u32>)>;

/// One row: `op` on n coefficients over `dpus` DPUs; `timed` holds the CPU loops of `op` timed
/// so far (a length is timed once, whatever the DPU count).
pub fn row(setup: &RowSetup, op: RawOp, n: usize, dpus: usize, timed: &mut CpuTimes) -> Result<Fig3Row> {
    let failed =
        |e: pimhe_pim::raw_poly::RawPolyError| BenchError::Failed(format!("MHY+ {} n={n} dpus={dpus}: {e}", op.name()));
    let (a, b) = (residues(n, PAPER_Q, 2 * n as u64), residues(n, PAPER_Q, 2 * n as u64 + 1));
    let cpu_here = match setup.cpu {
        None => CpuTime::Skipped,
        Some(_) if op == RawOp::Conv && n > CPU_CONV_MAX_N => {
            let (from_n, s, _) = timed.iter().max_by_key(|t| t.0).ok_or_else(|| {
                BenchError::Failed(format!("MHY+ convolution n={n}: no measured convolution to extrapolate from"))
            })?;
            CpuTime::Extrapolated { seconds: s * (n as f64 / *from_n as f64).powi(2), from_n: *from_n }
        }
        Some(_) => {
            if !timed.iter().any(|t| t.0 == n) {
                let (seconds, result) = cpu::time(op, &a, &b, PAPER_Q);
                timed.push((n, seconds, result));
            }
            let seconds = timed.iter().find(|t| t.0 == n).map_or(0.0, |t| t.1);
            CpuTime::Measured { seconds }
        }
    };
    let executed_equal = if setup.execute {
        let expected = match timed.iter().find(|t| t.0 == n) {
            Some(t) => t.2.clone(),
            None => cpu::compute(op, &a, &b, PAPER_Q),
        };
        let out = run(op, PAPER_Q, &a, &b, dpus, setup.config.clone(), setup.variant).map_err(failed)?;
        Some(out.result == expected)
    } else {
        None
    };
    let (counts, basis) = slowest_dpu(op, PAPER_Q, n, dpus, &setup.config, setup.variant).map_err(failed)?;
    let (to_dpu, from_dpu) = transfer_bytes(op, n, dpus).map_err(failed)?;
    let copied_words = (to_dpu.iter().sum::<u64>() + from_dpu.iter().sum::<u64>()) as f64 / 4.0;
    let m = setup.model;
    Ok(Fig3Row {
        op,
        n,
        dpus,
        cpu_s: cpu_here.seconds().zip(setup.cpu).map(|(s, here)| cpu::scaled(s, here)),
        cpu_here,
        dpu_s: m.launch_seconds(std::slice::from_ref(&counts)),
        host_dpu_s: m.transfer_seconds(&to_dpu),
        dpu_host_s: m.retrieve_seconds(&from_dpu),
        counts: basis,
        instructions: counts.total().instructions,
        alpha: kernel_operations(op, n) / (3 * n) as f64,
        alpha_copied: kernel_operations(op, n) / copied_words,
        executed_equal,
    })
}
