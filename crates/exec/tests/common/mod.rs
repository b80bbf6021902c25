//! Helpers shared by the exec integration tests: backends with 1 and 3 threads, seeded inputs,
//! and independent oracles (schoolbook products, big-integer CRT).

#![allow(dead_code)]

use std::sync::Arc;

use num_bigint::BigInt;
use num_integer::Integer;
use num_traits::{One, Zero};
use pimhe_exec::CpuBackend;
use pimhe_math::ntt_primes;
use pimhe_ring::{PolyBatch, Representation, RingBasis};
use rand_chacha::rand_core::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;

pub fn rng(seed: u64) -> ChaCha20Rng {
    ChaCha20Rng::seed_from_u64(seed)
}

/// One backend with a single worker and one with three: every result must agree.
pub fn backends() -> [CpuBackend; 2] {
    [CpuBackend::new(Some(1)).unwrap(), CpuBackend::new(Some(3)).unwrap()]
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

pub fn basis_of(n: usize, primes: &[u32]) -> Arc<RingBasis> {
    RingBasis::new(n, primes).unwrap()
}

/// Uniform residues in [0, q) at every limb.
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

/// Position of prime `p` in `primes`, found by a linear scan (independent of the library).
pub fn position(primes: &[u32], p: u32) -> usize {
    primes.iter().position(|&x| x == p).expect("prime present")
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

/// The representative of x mod q in (-q/2, q/2].
pub fn centre(x: u64, q: u64) -> i64 {
    let r = (x % q) as i64;
    if r > (q / 2) as i64 {
        r - q as i64
    } else {
        r
    }
}

pub fn product(primes: &[u32]) -> BigInt {
    primes.iter().fold(BigInt::one(), |acc, &p| acc * BigInt::from(p))
}

/// a^{-1} mod m (any m coprime to a) by the extended Euclidean algorithm on big integers.
pub fn inverse_mod(a: &BigInt, m: u32) -> BigInt {
    let m_big = BigInt::from(m);
    let a = a.mod_floor(&m_big);
    let egcd = a.extended_gcd(&m_big);
    assert!(egcd.gcd.is_one(), "{a} is not invertible modulo {m}");
    let inv = egcd.x.mod_floor(&m_big);
    assert!((&inv * &a).mod_floor(&m_big).is_one());
    inv
}

/// CRT: the integer in [0, prod) with the given residues.
pub fn crt(residues: &[u32], primes: &[u32]) -> BigInt {
    let q = product(primes);
    let mut x = BigInt::zero();
    for (&r, &p) in residues.iter().zip(primes) {
        let q_hat = &q / BigInt::from(p);
        let inv = inverse_mod(&q_hat, p);
        x += BigInt::from(r) * &q_hat * inv;
    }
    let x = x.mod_floor(&q);
    for (&r, &p) in residues.iter().zip(primes) {
        assert_eq!(x.mod_floor(&BigInt::from(p)), BigInt::from(r), "CRT self-check");
    }
    x
}

/// CRT, centred into (-prod/2, prod/2].
pub fn crt_centred(residues: &[u32], primes: &[u32]) -> BigInt {
    let q = product(primes);
    let x = crt(residues, primes);
    if &x * 2 > q {
        x - q
    } else {
        x
    }
}

/// x mod p in [0, p) as u32, for a signed big integer.
pub fn big_mod(x: &BigInt, p: u32) -> u32 {
    let r = x.mod_floor(&BigInt::from(p));
    u32::try_from(r).unwrap()
}

/// Residues of coefficient `c` of polynomial `k` across all limbs.
pub fn residues_at(batch: &PolyBatch, k: usize, c: usize) -> Vec<u32> {
    (0..batch.basis().len()).map(|l| batch.poly_limb(l, k)[c]).collect()
}

/// Signed values uniform in [-bound, bound].
pub fn random_signed(rng: &mut ChaCha20Rng, n: usize, bound: i64) -> Vec<i64> {
    let span = 2 * bound as u64 + 1;
    (0..n).map(|_| (rng.next_u64() % span) as i64 - bound).collect()
}
