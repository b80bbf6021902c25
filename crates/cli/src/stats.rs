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
use pimhe_exec::{Backend, CpuBackend};
use pimhe_math::Sampler;
use pimhe_pim::runtime::{OffloadReport, PimBackend};
use pimhe_workloads::stats::{Bfv, Bgv, Dataset, HeScheme, SchemeStats, Statistic, StatsError, StatsPlan, StatsReport};
use serde::Serialize;

use pimhe_bench::format::FIXED_SEED_KEYS;
use pimhe_bench::settings::PimSettings;
use pimhe_bench::Render;

use crate::bench::print_report;
use crate::error::{check_threads, CliError, Result};
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
    /// Fixed-point decimal places [default: the most found in the selected columns].
    #[arg(long)]
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
    /// Server backend: cpu or upmem-emu.
    #[arg(long, default_value = "cpu")]
    backend: String,
    /// upmem-emu: number of DPUs, in parallel mode (a DPU group per prime).
    #[arg(long, default_value_t = 64)]
    dpus: usize,
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

/// What `pimhe stats` prints.
#[derive(Debug, Serialize)]
struct StatsOutput {
    scheme: String,
    backend: String,
    n: usize,
    #[serde(flatten)]
    report: StatsReport,
    /// Client: encoding + encryption, and decryption, summed over plaintext moduli (measured).
    client_encrypt_s: f64,
    client_decrypt_s: f64,
    /// Server wall time (measured; on upmem-emu the emulator's).
    server_wall_s: f64,
    /// upmem-emu: the server's modeled transfer, compute and retrieval, summed over moduli.
    upmem: Option<OffloadReport>,
    /// What the user must know about this run's security ([`FIXED_SEED_KEYS`] with `--seed`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    warnings: Vec<&'static str>,
}

pub fn run(args: &StatsArgs) -> Result<()> {
    match args.scheme.as_str() {
        "bgv" => run_with::<Bgv>(args),
        "bfv" => run_with::<Bfv>(args),
        other => Err(CliError::usage(format!("--scheme {other}: allowed: bgv, bfv"))),
    }
}

fn run_with<S: HeScheme>(args: &StatsArgs) -> Result<()> {
    // Every flag is checked before the data is read or generated, which can take a while.
    check_threads(args.threads)?;
    match args.backend.as_str() {
        "cpu" => {}
        // The range now; the DPUs per prime once the parameters are known.
        "upmem-emu" => drop(PimSettings::parallel(args.dpus, 1)?),
        other => return Err(CliError::usage(format!("--backend {other}: allowed: cpu, upmem-emu"))),
    }
    let max_bits = S::max_plain_bits(args.n).map_err(|e| CliError::usage(format!("--n {}: {e}", args.n)))?;
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
    let contexts = plan
        .plain_moduli()
        .iter()
        .map(|&t| S::context(S::parameters(args.n, t)?))
        .collect::<std::result::Result<Vec<_>, _>>()?;

    let (report, upmem) = if args.backend == "cpu" {
        (execute::<S, _>(&plan, &client, &[&client], contexts, &mut sampler)?, None)
    } else {
        let servers = contexts
            .iter()
            .map(|ctx| {
                let primes = S::backend_primes(ctx);
                let settings = PimSettings::parallel(args.dpus, primes.len())?;
                settings.backend(args.n, &primes)
            })
            .collect::<Result<Vec<_>>>()?;
        let report = execute::<S, _>(&plan, &client, &servers.iter().collect::<Vec<_>>(), contexts, &mut sampler)?;
        let costs = servers.iter().map(PimBackend::report).collect::<std::result::Result<Vec<_>, _>>()?;
        (report, Some(combined(costs)))
    };
    let sum = |f: fn(&pimhe_workloads::stats::ModulusRun) -> f64| report.runs.iter().map(f).sum::<f64>();
    let output = StatsOutput {
        scheme: S::NAME.to_string(),
        backend: args.backend.clone(),
        n: args.n,
        client_encrypt_s: sum(|r| r.client_encrypt_s),
        client_decrypt_s: sum(|r| r.client_decrypt_s),
        server_wall_s: sum(|r| r.server_s),
        upmem,
        report,
        warnings: if args.seed.is_some() { vec![FIXED_SEED_KEYS] } else { Vec::new() },
    };
    print_report(&output, args.json)
}

/// Runs `plan` with one scheme per context (parameter set), the server of the i-th on `servers[i]` (or
/// all on `servers[0]` when only one is given).
fn execute<S: HeScheme, B: Backend>(
    plan: &StatsPlan,
    client: &CpuBackend,
    servers: &[&B],
    contexts: Vec<Arc<S::Context>>,
    sampler: &mut Sampler,
) -> Result<StatsReport> {
    let mut schemes = contexts
        .into_iter()
        .zip(servers.iter().cycle())
        .map(|(ctx, server)| SchemeStats::<S, _, _>::with_context(client, *server, ctx, sampler.fork()))
        .collect::<std::result::Result<Vec<_>, _>>()?;
    plan.execute(&mut schemes).map_err(stats_error)
}

/// The reports of the servers of every plaintext modulus, added up.
fn combined(reports: Vec<OffloadReport>) -> OffloadReport {
    reports
        .into_iter()
        .reduce(|mut total, r| {
            total.accumulate(&r);
            total
        })
        .unwrap_or_default()
}

fn stats_error(e: StatsError) -> CliError {
    match e {
        StatsError::Input(m) | StatsError::Capacity(m) => CliError::usage(m),
        StatsError::Scheme(e) => e.into(),
    }
}

impl Render for StatsOutput {
    fn render(&self) -> String {
        let r = &self.report;
        let moduli: Vec<String> = r.plain_moduli.iter().map(u32::to_string).collect();
        let mut out = format!(
            "pimhe stats {}: {} users, columns {}, fixed point 10^-{}, {} N={} t={}{}, server on {}\n",
            r.statistic.name(),
            r.users,
            r.columns.join(","),
            r.decimals,
            self.scheme,
            self.n,
            moduli.join("*"),
            if moduli.len() > 1 { " (CRT)" } else { "" },
            self.backend
        );
        out += &format!("  {:<20} {:>20} {:>20} {:>12}\n", "", "encrypted", "plaintext", "|error|");
        for e in &r.estimates {
            out += &format!("  {:<20} {:>20.10} {:>20.10} {:>12.3e}\n", e.name, e.encrypted, e.plaintext, e.abs_error);
        }
        let budget = r.runs.iter().map(|run| run.noise_budget_bits).min().unwrap_or(0);
        out += &format!(
            "  every decrypted aggregate equals the plaintext sum: {}; noise budget left {budget} bits\n",
            if r.aggregates_exact { "yes" } else { "NO" }
        );
        out += &format!(
            "  client (cpu, measured): encode + encrypt {:.3} s, decrypt {:.3} s\n  server wall time: {:.3} s{}",
            self.client_encrypt_s,
            self.client_decrypt_s,
            self.server_wall_s,
            if self.upmem.is_some() { " (emulator)" } else { "" }
        );
        for warning in &self.warnings {
            out += &format!("\n  {warning} (--seed): anyone with the seed can make the secret key");
        }
        if let Some(u) = &self.upmem {
            out += &format!(
                "\n  server on UPMEM, {}: transfer {:.6} s, compute {:.6} s, retrieve {:.6} s, total {:.6} s, energy \
                 {:.3} J; {} launches, host steps {:.3} s measured",
                u.model,
                u.transfer_s,
                u.compute_s,
                u.retrieve_s,
                u.total_s(),
                u.energy_j,
                u.launches,
                u.host_fallback_s
            );
        }
        out
    }
}
