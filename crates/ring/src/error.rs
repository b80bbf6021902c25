//! Errors of the ring layer.

use thiserror::Error;

use crate::Representation;

/// What can go wrong when building or transforming polynomial batches.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum RingError {
    /// An error from the math layer (bad modulus, degree, missing root of unity...).
    #[error(transparent)]
    Math(#[from] pimhe_math::MathError),
    /// The operation needs the other representation.
    #[error("{operation} needs polynomials in {expected} representation, got {found}")]
    WrongRepresentation { operation: &'static str, expected: Representation, found: Representation },
    /// Raw data of the wrong size for the declared shape.
    #[error("data has {got} residues, but {count} polynomials x {limbs} primes x N={n} needs {expected}")]
    WrongDataLength { count: usize, limbs: usize, n: usize, expected: usize, got: usize },
    /// A residue that is not reduced modulo its prime.
    /// A coefficient larger in magnitude than the bound its producer promised (the value is
    /// not reported: it may be secret).
    #[error("a coefficient's magnitude exceeds the bound {bound} it was promised to keep")]
    AboveBound { bound: u64 },

    #[error("residue {value} at limb {limb}, index {index} is not reduced modulo {modulus}")]
    UnreducedResidue { limb: usize, index: usize, value: u32, modulus: u32 },
    /// Two bases that should agree do not.
    #[error("basis mismatch: {0}")]
    BasisMismatch(String),
    /// An index outside the batch.
    #[error("{what} index {index} is out of range (size {size})")]
    OutOfRange { what: &'static str, index: usize, size: usize },
    /// Buffers sized from the input would not fit in memory ([`crate::memory`]).
    #[error(transparent)]
    OutOfMemory(#[from] crate::memory::OutOfMemory),
    /// An automorphism exponent that is not a unit modulo 2N.
    #[error("automorphism X -> X^{k} is not defined for N={n}: k must be odd (a unit modulo 2N)")]
    InvalidGaloisElement { k: usize, n: usize },
}

/// Shorthand for results of this crate.
pub type Result<T> = std::result::Result<T, RingError>;
