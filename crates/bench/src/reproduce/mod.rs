//! The seed papers' experiments beside their published numbers: one module per paper behind
//! one trait, [`Reproduction`], whose rows all have one shape, [`Comparison`], printed by one
//! printer ([`report_text`] and [`comparison_text`] for text, [`report_json`] and
//! [`with_comparison`] for JSON).
//!
//! - [`dramatic`]: DRAMatic's Tables 2-5 and section 5 on the emulated UPMEM backend;
//! - [`anaheim`]: Anaheim's Fig. 9 and CKKS operations on the GPU + near-bank PIM model;
//! - [`mhy`]: MHY+'s Fig. 3 and Table II (raw polynomial operations over coefficient ranges)
//!   on the UPMEM model, the CPU side measured here;
//! - [`ceram`]: the CE-RAM B/FV paper's Tables 2, 3, 4 and 6 from the `ceram` model, Table 6's
//!   CPU side measured on this machine;
//! - [`gupta`]: Gupta et al.'s BFV vector addition and multiplication (Fig. 1) on the paper's
//!   2,524-DPU UPMEM system from emulated counts, the CPU side measured here;
//! - [`by_name`]: every paper by its name, with its options as JSON (Python's
//!   `pimhe.reproduce(name, **options)`).
//!
//! A paper keeps its own report (its tables, as the paper lays them out) and says, through
//! [`Reproduction::comparison`], what each published figure is beside ours: one [`Comparison`]
//! per figure, with the same fields whatever the paper.
//!
//! ```
//! use pimhe_bench::reproduce::anaheim::{Anaheim, AnaheimConfig};
//! use pimhe_bench::reproduce::{report_json, report_text, Reproduction};
//! use pimhe_bench::NoProgress;
//!
//! // Anaheim's Fig. 9 without the CKKS workloads (`--workload-n 0`): the model only, fast.
//! let config = AnaheimConfig { workload_n: 0, ..AnaheimConfig::default() };
//! let report = Anaheim::run(&config, &NoProgress).unwrap();
//! let rows = Anaheim::comparison(&report);
//! let paccum = rows.iter().find(|r| r.id == "fig9-a100-nearbank-PAccum(4)-b16").unwrap();
//! assert_eq!((paccum.published, paccum.unit.as_str()), (Some(7.26), "x"));
//! assert_eq!(paccum.within(), Some(true));
//!
//! // One printer: the paper's own text, then the comparison table; JSON adds the rows.
//! assert!(report_text::<Anaheim>(&report).contains("Comparison with anaheim (J. Kim"));
//! let json: serde_json::Value = serde_json::from_str(&report_json::<Anaheim>(&report).unwrap()).unwrap();
//! assert_eq!(json["paper"], "anaheim");
//! assert_eq!(json["comparison"].as_array().unwrap().len(), rows.len());
//! ```

pub mod anaheim;
pub mod by_name;
pub mod ceram;
pub mod dramatic;
pub mod gupta;
pub mod mhy;

use std::collections::BTreeMap;

use pimhe_workloads::progress::Progress;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::error::{BenchError, Result};
use crate::format::{to_json, Render};

/// A seed paper's reproduction: what a run takes, what it makes, and each published figure
/// beside ours in the common shape.
pub trait Reproduction {
    /// What a run takes. Its fields are the CLI subcommand's flags, named as Python's keyword
    /// arguments (the flag with `_` for `-`); [`by_name`] reads it from JSON, refusing unknown
    /// names.
    type Config: Default + DeserializeOwned;
    /// What a run makes: the paper's own report (its text is the paper's tables).
    type Report: Render;
    /// The CLI subcommand (`pimhe bench reproduce NAME`) and Python's name of the paper.
    const NAME: &'static str;
    /// The paper: authors, title, and the seed file it is in.
    const CITATION: &'static str;

    /// Runs the reproduction, reporting long steps to `progress`.
    fn run(config: &Self::Config, progress: &dyn Progress) -> Result<Self::Report>;

    /// Every published figure of `report` beside ours, in the paper's order.
    fn comparison(report: &Self::Report) -> Vec<Comparison>;
}

/// Where our figure of a [`Comparison`] comes from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "basis", rename_all = "snake_case")]
pub enum Basis {
    /// A model's figure; `model` is its label with name and version (`upmem-v1b@1 (modeled)`).
    Modeled {
        /// The model's label.
        model: String,
    },
    /// Measured in this run; `machine` names the machine and the software measured on it.
    Measured {
        /// The machine (its CPU) and what ran on it.
        machine: String,
    },
}

/// Whether our figure of a [`Comparison`] is within the tolerance of the published one, and why
/// not where it is not.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum Verdict {
    /// ours / published lies in [1 - tolerance, 1 + tolerance].
    Within {
        /// The relative tolerance (0.2: 20%).
        tolerance: f64,
    },
    /// ours / published lies outside the tolerance.
    Outside {
        /// The relative tolerance.
        tolerance: f64,
        /// The cause, where the reproduction knows it.
        why_not: String,
    },
    /// No tolerance applies: a figure is missing, or the reproduction sets no target for it.
    NotJudged {
        /// Why.
        why_not: String,
    },
}

/// One published figure beside ours: the row every reproduction makes, whatever the paper.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// Stable id, unique within the paper (`t2-ntt-64/compute`, `t3-A-multiply-none`).
    pub id: String,
    /// What is compared (`compute time`, `PAccum(4) speedup over the GPU kernel, ...`).
    pub quantity: String,
    /// The unit of `published` and `ours`: `s`, `ms`, `W`, `x` (a ratio), `ciphertexts`.
    pub unit: String,
    /// The paper's figure; `None` where it publishes none for this row.
    pub published: Option<f64>,
    /// Ours; `None` where pimhe has none (not measured in this run, not in pimhe yet).
    pub ours: Option<f64>,
    /// Modeled (with the model) or measured (with the machine).
    #[serde(flatten)]
    pub basis: Basis,
    /// ours / published; `None` where either is missing or the published figure is 0.
    pub ratio: Option<f64>,
    /// Where the published figure is: the paper's table, figure or section.
    pub source: String,
    /// Within the tolerance, or why not.
    #[serde(flatten)]
    pub verdict: Verdict,
}

impl Comparison {
    /// A row with `ratio` = ours / published, not judged: [`Comparison::judged`] or
    /// [`Comparison::unjudged`] set the verdict (until then it names what is missing, or says
    /// that no tolerance is set).
    pub fn new(
        id: impl Into<String>,
        quantity: impl Into<String>,
        unit: &str,
        source: impl Into<String>,
        published: Option<f64>,
        ours: Option<f64>,
        basis: Basis,
    ) -> Self {
        let ratio = ours.zip(published.filter(|&p| p != 0.0)).map(|(o, p)| o / p);
        let why_not = match (published, ours) {
            (None, _) => "the paper publishes no figure for it",
            (_, None) => "pimhe has no figure of its own for it",
            (Some(_), Some(_)) if ratio.is_none() => "the published figure is 0: no ratio",
            _ => "no tolerance set",
        };
        Self {
            id: id.into(),
            quantity: quantity.into(),
            unit: unit.to_string(),
            published,
            ours,
            basis,
            ratio,
            source: source.into(),
            verdict: Verdict::NotJudged { why_not: why_not.to_string() },
        }
    }

    /// Judged against `tolerance`: within when ours / published lies in [1 - tolerance,
    /// 1 + tolerance]; outside with `cause` (the ratio and "no cause known" without one). A row
    /// without a ratio stays not judged, saying which figure is missing.
    pub fn judged(mut self, tolerance: f64, cause: Option<String>) -> Self {
        if let Some(ratio) = self.ratio {
            self.verdict = if (1.0 - tolerance..=1.0 + tolerance).contains(&ratio) {
                Verdict::Within { tolerance }
            } else {
                let why_not = cause.unwrap_or_else(|| format!("ours / published = {ratio:.3}: no cause known"));
                Verdict::Outside { tolerance, why_not }
            };
        }
        self
    }

    /// Not judged, for `why_not` (no target set for this figure, the CPU not measured, ...).
    pub fn unjudged(mut self, why_not: impl Into<String>) -> Self {
        self.verdict = Verdict::NotJudged { why_not: why_not.into() };
        self
    }

    /// `Some(true)` within the tolerance, `Some(false)` outside, `None` not judged.
    pub fn within(&self) -> Option<bool> {
        match self.verdict {
            Verdict::Within { .. } => Some(true),
            Verdict::Outside { .. } => Some(false),
            Verdict::NotJudged { .. } => None,
        }
    }
}

/// The paper's report and every comparison, as one JSON object (what `--json` prints for a
/// whole report): `paper`, `citation`, the report's own fields, then `comparison`.
#[derive(Serialize)]
struct WholeReport<'a, T: Serialize> {
    paper: &'static str,
    citation: &'static str,
    #[serde(flatten)]
    report: &'a T,
    comparison: Vec<Comparison>,
}

/// A record's JSON object with its comparisons added under `comparison`.
#[derive(Serialize)]
struct WithComparison<'a, T: Serialize> {
    #[serde(flatten)]
    record: &'a T,
    comparison: &'a [Comparison],
}

/// The JSON of a whole report of `R`: the report's fields as they are (so earlier consumers
/// read what they read), with `paper`, `citation` and `comparison` (every [`Comparison`]) added.
pub fn report_json<R: Reproduction>(report: &R::Report) -> Result<String> {
    to_json(&WholeReport { paper: R::NAME, citation: R::CITATION, report, comparison: R::comparison(report) })
}

/// The JSON of one record (a row of a reproduction printed as it is made) with `rows` added
/// under `comparison`.
pub fn with_comparison(record: &impl Serialize, rows: &[Comparison]) -> Result<String> {
    to_json(&WithComparison { record, comparison: rows })
}

/// The text of a whole report of `R`: the paper's own tables, then [`comparison_text`].
pub fn report_text<R: Reproduction>(report: &R::Report) -> String {
    format!("{}\n\n{}", report.render(), comparison_text::<R>(&R::comparison(report)))
}

/// A figure to five significant digits without trailing zeros (`0.042`, `1525.5`, `311`), in
/// exponent form below 0.001 and from 10^5 (`2.4096e-4`): the published figures keep the
/// digits the papers print, ours as many (the JSON has every digit).
fn figure(x: Option<f64>) -> String {
    // Only a fraction's zeros: 40960 keeps its zero.
    let trim = |digits: String| {
        if digits.contains('.') {
            digits.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            digits
        }
    };
    match x {
        None => "-".to_string(),
        Some(0.0) => "0".to_string(),
        Some(x) if x.abs() < 1e-3 || x.abs() >= 1e5 => {
            let text = format!("{x:.4e}");
            let (mantissa, exponent) = text.split_once('e').unwrap_or((&text, "0"));
            format!("{}e{exponent}", trim(mantissa.to_string()))
        }
        Some(x) => {
            let decimals = (4 - x.abs().log10().floor() as i32).max(0) as usize;
            trim(format!("{x:.decimals$}"))
        }
    }
}

/// Long texts (sources, models, reasons) numbered once each, so that a table line stays short
/// and a text repeated over many rows is printed once.
#[derive(Default)]
struct Notes {
    numbers: BTreeMap<String, usize>,
    order: Vec<String>,
}

impl Notes {
    /// `[n]` of `text`, numbering it if new.
    fn cite(&mut self, text: &str) -> String {
        let next = self.order.len() + 1;
        let n = *self.numbers.entry(text.to_string()).or_insert(next);
        if n == next {
            self.order.push(text.to_string());
        }
        format!("[{n}]")
    }
}

/// The comparison table of `R`'s rows, the same for every paper: a heading with the paper and
/// the count within, outside and not judged; one line per row (id, quantity, published, ours,
/// unit, ratio, modeled or measured, source, verdict); then the numbered notes the lines cite
/// (models and machines, sources, reasons).
pub fn comparison_text<R: Reproduction>(rows: &[Comparison]) -> String {
    let count = |w: Option<bool>| rows.iter().filter(|r| r.within() == w).count();
    let mut text = format!(
        "Comparison with {} ({}): {} figures; {} within the tolerance, {} outside, {} not judged",
        R::NAME,
        R::CITATION,
        rows.len(),
        count(Some(true)),
        count(Some(false)),
        count(None)
    );
    if rows.is_empty() {
        return text;
    }
    let mut notes = Notes::default();
    let lines: Vec<[String; 9]> = rows
        .iter()
        .map(|r| {
            let basis = match &r.basis {
                Basis::Modeled { model } => format!("modeled {}", notes.cite(model)),
                Basis::Measured { machine } => format!("measured {}", notes.cite(machine)),
            };
            let source = notes.cite(&r.source);
            let verdict = match &r.verdict {
                Verdict::Within { tolerance } => format!("within {:.0}%", tolerance * 100.0),
                Verdict::Outside { tolerance, why_not } => {
                    format!("outside {:.0}% {}", tolerance * 100.0, notes.cite(why_not))
                }
                Verdict::NotJudged { why_not } => format!("not judged {}", notes.cite(why_not)),
            };
            let ratio = r.ratio.map_or("-".to_string(), |x| format!("{x:.3}"));
            [
                r.id.clone(),
                r.quantity.clone(),
                figure(r.published),
                figure(r.ours),
                r.unit.clone(),
                ratio,
                basis,
                source,
                verdict,
            ]
        })
        .collect();
    let heading = ["id", "quantity", "published", "ours", "unit", "ratio", "ours is", "source", "verdict"];
    let mut widths = heading.map(str::len);
    for line in &lines {
        for (w, cell) in widths.iter_mut().zip(line) {
            *w = (*w).max(cell.chars().count());
        }
    }
    // Text left, numbers right.
    let right = [false, false, true, true, false, true, false, false, false];
    let format_line = |cells: [&str; 9]| {
        let padded: Vec<String> = cells
            .iter()
            .zip(widths)
            .zip(right)
            .map(|((cell, w), right)| if right { format!("{cell:>w$}") } else { format!("{cell:<w$}") })
            .collect();
        format!("\n  {}", padded.join("  ").trim_end())
    };
    text += &format_line(heading);
    for line in &lines {
        text += &format_line(line.each_ref().map(String::as_str));
    }
    for (i, note) in notes.order.iter().enumerate() {
        text += &format!("\n  [{}] {note}", i + 1);
    }
    text
}

/// Runs `R` with its configuration read from `options` (a JSON object of the CLI's flags with `_`
/// for `-`; a missing one takes its default, an unknown one is a usage error naming the
/// allowed ones) and returns [`report_json`].
pub fn run_with_options<R: Reproduction>(options: serde_json::Value, progress: &dyn Progress) -> Result<String> {
    let config: R::Config =
        serde_json::from_value(options).map_err(|e| BenchError::usage(format!("reproduce {}: {e}", R::NAME)))?;
    report_json::<R>(&R::run(&config, progress)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::NoProgress;

    fn modeled() -> Basis {
        Basis::Modeled { model: "toy@1 (modeled)".to_string() }
    }

    fn row(id: &str, published: Option<f64>, ours: Option<f64>) -> Comparison {
        Comparison::new(id, "compute time", "s", "Table 9", published, ours, modeled())
    }

    #[test]
    fn ratio_and_verdict_follow_the_figures() {
        let within = row("a", Some(2.0), Some(2.2)).judged(0.2, None);
        assert_eq!(within.ratio, Some(1.1));
        assert_eq!(within.verdict, Verdict::Within { tolerance: 0.2 });
        // The edges are inside, as 1 +- tolerance.
        assert_eq!(row("edge", Some(4.0), Some(3.0)).judged(0.25, None).within(), Some(true));
        let outside = row("b", Some(2.0), Some(3.0)).judged(0.2, Some("the model's NTT".into()));
        assert_eq!(outside.verdict, Verdict::Outside { tolerance: 0.2, why_not: "the model's NTT".into() });
        let unknown = row("c", Some(2.0), Some(1.0)).judged(0.2, None);
        assert_eq!(unknown.within(), Some(false));
        assert!(matches!(&unknown.verdict, Verdict::Outside { why_not, .. } if why_not.contains("0.500")));
        // No ratio, no judgement: the row says which figure is missing.
        for (r, why) in [
            (row("d", None, Some(1.0)), "the paper publishes no figure for it"),
            (row("e", Some(1.0), None), "pimhe has no figure of its own for it"),
            (row("f", Some(0.0), Some(1.0)), "the published figure is 0: no ratio"),
        ] {
            let judged = r.judged(0.2, None);
            assert_eq!(judged.ratio, None);
            assert_eq!(judged.verdict, Verdict::NotJudged { why_not: why.to_string() });
        }
        assert_eq!(row("g", Some(1.0), Some(1.0)).unjudged("no target").within(), None);
    }

    #[test]
    fn json_has_every_common_field_flat() {
        let r = row("t2-ntt-1/compute", Some(0.042), Some(0.0414)).judged(0.2, None);
        let json: serde_json::Value = serde_json::from_str(&to_json(&r).unwrap()).unwrap();
        let keys: Vec<&str> = json.as_object().unwrap().keys().map(String::as_str).collect();
        let mut expected = [
            "id",
            "quantity",
            "unit",
            "published",
            "ours",
            "basis",
            "model",
            "ratio",
            "source",
            "verdict",
            "tolerance",
        ];
        expected.sort_unstable();
        assert_eq!(keys, expected);
        assert_eq!((json["basis"].as_str(), json["verdict"].as_str()), (Some("modeled"), Some("within")));
        let measured = Comparison::new("x", "q", "s", "T", Some(1.0), None, Basis::Measured { machine: "m".into() })
            .unjudged("skipped");
        let json: serde_json::Value = serde_json::from_str(&to_json(&measured).unwrap()).unwrap();
        assert_eq!((json["basis"].as_str(), json["machine"].as_str()), (Some("measured"), Some("m")));
        assert_eq!((json["verdict"].as_str(), json["why_not"].as_str()), (Some("not_judged"), Some("skipped")));
        assert!(json["ours"].is_null() && json["ratio"].is_null());
        let back: Comparison = serde_json::from_str(&to_json(&measured).unwrap()).unwrap();
        assert_eq!(back, measured);
    }

    /// A paper of two rows, for the printer.
    struct Toy;

    #[derive(Serialize)]
    struct ToyReport {
        seconds: f64,
    }

    impl Render for ToyReport {
        fn render(&self) -> String {
            format!("toy: {} s", self.seconds)
        }
    }

    #[derive(Default, Deserialize)]
    #[serde(default, deny_unknown_fields)]
    struct ToyConfig {
        seconds: f64,
    }

    impl Reproduction for Toy {
        type Config = ToyConfig;
        type Report = ToyReport;
        const NAME: &'static str = "toy";
        const CITATION: &'static str = "A. Author, Toy (seed 999)";

        fn run(config: &ToyConfig, _: &dyn Progress) -> Result<ToyReport> {
            Ok(ToyReport { seconds: config.seconds })
        }

        fn comparison(report: &ToyReport) -> Vec<Comparison> {
            let why = "no target for a toy".to_string();
            vec![
                row("toy/compute", Some(2.0), Some(report.seconds)).judged(0.2, Some(why.clone())),
                row("toy/transfer", Some(0.0001234), Some(0.0001)).unjudged(why),
            ]
        }
    }

    #[test]
    fn one_printer_for_text_and_json() {
        let report = ToyReport { seconds: 3.0 };
        let text = report_text::<Toy>(&report);
        let expected = "toy: 3 s\n\n\
            Comparison with toy (A. Author, Toy (seed 999)): 2 figures; 0 within the tolerance, 1 outside, 1 not judged\n  \
            id            quantity      published  ours  unit  ratio  ours is      source  verdict\n  \
            toy/compute   compute time          2     3  s     1.500  modeled [1]  [2]     outside 20% [3]\n  \
            toy/transfer  compute time   1.234e-4  1e-4  s     0.810  modeled [1]  [2]     not judged [3]\n  \
            [1] toy@1 (modeled)\n  \
            [2] Table 9\n  \
            [3] no target for a toy";
        assert_eq!(text, expected);
        let json: serde_json::Value = serde_json::from_str(&report_json::<Toy>(&report).unwrap()).unwrap();
        assert_eq!((json["paper"].as_str(), json["seconds"].as_f64()), (Some("toy"), Some(3.0)));
        assert_eq!(json["comparison"][0]["id"], "toy/compute");
        assert_eq!(json["comparison"][1]["why_not"], "no target for a toy");
        // A record keeps its own fields first and gains the rows.
        let record = with_comparison(&report, &Toy::comparison(&report)[..1]).unwrap();
        assert!(record.starts_with("{\"seconds\":3.0,\"comparison\":[{\"id\":\"toy/compute\""), "{record}");
    }

    #[test]
    fn options_are_read_by_name_and_unknown_names_refused() {
        let json = run_with_options::<Toy>(serde_json::json!({"seconds": 2.0}), &NoProgress).unwrap();
        assert!(json.contains("\"verdict\":\"within\""), "{json}");
        let defaults = run_with_options::<Toy>(serde_json::json!({}), &NoProgress).unwrap();
        assert!(defaults.contains("\"seconds\":0.0"), "{defaults}");
        let error = run_with_options::<Toy>(serde_json::json!({"second": 2.0}), &NoProgress).unwrap_err();
        assert!(error.is_usage(), "{error}");
        assert_eq!(error.to_string(), "reproduce toy: unknown field `second`, expected `seconds`");
    }

    #[test]
    fn figures_keep_five_significant_digits() {
        let shown: Vec<String> = [
            Some(0.0),
            Some(0.042),
            Some(0.041359508),
            Some(1.0),
            Some(1525.53),
            Some(12346.7),
            Some(318.26),
            Some(1.0 / 4150.0),
            Some(123456.0),
            Some(-2.5),
            None,
        ]
        .map(figure)
        .into();
        let expected =
            ["0", "0.042", "0.04136", "1", "1525.5", "12347", "318.26", "2.4096e-4", "1.2346e5", "-2.5", "-"];
        assert_eq!(shown, expected);
    }
}
