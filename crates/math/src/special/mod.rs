//! Arithmetic on special moduli for the full-RNS BFV of "Optimizing the full-RNS B/FV scheme for
//! Compute-Enabled RAM" (seed 004): moduli 2^g - 1, 2^g and 2^g + 1 of any width g up to 247
//! (the paper's g = 146, 110 and 220), on fixed-width wide words (`crypto_bigint`'s U256 and
//! U512; no heap, no num-bigint outside tests).
//!
//! - [`wide`]: the word types and branch-free helpers.
//! - [`SpecialModulus`]: reduction by shifts and adds (section 3.3, Algorithms 3 and 4),
//!   add/sub/mul, multiplication by 2^y (Algorithms 5 and 6, corrected), halving and negation
//!   (Theorems 1 and 2, Lemma 2).
//! - [`BarrettModulus`]: generic wide moduli (the extended base, section 3.5).
//! - [`SpecialBase`]: the sets S1 = {2^g - 1, 2^g, 2^g + 1} and S2 = {2^m - 1, 2^m + 1, ...,
//!   2^(2^f m) + 1} with their CRT constants in shift form (Lemma 1, Lemmas 3 and 4).
//! - [`FastBConv`]: generic and special fast base conversion (section 3.4), bit-identical.
//! - [`ExtendedBase`]: B, m_sk, m~ (section 3.5); [`ntt_primes_above`], [`is_probable_prime`].
//! - [`special_ntt_params`], [`prime_ntt_params`], [`WideNtt`]: NTT roots and a wide negacyclic
//!   NTT (section 3.6, Appendix C).
//! - [`NegacyclicMultiplier`], [`negacyclic_mul`]: exact ring products modulo a special
//!   modulus through NTT-friendly primes.
//! - [`DecryptScaler`]: Algorithm 1 (decryption scaling) on a special base.
//!
//! Algorithm 2 (multiplication) is left to the scheme layer; its pieces are here: FastBConv to
//! Bsk u {m~} (step 2) and back from B (Shenoy-Kumaresan, step 6), the extended base, and ring
//! products modulo Q (NegacyclicMultiplier) and modulo the B primes (WideNtt).
//!
//! # Security
//!
//! Reductions, additions, subtractions, multiplications and shifts by public amounts are
//! branch-free in the residues: the paper's `if x >= m` corrections are replaced by borrow
//! masks (constant-time selects). Shift amounts, moduli and exponents of `pow` are public.
//!
//! # Errata and findings (details in the submodules)
//!
//! - Algorithms 5 and 6 are swapped and their `lo` lacks the shift ([`shift`]).
//! - Algorithm 4 underflows at x = m^2 - 1; Theorem 1's statement says 2^g - 1 where it means
//!   2^(g-1) ([`SpecialModulus::reduce_product`], [`SpecialModulus::halve`]).
//! - Lemma 3's product omits the "+ 1" of each factor; Lemma 4's statement writes
//!   2^(2^i m) + 1 where its proof (and the set) use 2^(2^(i-1) m) + 1 ([`base`]).
//! - |c| < g for b_i = 2^g + c contradicts b_i = 1 mod 2N ([`extended`]).
//! - None of 2^146 - 1, 2^146, 2^146 + 1, 2^110 +- 1, 2^220 + 1 admits a negacyclic NTT of
//!   size 2^14 ([`ntt_params`]).

pub mod arith;
pub mod barrett;
pub mod base;
pub mod decrypt;
pub mod extended;
pub mod fastbconv;
pub mod modulus;
pub mod negacyclic;
pub mod ntt;
pub mod ntt_params;
pub mod primes;
pub mod shift;
pub mod wide;

pub use arith::WideArith;
pub use barrett::BarrettModulus;
pub use base::{BaseKind, InverseForm, SpecialBase};
pub use decrypt::{DecryptScaler, Scaled};
pub use extended::ExtendedBase;
pub use fastbconv::FastBConv;
pub use modulus::{SpecialForm, SpecialModulus};
pub use negacyclic::{negacyclic_mul, NegacyclicMultiplier};
pub use ntt::WideNtt;
pub use ntt_params::{prime_ntt_params, special_ntt_params, NttParams};
pub use primes::{is_probable_prime, ntt_primes_above};
pub use wide::{Wide, WideProduct, MAX_MODULUS_BITS};
