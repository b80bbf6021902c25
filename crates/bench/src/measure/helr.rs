//! `pimhe helr`: HELR logistic-regression training on encrypted data
//! ([`pimhe_workloads::helr::encrypted`]) on a target, beside the plaintext trainer with the
//! same sigmoid polynomial, batches and iterations: per-iteration time and loss, held-out
//! accuracy of both models, the weights' largest difference, bootstrappings, and the
//! parameters: the 128-bit bootstrapping preset at N = 2^16, INSECURE ones at N = 2^10 to 2^14
//! (the report says which).
//!
//! The client (keys, standardization, encryption, decryption, the loss) runs on this host's
//! CPU; the server's iterations and bootstrappings on the target. On nearbank the server's
//! work is modeled from its recorded trace; on upmem-emu it runs on the emulated DPUs, a DPU
//! group per prime (parallel mode, as `bench bootstrap`), and the modeled cost covers the
//! iterations and bootstrappings.
//!
//! ```no_run
//! use pimhe_bench::measure::helr::{self, HelrBenchConfig};
//! use pimhe_bench::NoProgress;
//! use pimhe_workloads::helr::LabeledData;
//! let data = LabeledData::synthetic_separable(200, 4, 1).unwrap().data;
//! let report = helr::run(&data, &HelrBenchConfig::default(), &NoProgress).unwrap();
//! assert!(report.insecure && report.encrypted.accuracy > 0.9);
//! ```

use std::fs::File;
use std::path::Path;
use std::time::Instant;

use pimhe_exec::{Backend, CpuBackend};
use pimhe_pim::runtime::OffloadReport;
use pimhe_workloads::helr::encrypted::{EncryptedConfig, EncryptedTrainer, EncryptedTraining, IterationRecord};
use pimhe_workloads::helr::{
    evaluate, train, ConstantFeatures, Evaluation, HelrError, LabeledData, Packing, Split, Standardization, TrainConfig,
};
use pimhe_workloads::progress::{NoProgress, Progress};
use serde::Serialize;

use crate::error::{BenchError, Result};
use crate::format::{format_seconds, Render};
use crate::target::nearbank::NearbankOutcome;
use crate::target::upmem::server_cost_line;
use crate::target::{BackendKind, Cost, Device, DeviceNeeds, Job, Target, TargetRules, UpmemFlags};

/// `pimhe helr`'s targets: every backend, `--dpus` and `--mode` only for UPMEM, `--threads` for the client
/// beside a PIM backend.
pub const RULES: TargetRules = TargetRules {
    backends: &BackendKind::ALL,
    default: BackendKind::Cpu,
    upmem: UpmemFlags { mode: true, kernel: false, emulate: false, what_if: false },
    threads_beside_upmem: true,
};

/// What a run takes: the flags of `pimhe helr` (and the keyword arguments of
/// `pimhe.helr.train`).
#[derive(Debug, Clone)]
pub struct HelrBenchConfig {
    /// Fraction of the samples held out (`--test-fraction`).
    pub test_fraction: f64,
    /// Gradient steps, one batch each (`--iterations`).
    pub iterations: usize,
    /// Samples per batch (`--batch`); `None`: the largest the slots and the training split
    /// allow ([`Packing::largest_batch`]).
    pub batch: Option<usize>,
    /// The learning-rate constant gamma (`--learning-rate`).
    pub learning_rate: f64,
    /// Ring degree (`--n`).
    pub n: usize,
    /// Iterations between two bootstrappings (`--per-bootstrap`).
    pub per_bootstrap: usize,
    /// Seed of the keys and the encryption (`--seed`); the split's seed is 1.
    pub seed: u64,
    /// Where the server runs.
    pub target: Target,
}

impl Default for HelrBenchConfig {
    /// A quarter held out, the largest batch, the CPU, and [`EncryptedConfig::default`]
    /// otherwise (N = 2^11, 32 iterations, learning rate 0.5, one iteration per
    /// bootstrapping, seed 1).
    fn default() -> Self {
        let encrypted = EncryptedConfig::default();
        Self {
            test_fraction: 0.25,
            iterations: encrypted.train.iterations,
            batch: None,
            learning_rate: encrypted.train.learning_rate,
            n: encrypted.degree,
            per_bootstrap: encrypted.iterations_per_bootstrap,
            seed: encrypted.seed,
            target: Target::Cpu { threads: None },
        }
    }
}

/// The seed of the train/test split (the plaintext trainer's default, so `helr::run` splits
/// alike).
const SPLIT_SEED: u64 = 1;

/// Reads the CSV at `path` (`--input`) with the label column `label`: the error names the
/// file and what is wrong in it.
pub fn load(path: &Path, label: &str) -> Result<LabeledData> {
    let file =
        File::open(path).map_err(|e| BenchError::usage(format!("cannot open --input {}: {e}", path.display())))?;
    LabeledData::from_csv(file, label).map_err(|e| BenchError::usage(format!("--input {}: {e}", path.display())))
}

/// What a run measured.
#[derive(Debug, Clone, Serialize)]
pub struct HelrReport {
    /// The backend of the server.
    pub backend: &'static str,
    /// The parameters, as `pimhe params` prints them.
    pub params: String,
    /// Whether they fall short of 128-bit security (the presets below N = 2^16 do).
    pub insecure: bool,
    /// Ring degree.
    pub n: usize,
    /// Samples trained on and held out.
    pub train_samples: usize,
    /// Samples held out.
    pub test_samples: usize,
    /// Features the model has (after dropping constant ones).
    pub features: usize,
    /// The client's scaling of the raw features (fitted on the training split; constant
    /// features dropped): the model's weights apply to `(x - mean) / std_dev`.
    pub standardization: Standardization,
    /// The layout of a batch in the slots.
    pub packing: Packing,
    /// Iterations.
    pub iterations: usize,
    /// The learning rate `gamma`.
    pub learning_rate: f64,
    /// Levels an iteration consumes.
    pub iteration_depth: usize,
    /// Rescalings left after each bootstrapping.
    pub levels_after_bootstrap: usize,
    /// Galois keys made, and their bytes.
    pub galois_keys: usize,
    /// Bytes of those keys.
    pub galois_key_bytes: usize,
    /// Key generation on this host, seconds.
    pub keygen_s: f64,
    /// The server's setup (keys uploaded, bootstrapping's transforms prepared), seconds.
    pub setup_s: f64,
    /// Each iteration: server time (measured on the CPU, this host's wall time on a modeled
    /// target), whether it bootstrapped, the client's loss on decrypted weights.
    pub per_iteration: Vec<IterationRecord>,
    /// Bootstrappings run.
    pub bootstraps: usize,
    /// The server's iterations and bootstrappings, seconds in all.
    pub train_s: f64,
    /// The encrypted-trained model (decrypted) on the held-out samples.
    pub encrypted: Evaluation,
    /// The plaintext model (same sigmoid, batches, iterations) on the held-out samples.
    pub plaintext: Evaluation,
    /// encrypted minus plaintext held-out accuracy, in percentage points.
    pub accuracy_gap_points: f64,
    /// The largest difference between the two models' weights.
    pub max_weight_difference: f64,
    /// The encrypted model's weights (intercept first, standardized features).
    pub weights: Vec<f64>,
    /// The server's modeled cost on upmem-emu.
    pub upmem: Option<OffloadReport>,
    /// The server's modeled cost on nearbank.
    pub nearbank: Option<NearbankOutcome>,
    /// On a modeled target, the modeled cost (iterations and bootstrappings) over the
    /// iterations; `None` on the CPU, whose `per_iteration` times are measured.
    pub modeled_iteration_s: Option<f64>,
}

/// Splits and standardizes `data`, trains the plaintext model, then the encrypted one with the
/// server on the target (progress: one step per iteration), and evaluates both on the
/// held-out samples.
pub fn run(data: &LabeledData, config: &HelrBenchConfig, progress: &dyn Progress) -> Result<HelrReport> {
    RULES.check(&config.target)?;
    if config.batch == Some(0) {
        return Err(BenchError::usage("--batch 0 is not allowed: a batch needs at least 1 sample"));
    }
    let split = Split::new(data, config.test_fraction, SPLIT_SEED)?;
    // The digits' border pixels are constant: dropped (and reported), not refused.
    let scaling = Standardization::fit(&split.train, ConstantFeatures::Drop)?;
    let (train_set, test_set) = (scaling.apply(&split.train)?, scaling.apply(&split.test)?);
    let fits = || Packing::largest_batch(train_set.features().len(), config.n / 2).min(train_set.len()).max(1);
    let encrypted = EncryptedConfig {
        train: TrainConfig {
            batch: config.batch.unwrap_or_else(fits),
            iterations: config.iterations,
            learning_rate: config.learning_rate,
            ..TrainConfig::default()
        },
        degree: config.n,
        iterations_per_bootstrap: config.per_bootstrap,
        seed: config.seed,
    };
    let plain = train(&train_set, &encrypted.train)?;

    let cpu = CpuBackend::new(config.target.threads())?;
    let start = Instant::now();
    let trainer = EncryptedTrainer::new(&cpu, &train_set, &encrypted)?;
    let keygen_s = start.elapsed().as_secs_f64();
    let needs = DeviceNeeds { n: encrypted.degree, primes: trainer.primes() };
    let ran = config.target.run(&needs, Training { trainer: &trainer, cpu: &cpu, progress })?;
    let (upmem, nearbank) = match ran.cost {
        Cost::Cpu { .. } => (None, None),
        Cost::Upmem(report) => (Some(report), None),
        Cost::Nearbank(outcome) => (None, Some(outcome)),
    };
    let Trained { setup_s, training } = ran.output;
    let encrypted_eval = evaluate(&training.weights, &test_set)?;
    let plaintext = evaluate(&plain.weights, &test_set)?;
    let max_weight_difference =
        training.weights.iter().zip(&plain.weights).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
    let modeled_total_s = match (&upmem, &nearbank) {
        (Some(u), _) => Some(u.total_s()),
        (None, Some(outcome)) => Some(outcome.cost.total_s),
        (None, None) => None,
    };
    Ok(HelrReport {
        modeled_iteration_s: modeled_total_s.map(|total| total / encrypted.train.iterations.max(1) as f64),
        backend: config.target.name(),
        params: trainer.params().to_string(),
        insecure: trainer.params().rlwe().security_bits().is_none(),
        n: encrypted.degree,
        train_samples: train_set.len(),
        test_samples: test_set.len(),
        features: train_set.features().len(),
        standardization: scaling,
        packing: trainer.packing(),
        iterations: encrypted.train.iterations,
        learning_rate: encrypted.train.learning_rate,
        iteration_depth: trainer.iteration_depth(),
        levels_after_bootstrap: trainer.plan().depth_after(),
        galois_keys: trainer.galois_keys().elements().count(),
        galois_key_bytes: trainer.galois_keys().size_bytes(),
        keygen_s,
        setup_s,
        train_s: training.iterations.iter().map(|r| r.seconds).sum(),
        per_iteration: training.iterations,
        bootstraps: training.bootstraps,
        accuracy_gap_points: 100.0 * (encrypted_eval.accuracy - plaintext.accuracy),
        encrypted: encrypted_eval,
        plaintext,
        max_weight_difference,
        weights: training.weights,
        upmem,
        nearbank,
    })
}

impl From<HelrError> for BenchError {
    fn from(e: HelrError) -> Self {
        match e {
            HelrError::Input(m) | HelrError::Capacity(m) => BenchError::Usage(m),
            HelrError::Diverged(m) | HelrError::Encrypted(m) => BenchError::Failed(m),
        }
    }
}

/// The server's part on the target's backend.
#[derive(Clone, Copy)]
struct Training<'a> {
    trainer: &'a EncryptedTrainer,
    cpu: &'a CpuBackend,
    progress: &'a dyn Progress,
}

/// What the job returns.
struct Trained {
    setup_s: f64,
    training: EncryptedTraining,
}

impl Job for Training<'_> {
    type Output = Trained;

    fn run<B: Backend>(self, device: &Device<'_, B>) -> Result<Trained> {
        let backend = device.backend;
        let start = Instant::now();
        let server = self.trainer.server(backend)?;
        let setup_s = start.elapsed().as_secs_f64();
        let batches = self.trainer.encrypt_batches(backend)?;
        let weights = self.trainer.encrypt_initial_weights(backend)?;
        // Priced: the iterations and bootstrappings, and the download of w after each for the
        // client's loss (one ciphertext, small beside an iteration).
        device.start_pricing()?;
        let training = self.trainer.train_with(&server, &batches, weights, self.cpu, self.progress)?;
        device.stop_pricing()?;
        Ok(Trained { setup_s, training })
    }

    fn pricing_copy(&self) -> Option<Self> {
        Some(Training { progress: &NoProgress, ..*self })
    }
}

impl Render for HelrReport {
    fn render(&self) -> String {
        let p = &self.packing;
        let mut out = format!(
            "pimhe helr: encrypted logistic-regression training (HELR), {} backend{}\n  parameters: {}\n  data: {} \
             samples trained on, {} held out, {} features{}\n  packing: batch {} in {} rows x {} columns{}, tiled over \
             {} slots; {} rotations an iteration\n  {} iterations, learning rate {}, {} levels each; {} levels after \
             each bootstrapping\n  keys: {} Galois keys ({:.1} MiB), made in {} on this host; server setup {}",
            self.backend,
            if self.insecure { "; INSECURE parameters (not 128-bit secure)" } else { "; 128-bit preset" },
            self.params,
            self.train_samples,
            self.test_samples,
            self.features,
            if self.standardization.dropped.is_empty() {
                String::new()
            } else {
                format!(" ({} constant ones dropped)", self.standardization.dropped.len())
            },
            p.batch,
            p.rows,
            p.width,
            match p.ciphertexts {
                1 => String::new(),
                c => format!(" cut into {c} ciphertexts of {} rows", p.block_rows()),
            },
            p.capacity,
            p.rotations(),
            self.iterations,
            self.learning_rate,
            self.iteration_depth,
            self.levels_after_bootstrap,
            self.galois_keys,
            self.galois_key_bytes as f64 / (1 << 20) as f64,
            format_seconds(self.keygen_s),
            format_seconds(self.setup_s),
        );
        out += "\n  iteration  time        bootstrap   loss (client, decrypted w)";
        for r in &self.per_iteration {
            out += &format!(
                "\n  {:>9}  {:<10}  {:<10}  {:.6}",
                r.iteration,
                format_seconds(r.seconds),
                if r.bootstrapped { format_seconds(r.bootstrap_seconds) } else { "-".to_string() },
                r.loss
            );
        }
        let timing = if self.upmem.is_some() || self.nearbank.is_some() { "this host's wall time" } else { "measured" };
        out += &format!(
            "\n  training: {} ({timing}), {} bootstrappings\n  held-out accuracy: encrypted {:.2}%, plaintext (same \
             polynomial and iterations) {:.2}% ({:+.2} points); weights differ by at most {:.2e}",
            format_seconds(self.train_s),
            self.bootstraps,
            100.0 * self.encrypted.accuracy,
            100.0 * self.plaintext.accuracy,
            self.accuracy_gap_points,
            self.max_weight_difference
        );
        if let Some(u) = &self.upmem {
            out += &server_cost_line(u);
        }
        if let Some(outcome) = &self.nearbank {
            out += &format!("\n  server on {} (modeled):\n{}", outcome.system, outcome.render());
        }
        if let Some(seconds) = self.modeled_iteration_s {
            out += &format!(
                "\n  modeled server time per iteration: {} (the total above over {} iterations, bootstrappings \
                 included)",
                format_seconds(seconds),
                self.iterations
            );
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::target::UpmemTarget;

    /// The server's training on the emulated DPUs, bootstrapping included, computes what the
    /// CPU computes: the same seed gives the same decrypted weights, bit for bit.
    #[test]
    fn upmem_emu_trains_and_bootstraps_like_the_cpu() {
        let data = LabeledData::synthetic_separable(120, 2, 3).unwrap().data;
        let config = |target| HelrBenchConfig { n: 1024, batch: Some(8), iterations: 5, target, ..Default::default() };
        let cpu = run(&data, &config(Target::Cpu { threads: None }), &crate::NoProgress).unwrap();
        let emulated = run(&data, &config(Target::UpmemEmu(UpmemTarget::new(128))), &crate::NoProgress).unwrap();
        assert!(emulated.bootstraps > 0 && emulated.bootstraps == cpu.bootstraps, "{}", emulated.bootstraps);
        assert_eq!(emulated.weights, cpu.weights);
        let upmem = emulated.upmem.as_ref().expect("a modeled cost");
        assert!(upmem.launches > 0 && upmem.total_s() > 0.0);
        assert_eq!(emulated.modeled_iteration_s, Some(upmem.total_s() / 5.0));
        assert_eq!(cpu.modeled_iteration_s, None);
    }
}
