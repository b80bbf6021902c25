//! `pimhe helr`: logistic-regression training on encrypted data (HELR), as a thin shell over
//! [`pimhe_bench::measure::helr`]: read the CSV, train on the chosen backend with a progress
//! bar, print the report (text or one JSON object).

use std::path::PathBuf;

use clap::Args;
use pimhe_bench::measure::helr::{self, HelrBenchConfig};
use pimhe_bench::target::TargetFlags;

use crate::bench::print_report;
use crate::error::Result;
use crate::progress::TermProgress;
use crate::target::TargetArgs;

/// Arguments of `pimhe helr`.
#[derive(Debug, Args)]
pub struct HelrArgs {
    /// CSV file with a header row: numeric feature columns and a 0/1 label column (e.g.
    /// data/helr/digits_3_8.csv).
    #[arg(long)]
    input: PathBuf,
    /// The label column's name (data/helr/digits_3_8.csv: label).
    #[arg(long)]
    label: String,
    /// Gradient steps, one batch each.
    #[arg(long, default_value_t = 32)]
    iterations: usize,
    /// Samples per batch [default: the most the slots hold: N/2 over the features' row width].
    #[arg(long)]
    batch: Option<usize>,
    /// The learning-rate constant gamma (the rate is gamma / k at iteration k): positive.
    #[arg(long, default_value_t = 0.5)]
    learning_rate: f64,
    /// Fraction of the samples held out for the accuracy, strictly between 0 and 1.
    #[arg(long, default_value_t = 0.25)]
    test_fraction: f64,
    /// Ring degree: 65536 (the 128-bit bootstrapping preset: a bootstrapping takes about half a
    /// minute and 12 GB) or 1024 to 16384 (INSECURE presets, for quick runs).
    #[arg(long, default_value_t = 2048)]
    n: usize,
    /// Iterations between two bootstrappings (each bootstrapping leaves 5 k + 1 levels; at most
    /// 2 at N = 65536).
    #[arg(long, default_value_t = 1)]
    per_bootstrap: usize,
    /// Seed of the keys and the encryption randomness.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Where the server runs [default: cpu]; on upmem-emu a DPU group per prime (parallel
    /// mode, so at least a DPU per prime) unless --mode says otherwise.
    #[command(flatten)]
    target: TargetArgs,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

pub fn run(args: &HelrArgs) -> Result<()> {
    let config = HelrBenchConfig {
        test_fraction: args.test_fraction,
        iterations: args.iterations,
        batch: args.batch,
        learning_rate: args.learning_rate,
        n: args.n,
        per_bootstrap: args.per_bootstrap,
        seed: args.seed,
        target: TargetFlags::from(&args.target).parse(&helr::RULES)?,
    };
    let data = helr::load(&args.input, &args.label)?;
    let report = helr::run(&data, &config, &TermProgress::new(args.json))?;
    print_report(&report, args.json)
}
