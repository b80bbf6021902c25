//! Sums over a batch ([`pimhe_exec::Backend::sum`]) on the DPUs.
//!
//! Each DPU adds up its share of every limb into one partial polynomial, one fine-grained Add
//! per polynomial (all tasklets on one sub-polynomial, as DRAMatic's element-wise kernels).
//! DPUs cannot exchange data, so the host adds the partials, one per DPU holding data, and
//! pushes the single result back: that last step is counted as a CPU fallback with its
//! transfers.

use pimhe_exec::{Backend, Shape};
use pimhe_ring::PolyBatch;

use super::buffer::{LimbPlacement, PimBuffer};
use super::dispatch::Route;
use super::queue::{command, CommandExt};
use super::PimBackend;
use crate::layout::Opcode;

impl PimBackend {
    pub(super) fn sum_buffer(&self, a: &PimBuffer) -> pimhe_exec::Result<PimBuffer> {
        if a.shape.count <= 1 {
            // Nothing to add: the sum of one polynomial is a copy, of none a zero polynomial.
            return match a.shape.count {
                1 => self.copy(a),
                _ => self.upload(PolyBatch::zeros(&a.shape.basis, 1, a.shape.representation)),
            };
        }
        let partials = match self.route(&[a])? {
            Route::Cpu => return self.fallback_buffer(&[a], |cpu, host| cpu.sum(&host[0])),
            Route::Device(resident) => self.partial_sums(&a.shape, &resident.limbs[0])?,
            Route::Rounds => None,
        };
        let partials = match partials {
            Some(partials) => partials,
            // Too little MRAM beside `a` for the partials: in rounds, which bring parts of `a`.
            None => {
                let mut parts = self.in_rounds(&[a], 1, |round| Ok(vec![self.sum_buffer(&round[0])?]))?;
                self.on_host(parts.remove(0), super::buffer::Storage::Streamed)
            }
        };
        self.fallback_buffer(&[&partials], |cpu, host| cpu.sum(&host[0]))
    }

    /// One polynomial per limb on every DPU holding part of `a` (at least two polynomials):
    /// the sum of that DPU's share. `None` when they do not fit in MRAM.
    fn partial_sums(&self, shape: &Shape, a: &[LimbPlacement]) -> pimhe_exec::Result<Option<PimBuffer>> {
        // `a`'s split gives the first min(count, group) DPUs of every limb's group at least one
        // polynomial each, and a batch of that many polynomials is split over exactly those
        // DPUs, one each (a group of one DPU holds a batch of one, not replicated further).
        let holders = a[0].shares.len();
        let partial_shape = Shape { count: holders, ..shape.clone() };
        let bytes = (shape.basis.degree() * 4) as u32;
        let mut state = self.lock();
        let Some(partials) = self.allocate_output(&mut state, &partial_shape)? else { return Ok(None) };
        for (limb, partial_limb) in a.iter().zip(&partials) {
            let q = &self.primes[limb.slot];
            for (share, offset) in &limb.shares {
                let (_, partial) = partial_limb
                    .shares
                    .iter()
                    .find(|(s, _)| s.dpu == share.dpu)
                    .expect("every DPU holding data holds a partial");
                let (source, partial) = (*offset as u32, *partial as u32);
                let first = if share.len == 1 {
                    command(Opcode::MulC, 1, &[source], &[partial]).scalar(1, q)
                } else {
                    command(Opcode::Add, 1, &[source, source + bytes], &[partial])
                };
                self.enqueue(&mut state, limb.slot, share.dpu, first)?;
                for index in 2..share.len as u32 {
                    let next = command(Opcode::Add, 1, &[partial, source + index * bytes], &[partial]);
                    self.enqueue(&mut state, limb.slot, share.dpu, next)?;
                }
            }
        }
        drop(state);
        Ok(Some(self.device_buffer(partial_shape, partials)))
    }
}
