//! The reproduction's run, its report and text, and its rows in the common shape.

use pimhe_pim::emulator::EmulatorConfig;
use pimhe_pim::layout::Variant;
use pimhe_pim::model::UpmemModel;
use pimhe_pim::raw_poly::RawOp;
use pimhe_workloads::progress::Progress;
use serde::{Deserialize, Serialize};

use super::cpu::scaling_rule;
use super::hal::{self, HalRow, HAL_MISS, HAL_SIZES, QUICK_HAL_SIZES};
use super::hal_layout::{
    self, HalLayoutRow, LAYOUT_MISS, LAYOUT_N, LAYOUT_TOWERS, QUICK_LAYOUT_N, QUICK_LAYOUT_TOWERS,
};
use super::ntt::{self, Fig7Row};
use super::peers::{self, Peers};
use super::published::{
    published_alpha, Claim, HalClaim, HalOp, StatedRatio, ALPHA_SOURCE, FIG7_CPU_FASTER_WITH_COPIES, FIG7_SOURCE,
    HAL_STATED, PAPER_DPUS, PAPER_SCALING_DPUS, PAPER_SCALING_N, PAPER_SIZES, PAPER_TASKLETS, PUBLISHED_FASTEST_DPUS,
    SCALING_SOURCE, STATED_RATIOS,
};
use super::rows::{row, CpuTimes, Fig3Row, RowSetup};
use crate::error::Result;
use crate::format::{format_seconds, Render};
use crate::measure::machine::CpuFacts;
use crate::reproduce::{Basis, Comparison, Reproduction};

/// Lengths of a `--quick` run's Fig. 3 (a, c, e).
pub const QUICK_SIZES: [usize; 2] = [1 << 10, 1 << 12];
/// Length of a `--quick` run's Fig. 3 (b, d, f).
pub const QUICK_SCALING_N: usize = 1 << 12;
/// DPU counts of a `--quick` run's Fig. 3 (b, d, f): the paper's five (each DPU still holds at
/// least two coefficients of 2^12).
pub const QUICK_SCALING_DPUS: [usize; 5] = PAPER_SCALING_DPUS;

/// Lengths of a `--quick` run's Fig. 7.
pub const QUICK_FIG7_SIZES: [usize; 2] = [1 << 10, 1 << 12];

/// A stated ratio within this relative tolerance is reproduced (the 25 %).
pub const TOLERANCE: f64 = 0.25;

/// What `pimhe bench reproduce mhy` runs: its flags (`--quick`, `--skip-cpu`) by Python's names.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MhyConfig {
    /// Two small lengths (2^10, 2^12; scaling at 2^12), every row also executed whole on the
    /// emulated DPUs and checked against the CPU loop: a few seconds.
    pub quick: bool,
    /// Model only: no CPU loop timed (the ratios are then not judged).
    pub skip_cpu: bool,
}

/// The reproduction's report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MhyReport {
    /// The DPU model's label.
    pub model: String,
    /// Arithmetic of the kernels (`barrett`: every product fully reduced, as a plain `%` does).
    pub variant: Variant,
    /// The CPU the loops ran on, `None` with `--skip-cpu`.
    pub cpu: Option<CpuFacts>,
    /// How the cpu-time column is scaled from the time here.
    pub scaling_rule: String,
    /// A `--quick` run.
    pub quick: bool,
    /// Fig. 3 (a, c, e).
    pub by_n: Vec<Fig3Row>,
    /// Fig. 3 (b, d, f).
    pub by_dpus: Vec<Fig3Row>,
    /// Fig. 7: one NTT stage per launch, beside the CPU stage and the resident NTT.
    pub ntt_stages: Vec<Fig7Row>,
    /// Figs. 4-5 and 8: pimhe's analogue of the HAL path.
    pub hal: Vec<HalRow>,
    /// Figs. 4-5 and 8 in MHY+'s layout and shapes (the authors' benchmark).
    pub hal_layout: Vec<HalLayoutRow>,
    /// DRAMatic's published MHY+ and SEAL rows beside its own.
    pub dramatic_peers: Peers,
}

/// The reproduction.
pub struct Mhy;

impl Reproduction for Mhy {
    type Config = MhyConfig;
    type Report = MhyReport;
    const NAME: &'static str = "mhy";
    const CITATION: &'static str =
        "M. Mwaisela, J. Hari, P. Yuhala, P. Felber, V. Schiavoni, Evaluating the Potential of In-Memory Processing \
                                    to Accelerate Homomorphic Encryption (seed 001)";

    fn run(config: &MhyConfig, progress: &dyn Progress) -> Result<MhyReport> {
        let model = UpmemModel::v1b();
        let here = (!config.skip_cpu).then(|| CpuFacts::this_machine(1));
        let setup = RowSetup {
            model: &model,
            config: EmulatorConfig::default().with_tasklets(PAPER_TASKLETS),
            variant: Variant::Barrett,
            cpu: here.as_ref(),
            execute: config.quick,
        };
        let (sizes, scaling_n, scaling_dpus) = if config.quick {
            (&QUICK_SIZES[..], QUICK_SCALING_N, &QUICK_SCALING_DPUS[..])
        } else {
            (&PAPER_SIZES[..], PAPER_SCALING_N, &PAPER_SCALING_DPUS[..])
        };
        let fig7_sizes = if config.quick { &QUICK_FIG7_SIZES[..] } else { &PAPER_SIZES[..] };
        let hal_sizes = if config.quick { &QUICK_HAL_SIZES[..] } else { &HAL_SIZES[..] };
        let (layout_n, layout_towers) =
            if config.quick { (QUICK_LAYOUT_N, &QUICK_LAYOUT_TOWERS[..]) } else { (LAYOUT_N, &LAYOUT_TOWERS[..]) };
        let rows = RawOp::ALL.len() * (sizes.len() + scaling_dpus.len())
            + fig7_sizes.len()
            + HalOp::ALL.len() * (hal_sizes.len() + layout_towers.len());
        progress.start(rows as u64, "rows");
        let (mut by_n, mut by_dpus) = (Vec::new(), Vec::new());
        for op in RawOp::ALL {
            let mut timed = CpuTimes::new();
            for &n in sizes {
                by_n.push(row(&setup, op, n, PAPER_DPUS.min(n / 2), &mut timed)?);
                progress.advance(1);
            }
            for &dpus in scaling_dpus {
                by_dpus.push(row(&setup, op, scaling_n, dpus, &mut timed)?);
                progress.advance(1);
            }
        }
        let mut ntt_stages = Vec::new();
        for &n in fig7_sizes {
            ntt_stages.push(ntt::row(&setup, n)?);
            progress.advance(1);
        }
        let mut hal_rows = Vec::new();
        for op in HalOp::ALL {
            for &n in hal_sizes {
                hal_rows.push(hal::row(&setup, op, n)?);
                progress.advance(1);
            }
        }
        let mut hal_layout = Vec::new();
        for op in HalOp::ALL {
            for &towers in layout_towers {
                hal_layout.push(hal_layout::row(&setup, op, layout_n, towers)?);
                progress.advance(1);
            }
        }
        progress.finish();
        Ok(MhyReport {
            model: model.label(),
            variant: Variant::Barrett,
            scaling_rule: here.as_ref().map_or_else(|| "no CPU timed (--skip-cpu)".to_string(), scaling_rule),
            cpu: here,
            quick: config.quick,
            by_n,
            by_dpus,
            ntt_stages,
            hal: hal_rows,
            hal_layout,
            dramatic_peers: peers::load(),
        })
    }

    fn comparison(report: &MhyReport) -> Vec<Comparison> {
        let modeled = Basis::Modeled { model: report.model.clone() };
        let mut rows: Vec<Comparison> = STATED_RATIOS
            .iter()
            .map(|s| {
                let ours = stated_ratio(s, &report.by_n);
                let row =
                    Comparison::new(s.id, claim_quantity(s), "x", s.source, Some(s.published), ours, modeled.clone());
                match (ours, &report.cpu) {
                    (_, None) => row.unjudged("the CPU side was not timed (--skip-cpu)"),
                    (None, _) => row.unjudged("a --quick run has not the lengths the paper takes the maximum over"),
                    (Some(_), Some(_)) => row.judged(TOLERANCE, Some(miss_cause(s))),
                }
            })
            .collect();
        for op in RawOp::ALL {
            let scaling: Vec<&Fig3Row> = report.by_dpus.iter().filter(|r| r.op == op).collect();
            let fastest = scaling.iter().min_by(|a, b| a.dpu_s.total_cmp(&b.dpu_s)).map(|r| r.dpus as f64);
            let row = Comparison::new(
                format!("fig3-scaling-{}-fastest-dpus", short(op)),
                format!("{}: DPU count of the lowest dpu-time, n = 2^20, 64..1024 DPUs", op.name()),
                "DPUs",
                SCALING_SOURCE,
                Some(PUBLISHED_FASTEST_DPUS as f64),
                fastest,
                modeled.clone(),
            );
            rows.push(if report.quick {
                row.unjudged("a --quick run scales n = 2^12, not the paper's 2^20")
            } else {
                row.judged(0.0, Some(SCALING_MISS.to_string()))
            });
        }
        let fig7 = report
            .ntt_stages
            .iter()
            .map(|r| r.cpu_stage_s.map(|cpu| r.stage_with_copies_s() / cpu))
            .try_fold(f64::NEG_INFINITY, |max, x| x.map(|x| max.max(x)));
        let row = Comparison::new(
            "fig7-ntt-stage-cpu-faster-with-copies",
            "one Cooley-Tukey stage: largest (dpu-time + copies) / single-thread cpu-time over n",
            "x",
            FIG7_SOURCE,
            Some(FIG7_CPU_FASTER_WITH_COPIES),
            fig7,
            modeled.clone(),
        );
        rows.push(match (&report.cpu, report.quick) {
            (None, _) => row.unjudged("the CPU side was not timed (--skip-cpu)"),
            (_, true) => row.unjudged("a --quick run has two small lengths, not the figure's"),
            _ => row.judged(TOLERANCE, Some(FIG7_MISS.to_string())),
        });
        // Figs. 4, 5 and 8's statements, on pimhe's placement and on MHY+'s layout.
        let layouts = [
            ("", "pimhe's analogue", report.hal.iter().map(|r| (r.op, &r.sides)).collect::<Vec<_>>(), HAL_MISS),
            ("-layout", "MHY+'s layout", report.hal_layout.iter().map(|r| (r.op, &r.sides)).collect(), LAYOUT_MISS),
        ];
        for (suffix, which, times, miss) in layouts {
            for s in &HAL_STATED {
                let row = Comparison::new(
                    format!("{}{suffix}", s.id),
                    format!("{}: {} ({which})", s.op.name(), hal_quantity(s.claim)),
                    "x",
                    s.source,
                    Some(s.published),
                    hal::stated_ratio(s, times.iter().copied()),
                    modeled.clone(),
                );
                rows.push(match (&report.cpu, report.quick) {
                    (None, _) => row.unjudged("the CPU side was not timed (--skip-cpu)"),
                    (_, true) => row.unjudged("a --quick run has small shapes, not the figures'"),
                    _ => row.judged(TOLERANCE, Some(miss.to_string())),
                });
            }
        }
        for r in &report.by_n {
            rows.push(
                Comparison::new(
                    format!("table2-alpha-{}-{}", short(r.op), r.n),
                    format!("{}: alpha at n = {}, the kernel's operations / 3n", r.op.name(), r.n),
                    "ops/coefficient",
                    ALPHA_SOURCE,
                    Some(published_alpha(r.op, r.n)),
                    Some(r.alpha),
                    Basis::Modeled { model: "operation count of dpu/kernels/raw_poly.h".to_string() },
                )
                .judged(TOLERANCE, None),
            );
        }
        rows
    }
}

fn short(op: RawOp) -> &'static str {
    match op {
        RawOp::Add => "add",
        RawOp::Mul => "mul",
        RawOp::Conv => "conv",
    }
}

/// Ours for a stated ratio: its largest value over the lengths the text names, `None` where
/// a length is missing from `rows` or the CPU was not timed.
pub fn stated_ratio(s: &StatedRatio, rows: &[Fig3Row]) -> Option<f64> {
    s.sizes
        .iter()
        .map(|&n| {
            let r = rows.iter().find(|r| r.op == s.op && r.n == n)?;
            let cpu = r.cpu_s?;
            Some(match s.claim {
                Claim::CpuFaster => r.dpu_s / cpu,
                Claim::CpuFasterWithCopies => r.dpu_with_copies_s() / cpu,
                Claim::DpuFaster => cpu / r.dpu_s,
                Claim::DpuFasterWithCopies => cpu / r.dpu_with_copies_s(),
            })
        })
        .try_fold(f64::NEG_INFINITY, |max, x| x.map(|x| max.max(x)))
}

fn hal_quantity(claim: HalClaim) -> &'static str {
    match claim {
        HalClaim::DpuFasterThanSingle => "largest cpu-1t / dpu-time over the rows",
        HalClaim::DpuFasterThanMulti => "largest cpu-mt / dpu-time over the rows",
        HalClaim::DpuFasterThanSingleWithCopies => "largest cpu-1t / (dpu-time + copies) over the rows",
        HalClaim::MultiFasterWithCopies => "largest (dpu-time + copies) / cpu-mt over the rows",
        HalClaim::SingleFasterWithCopies => "largest (dpu-time + copies) / cpu-1t over the rows",
    }
}

fn claim_quantity(s: &StatedRatio) -> String {
    let what = match s.claim {
        Claim::CpuFaster => "dpu-time / cpu-time",
        Claim::CpuFasterWithCopies => "(dpu-time + copies) / cpu-time",
        Claim::DpuFaster => "cpu-time / dpu-time",
        Claim::DpuFasterWithCopies => "cpu-time / (dpu-time + copies)",
    };
    let sizes: Vec<String> = s.sizes.iter().map(|n| format!("2^{}", n.trailing_zeros())).collect();
    format!("{}: largest {what} over n = {}", s.op.name(), sizes.join(", "))
}

/// Why a stated ratio misses, where it does (docs/PIM.md, "MHY+", has the evidence).
fn miss_cause(s: &StatedRatio) -> String {
    match s.claim {
        Claim::CpuFaster | Claim::CpuFasterWithCopies => "the CPU side: ours is a single-thread loop here scaled by \
             the stated rule, not the paper's 16-thread run (its thread start-up and synchronisation dominate the \
             small lengths and are not in the rule); see docs/PIM.md, MHY+"
            .to_string(),
        Claim::DpuFaster | Claim::DpuFasterWithCopies => "the DPU side per operation: the model counts \
             pimhe's kernel (Barrett products) while the paper's code is not published; and the CPU scaled \
             by the stated rule; see docs/PIM.md, MHY+"
            .to_string(),
    }
}

const SCALING_MISS: &str = "the model's launch overhead is one constant and its transfer time falls with the \
    ranks touched, so more DPUs never cost more in dpu-time; the paper's growth past 512 DPUs (take-away 8) is a \
    per-DPU launch cost the model does not have; see docs/PIM.md, MHY+";

const FIG7_MISS: &str = "Fig. 7's lengths and its OpenFHE tower primes are not in the text (ours: \
    n = 2^10..2^20, one 30-bit prime, 2048 DPUs at most n / 4); OpenFHE's stage code and its HAL copies \
    (twiddles too, perhaps) are not published while ours copies the butterflies' words only; the CPU stage is \
    a plain loop here scaled by clock; see docs/PIM.md, MHY+";

impl Render for MhyReport {
    fn render(&self) -> String {
        let mut text = format!(
            "MHY+ section IV-A: raw polynomial operations in Z_q[x]/(x^n + 1), q = 65537, {} tasklets, {} kernels\n\
             DPU side {}; CPU side {}\n  {}",
            PAPER_TASKLETS,
            match self.variant {
                Variant::Barrett => "barrett",
                Variant::Best => "best",
            },
            self.model,
            self.cpu
                .as_ref()
                .map_or("not timed".to_string(), |c| format!("measured here on {}, one thread, one run", c.name)),
            self.scaling_rule,
        );
        text += &table("Fig. 3 (a, c, e): by n", &self.by_n);
        text += &table("Fig. 3 (b, d, f): by DPU count", &self.by_dpus);
        text += &ntt::table(&self.ntt_stages);
        text += &hal::table(&self.hal);
        text += &hal_layout::table(&self.hal_layout);
        text += &peers::text(&self.dramatic_peers);
        text
    }
}

fn table(title: &str, rows: &[Fig3Row]) -> String {
    let opt = |x: Option<f64>| x.map_or("-".to_string(), format_seconds);
    let mut text = format!(
        "\n\n{title}\n  {:<26} {:>8} {:>5} {:>11} {:>11} {:>11} {:>11} {:>11} {:>9} {:>12} {:>12}  counts",
        "operation",
        "n",
        "DPUs",
        "cpu-here",
        "cpu-time",
        "dpu-time",
        "host-dpu",
        "dpu-host",
        "dpu/cpu",
        "alpha",
        "alpha-copied"
    );
    for r in rows {
        let ratio = r.cpu_s.map_or("-".to_string(), |c| format!("{:.3}", r.dpu_s / c));
        let here = match r.cpu_here {
            super::cpu::CpuTime::Extrapolated { seconds, .. } => format!("~{}", format_seconds(seconds)),
            ref t => opt(t.seconds()),
        };
        let counts = match (&r.counts, r.executed_equal) {
            (_, Some(true)) => "emulated, executed whole = CPU".to_string(),
            (_, Some(false)) => "emulated, executed whole != CPU (WRONG)".to_string(),
            (super::counts::CountsBasis::Emulated, None) => "emulated".to_string(),
            (super::counts::CountsBasis::Extrapolated { from }, None) => {
                format!("extrapolated from n = {} and {}", from[0], from[1])
            }
        };
        text += &format!(
            "\n  {:<26} {:>8} {:>5} {:>11} {:>11} {:>11} {:>11} {:>11} {:>9} {:>12.4} {:>12.4}  {counts}",
            r.op.name(),
            r.n,
            r.dpus,
            here,
            opt(r.cpu_s),
            format_seconds(r.dpu_s),
            format_seconds(r.host_dpu_s),
            format_seconds(r.dpu_host_s),
            ratio,
            r.alpha,
            r.alpha_copied
        );
    }
    text += "\n  cpu-time: cpu-here scaled (rule above); ~: extrapolated by n^2 from the largest convolution timed";
    text
}
