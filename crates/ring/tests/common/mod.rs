//! Helpers shared by the ring integration tests: seeded randomness, prime selection and
//! independent oracles (schoolbook negacyclic products, direct evaluation).

#![allow(dead_code)]

use std::sync::Arc;

use pimhe_math::ntt_primes;
use pimhe_ring::{PolyBatch, Representation, RingBasis};
use rand_chacha::rand_core::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;

pub fn rng(seed: u64) -> ChaCha20Rng {
    ChaCha20Rng::seed_from_u64(seed)
}

/// Distinct NTT-friendly primes for degree `n`, one of each requested bit size (in order).
pub fn distinct_primes(n: usize, bits: &[u32]) -> Vec<u32> {
    let mut primes: Vec<u32> = Vec::new();
    for &b in bits {
        let p = ntt_primes(b, n, 1, &primes).unwrap()[0];
        primes.push(p);
    }
    primes
}

pub fn basis(n: usize, bits: &[u32]) -> Arc<RingBasis> {
    RingBasis::new(n, &distinct_primes(n, bits)).unwrap()
}

/// Uniform residues in [0, q) for every limb, limb-major, wrapped with `from_data`.
pub fn random_batch(
    rng: &mut ChaCha20Rng,
    basis: &Arc<RingBasis>,
    count: usize,
    representation: Representation,
) -> PolyBatch {
    let n = basis.degree();
    let mut data = Vec::with_capacity(basis.len() * count * n);
    for q in basis.primes() {
        for _ in 0..count * n {
            data.push((rng.next_u64() % q as u64) as u32);
        }
    }
    PolyBatch::from_data(basis, count, representation, data).unwrap()
}

/// Signed coefficients uniform in [-bound, bound].
pub fn random_signed(rng: &mut ChaCha20Rng, n: usize, bound: i64) -> Vec<i64> {
    let span = 2 * bound as u64 + 1;
    (0..n).map(|_| (rng.next_u64() % span) as i64 - bound).collect()
}

/// Schoolbook product in Z_q[X]/(X^N + 1).
pub fn schoolbook(a: &[u32], b: &[u32], q: u32) -> Vec<u32> {
    let n = a.len();
    let mut acc = vec![0i128; n];
    for i in 0..n {
        for j in 0..n {
            let prod = a[i] as i128 * b[j] as i128;
            if i + j < n {
                acc[i + j] += prod;
            } else {
                acc[i + j - n] -= prod;
            }
        }
    }
    acc.iter().map(|&x| x.rem_euclid(q as i128) as u32).collect()
}

pub fn pow_mod(mut base: u64, mut e: u64, q: u64) -> u64 {
    let mut acc = 1 % q;
    base %= q;
    while e > 0 {
        if e & 1 == 1 {
            acc = acc * base % q;
        }
        base = base * base % q;
        e >>= 1;
    }
    acc
}

/// a(point) mod q by Horner's rule.
pub fn evaluate(a: &[u32], point: u64, q: u64) -> u64 {
    a.iter().rev().fold(0u64, |acc, &c| (acc * point + c as u64) % q)
}

pub fn bit_reverse(x: usize, bits: u32) -> usize {
    let mut r = 0;
    for i in 0..bits {
        if x >> i & 1 == 1 {
            r |= 1 << (bits - 1 - i);
        }
    }
    r
}

/// The direct definition of X -> X^k on signed coefficients: coefficient i goes to i*k mod 2N,
/// negated when it lands in [N, 2N).
pub fn automorphism_signed(a: &[i64], k: usize) -> Vec<i64> {
    let n = a.len();
    let mut out = vec![0i64; n];
    for (i, &c) in a.iter().enumerate() {
        let e = (i as u128 * k as u128 % (2 * n) as u128) as usize;
        if e < n {
            out[e] = c;
        } else {
            out[e - n] = -c;
        }
    }
    out
}

/// Same definition on residues modulo q.
pub fn automorphism_residues(a: &[u32], k: usize, q: u32) -> Vec<u32> {
    let n = a.len();
    let mut out = vec![0u32; n];
    for (i, &c) in a.iter().enumerate() {
        let e = (i as u128 * k as u128 % (2 * n) as u128) as usize;
        if e < n {
            out[e] = c;
        } else {
            out[e - n] = (q - c) % q;
        }
    }
    out
}
