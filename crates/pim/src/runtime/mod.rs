//! The UPMEM backend: [`pimhe_exec::Backend`] on a set of (emulated) DPUs.
//!
//! Buffers live in DPU MRAM, spread by the [`placement`] planner: each RNS limb goes to the DPU
//! group serving its prime, its polynomials split evenly over that group. Operations do not
//! launch immediately: they append commands to per-DPU command lists, and the lists run in one
//! launch when data must come back (a download, or an operation the kernels do not implement).
//! So a pipeline such as NTT -> tensor -> inverse NTT is one launch with the data resident
//! throughout, and transfers happen only at its boundaries (DRAMatic 3.4; the opposite of the
//! per-stage offload criticised in seed 001).
//!
//! A batch larger than the free MRAM is streamed through the DPUs in rounds (`rounds.rs`).
//!
//! Operations without a kernel (digit decomposition, modulus switching) fall back to the CPU:
//! the operands are retrieved, the CPU backend runs, the result is pushed back, and all of it
//! is counted in the [`OffloadReport`].

pub mod memory;
pub mod placement;
mod reduce;
mod rounds;
pub mod stats;
pub mod subset;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use pimhe_exec::operands::{
    broadcast, check_constant_terms, check_constants, check_limb_constants, galois_element, require, same_shape,
};
use pimhe_exec::{Backend, CpuBackend, ExecError, Shape};
use pimhe_math::Modulus;
use pimhe_ring::{PolyBatch, Representation, RingBasis};

use crate::counts::DpuCounts;
use crate::device::{DeviceError, DpuDevice, LaunchCost};
use crate::emulator::{DpuSet, EmulatorConfig};
use crate::layout::{self, prime_tables, MramLayout, Opcode, PimheCommand, PrimeTables, Variant, FLAG_BROADCAST_SRC1};
use crate::model::UpmemModel;
use memory::MramAllocator;
use placement::{split, Mode, Plan, Share};
pub use stats::OffloadReport;

/// Most commands one DPU runs in one launch; more pending commands force an earlier launch.
const MAX_COMMANDS: usize = 256;

/// How to build a [`PimBackend`].
#[derive(Debug, Clone)]
pub struct PimConfig {
    /// Number of DPUs (up to 2560, in ranks of 64).
    pub dpus: usize,
    /// Parallel (a DPU group per prime) or sequential (all DPUs, one prime after another).
    pub mode: Mode,
    /// Kernel arithmetic: DRAMatic's Barrett method or pimhe's best.
    pub variant: Variant,
    /// The emulated hardware.
    pub emulator: EmulatorConfig,
    /// The timing and energy model.
    pub model: UpmemModel,
}

impl PimConfig {
    /// `dpus` emulated v1B DPUs in `mode` with the `best` kernels and the `upmem-v1b` model.
    pub fn new(dpus: usize, mode: Mode) -> Self {
        Self { dpus, mode, variant: Variant::Best, emulator: EmulatorConfig::default(), model: UpmemModel::v1b() }
    }
}

/// Largest DPU count of an UPMEM system (20 DIMMs of 128 DPUs).
pub const MAX_DPUS: usize = 2560;

/// One limb of a device buffer: which prime slot and where each DPU keeps its polynomials.
#[derive(Debug)]
struct LimbPlacement {
    slot: usize,
    /// (share, MRAM byte offset of the share's first polynomial on its DPU).
    shares: Vec<(Share, usize)>,
}

/// A batch resident in DPU MRAM, or (when its primes are not served by the DPUs) on the host.
pub struct PimBuffer {
    shape: Shape,
    storage: Storage,
    state: Arc<Mutex<State>>,
}

enum Storage {
    Device(Vec<LimbPlacement>),
    /// Over primes the DPUs do not serve: every operation on it runs on the CPU.
    Host(PolyBatch),
    /// Larger than the DPUs' free MRAM: kept on the host, and every operation on it streams it
    /// through the DPUs in rounds ([`rounds`]).
    Streamed(PolyBatch),
}

/// Where a new device buffer went.
enum Allocation {
    Placed(Vec<LimbPlacement>),
    /// A prime of its basis is not served by the DPUs.
    Unserved,
    /// Some DPU lacks the room (nothing stays allocated).
    NoRoom,
}

/// Where an operation runs, given where its operands live.
enum Route<'a> {
    /// All operands resident: the DPU kernels run on their placements.
    Device(Vec<&'a [LimbPlacement]>),
    /// An operand over unserved primes: the CPU backend runs.
    Cpu,
    /// An operand too large for MRAM: the DPUs run in rounds.
    Rounds,
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
fn release(memory: &mut [MramAllocator], limbs: &[LimbPlacement], n: usize) {
    for (share, offset) in limbs.iter().flat_map(|limb| &limb.shares) {
        memory[share.dpu].release(*offset, share.len * n * 4);
    }
}

/// Per prime slot, per DPU: commands not yet launched.
type Pending = BTreeMap<usize, BTreeMap<usize, Vec<PimheCommand>>>;

struct State {
    dpus: Box<dyn DpuDevice>,
    memory: Vec<MramAllocator>,
    pending: Pending,
    /// Placements of buffers dropped while commands were pending, released by the next flush.
    deferred: Vec<LimbPlacement>,
    /// Per DPU: MRAM offsets of the (forward, inverse) twiddle tables of each slot it serves.
    table_offsets: Vec<BTreeMap<usize, (u32, u32)>>,
    report: OffloadReport,
}

/// The UPMEM PIM backend over the DPU emulator (see the module documentation).
pub struct PimBackend {
    n: usize,
    primes: Vec<Modulus>,
    tables: Vec<PrimeTables>,
    plan: Plan,
    config: PimConfig,
    cpu: CpuBackend,
    state: Arc<Mutex<State>>,
}

impl PimBackend {
    /// A backend on emulated DPUs for polynomials of degree `n` over any of `primes`, set up
    /// as `config` says: every DPU receives the twiddles of the primes it serves once, here.
    pub fn new(config: PimConfig, n: usize, primes: &[u32]) -> pimhe_exec::Result<Self> {
        let plan = Self::plan(&config, primes)?;
        let dpus = DpuSet::new(plan.used_dpus(), config.emulator.clone()).map_err(device_error)?;
        Self::with_device(config, Box::new(dpus), n, primes)
    }

    /// A backend on any DPU set with at least as many DPUs as `config`'s plan uses (real
    /// hardware with the `upmem` feature: `hardware::UpmemDpus`). On a device that
    /// measures time, the report holds measured seconds instead of modeled ones.
    pub fn with_device(
        config: PimConfig,
        mut dpus: Box<dyn DpuDevice>,
        n: usize,
        primes: &[u32],
    ) -> pimhe_exec::Result<Self> {
        let plan = Self::plan(&config, primes)?;
        let tables = primes
            .iter()
            .map(|&p| prime_tables(p, n).map_err(|e| setup(format!("prime {p}: {e}"))))
            .collect::<pimhe_exec::Result<Vec<_>>>()?;
        let used = plan.used_dpus();
        if dpus.len() < used {
            return Err(setup(format!("the plan uses {used} DPUs; the device has {}", dpus.len())));
        }
        let mram_bytes = config.emulator.mram_bytes;
        let mut table_offsets = vec![BTreeMap::new(); used];
        let mut memory = Vec::with_capacity(used);
        for (dpu, offsets) in table_offsets.iter_mut().enumerate() {
            // Each DPU holds the twiddles of the primes it serves only (one in parallel mode).
            let mut offset = layout::HEADER_BYTES + MAX_COMMANDS * layout::COMMAND_BYTES;
            for slot in (0..primes.len()).filter(|&s| plan.group(s).contains(&dpu)) {
                let forward = offset;
                let inverse = forward + 4 * tables[slot].forward.len();
                dpus.write_u32s(dpu, forward, &tables[slot].forward).map_err(device_error)?;
                dpus.write_u32s(dpu, inverse, &tables[slot].inverse).map_err(device_error)?;
                offsets.insert(slot, (forward as u32, inverse as u32));
                offset = inverse + 4 * tables[slot].inverse.len();
            }
            if offset > mram_bytes {
                return Err(setup(format!("the twiddle tables of this DPU's primes need {offset} bytes of MRAM")));
            }
            memory.push(MramAllocator::new(offset, mram_bytes));
        }
        let report = OffloadReport { model: Self::source(&config, dpus.as_ref()), ..OffloadReport::default() };
        let state = State { dpus, memory, pending: Pending::new(), deferred: Vec::new(), table_offsets, report };
        Ok(Self {
            n,
            primes: tables.iter().map(|t| t.modulus).collect(),
            tables,
            plan,
            cpu: CpuBackend::new(None)?,
            config,
            state: Arc::new(Mutex::new(state)),
        })
    }

    /// The fallback of `zeroize` when the wiping kernel could not run: zeros written into the
    /// buffer's MRAM from the host, and where even that fails, its MRAM is never given back,
    /// so no later buffer is placed over the secret and no caller can read it through this
    /// backend. A poisoned lock is taken over: wiping matters more than the panic that
    /// poisoned it.
    fn overwrite_or_retire(&self, buffer: &mut PimBuffer) {
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

    fn plan(config: &PimConfig, primes: &[u32]) -> pimhe_exec::Result<Plan> {
        if config.dpus == 0 || config.dpus > MAX_DPUS {
            return Err(setup(format!("{} DPUs requested; an UPMEM system has 1 ..= {MAX_DPUS}", config.dpus)));
        }
        Plan::new(config.mode, config.dpus, primes.len()).map_err(setup)
    }

    /// Where the report's seconds come from.
    fn source(config: &PimConfig, dpus: &dyn DpuDevice) -> String {
        if dpus.measures_time() {
            "measured on UPMEM hardware (energy modeled by ".to_string() + &config.model.label() + ")"
        } else {
            config.model.label()
        }
    }

    /// Modeled seconds, or on a device that measures time, the wall time since `start`.
    fn seconds(&self, state: &State, start: Instant, modeled: impl FnOnce(&UpmemModel) -> f64) -> f64 {
        if state.dpus.measures_time() {
            start.elapsed().as_secs_f64()
        } else {
            modeled(&self.config.model)
        }
    }

    /// What everything cost so far (runs pending commands first, so the figures are complete).
    pub fn report(&self) -> pimhe_exec::Result<OffloadReport> {
        let mut state = self.lock();
        self.flush(&mut state)?;
        Ok(state.report.clone())
    }

    /// Clears the accumulated report (pending commands run first and are counted before).
    pub fn reset_report(&self) -> pimhe_exec::Result<()> {
        let mut state = self.lock();
        self.flush(&mut state)?;
        state.report =
            OffloadReport { model: Self::source(&self.config, state.dpus.as_ref()), ..OffloadReport::default() };
        Ok(())
    }

    /// The least free MRAM of any DPU, in bytes: what bounds the batches that stay resident
    /// (larger ones are streamed in rounds).
    pub fn mram_free_bytes(&self) -> usize {
        self.lock().memory.iter().map(MramAllocator::available).min().unwrap_or(0)
    }

    /// The configuration.
    pub fn config(&self) -> &PimConfig {
        &self.config
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().expect("the PIM state is never left poisoned: no panics while locked")
    }

    fn slot_of(&self, prime: u32) -> Option<usize> {
        self.primes.iter().position(|q| q.value() == prime)
    }

    /// Prime slots of a basis, or `None` if a prime is not served by the DPUs.
    fn slots(&self, basis: &RingBasis) -> Option<Vec<usize>> {
        if basis.degree() != self.n {
            return None;
        }
        basis.primes().iter().map(|&p| self.slot_of(p)).collect()
    }

    /// Allocates a device buffer of `shape` (contents undefined until written by a command).
    fn allocate(&self, state: &mut State, shape: &Shape) -> Allocation {
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
    fn allocate_output(&self, state: &mut State, shape: &Shape) -> pimhe_exec::Result<Option<Vec<LimbPlacement>>> {
        match self.allocate_or_flush(state, shape)? {
            Allocation::Placed(limbs) => Ok(Some(limbs)),
            Allocation::NoRoom => Ok(None),
            Allocation::Unserved => {
                Err(setup(format!("an output over primes {:?} is not served", shape.basis.primes())))
            }
        }
    }

    fn device_buffer(&self, shape: Shape, limbs: Vec<LimbPlacement>) -> PimBuffer {
        PimBuffer { shape, storage: Storage::Device(limbs), state: self.state.clone() }
    }

    /// A buffer kept on the host, as `Storage::Host` or `Storage::Streamed`.
    fn on_host(&self, batch: PolyBatch, storage: fn(PolyBatch) -> Storage) -> PimBuffer {
        PimBuffer { shape: Shape::of(&batch), storage: storage(batch), state: self.state.clone() }
    }

    /// Pushes a host batch to the DPUs (one transfer for all DPUs), or keeps it on the host when
    /// its primes are not served.
    fn push(&self, state: &mut State, batch: PolyBatch) -> pimhe_exec::Result<PimBuffer> {
        let shape = Shape::of(&batch);
        let limbs = match self.allocate_or_flush(state, &shape)? {
            Allocation::Placed(limbs) => limbs,
            Allocation::Unserved => return Ok(self.on_host(batch, Storage::Host)),
            Allocation::NoRoom => return Ok(self.on_host(batch, Storage::Streamed)),
        };
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
        Ok(self.device_buffer(shape, limbs))
    }

    /// Pulls a device buffer back (one retrieval for all DPUs), after running pending commands.
    fn pull(&self, state: &mut State, buffer: &PimBuffer) -> pimhe_exec::Result<PolyBatch> {
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
        Ok(batch)
    }

    /// Runs every pending command list: one launch in parallel mode (each DPU serves one
    /// prime), one launch per prime in sequential mode.
    fn flush(&self, state: &mut State) -> pimhe_exec::Result<()> {
        let pending = std::mem::take(&mut state.pending);
        let launched = if pending.is_empty() { Ok(()) } else { self.launch(state, pending) };
        // The queued commands have run, or were dropped with a failed launch: nothing reads the
        // memory of buffers freed while they were queued any more.
        let deferred = std::mem::take(&mut state.deferred);
        release(&mut state.memory, &deferred, self.n);
        launched
    }

    /// Launches the command lists `pending` holds (see [`Self::flush`]).
    fn launch(&self, state: &mut State, pending: Pending) -> pimhe_exec::Result<()> {
        let launches: Vec<BTreeMap<usize, (usize, Vec<PimheCommand>)>> = match self.plan.mode() {
            Mode::Parallel => {
                let mut all = BTreeMap::new();
                for (slot, per_dpu) in pending {
                    for (dpu, commands) in per_dpu {
                        all.insert(dpu, (slot, commands));
                    }
                }
                vec![all]
            }
            Mode::Sequential => pending
                .into_iter()
                .map(|(slot, per_dpu)| per_dpu.into_iter().map(|(dpu, c)| (dpu, (slot, c))).collect())
                .collect(),
        };
        for launch in launches {
            let mut dpus = Vec::with_capacity(launch.len());
            for (&dpu, (slot, commands)) in &launch {
                let (twiddle_offset, inv_twiddle_offset) = state.table_offsets[dpu][slot];
                let layout = MramLayout {
                    n: self.n,
                    twiddle_offset,
                    inv_twiddle_offset,
                    command_offset: layout::HEADER_BYTES as u32,
                    command_capacity: MAX_COMMANDS as u32,
                    data_offset: 0,
                };
                let header = self.tables[*slot].header(self.config.variant, &layout, commands.len() as u32);
                state.dpus.write(dpu, 0, &header.to_bytes()).map_err(device_error)?;
                state
                    .dpus
                    .write(dpu, layout::HEADER_BYTES, &layout::commands_to_bytes(commands))
                    .map_err(device_error)?;
                dpus.push(dpu);
            }
            state.report.compute_s += match state.dpus.launch(&dpus).map_err(device_error)? {
                LaunchCost::Counted(result) => {
                    state.report.counted.accumulate(&result.total());
                    let multiplies: Vec<_> = result.multiplies.into_iter().map(|(_, m)| m).collect();
                    let counts: Vec<DpuCounts> = result.dpus.into_iter().map(|(_, c)| c).collect();
                    self.config.model.launch_seconds_with(&counts, &multiplies)
                }
                LaunchCost::Measured { seconds } => seconds,
            };
            state.report.launches += 1;
        }
        let ranks = self.config.dpus.div_ceil(64) as u32;
        state.report.energy_j = self.config.model.energy_joules(state.report.total_s(), ranks);
        Ok(())
    }

    fn enqueue(&self, state: &mut State, slot: usize, dpu: usize, command: PimheCommand) -> pimhe_exec::Result<()> {
        let full = state.pending.get(&slot).and_then(|p| p.get(&dpu)).is_some_and(|c| c.len() >= MAX_COMMANDS);
        if full {
            self.flush(state)?;
        }
        state.pending.entry(slot).or_default().entry(dpu).or_default().push(command);
        Ok(())
    }

    /// Runs an operation on the CPU backend: pulls the device operands, computes, pushes the
    /// result back. The transfers and the host time are counted.
    fn fallback<T>(
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

    fn fallback_buffer(
        &self,
        operands: &[&PimBuffer],
        compute: impl FnOnce(&CpuBackend, Vec<PolyBatch>) -> pimhe_exec::Result<PolyBatch>,
    ) -> pimhe_exec::Result<PimBuffer> {
        let batch = self.fallback(operands, compute)?;
        let mut state = self.lock();
        self.push(&mut state, batch)
    }

    /// Where an operation on `operands` runs.
    fn route<'a>(&self, operands: &[&'a PimBuffer]) -> Route<'a> {
        let mut placements = Vec::with_capacity(operands.len());
        let mut streamed = false;
        for operand in operands {
            match &operand.storage {
                Storage::Device(limbs) => placements.push(limbs.as_slice()),
                Storage::Host(_) => return Route::Cpu,
                Storage::Streamed(_) => streamed = true,
            }
        }
        if streamed {
            Route::Rounds
        } else {
            Route::Device(placements)
        }
    }

    /// Emits one command per (limb, share) of `a`'s placement. `build(limb, index, share,
    /// offsets)` gets the position of the share in `a`'s placement and the MRAM offsets of every
    /// operand's polynomials on the share's DPU (`a` first; for each of `others`, the limb with
    /// the same prime; a single-polynomial operand is replicated and so broadcast).
    fn emit(
        &self,
        state: &mut State,
        a: &[LimbPlacement],
        others: &[&[LimbPlacement]],
        build: impl Fn(usize, usize, &Share, &[u32]) -> PimheCommand,
    ) -> pimhe_exec::Result<()> {
        for (limb_index, limb) in a.iter().enumerate() {
            for (share_index, (share, offset)) in limb.shares.iter().enumerate() {
                let mut offsets = vec![*offset as u32];
                for placement in others {
                    let other = placement.iter().find(|l| l.slot == limb.slot).expect("operands were validated");
                    let (_, other_offset) = other
                        .shares
                        .iter()
                        .find(|(s, _)| s.dpu == share.dpu)
                        .expect("equal counts (or a replicated single polynomial) share a split");
                    offsets.push(*other_offset as u32);
                }
                let command = build(limb_index, share_index, share, &offsets);
                self.enqueue(state, limb.slot, share.dpu, command)?;
            }
        }
        Ok(())
    }

    /// An operation with one new output, run where its operands are: on the DPUs when all are
    /// resident (`on_device` gets them and returns `None` when the output does not fit, which
    /// sends it to rounds), in rounds when one is streamed, and on the CPU backend (`cpu` gets
    /// them on the host; a counted fallback) when one lies over primes the DPUs do not serve or
    /// the output would (`served` false).
    fn mapped_kernel(
        &self,
        operands: &[&PimBuffer],
        served: bool,
        on_device: impl Fn(&[&PimBuffer]) -> pimhe_exec::Result<Option<PimBuffer>>,
        cpu: impl FnOnce(&CpuBackend, Vec<PolyBatch>) -> pimhe_exec::Result<PolyBatch>,
    ) -> pimhe_exec::Result<PimBuffer> {
        match if served { self.route(operands) } else { Route::Cpu } {
            Route::Cpu => return self.fallback_buffer(operands, cpu),
            Route::Device(_) => {
                if let Some(out) = on_device(operands)? {
                    return Ok(out);
                }
            }
            Route::Rounds => {}
        }
        self.single_in_rounds(operands, |round| on_device(&round.iter().collect::<Vec<_>>()))
    }

    /// An element-wise kernel `out = op(a, b)`, or its CPU fallback.
    fn binary_kernel(
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
                self.mapped_on_device(&a.shape, a.placement()?, &[b.placement()?], |_, share, offsets, dst| {
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
    fn mapped_on_device(
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
    fn in_place_kernel(
        &self,
        acc: &mut PimBuffer,
        others: &[&PimBuffer],
        build: impl Fn(usize, &Share, &[u32]) -> PimheCommand,
        cpu: impl FnOnce(&CpuBackend, &mut PolyBatch, &[PolyBatch]) -> pimhe_exec::Result<()>,
    ) -> pimhe_exec::Result<()> {
        let mut all: Vec<&PimBuffer> = vec![&*acc];
        all.extend_from_slice(others);
        let result = match self.route(&all) {
            Route::Device(placements) => {
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
                    self.in_place_on_device(&mut state, placements[0], &placements[1..], &build)?;
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
    fn scale(
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
                self.mapped_on_device(&shape, operands[0].placement()?, &[], |slot, share, offsets, dst| {
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

impl PimBuffer {
    /// The DPU placement of a resident buffer.
    fn placement(&self) -> pimhe_exec::Result<&[LimbPlacement]> {
        match &self.storage {
            Storage::Device(limbs) => Ok(limbs),
            Storage::Host(_) | Storage::Streamed(_) => {
                Err(ExecError::Setup("internal: a kernel operand is not resident in MRAM".into()))
            }
        }
    }
}

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
        match self.route(&operands) {
            Route::Cpu => {
                let [d0, d1, d2] =
                    self.fallback(&operands, |cpu, host| cpu.tensor(&host[0], &host[1], &host[2], &host[3]))?;
                let mut state = self.lock();
                return Ok([self.push(&mut state, d0)?, self.push(&mut state, d1)?, self.push(&mut state, d2)?]);
            }
            Route::Device(placements) => {
                if let Some(outputs) = self.tensor_on_device(Opcode::Tensor, &a0.shape, &placements)? {
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
        match self.route(&operands) {
            Route::Cpu => {
                let [d0, d1, d2] = self.fallback(&operands, |cpu, host| cpu.tensor_square(&host[0], &host[1]))?;
                let mut state = self.lock();
                return Ok([self.push(&mut state, d0)?, self.push(&mut state, d1)?, self.push(&mut state, d2)?]);
            }
            Route::Device(placements) => {
                if let Some(outputs) = self.tensor_on_device(Opcode::TensorSq, &a0.shape, &placements)? {
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
                self.accumulate_on_device(&operands[0].shape, &placements, &constants, offset)
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
                self.mapped_on_device(&a.shape, a.placement()?, &[b.placement()?], |slot, share, offsets, dst| {
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
        self.fallback_buffer(&[a], |cpu, host| cpu.base_convert(&host[0], target))
    }

    fn base_convert_ntt(
        &self,
        a: &PimBuffer,
        a_ntt: &PimBuffer,
        target: &Arc<RingBasis>,
    ) -> pimhe_exec::Result<PimBuffer> {
        self.fallback_buffer(&[a, a_ntt], |cpu, host| cpu.base_convert_ntt(&host[0], &host[1], target))
    }

    fn mod_down_last(&self, a: &PimBuffer, plain_modulus: Option<Modulus>) -> pimhe_exec::Result<PimBuffer> {
        self.fallback_buffer(&[a], |cpu, host| cpu.mod_down_last(&host[0], plain_modulus))
    }

    fn mul_limb_constants(&self, a: &PimBuffer, constants: &[u64]) -> pimhe_exec::Result<PimBuffer> {
        check_limb_constants(&a.shape, constants)?;
        self.scale(a, &a.shape.basis, |q| limb_constant(&a.shape.basis, constants, q))
    }

    fn mod_down(&self, a: &PimBuffer, count: usize, plain_modulus: Option<Modulus>) -> pimhe_exec::Result<PimBuffer> {
        self.fallback_buffer(&[a], |cpu, host| cpu.mod_down(&host[0], count, plain_modulus))
    }

    fn automorphism(&self, a: &PimBuffer, k: usize) -> pimhe_exec::Result<PimBuffer> {
        let k = galois_element(&a.shape, k)?;
        let ntt_form = a.shape.representation == Representation::Ntt;
        self.mapped_kernel(
            &[a],
            true,
            |operands| {
                self.mapped_on_device(&operands[0].shape, operands[0].placement()?, &[], |_, share, offsets, dst| {
                    // k < 2N <= 2^16: a word.
                    PimheCommand::automorphism(dst, offsets[0], k as u32, ntt_form, share.len as u32)
                })
            },
            |cpu, host| cpu.automorphism(&host[0], k),
        )
    }
}

impl PimBackend {
    /// The TENSOR (four operands) or TENSOR_SQ (two) kernel on resident operands; `None` when
    /// its three outputs do not fit.
    fn tensor_on_device(
        &self,
        opcode: Opcode,
        shape: &Shape,
        operands: &[&[LimbPlacement]],
    ) -> pimhe_exec::Result<Option<[PimBuffer; 3]>> {
        let mut state = self.lock();
        let mut outputs = Vec::with_capacity(3);
        for _ in 0..3 {
            match self.allocate_output(&mut state, shape)? {
                Some(limbs) => outputs.push(limbs),
                None => {
                    outputs.iter().for_each(|limbs| release(&mut state.memory, limbs, self.n));
                    return Ok(None);
                }
            }
        }
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
            let outputs = self.tensor_on_device(opcode, &round[0].shape, &placements)?;
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

/// A kernel command over `count` sub-polynomials per operand at the given MRAM offsets.
fn command(opcode: Opcode, count: usize, src: &[u32], dst: &[u32]) -> PimheCommand {
    let mut command = PimheCommand { opcode: opcode as u32, count: count as u32, ..PimheCommand::default() };
    command.src[..src.len()].copy_from_slice(src);
    command.dst[..dst.len()].copy_from_slice(dst);
    command
}

/// Builder steps for the optional parts of a command.
trait CommandExt {
    /// Marks `src[1]` as one sub-polynomial applied to every sub-polynomial of `src[0]`.
    fn broadcast_second(self, single: bool) -> Self;
    /// The MULC constant `c` (reduced modulo `q`) with its Shoup quotient.
    fn scalar(self, c: u32, q: &Modulus) -> Self;
}

impl CommandExt for PimheCommand {
    fn broadcast_second(mut self, single: bool) -> Self {
        if single {
            self.flags |= FLAG_BROADCAST_SRC1;
        }
        self
    }

    fn scalar(mut self, c: u32, q: &Modulus) -> Self {
        self.scalar = c;
        self.scalar_shoup = q.shoup(c);
        self
    }
}

/// The constant of `q`'s limb among `constants` (one per limb of `basis`, which holds `q` once),
/// reduced modulo `q`: the scalar kernels take one constant per prime.
fn limb_constant(basis: &RingBasis, constants: &[u64], q: &Modulus) -> u32 {
    let limb = basis.primes().iter().position(|&p| p == q.value()).expect("a prime of the operand's basis");
    q.reduce_u64(constants[limb])
}

fn setup(message: String) -> ExecError {
    ExecError::Setup(message)
}

fn device_error(e: impl Into<DeviceError>) -> ExecError {
    ExecError::Setup(format!("UPMEM DPUs: {}", e.into()))
}
