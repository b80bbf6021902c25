//! The client/server statistics with files (`pimhe_workloads::stats::study`): each command is
//! one party, on its own machine if need be.
//!
//! - `pimhe keygen` (the analyst): declares the study, writes `study.json` and the public keys
//!   to a public directory and the secret keys to a separate one.
//! - `pimhe encrypt` (each user): reads the public directory and a CSV, writes one submission
//!   file per row; no secret is read.
//! - `pimhe eval` (the server): reads the public directory and the submissions, adds them up on
//!   any backend, writes the aggregates; no secret is read.
//! - `pimhe decrypt` (the analyst): reads the aggregates with the secret keys and prints the
//!   statistic.

use std::fs::File;
use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};
use pimhe_bench::settings::PimSettings;
use pimhe_bench::Progress;
use pimhe_exec::{Backend, CpuBackend};
use pimhe_math::Sampler;
use pimhe_pim::runtime::OffloadReport;
use pimhe_schemes::serial;
use pimhe_workloads::stats::study::{Study, StudyEstimate, EXTENSION, PUBLIC_KEYS_FILE, SECRET_KEYS_FILE, STUDY_FILE};
use pimhe_workloads::stats::{Bfv, Bgv, Dataset, HeScheme, Statistic, StatsError};
use serde::Serialize;

use crate::bench::print_report;
use crate::error::{check_threads, CliError, Result};
use crate::progress::TermProgress;
use pimhe_bench::format::{format_seconds, Render, FIXED_SEED_KEYS};

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
    /// Scheme: bgv or bfv.
    #[arg(long, default_value = "bgv")]
    scheme: String,
    /// Ring degree (a 128-bit preset).
    #[arg(long, default_value_t = 8192)]
    n: usize,
    /// Where the study and the public keys go (for the users and the server).
    #[arg(long)]
    public_dir: PathBuf,
    /// Where the secret keys go (the analyst's only; not the public directory).
    #[arg(long)]
    secret_dir: PathBuf,
    /// CPU threads.
    #[arg(long)]
    threads: Option<usize>,
    /// Seed of the keys, for reproducible tests only: anyone with the seed can make the secret
    /// key [default: from the OS].
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
    /// Directory for the submissions, one file per row (`user-<row>.pimhe`).
    #[arg(long)]
    out: PathBuf,
    /// CPU threads.
    #[arg(long)]
    threads: Option<usize>,
    /// Seed of the encryption randomness, for reproducible tests only [default: from the OS].
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
    /// File for the aggregates.
    #[arg(long)]
    out: PathBuf,
    /// Server backend: cpu or upmem-emu.
    #[arg(long, default_value = "cpu")]
    backend: String,
    /// upmem-emu: number of DPUs, in parallel mode (a DPU group per prime).
    #[arg(long, default_value_t = 64)]
    dpus: usize,
    /// CPU threads.
    #[arg(long)]
    threads: Option<usize>,
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

/// Runs `$body` with `$S` the study's scheme type.
macro_rules! with_scheme {
    ($scheme:expr, $S:ident => $body:expr) => {
        match $scheme {
            "bgv" => {
                type $S = Bgv;
                $body
            }
            "bfv" => {
                type $S = Bfv;
                $body
            }
            other => Err(CliError::usage(format!("--scheme {other}: allowed: bgv, bfv"))),
        }
    };
}

/// What `pimhe keygen` prints.
#[derive(Debug, Serialize)]
struct KeygenOutput {
    study: Study,
    public_keys: PathBuf,
    public_keys_bytes: u64,
    secret_keys: PathBuf,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    warnings: Vec<&'static str>,
}

/// What `pimhe encrypt` prints.
#[derive(Debug, Serialize)]
struct EncryptOutput {
    users: usize,
    out: PathBuf,
    bytes_per_user: u64,
    encrypt_s: f64,
}

/// What `pimhe eval` prints.
#[derive(Debug, Serialize)]
struct EvalOutput {
    users: usize,
    backend: String,
    out: PathBuf,
    load_s: f64,
    server_s: f64,
    upmem: Option<OffloadReport>,
}

/// What `pimhe decrypt` prints.
#[derive(Debug, Serialize)]
struct DecryptOutput {
    statistic: Statistic,
    users: usize,
    estimates: Vec<StudyEstimate>,
    noise_budget_bits: u32,
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
    if same_directory(&args.public_dir, &args.secret_dir) {
        return Err(CliError::usage("--secret-dir must not be --public-dir: the server reads the public directory"));
    }
    with_scheme!(args.scheme.as_str(), S => {
        let study = Study::new::<S>(
            args.statistic.into(),
            &args.columns,
            args.decimals,
            max_value as u64,
            args.max_users,
            args.n,
        )
        .map_err(study_error)?;
        let cpu = CpuBackend::new(args.threads)?;
        let (secret, keys) = study.keygen::<S, _>(&cpu, sampler(args.seed)?).map_err(study_error)?;
        create_dir(&args.public_dir)?;
        create_dir(&args.secret_dir)?;
        let public_keys = args.public_dir.join(PUBLIC_KEYS_FILE);
        let secret_keys = args.secret_dir.join(SECRET_KEYS_FILE);
        write(&secret_keys, &secret.to_bytes().map_err(study_error)?, true)?;
        let public_bytes = keys.to_bytes().map_err(study_error)?;
        write(&public_keys, &public_bytes, false)?;
        write(&args.public_dir.join(STUDY_FILE), study.to_json().as_bytes(), false)?;
        let output = KeygenOutput {
            study,
            public_keys,
            public_keys_bytes: public_bytes.len() as u64,
            secret_keys,
            warnings: if args.seed.is_some() { vec![FIXED_SEED_KEYS] } else { Vec::new() },
        };
        print_report(&output, args.json)
    })
}

pub fn encrypt(args: &EncryptArgs) -> Result<()> {
    check_threads(args.threads)?;
    let study = read_study(&args.public_dir)?;
    with_scheme!(study.scheme.as_str(), S => encrypt_with::<S>(&study, args))
}

fn encrypt_with<S: HeScheme>(study: &Study, args: &EncryptArgs) -> Result<()> {
    let cpu = CpuBackend::new(args.threads)?;
    let keys = study.keys_from_bytes::<S>(&read(&args.public_dir.join(PUBLIC_KEYS_FILE))?).map_err(study_error)?;
    let file = File::open(&args.input)
        .map_err(|e| CliError::usage(format!("cannot open --input {}: {e}", args.input.display())))?;
    let columns: Vec<&str> = study.columns.iter().map(String::as_str).collect();
    let data = Dataset::from_csv(file, &columns, Some(study.decimals)).map_err(study_error)?;
    create_dir(&args.out)?;
    let mut sampler = sampler(args.seed)?;
    let progress = TermProgress::new(args.json);
    progress.start(data.users() as u64, "users encrypted");
    let start = std::time::Instant::now();
    let mut bytes_per_user = 0;
    for (row, values) in data.rows().iter().enumerate() {
        let submission = study
            .encrypt_row::<S, _>(&cpu, &keys, values, sampler.fork())
            .map_err(|e| CliError::usage(format!("row {} of {}: {}", row + 2, args.input.display(), study_error(e))))?;
        let bytes = submission.to_bytes(&cpu).map_err(study_error)?;
        bytes_per_user = bytes.len() as u64;
        write(&args.out.join(format!("user-{:06}.{EXTENSION}", row + 1)), &bytes, false)?;
        progress.advance(1);
    }
    progress.finish();
    let output = EncryptOutput {
        users: data.users(),
        out: args.out.clone(),
        bytes_per_user,
        encrypt_s: start.elapsed().as_secs_f64(),
    };
    print_report(&output, args.json)
}

pub fn eval(args: &EvalArgs) -> Result<()> {
    check_threads(args.threads)?;
    let study = read_study(&args.public_dir)?;
    with_scheme!(study.scheme.as_str(), S => match args.backend.as_str() {
        "cpu" => eval_on::<S, _>(&study, args, &CpuBackend::new(args.threads)?, None),
        "upmem-emu" => {
            // One backend holds every prime of every plaintext modulus's parameters.
            let mut primes: Vec<u32> =
                study.contexts::<S>().map_err(study_error)?.iter().flat_map(|c| S::backend_primes(c)).collect();
            primes.sort_unstable();
            primes.dedup();
            let pim = PimSettings::parallel(args.dpus, primes.len())?.backend(study.n, &primes)?;
            eval_on::<S, _>(&study, args, &pim, Some(&|| Ok(pim.report()?)))
        }
        other => Err(CliError::usage(format!("--backend {other}: allowed: cpu, upmem-emu"))),
    })
}

/// The server on `backend`; `modeled` reads a PIM backend's modeled report.
fn eval_on<S: HeScheme, B: Backend>(
    study: &Study,
    args: &EvalArgs,
    backend: &B,
    modeled: Option<&dyn Fn() -> Result<OffloadReport>>,
) -> Result<()> {
    let start = std::time::Instant::now();
    let keys = study.keys_from_bytes::<S>(&read(&args.public_dir.join(PUBLIC_KEYS_FILE))?).map_err(study_error)?;
    let files = submission_files(&args.submissions)?;
    let progress = TermProgress::new(args.json);
    progress.start(files.len() as u64, "submissions loaded");
    let submissions = files
        .iter()
        .map(|path| {
            let submission = study
                .submission_from_bytes(backend, &keys, &read(path)?)
                .map_err(|e| CliError::usage(format!("{}: {}", path.display(), study_error(e))));
            progress.advance(1);
            submission
        })
        .collect::<Result<Vec<_>>>()?;
    progress.finish();
    let load_s = start.elapsed().as_secs_f64();
    let start = std::time::Instant::now();
    let aggregates = study.aggregate::<S, _>(backend, &keys, submissions.iter()).map_err(study_error)?;
    let server_s = start.elapsed().as_secs_f64();
    write(&args.out, &aggregates.to_bytes(backend).map_err(study_error)?, false)?;
    let output = EvalOutput {
        users: aggregates.users,
        backend: args.backend.clone(),
        out: args.out.clone(),
        load_s,
        server_s,
        upmem: modeled.map(|report| report()).transpose()?,
    };
    print_report(&output, args.json)
}

pub fn decrypt(args: &DecryptArgs) -> Result<()> {
    check_threads(args.threads)?;
    let study = read_study(&args.public_dir)?;
    with_scheme!(study.scheme.as_str(), S => {
        let cpu = CpuBackend::new(args.threads)?;
        let keys =
            study.keys_from_bytes::<S>(&read(&args.public_dir.join(PUBLIC_KEYS_FILE))?).map_err(study_error)?;
        let secret =
            study.secret_from_bytes(&keys, &read(&args.secret_dir.join(SECRET_KEYS_FILE))?).map_err(study_error)?;
        let aggregates = study.aggregates_from_bytes(&cpu, &keys, &read(&args.input)?).map_err(study_error)?;
        let result = study.decrypt::<S, _>(&cpu, &secret, &aggregates).map_err(study_error)?;
        let output = DecryptOutput {
            statistic: result.statistic,
            users: result.users,
            estimates: result.estimates,
            noise_budget_bits: result.noise_budget_bits,
        };
        print_report(&output, args.json)
    })
}

/// The study of a public directory.
fn read_study(dir: &Path) -> Result<Study> {
    let path = dir.join(STUDY_FILE);
    let text = std::fs::read_to_string(&path)
        .map_err(|e| CliError::usage(format!("cannot read {}: {e} (made by pimhe keygen)", path.display())))?;
    Study::from_json(&text).map_err(|e| CliError::usage(format!("{}: {}", path.display(), study_error(e))))
}

/// Every `*.pimhe` file of `dir`, in name order.
fn submission_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let entries = std::fs::read_dir(dir)
        .map_err(|e| CliError::usage(format!("cannot read --submissions {}: {e}", dir.display())))?;
    let mut files = Vec::new();
    for entry in entries {
        let path = entry.map_err(|e| CliError::Failed(format!("cannot list {}: {e}", dir.display())))?.path();
        if path.extension().is_some_and(|e| e == EXTENSION) {
            files.push(path);
        }
    }
    files.sort();
    if files.is_empty() {
        return Err(CliError::usage(format!("no *.{EXTENSION} submissions in {}", dir.display())));
    }
    Ok(files)
}

/// A file's bytes, wiped when dropped (they may be a secret key's).
fn read(path: &Path) -> Result<impl std::ops::Deref<Target = Vec<u8>>> {
    serial::load(path).map_err(|e| CliError::usage(e.to_string()))
}

/// Writes `bytes` to `path`; a secret's file is readable by its owner only (on Unix).
fn write(path: &Path, bytes: &[u8], secret: bool) -> Result<()> {
    serial::save(path, bytes).map_err(|e| CliError::Failed(e.to_string()))?;
    #[cfg(unix)]
    if secret {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
            .map_err(|e| CliError::Failed(format!("cannot restrict {}: {e}", path.display())))?;
    }
    #[cfg(not(unix))]
    let _ = secret;
    Ok(())
}

fn create_dir(dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| CliError::Failed(format!("cannot create {}: {e}", dir.display())))
}

/// Whether two paths name the same directory (compared once both exist or as given).
fn same_directory(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

fn sampler(seed: Option<u64>) -> Result<Sampler> {
    match seed {
        Some(seed) => Ok(Sampler::from_seed_u64(seed)),
        None => Sampler::from_os().map_err(|e| CliError::Failed(format!("no OS randomness: {e}"))),
    }
}

/// A study's errors are the caller's (bad flags, files of another study, damaged files), but
/// for a backend that failed.
fn study_error(e: StatsError) -> CliError {
    match e {
        StatsError::Input(m) | StatsError::Capacity(m) => CliError::usage(m),
        StatsError::Scheme(e @ pimhe_schemes::SchemeError::Exec(_)) => e.into(),
        StatsError::Scheme(e) => CliError::usage(e.to_string()),
    }
}

impl Render for KeygenOutput {
    fn render(&self) -> String {
        let s = &self.study;
        let mut out = format!(
            "pimhe keygen: study of the {} of {} ({} N={}, t={}), values up to {} (10^-{} units), at most {} users\n",
            s.statistic.name(),
            s.columns.join(","),
            s.scheme,
            s.n,
            s.plain_moduli.iter().map(u32::to_string).collect::<Vec<_>>().join("*"),
            s.max_value,
            s.decimals,
            s.max_users
        );
        out += &format!(
            "  public (users and server): {} ({} bytes) and {}\n  secret (analyst only): {}",
            self.public_keys.display(),
            self.public_keys_bytes,
            STUDY_FILE,
            self.secret_keys.display()
        );
        for warning in &self.warnings {
            out += &format!("\n  {warning} (--seed): anyone with the seed can make the secret key");
        }
        out
    }
}

impl Render for EncryptOutput {
    fn render(&self) -> String {
        format!(
            "pimhe encrypt: {} users, one submission each in {} ({} bytes per user), {} encrypting",
            self.users,
            self.out.display(),
            self.bytes_per_user,
            format_seconds(self.encrypt_s)
        )
    }
}

impl Render for EvalOutput {
    fn render(&self) -> String {
        let mut out = format!(
            "pimhe eval: {} submissions added up on {} into {} (load {}, compute {}; no secret key read)",
            self.users,
            self.backend,
            self.out.display(),
            format_seconds(self.load_s),
            format_seconds(self.server_s)
        );
        if let Some(u) = &self.upmem {
            out += &format!(
                "\n  server on UPMEM, {}: transfer {:.6} s, compute {:.6} s, retrieve {:.6} s, total {:.6} s, energy \
                 {:.3} J; {} launches",
                u.model,
                u.transfer_s,
                u.compute_s,
                u.retrieve_s,
                u.total_s(),
                u.energy_j,
                u.launches
            );
        }
        out
    }
}

impl Render for DecryptOutput {
    fn render(&self) -> String {
        let mut out = format!("pimhe decrypt: {} over {} users\n", self.statistic.name(), self.users);
        for e in &self.estimates {
            out += &format!("  {:<20} {:>20.10}\n", e.name, e.value);
        }
        out + &format!("  noise budget left {} bits", self.noise_budget_bits)
    }
}
