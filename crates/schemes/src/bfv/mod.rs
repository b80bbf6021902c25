//! BFV (Brakerski/Fan-Vercauteren) in the integer-only full-RNS form of Bajard, Eynard, Hasan and
//! Zucca (BEHZ), with batching.
//!
//! The message sits in the top bits: a ciphertext decrypts to `floor(q/t) m + e` modulo q, so
//! there is no modulus chain. Ciphertexts live in NTT form over q on a [`pimhe_exec::Backend`].
//! Multiplication follows BEHZ's Algorithm 2 (`behz`): extension of both operands to an
//! auxiliary base Bsk by FastBConv and a small Montgomery reduction, the tensor product in q and
//! Bsk, the fast floor that scales by t/q in Bsk, and Shenoy-Kumaresan back to q; decryption is
//! Algorithm 1 with the gamma correction. Nothing uses floating point, so every step can run on
//! PIM cores. Relinearization is the shared hybrid key switching (`keyswitch`, one
//! `Backend::key_switch` call) with errors not scaled by t and no t-correction. Plaintexts and
//! the slot layout are BGV's ([`crate::encoder`]).

mod behz;
mod ciphertext;
mod context;
mod decryptor;
mod encryptor;
mod evaluator;
mod keys;
mod params;

pub use crate::encoder::{BatchEncoder, Plaintext};
pub use ciphertext::CiphertextBatch;
pub use context::BfvContext;
pub use decryptor::Decryptor;
pub use encryptor::Encryptor;
pub use evaluator::Evaluator;
pub use keys::{KeyGenerator, PublicKey, RelinKey, SecretKey};
pub use params::BfvParameters;
