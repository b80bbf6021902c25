//! The parameters every RLWE scheme shares: ring degree, the chain of data primes, the special
//! primes and digit count of hybrid key switching, the secret's distribution, and the 128-bit
//! check. BGV and BFV add a plaintext modulus, CKKS a scale; each scheme's parameter type holds
//! an [`RlweParameters`] and adds only that.

use std::fmt;

use pimhe_math::{is_prime, ntt_primes};

use crate::error::{Result, SchemeError};
use crate::security::max_log_q_128;

/// How the secret key's coefficients are drawn. In a serde configuration (JSON):
/// `"ternary"` or `{"sparse_ternary": {"hamming_weight": 192}}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SecretDistribution {
    /// Uniform in {-1, 0, 1}: the distribution the HomomorphicEncryption.org bounds assume.
    #[default]
    Ternary,
    /// Exactly `hamming_weight` coefficients in {-1, 1}, the rest 0 (as CKKS bootstrapping uses,
    /// to keep the scaled-down modular reduction small). The standard's table does not cover
    /// sparse secrets, so such parameters are not called 128-bit and need
    /// [`RlweParameters::allow_insecure`].
    SparseTernary {
        /// Number of non-zero coefficients, 1..=N.
        hamming_weight: usize,
    },
}

impl fmt::Display for SecretDistribution {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Ternary => write!(f, "ternary"),
            Self::SparseTernary { hamming_weight } => write!(f, "sparse ternary h={hamming_weight}"),
        }
    }
}

/// The modulus chain and key-switching structure of an RLWE parameter set.
///
/// Key switching is hybrid: the L data primes form `dnum` digits of alpha = ceil(L / dnum)
/// consecutive primes and the special modulus P has (at least) alpha primes, so that P is about
/// as large as a digit. Every prime is NTT-friendly (p = 1 mod 2N) and below 2^30, pimhe's
/// residue size.
///
/// ```
/// use pimhe_schemes::rlwe::RlweParameters;
/// let p = RlweParameters::search(8192, &[30; 5], Some((30, 2)), 3, &[65537]).unwrap();
/// assert_eq!((p.data_primes().len(), p.special_primes().len(), p.dnum()), (5, 2, 3));
/// assert_eq!(p.total_bits(), 210);
/// assert!(p.validate(&[8192]).is_ok());
/// // Nine primes of 30 bits exceed the 218-bit bound at N = 8192.
/// let large = RlweParameters::search(8192, &[30; 7], Some((30, 2)), 7, &[]).unwrap();
/// assert!(large.validate(&[8192]).is_err());
/// assert!(large.allow_insecure().validate(&[8192]).is_ok());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RlweParameters {
    degree: usize,
    data_primes: Vec<u32>,
    special_primes: Vec<u32>,
    dnum: usize,
    secret: SecretDistribution,
    insecure_allowed: bool,
}

impl RlweParameters {
    /// Finds the primes deterministically: `specials = Some((bits, count))` special primes
    /// first (so they are the largest of their size), then one data prime per entry of
    /// `data_prime_bits`, each the largest prime of that size not yet taken and not in `avoid`
    /// (a plaintext modulus). `dnum` is recorded as given; [`RlweParameters::check_structure`]
    /// decides whether it fits.
    pub fn search(
        degree: usize,
        data_prime_bits: &[u32],
        specials: Option<(u32, usize)>,
        dnum: usize,
        avoid: &[u32],
    ) -> Result<Self> {
        let mut taken = avoid.to_vec();
        let special_primes = match specials {
            Some((bits, count)) => ntt_primes(bits, degree, count, &taken)?,
            None => Vec::new(),
        };
        taken.extend(&special_primes);
        let mut data_primes = Vec::with_capacity(data_prime_bits.len());
        for &bits in data_prime_bits {
            let p = ntt_primes(bits, degree, 1, &taken)?[0];
            taken.push(p);
            data_primes.push(p);
        }
        Ok(Self::from_primes(degree, data_primes, special_primes, dnum))
    }

    /// Explicit primes and `dnum`, unchecked until [`RlweParameters::check_structure`].
    pub fn from_primes(degree: usize, data_primes: Vec<u32>, special_primes: Vec<u32>, dnum: usize) -> Self {
        Self { degree, data_primes, special_primes, dnum, secret: SecretDistribution::Ternary, insecure_allowed: false }
    }

    /// The same parameters with secrets drawn from `secret`.
    pub fn with_secret(mut self, secret: SecretDistribution) -> Self {
        self.secret = secret;
        self
    }

    /// Accept parameters below 128-bit security (tests, experiments). Never the default.
    pub fn allow_insecure(mut self) -> Self {
        self.insecure_allowed = true;
        self
    }

    /// Ring degree N.
    pub fn degree(&self) -> usize {
        self.degree
    }

    /// The data primes q_0, ..., q_{L-1}; a fresh ciphertext uses all of them.
    pub fn data_primes(&self) -> &[u32] {
        &self.data_primes
    }

    /// The key-switching (special) primes, whose product is P; empty without key switching.
    pub fn special_primes(&self) -> &[u32] {
        &self.special_primes
    }

    /// Number of key-switching digits.
    pub fn dnum(&self) -> usize {
        self.dnum
    }

    /// The distribution of the secret key.
    pub fn secret(&self) -> SecretDistribution {
        self.secret
    }

    /// Every prime, data primes first, then special primes (the basis keys are made over).
    pub fn primes(&self) -> Vec<u32> {
        self.data_primes.iter().chain(&self.special_primes).copied().collect()
    }

    /// Highest level (number of data primes minus one).
    pub fn max_level(&self) -> usize {
        self.data_primes.len().saturating_sub(1)
    }

    /// Whether insecure parameters were explicitly allowed.
    pub fn insecure_allowed(&self) -> bool {
        self.insecure_allowed
    }

    /// Total modulus size in bits, counted as SEAL does: the sum of the bit lengths of all
    /// primes, the special primes included (they are part of the key-switching keys).
    pub fn total_bits(&self) -> u32 {
        self.data_primes.iter().chain(&self.special_primes).map(|&p| bit_length(p)).sum()
    }

    /// The security level: `Some(128)` when the secret is ternary and the modulus is within the
    /// standard's 128-bit bound at this degree.
    pub fn security_bits(&self) -> Option<u32> {
        if self.secret != SecretDistribution::Ternary {
            return None;
        }
        max_log_q_128(self.degree).filter(|&max| self.total_bits() <= max).map(|_| 128)
    }

    /// Checks the structure: at least one data prime, 1 <= dnum <= L, enough special primes for
    /// the digits, every prime NTT-friendly below 2^30 and distinct, and, given a plaintext
    /// modulus t, every prime distinct from and larger than t.
    pub fn check_structure(&self, plain_modulus: Option<u32>) -> Result<()> {
        let n = self.degree;
        let data = self.data_primes.len();
        check_dnum(self.dnum, data)?;
        let alpha = data.div_ceil(self.dnum);
        let special = self.special_primes.len();
        if special == 0 && self.dnum != data {
            return Err(SchemeError::InvalidParameters(format!(
                "dnum = {} needs special primes; without them there is no key switching and dnum must be L = {data}",
                self.dnum
            )));
        }
        if special > 0 && special < alpha {
            return Err(SchemeError::InvalidParameters(format!(
                "dnum = {} groups the {data} data primes into digits of {alpha}, so at least {alpha} special primes \
                 are needed; got {special} (add special primes or raise dnum)",
                self.dnum
            )));
        }
        if let SecretDistribution::SparseTernary { hamming_weight } = self.secret {
            if !(1..=n).contains(&hamming_weight) {
                return Err(SchemeError::InvalidParameters(format!(
                    "a sparse secret of Hamming weight {hamming_weight} is not possible at N = {n}; allowed 1..={n}"
                )));
            }
        }
        let primes = self.primes();
        for (i, &p) in primes.iter().enumerate() {
            if !is_prime(p as u64) || !(p as u64 - 1).is_multiple_of(2 * n as u64) || p >= 1 << 30 {
                return Err(SchemeError::InvalidParameters(format!(
                    "modulus {p} must be a prime below 2^30 with p = 1 mod 2N = {}",
                    2 * n
                )));
            }
            if primes[..i].contains(&p) || Some(p) == plain_modulus {
                return Err(SchemeError::InvalidParameters(format!(
                    "modulus {p} appears twice (the primes and t must be distinct)"
                )));
            }
            if let Some(t) = plain_modulus.filter(|&t| p <= t) {
                return Err(SchemeError::InvalidParameters(format!(
                    "modulus {p} is not larger than the plaintext modulus {t}"
                )));
            }
        }
        Ok(())
    }

    /// Checks that the degree is one of `degrees` (the scheme's), the structure, and the
    /// 128-bit bound (unless insecure parameters were allowed).
    pub fn validate(&self, degrees: &[usize]) -> Result<()> {
        check_degree(self.degree, degrees)?;
        self.check_structure(None)?;
        self.check_security()
    }

    /// The 128-bit bound alone: the total modulus within the standard's table, for a ternary
    /// secret, unless insecure parameters were allowed.
    pub fn check_security(&self) -> Result<()> {
        if self.insecure_allowed {
            return Ok(());
        }
        let max_log_q = max_log_q_128(self.degree).ok_or_else(|| {
            SchemeError::InvalidParameters(format!(
                "the 128-bit table has no bound for N = {}; use allow_insecure() to run it anyway",
                self.degree
            ))
        })?;
        if self.total_bits() > max_log_q {
            return Err(SchemeError::Insecure { n: self.degree, log_q: self.total_bits(), max_log_q });
        }
        if let SecretDistribution::SparseTernary { hamming_weight } = self.secret {
            return Err(SchemeError::InvalidParameters(format!(
                "a sparse secret (Hamming weight {hamming_weight}) is outside the HomomorphicEncryption.org tables, \
                 which assume a uniform ternary secret; its security must be estimated separately \
                 (use allow_insecure() to accept it)"
            )));
        }
        Ok(())
    }
}

/// The moduli part of a parameter set's one-line description: "data primes=... special=...
/// dnum=... log2(Q)=... security=...".
impl fmt::Display for RlweParameters {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let list = |primes: &[u32]| primes.iter().map(|&p| bit_length(p).to_string()).collect::<Vec<_>>().join(",");
        write!(f, "data primes={}x[{}] bits special=", self.data_primes.len(), list(&self.data_primes))?;
        if self.special_primes.is_empty() {
            write!(f, "none")?;
        } else {
            write!(f, "{}x[{}] bits", self.special_primes.len(), list(&self.special_primes))?;
        }
        write!(f, " dnum={} log2(Q)={}", self.dnum, self.total_bits())?;
        if self.secret != SecretDistribution::Ternary {
            write!(f, " secret={}", self.secret)?;
        }
        let security = self.security_bits().map_or("below 128-bit".to_string(), |b| format!("{b}-bit"));
        write!(f, " security={security}")
    }
}

/// Bit length of a prime.
pub(crate) fn bit_length(p: u32) -> u32 {
    32 - p.leading_zeros()
}

/// 1 <= dnum <= L, with at least one data prime.
pub(crate) fn check_dnum(dnum: usize, data: usize) -> Result<()> {
    if data == 0 {
        Err(SchemeError::InvalidParameters("at least one data prime is needed".into()))
    } else if (1..=data).contains(&dnum) {
        Ok(())
    } else {
        Err(SchemeError::InvalidParameters(format!(
            "dnum = {dnum} key-switching digits is not possible with {data} data primes; allowed 1..={data}"
        )))
    }
}

/// The degree is one of the scheme's `degrees`.
pub(crate) fn check_degree(degree: usize, degrees: &[usize]) -> Result<()> {
    if degrees.contains(&degree) {
        Ok(())
    } else {
        Err(degree_error(degree, degrees))
    }
}

/// The error for a ring degree the scheme does not support, with those it does.
pub(crate) fn degree_error(degree: usize, degrees: &[usize]) -> SchemeError {
    SchemeError::InvalidParameters(format!("ring degree {degree} is not supported; choose one of {degrees:?}"))
}
