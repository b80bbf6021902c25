//! The `upmem-emu` backend of `pimhe bench`: a workload on emulated UPMEM DPUs, timed by the
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
use pimhe_pim::layout::{self, Variant};
use pimhe_pim::runtime::placement::{Mode, Plan};
use pimhe_pim::runtime::subset::{busiest_share, pull_bytes_per_dpu, push_bytes_per_dpu};
use pimhe_pim::runtime::{OffloadReport, PimBackend, PimConfig, MAX_DPUS};
use pimhe_ring::{PolyBatch, Representation, RingBasis};
use serde::Serialize;

use crate::bench::{execute, generate_inputs, random_batch, Op, Workload};
use crate::error::{CliError, Result};

/// Default `--dpus`: one rank.
pub const DEFAULT_DPUS: usize = 64;

/// `--emulate auto` emulates in full below this MRAM footprint (and at most
/// [`AUTO_FULL_MAX_DPUS`] DPUs).
pub const AUTO_FULL_MAX_BYTES: u128 = 256 << 20;
/// `--emulate auto` emulates in full on at most this many DPUs.
pub const AUTO_FULL_MAX_DPUS: usize = 64;

/// MRAM the runtime reserves at the start of every DPU: header and command list.
const RESERVED_MRAM_BYTES: usize = layout::HEADER_BYTES + 256 * layout::COMMAND_BYTES;

/// How much of the system to emulate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Emulate {
    /// Every DPU.
    Full,
    /// The busiest DPU of each prime group.
    Subset,
    /// Full when small (see [`AUTO_FULL_MAX_BYTES`]), else subset.
    Auto,
}

/// The `upmem-emu` settings of a run, validated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PimSettings {
    /// DPUs of the system.
    pub dpus: usize,
    /// Parallel or sequential prime groups.
    pub mode: Mode,
    /// Kernel arithmetic.
    pub variant: Variant,
}

/// `--mode` names.
pub fn mode_name(mode: Mode) -> &'static str {
    match mode {
        Mode::Parallel => "parallel",
        Mode::Sequential => "sequential",
    }
}

/// `--kernel` names.
pub fn kernel_name(variant: Variant) -> &'static str {
    match variant {
        Variant::Barrett => "barrett",
        Variant::Best => "best",
    }
}

/// Parses `--mode`.
pub fn parse_mode(value: &str) -> Result<Mode> {
    match value {
        "parallel" => Ok(Mode::Parallel),
        "sequential" => Ok(Mode::Sequential),
        other => Err(CliError::usage(format!("--mode {other} is not allowed: choose parallel or sequential"))),
    }
}

/// Parses `--kernel`.
pub fn parse_kernel(value: &str) -> Result<Variant> {
    match value {
        "barrett" => Ok(Variant::Barrett),
        "best" => Ok(Variant::Best),
        other => Err(CliError::usage(format!("--kernel {other} is not allowed: choose barrett or best"))),
    }
}

/// Parses `--emulate`.
pub fn parse_emulate(value: &str) -> Result<Emulate> {
    match value {
        "full" => Ok(Emulate::Full),
        "subset" => Ok(Emulate::Subset),
        "auto" => Ok(Emulate::Auto),
        other => Err(CliError::usage(format!("--emulate {other} is not allowed: choose full, subset or auto"))),
    }
}

impl PimSettings {
    /// Checks `dpus` against the system size and, in parallel mode, against the primes.
    pub fn new(dpus: usize, mode: Mode, variant: Variant, primes: usize) -> Result<Self> {
        Self::checked(dpus, mode, variant, primes, true)
    }

    /// [`PimSettings::new`] in parallel mode with the best kernel, for the commands that have
    /// no `--mode` (`stats`, `demo`): the same checks, with advice that names no `--mode`.
    pub fn parallel(dpus: usize, primes: usize) -> Result<Self> {
        Self::checked(dpus, Mode::Parallel, Variant::Best, primes, false)
    }

    /// The checks of [`PimSettings::new`]; `has_mode_flag` says whether the command has
    /// `--mode`, so the advice may point to it.
    fn checked(dpus: usize, mode: Mode, variant: Variant, primes: usize, has_mode_flag: bool) -> Result<Self> {
        if !(1..=MAX_DPUS).contains(&dpus) {
            return Err(CliError::usage(format!(
                "--dpus {dpus} is not allowed: choose 1..={MAX_DPUS} DPUs (an UPMEM system has at most {MAX_DPUS})"
            )));
        }
        if mode == Mode::Parallel && dpus < primes {
            let (which, alternative) =
                if has_mode_flag { ("--mode parallel", " or --mode sequential") } else { ("parallel mode", "") };
            return Err(CliError::usage(format!(
                "--dpus {dpus} is too few for {which} with {primes} primes: parallel mode needs at least \
                 one DPU per prime, so --dpus {dpus} is not allowed; use --dpus {primes}..={MAX_DPUS}{alternative}"
            )));
        }
        Ok(Self { dpus, mode, variant })
    }

    /// Ranks the system occupies: `ceil(dpus / 64)`.
    pub fn ranks(&self) -> u32 {
        self.dpus.div_ceil(64) as u32
    }

    pub(crate) fn config(&self, dpus: usize, mode: Mode) -> PimConfig {
        let mut config = PimConfig::new(dpus, mode);
        config.variant = self.variant;
        config
    }
}

/// The operations this module runs: kernels on random residues. `bench` hands bfv-mul and
/// bfv-add (real ciphertexts) to `bench_bfv`, so [`Kernel::of`] refuses them once, at the
/// entry of [`run_full`] and [`run_subset`], and nothing below handles them.
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
            Op::BfvMul | Op::BfvAdd => {
                Err(CliError::Failed(format!("internal error: {} has no random operands", op.name())))
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
        Mode::Parallel => (settings.dpus / workload.primes() * workload.primes()) as u128 * 16 * n,
        Mode::Sequential => settings.dpus as u128 * primes * 16 * n,
    };
    workload.estimated_bytes() + tables
}

/// What a `upmem-emu` run reported. Modeled figures carry [`PimOutcome::model`].
#[derive(Debug, Clone, Serialize)]
pub struct PimOutcome {
    /// `full`, or `subset: ...` with how the numbers were extrapolated.
    pub emulation: String,
    /// DPUs the emulator ran.
    pub emulated_dpus: usize,
    /// Polynomials of each operand on the busiest DPU (per prime).
    pub busiest_share: usize,
    /// Host wall time of the emulation (not a DPU time).
    pub wall_s: f64,
    /// Modeled host -> DPU seconds of the inputs.
    pub transfer_s: f64,
    /// Modeled DPU seconds (launches with their overheads).
    pub compute_s: f64,
    /// Modeled DPU -> host seconds of the outputs.
    pub retrieve_s: f64,
    /// `transfer_s + compute_s + retrieve_s`.
    pub total_s: f64,
    /// Modeled whole-system energy over `total_s` with `ceil(dpus / 64)` ranks active.
    pub energy_j: f64,
    /// The model's label, e.g. `upmem-v1b@1 (modeled)`.
    pub model: String,
    /// Kernel launches of the full system.
    pub launches: u64,
    /// Operations that ran on the CPU instead.
    pub fallbacks: u64,
    /// Instructions the emulator counted (over the emulated DPUs; scaled like compute when
    /// only part of a share was emulated).
    pub counted_instructions: u64,
    /// Everything the emulator counted (same scope as `counted_instructions`).
    pub counted: TaskletCounts,
    /// Bytes moved to the DPUs (full system).
    pub bytes_to_dpus: u64,
    /// Bytes moved back (full system).
    pub bytes_from_dpus: u64,
    /// Where each figure came from.
    pub sources: Sources,
}

/// Where each figure of a [`PimOutcome`] came from.
#[derive(Debug, Clone, Serialize)]
pub struct Sources {
    /// Source of `compute_s` (and `counted`).
    pub compute_s: String,
    /// Source of `transfer_s` and `retrieve_s`.
    pub transfer_s: String,
    /// Source of `energy_j`.
    pub energy_j: String,
    /// Source of `wall_s`.
    pub wall_s: String,
}

impl PimOutcome {
    /// The model label without its ` (modeled)` suffix, for `(modeled, <label>)` annotations.
    pub fn model_short(&self) -> &str {
        self.model.strip_suffix(" (modeled)").unwrap_or(&self.model)
    }
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
        return Err(CliError::usage(format!(
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
        return Err(CliError::usage(format!(
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
    crate::bench::check_memory(workload, pimhe_ring::memory::available_memory())?;
    let primes = workload.primes();
    let plan = Plan::new(settings.mode, settings.dpus, primes).map_err(CliError::usage)?;
    let count = operand_polys(kernel, workload.batch);
    let share = busiest_share(&plan, primes, count);
    let per_dpu = if settings.mode == Mode::Sequential { primes } else { 1 };
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
    // time (a launch per prime, as the full system runs them).
    let groups: Vec<Vec<u32>> = match settings.mode {
        Mode::Parallel => vec![moduli.clone()],
        Mode::Sequential => moduli.iter().map(|&q| vec![q]).collect(),
    };
    for group in groups {
        let basis = RingBasis::new(n, &group)?;
        let host = share_inputs(kernel, &basis, polys, workload.seed)?;
        let pim = PimBackend::new(settings.config(group.len(), Mode::Parallel), n, &group)?;
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
    let plan = Plan::new(settings.mode, settings.dpus, primes).map_err(CliError::usage)?;
    let count = operand_polys(kernel, workload.batch);
    let share = busiest_share(&plan, primes, count);
    let group = plan.group(0).len();
    check_mram(workload, kernel, share, 1, "--emulate subset")?;
    let model = settings.config(1, Mode::Parallel).model;
    let tasklets = pimhe_pim::emulator::EmulatorConfig::default().tasklets as usize;

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
        Mode::Parallel => (primes, format!("1 emulated DPU per prime group of {group}")),
        Mode::Sequential => (
            1,
            format!(
                "1 emulated DPU per prime group of {group} (sequential: one DPU serving all {primes} primes in turn)"
            ),
        ),
    };
    let mut emulation = format!("subset: {per_group}, busiest share {share} polynomials/operand, extrapolated");
    if let Some(note) = &note {
        emulation.push_str("; ");
        emulation.push_str(note);
    }
    if settings.mode == Mode::Sequential {
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

    #[test]
    fn flags_parse_and_name_their_values() {
        assert_eq!(parse_mode("sequential").unwrap(), Mode::Sequential);
        assert_eq!(parse_kernel("barrett").unwrap(), Variant::Barrett);
        assert_eq!(parse_emulate("auto").unwrap(), Emulate::Auto);
        assert!(parse_mode("serial").unwrap_err().to_string().contains("parallel or sequential"));
        assert!(parse_kernel("x").unwrap_err().to_string().contains("barrett or best"));
        assert!(parse_emulate("x").unwrap_err().to_string().contains("full, subset or auto"));
        assert_eq!((mode_name(Mode::Parallel), kernel_name(Variant::Best)), ("parallel", "best"));
        assert!(PimSettings::new(0, Mode::Parallel, Variant::Best, 1).is_err());
        assert!(PimSettings::new(2561, Mode::Sequential, Variant::Best, 1).is_err());
        assert!(PimSettings::new(2, Mode::Parallel, Variant::Best, 3).is_err());
        assert!(PimSettings::new(2, Mode::Sequential, Variant::Best, 3).is_ok());
        assert_eq!(PimSettings::new(383, Mode::Parallel, Variant::Best, 3).unwrap().ranks(), 6);
    }

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
    fn bfv_operations_are_refused_at_the_entry_as_an_internal_error() {
        for op in [Op::BfvMul, Op::BfvAdd] {
            assert!(Kernel::of(op).unwrap_err().to_string().contains("internal error"));
        }
        assert_eq!(Kernel::of(Op::BgvMul).unwrap(), Kernel::BgvMul);
    }
}
