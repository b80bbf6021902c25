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
//! any user's data is encrypted.

pub mod dataset;
mod normal_equations;
pub mod scheme;

use std::time::Instant;

use pimhe_math::{ntt_primes, Modulus};
use pimhe_schemes::SchemeError;
use serde::Serialize;

pub use dataset::Dataset;
pub use scheme::{Bfv, BfvStats, Bgv, BgvStats, HeScheme, SchemeStats, StatsScheme};

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
    /// Too many users or too large values for exact results with these parameters (found
    /// before any user's data is encrypted).
    #[error("{0}")]
    Capacity(String),
    /// The scheme failed.
    #[error(transparent)]
    Scheme(#[from] SchemeError),
}

/// The statistics of seed 002.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
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

/// One aggregate the server computes: the slot-wise sum over users of one encoded vector, or of
/// the product of two (indices into the plan's encodings).
#[derive(Debug, Clone, Copy)]
enum Aggregate {
    Sum(usize),
    Product(usize, usize),
}

/// What to encrypt and compute for a statistic over a dataset, and with which plaintext moduli.
#[derive(Debug)]
pub struct StatsPlan {
    statistic: Statistic,
    data: Dataset,
    /// encodings[e][user][slot], exact integers.
    encodings: Vec<Vec<Vec<i64>>>,
    aggregates: Vec<Aggregate>,
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
    /// From the decrypted aggregates.
    pub encrypted: f64,
    /// From the same data in plaintext (f64, independent formulas).
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
    /// ([`HeScheme::max_plain_bits`]: BGV needs t below every prime of its modulus chain).
    pub fn new(statistic: Statistic, data: Dataset, n: usize, max_plain_bits: u32) -> Result<Self, StatsError> {
        let columns = data.columns().len();
        let (encodings, aggregates) = match statistic {
            Statistic::Mean => (vec![data.rows().to_vec()], vec![Aggregate::Sum(0)]),
            Statistic::Variance => (vec![data.rows().to_vec()], vec![Aggregate::Sum(0), Aggregate::Product(0, 0)]),
            Statistic::Linreg => {
                if !(2..=MAX_FEATURES + 1).contains(&columns) {
                    return Err(StatsError::Input(format!(
                        "linreg needs 1 ..= {MAX_FEATURES} feature columns and the response last; {columns} given"
                    )));
                }
                let pairs = upper_pairs(columns + 1);
                let one = 10i64.pow(data.decimals());
                let z = |row: &Vec<i64>| -> Vec<i64> { std::iter::once(one).chain(row.iter().copied()).collect() };
                let left = data.rows().iter().map(|r| pairs.iter().map(|&(i, _)| z(r)[i]).collect()).collect();
                let right = data.rows().iter().map(|r| pairs.iter().map(|&(_, j)| z(r)[j]).collect()).collect();
                (vec![left, right], vec![Aggregate::Product(0, 1)])
            }
        };
        let slots_needed = encodings[0][0].len();
        if slots_needed > n {
            return Err(StatsError::Input(format!("{slots_needed} slots needed; N = {n} has {n}")));
        }
        let too_large = || {
            StatsError::Capacity(format!(
                "the aggregates of {} users exceed 2^127: use fewer decimals or smaller values",
                data.users()
            ))
        };
        let expected = aggregates
            .iter()
            .map(|&aggregate| exact_totals(&encodings, aggregate, |x| x).ok_or_else(too_large))
            .collect::<Result<Vec<_>, _>>()?;
        let mut bound = 0u128;
        for &aggregate in &aggregates {
            let magnitudes = exact_totals(&encodings, aggregate, i128::abs).ok_or_else(too_large)?;
            bound = bound.max(magnitudes.into_iter().max().unwrap_or(0) as u128);
        }
        let plain_moduli = plain_moduli_for(bound, n, max_plain_bits)?;
        Ok(Self { statistic, data, encodings, aggregates, expected, plain_moduli, users_per_round: USERS_PER_ROUND })
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

    /// The whole computation with one scheme per plaintext modulus, in the order of
    /// [`StatsPlan::plain_moduli`]: every noise budget is checked before any user's data is
    /// encrypted, then each scheme runs, then the results are combined.
    ///
    /// ```
    /// use pimhe_exec::CpuBackend;
    /// use pimhe_math::Sampler;
    /// use pimhe_workloads::stats::{Bfv, BfvStats, Dataset, HeScheme, Statistic, StatsPlan};
    /// let data = Dataset::from_csv("age\n30\n40\n-5.5\n".as_bytes(), &["age"], None).unwrap();
    /// let plan = StatsPlan::new(Statistic::Mean, data, 8192, Bfv::max_plain_bits(8192).unwrap()).unwrap();
    /// let backend = CpuBackend::new(Some(2)).unwrap();
    /// let mut schemes = plan
    ///     .plain_moduli()
    ///     .iter()
    ///     .map(|&t| BfvStats::new(&backend, &backend, Bfv::parameters(8192, t)?, Sampler::from_seed_u64(1)))
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
        let runs = schemes.iter_mut().map(|scheme| self.run(scheme)).collect::<Result<Vec<_>, _>>()?;
        self.finish(runs)
    }

    /// Checks on a dummy encryption (no user data) that an aggregate over all users keeps
    /// at least one bit of noise budget with `scheme`'s parameters.
    pub fn check_noise_budget<S: StatsScheme>(&self, scheme: &mut S) -> Result<(), StatsError> {
        let t = u64::from(scheme.plain_modulus());
        let worst = vec![vec![(t - 1) / 2; self.encodings[0][0].len()]];
        let growth = (self.data.users() as f64).log2().ceil() as u32;
        for &aggregate in &self.aggregates {
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
                     {} users needs {}: use a larger ring degree (--n) or fewer users",
                    scheme.name(),
                    self.data.users(),
                    growth + 2
                )));
            }
        }
        Ok(())
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
            let users = first..(first + self.users_per_round).min(self.data.users());
            let start = Instant::now();
            let ciphertexts = self
                .encodings
                .iter()
                .map(|rows| {
                    let reduced: Vec<Vec<u64>> = rows[users.clone()]
                        .iter()
                        .map(|row| row.iter().map(|&v| v.rem_euclid(i64::from(t)) as u64).collect())
                        .collect();
                    scheme.encrypt(&reduced)
                })
                .collect::<Result<Vec<_>, _>>()?;
            client_encrypt_s += start.elapsed().as_secs_f64();

            let start = Instant::now();
            let round = self
                .aggregates
                .iter()
                .map(|&aggregate| match aggregate {
                    Aggregate::Sum(e) => scheme.sum(&ciphertexts[e]),
                    Aggregate::Product(e, f) => scheme.sum_of_products(&ciphertexts[e], &ciphertexts[f]),
                })
                .collect::<Result<Vec<_>, _>>()?;
            aggregates = Some(match aggregates {
                None => round,
                Some(running) => {
                    running.iter().zip(&round).map(|(a, b)| scheme.add(a, b)).collect::<Result<Vec<_>, _>>()?
                }
            });
            server_s += start.elapsed().as_secs_f64();
        }
        let aggregates = aggregates.ok_or_else(|| StatsError::Input("the dataset has no users".into()))?;

        let start = Instant::now();
        let mut noise_budget_bits = u32::MAX;
        let mut sums = Vec::with_capacity(aggregates.len());
        for aggregate in &aggregates {
            noise_budget_bits = noise_budget_bits.min(scheme.noise_budget(aggregate)?[0]);
            let mut slots = scheme.decrypt(aggregate)?;
            slots.truncate(self.encodings[0][0].len());
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
        let totals: Vec<Vec<i128>> = (0..self.aggregates.len())
            .map(|a| {
                (0..self.expected[a].len())
                    .map(|slot| {
                        let residues: Vec<u64> = runs.iter().map(|r| r.sums[a][slot]).collect();
                        crt_centered(&residues, &moduli)
                    })
                    .collect()
            })
            .collect();
        let aggregates_exact = totals == self.expected;
        let estimates = match self.statistic {
            Statistic::Mean => self.means(&totals),
            Statistic::Variance => self.variances(&totals),
            Statistic::Linreg => normal_equations::regression(&self.data, &totals[0])?,
        };
        Ok(StatsReport {
            statistic: self.statistic,
            users: self.data.users(),
            columns: self.data.columns().to_vec(),
            decimals: self.data.decimals(),
            plain_moduli: self.plain_moduli.clone(),
            estimates,
            aggregates_exact,
            runs,
        })
    }

    fn means(&self, totals: &[Vec<i128>]) -> Vec<Estimate> {
        let (n, scale) = (self.data.users() as f64, self.data.scale());
        self.each_column(|c, column| {
            let plaintext = column.iter().map(|&x| x as f64 / scale).sum::<f64>() / n;
            (format!("mean({c})"), totals[0][self.index(c)] as f64 / scale / n, plaintext)
        })
    }

    fn variances(&self, totals: &[Vec<i128>]) -> Vec<Estimate> {
        let (n, scale) = (self.data.users() as f64, self.data.scale());
        self.each_column(|c, column| {
            let slot = self.index(c);
            // n^2 scale^2 var = n sum(x^2) - sum(x)^2, exact in integers before the one division.
            let users = self.data.users() as i128;
            let numerator = users * totals[1][slot] - totals[0][slot] * totals[0][slot];
            let encrypted = numerator as f64 / (n * n * scale * scale);
            // Plaintext: the two-pass formula on the values.
            let mean = column.iter().map(|&x| x as f64 / scale).sum::<f64>() / n;
            let plaintext = column.iter().map(|&x| (x as f64 / scale - mean).powi(2)).sum::<f64>() / n;
            (format!("variance({c})"), encrypted, plaintext)
        })
    }

    fn index(&self, column: &str) -> usize {
        self.data.columns().iter().position(|c| c == column).expect("a column of the dataset")
    }

    fn each_column(&self, estimate: impl Fn(&str, Vec<i64>) -> (String, f64, f64)) -> Vec<Estimate> {
        self.data
            .columns()
            .iter()
            .enumerate()
            .map(|(index, c)| {
                let column = self.data.rows().iter().map(|r| r[index]).collect();
                let (name, encrypted, plaintext) = estimate(c, column);
                Estimate { name, encrypted, plaintext, abs_error: (encrypted - plaintext).abs() }
            })
            .collect()
    }
}

/// Index pairs (i, j), i <= j < size, in row order: the slots of the regression encoding.
fn upper_pairs(size: usize) -> Vec<(usize, usize)> {
    (0..size).flat_map(|i| (i..size).map(move |j| (i, j))).collect()
}

/// Per slot, the sum over users of `f(term)`, the term being the encoded value or product;
/// `None` past the range of i128.
fn exact_totals(encodings: &[Vec<Vec<i64>>], aggregate: Aggregate, f: impl Fn(i128) -> i128) -> Option<Vec<i128>> {
    let slots = encodings[0][0].len();
    let users = encodings[0].len();
    (0..slots)
        .map(|s| {
            (0..users).try_fold(0i128, |total, u| {
                let term = match aggregate {
                    Aggregate::Sum(e) => i128::from(encodings[e][u][s]),
                    Aggregate::Product(e, g) => {
                        i128::from(encodings[e][u][s]).checked_mul(i128::from(encodings[g][u][s]))?
                    }
                };
                total.checked_add(f(term))
            })
        })
        .collect()
}

/// Plaintext moduli (batching primes for degree `n`) whose product exceeds 2 * `bound`: one as
/// small as possible when one of at most `max_bits` bits holds it, else several of `max_bits`.
fn plain_moduli_for(bound: u128, n: usize, max_bits: u32) -> Result<Vec<u32>, StatsError> {
    let needed_bits = 128 - (2 * bound + 1).leading_zeros();
    if max_bits > 30 {
        return Err(StatsError::Input(format!("plaintext moduli of {max_bits} bits: at most 30 are supported")));
    }
    // A prime of b bits exceeds 2^(b-1) >= 2 * bound; the smallest size with a batching prime
    // wins (the less t, the less noise). Sizes below 2N + 1 have none.
    let first = (needed_bits + 1).max((2 * n).trailing_zeros() + 2);
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
    ntt_primes(max_bits, n, count, &[])
        .map_err(|e| StatsError::Capacity(format!("no {count} plaintext moduli of {max_bits} bits for N = {n}: {e}")))
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
