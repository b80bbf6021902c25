//! `pimhe stats mean|variance|linreg`: encrypted statistics over users (seed 002).
//!
//! The client (key generation, encoding, encryption, decryption) runs on the CPU; the server's
//! aggregation on the chosen backend, the users' ciphertexts sent to it and the aggregates
//! returned. On `upmem-emu` the server's modeled transfer, compute and retrieval come from the
//! UPMEM model beside the emulator's wall time.

use std::fs::File;
use std::path::PathBuf;
use std::sync::Arc;

use clap::Args;
use pimhe_bench::measure::stats;
use pimhe_bench::target::{TargetFlags, TargetRules};
use pimhe_bench::Progress;
use pimhe_exec::CpuBackend;
use pimhe_workloads::stats::{Dataset, StatsError};

use crate::bench::print_report;
use crate::error::{CliError, Result};
use crate::progress::TermProgress;
use crate::study::StatisticArg;
use crate::target::TargetArgs;

/// Arguments of `pimhe stats`.
#[derive(Debug, Args)]
pub struct StatsArgs {
    /// mean, variance (population: the mean of x^2 minus the squared mean) or linreg (least squares of the last
    /// column on the others, with an intercept).
    #[arg(value_enum)]
    statistic: StatisticArg,
    /// CSV file with a header row, one row per user.
    #[arg(long, conflicts_with_all = ["users", "synthetic"], required_unless_present = "users")]
    input: Option<PathBuf>,
    /// Numeric columns to use, comma separated (linreg: features, then the response).
    #[arg(long, value_delimiter = ',', required = true)]
    columns: Vec<String>,
    /// Fixed-point decimal places of --input [default: the most found in the selected columns]
    /// (synthetic data has 2).
    #[arg(long, conflicts_with = "synthetic")]
    decimals: Option<u32>,
    /// Generate this many users instead of reading --input (columns x1..x8, y).
    #[arg(long, requires = "synthetic")]
    users: Option<usize>,
    /// Seed of the synthetic data.
    #[arg(long, requires = "users")]
    synthetic: Option<u64>,
    /// Scheme: bgv or bfv (BEHZ full-RNS).
    #[arg(long, default_value = "bgv")]
    scheme: String,
    /// The server's backend: cpu (default), upmem-emu (parallel mode, a DPU group per prime)
    /// or nearbank; --threads sets the client's CPU threads too.
    #[command(flatten)]
    target: TargetArgs,
    /// Ring degree (a 128-bit preset).
    #[arg(long, default_value_t = 8192)]
    n: usize,
    /// Seed of keys and encryption randomness, for reproducible tests only: anyone with the seed
    /// can make the secret key (the output says "insecure") [default: from the OS].
    #[arg(long)]
    seed: Option<u64>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

pub fn run(args: &StatsArgs) -> Result<()> {
    // Every flag is checked before the data is read or generated, which can take a while.
    if !["bgv", "bfv"].contains(&args.scheme.as_str()) {
        return Err(CliError::usage(format!("--scheme {}: allowed: bgv, bfv", args.scheme)));
    }
    let target = TargetFlags::from(&args.target).parse(&TargetRules::SERVER)?;
    // --n first: its error names the flag before any data is read.
    stats::max_plain_bits(&args.scheme, args.n).map_err(stats_error)?;
    let names: Vec<&str> = args.columns.iter().map(String::as_str).collect();
    let data = match (&args.input, args.users, args.synthetic) {
        (Some(path), _, _) => {
            let file = File::open(path)
                .map_err(|e| CliError::usage(format!("cannot open --input {}: {e}", path.display())))?;
            Dataset::from_csv(file, &names, args.decimals)
        }
        (None, Some(users), Some(seed)) => Dataset::synthetic(users, seed, &names),
        _ => return Err(CliError::usage("give --input FILE.csv, or --users N --synthetic SEED")),
    }
    .map_err(stats_error)?;
    let client = CpuBackend::new(target.threads())?;
    let progress: Arc<dyn Progress> = Arc::new(TermProgress::new(args.json));
    let output = stats::run_statistic(
        args.statistic.into(),
        data,
        &args.scheme,
        args.n,
        &client,
        &target,
        args.seed,
        Some(progress),
    )
    .map_err(stats_error)?;
    print_report(&output, args.json)
}

fn stats_error(e: StatsError) -> CliError {
    match e {
        StatsError::Input(m) | StatsError::Capacity(m) => CliError::usage(m),
        StatsError::Integrity(m) => CliError::Failed(m),
        StatsError::Scheme(e) => e.into(),
    }
}
