//! The emulation of the rows: a validated configuration run row by row, each configuration
//! emulated once.

use std::collections::HashMap;
use std::time::Instant;

use pimhe_pim::layout::Variant;
use pimhe_pim::model::reference::{self, ReferenceRow};
use pimhe_pim::model::ModelVersion;
use pimhe_workloads::progress::Progress;
use serde::{Deserialize, Serialize};

use super::experiments::{dramatic_rows, ntt_ratio_spec, selected, target_spec, RowSpec};
use super::large_n::{check_against_cpu, price_per_pass};
use super::multiply::MultiplyReport;
use super::report::{footer, header, Claim, DramaticReport, RowReport, TargetReport};
use super::statements::{statements, Quantity};
use super::table1::Table1Report;
use crate::error::{BenchError, Result};
use crate::format::Render;
use crate::measure::kernels::pim::{operand_polys, Kernel};
use crate::measure::kernels::{pim, Workload};
use crate::reproduce::{with_comparison, Comparison, Reproduction};
use crate::target::upmem::{self, PimOutcome, PimSettings};
use crate::target::what_if::WhatIf;

/// Emulation budget of one row, seconds (see the module documentation).
pub const DEFAULT_MAX_EMULATION_S: f64 = 20.0;

/// What `pimhe bench reproduce dramatic` runs: its flags, by Python's names (`--what-if` is
/// `what_ifs`, as everywhere in Python).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DramaticConfig {
    /// DPU kernel arithmetic: `barrett` (DRAMatic's own: the model-fidelity check) or `best`
    /// (pimhe's: the speed-up) [default: barrett].
    pub kernel: String,
    /// Only these rows: comma-separated row ids or id prefixes ending at a '-' (t2, t3-ntt,
    /// t5-pipeline-128-seq, s72), `target` for the target summary, `fig3` and `table1` for Fig. 3
    /// and Table 1 [default: all].
    pub rows: Option<String>,
    /// Emulation budget of one row in seconds [default: [`DEFAULT_MAX_EMULATION_S`]].
    pub max_emulation_s: f64,
    /// `--what-if` values applied to the Tables 2-5 rows ([`crate::target::what_if`]; the section-5
    /// rows have their own) [default: none].
    #[serde(rename = "what_ifs")]
    pub what_if: Vec<String>,
    /// The timing model, `upmem-v1b@1` or `upmem-v1b@2` [default: upmem-v1b@2].
    pub model: String,
}

impl Default for DramaticConfig {
    fn default() -> Self {
        Self {
            kernel: "barrett".to_string(),
            rows: None,
            max_emulation_s: DEFAULT_MAX_EMULATION_S,
            what_if: Vec::new(),
            model: ModelVersion::default().name().to_string(),
        }
    }
}

/// Runs the experiments of one row set, with a cache so that a configuration appearing twice
/// (Table 4's last row is Table 5's 383-DPU row) is emulated once.
struct Runner {
    max_emulation_s: f64,
    model: ModelVersion,
    cache: HashMap<(String, Variant), PimOutcome>,
}

impl Runner {
    /// The outcome of `spec` with `variant`: emulated once per configuration and multiplier;
    /// zero-copy is applied to that outcome (it changes no count, only the transfers).
    fn outcome(&mut self, spec: &RowSpec, variant: Variant) -> Result<PimOutcome> {
        let key = spec.key(variant);
        let outcome = match self.cache.get(&key) {
            Some(outcome) => outcome.clone(),
            None => {
                let workload = Workload::new(spec.op, spec.n, spec.primes, spec.prime_bits, spec.ciphertexts, 1)?;
                let multiplier = WhatIf { zero_copy: false, ..spec.what_if };
                let settings = PimSettings::new(spec.dpus, spec.mode, variant, spec.primes)?
                    .with_what_if(multiplier)
                    .with_model(self.model);
                let mut outcome = pim::run_subset(&workload, &settings, Some(self.max_emulation_s))
                    .map_err(|e| BenchError::Failed(format!("row {}: {e}", spec.id)))?;
                if spec.is_section72() {
                    outcome = price_per_pass(outcome, &workload, &settings)?;
                    outcome.emulation.push_str(&check_against_cpu(&workload, &settings)?);
                }
                self.cache.insert(key, outcome.clone());
                outcome
            }
        };
        Ok(if spec.what_if.zero_copy { zero_copy(outcome, spec, self.model) } else { outcome })
    }

    /// What the text (sections 5 and 7.2) states of `spec`, with ours from `outcome` (and the
    /// rows the speed-ups are over, run or taken from the cache).
    fn claims(&mut self, spec: &RowSpec, variant: Variant, outcome: &PimOutcome) -> Result<Vec<Claim>> {
        let mut claims = Vec::new();
        let polynomials = operand_polys(Kernel::of(spec.op)?, spec.ciphertexts) as f64;
        let ms_per_polynomial = outcome.total_s * 1e3 / polynomials;
        for statement in statements().filter(|s| s.row == spec.id) {
            let share = |x: f64| if outcome.compute_s > 0.0 { x / outcome.compute_s } else { 0.0 };
            let ours = match statement.quantity {
                Quantity::SpeedupOver(id) => {
                    let base = dramatic_rows()
                        .into_iter()
                        .find(|r| r.id == id)
                        .ok_or_else(|| BenchError::Failed(format!("row {id} is not defined")))?;
                    self.outcome(&base, variant)?.compute_s / outcome.compute_s
                }
                Quantity::TransferOverCompute => share(outcome.transfer_s),
                Quantity::RetrieveOverCompute => share(outcome.retrieve_s),
                Quantity::OverheadOverCompute => share(outcome.transfer_s + outcome.retrieve_s),
                Quantity::MsPerPolynomial => ms_per_polynomial,
                Quantity::SpeedupOverPeer { ms, .. } => ms / ms_per_polynomial,
                Quantity::PeerSpeedup { ms, .. } => ms_per_polynomial / ms,
            };
            claims.push(Claim {
                kind: statement.quantity,
                quantity: statement.quantity.name(),
                ours,
                published: statement.value,
                ratio: ours / statement.value,
                quote: statement.quote,
            });
        }
        Ok(claims)
    }
}

/// `outcome` (emulated without zero-copy) under `spec`'s what-ifs with zero-copy: no transfer or
/// retrieval, the energy of the compute alone, the label with `+zero-copy`.
fn zero_copy(mut outcome: PimOutcome, spec: &RowSpec, version: ModelVersion) -> PimOutcome {
    let mut model = version.model();
    spec.what_if.apply(&mut model);
    outcome.transfer_s = 0.0;
    outcome.retrieve_s = 0.0;
    outcome.total_s = outcome.transfer_s + outcome.compute_s + outcome.retrieve_s;
    outcome.energy_j = model.energy_joules(outcome.total_s, spec.dpus.div_ceil(64) as u32);
    outcome.model = model.label();
    outcome.sources.transfer_s = "model with the zero-copy what-if: no host <-> DPU transfer".into();
    outcome
}

/// A DRAMatic reproduction, validated and ready to run row by row: [`DramaticRun::intro`] first, then
/// [`DramaticRun::run_rows`], [`DramaticRun::footer`] and [`DramaticRun::target`]
/// ([`reproduce`] does it all at once).
pub struct DramaticRun {
    variant: Variant,
    what_if: WhatIf,
    specs: Vec<RowSpec>,
    want_target: bool,
    want_fig3: bool,
    want_table1: bool,
    reference: std::result::Result<Vec<ReferenceRow>, String>,
    runner: Runner,
    start: Instant,
}

impl DramaticRun {
    /// Validates `config` (kernel, budget, row filter) and loads the published values (a
    /// missing reference file is not an error: the rows then have our numbers only).
    pub fn new(config: &DramaticConfig) -> Result<Self> {
        let variant = upmem::parse_kernel(&config.kernel)?;
        if config.max_emulation_s.is_nan() || config.max_emulation_s <= 0.0 {
            return Err(BenchError::usage("--max-emulation-s must be positive"));
        }
        let filter: Option<Vec<String>> = config
            .rows
            .as_ref()
            .map(|r| r.split(',').map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect());
        let what_if = WhatIf::parse(&config.what_if)?;
        let model = upmem::parse_model(&config.model)?;
        let specs: Vec<RowSpec> = dramatic_rows()
            .into_iter()
            .filter(|s| s.selected(&filter))
            .map(|s| if s.is_appendix() { RowSpec { what_if, ..s } } else { s })
            .collect();
        let want_target = selected("target", &filter);
        let want_fig3 = selected("fig3", &filter);
        let want_table1 = selected("table1", &filter);
        if specs.is_empty() && !want_target && !want_fig3 && !want_table1 {
            return Err(BenchError::usage(format!(
                "--rows {} selects no row; ids look like t2-ntt-64, t3-bgv-mul-4096, t4-pipeline-8192, \
                 t5-pipeline-128-seq, s5-ntt-4096-dummy (s5: section 5's what-ifs), s72-ntt-256 (s72: section 7.2), \
                 target, fig3 or table1",
                config.rows.as_deref().unwrap_or("")
            )));
        }
        let reference = reference::load_default().map_err(|e| e.to_string());
        Ok(Self {
            variant,
            what_if,
            specs,
            want_target,
            want_fig3,
            want_table1,
            reference,
            runner: Runner { max_emulation_s: config.max_emulation_s, model, cache: HashMap::new() },
            start: Instant::now(),
        })
    }

    /// The kernel arithmetic of the rows.
    pub fn variant(&self) -> Variant {
        self.variant
    }

    /// The selected rows, in the paper's order.
    pub fn specs(&self) -> &[RowSpec] {
        &self.specs
    }

    /// Whether the target summary is selected.
    pub fn wants_target(&self) -> bool {
        self.want_target
    }

    /// Fig. 3's multiply costs and section 3.1.1's figures; `None` when `fig3` is not selected.
    pub fn fig3(&self) -> Option<MultiplyReport> {
        self.want_fig3.then(MultiplyReport::new)
    }

    /// Table 1 beside its rule and pimhe's placement; `None` when `table1` is not selected.
    pub fn table1(&self) -> Result<Option<Table1Report>> {
        self.want_table1.then(Table1Report::new).transpose()
    }

    /// The selected sections after the rows (Fig. 3, Table 1), each as its text, its JSON with
    /// its comparison rows, and those rows, in print order.
    pub fn sections(&self) -> Result<Vec<Section>> {
        let mut out = Vec::new();
        if let Some(fig3) = self.fig3() {
            out.push(Section::of(&fig3, fig3.comparison())?);
        }
        if let Some(table1) = self.table1()? {
            out.push(Section::of(&table1, table1.comparison())?);
        }
        Ok(out)
    }

    /// Seconds since [`DramaticRun::new`].
    pub fn elapsed_s(&self) -> f64 {
        self.start.elapsed().as_secs_f64()
    }

    /// The text before the rows: what is modeled, where the published values come from, and
    /// when rows are selected a blank line and the column headings.
    pub fn intro(&self) -> String {
        let mut lines = vec![
            format!(
                "DRAMatic (Tables 2-5) on the emulated UPMEM backend, kernel {}: modeled by {}{}; section 5's what-ifs as \
                 rows s5",
                upmem::kernel_name(self.variant),
                self.runner.model.model().label(),
                if self.what_if.is_active() {
                    format!("; Tables 2-5 with --what-if {}", self.what_if.describe())
                } else {
                    String::new()
                }
            ),
            "  ours: compute and energy from the emulated busiest DPU of each prime group (subset method), transfer \
             and retrieve from the model on the full byte count; published: DRAMatic's measurements"
                .to_string(),
        ];
        lines.push(match &self.reference {
            Ok(_) => format!("  published values: {}", reference::default_path().display()),
            Err(e) => format!("  reference missing: {e}; printing our numbers only"),
        });
        if !self.specs.is_empty() {
            lines.push(String::new());
            lines.push(header());
        }
        lines.join("\n")
    }

    /// Runs the selected rows in order, handing each report to `each` as soon as it is made
    /// (the CLI prints it), and returns them all. `progress` counts the rows and, when the
    /// target is selected, the target as one more step (run by [`DramaticRun::target`]).
    pub fn run_rows(
        &mut self,
        progress: &dyn Progress,
        mut each: impl FnMut(&RowReport) -> Result<()>,
    ) -> Result<Vec<RowReport>> {
        progress.start(self.specs.len() as u64 + u64::from(self.want_target), "rows");
        let mut reports = Vec::new();
        let mut result = Ok(());
        for spec in &self.specs {
            let variant = self.variant;
            let runner = &mut self.runner;
            result = runner.outcome(spec, variant).and_then(|outcome| {
                let claims = runner.claims(spec, variant, &outcome)?;
                let report = RowReport::new(spec, variant, &outcome, &self.reference, claims);
                each(&report)?;
                reports.push(report);
                Ok(())
            });
            if result.is_err() {
                break;
            }
            progress.advance(1);
        }
        if result.is_err() || !self.want_target {
            progress.finish();
        }
        result.map(|()| reports)
    }

    /// The text after the rows (empty when there are none): the legend, the partial rows, and
    /// the fidelity or speed-up summary of the NTT/iNTT rows.
    pub fn footer(&self, reports: &[RowReport]) -> String {
        if reports.is_empty() {
            return String::new();
        }
        footer(reports, self.variant, self.runner.model)
    }

    /// The target summary (best and barrett kernels on the target pipeline and the NTT row),
    /// reusing rows already run; `None` when it is not selected. Finishes `progress`.
    pub fn target(&mut self, progress: &dyn Progress) -> Result<Option<TargetReport>> {
        if !self.want_target {
            return Ok(None);
        }
        let target = target_report(&mut self.runner);
        progress.advance(1);
        progress.finish();
        target.map(Some)
    }
}

/// Runs a whole reproduction (what `pimhe bench reproduce` prints row by row).
pub fn reproduce(config: &DramaticConfig, progress: &dyn Progress) -> Result<DramaticReport> {
    let mut reproduction = DramaticRun::new(config)?;
    let rows = reproduction.run_rows(progress, |_| Ok(()))?;
    let target = reproduction.target(progress)?;
    Ok(DramaticReport {
        intro: reproduction.intro(),
        footer: reproduction.footer(&rows),
        rows,
        target,
        fig3: reproduction.fig3(),
        table1: reproduction.table1()?,
        elapsed_s: reproduction.elapsed_s(),
    })
}

/// DRAMatic's reproduction ([`reproduce`]; [`DramaticRun`] row by row) behind the common trait.
pub struct Dramatic;

impl Reproduction for Dramatic {
    type Config = DramaticConfig;
    type Report = DramaticReport;
    const NAME: &'static str = "dramatic";
    const CITATION: &'static str = "N. Klinger, J. Sander, P. Yuhala, P. Felber, T. Eisenbarth: DRAMatic Speedup: \
                                    Accelerating HE Operations on a Processing-in-Memory System (shared/seeds/000)";

    fn run(config: &DramaticConfig, progress: &dyn Progress) -> Result<DramaticReport> {
        reproduce(config, progress)
    }

    /// Each row's [`RowReport::comparison`], in the paper's order, then Fig. 3's and Table 1's.
    fn comparison(report: &DramaticReport) -> Vec<Comparison> {
        let mut rows: Vec<Comparison> = report.rows.iter().flat_map(RowReport::comparison).collect();
        rows.extend(report.fig3.iter().flat_map(MultiplyReport::comparison));
        rows.extend(report.table1.iter().flat_map(Table1Report::comparison));
        rows
    }
}

fn target_report(runner: &mut Runner) -> Result<TargetReport> {
    let spec = target_spec();
    let ntt = ntt_ratio_spec();
    Ok(TargetReport::new(
        &spec,
        &runner.outcome(&spec, Variant::Best)?,
        &runner.outcome(&spec, Variant::Barrett)?,
        &ntt,
        &runner.outcome(&ntt, Variant::Best)?,
        &runner.outcome(&ntt, Variant::Barrett)?,
    ))
}

/// One section of a run after its rows: what `pimhe bench reproduce dramatic` prints for it.
pub struct Section {
    /// Its text (a blank line first).
    pub text: String,
    /// Its JSON object with its comparison rows.
    pub json: String,
    /// Its comparison rows, for the run's comparison table.
    pub comparison: Vec<Comparison>,
}

impl Section {
    fn of(report: &(impl Render + Serialize), comparison: Vec<Comparison>) -> Result<Self> {
        Ok(Self { text: format!("\n{}", report.render()), json: with_comparison(report, &comparison)?, comparison })
    }
}
