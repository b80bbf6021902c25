//! # pimhe-schemes
//!
//! Homomorphic encryption schemes written only against [`pimhe_exec::Backend`], so each runs on
//! the CPU and on every PIM backend. Today: [`bgv`] (full-RNS BGV with batching and modulus
//! switching) and [`bfv`] (integer-only full-RNS BFV of Bajard, Eynard, Hasan and Zucca). Both
//! use the same batch [`encoder`], key switching and randomness; CKKS will follow the same
//! structure.

pub mod bfv;
pub mod bgv;
mod components;
pub mod encoder;
pub mod error;
pub(crate) mod keyswitch;
pub(crate) mod noise;
mod phase;
pub mod security;

pub use error::{Result, SchemeError};
