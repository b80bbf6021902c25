//! The MRAM residency manager: which device buffers are in MRAM and which were evicted to the
//! host to make room, least recently used first.
//!
//! Every device buffer has an entry here: its placement while resident, its data on the host
//! while evicted, a last-use stamp and a pin count. When an allocation on the DPUs does not fit,
//! [`PimBackend::allocate_evicting`] evicts the least recently used buffers that hold MRAM on
//! the DPUs it needs, until it fits: each eviction is a retrieval and a zeroing of the MRAM it
//! leaves (a transfer), priced and counted in the [`super::OffloadReport`] (`evictions`, the
//! bytes both ways, `transfers`). An evicted buffer is
//! pushed back when an operation next needs it resident ([`PimBackend::resident`]), a transfer
//! counted in `restores`; downloading it needs no DPU at all. Eviction never changes a result:
//! the residues go to the host and back word for word.
//!
//! Two kinds of buffers are never evicted:
//! - the operands of the operation being issued, pinned ([`Pins`]) from the moment it looks up
//!   their placements until its commands are queued, so the offsets it queues stay theirs;
//! - buffers that pending (not yet launched) commands may read or write: those used since
//!   the command lists were last seen empty. Their MRAM could be handed to a new buffer before
//!   the commands run, so when only such buffers are left the pending commands run first.
//!
//! An evicted buffer's host copy is owned by its entry: it is wiped when the buffer is
//! zeroized, dropped, or pushed back (after the push, the MRAM holds the only copy again). The
//! MRAM it leaves is zeroed before it is freed, so that zeroizing an evicted secret leaves no
//! copy anywhere.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

use pimhe_exec::Shape;
use pimhe_ring::PolyBatch;

use super::buffer::{release, Allocation, LimbPlacement, PimBuffer, Storage};
use super::{setup, PimBackend, State};

/// A device buffer's key in the [`Residency`] table.
pub(super) type BufferId = u64;

/// Where a device buffer's data is.
pub(super) enum Place {
    /// In MRAM. Empty limbs once retired: its MRAM could not be wiped, so it is never reused.
    Resident(Vec<LimbPlacement>),
    /// On the host, evicted to make room.
    Evicted(PolyBatch),
}

/// The last use and the pins of a buffer, shared with the [`Pins`] of the operations that use
/// it so that unpinning needs no lock (a pin guard may be dropped where the state is locked).
struct Stamp {
    last_use: AtomicU64,
    pins: AtomicUsize,
}

struct Entry {
    /// Basis and count of the data (its representation is the buffer's, which kernels change).
    shape: Shape,
    place: Place,
    stamp: Arc<Stamp>,
}

/// The residency table of a backend (part of its locked state).
#[derive(Default)]
pub(super) struct Residency {
    entries: BTreeMap<BufferId, Entry>,
    next_id: BufferId,
    /// Ticks on every use and every unpinning: later uses have larger stamps.
    clock: Arc<AtomicU64>,
    /// The clock when the command lists were last seen empty: a buffer unpinned since may be
    /// named by a pending command.
    quiet_at: u64,
}

/// Pins on the operands of an operation: they are not evicted while these live. Dropping them
/// stamps the operands as used now (their commands are queued by then).
pub(super) struct Pins {
    stamps: Vec<Arc<Stamp>>,
    clock: Arc<AtomicU64>,
}

impl Drop for Pins {
    fn drop(&mut self) {
        for stamp in &self.stamps {
            stamp.last_use.store(self.clock.fetch_add(1, Ordering::SeqCst) + 1, Ordering::SeqCst);
            stamp.pins.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

/// The placements of an operation's operands, resident and pinned while this lives.
pub(super) struct Resident {
    /// One placement per operand, in order.
    pub(super) limbs: Vec<Vec<LimbPlacement>>,
    _pins: Pins,
}

impl Resident {
    /// The placements as slices, as the command builders take them.
    pub(super) fn slices(&self) -> Vec<&[LimbPlacement]> {
        super::dispatch::slices(&self.limbs)
    }
}

impl Residency {
    /// Enters a new resident buffer, used now.
    pub(super) fn register(&mut self, shape: &Shape, limbs: Vec<LimbPlacement>) -> BufferId {
        let id = self.next_id;
        self.next_id += 1;
        let stamp = Stamp { last_use: AtomicU64::new(self.tick()), pins: AtomicUsize::new(0) };
        self.entries.insert(id, Entry { shape: shape.clone(), place: Place::Resident(limbs), stamp: Arc::new(stamp) });
        id
    }

    /// Removes a dropped buffer's entry, returning where its data was.
    pub(super) fn remove(&mut self, id: BufferId) -> Option<Place> {
        self.entries.remove(&id).map(|entry| entry.place)
    }

    pub(super) fn place(&self, id: BufferId) -> Option<&Place> {
        self.entries.get(&id).map(|entry| &entry.place)
    }

    pub(super) fn place_mut(&mut self, id: BufferId) -> Option<&mut Place> {
        self.entries.get_mut(&id).map(|entry| &mut entry.place)
    }

    /// The resident placements that eviction may free (unpinned): each buffer's limbs.
    pub(super) fn evictable(&self) -> impl Iterator<Item = &[LimbPlacement]> {
        self.entries.values().filter(|e| e.stamp.pins.load(Ordering::SeqCst) == 0).filter_map(|e| match &e.place {
            Place::Resident(limbs) => Some(limbs.as_slice()),
            Place::Evicted(_) => None,
        })
    }

    /// Pins the device buffers among `buffers` (see [`Pins`]).
    pub(super) fn pin_buffers(&self, buffers: &[&PimBuffer]) -> Pins {
        let ids: Vec<BufferId> = buffers
            .iter()
            .filter_map(|b| match b.storage {
                Storage::Device(id) => Some(id),
                Storage::Host(_) | Storage::Streamed(_) => None,
            })
            .collect();
        self.pin(&ids)
    }

    fn tick(&self) -> u64 {
        self.clock.fetch_add(1, Ordering::SeqCst) + 1
    }

    fn pin(&self, ids: &[BufferId]) -> Pins {
        let stamps: Vec<Arc<Stamp>> = ids.iter().map(|id| self.entries[id].stamp.clone()).collect();
        stamps.iter().for_each(|stamp| _ = stamp.pins.fetch_add(1, Ordering::SeqCst));
        Pins { stamps, clock: self.clock.clone() }
    }

    /// The least recently used unpinned resident buffer with MRAM on one of `dpus`, among those
    /// no pending command names (`quiet`: the command lists are empty now, so none does).
    fn victim(&mut self, dpus: &[bool], quiet: bool) -> Option<BufferId> {
        if quiet {
            self.quiet_at = self.clock.load(Ordering::SeqCst);
        }
        let quiet_at = self.quiet_at;
        self.entries
            .iter()
            .filter(|(_, e)| e.stamp.pins.load(Ordering::SeqCst) == 0)
            .filter(|(_, e)| e.stamp.last_use.load(Ordering::SeqCst) <= quiet_at)
            .filter(|(_, e)| match &e.place {
                Place::Resident(limbs) => limbs.iter().flat_map(|l| &l.shares).any(|(share, _)| dpus[share.dpu]),
                Place::Evicted(_) => false,
            })
            .min_by_key(|(_, e)| e.stamp.last_use.load(Ordering::SeqCst))
            .map(|(&id, _)| id)
    }
}

impl PimBackend {
    /// A new device buffer over `limbs`, entered in the residency table.
    pub(super) fn register(&self, state: &mut State, shape: Shape, limbs: Vec<LimbPlacement>) -> PimBuffer {
        let id = state.residency.register(&shape, limbs);
        PimBuffer { shape, storage: Storage::Device(id), state: self.state.clone() }
    }

    /// [`Self::allocate`], making room when it does not fit ([`Self::make_room`]). `NoRoom`
    /// without evicting anything when even evicting every unpinned buffer would not make it fit.
    pub(super) fn allocate_evicting(&self, state: &mut State, shape: &Shape) -> pimhe_exec::Result<Allocation> {
        match self.allocate(state, shape) {
            Allocation::NoRoom if self.make_room(state, &[shape])? => Ok(self.allocate(state, shape)),
            allocation => Ok(allocation),
        }
    }

    /// Makes `shapes` fit in MRAM together, allocated in order: the buffers that dropped ones
    /// wait for are released (the pending commands run), then the least recently used buffers
    /// with MRAM on the DPUs they need are evicted, one at a time until they fit. False, having
    /// evicted nothing, when even evicting every unpinned buffer would not make them fit.
    pub(super) fn make_room(&self, state: &mut State, shapes: &[&Shape]) -> pimhe_exec::Result<bool> {
        if self.fits(state, shapes) {
            return Ok(true);
        }
        if !self.fits_when_evicted(state, shapes) {
            return Ok(false);
        }
        if !state.deferred.is_empty() {
            self.flush(state)?;
        }
        let mut needed = vec![false; state.dpus.len()];
        for shape in shapes {
            for slot in self.slots(&shape.basis).unwrap_or_default() {
                self.plan.group(slot).for_each(|dpu| needed[dpu] = true);
            }
        }
        while !self.fits(state, shapes) {
            let quiet = state.pending.is_empty();
            match state.residency.victim(&needed, quiet) {
                Some(id) => self.evict(state, id)?,
                // Only buffers that pending commands may use are left: run them first.
                None if !quiet => self.flush(state)?,
                // Evicted in another order than the estimate's, the free ranges are split.
                None => return Ok(false),
            }
        }
        Ok(true)
    }

    /// Whether `shapes` fit, allocated in order, in the MRAM free now (nothing stays allocated).
    pub(super) fn fits(&self, state: &mut State, shapes: &[&Shape]) -> bool {
        let saved = state.memory.clone();
        let fits = shapes.iter().all(|shape| matches!(self.allocate(state, shape), Allocation::Placed(_)));
        state.memory = saved;
        fits
    }

    /// [`Self::fits`] once every unpinned buffer is evicted and the dropped ones are released
    /// (nothing is evicted or released here).
    fn fits_when_evicted(&self, state: &mut State, shapes: &[&Shape]) -> bool {
        let saved = state.memory.clone();
        let mut memory = std::mem::take(&mut state.memory);
        release(&mut memory, &state.deferred, self.n);
        state.residency.evictable().for_each(|limbs| release(&mut memory, limbs, self.n));
        state.memory = memory;
        let fits = self.fits(state, shapes);
        state.memory = saved;
        fits
    }

    /// Moves a resident buffer's data to the host (a retrieval) and frees its MRAM, zeroed
    /// first (a transfer): the buffer may be a secret, and once zeroized it must be nowhere.
    /// The caller made sure no pending command names it.
    fn evict(&self, state: &mut State, id: BufferId) -> pimhe_exec::Result<()> {
        let entry = &state.residency.entries[&id];
        let Place::Resident(limbs) = &entry.place else { return Err(setup("internal: evicting a host copy".into())) };
        let limbs = limbs.clone();
        let shape = entry.shape.clone();
        let mut batch = self.read_placement(state, &limbs, &shape)?;
        let zeros = PolyBatch::zeros(&shape.basis, shape.count, shape.representation);
        if let Err(e) = self.write_limbs(state, &zeros, &limbs.iter().collect::<Vec<_>>()) {
            batch.zeroize();
            return Err(e);
        }
        release(&mut state.memory, &limbs, self.n);
        if let Some(place) = state.residency.place_mut(id) {
            *place = Place::Evicted(batch);
        }
        state.report.evictions += 1;
        Ok(())
    }

    /// Pushes an evicted buffer back into MRAM (a transfer) and wipes its host copy; false when
    /// it does not fit even after evicting what may be evicted.
    fn restore(&self, state: &mut State, id: BufferId) -> pimhe_exec::Result<bool> {
        let shape = state.residency.entries[&id].shape.clone();
        let Allocation::Placed(limbs) = self.allocate_evicting(state, &shape)? else { return Ok(false) };
        let Some(mut batch) = state.residency.take_evicted(id) else {
            release(&mut state.memory, &limbs, self.n);
            return Err(setup("internal: restoring a resident buffer".into()));
        };
        let written = self.write_limbs(state, &batch, &limbs.iter().collect::<Vec<_>>());
        let place = match written {
            Ok(()) => {
                batch.zeroize();
                Place::Resident(limbs)
            }
            // The host copy stays the buffer's data; the MRAM taken for it goes back.
            Err(_) => {
                release(&mut state.memory, &limbs, self.n);
                Place::Evicted(batch)
            }
        };
        if let Some(entry) = state.residency.place_mut(id) {
            *entry = place;
        }
        written?;
        state.report.restores += 1;
        Ok(true)
    }

    /// Pins `operands` (device buffers) and makes them resident, pushing back the evicted ones:
    /// their placements, valid while the result lives. `None` when they do not all fit in MRAM
    /// at once (the caller streams them in rounds or runs the CPU).
    pub(super) fn resident(&self, operands: &[&PimBuffer]) -> pimhe_exec::Result<Option<Resident>> {
        let mut ids = Vec::with_capacity(operands.len());
        for operand in operands {
            match operand.storage {
                Storage::Device(id) => ids.push(id),
                Storage::Host(_) | Storage::Streamed(_) => return Ok(None),
            }
        }
        let mut state = self.lock();
        let pins = state.residency.pin(&ids);
        for &id in &ids {
            if matches!(state.residency.place(id), Some(Place::Evicted(_))) && !self.restore(&mut state, id)? {
                return Ok(None);
            }
        }
        let limbs = ids
            .iter()
            .map(|&id| match state.residency.place(id) {
                Some(Place::Resident(limbs)) => Ok(limbs.clone()),
                _ => Err(setup("internal: an operand is not resident after its restore".into())),
            })
            .collect::<pimhe_exec::Result<Vec<_>>>()?;
        Ok(Some(Resident { limbs, _pins: pins }))
    }

    /// Pins device buffers that are resident (a round's parts) without restoring anything.
    pub(super) fn pin(&self, buffers: &[PimBuffer]) -> Pins {
        self.lock().residency.pin_buffers(&buffers.iter().collect::<Vec<_>>())
    }
}

impl Residency {
    /// Takes an evicted buffer's host copy out of its entry, which reads resident without MRAM
    /// until the caller sets its place; `None` (and no change) when it is not evicted.
    fn take_evicted(&mut self, id: BufferId) -> Option<PolyBatch> {
        let place = self.place_mut(id)?;
        match std::mem::replace(place, Place::Resident(Vec::new())) {
            Place::Evicted(batch) => Some(batch),
            resident => {
                *place = resident;
                None
            }
        }
    }
}
