//! The CPU's fused hybrid key switch ([`crate::Backend::key_switch`]).
//!
//! The composed switch ([`crate::key_switch::composed`]) makes every digit's ModUp a batch over
//! the whole extended basis, then multiplies and accumulates those batches with the key: each
//! step streams megabytes through memory and allocates a fresh batch. Here each (polynomial,
//! extended prime) pair is one task that converts one digit at a time to that prime (from the
//! digits' scaled residues, kept per polynomial), transforms it and accumulates it against the
//! key while the limb is in cache, so the only batch-sized buffers are the scaled input and
//! the two accumulators, which ModDown then divides in place. The residues are those of the
//! composed switch, which the tests check.

use pimhe_math::simd::elementwise as kernels;
use pimhe_math::Isa;
use pimhe_ring::{PolyBatch, Representation};
use rayon::prelude::*;

use super::{b_chunk, CpuBackend};
use crate::backend::Shape;
use crate::error::{ExecError, Result};
use crate::key_switch::{check, KeySwitchPlan};

impl CpuBackend {
    /// [`crate::Backend::key_switch`], fused; see the module documentation.
    pub(super) fn fused_key_switch(
        &self,
        c: &PolyBatch,
        keys: &[(PolyBatch, PolyBatch)],
        plan: &KeySwitchPlan,
    ) -> Result<(PolyBatch, PolyBatch)> {
        let key_shapes: Vec<(Shape, Shape)> = keys.iter().map(|(b, a)| (Shape::of(b), Shape::of(a))).collect();
        let layout = check(&Shape::of(c), &key_shapes, plan)?;
        let isa = Isa::active();
        let (n, polys, kept) = (c.degree(), c.count(), c.basis().len());
        let extended = plan.extended;
        // Digit j converts to the extended primes outside it.
        let converters = layout
            .digits
            .iter()
            .zip(plan.digits)
            .map(|(range, digit)| {
                let others: Vec<usize> = (0..extended.len()).filter(|limb| !range.contains(limb)).collect();
                self.converter(digit, &*extended.select(&others)?)
            })
            .collect::<Result<Vec<_>>>()?;
        // (digit, position in the digit) of every limb of c.
        let digit_of: Vec<(usize, usize)> = layout
            .digits
            .iter()
            .enumerate()
            .flat_map(|(j, range)| range.clone().map(move |limb| (j, limb - range.start)))
            .collect();

        // FastBConv's first half for every digit at once: c in coefficient form, each limb times
        // (Q_j/q_i)^{-1} of its digit, polynomial-major so each digit of a polynomial is one slice.
        let mut scaled = vec![0u32; polys * kept * n];
        self.pool.install(|| {
            scaled.par_chunks_mut(n).enumerate().try_for_each(|(index, chunk)| {
                let (poly, limb) = (index / kept, index % kept);
                let (j, position) = digit_of[limb];
                chunk.copy_from_slice(c.poly_limb(limb, poly));
                c.basis().table(limb).inverse(chunk);
                converters[j].scale_on(isa, position, chunk)
            })
        })?;

        // ModUp and the inner product with the key, one (polynomial, extended limb) at a time.
        let zeros = || PolyBatch::zeros(extended, polys, Representation::Ntt);
        let (mut acc0, mut acc1) = (zeros(), zeros());
        let mut tasks: Vec<(usize, usize, &mut [u32], &mut [u32])> = acc0
            .data_mut()
            .chunks_mut(n)
            .zip(acc1.data_mut().chunks_mut(n))
            .enumerate()
            .map(|(index, (a0, a1))| (index % polys, index / polys, a0, a1))
            .collect();
        // Polynomial by polynomial, so the scaled digits a thread reads stay in its cache.
        tasks.sort_by_key(|&(poly, limb, ..)| (poly, limb));
        self.pool.install(|| {
            tasks.into_par_iter().try_for_each_init(
                || vec![0u32; n],
                |term, (poly, limb, acc0, acc1)| {
                    let q = extended.modulus(limb);
                    for (j, range) in layout.digits.iter().enumerate() {
                        // The digit's own limbs are c's, already in NTT form.
                        let digit: &[u32] = if range.contains(&limb) {
                            c.poly_limb(limb, poly)
                        } else {
                            let target = if limb < range.start { limb } else { limb - range.len() };
                            let from = (poly * kept + range.start) * n..(poly * kept + range.end) * n;
                            converters[j].accumulate_on(isa, target, &scaled[from], term)?;
                            extended.table(limb).forward(term);
                            term
                        };
                        let ((key_b, key_a), (map_b, map_a)) = (&keys[j], &layout.keys[j]);
                        let (b, a) = (b_chunk(key_b, map_b, limb, poly), b_chunk(key_a, map_a, limb, poly));
                        if j == 0 {
                            kernels::mul(isa, q, acc0, digit, b);
                            kernels::mul(isa, q, acc1, digit, a);
                        } else {
                            kernels::mac(isa, q, acc0, digit, b);
                            kernels::mac(isa, q, acc1, digit, a);
                        }
                    }
                    Ok::<_, ExecError>(())
                },
            )
        })?;
        Ok((
            self.mod_down_owned(acc0, layout.special, plan.plain_modulus)?,
            self.mod_down_owned(acc1, layout.special, plan.plain_modulus)?,
        ))
    }
}
