//! A study's files on disk, one function per party (`pimhe keygen / encrypt / eval / decrypt`
//! are thin shells over them): which directory holds what, with which permissions, what is
//! never overwritten, and how large each file read may be.
//!
//! - The analyst's secret directory is the owner's only (0700, the key file 0600, whatever the
//!   umask) and is never the public directory, inside it or around it (compared as canonical
//!   paths once both exist); no party reads a public directory that holds a secret key.
//! - Nothing existing is overwritten unless the caller forces it; submissions are named by
//!   their random identifiers, so users sharing a directory never collide.
//! - Every file is read only if it is a regular file no larger than its kind can legitimately
//!   be ([`Study::max_file_bytes`]), so a FIFO cannot hang the server nor `/dev/zero` exhaust it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use pimhe_exec::Backend;
use pimhe_math::Sampler;
use pimhe_schemes::bfv::BfvContext;
use pimhe_schemes::bgv::BgvContext;
use pimhe_schemes::encoder::ExactScheme;
use pimhe_schemes::rlwe::RlweScheme;
use pimhe_schemes::serial::{self, Access, Existing, SerialScheme};
use serde::Serialize;
use zeroize::Zeroizing;

use super::files::StudyFile;
use super::{
    Identifier, Sizing, Study, StudyKeys, StudyResult, StudySecret, StudySpec, Submission, EXTENSION, PUBLIC_KEYS_FILE,
    SECRET_KEYS_FILE, STUDY_FILE,
};
use crate::progress::Progress;
use crate::stats::{Dataset, StatsError};

/// What every party prints when a study's keys come from a fixed seed.
pub const SEEDED_WARNING: &str =
    "insecure: keys from a fixed seed (anyone with the study's seed can make its secret key)";

/// Whether an existing output file may be replaced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Overwrite {
    /// Refuse, naming the file (the default of every command).
    Refuse,
    /// Replace it (`--force`).
    Force,
}

impl Overwrite {
    fn existing(self) -> Existing {
        match self {
            Overwrite::Refuse => Existing::Refuse,
            Overwrite::Force => Existing::Replace,
        }
    }
}

/// What the analyst's key generation wrote.
#[derive(Debug, Serialize)]
pub struct KeygenOutcome {
    /// The declared study (as written to `study.json`).
    pub study: Study,
    /// What was picked for the submissions (N, plaintext moduli, primes kept) and why.
    pub sizing: Sizing,
    /// Bytes of one submission file.
    pub submission_bytes: u64,
    /// The public keys' file.
    pub public_keys: PathBuf,
    /// Its size.
    pub public_keys_bytes: u64,
    /// The secret keys' file.
    pub secret_keys: PathBuf,
    /// Warnings for the user (a seeded study).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<&'static str>,
}

/// What a user's encryption wrote.
#[derive(Debug, Serialize)]
pub struct EncryptOutcome {
    /// Rows encrypted, one submission each.
    pub users: usize,
    /// The directory of the submissions.
    pub out: PathBuf,
    /// Bytes of one submission.
    pub bytes_per_user: u64,
    /// Seconds spent encoding and encrypting.
    pub encrypt_s: f64,
    /// Warnings for the user (a seeded study).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<&'static str>,
}

/// What the server's evaluation wrote.
#[derive(Debug, Serialize)]
pub struct EvalOutcome {
    /// Submissions added up.
    pub users: usize,
    /// The aggregates' file.
    pub out: PathBuf,
    /// Seconds spent reading the keys and submissions.
    pub load_s: f64,
    /// Seconds spent adding up.
    pub server_s: f64,
    /// Warnings for the user (a seeded study).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<&'static str>,
}

/// What the analyst's decryption found.
#[derive(Debug, Serialize)]
pub struct DecryptOutcome {
    /// The statistic.
    #[serde(flatten)]
    pub result: StudyResult,
    /// Warnings for the user (a seeded study).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<&'static str>,
}

/// `study`'s keys, made at the smallest preset keygen's noise check accepts among
/// [`Study::measured_smaller_degrees`] (a failed check, a refusal for capacity, moves on to the
/// next), or at `study`'s own N; with the study they were made for.
fn smallest_measured<S: ExactScheme, B: Backend>(
    backend: &B,
    study: Study,
    spec: &StudySpec,
    mut sampler: Sampler,
) -> Result<(Study, StudySecret<S>, StudyKeys<S>), StatsError> {
    for n in study.measured_smaller_degrees::<S>(spec.n.is_some())? {
        // A layout that does not fit the smaller ring is refused by the declaration: skip it.
        let Ok(smaller) = Study::new::<S>(&StudySpec { n: Some(n), ..spec.clone() }, study.id) else { continue };
        let smaller = if study.seeded_keys { smaller.with_seeded_keys() } else { smaller };
        match smaller.keygen::<S, _>(backend, sampler.fork()) {
            Ok((secret, keys)) => return Ok((smaller, secret, keys)),
            Err(StatsError::Capacity(_)) => continue,
            Err(e) => return Err(e),
        }
    }
    let (secret, keys) = study.keygen::<S, _>(backend, sampler)?;
    Ok((study, secret, keys))
}

/// The analyst's first step: declares `spec` with `scheme` (`bgv` or `bfv`), makes the keys on
/// `backend` and writes `study.json` and the public keys to `public_dir` and the secret keys
/// (with the analyst's copy of the declaration) to `secret_dir`. `seed` makes the keys
/// reproducible for tests, and marks the study as insecure.
pub fn keygen_files<B: Backend>(
    backend: &B,
    spec: &StudySpec,
    scheme: &str,
    public_dir: &Path,
    secret_dir: &Path,
    seed: Option<u64>,
    overwrite: Overwrite,
) -> Result<KeygenOutcome, StatsError> {
    let mut sampler = sampler(seed)?;
    let id = Identifier::random(&mut sampler);
    let study = match scheme {
        "bgv" => Study::new::<BgvContext>(spec, id),
        "bfv" => Study::new::<BfvContext>(spec, id),
        other => Err(StatsError::Input(format!("scheme '{other}'; allowed: bgv, bfv"))),
    }?;
    let study = if seed.is_some() { study.with_seeded_keys() } else { study };
    separate_directories(public_dir, secret_dir)?;
    let (public_keys, secret_keys, study_file) =
        (public_dir.join(PUBLIC_KEYS_FILE), secret_dir.join(SECRET_KEYS_FILE), public_dir.join(STUDY_FILE));
    if overwrite == Overwrite::Refuse {
        let existing: Vec<String> = [&public_keys, &secret_keys, &study_file]
            .iter()
            .filter(|p| p.exists())
            .map(|p| p.display().to_string())
            .collect();
        if !existing.is_empty() {
            return Err(StatsError::Input(format!(
                "a study is already there ({}): its keys are left as they are; choose new directories, or force \
                 the replacement (--force), after which its submissions are refused",
                existing.join(", ")
            )));
        }
    }
    let (study, secret_bytes, public_bytes, sizing, submission_bytes) = with_scheme!(study, S => {
        let (study, secret, keys) = smallest_measured::<S, _>(backend, study, spec, sampler)?;
        // A submission of zeros, thrown away: its size is every submission's.
        let zeros = vec![0; study.columns.len()];
        let dummy = study.encrypt_row::<S, _>(backend, &keys, &zeros, Sampler::from_seed_u64(0))?;
        let sizing = study.sizing::<S>(spec.n.is_some())?;
        let submission_bytes = dummy.to_bytes(backend)?.len() as u64;
        Ok((study, Zeroizing::new(secret.to_bytes()?), keys.to_bytes()?, sizing, submission_bytes))
    })?;
    write(&secret_keys, &secret_bytes, Access::Secret, overwrite)?;
    write(&public_keys, &public_bytes, Access::Public, overwrite)?;
    write(&study_file, study.to_json().as_bytes(), Access::Public, overwrite)?;
    let warnings = warnings(&study);
    Ok(KeygenOutcome {
        study,
        sizing,
        submission_bytes,
        public_keys,
        public_keys_bytes: public_bytes.len() as u64,
        secret_keys,
        warnings,
    })
}

/// A user's step: encrypts every row of the CSV file `input` (a header row naming the study's
/// columns) on `backend` with the public keys of `public_dir`, one submission file per row in
/// `out_dir`, named by the submission's identifier. `seed` is for tests only.
pub fn encrypt_file<B: Backend>(
    backend: &B,
    public_dir: &Path,
    input: &Path,
    out_dir: &Path,
    seed: Option<u64>,
    progress: &dyn Progress,
) -> Result<EncryptOutcome, StatsError> {
    let study = read_study(public_dir)?;
    let file = std::fs::File::open(input)
        .map_err(|e| StatsError::Input(format!("cannot open the CSV {}: {e}", input.display())))?;
    let columns: Vec<&str> = study.columns.iter().map(String::as_str).collect();
    let data = Dataset::from_csv(file, &columns, Some(study.decimals))?;
    with_scheme!(study, S => {
        let keys = study.keys_from_bytes::<S>(&read(&public_dir.join(PUBLIC_KEYS_FILE), &study, StudyFile::PublicKeys)?)?;
        serial::create_dir(out_dir, Access::Public)?;
        let mut sampler = sampler(seed)?;
        progress.start(data.users() as u64, "users encrypted");
        let start = Instant::now();
        let mut bytes_per_user = 0;
        for (row, values) in data.rows().iter().enumerate() {
            let submission = study.encrypt_row::<S, _>(backend, &keys, values, sampler.fork()).map_err(|e| {
                // Row 1 is the header.
                StatsError::Input(format!("row {} of {}: {e}", row + 2, input.display()))
            })?;
            let bytes = submission.to_bytes(backend)?;
            bytes_per_user = bytes.len() as u64;
            let path = out_dir.join(format!("{}.{EXTENSION}", submission.id));
            write(&path, &bytes, Access::Public, Overwrite::Refuse)?;
            progress.advance(1);
        }
        progress.finish();
        Ok(EncryptOutcome {
            users: data.users(),
            out: out_dir.to_path_buf(),
            bytes_per_user,
            encrypt_s: start.elapsed().as_secs_f64(),
            warnings: warnings(&study),
        })
    })
}

/// What the server's step reads before adding up (by [`evaluate_files`] and by the distributed
/// server, which ships these bytes to its workers): the study, its public keys' bytes and the
/// submission files, in name order.
pub struct ServerInputs {
    /// The study of the public directory.
    pub study: Study,
    /// The public keys' bytes ([`super::StudyKeys::to_bytes`]), read within their size bound.
    pub public_keys: Vec<u8>,
    /// Every `*.pimhe` file of the submissions directory, in name order.
    pub files: Vec<PathBuf>,
    /// Warnings for the user (a seeded study).
    pub warnings: Vec<&'static str>,
}

/// The server's inputs from `public_dir` (refused if it holds a secret key) and
/// `submissions_dir`, refused before anything is added up if `out` exists and may not be
/// replaced.
pub fn server_inputs(
    public_dir: &Path,
    submissions_dir: &Path,
    out: &Path,
    overwrite: Overwrite,
) -> Result<ServerInputs, StatsError> {
    let study = read_study(public_dir)?;
    if overwrite == Overwrite::Refuse && out.exists() {
        return Err(already_exists(out));
    }
    let public_keys = read(&public_dir.join(PUBLIC_KEYS_FILE), &study, StudyFile::PublicKeys)?.to_vec();
    let files = submission_files(submissions_dir)?;
    let warnings = warnings(&study);
    Ok(ServerInputs { study, public_keys, files, warnings })
}

/// The bytes of each submission file of `paths`, in order, each refused (naming it) unless it
/// is a regular file within a submission's size under `study`. A list at a time: the size
/// bound comes from the study's parameters, whose making costs more than reading a file.
pub fn read_submissions(study: &Study, paths: &[PathBuf]) -> Result<Vec<Vec<u8>>, StatsError> {
    let bound = study.file_bound(StudyFile::Submission)?;
    paths.iter().map(|path| read_submission_within(path, bound)).collect()
}

/// The bytes of the submission file `path`, at most `bound` of them.
fn read_submission_within(path: &Path, bound: u64) -> Result<Vec<u8>, StatsError> {
    let named = |e: StatsError| StatsError::Input(format!("{}: {e}", path.display()));
    Ok(serial::load_at_most(path, bound).map_err(StatsError::from).map_err(named)?.to_vec())
}

/// The server's step: adds up every `*.pimhe` submission of `submissions_dir` on `backend`
/// with the public keys of `public_dir` only, and writes the aggregates to `out`.
pub fn evaluate_files<B: Backend>(
    backend: &B,
    public_dir: &Path,
    submissions_dir: &Path,
    out: &Path,
    overwrite: Overwrite,
    progress: &dyn Progress,
) -> Result<EvalOutcome, StatsError> {
    let start = Instant::now();
    let ServerInputs { study, public_keys, files, warnings } =
        server_inputs(public_dir, submissions_dir, out, overwrite)?;
    with_scheme!(study, S => {
        let keys = study.keys_from_bytes::<S>(&public_keys)?;
        progress.start(files.len() as u64, "submissions loaded");
        let mut first_file = HashMap::new();
        let mut submissions = Vec::with_capacity(files.len());
        let bound = study.file_bound(StudyFile::Submission)?;
        for path in &files {
            let bytes = read_submission_within(path, bound)?;
            let name = path.display().to_string();
            submissions.push(study.load_submission(backend, &keys, &mut first_file, &name, &bytes)?);
            progress.advance(1);
        }
        progress.finish();
        let load_s = start.elapsed().as_secs_f64();
        let start = Instant::now();
        let aggregates = study.aggregate::<S, _>(backend, &keys, submissions.iter())?;
        let server_s = start.elapsed().as_secs_f64();
        write(out, &aggregates.to_bytes(backend)?, Access::Public, overwrite)?;
        Ok(EvalOutcome { users: aggregates.users, out: out.to_path_buf(), load_s, server_s, warnings })
    })
}

impl Study {
    /// The submission `bytes` of the file or object `name`, refused (naming both) if a
    /// submission of the same identifier was loaded before (`first`: each identifier's name).
    pub(super) fn load_submission<B: Backend, C: SerialScheme>(
        &self,
        backend: &B,
        keys: &StudyKeys<C>,
        first: &mut HashMap<Identifier, String>,
        name: &str,
        bytes: &[u8],
    ) -> Result<Submission<B, C>, StatsError> {
        let submission =
            self.submission_from_bytes(backend, keys, bytes).map_err(|e| StatsError::Input(format!("{name}: {e}")))?;
        if let Some(earlier) = first.insert(submission.id, name.to_string()) {
            return Err(StatsError::Input(format!(
                "{earlier} and {name} are the same submission {}: each submission is counted once",
                submission.id
            )));
        }
        Ok(submission)
    }
}

/// The analyst's last step: decrypts the aggregates file `input` on `backend` with the secret
/// keys of `secret_dir`, after checking the public study of `public_dir` against the
/// declaration kept with them.
pub fn decrypt_files<B: Backend>(
    backend: &B,
    public_dir: &Path,
    secret_dir: &Path,
    input: &Path,
) -> Result<DecryptOutcome, StatsError> {
    if same_or_nested(public_dir, secret_dir)? {
        return Err(StatsError::Input(format!(
            "the secret directory {} is the public directory {} or inside or around it: the secret keys must stay \
             where the server cannot read",
            secret_dir.display(),
            public_dir.display()
        )));
    }
    let public = read_study(public_dir)?;
    let secret_bytes = serial::load_at_most(secret_dir.join(SECRET_KEYS_FILE), MAX_SECRET_KEYS_BYTES)?;
    let study = Study::kept_in(&secret_bytes)?;
    public.expect_declaration(&study)?;
    with_scheme!(study, S => {
        let secret = study.secret_from_bytes::<S>(&secret_bytes)?;
        let keys = study.keys_from_bytes::<S>(&read(&public_dir.join(PUBLIC_KEYS_FILE), &study, StudyFile::PublicKeys)?)?;
        let aggregates = study.aggregates_from_bytes(backend, &keys, &read(input, &study, StudyFile::Aggregates)?)?;
        let result = study.decrypt::<S, _>(backend, &secret, &aggregates)?;
        Ok(DecryptOutcome { result, warnings: warnings(&study) })
    })
}

/// The most bytes a study's secret keys file can have: the declaration (at most 1 MiB of JSON)
/// and one secret key per plaintext modulus (at most [`crate::stats::MAX_PLAIN_MODULI`]), each
/// a ternary polynomial over every prime of the largest preset (N = 32768, under 32 primes, 4
/// bytes a residue at most): about 17 MiB, doubled for the headers and the framing.
const MAX_SECRET_KEYS_BYTES: u64 = 64 << 20;

/// How deep [`find_secret_key`] looks into a public directory, and how many entries it reads:
/// a study's public directory holds two files, so these bound the look, not what it finds.
const SCAN_DEPTH: usize = 4;
const SCAN_ENTRIES: usize = 10_000;

/// The study of a public directory, refused if the directory holds a secret key (in it or in a
/// directory under it, links followed: wherever the server reading it would find one).
pub fn read_study(public_dir: &Path) -> Result<Study, StatsError> {
    if let Some(leaked) = find_secret_key(public_dir, SCAN_DEPTH, &mut SCAN_ENTRIES.clone()) {
        return Err(StatsError::Input(format!(
            "{} is in the public directory, which the server reads: move it to the analyst's secret directory (and \
             make new keys if anyone else could read it); nothing is read from this directory until then",
            leaked.display()
        )));
    }
    let path = public_dir.join(STUDY_FILE);
    let text =
        serial::load_at_most(&path, 1 << 20).map_err(|e| StatsError::Input(format!("{e} (made by pimhe keygen)")))?;
    let text = std::str::from_utf8(&text).map_err(|_| StatsError::Input(format!("{} is not UTF-8", path.display())))?;
    Study::from_json(text).map_err(|e| StatsError::Input(format!("{}: {e}", path.display())))
}

impl Study {
    /// Every prime a backend must hold to serve this study under all its plaintext moduli
    /// (sorted, without repeats): a PIM backend for the server is built with them resident.
    pub fn backend_primes(&self) -> Result<Vec<u32>, StatsError> {
        with_scheme!(self, S => {
            let mut primes: Vec<u32> = self.contexts::<S>()?.iter().flat_map(|c| c.backend_primes()).collect();
            primes.sort_unstable();
            primes.dedup();
            Ok(primes)
        })
    }

    /// Errors unless `files` is a file of its kind's legitimate size under this study's
    /// parameters (see [`read`]).
    fn file_bound(&self, kind: StudyFile) -> Result<u64, StatsError> {
        with_scheme!(self, S => self.max_file_bytes::<S>(kind))
    }
}

/// A secret keys file in `dir` or under it (at most `depth` directories down, `budget` entries
/// read in all).
fn find_secret_key(dir: &Path, depth: usize, budget: &mut usize) -> Option<PathBuf> {
    let candidate = dir.join(SECRET_KEYS_FILE);
    if candidate.exists() {
        return Some(candidate);
    }
    if depth == 0 {
        return None;
    }
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        if *budget == 0 {
            return None;
        }
        *budget -= 1;
        let path = entry.path();
        if path.is_dir() {
            if let Some(found) = find_secret_key(&path, depth - 1, budget) {
                return Some(found);
            }
        }
    }
    None
}

/// The bytes of `path`, a regular file of at most the size of a `kind` of `study` (wiped when
/// dropped: they may be a secret key's).
fn read(path: &Path, study: &Study, kind: StudyFile) -> Result<Zeroizing<Vec<u8>>, StatsError> {
    Ok(serial::load_at_most(path, study.file_bound(kind)?)?)
}

/// Writes `bytes` to `path` with `access`, refusing an existing file unless forced.
pub(super) fn write(path: &Path, bytes: &[u8], access: Access, overwrite: Overwrite) -> Result<(), StatsError> {
    serial::save_with(path, bytes, access, overwrite.existing()).map_err(|e| match overwrite {
        Overwrite::Refuse if path.exists() => already_exists(path),
        _ => e.into(),
    })
}

fn already_exists(path: &Path) -> StatsError {
    StatsError::Input(format!(
        "{} already exists and is left as it is: choose another path, or force the replacement (--force)",
        path.display()
    ))
}

/// Refuses the public and the secret directory unless they are apart — not the same
/// directory, neither inside the other, compared as resolved paths (so `./X/`, `$PWD/X` and
/// `a/../X` are all X) — then creates them, the secret one for the owner only. Nothing is
/// created when they are refused.
fn separate_directories(public_dir: &Path, secret_dir: &Path) -> Result<(), StatsError> {
    if same_or_nested(public_dir, secret_dir)? {
        return Err(StatsError::Input(format!(
            "the secret directory {} and the public directory {} are the same, or one is inside the other: the \
             server reads the public directory, so the secret keys must be elsewhere",
            secret_dir.display(),
            public_dir.display()
        )));
    }
    serial::create_dir(public_dir, Access::Public)?;
    Ok(serial::create_dir(secret_dir, Access::Secret)?)
}

/// Whether two directories (existing or not) are the same or one contains the other.
fn same_or_nested(a: &Path, b: &Path) -> Result<bool, StatsError> {
    let (a, b) = (resolve(a)?, resolve(b)?);
    Ok(a.starts_with(&b) || b.starts_with(&a))
}

/// The absolute path `path` names, as the kernel would walk it: every link followed (also one
/// whose target does not exist yet, which creating the directory would follow), `.` skipped and
/// `..` applied after the links before it, so that `./X/`, `$PWD/X`, `a/../X` and a link to X
/// all resolve to the same path whether or not X exists.
fn resolve(path: &Path) -> Result<PathBuf, StatsError> {
    use std::collections::VecDeque;
    use std::path::Component;
    /// Links followed before giving up (the kernel's own limit is 40).
    const MAX_LINKS: usize = 40;
    let failed = |e: std::io::Error| StatsError::Input(format!("cannot resolve the directory {}: {e}", path.display()));
    let mut resolved = if path.is_absolute() { PathBuf::new() } else { std::env::current_dir().map_err(failed)? };
    let mut pending: VecDeque<PathBuf> = path.components().map(|c| PathBuf::from(c.as_os_str())).collect();
    let mut links = 0;
    while let Some(part) = pending.pop_front() {
        match part.components().next() {
            Some(Component::Prefix(_) | Component::RootDir) => resolved = part,
            Some(Component::CurDir) | None => {}
            Some(Component::ParentDir) => {
                resolved.pop();
            }
            Some(Component::Normal(name)) => {
                let next = resolved.join(name);
                let is_link = std::fs::symlink_metadata(&next).is_ok_and(|m| m.file_type().is_symlink());
                if !is_link {
                    resolved = next;
                    continue;
                }
                links += 1;
                if links > MAX_LINKS {
                    return Err(StatsError::Input(format!(
                        "cannot resolve the directory {}: more than {MAX_LINKS} links",
                        path.display()
                    )));
                }
                // The link's target replaces it: relative to the link's directory, or absolute.
                let target = std::fs::read_link(&next).map_err(failed)?;
                for component in target.components().rev() {
                    pending.push_front(PathBuf::from(component.as_os_str()));
                }
            }
        }
    }
    Ok(resolved)
}

/// Every `*.pimhe` entry of `dir`, in name order.
fn submission_files(dir: &Path) -> Result<Vec<PathBuf>, StatsError> {
    let entries = std::fs::read_dir(dir)
        .map_err(|e| StatsError::Input(format!("cannot read the submissions directory {}: {e}", dir.display())))?;
    let mut files = Vec::new();
    for entry in entries {
        let path = entry.map_err(|e| StatsError::Input(format!("cannot list {}: {e}", dir.display())))?.path();
        if path.extension().is_some_and(|e| e == EXTENSION) {
            files.push(path);
        }
    }
    files.sort();
    if files.is_empty() {
        return Err(StatsError::Input(format!("no *.{EXTENSION} submissions in {}", dir.display())));
    }
    Ok(files)
}

fn sampler(seed: Option<u64>) -> Result<Sampler, StatsError> {
    match seed {
        Some(seed) => Ok(Sampler::from_seed_u64(seed)),
        None => Sampler::from_os().map_err(|e| StatsError::Input(format!("no OS randomness: {e}"))),
    }
}

fn warnings(study: &Study) -> Vec<&'static str> {
    if study.seeded_keys {
        vec![SEEDED_WARNING]
    } else {
        Vec::new()
    }
}
