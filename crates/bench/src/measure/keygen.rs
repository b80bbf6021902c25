//! Key generation speed (`pimhe bench keygen`): the relinearization key and `--galois` Galois
//! keys of a CKKS preset made on the CPU backend, timed (the best of `--repeat` runs), and
//! reported as keys per second. Bootstrapping needs dozens of Galois keys, so at N = 2^16 this
//! is a client's wait.
//!
//! ```
//! use pimhe_bench::measure::keygen::{self, KeygenConfig};
//! let report = keygen::run(&KeygenConfig { n: 8192, galois: 2, repeat: 1, threads: Some(1), seed: 1 }).unwrap();
//! assert_eq!(report.galois_keys, 2);
//! assert!(report.galois_keys_per_s > 0.0 && report.relin_s > 0.0);
//! ```

use std::time::Instant;

use pimhe_exec::{Backend, CpuBackend};
use pimhe_math::Sampler;
use pimhe_schemes::ckks::{CkksContext, CkksParameters, KeyGenerator};
use serde::Serialize;

use crate::error::{check_repeat, check_threads, BenchError, Result};
use crate::format::{format_seconds, Render};

/// Most Galois keys one run makes (one per rotation step 1..=galois).
pub const MAX_GALOIS: usize = 64;

/// What a run takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeygenConfig {
    /// Ring degree of the CKKS preset (8192 ..= 65536, 128-bit).
    pub n: usize,
    /// Galois keys to make (rotations by 1 ..= galois slots), 1 ..= [`MAX_GALOIS`].
    pub galois: usize,
    /// Runs; the best is reported.
    pub repeat: usize,
    /// CPU backend threads (`None`: every core).
    pub threads: Option<usize>,
    /// Seed of the secret key and the keys' randomness.
    pub seed: u64,
}

/// What a run measured.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KeygenReport {
    /// Ring degree.
    pub n: usize,
    /// Threads of the backend.
    pub threads: usize,
    /// Runs, the best reported.
    pub repeats: usize,
    /// Primes of the key basis (data and special).
    pub key_primes: usize,
    /// Digits (pairs) of each switching key.
    pub dnum: usize,
    /// Bytes of one switching key.
    pub key_bytes: usize,
    /// The relinearization key, seconds (best run).
    pub relin_s: f64,
    /// Galois keys made per run.
    pub galois_keys: usize,
    /// All of them, seconds (best run).
    pub galois_s: f64,
    /// `galois_keys / galois_s`.
    pub galois_keys_per_s: f64,
}

/// Runs the measurement.
pub fn run(config: &KeygenConfig) -> Result<KeygenReport> {
    check_repeat(config.repeat, "run")?;
    check_threads(config.threads)?;
    if !(1..=MAX_GALOIS).contains(&config.galois) {
        return Err(BenchError::usage(format!("--galois {} is not allowed: 1..={MAX_GALOIS}", config.galois)));
    }
    let params = CkksParameters::preset(config.n).map_err(|e| BenchError::usage(format!("--n {}: {e}", config.n)))?;
    let (key_primes, dnum) = (params.rlwe().primes().len(), params.rlwe().dnum());
    let ctx = CkksContext::new(params)?;
    let backend = CpuBackend::new(config.threads)?;
    let steps: Vec<i64> = (1..=config.galois as i64).collect();
    let elements = ctx.galois_elements(&steps, false);
    let (mut relin_s, mut galois_s, mut key_bytes) = (f64::INFINITY, f64::INFINITY, 0);
    for _ in 0..config.repeat {
        let mut keygen = KeyGenerator::with_sampler(&backend, &ctx, Sampler::from_seed_u64(config.seed));
        let secret = keygen.secret_key()?;
        let start = Instant::now();
        let relin = keygen.relin_key(&secret)?;
        relin_s = relin_s.min(start.elapsed().as_secs_f64());
        let start = Instant::now();
        let galois = keygen.galois_keys(&secret, &elements)?;
        galois_s = galois_s.min(start.elapsed().as_secs_f64());
        key_bytes = relin.size_bytes();
        std::hint::black_box(galois);
    }
    Ok(KeygenReport {
        n: config.n,
        threads: backend.threads(),
        repeats: config.repeat,
        key_primes,
        dnum,
        key_bytes,
        relin_s,
        galois_keys: elements.len(),
        galois_s,
        galois_keys_per_s: elements.len() as f64 / galois_s,
    })
}

impl Render for KeygenReport {
    fn render(&self) -> String {
        format!(
            "pimhe bench keygen: CKKS preset N={}, {} key primes, dnum={}, {:.1} MiB per key; cpu, {} thread(s), best of {} (measured)\n  \
             relinearization key {:>12}\n  {} Galois keys     {:>12}  ({:.2} keys/s, {} per key)",
            self.n,
            self.key_primes,
            self.dnum,
            self.key_bytes as f64 / (1 << 20) as f64,
            self.threads,
            self.repeats,
            format_seconds(self.relin_s),
            self.galois_keys,
            format_seconds(self.galois_s),
            self.galois_keys_per_s,
            format_seconds(self.galois_s / self.galois_keys as f64),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_counts_are_refused_naming_the_range() {
        let config = KeygenConfig { n: 8192, galois: 0, repeat: 1, threads: Some(1), seed: 1 };
        assert_eq!(run(&config).unwrap_err().to_string(), "--galois 0 is not allowed: 1..=64");
        let config = KeygenConfig { galois: 1, n: 3000, ..config };
        assert!(run(&config).unwrap_err().to_string().starts_with("--n 3000"));
    }
}
