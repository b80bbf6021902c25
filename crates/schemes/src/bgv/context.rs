//! Everything derived once from a parameter set: bases per level, encoder tables.

use std::sync::Arc;

use pimhe_math::Modulus;
use pimhe_ring::RingBasis;

use crate::bgv::params::BgvParameters;
use crate::encoder::{PlainContext, PlainSpace};
use crate::error::{expect_same_parameters, Result, SchemeError};
use crate::keyswitch::KeySwitchBasis;

/// Precomputed data for one [`BgvParameters`]. Shared (`Arc`) by keys, ciphertexts and the
/// objects that make them; combining objects made under different parameters is an error
/// (two contexts of equal parameters are interchangeable).
///
/// Levels count down: a fresh ciphertext is at level `max_level()` and holds every data prime;
/// level `l` holds the first `l + 1`.
#[derive(Debug)]
pub struct BgvContext {
    params: BgvParameters,
    level_bases: Vec<Arc<RingBasis>>,
    key_switch: Option<KeySwitchBasis>,
    key_basis: Arc<RingBasis>,
    plain: Arc<PlainSpace>,
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
        let n = params.degree();
        let key_basis = RingBasis::new(n, &params.primes())?;
        let data_count = params.data_primes().len();
        let level_bases = (1..=data_count).map(|len| key_basis.prefix(len)).collect::<pimhe_ring::Result<Vec<_>>>()?;
        let key_switch = match params.special_primes() {
            [] => None,
            _ => Some(KeySwitchBasis::new(&key_basis, data_count, params.dnum())?),
        };
        let plain = PlainSpace::new(n, params.plain_modulus())?;
        Ok(Arc::new(Self { params, level_bases, key_switch, key_basis, plain }))
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
        self.level_bases.get(level).ok_or_else(|| {
            SchemeError::InvalidParameters(format!(
                "level {level} does not exist; the top level is {}",
                self.max_level()
            ))
        })
    }

    /// The primes and digits of key switching, when the parameters have special primes.
    pub(crate) fn key_switch_basis(&self) -> Option<&KeySwitchBasis> {
        self.key_switch.as_ref()
    }

    /// The basis keys are made over: every data prime and the special primes.
    pub fn key_basis(&self) -> &Arc<RingBasis> {
        &self.key_basis
    }

    /// The basis of fresh ciphertexts and public keys: every data prime.
    pub fn top_basis(&self) -> &Arc<RingBasis> {
        &self.level_bases[self.max_level()]
    }

    /// Errors unless `other` is this very context or one of equal parameters.
    pub(crate) fn expect_same(self: &Arc<Self>, other: &Arc<Self>, what: &str) -> Result<()> {
        expect_same_parameters(Arc::ptr_eq(self, other), &self.params, &other.params, what)
    }
}

impl PlainContext for BgvContext {
    fn plain_space(&self) -> &Arc<PlainSpace> {
        &self.plain
    }
}
