//! The paper's own representation beside pimhe's on the same DPUs (issue 30, item 2): each
//! Fig. 1 row again with Gupta et al.'s multi-word coefficients (27 / 54 / 109 bits in 1 / 2 /
//! 4 32-bit words modulo one q, section 3) through pimhe's `MW_ADD` and `MW_MUL` kernels
//! ([`pimhe_pim::multiword`]), priced by the same model as the RNS rows.
//!
//! - **Add**: `MW_ADD` over the 2C N coefficients of the two operands, spread over all the
//!   DPUs by coefficient ranges (one modulus: no limb groups).
//! - **Mul**: the same homomorphic operation as the RNS rows' `TENSOR`, the coefficient-wise
//!   `(a0 b0, a0 b1 + a1 b0, a1 b1)` of NTT-form ciphertexts, now on multi-word coefficients:
//!   four `MW_MUL` and one `MW_ADD` over the C N coefficients of each operand, as one launch
//!   of five commands (their cycles add; one launch overhead).
//! - Both variants: the `best` kernel multiplies words by Karatsuba (the paper's, section 3),
//!   the `barrett` kernel schoolbook; the RNS rows run `best` (pimhe's default).
//!
//! The busiest DPU's range is emulated whole ([`range_counts`]: its counts do not depend on the
//! values), which takes well under a second at the paper's largest sizes (about 10^6
//! coefficients of an addition per DPU). The instructions per coefficient compare the two
//! representations' arithmetic directly: a multi-word coefficient's against the sum of its RNS
//! limbs' (each limb on its own DPU group).

use pimhe_pim::counts::DpuCounts;
use pimhe_pim::emulator::EmulatorConfig;
use pimhe_pim::layout::Variant;
use pimhe_pim::model::UpmemModel;
use pimhe_pim::multiword::{range_counts, ranges, MultiwordModulus, MwOp};
use serde::Serialize;

use super::dpu::{CtOp, SharePricer};
use super::published::{StatedRange, Versus, FIG1_RANGES};
use super::{Fig1Row, WIDTHS};
use crate::error::{BenchError, Result};
use crate::reproduce::{Basis, Comparison};

/// One Fig. 1 row in both representations on the same modeled DPUs.
#[derive(Debug, Clone, Serialize)]
pub struct MultiwordRow {
    /// `add` or `mul`.
    pub op: CtOp,
    /// The paper's coefficient width.
    pub coefficient_bits: u32,
    /// Ring degree.
    pub n: usize,
    /// 32-bit words per coefficient (the paper's 32 / 64 / 128-bit integers).
    pub words: usize,
    /// Ciphertexts (of each input vector).
    pub ciphertexts: usize,
    /// Coefficients per operand on the busiest DPU (all DPUs share one modulus).
    pub coefficients_per_dpu: usize,
    /// Modeled kernel seconds with Karatsuba products (`best`).
    pub karatsuba_s: f64,
    /// Modeled kernel seconds with schoolbook products (`barrett`).
    pub schoolbook_s: f64,
    /// The RNS row's modeled kernel seconds (`best`, one DPU group per limb).
    pub rns_s: f64,
    /// `karatsuba_s / rns_s`: above 1, RNS wins by that factor.
    pub multiword_over_rns: f64,
    /// Counted instructions per coefficient (per tensor element for `mul`), Karatsuba.
    pub karatsuba_instructions: f64,
    /// The same, schoolbook.
    pub schoolbook_instructions: f64,
    /// The same in RNS: the busiest DPU's per residue times the limbs.
    pub rns_instructions: f64,
    /// The RNS row's measured CPU seconds over `karatsuba_s`: the multi-word PIM's speed-up
    /// over the CPU measured here.
    pub speedup: Option<f64>,
}

/// The modulus of a width: the largest odd value of its bits (Barrett takes any q, and the
/// kernels' counts do not depend on it, only on its words).
fn modulus(coefficient_bits: u32) -> Result<MultiwordModulus> {
    MultiwordModulus::new((1u128 << coefficient_bits) - 1).map_err(|e| BenchError::Failed(e.to_string()))
}

/// Modeled cycles and counted instructions of `op` on `len` coefficients on one DPU.
fn priced(
    model: &UpmemModel,
    op: MwOp,
    q: &MultiwordModulus,
    len: usize,
    tasklets: u32,
    variant: Variant,
) -> Result<(u64, u64)> {
    let config = EmulatorConfig { tasklets, ..EmulatorConfig::default() };
    let counts: DpuCounts = range_counts(op, q, len, config, variant).map_err(|e| BenchError::Failed(e.to_string()))?;
    Ok((model.dpu_cycles(&counts), counts.total().instructions))
}

/// The multi-word rows beside the RNS `rows` (same operations, widths and counts) on `dpus`
/// DPUs with `tasklets` tasklets.
pub fn rows(pricer: &mut SharePricer, rns: &[Fig1Row], dpus: usize, tasklets: u32) -> Result<Vec<MultiwordRow>> {
    let model = pricer.model().clone();
    let mut out = Vec::with_capacity(rns.len());
    for r in rns {
        let width =
            WIDTHS.iter().find(|w| w.coefficient_bits == r.coefficient_bits).copied().ok_or_else(|| {
                BenchError::Failed(format!("internal error: no width of {} bits", r.coefficient_bits))
            })?;
        let q = modulus(width.coefficient_bits)?;
        let coefficients = r.op.operand_polys(r.ciphertexts) * width.n;
        let len = ranges(coefficients, dpus).map_err(|e| BenchError::Failed(e.to_string()))?[0].1;
        let kernel = |variant| -> Result<(f64, f64)> {
            let (cycles, instructions) = match r.op {
                CtOp::Add => priced(&model, MwOp::Add, &q, len, tasklets, variant)?,
                CtOp::Mul => {
                    let (mul_cycles, mul_instructions) = priced(&model, MwOp::Mul, &q, len, tasklets, variant)?;
                    let (add_cycles, add_instructions) = priced(&model, MwOp::Add, &q, len, tasklets, variant)?;
                    (4 * mul_cycles + add_cycles, 4 * mul_instructions + add_instructions)
                }
            };
            Ok((cycles as f64 / model.dpu_hz + model.launch_overhead_s, instructions as f64 / len as f64))
        };
        let (karatsuba_s, karatsuba_instructions) = kernel(Variant::Best)?;
        let (schoolbook_s, schoolbook_instructions) = kernel(Variant::Barrett)?;
        let basis = width.basis()?;
        let residues = (r.share * width.n) as f64;
        let rns_instructions =
            pricer.counts(r.op, &basis, r.share, tasklets)?.total().instructions as f64 / residues * width.limbs as f64;
        out.push(MultiwordRow {
            op: r.op,
            coefficient_bits: width.coefficient_bits,
            n: width.n,
            words: q.words(),
            ciphertexts: r.ciphertexts,
            coefficients_per_dpu: len,
            karatsuba_s,
            schoolbook_s,
            rns_s: r.kernel_s,
            multiword_over_rns: karatsuba_s / r.kernel_s,
            karatsuba_instructions,
            schoolbook_instructions,
            rns_instructions,
            speedup: r.cpu_s.map(|c| c / karatsuba_s),
        });
    }
    Ok(out)
}

/// The rows as text: which representation wins, by how much, and the instructions behind it.
pub fn render(rows: &[MultiwordRow]) -> String {
    let ms = |s: f64| format!("{:.3}", s * 1e3);
    let mut text = String::from(
        "\n\nMulti-word (the paper's non-RNS 32/64/128-bit coefficients, MW_ADD / MW_MUL) vs RNS on the same DPUs \
         (modeled kernel ms; instructions per coefficient)\n  op   bits  words  ciphertexts  coeffs/DPU  Karatsuba ms  \
         schoolbook ms    RNS ms  MW/RNS  instr: Karatsuba  schoolbook     RNS  speedup",
    );
    for r in rows {
        text += &format!(
            "\n  {:<3}  {:>4}  {:>5}  {:>11}  {:>10}  {:>12}  {:>13}  {:>8}  {:>5.2}x  {:>16.1}  {:>10.1}  {:>6.1}  {:>7}",
            r.op.name(),
            r.coefficient_bits,
            r.words,
            r.ciphertexts,
            r.coefficients_per_dpu,
            ms(r.karatsuba_s),
            ms(r.schoolbook_s),
            ms(r.rns_s),
            r.multiword_over_rns,
            r.karatsuba_instructions,
            r.schoolbook_instructions,
            r.rns_instructions,
            r.speedup.map_or("-".to_string(), |x| format!("{x:.1}x")),
        );
    }
    text
}

/// The report's row of a stated range: `(range, id, what it is at, ours, basis)`.
pub type RangeRow = fn(&StatedRange, String, String, Option<f64>, Basis) -> Comparison;

/// PIM's speed-up over the CPU measured here with the multi-word kernels (Karatsuba), beside
/// each of Fig. 1's ranges over the paper's CPU (`model` and `cpu_machine` as the report names
/// them, each row made by `range_row`): the paper's own representation on the DPU side, judged
/// as the RNS rows are.
pub fn comparisons(rows: &[MultiwordRow], model: &str, cpu_machine: &str, range_row: RangeRow) -> Vec<Comparison> {
    let basis = Basis::Modeled {
        model: format!(
            "{model} kernel time of the multi-word kernels (Karatsuba) over {cpu_machine} measured in this run"
        ),
    };
    let mut out = Vec::new();
    for range in FIG1_RANGES.iter().filter(|r| r.versus == Versus::Cpu) {
        let op = if range.id.starts_with("fig1-add") { CtOp::Add } else { CtOp::Mul };
        let matching = rows.iter().filter(|r| r.op == op && range.bits.is_none_or(|b| b == r.coefficient_bits));
        for r in matching {
            let id = format!("{}-cpu-{}b-{}-multiword", range.id, r.coefficient_bits, r.ciphertexts);
            let at = format!(
                "{} bits, {} ciphertexts, multi-word kernels, CPU measured here",
                r.coefficient_bits, r.ciphertexts
            );
            let row = range_row(range, id, at, r.speedup, basis.clone());
            out.push(match r.speedup {
                Some(s) => row.judged(range.tolerance(), Some(miss_cause(r, s > range.high))),
                None => row.unjudged("the CPU was not measured in this run (--skip-cpu)"),
            });
        }
    }
    out
}

/// Why the multi-word speed-up over the CPU measured here falls outside a range.
fn miss_cause(row: &MultiwordRow, above: bool) -> String {
    format!(
        "{} the range: the CPU side is pimhe's cpu backend (RNS limbs, SIMD, this host), not the paper's multi-word \
         CPU code on the i5-8250U; on the DPU side the multi-word kernels take {:.2}x the RNS kernels' time \
         ({:.0} vs {:.0} instructions a coefficient)",
        if above { "above" } else { "below" },
        row.multiword_over_rns,
        row.karatsuba_instructions,
        row.rns_instructions
    )
}
