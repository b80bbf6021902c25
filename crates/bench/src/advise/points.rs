//! The PIM points of an advise run: one workload at a batch on a DPU count under a what-if,
//! modeled once each (memoized), in the placement asked for or, with `--mode auto`, the one
//! priced cheapest at that point.
//!
//! The subset workloads are `pimhe bench OP --backend upmem-emu --emulate subset` runs
//! ([`kernels::run`]): one emulated DPU per prime (one for all primes in ciphertext-major
//! mode) holding the busiest share of the full system; with auto both placements that
//! emulation follows (parallel, ciphertext-major) are modeled and the smaller total taken. The
//! whole jobs ([`super::jobs`]) run on a [`Target`] with every DPU emulated; with auto the
//! planner ([`crate::target::planner`]) prices every placement and the cheapest runs.

use std::collections::BTreeMap;

use pimhe_pim::runtime::placement::Mode;

use super::jobs::Prepared;
use super::verdict::PimBreakdown;
use super::workload::Workload;
use super::AdviseConfig;
use crate::error::{BenchError, Result};
use crate::format::format_seconds;
use crate::measure::kernels::{self, KernelConfig, KernelReport, Op};
use crate::measure::scheme::median;
use crate::target::upmem::{Emulate, PimOutcome};
use crate::target::what_if::WhatIf;
use crate::target::{Cost, Target, UpmemTarget};

/// The placements the subset emulation follows, which `--mode auto` weighs for the subset
/// workloads (sequential launches per prime and hybrid's sliced placement are emulated in full
/// only).
pub(super) const SUBSET_CANDIDATES: [Mode; 2] = [Mode::Parallel, Mode::CiphertextMajor];

/// What a PIM run gave: its breakdown, energy, label, emulation and placement.
#[derive(Debug, Clone)]
pub(super) struct PimPoint {
    pub(super) pim: PimBreakdown,
    pub(super) energy_j: f64,
    pub(super) model: String,
    pub(super) emulation: String,
    /// The placement that ran.
    pub(super) placement: &'static str,
    /// With auto: every candidate's price.
    pub(super) plan: Option<String>,
}

/// A PIM run, or why it could not be modeled.
pub(super) type Modeled = std::result::Result<PimPoint, String>;

/// Runs the PIM points of one workload, each once.
pub(super) struct PimRuns<'a> {
    pub(super) config: &'a AdviseConfig,
    pub(super) workload: Workload,
    /// The validated `--mode` (`None`: auto).
    pub(super) mode: Option<Mode>,
    /// `--primes` of the kernel workloads (`None` for the real-ciphertext ones).
    pub(super) primes: Option<usize>,
    /// The subset workloads' CPU fallbacks' seconds per ciphertext in parallel mode
    /// ([`measure_fallbacks`]).
    pub(super) fallback_per_ciphertext_s: f64,
    /// The whole jobs' keys and inputs per batch.
    pub(super) prepared: BTreeMap<usize, Prepared>,
    pub(super) memo: BTreeMap<(usize, usize, String), Modeled>,
}

impl PimRuns<'_> {
    /// `batch` on `dpus` under `what_if` (validated values), or why it is not modeled.
    pub(super) fn point(&mut self, batch: usize, dpus: usize, what_if: &str) -> Result<Modeled> {
        let key = (batch, dpus, what_if.to_string());
        if let Some(point) = self.memo.get(&key) {
            return Ok(point.clone());
        }
        let what_if_values = if what_if == "none" { Vec::new() } else { vec![what_if.to_string()] };
        let what_if = WhatIf::parse(&what_if_values)?;
        let point = match (self.workload.op(), self.mode) {
            (Some(op), Some(mode)) => self.subset_point(op, batch, dpus, what_if, mode)?,
            (Some(op), None) => self.subset_auto(op, batch, dpus, what_if)?,
            (None, mode) => self.job_point(batch, dpus, what_if, mode)?,
        };
        self.memo.insert(key, point.clone());
        Ok(point)
    }

    /// A subset workload's point in `mode`.
    fn subset_point(&self, op: Op, batch: usize, dpus: usize, what_if: WhatIf, mode: Mode) -> Result<Modeled> {
        let mut bench = KernelConfig::new(op, self.config.n, self.primes, batch);
        bench.target = Target::UpmemEmu(UpmemTarget {
            mode: Some(mode),
            emulate: Some(Emulate::Subset),
            what_if,
            ..UpmemTarget::new(dpus)
        });
        bench.seed = self.config.seed;
        // The ciphertext-major mode has no fallback: everything runs on the DPUs.
        let fallback_s = match mode {
            Mode::CiphertextMajor => 0.0,
            Mode::Parallel | Mode::Sequential | Mode::Hybrid => self.fallback_per_ciphertext_s * batch as f64,
        };
        let outcome = match kernels::run(&bench) {
            Ok(KernelReport::Pim(r)) => r.outcome().clone(),
            Ok(KernelReport::ExactPim(r)) => r.report().outcome().clone(),
            Ok(_) => return Err(BenchError::Failed("internal error: upmem-emu gave another report".into())),
            // The settings were validated up front: what is left is this size not fitting (the
            // busiest DPU's MRAM, or this host's memory for the emulation), or with auto a
            // placement this DPU count cannot take.
            Err(BenchError::Usage(message)) => return Ok(Err(message)),
            Err(e) => return Err(e),
        };
        Ok(Ok(subset_point(&outcome, fallback_s, mode)))
    }

    /// A subset workload's point with `--mode auto`: every placement of [`SUBSET_CANDIDATES`]
    /// modeled, the smaller PIM total taken (the earlier on a tie).
    fn subset_auto(&self, op: Op, batch: usize, dpus: usize, what_if: WhatIf) -> Result<Modeled> {
        let mut priced = Vec::with_capacity(SUBSET_CANDIDATES.len());
        for mode in SUBSET_CANDIDATES {
            priced.push((mode, self.subset_point(op, batch, dpus, what_if, mode)?));
        }
        let best = priced
            .iter()
            .filter_map(|(_, point)| point.as_ref().ok())
            .min_by(|a, b| a.pim.total_s().total_cmp(&b.pim.total_s()))
            .cloned();
        let prices: Vec<String> = priced
            .iter()
            .map(|(mode, point)| match point {
                Ok(p) => format!("{} {}", mode.name(), format_seconds(p.pim.total_s())),
                Err(why) => format!("{} not modeled: {why}", mode.name()),
            })
            .collect();
        Ok(match best {
            Some(best) => {
                let plan =
                    format!("placement auto: {} has the smaller PIM total ({})", best.placement, prices.join("; "));
                Ok(PimPoint { plan: Some(plan), ..best })
            }
            None => Err(prices.join("; ")),
        })
    }

    /// A whole job's point, every DPU emulated, in `mode` or (`None`) the planner's choice.
    fn job_point(&mut self, batch: usize, dpus: usize, what_if: WhatIf, mode: Option<Mode>) -> Result<Modeled> {
        let (n, seed, threads) = (self.config.n, self.config.seed, self.config.threads);
        let prepared = match self.prepared.entry(batch) {
            std::collections::btree_map::Entry::Occupied(entry) => entry.into_mut(),
            std::collections::btree_map::Entry::Vacant(entry) => {
                entry.insert(prepare(self.workload, n, batch, seed, threads)?)
            }
        };
        let target = Target::UpmemEmu(UpmemTarget {
            mode,
            emulate: Some(Emulate::Full),
            what_if,
            threads,
            ..UpmemTarget::new(dpus)
        });
        let ran = match prepared.run(&target, threads) {
            Ok(ran) => ran,
            Err(BenchError::Usage(message)) => return Ok(Err(message)),
            Err(e) => return Err(e),
        };
        let Cost::Upmem(report) = &ran.cost else {
            return Err(BenchError::Failed("internal error: upmem-emu gave another cost".into()));
        };
        let placement = match (&ran.plan, mode) {
            (Some(plan), _) => plan.chosen,
            (None, Some(mode)) => mode.name(),
            (None, None) => return Err(BenchError::Failed("internal error: auto gave no plan".into())),
        };
        Ok(Ok(PimPoint {
            pim: PimBreakdown {
                transfer_s: report.transfer_s,
                compute_s: report.compute_s,
                retrieve_s: report.retrieve_s,
                fallback_s: report.host_fallback_modeled_s,
            },
            energy_j: report.energy_j,
            model: report.model.clone(),
            emulation: format!("full: all {dpus} DPUs emulated"),
            placement,
            plan: ran.plan.as_ref().map(|plan| plan.summary()),
        }))
    }
}

/// A whole job's keys and inputs at `batch` (users for the statistics).
pub(super) fn prepare(
    workload: Workload,
    n: usize,
    batch: usize,
    seed: u64,
    threads: Option<usize>,
) -> Result<Prepared> {
    match workload {
        Workload::Statistics(statistic) => Prepared::statistics(statistic, batch, n, seed),
        Workload::CkksMulRelinRescale => {
            Prepared::ckks_products(&pimhe_exec::CpuBackend::new(threads)?, n, batch, seed)
        }
        Workload::Pipeline | Workload::BgvMulRelin | Workload::BfvMulRelin => {
            Err(BenchError::Failed("internal error: a subset workload is not a whole job".into()))
        }
    }
}

/// The CPU fallbacks' seconds per ciphertext of `op` at `batch`: the median over `repeat` runs of
/// the host steps' measured time (`host_fallback_s`) on the smallest system (one DPU per prime,
/// all pairs on it), divided by the batch. The fallbacks are host work on the whole batch,
/// whatever the DPUs and the what-if, so they are measured once, like the CPU, and taken as
/// linear in the batch; measuring them in every run would put this host's noise between
/// scenarios that differ only in the model. 0 for the kernels, which have none.
pub(super) fn measure_fallbacks(op: Op, config: &AdviseConfig, primes: usize) -> Result<f64> {
    if op == Op::Pipeline {
        return Ok(0.0);
    }
    let mut bench = KernelConfig::new(op, config.n, None, config.batch);
    bench.target = Target::UpmemEmu(UpmemTarget { mode: Some(Mode::Parallel), ..UpmemTarget::new(primes) });
    bench.seed = config.seed;
    let times = (0..config.repeat)
        .map(|_| match kernels::run(&bench)? {
            KernelReport::ExactPim(r) => Ok(r.host_fallback_s().unwrap_or_default()),
            _ => Err(BenchError::Failed("internal error: upmem-emu gave another report".into())),
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(median(&times) / config.batch as f64)
}

fn subset_point(o: &PimOutcome, fallback_s: f64, mode: Mode) -> PimPoint {
    PimPoint {
        pim: PimBreakdown { transfer_s: o.transfer_s, compute_s: o.compute_s, retrieve_s: o.retrieve_s, fallback_s },
        energy_j: o.energy_j,
        model: o.model.clone(),
        emulation: o.emulation.clone(),
        placement: mode.name(),
        plan: None,
    }
}
