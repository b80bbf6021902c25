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
//! ```
//! use pimhe_exec::CpuBackend;
//! use pimhe_math::Sampler;
//! use pimhe_workloads::stats::study::Study;
//! use pimhe_workloads::stats::{Bgv, Statistic};
//! let cpu = CpuBackend::new(Some(1)).unwrap();
//! // Ages with one decimal, at most 150.0, from at most 1000 users.
//! let study = Study::new::<Bgv>(Statistic::Mean, &["age".into()], 1, 1500, 1000, 4096).unwrap();
//! let (secret, public) = study.keygen::<Bgv, _>(&cpu, Sampler::from_seed_u64(1)).unwrap();
//! // Each user on their own machine: 30.5 and 41.2 years.
//! let submissions: Vec<_> = [[305], [412]]
//!     .iter()
//!     .map(|row| study.encrypt_row::<Bgv, _>(&cpu, &public, row, Sampler::from_os().unwrap()).unwrap())
//!     .collect();
//! let aggregates = study.aggregate::<Bgv, _>(&cpu, &public, submissions.iter()).unwrap();
//! let result = study.decrypt::<Bgv, _>(&cpu, &secret, &aggregates).unwrap();
//! assert_eq!(result.users, 2);
//! assert!((result.estimates[0].value - 35.85).abs() < 1e-9);
//! ```

mod files;

pub use files::{EXTENSION, PUBLIC_KEYS_FILE, SECRET_KEYS_FILE, STUDY_FILE};

use std::sync::Arc;

use pimhe_exec::Backend;
use pimhe_math::Sampler;
use pimhe_schemes::encoder::{BatchEncoder, PlainContext};
use pimhe_schemes::rlwe::{CiphertextBatch, Decryptor, Encryptor, PublicKey, RelinKey, RlweScheme, SecretKey};
use serde::{Deserialize, Serialize};

use super::layout::Layout;
use super::scheme::{Ciphertexts, HeScheme, SchemeStats, StatsServer};
use super::{check_noise_budget, crt_totals, plain_moduli_for, Statistic, StatsError};

/// What every party of a study agrees on before any data exists (public: nothing in it is
/// secret). Saved as JSON beside the keys.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Study {
    /// Which statistic.
    pub statistic: Statistic,
    /// The columns each user submits, in order (linreg: the features, then the response).
    pub columns: Vec<String>,
    /// Fixed-point decimal places: each value is submitted as `value * 10^decimals`, exactly.
    pub decimals: u32,
    /// The largest magnitude of a submitted value, in fixed point (`value * 10^decimals`).
    pub max_value: u64,
    /// The most users whose submissions the server may add up.
    pub max_users: usize,
    /// The scheme (`bgv` or `bfv`).
    pub scheme: String,
    /// Ring degree (the scheme's 128-bit preset for it, with each plaintext modulus).
    pub n: usize,
    /// The plaintext moduli: one key set and one computation each, combined by CRT.
    pub plain_moduli: Vec<u32>,
}

/// The analyst's secret keys of a study, one per plaintext modulus (wiped on drop).
pub struct StudySecret<C: RlweScheme> {
    /// Per plaintext modulus, in the study's order.
    pub keys: Vec<SecretKey<C>>,
}

/// The public keys of a study, one set per plaintext modulus: what users encrypt with and the
/// server computes with.
pub struct StudyKeys<C: RlweScheme> {
    /// Per plaintext modulus, the public key.
    pub public: Vec<PublicKey<C>>,
    /// Per plaintext modulus, the relinearization key (where the parameters have special
    /// primes).
    pub relin: Vec<Option<RelinKey<C>>>,
}

/// One user's encrypted row: per plaintext modulus, one ciphertext (a batch of one) per
/// encoded vector of the statistic.
pub struct Submission<B: Backend, C: RlweScheme> {
    /// `ciphertexts[modulus][encoding]`.
    pub ciphertexts: Vec<Vec<CiphertextBatch<B, C>>>,
}

/// The server's output: per plaintext modulus, each aggregate of the statistic, and how many
/// users went into them.
pub struct Aggregates<B: Backend, C: RlweScheme> {
    /// Number of submissions added up.
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
    /// Number of users aggregated (as the server reports it).
    pub users: usize,
    /// The estimates.
    pub estimates: Vec<StudyEstimate>,
    /// Least noise budget left in an aggregate before decryption, in bits.
    pub noise_budget_bits: u32,
}

impl Study {
    /// Declares a study of `statistic` over `columns` with scheme `S` at ring degree `n`:
    /// values of `decimals` places and magnitude at most `max_value` (fixed point), from at
    /// most `max_users` users. Chooses the plaintext moduli that keep every aggregate exact.
    pub fn new<S: HeScheme>(
        statistic: Statistic,
        columns: &[String],
        decimals: u32,
        max_value: u64,
        max_users: usize,
        n: usize,
    ) -> Result<Self, StatsError> {
        if max_users == 0 {
            return Err(StatsError::Input("a study needs at least one user (max users >= 1)".into()));
        }
        let layout = Layout::new(statistic, columns, decimals, n)?;
        let moduli = plain_moduli_for(Self::bound(&layout, max_value, max_users)?, n, S::max_plain_bits(n)?)?;
        Ok(Self {
            statistic,
            columns: columns.to_vec(),
            decimals,
            max_value,
            max_users,
            scheme: S::NAME.to_string(),
            n,
            plain_moduli: moduli,
        })
    }

    /// Checks a study read from a file: that it is one [`Study::new`] makes for scheme `S`
    /// (the same moduli from the same bounds), so that a tampered or stale file is refused
    /// rather than giving wrong totals.
    pub fn validate<S: HeScheme>(&self) -> Result<(), StatsError> {
        let expected =
            Self::new::<S>(self.statistic, &self.columns, self.decimals, self.max_value, self.max_users, self.n)?;
        if *self != expected {
            return Err(StatsError::Input(format!(
                "the study declares scheme {} and plaintext moduli {:?}; scheme {} with these bounds needs {:?}",
                self.scheme,
                self.plain_moduli,
                S::NAME,
                expected.plain_moduli
            )));
        }
        Ok(())
    }

    /// The largest magnitude of an aggregate over `users` users of values up to `max_value`.
    fn bound(layout: &Layout, max_value: u64, users: usize) -> Result<u128, StatsError> {
        layout
            .term_bound(u128::from(max_value))
            .and_then(|term| term.checked_mul(users as u128))
            .filter(|&bound| bound < 1 << 126)
            .ok_or_else(|| {
                StatsError::Capacity(format!(
                    "{users} users of values up to {max_value} (fixed point) can sum past 2^126: \
                     declare fewer users, fewer decimals or smaller values"
                ))
            })
    }

    fn layout(&self) -> Result<Layout, StatsError> {
        Layout::new(self.statistic, &self.columns, self.decimals, self.n)
    }

    /// The contexts of the study's parameter sets, one per plaintext modulus.
    pub fn contexts<S: HeScheme>(&self) -> Result<Vec<Arc<S::Context>>, StatsError> {
        self.validate::<S>()?;
        Ok(self.plain_moduli.iter().map(|&t| S::context(S::parameters(self.n, t)?)).collect::<Result<_, _>>()?)
    }

    /// The analyst's key generation on `backend`: per plaintext modulus a secret key, a public
    /// key and a relinearization key. Checks, on a dummy encryption, that an aggregate of the
    /// most users keeps noise budget, so that a study that could not decrypt is refused before
    /// any user submits.
    pub fn keygen<S: HeScheme, B: Backend>(
        &self,
        backend: &B,
        mut sampler: Sampler,
    ) -> Result<(StudySecret<S::Context>, StudyKeys<S::Context>), StatsError> {
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
        Ok((StudySecret { keys }, StudyKeys { public, relin }))
    }

    /// A user's submission: `row` (one fixed-point value per column, each at most
    /// [`Study::max_value`] in magnitude) encoded and encrypted under every public key.
    pub fn encrypt_row<S: HeScheme, B: Backend>(
        &self,
        backend: &B,
        keys: &StudyKeys<S::Context>,
        row: &[i64],
        mut sampler: Sampler,
    ) -> Result<Submission<B, S::Context>, StatsError> {
        let layout = self.layout()?;
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
                        Ok(encryptor.encrypt(&[plain])?)
                    })
                    .collect::<Result<Vec<_>, StatsError>>()
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Submission { ciphertexts })
    }

    /// The server: adds up `submissions` (at most [`Study::max_users`]) on `backend` with the
    /// public keys only, [`super::USERS_PER_ROUND`] users at a time (each round's submissions
    /// gathered into one batch per encoding).
    pub fn aggregate<'s, S: HeScheme, B: Backend + 's>(
        &self,
        backend: &B,
        keys: &StudyKeys<S::Context>,
        submissions: impl IntoIterator<Item = &'s Submission<B, S::Context>>,
    ) -> Result<Aggregates<B, S::Context>, StatsError> {
        let layout = self.layout()?;
        self.check_keys(keys.relin.len(), "relinearization keys")?;
        let mut submissions = submissions.into_iter().peekable();
        let mut users = 0;
        let mut running: Vec<Option<Vec<Ciphertexts<S, B>>>> = (0..self.plain_moduli.len()).map(|_| None).collect();
        while submissions.peek().is_some() {
            let round: Vec<&Submission<B, S::Context>> = submissions.by_ref().take(super::USERS_PER_ROUND).collect();
            users += round.len();
            if users > self.max_users {
                return Err(StatsError::Capacity(format!(
                    "more than the {} users the study declares: its plaintext moduli hold no more exactly",
                    self.max_users
                )));
            }
            for (m, submission) in round.iter().enumerate() {
                let shape: Vec<usize> = submission.ciphertexts.iter().map(Vec::len).collect();
                if shape != vec![layout.encodings().len(); self.plain_moduli.len()] {
                    return Err(StatsError::Input(format!(
                        "submission {} holds {shape:?} ciphertexts per plaintext modulus; the study needs {} for each \
                         of its {} moduli",
                        users - round.len() + m,
                        layout.encodings().len(),
                        self.plain_moduli.len()
                    )));
                }
            }
            for (m, (public, relin)) in keys.public.iter().zip(&keys.relin).enumerate() {
                let server = StatsServer::<S, B>::new(backend, public.context(), relin.as_ref());
                let gathered = (0..layout.encodings().len())
                    .map(|e| {
                        let batches: Vec<&Ciphertexts<S, B>> = round.iter().map(|s| &s.ciphertexts[m][e]).collect();
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
        Ok(Aggregates { users, ciphertexts })
    }

    /// The analyst: decrypts the aggregates, rebuilds the exact totals by CRT and computes the
    /// statistic from them.
    pub fn decrypt<S: HeScheme, B: Backend>(
        &self,
        backend: &B,
        secret: &StudySecret<S::Context>,
        aggregates: &Aggregates<B, S::Context>,
    ) -> Result<StudyResult, StatsError> {
        let layout = self.layout()?;
        self.check_keys(secret.keys.len(), "secret keys")?;
        self.check_keys(aggregates.ciphertexts.len(), "aggregate sets")?;
        if aggregates.users == 0 || aggregates.users > self.max_users {
            return Err(StatsError::Input(format!(
                "the aggregates claim {} users; the study allows 1 ..= {}",
                aggregates.users, self.max_users
            )));
        }
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
            for aggregate in ciphertexts {
                noise_budget_bits =
                    noise_budget_bits.min(decryptor.noise_budget(aggregate)?.into_iter().min().unwrap_or(0));
                let plains = decryptor.decrypt(aggregate)?;
                let mut slots = encoder.decode(&plains[0])?;
                slots.truncate(layout.slots());
                per_aggregate.push(slots);
            }
            sums.push(per_aggregate);
        }
        if noise_budget_bits == 0 {
            return Err(StatsError::Capacity(
                "an aggregate has no noise budget left: its decryption would be garbage".into(),
            ));
        }
        let sums: Vec<&[Vec<u64>]> = sums.iter().map(Vec::as_slice).collect();
        let totals = crt_totals(&sums, &self.plain_moduli);
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
}

/// Errors unless `ctx` is the parameter set of plaintext modulus `t` (keys given in the
/// study's order).
fn expect_plain_modulus<S: HeScheme>(ctx: &Arc<S::Context>, t: u32) -> Result<(), StatsError> {
    let found = ctx.plain_space().modulus().value();
    if found != t {
        return Err(StatsError::Input(format!(
            "a key of plaintext modulus {found} where the study expects {t}: keys must come in the study's order"
        )));
    }
    Ok(())
}
