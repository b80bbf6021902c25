//! Everything derived once from a BFV parameter set: the shared RLWE bases, the BEHZ constants,
//! the plaintext space; and [`RlweScheme`] for BFV.

use std::sync::Arc;

use pimhe_exec::Backend;
use pimhe_math::{Modulus, RnsBase};
use pimhe_ring::RingBasis;

use crate::bfv::behz::Behz;
use crate::bfv::params::BfvParameters;
use crate::bfv::{decryptor, evaluator};
use crate::encoder::{ExactScheme, PlainContext, PlainSpace, Plaintext};
use crate::error::Result;
use crate::rlwe::{
    expect_same_level, Aligned, CiphertextBatch, Decryptor, Evaluator, MessageTerms, Parts, RlweContext, RlweScheme,
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

    /// Every prime a backend needs for BFV, so a PIM backend can be built with all of them
    /// resident: the key basis, then BEHZ's auxiliary primes (m~, m_sk, gamma, B) and t.
    pub fn all_primes(&self) -> Vec<u32> {
        let mut primes = self.key_basis().primes();
        primes.extend(self.behz.auxiliary_primes());
        primes.push(self.params.plain_modulus());
        primes
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

    fn rlwe(&self) -> &RlweContext {
        &self.rlwe
    }

    fn params(&self) -> &BfvParameters {
        &self.params
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
}

impl ExactScheme for BfvContext {
    fn noise_budget<B: Backend>(
        decryptor: &Decryptor<'_, B, Self>,
        batch: &CiphertextBatch<B, Self>,
    ) -> Result<Vec<u32>> {
        decryptor::noise_budget(decryptor, batch, &decryptor.context().rns)
    }
}
