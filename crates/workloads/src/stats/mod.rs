//! Encrypted statistics over many users, the workloads of seed 002: mean, variance and linear
//! regression.
//!
//! ## Packing
//! Every user encrypts their own row, so one ciphertext per user and encoded vector, with the
//! selected columns in its slots (seed 002 likewise encrypts per user). A sum over users is a
//! sum over the ciphertext batch ([`pimhe_exec::Backend::sum`]): no rotation keys are needed
//! and the client reads each total from one slot. Mean needs the sum, variance also the sum of
//! squares (one product per user). Linear regression encodes each row twice, as `A` and `B`,
//! so that the slot-wise product `A * B` holds every product `z_i z_j` (i <= j) of
//! `z = (1, x_1, .., x_k, y)`: one multiplication per user yields X^T X, X^T y and y^T y, the
//! sufficient statistics; the client solves the normal equations (k <= 8 features: 55 slots).
//! Users go through in rounds ([`USERS_PER_ROUND`]): each round is encrypted and aggregated and
//! its aggregates added to the running ones, so memory does not grow with the number of users.
//!
//! ## Exactness
//! Values are fixed-point integers (scale 10^d, stated in the report). The client knows every
//! aggregate's largest possible magnitude before encrypting and picks the plaintext modulus
//! from it: the smallest batching prime that holds it, or, past 2^29, several 30-bit primes
//! whose product does; the computation runs once per prime and the totals are rebuilt by CRT
//! (at most [`MAX_PLAIN_MODULI`]). It also checks, on a dummy encryption, that the noise
//! budget survives the sum over all users. What cannot be computed exactly is refused before
//! any user's data is encrypted. After decryption the client's arithmetic is exact too, in big
//! integers ([`exact`]), rounded to `f64` once at the end; the plaintext column beside it is an
//! independent `f64` computation from the values.
//!
//! ## Memory
//! A plan holds no copy of the rows: each user's encodings are made as their round is
//! encrypted. The dataset is the one buffer sized by the number of users, and its constructors
//! refuse what would not fit in memory ([`pimhe_ring::memory`]).

pub mod dataset;
pub mod exact;
mod layout;
mod plaintext;
pub mod scheme;
pub mod sharded;
pub mod study;

use std::sync::Arc;
use std::time::Instant;

use pimhe_math::{ntt_primes, Modulus};
use pimhe_ring::memory::OutOfMemory;
use pimhe_schemes::SchemeError;
use serde::{Deserialize, Serialize};

use layout::{Aggregate, Layout};

use crate::progress::Progress;

pub use dataset::Dataset;
pub use scheme::{Aggregator, BfvStats, BgvStats, SchemeStats, StatsScheme, StatsServer};

/// Most plaintext moduli a statistic may need (their product stays below 2^120, inside i128).
pub const MAX_PLAIN_MODULI: usize = 4;

/// Most regression features.
pub const MAX_FEATURES: usize = 8;

/// Why a statistic could not be computed.
#[derive(Debug, thiserror::Error)]
pub enum StatsError {
    /// Bad input data or arguments (found before anything is encrypted).
    #[error("{0}")]
    Input(String),
    /// Too many users or too large values for exact results with these parameters, or for
    /// the memory available (found before any user's data is encrypted).
    #[error("{0}")]
    Capacity(String),
    /// Decrypted aggregates that honest parties within the declared bounds cannot produce (a
    /// client past the bounds, an altered file): found after decryption, and no number is given.
    #[error("{0}")]
    Integrity(String),
    /// The scheme failed.
    #[error(transparent)]
    Scheme(#[from] SchemeError),
}

impl From<OutOfMemory> for StatsError {
    fn from(e: OutOfMemory) -> Self {
        StatsError::Capacity(e.to_string())
    }
}

/// The statistics of seed 002.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Statistic {
    /// Arithmetic mean of every column.
    Mean,
    /// Population variance of every column, `E[x^2] - E[x]^2`.
    Variance,
    /// Least squares of the last column on the others (with an intercept).
    Linreg,
}

impl Statistic {
    /// The name the CLI uses.
    pub fn name(self) -> &'static str {
        match self {
            Statistic::Mean => "mean",
            Statistic::Variance => "variance",
            Statistic::Linreg => "linreg",
        }
    }
}

/// What to encrypt and compute for a statistic over a dataset, and with which plaintext moduli.
#[derive(Debug)]
pub struct StatsPlan {
    layout: Layout,
    /// Where [`StatsPlan::execute`] reports the users encrypted ([`StatsPlan::with_progress`]).
    progress: ProgressHook,
    data: Dataset,
    /// Per aggregate and slot, the exact total (the plaintext computation, for the check).
    expected: Vec<Vec<i128>>,
    plain_moduli: Vec<u32>,
    /// Users encrypted and aggregated at a time ([`StatsPlan::with_users_per_round`]).
    users_per_round: usize,
}

/// Users whose ciphertexts the client and server hold at once by default: about 1.3 GB of BGV
/// ciphertexts at N = 8192 per encoded vector, so 81920 users run in 20 rounds instead of
/// needing 27 GB at once.
pub const USERS_PER_ROUND: usize = 4096;

/// The optional progress reporter of a plan (a newtype so that the plan stays `Debug`).
#[derive(Clone, Default)]
struct ProgressHook(Option<Arc<dyn Progress>>);

impl std::fmt::Debug for ProgressHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() { "Some(Progress)" } else { "None" })
    }
}

/// The result of the computation under one plaintext modulus.
#[derive(Debug, Clone, Serialize)]
pub struct ModulusRun {
    /// The plaintext modulus.
    pub plain_modulus: u32,
    /// Per aggregate, its slots mod t.
    #[serde(skip)]
    sums: Vec<Vec<u64>>,
    /// Client: encoding and encryption of every user's vectors.
    pub client_encrypt_s: f64,
    /// Server: the aggregates.
    pub server_s: f64,
    /// Client: decryption of the aggregates.
    pub client_decrypt_s: f64,
    /// Least noise budget left in an aggregate before decryption, in bits.
    pub noise_budget_bits: u32,
}

/// One reported number, computed encrypted and in plaintext.
#[derive(Debug, Clone, Serialize)]
pub struct Estimate {
    /// What it is, e.g. `mean(age)`, `coef(x1)`, `r2`.
    pub name: String,
    /// From the decrypted aggregates, in exact arithmetic rounded once ([`exact::estimates`]; an
    /// R^2 of a constant response is NaN).
    pub encrypted: f64,
    /// From the same data in plaintext (f64, independent formulas: the check beside the answer).
    pub plaintext: f64,
    /// |encrypted - plaintext|.
    pub abs_error: f64,
}

/// A statistic's outcome.
#[derive(Debug, Clone, Serialize)]
pub struct StatsReport {
    /// Which statistic.
    pub statistic: Statistic,
    /// Number of users.
    pub users: usize,
    /// Columns (for linreg the last is the response).
    pub columns: Vec<String>,
    /// Fixed-point scale 10^decimals.
    pub decimals: u32,
    /// Plaintext moduli used (several: CRT).
    pub plain_moduli: Vec<u32>,
    /// The results.
    pub estimates: Vec<Estimate>,
    /// Whether every decrypted aggregate equals the exact plaintext total.
    pub aggregates_exact: bool,
    /// Per plaintext modulus: times and noise.
    pub runs: Vec<ModulusRun>,
}

impl StatsPlan {
    /// Plans `statistic` over `data` for ring degree `n`: the encodings, the aggregates, and the
    /// plaintext moduli that hold every aggregate exactly, each of at most `max_plain_bits` bits
    /// ([`pimhe_schemes::encoder::ExactScheme::max_plain_bits`]: BGV needs t below every prime
    /// of its modulus chain).
    pub fn new(statistic: Statistic, data: Dataset, n: usize, max_plain_bits: u32) -> Result<Self, StatsError> {
        let layout = Layout::new(statistic, data.columns(), data.decimals(), n)?;
        let mut plan = Self {
            layout,
            data,
            expected: Vec::new(),
            plain_moduli: Vec::new(),
            users_per_round: USERS_PER_ROUND,
            progress: ProgressHook::default(),
        };
        let (expected, bound) = plan.exact_totals().ok_or_else(|| {
            StatsError::Capacity(format!(
                "the aggregates of {} users exceed 2^127: use fewer decimals or smaller values",
                plan.data.users()
            ))
        })?;
        // What the exact arithmetic refuses (a singular regression) is refused now, before
        // any user's data is encrypted, rather than after decryption.
        plan.layout.estimates(plan.data.users(), &expected)?;
        plan.plain_moduli = plain_moduli_for(bound, n, max_plain_bits)?;
        plan.expected = expected;
        Ok(plan)
    }

    /// The plaintext moduli to run with, one computation each.
    pub fn plain_moduli(&self) -> &[u32] {
        &self.plain_moduli
    }

    /// The dataset.
    pub fn data(&self) -> &Dataset {
        &self.data
    }

    /// Encrypts and aggregates `users` users at a time (at least 1; default [`USERS_PER_ROUND`]):
    /// each round's aggregates are added to the running ones on the server, so memory stays
    /// bounded by one round whatever the number of users.
    pub fn with_users_per_round(mut self, users: usize) -> Self {
        self.users_per_round = users.max(1);
        self
    }

    /// Reports the users encrypted to `progress`: [`StatsPlan::execute`] starts it with
    /// users x plaintext moduli steps and finishes it, and every round of
    /// [`StatsPlan::run`] advances it by the users it encrypted and aggregated.
    pub fn with_progress(mut self, progress: Arc<dyn Progress>) -> Self {
        self.progress = ProgressHook(Some(progress));
        self
    }

    /// The whole computation with one scheme per plaintext modulus, in the order of
    /// [`StatsPlan::plain_moduli`]: every noise budget is checked before any user's data is
    /// encrypted, then each scheme runs, then the results are combined.
    ///
    /// ```
    /// use pimhe_exec::CpuBackend;
    /// use pimhe_math::Sampler;
    /// use pimhe_schemes::bfv::BfvContext;
    /// use pimhe_schemes::encoder::ExactScheme;
    /// use pimhe_workloads::stats::{BfvStats, Dataset, Statistic, StatsPlan};
    /// let data = Dataset::from_csv("age\n30\n40\n-5.5\n".as_bytes(), &["age"], None).unwrap();
    /// let plan = StatsPlan::new(Statistic::Mean, data, 8192, BfvContext::max_plain_bits(8192).unwrap()).unwrap();
    /// let backend = CpuBackend::new(Some(2)).unwrap();
    /// let mut schemes = plan
    ///     .plain_moduli()
    ///     .iter()
    ///     .map(|&t| {
    ///         let params = BfvContext::preset_with_plain_modulus(8192, t)?;
    ///         BfvStats::new(&backend, &backend, params, Sampler::from_seed_u64(1))
    ///     })
    ///     .collect::<Result<Vec<_>, _>>()
    ///     .unwrap();
    /// let report = plan.execute(&mut schemes).unwrap();
    /// assert!(report.aggregates_exact);
    /// assert!((report.estimates[0].encrypted - 21.5).abs() < 1e-9);
    /// ```
    pub fn execute<S: StatsScheme>(&self, schemes: &mut [S]) -> Result<StatsReport, StatsError> {
        for scheme in schemes.iter_mut() {
            self.check_noise_budget(scheme)?;
        }
        if let Some(progress) = &self.progress.0 {
            progress.start((self.data.users() * schemes.len()) as u64, "users encrypted");
        }
        let runs = schemes.iter_mut().map(|scheme| self.run(scheme)).collect::<Result<Vec<_>, _>>();
        if let Some(progress) = &self.progress.0 {
            progress.finish();
        }
        self.finish(runs?)
    }

    /// Checks on a dummy encryption (no user data) that an aggregate over all users keeps
    /// at least one bit of noise budget with `scheme`'s parameters.
    pub fn check_noise_budget<S: StatsScheme>(&self, scheme: &mut S) -> Result<(), StatsError> {
        check_noise_budget(&self.layout, self.data.users(), scheme)
    }

    /// Client encrypts, server aggregates, client decrypts, under `scheme`'s plaintext modulus
    /// (one of [`StatsPlan::plain_moduli`]).
    pub fn run<S: StatsScheme>(&self, scheme: &mut S) -> Result<ModulusRun, StatsError> {
        let t = scheme.plain_modulus();
        if !self.plain_moduli.contains(&t) {
            return Err(StatsError::Input(format!("t = {t} is not one of the plan's {:?}", self.plain_moduli)));
        }
        let (mut client_encrypt_s, mut server_s) = (0.0, 0.0);
        let mut aggregates: Option<Vec<S::Ciphertexts>> = None;
        for first in (0..self.data.users()).step_by(self.users_per_round) {
            let users = first..first.saturating_add(self.users_per_round).min(self.data.users());
            let start = Instant::now();
            let ciphertexts = self
                .layout
                .encodings()
                .iter()
                .map(|&encoding| {
                    let reduced: Vec<Vec<u64>> = self.data.rows()[users.clone()]
                        .iter()
                        .map(|row| self.layout.encode_mod(encoding, row, t))
                        .collect();
                    scheme.encrypt(&reduced)
                })
                .collect::<Result<Vec<_>, _>>()?;
            client_encrypt_s += start.elapsed().as_secs_f64();

            let start = Instant::now();
            aggregates = Some(self.layout.aggregate(scheme, &ciphertexts, aggregates)?);
            server_s += start.elapsed().as_secs_f64();
            if let Some(progress) = &self.progress.0 {
                progress.advance(users.len() as u64);
            }
        }
        let aggregates = aggregates.ok_or_else(|| StatsError::Input("the dataset has no users".into()))?;

        let start = Instant::now();
        let mut noise_budget_bits = u32::MAX;
        let mut sums = Vec::with_capacity(aggregates.len());
        for aggregate in &aggregates {
            noise_budget_bits = noise_budget_bits.min(scheme.noise_budget(aggregate)?[0]);
            let mut slots = scheme.decrypt(aggregate)?;
            slots.truncate(self.layout.slots());
            sums.push(slots);
        }
        let client_decrypt_s = start.elapsed().as_secs_f64();
        Ok(ModulusRun { plain_modulus: t, sums, client_encrypt_s, server_s, client_decrypt_s, noise_budget_bits })
    }

    /// Rebuilds the exact totals from one run per plaintext modulus (CRT) and computes the
    /// statistic from them, beside the plaintext computation.
    pub fn finish(&self, mut runs: Vec<ModulusRun>) -> Result<StatsReport, StatsError> {
        runs.sort_by_key(|r| self.plain_moduli.iter().position(|&t| t == r.plain_modulus));
        let moduli: Vec<u32> = runs.iter().map(|r| r.plain_modulus).collect();
        if moduli != self.plain_moduli {
            return Err(StatsError::Input(format!("runs for {moduli:?}; the plan needs {:?}", self.plain_moduli)));
        }
        let sums: Vec<&[Vec<u64>]> = runs.iter().map(|r| r.sums.as_slice()).collect();
        let totals = crt_totals(&sums, &moduli);
        let aggregates_exact = totals == self.expected;
        let encrypted = self.layout.estimates(self.data.users(), &totals)?;
        let plaintext = plaintext::estimates(self.layout.statistic(), &self.data);
        let estimates = self
            .layout
            .estimate_names()
            .into_iter()
            .zip(encrypted.into_iter().zip(plaintext))
            .map(|(name, (encrypted, plaintext))| Estimate {
                name,
                encrypted,
                plaintext,
                abs_error: (encrypted - plaintext).abs(),
            })
            .collect();
        Ok(StatsReport {
            statistic: self.layout.statistic(),
            users: self.data.users(),
            columns: self.data.columns().to_vec(),
            decimals: self.data.decimals(),
            plain_moduli: self.plain_moduli.clone(),
            estimates,
            aggregates_exact,
            runs,
        })
    }

    /// Per aggregate and slot, the exact total over users (the plaintext computation), and
    /// the largest sum of magnitudes of the terms of a slot, which bounds the total whatever
    /// the signs; `None` past the range of i128.
    fn exact_totals(&self) -> Option<(Vec<Vec<i128>>, u128)> {
        let mut totals = vec![vec![0i128; self.layout.slots()]; self.layout.aggregates().len()];
        let mut magnitudes = totals.clone();
        for row in self.data.rows() {
            let terms = self.layout.terms(row);
            for ((terms, total), magnitude) in terms.iter().zip(&mut totals).zip(&mut magnitudes) {
                for ((&term, total), magnitude) in terms.iter().zip(total).zip(magnitude) {
                    *total = total.checked_add(term)?;
                    *magnitude = magnitude.checked_add(term.abs())?;
                }
            }
        }
        let bound = magnitudes.iter().flatten().map(|&m| m.unsigned_abs()).max().unwrap_or(0);
        Some((totals, bound))
    }
}

/// Checks on a dummy encryption (no user data) that an aggregate of `layout` over `users` users
/// keeps at least one bit of noise budget with `scheme`'s parameters.
fn check_noise_budget<S: StatsScheme>(layout: &Layout, users: usize, scheme: &mut S) -> Result<(), StatsError> {
    let t = u64::from(scheme.plain_modulus());
    let worst = vec![vec![(t - 1) / 2; layout.slots()]];
    let growth = (users as f64).log2().ceil() as u32;
    for &aggregate in layout.aggregates() {
        let (left, what) = match aggregate {
            Aggregate::Sum(_) => (scheme.encrypt(&worst)?, "a fresh ciphertext"),
            Aggregate::Product(_, _) => {
                let a = scheme.encrypt(&worst)?;
                (scheme.sum_of_products(&a, &a)?, "one product")
            }
        };
        let budget = scheme.noise_budget(&left)?[0];
        if budget < growth + 2 {
            return Err(StatsError::Capacity(format!(
                "with {} parameters (t = {t}) {what} keeps {budget} bits of noise budget, and the sum over \
                 {} users needs {}: use a larger ring degree (--n {} or more) or fewer users",
                scheme.name(),
                users,
                growth + 2,
                scheme.slots().saturating_mul(2)
            )));
        }
    }
    Ok(())
}

/// Per aggregate and slot, the exact total from its residues modulo each of `moduli`
/// (`sums[k][aggregate][slot]` modulo `moduli[k]`), by CRT.
fn crt_totals(sums: &[&[Vec<u64>]], moduli: &[u32]) -> Vec<Vec<i128>> {
    let Some(first) = sums.first() else { return Vec::new() };
    (0..first.len())
        .map(|a| {
            (0..first[a].len())
                .map(|slot| {
                    let residues: Vec<u64> = sums.iter().map(|s| s[a][slot]).collect();
                    crt_centered(&residues, moduli)
                })
                .collect()
        })
        .collect()
}

/// Plaintext moduli (batching primes for degree `n`) whose product exceeds 2 * `bound`: one as
/// small as possible when one of at most `max_bits` bits holds it, else several of `max_bits`.
fn plain_moduli_for(bound: u128, n: usize, max_bits: u32) -> Result<Vec<u32>, StatsError> {
    plain_moduli_sized(bound, n, max_bits, false)
}

/// [`plain_moduli_for`], but several moduli are each as small as their count allows (the less t,
/// the less noise: a study's submissions then keep fewer primes). The in-process plan keeps
/// [`plain_moduli_for`]'s, which its recorded outputs show.
fn balanced_plain_moduli(bound: u128, n: usize, max_bits: u32) -> Result<Vec<u32>, StatsError> {
    plain_moduli_sized(bound, n, max_bits, true)
}

fn plain_moduli_sized(bound: u128, n: usize, max_bits: u32, balanced: bool) -> Result<Vec<u32>, StatsError> {
    // bound < 2^127 (a sum of magnitudes in i128), so 2 bound + 1 fits.
    let needed_bits = 128 - (2 * bound + 1).leading_zeros();
    if max_bits > 30 {
        return Err(StatsError::Input(format!("plaintext moduli of {max_bits} bits: at most 30 are supported")));
    }
    // A prime of b bits exceeds 2^(b-1) >= 2 * bound; the smallest size with a batching prime
    // wins (the less t, the less noise). Sizes below 2N + 1 have none.
    let first = (needed_bits + 1).max(n.trailing_zeros() + 3);
    if let Some(t) = (first..=max_bits).find_map(|bits| ntt_primes(bits, n, 1, &[]).ok()) {
        return Ok(t);
    }
    // Each prime of `max_bits` bits is above 2^(max_bits - 1).
    let count = needed_bits.div_ceil(max_bits - 1) as usize;
    if count > MAX_PLAIN_MODULI {
        return Err(StatsError::Capacity(format!(
            "an aggregate can reach {bound} (about 2^{needed_bits}), beyond {MAX_PLAIN_MODULI} plaintext moduli of \
             {max_bits} bits: use fewer decimals, smaller values or fewer users"
        )));
    }
    // `count` primes of b bits exceed 2^(count (b - 1)) >= 2^needed_bits > 2 bound + 1.
    let smallest =
        if balanced { (needed_bits.div_ceil(count as u32) + 1).max(n.trailing_zeros() + 3) } else { max_bits };
    (smallest..max_bits).find_map(|bits| ntt_primes(bits, n, count, &[]).ok()).map_or_else(
        || {
            ntt_primes(max_bits, n, count, &[]).map_err(|e| {
                StatsError::Capacity(format!("no {count} plaintext moduli of {max_bits} bits for N = {n}: {e}"))
            })
        },
        Ok,
    )
}

/// The integer in (-P/2, P/2] congruent to `residues` modulo the pairwise coprime `moduli`
/// (product P < 2^120), by Garner's mixed-radix method.
fn crt_centered(residues: &[u64], moduli: &[u32]) -> i128 {
    let mut value: u128 = 0;
    let mut product: u128 = 1;
    for (&r, &t) in residues.iter().zip(moduli) {
        let q = Modulus::new(u64::from(t)).expect("plaintext moduli are below 2^30");
        let current = (value % u128::from(t)) as u32;
        let inverse = q.inv((product % u128::from(t)) as u32).expect("moduli are coprime");
        let digit = q.mul(q.sub(r as u32, current), inverse);
        value += u128::from(digit) * product;
        product *= u128::from(t);
    }
    if value > product / 2 {
        value as i128 - product as i128
    } else {
        value as i128
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crt_rebuilds_signed_values_across_moduli() {
        let moduli = ntt_primes(30, 1024, 3, &[]).unwrap();
        for value in [0i128, 1, -1, 123_456_789_012_345, -(1 << 85), (1 << 86) - 7] {
            let residues: Vec<u64> = moduli.iter().map(|&t| value.rem_euclid(i128::from(t)) as u64).collect();
            assert_eq!(crt_centered(&residues, &moduli), value);
        }
    }

    #[test]
    fn plain_moduli_grow_with_the_bound() {
        let one = plain_moduli_for(1000, 8192, 29).unwrap();
        assert_eq!(one.len(), 1);
        assert!(u128::from(one[0]) > 2000 && one[0] % 16384 == 1);
        let many = plain_moduli_for(1 << 70, 8192, 29).unwrap();
        assert!(many.iter().all(|&t| t < 1 << 29));
        assert!(many.iter().map(|&t| u128::from(t)).product::<u128>() > 2 << 70);
        assert!(plain_moduli_for(1 << 118, 8192, 29).is_err());
    }
}
