//! Everything derived once from a BFV parameter set: the shared RLWE bases, the BEHZ constants,
//! the plaintext space; and [`RlweScheme`] for BFV.

use std::sync::Arc;

use pimhe_exec::Backend;
use pimhe_math::{Modulus, RnsBase};
use pimhe_ring::RingBasis;

use crate::bfv::behz::Behz;
use crate::bfv::params::BfvParameters;
use crate::bfv::{decryptor, evaluator};
use crate::bgv::BgvContext;
use crate::encoder::{ExactScheme, PlainContext, PlainSpace, Plaintext};
use crate::error::Result;
use crate::rlwe::{
    expect_same_level, Aligned, CiphertextBatch, Decryptor, Evaluator, MessageTerms, Parts, PlainOperation,
    RlweContext, RlweScheme,
};

/// Precomputed data for one [`BfvParameters`]. Shared (`Arc`) by keys, ciphertexts and the
/// objects that make them; combining objects made under different parameters is an error
/// (two contexts of equal parameters are interchangeable).
///
/// ```
/// use pimhe_schemes::bfv::{BfvContext, BfvParameters};
/// let ctx = BfvContext::new(BfvParameters::preset(4096).unwrap()).unwrap();
/// assert_eq!(ctx.slots(), 4096);
/// assert_eq!(ctx.ciphertext_basis().len(), 3);
/// ```
#[derive(Debug)]
pub struct BfvContext {
    params: BfvParameters,
    rlwe: RlweContext,
    plain: Arc<PlainSpace>,
    behz: Behz,
    /// The exact RNS base of q (noise budget).
    rns: RnsBase,
}

impl BfvContext {
    /// Validates the parameters (including the 128-bit check), picks the BEHZ auxiliary primes
    /// and precomputes tables.
    pub fn new(params: BfvParameters) -> Result<Arc<Self>> {
        params.validate()?;
        let rlwe = RlweContext::new(params.rlwe().clone())?;
        let t = params.plain_modulus();
        let mut taken = rlwe.key_basis().primes();
        taken.push(t);
        let behz = Behz::new(rlwe.top_basis(), t, &taken)?;
        let plain = PlainSpace::new(params.degree(), t)?;
        let rns = RnsBase::new(&rlwe.top_basis().moduli())?;
        Ok(Arc::new(Self { params, rlwe, plain, behz, rns }))
    }

    /// The parameters.
    pub fn params(&self) -> &BfvParameters {
        &self.params
    }

    /// Ring degree N.
    pub fn degree(&self) -> usize {
        self.params.degree()
    }

    /// Number of plaintext slots (N).
    pub fn slots(&self) -> usize {
        self.params.degree()
    }

    /// The plaintext modulus t.
    pub fn plain_modulus(&self) -> &Modulus {
        self.plain.modulus()
    }

    /// The basis of ciphertexts and public keys: the ciphertext primes (product q).
    pub fn ciphertext_basis(&self) -> &Arc<RingBasis> {
        self.rlwe.top_basis()
    }

    /// The basis keys are made over: the ciphertext primes and the special primes.
    pub fn key_basis(&self) -> &Arc<RingBasis> {
        self.rlwe.key_basis()
    }

    pub(crate) fn behz(&self) -> &Behz {
        &self.behz
    }
}

impl PlainContext for BfvContext {
    fn plain_space(&self) -> &Arc<PlainSpace> {
        &self.plain
    }
}

/// BFV on the RLWE core: errors not scaled, plain key switching, the message as round(q m / t)
/// in the top bits, BEHZ's product and decryption. Without a modulus chain every ciphertext is
/// at the top level, and there is no tag.
impl RlweScheme for BfvContext {
    const NAME: &'static str = "bfv";
    type Params = BfvParameters;
    type Tag = ();
    type Plaintext = Plaintext;

    fn from_params(params: BfvParameters) -> Result<Arc<Self>> {
        Self::new(params)
    }

    fn preset(n: usize) -> Result<Arc<Self>> {
        Self::new(BfvParameters::preset(n)?)
    }

    fn rlwe(&self) -> &RlweContext {
        &self.rlwe
    }

    fn params(&self) -> &BfvParameters {
        &self.params
    }

    /// The key basis (q and P), then BEHZ's auxiliary primes (m~, m_sk, gamma, B) and t: BEHZ's
    /// base conversions run on the backend too.
    fn backend_primes(&self) -> Vec<u32> {
        let mut primes = self.key_basis().primes();
        primes.extend(self.behz.auxiliary_primes());
        primes.push(self.params.plain_modulus());
        primes
    }

    fn error_scale(&self) -> u32 {
        1
    }

    fn message_terms<B: Backend>(&self, backend: &B, plains: &[Plaintext]) -> Result<(MessageTerms<B>, ())> {
        Ok((MessageTerms::Device(evaluator::upload_scaled(backend, self, plains)?), ()))
    }

    fn decrypt<B: Backend>(
        decryptor: &Decryptor<'_, B, Self>,
        batch: &CiphertextBatch<B, Self>,
    ) -> Result<Vec<Plaintext>> {
        decryptor::decrypt(decryptor, batch)
    }

    fn noise_budget<B: Backend>(
        decryptor: &Decryptor<'_, B, Self>,
        batch: &CiphertextBatch<B, Self>,
    ) -> Result<Vec<u32>> {
        decryptor::noise_budget(decryptor, batch, &decryptor.context().rns)
    }

    fn multiply<B: Backend>(
        evaluator: &Evaluator<'_, B, Self>,
        a: &CiphertextBatch<B, Self>,
        b: &CiphertextBatch<B, Self>,
    ) -> Result<CiphertextBatch<B, Self>> {
        evaluator::multiply(evaluator, a, b)
    }

    fn align<'x, B: Backend>(
        _evaluator: &Evaluator<'_, B, Self>,
        a: &'x CiphertextBatch<B, Self>,
        b: &'x CiphertextBatch<B, Self>,
    ) -> Result<Aligned<'x, B, Self>> {
        expect_same_level(a, b)?;
        Ok(Aligned { a: Parts::Borrowed(&a.parts), b: Parts::Borrowed(&b.parts), level: a.level, tag: () })
    }

    fn plain_operand<B: Backend>(
        &self,
        backend: &B,
        _a: &CiphertextBatch<B, Self>,
        plains: &[Plaintext],
        operation: PlainOperation,
    ) -> Result<(B::Buffer, ())> {
        evaluator::plain_operand(self, backend, plains, operation)
    }
}

impl ExactScheme for BfvContext {
    /// BGV's ([`BfvParameters::preset`] is BGV's table), read as BFV's.
    fn preset_with_plain_modulus(n: usize, t: u32) -> Result<BfvParameters> {
        BgvContext::preset_with_plain_modulus(n, t).map(BfvParameters::from)
    }

    /// BFV's message sits in the top bits of q, so its mathematics would allow any t < 2^30
    /// whose products fit the noise budget; but its parameter check is BGV's
    /// ([`BfvParameters::validate`]), which asks for t below every prime, so that is the bound.
    fn max_plain_bits(n: usize) -> Result<u32> {
        BgvContext::max_plain_bits(n)
    }
}
