//! The statistics as the users of seed 002 would run them: an analyst declares a study and makes
//! the keys, every user encrypts their own row on their own machine with the public key only, a
//! server that never sees a secret adds the submissions up, and the analyst decrypts the
//! aggregates into the statistic.
//!
//! Unlike [`super::StatsPlan`], nobody holds all the data, so the plaintext moduli cannot come
//! from the data's totals: the [`Study`] declares the largest value and the most users, and
//! the moduli are chosen so that any aggregate within those bounds is exact. The client refuses
//! a value above the bound and the server more users than declared, so the promise holds. The
//! encodings and aggregates are those of the in-process plan (the same [`Layout`]).
//!
//! ## Threat model
//! Clients are honest: each submits their own row within the declared bounds (pimhe cannot
//! prove a client's range without zero-knowledge proofs). The server is honest but curious: it
//! adds up what it is given and may read everything it holds, which is public material only.
//! Against mistakes and small attacks beyond that, every object carries its study's random
//! [`Identifier`] (a file of another study is refused by name) and every submission its own (a
//! submission counted twice is refused); the analyst keeps the declaration with the secret keys
//! (a study.json edited on the server is refused); and decryption checks what it can: the user
//! count the aggregates carry homomorphically against the stated one, unused slots at zero,
//! every total within what the declared bounds allow, sums of squares consistent with their
//! sums. What fails is refused with the reason instead of printed as a number.
//!
//! ```
//! use pimhe_exec::CpuBackend;
//! use pimhe_math::Sampler;
//! use pimhe_workloads::stats::study::{Identifier, Study, StudySpec};
//! use pimhe_schemes::bgv::BgvContext;
//! use pimhe_workloads::stats::Statistic;
//! let cpu = CpuBackend::new(Some(1)).unwrap();
//! let mut sampler = Sampler::from_seed_u64(1);
//! // Ages with one decimal, at most 150.0, from 2 to 1000 users.
//! let spec = StudySpec::new(Statistic::Mean, &["age"], 1, 1500, 1000, 4096);
//! let study = Study::new::<BgvContext>(&spec, Identifier::random(&mut sampler)).unwrap();
//! let (secret, public) = study.keygen::<BgvContext, _>(&cpu, sampler).unwrap();
//! // Each user on their own machine: 30.5 and 41.2 years.
//! let submissions: Vec<_> = [[305], [412]]
//!     .iter()
//!     .map(|row| study.encrypt_row::<BgvContext, _>(&cpu, &public, row, Sampler::from_os().unwrap()).unwrap())
//!     .collect();
//! let aggregates = study.aggregate::<BgvContext, _>(&cpu, &public, submissions.iter()).unwrap();
//! let result = study.decrypt::<BgvContext, _>(&cpu, &secret, &aggregates).unwrap();
//! assert_eq!(result.users, 2);
//! assert!((result.estimates[0].value - 35.85).abs() < 1e-9);
//! ```

/// Runs `$body` with `$S` the scheme type `$study` declares.
// Before the modules, which use it (a macro is in scope after its definition).
macro_rules! with_scheme {
    ($study:expr, $S:ident => $body:expr) => {
        match $study.scheme.as_str() {
            "bgv" => {
                type $S = pimhe_schemes::bgv::BgvContext;
                $body
            }
            "bfv" => {
                type $S = pimhe_schemes::bfv::BfvContext;
                $body
            }
            other => Err(StatsError::Input(format!("the study's scheme is '{other}'; allowed: bgv, bfv"))),
        }
    };
}

mod declaration;
mod directory;
mod files;
mod partial;
mod sizing;

pub use declaration::{Identifier, Study, StudySpec};
pub use directory::{
    decrypt_files, encrypt_file, evaluate_files, keygen_files, read_study, read_submissions, server_inputs,
    DecryptOutcome, EncryptOutcome, EvalOutcome, KeygenOutcome, Overwrite, ServerInputs, SEEDED_WARNING,
};
pub use files::{EXTENSION, PUBLIC_KEYS_FILE, SECRET_KEYS_FILE, STUDY_FILE};
pub use partial::{combine_shards, evaluate_shard, write_aggregates, Partial};
pub use sizing::{worst_submission_bits, worst_sum_bits, NoiseBound, Sizing, StudyScheme, MARGIN_BITS};

use std::collections::HashMap;
use std::sync::Arc;

use pimhe_exec::Backend;
use pimhe_math::Sampler;
use pimhe_schemes::encoder::{BatchEncoder, ExactScheme};
use pimhe_schemes::rlwe::{CiphertextBatch, Decryptor, Encryptor, PublicKey, RelinKey, RlweScheme, SecretKey};
use serde::Serialize;

use super::scheme::{SchemeStats, StatsServer};
use super::{check_noise_budget, crt_totals, Statistic, StatsError};

/// The analyst's secret keys of a study, one per plaintext modulus (wiped on drop), with the
/// analyst's own copy of the study's declaration, against which the public copy is checked.
pub struct StudySecret<C: RlweScheme> {
    /// The study the keys were made for, as the analyst declared it.
    pub study: Study,
    /// Per plaintext modulus, in the study's order.
    pub keys: Vec<SecretKey<C>>,
}

/// The public keys of a study, one set per plaintext modulus: what users encrypt with and the
/// server computes with.
pub struct StudyKeys<C: RlweScheme> {
    /// The study the keys belong to.
    pub study: Identifier,
    /// Per plaintext modulus, the public key.
    pub public: Vec<PublicKey<C>>,
    /// Per plaintext modulus, the relinearization key (where the parameters have special
    /// primes).
    pub relin: Vec<Option<RelinKey<C>>>,
}

/// One user's encrypted row: per plaintext modulus, one ciphertext (a batch of one) per
/// encoded vector of the statistic.
pub struct Submission<B: Backend, C: RlweScheme> {
    /// The study it was made for.
    pub study: Identifier,
    /// This submission's own random identifier: the same submission twice is refused.
    pub id: Identifier,
    /// `ciphertexts[modulus][encoding]`.
    pub ciphertexts: Vec<Vec<CiphertextBatch<B, C>>>,
}

/// The server's output: per plaintext modulus, each aggregate of the statistic, and how many
/// users went into them.
pub struct Aggregates<B: Backend, C: RlweScheme> {
    /// The study they were made for.
    pub study: Identifier,
    /// Number of submissions added up, as the server states it (decryption checks it against
    /// the count the aggregates carry).
    pub users: usize,
    /// `ciphertexts[modulus][aggregate]`, batches of one.
    pub ciphertexts: Vec<Vec<CiphertextBatch<B, C>>>,
}

/// One number of a study's result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StudyEstimate {
    /// What it is, e.g. `mean(age)`, `coef(x1)`, `r2`.
    pub name: String,
    /// Its value, from the exact aggregates rounded once.
    pub value: f64,
}

/// What the analyst learns.
#[derive(Debug, Clone, Serialize)]
pub struct StudyResult {
    /// Which statistic.
    pub statistic: Statistic,
    /// Number of users aggregated (stated by the server, and counted in the aggregates).
    pub users: usize,
    /// The estimates.
    pub estimates: Vec<StudyEstimate>,
    /// Least noise budget left in an aggregate before decryption, in bits.
    pub noise_budget_bits: u32,
}

impl Study {
    /// The analyst's key generation on `backend`: per plaintext modulus a secret key, a public
    /// key and a relinearization key. Checks, on a dummy encryption, that an aggregate of the
    /// most users keeps noise budget, so that a study that could not decrypt is refused before
    /// any user submits.
    pub fn keygen<S: ExactScheme, B: Backend>(
        &self,
        backend: &B,
        mut sampler: Sampler,
    ) -> Result<(StudySecret<S>, StudyKeys<S>), StatsError> {
        let layout = self.layout()?;
        let (mut keys, mut public, mut relin) = (Vec::new(), Vec::new(), Vec::new());
        for ctx in self.contexts::<S>()? {
            let mut scheme = SchemeStats::<S, B, B>::with_context(backend, backend, ctx, sampler.fork())?;
            check_noise_budget(&layout, self.max_users, &mut scheme)?;
            let (secret, public_key, relin_key) = scheme.into_keys();
            keys.push(secret);
            public.push(public_key);
            relin.push(relin_key);
        }
        Ok((StudySecret { study: self.clone(), keys }, StudyKeys { study: self.id, public, relin }))
    }

    /// A user's submission: `row` (one fixed-point value per column, each at most
    /// [`Study::max_value`] in magnitude) encoded and encrypted under every public key, with a
    /// submission identifier drawn from `sampler`.
    pub fn encrypt_row<S: StudyScheme, B: Backend>(
        &self,
        backend: &B,
        keys: &StudyKeys<S>,
        row: &[i64],
        mut sampler: Sampler,
    ) -> Result<Submission<B, S>, StatsError> {
        let layout = self.layout()?;
        self.expect_study(keys.study, "the public keys")?;
        self.check_keys(keys.public.len(), "public keys")?;
        if row.len() != self.columns.len() {
            return Err(StatsError::Input(format!(
                "a row of {} values; the study has {} columns {:?}",
                row.len(),
                self.columns.len(),
                self.columns
            )));
        }
        if let Some((column, value)) = self.columns.iter().zip(row).find(|(_, v)| v.unsigned_abs() > self.max_value) {
            return Err(StatsError::Input(format!(
                "column '{column}': {value} (fixed point, 10^{} per unit) exceeds the study's largest value {}",
                self.decimals, self.max_value
            )));
        }
        let id = Identifier::random(&mut sampler);
        let ciphertexts = keys
            .public
            .iter()
            .zip(&self.plain_moduli)
            .map(|(key, &t)| {
                expect_plain_modulus::<S>(key.context(), t)?;
                let encoder = BatchEncoder::new(key.context());
                let mut encryptor = Encryptor::with_public_key(backend, key)?.with_sampler(sampler.fork());
                layout
                    .encodings()
                    .iter()
                    .map(|&encoding| {
                        let plain = encoder.encode(&layout.encode_mod(encoding, row, t))?;
                        let fresh = encryptor.encrypt(&[plain])?;
                        S::switch_down(backend, key.context(), fresh, self.submission_primes.saturating_sub(1))
                    })
                    .collect::<Result<Vec<_>, StatsError>>()
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Submission { study: self.id, id, ciphertexts })
    }

    /// The server: adds up `submissions` (at most [`Study::max_users`], each of this study and
    /// each once) on `backend` with the public keys only, [`super::USERS_PER_ROUND`] users at a
    /// time (each round's submissions gathered into one batch per encoding).
    pub fn aggregate<'s, S: ExactScheme, B: Backend + 's>(
        &self,
        backend: &B,
        keys: &StudyKeys<S>,
        submissions: impl IntoIterator<Item = &'s Submission<B, S>>,
    ) -> Result<Aggregates<B, S>, StatsError> {
        let layout = self.layout()?;
        self.expect_study(keys.study, "the public keys")?;
        self.check_keys(keys.relin.len(), "relinearization keys")?;
        let mut submissions = submissions.into_iter().peekable();
        let mut users = 0;
        let mut seen: HashMap<Identifier, usize> = HashMap::new();
        let mut running: Vec<Option<Vec<CiphertextBatch<B, S>>>> = (0..self.plain_moduli.len()).map(|_| None).collect();
        while submissions.peek().is_some() {
            let round: Vec<&Submission<B, S>> = submissions.by_ref().take(super::USERS_PER_ROUND).collect();
            users += round.len();
            if users > self.max_users {
                return Err(StatsError::Capacity(format!(
                    "more than the {} users the study declares: its plaintext moduli hold no more exactly",
                    self.max_users
                )));
            }
            for (m, submission) in round.iter().enumerate() {
                let index = users - round.len() + m;
                self.expect_study(submission.study, &format!("submission {index}"))?;
                if let Some(first) = seen.insert(submission.id, index) {
                    return Err(StatsError::Input(format!(
                        "submissions {first} and {index} are the same submission {}: each is counted once",
                        submission.id
                    )));
                }
                let shape: Vec<usize> = submission.ciphertexts.iter().map(Vec::len).collect();
                if shape != vec![layout.encodings().len(); self.plain_moduli.len()] {
                    return Err(StatsError::Input(format!(
                        "submission {index} holds {shape:?} ciphertexts per plaintext modulus; the study needs {} for \
                         each of its {} moduli",
                        layout.encodings().len(),
                        self.plain_moduli.len()
                    )));
                }
                self.expect_level(submission.ciphertexts.iter().flatten(), &format!("submission {index}"))?;
            }
            for (m, (public, relin)) in keys.public.iter().zip(&keys.relin).enumerate() {
                let server = StatsServer::<S, B>::new(backend, public.context(), relin.as_ref());
                let gathered = (0..layout.encodings().len())
                    .map(|e| {
                        let batches: Vec<&CiphertextBatch<B, S>> = round.iter().map(|s| &s.ciphertexts[m][e]).collect();
                        CiphertextBatch::concat(backend, &batches)
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                running[m] = Some(layout.aggregate(&server, &gathered, running[m].take())?);
            }
        }
        let ciphertexts = running
            .into_iter()
            .map(|r| r.ok_or_else(|| StatsError::Input("no submissions to aggregate".into())))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Aggregates { study: self.id, users, ciphertexts })
    }

    /// The analyst: decrypts the aggregates, rebuilds the exact totals by CRT, checks them
    /// (the module's threat model says what) and computes the statistic from them. `self` must
    /// be the declaration the secret keys were made with, and the aggregates of at least
    /// [`Study::min_users`] users.
    pub fn decrypt<S: ExactScheme, B: Backend>(
        &self,
        backend: &B,
        secret: &StudySecret<S>,
        aggregates: &Aggregates<B, S>,
    ) -> Result<StudyResult, StatsError> {
        self.expect_declaration(&secret.study)?;
        self.expect_study(aggregates.study, "the aggregates")?;
        let layout = self.layout()?;
        self.check_keys(secret.keys.len(), "secret keys")?;
        self.check_keys(aggregates.ciphertexts.len(), "aggregate sets")?;
        if aggregates.users > self.max_users {
            return Err(StatsError::Input(format!(
                "the aggregates claim {} users; the study allows at most {}",
                aggregates.users, self.max_users
            )));
        }
        if aggregates.users < self.min_users {
            return Err(StatsError::Input(format!(
                "the aggregates hold {} users; the study declares at least {} (a statistic of fewer users reveals \
                 their data): not decrypted",
                aggregates.users, self.min_users
            )));
        }
        self.expect_level(aggregates.ciphertexts.iter().flatten(), "the aggregates")?;
        let mut noise_budget_bits = u32::MAX;
        let mut sums = Vec::with_capacity(self.plain_moduli.len());
        for ((key, ciphertexts), &t) in secret.keys.iter().zip(&aggregates.ciphertexts).zip(&self.plain_moduli) {
            expect_plain_modulus::<S>(key.context(), t)?;
            if ciphertexts.len() != layout.aggregates().len() {
                return Err(StatsError::Input(format!(
                    "{} aggregates for t = {t}; the {} needs {}",
                    ciphertexts.len(),
                    self.statistic.name(),
                    layout.aggregates().len()
                )));
            }
            let decryptor = Decryptor::new(backend, key)?;
            let encoder = BatchEncoder::new(key.context());
            let mut per_aggregate = Vec::with_capacity(ciphertexts.len());
            for (a, aggregate) in ciphertexts.iter().enumerate() {
                noise_budget_bits =
                    noise_budget_bits.min(decryptor.noise_budget(aggregate)?.into_iter().min().unwrap_or(0));
                let plains = decryptor.decrypt(aggregate)?;
                let mut slots = encoder.decode(&plains[0])?;
                if let Some(slot) = slots.iter().skip(layout.count_slot() + 1).position(|&v| v != 0) {
                    return Err(StatsError::Integrity(format!(
                        "aggregate {a} (t = {t}) holds {} in slot {}, which no submission uses: a submission was made \
                         with other software or altered",
                        slots[layout.count_slot() + 1 + slot],
                        layout.count_slot() + 1 + slot
                    )));
                }
                slots.truncate(layout.count_slot() + 1);
                per_aggregate.push(slots);
            }
            sums.push(per_aggregate);
        }
        if noise_budget_bits == 0 {
            return Err(StatsError::Integrity(
                "an aggregate has no noise budget left, so its decryption would be garbage: it was altered, or made by \
                 a server that did more than add submissions up"
                    .into(),
            ));
        }
        let sums: Vec<&[Vec<u64>]> = sums.iter().map(Vec::as_slice).collect();
        let mut totals = crt_totals(&sums, &self.plain_moduli);
        layout.check_totals(aggregates.users, self.max_value, &totals).map_err(|problem| {
            StatsError::Integrity(format!(
                "the decrypted aggregates are not what {} users within the study's bounds can sum to: {problem}. A \
                 client submitted values past the declared bound, or a file was altered; no statistic is printed",
                aggregates.users
            ))
        })?;
        totals.iter_mut().for_each(|t| t.truncate(layout.slots()));
        let values = layout.estimates(aggregates.users, &totals)?;
        let estimates = layout
            .estimate_names()
            .into_iter()
            .zip(values)
            .map(|(name, value)| StudyEstimate { name, value })
            .collect();
        Ok(StudyResult { statistic: self.statistic, users: aggregates.users, estimates, noise_budget_bits })
    }

    /// Errors unless `found` key sets were given, one per plaintext modulus.
    fn check_keys(&self, found: usize, what: &str) -> Result<(), StatsError> {
        if found != self.plain_moduli.len() {
            return Err(StatsError::Input(format!(
                "{found} {what}; the study has {} plaintext moduli {:?}, one each",
                self.plain_moduli.len(),
                self.plain_moduli
            )));
        }
        Ok(())
    }

    /// Errors unless every one of `ciphertexts` keeps the study's [`Study::submission_primes`].
    fn expect_level<'c, B: Backend + 'c, S: RlweScheme + 'c>(
        &self,
        ciphertexts: impl IntoIterator<Item = &'c CiphertextBatch<B, S>>,
        what: &str,
    ) -> Result<(), StatsError> {
        let level = self.submission_primes.saturating_sub(1);
        match ciphertexts.into_iter().find(|c| c.level() != level) {
            Some(c) => Err(StatsError::Input(format!(
                "{what} holds a ciphertext of {} primes; the study's submissions keep {}: it was made for other \
                 parameters or altered",
                c.level() + 1,
                self.submission_primes
            ))),
            None => Ok(()),
        }
    }

    /// Errors unless `found` (what `what` belongs to) is this study's identifier.
    fn expect_study(&self, found: Identifier, what: &str) -> Result<(), StatsError> {
        if found != self.id {
            return Err(StatsError::Input(format!(
                "{what} belong to study {found}, not to this study {}: files of another study are refused",
                self.id
            )));
        }
        Ok(())
    }
}

/// Errors unless `ctx` is the parameter set of plaintext modulus `t` (keys given in the
/// study's order).
fn expect_plain_modulus<S: ExactScheme>(ctx: &Arc<S>, t: u32) -> Result<(), StatsError> {
    let found = ctx.plain_space().modulus().value();
    if found != t {
        return Err(StatsError::Input(format!(
            "a key of plaintext modulus {found} where the study expects {t}: keys must come in the study's order"
        )));
    }
    Ok(())
}
