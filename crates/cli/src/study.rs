//! The client/server statistics with files: each command is one party, on its own machine if
//! need be, and a thin shell over `pimhe_workloads::stats::study`'s functions of the same
//! names, which own the files, their permissions and every check; the server's evaluation on
//! a target and what each step prints are `pimhe_bench::measure::study`'s.
//!
//! - `pimhe keygen` (the analyst): declares the study, writes `study.json` and the public keys
//!   to a public directory and the secret keys to a separate one.
//! - `pimhe encrypt` (each user): reads the public directory and a CSV, writes one submission
//!   file per row; no secret is read.
//! - `pimhe eval` (the server): reads the public directory and the submissions, adds them up on
//!   any backend, writes the aggregates; no secret is read.
//! - `pimhe decrypt` (the analyst): reads the aggregates with the secret keys and prints the
//!   statistic.

use std::path::PathBuf;

use clap::{Args, ValueEnum};
use pimhe_bench::measure::study::{evaluate, study_error};
use pimhe_bench::target::{TargetFlags, TargetRules};
use pimhe_exec::CpuBackend;
use pimhe_workloads::stats::study::{decrypt_files, encrypt_file, keygen_files, Overwrite, StudySpec};
use pimhe_workloads::stats::Statistic;

use crate::bench::print_report;
use crate::error::{check_threads, CliError, Result};
use crate::progress::TermProgress;
use crate::target::TargetArgs;

/// Arguments of `pimhe keygen`.
#[derive(Debug, Args)]
pub struct KeygenArgs {
    /// The statistic the study computes.
    #[arg(long, value_enum)]
    statistic: StatisticArg,
    /// The columns each user submits, comma separated (linreg: features, then the response).
    #[arg(long, value_delimiter = ',', required = true)]
    columns: Vec<String>,
    /// Fixed-point decimal places of the values (0..=9).
    #[arg(long, default_value_t = 0)]
    decimals: u32,
    /// The largest magnitude of a value any user may submit, in the columns' units.
    #[arg(long)]
    max_value: f64,
    /// The most users whose submissions the server may add up.
    #[arg(long)]
    max_users: usize,
    /// The fewest users whose aggregate decrypt accepts: a statistic of one user is that
    /// user's data.
    #[arg(long, default_value_t = 2)]
    min_users: usize,
    /// Scheme: bgv or bfv.
    #[arg(long, default_value = "bgv")]
    scheme: String,
    /// Ring degree (a 128-bit preset) [default: the smallest whose worst-case noise bound holds
    /// the bounds (BGV; BFV mean), or whose measured noise budget does (BFV variance, linreg),
    /// else 8192; keygen says which and why].
    #[arg(long)]
    n: Option<usize>,
    /// Where the study and the public keys go (for the users and the server).
    #[arg(long)]
    public_dir: PathBuf,
    /// Where the secret keys go (the analyst's only, created 0700; not the public directory,
    /// nor inside or around it).
    #[arg(long)]
    secret_dir: PathBuf,
    /// Replace the keys of a study already in these directories (its submissions are then
    /// refused).
    #[arg(long)]
    force: bool,
    /// CPU threads.
    #[arg(long)]
    threads: Option<usize>,
    /// Seed of the keys, for reproducible tests only: anyone with the seed can make the secret
    /// key, and every command that reads the study says so [default: from the OS].
    #[arg(long)]
    seed: Option<u64>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

/// Arguments of `pimhe encrypt`.
#[derive(Debug, Args)]
pub struct EncryptArgs {
    /// The study's public directory (`pimhe keygen --public-dir`).
    #[arg(long)]
    public_dir: PathBuf,
    /// CSV file with a header row holding the study's columns; each row is one user.
    #[arg(long)]
    input: PathBuf,
    /// Directory for the submissions, one file per row, named by its random identifier
    /// (`<identifier>.pimhe`): users may share a directory.
    #[arg(long)]
    out: PathBuf,
    /// CPU threads.
    #[arg(long)]
    threads: Option<usize>,
    /// Seed of the encryption randomness and identifiers, for reproducible tests only
    /// [default: from the OS].
    #[arg(long)]
    seed: Option<u64>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

/// Arguments of `pimhe eval`.
#[derive(Debug, Args)]
pub struct EvalArgs {
    /// The study's public directory (`pimhe keygen --public-dir`).
    #[arg(long)]
    public_dir: PathBuf,
    /// Directory of submission files (every `*.pimhe` in it).
    #[arg(long)]
    submissions: PathBuf,
    /// File for the aggregates (not replaced if it exists, unless --force).
    #[arg(long)]
    out: PathBuf,
    /// Replace --out if it exists.
    #[arg(long)]
    force: bool,
    /// The server's backend: cpu (default), upmem-emu (parallel mode, a DPU group per prime)
    /// or nearbank.
    #[command(flatten)]
    target: TargetArgs,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

/// Arguments of `pimhe decrypt`.
#[derive(Debug, Args)]
pub struct DecryptArgs {
    /// The study's public directory (`pimhe keygen --public-dir`).
    #[arg(long)]
    public_dir: PathBuf,
    /// The analyst's secret directory (`pimhe keygen --secret-dir`).
    #[arg(long)]
    secret_dir: PathBuf,
    /// The aggregates file (`pimhe eval --out`).
    #[arg(long)]
    input: PathBuf,
    /// CPU threads.
    #[arg(long)]
    threads: Option<usize>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

/// The statistic of `pimhe stats` and `pimhe study`.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub(crate) enum StatisticArg {
    Mean,
    Variance,
    Linreg,
}

impl From<StatisticArg> for Statistic {
    fn from(arg: StatisticArg) -> Self {
        match arg {
            StatisticArg::Mean => Statistic::Mean,
            StatisticArg::Variance => Statistic::Variance,
            StatisticArg::Linreg => Statistic::Linreg,
        }
    }
}

fn overwrite(force: bool) -> Overwrite {
    if force {
        Overwrite::Force
    } else {
        Overwrite::Refuse
    }
}

pub fn keygen(args: &KeygenArgs) -> Result<()> {
    check_threads(args.threads)?;
    if !args.max_value.is_finite() || args.max_value < 0.0 {
        return Err(CliError::usage(format!("--max-value {}: a finite value >= 0 is needed", args.max_value)));
    }
    let scale = 10f64.powi(args.decimals.min(9) as i32);
    let max_value = (args.max_value * scale).ceil();
    if max_value >= 2f64.powi(63) {
        return Err(CliError::usage(format!(
            "--max-value {} at 10^{} per unit passes 2^63",
            args.max_value, args.decimals
        )));
    }
    let spec = StudySpec {
        statistic: args.statistic.into(),
        columns: args.columns.clone(),
        decimals: args.decimals,
        max_value: max_value as u64,
        max_users: args.max_users,
        min_users: args.min_users,
        n: args.n,
    };
    let cpu = CpuBackend::new(args.threads)?;
    let outcome =
        keygen_files(&cpu, &spec, &args.scheme, &args.public_dir, &args.secret_dir, args.seed, overwrite(args.force))
            .map_err(study_error)?;
    print_report(&outcome, args.json)
}

pub fn encrypt(args: &EncryptArgs) -> Result<()> {
    check_threads(args.threads)?;
    let cpu = CpuBackend::new(args.threads)?;
    let progress = TermProgress::new(args.json);
    let outcome =
        encrypt_file(&cpu, &args.public_dir, &args.input, &args.out, args.seed, &progress).map_err(study_error)?;
    print_report(&outcome, args.json)
}

pub fn eval(args: &EvalArgs) -> Result<()> {
    let target = TargetFlags::from(&args.target).parse(&TargetRules::SERVER)?;
    let progress = TermProgress::new(args.json);
    let output = evaluate(&target, &args.public_dir, &args.submissions, &args.out, overwrite(args.force), &progress)?;
    print_report(&output, args.json)
}

pub fn decrypt(args: &DecryptArgs) -> Result<()> {
    check_threads(args.threads)?;
    let cpu = CpuBackend::new(args.threads)?;
    let outcome = decrypt_files(&cpu, &args.public_dir, &args.secret_dir, &args.input).map_err(study_error)?;
    print_report(&outcome, args.json)
}
