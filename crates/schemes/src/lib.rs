//! # pimhe-schemes
//!
//! Homomorphic encryption schemes written only against [`pimhe_exec::Backend`], so each runs on
//! the CPU and on every PIM backend: [`bgv`] (full-RNS BGV with batching and modulus switching)
//! and [`bfv`] (integer-only full-RNS BFV of Bajard, Eynard, Hasan and Zucca), thin layers on one
//! RLWE core ([`rlwe`]: parameters, keys, encryption, the ciphertext batch, key switching,
//! evaluation, decryption phase) that is generic over what differs ([`rlwe::RlweScheme`]). BGV
//! and BFV share the integer batch [`encoder`]. Every object has a versioned binary encoding
//! ([`serial`]).

pub mod bfv;
pub mod bgv;
pub mod ckks;
pub mod encoder;
pub mod error;
pub mod rlwe;
pub mod security;
pub mod serial;

pub use error::{Result, SchemeError};
