//! Gupta et al.'s reproduction (`pimhe bench reproduce gupta`): BFV ciphertext vector addition
//! and multiplication on the paper's UPMEM system (shared/seeds/002_*, Fig. 1 and section 4.2)
//! with pimhe's RNS kernels, and the statistics workloads of Fig. 2 (section 4.3), beside the
//! CPU measured here and the speed-up ranges the text states.
//!
//! - **Fig. 1**: vector addition of 20,480 .. 327,680 ciphertexts and multiplication of
//!   5,120 .. 81,920 at the paper's three widths, N = 1024 / 2048 / 4096 with 27 / 54 / 109-bit
//!   coefficient moduli. The paper stores a coefficient in one 32-, 64- or 128-bit integer;
//!   pimhe in RNS limbs below 2^30, so the widths are 1, 2 and 4 limbs of 27-bit primes (108
//!   bits for the paper's 109: the DPU's instruction count does not depend on the primes'
//!   size). "Multiplication" is what the paper's DPUs run, the component products of two
//!   ciphertexts without NTT or relinearization on the DPUs; in pimhe's NTT-form ciphertexts
//!   that is BFV's tensor product ([`dpu::CtOp::Mul`]).
//! - **The DPU side** is modeled (`upmem-v1b` at the paper's 425 MHz, [`dpu::paper_model`]) from
//!   counts of pimhe's kernels really run on the emulator at a small share and priced by
//!   rounds ([`dpu`]); every emulated share is checked against the cpu backend's result. The
//!   2,524 DPUs are split into one group per limb (parallel mode). The paper's times exclude
//!   the host-DPU copies (its 50-100x over the CPU is impossible with tens of GB copied at the
//!   model's 10 GB/s), so the speed-ups are of the kernel time; the copies are printed beside.
//! - **The tasklet sweep**: the 109-bit rows at 1 .. 16 tasklets with pimhe's RNS kernels and
//!   with the paper's multi-word ones, beside the paper's saturation at 11.
//! - **The CPU side** is measured in the same run ([`cpu`]): pimhe's cpu backend on the same
//!   operations, scaled linearly from a batch that fits this host; beside it, for the
//!   addition, the i5-8250U's bandwidth bound; the paper's own arithmetic (32/64/128-bit
//!   integers, textbook products) on this host's threads ([`paper_cpu`]), the CPU side of the
//!   multi-word DPU rows; and SEAL, from the JSON that `bench/compare/gupta_seal.py` prints
//!   (`seal_json`; the reproduction runs no Python).
//!
//! - **Fig. 2**: mean, variance and linear regression end to end with pimhe's encrypted
//!   statistics at 109 bits, PIM priced from representative systems, CPU measured, SEAL
//!   composed ([`fig2`]).
//!
//! `--quick` runs small counts on a 12-DPU system and emulates every row's whole system as
//! well, failing when the priced time and the emulated one differ by more than
//! [`PRICING_TOLERANCE`].

pub mod cpu;
pub mod dpu;
pub mod fig2;
pub mod multiword;
pub mod paper_cpu;
pub mod published;
mod report;

use std::path::PathBuf;
use std::sync::Arc;

use pimhe_exec::CpuBackend;
use pimhe_math::ntt_primes;
use pimhe_pim::runtime::placement::{Mode, Plan};
use pimhe_pim::runtime::subset::{busiest_share, pull_bytes_per_dpu, push_bytes_per_dpu};
use pimhe_ring::RingBasis;
use pimhe_workloads::progress::Progress;
use serde::{Deserialize, Serialize};

use crate::error::{BenchError, Result};
use crate::measure::machine::CpuFacts;
use dpu::{emulate, paper_model, CtOp, SharePricer};
use fig2::{fig2_model, fig2_row, Fig2Setup, TextbookPricing};
use pimhe_pim::model::ModelVersion;
use published::{ADD_CIPHERTEXTS, MUL_CIPHERTEXTS, PAPER_CPU_PEAK_BYTES_PER_S, PAPER_DPUS, PAPER_DPU_HZ};

pub use fig2::{Fig2Point, Fig2Row};
pub use report::{Fig1Row, Gupta, GuptaReport, SweepRow};

/// Bits of each RNS limb's prime: 27, the paper's smallest width, so that 1, 2 and 4 limbs
/// hold its 27-, 54- and (within a bit) 109-bit coefficients.
pub const LIMB_BITS: u32 = 27;
/// Tasklets of the Fig. 1 rows: a v1B DPU's 16 (the paper does not say how many it ran; its
/// times stop improving from 11).
pub const TASKLETS: u32 = 16;
/// DPUs of the `--quick` system: 12, divisible by 1, 2 and 4 limbs.
pub const QUICK_DPUS: usize = 12;
/// `--quick` divides the paper's ciphertext counts by this.
pub const QUICK_DIVISOR: usize = 1024;
/// Largest relative difference between the priced and the whole-system emulated kernel time
/// that `--quick` accepts: none beyond floating-point rounding (the pricing is exact, see
/// [`dpu`]).
pub const PRICING_TOLERANCE: f64 = 1e-9;

/// One of the paper's coefficient widths with pimhe's representation of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Width {
    /// The paper's coefficient modulus bits (27, 54, 109).
    pub coefficient_bits: u32,
    /// The paper's integer per coefficient (32, 64, 128 bits).
    pub word_bits: u32,
    /// Ring degree.
    pub n: usize,
    /// pimhe's RNS limbs.
    pub limbs: usize,
}

/// The paper's three widths (section 3: 1024 27-bit, 2048 54-bit, 4096 109-bit coefficients).
pub const WIDTHS: [Width; 3] = [
    Width { coefficient_bits: 27, word_bits: 32, n: 1024, limbs: 1 },
    Width { coefficient_bits: 54, word_bits: 64, n: 2048, limbs: 2 },
    Width { coefficient_bits: 109, word_bits: 128, n: 4096, limbs: 4 },
];

impl Width {
    /// The ring of this width: N with `limbs` NTT-friendly primes of [`LIMB_BITS`] bits.
    pub fn basis(&self) -> Result<Arc<RingBasis>> {
        let primes = ntt_primes(LIMB_BITS, self.n, self.limbs, &[])
            .map_err(|e| BenchError::Failed(format!("primes of {} bits for N = {}: {e}", LIMB_BITS, self.n)))?;
        Ok(RingBasis::new(self.n, &primes)?)
    }
}

/// What `pimhe bench reproduce gupta` runs: its flags by Python's names.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct GuptaConfig {
    /// Small counts on a 12-DPU system, every row also emulated whole and checked (seconds).
    pub quick: bool,
    /// Model only: skip the CPU measurement.
    pub skip_cpu: bool,
    /// Timed rounds of each CPU measurement, after a warm-up [default: 3].
    pub repeat: usize,
    /// Worker threads of pimhe's cpu backend (`None`: all cores).
    pub threads: Option<usize>,
    /// SEAL's times on this machine: the JSON `bench/compare/gupta_seal.py` printed (`None`: the
    /// SEAL rows are not judged).
    pub seal_json: Option<PathBuf>,
    /// Seed of the inputs [default: 1].
    #[serde(skip)]
    pub seed: u64,
}

impl Default for GuptaConfig {
    fn default() -> Self {
        Self { quick: false, skip_cpu: false, repeat: 3, threads: None, seal_json: None, seed: 1 }
    }
}

impl GuptaConfig {
    /// DPUs of the modeled system: the paper's 2,524, or [`QUICK_DPUS`].
    pub fn dpus(&self) -> usize {
        if self.quick {
            QUICK_DPUS
        } else {
            PAPER_DPUS
        }
    }

    /// The ciphertext counts of `op`: the paper's, or divided by [`QUICK_DIVISOR`] (first three).
    pub fn counts(&self, op: CtOp) -> Vec<usize> {
        let paper = match op {
            CtOp::Add => ADD_CIPHERTEXTS,
            CtOp::Mul => MUL_CIPHERTEXTS,
        };
        if self.quick {
            paper.iter().take(3).map(|c| c / QUICK_DIVISOR).collect()
        } else {
            paper.to_vec()
        }
    }
}

/// Runs the reproduction.
pub fn reproduce(config: &GuptaConfig, progress: &dyn Progress) -> Result<GuptaReport> {
    if config.repeat == 0 {
        return Err(BenchError::usage("--repeat 0 is not allowed: at least 1 timed round is needed"));
    }
    let seal = config.seal_json.as_deref().map(cpu::read_seal).transpose()?.unwrap_or_default();
    let model = paper_model(PAPER_DPU_HZ)?;
    let mut pricer = SharePricer::new(model.clone(), config.seed);
    let threads = config.threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let cpu_backend = CpuBackend::new(Some(threads))?;
    let machine = CpuFacts::this_machine(threads);
    let dpus = config.dpus();
    let cpu_host = format!("{} ({} threads)", machine.name, threads);
    let fig2_points = fig2::points(config.quick);
    progress.start(
        2 * WIDTHS.len() as u64 + 1 + fig2_points.len() as u64,
        "gupta: Fig. 1 rows, the tasklet sweep and Fig. 2's workloads",
    );
    let measured_bytes = if config.quick { cpu::QUICK_MEASURED_BYTES } else { cpu::MEASURED_BYTES };
    let paper_cpu = if config.skip_cpu {
        Vec::new()
    } else {
        WIDTHS
            .iter()
            .map(|w| {
                let divisor = if config.quick { paper_cpu::QUICK_OUTPUT_DIVISOR } else { 1 };
                paper_cpu::measure(w, threads, measured_bytes, divisor, config.repeat, config.seed)
            })
            .collect::<Result<Vec<_>>>()?
    };
    let mut rows = Vec::new();
    let mut measurements = Vec::new();
    for op in CtOp::ALL {
        for width in WIDTHS {
            let basis = width.basis()?;
            let measured = if config.skip_cpu {
                None
            } else {
                Some(cpu::measure(&cpu_backend, op, &width, measured_bytes, config.repeat, config.seed)?)
            };
            let seal_width = seal.iter().find(|s| s.coefficient_bits == width.coefficient_bits);
            for ciphertexts in config.counts(op) {
                let mut row = fig1_row(&mut pricer, op, &width, &basis, dpus, ciphertexts, TASKLETS)?;
                row.seal_s = seal_width.map(|s| s.seconds_per_ciphertext(op) * ciphertexts as f64);
                row.cpu_s = measured.as_ref().map(|m| m.seconds_per_ciphertext * ciphertexts as f64);
                row.speedup = row.cpu_s.map(|c| c / row.kernel_s);
                if config.quick {
                    let polys = op.operand_polys(ciphertexts);
                    let whole = emulate(op, &basis, polys, dpus, TASKLETS, pricer.model(), config.seed)?;
                    let emulated = whole.report.compute_s;
                    if (row.kernel_s / emulated - 1.0).abs() > PRICING_TOLERANCE {
                        return Err(BenchError::Failed(format!(
                            "{} at {} bits, {ciphertexts} ciphertexts: priced {:.6e} s but the whole {dpus}-DPU system \
                             emulated {:.6e} s (more than {:.1e} apart, relative)",
                            op.name(),
                            width.coefficient_bits,
                            row.kernel_s,
                            emulated,
                            PRICING_TOLERANCE
                        )));
                    }
                    row.emulated_kernel_s = Some(emulated);
                }
                rows.push(row);
            }
            measurements.extend(measured);
            progress.advance(1);
        }
    }
    let multiword = multiword::rows(&mut pricer, &rows, &paper_cpu, dpus, TASKLETS)?;
    let sweep = tasklet_sweep(&mut pricer, config, dpus)?;
    progress.advance(1);
    let widest = WIDTHS[2];
    let product_cycles = multiword
        .iter()
        .find_map(|r| r.textbook.as_ref().filter(|_| r.coefficient_bits == widest.coefficient_bits))
        .map(|t| t.product_cycles)
        .ok_or_else(|| BenchError::Failed("internal error: no 109-bit textbook product was priced".into()))?;
    let widest_q = multiword::modulus(widest.coefficient_bits)?;
    let stats_model = ModelVersion::default();
    let setup = Fig2Setup {
        dpus,
        model: stats_model,
        cpu: &cpu_backend,
        skip_cpu: config.skip_cpu,
        emulate_whole: config.quick,
        threads: Some(threads),
        repeat: config.repeat,
        seal: seal.iter().find(|s| s.coefficient_bits == widest.coefficient_bits),
        paper_cpu: paper_cpu.iter().find(|s| s.coefficient_bits == widest.coefficient_bits),
        seed: config.seed,
        textbook: TextbookPricing { model: pricer.model(), modulus: &widest_q, product_cycles },
    };
    let mut fig2 = Vec::with_capacity(fig2_points.len());
    for point in &fig2_points {
        fig2.push(fig2_row(point, &setup)?);
        progress.advance(1);
    }
    progress.finish();
    Ok(GuptaReport {
        model: model.label(),
        dpus,
        dpu_hz: model.dpu_hz,
        tasklets: TASKLETS,
        quick: config.quick,
        cpu_machine: format!("{cpu_host}, pimhe cpu backend"),
        cpu_host,
        seal: seal.clone(),
        paper_cpu,
        rows,
        multiword,
        cpu: measurements,
        sweep,
        emulations: pricer.emulations,
        fig2_model: fig2_model(stats_model)?.label(),
        fig2,
    })
}

/// One Fig. 1 row modeled: the busiest DPU's kernel time and the modeled copies, no CPU yet.
pub fn fig1_row(
    pricer: &mut SharePricer,
    op: CtOp,
    width: &Width,
    basis: &RingBasis,
    dpus: usize,
    ciphertexts: usize,
    tasklets: u32,
) -> Result<Fig1Row> {
    let plan = Plan::new(Mode::Parallel, dpus, width.limbs).map_err(BenchError::usage)?;
    let polys = op.operand_polys(ciphertexts);
    let share = busiest_share(&plan, width.limbs, polys);
    let kernel_s = pricer.launch_seconds(op, basis, share, tasklets)?;
    let slots: Vec<usize> = (0..width.limbs).collect();
    let (uploads, downloads) = op.operands();
    let model = pricer.model();
    let transfer_s = uploads as f64 * model.transfer_seconds(&push_bytes_per_dpu(&plan, &slots, polys, width.n));
    let retrieve_s = downloads as f64 * model.retrieve_seconds(&pull_bytes_per_dpu(&plan, &slots, polys, width.n));
    Ok(Fig1Row {
        op,
        coefficient_bits: width.coefficient_bits,
        n: width.n,
        limbs: width.limbs,
        ciphertexts,
        dpus_per_limb: dpus / width.limbs,
        share,
        tasklets,
        kernel_s,
        transfer_s,
        retrieve_s,
        emulated_kernel_s: None,
        cpu_s: None,
        seal_s: None,
        speedup: None,
        paper_cpu_bound_s: op.bytes_moved(ciphertexts, width.n, width.limbs) as f64 / PAPER_CPU_PEAK_BYTES_PER_S,
    })
}

/// The 109-bit rows at the largest count with 1 ..= 16 tasklets, pimhe's RNS kernels and the
/// paper's multi-word ones ([`multiword::paper_kernel_s`]).
fn tasklet_sweep(pricer: &mut SharePricer, config: &GuptaConfig, dpus: usize) -> Result<Vec<SweepRow>> {
    let width = WIDTHS[2];
    let basis = width.basis()?;
    let mut rows = Vec::new();
    for op in CtOp::ALL {
        let ciphertexts = config.counts(op).last().copied().unwrap_or(0);
        for tasklets in 1..=pimhe_pim::model::UpmemModel::v1b().max_tasklets {
            let row = fig1_row(pricer, op, &width, &basis, dpus, ciphertexts, tasklets)?;
            let paper_kernel_s = multiword::paper_kernel_s(pricer.model(), op, &width, ciphertexts, dpus, tasklets)?;
            rows.push(SweepRow {
                op,
                coefficient_bits: width.coefficient_bits,
                ciphertexts,
                tasklets,
                kernel_s: row.kernel_s,
                paper_kernel_s,
            });
        }
    }
    Ok(rows)
}
