//! NTT parameters for the special moduli and the wide primes (section 3.6): a negacyclic NTT of
//! size N modulo m needs psi with psi^N = -1 (psi is then a principal 2N-th root of unity as
//! soon as 2 is invertible), i.e. every prime factor p of m must satisfy 2N | p - 1.
//!
//! # Finding: the paper's moduli sets are not NTT-friendly at N = 2^14
//!
//! - 2^g: even. N = 2^a has no inverse and, for g >= 3, -1 is not a square modulo 2^g, so no
//!   psi with psi^N = -1 exists for any N >= 2. (Section 3.6 calls Z/2^g "a finite field
//!   GF(2)" and takes a primitive root: Z/2^g is not a field and has no primitive root for
//!   g >= 3.)
//! - 2^g - 1 = 3 mod 4 for g >= 2, so it has a prime factor p = 3 mod 4, modulo which -1 is
//!   not a square: no negacyclic NTT of any size N >= 2. (The Mersenne number transform that
//!   section 3.6 cites is cyclic, with root 2 of order g.)
//! - 2^g + 1: 2 has order 2g and sqrt(2) = 2^(3g/4) - 2^(g/4) (when 4 | g) order 4g, so these
//!   "Fermat number transform" roots serve N | g resp. N | 2g only. For the paper's g = 146,
//!   110 and 220 at N = 2^14 that fails, and no other root exists either: 5 divides 2^146 + 1
//!   and 2^110 + 1 (g = 2 * odd), 17 divides 2^220 + 1 (g = 4 * odd), and 2N = 2^15 does not
//!   divide 5 - 1 or 17 - 1.
//!
//! So a ring product modulo the paper's Q cannot use an NTT over Q itself; see
//! [`negacyclic_mul`](super::negacyclic_mul) for the exact product through NTT-friendly primes.

use super::arith::WideArith;
use super::barrett::BarrettModulus;
use super::modulus::{SpecialForm, SpecialModulus};
use super::primes::{check_wide_degree, is_probable_prime, MILLER_RABIN_ROUNDS, PRIME_SEARCH_SEED};
use super::wide::{pow2, Wide};
use crate::error::{MathError, Result};

use rand_chacha::rand_core::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;

/// The root data of a negacyclic NTT of size N modulo a wide modulus.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NttParams {
    /// The ring degree N.
    pub n: usize,
    /// psi with psi^N = -1 (a primitive 2N-th root of unity).
    pub psi: Wide,
    /// e when psi = 2^e (the Fermat number transform's shift twiddles), else `None`.
    pub psi_log2: Option<u32>,
}

/// Largest trial divisor used to exhibit a prime factor p with 2N not dividing p - 1.
const TRIAL_BOUND: u32 = 1 << 16;

/// The negacyclic NTT root for a special modulus, or an error that says why none exists.
///
/// ```
/// use pimhe_math::special::{special_ntt_params, SpecialModulus};
/// // 2^64 + 1 with N = 64: psi = 2 (N divides g).
/// let p = special_ntt_params(&SpecialModulus::fermat_like(64).unwrap(), 64).unwrap();
/// assert_eq!(p.psi_log2, Some(1));
/// // The paper's Case B modulus at N = 2^14: no root exists, and the error says why.
/// let err = special_ntt_params(&SpecialModulus::fermat_like(146).unwrap(), 1 << 14).unwrap_err();
/// assert!(err.to_string().contains("5 divides 2^146 + 1"));
/// ```
pub fn special_ntt_params(q: &SpecialModulus, n: usize) -> Result<NttParams> {
    check_wide_degree(n)?;
    let g = q.g();
    let fail = |reason: String| MathError::NotNttFriendlyWide { modulus: q.to_string(), n, reason };
    let witness = || small_factor_witness(q, n);
    match q.form() {
        SpecialForm::PowerOfTwo => Err(fail(format!(
            "2^{g} is even, so N = {n} has no inverse modulo it, and -1 is not a square modulo 2^g for g >= 3, so no \
             psi with psi^N = -1 exists; Z/2^g is not a field (no primitive root for g >= 3). Keep 2^g out of \
             NTT-based products (multiply through NTT-friendly primes instead)"
        ))),
        SpecialForm::Mersenne => {
            let example = witness().map(|(p, _)| format!(" (here p = {p})")).unwrap_or_default();
            Err(fail(format!(
                "2^{g} - 1 = 3 mod 4, so it has a prime factor p = 3 mod 4{example} and -1 is not a square modulo p: \
                 no psi with psi^N = -1 exists for any N >= 2 (2 has order {g}, which serves only cyclic transforms). \
                 Allowed: 2^g + 1 with N | g (or N | 2g when 4 | g), or a prime p = 1 mod 2N"
            )))
        }
        SpecialForm::FermatLike => {
            let nn = n as u32;
            if g.is_multiple_of(nn) {
                let e = g / nn;
                return checked(q, n, pow2(e), Some(e));
            }
            if g.is_multiple_of(4) && (2 * g).is_multiple_of(nn) {
                let sqrt2 = q.sub(&pow2(3 * g / 4), &pow2(g / 4));
                let psi = q.pow(&sqrt2, &Wide::from_u64((2 * g / nn) as u64));
                return checked(q, n, psi, None);
            }
            if let Some((p, pm1)) = witness() {
                return Err(fail(format!(
                    "{p} divides 2^{g} + 1 and 2N = {} does not divide {p} - 1 = {pm1}, so there is no element of order \
                     2N modulo {p}, hence no psi with psi^N = -1 modulo 2^{g} + 1. The shift roots 2 (order 2g = {}) and \
                     sqrt(2) (order 4g, when 4 | g) need N | g or N | 2g. Allowed: 2^g + 1 with N | g (or N | 2g when \
                     4 | g), or moduli whose prime factors are all 1 mod 2N",
                    2 * n,
                    2 * g
                )));
            }
            if is_probable_prime(q.value(), MILLER_RABIN_ROUNDS, PRIME_SEARCH_SEED)
                && q.value().wrapping_sub(&Wide::ONE).trailing_zeros_vartime() >= (2 * n).trailing_zeros()
            {
                let params = prime_ntt_params(q.barrett(), n, PRIME_SEARCH_SEED)?;
                return checked(q, n, params.psi, None);
            }
            Err(fail(format!(
                "N divides neither g nor 2g, so the shift roots 2 and sqrt(2) do not give a 2N-th root, and no prime \
                 factor below 2^16 decides the case (2^{g} + 1 would need every prime factor p = 1 mod {}; that needs \
                 its factorisation). Allowed: N | g (or N | 2g when 4 | g)",
                2 * n
            )))
        }
    }
}

/// psi for a prime p = 1 mod 2N: psi = x^((p-1)/2N) for ChaCha20-drawn x (seeded), until
/// psi^N = -1. Errors if p is not prime or 2N does not divide p - 1.
///
/// ```
/// use pimhe_math::special::{prime_ntt_params, BarrettModulus, Wide};
/// let p = BarrettModulus::new(Wide::from_u64(7681)).unwrap(); // 7681 = 1 mod 512
/// let params = prime_ntt_params(&p, 256, 1).unwrap();
/// assert_eq!(params.n, 256);
/// ```
pub fn prime_ntt_params(p: &BarrettModulus, n: usize, seed: u64) -> Result<NttParams> {
    check_wide_degree(n)?;
    let value = *p.value();
    let fail = |reason: String| MathError::NotNttFriendlyWide { modulus: value.to_string_radix_vartime(10), n, reason };
    if !is_probable_prime(&value, MILLER_RABIN_ROUNDS, PRIME_SEARCH_SEED) {
        return Err(fail("the modulus is not prime (use special_ntt_params for 2^g +- 1 and 2^g)".into()));
    }
    let p_minus_1 = value.wrapping_sub(&Wide::ONE);
    let log_2n = (2 * n).trailing_zeros();
    if p_minus_1.trailing_zeros_vartime() < log_2n {
        return Err(fail(format!("2N = {} does not divide p - 1; choose a prime p = 1 mod 2N", 2 * n)));
    }
    let exponent = p_minus_1.shr_vartime(log_2n);
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    for _ in 0..256 {
        let mut words = [0u64; 4];
        for w in &mut words {
            *w = rng.next_u64();
        }
        let psi = p.pow(&p.reduce(&Wide::from_words(words)), &exponent);
        if p.pow(&psi, &Wide::from_u64(n as u64)) == p_minus_1 {
            return Ok(NttParams { n, psi, psi_log2: None });
        }
    }
    Err(fail("no 2N-th root of unity found in 256 draws".into()))
}

fn checked(q: &SpecialModulus, n: usize, psi: Wide, psi_log2: Option<u32>) -> Result<NttParams> {
    let minus_one = q.value().wrapping_sub(&Wide::ONE);
    assert_eq!(q.pow(&psi, &Wide::from_u64(n as u64)), minus_one, "psi^N = -1 by construction");
    Ok(NttParams { n, psi, psi_log2 })
}

/// The smallest prime p < 2^16 dividing q with 2N not dividing p - 1, with p - 1.
fn small_factor_witness(q: &SpecialModulus, n: usize) -> Option<(u32, u32)> {
    let mut sieve = vec![true; TRIAL_BOUND as usize];
    for p in 2..TRIAL_BOUND {
        if !sieve[p as usize] {
            continue;
        }
        let mut k = p as u64 * p as u64;
        while k < TRIAL_BOUND as u64 {
            sieve[k as usize] = false;
            k += p as u64;
        }
        let r = q.value().rem_limb(crypto_bigint::NonZero::new(crypto_bigint::Limb(p as u64)).into_option()?);
        if r.0 == 0 && (p - 1) % (2 * n as u32) != 0 {
            return Some((p, p - 1));
        }
    }
    None
}
