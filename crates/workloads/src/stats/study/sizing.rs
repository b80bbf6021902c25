//! How small a study's submissions can be, decided at declaration from its bounds alone.
//!
//! The server of a study whose aggregates are all sums (the mean) only adds submissions, so an
//! aggregate needs the noise room of a sum of [`Study::max_users`] submissions and nothing
//! more. A BGV client can then switch its ciphertexts down to the lowest primes of the chain
//! before writing them (modulus switching keeps the message, scaled by a factor the ciphertext
//! carries), and the file shrinks with the primes dropped. Products (variance, linreg) and
//! BFV keep every prime: their budget is measured at keygen instead.
//!
//! ## The bound (worst case, not heuristic)
//! With ternary s and u (`||s||_1 <= N`), errors cut at `B = ceil(6 sigma)`, a fresh BGV
//! public-key encryption has `c0 + c1 s = M + t (e0 + e u + e1 s)`, so
//! `|c0 + c1 s| <= t + t B (2N + 1)` (with M's lift below t). Switching down by primes of
//! product P divides that by P and adds at most `(t + 1)(N + 1)` (each dropped prime p adds
//! `|delta0 + delta1 s| / p <= (t + 1)(N + 1) / 2`, a geometric sum over the primes). The sum of
//! U submissions is at most U times one, and decrypts exactly while it is below `q_l / 2`; a
//! submission keeps the fewest primes `q_l` with `log2 q_l >= log2(U * one) + 1 + MARGIN_BITS`.

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

/// Whether the worst-case bound applies: BGV, and a server that only adds.
fn applies<S: ExactScheme>(layout: &Layout) -> bool {
    S::NAME == "bgv" && layout.aggregates().iter().all(|a| matches!(a, Aggregate::Sum(_)))
}

/// log2 of the worst-case |c0 + c1 s| of a sum of `users` submissions (plaintext modulus `t`,
/// degree `n`), fresh or switched down by primes of `dropped_bits` bits in all.
pub fn worst_sum_bits(t: u32, n: usize, users: usize, dropped_bits: Option<f64>) -> f64 {
    let (t, n) = (f64::from(t), n as f64);
    let fresh = t + t * (6.0 * DEFAULT_SIGMA).ceil() * (2.0 * n + 1.0);
    let one = match dropped_bits {
        None => fresh,
        Some(bits) => fresh / bits.exp2() + (t + 1.0) * (n + 1.0),
    };
    (users.max(1) as f64 * one).log2()
}

/// The data primes of the preset of degree `n` with plaintext modulus `t`, bottom first.
fn data_primes<S: ExactScheme>(n: usize, t: u32) -> Result<Vec<u32>, StatsError> {
    let ctx = S::from_params(S::preset_with_plain_modulus(n, t)?)?;
    Ok(ctx.rlwe().params().data_primes().to_vec())
}

fn bits(primes: &[u32]) -> f64 {
    primes.iter().map(|&p| f64::from(p).log2()).sum()
}

/// The fewest data primes a submission keeps (all of them where the bound does not apply).
pub(super) fn submission_primes<S: ExactScheme>(
    layout: &Layout,
    n: usize,
    moduli: &[u32],
    users: usize,
) -> Result<usize, StatsError> {
    let mut kept = 1;
    for &t in moduli {
        let primes = data_primes::<S>(n, t)?;
        if !applies::<S>(layout) {
            return Ok(primes.len());
        }
        let fits = |l: usize| {
            let dropped = (l < primes.len()).then(|| bits(&primes[l..]));
            bits(&primes[..l]) >= worst_sum_bits(t, n, users, dropped) + 1.0 + MARGIN_BITS
        };
        // Where even every prime falls short of the worst case, keygen's measurement decides.
        kept = kept.max((1..=primes.len()).find(|&l| fits(l)).unwrap_or(primes.len()));
    }
    Ok(kept)
}

/// Whether `study`'s fresh sum fits its chain by the worst-case bound (false where the bound
/// does not apply): the test of a degree chosen without being declared.
pub(super) fn fresh_sum_fits<S: ExactScheme>(study: &Study) -> Result<bool, StatsError> {
    if !applies::<S>(&study.layout()?) {
        return Ok(false);
    }
    for &t in &study.plain_moduli {
        let primes = data_primes::<S>(study.n, t)?;
        if bits(&primes) < worst_sum_bits(t, study.n, study.max_users, None) + 1.0 + MARGIN_BITS {
            return Ok(false);
        }
    }
    Ok(true)
}

/// What keygen picked for a study's submissions, and why.
#[derive(Debug, Clone, Serialize)]
pub struct Sizing {
    /// The ring degree, and whether it was declared or picked.
    pub n: usize,
    /// `declared`, `smallest` (the least the bounds allow) or `default` (products or BFV,
    /// without a declared N: [`DEFAULT_N`]).
    pub n_from: &'static str,
    /// The plaintext moduli and their bits.
    pub plain_moduli: Vec<u32>,
    /// Ciphertext primes at the top of the chain, and kept by a submission.
    pub data_primes: usize,
    /// Kept by a submission.
    pub submission_primes: usize,
    /// log2 of the worst-case sum of the most users at the kept primes (where the bound applies).
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
    /// What was picked for this study (`declared_n`: whether N came from the declaration).
    pub fn sizing<S: ExactScheme>(&self, declared_n: bool) -> Result<Sizing, StatsError> {
        let layout = self.layout()?;
        let encodings = layout.encodings().len() as u64;
        let payload = |n: usize, primes_per_modulus: &[Vec<u32>]| -> u64 {
            let bits: u64 = primes_per_modulus.iter().flatten().map(|&p| u64::from(32 - p.leading_zeros())).sum();
            encodings * 2 * n as u64 * bits / 8
        };
        let kept: Vec<Vec<u32>> = self
            .plain_moduli
            .iter()
            .map(|&t| Ok(data_primes::<S>(self.n, t)?[..self.submission_primes].to_vec()))
            .collect::<Result<_, StatsError>>()?;
        let all = data_primes::<S>(self.n, self.plain_moduli[0])?.len();
        let old = Study::new::<S>(&StudySpec { n: Some(DEFAULT_N), ..self.spec() }, self.id);
        let default_ciphertext_bytes = match old {
            Ok(old) => {
                let full: Vec<Vec<u32>> =
                    old.plain_moduli.iter().map(|&t| data_primes::<S>(DEFAULT_N, t)).collect::<Result<_, _>>()?;
                payload(DEFAULT_N, &full)
            }
            Err(_) => 0,
        };
        let kept_bits = kept.iter().map(|p| bits(p)).fold(f64::INFINITY, f64::min);
        let worst = applies::<S>(&layout).then(|| {
            let t = *self.plain_moduli.iter().max().expect("a study has a plaintext modulus");
            let dropped = data_primes::<S>(self.n, t).ok().map(|p| bits(&p[self.submission_primes..]));
            worst_sum_bits(t, self.n, self.max_users, dropped.filter(|&b| b > 0.0))
        });
        let n_from = match (declared_n, worst.is_some()) {
            (true, _) => "declared",
            (false, true) => "smallest",
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
                _ => format!("the default: the server multiplies or the scheme is {}, so keygen measures", self.scheme),
            },
            self.plain_moduli.len(),
            moduli_bits.join("+"),
            self.max_users,
            self.max_value,
            match worst {
                Some(w) => format!(
                    "the server only adds, so a submission keeps {} of {all} primes ({kept_bits:.1} bits) for a \
                     worst-case sum of 2^{w:.1} ({:.1} bits to spare)",
                    self.submission_primes,
                    kept_bits - 1.0 - w
                ),
                None => format!("a submission keeps all {all} primes (the server multiplies, or BFV)"),
            }
        );
        Ok(Sizing {
            n: self.n,
            n_from,
            plain_moduli: self.plain_moduli.clone(),
            data_primes: all,
            submission_primes: self.submission_primes,
            worst_sum_bits: worst.map(|w| (w * 10.0).round() / 10.0),
            kept_bits: (kept_bits * 10.0).round() / 10.0,
            ciphertext_bytes: payload(self.n, &kept),
            default_ciphertext_bytes,
            why,
        })
    }
}
