//! Seeded inputs: the random generator, NTT-friendly primes and bases, random batches and
//! vectors. These are data, not expectations, so they may use the library.

use std::sync::Arc;

use pimhe_math::ntt_primes;
use pimhe_ring::{PolyBatch, Representation, RingBasis};
use rand_chacha::rand_core::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;

/// The deterministic generator every test draws from.
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

/// The basis of degree `n` over `distinct_primes(n, bits)`.
pub fn basis(n: usize, bits: &[u32]) -> Arc<RingBasis> {
    basis_of(n, &distinct_primes(n, bits))
}

/// The basis of degree `n` over the given primes, in that order.
pub fn basis_of(n: usize, primes: &[u32]) -> Arc<RingBasis> {
    RingBasis::new(n, primes).unwrap()
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

/// `n` residues `next_u32() % q` (one 32-bit draw each).
pub fn random_residues(rng: &mut ChaCha20Rng, n: usize, q: u32) -> Vec<u32> {
    (0..n).map(|_| rng.next_u32() % q).collect()
}

/// Signed values uniform in [-bound, bound].
pub fn random_signed(rng: &mut ChaCha20Rng, n: usize, bound: i64) -> Vec<i64> {
    let span = 2 * bound as u64 + 1;
    (0..n).map(|_| (rng.next_u64() % span) as i64 - bound).collect()
}

/// Residues of coefficient `c` of polynomial `k` across all limbs.
pub fn residues_at(batch: &PolyBatch, k: usize, c: usize) -> Vec<u32> {
    (0..batch.basis().len()).map(|l| batch.poly_limb(l, k)[c]).collect()
}
