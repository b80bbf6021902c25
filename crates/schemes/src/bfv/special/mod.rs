//! BFV on special moduli: BEHZ's full-RNS BFV over the bases of "Optimizing the full-RNS B/FV
//! scheme for Compute-Enabled RAM" (seed 004) — the balanced {2^g - 1, 2^g, 2^g + 1} and the
//! Mersenne/Fermat-like chains such as {2^110 - 1, 2^110 + 1, 2^220 + 1} — on wide words
//! ([`pimhe_math::special`]). The paper's cases A, B and C (Table 1) are parameter choices
//! ([`SpecialCase`]); A and B compute the same bits, B through the shift-and-add reductions and
//! FastBConv of its section 3, A through Barrett.
//!
//! Q's moduli have no negacyclic NTT at the paper's N = 2^14 (section 3.6 assumes one; see
//! [`pimhe_math::special::special_ntt_params`]), so products modulo q_i are exact integer
//! products through NTT-friendly primes, reduced modulo q_i ([`ProductMethod`]); the extended
//! base's primes are NTT-friendly and use a wide NTT directly.
//!
//! Plaintexts and slots are BFV's ([`BatchEncoder`](crate::encoder::BatchEncoder)): the same
//! plaintext decrypts to the same slots as under the 30-bit-prime BFV.
//!
//! ```
//! use pimhe_math::{special::SpecialBase, Sampler};
//! use pimhe_schemes::bfv::special::*;
//! use pimhe_schemes::encoder::BatchEncoder;
//! // A small insecure set for a quick look (N = 16); SpecialBfvParameters::case(SpecialCase::B)
//! // is the paper's.
//! let params = SpecialBfvParameters::new(16, 97, SpecialBase::balanced(40).unwrap(), true).unwrap().allow_insecure();
//! let ctx = SpecialBfvContext::new(params).unwrap();
//! let mut sampler = Sampler::from_seed_u64(7);
//! let secret = SecretKey::generate(&ctx, &mut sampler);
//! let (public, relin) = (secret.public_key(&mut sampler), secret.relin_key(&mut sampler));
//! let encoder = BatchEncoder::new(&ctx);
//! let x = encrypt(&public, &encoder.encode(&[3, 4]).unwrap(), &mut sampler).unwrap();
//! let y = encrypt(&public, &encoder.encode(&[5, 6]).unwrap(), &mut sampler).unwrap();
//! let product = relinearize(&multiply(&x, &y).unwrap(), &relin).unwrap();
//! let sum = add(&product, &x).unwrap();
//! let slots = encoder.decode(&decrypt(&secret, &sum).unwrap()).unwrap();
//! assert_eq!(&slots[..2], &[18, 28]);
//! ```

mod behz;
mod context;
mod counts;
mod evaluator;
mod keys;
mod params;
mod ring;

pub use context::SpecialBfvContext;
pub use counts::OpCounts;
pub use evaluator::{add, decrypt, encrypt, multiply, relinearize, sub, Ciphertext};
pub use keys::{PublicKey, RelinKey, SecretKey};
pub use params::{ProductMethod, SpecialBfvParameters, SpecialCase};
