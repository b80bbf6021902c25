//! What the statistics need of an HE scheme, and its implementation for BGV.
//!
//! Each user encrypts one ciphertext per encoded vector (their own data only); the server adds
//! up the users' ciphertexts, or their slot-wise products, into one aggregate. Aggregates are
//! relinearized once, after the sum, not once per user.

use std::sync::Arc;

use pimhe_exec::Backend;
use pimhe_math::Sampler;
use pimhe_schemes::bgv::{
    BatchEncoder, BgvContext, BgvParameters, CiphertextBatch, Decryptor, Encryptor, Evaluator, KeyGenerator, PublicKey,
    RelinKey, SecretKey,
};
use pimhe_schemes::SchemeError;

/// An HE scheme as the statistics use it: the client encrypts and decrypts, the server only
/// adds and multiplies with public material.
pub trait StatsScheme {
    /// A batch of ciphertexts, one per user.
    type Ciphertexts;

    /// Scheme name as the CLI spells it.
    fn name(&self) -> &'static str;

    /// Plaintext slots per ciphertext.
    fn slots(&self) -> usize;

    /// The plaintext modulus t.
    fn plain_modulus(&self) -> u32;

    /// Client: one ciphertext per row (values mod t, at most `slots()` of them).
    fn encrypt(&mut self, rows: &[Vec<u64>]) -> Result<Self::Ciphertexts, SchemeError>;

    /// Server: the slot-wise sum of all ciphertexts.
    fn sum(&self, a: &Self::Ciphertexts) -> Result<Self::Ciphertexts, SchemeError>;

    /// Server: the slot-wise sum over users of `a[u] * b[u]`, relinearized.
    fn sum_of_products(&self, a: &Self::Ciphertexts, b: &Self::Ciphertexts) -> Result<Self::Ciphertexts, SchemeError>;

    /// Client: the slots of an aggregate (a batch of one), mod t.
    fn decrypt(&self, aggregate: &Self::Ciphertexts) -> Result<Vec<u64>, SchemeError>;

    /// Noise budget left, in bits, of each ciphertext of a batch.
    fn noise_budget(&self, a: &Self::Ciphertexts) -> Result<Vec<u32>, SchemeError>;
}

/// BGV with the client (keys, encryption, decryption) on one backend and the server's
/// aggregation on another, ciphertexts moving between them as they would over a network; keys
/// come from a seeded or OS-seeded sampler.
pub struct BgvStats<'a, C: Backend, B: Backend> {
    client: &'a C,
    backend: &'a B,
    ctx: Arc<BgvContext>,
    secret: SecretKey,
    public: PublicKey,
    relin: RelinKey,
    encoder: BatchEncoder,
    sampler: Sampler,
}

impl<'a, C: Backend, B: Backend> BgvStats<'a, C, B> {
    /// Keys for `params` (which must have a special prime, for relinearization), made on the
    /// client; `server` aggregates.
    pub fn new(client: &'a C, server: &'a B, params: BgvParameters, mut sampler: Sampler) -> Result<Self, SchemeError> {
        let ctx = BgvContext::new(params)?;
        let mut keygen = KeyGenerator::with_sampler(client, &ctx, sampler.fork());
        let secret = keygen.secret_key()?;
        let public = keygen.public_key(&secret)?;
        let relin = keygen.relin_key(&secret)?;
        let encoder = BatchEncoder::new(&ctx);
        Ok(Self { client, backend: server, ctx, secret, public, relin, encoder, sampler })
    }

    /// The context (parameters and their precomputations).
    pub fn context(&self) -> &Arc<BgvContext> {
        &self.ctx
    }

    fn evaluator(&self) -> Result<Evaluator<'a, B>, SchemeError> {
        Evaluator::new(self.backend, &self.ctx).with_relin_key(&self.relin)
    }
}

impl<C: Backend, B: Backend> StatsScheme for BgvStats<'_, C, B> {
    type Ciphertexts = CiphertextBatch<B>;

    fn name(&self) -> &'static str {
        "bgv"
    }

    fn slots(&self) -> usize {
        self.ctx.slots()
    }

    fn plain_modulus(&self) -> u32 {
        self.ctx.params().plain_modulus()
    }

    fn encrypt(&mut self, rows: &[Vec<u64>]) -> Result<CiphertextBatch<B>, SchemeError> {
        let plains = rows.iter().map(|row| self.encoder.encode(row)).collect::<Result<Vec<_>, _>>()?;
        let encrypted = Encryptor::with_public_key(self.client, &self.public)?
            .with_sampler(self.sampler.fork())
            .encrypt(&plains)?;
        encrypted.transfer(self.client, self.backend)
    }

    fn sum(&self, a: &CiphertextBatch<B>) -> Result<CiphertextBatch<B>, SchemeError> {
        Evaluator::new(self.backend, &self.ctx).sum(a)
    }

    fn sum_of_products(
        &self,
        a: &CiphertextBatch<B>,
        b: &CiphertextBatch<B>,
    ) -> Result<CiphertextBatch<B>, SchemeError> {
        let evaluator = self.evaluator()?;
        evaluator.relinearize(&evaluator.sum(&evaluator.multiply(a, b)?)?)
    }

    fn decrypt(&self, aggregate: &CiphertextBatch<B>) -> Result<Vec<u64>, SchemeError> {
        let received = aggregate.transfer(self.backend, self.client)?;
        let plains = Decryptor::new(self.client, &self.secret)?.decrypt(&received)?;
        self.encoder.decode(&plains[0])
    }

    fn noise_budget(&self, a: &CiphertextBatch<B>) -> Result<Vec<u32>, SchemeError> {
        Decryptor::new(self.client, &self.secret)?.noise_budget(&a.transfer(self.backend, self.client)?)
    }
}

/// The 128-bit preset of ring degree `n` (its modulus chain, special primes and dnum) with
/// plaintext modulus `t` instead of the preset's.
pub fn bgv_parameters(n: usize, t: u32) -> Result<BgvParameters, SchemeError> {
    let preset = BgvParameters::preset(n)?;
    let bits = |p: &u32| 32 - p.leading_zeros();
    let data_bits: Vec<u32> = preset.data_primes().iter().map(bits).collect();
    match preset.special_primes().first() {
        Some(special) => BgvParameters::hybrid(n, t, &data_bits, bits(special), preset.dnum()),
        None => BgvParameters::new(n, t, &data_bits, None),
    }
}

/// The largest plaintext modulus size BGV allows with the preset of degree `n`: t must stay
/// below every prime of the modulus chain.
pub fn bgv_max_plain_bits(n: usize) -> Result<u32, SchemeError> {
    let preset = BgvParameters::preset(n)?;
    let smallest = preset.primes().into_iter().min().unwrap_or(0);
    Ok(31 - smallest.leading_zeros() - 1)
}
