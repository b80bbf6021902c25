//! The reproduction's report, its text, and its rows in the common shape.

use pimhe_ceram::model::CeramModel;
use pimhe_workloads::progress::Progress;
use serde::{Deserialize, Serialize};

use super::config::CeramConfig;
use super::cpu::{measure_cpus, SEAL_DEFAULT_LABEL};
use super::model::{
    misses, notes, table_2, table_3, table_4, transfers, Miss, RatioTable, RatioUnit, TransferCheck, TOLERANCE,
};
use super::table6::{table_6, Table6};
use super::throughput::{self, published_only, table_7, table_8, two_banks, PublishedOnly, TwoBankProjection};
use crate::error::Result;
use crate::format::{format_seconds, Render};
use crate::reproduce::{Basis, Comparison, Reproduction};

/// The reproduction.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CeramReport {
    /// The model's label, e.g. `ceram@1 (modeled)`.
    pub model: String,
    /// Tables 2, 3, 4.
    pub tables: Vec<RatioTable>,
    /// Table 6.
    pub table6: Table6,
    /// Tables 7 and 8 from the model's times.
    pub throughput: Vec<RatioTable>,
    /// Section 4.4's two-bank projection.
    pub two_banks: TwoBankProjection,
    /// Tables 9 and 10, published only, each with why ours is not computed.
    pub published_only: Vec<PublishedOnly>,
    /// Transfers per operation, published (Table 7) vs modeled.
    pub transfers: Vec<TransferCheck>,
    /// Where each miss comes from: the compute seconds by step of the two programs of a ratio.
    pub misses: Vec<Miss>,
    /// What differs and why.
    pub notes: Vec<String>,
}

/// Runs the reproduction: Tables 2-4, 7, 8 and section 4.4 modeled, Table 6 with the CPU side
/// measured unless `config.skip_cpu`, Tables 9 and 10 as published.
pub fn reproduce(config: &CeramConfig, progress: &dyn Progress) -> Result<CeramReport> {
    let model = CeramModel::default();
    let tables = vec![table_2(&model)?, table_3(&model)?, table_4(&model)?];
    let (cpus, skipped) = if config.skip_cpu {
        (Vec::new(), Some("skipped (--skip-cpu)".to_string()))
    } else {
        (measure_cpus(config, progress)?, None)
    };
    let throughput = vec![table_7(&model)?, table_8(&model)?];
    let two_banks = two_banks(&model)?;
    let mut all_misses = misses(&model, &tables)?;
    all_misses.extend(throughput::misses(&model, &throughput.iter().collect::<Vec<_>>(), &[&two_banks.cell])?);
    Ok(CeramReport {
        model: model.label(),
        table6: table_6(&model, cpus, skipped)?,
        throughput,
        two_banks,
        published_only: published_only(),
        transfers: transfers(&model)?,
        misses: all_misses,
        notes: notes(&model),
        tables,
    })
}

/// The CE-RAM B/FV paper's reproduction ([`reproduce`]) behind the common trait.
pub struct Ceram;

impl Reproduction for Ceram {
    type Config = CeramConfig;
    type Report = CeramReport;
    const NAME: &'static str = "ceram";
    const CITATION: &'static str = "Optimizing the full-RNS B/FV scheme for Compute-Enabled RAM (shared/seeds/004)";

    fn run(config: &CeramConfig, progress: &dyn Progress) -> Result<CeramReport> {
        reproduce(config, progress)
    }

    /// The cells of Tables 2-4, 7, 8 and section 4.4 (judged against [`TOLERANCE`], a miss with
    /// its reason), Table 6's speedups beside ours over SEAL on this machine, the transfers Table 7
    /// implies, and Tables 9 and 10 (published only, with why).
    fn comparison(report: &CeramReport) -> Vec<Comparison> {
        let modeled = Basis::Modeled { model: report.model.clone() };
        let mut rows = Vec::new();
        let projection = RatioTable {
            table: 0,
            unit: RatioUnit::OpsPerSecond,
            title: String::new(),
            source: "seed 004, section 4.4".into(),
            cells: vec![report.two_banks.cell.clone()],
        };
        for table in report.tables.iter().chain(&report.throughput).chain([&projection]) {
            for c in &table.cells {
                let ratio = match table.table {
                    2 => "textbook / full-RNS time".to_string(),
                    3 => "time without / with NTT".to_string(),
                    4 => format!("case A / case {} time, no NTT", c.case),
                    7 => "operations per second, with NTT".to_string(),
                    8 => "Reis et al.'s textbook CE-RAM time / this design's, with NTT".to_string(),
                    _ => "operations per second of two banks (section 4.4's rule)".to_string(),
                };
                let transfer = if c.transfer == "none" { "no".to_string() } else { c.transfer.clone() };
                let quantity = format!("{ratio}: case {}, {}, {transfer} transfer", c.case, c.op);
                let row = Comparison::new(
                    &c.id,
                    quantity,
                    table.unit.symbol(),
                    &table.source,
                    Some(c.published),
                    Some(c.modeled),
                    modeled.clone(),
                );
                let cause = report.misses.iter().find(|m| m.id == c.id).map(|m| m.reason.clone());
                rows.push(row.judged(TOLERANCE, cause));
            }
        }
        let t6 = &report.table6;
        let column = t6.cpus.iter().find(|c| c.label == SEAL_DEFAULT_LABEL);
        let measured = column.and_then(|c| c.measured.as_ref());
        let machine = measured.map_or_else(
            || "this machine (not measured)".to_string(),
            |m| format!("{} on {}, {} thread(s), over CE-RAM {}", m.version, m.machine, m.threads, report.model),
        );
        let missing = t6.skipped.clone().or_else(|| column.and_then(|c| c.unavailable.clone()));
        for r in &t6.rows {
            let ours = r.measured.iter().find(|m| m.cpu == SEAL_DEFAULT_LABEL).and_then(|m| m.speedup);
            for p in &r.published {
                let quantity =
                    format!("CE-RAM speedup over SEAL on a CPU (the paper's: {}), case {}, {}", p.cpu, r.case, r.op);
                let id = format!("{}-{}", r.id, p.cpu);
                let basis = Basis::Measured { machine: machine.clone() };
                let row =
                    Comparison::new(id, quantity, "x", "seed 004, Table 6 (section 4.3)", Some(p.speedup), ours, basis);
                rows.push(row.unjudged(match (&missing, ours) {
                    (Some(why), _) => why.clone(),
                    (None, None) => format!("{SEAL_DEFAULT_LABEL} did not time {}", r.op),
                    (None, Some(_)) => format!(
                        "different CPUs, no tolerance set: ours is the modeled CE-RAM over SEAL measured on this \
                         machine, the paper's over SEAL on its {}",
                        p.cpu
                    ),
                }));
            }
        }
        for t in &report.transfers {
            let quantity = format!("ciphertexts moved per {}, case A (transfer time / 21.2 us)", t.op);
            let source =
                "seed 004, Table 7 (actual - computation only, case A) and section 4.1 (21.2 us per ciphertext)";
            let row = Comparison::new(
                format!("transfers-{}", t.op),
                quantity,
                "ciphertexts",
                source,
                Some(t.published_ciphertexts),
                Some(t.modeled_ciphertexts),
                modeled.clone(),
            );
            let why = match t.op.as_str() {
                "encrypt" | "decrypt" => {
                    "no tolerance set: a check of the model's transfer rule (note 3), which moves one \
                                          ciphertext and the plaintext where Table 7 implies two ciphertexts"
                }
                _ => "no tolerance set: a check of the model's transfer rule (note 3)",
            };
            rows.push(row.unjudged(why));
        }
        for t in &report.published_only {
            for (row_name, values) in &t.rows {
                for (column, published) in t.columns.iter().zip(values) {
                    let id = format!("t{}-{row_name}-{}", t.table, column.replace(' ', "-"));
                    let quantity = format!("{}: case {row_name}, {column}", t.title);
                    let row = Comparison::new(id, quantity, "x", &t.source, Some(*published), None, modeled.clone());
                    rows.push(row.unjudged(t.why_not_ours.clone()));
                }
            }
        }
        rows
    }
}

/// One of Tables 2, 3, 4, 7, 8: its title and score, a line per cell, the model's label.
fn render_table(table: &RatioTable, model: &str) -> String {
    let (hit, all) = table.score();
    let mut text = format!("\n\nTable {}: {} ({}); {hit} of {all} within", table.table, table.title, table.source);
    text += &format!(
        "\n  {:<6} {:<9} {:<9} {:>16} {:>10} {:>14} {:>7}",
        "case", "op", "transfer", "modeled", "published", "ours/published", "within"
    );
    for c in &table.cells {
        let case = if table.table == 4 { format!("{} vs A", c.case) } else { c.case.clone() };
        text += &format!(
            "\n  {:<6} {:<9} {:<9} {:>16} {:>10} {:>14.2} {:>7}",
            case,
            c.op,
            c.transfer,
            table.unit.format(c.modeled),
            table.unit.format(c.published),
            c.ours_over_published,
            if c.within { "yes" } else { "no" }
        );
    }
    text + &format!("\n  {model}")
}

fn opt_x(v: Option<f64>) -> String {
    v.map_or("n/a".to_string(), |v| format!("{v:.1}x"))
}

impl Render for CeramReport {
    fn render(&self) -> String {
        let mut text = format!(
            "CE-RAM B/FV (seed 004), Tables 2-4 and 6-8 and section 4.4: {} figures beside the published ones \
             (speedup = time of the slower design / time of the faster; within: ours / published in [{:.2}, {:.2}]); \
             Tables 9 and 10 as published",
            self.model,
            1.0 - TOLERANCE,
            1.0 + TOLERANCE
        );
        for table in &self.tables {
            text += &render_table(table, &self.model);
        }
        let t6 = &self.table6;
        text += "\n\nTable 6: CE-RAM (modeled, with NTT, actual transfer) vs CPUs: speedup = CPU time / CE-RAM time \
                 (seed 004, Table 6, section 4.3)";
        match &t6.skipped {
            Some(why) => text += &format!("\n  CPU side measured here: {why}"),
            None => {
                for c in &t6.cpus {
                    match (&c.measured, &c.unavailable) {
                        (Some(m), _) => {
                            text += &format!(
                                "\n  {:<22} measured: {}, N = {}, |q| = {} bits ({} ciphertext), {} thread(s), batch \
                                 {}, {}",
                                c.label,
                                m.version,
                                m.n,
                                m.modulus(),
                                m.log_q_ciphertext,
                                m.threads,
                                m.batch,
                                if m.checked { "results checked" } else { "NOT checked" }
                            )
                        }
                        (None, why) => text += &format!("\n  {:<22} {}", c.label, why.as_deref().unwrap_or("n/a")),
                    }
                }
            }
        }
        let labels: Vec<&str> = t6.cpus.iter().map(|c| c.label.as_str()).collect();
        text += &format!("\n  {:<4} {:<9} {:>10} {:>10}", "case", "op", "CE-RAM", "paper's");
        for l in &labels {
            text += &format!(" {:>22}", format!("vs {l}"));
        }
        text += "   published: server / laptop / workstation";
        for r in &t6.rows {
            text += &format!(
                "\n  {:<4} {:<9} {:>10} {:>10}",
                r.case,
                r.op,
                format_seconds(r.ceram_s),
                format_seconds(r.published_ceram_s)
            );
            for m in &r.measured {
                text += &format!(" {:>22}", opt_x(m.speedup));
            }
            let published: Vec<String> = r.published.iter().map(|p| format!("{:.1}x", p.speedup)).collect();
            text += &format!("   {}", published.join(" / "));
        }
        text += &format!("\n  CE-RAM: {}; paper's CE-RAM: 1 / Table 7's actual operations per second", self.model);
        text += "\n  the paper's CPU times (Table 6 x Table 7, case A): ";
        let implied: Vec<String> = t6
            .rows
            .iter()
            .filter(|r| r.case == "A")
            .map(|r| {
                let per_cpu: Vec<String> = r.published.iter().map(|p| format_seconds(p.implied_cpu_s)).collect();
                format!("{} {}", r.op, per_cpu.join(" / "))
            })
            .collect();
        text += &implied.join("; ");
        if !t6.pimhe_vs_seal.is_empty() {
            text += "\n\n  CPU side, this run (median per ciphertext; SEAL / pimhe above 1: pimhe is faster):";
            for c in &t6.pimhe_vs_seal {
                text += &format!("\n    {:<9} pimhe {:>10}", c.op, format_seconds(c.pimhe_s));
                for (label, s, ratio) in &c.seal {
                    text += &format!(
                        "   {label} {:>10} ({})",
                        s.map_or("n/a".to_string(), format_seconds),
                        ratio.map_or("n/a".to_string(), |r| format!("{r:.2}x"))
                    );
                }
            }
        }
        for table in &self.throughput {
            text += &render_table(table, &self.model);
        }
        let p = &self.two_banks;
        text += &format!(
            "\n\nSection 4.4: hom. mult. per second of two 16 MB banks. Rule: {}.\n  {:<4} {:<9} {:>10} {:>11} {:>7}",
            p.rule, "case", "transfer", "one bank", "two banks", "bound"
        );
        for r in &p.rows {
            text += &format!(
                "\n  {:<4} {:<9} {:>10} {:>11} {:>7}",
                r.case,
                r.transfer,
                format!("{:.0}/s", r.one_bank_ops_per_s),
                format!("{:.0}/s", r.two_banks_ops_per_s),
                if r.channel_bound { "channel" } else { "banks" }
            );
        }
        let c = &p.cell;
        text += &format!(
            "\n  case B, actual transfer: {:.0}/s modeled vs {:.0}/s published: ours/published {:.2}, within: {}; \
             the rule on the paper's own Table 7 (case B) gives {:.0}/s\n  {}",
            c.modeled,
            c.published,
            c.ours_over_published,
            if c.within { "yes" } else { "no" },
            p.rule_on_paper_ops_per_s,
            self.model
        );
        for t in &self.published_only {
            text += &format!("\n\nTable {}: {} ({}), published only", t.table, t.title, t.source);
            text += &format!("\n  {:<4}", "case");
            for column in &t.columns {
                text += &format!(" {column:>18}");
            }
            for (row, values) in &t.rows {
                text += &format!("\n  {row:<4}");
                for v in values {
                    text += &format!(" {:>18}", format!("{v:.2}x"));
                }
            }
            text += &format!("\n  {}", t.why_not_ours);
        }
        text += "\n\nTransfers per operation, case A (ciphertexts of 21.2 us): published = Table 7 (actual - compute \
                 only), modeled = the model's actual transfer";
        for t in &self.transfers {
            text += &format!(
                "\n  {:<9} published {:.2}   modeled {:.2}",
                t.op, t.published_ciphertexts, t.modeled_ciphertexts
            );
        }
        let score =
            |tables: &[RatioTable]| tables.iter().map(RatioTable::score).fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
        let ((hit, all), (hit7, all7)) = (score(&self.tables), score(&self.throughput));
        text += &format!(
            "\n\nTarget (Tables 2-4 within 25%): {hit} of {all} cells; Tables 7-8: {hit7} of {all7}; section 4.4: {}; \
             the misses and why:",
            if self.two_banks.cell.within { "within" } else { "outside" }
        );
        for m in &self.misses {
            text += &format!("\n  {} ({:.2}): {}", m.id, m.ours_over_published, m.reason);
        }
        text += "\n\nNotes:";
        for (i, n) in self.notes.iter().enumerate() {
            text += &format!("\n  {}. {n}", i + 1);
        }
        text
    }
}
