//! Buffers: [`PimBuffer`] and where its data lives (a placement in DPU MRAM, the host, or the host
//! streaming through the DPUs in rounds), MRAM allocation and release, and the transfers between
//! the host and the DPUs (push, pull).

use std::sync::{Arc, Mutex};
use std::time::Instant;

use pimhe_exec::{ExecError, Shape};
use pimhe_ring::PolyBatch;

use super::memory::MramAllocator;
use super::placement::{split, Share};
use super::stats::TransferShape;
use super::{device_error, setup, PimBackend, State};

/// One limb of a device buffer: which prime slot and where each DPU keeps its polynomials.
#[derive(Debug)]
pub(super) struct LimbPlacement {
    pub(super) slot: usize,
    /// (share, MRAM byte offset of the share's first polynomial on its DPU).
    pub(super) shares: Vec<(Share, usize)>,
}

/// A batch resident in DPU MRAM, or (when its primes are not served by the DPUs) on the host.
pub struct PimBuffer {
    pub(super) shape: Shape,
    pub(super) storage: Storage,
    pub(super) state: Arc<Mutex<State>>,
}

pub(super) enum Storage {
    Device(Vec<LimbPlacement>),
    /// Over primes the DPUs do not serve: every operation on it runs on the CPU.
    Host(PolyBatch),
    /// Larger than the DPUs' free MRAM: kept on the host, and every operation on it streams it
    /// through the DPUs in rounds ([`super::rounds`]).
    Streamed(PolyBatch),
}

/// Where a new device buffer went.
pub(super) enum Allocation {
    Placed(Vec<LimbPlacement>),
    /// A prime of its basis is not served by the DPUs.
    Unserved,
    /// Some DPU lacks the room (nothing stays allocated).
    NoRoom,
}

impl Drop for PimBuffer {
    fn drop(&mut self) {
        if let Storage::Device(limbs) = &mut self.storage {
            if let Ok(mut state) = self.state.lock() {
                if state.pending.is_empty() {
                    release(&mut state.memory, limbs, self.shape.basis.degree());
                } else {
                    // Queued commands may still read this buffer, and in sequential mode a later
                    // command of a lower prime slot runs before them: its MRAM is reusable only
                    // once they have run (see `flush`).
                    state.deferred.append(limbs);
                }
            }
        }
    }
}

/// Returns the MRAM of a placement of degree-`n` polynomials to the allocators.
pub(super) fn release(memory: &mut [MramAllocator], limbs: &[LimbPlacement], n: usize) {
    for (share, offset) in limbs.iter().flat_map(|limb| &limb.shares) {
        memory[share.dpu].release(*offset, share.len * n * 4);
    }
}

impl PimBackend {
    /// The fallback of `zeroize` when the wiping kernel could not run: zeros written into the
    /// buffer's MRAM from the host, and where even that fails, its MRAM is never given back,
    /// so no later buffer is placed over the secret and no caller can read it through this
    /// backend. A poisoned lock is taken over: wiping matters more than the panic that
    /// poisoned it.
    pub(super) fn overwrite_or_retire(&self, buffer: &mut PimBuffer) {
        let Storage::Device(limbs) = &mut buffer.storage else { return };
        let mut state = self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let n = self.n;
        let overwritten = limbs
            .iter()
            .flat_map(|limb| &limb.shares)
            .all(|(share, offset)| state.dpus.write_u32s(share.dpu, *offset, &vec![0; share.len * n]).is_ok());
        if !overwritten {
            limbs.clear();
        }
    }

    /// Allocates a device buffer of `shape` (contents undefined until written by a command).
    pub(super) fn allocate(&self, state: &mut State, shape: &Shape) -> Allocation {
        let Some(slots) = self.slots(&shape.basis) else { return Allocation::Unserved };
        let bytes = self.n * 4;
        let mut limbs: Vec<LimbPlacement> = Vec::with_capacity(slots.len());
        for slot in slots {
            let mut shares = Vec::new();
            for share in split(shape.count, self.plan.group(slot)) {
                let Some(offset) = state.memory[share.dpu].allocate(share.len * bytes) else {
                    limbs.push(LimbPlacement { slot, shares });
                    release(&mut state.memory, &limbs, self.n);
                    return Allocation::NoRoom;
                };
                shares.push((share, offset));
            }
            limbs.push(LimbPlacement { slot, shares });
        }
        Allocation::Placed(limbs)
    }

    /// [`Self::allocate`], after running the pending commands when MRAM is short but dropped
    /// buffers wait for them to be released.
    fn allocate_or_flush(&self, state: &mut State, shape: &Shape) -> pimhe_exec::Result<Allocation> {
        match self.allocate(state, shape) {
            Allocation::NoRoom if !state.deferred.is_empty() => {
                self.flush(state)?;
                Ok(self.allocate(state, shape))
            }
            allocation => Ok(allocation),
        }
    }

    /// Allocates the output of a kernel whose operands are resident: `None` when it does not fit
    /// (the caller then runs in rounds).
    pub(super) fn allocate_output(
        &self,
        state: &mut State,
        shape: &Shape,
    ) -> pimhe_exec::Result<Option<Vec<LimbPlacement>>> {
        match self.allocate_or_flush(state, shape)? {
            Allocation::Placed(limbs) => Ok(Some(limbs)),
            Allocation::NoRoom => Ok(None),
            Allocation::Unserved => {
                Err(setup(format!("an output over primes {:?} is not served", shape.basis.primes())))
            }
        }
    }

    /// Allocates the placements of `shapes`, all or none (`None` when one does not fit).
    pub(super) fn allocate_all(
        &self,
        state: &mut State,
        shapes: &[&Shape],
    ) -> pimhe_exec::Result<Option<Vec<Vec<LimbPlacement>>>> {
        let mut placed = Vec::with_capacity(shapes.len());
        for shape in shapes {
            match self.allocate_output(state, shape)? {
                Some(limbs) => placed.push(limbs),
                None => {
                    placed.iter().for_each(|limbs| release(&mut state.memory, limbs, self.n));
                    return Ok(None);
                }
            }
        }
        Ok(Some(placed))
    }

    pub(super) fn device_buffer(&self, shape: Shape, limbs: Vec<LimbPlacement>) -> PimBuffer {
        PimBuffer { shape, storage: Storage::Device(limbs), state: self.state.clone() }
    }

    /// A buffer kept on the host, as `Storage::Host` or `Storage::Streamed`.
    pub(super) fn on_host(&self, batch: PolyBatch, storage: fn(PolyBatch) -> Storage) -> PimBuffer {
        PimBuffer { shape: Shape::of(&batch), storage: storage(batch), state: self.state.clone() }
    }

    /// Pushes a host batch to the DPUs (one transfer for all DPUs), or keeps it on the host when
    /// its primes are not served.
    pub(super) fn push(&self, state: &mut State, batch: PolyBatch) -> pimhe_exec::Result<PimBuffer> {
        let shape = Shape::of(&batch);
        let limbs = match self.allocate_or_flush(state, &shape)? {
            Allocation::Placed(limbs) => limbs,
            Allocation::Unserved => return Ok(self.on_host(batch, Storage::Host)),
            Allocation::NoRoom => return Ok(self.on_host(batch, Storage::Streamed)),
        };
        let targets: Vec<&LimbPlacement> = limbs.iter().collect();
        self.write_limbs(state, &batch, &targets)?;
        Ok(self.device_buffer(shape, limbs))
    }

    /// Writes limb `i` of `batch` into the placement `limbs[i]` (one transfer for all DPUs),
    /// priced as a push.
    pub(super) fn write_limbs(
        &self,
        state: &mut State,
        batch: &PolyBatch,
        limbs: &[&LimbPlacement],
    ) -> pimhe_exec::Result<()> {
        let n = self.n;
        let start = Instant::now();
        let mut bytes_per_dpu = vec![0u64; state.dpus.len()];
        for (limb_index, limb) in limbs.iter().enumerate() {
            let residues = batch.limb(limb_index);
            for (share, offset) in &limb.shares {
                let words = &residues[share.first * n..(share.first + share.len) * n];
                state.dpus.write_u32s(share.dpu, *offset, words).map_err(device_error)?;
                bytes_per_dpu[share.dpu] += 4 * words.len() as u64;
            }
        }
        state.report.transfer_s += self.seconds(state, start, |model| model.transfer_seconds(&bytes_per_dpu));
        state.report.bytes_to_dpus += bytes_per_dpu.iter().sum::<u64>();
        let slots = limbs.iter().map(|limb| limb.slot).collect();
        state.report.transfers.push(TransferShape { to_dpus: true, slots, count: batch.count() });
        Ok(())
    }

    /// Pulls a device buffer back (one retrieval for all DPUs), after running pending commands.
    pub(super) fn pull(&self, state: &mut State, buffer: &PimBuffer) -> pimhe_exec::Result<PolyBatch> {
        let limbs = match &buffer.storage {
            Storage::Host(batch) | Storage::Streamed(batch) => return Ok(batch.clone()),
            Storage::Device(limbs) => limbs,
        };
        self.flush(state)?;
        let n = self.n;
        let shape = &buffer.shape;
        let mut batch = PolyBatch::zeros(&shape.basis, shape.count, shape.representation);
        let start = Instant::now();
        let mut bytes_per_dpu = vec![0u64; state.dpus.len()];
        for (limb_index, limb) in limbs.iter().enumerate() {
            let residues = batch.limb_mut(limb_index);
            for (share, offset) in &limb.shares {
                if shape.count == 1 && share.dpu != limb.shares[0].0.dpu {
                    continue; // replicated: one copy is enough
                }
                let words = &mut residues[share.first * n..(share.first + share.len) * n];
                state.dpus.read_u32s(share.dpu, *offset, words).map_err(device_error)?;
                bytes_per_dpu[share.dpu] += 4 * words.len() as u64;
            }
        }
        state.report.retrieve_s += self.seconds(state, start, |model| model.retrieve_seconds(&bytes_per_dpu));
        state.report.bytes_from_dpus += bytes_per_dpu.iter().sum::<u64>();
        state.report.transfers.push(TransferShape { to_dpus: false, slots: slots(limbs), count: shape.count });
        Ok(batch)
    }
}

/// The prime slots of a placement's limbs, in order.
fn slots(limbs: &[LimbPlacement]) -> Vec<usize> {
    limbs.iter().map(|limb| limb.slot).collect()
}

impl PimBuffer {
    /// The DPU placement of a resident buffer.
    pub(super) fn placement(&self) -> pimhe_exec::Result<&[LimbPlacement]> {
        match &self.storage {
            Storage::Device(limbs) => Ok(limbs),
            Storage::Host(_) | Storage::Streamed(_) => {
                Err(ExecError::Setup("internal: a kernel operand is not resident in MRAM".into()))
            }
        }
    }
}
