//! # pimhe-ring
//!
//! Polynomials of `Z_Q[X]/(X^N + 1)` in RNS form, in batches, in the one limb-major layout of
//! pimhe (see [`PolyBatch`]). A batch knows its basis ([`RingBasis`]) and whether it holds
//! coefficients or NTT values ([`Representation`]); transforms and automorphisms live here, the
//! bulk element-wise work lives in the backends of `pimhe-exec`.

mod automorphism;
pub mod basis;
pub mod batch;
pub mod error;
pub mod memory;
pub mod recycle;
pub mod representation;

pub use automorphism::GaloisPermutation;
pub use basis::RingBasis;
pub use batch::PolyBatch;
pub use error::{Result, RingError};
pub use representation::Representation;
