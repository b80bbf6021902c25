//! The BGV pipeline of `pimhe demo`, as a library: a client encrypts batches of random integer
//! vectors x and y; a server multiplies them slot-wise, relinearizes and switches modulus (the
//! last two where the parameters have a special prime) on any backend; the client decrypts and
//! checks every slot against x y mod t, and reads the noise budget left.
//!
//! ```
//! use pimhe_exec::CpuBackend;
//! use pimhe_schemes::bgv::BgvParameters;
//! use pimhe_workloads::bgv_pipeline::{BgvPipeline, Checked};
//! let cpu = CpuBackend::new(Some(2)).unwrap();
//! let pipeline = BgvPipeline::new(&cpu, BgvParameters::preset(4096).unwrap(), 2, 7).unwrap();
//! let (x, y) = pipeline.encrypt(&cpu).unwrap();
//! let product = pipeline.serve(&cpu, &x, &y, |_, _| {}).unwrap();
//! let Checked::Match { noise_budget_bits } = pipeline.check(&cpu, &product).unwrap() else { panic!("a mismatch") };
//! assert!(noise_budget_bits > 0);
//! ```

use std::sync::Arc;
use std::time::Duration;

use crate::progress::timed;

use pimhe_exec::{Backend, CpuBackend};
use pimhe_math::Sampler;
use pimhe_ring::memory;
use pimhe_schemes::bgv::{
    BatchEncoder, BgvContext, BgvParameters, CiphertextBatch, Decryptor, Encryptor, Evaluator, KeyGenerator, PublicKey,
    RelinKey, SecretKey,
};
use pimhe_schemes::{Result, SchemeError};

/// What the server's computation did: the product, and whether it was relinearized and
/// switched down a modulus.
pub struct Served<B: Backend> {
    /// x y, slot-wise.
    pub product: CiphertextBatch<B>,
    /// Whether it was relinearized and modulus-switched (parameters with a special prime).
    pub switched: bool,
}

/// What the client's check found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Checked {
    /// Every slot is x y mod t; the least noise budget left, in bits.
    Match {
        /// Bits of noise budget left.
        noise_budget_bits: u32,
    },
    /// A ciphertext decrypted to another product.
    Mismatch {
        /// The first such ciphertext of the batch.
        ciphertext: usize,
    },
}

/// The client's keys and inputs.
pub struct BgvPipeline {
    ctx: Arc<BgvContext>,
    encoder: BatchEncoder,
    secret: SecretKey,
    public: PublicKey,
    relin: Option<RelinKey>,
    x: Vec<Vec<u64>>,
    y: Vec<Vec<u64>>,
}

impl BgvPipeline {
    /// Keys (OS randomness, made on `cpu`) and `batch` pairs of random vectors of N slots mod t
    /// from `seed`. Parameters whose noise budget does not survive one product (the same
    /// computation on the largest slot values, tried first) are refused.
    pub fn new(cpu: &CpuBackend, params: BgvParameters, batch: usize, seed: u64) -> Result<Self> {
        if batch == 0 {
            return Err(SchemeError::InvalidParameters("the batch needs at least one pair of vectors".into()));
        }
        let ctx = BgvContext::new(params)?;
        let mut keygen = KeyGenerator::new(cpu, &ctx)?;
        let secret = keygen.secret_key()?;
        let public = keygen.public_key(&secret)?;
        // Only parameters with a special prime have a relinearization key.
        let relin = keygen.relin_key(&secret).ok();
        let t = *ctx.plain_modulus();
        let mut sampler = Sampler::from_seed_u64(seed);
        let mut random_vectors = || -> Vec<Vec<u64>> {
            (0..batch).map(|_| sampler.uniform_vec(&t, ctx.slots()).into_iter().map(u64::from).collect()).collect()
        };
        let (x, y) = (random_vectors(), random_vectors());
        let pipeline = Self { encoder: BatchEncoder::new(&ctx), ctx, secret, public, relin, x, y };
        pipeline.ensure_budget_for_one_product(cpu)?;
        Ok(pipeline)
    }

    /// The parameters' context.
    pub fn context(&self) -> &Arc<BgvContext> {
        &self.ctx
    }

    /// Every prime a backend must hold for the pipeline.
    pub fn primes(&self) -> Vec<u32> {
        self.ctx.params().primes()
    }

    /// Whether the server relinearizes and switches modulus (a special prime exists).
    pub fn switches(&self) -> bool {
        self.relin.is_some()
    }

    /// The bytes the pipeline's buffers take for `batch` pairs at `params`, `copies` times
    /// (an emulated device holds a copy of what it computes on): the random inputs (64-bit) and
    /// their plaintexts, both input batches, the product and relinearization's digits, all
    /// over the top modulus with the special primes.
    pub fn estimated_bytes(params: &BgvParameters, batch: usize, copies: usize) -> u128 {
        let primes = params.primes().len();
        let ciphertext_words = 2 * 2 + 3 + 2 * (params.dnum() + 2);
        let per_coefficient = 2 * 8 + 2 * 4 + 4 * primes * ciphertext_words;
        memory::bytes(&[batch, params.degree(), per_coefficient, copies], 1)
    }

    /// Client: encodes and encrypts x and y with the public key on `backend`.
    pub fn encrypt<B: Backend>(&self, backend: &B) -> Result<(CiphertextBatch<B>, CiphertextBatch<B>)> {
        let mut encryptor = Encryptor::with_public_key(backend, &self.public)?;
        let encode = |v: &Vec<Vec<u64>>| v.iter().map(|v| self.encoder.encode(v)).collect::<Result<Vec<_>>>();
        Ok((encryptor.encrypt(&encode(&self.x)?)?, encryptor.encrypt(&encode(&self.y)?)?))
    }

    /// An evaluator on `backend` with the relinearization key uploaded where there is one
    /// (setup, not part of the server's computation).
    pub fn evaluator<'a, B: Backend>(&self, backend: &'a B) -> Result<Evaluator<'a, B>> {
        match &self.relin {
            Some(key) => Evaluator::new(backend, &self.ctx).with_relin_key(key),
            None => Ok(Evaluator::new(backend, &self.ctx)),
        }
    }

    /// Server: x y on `backend`, each step timed and reported to `observe`.
    pub fn serve<B: Backend>(
        &self,
        backend: &B,
        x: &CiphertextBatch<B>,
        y: &CiphertextBatch<B>,
        observe: impl FnMut(&str, Duration),
    ) -> Result<CiphertextBatch<B>> {
        Ok(self.serve_with(&self.evaluator(backend)?, x, y, observe)?.product)
    }

    /// [`BgvPipeline::serve`] with an evaluator already made: multiply, then relinearize and
    /// switch modulus where the parameters allow; each step's name and time go to `observe`.
    pub fn serve_with<B: Backend>(
        &self,
        evaluator: &Evaluator<'_, B>,
        x: &CiphertextBatch<B>,
        y: &CiphertextBatch<B>,
        mut observe: impl FnMut(&str, Duration),
    ) -> Result<Served<B>> {
        let product = timed(&mut observe, "multiply (tensor)", || evaluator.multiply(x, y))?;
        if self.relin.is_none() {
            return Ok(Served { product, switched: false });
        }
        let relinearized = timed(&mut observe, "relinearize", || evaluator.relinearize(&product))?;
        let switched = timed(&mut observe, "modulus switch", || evaluator.mod_switch_to_next(&relinearized))?;
        Ok(Served { product: switched, switched: true })
    }

    /// Client: decrypts the product on `backend` and checks every slot against x y mod t.
    pub fn check<B: Backend>(&self, backend: &B, product: &CiphertextBatch<B>) -> Result<Checked> {
        let decryptor = Decryptor::new(backend, &self.secret)?;
        let budget = decryptor.noise_budget(product)?.into_iter().min().unwrap_or(0);
        let decrypted =
            decryptor.decrypt(product)?.iter().map(|p| self.encoder.decode(p)).collect::<Result<Vec<_>>>()?;
        let t = u64::from(self.ctx.plain_modulus().value());
        let expected = self.x.iter().zip(&self.y).map(|(a, b)| a.iter().zip(b).map(|(&a, &b)| a * b % t).collect());
        Ok(match decrypted.iter().zip(expected).position(|(got, want): (_, Vec<u64>)| *got != want) {
            Some(ciphertext) => Checked::Mismatch { ciphertext },
            None => Checked::Match { noise_budget_bits: budget },
        })
    }

    /// Refuses parameters whose noise budget does not survive the computation: the same steps
    /// on one ciphertext of the largest slot values.
    fn ensure_budget_for_one_product(&self, cpu: &CpuBackend) -> Result<()> {
        let t = u64::from(self.ctx.plain_modulus().value());
        let largest = self.encoder.encode(&vec![t - 1; self.ctx.slots()])?;
        let ciphertext = Encryptor::with_public_key(cpu, &self.public)?.encrypt(&[largest])?;
        let served = self.serve_with(&self.evaluator(cpu)?, &ciphertext, &ciphertext, |_, _| {})?;
        let budget = Decryptor::new(cpu, &self.secret)?.noise_budget(&served.product)?[0];
        if budget == 0 {
            return Err(SchemeError::InvalidParameters(format!(
                "its preset ({}) supports encryption and additions but leaves no noise budget after one \
                 multiplication; use a ring degree of 2048 or more (4096 and up also relinearize and switch modulus)",
                self.ctx.params()
            )));
        }
        Ok(())
    }
}
