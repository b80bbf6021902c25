//! The RLWE core under every scheme, as Lattigo's `core/rlwe` is: parameters and their bases,
//! key generation (secret, public, relinearization, Galois keys), the encryption core, the
//! ciphertext batch, hybrid key switching (plain and hoisted), evaluation with ciphertext and
//! plaintext operands, the randomness, and the decryption phase with its wiping. It is generic
//! over a [`RlweScheme`], the trait each scheme's context implements with what differs: the
//! error scale (t or 1), how a message enters an encryption and leaves a phase, the product,
//! how operands are aligned before an addition, and how plaintexts become an operand.
//!
//! `bgv`, `bfv` and `ckks` are thin layers on it: their contexts implement [`RlweScheme`], their
//! modules name the core's types for their context (`bgv::Encryptor<'a, B>` is
//! `Encryptor<'a, B, BgvContext>`), and they add their own operations (modulus switching,
//! BEHZ's product, rescaling, slot rotations) as methods of the same types.

mod ciphertext;
pub(crate) mod components;
mod context;
mod decryptor;
mod encryptor;
mod evaluator;
mod keys;
pub(crate) mod keyswitch;
pub(crate) mod lazy;
pub(crate) mod noise;
mod params;
pub(crate) mod phase;
mod scheme;
#[cfg(test)]
mod wipe_tests;

use std::sync::Arc;

pub use ciphertext::{CiphertextBatch, SeededCiphertexts};
pub use context::RlweContext;
pub use decryptor::Decryptor;
pub use encryptor::Encryptor;
pub(crate) use evaluator::expect_same_level;
pub use evaluator::Evaluator;
pub(crate) use keys::key_switch_basis;
pub use keys::{GaloisKeys, KeyGenerator, PublicKey, RelinKey, SecretKey};
pub(crate) use params::{bit_length, check_degree, check_dnum, degree_error};
pub use params::{RlweParameters, SecretDistribution};
pub use scheme::{Aligned, MessageTerms, Parts, PlainOperation, RlweScheme};

use crate::error::{expect_same_parameters, Result};

/// Errors unless two objects were made under the same parameters: one shared context, or two
/// of equal parameters. `what` names the caller's operand in the message.
pub(crate) fn expect_same_context<S: RlweScheme>(mine: &Arc<S>, theirs: &Arc<S>, what: &str) -> Result<()> {
    expect_same_parameters(Arc::ptr_eq(mine, theirs), mine.params(), theirs.params(), what)
}
