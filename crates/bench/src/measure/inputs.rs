//! The inputs of the measurements, from a seed: uniformly random polynomial batches, random
//! slot vectors, and independent sampler streams.

use std::sync::Arc;

use pimhe_math::{Modulus, Sampler};
use pimhe_ring::{PolyBatch, Representation, RingBasis};

use crate::error::Result;

/// A batch of `count` uniformly random polynomials, limb by limb from `sampler`.
pub fn random_batch(
    basis: &Arc<RingBasis>,
    count: usize,
    representation: Representation,
    sampler: &mut Sampler,
) -> Result<PolyBatch> {
    let len = count * basis.degree();
    let mut data = Vec::with_capacity(basis.len() * len);
    for limb in 0..basis.len() {
        data.extend_from_slice(&sampler.uniform_vec(basis.modulus(limb), len));
    }
    Ok(PolyBatch::from_data(basis, count, representation, data)?)
}

/// Stream `k` of `seed`: independent samplers for the keys (0), the plaintext slots (1) and
/// the encryptions (2).
pub fn seed_stream(seed: u64, k: u64) -> Sampler {
    Sampler::from_seed_u64(seed.wrapping_mul(4).wrapping_add(k))
}

/// Two lists (x, then y) of `batch` vectors of `slots` uniformly random slots modulo t.
pub fn random_slots(t: &Modulus, slots: usize, batch: usize, mut sampler: Sampler) -> (Vec<Vec<u64>>, Vec<Vec<u64>>) {
    let mut vectors = || -> Vec<Vec<u64>> {
        (0..batch).map(|_| sampler.uniform_vec(t, slots).into_iter().map(u64::from).collect()).collect()
    };
    let x = vectors();
    (x, vectors())
}
