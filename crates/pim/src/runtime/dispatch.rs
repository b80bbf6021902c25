//! Where an operation runs: on the DPU kernels when its operands are resident (pushed back first
//! if evicted, [`super::residency`]), in rounds when one is streamed ([`super::rounds`]) or they
//! do not fit in MRAM together, and on the CPU backend (a counted fallback) when one lies over
//! primes the DPUs do not serve; the shared shapes of the `Backend` methods (one new output, an
//! element-wise binary kernel, an in-place kernel, a scaling).

use std::sync::Arc;
use std::time::Instant;

use pimhe_exec::operands::broadcast;
use pimhe_exec::{CpuBackend, Shape};
use pimhe_math::Modulus;
use pimhe_ring::{PolyBatch, RingBasis};

use super::buffer::{LimbPlacement, PimBuffer, Storage};
use super::placement::Share;
use super::queue::{command, CommandExt};
use super::residency::Resident;
use super::{PimBackend, State};
use crate::layout::{Opcode, PimheCommand};

/// Where an operation runs, given where its operands live.
pub(super) enum Route {
    /// All operands resident (and pinned while this lives): the DPU kernels run on their
    /// placements.
    Device(Resident),
    /// An operand over unserved primes: the CPU backend runs.
    Cpu,
    /// An operand too large for MRAM, or all of them together: the DPUs run in rounds.
    Rounds,
}

impl PimBackend {
    /// Runs an operation on the CPU backend: pulls the device operands, computes, pushes the
    /// result back. The transfers and the host time are counted.
    pub(super) fn fallback<T>(
        &self,
        operands: &[&PimBuffer],
        compute: impl FnOnce(&CpuBackend, Vec<PolyBatch>) -> pimhe_exec::Result<T>,
    ) -> pimhe_exec::Result<T> {
        let host = {
            let mut state = self.lock();
            operands.iter().map(|b| self.pull(&mut state, b)).collect::<pimhe_exec::Result<Vec<_>>>()?
        };
        let start = Instant::now();
        let result = compute(&self.cpu, host)?;
        let mut state = self.lock();
        state.report.host_fallback_s += start.elapsed().as_secs_f64();
        state.report.fallbacks += 1;
        Ok(result)
    }

    pub(super) fn fallback_buffer(
        &self,
        operands: &[&PimBuffer],
        compute: impl FnOnce(&CpuBackend, Vec<PolyBatch>) -> pimhe_exec::Result<PolyBatch>,
    ) -> pimhe_exec::Result<PimBuffer> {
        let batch = self.fallback(operands, compute)?;
        let mut state = self.lock();
        self.push(&mut state, batch)
    }

    /// Where an operation on `operands` runs; on the DPUs, its operands are made resident.
    pub(super) fn route(&self, operands: &[&PimBuffer]) -> pimhe_exec::Result<Route> {
        let mut streamed = false;
        for operand in operands {
            match &operand.storage {
                Storage::Device(_) => {}
                Storage::Host(_) => return Ok(Route::Cpu),
                Storage::Streamed(_) => streamed = true,
            }
        }
        if streamed {
            return Ok(Route::Rounds);
        }
        Ok(self.resident(operands)?.map_or(Route::Rounds, Route::Device))
    }

    /// An operation with one new output, run where its operands are: on the DPUs when all are
    /// resident (`on_device` gets them and returns `None` when the output does not fit, which
    /// sends it to rounds), in rounds when one is streamed, and on the CPU backend (`cpu` gets
    /// them on the host; a counted fallback) when one lies over primes the DPUs do not serve or
    /// the output would (`served` false).
    pub(super) fn mapped_kernel(
        &self,
        operands: &[&PimBuffer],
        served: bool,
        on_device: impl Fn(&[&PimBuffer]) -> pimhe_exec::Result<Option<PimBuffer>>,
        cpu: impl FnOnce(&CpuBackend, Vec<PolyBatch>) -> pimhe_exec::Result<PolyBatch>,
    ) -> pimhe_exec::Result<PimBuffer> {
        match if served { self.route(operands)? } else { Route::Cpu } {
            Route::Cpu => return self.fallback_buffer(operands, cpu),
            // The operands stay pinned until their commands are queued.
            Route::Device(_pinned) => {
                if let Some(out) = on_device(operands)? {
                    return Ok(out);
                }
            }
            Route::Rounds => {}
        }
        self.single_in_rounds(operands, |round| on_device(&round.iter().collect::<Vec<_>>()))
    }

    /// An element-wise kernel `out = op(a, b)`, or its CPU fallback.
    pub(super) fn binary_kernel(
        &self,
        operation: &'static str,
        opcode: Opcode,
        a: &PimBuffer,
        b: &PimBuffer,
        cpu: impl FnOnce(&CpuBackend, &PolyBatch, &PolyBatch) -> pimhe_exec::Result<PolyBatch>,
    ) -> pimhe_exec::Result<PimBuffer> {
        let map = broadcast(operation, &a.shape, &b.shape, opcode == Opcode::Mul)?;
        self.mapped_kernel(
            &[a, b],
            true,
            |operands| {
                let (a, b) = (operands[0], operands[1]);
                self.mapped_on_device(&a.shape, &a.placement()?, &[&b.placement()?], |_, share, offsets, dst| {
                    command(opcode, share.len, &[offsets[0], offsets[1]], &[dst]).broadcast_second(map.single)
                })
            },
            |backend, host| cpu(backend, &host[0], &host[1]),
        )
    }

    /// A new buffer of `shape` computed on the DPUs, one command per (limb, share) of its
    /// placement: `build(slot, share, offsets, dst)` gets the prime slot, the MRAM offsets of
    /// the operands on the share's DPU (`source`'s limb with the output's prime first) and the
    /// output's offset. `None` when the output does not fit in MRAM.
    pub(super) fn mapped_on_device(
        &self,
        shape: &Shape,
        source: &[LimbPlacement],
        others: &[&[LimbPlacement]],
        build: impl Fn(usize, &Share, &[u32], u32) -> PimheCommand,
    ) -> pimhe_exec::Result<Option<PimBuffer>> {
        let mut state = self.lock();
        let Some(out) = self.allocate_output(&mut state, shape)? else { return Ok(None) };
        let mut sources = vec![source];
        sources.extend_from_slice(others);
        // Commands follow the output's limbs (a restriction has fewer than its source).
        self.emit(&mut state, &out, &sources, |limb, _, share, offsets| {
            build(out[limb].slot, share, &offsets[1..], offsets[0])
        })?;
        drop(state);
        Ok(Some(self.device_buffer(shape.clone(), out)))
    }

    /// An in-place kernel on `acc` with further operands `others` (validated by the caller).
    pub(super) fn in_place_kernel(
        &self,
        acc: &mut PimBuffer,
        others: &[&PimBuffer],
        build: impl Fn(usize, &Share, &[u32]) -> PimheCommand,
        cpu: impl FnOnce(&CpuBackend, &mut PolyBatch, &[PolyBatch]) -> pimhe_exec::Result<()>,
    ) -> pimhe_exec::Result<()> {
        let mut all: Vec<&PimBuffer> = vec![&*acc];
        all.extend_from_slice(others);
        let result = match self.route(&all)? {
            Route::Device(resident) => {
                let placements = resident.slices();
                let mut state = self.lock();
                return self.in_place_on_device(&mut state, placements[0], &placements[1..], &build);
            }
            Route::Cpu => self.fallback(&all, |backend, mut host| {
                let mut target = host.remove(0);
                cpu(backend, &mut target, &host)?;
                Ok(target)
            })?,
            Route::Rounds => {
                let mut outputs = self.in_rounds(&all, 0, |round| {
                    let placements = round.iter().map(PimBuffer::placement).collect::<pimhe_exec::Result<Vec<_>>>()?;
                    let mut state = self.lock();
                    self.in_place_on_device(&mut state, &placements[0], &slices(&placements[1..]), &build)?;
                    drop(state);
                    Ok(vec![round.into_iter().next().expect("acc is the first operand")])
                })?;
                *acc = self.on_host(outputs.remove(0), Storage::Streamed);
                return Ok(());
            }
        };
        // The lock is released before the old accumulator is dropped: dropping a resident
        // buffer takes the lock to release its MRAM.
        let pushed = {
            let mut state = self.lock();
            self.push(&mut state, result)?
        };
        *acc = pushed;
        Ok(())
    }

    fn in_place_on_device(
        &self,
        state: &mut State,
        acc: &[LimbPlacement],
        others: &[&[LimbPlacement]],
        build: &impl Fn(usize, &Share, &[u32]) -> PimheCommand,
    ) -> pimhe_exec::Result<()> {
        self.emit(state, acc, others, |limb, _, share, offsets| build(acc[limb].slot, share, offsets))
    }

    /// `out = a * scalar(prime)` on the limbs of `target` (a's primes, possibly fewer).
    pub(super) fn scale(
        &self,
        a: &PimBuffer,
        target: &Arc<RingBasis>,
        scalar: impl Fn(&Modulus) -> u32,
    ) -> pimhe_exec::Result<PimBuffer> {
        self.mapped_kernel(
            &[a],
            self.slots(target).is_some(),
            |operands| {
                let shape = Shape { basis: target.clone(), ..operands[0].shape.clone() };
                self.mapped_on_device(&shape, &operands[0].placement()?, &[], |slot, share, offsets, dst| {
                    let q = &self.primes[slot];
                    command(Opcode::MulC, share.len, &[offsets[0]], &[dst]).scalar(scalar(q), q)
                })
            },
            |_, host| {
                let mut out = host[0].restrict(target)?;
                for limb in 0..target.len() {
                    let q = *target.modulus(limb);
                    let c = scalar(&q);
                    out.limb_mut(limb).iter_mut().for_each(|x| *x = q.mul(*x, c));
                }
                Ok(out)
            },
        )
    }
}

/// Placements as slices, as the command builders take them.
pub(super) fn slices(placements: &[Vec<LimbPlacement>]) -> Vec<&[LimbPlacement]> {
    placements.iter().map(Vec::as_slice).collect()
}
