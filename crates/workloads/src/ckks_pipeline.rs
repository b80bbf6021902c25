//! The CKKS pipeline of `pimhe demo --scheme ckks`, as a library: a client encrypts batches of
//! real vectors x and y; a server computes sigmoid(rot(x y, 1)) slot-wise (one multiplication
//! with relinearization and rescaling, one rotation, a Chebyshev polynomial) on any backend; the
//! client decrypts and measures the precision against the same computation on the plaintext
//! values.
//!
//! ```
//! use pimhe_exec::CpuBackend;
//! use pimhe_schemes::ckks::CkksParameters;
//! use pimhe_workloads::ckks_pipeline::CkksPipeline;
//! let cpu = CpuBackend::new(Some(2)).unwrap();
//! let params = CkksParameters::builder(4096).depth(3).scale_bits(40).allow_insecure().build().unwrap();
//! let pipeline = CkksPipeline::new(&cpu, params, 1, 7).unwrap();
//! let (x, y) = pipeline.encrypt(&cpu).unwrap();
//! let result = pipeline.serve(&cpu, &x, &y, |_, _| {}).unwrap();
//! let precision = pipeline.check(&cpu, &result).unwrap();
//! assert!(precision.min_bits > 12.0, "{precision}");
//! ```

use std::sync::Arc;
use std::time::Duration;

use crate::progress::timed;

use num_complex::Complex64;
use pimhe_exec::{Backend, CpuBackend};
use pimhe_math::Sampler;
use pimhe_schemes::ckks::polynomial::ChebyshevSeries;
use pimhe_schemes::ckks::precision::{precision, PrecisionStats};
use pimhe_schemes::ckks::{
    CiphertextBatch, CkksContext, CkksParameters, Decryptor, Encoder, Encryptor, Evaluator, GaloisKeys, KeyGenerator,
    PublicKey, RelinKey, SecretKey,
};
use pimhe_schemes::rlwe::RlweScheme;
use pimhe_schemes::{Result, SchemeError};

/// The polynomial's interval: x y of values in [-1, 1] stays inside, so no change of variable
/// (and no level) is needed.
const INTERVAL: (f64, f64) = (-1.0, 1.0);

/// The largest sigmoid degree the pipeline evaluates, where the depth allows it.
const MAX_DEGREE: usize = 15;

/// The client's keys and inputs, and the polynomial the server evaluates.
pub struct CkksPipeline {
    ctx: Arc<CkksContext>,
    secret: SecretKey,
    public: PublicKey,
    relin: RelinKey,
    galois: GaloisKeys,
    sigmoid: ChebyshevSeries,
    x: Vec<Vec<f64>>,
    y: Vec<Vec<f64>>,
}

impl CkksPipeline {
    /// Keys (OS randomness, made on the CPU) and `batch` pairs of random vectors of N/2 values
    /// in [-1, 1) from `seed`. The sigmoid gets the largest degree 2^k - 1 (at most 15) that the
    /// depth left after the product allows; parameters without a level for it are refused.
    pub fn new(cpu: &CpuBackend, params: CkksParameters, batch: usize, seed: u64) -> Result<Self> {
        if batch == 0 {
            return Err(SchemeError::InvalidParameters("the batch needs at least one pair of vectors".into()));
        }
        let depth = params.depth();
        let sigmoid = (1..=MAX_DEGREE)
            .rev()
            .filter(|d| (d + 1).is_power_of_two())
            .map(|d| ChebyshevSeries::sigmoid(INTERVAL, d))
            .find(|p| p.as_ref().is_ok_and(|p| p.depth() < depth))
            .ok_or_else(|| {
                SchemeError::InvalidParameters(format!(
                    "depth {depth} leaves no level for the polynomial after the product; the pipeline needs depth 2 or more"
                ))
            })??;
        let ctx = CkksContext::new(params)?;
        let mut keygen = KeyGenerator::new(cpu, &ctx)?;
        let secret = keygen.secret_key()?;
        let public = keygen.public_key(&secret)?;
        let relin = keygen.relin_key(&secret)?;
        let galois = keygen.galois_keys(&secret, &ctx.galois_elements(&[1], false))?;
        let mut sampler = Sampler::from_seed_u64(seed);
        let mut vectors = || -> Vec<Vec<f64>> {
            (0..batch)
                .map(|_| (0..ctx.max_slots()).map(|_| f64::from(sampler.next_u32()) / 2f64.powi(31) - 1.0).collect())
                .collect()
        };
        let (x, y) = (vectors(), vectors());
        Ok(Self { ctx, secret, public, relin, galois, sigmoid, x, y })
    }

    /// The parameters' context.
    pub fn context(&self) -> &Arc<CkksContext> {
        &self.ctx
    }

    /// Degree of the sigmoid approximation the server evaluates.
    pub fn sigmoid_degree(&self) -> usize {
        self.sigmoid.degree()
    }

    /// Every prime a backend must hold for the pipeline (a PIM backend is built with them): the
    /// context's [`RlweScheme::backend_primes`].
    pub fn primes(&self) -> Vec<u32> {
        self.ctx.backend_primes()
    }

    /// Client: encodes and encrypts x and y with the public key on `backend`.
    pub fn encrypt<B: Backend>(&self, backend: &B) -> Result<(CiphertextBatch<B>, CiphertextBatch<B>)> {
        let encoder = Encoder::new(&self.ctx);
        let scale = self.ctx.default_scale();
        let encode = |v: &Vec<Vec<f64>>| v.iter().map(|v| encoder.encode_real(v, scale)).collect::<Result<Vec<_>>>();
        let mut encryptor = Encryptor::with_public_key(backend, &self.public)?;
        Ok((encryptor.encrypt(&encode(&self.x)?)?, encryptor.encrypt(&encode(&self.y)?)?))
    }

    /// An evaluator on `backend` with the pipeline's evaluation keys uploaded (setup, not part
    /// of the server's computation).
    pub fn evaluator<'a, B: Backend>(&self, backend: &'a B) -> Result<Evaluator<'a, B>> {
        Evaluator::new(backend, &self.ctx).with_relin_key(&self.relin)?.with_galois_keys(&self.galois)
    }

    /// Server: sigmoid(rot(x y, 1)) on `backend`, each step timed and reported to `observe`
    /// (its name and duration).
    pub fn serve<B: Backend>(
        &self,
        backend: &B,
        x: &CiphertextBatch<B>,
        y: &CiphertextBatch<B>,
        observe: impl FnMut(&str, Duration),
    ) -> Result<CiphertextBatch<B>> {
        self.serve_with(&self.evaluator(backend)?, x, y, observe)
    }

    /// [`CkksPipeline::serve`] with an evaluator already made.
    pub fn serve_with<B: Backend>(
        &self,
        evaluator: &Evaluator<'_, B>,
        x: &CiphertextBatch<B>,
        y: &CiphertextBatch<B>,
        mut observe: impl FnMut(&str, Duration),
    ) -> Result<CiphertextBatch<B>> {
        let product =
            timed(&mut observe, "multiply + relinearize + rescale", || evaluator.multiply_relin_rescale(x, y))?;
        let rotated = timed(&mut observe, "rotate by 1 slot", || evaluator.rotate(&product, 1))?;
        timed(&mut observe, &format!("sigmoid (Chebyshev, degree {})", self.sigmoid.degree()), || {
            evaluator.evaluate_polynomial(&rotated, &self.sigmoid)
        })
    }

    /// Client: decrypts the server's result on `backend` and measures it against
    /// sigmoid(rot(x y, 1)) computed on the plaintext values (the exact sigmoid, so the
    /// approximation's error counts too).
    pub fn check<B: Backend>(&self, backend: &B, result: &CiphertextBatch<B>) -> Result<PrecisionStats> {
        let encoder = Encoder::new(&self.ctx);
        let decrypted = Decryptor::new(backend, &self.secret)?.decrypt(result)?;
        let slots = self.ctx.max_slots();
        let mut got = Vec::with_capacity(decrypted.len() * slots);
        let mut expected = Vec::with_capacity(decrypted.len() * slots);
        for (k, plain) in decrypted.iter().enumerate() {
            got.extend(encoder.decode(plain)?);
            expected.extend((0..slots).map(|i| {
                let j = (i + 1) % slots;
                Complex64::new(1.0 / (1.0 + (-(self.x[k][j] * self.y[k][j])).exp()), 0.0)
            }));
        }
        Ok(precision(&got, &expected))
    }
}
