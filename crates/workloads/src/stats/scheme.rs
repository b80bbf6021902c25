//! What the statistics need of an HE scheme, and its implementation for BGV and BFV.
//!
//! Each user encrypts one ciphertext per encoded vector (their own data only); the server adds
//! up the users' ciphertexts, or their slot-wise products, into one aggregate. Aggregates are
//! relinearized once, after the sum, not once per user, and only where the parameters have
//! special primes for a relinearization key (N >= 4096): below, a sum of products stays a
//! 3-component ciphertext, which decrypts all the same, and whether its noise budget suffices
//! is the plan's noise check to decide ([`super::StatsPlan::check_noise_budget`]).
//!
//! BGV and BFV have the same API (`KeyGenerator`, `Encryptor`, `Evaluator`, `Decryptor`,
//! `CiphertextBatch`, the shared encoder) over different types, so [`HeScheme`] names those types
//! and wraps each call once (the `he_scheme!` macro writes the bodies for both modules), and one
//! generic [`SchemeStats`] implements [`StatsScheme`] for every scheme. What really differs, the
//! parameters and the largest plaintext modulus, is written per scheme.

use std::sync::Arc;

use pimhe_exec::Backend;
use pimhe_math::Sampler;
use pimhe_schemes::bfv::{self, BfvContext, BfvParameters};
use pimhe_schemes::bgv::{self, BgvContext, BgvParameters};
use pimhe_schemes::encoder::{BatchEncoder, PlainContext, Plaintext};
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

    /// Server: the slot-wise sum of two aggregates (batches of one), e.g. of two rounds of users.
    fn add(&self, a: &Self::Ciphertexts, b: &Self::Ciphertexts) -> Result<Self::Ciphertexts, SchemeError>;

    /// Server: the slot-wise sum over users of `a[u] * b[u]`, relinearized where the scheme has
    /// a relinearization key (else a 3-component ciphertext).
    fn sum_of_products(&self, a: &Self::Ciphertexts, b: &Self::Ciphertexts) -> Result<Self::Ciphertexts, SchemeError>;

    /// Client: the slots of an aggregate (a batch of one), mod t.
    fn decrypt(&self, aggregate: &Self::Ciphertexts) -> Result<Vec<u64>, SchemeError>;

    /// Noise budget left, in bits, of each ciphertext of a batch.
    fn noise_budget(&self, a: &Self::Ciphertexts) -> Result<Vec<u32>, SchemeError>;
}

/// A scheme module of `pimhe_schemes` (its types, and its calls the statistics make), so that
/// [`SchemeStats`] is written once for all of them.
pub trait HeScheme {
    /// Name as the CLI spells it.
    const NAME: &'static str;
    /// Parameter set.
    type Parameters;
    /// Precomputations of one parameter set.
    type Context: PlainContext;
    /// Secret and public key, and the relinearization key where the parameters allow one.
    type Keys;
    /// A ciphertext batch on backend `B`.
    type Ciphertexts<B: Backend>;

    /// The 128-bit preset of ring degree `n` with plaintext modulus `t` instead of the preset's.
    fn parameters(n: usize, t: u32) -> Result<Self::Parameters, SchemeError>;

    /// The largest plaintext modulus size, in bits, the scheme allows with the preset of `n`.
    fn max_plain_bits(n: usize) -> Result<u32, SchemeError>;

    /// Every prime a backend must hold for this scheme's operations with the parameters of
    /// `ctx` (a PIM backend is built with them resident). Read from the context, so the one
    /// built for [`SchemeStats::with_context`] serves both.
    fn backend_primes(ctx: &Self::Context) -> Vec<u32>;

    /// Validates `params` and precomputes.
    fn context(params: Self::Parameters) -> Result<Arc<Self::Context>, SchemeError>;

    /// The plaintext modulus t.
    fn plain_modulus(ctx: &Self::Context) -> u32;

    /// Secret and public keys, and a relinearization key where the parameters have special
    /// primes (key switching needs them), made on `client`.
    fn keys<C: Backend>(client: &C, ctx: &Arc<Self::Context>, sampler: Sampler) -> Result<Self::Keys, SchemeError>;

    /// Public-key encryption on `client`.
    fn encrypt<C: Backend>(
        client: &C,
        keys: &Self::Keys,
        sampler: Sampler,
        plains: &[Plaintext],
    ) -> Result<Self::Ciphertexts<C>, SchemeError>;

    /// Moves a batch from one backend to another (the network between client and server).
    fn transfer<F: Backend, T: Backend>(
        a: &Self::Ciphertexts<F>,
        from: &F,
        to: &T,
    ) -> Result<Self::Ciphertexts<T>, SchemeError>;

    /// The sum of a batch, a batch of one.
    fn sum<B: Backend>(
        backend: &B,
        ctx: &Arc<Self::Context>,
        a: &Self::Ciphertexts<B>,
    ) -> Result<Self::Ciphertexts<B>, SchemeError>;

    /// The slot-wise sum `a + b`.
    fn add<B: Backend>(
        backend: &B,
        ctx: &Arc<Self::Context>,
        a: &Self::Ciphertexts<B>,
        b: &Self::Ciphertexts<B>,
    ) -> Result<Self::Ciphertexts<B>, SchemeError>;

    /// The sum of the slot-wise products `a[u] * b[u]`, relinearized when `keys` hold a
    /// relinearization key, else left with 3 components.
    fn sum_of_products<B: Backend>(
        backend: &B,
        ctx: &Arc<Self::Context>,
        keys: &Self::Keys,
        a: &Self::Ciphertexts<B>,
        b: &Self::Ciphertexts<B>,
    ) -> Result<Self::Ciphertexts<B>, SchemeError>;

    /// Decryption on `client`.
    fn decrypt<C: Backend>(
        client: &C,
        keys: &Self::Keys,
        a: &Self::Ciphertexts<C>,
    ) -> Result<Vec<Plaintext>, SchemeError>;

    /// Noise budget left of each ciphertext, in bits.
    fn noise_budget<C: Backend>(
        client: &C,
        keys: &Self::Keys,
        a: &Self::Ciphertexts<C>,
    ) -> Result<Vec<u32>, SchemeError>;
}

/// Full-RNS BGV ([`pimhe_schemes::bgv`]).
#[derive(Debug, Clone, Copy)]
pub struct Bgv;

/// Full-RNS BFV in the BEHZ form ([`pimhe_schemes::bfv`]).
#[derive(Debug, Clone, Copy)]
pub struct Bfv;

/// Implements [`HeScheme`] for a scheme module whose API has the names of `bgv` and `bfv`; the
/// items in braces are the scheme's own (parameters, plaintext bound, backend primes).
macro_rules! he_scheme {
    ($scheme:ty, $module:ident, $name:literal, $params:ty, $context:ty, { $($own:item)* }) => {
        impl HeScheme for $scheme {
            const NAME: &'static str = $name;
            type Parameters = $params;
            type Context = $context;
            type Keys = ($module::SecretKey, $module::PublicKey, Option<$module::RelinKey>);
            type Ciphertexts<B: Backend> = $module::CiphertextBatch<B>;

            $($own)*

            fn context(params: $params) -> Result<Arc<$context>, SchemeError> {
                <$context>::new(params)
            }

            fn plain_modulus(ctx: &$context) -> u32 {
                ctx.params().plain_modulus()
            }

            fn keys<C: Backend>(client: &C, ctx: &Arc<$context>, sampler: Sampler) -> Result<Self::Keys, SchemeError> {
                let mut keygen = $module::KeyGenerator::with_sampler(client, ctx, sampler);
                let secret = keygen.secret_key()?;
                let public = keygen.public_key(&secret)?;
                let relin = if ctx.params().special_primes().is_empty() {
                    None
                } else {
                    Some(keygen.relin_key(&secret)?)
                };
                Ok((secret, public, relin))
            }

            fn encrypt<C: Backend>(
                client: &C,
                keys: &Self::Keys,
                sampler: Sampler,
                plains: &[Plaintext],
            ) -> Result<$module::CiphertextBatch<C>, SchemeError> {
                $module::Encryptor::with_public_key(client, &keys.1)?.with_sampler(sampler).encrypt(plains)
            }

            fn transfer<F: Backend, T: Backend>(
                a: &$module::CiphertextBatch<F>,
                from: &F,
                to: &T,
            ) -> Result<$module::CiphertextBatch<T>, SchemeError> {
                a.transfer(from, to)
            }

            fn sum<B: Backend>(
                backend: &B,
                ctx: &Arc<$context>,
                a: &$module::CiphertextBatch<B>,
            ) -> Result<$module::CiphertextBatch<B>, SchemeError> {
                $module::Evaluator::new(backend, ctx).sum(a)
            }

            fn add<B: Backend>(
                backend: &B,
                ctx: &Arc<$context>,
                a: &$module::CiphertextBatch<B>,
                b: &$module::CiphertextBatch<B>,
            ) -> Result<$module::CiphertextBatch<B>, SchemeError> {
                $module::Evaluator::new(backend, ctx).add(a, b)
            }

            fn sum_of_products<B: Backend>(
                backend: &B,
                ctx: &Arc<$context>,
                keys: &Self::Keys,
                a: &$module::CiphertextBatch<B>,
                b: &$module::CiphertextBatch<B>,
            ) -> Result<$module::CiphertextBatch<B>, SchemeError> {
                let evaluator = $module::Evaluator::new(backend, ctx);
                match &keys.2 {
                    Some(key) => {
                        let evaluator = evaluator.with_relin_key(key)?;
                        evaluator.relinearize(&evaluator.sum(&evaluator.multiply(a, b)?)?)
                    }
                    None => evaluator.sum(&evaluator.multiply(a, b)?),
                }
            }

            fn decrypt<C: Backend>(
                client: &C,
                keys: &Self::Keys,
                a: &$module::CiphertextBatch<C>,
            ) -> Result<Vec<Plaintext>, SchemeError> {
                $module::Decryptor::new(client, &keys.0)?.decrypt(a)
            }

            fn noise_budget<C: Backend>(
                client: &C,
                keys: &Self::Keys,
                a: &$module::CiphertextBatch<C>,
            ) -> Result<Vec<u32>, SchemeError> {
                $module::Decryptor::new(client, &keys.0)?.noise_budget(a)
            }
        }
    };
}

he_scheme!(Bgv, bgv, "bgv", BgvParameters, BgvContext, {
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
});

he_scheme!(Bfv, bfv, "bfv", BfvParameters, BfvContext, {
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
        ctx.all_primes()
    }
});

fn bits(p: &u32) -> u32 {
    32 - p.leading_zeros()
}

/// A scheme with the client (keys, encryption, decryption) on one backend and the server's
/// aggregation on another, ciphertexts moving between them as they would over a network; keys
/// come from a seeded or OS-seeded sampler.
pub struct SchemeStats<'a, S: HeScheme, C: Backend, B: Backend> {
    client: &'a C,
    backend: &'a B,
    ctx: Arc<S::Context>,
    keys: S::Keys,
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
    pub fn new(client: &'a C, server: &'a B, params: S::Parameters, sampler: Sampler) -> Result<Self, SchemeError> {
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
        let keys = S::keys(client, &ctx, sampler.fork())?;
        let encoder = BatchEncoder::new(&ctx);
        Ok(Self { client, backend: server, ctx, keys, encoder, sampler })
    }

    /// The context (parameters and their precomputations).
    pub fn context(&self) -> &Arc<S::Context> {
        &self.ctx
    }
}

impl<S: HeScheme, C: Backend, B: Backend> StatsScheme for SchemeStats<'_, S, C, B> {
    type Ciphertexts = S::Ciphertexts<B>;

    fn name(&self) -> &'static str {
        S::NAME
    }

    fn slots(&self) -> usize {
        self.ctx.plain_space().degree()
    }

    fn plain_modulus(&self) -> u32 {
        S::plain_modulus(&self.ctx)
    }

    fn encrypt(&mut self, rows: &[Vec<u64>]) -> Result<S::Ciphertexts<B>, SchemeError> {
        let plains = rows.iter().map(|row| self.encoder.encode(row)).collect::<Result<Vec<_>, _>>()?;
        let encrypted = S::encrypt(self.client, &self.keys, self.sampler.fork(), &plains)?;
        S::transfer(&encrypted, self.client, self.backend)
    }

    fn sum(&self, a: &S::Ciphertexts<B>) -> Result<S::Ciphertexts<B>, SchemeError> {
        S::sum(self.backend, &self.ctx, a)
    }

    fn add(&self, a: &S::Ciphertexts<B>, b: &S::Ciphertexts<B>) -> Result<S::Ciphertexts<B>, SchemeError> {
        S::add(self.backend, &self.ctx, a, b)
    }

    fn sum_of_products(&self, a: &S::Ciphertexts<B>, b: &S::Ciphertexts<B>) -> Result<S::Ciphertexts<B>, SchemeError> {
        S::sum_of_products(self.backend, &self.ctx, &self.keys, a, b)
    }

    fn decrypt(&self, aggregate: &S::Ciphertexts<B>) -> Result<Vec<u64>, SchemeError> {
        let received = S::transfer(aggregate, self.backend, self.client)?;
        let plains = S::decrypt(self.client, &self.keys, &received)?;
        self.encoder.decode(&plains[0])
    }

    fn noise_budget(&self, a: &S::Ciphertexts<B>) -> Result<Vec<u32>, SchemeError> {
        S::noise_budget(self.client, &self.keys, &S::transfer(a, self.backend, self.client)?)
    }
}
