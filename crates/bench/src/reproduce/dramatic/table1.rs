//! DRAMatic's Table 1 (section 3.5): the batch that fills every DPU's 16 tasklets in a
//! coarse-grained operation (NTT: a tasklet transforms whole sub-polynomials), beside the rule
//! the section states and what pimhe's own placement needs.
//!
//! The rule (3.5): sub-polynomials required = DPUs x 16 tasklets; ciphertexts (CTs) =
//! floor(sub-polynomials / 2 / moduli); the memory column is sub-polynomials x N x 4 bytes in
//! binary units (40960 x 1024 x 4 B = 160 MiB, printed "160 MB"), which every cell matches;
//! the CTs themselves hold CTs x 2 x moduli x N x 4 bytes, a little less where the floor
//! rounds. For fine-grained operations (BGV multiplication: a sub-polynomial's chunks are
//! dealt to all tasklets) "the requirements are 16 times lower".
//!
//! pimhe's parallel placement ([`Plan`]) gives each prime floor(DPUs / moduli) consecutive
//! DPUs and leaves the rest idle, and [`split`] deals a batch's sub-polynomials evenly over a
//! group; an NTT deals a DPU's sub-polynomials to its tasklets round robin (dpu/kernels/main.c).
//! So its batch fills every used DPU once each prime's group holds group size x 16
//! sub-polynomials: 853 x 16 per prime at 2560 DPUs and 3 moduli, 6824 CTs rather than 6826.

use serde::Serialize;

use pimhe_pim::model::{ModelVersion, V1B_MAX_TASKLETS};
use pimhe_pim::runtime::placement::{split, Mode, Plan};

use crate::error::{BenchError, Result};
use crate::format::Render;
use crate::reproduce::{Basis, Comparison};

/// Table 1's DPU counts, its columns.
pub const TABLE1_DPUS: [usize; 5] = [2560, 2048, 1536, 1024, 512];

/// Table 1's "sub-polys. required" row.
pub const TABLE1_SUBPOLYS: [usize; 5] = [40960, 32768, 24576, 16384, 8192];

/// One row of Table 1 as published: degree, moduli, and per column of [`TABLE1_DPUS`] the CTs
/// and the memory as printed (value, `MB` or `GB`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PublishedRow {
    /// Polynomial degree N.
    pub degree: usize,
    /// RNS moduli.
    pub moduli: usize,
    /// (CTs, memory, unit) per column.
    pub cells: [(usize, f64, &'static str); 5],
}

/// DRAMatic Table 1 (shared/seeds/000_*, section 3.5), cell by cell.
pub const TABLE1: [PublishedRow; 6] = [
    PublishedRow {
        degree: 1024,
        moduli: 1,
        cells: [
            (20480, 160.0, "MB"),
            (16384, 128.0, "MB"),
            (12288, 96.0, "MB"),
            (8192, 64.0, "MB"),
            (4096, 32.0, "MB"),
        ],
    },
    PublishedRow {
        degree: 2048,
        moduli: 2,
        cells: [
            (10240, 320.0, "MB"),
            (8192, 256.0, "MB"),
            (6144, 192.0, "MB"),
            (4096, 128.0, "MB"),
            (2048, 64.0, "MB"),
        ],
    },
    PublishedRow {
        degree: 4096,
        moduli: 3,
        cells: [
            (6826, 640.0, "MB"),
            (5461, 512.0, "MB"),
            (4096, 384.0, "MB"),
            (2730, 256.0, "MB"),
            (1365, 128.0, "MB"),
        ],
    },
    PublishedRow {
        degree: 8192,
        moduli: 6,
        cells: [(3413, 1.25, "GB"), (2730, 1.00, "GB"), (2048, 768.0, "MB"), (1365, 512.0, "MB"), (682, 256.0, "MB")],
    },
    PublishedRow {
        degree: 16384,
        moduli: 13,
        cells: [(1575, 2.50, "GB"), (1260, 2.00, "GB"), (945, 1.50, "GB"), (630, 1.00, "GB"), (315, 512.0, "MB")],
    },
    PublishedRow {
        degree: 32768,
        moduli: 28,
        cells: [(731, 5.00, "GB"), (585, 4.00, "GB"), (438, 3.00, "GB"), (292, 2.00, "GB"), (146, 1.00, "GB")],
    },
];

/// Bytes of one residue word.
const WORD_BYTES: u64 = 4;

const MIB: f64 = (1u64 << 20) as f64;

/// MiB of a printed memory figure: the paper's MB and GB are binary (see the module).
fn mib(value: f64, unit: &str) -> f64 {
    if unit == "GB" {
        value * 1024.0
    } else {
        value
    }
}

/// Half a unit of the last printed digit of `value` (`1.25` -> 0.005, `640` -> 0.5), relative
/// to it: the tolerance that says "equal as printed".
fn printed_precision(value: f64, unit: &str) -> f64 {
    let half_unit = if unit == "GB" { 0.005 } else { 0.5 };
    half_unit / value
}

/// What fills one configuration: sub-polynomials per prime, CTs and the memory they hold.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Fill {
    /// Sub-polynomials of each prime (the rule: of all primes together).
    pub subpolys: usize,
    /// Ciphertexts of the batch.
    pub cts: usize,
    /// MiB the batch's CTs hold (CTs x 2 x moduli x N x 4 B).
    pub cts_mib: f64,
    /// DPUs that hold work.
    pub used_dpus: usize,
}

/// Section 3.5's rule for `dpus` DPUs of `tasklets` threads, `moduli` moduli, degree `n`:
/// `subpolys` is the whole batch's, and [`rule_memory_mib`] its memory column.
///
/// ```
/// use pimhe_bench::reproduce::dramatic::{rule, rule_memory_mib};
/// // Table 1: 2560 DPUs, N = 4096, 3 moduli: "6826 CTs 640 MB".
/// let fill = rule(2560, 16, 3, 4096);
/// assert_eq!((fill.subpolys, fill.cts, rule_memory_mib(fill.subpolys, 4096)), (40960, 6826, 640.0));
/// ```
pub fn rule(dpus: usize, tasklets: usize, moduli: usize, n: usize) -> Fill {
    let subpolys = dpus * tasklets;
    let cts = subpolys / 2 / moduli;
    Fill { subpolys, cts, cts_mib: cts_mib(cts, moduli, n), used_dpus: dpus }
}

/// Table 1's memory column by the rule: every required sub-polynomial, N words of 4 bytes.
pub fn rule_memory_mib(subpolys: usize, n: usize) -> f64 {
    (subpolys as u64 * n as u64 * WORD_BYTES) as f64 / MIB
}

fn cts_mib(cts: usize, moduli: usize, n: usize) -> f64 {
    (cts as u64 * 2 * moduli as u64 * n as u64 * WORD_BYTES) as f64 / MIB
}

/// What pimhe's parallel placement needs so that every DPU it uses gets `per_dpu`
/// sub-polynomials of each prime it serves (`tasklets` for an NTT, one for an element-wise
/// command): the largest prime group's size times `per_dpu` per prime, from [`Plan`], with
/// [`split`] confirming that the least-loaded DPU then gets `per_dpu`.
///
/// ```
/// use pimhe_bench::reproduce::dramatic::pimhe_fill;
/// // 2560 DPUs for 3 primes: 853 each, one idle; 853 x 16 sub-polynomials per prime.
/// let fill = pimhe_fill(2560, 16, 3, 4096).unwrap();
/// assert_eq!((fill.subpolys, fill.cts, fill.used_dpus), (13648, 6824, 2559));
/// ```
pub fn pimhe_fill(dpus: usize, per_dpu: usize, moduli: usize, n: usize) -> Result<Fill> {
    let plan = Plan::new(Mode::Parallel, dpus, moduli).map_err(BenchError::usage)?;
    let subpolys = (0..moduli).map(|slot| plan.group(slot).len()).max().unwrap_or(0) * per_dpu;
    let least = (0..moduli).flat_map(|slot| split(subpolys, plan.group(slot))).map(|s| s.len).min();
    if least != Some(per_dpu) {
        return Err(BenchError::Failed(format!(
            "internal error: {subpolys} sub-polynomials per prime leave a DPU {least:?}, not {per_dpu}"
        )));
    }
    let cts = subpolys.div_ceil(2);
    Ok(Fill { subpolys, cts, cts_mib: cts_mib(cts, moduli, n), used_dpus: plan.used_dpus() })
}

/// One cell of Table 1: the published figures, the rule's, pimhe's, and the fine-grained ones.
#[derive(Debug, Clone, Serialize)]
pub struct Cell {
    /// DPUs.
    pub dpus: usize,
    /// Published CTs.
    pub published_cts: usize,
    /// Published memory, MiB.
    pub published_mib: f64,
    /// As printed (`640 MB`).
    pub published_memory: String,
    /// The rule's CTs and the memory its CTs hold.
    pub rule: Fill,
    /// The rule's memory column (every required sub-polynomial), MiB.
    pub rule_mib: f64,
    /// pimhe's parallel placement, an NTT (16 sub-polynomials per DPU and prime).
    pub pimhe: Fill,
    /// The rule's fine-grained figures (16 times lower).
    pub fine_rule: Fill,
    /// pimhe's fine-grained (one sub-polynomial per DPU and prime).
    pub fine_pimhe: Fill,
    /// Half a unit of the printed memory's last digit, relative: "equal as printed".
    #[serde(skip)]
    memory_tolerance: f64,
}

/// One row (degree and moduli) of Table 1.
#[derive(Debug, Clone, Serialize)]
pub struct Table1Row {
    /// Degree N.
    pub degree: usize,
    /// Moduli.
    pub moduli: usize,
    /// Per DPU count of [`TABLE1_DPUS`].
    pub cells: Vec<Cell>,
}

/// Table 1 beside the rule and pimhe's placement.
#[derive(Debug, Clone, Serialize)]
pub struct Table1Report {
    /// Tasklets per DPU: the rule's (DRAMatic's 16 threads) and pimhe's model's.
    pub tasklets: usize,
    /// The rows.
    pub rows: Vec<Table1Row>,
}

/// The label of the table's figures.
const MODEL: &str = "section 3.5's rule and pimhe's parallel placement, computed (modeled)";

impl Table1Report {
    /// The report, with pimhe's tasklets from the default timing model.
    ///
    /// ```
    /// use pimhe_bench::reproduce::dramatic::Table1Report;
    /// let table = Table1Report::new().unwrap();
    /// let rows = table.comparison();
    /// let cell = rows.iter().find(|r| r.id == "t1-4096-2560/cts-pimhe").unwrap();
    /// assert_eq!((cell.published, cell.ours, cell.within()), (Some(6826.0), Some(6824.0), Some(false)));
    /// ```
    pub fn new() -> Result<Self> {
        let tasklets = ModelVersion::default().model().tasklets as usize;
        let rule_tasklets = V1B_MAX_TASKLETS as usize;
        let mut rows = Vec::new();
        for published in &TABLE1 {
            let (n, moduli) = (published.degree, published.moduli);
            let mut cells = Vec::new();
            for (&dpus, &(cts, memory, unit)) in TABLE1_DPUS.iter().zip(&published.cells) {
                let rule = rule(dpus, rule_tasklets, moduli, n);
                cells.push(Cell {
                    dpus,
                    published_cts: cts,
                    published_mib: mib(memory, unit),
                    published_memory: format!("{memory} {unit}"),
                    rule,
                    rule_mib: rule_memory_mib(rule.subpolys, n),
                    pimhe: pimhe_fill(dpus, tasklets, moduli, n)?,
                    fine_rule: self::rule(dpus, 1, moduli, n),
                    fine_pimhe: pimhe_fill(dpus, 1, moduli, n)?,
                    memory_tolerance: printed_precision(memory, unit),
                });
            }
            rows.push(Table1Row { degree: n, moduli, cells });
        }
        Ok(Self { tasklets, rows })
    }

    /// Every cell of Table 1 beside ours: the sub-polynomials required, and per cell the CTs
    /// by the rule (exactly), pimhe's CTs (exactly, or why not) and the memory by the rule (as
    /// printed).
    pub fn comparison(&self) -> Vec<Comparison> {
        let basis = Basis::Modeled { model: MODEL.to_string() };
        let source = "DRAMatic Table 1 (3.5)";
        let mut rows = Vec::new();
        for (&dpus, &required) in TABLE1_DPUS.iter().zip(&TABLE1_SUBPOLYS) {
            let ours = self.rows[0].cells.iter().find(|c| c.dpus == dpus).map(|c| c.rule.subpolys as f64);
            let quantity = "sub-polynomials required (DPUs x 16 tasklets)";
            let id = format!("t1-subpolys-{dpus}");
            rows.push(
                Comparison::new(id, quantity, "sub-polys", source, Some(required as f64), ours, basis.clone())
                    .judged(0.0, None),
            );
        }
        for row in &self.rows {
            for c in &row.cells {
                let id = |what: &str| format!("t1-{}-{}/{what}", row.degree, c.dpus);
                let published_cts = Some(c.published_cts as f64);
                let idle = c.dpus - c.pimhe.used_dpus;
                let why = format!(
                    "pimhe's parallel placement gives each of the {} primes floor({} / {}) DPUs ({idle} idle) and fills \
                     them with {} sub-polynomials per prime, where the rule divides all DPUs' {} sub-polynomials \
                     by 2 x {} and rounds down",
                    row.moduli, c.dpus, row.moduli, c.pimhe.subpolys, c.rule.subpolys, row.moduli
                );
                rows.push(
                    Comparison::new(
                        id("cts-rule"),
                        "CTs by the rule floor(DPUs x 16 / 2 / moduli)",
                        "CTs",
                        source,
                        published_cts,
                        Some(c.rule.cts as f64),
                        basis.clone(),
                    )
                    .judged(0.0, None),
                );
                rows.push(
                    Comparison::new(
                        id("cts-pimhe"),
                        "CTs pimhe's parallel placement needs to fill 16 tasklets on every DPU it uses",
                        "CTs",
                        source,
                        published_cts,
                        Some(c.pimhe.cts as f64),
                        basis.clone(),
                    )
                    .judged(0.0, Some(why)),
                );
                rows.push(
                    Comparison::new(
                        id("memory"),
                        format!("batch memory by the rule (sub-polys x N x 4 B), printed {}", c.published_memory),
                        "MiB",
                        source,
                        Some(c.published_mib),
                        Some(c.rule_mib),
                        basis.clone(),
                    )
                    .judged(c.memory_tolerance, None),
                );
            }
        }
        rows
    }
}

/// A MiB figure as the paper prints it: MB below 1 GiB (a tenth where it has one), GB with
/// two decimals from 1 GiB.
fn memory(mib: f64) -> String {
    if mib >= 1024.0 {
        format!("{:.2} GB", mib / 1024.0)
    } else if mib.fract() == 0.0 {
        format!("{mib:.0} MB")
    } else {
        format!("{mib:.1} MB")
    }
}

impl Render for Table1Report {
    /// Per degree: the published cells, the rule's, pimhe's and the fine-grained rows.
    fn render(&self) -> String {
        let mut lines = vec![
            format!(
                "Table 1 (DRAMatic 3.5): ciphertexts (CTs) and memory that fill every DPU's {} tasklets in an NTT \
                 (pimhe: parallel placement; fine: element-wise, one sub-polynomial per DPU, 16x lower)",
                self.tasklets
            ),
            format!("  {:<24} {}", "DPUs", TABLE1_DPUS.iter().map(|d| format!("{d:>17}")).collect::<Vec<_>>().join("")),
            format!(
                "  {:<24} {}",
                "sub-polys published/rule",
                self.rows[0]
                    .cells
                    .iter()
                    .zip(&TABLE1_SUBPOLYS)
                    .map(|(c, p)| format!("{:>17}", format!("{p}/{}", c.rule.subpolys)))
                    .collect::<Vec<_>>()
                    .join("")
            ),
        ];
        for row in &self.rows {
            let line = |label: &str, cell: &dyn Fn(&Cell) -> String| {
                format!(
                    "  {label:<24} {}",
                    row.cells.iter().map(|c| format!("{:>17}", cell(c))).collect::<Vec<_>>().join("")
                )
            };
            let head = format!("N={} K={} published", row.degree, row.moduli);
            lines.push(line(&head, &|c| format!("{} {}", c.published_cts, memory(c.published_mib))));
            lines.push(line("  rule", &|c| format!("{} {}", c.rule.cts, memory(c.rule_mib))));
            lines.push(line("  rule: the CTs hold", &|c| memory(c.rule.cts_mib)));
            lines.push(line("  pimhe", &|c| format!("{} {}", c.pimhe.cts, memory(c.pimhe.cts_mib))));
            lines.push(line("  fine: rule / pimhe", &|c| format!("{} / {}", c.fine_rule.cts, c.fine_pimhe.cts)));
        }
        let largest = &self.rows[self.rows.len() - 1].cells[0];
        lines.push(format!(
            "  host memory with a second batch buffered (3.5: \"at least twice the size of the batches\"): 2 x the \
             memory above, up to {} (N = {}, {} DPUs)",
            memory(2.0 * largest.rule_mib),
            self.rows[self.rows.len() - 1].degree,
            largest.dpus
        ));
        lines.join("\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rule_gives_every_published_cell() {
        for row in &TABLE1 {
            for ((&dpus, &required), &(cts, memory, unit)) in TABLE1_DPUS.iter().zip(&TABLE1_SUBPOLYS).zip(&row.cells) {
                let fill = rule(dpus, 16, row.moduli, row.degree);
                assert_eq!((fill.subpolys, fill.cts), (required, cts), "{} {dpus}", row.degree);
                assert_eq!(rule_memory_mib(required, row.degree), mib(memory, unit));
            }
        }
        // The CTs themselves hold less where the floor rounds: 438 CTs of 28 moduli at 32768 are
        // 2.99 GiB, printed 3.00 GB.
        assert_eq!(memory(rule(1536, 16, 28, 32768).cts_mib), "2.99 GB");
        assert_eq!(memory(rule(2560, 16, 3, 4096).cts_mib), "639.9 MB");
    }

    #[test]
    fn pimhe_fill_is_the_least_batch_the_placement_spreads_to_every_tasklet() {
        // Brute force: the smallest count of sub-polynomials per prime that the runtime's own
        // split gives every DPU of every group at least `per_dpu` of, each polynomial on one DPU
        // (a single polynomial is replicated for broadcast, not spread).
        let least = |dpus: usize, moduli: usize, per_dpu: usize| {
            let plan = Plan::new(Mode::Parallel, dpus, moduli).unwrap();
            (1..)
                .find(|&count| {
                    (0..moduli).all(|slot| {
                        let shares = split(count, plan.group(slot));
                        let spread = shares.iter().map(|s| s.len).sum::<usize>() == count;
                        spread && shares.len() == plan.group(slot).len() && shares.iter().all(|s| s.len >= per_dpu)
                    })
                })
                .unwrap()
        };
        for dpus in 1..=24 {
            for moduli in 1..=dpus.min(5) {
                for per_dpu in [1, 2, 4] {
                    let fill = pimhe_fill(dpus, per_dpu, moduli, 1024).unwrap();
                    assert_eq!(fill.subpolys, least(dpus, moduli, per_dpu), "{dpus} DPUs {moduli} moduli {per_dpu}");
                    assert_eq!(fill.used_dpus, dpus / moduli * moduli);
                }
            }
        }
        // Table 1's first cell of N = 4096: 853 DPUs per prime, 6824 CTs, not 6826.
        let fill = pimhe_fill(2560, 16, 3, 4096).unwrap();
        assert_eq!((fill.subpolys, fill.cts, fill.used_dpus), (853 * 16, 6824, 2559));
        assert!(pimhe_fill(2, 16, 3, 4096).unwrap_err().to_string().contains("at least one DPU per prime"));
    }
}
