//! Buffers: [`PimBuffer`] and where its data lives (in DPU MRAM or evicted from it, as the
//! residency manager says, the host, or the host streaming through the DPUs in rounds), MRAM
//! allocation and release, and the transfers between the host and the DPUs (push, pull).

use std::sync::{Arc, Mutex};
use std::time::Instant;

use pimhe_exec::{ExecError, Shape};
use pimhe_ring::PolyBatch;

use super::memory::MramAllocator;
use super::placement::{split, Share};
use super::residency::{BufferId, Place};
use super::stats::TransferShape;
use super::{device_error, setup, PimBackend, State};

/// One limb of a device buffer: which prime slot and where each DPU keeps its polynomials.
#[derive(Debug, Clone)]
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
    /// On the DPUs: its entry in the residency table ([`super::residency`]) says where, in MRAM
    /// or evicted to the host.
    Device(BufferId),
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
        if let Storage::Device(id) = self.storage {
            if let Ok(mut state) = self.state.lock() {
                match state.residency.remove(id) {
                    Some(Place::Resident(limbs)) if state.pending.is_empty() => {
                        release(&mut state.memory, &limbs, self.shape.basis.degree());
                    }
                    // Queued commands may still read this buffer, and in sequential mode a later
                    // command of a lower prime slot runs before them: its MRAM is reusable only
                    // once they have run (see `flush`).
                    Some(Place::Resident(mut limbs)) => state.deferred.append(&mut limbs),
                    Some(Place::Evicted(mut batch)) => batch.zeroize(),
                    None => {}
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
        let Storage::Device(id) = buffer.storage else { return };
        let mut state = self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let state = &mut *state;
        let n = self.n;
        match state.residency.place_mut(id) {
            Some(Place::Resident(limbs)) => {
                let overwritten = limbs
                    .iter()
                    .flat_map(|limb| &limb.shares)
                    .all(|(share, offset)| state.dpus.write_u32s(share.dpu, *offset, &vec![0; share.len * n]).is_ok());
                if !overwritten {
                    limbs.clear();
                }
            }
            Some(Place::Evicted(batch)) => batch.zeroize(),
            None => {}
        }
    }

    /// Wipes an evicted buffer's host copy, which is then all it holds; false when the buffer
    /// is not an evicted device buffer.
    pub(super) fn zeroize_evicted(&self, buffer: &PimBuffer) -> bool {
        let Storage::Device(id) = buffer.storage else { return false };
        match self.lock().residency.place_mut(id) {
            Some(Place::Evicted(batch)) => {
                batch.zeroize();
                true
            }
            _ => false,
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

    /// Allocates the output of a kernel whose operands are resident (and pinned), evicting
    /// other buffers as needed: `None` when it does not fit even so (the caller then runs in
    /// rounds).
    pub(super) fn allocate_output(
        &self,
        state: &mut State,
        shape: &Shape,
    ) -> pimhe_exec::Result<Option<Vec<LimbPlacement>>> {
        match self.allocate_evicting(state, shape)? {
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

    /// A device buffer over `limbs` (the state must not be locked: see [`Self::register`]).
    pub(super) fn device_buffer(&self, shape: Shape, limbs: Vec<LimbPlacement>) -> PimBuffer {
        let mut state = self.lock();
        self.register(&mut state, shape, limbs)
    }

    /// A buffer kept on the host, as `Storage::Host` or `Storage::Streamed`.
    pub(super) fn on_host(&self, batch: PolyBatch, storage: fn(PolyBatch) -> Storage) -> PimBuffer {
        PimBuffer { shape: Shape::of(&batch), storage: storage(batch), state: self.state.clone() }
    }

    /// Pushes a host batch to the DPUs (one transfer for all DPUs), evicting least recently used
    /// buffers to make room; or keeps it on the host when its primes are not served, or streams
    /// it when it does not fit even so.
    pub(super) fn push(&self, state: &mut State, batch: PolyBatch) -> pimhe_exec::Result<PimBuffer> {
        let shape = Shape::of(&batch);
        let limbs = match self.allocate_evicting(state, &shape)? {
            Allocation::Placed(limbs) => limbs,
            Allocation::Unserved => return Ok(self.on_host(batch, Storage::Host)),
            Allocation::NoRoom => return Ok(self.on_host(batch, Storage::Streamed)),
        };
        let targets: Vec<&LimbPlacement> = limbs.iter().collect();
        self.write_limbs(state, &batch, &targets)?;
        Ok(self.register(state, shape, limbs))
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

    /// Pulls a device buffer back (one retrieval for all DPUs), after running pending commands;
    /// an evicted one is on the host already.
    pub(super) fn pull(&self, state: &mut State, buffer: &PimBuffer) -> pimhe_exec::Result<PolyBatch> {
        let id = match &buffer.storage {
            Storage::Host(batch) | Storage::Streamed(batch) => return Ok(batch.clone()),
            Storage::Device(id) => *id,
        };
        let limbs = match state.residency.place(id) {
            Some(Place::Resident(limbs)) => limbs.clone(),
            Some(Place::Evicted(batch)) => {
                let mut batch = batch.clone();
                // Kernels that ran on it since it was entered changed its form, not its data.
                batch.set_representation(buffer.shape.representation);
                return Ok(batch);
            }
            None => return Err(setup("internal: a device buffer without a residency entry".into())),
        };
        self.flush(state)?;
        self.read_placement(state, &limbs, &buffer.shape)
    }

    /// Reads a placement of `shape` back (one retrieval for all DPUs), counted; the commands
    /// that write it must have run.
    pub(super) fn read_placement(
        &self,
        state: &mut State,
        limbs: &[LimbPlacement],
        shape: &Shape,
    ) -> pimhe_exec::Result<PolyBatch> {
        let n = self.n;
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
    /// The DPU placement of a resident buffer, which the caller has pinned (through
    /// [`PimBackend::resident`] or [`PimBackend::pin`]) so it stays. Takes the state's lock.
    pub(super) fn placement(&self) -> pimhe_exec::Result<Vec<LimbPlacement>> {
        let state = self.state.lock().map_err(|_| ExecError::Setup("internal: the PIM state is poisoned".into()))?;
        self.placement_in(&state)
    }

    /// [`Self::placement`] where the caller holds its backend's state.
    pub(super) fn placement_in(&self, state: &State) -> pimhe_exec::Result<Vec<LimbPlacement>> {
        let not_resident = || ExecError::Setup("internal: a kernel operand is not resident in MRAM".into());
        let Storage::Device(id) = self.storage else { return Err(not_resident()) };
        match state.residency.place(id) {
            Some(Place::Resident(limbs)) => Ok(limbs.clone()),
            Some(Place::Evicted(_)) | None => Err(not_resident()),
        }
    }
}
