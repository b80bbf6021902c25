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
use pimhe_bench::measure::stats::{self, Server, StatsOutput};
use pimhe_bench::target::upmem::{PimSettings, DEFAULT_DPUS};
use pimhe_exec::CpuBackend;
use pimhe_math::Sampler;
use pimhe_nearbank::NearbankBackend;
use pimhe_workloads::stats::{Dataset, Statistic, StatsError, StatsPlan};

use crate::bench::print_report;
use crate::error::{check_threads, reject_flags_off, CliError, Result};
use crate::progress::TermProgress;

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
    /// Server backend: cpu, upmem-emu or nearbank (a GPU with near-bank PIM, Anaheim: computed
    /// on this host, the server's work modeled).
    #[arg(long, default_value = "cpu")]
    backend: String,
    /// upmem-emu: number of DPUs, in parallel mode (a DPU group per prime) [default: 64].
    #[arg(long)]
    dpus: Option<usize>,
    /// nearbank: the system of Anaheim's Table III, a100-nearbank, a100-custom-hbm or
    /// rtx4090-nearbank [default: a100-nearbank].
    #[arg(long)]
    system: Option<String>,
    /// nearbank: entries B of each PIM unit's data buffer [default: the system's].
    #[arg(long)]
    buffer_entries: Option<usize>,
    /// Ring degree (a 128-bit preset).
    #[arg(long, default_value_t = 8192)]
    n: usize,
    /// CPU threads.
    #[arg(long)]
    threads: Option<usize>,
    /// Seed of keys and encryption randomness, for reproducible tests only: anyone with the seed
    /// can make the secret key (the output says "insecure") [default: from the OS].
    #[arg(long)]
    seed: Option<u64>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum StatisticArg {
    Mean,
    Variance,
    Linreg,
}

pub fn run(args: &StatsArgs) -> Result<()> {
    // Every flag is checked before the data is read or generated, which can take a while.
    if !["bgv", "bfv"].contains(&args.scheme.as_str()) {
        return Err(CliError::usage(format!("--scheme {}: allowed: bgv, bfv", args.scheme)));
    }
    check_threads(args.threads)?;
    let dpus = args.dpus.unwrap_or(DEFAULT_DPUS);
    match args.backend.as_str() {
        "cpu" => {}
        // The range now; the DPUs per prime once the parameters are known.
        "upmem-emu" => drop(PimSettings::parallel(dpus, 1)?),
        "nearbank" => {}
        other => return Err(CliError::usage(format!("--backend {other}: allowed: cpu, upmem-emu, nearbank"))),
    }
    if args.backend != "upmem-emu" {
        reject_flags_off("upmem-emu", &args.backend, &[("--dpus", args.dpus.is_some())])?;
    }
    if args.backend != "nearbank" {
        pimhe_bench::target::nearbank::reject_flags(&args.backend, args.system.as_deref(), args.buffer_entries)?;
    }
    let model = match args.backend.as_str() {
        "nearbank" => Some(pimhe_bench::target::nearbank::model(args.system.as_deref(), args.buffer_entries)?),
        _ => None,
    };
    let max_bits = stats::max_plain_bits(&args.scheme, args.n).map_err(stats_error)?;
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
    let statistic = match args.statistic {
        StatisticArg::Mean => Statistic::Mean,
        StatisticArg::Variance => Statistic::Variance,
        StatisticArg::Linreg => Statistic::Linreg,
    };
    let plan = StatsPlan::new(statistic, data, args.n, max_bits)
        .map_err(stats_error)?
        .with_progress(Arc::new(TermProgress::new(args.json)));
    let client = CpuBackend::new(args.threads)?;
    let mut sampler = match args.seed {
        Some(seed) => Sampler::from_seed_u64(seed),
        None => Sampler::from_os().map_err(|e| CliError::Failed(format!("no OS randomness: {e}")))?,
    };
    let make_pim = |primes: &[u32]| {
        PimSettings::parallel(dpus, primes.len())
            .and_then(|settings| settings.backend(args.n, primes))
            .map_err(|e| StatsError::Input(e.to_string()))
    };
    let nearbank = model.as_ref().map(|_| NearbankBackend::new(args.threads)).transpose()?;
    let server = match (args.backend.as_str(), &nearbank, &model) {
        ("cpu", _, _) => Server::Cpu(&client),
        (_, Some(nearbank), Some(model)) => Server::Nearbank(nearbank, model),
        _ => Server::Pim(&make_pim),
    };
    let result = stats::run(&args.scheme, &plan, args.n, &client, &server, &mut sampler).map_err(stats_error)?;
    let output = StatsOutput::new(&args.scheme, &args.backend, args.n, result, args.seed.is_some());
    print_report(&output, args.json)
}

fn stats_error(e: StatsError) -> CliError {
    match e {
        StatsError::Input(m) | StatsError::Capacity(m) => CliError::usage(m),
        StatsError::Integrity(m) => CliError::Failed(m),
        StatsError::Scheme(e) => e.into(),
    }
}
