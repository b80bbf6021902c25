//! Wide primes: Miller-Rabin on [`Wide`] words and the search for NTT-friendly primes just
//! above a power of two (section 3.5's extended base, and the auxiliary primes of the exact
//! negacyclic product).

use rand_chacha::rand_core::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;

use super::arith::WideArith;
use super::barrett::BarrettModulus;
use super::wide::{pow2, Wide, MAX_MODULUS_BITS};
use crate::error::{MathError, Result};

/// Miller-Rabin rounds used by the prime search: an error probability below 4^-40 per
/// composite that survives trial division.
pub const MILLER_RABIN_ROUNDS: u32 = 40;

/// The seed of the witnesses the prime search uses, so that the same parameters always give
/// the same primes.
pub const PRIME_SEARCH_SEED: u64 = 0x0053_4545_4430_3034; // "SEED004" in ASCII

const SMALL_PRIMES: [u64; 25] =
    [2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71, 73, 79, 83, 89, 97];

/// Miller-Rabin with `rounds` random witnesses drawn from ChaCha20 seeded with `seed`
/// (deterministic for a given seed), after trial division by the primes below 100. Exact for
/// n < 100^2; for larger n a "true" is wrong with probability below 4^-rounds.
///
/// ```
/// use pimhe_math::special::{is_probable_prime, Wide};
/// assert!(is_probable_prime(&Wide::from_u64(65537), 20, 1));
/// assert!(!is_probable_prime(&Wide::from_u64(65537 * 257), 20, 1));
/// ```
pub fn is_probable_prime(n: &Wide, rounds: u32, seed: u64) -> bool {
    if n.bit_width_vartime() <= 64 && n.to_words()[0] < 2 {
        return false;
    }
    for &p in &SMALL_PRIMES {
        let pw = Wide::from_u64(p);
        if *n == pw {
            return true;
        }
        if n.rem_limb(crypto_bigint::NonZero::new(crypto_bigint::Limb(p)).into_option().expect("p > 0")).0 == 0 {
            return false;
        }
    }
    if n.bit_width_vartime() <= 13 && n.to_words()[0] < 100 * 100 {
        return true;
    }
    let m = match BarrettModulus::new(*n) {
        Ok(m) => m,
        Err(_) => return false,
    };
    let n_minus_1 = n.wrapping_sub(&Wide::ONE);
    let s = n_minus_1.trailing_zeros_vartime();
    let d = n_minus_1.shr_vartime(s);
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let span = n.wrapping_sub(&Wide::from_u64(3)); // witnesses in [2, n - 2]
    let span_mod = BarrettModulus::new(span).ok();
    'witness: for _ in 0..rounds {
        let mut words = [0u64; 4];
        for w in &mut words {
            *w = rng.next_u64();
        }
        let raw = Wide::from_words(words);
        let a = match &span_mod {
            Some(sm) => sm.reduce(&raw).wrapping_add(&Wide::from_u64(2)),
            None => Wide::from_u64(2),
        };
        let mut x = m.pow(&a, &d);
        if x == Wide::ONE || x == n_minus_1 {
            continue;
        }
        for _ in 1..s {
            x = m.mul(&x, &x);
            if x == n_minus_1 {
                continue 'witness;
            }
        }
        return false;
    }
    true
}

/// The `count` smallest primes p > 2^g with p = 1 mod 2N that have exactly g + 1 bits
/// (2^g < p < 2^(g+1)), ascending, skipping those in `exclude`. With 2N dividing 2^g the
/// candidates are 2^g + 1 + j 2N; 2^g + 1 itself is tried first.
///
/// ```
/// use pimhe_math::special::{ntt_primes_above, Wide};
/// let p = ntt_primes_above(146, 1 << 14, 2, &[]).unwrap();
/// assert_eq!(p.len(), 2);
/// assert!(p.iter().all(|p| p.bit_width_vartime() == 147 && p.to_words()[0] % (1 << 15) == 1));
/// ```
pub fn ntt_primes_above(g: u32, n: usize, count: usize, exclude: &[Wide]) -> Result<Vec<Wide>> {
    if g + 1 > MAX_MODULUS_BITS || g < 2 {
        return Err(MathError::InvalidPrimeBits(g + 1));
    }
    check_wide_degree(n)?;
    let step = Wide::from_u64(2 * n as u64);
    let base = pow2::<{ Wide::LIMBS }>(g);
    // Smallest candidate above 2^g that is 1 mod 2N.
    let rem = base.rem_vartime(&crypto_bigint::NonZero::new(step).into_option().expect("2N > 0"));
    let mut candidate = base.wrapping_sub(&rem).wrapping_add(&Wide::ONE);
    if candidate <= base {
        candidate = candidate.wrapping_add(&step);
    }
    let mut primes = Vec::with_capacity(count);
    while primes.len() < count {
        if candidate.bit_width_vartime() > g + 1 {
            return Err(MathError::NotEnoughPrimes {
                bits: g + 1,
                step: 2 * n as u64,
                requested: count,
                found: primes.len(),
            });
        }
        if !exclude.contains(&candidate) && is_probable_prime(&candidate, MILLER_RABIN_ROUNDS, PRIME_SEARCH_SEED) {
            primes.push(candidate);
        }
        candidate = candidate.wrapping_add(&step);
    }
    Ok(primes)
}

/// N must be a power of two in 2..=[`crate::primes::MAX_DEGREE`] (the crate's range).
pub(crate) fn check_wide_degree(n: usize) -> Result<()> {
    if !n.is_power_of_two() || !(2..=crate::primes::MAX_DEGREE).contains(&n) {
        return Err(MathError::InvalidDegree(n));
    }
    Ok(())
}
