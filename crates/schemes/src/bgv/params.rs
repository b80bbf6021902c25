//! BGV parameter sets: a plaintext modulus over the shared RLWE modulus chain
//! ([`RlweParameters`]), and the 128-bit presets.

use std::fmt;

use pimhe_math::is_prime;

use crate::error::{Result, SchemeError};
use crate::rlwe::{check_degree, check_dnum, degree_error, RlweParameters};
use crate::security::max_log_q_128;

/// Ring degrees BGV supports.
pub const DEGREES: [usize; 6] = [1024, 2048, 4096, 8192, 16384, 32768];

/// A BGV parameter set. Build one with [`BgvParameters::preset`], [`BgvParameters::new`] or
/// [`BgvParameters::hybrid`]; [`BgvParameters::validate`] (run by
/// [`crate::bgv::BgvContext::new`]) refuses sets that are malformed or weaker than 128-bit
/// unless [`BgvParameters::allow_insecure`] was called.
///
/// Key switching is hybrid: the L data primes form `dnum` digits of alpha = ceil(L / dnum)
/// primes and the special modulus P has (at least) alpha primes. Fewer digits make key
/// switching cheaper: with k special primes it takes L + sum_j (L + k - alpha_j) + 2 (k + L) =
/// (dnum + 2)(L + k) limb NTTs (the inverse NTT of c; per digit j of alpha_j primes, ModUp
/// transforms only the limbs the digit lacks; k inverse and L forward per ModDown of the two
/// sums), against (L + 2)(L + 1) for dnum = L (see docs/DESIGN.md, "Hybrid key switching").
/// But P takes bits from the 128-bit budget that the data primes (levels) would otherwise get;
/// dnum = L with one special prime keeps the longest chain.
///
/// ```
/// use pimhe_schemes::bgv::BgvParameters;
/// let p = BgvParameters::preset(8192).unwrap();
/// assert_eq!(p.plain_modulus(), 65537);
/// assert!(p.total_bits() <= 218);
/// // The longest chain at N = 8192: 6 data primes, one digit each, one special prime.
/// let longest = BgvParameters::preset_with_dnum(8192, 6).unwrap();
/// assert_eq!((longest.data_primes().len(), longest.special_primes().len()), (6, 1));
/// // Two digits of 2 primes need 2 special primes: 4 data primes fit the bound.
/// let two = BgvParameters::preset_with_dnum(8192, 2).unwrap();
/// assert_eq!((two.data_primes().len(), two.special_primes().len()), (4, 2));
/// // 8 primes of 30 bits (240 bits) are too many for N = 8192 ...
/// assert!(BgvParameters::new(8192, 65537, &[30; 7], Some(30)).unwrap().validate().is_err());
/// // ... unless explicitly allowed.
/// let weak = BgvParameters::new(8192, 65537, &[30; 7], Some(30)).unwrap().allow_insecure();
/// assert!(weak.validate().is_ok());
/// ```
///
/// With serde (a JSON configuration), the fields are `degree`, `data_primes`,
/// `special_primes`, `dnum`, `secret` and `allow_insecure` (both optional) and `plain_modulus`;
/// a deserialized set is validated as [`BgvParameters::validate`] does.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(into = "crate::serial::IntegerFields", try_from = "crate::serial::IntegerFields")]
pub struct BgvParameters {
    rlwe: RlweParameters,
    plain_modulus: u32,
}

impl BgvParameters {
    /// Parameters with primes found deterministically: one data prime per entry of
    /// `data_prime_bits` and, when `special_prime_bits` is given, one key-switching prime of
    /// that size (chosen first, so it is the largest prime of its size) with one digit per data
    /// prime (dnum = L, the longest chain for the bits). See [`BgvParameters::hybrid`] for fewer
    /// digits.
    pub fn new(
        degree: usize,
        plain_modulus: u32,
        data_prime_bits: &[u32],
        special_prime_bits: Option<u32>,
    ) -> Result<Self> {
        let specials = special_prime_bits.map(|bits| (bits, 1));
        Self::search(degree, plain_modulus, data_prime_bits, specials, data_prime_bits.len())
    }

    /// Parameters for hybrid key switching with `dnum` digits: the data primes of
    /// `data_prime_bits` and alpha = ceil(L / dnum) special primes of `special_prime_bits`
    /// (chosen first, the largest of their size). Needs 1 <= dnum <= L.
    ///
    /// ```
    /// use pimhe_schemes::bgv::BgvParameters;
    /// let p = BgvParameters::hybrid(16384, 65537, &[30; 10], 30, 3).unwrap();
    /// assert_eq!((p.dnum(), p.special_primes().len()), (3, 4));
    /// assert!(BgvParameters::hybrid(16384, 65537, &[30; 10], 30, 11).is_err()); // dnum > L
    /// ```
    pub fn hybrid(
        degree: usize,
        plain_modulus: u32,
        data_prime_bits: &[u32],
        special_prime_bits: u32,
        dnum: usize,
    ) -> Result<Self> {
        check_dnum(dnum, data_prime_bits.len())?;
        let alpha = data_prime_bits.len().div_ceil(dnum);
        Self::search(degree, plain_modulus, data_prime_bits, Some((special_prime_bits, alpha)), dnum)
    }

    fn search(
        degree: usize,
        plain_modulus: u32,
        data_prime_bits: &[u32],
        specials: Option<(u32, usize)>,
        dnum: usize,
    ) -> Result<Self> {
        check_degree(degree, &DEGREES)?;
        let rlwe = RlweParameters::search(degree, data_prime_bits, specials, dnum, &[plain_modulus])?;
        Ok(Self { rlwe, plain_modulus })
    }

    /// Parameters with explicit primes and `dnum` digits (1 <= dnum <= L, and at least
    /// ceil(L / dnum) special primes when there are any; without special primes there is no
    /// key switching and dnum must be L).
    pub fn with_primes(
        degree: usize,
        plain_modulus: u32,
        data_primes: Vec<u32>,
        special_primes: Vec<u32>,
        dnum: usize,
    ) -> Result<Self> {
        check_degree(degree, &DEGREES)?;
        let params =
            Self { rlwe: RlweParameters::from_primes(degree, data_primes, special_primes, dnum), plain_modulus };
        params.check_structure()?;
        Ok(params)
    }

    /// The default 128-bit parameter set for ring degree `degree`: the longest chain of data
    /// primes that fits the 128-bit bound beside the special primes of its `dnum`.
    ///
    /// | N | t | data primes | dnum | special primes | log Q (max) |
    /// |---|---|---|---|---|---|
    /// | 1024 | 12289 | 1 x 27 bits | - | none | 27 (27) |
    /// | 2048 | 12289 | 2 x 27 bits | - | none | 54 (54) |
    /// | 4096 | 65537 | 3 x 27 bits | 3 | 1 x 27 bits | 108 (109) |
    /// | 8192 | 65537 | 5 x 30 bits | 3 | 2 x 30 bits | 210 (218) |
    /// | 16384 | 65537 | 11 x 30 bits | 4 | 3 x 30 bits | 420 (438) |
    /// | 32768 | 65537 | 24 x 30 bits | 6 | 4 x 30 bits | 840 (881) |
    ///
    /// The two smallest sets have no room for a key-switching prime: they support additions,
    /// plaintext operations and one multiplication without relinearization. The dnum of the
    /// larger sets trades levels for relinearization speed (measured in docs/DESIGN.md,
    /// "Hybrid key switching"); [`BgvParameters::preset_with_dnum`] picks another trade-off.
    pub fn preset(degree: usize) -> Result<Self> {
        match degree {
            1024 => Self::new(degree, 12289, &[27], None),
            2048 => Self::new(degree, 12289, &[27; 2], None),
            _ => match PRESET_DNUM.iter().find(|&&(n, _)| n == degree) {
                Some(&(_, dnum)) => Self::preset_with_dnum(degree, dnum),
                None => Err(degree_error(degree, &DEGREES)),
            },
        }
    }

    /// The 128-bit set of ring degree `degree` (4096 and up) with `dnum` digits: the most data
    /// primes L such that L + ceil(L / dnum) primes (27 bits at N = 4096, 30 above) fit the
    /// bound, and ceil(L / dnum) special primes. `dnum` must be at most that L: dnum = L is one
    /// digit per prime and one special prime, the longest chain.
    pub fn preset_with_dnum(degree: usize, dnum: usize) -> Result<Self> {
        check_degree(degree, &DEGREES)?;
        let (t, bits) = match degree {
            1024 | 2048 => {
                return Err(SchemeError::InvalidParameters(format!(
                    "N = {degree} has no room for special primes under the 128-bit bound, so dnum does not apply; \
                     use N >= 4096 for key switching"
                )))
            }
            4096 => (65537, 27),
            _ => (65537, 30),
        };
        let primes = max_log_q_128(degree).expect("degree checked") / bits;
        let data = (1..primes as usize)
            .filter(|&l| l + l.div_ceil(dnum.max(1)) <= primes as usize)
            .max()
            .expect("at least one data prime and one special prime fit");
        check_dnum(dnum, data)?;
        Self::hybrid(degree, t, &vec![bits; data], bits, dnum)
    }

    /// A set from its RLWE part and t (a loaded encoding's fields), validated as
    /// [`BgvParameters::validate`] does.
    pub(crate) fn from_rlwe(rlwe: RlweParameters, plain_modulus: u32) -> Result<Self> {
        let params = Self { rlwe, plain_modulus };
        params.validate()?;
        Ok(params)
    }

    /// All presets, smallest first.
    pub fn presets() -> Vec<Self> {
        DEGREES.iter().map(|&n| Self::preset(n).expect("presets are valid")).collect()
    }

    /// Accept parameters below 128-bit security (tests, experiments). Never the default.
    pub fn allow_insecure(mut self) -> Self {
        self.rlwe = self.rlwe.allow_insecure();
        self
    }

    /// The modulus chain and key-switching structure.
    pub fn rlwe(&self) -> &RlweParameters {
        &self.rlwe
    }

    /// Ring degree N (also the number of slots).
    pub fn degree(&self) -> usize {
        self.rlwe.degree()
    }

    /// Plaintext modulus t.
    pub fn plain_modulus(&self) -> u32 {
        self.plain_modulus
    }

    /// The data primes q_0, ..., q_{L-1}; a fresh ciphertext uses all of them.
    pub fn data_primes(&self) -> &[u32] {
        self.rlwe.data_primes()
    }

    /// The key-switching (special) primes, whose product is P; empty without key switching.
    pub fn special_primes(&self) -> &[u32] {
        self.rlwe.special_primes()
    }

    /// Number of key-switching digits: the data primes are grouped into dnum digits of
    /// ceil(L / dnum) consecutive primes.
    pub fn dnum(&self) -> usize {
        self.rlwe.dnum()
    }

    /// Every prime, data primes first, then special primes (the basis keys are made over).
    pub fn primes(&self) -> Vec<u32> {
        self.rlwe.primes()
    }

    /// Highest level (number of data primes minus one).
    pub fn max_level(&self) -> usize {
        self.rlwe.max_level()
    }

    /// Whether insecure parameters were explicitly allowed.
    pub fn insecure_allowed(&self) -> bool {
        self.rlwe.insecure_allowed()
    }

    /// Total modulus size in bits, counted as SEAL does: the sum of the bit lengths of all
    /// primes, the special primes included (they are part of the key-switching keys).
    pub fn total_bits(&self) -> u32 {
        self.rlwe.total_bits()
    }

    /// The security level these parameters reach: `Some(128)` when within the standard's table.
    pub fn security_bits(&self) -> Option<u32> {
        self.rlwe.security_bits()
    }

    fn check_structure(&self) -> Result<()> {
        let n = self.degree();
        let t = self.plain_modulus;
        if self.data_primes().is_empty() {
            return Err(SchemeError::InvalidParameters("at least one data prime is needed".into()));
        }
        if t < 2 || !is_prime(t as u64) || !(t as u64 - 1).is_multiple_of(2 * n as u64) || t >= 1 << 30 {
            return Err(SchemeError::InvalidParameters(format!(
                "plaintext modulus {t} must be a prime below 2^30 with t = 1 mod 2N = {} (batching)",
                2 * n
            )));
        }
        self.rlwe.check_structure(Some(t))
    }

    /// Checks the structure (primes, t, N) and the 128-bit bound.
    pub fn validate(&self) -> Result<()> {
        check_degree(self.degree(), &DEGREES)?;
        self.check_structure()?;
        self.rlwe.check_security()
    }
}

/// dnum of the presets with key switching, chosen by measuring relinearization time against
/// the levels kept (docs/DESIGN.md, "Hybrid key switching"): the fastest choice that gives up
/// at most about 15% of the longest chain's levels (6 -> 5, 13 -> 11, 28 -> 24; N = 4096 keeps
/// all 3, one digit fewer would cost a third of them).
const PRESET_DNUM: [(usize, usize); 4] = [(4096, 3), (8192, 3), (16384, 4), (32768, 6)];

impl fmt::Display for BgvParameters {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "N={} t={} {}", self.degree(), self.plain_modulus, self.rlwe)
    }
}
