//! The division by a batch's last prime (rescaling, modulus switching) on the CPU, split in
//! two so that it can write a fresh batch or the input itself: [`LastPrime::of`] reads the last
//! limb (what every kept limb needs from it), and [`LastPrime::divide`] turns one kept
//! (limb, polynomial) chunk into its quotient, in place.
//!
//! The result is (a - delta) p^{-1} with delta = [a]_p centred, corrected to a multiple of t:
//! delta = r_c - p m with m = [r_c p^{-1}]_t centred (m = 0 without t), where r is [a]_p in
//! [0, p) and r_c = r - p (r > p/2). So delta = r - p s with the small signed s = (r > p/2) + m,
//! and modulo each kept prime q
//!     (a - delta) p^{-1} = a p^{-1} - r p^{-1} + s:
//! constant multiplications and additions of 32-bit residues (vector kernels), where reducing
//! the 64-bit delta modulo every q cost most of the time.

use std::sync::Arc;

use pimhe_math::simd::elementwise as kernels;
use pimhe_math::{Isa, Modulus};
use pimhe_ring::{PolyBatch, Representation, RingBasis};

use super::{pool, CpuBackend};
use crate::error::{ExecError, Result};

/// What every kept limb needs from the last one: per polynomial its residues r (coefficient
/// form) and the small corrections s, and p^{-1} and -p^{-1} modulo each kept prime.
pub(super) struct LastPrime {
    target: Arc<RingBasis>,
    is_ntt: bool,
    count: usize,
    n: usize,
    /// Per polynomial, r then s (two's complement): 2N values, written by one task.
    residues_and_shifts: Vec<u32>,
    p_inverses: Vec<(u32, u32)>,
}

impl LastPrime {
    /// Reads the last limb of `a` (its inverse NTT where `a` is in NTT form) and computes its
    /// corrections, one polynomial per task while its residues are in cache.
    pub(super) fn of(backend: &CpuBackend, a: &PolyBatch, plain_modulus: Option<Modulus>) -> Result<Self> {
        let basis = a.basis();
        let limbs = basis.len();
        if limbs < 2 {
            return Err(ExecError::Shape {
                operation: "mod_down_last",
                detail: "the input has a single prime; there is nothing left to divide into".into(),
            });
        }
        let last = limbs - 1;
        let p = *basis.modulus(last);
        let target = basis.prefix(last)?;
        let is_ntt = a.representation() == Representation::Ntt;
        let (n, count) = (a.degree(), a.count());
        // [r p^{-1}]_t minus (r > p/2) is [r_c p^{-1}]_t, since p p^{-1} = 1 modulo t.
        let correction = plain_modulus
            .map(|t| {
                // Reducing s modulo q by adding q once needs |s| <= t/2 + 1 < q.
                if let Some(q) = target.moduli().iter().find(|q| q.value() <= t.value() / 2 + 1) {
                    return Err(ExecError::Shape {
                        operation: "mod_down_last",
                        detail: format!(
                            "the plain modulus {} needs primes above {}; {} is not",
                            t.value(),
                            t.value() / 2 + 1,
                            q.value()
                        ),
                    });
                }
                Ok::<_, ExecError>((t, t.inv(p.value() % t.value())?))
            })
            .transpose()?;
        let isa = Isa::active();
        let transform_cost = if is_ntt { pool::TRANSFORM } else { 0 };
        let mut residues_and_shifts = vec![0u32; count * 2 * n];
        let Ok(()) = backend.each_chunk(
            &mut residues_and_shifts,
            2 * n,
            3 * pool::ELEMENTWISE + transform_cost,
            |poly, chunk| {
                let (r, shifts) = chunk.split_at_mut(n);
                r.copy_from_slice(a.poly_limb(last, poly));
                if is_ntt {
                    basis.table(last).inverse(r);
                }
                kernels::division_corrections(isa, &p, correction.as_ref().map(|(t, p_inv)| (t, *p_inv)), shifts, r);
                Ok::<_, std::convert::Infallible>(())
            },
        );
        let p_inverses = (0..last)
            .map(|limb| {
                let q = basis.modulus(limb);
                let p_inv = q.inv(p.value() % q.value())?;
                Ok((p_inv, q.neg(p_inv)))
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Self { target, is_ntt, count, n, residues_and_shifts, p_inverses })
    }

    /// The basis of the quotient: the input's without its last prime.
    pub(super) fn target(&self) -> &Arc<RingBasis> {
        &self.target
    }

    /// Work units per residue of [`LastPrime::divide`] (see `pool.rs`).
    pub(super) fn cost(&self) -> usize {
        2 * pool::ELEMENTWISE + if self.is_ntt { pool::TRANSFORM } else { 0 }
    }

    /// Chunk `index` (limb-major, as the batch stores them) of the quotient, from `chunk`
    /// holding the input's residues of that (limb, polynomial); `term` is N residues of
    /// scratch.
    pub(super) fn divide(&self, term: &mut [u32], index: usize, chunk: &mut [u32]) {
        let (limb, poly, n) = (index / self.count, index % self.count, self.n);
        let q = self.target.modulus(limb);
        let (p_inv, minus_p_inv) = self.p_inverses[limb];
        let isa = Isa::active();
        // term = s - r p^{-1} = -delta p^{-1}; r < 2^30 needs no reduction before Shoup's product.
        let (r, shifts) = self.residues_and_shifts[2 * n * poly..2 * n * (poly + 1)].split_at(n);
        kernels::mul_scalar_add_signed(isa, q, term, r, minus_p_inv, shifts);
        if self.is_ntt {
            self.target.table(limb).forward(term);
        }
        kernels::mul_scalar_add_assign(isa, q, chunk, term, p_inv);
    }
}
