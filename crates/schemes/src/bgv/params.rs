//! BGV parameter sets: ring degree, plaintext modulus, modulus chain, security check.

use std::fmt;

use pimhe_math::{is_prime, ntt_primes};

use crate::error::{Result, SchemeError};
use crate::security::max_log_q_128;

/// Ring degrees BGV supports.
pub const DEGREES: [usize; 6] = [1024, 2048, 4096, 8192, 16384, 32768];

/// A BGV parameter set. Build one with [`BgvParameters::preset`] or [`BgvParameters::new`];
/// [`BgvParameters::validate`] (run by [`crate::bgv::BgvContext::new`]) refuses sets that are
/// malformed or weaker than 128-bit unless [`BgvParameters::allow_insecure`] was called.
///
/// ```
/// use pimhe_schemes::bgv::BgvParameters;
/// let p = BgvParameters::preset(8192).unwrap();
/// assert_eq!(p.plain_modulus(), 65537);
/// assert!(p.total_bits() <= 218);
/// // 8 primes of 30 bits (240 bits) are too many for N = 8192 ...
/// assert!(BgvParameters::new(8192, 65537, &[30; 7], Some(30)).unwrap().validate().is_err());
/// // ... unless explicitly allowed.
/// let weak = BgvParameters::new(8192, 65537, &[30; 7], Some(30)).unwrap().allow_insecure();
/// assert!(weak.validate().is_ok());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BgvParameters {
    degree: usize,
    plain_modulus: u32,
    data_primes: Vec<u32>,
    special_prime: Option<u32>,
    insecure_allowed: bool,
}

impl BgvParameters {
    /// Parameters with primes found deterministically: one data prime per entry of
    /// `data_prime_bits` and, when `special_prime_bits` is given, a key-switching prime of that
    /// size (chosen first, so it is the largest prime of its size).
    pub fn new(
        degree: usize,
        plain_modulus: u32,
        data_prime_bits: &[u32],
        special_prime_bits: Option<u32>,
    ) -> Result<Self> {
        check_degree(degree)?;
        let mut taken = vec![plain_modulus];
        let special_prime = match special_prime_bits {
            Some(bits) => {
                let p = ntt_primes(bits, degree, 1, &taken)?[0];
                taken.push(p);
                Some(p)
            }
            None => None,
        };
        let mut data_primes = Vec::with_capacity(data_prime_bits.len());
        for &bits in data_prime_bits {
            let p = ntt_primes(bits, degree, 1, &taken)?[0];
            taken.push(p);
            data_primes.push(p);
        }
        Ok(Self { degree, plain_modulus, data_primes, special_prime, insecure_allowed: false })
    }

    /// Parameters with explicit primes.
    pub fn with_primes(
        degree: usize,
        plain_modulus: u32,
        data_primes: Vec<u32>,
        special_prime: Option<u32>,
    ) -> Result<Self> {
        check_degree(degree)?;
        let params = Self { degree, plain_modulus, data_primes, special_prime, insecure_allowed: false };
        params.check_structure()?;
        Ok(params)
    }

    /// The default 128-bit parameter set for ring degree `degree`.
    ///
    /// | N | t | data primes | special prime | log Q (max) |
    /// |---|---|---|---|---|
    /// | 1024 | 12289 | 1 x 27 bits | none | 27 (27) |
    /// | 2048 | 12289 | 2 x 27 bits | none | 54 (54) |
    /// | 4096 | 65537 | 3 x 27 bits | 27 bits | 108 (109) |
    /// | 8192 | 65537 | 6 x 30 bits | 30 bits | 210 (218) |
    /// | 16384 | 65537 | 13 x 30 bits | 30 bits | 420 (438) |
    /// | 32768 | 65537 | 28 x 30 bits | 30 bits | 870 (881) |
    ///
    /// The two smallest sets have no room for a key-switching prime: they support additions,
    /// plaintext operations and one multiplication without relinearization.
    pub fn preset(degree: usize) -> Result<Self> {
        let (t, data, special): (u32, &[u32], Option<u32>) = match degree {
            1024 => (12289, &[27], None),
            2048 => (12289, &[27; 2], None),
            4096 => (65537, &[27; 3], Some(27)),
            8192 => (65537, &[30; 6], Some(30)),
            16384 => (65537, &[30; 13], Some(30)),
            32768 => (65537, &[30; 28], Some(30)),
            _ => return Err(degree_error(degree)),
        };
        Self::new(degree, t, data, special)
    }

    /// All presets, smallest first.
    pub fn presets() -> Vec<Self> {
        DEGREES.iter().map(|&n| Self::preset(n).expect("presets are valid")).collect()
    }

    /// Accept parameters below 128-bit security (tests, experiments). Never the default.
    pub fn allow_insecure(mut self) -> Self {
        self.insecure_allowed = true;
        self
    }

    /// Ring degree N (also the number of slots).
    pub fn degree(&self) -> usize {
        self.degree
    }

    /// Plaintext modulus t.
    pub fn plain_modulus(&self) -> u32 {
        self.plain_modulus
    }

    /// The data primes q_0, ..., q_{L-1}; a fresh ciphertext uses all of them.
    pub fn data_primes(&self) -> &[u32] {
        &self.data_primes
    }

    /// The key-switching prime P, if any.
    pub fn special_prime(&self) -> Option<u32> {
        self.special_prime
    }

    /// Highest level (number of data primes minus one).
    pub fn max_level(&self) -> usize {
        self.data_primes.len() - 1
    }

    /// Whether insecure parameters were explicitly allowed.
    pub fn insecure_allowed(&self) -> bool {
        self.insecure_allowed
    }

    /// Total modulus size in bits, counted as SEAL does: the sum of the bit lengths of all
    /// primes, the special prime included (it is part of the key-switching keys).
    pub fn total_bits(&self) -> u32 {
        self.all_primes().map(|p| 32 - p.leading_zeros()).sum()
    }

    /// The security level these parameters reach: `Some(128)` when within the standard's table.
    pub fn security_bits(&self) -> Option<u32> {
        max_log_q_128(self.degree).filter(|&max| self.total_bits() <= max).map(|_| 128)
    }

    fn all_primes(&self) -> impl Iterator<Item = u32> + '_ {
        self.data_primes.iter().copied().chain(self.special_prime)
    }

    fn check_structure(&self) -> Result<()> {
        let n = self.degree;
        let t = self.plain_modulus;
        if self.data_primes.is_empty() {
            return Err(SchemeError::InvalidParameters("at least one data prime is needed".into()));
        }
        if t < 2 || !is_prime(t as u64) || (t as u64 - 1) % (2 * n as u64) != 0 || t >= 1 << 30 {
            return Err(SchemeError::InvalidParameters(format!(
                "plaintext modulus {t} must be a prime below 2^30 with t = 1 mod 2N = {} (batching)",
                2 * n
            )));
        }
        let primes: Vec<u32> = self.all_primes().collect();
        for (i, &p) in primes.iter().enumerate() {
            if !is_prime(p as u64) || (p as u64 - 1) % (2 * n as u64) != 0 || p >= 1 << 30 {
                return Err(SchemeError::InvalidParameters(format!(
                    "modulus {p} must be a prime below 2^30 with p = 1 mod 2N = {}",
                    2 * n
                )));
            }
            if primes[..i].contains(&p) || p == t {
                return Err(SchemeError::InvalidParameters(format!(
                    "modulus {p} appears twice (the primes and t must be distinct)"
                )));
            }
            if p <= t {
                return Err(SchemeError::InvalidParameters(format!(
                    "modulus {p} is not larger than the plaintext modulus {t}"
                )));
            }
        }
        Ok(())
    }

    /// Checks the structure (primes, t, N) and the 128-bit bound.
    pub fn validate(&self) -> Result<()> {
        check_degree(self.degree)?;
        self.check_structure()?;
        let max_log_q = max_log_q_128(self.degree).expect("degree checked");
        if !self.insecure_allowed && self.total_bits() > max_log_q {
            return Err(SchemeError::Insecure { n: self.degree, log_q: self.total_bits(), max_log_q });
        }
        Ok(())
    }
}

fn degree_error(degree: usize) -> SchemeError {
    SchemeError::InvalidParameters(format!("ring degree {degree} is not supported; choose one of {DEGREES:?}"))
}

fn check_degree(degree: usize) -> Result<()> {
    if DEGREES.contains(&degree) {
        Ok(())
    } else {
        Err(degree_error(degree))
    }
}

impl fmt::Display for BgvParameters {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let bits = |p: &u32| 32 - p.leading_zeros();
        write!(
            f,
            "N={} t={} data primes={}x[{}] bits special={} log2(Q)={} security={}",
            self.degree,
            self.plain_modulus,
            self.data_primes.len(),
            self.data_primes.iter().map(|p| bits(p).to_string()).collect::<Vec<_>>().join(","),
            self.special_prime.map_or("none".to_string(), |p| format!("{} bits", bits(&p))),
            self.total_bits(),
            self.security_bits().map_or("below 128-bit".to_string(), |b| format!("{b}-bit")),
        )
    }
}
