//! BGV in full RNS form (Brakerski-Gentry-Vaikuntanathan), with batching.
//!
//! Ciphertexts live in NTT form on a [`pimhe_exec::Backend`]; every operation on a
//! [`CiphertextBatch`] is a handful of backend calls for the whole batch. Key switching
//! (relinearization) is the shared `keyswitch` module with the BGV t-correction; modulus switching
//! drops the last prime with the BGV correction and tracks the resulting factor q^{-1} mod t.

mod ciphertext;
mod context;
mod decryptor;
mod encryptor;
mod evaluator;
mod keys;
mod params;

pub use crate::encoder::{BatchEncoder, Plaintext};
pub use ciphertext::CiphertextBatch;
pub use context::BgvContext;
pub use decryptor::Decryptor;
pub use encryptor::Encryptor;
pub use evaluator::Evaluator;
pub use keys::{KeyGenerator, PublicKey, RelinKey, SecretKey};
pub use params::{BgvParameters, DEGREES};
