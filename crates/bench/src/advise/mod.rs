//! `pimhe advise`: the honest CPU-vs-PIM verdict for a workload, before anyone buys PIM.
//!
//! For a workload (`pipeline`, `bgv-mul-relin`, `bfv-mul-relin`, the statistics `mean`,
//! `variance`, `linreg` over U users, `ckks-mul-relin-rescale`) at ring degree N and a batch
//! (C ciphertexts, or U users), the report gives, for each DPU count (up to an UPMEM system's
//! 2560) and each hardware what-if of DRAMatic's section 5, the **modeled** PIM time (transfer
//! in, compute, retrieve, CPU fallbacks), energy and energy-delay product, and the placement
//! that ran, beside the CPU backend **measured** on this machine in the same run, and the CPU
//! time **scaled** to a stated server CPU. Then, for each what-if, the crossover in time: the
//! smallest batch and DPU count at which PIM is faster, or `never` with the dominant reason
//! taken from the breakdown ([`crossover`]); and the verdicts on energy and EDP at the table's
//! batch (`efficiency.rs`).
//!
//! Nothing new is modeled here (`points.rs`): the first three workloads' PIM figures are
//! `pimhe bench OP --backend upmem-emu --emulate subset` runs (`kernels::run`): one emulated
//! DPU per prime holding the busiest share of the full system (its launches are the system's),
//! the transfers priced by `upmem-v1b` on the full system's placement, so 2560 DPUs cost one
//! DPU per prime to emulate. The statistics and CKKS run as whole jobs with every DPU emulated
//! (`jobs.rs`). The emulator's limits hold, the real-ciphertext workloads decrypt and check
//! their result, and every modeled number carries the model's label. `--mode auto` picks the
//! placement per point by modeled cost.
//!
//! The CPU is timed at `--batch` only (the median of `--repeat` runs) and taken as linear in
//! the batch elsewhere (DRAMatic 4.3 measured SEAL's time linear in the number of
//! ciphertexts); each verdict says so. Its scaling to the server is [`ServerCpu::scale`]. The
//! crossover search is in [`search`].

mod cpu;
mod efficiency;
mod jobs;
mod points;
mod report;
mod verdict;
mod workload;

pub use cpu::ServerCpu;
pub use efficiency::{EfficiencyPoint, EfficiencyVerdict, Quantity};
pub use jobs::CKKS_MIN_BITS;
use report::method_notes;
pub use report::{verdict_line, AdviseReport, AdviseRow, CpuSide, WhatIfVerdicts};
pub use verdict::{crossover, search, Bottleneck, Candidate, PimBreakdown, Verdict};
pub use workload::WORKLOADS;

use std::collections::BTreeMap;

use pimhe_pim::layout::Variant;
use pimhe_pim::runtime::placement::Mode;

use crate::error::{check_repeat, check_threads, BenchError, Result};
use crate::format::format_seconds;
use crate::measure::kernels::{self, KernelConfig, KernelReport};
use crate::measure::machine::CpuFacts;
use crate::measure::scheme::median;
use crate::target::upmem::{self, PimSettings};
use crate::target::what_if::WhatIf;
use crate::target::{Cost, Target};
use points::{measure_fallbacks, prepare, PimRuns};
use workload::Workload;

/// The DPU counts of the default sweep: one to 40 ranks, with DRAMatic's 509 (its machine).
pub const DEFAULT_DPUS: [usize; 7] = [64, 128, 256, 509, 1024, 2048, 2560];

/// The what-ifs of the default sweep, each one scenario.
pub const DEFAULT_WHAT_IFS: [&str; 4] = ["none", "mul-cycles=1", "zero-copy", "mul-cycles=1,zero-copy"];

/// The crossover search stops doubling the batch here unless `--max-batch` says otherwise:
/// about twice the smallest batch that fills 2560 DPUs at N = 4096 (DRAMatic 3.5: 6826
/// ciphertexts give every tasklet a polynomial); once the DPUs are full, PIM's time grows with
/// the batch as the CPU's does, so larger batches change little. The whole jobs (statistics,
/// CKKS), whose every point emulates every DPU, search no further than the table's batch
/// unless `--max-batch` says so.
pub const DEFAULT_MAX_BATCH: usize = 16384;

/// What `pimhe advise` runs. The strings are validated by [`run`] with the CLI's messages.
#[derive(Debug, Clone, PartialEq)]
pub struct AdviseConfig {
    /// One of [`WORKLOADS`].
    pub workload: String,
    /// Ring degree N of the 128-bit preset (BGV's; CKKS's for `ckks-mul-relin-rescale`).
    pub n: usize,
    /// Ciphertexts C of the batch of the table (even: they are multiplied in pairs); 0 for the
    /// statistics, whose batch is [`AdviseConfig::users`].
    pub batch: usize,
    /// The statistics' users U (one ciphertext each per encoded vector); only they take it.
    pub users: Option<usize>,
    /// DPU counts of the table [default: [`DEFAULT_DPUS`]].
    pub dpus: Vec<usize>,
    /// What-if scenarios, each a `--what-if` value (`none`, or what-ifs separated by commas)
    /// [default: [`DEFAULT_WHAT_IFS`]].
    pub what_ifs: Vec<String>,
    /// The crossover search doubles the batch from `batch` up to this [default:
    /// [`DEFAULT_MAX_BATCH`], or `batch` if larger; the whole jobs: `batch`].
    pub max_batch: Option<usize>,
    /// Timed CPU runs at `batch`; the median is used [default: 3].
    pub repeat: usize,
    /// Worker threads of the CPU backend (`None`: all cores).
    pub threads: Option<usize>,
    /// Seed of the inputs and keys [default: 1].
    pub seed: u64,
    /// How the DPUs hold the limbs (`--mode` of `bench`): parallel (DRAMatic's limb-major
    /// groups; key switching's conversions are CPU fallbacks), ciphertext-major (everything on
    /// the DPUs), sequential or hybrid (the whole jobs only: they emulate every DPU), or auto
    /// (the cheapest placement per point) [default: parallel].
    pub mode: Option<String>,
}

impl AdviseConfig {
    /// `workload` at `n` and `batch` with the defaults.
    pub fn new(workload: &str, n: usize, batch: usize) -> Self {
        Self {
            workload: workload.to_string(),
            n,
            batch,
            users: None,
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

/// A validated configuration.
struct Checked {
    workload: Workload,
    /// The placement (`None`: auto).
    mode: Option<Mode>,
    /// Primes on the DPUs.
    primes: usize,
    /// The table's batch: ciphertexts, or users.
    batch: usize,
    /// DPU counts, ascending.
    dpus: Vec<usize>,
    /// Each scenario's name and what-ifs.
    what_ifs: Vec<(String, WhatIf)>,
    /// The crossover search's largest batch.
    max_batch: usize,
}

/// The table's batch: `--users` for the statistics, `--batch` (even, at least 2) otherwise.
fn batch_of(workload: Workload, config: &AdviseConfig) -> Result<usize> {
    let name = &config.workload;
    match (workload.takes_users(), config.users) {
        (true, None) => Err(BenchError::usage(format!(
            "--workload {name} needs --users U: the users whose ciphertexts the server sums (at least 1)"
        ))),
        (true, Some(0)) => {
            Err(BenchError::usage("--users 0 is not allowed: a statistic needs at least 1 user".to_string()))
        }
        (true, Some(users)) if config.batch != 0 && config.batch != users => Err(BenchError::usage(format!(
            "--batch does not apply to --workload {name}: its batch is --users (one ciphertext per user)"
        ))),
        (true, Some(users)) => Ok(users),
        (false, Some(_)) => Err(BenchError::usage(format!(
            "--users applies to the statistics (mean, variance, linreg) only; --workload {name} takes --batch"
        ))),
        (false, None) if config.batch < 2 || !config.batch.is_multiple_of(2) => Err(BenchError::usage(format!(
            "--batch {} is not allowed: ciphertexts are multiplied in pairs, so the batch must be even and at least 2",
            config.batch
        ))),
        (false, None) => Ok(config.batch),
    }
}

/// The placement of `--mode` (`None`: auto) for `workload`: the subset workloads take
/// parallel, ciphertext-major or auto (their representative DPUs follow those placements
/// only); the whole jobs any.
fn mode_of(workload: Workload, config: &AdviseConfig) -> Result<Option<Mode>> {
    let asked = config.mode.as_deref().unwrap_or("parallel");
    let mode = upmem::parse_mode(asked)?;
    match (workload.op(), mode) {
        (None, mode) | (Some(_), mode @ (None | Some(Mode::Parallel | Mode::CiphertextMajor))) => Ok(mode),
        (Some(_), Some(Mode::Sequential)) => Err(BenchError::usage(format!(
            "--mode sequential is not allowed for advise --workload {}: its launches are emulated per prime in \
             full only, which this workload's table (a DPU subset) does not do; choose parallel, ciphertext-major \
             or auto",
            config.workload
        ))),
        (Some(_), Some(Mode::Hybrid)) => Err(BenchError::usage(format!(
            "--mode hybrid is not allowed for advise --workload {}: its table extrapolates from a subset of the \
             DPUs, which the hybrid mode's second (sliced) placement does not follow; choose parallel, \
             ciphertext-major or auto",
            config.workload
        ))),
    }
}

/// Validates `config`.
fn validate(config: &AdviseConfig) -> Result<Checked> {
    let workload = Workload::parse(&config.workload)?;
    let allowed = workload.allowed_degrees();
    if !allowed.contains(&config.n) {
        let list: Vec<String> = allowed.iter().map(usize::to_string).collect();
        return Err(BenchError::usage(format!(
            "--n {} is not allowed for --workload {}: choose one of {} ({})",
            config.n,
            config.workload,
            list.join(", "),
            workload.degrees_note()
        )));
    }
    let batch = batch_of(workload, config)?;
    let default_max = if workload.op().is_some() { DEFAULT_MAX_BATCH.max(batch) } else { batch };
    let max_batch = config.max_batch.unwrap_or(default_max);
    if max_batch < batch {
        return Err(BenchError::usage(format!(
            "--max-batch {max_batch} is not allowed: the crossover search starts at the table's batch {batch}, so \
             it must be at least that"
        )));
    }
    let primes = workload.backend_primes(config.n)?;
    let mut dpus = if config.dpus.is_empty() { DEFAULT_DPUS.to_vec() } else { config.dpus.clone() };
    dpus.sort_unstable();
    dpus.dedup();
    let mode = mode_of(workload, config)?;
    for &d in &dpus {
        // Auto takes whatever placement fits each count (none fitting: that row is not modeled).
        PimSettings::new(d, mode.unwrap_or(Mode::CiphertextMajor), Variant::Best, primes)?;
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
    Ok(Checked { workload, mode, primes, batch, dpus, what_ifs, max_batch })
}

/// The CPU measured at the table's batch: every timed run's seconds, the threads, what ran.
fn measure_cpu(
    workload: Workload,
    config: &AdviseConfig,
    batch: usize,
    primes: usize,
) -> Result<(Vec<f64>, usize, String)> {
    let Some(op) = workload.op() else {
        // A whole job times its server's computation itself.
        let prepared = prepare(workload, config.n, batch, config.seed, config.threads)?;
        let target = Target::Cpu { threads: config.threads };
        let mut times = Vec::with_capacity(config.repeat);
        let mut threads = 1;
        for _ in 0..config.repeat {
            let ran = prepared.run(&target, config.threads)?;
            if let Cost::Cpu { threads: used } = ran.cost {
                threads = used;
            }
            times.push(ran.output);
        }
        return Ok((times, threads, prepared.computation()));
    };
    // The pipeline runs on random residues over the preset's data primes (the ciphertext
    // modulus a product works on); the real-ciphertext workloads take the preset as it is.
    let kernel_primes = (workload == Workload::Pipeline).then_some(primes);
    let mut cpu_bench = KernelConfig::new(op, config.n, kernel_primes, batch);
    cpu_bench.target = Target::Cpu { threads: config.threads };
    cpu_bench.repeat = Some(config.repeat);
    cpu_bench.seed = config.seed;
    match kernels::run(&cpu_bench)? {
        KernelReport::Cpu(r) => {
            Ok((r.times_s().to_vec(), r.threads(), "NTT, BGV tensor, inverse NTT (random residues)".to_string()))
        }
        KernelReport::ExactCpu(r) => {
            Ok((r.report().times_s().to_vec(), r.report().threads(), r.computation().to_string()))
        }
        _ => Err(BenchError::Failed("internal error: cpu gave another report".into())),
    }
}

/// Runs `pimhe advise`: measures the CPU at the table's batch, models every DPU count under
/// every what-if, searches each what-if's crossover against the measured and the scaled CPU,
/// and weighs energy and EDP against the scaled CPU.
pub fn run(config: &AdviseConfig) -> Result<AdviseReport> {
    let Checked { workload, mode, primes, batch, dpus, what_ifs, max_batch } = validate(config)?;
    let whole_job = workload.op().is_none();
    let (times_s, threads, computation) = measure_cpu(workload, config, batch, primes)?;
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
    let cpu_at = |b: usize| cpu.measured_s * b as f64 / batch as f64;
    // The whole jobs' fallbacks are priced by seal-host, on DRAMatic's server already: not
    // scaled again; the subset workloads' are measured here and scaled with the CPU.
    let fallback_scale = if whole_job { 1.0 } else { scale };

    let fallback_per_ciphertext_s = match (workload.op(), mode) {
        (Some(op), Some(Mode::Parallel) | None) => {
            measure_fallbacks(op, &AdviseConfig { batch, ..config.clone() }, primes)?
        }
        (Some(_), Some(Mode::CiphertextMajor | Mode::Sequential | Mode::Hybrid)) | (None, _) => 0.0,
    };
    let kernel_primes = (workload == Workload::Pipeline).then_some(primes);
    let mut runs = PimRuns {
        config,
        workload,
        mode,
        primes: kernel_primes,
        fallback_per_ciphertext_s,
        prepared: BTreeMap::new(),
        memo: BTreeMap::new(),
    };
    let mut rows = Vec::new();
    for (name, _) in &what_ifs {
        for &d in &dpus {
            rows.push(match runs.point(batch, d, name)? {
                Ok(p) => {
                    let vs_server = p.pim.with_fallbacks_scaled(fallback_scale);
                    let energy = efficiency::with_host_energy(p.energy_j, vs_server.fallback_s, cpu.server.power_w);
                    AdviseRow {
                        what_if: name.clone(),
                        dpus: d,
                        speedup_vs_measured: Some(cpu.measured_s / p.pim.total_s()),
                        speedup_vs_scaled: Some(cpu.scaled_s / vs_server.total_s()),
                        pim: Some(p.pim),
                        energy_j: Some(p.energy_j),
                        energy_with_host_j: Some(energy),
                        edp_js: Some(energy * vs_server.total_s()),
                        model: p.model,
                        emulation: p.emulation,
                        placement: p.placement.to_string(),
                        plan: p.plan,
                    }
                }
                Err(why) => AdviseRow {
                    what_if: name.clone(),
                    dpus: d,
                    pim: None,
                    energy_j: None,
                    energy_with_host_j: None,
                    edp_js: None,
                    model: String::new(),
                    emulation: format!("not modeled: {why}"),
                    placement: String::new(),
                    plan: None,
                    speedup_vs_measured: None,
                    speedup_vs_scaled: None,
                },
            });
        }
    }

    let mut verdicts = Vec::new();
    for (name, what_if) in &what_ifs {
        let mul = what_if.multiplier.is_some();
        let mut against = |cpu_factor: f64, fallback_factor: f64| {
            search(batch, max_batch, &dpus, mul, |b, d| {
                Ok(runs.point(b, d, name)?.ok().map(|p| Candidate {
                    batch: b,
                    dpus: d,
                    pim: p.pim.with_fallbacks_scaled(fallback_factor),
                    cpu_s: cpu_at(b) * cpu_factor,
                }))
            })
        };
        let vs_measured = against(1.0, 1.0)?;
        let vs_scaled = against(scale, fallback_scale)?;
        let points: Vec<EfficiencyPoint> = rows
            .iter()
            .filter(|row| &row.what_if == name)
            .filter_map(|row| {
                Some(EfficiencyPoint {
                    dpus: row.dpus,
                    energy_j: row.energy_with_host_j?,
                    total_s: row.pim?.with_fallbacks_scaled(fallback_scale).total_s(),
                })
            })
            .collect();
        let energy = EfficiencyVerdict::of(Quantity::Energy, &points, cpu.scaled_energy_j, cpu.scaled_s);
        let edp = EfficiencyVerdict::of(Quantity::EnergyDelayProduct, &points, cpu.scaled_energy_j, cpu.scaled_s);
        verdicts.push(WhatIfVerdicts { what_if: name.clone(), vs_measured, vs_scaled, energy, edp });
    }

    let fallback_s = fallback_per_ciphertext_s * batch as f64;
    let fallbacks = match (whole_job, mode) {
        (true, _) => "each row's own, priced by seal-host@1 (modeled)".to_string(),
        (false, Some(Mode::CiphertextMajor)) => "none (ciphertext-major: key switching runs on the DPUs)".to_string(),
        (false, _) => {
            format!("measured here: {} (median; linear in the batch; parallel placement)", format_seconds(fallback_s))
        }
    };
    Ok(AdviseReport {
        workload: config.workload.clone(),
        computation,
        n: config.n,
        primes,
        mode: mode.map_or("auto", Mode::name).to_string(),
        batch,
        batch_of: if workload.takes_users() { "users" } else { "ciphertexts" }.to_string(),
        max_batch,
        cpu,
        fallback_s,
        fallbacks,
        rows,
        verdicts,
        method: method_notes(mode, whole_job, what_ifs.iter().any(|(_, w)| w.multiplier.is_some())),
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
