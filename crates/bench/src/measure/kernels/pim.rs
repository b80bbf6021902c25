//! Kernels on the `upmem-emu` backend: a workload on emulated UPMEM DPUs, timed by the
//! `upmem-v1b` model.
//!
//! A run uploads its inputs, runs the operation as one deferred command list (one launch in
//! parallel mode, one per prime in sequential mode) and downloads its outputs, so the report
//! splits into the modeled transfer of the inputs, the DPU compute and the retrieval of the
//! outputs. Two ways to get there:
//!
//! - **full**: every DPU of the system is emulated with its real share of the data
//!   ([`run_full`]); all figures come from the backend's [`OffloadReport`].
//! - **subset**: only the busiest DPU of each prime group is emulated ([`run_subset`]): in
//!   parallel mode one DPU per prime holding `ceil(count / group size)` polynomials of each
//!   operand, in sequential mode one DPU serving every prime in turn with
//!   `ceil(count / DPUs)`. All DPUs of a group run the same program on equal-sized work, so
//!   the busiest one is the slowest and its launch time is the system's: compute (and the
//!   energy that follows from it) comes from that emulation, while transfer and retrieval are
//!   priced by the model on the full system's bytes per DPU
//!   ([`pimhe_pim::runtime::subset`]), with no data. A batch that needs more memory than
//!   this host has can be modeled this way.
//!
//! When a time budget is given (`bench reproduce`), a busiest share that would take longer
//! to emulate is emulated in part: a whole number `k` of the `F` full rounds of 16
//! sub-polynomials (one per tasklet), with compute scaled by `F / k`, plus the last partial
//! round exactly (the model is additive over rounds when every tasklet gets the same work).

use std::sync::Arc;
use std::time::Instant;

use pimhe_exec::Backend;
use pimhe_math::Sampler;
use pimhe_pim::counts::TaskletCounts;
use pimhe_pim::layout;
use pimhe_pim::runtime::placement::{Mode, Plan};
use pimhe_pim::runtime::subset::{busiest_share, pull_bytes_per_dpu, push_bytes_per_dpu};
use pimhe_pim::runtime::{OffloadReport, PimBackend};
use pimhe_ring::{PolyBatch, Representation, RingBasis};

use super::workload::{check_memory, execute, generate_inputs, Op, Workload};
use crate::error::{BenchError, Result};
use crate::measure::inputs::random_batch;
use crate::target::upmem::{Emulate, PimOutcome, PimSettings, Sources, AUTO_FULL_MAX_BYTES, AUTO_FULL_MAX_DPUS};

/// MRAM the runtime reserves at the start of every DPU: header and command list.
const RESERVED_MRAM_BYTES: usize = layout::HEADER_BYTES + 256 * layout::COMMAND_BYTES;

/// The operations this module runs: kernels on random residues. `bench` hands bfv-mul,
/// bfv-add and bgv-mul-relin (real ciphertexts) to [`super::exact`], so [`Kernel::of`]
/// refuses them once, at the entry of [`run_full`] and [`run_subset`], and nothing below
/// handles them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kernel {
    /// `ntt`.
    Ntt,
    /// `intt`.
    Intt,
    /// `bgv-mul`.
    BgvMul,
    /// `pipeline`.
    Pipeline,
}

impl Kernel {
    /// The kernel of `op`; an internal error for the BFV operations.
    pub fn of(op: Op) -> Result<Self> {
        match op {
            Op::Ntt => Ok(Kernel::Ntt),
            Op::Intt => Ok(Kernel::Intt),
            Op::BgvMul => Ok(Kernel::BgvMul),
            Op::Pipeline => Ok(Kernel::Pipeline),
            Op::BfvMul | Op::BfvAdd | Op::BgvMulRelin => {
                Err(BenchError::Failed(format!("internal error: {} has no random operands", op.name())))
            }
        }
    }
}

/// Polynomials of each operand: 2C for transforms, C/2 for each of a0, a1, b0, b1.
pub fn operand_polys(kernel: Kernel, batch: usize) -> usize {
    match kernel {
        Kernel::Ntt | Kernel::Intt => 2 * batch,
        Kernel::BgvMul | Kernel::Pipeline => batch / 2,
    }
}

/// (operands uploaded, operands downloaded, operands resident at once).
fn operand_counts(kernel: Kernel) -> (usize, usize, usize) {
    match kernel {
        Kernel::Ntt | Kernel::Intt => (1, 1, 1),
        Kernel::BgvMul | Kernel::Pipeline => (4, 3, 7),
    }
}

/// Bytes of MRAM the whole system holds during the run (data and twiddle tables).
pub fn footprint_bytes(workload: &Workload, settings: &PimSettings) -> u128 {
    let n = workload.n() as u128;
    let primes = workload.primes() as u128;
    let tables = match settings.mode {
        // Hybrid is parallel for these kernels: they cross no primes.
        Mode::Parallel | Mode::Hybrid => (settings.dpus / workload.primes() * workload.primes()) as u128 * 16 * n,
        Mode::Sequential | Mode::CiphertextMajor => settings.dpus as u128 * primes * 16 * n,
    };
    workload.estimated_bytes() + tables
}

/// Runs `workload` with `emulate` (auto resolved here). `max_emulation_s` bounds the
/// emulation time of a subset run (see the module documentation); `None` emulates the
/// busiest share exactly.
pub fn run(
    workload: &Workload,
    settings: &PimSettings,
    emulate: Emulate,
    max_emulation_s: Option<f64>,
) -> Result<PimOutcome> {
    check_degree(workload)?;
    let full = match emulate {
        Emulate::Full => true,
        Emulate::Subset => false,
        Emulate::Auto => {
            footprint_bytes(workload, settings) < AUTO_FULL_MAX_BYTES && settings.dpus <= AUTO_FULL_MAX_DPUS
        }
    };
    if full {
        run_full(workload, settings)
    } else {
        run_subset(workload, settings, max_emulation_s)
    }
}

fn check_degree(workload: &Workload) -> Result<()> {
    let n = workload.n();
    if !(layout::N_MIN..=layout::N_MAX).contains(&n) {
        return Err(BenchError::usage(format!(
            "--n {n} is not allowed with --backend upmem-emu: the DPU kernels support N = {} ..= {}",
            layout::N_MIN,
            layout::N_MAX
        )));
    }
    Ok(())
}

/// Refuses shares that do not fit one DPU's MRAM (`primes_per_dpu` limbs of every operand).
fn check_mram(workload: &Workload, kernel: Kernel, share: usize, primes_per_dpu: usize, what: &str) -> Result<()> {
    let n = workload.n();
    let (_, _, resident) = operand_counts(kernel);
    let needed = RESERVED_MRAM_BYTES + primes_per_dpu * (16 * n + resident * share * 4 * n);
    let available = pimhe_pim::emulator::MRAM_BYTES;
    if needed > available {
        return Err(BenchError::usage(format!(
            "{what}: the busiest DPU would need {:.1} MiB of MRAM ({resident} operands x {share} polynomials \
             of N={n} x {primes_per_dpu} primes, plus twiddles), more than a DPU's {} MiB; use more --dpus or a \
             smaller --batch",
            needed as f64 / (1 << 20) as f64,
            available >> 20
        )));
    }
    Ok(())
}

/// Every DPU emulated, the real data uploaded, executed, downloaded.
pub fn run_full(workload: &Workload, settings: &PimSettings) -> Result<PimOutcome> {
    let kernel = Kernel::of(workload.op)?;
    check_memory(workload, pimhe_ring::memory::available_memory())?;
    let primes = workload.primes();
    let plan = Plan::new(settings.mode, settings.dpus, primes).map_err(BenchError::usage)?;
    let count = operand_polys(kernel, workload.batch);
    let share = busiest_share(&plan, primes, count);
    let per_dpu = if settings.mode.groups_per_prime() { 1 } else { primes };
    check_mram(workload, kernel, share, per_dpu, "--emulate full")?;

    let config = settings.config(settings.dpus, settings.mode);
    let model = config.model.clone();
    let pim = PimBackend::new(config, workload.n(), &workload.basis.primes())?;
    let host = generate_inputs(workload)?;
    let start = Instant::now();
    let report = run_on(&pim, workload.op, host, true)?;
    let wall_s = start.elapsed().as_secs_f64();

    let energy_j = model.energy_joules(report.total_s(), settings.ranks());
    Ok(PimOutcome {
        emulation: "full".to_string(),
        emulated_dpus: plan.used_dpus(),
        busiest_share: share,
        wall_s,
        transfer_s: report.transfer_s,
        compute_s: report.compute_s,
        retrieve_s: report.retrieve_s,
        total_s: report.total_s(),
        energy_j,
        model: report.model.clone(),
        launches: report.launches,
        fallbacks: report.fallbacks,
        counted_instructions: report.counted.instructions,
        counted: report.counted,
        bytes_to_dpus: report.bytes_to_dpus,
        bytes_from_dpus: report.bytes_from_dpus,
        sources: Sources {
            compute_s: format!("emulated: all {} DPUs", plan.used_dpus()),
            transfer_s: "model, on the bytes the emulated uploads and downloads moved".into(),
            energy_j: "model power x modeled total time".into(),
            wall_s: "measured: emulator on this host (upload, execute, download)".into(),
        },
    })
}

/// Uploads `host`, runs `op`, and (when `download`) downloads the results; returns the report.
fn run_on(pim: &PimBackend, op: Op, host: Vec<PolyBatch>, download: bool) -> Result<OffloadReport> {
    let mut inputs = host.into_iter().map(|b| pim.upload(b)).collect::<pimhe_exec::Result<Vec<_>>>()?;
    let outputs = execute(pim, op, &mut inputs)?;
    if download {
        let results = if outputs.is_empty() { &inputs } else { &outputs };
        for buffer in results {
            pim.download(buffer)?;
        }
    }
    Ok(pim.report()?)
}

/// Compute of one emulated share.
#[derive(Debug, Clone, Default)]
struct ShareRun {
    compute_s: f64,
    launches: u64,
    fallbacks: u64,
    counted: TaskletCounts,
    wall_s: f64,
}

impl ShareRun {
    fn add(&mut self, other: &ShareRun) {
        self.compute_s += other.compute_s;
        self.launches += other.launches;
        self.fallbacks += other.fallbacks;
        self.counted.accumulate(&other.counted);
        self.wall_s += other.wall_s;
    }
}

/// Random operands of `polys` polynomials each over `basis`, as [`generate_inputs`] makes
/// them for `op`.
fn share_inputs(kernel: Kernel, basis: &Arc<RingBasis>, polys: usize, seed: u64) -> Result<Vec<PolyBatch>> {
    let mut sampler = Sampler::from_seed_u64(seed);
    let (representation, operands) = match kernel {
        Kernel::Ntt => (Representation::Coefficient, 1),
        Kernel::Intt => (Representation::Ntt, 1),
        Kernel::BgvMul => (Representation::Ntt, 4),
        Kernel::Pipeline => (Representation::Coefficient, 4),
    };
    (0..operands).map(|_| random_batch(basis, polys, representation, &mut sampler)).collect()
}

/// Emulates the busiest share: `polys` polynomials per operand on one DPU per prime group.
fn emulate_share(workload: &Workload, kernel: Kernel, settings: &PimSettings, polys: usize) -> Result<ShareRun> {
    let n = workload.n();
    let moduli = workload.basis.primes();
    let mut total = ShareRun::default();
    // Parallel: one DPU per prime, all in one launch. Sequential: one DPU, one prime at a
    // time (a launch per prime, as the full system runs them). Ciphertext-major: one DPU
    // serving every prime in one launch.
    let (groups, config): (Vec<Vec<u32>>, fn(usize) -> (usize, Mode)) = match settings.mode {
        Mode::Parallel | Mode::Hybrid => (vec![moduli.clone()], |primes| (primes, Mode::Parallel)),
        Mode::Sequential => (moduli.iter().map(|&q| vec![q]).collect(), |primes| (primes, Mode::Parallel)),
        Mode::CiphertextMajor => (vec![moduli.clone()], |_| (1, Mode::CiphertextMajor)),
    };
    for group in groups {
        let basis = RingBasis::new(n, &group)?;
        let host = share_inputs(kernel, &basis, polys, workload.seed)?;
        let (dpus, mode) = config(group.len());
        let pim = PimBackend::new(settings.config(dpus, mode), n, &group)?;
        let start = Instant::now();
        let report = run_on(&pim, workload.op, host, false)?;
        total.add(&ShareRun {
            compute_s: report.compute_s,
            launches: report.launches,
            fallbacks: report.fallbacks,
            counted: report.counted,
            wall_s: start.elapsed().as_secs_f64(),
        });
    }
    Ok(total)
}

/// Counts scaled by a real factor (rounded).
fn scale_counts(counts: &TaskletCounts, factor: f64) -> TaskletCounts {
    let s = |x: u64| (x as f64 * factor).round() as u64;
    TaskletCounts {
        instructions: s(counts.instructions),
        dma_reads: s(counts.dma_reads),
        dma_read_bytes: s(counts.dma_read_bytes),
        dma_writes: s(counts.dma_writes),
        dma_write_bytes: s(counts.dma_write_bytes),
    }
}

/// The busiest DPU of each prime group emulated; transfers modeled on the full placement.
pub fn run_subset(workload: &Workload, settings: &PimSettings, max_emulation_s: Option<f64>) -> Result<PimOutcome> {
    let kernel = Kernel::of(workload.op)?;
    let primes = workload.primes();
    let n = workload.n();
    let plan = Plan::new(settings.mode, settings.dpus, primes).map_err(BenchError::usage)?;
    let count = operand_polys(kernel, workload.batch);
    let share = busiest_share(&plan, primes, count);
    let group = plan.group(0).len();
    check_mram(workload, kernel, share, 1, "--emulate subset")?;
    let model = settings.config(1, Mode::Parallel).model;
    let tasklets = model.tasklets as usize;

    // Compute: the busiest share, exactly or (past the time budget) in whole rounds.
    let full_rounds = share / tasklets;
    let rest = share % tasklets;
    let mut note = None;
    let run = match max_emulation_s {
        Some(budget) if full_rounds >= 2 => {
            let probe = emulate_share(workload, kernel, settings, tasklets)?;
            let estimate = probe.wall_s * share as f64 / tasklets as f64;
            if estimate <= budget {
                let mut exact = emulate_share(workload, kernel, settings, share)?;
                exact.wall_s += probe.wall_s;
                exact
            } else {
                let k = ((budget / probe.wall_s.max(1e-9)).floor() as usize).clamp(1, full_rounds);
                let mut main =
                    if k == 1 { probe.clone() } else { emulate_share(workload, kernel, settings, k * tasklets)? };
                if k > 1 {
                    main.wall_s += probe.wall_s;
                }
                let overhead = model.launch_overhead_s;
                let factor = full_rounds as f64 / k as f64;
                let mut result = ShareRun {
                    compute_s: main.launches as f64 * overhead
                        + (main.compute_s - main.launches as f64 * overhead) * factor,
                    launches: main.launches,
                    fallbacks: main.fallbacks,
                    counted: scale_counts(&main.counted, factor),
                    wall_s: main.wall_s,
                };
                if rest > 0 {
                    let tail = emulate_share(workload, kernel, settings, rest)?;
                    result.compute_s += tail.compute_s - tail.launches as f64 * overhead;
                    result.counted.accumulate(&tail.counted);
                    result.wall_s += tail.wall_s;
                }
                note = Some(format!(
                    "busiest DPU emulated in part: {} of its {share} sub-polynomials per operand ({k} of {full_rounds} \
                     rounds of {tasklets}, compute scaled x{factor:.2} by rounds){}",
                    k * tasklets,
                    if rest > 0 { format!(" + the last partial round of {rest} exactly") } else { String::new() }
                ));
                result
            }
        }
        _ => emulate_share(workload, kernel, settings, share)?,
    };

    // Transfers: the full system's bytes per DPU, one transfer per uploaded or downloaded operand.
    let slots: Vec<usize> = (0..primes).collect();
    let (uploads, downloads, resident) = operand_counts(kernel);
    let push = push_bytes_per_dpu(&plan, &slots, count, n);
    let pull = pull_bytes_per_dpu(&plan, &slots, count, n);
    let transfer_s = uploads as f64 * model.transfer_seconds(&push);
    let retrieve_s = downloads as f64 * model.retrieve_seconds(&pull);
    let total_s = transfer_s + run.compute_s + retrieve_s;

    let (emulated, per_group) = match settings.mode {
        Mode::Parallel | Mode::Hybrid => (primes, format!("1 emulated DPU per prime group of {group}")),
        Mode::Sequential => (
            1,
            format!(
                "1 emulated DPU per prime group of {group} (sequential: one DPU serving all {primes} primes in turn)"
            ),
        ),
        Mode::CiphertextMajor => (
            1,
            format!("1 emulated DPU of {group} (ciphertext-major: one DPU serving all {primes} primes in one launch)"),
        ),
    };
    let mut emulation = format!("subset: {per_group}, busiest share {share} polynomials/operand, extrapolated");
    if let Some(note) = &note {
        emulation.push_str("; ");
        emulation.push_str(note);
    }
    if !settings.mode.groups_per_prime() {
        let all_primes = RESERVED_MRAM_BYTES + primes * (16 * n + resident * share * 4 * n);
        if all_primes > pimhe_pim::emulator::MRAM_BYTES {
            emulation.push_str(&format!(
                "; note: all {primes} primes' shares need {:.0} MiB per DPU, more than its MRAM, so the system \
                 must hold one prime at a time (as DRAMatic's sequential mode does)",
                all_primes as f64 / (1 << 20) as f64
            ));
        }
    }
    Ok(PimOutcome {
        emulation,
        emulated_dpus: emulated,
        busiest_share: share,
        wall_s: run.wall_s,
        transfer_s,
        compute_s: run.compute_s,
        retrieve_s,
        total_s,
        energy_j: model.energy_joules(total_s, settings.ranks()),
        model: model.label(),
        launches: run.launches,
        fallbacks: run.fallbacks,
        counted_instructions: run.counted.instructions,
        counted: run.counted,
        bytes_to_dpus: uploads as u64 * push.iter().sum::<u64>(),
        bytes_from_dpus: downloads as u64 * pull.iter().sum::<u64>(),
        sources: Sources {
            compute_s: if note.is_some() {
                "emulated: busiest DPU per prime group, part of its share, scaled by rounds".into()
            } else {
                "emulated: busiest DPU per prime group (its launch time is the system's)".into()
            },
            transfer_s: format!(
                "model, on the full system's bytes per DPU ({} DPUs, {} rank(s)), not emulated",
                plan.used_dpus(),
                settings.ranks()
            ),
            energy_j: "model power x modeled total time".into(),
            wall_s: "measured: emulator on this host (emulated subset only)".into(),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pimhe_pim::layout::Variant;

    #[test]
    fn auto_emulates_small_runs_in_full_only() {
        let small = Workload::new(Op::Ntt, 1024, 2, 30, 16, 1).unwrap();
        let big = Workload::new(Op::Pipeline, 4096, 3, 30, 8192, 1).unwrap();
        let settings = PimSettings::new(64, Mode::Parallel, Variant::Best, 3).unwrap();
        assert!(footprint_bytes(&small, &settings) < AUTO_FULL_MAX_BYTES);
        // 8192 ciphertexts: 2 x 8192 x 3 x 4096 residues in, 3/4 as many out.
        assert!(footprint_bytes(&big, &settings) > AUTO_FULL_MAX_BYTES);
        assert_eq!(operand_polys(Kernel::Pipeline, 8192), 4096);
        assert_eq!(operand_polys(Kernel::Intt, 8192), 16384);
    }

    #[test]
    fn ciphertext_operations_are_refused_at_the_entry_as_an_internal_error() {
        for op in [Op::BfvMul, Op::BfvAdd, Op::BgvMulRelin] {
            assert!(Kernel::of(op).unwrap_err().to_string().contains("internal error"));
        }
        assert_eq!(Kernel::of(Op::BgvMul).unwrap(), Kernel::BgvMul);
    }
}
