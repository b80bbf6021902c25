//! `pimhe advise`: the honest CPU-vs-PIM verdict for a workload, before anyone buys PIM.
//!
//! For a workload (`pipeline`, `bgv-mul-relin`, `bfv-mul-relin`) at ring degree N and a batch
//! of C ciphertexts, the report gives, for each DPU count (up to an UPMEM system's 2560) and
//! each hardware what-if of DRAMatic's section 5, the **modeled** PIM time (transfer in,
//! compute, retrieve, CPU fallbacks) and energy beside the CPU backend **measured** on this
//! machine in the same run, and the CPU time **scaled** to a stated server CPU. Then, for each
//! what-if, the crossover: the smallest batch and DPU count at which PIM is faster, or `never`
//! with the dominant reason taken from the breakdown ([`crossover`]).
//!
//! Nothing new is modeled here: every PIM figure is a `pimhe bench OP --backend upmem-emu
//! --emulate subset` run ([`kernels::run`]): one emulated DPU per prime holding the busiest
//! share of the full system (its launches are the system's), the transfers priced by
//! `upmem-v1b` on the full system's placement. So 2560 DPUs cost one DPU per prime to emulate,
//! the emulator's limits and result checks hold (the real-ciphertext workloads decrypt and
//! check their result), and every modeled number carries the model's label.
//!
//! The CPU is timed at `--batch` only (the median of `--repeat` runs) and taken as linear in
//! the batch elsewhere (DRAMatic 4.3 measured SEAL's time linear in the number of
//! ciphertexts); each verdict says so. Its scaling to the server is [`ServerCpu::scale`]. The
//! crossover search is in [`search`].

mod cpu;
mod report;
mod verdict;

pub use cpu::ServerCpu;
use report::method_notes;
pub use report::{verdict_line, AdviseReport, AdviseRow, CpuSide, WhatIfVerdicts};
pub use verdict::{crossover, search, Bottleneck, Candidate, PimBreakdown, Verdict};

use std::collections::BTreeMap;

use pimhe_pim::layout::Variant;
use pimhe_pim::runtime::placement::Mode;
use pimhe_schemes::bfv::{BfvContext, BfvParameters};
use pimhe_schemes::bgv::{BgvParameters, DEGREES};
use pimhe_schemes::rlwe::RlweScheme;

use crate::error::{check_repeat, check_threads, BenchError, Result};
use crate::measure::kernels::{self, KernelConfig, KernelReport, Op};
use crate::measure::machine::CpuFacts;
use crate::measure::scheme::median;
use crate::target::upmem::{self, Emulate, PimOutcome, PimSettings};
use crate::target::what_if::WhatIf;
use crate::target::{Target, UpmemTarget};

/// The workloads `--workload` names.
pub const WORKLOADS: [&str; 3] = ["pipeline", "bgv-mul-relin", "bfv-mul-relin"];

/// The DPU counts of the default sweep: one to 40 ranks, with DRAMatic's 509 (its machine).
pub const DEFAULT_DPUS: [usize; 7] = [64, 128, 256, 509, 1024, 2048, 2560];

/// The what-ifs of the default sweep, each one scenario.
pub const DEFAULT_WHAT_IFS: [&str; 4] = ["none", "mul-cycles=1", "zero-copy", "mul-cycles=1,zero-copy"];

/// The crossover search stops doubling the batch here unless `--max-batch` says otherwise:
/// about twice the smallest batch that fills 2560 DPUs at N = 4096 (DRAMatic 3.5: 6826
/// ciphertexts give every tasklet a polynomial); once the DPUs are full, PIM's time grows with
/// the batch as the CPU's does, so larger batches change little.
pub const DEFAULT_MAX_BATCH: usize = 16384;

/// What `pimhe advise` runs. The strings are validated by [`run`] with the CLI's messages.
#[derive(Debug, Clone, PartialEq)]
pub struct AdviseConfig {
    /// One of [`WORKLOADS`].
    pub workload: String,
    /// Ring degree N of the 128-bit preset.
    pub n: usize,
    /// Ciphertexts C of the batch of the table (even: they are multiplied in pairs).
    pub batch: usize,
    /// DPU counts of the table [default: [`DEFAULT_DPUS`]].
    pub dpus: Vec<usize>,
    /// What-if scenarios, each a `--what-if` value (`none`, or what-ifs separated by commas)
    /// [default: [`DEFAULT_WHAT_IFS`]].
    pub what_ifs: Vec<String>,
    /// The crossover search doubles the batch from `batch` up to this [default:
    /// [`DEFAULT_MAX_BATCH`], or `batch` if larger].
    pub max_batch: Option<usize>,
    /// Timed CPU runs at `batch`; the median is used [default: 3].
    pub repeat: usize,
    /// Worker threads of the CPU backend (`None`: all cores).
    pub threads: Option<usize>,
    /// Seed of the inputs and keys [default: 1].
    pub seed: u64,
    /// How the DPUs hold the limbs (`--mode` of `bench`): parallel (DRAMatic's limb-major
    /// groups; key switching's conversions are CPU fallbacks) or ciphertext-major (everything
    /// on the DPUs) [default: parallel].
    pub mode: Option<String>,
}

impl AdviseConfig {
    /// `workload` at `n` and `batch` with the defaults.
    pub fn new(workload: &str, n: usize, batch: usize) -> Self {
        Self {
            workload: workload.to_string(),
            n,
            batch,
            dpus: Vec::new(),
            what_ifs: Vec::new(),
            max_batch: None,
            repeat: 3,
            threads: None,
            seed: 1,
            mode: None,
        }
    }
}

/// A workload and how `bench` runs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Workload {
    /// NTT of the inputs, the BGV tensor, inverse NTT (DRAMatic's combined pipeline) on random
    /// residues over the preset's data primes.
    Pipeline,
    /// BGV multiply + relinearize of real ciphertexts at the preset.
    BgvMulRelin,
    /// BFV (BEHZ) multiply + relinearize of real ciphertexts at the preset.
    BfvMulRelin,
}

impl Workload {
    fn parse(name: &str) -> Result<Self> {
        match name {
            "pipeline" => Ok(Self::Pipeline),
            "bgv-mul-relin" => Ok(Self::BgvMulRelin),
            "bfv-mul-relin" => Ok(Self::BfvMulRelin),
            other => Err(BenchError::usage(format!(
                "--workload {other} is not known: choose one of {}",
                WORKLOADS.join(", ")
            ))),
        }
    }

    /// The `bench` operation that runs it.
    fn op(self) -> Op {
        match self {
            Self::Pipeline => Op::Pipeline,
            Self::BgvMulRelin => Op::BgvMulRelin,
            Self::BfvMulRelin => Op::BfvMul,
        }
    }
}

/// The ring degrees a workload accepts: the presets (with a key-switching prime when the
/// product is relinearized).
fn allowed_degrees(workload: Workload) -> Vec<usize> {
    let relinearized = workload != Workload::Pipeline;
    DEGREES
        .iter()
        .copied()
        .filter(|&n| BgvParameters::preset(n).is_ok_and(|p| !relinearized || !p.special_primes().is_empty()))
        .collect()
}

/// What a PIM run gave: its breakdown, energy, label and emulation.
#[derive(Debug, Clone)]
struct PimPoint {
    pim: PimBreakdown,
    energy_j: f64,
    model: String,
    emulation: String,
}

/// A PIM run, or why it could not be modeled.
type Modeled = std::result::Result<PimPoint, String>;

/// Runs the PIM points of one workload through `bench`, each once.
struct PimRuns<'a> {
    config: &'a AdviseConfig,
    /// The validated `--mode`.
    mode: Mode,
    op: Op,
    /// `--primes` of the kernel workloads (`None` for the real-ciphertext ones).
    primes: Option<usize>,
    /// The CPU fallbacks' seconds per ciphertext ([`measure_fallbacks`]).
    fallback_per_ciphertext_s: f64,
    memo: BTreeMap<(usize, usize, String), Modeled>,
}

impl PimRuns<'_> {
    /// `batch` on `dpus` under `what_if` (validated values), or why it is not modeled.
    fn point(&mut self, batch: usize, dpus: usize, what_if: &str) -> Result<Modeled> {
        let key = (batch, dpus, what_if.to_string());
        if let Some(point) = self.memo.get(&key) {
            return Ok(point.clone());
        }
        let what_if_values = if what_if == "none" { Vec::new() } else { vec![what_if.to_string()] };
        let mut bench = KernelConfig::new(self.op, self.config.n, self.primes, batch);
        bench.target = Target::UpmemEmu(UpmemTarget {
            mode: Some(self.mode),
            emulate: Some(Emulate::Subset),
            what_if: WhatIf::parse(&what_if_values)?,
            ..UpmemTarget::new(dpus)
        });
        bench.seed = self.config.seed;
        let fallback_s = self.fallback_per_ciphertext_s * batch as f64;
        let point = match kernels::run(&bench) {
            Ok(KernelReport::Pim(r)) => Ok(pim_point(r.outcome(), fallback_s)),
            Ok(KernelReport::ExactPim(r)) => Ok(pim_point(r.report().outcome(), fallback_s)),
            Ok(_) => return Err(BenchError::Failed("internal error: upmem-emu gave another report".into())),
            // The settings were validated up front: what is left is this size not fitting (the
            // busiest DPU's MRAM, or this host's memory for the emulation).
            Err(BenchError::Usage(message)) => Err(message),
            Err(e) => return Err(e),
        };
        self.memo.insert(key, point.clone());
        Ok(point)
    }
}

/// The CPU fallbacks' seconds per ciphertext of `op` at `batch`: the median over `repeat` runs of
/// the host steps' measured time (`host_fallback_s`) on the smallest system (one DPU per prime,
/// all pairs on it), divided by the batch. The fallbacks are host work on the whole batch,
/// whatever the DPUs and the what-if, so they are measured once, like the CPU, and taken as
/// linear in the batch; measuring them in every run would put this host's noise between
/// scenarios that differ only in the model. 0 for the kernels, which have none.
fn measure_fallbacks(op: Op, config: &AdviseConfig, primes: usize) -> Result<f64> {
    if op == Op::Pipeline {
        return Ok(0.0);
    }
    let mut bench = KernelConfig::new(op, config.n, None, config.batch);
    bench.target = Target::UpmemEmu(UpmemTarget::new(primes));
    bench.seed = config.seed;
    let times = (0..config.repeat)
        .map(|_| match kernels::run(&bench)? {
            KernelReport::ExactPim(r) => Ok(r.host_fallback_s().unwrap_or_default()),
            _ => Err(BenchError::Failed("internal error: upmem-emu gave another report".into())),
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(median(&times) / config.batch as f64)
}

fn pim_point(o: &PimOutcome, fallback_s: f64) -> PimPoint {
    PimPoint {
        pim: PimBreakdown { transfer_s: o.transfer_s, compute_s: o.compute_s, retrieve_s: o.retrieve_s, fallback_s },
        energy_j: o.energy_j,
        model: o.model.clone(),
        emulation: o.emulation.clone(),
    }
}

/// Primes the DPUs hold for `workload` at the preset of `n`: the data primes for the pipeline,
/// every prime the scheme's operation touches otherwise.
fn backend_primes(workload: Workload, n: usize) -> Result<usize> {
    let preset = BgvParameters::preset(n)?;
    Ok(match workload {
        Workload::Pipeline => preset.data_primes().len(),
        Workload::BgvMulRelin => preset.primes().len(),
        Workload::BfvMulRelin => BfvContext::new(BfvParameters::from(preset))?.backend_primes().len(),
    })
}

/// A validated configuration.
struct Checked {
    workload: Workload,
    /// Parallel or ciphertext-major.
    mode: Mode,
    /// Primes on the DPUs.
    primes: usize,
    /// DPU counts, ascending.
    dpus: Vec<usize>,
    /// Each scenario's name and what-ifs.
    what_ifs: Vec<(String, WhatIf)>,
    /// The crossover search's largest batch.
    max_batch: usize,
}

/// Validates `config`.
fn validate(config: &AdviseConfig) -> Result<Checked> {
    let workload = Workload::parse(&config.workload)?;
    let allowed = allowed_degrees(workload);
    if !allowed.contains(&config.n) {
        let list: Vec<String> = allowed.iter().map(usize::to_string).collect();
        return Err(BenchError::usage(format!(
            "--n {} is not allowed for --workload {}: choose one of {} (the 128-bit presets{})",
            config.n,
            config.workload,
            list.join(", "),
            if workload == Workload::Pipeline { "" } else { " with a key-switching prime, for relinearization" }
        )));
    }
    if config.batch < 2 || !config.batch.is_multiple_of(2) {
        return Err(BenchError::usage(format!(
            "--batch {} is not allowed: ciphertexts are multiplied in pairs, so the batch must be even and at least 2",
            config.batch
        )));
    }
    let max_batch = config.max_batch.unwrap_or(DEFAULT_MAX_BATCH.max(config.batch));
    if max_batch < config.batch {
        return Err(BenchError::usage(format!(
            "--max-batch {max_batch} is not allowed: the crossover search starts at --batch {}, so it must be at \
             least that",
            config.batch
        )));
    }
    let primes = backend_primes(workload, config.n)?;
    let mut dpus = if config.dpus.is_empty() { DEFAULT_DPUS.to_vec() } else { config.dpus.clone() };
    dpus.sort_unstable();
    dpus.dedup();
    let mode = match upmem::parse_mode(config.mode.as_deref().unwrap_or("parallel"))? {
        Some(mode @ (Mode::Parallel | Mode::CiphertextMajor)) => mode,
        Some(Mode::Sequential) => {
            return Err(BenchError::usage(
                "--mode sequential is not allowed for advise: its launches are emulated per prime in full only; \
                 choose parallel or ciphertext-major",
            ))
        }
        Some(Mode::Hybrid) | None => {
            return Err(BenchError::usage(format!(
                "--mode {} is not allowed for advise: its table extrapolates from a subset of the DPUs, which \
                 the hybrid mode's second (sliced) placement does not follow; choose parallel or ciphertext-major",
                config.mode.as_deref().unwrap_or("auto")
            )))
        }
    };
    for &d in &dpus {
        PimSettings::new(d, mode, Variant::Best, primes)?;
    }
    let what_ifs = if config.what_ifs.is_empty() {
        DEFAULT_WHAT_IFS.iter().map(|w| w.to_string()).collect()
    } else {
        config.what_ifs.clone()
    };
    let what_ifs = what_ifs
        .into_iter()
        .map(|w| {
            let parsed = if w == "none" { WhatIf::NONE } else { WhatIf::parse(std::slice::from_ref(&w))? };
            Ok((if parsed.is_active() { parsed.describe() } else { "none".to_string() }, parsed))
        })
        .collect::<Result<Vec<_>>>()?;
    check_threads(config.threads)?;
    check_repeat(config.repeat, "CPU run")?;
    Ok(Checked { workload, mode, primes, dpus, what_ifs, max_batch })
}

/// Runs `pimhe advise`: measures the CPU at `config.batch`, models every DPU count under every
/// what-if, and searches each what-if's crossover against the measured and the scaled CPU.
pub fn run(config: &AdviseConfig) -> Result<AdviseReport> {
    let Checked { workload, mode, primes, dpus, what_ifs, max_batch } = validate(config)?;
    let op = workload.op();
    // The pipeline runs on random residues over the preset's data primes (the ciphertext
    // modulus a product works on); the real-ciphertext workloads take the preset as it is.
    let kernel_primes = (workload == Workload::Pipeline).then_some(primes);
    let mut cpu_bench = KernelConfig::new(op, config.n, kernel_primes, config.batch);
    cpu_bench.target = Target::Cpu { threads: config.threads };
    cpu_bench.repeat = Some(config.repeat);
    cpu_bench.seed = config.seed;
    let (times_s, threads, computation) = match kernels::run(&cpu_bench)? {
        KernelReport::Cpu(r) => (r.times_s().to_vec(), r.threads(), "NTT, BGV tensor, inverse NTT (random residues)"),
        KernelReport::ExactCpu(r) => (r.report().times_s().to_vec(), r.report().threads(), r.computation()),
        _ => return Err(BenchError::Failed("internal error: cpu gave another report".into())),
    };
    let measured_s = median(&times_s);
    let here = CpuFacts::this_machine(threads);
    let server = ServerCpu::dramatic();
    let scale = server.scale(&here);
    let cpu = CpuSide {
        scaled_s: measured_s * scale,
        scaled_energy_j: measured_s * scale * server.power_w,
        here,
        times_s,
        measured_s,
        server,
        scale,
    };
    // Linear in the batch (DRAMatic 4.3).
    let cpu_at = |batch: usize| cpu.measured_s * batch as f64 / config.batch as f64;

    // The ciphertext-major mode has no fallback: everything runs on the DPUs.
    let fallback_per_ciphertext_s =
        if mode == Mode::CiphertextMajor { 0.0 } else { measure_fallbacks(op, config, primes)? };
    let mut runs =
        PimRuns { config, mode, op, primes: kernel_primes, fallback_per_ciphertext_s, memo: BTreeMap::new() };
    let mut rows = Vec::new();
    for (name, _) in &what_ifs {
        for &d in &dpus {
            let point = runs.point(config.batch, d, name)?;
            rows.push(match point {
                Ok(p) => AdviseRow {
                    what_if: name.clone(),
                    dpus: d,
                    speedup_vs_measured: Some(cpu.measured_s / p.pim.total_s()),
                    speedup_vs_scaled: Some(cpu.scaled_s / p.pim.with_fallbacks_scaled(scale).total_s()),
                    pim: Some(p.pim),
                    energy_j: Some(p.energy_j),
                    model: p.model,
                    emulation: p.emulation,
                },
                Err(why) => AdviseRow {
                    what_if: name.clone(),
                    dpus: d,
                    pim: None,
                    energy_j: None,
                    model: String::new(),
                    emulation: format!("not modeled: {why}"),
                    speedup_vs_measured: None,
                    speedup_vs_scaled: None,
                },
            });
        }
    }

    let mut verdicts = Vec::new();
    for (name, what_if) in &what_ifs {
        let mul = what_if.multiplier.is_some();
        let mut against = |factor: f64| {
            search(config.batch, max_batch, &dpus, mul, |b, d| {
                Ok(runs.point(b, d, name)?.ok().map(|p| Candidate {
                    batch: b,
                    dpus: d,
                    pim: p.pim.with_fallbacks_scaled(factor),
                    cpu_s: cpu_at(b) * factor,
                }))
            })
        };
        let vs_measured = against(1.0)?;
        let vs_scaled = against(scale)?;
        verdicts.push(WhatIfVerdicts { what_if: name.clone(), vs_measured, vs_scaled });
    }

    Ok(AdviseReport {
        workload: config.workload.clone(),
        computation: computation.to_string(),
        n: config.n,
        primes,
        mode: mode.name().to_string(),
        batch: config.batch,
        max_batch,
        cpu,
        fallback_s: fallback_per_ciphertext_s * config.batch as f64,
        rows,
        verdicts,
        method: method_notes(mode, what_ifs.iter().any(|(_, w)| w.multiplier.is_some())),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn candidate(batch: usize, dpus: usize, parts: [f64; 4], cpu_s: f64) -> Candidate {
        let [transfer_s, compute_s, retrieve_s, fallback_s] = parts;
        Candidate { batch, dpus, pim: PimBreakdown { transfer_s, compute_s, retrieve_s, fallback_s }, cpu_s }
    }

    #[test]
    fn scaling_credits_the_server_with_every_core_cycle_and_lane() {
        let server = ServerCpu::dramatic();
        let here = CpuFacts { name: "x".into(), cores: 2, ghz: 2.9, simd_lanes: 8, source: String::new() };
        assert_eq!(server.scale(&here), 2.0 * 8.0 / (8.0 * 16.0));
        let unknown = CpuFacts { ghz: 0.0, ..here };
        assert_eq!(server.scale(&unknown), 1.0);
    }

    #[test]
    fn workload_names_map_to_bench_operations() {
        assert_eq!(Workload::parse("bfv-mul-relin").unwrap().op(), Op::BfvMul);
        assert_eq!(Workload::parse("pipeline").unwrap().op(), Op::Pipeline);
        assert!(allowed_degrees(Workload::Pipeline).contains(&1024));
        assert!(!allowed_degrees(Workload::BgvMulRelin).contains(&1024));
    }

    #[test]
    fn never_names_the_largest_part() {
        // Transfer and the closest candidate: tests/advise.rs.
        let c = [candidate(8, 64, [0.1, 1.5, 0.1, 0.2], 1.0)];
        let Verdict::Never { bottleneck, reason, .. } = crossover(&c, true) else { panic!() };
        assert_eq!(bottleneck, Bottleneck::Compute);
        assert!(reason.contains("even with the faster multiplier") && reason.contains("alone take"), "{reason}");
        let c = [candidate(8, 64, [0.1, 0.3, 0.1, 0.6], 1.0)];
        let Verdict::Never { bottleneck, reason, .. } = crossover(&c, false) else { panic!() };
        assert_eq!(bottleneck, Bottleneck::CpuFallbacks);
        assert!(reason.contains("largest part"), "{reason}");
        assert_eq!(crossover(&[], false), Verdict::NotModeled);
    }
}
