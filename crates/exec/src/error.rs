//! Errors of the execution layer.

use thiserror::Error;

/// What can go wrong when a backend runs an operation. No operation modifies its inputs when it
/// returns an error.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ExecError {
    /// An error from the ring layer (wrong representation, basis mismatch...).
    #[error(transparent)]
    Ring(#[from] pimhe_ring::RingError),
    /// An error from the math layer.
    #[error(transparent)]
    Math(#[from] pimhe_math::MathError),
    /// Operand shapes that the operation cannot combine.
    #[error("{operation}: {detail}")]
    Shape { operation: &'static str, detail: String },
    /// The backend could not be set up (thread pool, device).
    #[error("backend setup failed: {0}")]
    Setup(String),
    /// The device's memory cannot hold even the smallest piece of the operation (a PIM
    /// backend's MRAM): the run is too large for the device as configured.
    #[error("{0}")]
    Capacity(String),
}

/// Shorthand for results of this crate.
pub type Result<T> = std::result::Result<T, ExecError>;
