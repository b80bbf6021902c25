//! The advise workloads that run as whole jobs on a [`Target`] (every DPU emulated): the
//! statistics of seed 002 over U users (mean, variance, linear regression; BGV, the users'
//! ciphertexts summed on the server) and CKKS multiply + relinearize + rescale of C/2 pairs.
//!
//! Each is written once over the backend ([`Job`]): the keys and the client's encryption are
//! setup; the priced part is the users' (or operands') ciphertexts going in, the server's
//! computation and the results coming out; the client then decrypts and checks the result
//! against the plaintext computation (the statistics: every aggregate exact; CKKS: every slot
//! within [`CKKS_MIN_BITS`] bits of x y), so no number is reported for a wrong result. On the
//! CPU the job times the server's computation itself; on `upmem-emu` the [`Cost`] is the
//! model's, and with `--mode auto` the planner's choice comes with it.

use std::sync::Arc;
use std::time::Instant;

use pimhe_exec::{Backend, CpuBackend};
use pimhe_math::Sampler;
use pimhe_schemes::bgv::BgvContext;
use pimhe_schemes::ckks::precision::precision_real;
use pimhe_schemes::ckks::{CkksContext, CkksParameters, Decryptor, Encoder, Encryptor, Evaluator};
use pimhe_schemes::encoder::ExactScheme;
use pimhe_schemes::rlwe::{KeyGenerator, PublicKey, RelinKey, RlweScheme, SecretKey};
use pimhe_workloads::stats::{Dataset, SchemeStats, Statistic, StatsError, StatsPlan};

use crate::error::{BenchError, Result};
use crate::measure::inputs::seed_stream;
use crate::target::{Device, DeviceNeeds, Job, Ran, Target};

/// The least precision, in bits, every slot of a CKKS product must keep for the run to count:
/// the presets' scales (2^40 and more) leave well over 20 bits for one product of values in
/// [-1, 1); 12 bits is far below that and far above what a wrong result gives (about 0).
pub const CKKS_MIN_BITS: f64 = 12.0;

/// The columns each statistic runs on (the synthetic dataset's: features x1..x8, response y).
fn columns(statistic: Statistic) -> &'static [&'static str] {
    match statistic {
        Statistic::Mean | Statistic::Variance => &["x1", "x2", "x3", "x4"],
        Statistic::Linreg => &["x1", "x2", "y"],
    }
}

/// A whole-job workload prepared for one batch: the keys, the inputs and the plan.
pub(super) enum Prepared {
    /// A statistic over the users of a synthetic dataset, one BGV context per plaintext modulus.
    Statistics { statistic: Statistic, plan: Box<StatsPlan>, contexts: Vec<Arc<BgvContext>>, seed: u64 },
    /// CKKS products of C/2 pairs.
    CkksProducts(Box<CkksInputs>),
}

/// The client's keys and the C/2 pairs of vectors of a CKKS run.
pub(super) struct CkksInputs {
    ctx: Arc<CkksContext>,
    secret: SecretKey<CkksContext>,
    public: PublicKey<CkksContext>,
    relin: RelinKey<CkksContext>,
    x: Vec<Vec<f64>>,
    y: Vec<Vec<f64>>,
    seed: u64,
}

impl Prepared {
    /// `statistic` over `users` users of synthetic data from `seed` at BGV's preset of `n`
    /// (refused, naming why, when no plaintext modulus holds the aggregates exactly).
    pub(super) fn statistics(statistic: Statistic, users: usize, n: usize, seed: u64) -> Result<Self> {
        let data = Dataset::synthetic(users, seed, columns(statistic)).map_err(stats_error)?;
        let max_bits = BgvContext::max_plain_bits(n).map_err(|e| BenchError::usage(format!("--n {n}: {e}")))?;
        let plan = StatsPlan::new(statistic, data, n, max_bits).map_err(stats_error)?;
        let contexts = plan
            .plain_moduli()
            .iter()
            .map(|&t| BgvContext::from_params(BgvContext::preset_with_plain_modulus(n, t)?))
            .collect::<pimhe_schemes::Result<Vec<_>>>()?;
        Ok(Prepared::Statistics { statistic, plan: Box::new(plan), contexts, seed })
    }

    /// CKKS at the preset of `n`: keys made on `client` from `seed`, and `batch / 2` pairs of
    /// vectors of N/2 values in [-1, 1).
    pub(super) fn ckks_products(client: &CpuBackend, n: usize, batch: usize, seed: u64) -> Result<Self> {
        let params = CkksParameters::preset(n).map_err(|e| BenchError::usage(format!("--n {n}: {e}")))?;
        let ctx = CkksContext::new(params)?;
        let mut keygen = KeyGenerator::with_sampler(client, &ctx, seed_stream(seed, 0));
        let secret = keygen.secret_key()?;
        let public = keygen.public_key(&secret)?;
        let relin = keygen.relin_key(&secret)?;
        let mut sampler = seed_stream(seed, 1);
        let mut vectors = || -> Vec<Vec<f64>> {
            (0..batch / 2)
                .map(|_| (0..ctx.max_slots()).map(|_| f64::from(sampler.next_u32()) / 2f64.powi(31) - 1.0).collect())
                .collect()
        };
        let (x, y) = (vectors(), vectors());
        Ok(Prepared::CkksProducts(Box::new(CkksInputs { ctx, secret, public, relin, x, y, seed })))
    }

    /// What the job computes, as the report states it.
    pub(super) fn computation(&self) -> String {
        match self {
            Prepared::Statistics { statistic, plan, contexts, .. } => format!(
                "{} of columns {} over {} users (BGV, one ciphertext per user and encoded vector, summed on the \
                 server; {} plaintext modulus(es); every aggregate decrypted and checked exactly)",
                statistic.name(),
                columns(*statistic).join(","),
                plan.data().users(),
                contexts.len()
            ),
            Prepared::CkksProducts(inputs) => format!(
                "CKKS multiply + relinearize + rescale, {} pairs (every slot checked against x y to {CKKS_MIN_BITS} \
                 bits)",
                inputs.x.len()
            ),
        }
    }

    /// The ring and every prime a backend must hold.
    pub(super) fn needs(&self) -> DeviceNeeds {
        let (n, mut primes) = match self {
            Prepared::Statistics { contexts, .. } => (
                contexts[0].rlwe().top_basis().degree(),
                contexts.iter().flat_map(|ctx| ctx.backend_primes()).collect::<Vec<u32>>(),
            ),
            Prepared::CkksProducts(inputs) => (inputs.ctx.rlwe().top_basis().degree(), inputs.ctx.backend_primes()),
        };
        // Every plaintext modulus's context has the same primes (BGV's do not depend on t).
        let mut seen = std::collections::BTreeSet::new();
        primes.retain(|p| seen.insert(*p));
        DeviceNeeds { n, primes }
    }

    /// Runs the job on `target` (`threads`: the client's CPU threads); the output is the
    /// server's computation's wall time on this host (on the CPU: the measured time).
    pub(super) fn run(&self, target: &Target, threads: Option<usize>) -> Result<Ran<f64>> {
        let client = CpuBackend::new(threads)?;
        let needs = self.needs();
        match self {
            Prepared::Statistics { plan, contexts, seed, .. } => {
                target.run(&needs, Statistics { plan, contexts, seed: *seed, client: &client })
            }
            Prepared::CkksProducts(inputs) => target.run(&needs, CkksProducts { inputs, client: &client }),
        }
    }
}

fn stats_error(e: StatsError) -> BenchError {
    match e {
        StatsError::Input(m) | StatsError::Capacity(m) => BenchError::usage(m),
        StatsError::Integrity(m) => BenchError::Failed(m),
        StatsError::Scheme(e) => e.into(),
    }
}

/// The statistics job: every plaintext modulus's scheme encrypts on the client and aggregates
/// on the device; the aggregates must decrypt to the exact totals.
#[derive(Clone, Copy)]
struct Statistics<'a> {
    plan: &'a StatsPlan,
    contexts: &'a [Arc<BgvContext>],
    seed: u64,
    client: &'a CpuBackend,
}

impl Job for Statistics<'_> {
    type Output = f64;
    fn pricing_copy(&self) -> Option<Self> {
        Some(*self)
    }

    fn adopt(self, _: &Self::Output) -> std::result::Result<(), Self> {
        Ok(()) // it shows nothing while it runs
    }

    fn run<B: Backend>(self, device: &Device<'_, B>) -> Result<f64> {
        let mut sampler = Sampler::from_seed_u64(self.seed);
        let mut schemes = self
            .contexts
            .iter()
            .map(|ctx| {
                SchemeStats::<BgvContext, _, _>::with_context(self.client, device.backend, ctx.clone(), sampler.fork())
            })
            .collect::<pimhe_schemes::Result<Vec<_>>>()?;
        for scheme in &mut schemes {
            self.plan.check_noise_budget(scheme).map_err(stats_error)?;
        }
        device.start_pricing()?;
        // A failure leaves pricing on, so that the planner can tell a run stopped past its
        // budget from a refusal.
        let runs = schemes
            .iter_mut()
            .map(|scheme| self.plan.run(scheme))
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(stats_error)?;
        device.stop_pricing()?;
        let server_s = runs.iter().map(|run| run.server_s).sum();
        let report = self.plan.finish(runs).map_err(stats_error)?;
        if !report.aggregates_exact {
            return Err(BenchError::Failed(
                "internal error: the decrypted aggregates differ from the plaintext totals".into(),
            ));
        }
        Ok(server_s)
    }
}

/// The CKKS job: C/2 pairs encrypted on the client, moved to the device, multiplied,
/// relinearized and rescaled there, moved back and checked slot by slot.
#[derive(Clone, Copy)]
struct CkksProducts<'a> {
    inputs: &'a CkksInputs,
    client: &'a CpuBackend,
}

impl Job for CkksProducts<'_> {
    type Output = f64;
    fn pricing_copy(&self) -> Option<Self> {
        Some(*self)
    }

    fn adopt(self, _: &Self::Output) -> std::result::Result<(), Self> {
        Ok(()) // it shows nothing while it runs
    }

    fn run<B: Backend>(self, device: &Device<'_, B>) -> Result<f64> {
        let CkksInputs { ctx, secret, public, relin, x, y, seed } = self.inputs;
        let encoder = Encoder::new(ctx);
        let scale = ctx.default_scale();
        let mut encryptor = Encryptor::with_public_key(self.client, public)?.with_sampler(seed_stream(*seed, 2));
        let mut encrypt = |values: &[Vec<f64>]| {
            let plains =
                values.iter().map(|v| encoder.encode_real(v, scale)).collect::<pimhe_schemes::Result<Vec<_>>>()?;
            encryptor.encrypt(&plains)
        };
        let (a, b) = (encrypt(x)?, encrypt(y)?);
        let evaluator = Evaluator::new(device.backend, ctx).with_relin_key(relin)?;
        device.start_pricing()?;
        let (a, b) = (a.transfer(self.client, device.backend)?, b.transfer(self.client, device.backend)?);
        // On the CPU the server's time is the computation's (the copies in and out are a PIM
        // system's, priced by its model).
        let start = Instant::now();
        let product = evaluator.multiply_relin_rescale(&a, &b)?;
        let server_s = start.elapsed().as_secs_f64();
        let product = product.transfer(device.backend, self.client)?;
        device.stop_pricing()?;
        let decrypted = Decryptor::new(self.client, secret)?.decrypt(&product)?;
        for (k, plain) in decrypted.iter().enumerate() {
            let got: Vec<f64> = encoder.decode(plain)?.iter().map(|c| c.re).collect();
            let expected: Vec<f64> = x[k].iter().zip(&y[k]).map(|(a, b)| a * b).collect();
            let stats = precision_real(&got, &expected);
            if stats.min_bits < CKKS_MIN_BITS {
                return Err(BenchError::Failed(format!(
                    "internal error: pair {k} decrypted to {:.1} bits of x y at worst, fewer than {CKKS_MIN_BITS}",
                    stats.min_bits
                )));
            }
        }
        Ok(server_s)
    }
}
