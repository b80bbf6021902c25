//! The CPU's fused BEHZ product ([`crate::Backend::behz_multiply`], [`crate::Backend::behz_square`]).
//!
//! The composed product ([`crate::behz::composed`]) makes every step a batch-wide call: about
//! sixty of them, each streaming its operands through memory and allocating its output (at
//! N = 8192, batch 1, a third of the main thread's time went to allocating and copying). Here
//! the product runs in five passes, each parallel over (polynomial, limb) tasks that work on
//! one limb in cache from start to end:
//!
//! 1. per operand, polynomial and q limb: inverse NTT, times m~, FastBConv's first half toward
//!    Bsk u {m~}; per polynomial and q limb, the tensor product in q, inverse NTT, times t and
//!    FastBConv's first half toward Bsk (the fast floor's conversion);
//! 2. per operand and polynomial: the Montgomery quotient r (the m~ limb of the conversion);
//! 3. per polynomial and Bsk limb: each operand's extension to that limb (conversion, Montgomery
//!    correction, NTT), the tensor product there, inverse NTT and the fast floor, and
//!    FastBConv's first half from B (Shenoy-Kumaresan);
//! 4. per part and polynomial: Shenoy-Kumaresan's overflow alpha (the m_sk limb);
//! 5. per polynomial and q limb: the conversion from B to that limb, alpha's correction and the
//!    NTT, written into the output.
//!
//! Only the scaled residues that cross a pass are kept in memory, each allocated once per call.
//! The arithmetic is the composed product's, step for step on the same exact residues, so the
//! results are identical (the tests check it on every instruction set).

use pimhe_math::modular::csub;
use pimhe_math::simd::elementwise as kernels;
use pimhe_math::{Isa, Modulus};
use pimhe_ring::{PolyBatch, Representation};

use super::fresh::Start;
use super::{pool, CpuBackend};
use crate::behz::{operands, BehzPlan};
use crate::error::Result;

/// `dst = src mod p` for residues `src` modulo the prime `from`: FastBConv from the one-prime
/// base {from} (the representative in [0, from), reduced). One conditional subtraction where
/// `from < 2p` (primes of one size, as BFV's), a full reduction otherwise.
fn lift(p: &Modulus, from: u32, src: &[u32], dst: &mut [u32]) {
    if u64::from(from) <= 2 * u64::from(p.value()) {
        dst.iter_mut().zip(src).for_each(|(d, &x)| *d = csub(x, p.value()));
    } else {
        dst.iter_mut().zip(src).for_each(|(d, &x)| *d = p.reduce_u64(x.into()));
    }
}

/// What a pass-3 task keeps in cache: each operand's extended limb, the three tensor parts and
/// one converted limb.
struct Limbs {
    extended: Vec<u32>,
    tensor: Vec<u32>,
    converted: Vec<u32>,
}

impl CpuBackend {
    /// BEHZ's product of `a` and `b` (`None`: `a` squared), fused; see the module documentation.
    pub(super) fn fused_behz(
        &self,
        plan: &BehzPlan,
        a: [&PolyBatch; 2],
        b: Option<[&PolyBatch; 2]>,
    ) -> Result<[PolyBatch; 3]> {
        let inputs = operands(self, plan, a, b)?;
        let isa = Isa::active();
        let (q, bsk) = (plan.q(), plan.bsk());
        let (n, count, l, k) = (q.degree(), a[0].count(), q.len(), bsk.len());
        let (mtilde, msk) = (*plan.mtilde().modulus(0), *plan.msk().modulus(0));
        let extension = self.converter(q, plan.bsk_mtilde())?;
        let floor = self.converter(q, bsk)?;
        let shenoy_kumaresan = self.converter(plan.b(), plan.q_msk())?;
        // Polynomial `poly`'s slice of a polynomial-major intermediate of `limbs` limbs.
        let slice = |poly: usize, limbs: usize| (poly * limbs * n)..((poly + 1) * limbs * n);

        // Pass 1: each operand's limbs scaled for the extension ([operand][poly][limb]), and the
        // tensor in q scaled for the fast floor (per part, [poly][limb]).
        let extension_scaled = self.fresh_data(
            inputs.len() * count * l * n,
            n,
            Start::Zeros,
            pool::TRANSFORM + 2 * pool::ELEMENTWISE,
            || (),
            |_, index, chunk| {
                let (input, poly, limb) = (index / (count * l), index / l % count, index % l);
                let qi = q.modulus(limb);
                chunk.copy_from_slice(inputs[input].poly_limb(limb, poly));
                q.table(limb).inverse(chunk);
                kernels::mul_scalar(isa, qi, chunk, qi.reduce_u64(plan.mtilde_value));
                extension.scale_on(isa, limb, chunk)
            },
        )?;
        let floor_scaled = self.fresh_triple(
            count * l * n,
            n,
            3 * (pool::TRANSFORM + 3),
            || (),
            |_, index, [d0, d1, d2]| {
                let (poly, limb) = (index / l, index % l);
                let qi = q.modulus(limb);
                let x = [a[0].poly_limb(limb, poly), a[1].poly_limb(limb, poly)];
                match b {
                    Some(b) => kernels::tensor(
                        isa,
                        qi,
                        [&mut *d0, &mut *d1, &mut *d2],
                        x,
                        [b[0].poly_limb(limb, poly), b[1].poly_limb(limb, poly)],
                    ),
                    None => kernels::tensor_square(isa, qi, [&mut *d0, &mut *d1, &mut *d2], x),
                }
                for d in [d0, d1, d2] {
                    q.table(limb).inverse(d);
                    kernels::mul_scalar(isa, qi, d, qi.reduce_u64(plan.t));
                    floor.scale_on(isa, limb, d)?;
                }
                Ok::<_, pimhe_math::MathError>(())
            },
        )?;

        // Pass 2: r = -x' q^{-1} mod m~ per operand and polynomial ([operand][poly]).
        let r = self.fresh_data(
            inputs.len() * count * n,
            n,
            Start::Zeros,
            l + 1,
            || (),
            |_, index, chunk| {
                extension.accumulate_on(isa, k, &extension_scaled[slice(index, l)], chunk)?;
                kernels::mul_scalar(isa, &mtilde, chunk, mtilde.reduce_u64(plan.neg_q_inv_mtilde));
                Ok::<_, pimhe_math::MathError>(())
            },
        )?;

        // Pass 3: per polynomial and Bsk limb, the extensions, the tensor, the fast floor; the
        // B limbs scaled for Shenoy-Kumaresan (per part, [poly][Bsk limb]).
        let init = || Limbs { extended: vec![0; inputs.len() * n], tensor: vec![0; 3 * n], converted: vec![0; n] };
        let cost = inputs.len() * (l + pool::TRANSFORM + 3) + 3 * (l + pool::TRANSFORM + 3);
        let floored = self.fresh_triple(count * k * n, n, cost, init, |limbs, index, out| {
            let Limbs { extended, tensor, converted } = limbs;
            let (poly, j) = (index / k, index % k);
            let p = bsk.modulus(j);
            let table = bsk.table(j);
            let (mtilde_inv, q_mtilde_inv) =
                (p.reduce_u64(plan.mtilde_inv_bsk[j]), p.reduce_u64(plan.q_mtilde_inv_bsk[j]));
            for (input, limb) in extended.chunks_mut(n).enumerate() {
                let at = input * count + poly;
                extension.accumulate_on(isa, j, &extension_scaled[slice(at, l)], limb)?;
                kernels::mul_scalar(isa, p, limb, mtilde_inv);
                lift(p, mtilde.value(), &r[at * n..(at + 1) * n], converted);
                kernels::mac_scalar(isa, p, limb, converted, q_mtilde_inv);
                table.forward(limb);
            }
            let operand = |input: usize| &extended[input * n..(input + 1) * n];
            let (d0, rest) = tensor.split_at_mut(n);
            let (d1, d2) = rest.split_at_mut(n);
            if b.is_some() {
                kernels::tensor(
                    isa,
                    p,
                    [&mut *d0, &mut *d1, &mut *d2],
                    [operand(0), operand(1)],
                    [operand(2), operand(3)],
                );
            } else {
                kernels::tensor_square(isa, p, [&mut *d0, &mut *d1, &mut *d2], [operand(0), operand(1)]);
            }
            let q_inv = p.reduce_u64(plan.q_inv_bsk[j]);
            for ((d, f), scaled) in [d0, d1, d2].into_iter().zip(out).zip(&floor_scaled) {
                table.inverse(d);
                kernels::mul_scalar(isa, p, d, p.reduce_u64(plan.t));
                floor.accumulate_on(isa, j, &scaled[slice(poly, l)], converted)?;
                kernels::sub_mul_scalar(isa, p, f, d, converted, q_inv);
                if j + 1 < k {
                    shenoy_kumaresan.scale_on(isa, j, f)?;
                }
            }
            Ok::<_, pimhe_math::MathError>(())
        })?;

        // Pass 4: alpha = (FastBConv(x, B, m_sk) - x_msk) M_B^{-1} mod m_sk per part and
        // polynomial ([part][poly]).
        let b_limbs = |poly: usize| poly * k * n..(poly * k + k - 1) * n;
        let alpha = self.fresh_data(
            3 * count * n,
            n,
            Start::Zeros,
            k,
            || vec![0; n],
            |converted, index, chunk| {
                let (part, poly) = (&floored[index / count], index % count);
                shenoy_kumaresan.accumulate_on(isa, l, &part[b_limbs(poly)], converted)?;
                kernels::sub(isa, &msk, chunk, converted, &part[(poly * k + k - 1) * n..(poly + 1) * k * n]);
                kernels::mul_scalar(isa, &msk, chunk, msk.reduce_u64(plan.mb_inv_msk));
                Ok::<_, pimhe_math::MathError>(())
            },
        )?;

        // Pass 5: FastBConv(x, B, q) - alpha M_B, NTT form, into the outputs ([limb][poly]).
        let cost = 3 * (k + pool::TRANSFORM + 2);
        let parts = self.fresh_triple(
            l * count * n,
            n,
            cost,
            || vec![0; n],
            |lifted, index, out| {
                let (limb, poly) = (index / count, index % count);
                let qi = q.modulus(limb);
                let neg_mb = qi.reduce_u64(plan.neg_mb_q[limb]);
                for (part, (chunk, floored)) in out.into_iter().zip(&floored).enumerate() {
                    shenoy_kumaresan.accumulate_on(isa, limb, &floored[b_limbs(poly)], chunk)?;
                    let at = part * count + poly;
                    lift(qi, msk.value(), &alpha[at * n..(at + 1) * n], lifted);
                    kernels::mac_scalar(isa, qi, chunk, lifted, neg_mb);
                    q.table(limb).forward(chunk);
                }
                Ok::<_, pimhe_math::MathError>(())
            },
        )?;
        let batch = |data| PolyBatch::from_reduced_data(q, count, Representation::Ntt, data);
        let [d0, d1, d2] = parts;
        Ok([batch(d0)?, batch(d1)?, batch(d2)?])
    }
}
