//! What every RLWE scheme derives once from its parameters: the basis of each level, the basis
//! keys are made over, and the digits of key switching.

use std::sync::Arc;

use pimhe_ring::RingBasis;

use crate::error::{Result, SchemeError};
use crate::rlwe::keyswitch::KeySwitchBasis;
use crate::rlwe::params::RlweParameters;

/// The bases of one [`RlweParameters`]. Levels count down: a fresh ciphertext is at level
/// `max_level()` and holds every data prime; level `l` holds the first `l + 1`.
#[derive(Debug)]
pub struct RlweContext {
    params: RlweParameters,
    level_bases: Vec<Arc<RingBasis>>,
    key_switch: Option<KeySwitchBasis>,
    key_basis: Arc<RingBasis>,
}

impl RlweContext {
    /// Precomputes the bases of `params` (which the scheme has validated).
    pub(crate) fn new(params: RlweParameters) -> Result<Self> {
        let key_basis = RingBasis::new(params.degree(), &params.primes())?;
        let data_count = params.data_primes().len();
        let level_bases = (1..=data_count).map(|len| key_basis.prefix(len)).collect::<pimhe_ring::Result<Vec<_>>>()?;
        let key_switch = match params.special_primes() {
            [] => None,
            _ => Some(KeySwitchBasis::new(&key_basis, data_count, params.dnum())?),
        };
        Ok(Self { params, level_bases, key_switch, key_basis })
    }

    /// The parameters.
    pub fn params(&self) -> &RlweParameters {
        &self.params
    }

    /// Ring degree N.
    pub fn degree(&self) -> usize {
        self.params.degree()
    }

    /// Highest level.
    pub fn max_level(&self) -> usize {
        self.params.max_level()
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

    /// The basis of fresh ciphertexts and public keys: every data prime.
    pub fn top_basis(&self) -> &Arc<RingBasis> {
        &self.level_bases[self.max_level()]
    }

    /// The basis keys are made over: every data prime and the special primes.
    pub fn key_basis(&self) -> &Arc<RingBasis> {
        &self.key_basis
    }

    /// The primes and digits of key switching, when the parameters have special primes.
    pub(crate) fn key_switch_basis(&self) -> Option<&KeySwitchBasis> {
        self.key_switch.as_ref()
    }
}
