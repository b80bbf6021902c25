//! Everything derived once from a BFV parameter set: bases, BEHZ constants, encoder tables.

use std::sync::Arc;

use pimhe_math::Modulus;
use pimhe_ring::RingBasis;

use crate::bfv::behz::Behz;
use crate::bfv::params::BfvParameters;
use crate::encoder::{PlainContext, PlainSpace};
use crate::error::{expect_same_parameters, Result};
use crate::keyswitch::KeySwitchBasis;

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
    ciphertext_basis: Arc<RingBasis>,
    key_basis: Arc<RingBasis>,
    key_switch: Option<KeySwitchBasis>,
    plain: Arc<PlainSpace>,
    behz: Behz,
}

impl BfvContext {
    /// Validates the parameters (including the 128-bit check), picks the BEHZ auxiliary primes
    /// and precomputes tables.
    pub fn new(params: BfvParameters) -> Result<Arc<Self>> {
        params.validate()?;
        let n = params.degree();
        let t = params.plain_modulus();
        let mut key_primes = params.ciphertext_primes().to_vec();
        key_primes.extend(params.special_primes());
        let key_basis = RingBasis::new(n, &key_primes)?;
        let count = params.ciphertext_primes().len();
        let ciphertext_basis = key_basis.prefix(count)?;
        let key_switch = match params.special_primes() {
            [] => None,
            _ => Some(KeySwitchBasis::new(&key_basis, count, params.dnum())?),
        };
        let mut taken = key_primes;
        taken.push(t);
        let behz = Behz::new(&ciphertext_basis, t, &taken)?;
        let plain = PlainSpace::new(n, t)?;
        Ok(Arc::new(Self { params, ciphertext_basis, key_basis, key_switch, plain, behz }))
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
        &self.ciphertext_basis
    }

    /// The basis keys are made over: the ciphertext primes and the special primes.
    pub fn key_basis(&self) -> &Arc<RingBasis> {
        &self.key_basis
    }

    /// Every prime a backend needs for BFV, so a PIM backend can be built with all of them
    /// resident: the key basis, then BEHZ's auxiliary primes (m~, m_sk, gamma, B) and t.
    pub fn all_primes(&self) -> Vec<u32> {
        let mut primes = self.key_basis.primes();
        primes.extend(self.behz.auxiliary_primes());
        primes.push(self.params.plain_modulus());
        primes
    }

    pub(crate) fn behz(&self) -> &Behz {
        &self.behz
    }

    pub(crate) fn key_switch_basis(&self) -> Option<&KeySwitchBasis> {
        self.key_switch.as_ref()
    }

    /// Errors unless `other` is this very context (or one of equal parameters).
    pub(crate) fn expect_same(self: &Arc<Self>, other: &Arc<Self>, what: &str) -> Result<()> {
        expect_same_parameters(Arc::ptr_eq(self, other), &self.params, &other.params, what)
    }
}

impl PlainContext for BfvContext {
    fn plain_space(&self) -> &Arc<PlainSpace> {
        &self.plain
    }
}
