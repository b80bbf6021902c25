//! CKKS (Cheon-Kim-Kim-Song) in full RNS form: approximate arithmetic on vectors of real or
//! complex numbers, as a thin layer on the RLWE core ([`crate::rlwe`]).
//!
//! A plaintext packs up to N/2 complex slots by the canonical embedding ([`encoder`]), scaled by
//! Delta and rounded; a ciphertext decrypts to Delta m + e. Products multiply the scales and
//! [`Evaluator::rescale`] divides by the primes of one level (one, or two when the scale is
//! larger than pimhe's 30-bit primes). Slot rotations and conjugation are automorphisms
//! X -> X^(5^r) and X -> X^-1 brought back under s by Galois keys, hoisted when many rotate one
//! ciphertext. On top: the sum over slots, linear transforms ([`linear`]), polynomials
//! ([`polynomial`]) and bootstrapping ([`bootstrap`]).
//!
//! ```
//! use num_complex::Complex64;
//! use pimhe_exec::CpuBackend;
//! use pimhe_schemes::ckks::*;
//! let backend = CpuBackend::new(Some(2)).unwrap();
//! let ctx = CkksContext::new(CkksParameters::preset(8192).unwrap()).unwrap();
//! let mut keygen = KeyGenerator::new(&backend, &ctx).unwrap();
//! let secret = keygen.secret_key().unwrap();
//! let public = keygen.public_key(&secret).unwrap();
//! let relin = keygen.relin_key(&secret).unwrap();
//! let galois = keygen.galois_keys(&secret, &ctx.galois_elements(&[1], false)).unwrap();
//! let encoder = Encoder::new(&ctx);
//! let scale = ctx.default_scale();
//! let mut encryptor = Encryptor::with_public_key(&backend, &public).unwrap();
//! let x = encryptor.encrypt(&[encoder.encode_real(&[1.5, 2.0, -3.0], scale).unwrap()]).unwrap();
//! let y = encryptor.encrypt(&[encoder.encode_real(&[2.0, 0.5, 1.0], scale).unwrap()]).unwrap();
//!
//! let evaluator = Evaluator::new(&backend, &ctx).with_relin_key(&relin).unwrap().with_galois_keys(&galois).unwrap();
//! let product = evaluator.multiply_relin_rescale(&x, &y).unwrap(); // [3, 1, -3, 0, ...]
//! let rotated = evaluator.rotate(&product, 1).unwrap();            // [1, -3, 0, ..., 3]
//!
//! let decryptor = Decryptor::new(&backend, &secret).unwrap();
//! let slots = encoder.decode_real(&decryptor.decrypt(&rotated).unwrap()[0]).unwrap();
//! assert!((slots[0] - 1.0).abs() < 1e-5 && (slots[1] + 3.0).abs() < 1e-5);
//! assert!((slots[4095] - 3.0).abs() < 1e-5);
//! ```

pub mod bootstrap;
mod context;
pub mod encoder;
mod evaluator;
pub mod linear;
mod params;
mod plaintext;
pub mod polynomial;
pub mod precision;

pub use context::{CkksContext, CkksTag};
pub use params::{CkksParameters, CkksParametersBuilder, DEGREES};
pub(crate) use plaintext::from_coefficients;
pub use plaintext::{CkksPlaintext, Encoder};
pub use precision::PrecisionStats;

use crate::rlwe;

/// A batch of CKKS ciphertexts on backend `B`; its tag is the scale and slot count.
pub type CiphertextBatch<B> = rlwe::CiphertextBatch<B, CkksContext>;
/// CKKS encryption with the public or the secret key: `(Delta m + e0 + b u, e1 + a u)` and
/// `(Delta m + e - a s, a)`.
pub type Encryptor<'a, B> = rlwe::Encryptor<'a, B, CkksContext>;
/// CKKS decryption: the phase as centred integers, exactly.
pub type Decryptor<'a, B> = rlwe::Decryptor<'a, B, CkksContext>;
/// CKKS evaluation: the shared operations and CKKS's own.
pub type Evaluator<'a, B> = rlwe::Evaluator<'a, B, CkksContext>;
/// Makes CKKS keys.
pub type KeyGenerator<'a, B> = rlwe::KeyGenerator<'a, B, CkksContext>;
/// A CKKS secret key.
pub type SecretKey = rlwe::SecretKey<CkksContext>;
/// A CKKS public key.
pub type PublicKey = rlwe::PublicKey<CkksContext>;
/// A CKKS relinearization key.
pub type RelinKey = rlwe::RelinKey<CkksContext>;
/// CKKS Galois keys (rotations, conjugation).
pub type GaloisKeys = rlwe::GaloisKeys<CkksContext>;
