//! The client/server study of `pimhe keygen | encrypt | eval | decrypt`, as the CLI and any other
//! shell run it: the server's evaluation on a [`Target`] ([`evaluate`]), what each step prints
//! ([`Render`] of the library's outcomes), and how a study's errors map onto usage errors and
//! failures ([`study_error`]).

use std::path::Path;

use pimhe_exec::Backend;
use pimhe_pim::runtime::OffloadReport;
use pimhe_workloads::progress::Progress;
use pimhe_workloads::stats::study::{
    evaluate_files, read_study, DecryptOutcome, EncryptOutcome, EvalOutcome, KeygenOutcome, Overwrite, STUDY_FILE,
};
use pimhe_workloads::stats::StatsError;
use serde::Serialize;

use crate::error::{BenchError, Result};
use crate::format::{format_seconds, Render};
use crate::target::nearbank::NearbankOutcome;
use crate::target::upmem::server_cost_line;
use crate::target::{Cost, Device, DeviceNeeds, Job, Target};

/// What `pimhe eval` prints: the library's outcome, the backend and its modeled cost.
#[derive(Debug, Serialize)]
pub struct EvalOutput {
    /// The evaluation's outcome.
    #[serde(flatten)]
    pub outcome: EvalOutcome,
    /// The backend it ran on.
    pub backend: &'static str,
    /// upmem-emu: the server's modeled cost.
    pub upmem: Option<OffloadReport>,
    /// nearbank: the server's modeled cost.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nearbank: Option<NearbankOutcome>,
}

/// The server's step of a study on `target`: every submission in `submissions` added up into the
/// aggregates file `out`, with the public material of `public_dir` only. One backend holds every
/// prime of every plaintext modulus's parameters.
pub fn evaluate(
    target: &Target,
    public_dir: &Path,
    submissions: &Path,
    out: &Path,
    overwrite: Overwrite,
    progress: &dyn Progress,
) -> Result<EvalOutput> {
    let study = read_study(public_dir).map_err(study_error)?;
    let needs = DeviceNeeds { n: study.n, primes: study.backend_primes().map_err(study_error)? };
    let ran = target.run(&needs, Evaluation { public_dir, submissions, out, overwrite, progress })?;
    let (upmem, nearbank) = match ran.cost {
        Cost::Cpu { .. } => (None, None),
        Cost::Upmem(report) => (Some(report), None),
        Cost::Nearbank(outcome) => (None, Some(outcome)),
    };
    Ok(EvalOutput { outcome: ran.output, backend: target.name(), upmem, nearbank })
}

/// The server's evaluation, on whichever backend the target builds.
struct Evaluation<'a> {
    public_dir: &'a Path,
    submissions: &'a Path,
    out: &'a Path,
    overwrite: Overwrite,
    progress: &'a dyn Progress,
}

impl Job for Evaluation<'_> {
    type Output = EvalOutcome;

    fn pricing_copy(&self) -> Option<Self> {
        None // it writes the aggregate file
    }

    fn run<B: Backend>(self, device: &Device<'_, B>) -> Result<EvalOutcome> {
        evaluate_files(device.backend, self.public_dir, self.submissions, self.out, self.overwrite, self.progress)
            .map_err(study_error)
    }
}

/// A study's errors are the caller's (bad flags, files of another study, damaged files), but
/// for a backend that failed and aggregates that failed decryption's checks.
pub fn study_error(e: StatsError) -> BenchError {
    match e {
        StatsError::Input(m) | StatsError::Capacity(m) => BenchError::usage(m),
        StatsError::Integrity(m) => BenchError::Failed(m),
        StatsError::Scheme(e @ pimhe_schemes::SchemeError::Exec(_)) => e.into(),
        StatsError::Scheme(e) => BenchError::usage(e.to_string()),
    }
}

/// The warnings of an outcome, one line each.
fn warning_lines(warnings: &[&str]) -> String {
    warnings.iter().map(|w| format!("\n  {w}")).collect()
}

impl Render for KeygenOutcome {
    fn render(&self) -> String {
        let s = &self.study;
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
        let z = &self.sizing;
        out += &format!(
            "  submissions: {} bytes each ({} of {} primes kept; {} bytes of ciphertext vs {} at N=8192 with every \
             prime)\n  why: {}\n",
            self.submission_bytes,
            z.submission_primes,
            z.data_primes,
            z.ciphertext_bytes,
            z.default_ciphertext_bytes,
            z.why
        );
        out += &format!(
            "  public (users and server): {} ({} bytes) and {}\n  secret (analyst only): {}",
            self.public_keys.display(),
            self.public_keys_bytes,
            STUDY_FILE,
            self.secret_keys.display()
        );
        out + &warning_lines(&self.warnings)
    }
}

impl Render for EncryptOutcome {
    fn render(&self) -> String {
        let o = self;
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

impl Render for DecryptOutcome {
    fn render(&self) -> String {
        let r = &self.result;
        let mut out = format!("pimhe decrypt: {} over {} users\n", r.statistic.name(), r.users);
        for e in &r.estimates {
            out += &format!("  {:<20} {:>20.10}\n", e.name, e.value);
        }
        out + &format!("  noise budget left {} bits", r.noise_budget_bits) + &warning_lines(&self.warnings)
    }
}
