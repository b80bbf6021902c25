//! BFV parameter sets: the same ring degrees, plaintext moduli, primes, presets and 128-bit
//! checks as BGV (one implementation, [`BgvParameters`]), read as BFV's single ciphertext
//! modulus q and the special primes of (hybrid) key switching.

use std::fmt;

use crate::bgv::BgvParameters;
use crate::error::Result;

/// A BFV parameter set: ring degree N, plaintext modulus t (a prime = 1 mod 2N, for batching),
/// the ciphertext primes whose product is q, and the special primes (product P) and digit count
/// dnum of key switching (relinearization), exactly as [`BgvParameters`] has them. BFV has no
/// modulus chain: every ciphertext uses all of q.
///
/// [`BfvParameters::validate`] (run by [`crate::bfv::BfvContext::new`]) refuses malformed sets
/// and sets weaker than 128-bit unless [`BfvParameters::allow_insecure`] was called.
///
/// ```
/// use pimhe_schemes::bfv::BfvParameters;
/// let p = BfvParameters::preset(8192).unwrap();
/// assert_eq!(p.plain_modulus(), 65537);
/// assert_eq!(p.security_bits(), Some(128));
/// assert!(BfvParameters::new(8192, 65537, &[30; 7], Some(30)).unwrap().validate().is_err());
/// assert!(BfvParameters::new(8192, 65537, &[30; 7], Some(30)).unwrap().allow_insecure().validate().is_ok());
/// ```
///
/// With serde (a JSON configuration) the fields are [`BgvParameters`]'s.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(transparent)]
pub struct BfvParameters(BgvParameters);

impl BfvParameters {
    /// Parameters with primes found deterministically: one ciphertext prime per entry of
    /// `prime_bits` and, when `special_prime_bits` is given, one special prime of that size
    /// (one digit per ciphertext prime); see [`BgvParameters::new`].
    pub fn new(degree: usize, plain_modulus: u32, prime_bits: &[u32], special_prime_bits: Option<u32>) -> Result<Self> {
        BgvParameters::new(degree, plain_modulus, prime_bits, special_prime_bits).map(Self)
    }

    /// Parameters for hybrid key switching with `dnum` digits; see [`BgvParameters::hybrid`].
    pub fn hybrid(
        degree: usize,
        plain_modulus: u32,
        prime_bits: &[u32],
        special_prime_bits: u32,
        dnum: usize,
    ) -> Result<Self> {
        BgvParameters::hybrid(degree, plain_modulus, prime_bits, special_prime_bits, dnum).map(Self)
    }

    /// Parameters with explicit primes and `dnum` digits; see [`BgvParameters::with_primes`].
    pub fn with_primes(
        degree: usize,
        plain_modulus: u32,
        primes: Vec<u32>,
        special_primes: Vec<u32>,
        dnum: usize,
    ) -> Result<Self> {
        BgvParameters::with_primes(degree, plain_modulus, primes, special_primes, dnum).map(Self)
    }

    /// The default 128-bit set for ring degree `degree`: the table of [`BgvParameters::preset`]
    /// (N = 1024 and 2048 have no special prime, so no relinearization).
    pub fn preset(degree: usize) -> Result<Self> {
        BgvParameters::preset(degree).map(Self)
    }

    /// The 128-bit set with `dnum` digits; see [`BgvParameters::preset_with_dnum`] (dnum = L
    /// gives the largest q, so the most multiplications).
    pub fn preset_with_dnum(degree: usize, dnum: usize) -> Result<Self> {
        BgvParameters::preset_with_dnum(degree, dnum).map(Self)
    }

    /// All presets, smallest first.
    pub fn presets() -> Vec<Self> {
        BgvParameters::presets().into_iter().map(Self).collect()
    }

    /// Accept parameters below 128-bit security (tests, experiments). Never the default.
    pub fn allow_insecure(self) -> Self {
        Self(self.0.allow_insecure())
    }

    /// The modulus chain and key-switching structure.
    pub fn rlwe(&self) -> &crate::rlwe::RlweParameters {
        self.0.rlwe()
    }

    /// Ring degree N (also the number of slots).
    pub fn degree(&self) -> usize {
        self.0.degree()
    }

    /// Plaintext modulus t.
    pub fn plain_modulus(&self) -> u32 {
        self.0.plain_modulus()
    }

    /// The ciphertext primes q_0, ..., q_{L-1} (their product is q).
    pub fn ciphertext_primes(&self) -> &[u32] {
        self.0.data_primes()
    }

    /// The special primes of key switching (product P); empty without relinearization.
    pub fn special_primes(&self) -> &[u32] {
        self.0.special_primes()
    }

    /// The number of key-switching digits.
    pub fn dnum(&self) -> usize {
        self.0.dnum()
    }

    /// Whether insecure parameters were explicitly allowed.
    pub fn insecure_allowed(&self) -> bool {
        self.0.insecure_allowed()
    }

    /// Total modulus size in bits (every prime, P included), as the security table counts it.
    pub fn total_bits(&self) -> u32 {
        self.0.total_bits()
    }

    /// `Some(128)` when the modulus is within the 128-bit bound of the standard.
    pub fn security_bits(&self) -> Option<u32> {
        self.0.security_bits()
    }

    /// Checks the structure (primes, t, N) and the 128-bit bound.
    pub fn validate(&self) -> Result<()> {
        self.0.validate()
    }
}

/// A BGV set read as BFV: the same degree, t, primes (BGV's data primes are BFV's ciphertext
/// primes), special primes and dnum, and the same insecure flag. BFV's presets are BGV's table,
/// so this is how a BGV set is compared with, or reused as, BFV.
///
/// ```
/// use pimhe_schemes::bfv::BfvParameters;
/// use pimhe_schemes::bgv::BgvParameters;
/// let bgv = BgvParameters::preset(8192).unwrap();
/// let bfv = BfvParameters::from(bgv.clone());
/// assert_eq!(bfv.ciphertext_primes(), bgv.data_primes());
/// assert_eq!(bfv, BfvParameters::preset(8192).unwrap());
/// ```
impl From<BgvParameters> for BfvParameters {
    fn from(params: BgvParameters) -> Self {
        Self(params)
    }
}

impl fmt::Display for BfvParameters {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "BFV {}", self.0)
    }
}
