//! The CPU's fused hybrid key switch ([`crate::Backend::key_switch`]) and its two halves for
//! hoisting ([`crate::Backend::mod_up`], [`crate::Backend::key_switch_decomposed`]).
//!
//! The composed switch ([`crate::key_switch::composed`]) makes every digit's ModUp a batch over
//! the whole extended basis, then multiplies and accumulates those batches with the key and
//! divides the two sums by P: each step streams megabytes through memory and allocates a fresh
//! batch. Here each (polynomial, extended prime) pair is one task that converts one digit at a
//! time to that prime (from the digits' scaled residues, kept per polynomial), transforms it
//! and accumulates it against the key while the limb is in cache, and ModDown takes the sums
//! there too ([`Division`], the steps of [`crate::Backend::mod_down`]): a special prime's sums
//! become its scaled residues in place, a kept prime's are divided straight into the quotients
//! (`CpuBackend::divided_sums`). The only batch-sized buffers are the scaled input, the scaled
//! special sums and the two quotients. The residues are those of the composed switch, which
//! the tests check.
//!
//! Hoisting needs the extended digits themselves (they are shared by several keys), so
//! [`CpuBackend::fused_mod_up`] writes them out, from the same scaled residues ([`ModUp`]) in one
//! parallel pass. [`CpuBackend::fused_key_switch_decomposed`] then works as the fused switch
//! does, one (polynomial, extended prime) task at a time and ModDown on the way, except that
//! each digit's limb is gathered through the automorphism's slot permutation (NTT form: no
//! arithmetic) into a cache-resident scratch limb instead of being converted: per rotation no
//! batch is allocated but the quotients and the scaled special sums, and no digit is read twice.

use std::ops::Range;
use std::sync::Arc;

use pimhe_math::simd::elementwise as kernels;
use pimhe_math::{BaseConverter, Isa, Modulus};
use pimhe_ring::{recycle, GaloisPermutation, PolyBatch, Representation, RingBasis};
use rayon::prelude::*;

use super::division::Division;
use super::{b_chunk, CpuBackend};
use crate::backend::Shape;
use crate::error::Result;
use crate::key_switch::{check, check_decomposed, check_mod_up, KeySwitchLayout, KeySwitchPlan};
use crate::operands::galois_element;

/// ModUp's key-independent state for one input `c`: FastBConv's first half for every digit at
/// once, from which any (digit, polynomial, extended limb) is one accumulation and one NTT.
struct ModUp<'a> {
    c: &'a PolyBatch,
    extended: &'a RingBasis,
    /// The input's limbs of each digit.
    digits: &'a [Range<usize>],
    /// Digit j's converter to the extended primes outside it.
    converters: Vec<Arc<BaseConverter>>,
    /// c in coefficient form, each limb times (Q_j/q_i)^{-1} of its digit, polynomial-major so
    /// each digit of a polynomial is one slice.
    scaled: Vec<u32>,
    isa: Isa,
}

impl<'a> ModUp<'a> {
    /// Scales every limb of `c` (NTT form), in parallel on `backend`'s pool.
    fn new(
        backend: &CpuBackend,
        c: &'a PolyBatch,
        layout: &'a KeySwitchLayout,
        plan: &'a KeySwitchPlan,
    ) -> Result<Self> {
        let isa = Isa::active();
        let (n, kept) = (c.degree(), c.basis().len());
        let extended: &RingBasis = plan.extended;
        let converters = layout
            .digits
            .iter()
            .zip(plan.digits)
            .map(|(range, digit)| {
                let others: Vec<usize> = (0..extended.len()).filter(|limb| !range.contains(limb)).collect();
                backend.converter(digit, &*extended.select(&others)?)
            })
            .collect::<Result<Vec<_>>>()?;
        // (digit, position in the digit) of every limb of c.
        let digit_of: Vec<(usize, usize)> = layout
            .digits
            .iter()
            .enumerate()
            .flat_map(|(j, range)| range.clone().map(move |limb| (j, limb - range.start)))
            .collect();
        let mut scaled = vec![0u32; c.count() * kept * n];
        backend.pool.install(|| {
            scaled.par_chunks_mut(n).enumerate().try_for_each(|(index, chunk)| {
                let (poly, limb) = (index / kept, index % kept);
                let (j, position) = digit_of[limb];
                chunk.copy_from_slice(c.poly_limb(limb, poly));
                c.basis().table(limb).inverse(chunk);
                converters[j].scale_on(isa, position, chunk)
            })
        })?;
        Ok(Self { c, extended, digits: &layout.digits, converters, scaled, isa })
    }

    /// Digit j of polynomial `poly` on extended limb `limb` when the digit holds that limb's
    /// prime: exactly c's residues there (FastBConv adds a multiple of Q_j, zero modulo them).
    fn own(&self, j: usize, limb: usize, poly: usize) -> Option<&'a [u32]> {
        self.digits[j].contains(&limb).then(|| self.c.poly_limb(limb, poly))
    }

    /// Digit j of polynomial `poly` converted to extended limb `limb` (one outside the digit),
    /// NTT form, into `out`.
    fn convert(&self, j: usize, limb: usize, poly: usize, out: &mut [u32]) -> Result<()> {
        let (n, kept, range) = (out.len(), self.c.basis().len(), &self.digits[j]);
        let target = if limb < range.start { limb } else { limb - range.len() };
        let from = (poly * kept + range.start) * n..(poly * kept + range.end) * n;
        self.converters[j].accumulate_on(self.isa, target, &self.scaled[from], out)?;
        self.extended.table(limb).forward(out);
        Ok(())
    }
}

/// In which order the tasks of an inner product run (rayon hands them out roughly in order).
#[derive(Clone, Copy)]
enum Order {
    /// Polynomial by polynomial: what a task derives from its polynomial (the fused switch's
    /// scaled digits) stays in cache for the next limb.
    ByPolynomial,
    /// Limb by limb: a key broadcast over the batch is read from memory once per limb rather
    /// than once per polynomial (per rotation it is the largest operand: dnum x 2 x (L + k)
    /// limbs).
    ByLimb,
}

/// One task of an inner product: (poly, limb, chunk of sum 0, chunk of sum 1).
type Task<'a> = (usize, usize, &'a mut [u32], &'a mut [u32]);

/// The tasks over every `n`-residue chunk of two sums, chunk `index` being (polynomial, limb)
/// `at(index)`, in `order`.
fn tasks<'a>(
    [sum0, sum1]: [&'a mut [u32]; 2],
    n: usize,
    at: impl Fn(usize) -> (usize, usize),
    order: Order,
) -> Vec<Task<'a>> {
    let mut tasks: Vec<Task<'a>> = sum0
        .chunks_mut(n)
        .zip(sum1.chunks_mut(n))
        .enumerate()
        .map(|(index, (a0, a1))| {
            let (poly, limb) = at(index);
            (poly, limb, a0, a1)
        })
        .collect();
    match order {
        Order::ByPolynomial => tasks.sort_by_key(|&(poly, limb, ..)| (poly, limb)),
        Order::ByLimb => tasks.sort_by_key(|&(poly, limb, ..)| (limb, poly)),
    }
    tasks
}

/// The inner product with a key, one chunk at a time.
struct InnerProduct<'a> {
    isa: Isa,
    layout: &'a KeySwitchLayout,
    keys: &'a [(PolyBatch, PolyBatch)],
}

impl InnerProduct<'_> {
    /// `(acc0, acc1) (+)= digit * (b_j, a_j)` on chunk (limb, poly) of the extended basis; the
    /// product starts the sums at j = 0.
    fn add(
        &self,
        j: usize,
        (poly, limb): (usize, usize),
        q: &Modulus,
        acc0: &mut [u32],
        acc1: &mut [u32],
        digit: &[u32],
    ) {
        let ((key_b, key_a), (map_b, map_a)) = (&self.keys[j], &self.layout.keys[j]);
        let (b, a) = (b_chunk(key_b, map_b, limb, poly), b_chunk(key_a, map_a, limb, poly));
        if j == 0 {
            kernels::mul(self.isa, q, acc0, digit, b);
            kernels::mul(self.isa, q, acc1, digit, a);
        } else {
            kernels::mac(self.isa, q, acc0, digit, b);
            kernels::mac(self.isa, q, acc1, digit, a);
        }
    }
}

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
        let mod_up = ModUp::new(self, c, &layout, plan)?;
        let product = InnerProduct { isa: mod_up.isa, layout: &layout, keys };
        let division = Division::new(self, plan.extended, layout.special, plan.plain_modulus, Representation::Ntt)?;
        // ModUp and the inner product with the key on one (polynomial, extended limb).
        let sums = |term: &mut [u32], poly: usize, limb: usize, acc0: &mut [u32], acc1: &mut [u32]| {
            let q = plan.extended.modulus(limb);
            for j in 0..layout.digits.len() {
                let digit: &[u32] = match mod_up.own(j, limb, poly) {
                    Some(own) => own,
                    None => {
                        mod_up.convert(j, limb, poly, term)?;
                        term
                    }
                };
                product.add(j, (poly, limb), q, acc0, acc1, digit);
            }
            Ok(())
        };
        self.divided_sums(c.count(), &division, Order::ByPolynomial, sums)
    }

    /// The two sums of an inner product, `sums(term, poly, limb, acc0, acc1)` writing every
    /// residue of both on chunk (poly, limb) of the extended basis (`term`: one limb of
    /// scratch), divided by P as they are made ([`Division`]), so no sum over the whole
    /// extended basis is ever held: the special primes' chunks first, each made into ModDown's
    /// scaled residues while in cache (polynomial-major, as the division reads them), then the
    /// kept primes' chunks, each divided into the quotient right after its sums, which a kept
    /// chunk can only be once all of its polynomial's scaled residues are made.
    fn divided_sums<S>(
        &self,
        polys: usize,
        division: &Division,
        order: Order,
        sums: S,
    ) -> Result<(PolyBatch, PolyBatch)>
    where
        S: Fn(&mut [u32], usize, usize, &mut [u32], &mut [u32]) -> Result<()> + Sync,
    {
        let (n, kept) = (division.target.degree(), division.kept());
        let count = division.count();
        let mut scaled = [vec![0u32; polys * count * n], vec![0u32; polys * count * n]];
        let [scaled0, scaled1] = &mut scaled;
        let special = tasks([scaled0, scaled1], n, |index| (index / count, kept + index % count), order);
        self.pool.install(|| {
            special.into_par_iter().try_for_each_init(
                || vec![0u32; n],
                |term, (poly, limb, acc0, acc1)| {
                    sums(term, poly, limb, acc0, acc1)?;
                    division.scale(limb - kept, acc0)?;
                    division.scale(limb - kept, acc1)
                },
            )
        })?;
        let [scaled0, scaled1] = &scaled;
        let of_poly = |poly: usize| poly * count * n..(poly + 1) * count * n;
        // The quotients are fully written: each chunk by the division of its sums.
        let len = kept * polys * n;
        // From the buffer pool: at N = 2^16, batch 8 each is over 100 MB, which glibc would map
        // afresh on every call.
        let (mut out0, mut out1) = (recycle::take_zeroed(len), recycle::take_zeroed(len));
        let kept_tasks = tasks([&mut out0, &mut out1], n, |index| (index % polys, index / polys), order);
        self.pool.install(|| {
            kept_tasks.into_par_iter().try_for_each_init(
                || (vec![0u32; n], vec![0u32; n]),
                |(term, delta), (poly, limb, acc0, acc1)| {
                    sums(term, poly, limb, acc0, acc1)?;
                    division.divide(limb, acc0, &scaled0[of_poly(poly)], delta)?;
                    division.divide(limb, acc1, &scaled1[of_poly(poly)], delta)
                },
            )
        })?;
        let quotient = |data| PolyBatch::from_reduced_data(&division.target, polys, Representation::Ntt, data);
        Ok((quotient(out0)?, quotient(out1)?))
    }

    /// [`crate::Backend::mod_up`], fused: every (digit, extended limb, polynomial) chunk of the
    /// output is one task, converted and transformed from the shared scaled residues.
    pub(super) fn fused_mod_up(&self, c: &PolyBatch, plan: &KeySwitchPlan) -> Result<Vec<PolyBatch>> {
        let layout = check_mod_up(&Shape::of(c), plan)?;
        let mod_up = ModUp::new(self, c, &layout, plan)?;
        let (n, polys) = (c.degree(), c.count());
        let mut digits: Vec<PolyBatch> =
            plan.digits.iter().map(|_| PolyBatch::zeros(plan.extended, polys, Representation::Ntt)).collect();
        let mut chunks: Vec<(usize, usize, usize, &mut [u32])> = digits
            .iter_mut()
            .enumerate()
            .flat_map(|(j, digit)| {
                digit
                    .data_mut()
                    .chunks_mut(n)
                    .enumerate()
                    .map(move |(index, chunk)| (index % polys, j, index / polys, chunk))
            })
            .collect();
        // Polynomial by polynomial, so its scaled residues stay in cache.
        chunks.sort_by_key(|&(poly, j, limb, _)| (poly, j, limb));
        self.pool.install(|| {
            chunks.into_par_iter().try_for_each(|(poly, j, limb, chunk)| match mod_up.own(j, limb, poly) {
                Some(own) => {
                    chunk.copy_from_slice(own);
                    Ok(())
                }
                None => mod_up.convert(j, limb, poly, chunk),
            })
        })?;
        Ok(digits)
    }

    /// [`crate::Backend::key_switch_decomposed`], fused; see the module documentation.
    pub(super) fn fused_key_switch_decomposed(
        &self,
        digits: &[PolyBatch],
        keys: &[(PolyBatch, PolyBatch)],
        element: Option<usize>,
        plan: &KeySwitchPlan,
    ) -> Result<(PolyBatch, PolyBatch)> {
        let (layout, permutation) = self.check_decomposed(digits, keys, element, plan)?;
        let division = Division::new(self, plan.extended, layout.special, plan.plain_modulus, Representation::Ntt)?;
        let product = InnerProduct { isa: Isa::active(), layout: &layout, keys };
        let sums = mapped_sums(digits, permutation.as_deref(), &product, plan.extended);
        self.divided_sums(digits[0].count(), &division, Order::ByLimb, sums)
    }

    /// [`crate::Backend::key_switch_decomposed_lazy`], fused: the inner product of
    /// [`CpuBackend::fused_key_switch_decomposed`] without its ModDown, over the extended basis.
    pub(super) fn fused_key_switch_decomposed_lazy(
        &self,
        digits: &[PolyBatch],
        keys: &[(PolyBatch, PolyBatch)],
        element: Option<usize>,
        plan: &KeySwitchPlan,
    ) -> Result<(PolyBatch, PolyBatch)> {
        let (layout, permutation) = self.check_decomposed(digits, keys, element, plan)?;
        let product = InnerProduct { isa: Isa::active(), layout: &layout, keys };
        let sums = mapped_sums(digits, permutation.as_deref(), &product, plan.extended);
        let (n, polys) = (plan.extended.degree(), digits[0].count());
        let zeros = || PolyBatch::zeros(plan.extended, polys, Representation::Ntt);
        let (mut sum0, mut sum1) = (zeros(), zeros());
        let all = tasks([sum0.data_mut(), sum1.data_mut()], n, |index| (index % polys, index / polys), Order::ByLimb);
        self.pool.install(|| {
            all.into_par_iter().try_for_each_init(
                || vec![0u32; n],
                |term, (poly, limb, acc0, acc1)| sums(term, poly, limb, acc0, acc1),
            )
        })?;
        Ok((sum0, sum1))
    }

    /// The checks of the decomposed switch's operands, and the permutation of X -> X^k for
    /// `element` (none for the identity, k = 1: the digits are used where they are).
    fn check_decomposed(
        &self,
        digits: &[PolyBatch],
        keys: &[(PolyBatch, PolyBatch)],
        element: Option<usize>,
        plan: &KeySwitchPlan,
    ) -> Result<(KeySwitchLayout, Option<Arc<GaloisPermutation>>)> {
        let digit_shapes: Vec<Shape> = digits.iter().map(Shape::of).collect();
        let key_shapes: Vec<(Shape, Shape)> = keys.iter().map(|(b, a)| (Shape::of(b), Shape::of(a))).collect();
        let layout = check_decomposed(&digit_shapes, &key_shapes, plan)?;
        let permutation = element
            .map(|k| galois_element(&digit_shapes[0], k))
            .transpose()?
            .filter(|&k| k != 1)
            .map(|k| self.permutation(plan.extended.degree(), k, Representation::Ntt))
            .transpose()?;
        Ok((layout, permutation))
    }
}

/// The inner product of the decomposed digits, each limb mapped by `permutation` into cache
/// (the `term` scratch), with the key's pairs, as `sums(term, poly, limb, acc0, acc1)` of
/// [`CpuBackend::divided_sums`].
fn mapped_sums<'a>(
    digits: &'a [PolyBatch],
    permutation: Option<&'a GaloisPermutation>,
    product: &'a InnerProduct<'a>,
    extended: &'a RingBasis,
) -> impl Fn(&mut [u32], usize, usize, &mut [u32], &mut [u32]) -> Result<()> + Sync + 'a {
    move |term, poly, limb, acc0, acc1| {
        let q = extended.modulus(limb);
        for (j, digit) in digits.iter().enumerate() {
            let limb_residues = digit.poly_limb(limb, poly);
            let mapped: &[u32] = match permutation {
                Some(permutation) => {
                    permutation.apply(q, term, limb_residues);
                    term
                }
                None => limb_residues,
            };
            product.add(j, (poly, limb), q, acc0, acc1, mapped);
        }
        Ok(())
    }
}
