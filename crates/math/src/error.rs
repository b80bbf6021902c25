//! Errors of the math layer.

use thiserror::Error;

/// What can go wrong when building moduli, tables and bases.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum MathError {
    /// A modulus outside the range the 32-bit lazy-reduction arithmetic supports.
    #[error("modulus {0} is not allowed: residues need 2 <= q < 2^30 so that lazy values up to 4q fit in 32 bits")]
    ModulusOutOfRange(u64),
    /// The ring degree is not a supported power of two.
    #[error("ring degree {0} is not allowed: N must be a power of two in 2^1..=2^20")]
    InvalidDegree(usize),
    /// An NTT was requested over a prime that has no 2N-th root of unity.
    #[error("modulus {q} cannot run a negacyclic NTT of size {n}: it must be a prime with q = 1 mod 2N ({})", 2 * n)]
    NotNttFriendly { q: u32, n: usize },
    /// The prime search ran out of candidates.
    #[error("only {found} usable primes of {bits} bits with p = 1 mod {step} exist (after exclusions), {requested} were requested")]
    NotEnoughPrimes { bits: u32, step: u64, requested: usize, found: usize },
    /// Asked for a prime size outside what the arithmetic supports.
    #[error("prime size of {0} bits is not allowed: choose 2..=30 bits")]
    InvalidPrimeBits(u32),
    /// An element without an inverse.
    #[error("{value} has no inverse modulo {modulus}")]
    NotInvertible { value: u64, modulus: u64 },
    /// RNS moduli that share a factor, or an empty base.
    #[error("invalid RNS base: {0}")]
    InvalidBase(String),
    /// Slice lengths that do not match what the operation needs.
    #[error("length mismatch: expected {expected}, got {got} ({what})")]
    LengthMismatch { what: &'static str, expected: usize, got: usize },
    /// A special modulus, wide modulus or moduli set that `special` does not support.
    #[error("invalid special-moduli parameter: {0}")]
    InvalidSpecial(String),
    /// No negacyclic NTT of size N exists (or none could be certified) modulo a wide modulus.
    #[error("modulus {modulus} cannot run a negacyclic NTT of size N = {n}: {reason}")]
    NotNttFriendlyWide { modulus: String, n: usize, reason: String },
    /// The operating system refused to provide entropy.
    #[error("could not seed the CSPRNG from the operating system: {0}")]
    Entropy(String),
}

/// Shorthand for results of this crate.
pub type Result<T> = std::result::Result<T, MathError>;
