//! What `bench OP` reports: one report kind per backend ([`KernelReport`]), each printed as text
//! and serialised flat as `--json`.

use serde::Serialize;

use super::workload::Workload;
use crate::format::{format_seconds, format_si, Render};
use crate::target::nearbank::NearbankOutcome;
use crate::target::planner::PlanChoice;
use crate::target::upmem::{self, PimOutcome, PimSettings};
use crate::target::what_if;
use pimhe_pim::layout::Variant;

/// What [`super::run`] returns: one of the report kinds (`--json` serialises the inner report as it is).
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum KernelReport {
    /// A kernel timed on the cpu backend.
    Cpu(CpuReport),
    /// A kernel on emulated DPUs, modeled.
    Pim(PimReport),
    /// An operation on real ciphertexts (bfv-mul, bfv-add, bgv-mul-relin) on the cpu backend.
    ExactCpu(ExactReport<CpuReport>),
    /// An operation on real ciphertexts on emulated DPUs, modeled.
    ExactPim(ExactReport<PimReport>),
    /// A kernel on the GPU + near-bank PIM model.
    Nearbank(NearbankReport),
    /// An operation on real ciphertexts on the GPU + near-bank PIM model.
    ExactNearbank(ExactReport<NearbankReport>),
}

impl Render for KernelReport {
    fn render(&self) -> String {
        match self {
            KernelReport::Cpu(r) => r.render(),
            KernelReport::Pim(r) => r.render(),
            KernelReport::ExactCpu(r) => r.render(),
            KernelReport::ExactPim(r) => r.render(),
            KernelReport::Nearbank(r) => r.render(),
            KernelReport::ExactNearbank(r) => r.render(),
        }
    }
}

/// The result of an `upmem-emu` run (`--json` serialises it as one object).
#[derive(Debug, Clone, Serialize)]
pub struct PimReport {
    op: &'static str,
    backend: &'static str,
    n: usize,
    primes: usize,
    prime_bits: u32,
    moduli: Vec<u32>,
    batch: usize,
    dpus: usize,
    ranks: u32,
    mode: &'static str,
    kernel: &'static str,
    seed: u64,
    /// The active `--what-if`s (absent when none).
    #[serde(skip_serializing_if = "Option::is_none")]
    what_if: Option<String>,
    /// What the multiplier what-if cannot re-cost in this kernel (absent when nothing).
    #[serde(skip_serializing_if = "Option::is_none")]
    what_if_caveat: Option<&'static str>,
    #[serde(flatten)]
    outcome: PimOutcome,
    /// With `--mode auto`: what each placement cost and which ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    plan: Option<PlanChoice>,
}

impl PimReport {
    /// What the run reported: the modeled breakdown and where each figure came from.
    pub fn outcome(&self) -> &PimOutcome {
        &self.outcome
    }

    /// The report of `outcome`, a run of `workload` on `settings`.
    pub fn new(workload: &Workload, prime_bits: u32, settings: &PimSettings, outcome: PimOutcome) -> Self {
        Self {
            op: workload.op.name(),
            backend: "upmem-emu",
            n: workload.n(),
            primes: workload.primes(),
            prime_bits,
            moduli: workload.basis.primes(),
            batch: workload.batch,
            dpus: settings.dpus,
            ranks: settings.ranks(),
            mode: settings.mode.name(),
            kernel: upmem::kernel_name(settings.variant),
            seed: workload.seed,
            what_if: settings.what_if.is_active().then(|| settings.what_if.describe()),
            what_if_caveat: (settings.what_if.multiplier.is_some() && settings.variant == Variant::Best)
                .then_some(what_if::TABLE_CAVEAT),
            outcome,
            plan: None,
        }
    }

    /// The report with the planner's choice (`--mode auto`).
    pub fn with_plan(self, plan: PlanChoice) -> Self {
        Self { plan: Some(plan), ..self }
    }
}

impl Render for PimReport {
    /// Three lines of text: the run, the emulation, the modeled figures.
    fn render(&self) -> String {
        let o = &self.outcome;
        let modeled = format!("(modeled, {})", o.model_short());
        let caveat = self.what_if_caveat.map_or(String::new(), |c| format!("\n  what-if caveat: {c}"));
        let plan = self.plan.as_ref().map_or(String::new(), |p| format!("\n  {}", p.summary()));
        format!(
            "{}  backend=upmem-emu n={} primes={}x{}b batch={} dpus={} mode={} kernel={}\n  \
             emulation: {}; wall={} (emulator on this host)\n  \
             transfer={} compute={} retrieve={} total={} energy={:.3} J {modeled}; launches={} fallbacks={} \
             counted instructions={}{caveat}{plan}",
            self.op,
            self.n,
            self.primes,
            self.prime_bits,
            self.batch,
            self.dpus,
            self.mode,
            self.kernel,
            o.emulation,
            format_seconds(o.wall_s),
            format_seconds(o.transfer_s),
            format_seconds(o.compute_s),
            format_seconds(o.retrieve_s),
            format_seconds(o.total_s),
            o.energy_j,
            o.launches,
            o.fallbacks,
            format_si(o.counted_instructions as f64),
        )
    }
}

/// The result of a `nearbank` run (`--json` serialises it as one object).
#[derive(Debug, Clone, Serialize)]
pub struct NearbankReport {
    op: &'static str,
    backend: &'static str,
    n: usize,
    primes: usize,
    prime_bits: u32,
    batch: usize,
    seed: u64,
    /// Measured: the host computing the results (not a modeled figure).
    host_wall_s: f64,
    #[serde(flatten)]
    outcome: NearbankOutcome,
}

impl NearbankReport {
    /// The report of `outcome`, one run of `workload` that took `host_wall_s` on this host.
    pub fn new(workload: &Workload, prime_bits: u32, host_wall_s: f64, outcome: NearbankOutcome) -> Self {
        Self {
            op: workload.op.name(),
            backend: "nearbank",
            n: workload.n(),
            primes: workload.primes(),
            prime_bits,
            batch: workload.batch,
            seed: workload.seed,
            host_wall_s,
            outcome,
        }
    }
}

impl Render for NearbankReport {
    /// The run, then the modeled figures.
    fn render(&self) -> String {
        format!(
            "{}  backend=nearbank n={} primes={}x{}b batch={} system={} B={}  host wall={} (computing the results \
             on this host)\n{}",
            self.op,
            self.n,
            self.primes,
            self.prime_bits,
            self.batch,
            self.outcome.system,
            self.outcome.buffer_entries,
            format_seconds(self.host_wall_s),
            self.outcome.render()
        )
    }
}

/// The result of a cpu run of a kernel, as printed (`--json` serialises it as one object).
#[derive(Debug, Clone, Serialize)]
pub struct CpuReport {
    op: &'static str,
    backend: String,
    n: usize,
    primes: usize,
    prime_bits: u32,
    moduli: Vec<u32>,
    batch: usize,
    threads: usize,
    repeats: usize,
    seed: u64,
    /// Best repeat, seconds.
    wall_s: f64,
    /// Mean over the repeats, seconds.
    mean_s: f64,
    times_s: Vec<f64>,
    /// Input residues (2C x N x K) per second of the best repeat.
    coefficients_per_s: f64,
    /// Polynomials (ntt, intt) or ciphertext products (bgv-mul, pipeline) per second.
    throughput: f64,
    throughput_unit: &'static str,
}

impl CpuReport {
    /// Seconds of every timed repeat.
    pub fn times_s(&self) -> &[f64] {
        &self.times_s
    }

    /// Seconds of the best repeat.
    pub fn wall_s(&self) -> f64 {
        self.wall_s
    }

    /// Worker threads of the backend.
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// The report of `times` (seconds of each repeat) of `workload` on `backend`.
    pub fn new(workload: &Workload, backend: &str, threads: usize, prime_bits: u32, times: Vec<f64>) -> Self {
        let wall_s = times.iter().copied().fold(f64::INFINITY, f64::min);
        let mean_s = times.iter().sum::<f64>() / times.len() as f64;
        // A zero reading (coarse clock, empty work) would make the rates infinite.
        let seconds = wall_s.max(1e-9);
        let items = if workload.op.pairs() { workload.batch / 2 } else { workload.input_polys() };
        Self {
            op: workload.op.name(),
            backend: backend.to_string(),
            n: workload.n(),
            primes: workload.primes(),
            prime_bits,
            moduli: workload.basis.primes(),
            batch: workload.batch,
            threads,
            repeats: times.len(),
            seed: workload.seed,
            wall_s,
            mean_s,
            coefficients_per_s: workload.input_residues() as f64 / seconds,
            throughput: items as f64 / seconds,
            throughput_unit: workload.op.unit(),
            times_s: times,
        }
    }
}

impl Render for CpuReport {
    /// One line of text.
    fn render(&self) -> String {
        format!(
            "{}  backend={} n={} primes={}x{}b batch={} threads={}  wall={} (best of {}, mean {})  \
             throughput={} {}/s ({} coefficients/s)",
            self.op,
            self.backend,
            self.n,
            self.primes,
            self.prime_bits,
            self.batch,
            self.threads,
            format_seconds(self.wall_s),
            self.repeats,
            format_seconds(self.mean_s),
            format_si(self.throughput),
            self.throughput_unit,
            format_si(self.coefficients_per_s),
        )
    }
}

/// A `bench` report of an exact scheme's operation: the common fields, what was computed, and
/// that the result was checked.
#[derive(Debug, Clone, Serialize)]
pub struct ExactReport<R: Render> {
    #[serde(flatten)]
    pub(super) report: R,
    pub(super) computation: &'static str,
    /// Where the keys come from: always `--seed` here ([`crate::format::FIXED_SEED_KEYS`]).
    pub(super) keys: &'static str,
    /// The decrypted result equalled the plaintext one (always true in a printed report).
    pub(super) checked: bool,
    /// upmem-emu: measured seconds of the steps that ran on the CPU instead of the DPUs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) host_fallback_s: Option<f64>,
}

impl<R: Render> ExactReport<R> {
    /// The backend's report.
    pub fn report(&self) -> &R {
        &self.report
    }

    /// What was computed, e.g. `BGV multiply + relinearize, C/2 pairs`.
    pub fn computation(&self) -> &'static str {
        self.computation
    }

    /// upmem-emu: measured seconds of the steps that ran on the CPU instead of the DPUs.
    pub fn host_fallback_s(&self) -> Option<f64> {
        self.host_fallback_s
    }
}

impl<R: Render> Render for ExactReport<R> {
    fn render(&self) -> String {
        let mut text = format!(
            "{}\n  {}; result checked against the plaintext; {} (--seed)",
            self.report.render(),
            self.computation,
            self.keys
        );
        if let Some(seconds) = self.host_fallback_s {
            text += &format!("; host fallback steps {} measured", format_seconds(seconds));
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::super::workload::Op;
    use super::*;

    #[test]
    fn report_rates_follow_the_best_time() {
        let workload = Workload::new(Op::BgvMul, 16, 2, 30, 8, 1).unwrap();
        let report = CpuReport::new(&workload, "cpu", 2, 30, vec![2.0, 1.0, 3.0]);
        assert_eq!(report.wall_s, 1.0);
        assert_eq!(report.mean_s, 2.0);
        assert_eq!(report.throughput, 4.0);
        assert_eq!(report.coefficients_per_s, (16 * 16 * 2) as f64);
        let line = report.render();
        assert!(line.starts_with("bgv-mul  backend=cpu n=16 primes=2x30b batch=8 threads=2  wall=1.000 s"), "{line}");
        assert!(line.contains("products/s"), "{line}");
    }
}
