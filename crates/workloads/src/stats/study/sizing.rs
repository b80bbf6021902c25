//! How small a study's submissions can be, decided at declaration from its bounds alone: the
//! smallest 128-bit preset and, for BGV, the fewest primes of its chain a submission keeps.
//!
//! A BGV client switches its ciphertexts down to the lowest primes of the chain before writing
//! them (modulus switching keeps the message, scaled by a factor the ciphertext carries), and
//! the file shrinks with the primes dropped. The server computes at that level: it adds the
//! submissions (the mean), or multiplies each user's pair, relinearizes and adds (variance,
//! linreg), and never switches further. BFV has no modulus chain in pimhe (every ciphertext at
//! the top level), so a BFV study keeps every prime and only N is chosen.
//!
//! ## The bounds (worst case, not heuristic)
//! Notation: ternary s and u (`||s||_1 <= N`), errors cut at `B = ceil(6 sigma)`, infinity
//! norms of centred coefficients; a product of two ring elements has
//! `||a b|| <= N ||a|| ||b||` (the ring expansion of `Z[X]/(X^N + 1)`).
//!
//! **One BGV submission.** A fresh public-key encryption has
//! `c0 + c1 s = M + t (e0 + e u + e1 s)`, so `V_fresh = t + t B (2N + 1)` (M's lift below t).
//! Switching down by primes of product D divides that by D and adds at most `(t + 1)(N + 1)`
//! (each dropped prime p adds `|delta0 + delta1 s| / p <= (t + 1)(N + 1) / 2`, a geometric sum
//! over the primes): `V = V_fresh / D + (t + 1)(N + 1)`.
//!
//! **Sums (BGV).** The sum of U submissions has `|c0 + c1 s| <= U V`.
//!
//! **Products (BGV, depth 1).** The tensor product of two submissions at level l decrypts under
//! `(1, s, s^2)` to `v_a v_b` exactly modulo `q_l`, so `||v_a v_b|| <= N V^2`. Relinearization
//! key-switches the `s^2` component with the hybrid key (`dnum` digits of at most
//! `alpha = ceil(L / dnum)` data primes, special primes of product P, K of them): each digit
//! `d_j`, lifted by FastBConv, is below `alpha Q_j` with `Q_j <= p_max^alpha`, and meets the
//! key's `t e_j`, so the inner product adds at most `dnum alpha p_max^alpha N t B`; ModDown
//! divides that by P and adds `|delta0 + delta1 s| / P <= t K (N + 1) / 2` (delta a multiple of
//! t below `t K P / 2`, [`pimhe_exec::Backend::mod_down`]). So one user's relinearized product
//! has `R = N V^2 + dnum alpha p_max^alpha N t B / P + t K (N + 1) / 2`. The server
//! relinearizes once per round of users (and each shard of a distributed run once), then adds
//! rounds: the worst case is one relinearization per user, `U R`, linear in U. A variance also
//! sums the values (`U V <= U R`).
//!
//! **BFV sums.** A fresh encryption has `c0 + c1 s = Delta m + e`, `Delta = floor(q / t)`,
//! `||e|| <= B (2N + 1)`. The sum of U of them is `Delta M' + e'` with `M' = M mod t` and
//! `||e'|| <= U (B (2N + 1) + t)` (each wrap of the messages past t adds `Delta t = q - (q mod t)`,
//! `q mod t < t`). Decryption `round(t (c0 + c1 s) / q)` is exact while
//! `t ||e'|| + t^2 < q / 2` (the second term: `(q mod t) M' / q`). BFV products are not bounded
//! here: their N stays [`DEFAULT_N`] and keygen measures the noise budget.
//!
//! In every case the aggregate's bound W must satisfy `log2 q_l >= log2 W + 1 + MARGIN_BITS`
//! (decryption centres below `q_l / 2`). Keygen still measures the noise budget of a fresh
//! worst-case aggregate on the full chain (a second line of defence).

use std::sync::Arc;

use pimhe_exec::Backend;
use pimhe_math::DEFAULT_SIGMA;
use pimhe_schemes::bfv::BfvContext;
use pimhe_schemes::bgv::BgvContext;
use pimhe_schemes::encoder::ExactScheme;
use pimhe_schemes::rlwe::{CiphertextBatch, Evaluator};
use serde::Serialize;

use super::declaration::DEFAULT_N;
use super::{Study, StudySpec};
use crate::stats::layout::{Aggregate, Layout};
use crate::stats::StatsError;

/// Bits of room kept above the worst-case bound.
pub const MARGIN_BITS: f64 = 1.0;

/// A scheme's way of leaving primes out of a submission.
pub trait StudyScheme: ExactScheme {
    /// `batch` (fresh, of context `ctx`) at `level` (primes minus one).
    fn switch_down<B: Backend>(
        backend: &B,
        ctx: &Arc<Self>,
        batch: CiphertextBatch<B, Self>,
        level: usize,
    ) -> Result<CiphertextBatch<B, Self>, StatsError>;
}

impl StudyScheme for BgvContext {
    fn switch_down<B: Backend>(
        backend: &B,
        ctx: &Arc<Self>,
        batch: CiphertextBatch<B, Self>,
        level: usize,
    ) -> Result<CiphertextBatch<B, Self>, StatsError> {
        if batch.level() == level {
            return Ok(batch);
        }
        Ok(Evaluator::new(backend, ctx).mod_switch_to(&batch, level)?)
    }
}

impl StudyScheme for BfvContext {
    fn switch_down<B: Backend>(
        _backend: &B,
        _ctx: &Arc<Self>,
        batch: CiphertextBatch<B, Self>,
        level: usize,
    ) -> Result<CiphertextBatch<B, Self>, StatsError> {
        if batch.level() == level {
            return Ok(batch);
        }
        Err(StatsError::Input(format!(
            "a BFV submission keeps every prime (level {}); the study asks for level {level}",
            batch.level()
        )))
    }
}

/// What the server computes from submissions, as far as the bounds go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ServerWork {
    /// BGV, sums only (the mean).
    BgvSums,
    /// BGV, sums of relinearized products (variance, linreg).
    BgvProducts,
    /// BFV, sums only.
    BfvSums,
}

impl ServerWork {
    /// The work of `layout` with scheme `S`; `None` where no bound covers it (BFV products).
    fn of<S: ExactScheme>(layout: &Layout) -> Option<Self> {
        let multiplies = layout.aggregates().iter().any(|a| matches!(a, Aggregate::Product(_, _)));
        match (S::NAME, multiplies) {
            ("bgv", false) => Some(Self::BgvSums),
            ("bgv", true) => Some(Self::BgvProducts),
            ("bfv", false) => Some(Self::BfvSums),
            _ => None,
        }
    }

    /// What the server does, for keygen's "why".
    fn describe(self) -> &'static str {
        match self {
            Self::BgvSums => "the server only adds",
            Self::BgvProducts => "the server multiplies each user's pair, relinearizes and adds",
            Self::BfvSums => "the server only adds (BFV: every prime kept)",
        }
    }
}

/// `6 sigma`, rounded up: where the error distribution is cut.
fn error_bound() -> f64 {
    (6.0 * DEFAULT_SIGMA).ceil()
}

/// log2 of the worst-case |c0 + c1 s| of one BGV submission (plaintext modulus `t`, degree
/// `n`), fresh or switched down by primes of `dropped_bits` bits in all.
pub fn worst_submission_bits(t: u32, n: usize, dropped_bits: Option<f64>) -> f64 {
    let (t, n) = (f64::from(t), n as f64);
    let fresh = t + t * error_bound() * (2.0 * n + 1.0);
    match dropped_bits {
        None => fresh.log2(),
        Some(bits) => (fresh / bits.exp2() + (t + 1.0) * (n + 1.0)).log2(),
    }
}

/// log2 of the worst-case |c0 + c1 s| of a sum of `users` BGV submissions (plaintext modulus
/// `t`, degree `n`), fresh or switched down by primes of `dropped_bits` bits in all.
pub fn worst_sum_bits(t: u32, n: usize, users: usize, dropped_bits: Option<f64>) -> f64 {
    (users.max(1) as f64).log2() + worst_submission_bits(t, n, dropped_bits)
}

/// The primes of the preset of degree `n` with plaintext modulus `t`, as the bounds need them.
#[derive(Debug, Clone)]
struct Chain {
    n: usize,
    t: u32,
    /// Data primes, bottom first.
    data: Vec<u32>,
    special: Vec<u32>,
    dnum: usize,
}

impl Chain {
    fn of<S: ExactScheme>(n: usize, t: u32) -> Result<Self, StatsError> {
        let ctx = S::from_params(S::preset_with_plain_modulus(n, t)?)?;
        let params = ctx.rlwe().params();
        let (data, special) = (params.data_primes().to_vec(), params.special_primes().to_vec());
        Ok(Self { n, t, data, special, dnum: params.dnum() })
    }

    /// log2 of the product of the lowest `kept` data primes.
    fn kept_bits(&self, kept: usize) -> f64 {
        bits(&self.data[..kept])
    }

    /// log2 of the noise one relinearization adds at any level (the module doc's bound);
    /// `None` without special primes (no relinearization: a sum of 3-component products).
    fn relinearization_bits(&self) -> Option<f64> {
        if self.special.is_empty() {
            return None;
        }
        let (t, n) = (f64::from(self.t), self.n as f64);
        let alpha = self.data.len().div_ceil(self.dnum) as f64;
        let p_max = self.data.iter().map(|&p| f64::from(p).log2()).fold(0.0, f64::max);
        let digits = (self.dnum as f64 * alpha * n * t * error_bound()).log2() + alpha * p_max - bits(&self.special);
        let rounding = (t * self.special.len() as f64 * (n + 1.0) / 2.0).log2();
        Some(log2_sum(digits, rounding))
    }

    /// log2 of the worst-case aggregate of `users` users' `work` with submissions of `kept`
    /// primes (the module doc's bounds).
    fn worst_bits(&self, work: ServerWork, users: usize, kept: usize) -> f64 {
        let dropped = (kept < self.data.len()).then(|| bits(&self.data[kept..]));
        let (t, n, u) = (f64::from(self.t), self.n as f64, (users.max(1) as f64).log2());
        match work {
            ServerWork::BgvSums => worst_sum_bits(self.t, self.n, users, dropped),
            ServerWork::BgvProducts => {
                let product = n.log2() + 2.0 * worst_submission_bits(self.t, self.n, dropped);
                u + self.relinearization_bits().map_or(product, |relin| log2_sum(product, relin))
            }
            ServerWork::BfvSums => {
                let noise = u + (error_bound() * (2.0 * n + 1.0) + t).log2();
                log2_sum(t.log2() + noise, 2.0 * t.log2())
            }
        }
    }

    /// Whether the bound holds with `kept` primes.
    fn holds(&self, work: ServerWork, users: usize, kept: usize) -> bool {
        self.kept_bits(kept) >= self.worst_bits(work, users, kept) + 1.0 + MARGIN_BITS
    }
}

/// log2(2^a + 2^b).
fn log2_sum(a: f64, b: f64) -> f64 {
    let (high, low) = (a.max(b), a.min(b));
    high + (1.0 + (low - high).exp2()).log2()
}

fn bits(primes: &[u32]) -> f64 {
    primes.iter().map(|&p| f64::from(p).log2()).sum()
}

/// The fewest data primes a submission keeps: every prime for BFV (no modulus chain) and where
/// no bound applies or even every prime falls short of it (keygen's measurement decides).
pub(super) fn submission_primes<S: ExactScheme>(
    layout: &Layout,
    n: usize,
    moduli: &[u32],
    users: usize,
) -> Result<usize, StatsError> {
    let mut kept = 1;
    for &t in moduli {
        let chain = Chain::of::<S>(n, t)?;
        let all = chain.data.len();
        let Some(work @ (ServerWork::BgvSums | ServerWork::BgvProducts)) = ServerWork::of::<S>(layout) else {
            return Ok(all);
        };
        kept = kept.max((1..=all).find(|&l| chain.holds(work, users, l)).unwrap_or(all));
    }
    Ok(kept)
}

/// Whether `study`'s aggregate of the most users fits its chain, with every prime, by the
/// worst-case bound (false where no bound applies): the test of a degree chosen without being
/// declared.
pub(super) fn full_chain_fits<S: ExactScheme>(study: &Study) -> Result<bool, StatsError> {
    let Some(work) = ServerWork::of::<S>(&study.layout()?) else { return Ok(false) };
    for &t in &study.plain_moduli {
        let chain = Chain::of::<S>(study.n, t)?;
        if !chain.holds(work, study.max_users, chain.data.len()) {
            return Ok(false);
        }
    }
    Ok(true)
}

/// The worst-case bound of a study's aggregate at a number of kept primes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NoiseBound {
    /// log2 of the worst-case aggregate of the most users (the module doc's bound), for the
    /// plaintext modulus where it is tightest.
    pub worst_bits: f64,
    /// log2 of the kept primes' product, for that modulus.
    pub kept_bits: f64,
}

impl NoiseBound {
    /// Whether the aggregate decrypts exactly: `kept_bits >= worst_bits + 1 + MARGIN_BITS`.
    pub fn holds(&self) -> bool {
        self.kept_bits >= self.worst_bits + 1.0 + MARGIN_BITS
    }

    /// Bits to spare above `worst_bits + 1` (negative where the bound fails).
    pub fn spare_bits(&self) -> f64 {
        self.kept_bits - 1.0 - self.worst_bits
    }
}

/// What keygen picked for a study's submissions, and why.
#[derive(Debug, Clone, Serialize)]
pub struct Sizing {
    /// The ring degree, and whether it was declared or picked.
    pub n: usize,
    /// `declared`, `smallest` (the least the bounds allow) or `default` (no bound covers the
    /// study, or no preset's chain holds it, without a declared N: [`DEFAULT_N`]).
    pub n_from: &'static str,
    /// The plaintext moduli and their bits.
    pub plain_moduli: Vec<u32>,
    /// Ciphertext primes at the top of the chain, and kept by a submission.
    pub data_primes: usize,
    /// Kept by a submission.
    pub submission_primes: usize,
    /// log2 of the worst-case aggregate of the most users at the kept primes (a sum, or a sum
    /// of relinearized products: [`Study::noise_bound`]), where a bound covers the study.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub worst_sum_bits: Option<f64>,
    /// log2 of the kept primes' product.
    pub kept_bits: f64,
    /// Ciphertext bytes of one submission (every polynomial at the kept primes' bits).
    pub ciphertext_bytes: u64,
    /// The same for the study as declared before the choice: N = 8192, every prime.
    pub default_ciphertext_bytes: u64,
    /// One sentence.
    pub why: String,
}

impl Study {
    /// The worst-case bound of this study's aggregate of [`Study::max_users`] users when a
    /// submission keeps `kept` primes (1 ..= the chain's data primes), for the plaintext modulus
    /// where it is tightest; `None` where no bound covers the study (BFV products).
    ///
    /// ```
    /// use pimhe_math::Sampler;
    /// use pimhe_schemes::bgv::BgvContext;
    /// use pimhe_workloads::stats::study::{Identifier, Study, StudySpec};
    /// use pimhe_workloads::stats::Statistic;
    ///
    /// // A variance of values up to 1000 over up to a million users, N picked.
    /// let spec = StudySpec { n: None, ..StudySpec::new(Statistic::Variance, &["a"], 0, 1000, 1_000_000, 8192) };
    /// let study = Study::new::<BgvContext>(&spec, Identifier::random(&mut Sampler::from_seed_u64(1))).unwrap();
    /// let kept = study.submission_primes;
    /// assert!(study.noise_bound::<BgvContext>(kept).unwrap().unwrap().holds());
    /// assert!(!study.noise_bound::<BgvContext>(kept - 1).unwrap().unwrap().holds());
    /// ```
    pub fn noise_bound<S: ExactScheme>(&self, kept: usize) -> Result<Option<NoiseBound>, StatsError> {
        let Some(work) = ServerWork::of::<S>(&self.layout()?) else { return Ok(None) };
        let mut tightest: Option<NoiseBound> = None;
        for &t in &self.plain_moduli {
            let chain = Chain::of::<S>(self.n, t)?;
            if !(1..=chain.data.len()).contains(&kept) {
                return Err(StatsError::Input(format!(
                    "{kept} kept primes; the chain of N = {} has 1 ..= {}",
                    self.n,
                    chain.data.len()
                )));
            }
            let bound = NoiseBound {
                worst_bits: chain.worst_bits(work, self.max_users, kept),
                kept_bits: chain.kept_bits(kept),
            };
            if tightest.is_none_or(|b| bound.spare_bits() < b.spare_bits()) {
                tightest = Some(bound);
            }
        }
        Ok(tightest)
    }

    /// The presets below this study's N that keygen tries by measurement, smallest first: where N
    /// was not declared and no worst-case bound covers the study (a BFV server that multiplies),
    /// its default N may be more than the bounds need, and only keygen's noise check can tell.
    pub fn measured_smaller_degrees<S: ExactScheme>(&self, declared_n: bool) -> Result<Vec<usize>, StatsError> {
        if declared_n || ServerWork::of::<S>(&self.layout()?).is_some() {
            return Ok(Vec::new());
        }
        Ok(super::declaration::AUTO_DEGREES.iter().copied().filter(|&n| n < self.n).collect())
    }

    /// What was picked for this study (`declared_n`: whether N came from the declaration).
    pub fn sizing<S: ExactScheme>(&self, declared_n: bool) -> Result<Sizing, StatsError> {
        let layout = self.layout()?;
        let encodings = layout.encodings().len() as u64;
        let payload = |n: usize, primes_per_modulus: &[Vec<u32>]| -> u64 {
            let bits: u64 = primes_per_modulus.iter().flatten().map(|&p| u64::from(32 - p.leading_zeros())).sum();
            encodings * 2 * n as u64 * bits / 8
        };
        let chains: Vec<Chain> =
            self.plain_moduli.iter().map(|&t| Chain::of::<S>(self.n, t)).collect::<Result<_, _>>()?;
        let kept: Vec<Vec<u32>> = chains.iter().map(|c| c.data[..self.submission_primes].to_vec()).collect();
        let all = chains[0].data.len();
        let old = Study::new::<S>(&StudySpec { n: Some(DEFAULT_N), ..self.spec() }, self.id);
        let default_ciphertext_bytes = match old {
            Ok(old) => {
                let full: Vec<Vec<u32>> = old
                    .plain_moduli
                    .iter()
                    .map(|&t| Chain::of::<S>(DEFAULT_N, t).map(|c| c.data))
                    .collect::<Result<_, _>>()?;
                payload(DEFAULT_N, &full)
            }
            Err(_) => 0,
        };
        let kept_bits = kept.iter().map(|p| bits(p)).fold(f64::INFINITY, f64::min);
        let work = ServerWork::of::<S>(&layout);
        let bound = self.noise_bound::<S>(self.submission_primes)?;
        let n_from = match (declared_n, bound.is_some_and(|b| b.holds())) {
            (true, _) => "declared",
            (false, true) => "smallest",
            (false, false) if bound.is_none() && self.n < DEFAULT_N => "measured",
            (false, false) => "default",
        };
        let moduli_bits: Vec<String> =
            self.plain_moduli.iter().map(|t| format!("{}", 32 - t.leading_zeros())).collect();
        let why = format!(
            "N = {} ({}); {} plaintext moduli of {} bits hold every aggregate of {} users of values up to {}; {}",
            self.n,
            match n_from {
                "declared" => "as declared".to_string(),
                "smallest" => "the smallest 128-bit preset whose slots, moduli and noise bound hold the bounds".into(),
                "measured" => "the smallest 128-bit preset whose measured noise budget (keygen's worst-case check) \
                               holds the bounds: no worst-case bound covers a BFV server that multiplies"
                    .into(),
                _ => format!(
                    "the default: no worst-case bound covers {} with these bounds, so keygen measures",
                    match work {
                        Some(_) => "any smaller preset's chain",
                        None => "a BFV server that multiplies",
                    }
                ),
            },
            self.plain_moduli.len(),
            moduli_bits.join("+"),
            self.max_users,
            self.max_value,
            match (work, bound) {
                (Some(work), Some(b)) => format!(
                    "{}, so a submission keeps {} of {all} primes ({kept_bits:.1} bits) for a worst-case aggregate of \
                     2^{:.1} ({:.1} bits to spare)",
                    work.describe(),
                    self.submission_primes,
                    b.worst_bits,
                    b.spare_bits()
                ),
                _ => format!("a submission keeps all {all} primes (a BFV server that multiplies)"),
            }
        );
        Ok(Sizing {
            n: self.n,
            n_from,
            plain_moduli: self.plain_moduli.clone(),
            data_primes: all,
            submission_primes: self.submission_primes,
            worst_sum_bits: bound.map(|b| (b.worst_bits * 10.0).round() / 10.0),
            kept_bits: (kept_bits * 10.0).round() / 10.0,
            ciphertext_bytes: payload(self.n, &kept),
            default_ciphertext_bytes,
            why,
        })
    }
}
