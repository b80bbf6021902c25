//! The reports of the rows and of the target, and the table they print as.

use pimhe_pim::layout::Variant;
use pimhe_pim::model::reference::ReferenceRow;
use pimhe_pim::model::ModelVersion;
use serde::Serialize;

use super::experiments::{RowSpec, SECTION5_TABLE, SECTION72_POLYNOMIALS, SECTION72_TABLE, TARGET_COMPUTE_S};
use super::multiply::MultiplyReport;
use super::statements::{statements, Quantity, SINGLE_FIGURE_TOLERANCE};
use super::table1::Table1Report;
use crate::format::Render;
use crate::reproduce::{Basis, Comparison};
use crate::target::upmem::{self, PimOutcome};

/// One of the text's statements ([`super::SECTION5_STATEMENTS`], [`super::SECTION72_STATEMENTS`])
/// with our value beside it.
#[derive(Debug, Clone, Serialize)]
pub struct Claim {
    /// What is stated (the JSON has its name, `quantity`).
    #[serde(skip)]
    pub kind: Quantity,
    /// `speedup over <row id>`, `transfer/compute`, `retrieve/compute` or `overhead/compute`.
    pub quantity: String,
    /// Ours.
    pub ours: f64,
    /// What the text states.
    pub published: f64,
    /// ours / published.
    pub ratio: f64,
    /// Where the text states it.
    pub quote: &'static str,
}

/// One row of the output.
#[derive(Debug, Clone, Serialize)]
pub struct RowReport {
    id: String,
    table: u32,
    op: &'static str,
    n: usize,
    mod_bits: u32,
    primes: usize,
    prime_bits: u32,
    ciphertexts: usize,
    dpus: usize,
    ranks: u32,
    mode: &'static str,
    kernel: &'static str,
    backend: &'static str,
    emulation: String,
    /// Emulator wall time on this host.
    wall_s: f64,
    compute_s: f64,
    transfer_s: f64,
    retrieve_s: f64,
    total_s: f64,
    energy_j: f64,
    /// Modeled whole-system power: energy / total time.
    power_w: f64,
    model: String,
    launches: u64,
    busiest_share: usize,
    /// Where the published values come from, or why there are none.
    reference: String,
    published_compute_s: Option<f64>,
    published_transfer_s: Option<f64>,
    published_retrieve_s: Option<f64>,
    published_power_w: Option<f64>,
    /// ours / published (absent where nothing, or 0 after rounding, was published).
    compute_ratio: Option<f64>,
    transfer_ratio: Option<f64>,
    retrieve_ratio: Option<f64>,
    power_ratio: Option<f64>,
    /// The row's hardware what-ifs (absent when none).
    #[serde(skip_serializing_if = "Option::is_none")]
    what_if: Option<String>,
    /// Section 5's rows: what the text states of the row, with ours beside it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    claims: Vec<Claim>,
}

/// The target of the rows DRAMatic's CSV has: the NTT/iNTT compute time of DRAMatic's own
/// kernel within 20% of the published one (the model's fidelity).
pub const COMPUTE_TOLERANCE: f64 = 0.2;

/// The target of what section 5's text states: ours within 10% of each figure.
pub const STATEMENT_TOLERANCE: f64 = 0.1;

fn ratio(ours: f64, published: Option<f64>) -> Option<f64> {
    published.filter(|&p| p > 0.0).map(|p| ours / p)
}

impl RowReport {
    /// The report of `spec` run with `variant`, beside its published values in `reference` and
    /// what section 5 states of it (`claims`).
    pub(super) fn new(
        spec: &RowSpec,
        variant: Variant,
        outcome: &PimOutcome,
        reference: &std::result::Result<Vec<ReferenceRow>, String>,
        claims: Vec<Claim>,
    ) -> Self {
        let published = reference.as_ref().ok().and_then(|rows| spec.published(rows));
        let stated = statements().any(|s| s.row == spec.id);
        let reference_note = match (reference, published) {
            _ if spec.is_section5() && spec.what_if.zero_copy => {
                "no published value: DRAMatic 5.2 proposes zero-copy and measures nothing".to_string()
            }
            _ if spec.is_section5() && stated => {
                "DRAMatic 5.1/5.2 text (Table 6, the raw results, is not in shared/reference)".to_string()
            }
            _ if spec.is_section5() => {
                "no published value: the text states none for this row (Table 6 is not in shared/reference)".to_string()
            }
            _ if spec.is_section72() => format!(
                "DRAMatic 7.2 text (per polynomial: total time over the {SECTION72_POLYNOMIALS} polynomials; BMP+'s \
                 times as DRAMatic quotes them)"
            ),
            _ if spec.what_if.is_active() => "what-if: not comparable to the published measurements".to_string(),
            (Err(_), _) => "reference missing".to_string(),
            (Ok(_), Some(_)) => format!("DRAMatic Table {} (dramatic_calibration.csv)", spec.table),
            (Ok(_), None) => "not in shared/reference".to_string(),
        };
        let power_w = if outcome.total_s > 0.0 { outcome.energy_j / outcome.total_s } else { 0.0 };
        let published_compute_s = published.map(|r| r.compute_s);
        let published_transfer_s = published.map(|r| r.transfer_s);
        let published_retrieve_s = published.map(|r| r.retrieve_s);
        let published_power_w = published.and_then(|r| r.power_w);
        Self {
            id: spec.id.clone(),
            table: spec.table,
            op: spec.op.name(),
            n: spec.n,
            mod_bits: spec.mod_bits,
            primes: spec.primes,
            prime_bits: spec.prime_bits,
            ciphertexts: spec.ciphertexts,
            dpus: spec.dpus,
            ranks: spec.dpus.div_ceil(64) as u32,
            mode: spec.mode.name(),
            kernel: upmem::kernel_name(variant),
            backend: "upmem-emu",
            emulation: outcome.emulation.clone(),
            wall_s: outcome.wall_s,
            compute_s: outcome.compute_s,
            transfer_s: outcome.transfer_s,
            retrieve_s: outcome.retrieve_s,
            total_s: outcome.total_s,
            energy_j: outcome.energy_j,
            power_w,
            model: outcome.model.clone(),
            launches: outcome.launches,
            busiest_share: outcome.busiest_share,
            reference: reference_note,
            published_compute_s,
            published_transfer_s,
            published_retrieve_s,
            published_power_w,
            compute_ratio: ratio(outcome.compute_s, published_compute_s),
            transfer_ratio: ratio(outcome.transfer_s, published_transfer_s),
            retrieve_ratio: ratio(outcome.retrieve_s, published_retrieve_s),
            power_ratio: ratio(power_w, published_power_w),
            what_if: spec.what_if.is_active().then(|| spec.what_if.describe()),
            claims,
        }
    }

    /// The row's published figures beside ours: compute, transfer and retrieve time and power
    /// where the CSV has the row (compute judged against [`COMPUTE_TOLERANCE`] with DRAMatic's
    /// own kernel), what section 5's text states of it (judged against
    /// [`STATEMENT_TOLERANCE`]); for a row with neither, its compute time and why nothing is
    /// published.
    pub fn comparison(&self) -> Vec<Comparison> {
        let basis = Basis::Modeled { model: self.model.clone() };
        let mut rows = Vec::new();
        for (name, quantity, unit, published, ours) in [
            ("compute", "compute time", "s", self.published_compute_s, self.compute_s),
            ("transfer", "transfer time", "s", self.published_transfer_s, self.transfer_s),
            ("retrieve", "retrieve time", "s", self.published_retrieve_s, self.retrieve_s),
            ("power", "whole-system power", "W", self.published_power_w, self.power_w),
        ] {
            let Some(value) = published else { continue };
            let id = format!("{}/{name}", self.id);
            let row = Comparison::new(id, quantity, unit, &self.reference, published, Some(ours), basis.clone());
            rows.push(match name {
                "compute" if self.kernel == upmem::kernel_name(Variant::Barrett) => row.judged(COMPUTE_TOLERANCE, None),
                "compute" => row.unjudged(
                    "the best kernel is pimhe's arithmetic, not DRAMatic's: a speed-up over the published time, not \
                     a fidelity check",
                ),
                _ if value == 0.0 => {
                    row.unjudged("the published time is 0 (the CSV rounds to the millisecond): no ratio")
                }
                _ => row.unjudged("no tolerance set: the model's fidelity target is the NTT/iNTT compute time"),
            });
        }
        for claim in &self.claims {
            let source = format!("DRAMatic {}", claim.quote);
            let basis = basis.clone();
            let row = Comparison::new(
                format!("{}/{}", self.id, claim.kind.key()),
                claim.quantity.as_str(),
                claim.kind.unit(),
                source,
                Some(claim.published),
                Some(claim.ours),
                basis,
            );
            rows.push(if self.is_section5() {
                row.judged(
                    STATEMENT_TOLERANCE,
                    Some(
                        "the text gives one figure for N = 1024 .. 8192 and ours is at N = 4096, so the gap may be \
                         the N (Table 6, the raw results, is not in shared/reference)"
                            .to_string(),
                    ),
                )
            } else if self.kernel != upmem::kernel_name(Variant::Barrett) {
                row.unjudged("the best kernel is pimhe's arithmetic, not DRAMatic's: a speed-up, not a fidelity check")
            } else {
                row.judged(SINGLE_FIGURE_TOLERANCE, None)
            });
        }
        if rows.is_empty() {
            let source = if self.is_section5() {
                "DRAMatic section 5".to_string()
            } else {
                format!("DRAMatic Table {}", self.table)
            };
            let id = format!("{}/compute", self.id);
            let row = Comparison::new(id, "compute time", "s", source, None, Some(self.compute_s), basis);
            rows.push(row.unjudged(&self.reference));
        }
        rows
    }

    /// Whether this is one of section 5's rows.
    fn is_section5(&self) -> bool {
        self.table == SECTION5_TABLE
    }

    /// Whether this is one of section 7.2's rows.
    fn is_section72(&self) -> bool {
        self.table == SECTION72_TABLE
    }

    /// Whether the emulation covered only part of the busiest share.
    fn partial(&self) -> bool {
        self.emulation.contains("emulated in part")
    }
}

/// The target summary (printed last).
#[derive(Debug, Clone, Serialize)]
pub struct TargetReport {
    id: &'static str,
    op: &'static str,
    n: usize,
    primes: usize,
    ciphertexts: usize,
    dpus: usize,
    mode: &'static str,
    kernel: &'static str,
    /// Modeled compute of the pipeline with the best kernel.
    compute_s: f64,
    target_s: f64,
    met: bool,
    /// The same with DRAMatic's Barrett kernel.
    barrett_compute_s: f64,
    /// barrett / best for the pipeline.
    pipeline_speedup: f64,
    /// The NTT row compared (Table 3, N = 4096).
    ntt_row: String,
    ntt_best_compute_s: f64,
    ntt_barrett_compute_s: f64,
    /// best / barrett NTT compute.
    ntt_best_over_barrett: f64,
    model: String,
}

impl TargetReport {
    /// The target summary from the outcomes of the target pipeline `spec` and the NTT row
    /// `ntt`, each with the best and the barrett kernel.
    pub(super) fn new(
        spec: &RowSpec,
        best: &PimOutcome,
        barrett: &PimOutcome,
        ntt: &RowSpec,
        ntt_best: &PimOutcome,
        ntt_barrett: &PimOutcome,
    ) -> Self {
        Self {
            id: "target",
            op: spec.op.name(),
            n: spec.n,
            primes: spec.primes,
            ciphertexts: spec.ciphertexts,
            dpus: spec.dpus,
            mode: spec.mode.name(),
            kernel: "best",
            compute_s: best.compute_s,
            target_s: TARGET_COMPUTE_S,
            met: best.compute_s <= TARGET_COMPUTE_S,
            barrett_compute_s: barrett.compute_s,
            pipeline_speedup: barrett.compute_s / best.compute_s,
            ntt_row: ntt.id.clone(),
            ntt_best_compute_s: ntt_best.compute_s,
            ntt_barrett_compute_s: ntt_barrett.compute_s,
            ntt_best_over_barrett: ntt_best.compute_s / ntt_barrett.compute_s,
            model: best.model.clone(),
        }
    }
}

/// Everything a reproduction made: the rows and, if selected, the target.
#[derive(Debug, Clone, Serialize)]
pub struct DramaticReport {
    /// The rows' text header ([`DramaticRun::intro`](super::DramaticRun::intro)), not serialised.
    #[serde(skip)]
    pub intro: String,
    /// The rows, in the paper's order.
    pub rows: Vec<RowReport>,
    /// The footer's text ([`DramaticRun::footer`](super::DramaticRun::footer)), not serialised.
    #[serde(skip)]
    pub footer: String,
    /// The target summary, when selected.
    pub target: Option<TargetReport>,
    /// Fig. 3's multiply costs, when selected (`fig3`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fig3: Option<MultiplyReport>,
    /// Table 1 beside its rule and pimhe's placement, when selected (`table1`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub table1: Option<Table1Report>,
    /// Host seconds the emulation took.
    pub elapsed_s: f64,
}

impl Render for DramaticReport {
    /// The table `pimhe bench reproduce` prints.
    fn render(&self) -> String {
        let mut text = self.intro.clone();
        for row in &self.rows {
            text.push('\n');
            text.push_str(&row.render());
        }
        if !self.footer.is_empty() {
            text.push('\n');
            text.push_str(&self.footer);
        }
        if let Some(target) = &self.target {
            text.push('\n');
            text.push_str(&target.render());
        }
        for section in
            [self.fig3.as_ref().map(Render::render), self.table1.as_ref().map(Render::render)].into_iter().flatten()
        {
            text.push_str("\n\n");
            text.push_str(&section);
        }
        text.push_str(&format!("\n(emulation took {:.1} s on this host)", self.elapsed_s));
        text
    }
}

/// A modeled or published time, in seconds.
fn secs(x: f64) -> String {
    if x >= 10.0 {
        format!("{x:.2}")
    } else if x >= 0.01 {
        format!("{x:.3}")
    } else {
        format!("{x:.4}")
    }
}

fn opt(x: Option<f64>, f: impl Fn(f64) -> String) -> String {
    x.map_or("-".to_string(), f)
}

/// The column headings of the rows.
pub(super) fn header() -> String {
    format!(
        "{:<5} {:<8} {:>5} {:>2} {:>6} {:>4} {:<4} | {:>24} | {:>24} | {:>24} | {:>8} | {:>16} | note",
        "table",
        "op",
        "N",
        "K",
        "ctxts",
        "DPUs",
        "mode",
        "compute s: ours pub ratio",
        "transfer s: ours pub rat",
        "retrieve s: ours pub rat",
        "energy J",
        "power W: ours pub",
    )
}

fn triple(ours: f64, published: Option<f64>, ratio: Option<f64>) -> String {
    format!("{:>8} {:>8} {:>6}", secs(ours), opt(published, secs), opt(ratio, |r| format!("{r:.2}")))
}

impl Render for RowReport {
    /// One line of the table.
    fn render(&self) -> String {
        let r = self;
        let mut note = if r.partial() { "partial*".to_string() } else { String::new() };
        if let Some(what_if) = &r.what_if {
            note = format!("{note} what-if {what_if}").trim_start().to_string();
        }
        let table = match r.table {
            SECTION5_TABLE => "s5".to_string(),
            SECTION72_TABLE => "s7.2".to_string(),
            table => table.to_string(),
        };
        let mut line = format!(
            "{:<5} {:<8} {:>5} {:>2} {:>6} {:>4} {:<4} | {} | {} | {} | {:>8.1} | {:>6.0} {:>4} {:>4} | {}",
            table,
            r.op,
            r.n,
            r.primes,
            r.ciphertexts,
            r.dpus,
            &r.mode[..3],
            triple(r.compute_s, r.published_compute_s, r.compute_ratio),
            triple(r.transfer_s, r.published_transfer_s, r.transfer_ratio),
            triple(r.retrieve_s, r.published_retrieve_s, r.retrieve_ratio),
            r.energy_j,
            r.power_w,
            opt(r.published_power_w, |p| format!("{p:.0}")),
            opt(r.power_ratio, |p| format!("{p:.2}")),
            note
        );
        if r.is_section5() || r.is_section72() {
            let stated: Vec<String> = r
                .claims
                .iter()
                .map(|c| {
                    let show = |x: f64| c.kind.show(x);
                    format!("{} {} vs {} stated ({:.2})", c.quantity, show(c.ours), show(c.published), c.ratio)
                })
                .collect();
            line.push_str(&format!(
                "\n        {}: {}",
                r.id,
                if stated.is_empty() { r.reference.clone() } else { stated.join("; ") }
            ));
        }
        line
    }
}

/// The footer of [`DramaticRun::footer`](super::DramaticRun::footer), lines joined.
pub(super) fn footer(reports: &[RowReport], variant: Variant, model: ModelVersion) -> String {
    let mut lines = vec![String::new()];
    lines.push(format!(
        "  modeled figures: (modeled, {}); N/K/ctxts = ring degree / primes / input ciphertexts (bgv-mul and \
         pipeline multiply them in pairs); par/seq = parallel/sequential; ratio = ours / published",
        model.name()
    ));
    let partial: Vec<&RowReport> = reports.iter().filter(|r| r.partial()).collect();
    for r in &partial {
        lines.push(format!("  * {}: {}", r.id, r.emulation));
    }
    let claims: Vec<(&RowReport, &Claim)> =
        reports.iter().filter(|r| r.is_section5()).flat_map(|r| r.claims.iter().map(move |c| (r, c))).collect();
    if reports.iter().any(|r| r.is_section5()) {
        lines.push(
            "  s5 = DRAMatic section 5's what-ifs on 509 DPUs (mul-cycles=4/6: 5.1's 2/4-cycle dummy multiplies \
             plus a call and return; 1/1: its inlined single-cycle ones; zero-copy: 5.2's proposal); the text states its figures for N = 1024 .. 8192 without \
             an N, ours are at N = 4096"
                .to_string(),
        );
    }
    if variant == Variant::Best && reports.iter().any(|r| r.what_if.as_deref().is_some_and(|w| w.contains("mul-"))) {
        lines.push(format!("  what-if caveat: {}", crate::target::what_if::TABLE_CAVEAT));
    }
    if let Some(&(first_row, first)) = claims.first() {
        let within = claims.iter().filter(|(_, c)| (c.ratio - 1.0).abs() <= STATEMENT_TOLERANCE).count();
        let (worst_row, worst) = claims.iter().copied().fold((first_row, first), |w, c| {
            if (c.1.ratio - 1.0).abs() > (w.1.ratio - 1.0).abs() {
                c
            } else {
                w
            }
        });
        lines.push(format!(
            "  section 5: {within} of {} figures the text states within 10% of ours; worst ratio {:.3} ({} {})",
            claims.len(),
            worst.ratio,
            worst_row.id,
            worst.quantity
        ));
    }
    let s72: Vec<&RowReport> = reports.iter().filter(|r| r.is_section72()).collect();
    if !s72.is_empty() {
        lines.push(format!(
            "  s7.2 = DRAMatic 7.2's NTT at BMP+'s test conditions (N = 2^16, 1241 bits as {} primes of {} bits, {} \
             polynomials, sequential: one prime's pass after another, each pass's copies priced); ms per polynomial = \
             total / polynomials",
            s72[0].primes, s72[0].prime_bits, SECTION72_POLYNOMIALS
        ));
        let per_row: Vec<String> = s72
            .iter()
            .flat_map(|r| r.claims.iter().filter(|c| c.kind == Quantity::MsPerPolynomial).map(move |c| (r, c)))
            .map(|(r, c)| format!("{} DPUs {:.1} ms vs {} ms stated ({:.2})", r.dpus, c.ours, c.published, c.ratio))
            .collect();
        lines.push(format!("  section 7.2: {}", per_row.join("; ")));
    }
    let compared: Vec<(&RowReport, f64)> = reports
        .iter()
        .filter(|r| matches!(r.op, "ntt" | "intt"))
        .filter_map(|r| r.compute_ratio.map(|x| (r, x)))
        .collect();
    if compared.is_empty() {
        return lines.join("\n");
    }
    let within = compared.iter().filter(|(_, x)| (x - 1.0).abs() <= COMPUTE_TOLERANCE).count();
    let (worst, worst_ratio) = compared.iter().copied().fold((compared[0].0, compared[0].1), |w, c| {
        if (c.1 - 1.0).abs() > (w.1 - 1.0).abs() {
            c
        } else {
            w
        }
    });
    let geomean = (compared.iter().map(|(_, x)| x.ln()).sum::<f64>() / compared.len() as f64).exp();
    lines.push(match variant {
        Variant::Barrett => format!(
            "  model fidelity (barrett = DRAMatic's kernel): NTT/iNTT compute of {within} of {} calibration rows within \
             20% of the published value; worst ratio {worst_ratio:.3} ({}); geometric mean ratio {geomean:.3}",
            compared.len(),
            worst.id
        ),
        Variant::Best => format!(
            "  speed-up of the best kernel over DRAMatic's published NTT/iNTT compute: {:.2}x (geometric mean over {} \
             rows; range {:.2}x .. {:.2}x)",
            1.0 / geomean,
            compared.len(),
            compared.iter().map(|(_, x)| 1.0 / x).fold(f64::INFINITY, f64::min),
            compared.iter().map(|(_, x)| 1.0 / x).fold(0.0, f64::max),
        ),
    });
    lines.join("\n")
}

impl Render for TargetReport {
    /// A blank line and two lines of text.
    fn render(&self) -> String {
        let t = self;
        let first = format!(
        "target: pipeline N={} {} primes {} ciphertexts on {} DPUs ({}), compute only, best kernel: {} s (modeled, {}) vs \
         the {:.1} s target: {}",
        t.n,
        t.primes,
        t.ciphertexts,
        t.dpus,
        t.mode,
        secs(t.compute_s),
        t.model.trim_end_matches(" (modeled)"),
        t.target_s,
        if t.met { "met" } else { "NOT met" }
    );
        let second = format!(
        "        barrett kernel on the same pipeline: {} s (best is {:.2}x faster); NTT ({}) best / barrett = {:.3} \
         ({} s / {} s, {:.2}x faster)",
        secs(t.barrett_compute_s),
        t.pipeline_speedup,
        t.ntt_row,
        t.ntt_best_over_barrett,
        secs(t.ntt_best_compute_s),
        secs(t.ntt_barrett_compute_s),
        1.0 / t.ntt_best_over_barrett
    );
        format!("\n{first}\n{second}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratios_need_a_published_value_above_zero() {
        assert_eq!(ratio(0.084, Some(0.042)), Some(2.0));
        assert_eq!(ratio(0.001, Some(0.0)), None);
        assert_eq!(ratio(0.001, None), None);
    }
}
