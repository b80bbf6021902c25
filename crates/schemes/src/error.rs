//! Errors of the scheme layer.

use thiserror::Error;

/// What can go wrong in key generation, encoding, encryption, evaluation or decryption.
/// A failing call leaves its inputs untouched.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SchemeError {
    /// From the execution layer (shapes, representations).
    #[error(transparent)]
    Exec(#[from] pimhe_exec::ExecError),
    /// From the ring layer.
    #[error(transparent)]
    Ring(#[from] pimhe_ring::RingError),
    /// From the math layer.
    #[error(transparent)]
    Math(#[from] pimhe_math::MathError),
    /// Parameters that cannot work (the message says what is allowed).
    #[error("invalid parameters: {0}")]
    InvalidParameters(String),
    /// The modulus is too large for 128-bit security at this ring degree.
    #[error(
        "insecure parameters: log2(Q) = {log_q} bits exceeds the {max_log_q}-bit maximum for 128-bit security at N = {n} \
         (HomomorphicEncryption.org standard, ternary secret); use fewer or smaller primes, a larger N, or allow_insecure()"
    )]
    Insecure { n: usize, log_q: u32, max_log_q: u32 },
    /// Objects made under different parameter sets were combined.
    #[error("parameter mismatch: {0}")]
    ParameterMismatch(String),
    /// Ciphertexts at different levels were combined.
    #[error("level mismatch: {left} vs {right}; switch the higher one down with mod_switch_to first")]
    LevelMismatch { left: usize, right: usize },
    /// Batches of different sizes were combined.
    #[error("batch size mismatch: {left} vs {right} ciphertexts (a plaintext batch may also hold exactly 1)")]
    CountMismatch { left: usize, right: usize },
    /// A ciphertext with the wrong number of components for the operation.
    #[error("{operation} needs ciphertexts of {expected} components, got {found}")]
    WrongSize { operation: &'static str, expected: usize, found: usize },
    /// More values than slots.
    #[error("{len} values do not fit in {slots} slots")]
    TooManyValues { len: usize, slots: usize },
    /// A value that the plaintext modulus cannot represent.
    #[error("value {value} at index {index} is out of range: allowed {allowed}")]
    PlaintextOverflow { index: usize, value: i128, allowed: String },
    /// Decryption noise has reached the modulus: the result would be wrong.
    #[error(
        "noise budget exhausted for ciphertext {index} of the batch: the decryption would be wrong; \
         use larger parameters, fewer multiplications, or switch moduli earlier"
    )]
    NoiseBudgetExhausted { index: usize },
    /// Modulus switching below the last prime.
    #[error("ciphertext is at level 0 (a single prime): no lower level to switch to")]
    LevelExhausted,
    /// Key switching (relinearization, rotation, conjugation) without its key or without
    /// special primes; the message says which.
    #[error("key switching is unavailable: {0}")]
    KeySwitchingUnavailable(String),
    /// An encoding that cannot be loaded (docs/SERIALIZATION.md): the message says what is
    /// wrong and what is allowed.
    #[error("malformed encoding: {0}")]
    Format(String),
    /// A file could not be read or written.
    #[error("i/o error: {0}")]
    Io(String),
}

/// Shorthand for results of this crate.
pub type Result<T> = std::result::Result<T, SchemeError>;

/// Errors unless two objects were made under the same parameters: `same_object` (one shared
/// context) or equal parameter sets. `what` names the caller's operand in the message.
pub(crate) fn expect_same_parameters<P: PartialEq + std::fmt::Display>(
    same_object: bool,
    mine: &P,
    theirs: &P,
    what: &str,
) -> Result<()> {
    if same_object || mine == theirs {
        Ok(())
    } else {
        Err(SchemeError::ParameterMismatch(format!("{what} was made for [{theirs}], not [{mine}]")))
    }
}
