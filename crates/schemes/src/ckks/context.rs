//! Everything derived once from a CKKS parameter set: the shared RLWE bases, the encoder's
//! tables, the CRT of each level; and [`RlweScheme`] for CKKS.

use std::sync::Arc;

use pimhe_exec::Backend;
use pimhe_math::CrtToFloat;
use pimhe_ring::RingBasis;

use crate::ckks::encoder::CkksEncoder;
use crate::ckks::evaluator;
use crate::ckks::params::CkksParameters;
use crate::ckks::plaintext::{upload_plaintexts, CkksPlaintext};
use crate::error::{Result, SchemeError};
use crate::rlwe::{
    Aligned, CiphertextBatch, Decryptor, Evaluator, MessageTerms, PlainOperation, RlweContext, RlweScheme,
};

/// What a CKKS ciphertext batch carries besides its level: the scale its slots are multiplied
/// by, and how many slots it packs (N/2, or fewer for sparse packing).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CkksTag {
    /// The scale Delta: the ciphertext decrypts to about Delta m.
    pub scale: f64,
    /// Number of slots (a power of two up to N/2).
    pub slots: usize,
}

/// Precomputed data for one [`CkksParameters`]. Shared (`Arc`) by keys, ciphertexts and the
/// objects that make them; combining objects made under different parameters is an error.
///
/// Levels are counted in primes, as for every RLWE scheme: a fresh ciphertext is at
/// `max_level()` (all data primes) and each rescaling lowers the level by
/// [`CkksParameters::primes_per_level`]; [`CkksContext::depth_left`] counts rescalings.
///
/// ```
/// use pimhe_schemes::ckks::{CkksContext, CkksParameters};
/// let ctx = CkksContext::new(CkksParameters::preset(8192).unwrap()).unwrap();
/// assert_eq!(ctx.max_slots(), 4096);
/// assert_eq!(ctx.depth_left(ctx.max_level()), ctx.params().depth());
/// ```
#[derive(Debug)]
pub struct CkksContext {
    params: CkksParameters,
    rlwe: RlweContext,
    encoder: CkksEncoder,
    /// Per level: the centred CRT to f64 of decryption.
    crt: Vec<CrtToFloat>,
}

impl CkksContext {
    /// Validates the parameters (the builder already checked them) and precomputes.
    pub fn new(params: CkksParameters) -> Result<Arc<Self>> {
        params.rlwe().check_structure(None)?;
        params.rlwe().check_security()?;
        let rlwe = RlweContext::new(params.rlwe().clone())?;
        let encoder = CkksEncoder::new(params.degree())?;
        let crt = (0..=rlwe.max_level())
            .map(|level| Ok(CrtToFloat::new(&rlwe.level_basis(level)?.moduli())?))
            .collect::<Result<Vec<_>>>()?;
        Ok(Arc::new(Self { params, rlwe, encoder, crt }))
    }

    /// The parameters.
    pub fn params(&self) -> &CkksParameters {
        &self.params
    }

    /// Ring degree N.
    pub fn degree(&self) -> usize {
        self.params.degree()
    }

    /// Slots of a full packing (N/2).
    pub fn max_slots(&self) -> usize {
        self.params.max_slots()
    }

    /// The level of fresh ciphertexts (number of data primes minus one).
    pub fn max_level(&self) -> usize {
        self.rlwe.max_level()
    }

    /// The lowest level: only the base primes left, no further rescaling.
    pub fn min_level(&self) -> usize {
        self.params.base_primes() - 1
    }

    /// How many more rescalings a ciphertext at `level` allows.
    pub fn depth_left(&self, level: usize) -> usize {
        level.saturating_sub(self.min_level()) / self.params.primes_per_level()
    }

    /// The basis of ciphertexts at `level`.
    pub fn level_basis(&self, level: usize) -> Result<&Arc<RingBasis>> {
        self.rlwe.level_basis(level)
    }

    /// The default scale 2^scale_bits.
    pub fn default_scale(&self) -> f64 {
        self.params.default_scale()
    }

    /// The Galois element that rotates the slots left by `steps` (negative: right): 5^steps
    /// modulo 2N (the encoder's slot order puts slot j at the root zeta^(5^j)).
    pub fn rotation_element(&self, steps: i64) -> usize {
        let two_n = 2 * self.degree() as u64;
        // 5 has order N/2 modulo 2N.
        let exponent = steps.rem_euclid(self.max_slots() as i64) as u64;
        let (mut result, mut base, mut e) = (1u64, 5u64, exponent);
        while e > 0 {
            if e & 1 == 1 {
                result = result * base % two_n;
            }
            base = base * base % two_n;
            e >>= 1;
        }
        result as usize
    }

    /// The Galois element of complex conjugation of every slot: 2N - 1 (X -> X^-1).
    pub fn conjugation_element(&self) -> usize {
        2 * self.degree() - 1
    }

    /// The Galois elements of rotations by each of `steps`, and of conjugation when asked: what
    /// [`crate::rlwe::KeyGenerator::galois_keys`] takes.
    pub fn galois_elements(&self, steps: &[i64], conjugation: bool) -> Vec<usize> {
        let mut elements: Vec<usize> = steps.iter().map(|&s| self.rotation_element(s)).collect();
        if conjugation {
            elements.push(self.conjugation_element());
        }
        elements
    }

    /// Refuses a ciphertext scale outside what its level can hold with precision: below
    /// [`CkksParameters::MIN_SCALE`], or at least Q_level / 2, where not even a message of
    /// magnitude 1 fits the centred range of the level's modulus. `what` names the result
    /// that would carry the scale (checked before any work), for the message.
    pub(crate) fn check_scale(&self, scale: f64, level: usize, what: &str) -> Result<()> {
        self.params.check_min_scale(scale, what)?;
        let log_q = self.level_basis(level)?.log_modulus();
        if scale.log2() >= log_q - 1.0 {
            return Err(SchemeError::InvalidParameters(format!(
                "{what} would have scale 2^{:.2} at level {level}, whose modulus Q is 2^{log_q:.2}: not even a \
                 value of magnitude 1 would fit (allowed scales are below Q/2 = 2^{:.2}); rescale the operands \
                 first, or multiply at a higher level",
                scale.log2(),
                log_q - 1.0
            )));
        }
        Ok(())
    }

    pub(crate) fn encoder(&self) -> &CkksEncoder {
        &self.encoder
    }

    pub(crate) fn crt(&self, level: usize) -> Result<&CrtToFloat> {
        self.crt.get(level).ok_or_else(|| {
            SchemeError::InvalidParameters(format!(
                "level {level} does not exist; the top level is {}",
                self.max_level()
            ))
        })
    }
}

/// CKKS on the RLWE core: errors not scaled, plain key switching, the message as its scaled
/// encoding, the scale and slot count as the batch's tag.
impl RlweScheme for CkksContext {
    const NAME: &'static str = "ckks";
    type Params = CkksParameters;
    type Tag = CkksTag;
    type Plaintext = CkksPlaintext;

    fn from_params(params: CkksParameters) -> Result<Arc<Self>> {
        Self::new(params)
    }

    fn preset(n: usize) -> Result<Arc<Self>> {
        Self::new(CkksParameters::preset(n)?)
    }

    fn rlwe(&self) -> &RlweContext {
        &self.rlwe
    }

    fn params(&self) -> &CkksParameters {
        &self.params
    }

    fn error_scale(&self) -> u32 {
        1
    }

    fn message_terms<B: Backend>(&self, backend: &B, plains: &[CkksPlaintext]) -> Result<(MessageTerms<B>, CkksTag)> {
        let first = plains.first().ok_or_else(|| SchemeError::InvalidParameters("no plaintext to encrypt".into()))?;
        let tag = first.tag();
        if let Some(index) = plains.iter().position(|p| p.tag() != tag) {
            return Err(SchemeError::InvalidParameters(format!(
                "plaintext {index} has scale 2^{:.2} and {} slots, plaintext 0 has 2^{:.2} and {}; a batch is encrypted \
                 at one scale and slot count",
                plains[index].scale().log2(),
                plains[index].slots(),
                tag.scale.log2(),
                tag.slots
            )));
        }
        self.check_scale(tag.scale, self.max_level(), "the encryption")?;
        let buffer = upload_plaintexts(backend, self, plains, self.rlwe.top_basis())?;
        Ok((MessageTerms::Device(buffer), tag))
    }

    fn decrypt<B: Backend>(
        decryptor: &Decryptor<'_, B, Self>,
        batch: &CiphertextBatch<B, Self>,
    ) -> Result<Vec<CkksPlaintext>> {
        crate::ckks::plaintext::decrypt(decryptor, batch)
    }

    /// Refused: a CKKS result carries its error in the message, so there is no budget to
    /// measure; its precision is measured against the expected values instead
    /// ([`crate::ckks::Encoder::precision`]).
    fn noise_budget<B: Backend>(
        _decryptor: &Decryptor<'_, B, Self>,
        _batch: &CiphertextBatch<B, Self>,
    ) -> Result<Vec<u32>> {
        Err(SchemeError::InvalidParameters(
            "CKKS is approximate and has no noise budget; measure precision instead".into(),
        ))
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
        plains: &[CkksPlaintext],
        operation: PlainOperation,
    ) -> Result<(B::Buffer, CkksTag)> {
        evaluator::plain_operand(self, backend, a, plains, operation)
    }
}
