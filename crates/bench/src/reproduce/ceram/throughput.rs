//! Tables 7 and 8 and section 4.4's two-bank projection from the `ceram` model's own times
//! (seed 004, sections 4.3-4.5), and Tables 9 and 10, which are printed as published only.

use pimhe_ceram::model::CeramModel;
use pimhe_ceram::params::Params;
use pimhe_ceram::program::HomOp;
use pimhe_schemes::bfv::special::SpecialCase;
use serde::{Deserialize, Serialize};

use super::model::{cell, model_params, price, Miss, RatioCell, RatioTable, RatioUnit, Transfer};
use super::published::{
    published_compute_s, PAPER_DEGREE, PAPER_LOG_Q, PUBLISHED_TABLE_10, PUBLISHED_TABLE_7_ACTUAL,
    PUBLISHED_TABLE_7_COMPUTE, PUBLISHED_TABLE_7_SPECIFIED, PUBLISHED_TABLE_8, PUBLISHED_TABLE_9, PUBLISHED_TWO_BANKS,
    TABLE_10_OPS, TABLE_6_OPS,
};
use crate::error::Result;
use crate::format::format_seconds;

/// Table 7: operations per second = 1 s / the model's time with NTT, per case and operation,
/// with the actual transfer, the specified one, and computation only (the paper's row order).
pub fn table_7(model: &CeramModel) -> Result<RatioTable> {
    let rows = [
        (Transfer::Actual, PUBLISHED_TABLE_7_ACTUAL),
        (Transfer::Specified, PUBLISHED_TABLE_7_SPECIFIED),
        (Transfer::None, PUBLISHED_TABLE_7_COMPUTE),
    ];
    let mut cells = Vec::new();
    for (transfer, table) in rows {
        for (case, published) in table {
            let params = model_params(case, true);
            for (op, published) in TABLE_6_OPS.into_iter().zip(published) {
                let seconds = transfer.seconds(&price(model, op, &params)?);
                let id = format!("t7-{}-{}-{}", case.letter(), op.name(), transfer.name());
                cells.push(cell(id, case.letter(), op, transfer, (1.0, seconds), published));
            }
        }
    }
    Ok(RatioTable {
        table: 7,
        unit: RatioUnit::OpsPerSecond,
        title: "operations per second with CE-RAM (with NTT): 1 s / time per operation".into(),
        source: "seed 004, Table 7 (section 4.3)".into(),
        cells,
    })
}

/// Table 8: Reis et al.'s textbook CE-RAM time / this design's time with NTT, homomorphic
/// multiplication, with the specified and the actual transfer. The textbook design is the one of
/// Table 2 ([`Params::textbook`]), so Table 8 = Table 2 x Table 3 for multiplication, as it is
/// in the paper (case A: 1.28 x 292.56 = 374.5 against 374.6).
pub fn table_8(model: &CeramModel) -> Result<RatioTable> {
    let textbook = price(model, HomOp::Multiply, &Params::textbook(PAPER_DEGREE, PAPER_LOG_Q))?;
    let mut cells = Vec::new();
    for (case, published) in PUBLISHED_TABLE_8 {
        let with = price(model, HomOp::Multiply, &model_params(case, true))?;
        for (transfer, published) in [Transfer::Specified, Transfer::Actual].into_iter().zip(published) {
            let id = format!("t8-{}-multiply-{}", case.letter(), transfer.name());
            let seconds = (transfer.seconds(&textbook), transfer.seconds(&with));
            cells.push(cell(id, case.letter(), HomOp::Multiply, transfer, seconds, published));
        }
    }
    Ok(RatioTable {
        table: 8,
        unit: RatioUnit::Speedup,
        title: "hom. mult., this design (full-RNS, NTT) vs the existing CE-RAM design of Reis et al. [33] \
                (textbook): textbook time / case time"
            .into(),
        source: "seed 004, Table 8 (section 4.5)".into(),
        cells,
    })
}

/// Section 4.4's projection as [`two_banks_ops_per_s`] computes it.
pub const TWO_BANK_RULE: &str = "two banks each run whole operations (transfer in, compute, transfer out, in \
    series within a bank), staggered so that one bank's transfers overlap the other's compute on the one \
    DDR4 channel: operations per second = min(2 / (compute + transfer), 1 / transfer) — twice one bank's \
    rate until the channel is busy all the time";

/// Operations per second of two banks under [`TWO_BANK_RULE`], from one operation's compute and
/// transfer seconds.
pub fn two_banks_ops_per_s(compute_s: f64, transfer_s: f64) -> f64 {
    (2.0 / (compute_s + transfer_s)).min(1.0 / transfer_s)
}

/// One case and transfer of the projection, homomorphic multiplication.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProjectionRow {
    /// The case.
    pub case: String,
    /// The transfer: actual or specified.
    pub transfer: String,
    /// One bank: 1 / (compute + transfer).
    pub one_bank_ops_per_s: f64,
    /// Two banks under [`TWO_BANK_RULE`].
    pub two_banks_ops_per_s: f64,
    /// Whether the channel (1 / transfer) bounds it rather than the banks.
    pub channel_bound: bool,
}

/// Section 4.4: homomorphic multiplications per second of two 16 MB banks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TwoBankProjection {
    /// [`TWO_BANK_RULE`].
    pub rule: String,
    /// The model's, per case and transfer.
    pub rows: Vec<ProjectionRow>,
    /// Case B with the actual transfer beside the paper's 11222.
    pub cell: RatioCell,
    /// The rule applied to the paper's own Table 7 (case B: compute = 1 / 8719 s, transfer =
    /// 1 / 5611 - 1 / 8719 s): whether the rule is the paper's arithmetic.
    pub rule_on_paper_ops_per_s: f64,
}

/// Section 4.4's projection from the model's multiplication times, cases A-C.
pub fn two_banks(model: &CeramModel) -> Result<TwoBankProjection> {
    let mut rows = Vec::new();
    let mut published_cell = None;
    for case in SpecialCase::ALL {
        let cost = price(model, HomOp::Multiply, &model_params(case, true))?;
        for transfer in [Transfer::Actual, Transfer::Specified] {
            let total = transfer.seconds(&cost);
            let moved = total - cost.compute_s;
            let two = two_banks_ops_per_s(cost.compute_s, moved);
            rows.push(ProjectionRow {
                case: case.letter().into(),
                transfer: transfer.name().into(),
                one_bank_ops_per_s: 1.0 / total,
                two_banks_ops_per_s: two,
                channel_bound: 1.0 / moved < 2.0 / total,
            });
            if (case, transfer) == (SpecialCase::B, Transfer::Actual) {
                let id = "s4.4-B-multiply-actual".to_string();
                published_cell = Some(cell(id, "B", HomOp::Multiply, transfer, (1.0, 1.0 / two), PUBLISHED_TWO_BANKS));
            }
        }
    }
    let (actual, compute) = (PUBLISHED_TABLE_7_ACTUAL[1].1[0], PUBLISHED_TABLE_7_COMPUTE[1].1[0]);
    Ok(TwoBankProjection {
        rule: TWO_BANK_RULE.into(),
        rows,
        cell: published_cell.expect("case B with the actual transfer is among the rows"),
        rule_on_paper_ops_per_s: two_banks_ops_per_s(1.0 / compute, 1.0 / actual - 1.0 / compute),
    })
}

/// A table whose other side this reproduction cannot compute, printed as published.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PublishedOnly {
    /// 9 or 10.
    pub table: u32,
    /// What the values are.
    pub title: String,
    /// Where they are.
    pub source: String,
    /// The column names.
    pub columns: Vec<String>,
    /// (row name, the published speedups in column order).
    pub rows: Vec<(String, Vec<f64>)>,
    /// Why ours is not computed.
    pub why_not_ours: String,
}

/// Tables 9 and 10: published only. Their ratios need the other systems' absolute times, which
/// must come from those systems' own papers, never from these tables' ratios (that would make
/// the comparison circular).
pub fn published_only() -> Vec<PublishedOnly> {
    let ops: Vec<String> = TABLE_10_OPS.iter().map(|o| o.name().to_string()).collect();
    vec![
        PublishedOnly {
            table: 9,
            title: "speedup of hom. mult., case B, over Roy et al.'s FPGA [35] at N = 2^13, |q| = 360".into(),
            source: "seed 004, Table 9 (section 4.5)".into(),
            columns: vec!["actual transfer".into(), "specified transfer".into(), "computation only".into()],
            rows: vec![("B".into(), PUBLISHED_TABLE_9.to_vec())],
            why_not_ours: "ours is not computed: it needs Roy et al.'s absolute FPGA time for a homomorphic \
                           multiplication at N = 2^13, |q| = 360 (HPCA 2019), and no readable copy of that paper \
                           was found (the search tools reach abstracts of other FPGA papers only); seed 004 \
                           does not state the time, and deriving it from this table's own ratio would make the \
                           comparison circular"
                .into(),
        },
        PublishedOnly {
            table: 10,
            title: "speedup of CE-RAM over Al Badawi et al.'s B/FV on a GPU [2] at N = 2^13, |q| = 360".into(),
            source: "seed 004, Table 10 (section 4.5)".into(),
            columns: ops,
            rows: PUBLISHED_TABLE_10.iter().map(|(c, v)| (c.letter().to_string(), v.to_vec())).collect(),
            why_not_ours: "ours is not computed: it needs Al Badawi et al.'s absolute GPU times per operation at \
                           N = 2^13, |q| = 360 (IEEE TETC), and only the paper's abstract could be read here \
                           (one figure: 51 ms per multiplication at depth 98, not these parameters); deriving \
                           the times from this table's own ratios would make the comparison circular"
                .into(),
        },
    ]
}

/// Why a Table 7 or 8 cell (or the projection's) misses: the model's compute and transfer against
/// the paper's (Table 7's computation-only rate and its difference to the rate with transfer).
pub(super) fn misses(model: &CeramModel, tables: &[&RatioTable], cells: &[&RatioCell]) -> Result<Vec<Miss>> {
    let mut out = Vec::new();
    let all = tables.iter().flat_map(|t| t.cells.iter().map(move |c| (t.table, c)));
    for (table, c) in all.chain(cells.iter().map(|c| (0, *c))).filter(|(_, c)| !c.within) {
        let op = HomOp::ALL.into_iter().find(|o| o.name() == c.op).unwrap_or(HomOp::Multiply);
        let case = SpecialCase::ALL.into_iter().find(|k| k.letter() == c.case).unwrap_or(SpecialCase::A);
        let cost = price(model, op, &model_params(case, true))?;
        let paper_compute = published_compute_s(case, op, true);
        let mut reason = format!(
            "the model's with-NTT compute for {} in case {} is {} against the paper's {} (1 / Table 7's \
             computation-only rate): {:.2}x, from per-micro-op latencies that are documented assumptions (note 1)",
            op.name(),
            c.case,
            format_seconds(cost.compute_s),
            format_seconds(paper_compute),
            cost.compute_s / paper_compute
        );
        if table == 8 {
            reason = format!(
                "Table 8 = Table 2 x Table 3 for multiplication: the textbook side is unchecked (Table 2's \
                 reason) and {reason}"
            );
        }
        let rate = |t: &[(SpecialCase, [f64; 5])]| {
            let i = TABLE_6_OPS.iter().position(|o| *o == op).expect("a Table 7 operation");
            t.iter().find(|(k, _)| *k == case).map(|r| r.1[i])
        };
        let paper_rate = match c.transfer.as_str() {
            "actual" => rate(&PUBLISHED_TABLE_7_ACTUAL),
            "specified" => rate(&PUBLISHED_TABLE_7_SPECIFIED),
            _ => None,
        };
        if let Some(paper_rate) = paper_rate {
            let moved = if c.transfer == "actual" { cost.transfer_actual_s } else { cost.transfer_specified_s };
            reason += &format!(
                "; its {} transfer is {} against the {} Table 7 implies (1 / rate with transfer - 1 / \
                 computation-only rate)",
                c.transfer,
                format_seconds(moved),
                format_seconds(1.0 / paper_rate - paper_compute)
            );
        }
        out.push(Miss { id: c.id.clone(), ours_over_published: c.ours_over_published, reason });
    }
    Ok(out)
}
