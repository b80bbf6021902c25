//! The client/server statistics with files: each command is one party, on its own machine if
//! need be, and a thin shell over `pimhe_workloads::stats::study`'s functions of the same
//! names, which own the files, their permissions and every check.
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
use pimhe_bench::target::nearbank::NearbankOutcome;
use pimhe_bench::target::upmem::server_cost_line;
use pimhe_bench::target::{Cost, Device, DeviceNeeds, Job, TargetFlags, TargetRules};
use pimhe_exec::{Backend, CpuBackend};
use pimhe_pim::runtime::OffloadReport;
use pimhe_workloads::stats::study::{
    decrypt_files, encrypt_file, evaluate_files, keygen_files, read_study, DecryptOutcome, EncryptOutcome, EvalOutcome,
    KeygenOutcome, Overwrite, StudySpec, STUDY_FILE,
};
use pimhe_workloads::stats::{Statistic, StatsError};
use serde::Serialize;

use crate::bench::print_report;
use crate::error::{check_threads, CliError, Result};
use crate::progress::TermProgress;
use crate::target::TargetArgs;
use pimhe_bench::format::{format_seconds, Render};

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
    /// Ring degree (a 128-bit preset) [default: the smallest the bounds allow where the server
    /// only adds (BGV mean), else 8192; keygen says which and why].
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

#[derive(Debug, Clone, Copy, ValueEnum)]
enum StatisticArg {
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

/// What `pimhe eval` prints: the library's outcome, the backend and its modeled cost.
#[derive(Debug, Serialize)]
struct EvalOutput {
    #[serde(flatten)]
    outcome: EvalOutcome,
    backend: &'static str,
    upmem: Option<OffloadReport>,
    #[serde(skip_serializing_if = "Option::is_none")]
    nearbank: Option<NearbankOutcome>,
}

/// A library outcome, printed by the CLI.
#[derive(Debug, Serialize)]
#[serde(transparent)]
struct Shown<T>(T);

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
    print_report(&Shown(outcome), args.json)
}

pub fn encrypt(args: &EncryptArgs) -> Result<()> {
    check_threads(args.threads)?;
    let cpu = CpuBackend::new(args.threads)?;
    let progress = TermProgress::new(args.json);
    let outcome =
        encrypt_file(&cpu, &args.public_dir, &args.input, &args.out, args.seed, &progress).map_err(study_error)?;
    print_report(&Shown(outcome), args.json)
}

pub fn eval(args: &EvalArgs) -> Result<()> {
    let target = TargetFlags::from(&args.target).parse(&TargetRules::SERVER)?;
    let study = read_study(&args.public_dir).map_err(study_error)?;
    // One backend holds every prime of every plaintext modulus's parameters; parallel mode, as
    // the server has always been modeled.
    let needs = DeviceNeeds { n: study.n, primes: study.backend_primes().map_err(study_error)? };
    let ran = target.run(&needs, Evaluation { args, progress: &TermProgress::new(args.json) })?;
    let (upmem, nearbank) = match ran.cost {
        Cost::Cpu { .. } => (None, None),
        Cost::Upmem(report) => (Some(report), None),
        Cost::Nearbank(outcome) => (None, Some(outcome)),
    };
    print_report(&EvalOutput { outcome: ran.output, backend: target.name(), upmem, nearbank }, args.json)
}

/// The server's evaluation, on whichever backend the target builds.
struct Evaluation<'a> {
    args: &'a EvalArgs,
    progress: &'a TermProgress,
}

impl Job for Evaluation<'_> {
    type Output = EvalOutcome;

    fn pricing_copy(&self) -> Option<Self> {
        None // it writes the aggregate file
    }

    fn run<B: Backend>(self, device: &Device<'_, B>) -> Result<EvalOutcome> {
        let a = self.args;
        evaluate_files(device.backend, &a.public_dir, &a.submissions, &a.out, overwrite(a.force), self.progress)
            .map_err(study_error)
    }
}

pub fn decrypt(args: &DecryptArgs) -> Result<()> {
    check_threads(args.threads)?;
    let cpu = CpuBackend::new(args.threads)?;
    let outcome = decrypt_files(&cpu, &args.public_dir, &args.secret_dir, &args.input).map_err(study_error)?;
    print_report(&Shown(outcome), args.json)
}

/// A study's errors are the caller's (bad flags, files of another study, damaged files), but
/// for a backend that failed and aggregates that failed decryption's checks.
fn study_error(e: StatsError) -> CliError {
    match e {
        StatsError::Input(m) | StatsError::Capacity(m) => CliError::usage(m),
        StatsError::Integrity(m) => CliError::Failed(m),
        StatsError::Scheme(e @ pimhe_schemes::SchemeError::Exec(_)) => e.into(),
        StatsError::Scheme(e) => CliError::usage(e.to_string()),
    }
}

/// The warnings of an outcome, one line each.
fn warning_lines(warnings: &[&str]) -> String {
    warnings.iter().map(|w| format!("\n  {w}")).collect()
}

impl Render for Shown<KeygenOutcome> {
    fn render(&self) -> String {
        let s = &self.0.study;
        let mut out = format!(
            "pimhe keygen: study {} of the {} of {} ({} N={}, t={}), values up to {} (10^-{} units), {} to {} users\n",
            s.id,
            s.statistic.name(),
            s.columns.join(","),
            s.scheme,
            s.n,
            s.plain_moduli.iter().map(u32::to_string).collect::<Vec<_>>().join("*"),
            s.max_value,
            s.decimals,
            s.min_users,
            s.max_users
        );
        let z = &self.0.sizing;
        out += &format!(
            "  submissions: {} bytes each ({} of {} primes kept; {} bytes of ciphertext vs {} at N=8192 with every \
             prime)\n  why: {}\n",
            self.0.submission_bytes,
            z.submission_primes,
            z.data_primes,
            z.ciphertext_bytes,
            z.default_ciphertext_bytes,
            z.why
        );
        out += &format!(
            "  public (users and server): {} ({} bytes) and {}\n  secret (analyst only): {}",
            self.0.public_keys.display(),
            self.0.public_keys_bytes,
            STUDY_FILE,
            self.0.secret_keys.display()
        );
        out + &warning_lines(&self.0.warnings)
    }
}

impl Render for Shown<EncryptOutcome> {
    fn render(&self) -> String {
        let o = &self.0;
        format!(
            "pimhe encrypt: {} users, one submission each in {} ({} bytes per user), {} encrypting",
            o.users,
            o.out.display(),
            o.bytes_per_user,
            format_seconds(o.encrypt_s)
        ) + &warning_lines(&o.warnings)
    }
}

impl Render for EvalOutput {
    fn render(&self) -> String {
        let o = &self.outcome;
        let mut out = format!(
            "pimhe eval: {} submissions added up on {} into {} (load {}, compute {}; no secret key read)",
            o.users,
            self.backend,
            o.out.display(),
            format_seconds(o.load_s),
            format_seconds(o.server_s)
        );
        if let Some(n) = &self.nearbank {
            out += &format!("\n  server on {}:\n{}", n.system, n.render());
        }
        if let Some(u) = &self.upmem {
            out += &server_cost_line(u);
        }
        out + &warning_lines(&o.warnings)
    }
}

impl Render for Shown<DecryptOutcome> {
    fn render(&self) -> String {
        let r = &self.0.result;
        let mut out = format!("pimhe decrypt: {} over {} users\n", r.statistic.name(), r.users);
        for e in &r.estimates {
            out += &format!("  {:<20} {:>20.10}\n", e.name, e.value);
        }
        out + &format!("  noise budget left {} bits", r.noise_budget_bits) + &warning_lines(&self.0.warnings)
    }
}
