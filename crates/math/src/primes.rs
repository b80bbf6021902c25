//! NTT-friendly primes and primitive roots of unity.
//!
//! The search is deterministic: the same (bits, N, count) always yields the same primes, largest
//! first, so parameter sets are reproducible across runs and machines.

use crate::error::{MathError, Result};
use crate::modular::Modulus;

/// Deterministic Miller-Rabin primality test for any 64-bit integer.
///
/// The first twelve primes as witnesses are exact below 3.3 * 10^24 (Sorenson and Webster), so
/// the answer is a proof, not a probability.
pub fn is_prime(n: u64) -> bool {
    const WITNESSES: [u64; 12] = [2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37];
    if n < 2 {
        return false;
    }
    for p in WITNESSES {
        if n.is_multiple_of(p) {
            return n == p;
        }
    }
    let mut d = n - 1;
    let mut s = 0;
    while d.is_multiple_of(2) {
        d /= 2;
        s += 1;
    }
    let mulmod = |a: u64, b: u64| (a as u128 * b as u128 % n as u128) as u64;
    let powmod = |mut a: u64, mut e: u64| {
        let mut acc = 1u64;
        while e > 0 {
            if e & 1 == 1 {
                acc = mulmod(acc, a);
            }
            a = mulmod(a, a);
            e >>= 1;
        }
        acc
    };
    'witness: for a in WITNESSES {
        let mut x = powmod(a, d);
        if x == 1 || x == n - 1 {
            continue;
        }
        for _ in 1..s {
            x = mulmod(x, x);
            if x == n - 1 {
                continue 'witness;
            }
        }
        return false;
    }
    true
}

/// `count` distinct primes p with exactly `bits` bits (2^(bits-1) < p < 2^bits) and
/// p = 1 mod 2N, largest first, skipping any listed in `exclude`.
///
/// ```
/// let primes = pimhe_math::ntt_primes(30, 4096, 3, &[]).unwrap();
/// assert_eq!(primes.len(), 3);
/// assert!(primes.iter().all(|&p| p % 8192 == 1 && p < 1 << 30 && p > 1 << 29));
/// ```
pub fn ntt_primes(bits: u32, n: usize, count: usize, exclude: &[u32]) -> Result<Vec<u32>> {
    if !(2..=30).contains(&bits) {
        return Err(MathError::InvalidPrimeBits(bits));
    }
    check_degree(n)?;
    let step = 2 * n as u64;
    let upper = 1u64 << bits;
    let lower = 1u64 << (bits - 1);
    let mut primes = Vec::with_capacity(count);
    // Largest candidate below 2^bits that is 1 mod 2N.
    let mut candidate = (upper - 1) / step * step + 1;
    while primes.len() < count && candidate > lower {
        if is_prime(candidate) && !exclude.contains(&(candidate as u32)) {
            primes.push(candidate as u32);
        }
        candidate -= step;
    }
    if primes.len() < count {
        return Err(MathError::NotEnoughPrimes { bits, step, requested: count, found: primes.len() });
    }
    Ok(primes)
}

/// Largest ring degree of the crate's NTTs: 2^20, the largest the DPU kernels transform (MHY+'s
/// 2^20 polynomials, DRAMatic section 7.2), whose twiddle tables are built from [`crate::NttTable`].
pub const MAX_DEGREE: usize = 1 << 20;

/// Checks that `n` is a power of two the NTT supports (2 ..= [`MAX_DEGREE`]).
pub fn check_degree(n: usize) -> Result<()> {
    if n.is_power_of_two() && (2..=MAX_DEGREE).contains(&n) {
        Ok(())
    } else {
        Err(MathError::InvalidDegree(n))
    }
}

/// The smallest primitive 2N-th root of unity modulo the prime `q` (needs q = 1 mod 2N).
///
/// Choosing the smallest makes the NTT (and so every NTT-form ciphertext) reproducible.
pub fn minimal_primitive_root(q: &Modulus, n: usize) -> Result<u32> {
    check_degree(n)?;
    let p = q.value() as u64;
    let order = 2 * n as u64;
    if !is_prime(p) || !(p - 1).is_multiple_of(order) {
        return Err(MathError::NotNttFriendly { q: q.value(), n });
    }
    // x^((p-1)/2N) has order dividing 2N; it is exactly 2N iff its N-th power is -1.
    let cofactor = (p - 1) / order;
    let generator = (2..p as u32)
        .map(|x| q.pow(x, cofactor))
        .find(|&g| q.pow(g, n as u64) == q.value() - 1)
        .ok_or(MathError::NotNttFriendly { q: q.value(), n })?;
    // Every primitive 2N-th root is an odd power of one of them; take the smallest.
    let square = q.mul(generator, generator);
    let mut root = generator;
    let mut smallest = generator;
    for _ in 0..n {
        smallest = smallest.min(root);
        root = q.mul(root, square);
    }
    Ok(smallest)
}
