//! What the statistics need of an HE scheme, and its implementation for BGV and BFV.
//!
//! Each user encrypts one ciphertext per encoded vector (their own data only); the server adds
//! up the users' ciphertexts, or their slot-wise products, into one aggregate. Aggregates are
//! relinearized once, after the sum, not once per user, and only where the parameters have
//! special primes for a relinearization key (N >= 4096): below, a sum of products stays a
//! 3-component ciphertext, which decrypts all the same, and whether its noise budget suffices
//! is the plan's noise check to decide ([`super::StatsPlan::check_noise_budget`]).
//!
//! BGV and BFV are one API, the RLWE core's types generic over the scheme's context
//! ([`pimhe_schemes::rlwe`], [`ExactScheme`]), so one generic [`SchemeStats`] implements
//! [`StatsScheme`] for every scheme, and one generic [`StatsServer`] is the server's
//! [`Aggregator`] (public material only). What really differs, the parameters of a plaintext
//! modulus and the largest plaintext modulus, the scheme traits give
//! ([`ExactScheme::preset_with_plain_modulus`], [`ExactScheme::max_plain_bits`]), as they give
//! the primes a backend must hold ([`pimhe_schemes::rlwe::RlweScheme::backend_primes`]).

use std::sync::Arc;

use pimhe_exec::Backend;
use pimhe_math::Sampler;
use pimhe_schemes::bfv::BfvContext;
use pimhe_schemes::bgv::BgvContext;
use pimhe_schemes::encoder::{BatchEncoder, ExactScheme};
use pimhe_schemes::rlwe::{
    CiphertextBatch, Decryptor, Encryptor, Evaluator, KeyGenerator, PublicKey, RelinKey, SecretKey,
};
use pimhe_schemes::SchemeError;

/// The server's part of the statistics: adding ciphertexts up and multiplying pairs of them,
/// with public material only.
pub trait Aggregator {
    /// A batch of ciphertexts, one per user.
    type Ciphertexts;

    /// The slot-wise sum of all ciphertexts of a batch.
    fn sum(&self, a: &Self::Ciphertexts) -> Result<Self::Ciphertexts, SchemeError>;

    /// The slot-wise sum of two aggregates (batches of one), e.g. of two rounds of users.
    fn add(&self, a: &Self::Ciphertexts, b: &Self::Ciphertexts) -> Result<Self::Ciphertexts, SchemeError>;

    /// The slot-wise sum over users of `a[u] * b[u]`, relinearized where there is a
    /// relinearization key (else a 3-component ciphertext).
    fn sum_of_products(&self, a: &Self::Ciphertexts, b: &Self::Ciphertexts) -> Result<Self::Ciphertexts, SchemeError>;
}

/// An HE scheme as the in-process statistics use it: the client encrypts and decrypts, the
/// server ([`Aggregator`]) only adds and multiplies with public material.
pub trait StatsScheme: Aggregator {
    /// Scheme name as the CLI spells it.
    fn name(&self) -> &'static str;

    /// Plaintext slots per ciphertext.
    fn slots(&self) -> usize;

    /// The plaintext modulus t.
    fn plain_modulus(&self) -> u32;

    /// Client: one ciphertext per row (values mod t, at most `slots()` of them).
    fn encrypt(&mut self, rows: &[Vec<u64>]) -> Result<Self::Ciphertexts, SchemeError>;

    /// Client: the slots of an aggregate (a batch of one), mod t.
    fn decrypt(&self, aggregate: &Self::Ciphertexts) -> Result<Vec<u64>, SchemeError>;

    /// Noise budget left, in bits, of each ciphertext of a batch.
    fn noise_budget(&self, a: &Self::Ciphertexts) -> Result<Vec<u32>, SchemeError>;
}

/// Secret and public keys, and a relinearization key where the parameters have special primes.
struct Keys<C: ExactScheme> {
    secret: SecretKey<C>,
    public: PublicKey<C>,
    relin: Option<RelinKey<C>>,
}

/// A scheme (its context type `S`: [`BgvContext`], [`BfvContext`]) with the client (keys,
/// encryption, decryption) on one backend and the server's aggregation on another, ciphertexts
/// moving between them as they would over a network; keys come from a seeded or OS-seeded
/// sampler.
pub struct SchemeStats<'a, S: ExactScheme, C: Backend, B: Backend> {
    client: &'a C,
    backend: &'a B,
    ctx: Arc<S>,
    keys: Keys<S>,
    encoder: BatchEncoder,
    sampler: Sampler,
}

/// The statistics with BGV.
pub type BgvStats<'a, C, B> = SchemeStats<'a, BgvContext, C, B>;

/// The statistics with BFV.
pub type BfvStats<'a, C, B> = SchemeStats<'a, BfvContext, C, B>;

impl<'a, S: ExactScheme, C: Backend, B: Backend> SchemeStats<'a, S, C, B> {
    /// Keys for `params` (a relinearization key too where they have special primes), made on
    /// the client; `server` aggregates. The statistics' parameters are the preset with the
    /// plaintext modulus of the plan ([`ExactScheme::preset_with_plain_modulus`]).
    pub fn new(client: &'a C, server: &'a B, params: S::Params, sampler: Sampler) -> Result<Self, SchemeError> {
        Self::with_context(client, server, S::from_params(params)?, sampler)
    }

    /// [`SchemeStats::new`] on a context already built (e.g. the one whose
    /// [`pimhe_schemes::rlwe::RlweScheme::backend_primes`] the server was made with).
    pub fn with_context(client: &'a C, server: &'a B, ctx: Arc<S>, mut sampler: Sampler) -> Result<Self, SchemeError> {
        let mut keygen = KeyGenerator::with_sampler(client, &ctx, sampler.fork());
        let secret = keygen.secret_key()?;
        let public = keygen.public_key(&secret)?;
        let relin =
            if ctx.rlwe().params().special_primes().is_empty() { None } else { Some(keygen.relin_key(&secret)?) };
        let keys = Keys { secret, public, relin };
        let encoder = BatchEncoder::new(&ctx);
        Ok(Self { client, backend: server, ctx, keys, encoder, sampler })
    }

    /// The context (parameters and their precomputations).
    pub fn context(&self) -> &Arc<S> {
        &self.ctx
    }

    /// The keys: the secret key, the public key and the relinearization key (where the
    /// parameters have special primes), e.g. to hand the public ones to a server.
    pub fn into_keys(self) -> (SecretKey<S>, PublicKey<S>, Option<RelinKey<S>>) {
        (self.keys.secret, self.keys.public, self.keys.relin)
    }
}

/// The server of scheme `S` on backend `B`: the context and, where the parameters have special
/// primes, the relinearization key; nothing secret.
pub struct StatsServer<'a, S: ExactScheme, B: Backend> {
    backend: &'a B,
    ctx: &'a Arc<S>,
    relin: Option<&'a RelinKey<S>>,
}

impl<'a, S: ExactScheme, B: Backend> StatsServer<'a, S, B> {
    /// A server on `backend` for `ctx`; `relin` must belong to `ctx`, and is needed where the
    /// parameters have special primes (else products stay 3-component ciphertexts).
    pub fn new(backend: &'a B, ctx: &'a Arc<S>, relin: Option<&'a RelinKey<S>>) -> Self {
        Self { backend, ctx, relin }
    }
}

impl<S: ExactScheme, B: Backend> Aggregator for StatsServer<'_, S, B> {
    type Ciphertexts = CiphertextBatch<B, S>;

    fn sum(&self, a: &CiphertextBatch<B, S>) -> Result<CiphertextBatch<B, S>, SchemeError> {
        Evaluator::new(self.backend, self.ctx).sum(a)
    }

    fn add(&self, a: &CiphertextBatch<B, S>, b: &CiphertextBatch<B, S>) -> Result<CiphertextBatch<B, S>, SchemeError> {
        Evaluator::new(self.backend, self.ctx).add(a, b)
    }

    fn sum_of_products(
        &self,
        a: &CiphertextBatch<B, S>,
        b: &CiphertextBatch<B, S>,
    ) -> Result<CiphertextBatch<B, S>, SchemeError> {
        let evaluator = Evaluator::new(self.backend, self.ctx);
        match self.relin {
            Some(key) => {
                let evaluator = evaluator.with_relin_key(key)?;
                evaluator.relinearize(&evaluator.sum(&evaluator.multiply(a, b)?)?)
            }
            None => evaluator.sum(&evaluator.multiply(a, b)?),
        }
    }
}

impl<S: ExactScheme, C: Backend, B: Backend> SchemeStats<'_, S, C, B> {
    /// The server's view: the context and the public relinearization key.
    fn server(&self) -> StatsServer<'_, S, B> {
        StatsServer::new(self.backend, &self.ctx, self.keys.relin.as_ref())
    }
}

impl<S: ExactScheme, C: Backend, B: Backend> Aggregator for SchemeStats<'_, S, C, B> {
    type Ciphertexts = CiphertextBatch<B, S>;

    fn sum(&self, a: &CiphertextBatch<B, S>) -> Result<CiphertextBatch<B, S>, SchemeError> {
        self.server().sum(a)
    }

    fn add(&self, a: &CiphertextBatch<B, S>, b: &CiphertextBatch<B, S>) -> Result<CiphertextBatch<B, S>, SchemeError> {
        self.server().add(a, b)
    }

    fn sum_of_products(
        &self,
        a: &CiphertextBatch<B, S>,
        b: &CiphertextBatch<B, S>,
    ) -> Result<CiphertextBatch<B, S>, SchemeError> {
        self.server().sum_of_products(a, b)
    }
}

impl<S: ExactScheme, C: Backend, B: Backend> StatsScheme for SchemeStats<'_, S, C, B> {
    fn name(&self) -> &'static str {
        S::NAME
    }

    fn slots(&self) -> usize {
        self.ctx.plain_space().degree()
    }

    fn plain_modulus(&self) -> u32 {
        self.ctx.plain_space().modulus().value()
    }

    fn encrypt(&mut self, rows: &[Vec<u64>]) -> Result<CiphertextBatch<B, S>, SchemeError> {
        let plains = rows.iter().map(|row| self.encoder.encode(row)).collect::<Result<Vec<_>, _>>()?;
        let mut encryptor =
            Encryptor::with_public_key(self.client, &self.keys.public)?.with_sampler(self.sampler.fork());
        encryptor.encrypt(&plains)?.transfer(self.client, self.backend)
    }

    fn decrypt(&self, aggregate: &CiphertextBatch<B, S>) -> Result<Vec<u64>, SchemeError> {
        let received = aggregate.transfer(self.backend, self.client)?;
        let plains = Decryptor::new(self.client, &self.keys.secret)?.decrypt(&received)?;
        self.encoder.decode(&plains[0])
    }

    fn noise_budget(&self, a: &CiphertextBatch<B, S>) -> Result<Vec<u32>, SchemeError> {
        let received = a.transfer(self.backend, self.client)?;
        Decryptor::new(self.client, &self.keys.secret)?.noise_budget(&received)
    }
}
