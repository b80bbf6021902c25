//! BGV in full RNS form (Brakerski-Gentry-Vaikuntanathan), with batching, as a thin layer on the
//! RLWE core ([`crate::rlwe`]).
//!
//! Ciphertexts live in NTT form on a [`pimhe_exec::Backend`]; every operation on a
//! [`CiphertextBatch`] is a handful of backend calls for the whole batch. BGV's part: errors
//! scaled by t, key switching with the t-correction, the message added as it is, and modulus
//! switching that drops the last prime with the BGV correction and tracks the resulting factor
//! q^{-1} mod t as the batch's tag (removed at decryption, as SEAL and OpenFHE do).
//!
//! ```
//! use pimhe_exec::CpuBackend;
//! use pimhe_schemes::bgv::*;
//! let backend = CpuBackend::new(Some(2)).unwrap();
//! let ctx = BgvContext::new(BgvParameters::preset(4096).unwrap()).unwrap();
//! let mut keygen = KeyGenerator::new(&backend, &ctx).unwrap();
//! let secret = keygen.secret_key().unwrap();
//! let public = keygen.public_key(&secret).unwrap();
//! let relin = keygen.relin_key(&secret).unwrap();
//! let encoder = BatchEncoder::new(&ctx);
//! let mut encryptor = Encryptor::with_public_key(&backend, &public).unwrap();
//! let x = encryptor.encrypt(&[encoder.encode(&[3, 4]).unwrap()]).unwrap();
//! let y = encryptor.encrypt(&[encoder.encode(&[5, 6]).unwrap()]).unwrap();
//!
//! let evaluator = Evaluator::new(&backend, &ctx).with_relin_key(&relin).unwrap();
//! let product = evaluator.multiply(&x, &y).unwrap();          // 3 components
//! let product = evaluator.relinearize(&product).unwrap();     // back to 2
//! let product = evaluator.mod_switch_to_next(&product).unwrap();
//!
//! let decryptor = Decryptor::new(&backend, &secret).unwrap();
//! let slots = encoder.decode(&decryptor.decrypt(&product).unwrap()[0]).unwrap();
//! assert_eq!(&slots[..2], &[15, 24]);
//! assert!(decryptor.noise_budget(&product).unwrap()[0] > 0);
//! ```

mod context;
mod decryptor;
mod evaluator;
mod params;

pub use crate::encoder::{BatchEncoder, Plaintext};
pub use context::BgvContext;
pub use params::{BgvParameters, DEGREES};

use crate::rlwe;

/// A batch of BGV ciphertexts on backend `B`; its tag is the correction factor.
pub type CiphertextBatch<B> = rlwe::CiphertextBatch<B, BgvContext>;
/// BGV encryption with the public or the secret key: `(b u + t e0 + m, a u + t e1)` and
/// `(-a s + t e + m, a)`.
pub type Encryptor<'a, B> = rlwe::Encryptor<'a, B, BgvContext>;
/// BGV decryption (RNS only) and the exact noise budget.
pub type Decryptor<'a, B> = rlwe::Decryptor<'a, B, BgvContext>;
/// BGV evaluation: the shared operations and BGV's plaintext operands and modulus switching.
pub type Evaluator<'a, B> = rlwe::Evaluator<'a, B, BgvContext>;
/// Makes BGV keys (errors scaled by t).
pub type KeyGenerator<'a, B> = rlwe::KeyGenerator<'a, B, BgvContext>;
/// A BGV secret key.
pub type SecretKey = rlwe::SecretKey<BgvContext>;
/// A BGV public key.
pub type PublicKey = rlwe::PublicKey<BgvContext>;
/// A BGV relinearization key.
pub type RelinKey = rlwe::RelinKey<BgvContext>;
/// BGV Galois keys.
pub type GaloisKeys = rlwe::GaloisKeys<BgvContext>;
