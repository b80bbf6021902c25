//! HELR training on encrypted data: the plaintext trainer's iterations ([`super::train`]) on
//! CKKS ciphertexts, in the layout of [`super::packing`], on any [`Backend`], with the weights
//! bootstrapped whenever their levels would not cover the next iteration.
//!
//! ## Who does what
//! - The **client** ([`EncryptedTrainer::new`]) holds the secret key and the standardized
//!   training split. It makes the keys (relinearization, the rotations of the packing, and
//!   bootstrapping's), packs each batch `Z` as [`Packing::pack`] does (over several
//!   ciphertexts where it exceeds one: [`Packing::split`]), each block repeated over all N/2
//!   slots ([`Packing::tile`]), and encrypts it, with
//!   `w = v = 0`. After every iteration it decrypts `w` (a copy downloaded to its CPU) to report
//!   the training loss: the loss is the client's, computed on decrypted weights with the exact
//!   sigmoid ([`super::evaluate`]); the server never sees it. At the end it decrypts `w` into
//!   the model, which [`super::evaluate`] then uses for inference in the clear.
//! - The **server** ([`Server`]) runs each iteration on ciphertexts: the gradient of
//!   [`super::packing`] and the Nesterov update with the constants of [`super::train`] (same
//!   batches, same `gamma / k` and `eta_k`), five levels an iteration; before an iteration that
//!   would leave no level for the next bootstrapping it bootstraps `w` and `v` together, as one
//!   complex ciphertext `v / 2 + i w / 2` ([`Server::bootstrap`]), read as a sparse packing of
//!   W slots: the weights repeat with period W over the slots.
//!
//! ## Where the iteration departs from the sketch in [`super::packing`]
//! Same layout, steps and rotations; three choices save levels. Step 3's mask holds `-1/B`
//! instead of 1, so the masked margins land on `[-1, 1]` negated and step 4 evaluates
//! `p(B y)` as a Chebyshev series with no change-of-variable level. Step 6's constants ride on
//! `Z` (whose own levels are spare): `w' = v + sum_rows(S * (c Z))` and
//! `v' = (1 - eta) v + eta w + sum_rows(S * ((1 - eta) c Z))`, `c = gamma_k / m`, so `w'` and
//! `v'` come out of products at one level: an iteration costs five levels, two products with
//! `Z` per block and `C (2 log2 W) + 2 log2 (R / C)` rotations for `C` blocks.
//!
//! ## Parameters
//! `5 k + 1` levels after each bootstrapping for `k` iterations between bootstrappings
//! ([`EncryptedConfig::iterations_per_bootstrap`]); the whole chain is longer (bootstrapping's
//! own levels come on top), so the first iterations run before any bootstrapping.
//! - N = 2^16: the 128-bit preset ([`secure_parameters`]: a dense ternary secret, bootstrapped
//!   through sparse-secret encapsulation, whose keys the client makes too). It leaves at most
//!   12 levels after a bootstrapping, so `k` is 1 or 2.
//! - N = 2^10 to 2^14: INSECURE ([`insecure_parameters`]: a sparse secret of Hamming weight
//!   16, scale 2^50), for tests and quick runs.
//!
//! ```
//! use pimhe_exec::CpuBackend;
//! use pimhe_workloads::helr::encrypted::{EncryptedConfig, EncryptedTrainer};
//! use pimhe_workloads::helr::{train, LabeledData, TrainConfig};
//! use pimhe_workloads::progress::NoProgress;
//! let data = LabeledData::synthetic_separable(64, 3, 7).unwrap().data;
//! let train_config = TrainConfig { batch: 32, iterations: 2, ..TrainConfig::default() };
//! let config = EncryptedConfig { degree: 1024, train: train_config, ..EncryptedConfig::default() };
//! let cpu = CpuBackend::new(Some(2)).unwrap();
//! let trainer = EncryptedTrainer::new(&cpu, &data, &config).unwrap();
//! assert_eq!(trainer.planned_bootstraps(), 0); // two iterations fit the chain
//! let trained = trainer.train(&cpu, &cpu, &NoProgress).unwrap();
//! let plain = train(&data, &train_config).unwrap();
//! for (a, b) in trained.weights.iter().zip(&plain.weights) {
//!     assert!((a - b).abs() < 1e-4);
//! }
//! ```

mod server;

pub use server::{Ciphertext, Server, Weights, COMBINE_DEPTH};

use std::sync::Arc;
use std::time::Instant;

use num_complex::Complex64;
use pimhe_exec::{Backend, CpuBackend};
use pimhe_math::Sampler;
use pimhe_schemes::ckks::bootstrap::{
    insecure_parameters, secure_parameters, BootstrapConfig, BootstrapPlan, Bootstrapper, EncapsulationKeys,
};
use pimhe_schemes::ckks::{
    CkksContext, CkksParameters, Decryptor, Encoder, Encryptor, Evaluator, GaloisKeys, KeyGenerator, RelinKey,
    SecretKey,
};
use pimhe_schemes::rlwe::RlweScheme;
use pimhe_schemes::SchemeError;
use serde::Serialize;

use super::train::{batch_rows, check, signed_rows, Nesterov};
use super::{evaluate, HelrError, LabeledData, Packing, Sigmoid, SigmoidPoly, TrainConfig};
use crate::progress::Progress;

/// The encryption randomness of the batches and of the initial weights: two streams of the
/// seed, apart from the keys' and from each other.
const BATCH_STREAM: u64 = 0xBA7C_0000;
const WEIGHT_STREAM: u64 = 0x3E16_0000;

/// The ring degree of the 128-bit bootstrapping preset.
pub const SECURE_DEGREE: usize = 1 << 16;

impl From<SchemeError> for HelrError {
    fn from(e: SchemeError) -> Self {
        HelrError::Encrypted(e.to_string())
    }
}

/// How to train on encrypted data.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct EncryptedConfig {
    /// The training: batch, iterations, learning rate and (polynomial) sigmoid, as the
    /// plaintext trainer takes them; `slots` is ignored (the ring degree decides them).
    pub train: TrainConfig,
    /// Ring degree N: 2^16 (the 128-bit preset) or 2^10 to 2^14 (INSECURE parameters). A batch
    /// of more than N/2 slots (`R W`) is cut over several ciphertexts.
    pub degree: usize,
    /// Iterations between two bootstrappings, `k`: each bootstrapping leaves `5 k + 1` levels.
    /// A larger k means fewer bootstrappings of a longer chain (each one slower).
    pub iterations_per_bootstrap: usize,
    /// Seed of the keys and the encryption's randomness.
    pub seed: u64,
}

impl Default for EncryptedConfig {
    /// N = 2^11, a batch of 16 (what fits 2^10 slots with up to 63 features), 32 iterations,
    /// learning rate 0.5, one iteration per bootstrapping (the fastest on this machine: a
    /// bootstrapping's time grows fast with the chain), seed 1.
    ///
    /// The learning rate is half the plaintext default: batches this small make noisier
    /// gradients, and on the digits (batch 16 or 32, 32 iterations) `gamma = 1` sends over a
    /// hundred margins outside the sigmoid's interval and the weights diverge, where 0.5 keeps
    /// all but a few inside (97.8% held out in plaintext).
    fn default() -> Self {
        Self {
            train: TrainConfig { batch: 16, learning_rate: 0.5, ..TrainConfig::default() },
            degree: 2048,
            iterations_per_bootstrap: 1,
            seed: 1,
        }
    }
}

/// One iteration, as the client saw it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct IterationRecord {
    /// 1, 2, ...
    pub iteration: usize,
    /// The server's time for it, seconds (the bootstrapping before it included; measured on
    /// the CPU, this host's wall time on a modeled backend).
    pub seconds: f64,
    /// Of which the bootstrapping, seconds (0 where none ran).
    pub bootstrap_seconds: f64,
    /// Whether the weights were bootstrapped before it.
    pub bootstrapped: bool,
    /// The weights' level after it.
    pub level: usize,
    /// Mean logistic loss on the training split of the decrypted `w` (the client's, exact
    /// sigmoid).
    pub loss: f64,
}

/// What an encrypted training produced.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EncryptedTraining {
    /// The decrypted weights `w`, intercept first.
    pub weights: Vec<f64>,
    /// Each iteration.
    pub iterations: Vec<IterationRecord>,
    /// Bootstrappings run (each of `w` and `v` together).
    pub bootstraps: usize,
}

/// The client of an encrypted training: parameters, keys, the training split and its layout.
pub struct EncryptedTrainer {
    config: EncryptedConfig,
    ctx: Arc<CkksContext>,
    plan: BootstrapPlan,
    packing: Packing,
    sigmoid: SigmoidPoly,
    secret: SecretKey,
    relin: RelinKey,
    galois: GaloisKeys,
    /// The sparse-secret encapsulation keys where the secret is dense (the 128-bit preset) and
    /// the training bootstraps.
    encapsulation: Option<EncapsulationKeys>,
    train: LabeledData,
    depth: usize,
    bootstraps: usize,
}

/// How many bootstrappings `iterations` iterations of `depth` levels need, starting with `top`
/// rescalings left and `after` left after each bootstrapping: the rule of
/// [`Server::needs_bootstrap`], run on level counts.
fn planned_bootstraps(iterations: usize, depth: usize, top: usize, after: usize) -> usize {
    let (mut left, mut count) = (top, 0);
    for t in 0..iterations {
        if server::needs_bootstrap(left, depth, t + 1 == iterations) {
            (left, count) = (after, count + 1);
        }
        left = left.saturating_sub(depth);
    }
    count
}

impl EncryptedTrainer {
    /// Checks the configuration against `train` (standardized features), makes the parameters
    /// (see the module doc) and every key on `cpu`. Refused with the plaintext trainer's
    /// messages, and: the exact sigmoid (CKKS evaluates polynomials only), a sample whose row
    /// does not fit N/2 slots, a ring degree other than 2^10..2^14 and 2^16, no iteration per
    /// bootstrapping, more iterations per bootstrapping than the 128-bit preset's levels allow.
    pub fn new(cpu: &CpuBackend, train: &LabeledData, config: &EncryptedConfig) -> Result<Self, HelrError> {
        check(train, &config.train)?;
        let Sigmoid::Polynomial(sigmoid) = config.train.sigmoid else {
            return Err(HelrError::Input(
                "the encrypted trainer evaluates a polynomial sigmoid; the exact one is for plaintext comparisons"
                    .into(),
            ));
        };
        let degree = config.degree;
        if (!(1024..=16384).contains(&degree) && degree != SECURE_DEGREE) || !degree.is_power_of_two() {
            return Err(HelrError::Input(format!(
                "--n {degree}: encrypted training runs on the 128-bit bootstrapping preset, N = 65536, or the \
                 INSECURE ones, N = 1024, 2048, 4096, 8192 or 16384"
            )));
        }
        if config.iterations_per_bootstrap == 0 {
            return Err(HelrError::Input("iterations per bootstrapping must be at least 1".into()));
        }
        let packing = Packing::split(config.train.batch, train.features().len(), degree / 2)?;
        let depth = server::iteration_depth(&server::sigmoid_series(&sigmoid)?);
        let k = config.iterations_per_bootstrap;
        let levels_after = depth * k + COMBINE_DEPTH;
        let (params, bootstrap_config) = if degree == SECURE_DEGREE {
            secure_parameters(levels_after).map_err(|e| {
                HelrError::Input(format!(
                    "{k} iterations per bootstrapping need {levels_after} levels after each bootstrapping, more than \
                     the 128-bit preset (N = {SECURE_DEGREE}) leaves: {e}"
                ))
            })?
        } else {
            (insecure_parameters(degree, levels_after)?, BootstrapConfig::default())
        };
        let ctx = CkksContext::new(params)?;
        // Only the weights are bootstrapped, and they repeat with period W: a sparse packing of
        // W slots (the trace's few rotations and one EvalMod, instead of the full N/2).
        let bootstrap_config = BootstrapConfig { slots: Some(packing.width), ..bootstrap_config };
        let plan = BootstrapPlan::new(&ctx, &bootstrap_config)?;
        let top = ctx.depth_left(ctx.max_level());
        let bootstraps = planned_bootstraps(config.train.iterations, depth, top, plan.depth_after());
        let mut keygen = KeyGenerator::with_sampler(cpu, &ctx, Sampler::from_seed_u64(config.seed));
        let secret = keygen.secret_key()?;
        let relin = keygen.relin_key(&secret)?;
        let steps: Vec<i64> = [packing.row_sum_steps(), packing.replicate_steps(), packing.column_sum_steps()].concat();
        let mut elements = ctx.galois_elements(&steps, false);
        if bootstraps > 0 {
            elements.extend(plan.galois_elements());
        }
        elements.sort_unstable();
        elements.dedup();
        let galois = keygen.galois_keys(&secret, &elements)?;
        let encapsulation = match bootstraps > 0 && plan.uses_encapsulation() {
            true => Some(keygen.encapsulation_keys(&secret, plan.hamming_weight())?),
            false => None,
        };
        Ok(Self {
            config: *config,
            ctx,
            plan,
            packing,
            sigmoid,
            secret,
            relin,
            galois,
            encapsulation,
            train: train.clone(),
            depth,
            bootstraps,
        })
    }

    /// The parameters (128-bit at N = 2^16, INSECURE below: see the module doc).
    pub fn params(&self) -> &CkksParameters {
        self.ctx.params()
    }

    /// Every prime a backend must hold (a PIM backend is built with them).
    pub fn primes(&self) -> Vec<u32> {
        self.ctx.backend_primes()
    }

    /// The layout of a batch.
    pub fn packing(&self) -> Packing {
        self.packing
    }

    /// The bootstrapping's plan (levels, rotations).
    pub fn plan(&self) -> &BootstrapPlan {
        &self.plan
    }

    /// Levels one iteration consumes (five with HELR's degree-3 sigmoid).
    pub fn iteration_depth(&self) -> usize {
        self.depth
    }

    /// Bootstrappings the training will run (each of `w` and `v` together): the rule of
    /// [`Server::needs_bootstrap`] applied to the levels in advance. None: the server skips
    /// bootstrapping's keys and transforms altogether.
    pub fn planned_bootstraps(&self) -> usize {
        self.bootstraps
    }

    /// The Galois keys made (the packing's rotations, and bootstrapping's with conjugation
    /// where [`EncryptedTrainer::planned_bootstraps`] is not 0).
    pub fn galois_keys(&self) -> &GaloisKeys {
        &self.galois
    }

    /// Server: an evaluator on `backend` with the keys uploaded and the bootstrapping
    /// prepared (setup: uploading keys and encoding the transforms, not training).
    pub fn server<'a, B: Backend>(&self, backend: &'a B) -> Result<Server<'a, B>, HelrError> {
        let evaluator =
            Evaluator::new(backend, &self.ctx).with_relin_key(&self.relin)?.with_galois_keys(&self.galois)?;
        let bootstrapper = match (self.bootstraps, &self.encapsulation) {
            (0, _) => None,
            (_, Some(keys)) => Some(Bootstrapper::with_encapsulation(&evaluator, self.plan.clone(), keys)?),
            (_, None) => Some(Bootstrapper::new(&evaluator, self.plan.clone())?),
        };
        let mask = self.encode(&self.packing.column_mask(-1.0 / self.sigmoid.interval))?;
        Server::new(evaluator, bootstrapper, self.packing, mask, &self.sigmoid)
    }

    /// Client: the batches the iterations use (at most one per iteration), each packed, tiled
    /// and encrypted on `backend`: one ciphertext per block ([`Packing::ciphertexts`]).
    pub fn encrypt_batches<B: Backend>(&self, backend: &B) -> Result<Vec<Vec<Ciphertext<B>>>, HelrError> {
        let z = signed_rows(&self.train);
        let TrainConfig { batch, iterations, .. } = self.config.train;
        let used = iterations.min(z.len().div_ceil(batch));
        // One randomness stream; each block its own ciphertext (an iteration multiplies blocks
        // one by one).
        let mut encryptor = self.encryptor(backend, BATCH_STREAM)?;
        (0..used)
            .map(|t| {
                let blocks = self.packing.pack(&batch_rows(&z, batch, t))?;
                blocks.iter().map(|b| Ok(encryptor.encrypt(std::slice::from_ref(&self.encode(b)?))?)).collect()
            })
            .collect()
    }

    /// Client: `w = v = 0`, encrypted on `backend` at the top level.
    pub fn encrypt_initial_weights<B: Backend>(&self, backend: &B) -> Result<Weights<B>, HelrError> {
        let zero = self.encode(&vec![0.0; self.packing.slots()])?;
        let mut encryptor = self.encryptor(backend, WEIGHT_STREAM)?;
        let (v, w) = (encryptor.encrypt(std::slice::from_ref(&zero))?, encryptor.encrypt(std::slice::from_ref(&zero))?);
        Ok(Weights { v, w, w_factor: Complex64::new(1.0, 0.0) })
    }

    /// Client: `w = v = 0` as [`EncryptedTrainer::encrypt_initial_weights`] encrypts them, but
    /// dropped to the lowest level that can still be bootstrapped, so that the first
    /// iteration bootstraps: the start of a steady-state period of bootstrapping and
    /// [`EncryptedConfig::iterations_per_bootstrap`] iterations (what Anaheim's HELR row
    /// prices per iteration).
    pub fn encrypt_spent_weights<B: Backend>(&self, backend: &B) -> Result<Weights<B>, HelrError> {
        let Weights { v, w, w_factor } = self.encrypt_initial_weights(backend)?;
        let evaluator = Evaluator::new(backend, &self.ctx);
        let level = self.ctx.min_level() + COMBINE_DEPTH * self.ctx.params().primes_per_level();
        let (v, w) = (evaluator.drop_to_level(&v, level)?, evaluator.drop_to_level(&w, level)?);
        Ok(Weights { v, w, w_factor })
    }

    /// Client: the weights `w` of `weights` (row 0 of the first copy), decrypted on `cpu`
    /// after a copy is downloaded from `backend`.
    pub fn decrypt_weights<B: Backend>(
        &self,
        backend: &B,
        cpu: &CpuBackend,
        weights: &Weights<B>,
    ) -> Result<Vec<f64>, HelrError> {
        let local = weights.w.transfer(backend, cpu)?;
        let plain = Decryptor::new(cpu, &self.secret)?.decrypt(&local)?;
        let slots = Encoder::new(&self.ctx).decode(&plain[0])?;
        Ok(slots[..self.packing.features + 1].iter().map(|s| (s * weights.w_factor).re).collect())
    }

    /// Client: the check bootstrapping cannot make itself
    /// ([`BootstrapPlan::check_message_range`]): `v` and `w` of `weights`, downloaded to `cpu`
    /// and decrypted, within EvalMod's range, so that refreshing them cannot silently return
    /// wrong weights.
    fn check_bootstrap_range<B: Backend>(
        &self,
        backend: &B,
        cpu: &CpuBackend,
        weights: &Weights<B>,
    ) -> Result<(), HelrError> {
        let decryptor = Decryptor::new(cpu, &self.secret)?;
        for ciphertext in [&weights.v, &weights.w] {
            self.plan.check_message_range(&decryptor, &ciphertext.transfer(backend, cpu)?).map_err(|e| {
                HelrError::Diverged(format!(
                    "the weights grew beyond what bootstrapping refreshes ({e}): use a smaller learning rate"
                ))
            })?;
        }
        Ok(())
    }

    /// The whole training on `backend` (keys uploaded, batches encrypted, iterations run),
    /// progress reported per iteration. See [`EncryptedTrainer::train_with`].
    pub fn train<B: Backend>(
        &self,
        cpu: &CpuBackend,
        backend: &B,
        progress: &dyn Progress,
    ) -> Result<EncryptedTraining, HelrError> {
        let server = self.server(backend)?;
        let batches = self.encrypt_batches(backend)?;
        let start = self.encrypt_initial_weights(backend)?;
        self.train_with(&server, &batches, start, cpu, progress)
    }

    /// The iterations of [`super::train`] on `server`, from `start`, one batch of `batches`
    /// each in turn, bootstrapping where [`Server::needs_bootstrap`] says; the client
    /// decrypts `w` after each to report its loss, and at the end into the model, and checks
    /// what it sends to be bootstrapped is within bootstrapping's range. Progress:
    /// one step per iteration. Refused: weights that stop being finite.
    pub fn train_with<B: Backend>(
        &self,
        server: &Server<'_, B>,
        batches: &[Vec<Ciphertext<B>>],
        start: Weights<B>,
        cpu: &CpuBackend,
        progress: &dyn Progress,
    ) -> Result<EncryptedTraining, HelrError> {
        let iterations = self.config.train.iterations;
        progress.start(iterations as u64, "iterations");
        let result = self.iterate(server, batches, start, iterations, cpu, progress);
        progress.finish();
        result
    }

    /// One steady-state period on `server`: from `start` (made by
    /// [`EncryptedTrainer::encrypt_spent_weights`], so a client's work stays out of what a
    /// caller times), a bootstrapping and then [`EncryptedConfig::iterations_per_bootstrap`] iterations (the
    /// first of the schedule, on the first batches), so that the period's cost over its
    /// iterations is the cost per iteration with the bootstrapping amortized. The decrypted
    /// weights are those of the plaintext trainer after as many iterations. Refused where the
    /// training planned no bootstrapping (no keys for it were made): configure more
    /// iterations than the chain holds.
    pub fn period<B: Backend>(
        &self,
        server: &Server<'_, B>,
        batches: &[Vec<Ciphertext<B>>],
        start: Weights<B>,
        cpu: &CpuBackend,
        progress: &dyn Progress,
    ) -> Result<EncryptedTraining, HelrError> {
        if self.bootstraps == 0 {
            return Err(HelrError::Input(format!(
                "a period of bootstrapping and iterations needs bootstrapping keys, and {} iterations fit the chain \
                 without: configure more",
                self.config.train.iterations
            )));
        }
        self.iterate(server, batches, start, self.config.iterations_per_bootstrap, cpu, progress)
    }

    fn iterate<B: Backend>(
        &self,
        server: &Server<'_, B>,
        batches: &[Vec<Ciphertext<B>>],
        start: Weights<B>,
        iterations: usize,
        cpu: &CpuBackend,
        progress: &dyn Progress,
    ) -> Result<EncryptedTraining, HelrError> {
        let TrainConfig { batch, learning_rate, .. } = self.config.train;
        if batches.is_empty() {
            return Err(HelrError::Input("no encrypted batch to train on".into()));
        }
        let mut schedule = Nesterov::new(learning_rate);
        let (mut weights, mut records, mut bootstraps, mut w) = (start, Vec::new(), 0, Vec::new());
        for t in 0..iterations {
            let bootstrapped = server.needs_bootstrap(&weights, t + 1 == iterations);
            if bootstrapped {
                self.check_bootstrap_range(server.evaluator().backend(), cpu, &weights)?;
            }
            let began = Instant::now();
            if bootstrapped {
                weights = server.bootstrap(&weights)?;
                bootstraps += 1;
            }
            let bootstrap_seconds = if bootstrapped { began.elapsed().as_secs_f64() } else { 0.0 };
            weights = server.iterate(&weights, &batches[t % batches.len()], schedule.next_step(), batch)?;
            let seconds = began.elapsed().as_secs_f64();
            w = self.decrypt_weights(server.evaluator().backend(), cpu, &weights)?;
            if w.iter().any(|x| !x.is_finite()) {
                return Err(HelrError::Diverged(format!(
                    "the decrypted weights stopped being finite at iteration {}: use a smaller learning rate than \
                     {learning_rate}",
                    t + 1
                )));
            }
            let loss = evaluate(&w, &self.train)?.loss;
            records.push(IterationRecord {
                iteration: t + 1,
                seconds,
                bootstrap_seconds,
                bootstrapped,
                level: weights.level(),
                loss,
            });
            progress.advance(1);
        }
        Ok(EncryptedTraining { weights: w, iterations: records, bootstraps })
    }

    fn encode(&self, block: &[f64]) -> Result<pimhe_schemes::ckks::CkksPlaintext, HelrError> {
        Ok(Encoder::new(&self.ctx).encode_real(&self.packing.tile(block), self.ctx.default_scale())?)
    }

    /// A secret-key encryptor whose randomness is stream `stream` of the configured seed (the
    /// keys use the seed itself).
    fn encryptor<'a, B: Backend>(&self, backend: &'a B, stream: u64) -> Result<Encryptor<'a, B>, HelrError> {
        let seed = self.config.seed ^ stream;
        Ok(Encryptor::with_secret_key(backend, &self.secret)?.with_sampler(Sampler::from_seed_u64(seed)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_planned_bootstrappings_follow_the_levels() {
        // 17 levels at the top, 6 after a bootstrapping, 5 an iteration: three iterations on
        // the chain (17 -> 12 -> 7 -> 2), then one bootstrapping before each iteration (the
        // level left over is the next bootstrapping's combination).
        assert_eq!(planned_bootstraps(3, 5, 17, 6), 0);
        assert_eq!(planned_bootstraps(6, 5, 17, 6), 3);
        // The last iteration may use every level: 17 -> 12 -> 7 -> 2, and 3 iterations of 5 fit 15.
        assert_eq!(planned_bootstraps(3, 5, 15, 6), 0);
        assert_eq!(planned_bootstraps(3, 5, 14, 6), 1);
        // Two iterations per bootstrapping: 11 levels after one.
        assert_eq!(planned_bootstraps(8, 5, 22, 11), 2);
    }
}
