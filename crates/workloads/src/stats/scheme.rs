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
//! [`Aggregator`] (public material only). What really differs, the parameters and the largest
//! plaintext modulus, is written per scheme ([`HeScheme`]).

use std::sync::Arc;

use pimhe_exec::Backend;
use pimhe_math::Sampler;
use pimhe_schemes::bfv::{BfvContext, BfvParameters};
use pimhe_schemes::bgv::{BgvContext, BgvParameters};
use pimhe_schemes::encoder::{BatchEncoder, ExactScheme, PlainContext};
use pimhe_schemes::rlwe::{
    CiphertextBatch, Decryptor, Encryptor, Evaluator, KeyGenerator, PublicKey, RelinKey, RlweScheme, SecretKey,
};
use pimhe_schemes::serial::SerialScheme;
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

/// What the statistics need to know of a scheme beyond the shared RLWE API ([`ExactScheme`]):
/// its parameters for a plaintext modulus, the plaintext bound, and the primes a backend must
/// hold. Everything else ([`SchemeStats`]) is written once, generic over the scheme's context.
pub trait HeScheme {
    /// Name as the CLI spells it.
    const NAME: &'static str;
    /// The scheme's context (its parameters' precomputations), on which keys, encryption,
    /// evaluation and decryption are generic.
    type Context: ExactScheme + SerialScheme;

    /// The 128-bit preset of ring degree `n` with plaintext modulus `t` instead of the preset's.
    fn parameters(n: usize, t: u32) -> Result<Params<Self>, SchemeError>;

    /// The largest plaintext modulus size, in bits, the scheme allows with the preset of `n`.
    fn max_plain_bits(n: usize) -> Result<u32, SchemeError>;

    /// Every prime a backend must hold for this scheme's operations with the parameters of
    /// `ctx` (a PIM backend is built with them resident). Read from the context, so the one
    /// built for [`SchemeStats::with_context`] serves both.
    fn backend_primes(ctx: &Self::Context) -> Vec<u32>;

    /// Validates `params` and precomputes.
    fn context(params: Params<Self>) -> Result<Arc<Self::Context>, SchemeError>;
}

/// The parameter set of a scheme.
pub type Params<S> = <<S as HeScheme>::Context as RlweScheme>::Params;

/// A batch of ciphertexts of scheme `S` on backend `B`.
pub type Ciphertexts<S, B> = CiphertextBatch<B, <S as HeScheme>::Context>;

/// Full-RNS BGV ([`pimhe_schemes::bgv`]).
#[derive(Debug, Clone, Copy)]
pub struct Bgv;

/// Full-RNS BFV in the BEHZ form ([`pimhe_schemes::bfv`]).
#[derive(Debug, Clone, Copy)]
pub struct Bfv;

impl HeScheme for Bgv {
    const NAME: &'static str = "bgv";
    type Context = BgvContext;

    fn parameters(n: usize, t: u32) -> Result<BgvParameters, SchemeError> {
        let preset = BgvParameters::preset(n)?;
        let data_bits: Vec<u32> = preset.data_primes().iter().map(bits).collect();
        match preset.special_primes().first() {
            Some(special) => BgvParameters::hybrid(n, t, &data_bits, bits(special), preset.dnum()),
            None => BgvParameters::new(n, t, &data_bits, None),
        }
    }

    /// BGV needs t below every prime of its modulus chain (modulus switching and the
    /// t-scaled errors assume it).
    fn max_plain_bits(n: usize) -> Result<u32, SchemeError> {
        let preset = BgvParameters::preset(n)?;
        let smallest = preset.primes().into_iter().min().unwrap_or(0);
        Ok(bits(&smallest) - 1)
    }

    fn backend_primes(ctx: &BgvContext) -> Vec<u32> {
        ctx.params().primes()
    }

    fn context(params: BgvParameters) -> Result<Arc<BgvContext>, SchemeError> {
        BgvContext::new(params)
    }
}

impl HeScheme for Bfv {
    const NAME: &'static str = "bfv";
    type Context = BfvContext;

    /// BFV's presets are BGV's table ([`BfvParameters::preset`]), so the same primes.
    fn parameters(n: usize, t: u32) -> Result<BfvParameters, SchemeError> {
        Bgv::parameters(n, t).map(BfvParameters::from)
    }

    /// BFV's message sits in the top bits of q, so its mathematics would allow any t < 2^30
    /// whose products fit the noise budget; but its parameter check is BGV's
    /// ([`BfvParameters::validate`]), which asks for t below every prime, so that is the bound.
    fn max_plain_bits(n: usize) -> Result<u32, SchemeError> {
        Bgv::max_plain_bits(n)
    }

    /// BEHZ's auxiliary primes and t besides q and P: base conversion runs on the backend.
    fn backend_primes(ctx: &BfvContext) -> Vec<u32> {
        ctx.backend_primes()
    }

    fn context(params: BfvParameters) -> Result<Arc<BfvContext>, SchemeError> {
        BfvContext::new(params)
    }
}

fn bits(p: &u32) -> u32 {
    32 - p.leading_zeros()
}

/// Secret and public keys, and a relinearization key where the parameters have special primes.
struct Keys<C: ExactScheme> {
    secret: SecretKey<C>,
    public: PublicKey<C>,
    relin: Option<RelinKey<C>>,
}

/// A scheme with the client (keys, encryption, decryption) on one backend and the server's
/// aggregation on another, ciphertexts moving between them as they would over a network; keys
/// come from a seeded or OS-seeded sampler.
pub struct SchemeStats<'a, S: HeScheme, C: Backend, B: Backend> {
    client: &'a C,
    backend: &'a B,
    ctx: Arc<S::Context>,
    keys: Keys<S::Context>,
    encoder: BatchEncoder,
    sampler: Sampler,
}

/// The statistics with BGV.
pub type BgvStats<'a, C, B> = SchemeStats<'a, Bgv, C, B>;

/// The statistics with BFV.
pub type BfvStats<'a, C, B> = SchemeStats<'a, Bfv, C, B>;

impl<'a, S: HeScheme, C: Backend, B: Backend> SchemeStats<'a, S, C, B> {
    /// Keys for `params` (a relinearization key too where they have special primes), made on
    /// the client; `server` aggregates.
    pub fn new(client: &'a C, server: &'a B, params: Params<S>, sampler: Sampler) -> Result<Self, SchemeError> {
        Self::with_context(client, server, S::context(params)?, sampler)
    }

    /// [`SchemeStats::new`] on a context already built (e.g. the one whose
    /// [`HeScheme::backend_primes`] the server was made with).
    pub fn with_context(
        client: &'a C,
        server: &'a B,
        ctx: Arc<S::Context>,
        mut sampler: Sampler,
    ) -> Result<Self, SchemeError> {
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
    pub fn context(&self) -> &Arc<S::Context> {
        &self.ctx
    }

    /// The keys: the secret key, the public key and the relinearization key (where the
    /// parameters have special primes), e.g. to hand the public ones to a server.
    pub fn into_keys(self) -> (SecretKey<S::Context>, PublicKey<S::Context>, Option<RelinKey<S::Context>>) {
        (self.keys.secret, self.keys.public, self.keys.relin)
    }
}

/// The server of scheme `S` on backend `B`: the context and, where the parameters have special
/// primes, the relinearization key; nothing secret.
pub struct StatsServer<'a, S: HeScheme, B: Backend> {
    backend: &'a B,
    ctx: &'a Arc<S::Context>,
    relin: Option<&'a RelinKey<S::Context>>,
}

impl<'a, S: HeScheme, B: Backend> StatsServer<'a, S, B> {
    /// A server on `backend` for `ctx`; `relin` must belong to `ctx`, and is needed where the
    /// parameters have special primes (else products stay 3-component ciphertexts).
    pub fn new(backend: &'a B, ctx: &'a Arc<S::Context>, relin: Option<&'a RelinKey<S::Context>>) -> Self {
        Self { backend, ctx, relin }
    }
}

impl<S: HeScheme, B: Backend> Aggregator for StatsServer<'_, S, B> {
    type Ciphertexts = Ciphertexts<S, B>;

    fn sum(&self, a: &Ciphertexts<S, B>) -> Result<Ciphertexts<S, B>, SchemeError> {
        Evaluator::new(self.backend, self.ctx).sum(a)
    }

    fn add(&self, a: &Ciphertexts<S, B>, b: &Ciphertexts<S, B>) -> Result<Ciphertexts<S, B>, SchemeError> {
        Evaluator::new(self.backend, self.ctx).add(a, b)
    }

    fn sum_of_products(&self, a: &Ciphertexts<S, B>, b: &Ciphertexts<S, B>) -> Result<Ciphertexts<S, B>, SchemeError> {
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

impl<S: HeScheme, C: Backend, B: Backend> SchemeStats<'_, S, C, B> {
    /// The server's view: the context and the public relinearization key.
    fn server(&self) -> StatsServer<'_, S, B> {
        StatsServer::new(self.backend, &self.ctx, self.keys.relin.as_ref())
    }
}

impl<S: HeScheme, C: Backend, B: Backend> Aggregator for SchemeStats<'_, S, C, B> {
    type Ciphertexts = Ciphertexts<S, B>;

    fn sum(&self, a: &Ciphertexts<S, B>) -> Result<Ciphertexts<S, B>, SchemeError> {
        self.server().sum(a)
    }

    fn add(&self, a: &Ciphertexts<S, B>, b: &Ciphertexts<S, B>) -> Result<Ciphertexts<S, B>, SchemeError> {
        self.server().add(a, b)
    }

    fn sum_of_products(&self, a: &Ciphertexts<S, B>, b: &Ciphertexts<S, B>) -> Result<Ciphertexts<S, B>, SchemeError> {
        self.server().sum_of_products(a, b)
    }
}

impl<S: HeScheme, C: Backend, B: Backend> StatsScheme for SchemeStats<'_, S, C, B> {
    fn name(&self) -> &'static str {
        S::NAME
    }

    fn slots(&self) -> usize {
        self.ctx.plain_space().degree()
    }

    fn plain_modulus(&self) -> u32 {
        self.ctx.plain_space().modulus().value()
    }

    fn encrypt(&mut self, rows: &[Vec<u64>]) -> Result<Ciphertexts<S, B>, SchemeError> {
        let plains = rows.iter().map(|row| self.encoder.encode(row)).collect::<Result<Vec<_>, _>>()?;
        let mut encryptor =
            Encryptor::with_public_key(self.client, &self.keys.public)?.with_sampler(self.sampler.fork());
        encryptor.encrypt(&plains)?.transfer(self.client, self.backend)
    }

    fn decrypt(&self, aggregate: &Ciphertexts<S, B>) -> Result<Vec<u64>, SchemeError> {
        let received = aggregate.transfer(self.backend, self.client)?;
        let plains = Decryptor::new(self.client, &self.keys.secret)?.decrypt(&received)?;
        self.encoder.decode(&plains[0])
    }

    fn noise_budget(&self, a: &Ciphertexts<S, B>) -> Result<Vec<u32>, SchemeError> {
        let received = a.transfer(self.backend, self.client)?;
        Decryptor::new(self.client, &self.keys.secret)?.noise_budget(&received)
    }
}
