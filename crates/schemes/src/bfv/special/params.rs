//! Parameters of BFV on special moduli: the ring degree, the plaintext modulus, the base Q of
//! special moduli and whether the special-moduli optimizations run (cases A, B and C of the
//! CE-RAM B/FV paper's Table 1).

use std::fmt;

use pimhe_math::special::{special_ntt_params, SpecialBase};

use crate::error::{Result, SchemeError};
use crate::security::max_log_q_128;

/// The parameter cases of the CE-RAM B/FV paper's Table 1 (section 4.1), all at N = 2^14.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SpecialCase {
    /// The balanced set {2^146 - 1, 2^146, 2^146 + 1} with generic (Barrett) reductions and
    /// FastBConv: the baseline the optimizations are measured against.
    A,
    /// The balanced set with the special reductions (section 3.3) and FastBConv (3.4).
    B,
    /// The unbalanced set {2^110 - 1, 2^110 + 1, 2^220 + 1} with the optimizations. Its q is
    /// 2^440 - 1, above the 438 bits the HomomorphicEncryption.org table allows at N = 2^14,
    /// so it needs [`SpecialBfvParameters::allow_insecure`].
    C,
}

impl SpecialCase {
    /// All three, in the paper's order.
    pub const ALL: [SpecialCase; 3] = [SpecialCase::A, SpecialCase::B, SpecialCase::C];

    /// "A", "B" or "C", as the paper's tables name the case.
    pub fn letter(self) -> &'static str {
        match self {
            SpecialCase::A => "A",
            SpecialCase::B => "B",
            SpecialCase::C => "C",
        }
    }

    /// The base Q of the case.
    pub fn base(self) -> Result<SpecialBase> {
        Ok(match self {
            SpecialCase::A | SpecialCase::B => SpecialBase::balanced(146)?,
            SpecialCase::C => SpecialBase::fermat_chain(110, 1)?,
        })
    }

    /// Whether the case runs the special-moduli optimizations.
    pub fn optimized(self) -> bool {
        !matches!(self, SpecialCase::A)
    }
}

impl fmt::Display for SpecialCase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "case {}", self.letter())
    }
}

/// How ring products modulo the moduli of Q are computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ProductMethod {
    /// The exact integer product through NTT-friendly auxiliary primes, reduced modulo q_i:
    /// works for every special modulus.
    #[default]
    ExactThroughPrimes,
    /// A negacyclic NTT directly modulo each q_i, as section 3.6 of the paper assumes: refused
    /// with the reason when a modulus has no 2N-th root of -1 (2^g never has one, since N is not
    /// invertible modulo it; 2^146 +- 1 has none for N = 2^14).
    NttModuloQ,
}

/// A validated parameter set of BFV on special moduli.
///
/// ```
/// use pimhe_schemes::bfv::special::{SpecialBfvParameters, SpecialCase};
/// let b = SpecialBfvParameters::case(SpecialCase::B).unwrap();
/// assert_eq!((b.degree(), b.log_q()), (16384, 438));
/// // Case C's q = 2^440 - 1 is above the 128-bit limit of 438 bits at N = 2^14.
/// assert!(SpecialBfvParameters::case(SpecialCase::C).is_err());
/// assert!(SpecialBfvParameters::new(16384, 65537, SpecialCase::C.base().unwrap(), true).unwrap().allow_insecure().validate().is_ok());
/// ```
#[derive(Debug, Clone)]
pub struct SpecialBfvParameters {
    degree: usize,
    plain_modulus: u32,
    base: SpecialBase,
    optimized: bool,
    products: ProductMethod,
    insecure_allowed: bool,
}

impl PartialEq for SpecialBfvParameters {
    fn eq(&self, other: &Self) -> bool {
        let moduli = |p: &Self| p.base.moduli().iter().map(|m| *m.value()).collect::<Vec<_>>();
        (self.degree, self.plain_modulus, self.optimized, self.products, self.insecure_allowed)
            == (other.degree, other.plain_modulus, other.optimized, other.products, other.insecure_allowed)
            && moduli(self) == moduli(other)
    }
}

impl fmt::Display for SpecialBfvParameters {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let moduli: Vec<String> = self.base.moduli().iter().map(|m| m.to_string()).collect();
        write!(
            f,
            "special BFV N={} t={} Q={{{}}} ({}, {})",
            self.degree,
            self.plain_modulus,
            moduli.join(", "),
            if self.optimized { "special reductions and FastBConv" } else { "generic reductions and FastBConv" },
            match self.products {
                ProductMethod::ExactThroughPrimes => "exact products",
                ProductMethod::NttModuloQ => "NTT modulo q_i",
            }
        )
    }
}

impl SpecialBfvParameters {
    /// The paper's plaintext modulus (a prime = 1 mod 2N, so batching works).
    pub const PAPER_PLAIN_MODULUS: u32 = 65537;
    /// The paper's ring degree.
    pub const PAPER_DEGREE: usize = 16384;

    /// One of the paper's cases at N = 2^14, t = 65537, validated (case C is insecure: an error
    /// naming the limit).
    pub fn case(case: SpecialCase) -> Result<Self> {
        let params = Self::new(Self::PAPER_DEGREE, Self::PAPER_PLAIN_MODULUS, case.base()?, case.optimized())?;
        params.validate()?;
        Ok(params)
    }

    /// Any degree (a power of two from 16), plaintext modulus (a prime = 1 mod 2N, coprime to
    /// q) and base; `optimized` picks the special reductions and FastBConv over the generic ones
    /// (the results are the same bits). Not yet checked for security: see [`Self::validate`].
    pub fn new(degree: usize, plain_modulus: u32, base: SpecialBase, optimized: bool) -> Result<Self> {
        if degree < 16 || !degree.is_power_of_two() {
            return Err(SchemeError::InvalidParameters(format!(
                "ring degree {degree} is not allowed: use a power of two from 16"
            )));
        }
        if plain_modulus < 2 || !(plain_modulus as u64 - 1).is_multiple_of(2 * degree as u64) {
            return Err(SchemeError::InvalidParameters(format!(
                "plaintext modulus {plain_modulus} is not allowed: use a prime t = 1 mod 2N = {} (batching)",
                2 * degree
            )));
        }
        for m in base.moduli() {
            let t = pimhe_math::special::Wide::from_u64(plain_modulus as u64);
            if m.value().gcd_vartime(&t) != pimhe_math::special::Wide::ONE {
                return Err(SchemeError::InvalidParameters(format!(
                    "plaintext modulus {plain_modulus} shares a factor with {m}: t must be coprime to q"
                )));
            }
        }
        Ok(Self { degree, plain_modulus, base, optimized, products: ProductMethod::default(), insecure_allowed: false })
    }

    /// The same parameters computing products modulo Q by `method`; [`ProductMethod::NttModuloQ`]
    /// is an error naming the modulus and the reason where no negacyclic NTT of size N exists.
    pub fn with_products(mut self, method: ProductMethod) -> Result<Self> {
        if method == ProductMethod::NttModuloQ {
            for m in self.base.moduli() {
                special_ntt_params(m, self.degree).map_err(|e| {
                    SchemeError::InvalidParameters(format!(
                        "no NTT modulo {m} at N = {}: {e}; use ProductMethod::ExactThroughPrimes",
                        self.degree
                    ))
                })?;
            }
        }
        self.products = method;
        Ok(self)
    }

    /// The same parameters without the 128-bit check (tests, or to study case C).
    pub fn allow_insecure(mut self) -> Self {
        self.insecure_allowed = true;
        self
    }

    /// Errors unless q fits the HomomorphicEncryption.org 128-bit table at this degree (or
    /// insecure parameters were allowed).
    pub fn validate(&self) -> Result<()> {
        if self.insecure_allowed {
            return Ok(());
        }
        let log_q = self.log_q();
        match max_log_q_128(self.degree) {
            Some(max) if log_q <= max => Ok(()),
            Some(max) => Err(SchemeError::Insecure { n: self.degree, log_q, max_log_q: max }),
            None => Err(SchemeError::InvalidParameters(format!(
                "no 128-bit security bound is tabulated for N = {}; use N from 1024 to 65536 or allow_insecure()",
                self.degree
            ))),
        }
    }

    /// Ring degree N.
    pub fn degree(&self) -> usize {
        self.degree
    }

    /// Plaintext modulus t.
    pub fn plain_modulus(&self) -> u32 {
        self.plain_modulus
    }

    /// The base Q.
    pub fn base(&self) -> &SpecialBase {
        &self.base
    }

    /// Whether the special reductions and FastBConv run.
    pub fn optimized(&self) -> bool {
        self.optimized
    }

    /// How products modulo Q are computed.
    pub fn products(&self) -> ProductMethod {
        self.products
    }

    /// Whether the 128-bit check is off.
    pub fn insecure_allowed(&self) -> bool {
        self.insecure_allowed
    }

    /// The bit length of q = prod q_i (438 for the balanced set at g = 146, 440 for case C).
    pub fn log_q(&self) -> u32 {
        let q = self
            .base
            .moduli()
            .iter()
            .fold(num_bigint::BigUint::from(1u32), |acc, m| acc * super::ring::to_big(m.value()));
        q.bits() as u32
    }
}
