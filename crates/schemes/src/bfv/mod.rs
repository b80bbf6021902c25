//! BFV (Brakerski/Fan-Vercauteren) in the integer-only full-RNS form of Bajard, Eynard, Hasan and
//! Zucca (BEHZ), with batching, as a thin layer on the RLWE core ([`crate::rlwe`]).
//!
//! The message sits in the top bits: a ciphertext decrypts to `floor(q/t) m + e` modulo q, so
//! there is no modulus chain. Ciphertexts live in NTT form over q on a [`pimhe_exec::Backend`].
//! Multiplication follows BEHZ's Algorithm 2 (`behz`): extension of both operands to an
//! auxiliary base Bsk by FastBConv and a small Montgomery reduction, the tensor product in q and
//! Bsk, the fast floor that scales by t/q in Bsk, and Shenoy-Kumaresan back to q; decryption is
//! Algorithm 1 with the gamma correction. Nothing uses floating point, so every step can run on
//! PIM cores. Relinearization is the shared hybrid key switching with errors not scaled by t and
//! no t-correction. Plaintexts and the slot layout are BGV's ([`crate::encoder`]).
//!
//! ```
//! use pimhe_exec::CpuBackend;
//! use pimhe_schemes::bfv::*;
//! let backend = CpuBackend::new(Some(2)).unwrap();
//! let ctx = BfvContext::new(BfvParameters::preset(4096).unwrap()).unwrap();
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
//! let product = evaluator.multiply(&x, &y).unwrap();          // BEHZ: 3 components
//! let product = evaluator.relinearize(&product).unwrap();     // back to 2
//! let shifted = evaluator.add_plain(&product, &[encoder.encode(&[1, 1]).unwrap()]).unwrap();
//!
//! let decryptor = Decryptor::new(&backend, &secret).unwrap();
//! let slots = encoder.decode(&decryptor.decrypt(&shifted).unwrap()[0]).unwrap();
//! assert_eq!(&slots[..2], &[16, 25]);
//! ```

mod behz;
mod context;
mod decryptor;
mod evaluator;
mod params;
pub mod special;

pub use crate::encoder::{BatchEncoder, Plaintext};
pub use context::BfvContext;
pub use params::BfvParameters;

use crate::rlwe;

/// A batch of BFV ciphertexts on backend `B`.
pub type CiphertextBatch<B> = rlwe::CiphertextBatch<B, BfvContext>;
/// BFV encryption with the public or the secret key: `(round(q m / t) + e0 + b u, e1 + a u)`
/// and `(round(q m / t) + e - a s, a)`.
pub type Encryptor<'a, B> = rlwe::Encryptor<'a, B, BfvContext>;
/// BFV decryption (BEHZ's Algorithm 1) and the exact noise budget.
pub type Decryptor<'a, B> = rlwe::Decryptor<'a, B, BfvContext>;
/// BFV evaluation: the shared operations and BFV's plaintext operands and BEHZ product.
pub type Evaluator<'a, B> = rlwe::Evaluator<'a, B, BfvContext>;
/// Makes BFV keys (errors not scaled).
pub type KeyGenerator<'a, B> = rlwe::KeyGenerator<'a, B, BfvContext>;
/// A BFV secret key.
pub type SecretKey = rlwe::SecretKey<BfvContext>;
/// A BFV public key.
pub type PublicKey = rlwe::PublicKey<BfvContext>;
/// A BFV relinearization key.
pub type RelinKey = rlwe::RelinKey<BfvContext>;
/// BFV Galois keys.
pub type GaloisKeys = rlwe::GaloisKeys<BfvContext>;
