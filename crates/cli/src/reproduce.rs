//! `pimhe bench reproduce dramatic`: the arguments, and the rows printed as
//! [`pimhe_bench::reproduce`] makes them (a progress bar on stderr counts them).

use clap::{Args, ValueEnum};
use pimhe_bench::format::to_json;
use pimhe_bench::reproduce::{Experiment, ReproduceConfig, Reproduction, DEFAULT_MAX_EMULATION_S};
use pimhe_bench::Render;

use crate::error::Result;
use crate::progress::TermProgress;

/// Papers whose experiments can be reproduced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExperimentArg {
    /// DRAMatic (Tables 2-5): NTT, iNTT, BGV multiplication and the combined pipeline.
    Dramatic,
}

/// Arguments of `pimhe bench reproduce`.
#[derive(Debug, Clone, Args)]
pub struct ReproduceArgs {
    /// The paper whose experiments to run.
    #[arg(value_enum)]
    pub experiment: ExperimentArg,

    /// DPU kernel arithmetic: barrett (DRAMatic's own: the model-fidelity check) or best
    /// (pimhe's: the speed-up).
    #[arg(long, default_value = "barrett")]
    pub kernel: String,

    /// Print one JSON object per row (and one for the target) instead of a table.
    #[arg(long)]
    pub json: bool,

    /// Only these rows: comma-separated row ids or id prefixes ending at a '-' (t2, t3-ntt,
    /// t5-pipeline-128-seq), and `target` for the target summary.
    #[arg(long, hide = true)]
    pub rows: Option<String>,

    /// Emulation budget of one row in seconds.
    #[arg(long, hide = true, default_value_t = DEFAULT_MAX_EMULATION_S)]
    pub max_emulation_s: f64,
}

impl From<&ReproduceArgs> for ReproduceConfig {
    fn from(args: &ReproduceArgs) -> Self {
        let experiment = match args.experiment {
            ExperimentArg::Dramatic => Experiment::Dramatic,
        };
        Self { experiment, kernel: args.kernel.clone(), rows: args.rows.clone(), max_emulation_s: args.max_emulation_s }
    }
}

/// Runs `pimhe bench reproduce`: each row is printed as soon as it is modeled.
pub fn run(args: &ReproduceArgs) -> Result<()> {
    let mut reproduction = Reproduction::new(&args.into())?;
    let progress = TermProgress::new(args.json);
    if !args.json {
        println!("{}", reproduction.intro());
    }
    let reports = reproduction.run_rows(&progress, |report| {
        progress.println(&if args.json { to_json(report)? } else { report.render() });
        Ok(())
    })?;
    if !args.json && !reports.is_empty() {
        progress.println(&reproduction.footer(&reports));
    }
    if let Some(target) = reproduction.target(&progress)? {
        println!("{}", if args.json { to_json(&target)? } else { target.render() });
    }
    if !args.json {
        println!("(emulation took {:.1} s on this host)", reproduction.elapsed_s());
    }
    Ok(())
}
