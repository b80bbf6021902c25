//! # pimhe-math
//!
//! The arithmetic floor of pimhe: 32-bit residues modulo primes below 2^30, deterministic
//! NTT-friendly prime search, the negacyclic NTT, RNS bases (CRT and fast base conversion) and
//! samplers on a seeded ChaCha20 CSPRNG, and (in [`special`]) wide-word arithmetic on the special
//! moduli 2^g - 1, 2^g, 2^g + 1 of CE-RAM BFV. Nothing here knows about polynomials in batches or
//! ciphertexts; those live in `pimhe-ring` and above.

pub mod crt_float;
pub mod crt_small;
pub mod error;
pub mod modular;
pub mod ntt;
pub mod primes;
pub mod rns;
pub mod sampling;
pub mod simd;
pub mod special;

pub use crt_float::CrtToFloat;
pub use crt_small::CrtToSmall;
pub use error::{MathError, Result};
pub use modular::{bit_reverse, inverse_mod, Modulus};
pub use ntt::NttTable;
pub use primes::{is_prime, minimal_primitive_root, ntt_primes};
pub use rns::{BaseConverter, RnsBase};
pub use sampling::{GaussianTable, Sampler, DEFAULT_SIGMA};
pub use simd::Isa;
