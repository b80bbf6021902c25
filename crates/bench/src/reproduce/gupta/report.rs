//! Gupta et al.'s report: Fig. 1's rows as the paper lays them out (with the copies and the CPU
//! beside), the CPU measurements, the tasklet sweep, and every stated range as a
//! [`Comparison`].

use pimhe_workloads::progress::Progress;
use pimhe_workloads::stats::Statistic;
use serde::Serialize;

use super::cpu::{CpuMeasurement, WidthTimes};
use super::dpu::CtOp;
use super::fig2::{Fig2Row, CPU_SAMPLE_ROWS, QUICK_SAMPLES_DIVISOR};
use super::multiword::{self, MultiwordRow};
use super::published::{
    StatedRange, Versus, FIG1_RANGES, FIG2_RANGES, PAPER_SATURATION_TASKLETS, SINGLE_FIGURE_TOLERANCE,
};
use super::{reproduce, GuptaConfig};
use crate::error::Result;
use crate::format::{format_seconds, Render};
use crate::reproduce::{Basis, Comparison, Reproduction};

/// Tasklets "saturate" from the fewest whose kernel time is within this fraction of the best.
pub const SATURATION_MARGIN: f64 = 0.02;
/// Tolerance of the saturation point against the paper's 11 tasklets: 10 .. 12 are within.
pub const SATURATION_TOLERANCE: f64 = 0.1;

/// One point of Fig. 1: an operation at one width and count on the modeled system.
#[derive(Debug, Clone, Serialize)]
pub struct Fig1Row {
    /// `add` or `mul`.
    pub op: CtOp,
    /// The paper's coefficient width.
    pub coefficient_bits: u32,
    /// Ring degree.
    pub n: usize,
    /// pimhe's RNS limbs.
    pub limbs: usize,
    /// Ciphertexts (of each input vector).
    pub ciphertexts: usize,
    /// DPUs of each limb's group (parallel mode).
    pub dpus_per_limb: usize,
    /// Polynomials per operand on the busiest DPU.
    pub share: usize,
    /// Tasklets per DPU.
    pub tasklets: u32,
    /// Modeled kernel seconds: the busiest DPU's launch, priced by rounds, with the launch
    /// overhead.
    pub kernel_s: f64,
    /// Modeled host -> DPU seconds of the operands.
    pub transfer_s: f64,
    /// Modeled DPU -> host seconds of the results.
    pub retrieve_s: f64,
    /// With `--quick`: the whole system's compute as emulated (every DPU), which the priced
    /// `kernel_s` was checked against.
    pub emulated_kernel_s: Option<f64>,
    /// Measured cpu-backend seconds per ciphertext times the count; `None` with `--skip-cpu`.
    pub cpu_s: Option<f64>,
    /// `cpu_s / kernel_s`.
    pub speedup: Option<f64>,
    /// SEAL's seconds per ciphertext on this machine (`--seal-json`) times the count.
    pub seal_s: Option<f64>,
    /// The least time any code on the paper's CPU needs to stream the operation's bytes:
    /// [`CtOp::bytes_moved`] over the i5-8250U's peak bandwidth
    /// ([`super::published::PAPER_CPU_PEAK_BYTES_PER_S`]).
    pub paper_cpu_bound_s: f64,
}

impl Fig1Row {
    /// PIM's speed-up over the paper's CPU at its peak bandwidth, `paper_cpu_bound_s /
    /// kernel_s`: the least speed-up over any CPU code on that chip (the paper's is slower).
    pub fn speedup_over_bound(&self) -> f64 {
        self.paper_cpu_bound_s / self.kernel_s
    }
}

/// One point of the tasklet sweep.
#[derive(Debug, Clone, Serialize)]
pub struct SweepRow {
    /// `add` or `mul`.
    pub op: CtOp,
    /// The paper's coefficient width.
    pub coefficient_bits: u32,
    /// Ciphertexts.
    pub ciphertexts: usize,
    /// Tasklets per DPU.
    pub tasklets: u32,
    /// Modeled kernel seconds.
    pub kernel_s: f64,
    /// Modeled kernel seconds of the paper's kernels on the same operands: `MW_ADD`, or four
    /// textbook products (`MW_CONV`) and an `MW_ADD` a ciphertext (Karatsuba words).
    pub paper_kernel_s: f64,
}

/// What `pimhe bench reproduce gupta` reports.
#[derive(Debug, Clone, Serialize)]
pub struct GuptaReport {
    /// The model's label (`upmem-v1b@1 (modeled)`, at the paper's clock).
    pub model: String,
    /// DPUs of the modeled system.
    pub dpus: usize,
    /// Their clock, Hz.
    pub dpu_hz: f64,
    /// Tasklets of the Fig. 1 rows.
    pub tasklets: u32,
    /// Whether this was a `--quick` run.
    pub quick: bool,
    /// The CPU measured, and what ran on it.
    pub cpu_machine: String,
    /// The CPU measured, without what ran on it (the paper's CPU arithmetic also ran there).
    pub cpu_host: String,
    /// SEAL's times on this machine, from `--seal-json` (empty without).
    pub seal: Vec<WidthTimes>,
    /// The paper's CPU arithmetic's times on this machine (empty with `--skip-cpu`).
    pub paper_cpu: Vec<WidthTimes>,
    /// Fig. 1's rows, addition then multiplication, by width and count.
    pub rows: Vec<Fig1Row>,
    /// Fig. 1's rows again in the paper's multi-word representation on the same DPUs.
    pub multiword: Vec<MultiwordRow>,
    /// The CPU measurements the rows' `cpu_s` are scaled from.
    pub cpu: Vec<CpuMeasurement>,
    /// The tasklet sweep.
    pub sweep: Vec<SweepRow>,
    /// Shares emulated (each checked against the cpu backend).
    pub emulations: usize,
    /// The model of Fig. 2's rows (the default version at the paper's clock).
    pub fig2_model: String,
    /// Fig. 2's rows: mean, variance by users, then the regressions.
    pub fig2: Vec<Fig2Row>,
}

impl GuptaReport {
    /// The fewest tasklets whose kernel time for `op` (pimhe's RNS kernels) is within
    /// [`SATURATION_MARGIN`] of the sweep's best; `None` without sweep rows for `op`.
    pub fn saturation(&self, op: CtOp) -> Option<u32> {
        self.saturation_of(op, |r| r.kernel_s)
    }

    /// [`GuptaReport::saturation`] of the paper's multi-word kernels.
    pub fn paper_saturation(&self, op: CtOp) -> Option<u32> {
        self.saturation_of(op, |r| r.paper_kernel_s)
    }

    fn saturation_of(&self, op: CtOp, seconds: impl Fn(&SweepRow) -> f64) -> Option<u32> {
        let rows: Vec<&SweepRow> = self.sweep.iter().filter(|r| r.op == op).collect();
        let best = rows.iter().map(|r| seconds(r)).fold(f64::INFINITY, f64::min);
        rows.iter().filter(|r| seconds(r) <= best * (1.0 + SATURATION_MARGIN)).map(|r| r.tasklets).min()
    }
}

fn ms(s: f64) -> String {
    format!("{:.3}", s * 1e3)
}

impl Render for GuptaReport {
    fn render(&self) -> String {
        let mut text = format!(
            "Gupta et al., Fig. 1 on {} DPUs at {:.0} MHz, {} tasklets, {}{}: kernel times priced from {} emulated \
             shares (each checked against the cpu backend); CPU: {} (measured, scaled linearly by the count)",
            self.dpus,
            self.dpu_hz / 1e6,
            self.tasklets,
            self.model,
            if self.quick { ", --quick (every row's whole system also emulated)" } else { "" },
            self.emulations,
            self.cpu_machine
        );
        text += "\n  op   bits      N  limbs  ciphertexts  DPUs/limb  share  kernel ms  copy-in ms  copy-out ms     CPU ms  speedup  i5 bound ms  speedup";
        for r in &self.rows {
            text += &format!(
                "\n  {:<3}  {:>4}  {:>5}  {:>5}  {:>11}  {:>9}  {:>5}  {:>9}  {:>10}  {:>11}  {:>9}  {:>7}  {:>11}  {:>6.1}x",
                r.op.name(),
                r.coefficient_bits,
                r.n,
                r.limbs,
                r.ciphertexts,
                r.dpus_per_limb,
                r.share,
                ms(r.kernel_s),
                ms(r.transfer_s),
                ms(r.retrieve_s),
                r.cpu_s.map_or("-".to_string(), ms),
                r.speedup.map_or("-".to_string(), |x| format!("{x:.1}x")),
                ms(r.paper_cpu_bound_s),
                r.speedup_over_bound(),
            );
            if let Some(e) = r.emulated_kernel_s {
                text += &format!("  (whole system emulated: {} ms)", ms(e));
            }
        }
        if !self.cpu.is_empty() {
            text += "\n  CPU measured:";
            for m in &self.cpu {
                text += &format!(
                    " {} {}-bit {} ct in {} ms;",
                    m.op.name(),
                    m.coefficient_bits,
                    m.ciphertexts,
                    ms(m.seconds)
                );
            }
        }
        let times = self.seal.iter().map(|w| ("SEAL (--seal-json)", w));
        for (who, w) in times.chain(self.paper_cpu.iter().map(|w| ("The paper's CPU arithmetic (measured)", w))) {
            text += &format!(
                "\n  {who} {}-bit: add {:.3} us, mul {:.3} us per ciphertext",
                w.coefficient_bits,
                w.add_s_per_ciphertext * 1e6,
                w.mul_s_per_ciphertext * 1e6
            );
        }
        text += &multiword::render(&self.multiword);
        text +=
            "\n\nTasklet sweep (109 bits, the largest count; modeled kernel ms; RNS kernels, and the paper's: MW_ADD, \
                 textbook products)\n  tasklets      add ms      mul ms   paper add ms   paper mul ms";
        let at = |op: CtOp, t: u32| self.sweep.iter().find(|r| r.op == op && r.tasklets == t);
        let tasklets: std::collections::BTreeSet<u32> = self.sweep.iter().map(|r| r.tasklets).collect();
        for t in tasklets {
            let cell = |op, paper: bool| {
                at(op, t).map_or("-".to_string(), |r| ms(if paper { r.paper_kernel_s } else { r.kernel_s }))
            };
            text += &format!(
                "\n  {t:>8}  {:>10}  {:>10}  {:>13}  {:>13}",
                cell(CtOp::Add, false),
                cell(CtOp::Mul, false),
                cell(CtOp::Add, true),
                cell(CtOp::Mul, true)
            );
        }
        for op in CtOp::ALL {
            for (kernels, point) in [("RNS", self.saturation(op)), ("paper's", self.paper_saturation(op))] {
                if let Some(t) = point {
                    text += &format!(
                        "\n  {} ({kernels} kernels): within {:.0}% of the best from {t} tasklets (the paper: from \
                         {PAPER_SATURATION_TASKLETS})",
                        op.name(),
                        SATURATION_MARGIN * 100.0
                    );
                }
            }
        }
        text + &self.render_fig2()
    }
}

impl GuptaReport {
    /// Fig. 2's table: per point the plaintext moduli, the chosen placement and the modeled
    /// kernel time beside the copies, the CPU measured and SEAL composed.
    fn render_fig2(&self) -> String {
        if self.fig2.is_empty() {
            return String::new();
        }
        let mut text = format!(
            "\n\nFig. 2 (BFV N = 4096, 109 bits; {} DPUs at {:.0} MHz, {}): the server step of pimhe's statistics, \
             the client's encryption excluded. Each placement priced from a representative system with the busiest \
             DPU's share of rows (its result equal to the cpu backend's); CPU measured on the first rows (up to {}) \
             and scaled linearly; runs of at most that many rows decrypted and checked against the plaintext (*)",
            self.dpus,
            self.dpu_hz / 1e6,
            self.fig2_model,
            CPU_SAMPLE_ROWS
        );
        text += "\n  workload         rows  moduli  placement         share  kernel ms  copy-in ms  copy-out ms     CPU ms  speedup    \
                 SEAL ms  paper's arithmetic ms  on the CPU ms";
        for r in &self.fig2 {
            text += &format!(
                "\n  {:<14} {:>6}  {:>6}  {:<16}  {:>5}  {:>9}  {:>10}  {:>11}  {:>9}  {:>7}  {:>9}  {:>21}  {:>13}",
                format!("{}{}", r.point.id(), if r.checked_against_plaintext { "*" } else { "" }),
                r.rows,
                r.plain_moduli.len(),
                r.plan.chosen,
                r.share,
                ms(r.kernel_s),
                ms(r.transfer_s),
                ms(r.retrieve_s),
                r.cpu_s.map_or("-".to_string(), ms),
                r.speedup.map_or("-".to_string(), |x| format!("{x:.1}x")),
                r.seal_s.map_or("-".to_string(), ms),
                ms(r.textbook_s),
                r.textbook_cpu_s.map_or("-".to_string(), ms),
            );
            if let Some(whole) = r.whole_system_compute_s {
                text += &format!("  (whole system emulated: compute {} ms)", ms(whole));
            }
        }
        text += &format!(
            "\n  paper's arithmetic: the same adds and multiplies on 109-bit multi-word coefficients on the same DPUs, \
             each multiply 4 textbook products (MW_CONV) and an MW_ADD ({}); on the CPU: the same arithmetic on this \
             host, composed from its measured add and multiply",
            self.model
        );
        text += "\n  placements priced (DPU time and copies plus host fallbacks by seal-host@1):";
        for r in &self.fig2 {
            let priced: Vec<String> = r
                .plan
                .candidates
                .iter()
                .map(|c| match (c.planned_s, &c.stopped) {
                    (Some(s), _) => format!("{} {}", c.mode, format_seconds(s)),
                    (None, why) => format!("{} {}", c.mode, why.as_deref().unwrap_or("refused")),
                })
                .collect();
            text += &format!("\n    {}: {}", r.point.id(), priced.join(", "));
        }
        text
    }
}

/// The paper, behind the [`Reproduction`] trait.
pub struct Gupta;

impl Reproduction for Gupta {
    type Config = GuptaConfig;
    type Report = GuptaReport;
    const NAME: &'static str = "gupta";
    const CITATION: &'static str = "H. Gupta, M. Kabra et al., Evaluating Homomorphic Operations on a Real-World \
                                    Processing-In-Memory System (shared/seeds/002)";

    fn run(config: &GuptaConfig, progress: &dyn Progress) -> Result<GuptaReport> {
        reproduce(config, progress)
    }

    /// The saturation point of the tasklet sweep, every Fig. 1 range beside each matching row
    /// (over the CPU: judged against the range; over SEAL and the GPU: not judged, with why),
    /// and every Fig. 2 range beside each matching workload row (over the CPU and SEAL measured
    /// here: judged; over the GPU: not), with the paper's constant PIM time over users.
    fn comparison(report: &GuptaReport) -> Vec<Comparison> {
        let modeled = Basis::Modeled { model: report.model.clone() };
        let mut rows = Vec::new();
        for op in CtOp::ALL {
            // pimhe's RNS kernels, and the paper's own, which its statement is about.
            let paper_kernels = match op {
                CtOp::Add => "the paper's multi-word add (MW_ADD)",
                CtOp::Mul => "the paper's textbook multiplication (MW_CONV and MW_ADD)",
            };
            let points = [
                (format!("saturation-{}", op.name()), format!("the {}", op.name()), report.saturation(op)),
                (
                    format!("saturation-{}-paper-kernels", op.name()),
                    paper_kernels.to_string(),
                    report.paper_saturation(op),
                ),
            ];
            for (id, kernels, point) in points {
                let ours = point.map(f64::from);
                rows.push(
                    Comparison::new(
                        id,
                        format!("tasklets from which {kernels} kernel time stops improving (109 bits)"),
                        "tasklets",
                        "4.2: \"the performance of PIM implementations saturates at 11 or more PIM threads\"",
                        Some(PAPER_SATURATION_TASKLETS as f64),
                        ours,
                        modeled.clone(),
                    )
                    .judged(SATURATION_TOLERANCE, ours.map(|t| saturation_cause(&kernels, t))),
                );
            }
        }
        let speedup_basis = Basis::Modeled {
            model: format!(
                "{} kernel time over {} measured in this run (see the report's CPU line)",
                report.model, report.cpu_machine
            ),
        };
        let bound_basis = Basis::Modeled {
            model: format!(
                "{} kernel time over the i5-8250U's peak memory bandwidth (37.5 GB/s, Intel ARK) streaming the \
                 operation's bytes: a bound, not a measurement",
                report.model
            ),
        };
        for range in &FIG1_RANGES {
            let op = if range.id.starts_with("fig1-add") { CtOp::Add } else { CtOp::Mul };
            let matching =
                report.rows.iter().filter(|r| r.op == op && range.bits.is_none_or(|b| b == r.coefficient_bits));
            match range.versus {
                Versus::Cpu => {
                    for r in matching {
                        let at = format!("{} bits, {} ciphertexts", r.coefficient_bits, r.ciphertexts);
                        let id =
                            format!("{}-{}-{}b-{}", range.id, range.versus.id(), r.coefficient_bits, r.ciphertexts);
                        let row = range_row(
                            range,
                            id.clone(),
                            format!("{at}, CPU measured here"),
                            r.speedup,
                            speedup_basis.clone(),
                        );
                        rows.push(match r.speedup {
                            Some(s) => row.judged(range.tolerance(), Some(cpu_miss_cause(range, op, s))),
                            None => row.unjudged("the CPU was not measured in this run (--skip-cpu)"),
                        });
                        // An addition streams its operands: the paper's CPU at its peak bandwidth
                        // bounds its time from below. A multiplication on 32/64/128-bit words is
                        // compute-bound on a CPU, so no bandwidth bound applies to it.
                        if op == CtOp::Add {
                            let ours = Some(r.speedup_over_bound());
                            let row = range_row(
                                range,
                                format!("{id}-bound"),
                                format!("{at}, the i5-8250U at peak bandwidth"),
                                ours,
                                bound_basis.clone(),
                            );
                            rows.push(
                                row.judged(range.tolerance(), Some(bound_miss_cause(range, r.speedup_over_bound()))),
                            );
                        }
                    }
                }
                Versus::Seal if !report.seal.is_empty() => {
                    let seal_basis = Basis::Modeled {
                        model: format!(
                            "{} kernel time over SEAL (TenSEAL, one thread) measured on this host by \
                             bench/compare/gupta_seal.py, scaled linearly by the count",
                            report.model
                        ),
                    };
                    for r in matching {
                        let id =
                            format!("{}-{}-{}b-{}", range.id, range.versus.id(), r.coefficient_bits, r.ciphertexts);
                        let ours = r.seal_s.map(|s| s / r.kernel_s);
                        let at =
                            format!("{} bits, {} ciphertexts, SEAL measured here", r.coefficient_bits, r.ciphertexts);
                        let row = range_row(range, id, at, ours, seal_basis.clone());
                        rows.push(match ours {
                            Some(s) => row.judged(range.tolerance(), Some(seal_miss_cause(op, s > range.high))),
                            None => row.unjudged("the SEAL output has no figure for this width"),
                        });
                    }
                }
                Versus::Seal | Versus::Gpu => {
                    let mut widths: Vec<u32> = matching.map(|r| r.coefficient_bits).collect();
                    widths.dedup();
                    for bits in widths {
                        let id = format!("{}-{}-{bits}b", range.id, range.versus.id());
                        let row = range_row(range, id, format!("{bits} bits"), None, speedup_basis.clone());
                        rows.push(row.unjudged(not_measured(range.versus)));
                    }
                }
            }
        }
        rows.extend(multiword::comparisons(&report.multiword, &report.model, &report.cpu_machine, range_row));
        rows.extend(multiword::textbook_comparisons(&report.multiword, &report.model, &report.cpu_host, range_row));
        rows.extend(fig2_comparisons(report));
        if report.quick {
            let why = "a --quick run (1/1024 of the paper's counts on 12 DPUs, a self-check): run without --quick \
                       to judge";
            rows = rows.into_iter().map(|r| r.unjudged(why)).collect();
        }
        rows
    }
}

/// Why PIM's speed-up over SEAL falls outside the stated range.
fn seal_miss_cause(op: CtOp, above: bool) -> String {
    match (op, above) {
        (CtOp::Mul, true) => "above the range: SEAL's multiply is a full BFV product (NTTs, the BEHZ base \
             extension and scaling, O(N log N) per residue), pimhe's DPU side the coefficient-wise tensor of NTT-form \
             ciphertexts (O(N)). SEAL's ratio to the paper's PIM (2-4x faster at 64/128 bits, 2x slower at 32) fits a \
             schoolbook O(N^2) polynomial product on the DPUs (4.2: \"We do not incorporate NTT\"), which the \
             -textbook rows price (MW_CONV)"
            .to_string(),
        (CtOp::Mul, false) => "below the range: no cause known".to_string(),
        (CtOp::Add, _) => format!(
            "{} the range: SEAL's add is a memory-bound loop on one thread of this host, like the paper's; the \
             speed-up is the DPUs' 2.1 TB/s over that thread's bandwidth",
            if above { "above" } else { "below" }
        ),
    }
}

/// Why PIM's speed-up over the i5-8250U's bandwidth bound falls outside `range`.
fn bound_miss_cause(range: &StatedRange, speedup: f64) -> String {
    if speedup > range.high {
        "above the range: the modeled DPU kernel is faster relative to the CPU than the paper's; pimhe's DPU \
         add of RNS limbs is DMA-bound like the paper's multi-word add, so the model's DMA constants (PrIM) \
         are the suspect"
            .to_string()
    } else {
        "below the range: the bound is the fastest any CPU code streams on that chip; the paper's custom CPU code \
         reached a fraction of the peak bandwidth (a measured CPU time would move this ratio up)"
            .to_string()
    }
}

/// A row of `range` (published: its middle) for `at` with `ours`.
fn range_row(range: &StatedRange, id: String, at: String, ours: Option<f64>, basis: Basis) -> Comparison {
    let stated = if range.high > range.low {
        format!("stated range {:.3}-{:.3}x, printed as its middle", range.low, range.high)
    } else {
        format!("stated {:.3}x", range.low)
    };
    Comparison::new(
        id,
        format!("PIM speed-up over {}, {}, {at} ({stated})", range.versus.name(), range.what),
        "x",
        range.source,
        Some(range.middle()),
        ours,
        basis,
    )
}

/// Why a system other than the CPU has no figure of ours.
fn not_measured(versus: Versus) -> &'static str {
    match versus {
        Versus::Seal => {
            "SEAL is not run by this Rust reproduction: bench/compare/gupta_seal.py times the same operations \
             with SEAL (TenSEAL) on this machine where a venv with tenseal exists"
        }
        Versus::Gpu => "pimhe has no GPU backend to measure",
        Versus::Cpu => "the CPU was not measured in this run",
    }
}

/// Why a speed-up over the CPU measured here falls outside `range`.
fn cpu_miss_cause(range: &StatedRange, op: CtOp, speedup: f64) -> String {
    let baseline = "the CPU side differs: the paper's custom code on 32/64/128-bit integers on a 4-core i5-8250U vs \
                    pimhe's cpu backend (RNS limbs of 32-bit words, SIMD) on this host";
    match (op, speedup > range.high) {
        (CtOp::Add, true) => format!(
            "above the range: {baseline}. An addition streams its operands on both sides, so the speed-up is the ratio \
             of the bandwidths: 2,524 DMA engines x 425 MHz x 2 B/cycle = 2.1 TB/s (the paper's 2,145 GB/s) over \
             the few GB/s this host streams (the report's CPU line); over the i5-8250U's 37.5 GB/s peak it is \
             inside the range (the -bound rows)"
        ),
        (CtOp::Add, false) => {
            format!("below the range: {baseline}; this host streams faster than the paper's CPU code")
        }
        (CtOp::Mul, false) => format!(
            "below the range: {baseline}. The tensor of 27-bit RNS limbs costs this CPU one SIMD modular multiply \
             per product, where the paper's CPU multiplies 64/128-bit words by Karatsuba (3 to 9 word products \
             each); the DPU pays a shift-and-add routine for every 32x32 multiply either way, so the CPU side \
             gains more from RNS than the DPU side"
        ),
        (CtOp::Mul, true) => format!("above the range: {baseline}"),
    }
}

/// Why the saturation point is not the paper's 11.
fn saturation_cause(kernels: &str, tasklets: f64) -> String {
    if tasklets < PAPER_SATURATION_TASKLETS as f64 {
        format!(
            "{kernels} kernel as modeled is bound by the MRAM DMA engine (PrIM's 0.5 cycles/byte), which fewer than \
             11 tasklets already keep busy; a kernel that issues more instructions per byte (the paper's multi-word \
             arithmetic) fills the pipeline only at 11"
        )
    } else {
        format!("{kernels} kernel as modeled keeps improving past 11 tasklets: uneven chunks per tasklet")
    }
}

/// Fig. 2's rows: each stated range beside every workload row it covers, and 4.3's "PIM
/// execution time remains constant for different numbers of users" as the ratio of the
/// largest user count's kernel time to the smallest's.
fn fig2_comparisons(report: &GuptaReport) -> Vec<Comparison> {
    let basis = |over: &str| Basis::Modeled {
        model: format!("{} kernel time of the statistics' server step over {over}", report.fig2_model),
    };
    // A --quick regression's samples per user are the paper's divided.
    let paper_samples = |r: &Fig2Row| r.point.samples_per_user * if report.quick { QUICK_SAMPLES_DIVISOR } else { 1 };
    let mut rows = Vec::new();
    for range in &FIG2_RANGES {
        let covers = |r: &&Fig2Row| match range.id {
            "fig2-mean" => r.point.statistic == Statistic::Mean,
            "fig2-variance" => r.point.statistic == Statistic::Variance,
            "fig2-linreg-32" => r.point.statistic == Statistic::Linreg && paper_samples(r) == 32,
            "fig2-linreg-64" => r.point.statistic == Statistic::Linreg && paper_samples(r) == 64,
            _ => true,
        };
        for r in report.fig2.iter().filter(covers) {
            let id = format!("{}-{}-{}", range.id, range.versus.id(), r.point.id());
            let at = format!("{} rows", r.rows);
            rows.extend(match range.versus {
                Versus::Cpu => {
                    let textbook_id = format!("{id}-textbook");
                    let row =
                        range_row(range, id, format!("{at}, CPU measured here"), r.speedup, basis(&report.cpu_machine));
                    let measured = match r.speedup {
                        Some(s) => row.judged(range.tolerance(), Some(fig2_miss_cause(range, r, s))),
                        None => row.unjudged("the CPU was not measured in this run (--skip-cpu)"),
                    };
                    // The paper's arithmetic on both sides: the DPUs' and this host's CPU's.
                    let ours = r.textbook_cpu_s.map(|c| c / r.textbook_s);
                    let textbook_basis = Basis::Modeled {
                        model: format!(
                            "{} kernel time of the workload's adds and multiplies in the paper's arithmetic \
                             (multi-word coefficients, textbook products) over the same arithmetic on {}, composed \
                             from its per-ciphertext add and multiply",
                            report.model, report.cpu_host
                        ),
                    };
                    let at = format!("{at}, the paper's arithmetic on both sides");
                    let row = range_row(range, textbook_id, at, ours, textbook_basis);
                    let textbook = match ours {
                        Some(s) => row
                            .judged(range.tolerance(), Some(fig2_textbook_miss_cause(r, Versus::Cpu, s > range.high))),
                        None => row.unjudged("the CPU was not measured in this run (--skip-cpu)"),
                    };
                    vec![measured, textbook]
                }
                Versus::Seal => {
                    let ours = r.seal_s.map(|s| s / r.kernel_s);
                    let over = "SEAL's per-ciphertext add and multiply measured here by bench/compare/gupta_seal.py \
                                (109 bits, one thread) times the workload's operations";
                    let textbook_id = format!("{id}-textbook");
                    let row = range_row(range, id, format!("{at}, SEAL composed"), ours, basis(over));
                    let composed = match ours {
                        Some(s) => row.judged(range.tolerance(), Some(fig2_miss_cause(range, r, s))),
                        None => row.unjudged(not_measured(Versus::Seal)),
                    };
                    // The same over the paper's own arithmetic on the same DPUs.
                    let ours = r.seal_s.map(|s| s / r.textbook_s);
                    let textbook_basis = Basis::Modeled {
                        model: format!(
                            "{} kernel time of the workload's adds and multiplies in the paper's arithmetic \
                             (multi-word coefficients, textbook products) over {over}",
                            report.model
                        ),
                    };
                    let at = format!("{at}, the paper's arithmetic, SEAL composed");
                    let row = range_row(range, textbook_id, at, ours, textbook_basis);
                    let textbook = match ours {
                        Some(s) => row
                            .judged(range.tolerance(), Some(fig2_textbook_miss_cause(r, Versus::Seal, s > range.high))),
                        None => row.unjudged(not_measured(Versus::Seal)),
                    };
                    vec![composed, textbook]
                }
                Versus::Gpu => vec![range_row(range, id, at, None, basis("a GPU")).unjudged(not_measured(Versus::Gpu))],
            });
        }
    }
    for statistic in [Statistic::Mean, Statistic::Variance] {
        let by_users: Vec<&Fig2Row> = report.fig2.iter().filter(|r| r.point.statistic == statistic).collect();
        let (Some(first), Some(last)) = (by_users.first(), by_users.last()) else { continue };
        let ours = last.kernel_s / first.kernel_s;
        rows.push(
            Comparison::new(
                format!("fig2-{}-pim-time-over-users", statistic.name()),
                format!(
                    "PIM kernel time at {} users over {} users, {}",
                    last.point.users,
                    first.point.users,
                    statistic.name()
                ),
                "x",
                "4.3: \"PIM execution time remains constant for different numbers of users\"",
                Some(1.0),
                Some(ours),
                basis("itself at the fewest users"),
            )
            .judged(
                SINGLE_FIGURE_TOLERANCE,
                Some(format!(
                    "pimhe's server step grows with the rows on the DPUs: {} rows fill {} DPUs' groups {:.1}x as deep \
                     as {} rows (the paper's time stays flat, it says, by using more PIM cores as users grow; on a \
                     full system that only holds below one ciphertext per DPU)",
                    last.rows,
                    report.dpus,
                    last.rows as f64 / first.rows as f64,
                    first.rows
                )),
            ),
        );
    }
    rows
}

/// Why the paper's arithmetic's speed-up over SEAL or over the same arithmetic on this host's
/// CPU (`versus`) falls outside a Fig. 2 range.
fn fig2_textbook_miss_cause(row: &Fig2Row, versus: Versus, above: bool) -> String {
    let side = if above { "above" } else { "below" };
    let other = match versus {
        Versus::Seal => "SEAL's one-thread memory-bound adds here",
        _ => "this host's adds of 128-bit integers",
    };
    match (row.point.statistic, versus) {
        (Statistic::Mean, _) => format!(
            "{side} the range: the mean is additions only, {} multi-word additions of every row's coefficients spread \
             over the DPUs against {other}: a bandwidth ratio, as Fig. 1's additions",
            row.rows
        ),
        (_, Versus::Seal) => format!(
            "{side} the range: the products dominate ({} rows, 4 textbook products each at N = 4096); as in Fig. 1's \
             textbook rows over SEAL, the modeled term (Karatsuba's word products of 4-word coefficients summed \
             unreduced) costs {} than the paper's kernel a term: it does not give its kernel's instructions a term",
            row.rows,
            if above { "less" } else { "more" }
        ),
        _ => format!(
            "{side} the range: the products dominate ({} rows, 4 textbook products each at N = 4096) and one \
             algorithm runs on both sides, so the ratio is the machines', as Fig. 1's -cpu- textbook rows: the \
             paper's custom CPU code, not published, took {} time a term than this host's",
            row.rows,
            if above { "less" } else { "more" }
        ),
    }
}

/// Why a Fig. 2 speed-up over the CPU or SEAL falls outside `range`.
fn fig2_miss_cause(range: &StatedRange, row: &Fig2Row, speedup: f64) -> String {
    let side = if speedup > range.high { "above" } else { "below" };
    let moduli = if row.plain_moduli.len() > 1 {
        format!(
            " pimhe runs the server step once per plaintext modulus ({} here, so that the exact totals fit the noise \
             budget at 109 bits), on both sides.",
            row.plain_moduli.len()
        )
    } else {
        String::new()
    };
    match row.point.statistic {
        Statistic::Mean if speedup > range.high => format!(
            "above the range: the mean is additions only, memory-bound on both sides, so the speed-up is the DPUs' \
             bandwidth over the other side's (as Fig. 1's additions).{moduli}"
        ),
        Statistic::Mean => format!(
            "below the range: {} ciphertexts are a few MB, so the modeled kernel ({:.1} ms) is mostly the launches \
             and the {} rows on the busiest DPU, while the CPU adds them within its caches; the paper's speed-ups \
             need its CPU code's slower adds of 128-bit words.{moduli}",
            row.rows,
            row.kernel_s * 1e3,
            row.share
        ),
        Statistic::Variance | Statistic::Linreg => format!(
            "{side} the range: the products are pimhe's full BFV multiplication (BEHZ base extension, tensor, \
             scaling; NTTs on the DPUs, placement {}, {} host fallbacks) where the paper's DPUs ran a schoolbook \
             product and its CPU code 128-bit Karatsuba, and the CPU side here is pimhe's RNS/NTT backend.{moduli}",
            row.plan.chosen, row.fallbacks
        ),
    }
}
