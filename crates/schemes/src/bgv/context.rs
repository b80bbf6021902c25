//! Everything derived once from a BGV parameter set: the shared RLWE bases, the plaintext
//! space, the decryption tables per level; and [`RlweScheme`] for BGV.

use std::sync::Arc;

use pimhe_exec::Backend;
use pimhe_math::{CrtToSmall, Modulus, RnsBase};
use pimhe_ring::RingBasis;

use crate::bgv::params::BgvParameters;
use crate::bgv::{decryptor, evaluator};
use crate::encoder::{ExactScheme, PlainContext, PlainSpace, Plaintext};
use crate::error::{Result, SchemeError};
use crate::rlwe::{
    bit_length, Aligned, CiphertextBatch, Decryptor, Evaluator, MessageTerms, PlainOperation, RlweContext, RlweScheme,
};

/// Precomputed data for one [`BgvParameters`]. Shared (`Arc`) by keys, ciphertexts and the
/// objects that make them; combining objects made under different parameters is an error
/// (two contexts of equal parameters are interchangeable).
///
/// Levels count down: a fresh ciphertext is at level `max_level()` and holds every data prime;
/// level `l` holds the first `l + 1`.
#[derive(Debug)]
pub struct BgvContext {
    params: BgvParameters,
    rlwe: RlweContext,
    plain: Arc<PlainSpace>,
    /// Per level: the CRT to t (decryption) and the exact RNS base (noise budget).
    decryption: Vec<(CrtToSmall, RnsBase)>,
}

impl BgvContext {
    /// Validates the parameters (including the 128-bit check) and precomputes tables.
    ///
    /// ```
    /// use pimhe_schemes::bgv::{BgvContext, BgvParameters};
    /// let ctx = BgvContext::new(BgvParameters::preset(4096).unwrap()).unwrap();
    /// assert_eq!(ctx.max_level(), 2);
    /// assert_eq!(ctx.slots(), 4096);
    /// ```
    pub fn new(params: BgvParameters) -> Result<Arc<Self>> {
        params.validate()?;
        let rlwe = RlweContext::new(params.rlwe().clone())?;
        let plain = PlainSpace::new(params.degree(), params.plain_modulus())?;
        let decryption = (0..=rlwe.max_level())
            .map(|level| {
                let moduli = rlwe.level_basis(level)?.moduli();
                Ok((CrtToSmall::new(&moduli, *plain.modulus())?, RnsBase::new(&moduli)?))
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Arc::new(Self { params, rlwe, plain, decryption }))
    }

    /// The parameters.
    pub fn params(&self) -> &BgvParameters {
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

    /// Highest level.
    pub fn max_level(&self) -> usize {
        self.params.max_level()
    }

    /// The plaintext modulus t.
    pub fn plain_modulus(&self) -> &Modulus {
        self.plain.modulus()
    }

    /// The basis of ciphertexts at `level`.
    pub fn level_basis(&self, level: usize) -> Result<&Arc<RingBasis>> {
        self.rlwe.level_basis(level)
    }

    /// The basis keys are made over: every data prime and the special primes.
    pub fn key_basis(&self) -> &Arc<RingBasis> {
        self.rlwe.key_basis()
    }

    /// The basis of fresh ciphertexts and public keys: every data prime.
    pub fn top_basis(&self) -> &Arc<RingBasis> {
        self.rlwe.top_basis()
    }

    /// The decryption tables of `level`: the CRT to t and the exact RNS base.
    pub(crate) fn decryption_tables(&self, level: usize) -> Result<&(CrtToSmall, RnsBase)> {
        self.decryption.get(level).ok_or_else(|| {
            SchemeError::InvalidParameters(format!(
                "level {level} does not exist; the top level is {}",
                self.max_level()
            ))
        })
    }
}

impl PlainContext for BgvContext {
    fn plain_space(&self) -> &Arc<PlainSpace> {
        &self.plain
    }
}

/// BGV on the RLWE core: errors scaled by t, key switching exact modulo t, the message m
/// centred in (-t/2, t/2] added as it is, and the correction factor q^{-1} mod t of modulus
/// switching as the batch's tag (it starts at 1).
impl RlweScheme for BgvContext {
    const NAME: &'static str = "bgv";
    type Params = BgvParameters;
    type Tag = u32;
    type Plaintext = Plaintext;

    fn from_params(params: BgvParameters) -> Result<Arc<Self>> {
        Self::new(params)
    }

    fn preset(n: usize) -> Result<Arc<Self>> {
        Self::new(BgvParameters::preset(n)?)
    }

    fn rlwe(&self) -> &RlweContext {
        &self.rlwe
    }

    fn params(&self) -> &BgvParameters {
        &self.params
    }

    fn error_scale(&self) -> u32 {
        self.params.plain_modulus()
    }

    fn key_switch_modulus(&self) -> Option<Modulus> {
        Some(*self.plain.modulus())
    }

    fn message_terms<B: Backend>(&self, _backend: &B, plains: &[Plaintext]) -> Result<(MessageTerms<B>, u32)> {
        let terms = plains
            .iter()
            .map(|plain| {
                plain.check(&self.plain)?;
                Ok(plain.centered(&self.plain))
            })
            .collect::<Result<Vec<_>>>()?;
        Ok((MessageTerms::Signed(terms), 1))
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
        decryptor::noise_budget(decryptor, batch)
    }

    fn multiply<B: Backend>(
        evaluator: &Evaluator<'_, B, Self>,
        a: &CiphertextBatch<B, Self>,
        b: &CiphertextBatch<B, Self>,
    ) -> Result<CiphertextBatch<B, Self>> {
        evaluator::multiply(evaluator, a, b)
    }

    fn align<'x, B: Backend>(
        evaluator: &Evaluator<'_, B, Self>,
        a: &'x CiphertextBatch<B, Self>,
        b: &'x CiphertextBatch<B, Self>,
    ) -> Result<Aligned<'x, B, Self>> {
        evaluator::align(evaluator, a, b)
    }

    fn plain_operand<B: Backend>(
        &self,
        backend: &B,
        a: &CiphertextBatch<B, Self>,
        plains: &[Plaintext],
        operation: PlainOperation,
    ) -> Result<(B::Buffer, u32)> {
        evaluator::plain_operand(self, backend, a, plains, operation)
    }
}

impl ExactScheme for BgvContext {
    /// The preset's prime sizes and dnum, the primes searched anew to avoid t (BGV needs every
    /// prime distinct from t and larger).
    fn preset_with_plain_modulus(n: usize, t: u32) -> Result<BgvParameters> {
        let preset = BgvParameters::preset(n)?;
        let data_bits: Vec<u32> = preset.data_primes().iter().map(|&p| bit_length(p)).collect();
        match preset.special_primes().first() {
            Some(&special) => BgvParameters::hybrid(n, t, &data_bits, bit_length(special), preset.dnum()),
            None => BgvParameters::new(n, t, &data_bits, None),
        }
    }

    /// One bit less than the smallest prime of the preset: BGV needs t below every prime of its
    /// modulus chain (modulus switching and the t-scaled errors assume it).
    fn max_plain_bits(n: usize) -> Result<u32> {
        let smallest = BgvParameters::preset(n)?.primes().into_iter().min();
        Ok(smallest.map_or(0, |p| bit_length(p) - 1))
    }
}

impl<B: Backend> CiphertextBatch<B, BgvContext> {
    /// The factor the decrypted message is scaled by modulo t (1 until a modulus switch).
    pub fn correction_factor(&self) -> u32 {
        self.tag
    }
}
