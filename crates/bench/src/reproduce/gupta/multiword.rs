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
//! - **The paper's multiplication** (4.2: "We do not incorporate NTT"; section 3: "polynomial
//!   multiplication and polynomial addition of the coefficients"): per ciphertext four textbook
//!   negacyclic products of coefficient-form polynomials (`MW_CONV`: n products a coefficient,
//!   summed unreduced and reduced by Barrett once per output at the paper's widths) and one
//!   `MW_ADD`, whole products dealt evenly to the DPUs. A product's cycles are linear in its
//!   outputs once every tasklet runs whole a-block chunks, so one product is priced from two
//!   emulated output ranges ([`textbook_product`]) rather than its n^2 terms (tested against the
//!   whole at N = 1024). This is the row compared with SEAL's multiplication (SEAL's own figures
//!   are what the paper measured its PIM against) and with the same arithmetic on this host's
//!   CPU ([`super::paper_cpu`]).
//!
//! The busiest DPU's range is emulated whole ([`range_counts`]: its counts do not depend on the
//! values), which takes well under a second at the paper's largest sizes (about 10^6
//! coefficients of an addition per DPU). The instructions per coefficient compare the two
//! representations' arithmetic directly: a multi-word coefficient's against the sum of its RNS
//! limbs' (each limb on its own DPU group).

use std::collections::hash_map::{Entry, HashMap};

use pimhe_pim::counts::DpuCounts;
use pimhe_pim::emulator::EmulatorConfig;
use pimhe_pim::layout::Variant;
use pimhe_pim::model::UpmemModel;
use pimhe_pim::multiword::{conv_range_counts, range_counts, ranges, MultiwordModulus, MwOp};
use serde::Serialize;

use super::cpu::WidthTimes;
use super::dpu::{CtOp, SharePricer};
use super::published::{StatedRange, Versus, FIG1_RANGES};
use super::{Fig1Row, Width, WIDTHS};
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
    /// Mul: the paper's multiplication by textbook products (see the module documentation).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub textbook: Option<TextbookProduct>,
}

/// Fig. 1's multiplication as the paper ran it: four textbook negacyclic products and one
/// addition per ciphertext on multi-word coefficients (Karatsuba words).
#[derive(Debug, Clone, Serialize)]
pub struct TextbookProduct {
    /// Whole polynomial products on the busiest DPU.
    pub products_per_dpu: usize,
    /// Modeled cycles of one product on one DPU ([`textbook_product`]).
    pub product_cycles: f64,
    /// Counted instructions per term (one coefficient product, its reduction and its addition).
    pub term_instructions: f64,
    /// Modeled kernel seconds.
    pub kernel_s: f64,
    /// SEAL's seconds for the same ciphertexts (the RNS row's, from `--seal-json`).
    pub seal_s: Option<f64>,
    /// `seal_s / kernel_s`: PIM's speed-up over SEAL, as the paper states it.
    pub speedup_over_seal: Option<f64>,
    /// The same multiplication in the paper's CPU arithmetic measured here
    /// ([`super::paper_cpu`]), per ciphertext times the count; `None` with `--skip-cpu`.
    pub cpu_s: Option<f64>,
    /// `cpu_s / kernel_s`: PIM's speed-up over the paper's CPU code, one algorithm on both sides.
    pub speedup_over_cpu: Option<f64>,
}

/// The modulus of a width: the largest odd value of its bits (Barrett takes any q, and the
/// kernels' counts do not depend on it, only on its words).
pub fn modulus(coefficient_bits: u32) -> Result<MultiwordModulus> {
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

/// Modeled cycles of one whole n-coefficient textbook product (`MW_CONV`, `variant`) on one DPU
/// with `tasklets` tasklets, and its counted instructions per term. Emulated at `first` and
/// `2 first` outputs, `first` = the outputs at which every tasklet runs one chunk of the kernel's
/// a-block at up to 16 tasklets (64 words / w), and extended linearly to n: past `first` every
/// added output is one more equal share of whole chunks, so the cycles grow by the same amount per
/// output, up to the DMAs of b's windows, which split in two where a window wraps (a few per chunk,
/// depending on its place: within 0.01% at N = 2048, tested).
pub fn textbook_product(
    model: &UpmemModel,
    q: &MultiwordModulus,
    n: usize,
    tasklets: u32,
    variant: Variant,
) -> Result<(f64, f64)> {
    let config = EmulatorConfig { tasklets, ..EmulatorConfig::default() };
    let counted = |len: usize| -> Result<(f64, u64)> {
        let counts =
            conv_range_counts(q, n, len, config.clone(), variant).map_err(|e| BenchError::Failed(e.to_string()))?;
        Ok((model.dpu_cycles(&counts) as f64, counts.total().instructions))
    };
    let first = (64 / q.words() * tasklets as usize).min(n);
    let (cycles, instructions) = if 2 * first > n {
        counted(n)?
    } else {
        let ((low, _), (high, high_instructions)) = (counted(first)?, counted(2 * first)?);
        let per_output = (high - low) / first as f64;
        (high + per_output * (n - 2 * first) as f64, high_instructions)
    };
    let terms = if 2 * first > n { n * n } else { 2 * first * n };
    Ok((cycles, instructions as f64 / terms as f64))
}

/// Modeled kernel seconds of the paper's arithmetic in one launch on `dpus` DPUs: `products`
/// whole textbook products of `product_cycles` each, dealt evenly, and `MW_ADD` over
/// `add_coefficients` coefficients spread by ranges (Karatsuba words); and the products on the
/// busiest DPU.
pub fn textbook_kernel_s(
    model: &UpmemModel,
    q: &MultiwordModulus,
    products: usize,
    product_cycles: f64,
    add_coefficients: usize,
    dpus: usize,
    tasklets: u32,
) -> Result<(f64, usize)> {
    let products_per_dpu = products.div_ceil(dpus);
    let add_len = ranges(add_coefficients, dpus).map_err(|e| BenchError::Failed(e.to_string()))?[0].1;
    let (add_cycles, _) = priced(model, MwOp::Add, q, add_len, tasklets, Variant::Best)?;
    let cycles = products_per_dpu as f64 * product_cycles + add_cycles as f64;
    Ok((cycles / model.dpu_hz + model.launch_overhead_s, products_per_dpu))
}

/// Modeled kernel seconds of `op` at `width` on `ciphertexts` ciphertexts as the paper's own
/// kernels run it on `dpus` DPUs with `tasklets` tasklets (Karatsuba words): the add as `MW_ADD`
/// over the operands' coefficients spread by ranges; the multiplication as four textbook
/// products (`MW_CONV`) and one `MW_ADD` a ciphertext. What the tasklet sweep prices for the
/// paper's saturation point.
pub fn paper_kernel_s(
    model: &UpmemModel,
    op: CtOp,
    width: &Width,
    ciphertexts: usize,
    dpus: usize,
    tasklets: u32,
) -> Result<f64> {
    let q = modulus(width.coefficient_bits)?;
    match op {
        CtOp::Add => {
            let len = coefficients_per_dpu(op, width, ciphertexts, dpus)?;
            let (cycles, _) = priced(model, MwOp::Add, &q, len, tasklets, Variant::Best)?;
            Ok(cycles as f64 / model.dpu_hz + model.launch_overhead_s)
        }
        CtOp::Mul => {
            let (product_cycles, _) = textbook_product(model, &q, width.n, tasklets, Variant::Best)?;
            let add_coefficients = ciphertexts * width.n;
            Ok(textbook_kernel_s(model, &q, 4 * ciphertexts, product_cycles, add_coefficients, dpus, tasklets)?.0)
        }
    }
}

/// Coefficients of each operand on the busiest DPU when `op`'s operands (C N coefficients a
/// polynomial) are spread over `dpus` DPUs by ranges.
fn coefficients_per_dpu(op: CtOp, width: &Width, ciphertexts: usize, dpus: usize) -> Result<usize> {
    let coefficients = op.operand_polys(ciphertexts) * width.n;
    Ok(ranges(coefficients, dpus).map_err(|e| BenchError::Failed(e.to_string()))?[0].1)
}

/// The multi-word rows beside the RNS `rows` (same operations, widths and counts) on `dpus`
/// DPUs with `tasklets` tasklets; `paper_cpu` the paper's CPU arithmetic measured here by width
/// (empty with `--skip-cpu`).
pub fn rows(
    pricer: &mut SharePricer,
    rns: &[Fig1Row],
    paper_cpu: &[WidthTimes],
    dpus: usize,
    tasklets: u32,
) -> Result<Vec<MultiwordRow>> {
    let model = pricer.model().clone();
    let mut products = HashMap::new();
    let mut out = Vec::with_capacity(rns.len());
    for r in rns {
        let width =
            WIDTHS.iter().find(|w| w.coefficient_bits == r.coefficient_bits).copied().ok_or_else(|| {
                BenchError::Failed(format!("internal error: no width of {} bits", r.coefficient_bits))
            })?;
        let q = modulus(width.coefficient_bits)?;
        let len = coefficients_per_dpu(r.op, &width, r.ciphertexts, dpus)?;
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
        let textbook = match r.op {
            CtOp::Add => None,
            CtOp::Mul => {
                if let Entry::Vacant(slot) = products.entry(width.coefficient_bits) {
                    slot.insert(textbook_product(&model, &q, width.n, tasklets, Variant::Best)?);
                }
                let (product_cycles, term_instructions) = products[&width.coefficient_bits];
                // a0 b0, a0 b1, a1 b0, a1 b1, and a0 b1 + a1 b0 over C N coefficients.
                let (kernel_s, products_per_dpu) = textbook_kernel_s(
                    &model,
                    &q,
                    4 * r.ciphertexts,
                    product_cycles,
                    r.ciphertexts * width.n,
                    dpus,
                    tasklets,
                )?;
                let cpu_s = paper_cpu
                    .iter()
                    .find(|t| t.coefficient_bits == width.coefficient_bits)
                    .map(|t| t.mul_s_per_ciphertext * r.ciphertexts as f64);
                Some(TextbookProduct {
                    products_per_dpu,
                    product_cycles,
                    term_instructions,
                    kernel_s,
                    seal_s: r.seal_s,
                    speedup_over_seal: r.seal_s.map(|seal| seal / kernel_s),
                    cpu_s,
                    speedup_over_cpu: cpu_s.map(|cpu| cpu / kernel_s),
                })
            }
        };
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
            textbook,
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
    text += "\n\nThe paper's multiplication: 4 textbook negacyclic products (MW_CONV, Karatsuba words, terms summed \
             unreduced) \
             and 1 MW_ADD per ciphertext, whole products dealt to the DPUs (modeled kernel ms), beside SEAL and the \
             paper's CPU arithmetic measured here\n  \
             bits  ciphertexts  products/DPU  instr/term    kernel ms      SEAL ms  PIM over SEAL       CPU ms  PIM over CPU";
    for r in rows {
        if let Some(t) = &r.textbook {
            text += &format!(
                "\n  {:>4}  {:>11}  {:>12}  {:>10.0}  {:>11}  {:>11}  {:>13}  {:>11}  {:>12}",
                r.coefficient_bits,
                r.ciphertexts,
                t.products_per_dpu,
                t.term_instructions,
                ms(t.kernel_s),
                t.seal_s.map_or("-".to_string(), ms),
                t.speedup_over_seal.map_or("-".to_string(), |x| format!("{x:.3}x")),
                t.cpu_s.map_or("-".to_string(), ms),
                t.speedup_over_cpu.map_or("-".to_string(), |x| format!("{x:.2}x")),
            );
        }
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

/// PIM's speed-up with the paper's multiplication (textbook products) over SEAL and over the
/// paper's CPU arithmetic, both measured here, beside Fig. 1's multiplication ranges over each.
pub fn textbook_comparisons(
    rows: &[MultiwordRow],
    model: &str,
    cpu_host: &str,
    range_row: RangeRow,
) -> Vec<Comparison> {
    let kernel = format!(
        "{model} kernel time of the paper's multiplication (textbook negacyclic products on multi-word \
         coefficients, MW_CONV)"
    );
    let mut out = Vec::new();
    let mul_ranges = FIG1_RANGES.iter().filter(|r| r.id.starts_with("fig1-mul") && r.versus != Versus::Gpu);
    for range in mul_ranges {
        let (over, basis) = match range.versus {
            Versus::Seal => (
                "SEAL measured here",
                format!(
                    "{kernel} over SEAL (TenSEAL, one thread) measured on this host by bench/compare/gupta_seal.py, \
                     scaled linearly by the count"
                ),
            ),
            _ => (
                "the paper's CPU arithmetic measured here",
                format!(
                    "{kernel} over the same arithmetic on 32/64/128-bit integers (textbook products summed \
                     unreduced) measured on {cpu_host}, scaled linearly by the count"
                ),
            ),
        };
        let basis = Basis::Modeled { model: basis };
        let matching = rows.iter().filter(|r| range.bits.is_none_or(|b| b == r.coefficient_bits));
        for (r, t) in matching.filter_map(|r| r.textbook.as_ref().map(|t| (r, t))) {
            let id = format!("{}-{}-{}b-{}-textbook", range.id, range.versus.id(), r.coefficient_bits, r.ciphertexts);
            let at = format!(
                "{} bits, {} ciphertexts, textbook products on multi-word coefficients, {over}",
                r.coefficient_bits, r.ciphertexts
            );
            let ours = match range.versus {
                Versus::Seal => t.speedup_over_seal,
                _ => t.speedup_over_cpu,
            };
            let row = range_row(range, id, at, ours, basis.clone());
            out.push(match (ours, range.versus) {
                (Some(s), _) => {
                    row.judged(range.tolerance(), Some(textbook_miss_cause(r, t, range.versus, s > range.high)))
                }
                (None, Versus::Seal) => row.unjudged("the SEAL output has no figure for this width (--seal-json)"),
                (None, _) => row.unjudged("the CPU was not measured in this run (--skip-cpu)"),
            });
        }
    }
    out
}

/// Why the textbook product's speed-up over `versus` falls outside a range.
fn textbook_miss_cause(row: &MultiwordRow, product: &TextbookProduct, versus: Versus, above: bool) -> String {
    let term = format!(
        "A term here costs {:.0} instructions: Karatsuba's word products (each 32x32 word product DRAMatic's \
         35-instruction routine) each added unreduced into its own three-word sum, the products' combination and \
         one Barrett reduction done once an output (reducing every term, as MW_MUL's {:.0} instructions a \
         coefficient do, costs several times more).",
        product.term_instructions, row.karatsuba_instructions
    );
    let side = if above { "above" } else { "below" };
    match versus {
        Versus::Seal => format!(
            "{side} the range: the modeled DPUs are {} than the paper's for the same n^2 terms. {term} The paper does \
             not give its kernel's instructions a term, its tasklet count or its multiply routine beyond \
             'shift-and-add'; those would settle it",
            if above { "faster" } else { "slower" }
        ),
        _ => format!(
            "{side} the range: one algorithm runs on both sides, so the ratio is the machines': the modeled DPUs' \
             terms a second over this host's (plain Rust on the run's threads, native 64- and 128-bit products). \
             {term} Over SEAL (the -seal- rows) the modeled DPUs are within about 2x of the paper's ranges at every \
             width, so the paper's custom CPU code must have taken {} time a term than this code does here; it is \
             not published, and its time a product would settle it",
            if above { "less" } else { "more" }
        ),
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_textbook_products_extended_cycles_equal_the_emulated_whole_product() {
        // 4 words at n = 2048: emulated at 512 and 1024 outputs and extended to 2048.
        let model = super::super::dpu::paper_model(super::super::published::PAPER_DPU_HZ).unwrap();
        let q = modulus(109).unwrap();
        let (n, tasklets) = (2048, 16);
        let (priced, per_term) = textbook_product(&model, &q, n, tasklets, Variant::Best).unwrap();
        let config = EmulatorConfig { tasklets, ..EmulatorConfig::default() };
        let whole = conv_range_counts(&q, n, n, config, Variant::Best).unwrap();
        let emulated = model.dpu_cycles(&whole) as f64;
        // Not exact: a window's DMA splits where it wraps, which depends on the chunk's place.
        assert!((priced / emulated - 1.0).abs() < 1e-4, "priced {priced} vs emulated {emulated}");
        let whole_per_term = whole.total().instructions as f64 / (n * n) as f64;
        assert!((per_term / whole_per_term - 1.0).abs() < 0.01, "{per_term} vs {whole_per_term} a term");
    }
}
