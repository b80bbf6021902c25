//! Anaheim's reproduction (`pimhe bench reproduce anaheim`): the `anaheim-nb` model's numbers
//! for the experiments of Anaheim (shared/seeds/003_*), beside what the paper publishes.
//!
//! - **Fig. 9, the PIM instruction microbenchmark**: every instruction of Table II on each
//!   system of Table III for B = 4 .. 64 data-buffer entries, as speedup and energy efficiency
//!   over the same operation as a GPU kernel. The paper states the speedups of PAccum and CAccum
//!   at the default B (section VII-C) and the range over all instructions at B = 16-32; each of
//!   ours is printed beside them with the ratio ours / published.
//! - **Workloads**: the operations of pimhe's CKKS benchmark (multiply + relinearize +
//!   rescale, rotations plain and hoisted, a linear transform, a sigmoid; `bench scheme
//!   --scheme ckks`) recorded once on the nearbank backend at the paper's N = 2^16 and D = 4,
//!   every result checked against the plaintext, then priced on each system beside "w/o PIM".
//! - **Boot** ([`boot`], with `--boot`: half a minute and 12 GB): one full-slot bootstrapping of
//!   the 128-bit N = 2^16 preset with sparse-secret encapsulation, recorded and checked, priced
//!   on each system beside Fig. 8's stated bands and Table V's time.
//! - **HELR** ([`helr`], with `--helr`: 5 minutes and 17 GB): one steady-state period of the
//!   encrypted HELR trainer (a bootstrapping and two iterations on 1024-sample batches) at the
//!   128-bit N = 2^16 preset, recorded and checked against the plaintext trainer, priced per
//!   iteration on each system beside Fig. 8's bands and Table V's HELR time.
//!   Fig. 8's other workloads (sorting, RNN, ResNet) are whole applications pimhe does not have
//!   yet; their published speedups are printed for reference, not compared.
//!
//! The published values are constants below, each with the place in the paper it is from.

pub mod boot;
pub mod helr;

use pimhe_nearbank::isa::Opcode;
use pimhe_nearbank::model::{microbenchmark_ops, DataLayout, MicroRow, Model, System};
use pimhe_schemes::ckks::CkksParameters;
use pimhe_workloads::progress::Progress;
use serde::{Deserialize, Serialize};

use super::{Basis, Comparison, Reproduction};
use crate::error::{BenchError, Result};
use crate::format::Render;
use crate::measure::scheme::ckks;
use crate::measure::scheme::SchemeConfig;
use crate::target::nearbank::NearbankOutcome;
use crate::target::Target;
use boot::{BootReport, BOOT_DEGREE};
use helr::HelrRowReport;
use pimhe_workloads::helr::encrypted::SECURE_DEGREE;

/// The data-buffer sizes Fig. 9 sweeps.
pub const BUFFER_SWEEP: [usize; 5] = [4, 8, 16, 32, 64];

/// The microbenchmark's ring degree, Table IV's N = 2^16.
pub const MICRO_DEGREE: usize = 1 << 16;
/// Limbs of the microbenchmark's operands: the paper does not state them; 45 lies within Table
/// IV's L + alpha <= 68 and is a multiple of both die-group counts (5 on the A100, 3 on the
/// RTX 4090), so no die group idles in a last round.
pub const MICRO_LIMBS: usize = 45;
/// Terms of PAccum in the microbenchmark: D = 4, KeyMult's (Alg. 1 is PAccum(4)).
pub const PACCUM_TERMS: usize = 4;
/// Terms of CAccum in the microbenchmark: the paper does not state them; K = 8, its running
/// example's linear transform (Fig. 5).
pub const CACCUM_TERMS: usize = 8;

/// Every instruction of Table II, the accumulations at [`PACCUM_TERMS`] and [`CACCUM_TERMS`].
pub fn micro_opcodes() -> Vec<Opcode> {
    Opcode::all(PACCUM_TERMS)
        .into_iter()
        .map(|op| if let Opcode::CAccum(_) = op { Opcode::CAccum(CACCUM_TERMS) } else { op })
        .collect()
}

/// The paper's decomposition number (Table IV).
pub const PAPER_DNUM: usize = 4;

/// Section VII-C: "Especially high speedups are achieved for PAccum (7.26x 3.98x 3.63x) and
/// CAccum (10.33x 4.31x 6.20x)", for A100 near-bank, A100 custom-HBM, RTX 4090 near-bank at
/// their default B (Table III).
pub const PUBLISHED_SPEEDUPS: [(&str, &str, f64); 6] = [
    ("a100-nearbank", "PAccum", 7.26),
    ("a100-custom-hbm", "PAccum", 3.98),
    ("rtx4090-nearbank", "PAccum", 3.63),
    ("a100-nearbank", "CAccum", 10.33),
    ("a100-custom-hbm", "CAccum", 4.31),
    ("rtx4090-nearbank", "CAccum", 6.20),
];

/// Section VII-C: at B = 16-32, "1.65-10.33x speedups and 2.63-17.39x energy efficiency
/// improvements" over all instructions and systems.
pub const PUBLISHED_SPEEDUP_RANGE: (f64, f64) = (1.65, 10.33);
/// See [`PUBLISHED_SPEEDUP_RANGE`].
pub const PUBLISHED_EFFICIENCY_RANGE: (f64, f64) = (2.63, 17.39);

/// Section VII-D: without the column-partitioning layout, "the times spent on element-wise ops
/// get respectively 2.24x and 2.11x slower on A100 80GB and RTX 4090 in terms of geometric
/// mean" (near-bank PIM; custom-HBM is not stated).
pub const PUBLISHED_WITHOUT_CP: [(&str, f64); 2] = [("a100-nearbank", 2.24), ("rtx4090-nearbank", 2.11)];

/// Section VII-B: Fig. 8's workload speedups per system (range over its six workloads).
pub const PUBLISHED_WORKLOAD_SPEEDUPS: [(&str, f64, f64); 3] =
    [("a100-nearbank", 1.24, 1.74), ("a100-custom-hbm", 1.17, 1.55), ("rtx4090-nearbank", 1.06, 1.49)];

/// Table V: Anaheim's bootstrapping and HELR (per iteration) times, ms.
pub const PUBLISHED_TABLE_V: [(&str, f64, f64); 3] =
    [("a100-nearbank", 29.3, 41.2), ("a100-custom-hbm", 32.7, 43.5), ("rtx4090-nearbank", 32.6, 33.7)];

/// The target of the Fig. 9 rows: our speedup within 20% of each one the paper states.
pub const FIG9_TOLERANCE: f64 = 0.2;

/// What `pimhe bench reproduce anaheim` runs: its flags (`--workload-n`, `--threads`, `--boot`,
/// `--boot-n`, `--helr`, `--helr-n`), by Python's names.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AnaheimConfig {
    /// Ring degree of the workloads (a CKKS preset: 8192 .. 65536), or 0 to skip them
    /// [default: 65536, the paper's].
    pub workload_n: usize,
    /// Worker threads computing the workloads on this host (`None`: all cores).
    pub threads: Option<usize>,
    /// Record and price Anaheim's Boot ([`boot`]): 25-40 s of CPU and about 12 GB of memory at
    /// N = 2^16, so off by default.
    pub boot: bool,
    /// Boot's ring degree with `boot` (`None`: the paper's 65536, the 128-bit preset); 1024 ..
    /// 16384 take an INSECURE preset for a quick look at the same code path.
    pub boot_n: Option<usize>,
    /// Record and price Anaheim's HELR per iteration ([`helr`]): 5 minutes of CPU and 17 GB of
    /// memory at N = 2^16, so off by default.
    pub helr: bool,
    /// HELR's ring degree with `helr` (`None`: the paper's 65536, the 128-bit preset); 1024 ..
    /// 16384 take an INSECURE preset for a quick look at the same code path.
    pub helr_n: Option<usize>,
}

impl Default for AnaheimConfig {
    fn default() -> Self {
        Self { workload_n: MICRO_DEGREE, threads: None, boot: false, boot_n: None, helr: false, helr_n: None }
    }
}

/// A Fig. 9 row: one instruction on one system at one B.
#[derive(Debug, Clone, Serialize)]
pub struct MicroReport {
    /// Row id, e.g. `fig9-a100-nearbank-PAccum(4)-b16`.
    pub id: String,
    /// The system.
    pub system: String,
    /// The instruction.
    pub instruction: String,
    /// Data-buffer entries B.
    pub buffer_entries: usize,
    /// Whether B is the system's default (Table III).
    pub default_b: bool,
    /// Chunk granularity G the schedule used; `None` where B cannot hold the instruction.
    pub chunk_granularity: Option<usize>,
    /// GPU time / PIM time; `None` where unsupported.
    pub speedup: Option<f64>,
    /// GPU energy / PIM energy; `None` where unsupported.
    pub energy_efficiency: Option<f64>,
    /// The paper's speedup where its text states it (default B, PAccum and CAccum).
    pub published_speedup: Option<f64>,
    /// speedup / published_speedup.
    pub ratio: Option<f64>,
    /// The model's label.
    pub model: String,
}

/// A workload row: one CKKS operation priced on one system.
#[derive(Debug, Clone, Serialize)]
pub struct WorkloadReport {
    /// Row id, e.g. `ckks-rotate-a100-nearbank`.
    pub id: String,
    /// The operation of the CKKS benchmark.
    pub workload: String,
    /// Ring degree.
    pub n: usize,
    /// Key-switching digits.
    pub dnum: usize,
    /// Its modeled cost, beside "w/o PIM".
    #[serde(flatten)]
    pub outcome: NearbankOutcome,
}

/// The column-partitioning ablation on one system: how much slower the workloads' PIM
/// instructions run with every polynomial in its own rows ("w/o CP").
#[derive(Debug, Clone, Serialize)]
pub struct WithoutCpReport {
    /// The system.
    pub system: String,
    /// Geometric mean over the workloads of PIM time without / with column partitioning.
    pub slowdown: f64,
    /// The paper's, where stated.
    pub published: Option<f64>,
}

/// The published figures this reproduction cannot compare with a row of its own yet.
#[derive(Debug, Clone, Serialize)]
pub struct PublishedOnly {
    /// Fig. 8 workload speedup range per system.
    pub fig8_speedup_ranges: Vec<(String, f64, f64)>,
    /// Table V bootstrapping and HELR times per system, ms.
    pub table5_boot_helr_ms: Vec<(String, f64, f64)>,
    /// Why Fig. 8's ranges are not compared.
    pub note: String,
    /// Why Table V's HELR times are not compared; `None` where the HELR row compares them
    /// (`--helr`).
    pub helr_note: Option<String>,
    /// Why Table V's bootstrapping times are not compared; `None` where the Boot row compares
    /// them (`--boot`).
    pub boot_note: Option<String>,
}

/// Why Fig. 8's bands over six workloads have no single figure of ours.
const FIG8_NOTE: &str = "Fig. 8's range is over its six workloads; pimhe has Boot and HELR of them (fig8-boot-* \
                         with --boot, fig8-helr-* with --helr); sorting, RNN and ResNet are not in pimhe";
/// Why Table V's HELR time has no figure of ours without `--helr`.
const HELR_OFF_NOTE: &str = "HELR not run: pass --helr (N = 2^16: about 5 minutes of CPU, 17 GB of memory)";
/// Why Table V's Boot time has no figure of ours without `--boot`.
const BOOT_OFF_NOTE: &str = "Boot not run: pass --boot (N = 2^16: 25-40 s of CPU, about 12 GB of memory)";

/// The reproduction's rows.
#[derive(Debug, Clone, Serialize)]
pub struct AnaheimReport {
    /// Fig. 9 rows.
    pub micro: Vec<MicroReport>,
    /// Our speedup and efficiency ranges over every instruction at each system's default B,
    /// beside the published ranges.
    pub micro_ranges: MicroRanges,
    /// Workload rows.
    pub workloads: Vec<WorkloadReport>,
    /// The column-partitioning ablation over the workloads, per system.
    pub without_cp: Vec<WithoutCpReport>,
    /// Anaheim's Boot on every system, with `--boot`.
    pub boot: Option<BootReport>,
    /// Anaheim's HELR per iteration on every system, with `--helr`.
    pub helr: Option<HelrRowReport>,
    /// Published figures without a row of ours.
    pub published_only: PublishedOnly,
}

/// Ranges over the supported instructions at each system's default B.
#[derive(Debug, Clone, Serialize)]
pub struct MicroRanges {
    /// Smallest and largest speedup, ours.
    pub speedup: (f64, f64),
    /// Published.
    pub published_speedup: (f64, f64),
    /// Smallest and largest energy efficiency, ours.
    pub energy_efficiency: (f64, f64),
    /// Published.
    pub published_energy_efficiency: (f64, f64),
}

/// The instruction family a published figure names (`PAccum(4)` -> `PAccum`).
fn family(opcode: Opcode) -> String {
    let name = opcode.name();
    name.split('(').next().unwrap_or(&name).to_string()
}

/// The label of the model of `system` at its default B (`anaheim-nb@1 a100-nearbank B=16 (modeled)`).
fn model_label(system: &System) -> String {
    Model::new(system.clone(), Some(system.default_buffer_entries())).map(|m| m.label()).unwrap_or_default()
}

/// Fig. 9 on every system.
pub fn micro_rows() -> Vec<MicroReport> {
    let mut rows = Vec::new();
    for system in System::all() {
        let label = model_label(&system);
        for row in microbenchmark_ops(&system, &BUFFER_SWEEP, MICRO_DEGREE, MICRO_LIMBS, &micro_opcodes()) {
            rows.push(micro_report(&system, system.default_buffer_entries(), &label, &row));
        }
    }
    rows
}

fn micro_report(system: &System, default_b: usize, label: &str, row: &MicroRow) -> MicroReport {
    let is_default = row.buffer_entries == default_b;
    let published = PUBLISHED_SPEEDUPS
        .iter()
        .find(|(s, f, _)| is_default && *s == system.name && *f == family(row.opcode))
        .map(|&(_, _, v)| v);
    MicroReport {
        id: format!("fig9-{}-{}-b{}", system.name, row.opcode.name(), row.buffer_entries),
        system: system.name.to_string(),
        instruction: row.opcode.name(),
        buffer_entries: row.buffer_entries,
        default_b: is_default,
        chunk_granularity: row.chunk_granularity,
        speedup: row.speedup,
        energy_efficiency: row.energy_efficiency,
        published_speedup: published,
        ratio: published.zip(row.speedup).map(|(p, s)| s / p),
        model: label.to_string(),
    }
}

/// The smallest and largest of the supported rows at the default B.
fn ranges(rows: &[MicroReport]) -> MicroRanges {
    let at_default = || rows.iter().filter(|r| r.default_b);
    let span = |values: Vec<f64>| {
        values.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| (lo.min(v), hi.max(v)))
    };
    MicroRanges {
        speedup: span(at_default().filter_map(|r| r.speedup).collect()),
        published_speedup: PUBLISHED_SPEEDUP_RANGE,
        energy_efficiency: span(at_default().filter_map(|r| r.energy_efficiency).collect()),
        published_energy_efficiency: PUBLISHED_EFFICIENCY_RANGE,
    }
}

/// The CKKS benchmark's operations at `degree` (the preset's depth; at the paper's N = 2^16 its
/// D = 4, elsewhere the preset's digits, as D = 4 would not be 128-bit secure at the smaller
/// presets' depths), one ciphertext, recorded once and priced on every system; and the
/// column-partitioning ablation over them.
pub fn workload_rows(
    degree: usize,
    threads: Option<usize>,
    progress: &dyn Progress,
) -> Result<(Vec<WorkloadReport>, Vec<WithoutCpReport>)> {
    let presets: Vec<usize> = CkksParameters::presets().iter().map(|p| p.degree()).collect();
    if !presets.contains(&degree) {
        return Err(BenchError::usage(format!(
            "--workload-n {degree} is not allowed: choose a CKKS preset's degree ({presets:?}) or 0 to skip the \
             workloads"
        )));
    }
    let args = SchemeConfig {
        batch: 1,
        repeat: 1,
        target: Target::Cpu { threads },
        dnum: (degree == MICRO_DEGREE).then_some(PAPER_DNUM),
        ..SchemeConfig::new("ckks", degree)
    };
    let (dnum, programs) = ckks::programs(&args, progress)?;
    let mut rows = Vec::new();
    let mut without_cp = Vec::new();
    for system in System::all() {
        let model = Model::new(system.clone(), None).map_err(|e| BenchError::Failed(e.to_string()))?;
        let contiguous = model.clone().with_layout(DataLayout::Contiguous);
        let mut log_slowdowns = Vec::new();
        for (op, program) in &programs {
            let outcome = NearbankOutcome::of_program(&model, program);
            let pim_s = outcome.cost.pim_s;
            if pim_s > 0.0 {
                log_slowdowns.push((contiguous.price(program).pim_s / pim_s).ln());
            }
            rows.push(WorkloadReport {
                id: format!("ckks-{op}-{}", system.name),
                workload: op.to_string(),
                n: degree,
                dnum,
                outcome,
            });
        }
        let slowdown = (log_slowdowns.iter().sum::<f64>() / log_slowdowns.len().max(1) as f64).exp();
        let published = PUBLISHED_WITHOUT_CP.iter().find(|(s, _)| *s == system.name).map(|&(_, v)| v);
        without_cp.push(WithoutCpReport { system: system.name.to_string(), slowdown, published });
    }
    Ok((rows, without_cp))
}

/// The ring degree of the row `name` that is off unless `on` (`--boot`, `--helr`: `flag`),
/// `n` its `--*-n` (`paper`'s degree where not given): `None` where off, refused where `n` is
/// given without the row.
fn row_degree(on: bool, n: Option<usize>, paper: usize, flag: &str, name: &str) -> Result<Option<usize>> {
    match (on, n) {
        (false, Some(n)) => {
            Err(BenchError::usage(format!("--{flag}-n {n} applies only with --{flag} ({name} is off by default)")))
        }
        (on, n) => Ok(on.then_some(n.unwrap_or(paper))),
    }
}

/// Runs the reproduction.
pub fn reproduce(config: &AnaheimConfig, progress: &dyn Progress) -> Result<AnaheimReport> {
    let boot_n = row_degree(config.boot, config.boot_n, BOOT_DEGREE, "boot", "Boot")?;
    let helr_n = row_degree(config.helr, config.helr_n, SECURE_DEGREE, "helr", "HELR")?;
    let micro = micro_rows();
    let micro_ranges = ranges(&micro);
    let (workloads, without_cp) = match config.workload_n {
        0 => (Vec::new(), Vec::new()),
        degree => workload_rows(degree, config.threads, progress)?,
    };
    let boot = match boot_n {
        Some(n) => {
            progress.start(0, "Boot: recording one bootstrapping");
            let row = boot::boot_row(n, "--boot-n", config.threads);
            progress.finish();
            Some(row?)
        }
        None => None,
    };
    let helr = match helr_n {
        Some(n) => {
            progress.start(0, "HELR: recording a bootstrapping and two iterations");
            let row = helr::helr_row(n, "--helr-n", config.threads);
            progress.finish();
            Some(row?)
        }
        None => None,
    };
    Ok(AnaheimReport {
        micro,
        micro_ranges,
        workloads,
        without_cp,
        boot,
        helr,
        published_only: PublishedOnly {
            fig8_speedup_ranges: PUBLISHED_WORKLOAD_SPEEDUPS
                .iter()
                .map(|&(s, lo, hi)| (s.to_string(), lo, hi))
                .collect(),
            table5_boot_helr_ms: PUBLISHED_TABLE_V.iter().map(|&(s, b, h)| (s.to_string(), b, h)).collect(),
            note: FIG8_NOTE.to_string(),
            helr_note: helr_n.is_none().then(|| HELR_OFF_NOTE.to_string()),
            boot_note: boot_n.is_none().then(|| BOOT_OFF_NOTE.to_string()),
        },
    })
}

/// Anaheim's reproduction ([`reproduce`]) behind the common trait.
pub struct Anaheim;

impl Reproduction for Anaheim {
    type Config = AnaheimConfig;
    type Report = AnaheimReport;
    const NAME: &'static str = "anaheim";
    const CITATION: &'static str = "J. Kim, S. Yun, H. Ji, W. Choi, S. Kim, J. H. Ahn: Anaheim: Architecture and \
                                    Algorithms for Processing Fully Homomorphic Encryption in Memory (shared/seeds/003)";

    fn run(config: &AnaheimConfig, progress: &dyn Progress) -> Result<AnaheimReport> {
        reproduce(config, progress)
    }

    /// The speedups section VII-C states at the default B (judged against [`FIG9_TOLERANCE`]) and
    /// the ranges it states, section VII-D's column-partitioning ablation, Fig. 8's and Table V's
    /// figures for reference, with `--boot` the Boot row's ([`boot::comparison`]: its speedup
    /// judged against Fig. 8's band) and with `--helr` the HELR row's ([`helr::comparison`]).
    fn comparison(report: &AnaheimReport) -> Vec<Comparison> {
        let fig9 = "Anaheim section VII-C (Fig. 9)";
        let mut rows: Vec<Comparison> = report
            .micro
            .iter()
            .filter(|r| r.published_speedup.is_some())
            .map(|r| {
                let quantity =
                    format!("{} speedup over the GPU kernel, {} B={}", r.instruction, r.system, r.buffer_entries);
                let basis = Basis::Modeled { model: r.model.clone() };
                Comparison::new(&r.id, quantity, "x", fig9, r.published_speedup, r.speedup, basis)
                    .judged(FIG9_TOLERANCE, None)
            })
            .collect();
        let mut labels: Vec<&str> = report.micro.iter().filter(|r| r.default_b).map(|r| r.model.as_str()).collect();
        labels.dedup();
        let every_system = Basis::Modeled { model: labels.join(" / ") };
        let r = &report.micro_ranges;
        for (id, quantity, published, ours) in [
            ("speedup-min", "smallest speedup", r.published_speedup.0, r.speedup.0),
            ("speedup-max", "largest speedup", r.published_speedup.1, r.speedup.1),
            ("efficiency-min", "smallest energy efficiency", r.published_energy_efficiency.0, r.energy_efficiency.0),
            ("efficiency-max", "largest energy efficiency", r.published_energy_efficiency.1, r.energy_efficiency.1),
        ] {
            let quantity = format!("{quantity} over the GPU kernel, every instruction and system");
            let row = Comparison::new(
                format!("fig9-range-{id}"),
                quantity,
                "x",
                fig9,
                Some(published),
                Some(ours),
                every_system.clone(),
            );
            rows.push(row.unjudged(
                "no tolerance set: the paper's range is over B = 16-32, ours over each system's default B (Table III)",
            ));
        }
        let system_basis = |name: &str| {
            let model = System::all().iter().find(|s| s.name == name).map(model_label).unwrap_or_default();
            Basis::Modeled { model }
        };
        for (system, published) in PUBLISHED_WITHOUT_CP {
            let ours = report.without_cp.iter().find(|w| w.system == system).map(|w| w.slowdown);
            let why = match ours {
                Some(_) => {
                    "no tolerance set: ours is the geometric mean over pimhe's CKKS benchmark operations, the \
                     paper's over the element-wise operations of its workloads"
                }
                None => "the CKKS workloads were not run (--workload-n 0)",
            };
            let quantity = "PIM time without / with column partitioning (geometric mean)";
            let source = "Anaheim section VII-D";
            let row = Comparison::new(
                format!("without-cp-{system}"),
                quantity,
                "x",
                source,
                Some(published),
                ours,
                system_basis(system),
            );
            rows.push(row.unjudged(why));
        }
        let p = &report.published_only;
        for ((system, lo, hi), (_, boot, helr)) in p.fig8_speedup_ranges.iter().zip(&p.table5_boot_helr_ms) {
            let fig8 = "Anaheim section VII-B (Fig. 8)";
            let boot = p.boot_note.as_ref().map(|note| (boot, note));
            let helr = p.helr_note.as_ref().map(|note| (helr, note));
            for (id, quantity, unit, source, published, note) in [
                ("fig8-min", "smallest workload speedup over the GPU alone", "x", fig8, Some((lo, &p.note))),
                ("fig8-max", "largest workload speedup over the GPU alone", "x", fig8, Some((hi, &p.note))),
                ("table5-bootstrapping", "bootstrapping time", "ms", "Anaheim Table V", boot),
                ("table5-helr", "HELR time per iteration", "ms", "Anaheim Table V", helr),
            ]
            .into_iter()
            .filter_map(|(id, quantity, unit, source, figure)| figure.map(|(f, n)| (id, quantity, unit, source, f, n)))
            {
                let id = format!("{id}-{system}");
                let row = Comparison::new(id, quantity, unit, source, Some(*published), None, system_basis(system));
                rows.push(row.unjudged(note));
            }
        }
        if let Some(boot) = &report.boot {
            rows.extend(boot::comparison(boot));
        }
        if let Some(row) = &report.helr {
            rows.extend(helr::comparison(row));
        }
        rows
    }
}

fn times(value: Option<f64>) -> String {
    value.map_or("-".to_string(), |v| format!("{v:.2}x"))
}

impl Render for AnaheimReport {
    fn render(&self) -> String {
        let mut text = String::from(
            "Anaheim (seed 003), Fig. 9: each PIM instruction's speedup over the GPU kernel (energy efficiency in \
             parentheses), N = 2^16, 45 limbs; '-': B cannot hold its operands",
        );
        for system in System::all() {
            let rows: Vec<&MicroReport> = self.micro.iter().filter(|r| r.system == system.name).collect();
            let Some(first) = rows.first() else { continue };
            text += &format!("\n\n  {} (Table III B = {})\n  {:<12}", system.name, system.default_buffer_entries(), "");
            for b in BUFFER_SWEEP {
                text += &format!(" {:>15}", format!("B={b}"));
            }
            let mut instruction = String::new();
            for row in &rows {
                if row.instruction != instruction {
                    instruction = row.instruction.clone();
                    text += &format!("\n  {instruction:<12}");
                }
                let cell = match (row.speedup, row.energy_efficiency) {
                    (Some(s), Some(e)) => format!("{s:.2}x ({e:.1}x)"),
                    _ => "-".to_string(),
                };
                text += &format!(" {cell:>15}");
            }
            text += &format!("\n  {}", first.model);
        }
        text += "\n\n  published (section VII-C) at the default B, ours / published:";
        for row in self.micro.iter().filter(|r| r.published_speedup.is_some()) {
            text += &format!(
                "\n    {:<18} {:<11} ours {:>7} published {:>7}  ratio {}",
                row.system,
                row.instruction,
                times(row.speedup),
                times(row.published_speedup),
                row.ratio.map_or("-".to_string(), |r| format!("{r:.2}")),
            );
        }
        let r = &self.micro_ranges;
        text += &format!(
            "\n    every instruction at the default B: speedup {:.2}-{:.2}x (published {:.2}-{:.2}x), energy \
             efficiency {:.2}-{:.2}x (published {:.2}-{:.2}x)",
            r.speedup.0,
            r.speedup.1,
            r.published_speedup.0,
            r.published_speedup.1,
            r.energy_efficiency.0,
            r.energy_efficiency.1,
            r.published_energy_efficiency.0,
            r.published_energy_efficiency.1
        );
        if let Some(first) = self.workloads.first() {
            text += &format!(
                "\n\nWorkloads: pimhe's CKKS benchmark operations at N = {} (dnum = {}, one ciphertext, every \
                 result checked), recorded once, planned, priced per system (modeled):\n  {}",
                first.n,
                first.dnum,
                NearbankOutcome::table_header(&format!("{:<24} {:<18}", "operation", "system"))
            );
            for row in &self.workloads {
                let name = format!("{:<24} {:<18}", row.workload, row.outcome.system);
                text += &format!("\n  {}", row.outcome.table_row(&name));
            }
        }
        for w in &self.without_cp {
            text += &format!(
                "\n  {:<18} w/o column partitioning: PIM time {:.2}x slower (geometric mean over the operations){}",
                w.system,
                w.slowdown,
                w.published.map_or(String::new(), |p| format!("; published {p:.2}x (section VII-D)"))
            );
        }
        if let Some(boot) = &self.boot {
            text += "\n\n";
            text += &boot.render();
        }
        if let Some(row) = &self.helr {
            text += "\n\n";
            text += &row.render();
        }
        let p = &self.published_only;
        text += &format!("\n\nPublished, for reference ({}", p.note);
        for note in [&p.boot_note, &p.helr_note].into_iter().flatten() {
            text += &format!("; {note}");
        }
        text += "):";
        for ((system, lo, hi), (_, boot, helr)) in p.fig8_speedup_ranges.iter().zip(&p.table5_boot_helr_ms) {
            text += &format!(
                "\n  {system:<18} Fig. 8 workload speedups {lo:.2}-{hi:.2}x; Table V bootstrapping {boot} ms, HELR \
                 {helr} ms per iteration"
            );
        }
        text
    }
}
