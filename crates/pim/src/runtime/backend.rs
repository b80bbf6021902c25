//! [`Backend`] for [`PimBackend`]: every operation on its DPU kernel where one exists (through
//! [`super::dispatch`]), the others as counted CPU fallbacks; and the multi-output and
//! multi-command kernels (TENSOR, TENSOR_SQ, CAccum, NTT/INTT) behind them.

use std::sync::Arc;

use pimhe_exec::operands::{
    broadcast, check_constant_terms, check_constants, check_limb_constants, galois_element, require, same_shape,
};
use pimhe_exec::{Backend, CpuBackend, KeySwitchPlan, Shape};
use pimhe_math::Modulus;
use pimhe_ring::{PolyBatch, Representation, RingBasis};

use super::buffer::{LimbPlacement, PimBuffer, Storage};
use super::dispatch::{slices, Route};
use super::queue::{command, CommandExt};
use super::{setup, PimBackend};
use crate::layout::{self, Opcode, PimheCommand};
use crate::model::host::HostWork;

impl Backend for PimBackend {
    type Buffer = PimBuffer;

    fn name(&self) -> &str {
        "upmem-emu"
    }

    fn threads(&self) -> usize {
        self.cpu.threads()
    }

    fn upload(&self, batch: PolyBatch) -> pimhe_exec::Result<PimBuffer> {
        let mut state = self.lock();
        self.push(&mut state, batch)
    }

    fn download(&self, buffer: &PimBuffer) -> pimhe_exec::Result<PolyBatch> {
        let mut state = self.lock();
        self.pull(&mut state, buffer)
    }

    fn shape(&self, buffer: &PimBuffer) -> Shape {
        buffer.shape.clone()
    }

    fn copy(&self, buffer: &PimBuffer) -> pimhe_exec::Result<PimBuffer> {
        self.restrict(buffer, &buffer.shape.basis)
    }

    fn zeroize(&self, buffer: &mut PimBuffer) {
        if let Storage::Host(batch) | Storage::Streamed(batch) = &mut buffer.storage {
            batch.zeroize();
            return;
        }
        if self.zeroize_evicted(buffer) {
            return; // its data is only on the host: no need to push it back to wipe it
        }
        let wiped = self
            .in_place_kernel(
                buffer,
                &[],
                // Multiplying by the constant 0 overwrites every residue on the DPUs.
                |slot, share, offsets| {
                    command(Opcode::MulC, share.len, &[offsets[0]], &[offsets[0]]).scalar(0, &self.primes[slot])
                },
                |_, target, _| {
                    target.zeroize();
                    Ok(())
                },
            )
            .and_then(|_| {
                let mut state = self.lock();
                self.flush(&mut state)
            });
        if wiped.is_err() {
            // This runs from `Drop` (of secrets), so it must not panic, and the secret must not
            // stay readable: see `overwrite_or_retire`.
            self.overwrite_or_retire(buffer);
        }
    }
    fn add(&self, a: &PimBuffer, b: &PimBuffer) -> pimhe_exec::Result<PimBuffer> {
        self.binary_kernel("add", Opcode::Add, a, b, |cpu, x, y| cpu.add(x, y))
    }

    fn add_assign(&self, acc: &mut PimBuffer, b: &PimBuffer) -> pimhe_exec::Result<()> {
        let map = broadcast("add_assign", &acc.shape, &b.shape, false)?;
        self.in_place_kernel(
            acc,
            &[b],
            |_, share, offsets| {
                command(Opcode::Add, share.len, &[offsets[0], offsets[1]], &[offsets[0]]).broadcast_second(map.single)
            },
            |cpu, target, others| cpu.add_assign(target, &others[0]),
        )
    }

    fn sub(&self, a: &PimBuffer, b: &PimBuffer) -> pimhe_exec::Result<PimBuffer> {
        self.binary_kernel("sub", Opcode::Sub, a, b, |cpu, x, y| cpu.sub(x, y))
    }

    fn neg(&self, a: &PimBuffer) -> pimhe_exec::Result<PimBuffer> {
        self.scale(a, &a.shape.basis, |q| q.value() - 1)
    }

    fn mul(&self, a: &PimBuffer, b: &PimBuffer) -> pimhe_exec::Result<PimBuffer> {
        self.binary_kernel("mul", Opcode::Mul, a, b, |cpu, x, y| cpu.mul(x, y))
    }

    fn mac(&self, acc: &mut PimBuffer, a: &PimBuffer, b: &PimBuffer) -> pimhe_exec::Result<()> {
        same_shape("mac", &acc.shape, &a.shape)?;
        let map = broadcast("mac", &a.shape, &b.shape, true)?;
        self.in_place_kernel(
            acc,
            &[a, b],
            |_, share, offsets| {
                command(Opcode::Mac, share.len, &[offsets[1], offsets[2]], &[offsets[0]]).broadcast_second(map.single)
            },
            |cpu, target, others| cpu.mac(target, &others[0], &others[1]),
        )
    }

    fn mul_scalar(&self, a: &PimBuffer, c: u64) -> pimhe_exec::Result<PimBuffer> {
        self.scale(a, &a.shape.basis, |q| q.reduce_u64(c))
    }

    fn tensor(
        &self,
        a0: &PimBuffer,
        a1: &PimBuffer,
        b0: &PimBuffer,
        b1: &PimBuffer,
    ) -> pimhe_exec::Result<[PimBuffer; 3]> {
        require("tensor", &a0.shape, Representation::Ntt)?;
        for other in [a1, b0, b1] {
            same_shape("tensor", &a0.shape, &other.shape)?;
        }
        let operands = [a0, a1, b0, b1];
        match self.route(&operands)? {
            Route::Cpu => {
                let [d0, d1, d2] =
                    self.fallback(&operands, |cpu, host| cpu.tensor(&host[0], &host[1], &host[2], &host[3]))?;
                let mut state = self.lock();
                return Ok([self.push(&mut state, d0)?, self.push(&mut state, d1)?, self.push(&mut state, d2)?]);
            }
            Route::Device(resident) => {
                if let Some(outputs) = self.tensor_on_device(Opcode::Tensor, &a0.shape, &resident.slices())? {
                    return Ok(outputs);
                }
            }
            Route::Rounds => {}
        }
        self.tensor_in_rounds(Opcode::Tensor, &operands)
    }

    fn tensor_square(&self, a0: &PimBuffer, a1: &PimBuffer) -> pimhe_exec::Result<[PimBuffer; 3]> {
        require("tensor_square", &a0.shape, Representation::Ntt)?;
        same_shape("tensor_square", &a0.shape, &a1.shape)?;
        let operands = [a0, a1];
        match self.route(&operands)? {
            Route::Cpu => {
                let [d0, d1, d2] = self.fallback(&operands, |cpu, host| cpu.tensor_square(&host[0], &host[1]))?;
                let mut state = self.lock();
                return Ok([self.push(&mut state, d0)?, self.push(&mut state, d1)?, self.push(&mut state, d2)?]);
            }
            Route::Device(resident) => {
                if let Some(outputs) = self.tensor_on_device(Opcode::TensorSq, &a0.shape, &resident.slices())? {
                    return Ok(outputs);
                }
            }
            Route::Rounds => {}
        }
        self.tensor_in_rounds(Opcode::TensorSq, &operands)
    }

    fn constant_accumulate(
        &self,
        terms: &[(&PimBuffer, &[u64])],
        offset: Option<&[u64]>,
    ) -> pimhe_exec::Result<PimBuffer> {
        check_constant_terms(self, terms, offset)?;
        let operands: Vec<&PimBuffer> = terms.iter().map(|&(a, _)| a).collect();
        let constants: Vec<&[u64]> = terms.iter().map(|&(_, c)| c).collect();
        self.mapped_kernel(
            &operands,
            true,
            |operands| {
                // In rounds, operands are a round's part: its shape, not the whole batch's.
                let placements = operands.iter().map(|b| b.placement()).collect::<pimhe_exec::Result<Vec<_>>>()?;
                self.accumulate_on_device(&operands[0].shape, &slices(&placements), &constants, offset)
            },
            |cpu, host| {
                let terms: Vec<(&PolyBatch, &[u64])> = host.iter().zip(&constants).map(|(a, &c)| (a, c)).collect();
                cpu.constant_accumulate(&terms, offset)
            },
        )
    }

    fn mod_down_epilogue(&self, a: &PimBuffer, b: &PimBuffer, constants: &[u64]) -> pimhe_exec::Result<PimBuffer> {
        check_constants("mod_down_epilogue", &a.shape, constants)?;
        let map = broadcast("mod_down_epilogue", &a.shape, &b.shape, false)?;
        self.mapped_kernel(
            &[a, b],
            true,
            |operands| {
                let (a, b) = (operands[0], operands[1]);
                self.mapped_on_device(&a.shape, &a.placement()?, &[&b.placement()?], |slot, share, offsets, dst| {
                    let q = &self.primes[slot];
                    command(Opcode::SubMulC, share.len, &[offsets[0], offsets[1]], &[dst])
                        .scalar(limb_constant(&a.shape.basis, constants, q), q)
                        .broadcast_second(map.single)
                })
            },
            |cpu, host| cpu.mod_down_epilogue(&host[0], &host[1], constants),
        )
    }

    fn sum(&self, a: &PimBuffer) -> pimhe_exec::Result<PimBuffer> {
        self.sum_buffer(a)
    }

    fn ntt(&self, a: &mut PimBuffer) -> pimhe_exec::Result<()> {
        require("ntt", &a.shape, Representation::Coefficient)?;
        self.transform(a, Opcode::Ntt, Representation::Ntt)
    }

    fn intt(&self, a: &mut PimBuffer) -> pimhe_exec::Result<()> {
        require("intt", &a.shape, Representation::Ntt)?;
        self.transform(a, Opcode::Intt, Representation::Coefficient)
    }

    fn restrict(&self, a: &PimBuffer, target: &Arc<RingBasis>) -> pimhe_exec::Result<PimBuffer> {
        target.limb_positions_in(&a.shape.basis)?;
        if let Storage::Streamed(batch) = &a.storage {
            // Moving residues needs no DPU: a streamed batch is restricted where it lives.
            return Ok(self.on_host(batch.restrict(target)?, Storage::Streamed));
        }
        self.scale(a, target, |_| 1)
    }

    fn base_convert(&self, a: &PimBuffer, target: &Arc<RingBasis>) -> pimhe_exec::Result<PimBuffer> {
        if let Some(out) = self.base_convert_resident(a, a, target, false)? {
            return Ok(out);
        }
        let work = conversion_work(&a.shape, target, false);
        self.conversion_fallback(&[a], work, |cpu, host| cpu.base_convert(&host[0], target))
    }

    fn base_convert_ntt(
        &self,
        a: &PimBuffer,
        a_ntt: &PimBuffer,
        target: &Arc<RingBasis>,
    ) -> pimhe_exec::Result<PimBuffer> {
        if let Some(out) = self.base_convert_resident(a, a_ntt, target, true)? {
            return Ok(out);
        }
        let work = conversion_work(&a.shape, target, true);
        self.conversion_fallback(&[a, a_ntt], work, |cpu, host| cpu.base_convert_ntt(&host[0], &host[1], target))
    }

    fn mod_down_last(&self, a: &PimBuffer, plain_modulus: Option<Modulus>) -> pimhe_exec::Result<PimBuffer> {
        if let Some(out) = self.mod_down_last_resident(a, plain_modulus)? {
            return Ok(out);
        }
        let work = mod_down_work(&a.shape, 1, true);
        self.conversion_fallback(&[a], work, |cpu, host| cpu.mod_down_last(&host[0], plain_modulus))
    }

    fn mul_limb_constants(&self, a: &PimBuffer, constants: &[u64]) -> pimhe_exec::Result<PimBuffer> {
        check_limb_constants(&a.shape, constants)?;
        self.scale(a, &a.shape.basis, |q| limb_constant(&a.shape.basis, constants, q))
    }

    fn mod_down(&self, a: &PimBuffer, count: usize, plain_modulus: Option<Modulus>) -> pimhe_exec::Result<PimBuffer> {
        if let Some(out) = self.mod_down_resident(a, count, plain_modulus)? {
            return Ok(out);
        }
        let work = mod_down_work(&a.shape, count, false);
        self.conversion_fallback(&[a], work, |cpu, host| cpu.mod_down(&host[0], count, plain_modulus))
    }

    fn key_switch(
        &self,
        c: &PimBuffer,
        keys: &[(PimBuffer, PimBuffer)],
        plan: &KeySwitchPlan,
    ) -> pimhe_exec::Result<(PimBuffer, PimBuffer)> {
        if !self.conversions_on_host() {
            return pimhe_exec::key_switch::composed(self, c, keys, plan);
        }
        let key_shapes: Vec<(Shape, Shape)> = keys.iter().map(|(b, a)| (b.shape.clone(), a.shape.clone())).collect();
        pimhe_exec::key_switch::check_operands(&c.shape, &key_shapes, plan)?;
        // The digits of the host's ModUp, then the composed inner product and ModDown: the
        // residues of `composed`, whose steps these are.
        let digits = self.host_mod_up(c, plan)?;
        self.key_switch_decomposed(&digits, keys, None, plan)
    }

    fn mod_up(&self, c: &PimBuffer, plan: &KeySwitchPlan) -> pimhe_exec::Result<Vec<PimBuffer>> {
        if self.conversions_on_host() {
            return self.host_mod_up(c, plan);
        }
        pimhe_exec::key_switch::composed_mod_up(self, c, plan)
    }

    fn automorphism(&self, a: &PimBuffer, k: usize) -> pimhe_exec::Result<PimBuffer> {
        let k = galois_element(&a.shape, k)?;
        let ntt_form = a.shape.representation == Representation::Ntt;
        self.mapped_kernel(
            &[a],
            true,
            |operands| {
                self.mapped_on_device(&operands[0].shape, &operands[0].placement()?, &[], |_, share, offsets, dst| {
                    // k < 2N <= 2^16: a word.
                    PimheCommand::automorphism(dst, offsets[0], k as u32, ntt_form, share.len as u32)
                })
            },
            |cpu, host| cpu.automorphism(&host[0], k),
        )
    }
}

impl PimBackend {
    /// A conversion's CPU fallback ([`Self::fallback_buffer`]), its work also priced by the
    /// host model (the planner's figure; the measured time is the report's other one).
    fn conversion_fallback(
        &self,
        operands: &[&PimBuffer],
        work: HostWork,
        compute: impl FnOnce(&CpuBackend, Vec<PolyBatch>) -> pimhe_exec::Result<PolyBatch>,
    ) -> pimhe_exec::Result<PimBuffer> {
        let out = self.fallback_buffer(operands, compute)?;
        let mut state = self.lock();
        state.report.host_fallback_modeled_s += self.config.host.seconds(&work, self.n);
        self.check_budget(&state)?;
        Ok(out)
    }

    /// The TENSOR (four operands) or TENSOR_SQ (two) kernel on resident operands; `None` when
    /// its three outputs do not fit.
    fn tensor_on_device(
        &self,
        opcode: Opcode,
        shape: &Shape,
        operands: &[&[LimbPlacement]],
    ) -> pimhe_exec::Result<Option<[PimBuffer; 3]>> {
        let mut state = self.lock();
        let Some(outputs) = self.allocate_all(&mut state, &[shape; 3])? else { return Ok(None) };
        self.emit(&mut state, operands[0], &operands[1..], |limb, index, share, offsets| {
            let dst: Vec<u32> = outputs.iter().map(|o| o[limb].shares[index].1 as u32).collect();
            command(opcode, share.len, offsets, &dst)
        })?;
        drop(state);
        let [d0, d1, d2]: [Vec<LimbPlacement>; 3] = outputs.try_into().expect("three outputs");
        Ok(Some([d0, d1, d2].map(|d| self.device_buffer(shape.clone(), d))))
    }

    /// [`Self::tensor_on_device`] over streamed operands, in rounds.
    fn tensor_in_rounds(&self, opcode: Opcode, operands: &[&PimBuffer]) -> pimhe_exec::Result<[PimBuffer; 3]> {
        let outputs = self.in_rounds(operands, 3, |round| {
            let placements = round.iter().map(PimBuffer::placement).collect::<pimhe_exec::Result<Vec<_>>>()?;
            let outputs = self.tensor_on_device(opcode, &round[0].shape, &slices(&placements))?;
            Ok(outputs.map(Vec::from).unwrap_or_default())
        })?;
        let [d0, d1, d2]: [PolyBatch; 3] =
            outputs.try_into().map_err(|_| setup("internal: a tensor round did not fit".into()))?;
        Ok([d0, d1, d2].map(|d| self.on_host(d, Storage::Streamed)))
    }

    /// CAccum on resident terms: per (limb, share) of the new accumulator, MULC of the first
    /// term, CMAC of every further one and, for a nonzero offset, CADD in place, all queued in
    /// order on the share's DPU: one launch (unless the command list fills), the accumulator
    /// resident throughout. `None` when the accumulator does not fit.
    fn accumulate_on_device(
        &self,
        shape: &Shape,
        terms: &[&[LimbPlacement]],
        constants: &[&[u64]],
        offset: Option<&[u64]>,
    ) -> pimhe_exec::Result<Option<PimBuffer>> {
        let basis = &shape.basis;
        let mut state = self.lock();
        let Some(out) = self.allocate_output(&mut state, shape)? else { return Ok(None) };
        for (j, (term, constants)) in terms.iter().zip(constants).enumerate() {
            // offsets = [the accumulator's, the term's] on the share's DPU.
            self.emit(&mut state, &out, &[*term], |limb, _, share, offsets| {
                let q = &self.primes[out[limb].slot];
                let opcode = if j == 0 { Opcode::MulC } else { Opcode::CMac };
                command(opcode, share.len, &[offsets[1]], &[offsets[0]]).scalar(limb_constant(basis, constants, q), q)
            })?;
        }
        let offset = offset.filter(|c| c.iter().zip(basis.primes()).any(|(&c, p)| c % u64::from(p) != 0));
        if let Some(offset) = offset {
            let ntt_form = shape.representation == Representation::Ntt;
            self.emit(&mut state, &out, &[], |limb, _, share, offsets| {
                let q = &self.primes[out[limb].slot];
                let mut add = command(Opcode::CAdd, share.len, &[offsets[0]], &[offsets[0]])
                    .scalar(limb_constant(basis, offset, q), q);
                if ntt_form {
                    add.flags |= layout::FLAG_NTT_FORM;
                }
                add
            })?;
        }
        drop(state);
        Ok(Some(self.device_buffer(shape.clone(), out)))
    }

    fn transform(&self, a: &mut PimBuffer, opcode: Opcode, to: Representation) -> pimhe_exec::Result<()> {
        self.in_place_kernel(
            a,
            &[],
            |_, share, offsets| command(opcode, share.len, &[offsets[0]], &[]),
            |cpu, target, _| if opcode == Opcode::Ntt { cpu.ntt(target) } else { cpu.intt(target) },
        )?;
        a.shape.representation = to;
        if let Storage::Streamed(batch) = &mut a.storage {
            batch.set_representation(to); // its rounds ran the kernels on copies
        }
        Ok(())
    }
}

/// The constant of `q`'s limb among `constants` (one per limb of `basis`, which holds `q` once),
/// reduced modulo `q`: the scalar kernels take one constant per prime.
fn limb_constant(basis: &RingBasis, constants: &[u64], q: &Modulus) -> u32 {
    let limb = basis.primes().iter().position(|&p| p == q.value()).expect("a prime of the operand's basis");
    q.reduce_u64(constants[limb])
}

/// The host's work in FastBConv from `a` onto `target` (the new limbs transformed when
/// `transform`): each source limb scaled, then one product per source limb and new limb.
pub(super) fn conversion_work(a: &Shape, target: &RingBasis, transform: bool) -> HostWork {
    let from = a.basis.primes();
    let new = target.primes().iter().filter(|p| !from.contains(p)).count() as u64;
    let (limbs, polys) = (from.len() as u64, a.count as u64);
    let n = a.basis.degree() as u64;
    HostWork { transforms: if transform { polys * new } else { 0 }, products: polys * n * limbs * (1 + new) }
}

/// The host's work in dividing `a` by its last `count` primes (`mod_down`; `mod_down_last` is
/// `count` 1): the dropped limbs scaled and (in NTT form) inverse-transformed, one product per
/// dropped and kept limb, the kept limbs' corrections transformed back and subtracted.
fn mod_down_work(a: &Shape, count: usize, last: bool) -> HostWork {
    let limbs = a.basis.len() as u64;
    let dropped = (count as u64).min(limbs);
    let kept = limbs - dropped;
    let (polys, n) = (a.count as u64, a.basis.degree() as u64);
    let ntt = a.representation == Representation::Ntt;
    // DIVIDE_LAST folds the scaling into its one product per kept limb.
    let scalings = if last { 0 } else { dropped };
    HostWork {
        transforms: if ntt { polys * (dropped + kept) } else { 0 },
        products: polys * n * (scalings + dropped * kept + kept),
    }
}
