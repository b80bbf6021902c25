//! Oracles of the fused element-wise operations (Anaheim's TensorSq, CAccum, ModDownEp) on
//! host batches, from their definitions with plain `u64` arithmetic: every backend's fused
//! kernel is checked against these and against its own unfused sequence.

use pimhe_ring::{PolyBatch, Representation};

/// Applies `f(prime, limb, poly, index)` to every residue position of a batch shaped as `like`.
fn build(like: &PolyBatch, f: impl Fn(u64, usize, usize, usize) -> u64) -> PolyBatch {
    let (n, count, primes) = (like.degree(), like.count(), like.basis().primes());
    let mut data = Vec::with_capacity(primes.len() * count * n);
    for (limb, &q) in primes.iter().enumerate() {
        for poly in 0..count {
            for i in 0..n {
                data.push((f(u64::from(q), limb, poly, i) % u64::from(q)) as u32);
            }
        }
    }
    PolyBatch::from_data(like.basis(), count, like.representation(), data).unwrap()
}

fn at(batch: &PolyBatch, limb: usize, poly: usize, i: usize) -> u64 {
    u64::from(batch.poly_limb(limb, poly)[i])
}

/// `(a0^2, 2 a0 a1, a1^2)`.
pub fn tensor_square(a0: &PolyBatch, a1: &PolyBatch) -> [PolyBatch; 3] {
    [
        build(a0, |q, l, p, i| at(a0, l, p, i) * at(a0, l, p, i) % q),
        build(a0, |q, l, p, i| 2 * (at(a0, l, p, i) * at(a1, l, p, i) % q)),
        build(a0, |q, l, p, i| at(a1, l, p, i) * at(a1, l, p, i) % q),
    ]
}

/// `offset + sum_j c_j a_j`, constants per limb; the offset is the constant polynomial (every
/// residue in NTT form, the constant coefficient in coefficient form).
pub fn constant_accumulate(terms: &[(&PolyBatch, &[u64])], offset: Option<&[u64]>) -> PolyBatch {
    let first = terms[0].0;
    let ntt = first.representation() == Representation::Ntt;
    build(first, |q, l, p, i| {
        let constant = match offset {
            Some(offset) if ntt || i == 0 => offset[l] % q,
            _ => 0,
        };
        terms.iter().fold(constant, |acc, &(a, c)| (acc + (c[l] % q) * at(a, l, p, i)) % q)
    })
}

/// `(a - b) c_l` on limb l; `b` holds as many polynomials as `a` or one (broadcast), over the
/// same primes.
pub fn mod_down_epilogue(a: &PolyBatch, b: &PolyBatch, constants: &[u64]) -> PolyBatch {
    let single = b.count() == 1;
    build(a, |q, l, p, i| {
        let y = at(b, l, if single { 0 } else { p }, i);
        (at(a, l, p, i) + q - y) % q * (constants[l] % q)
    })
}
