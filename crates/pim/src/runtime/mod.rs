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
//! Base conversion, ModDown and the division by the last prime (key switching, modulus
//! switching) need every limb of a polynomial at hand: they run on the DPUs in the
//! ciphertext-major and sequential modes, where a DPU holds every limb of its share, and in the
//! hybrid mode on coefficient slices (`conversion.rs`, [`placement::Mode`]); in parallel mode
//! they fall back to the CPU: the operands are retrieved, the CPU backend runs, the result is
//! pushed back, and all of it is counted in the [`OffloadReport`].
//!
//! The parts: this module holds [`PimBackend`] itself (construction, configuration, the report);
//! `buffer.rs` the buffers and where their data lives (MRAM placements, host, streamed) with the
//! host transfers; `queue.rs` the per-DPU command lists, their launches and the command builder;
//! `dispatch.rs` where an operation runs (DPUs, rounds, CPU fallback); `backend.rs` the
//! [`pimhe_exec::Backend`] implementation; `conversion.rs` the command lists across primes
//! (FastBConv, ModDown, divide by the last prime); `rounds.rs`, `reduce.rs` streaming and sums;
//! `memory.rs`, `residency.rs`, `placement.rs`, `subset.rs`, `stats.rs` MRAM allocation, eviction
//! to the host when MRAM is short, DPU placement, transfer volumes and the report's type.

mod backend;
mod buffer;
mod conversion;
mod dispatch;
mod host_mod_up;
mod hybrid;
pub mod memory;
pub mod placement;
mod queue;
mod reduce;
mod residency;
mod rounds;
pub mod stats;
pub mod subset;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use pimhe_exec::{CpuBackend, ExecError};
use pimhe_math::Modulus;
use pimhe_ring::RingBasis;

use crate::device::{DeviceError, DpuDevice};
use crate::emulator::{DpuSet, EmulatorConfig};
use crate::layout::{self, prime_tables, PrimeTables, Variant};
use crate::model::host::HostModel;
use crate::model::{ModelVersion, UpmemModel};
use buffer::LimbPlacement;
pub use buffer::PimBuffer;
pub use hybrid::slice_degree;
use memory::MramAllocator;
use placement::{Mode, Plan};
use queue::{Pending, MAX_COMMANDS};
pub use stats::{OffloadReport, TransferShape};

/// How to build a [`PimBackend`].
#[derive(Debug, Clone)]
pub struct PimConfig {
    /// Number of DPUs (up to 2560, in ranks of 64).
    pub dpus: usize,
    /// How DPUs serve primes ([`Mode`]): a group per prime, all DPUs one prime after another,
    /// whole ciphertexts per DPU, or groups with conversions on slices.
    pub mode: Mode,
    /// Kernel arithmetic: DRAMatic's Barrett method or pimhe's best.
    pub variant: Variant,
    /// The emulated hardware.
    pub emulator: EmulatorConfig,
    /// The timing and energy model.
    pub model: UpmemModel,
    /// The host CPU's price for the CPU fallbacks' work.
    pub host: HostModel,
}

impl PimConfig {
    /// `dpus` emulated v1B DPUs in `mode` with the `best` kernels and the default version of
    /// the `upmem-v1b` model ([`ModelVersion::default`]).
    pub fn new(dpus: usize, mode: Mode) -> Self {
        Self {
            dpus,
            mode,
            variant: Variant::Best,
            emulator: EmulatorConfig::default(),
            model: ModelVersion::default().model(),
            host: HostModel::seal_host(),
        }
    }
}

/// Largest DPU count of an UPMEM system (20 DIMMs of 128 DPUs).
pub const MAX_DPUS: usize = 2560;

struct State {
    dpus: Box<dyn DpuDevice>,
    memory: Vec<MramAllocator>,
    pending: Pending,
    /// Placements of buffers dropped while commands were pending, released by the next flush.
    deferred: Vec<LimbPlacement>,
    /// Per DPU: MRAM offsets of the (forward, inverse) twiddle tables of each slot it serves.
    table_offsets: Vec<BTreeMap<usize, (u32, u32)>>,
    /// Per DPU, in ciphertext-major mode: MRAM offset of each slot's prime record (`SET_PRIME`).
    prime_records: Vec<BTreeMap<usize, u32>>,
    residency: residency::Residency,
    report: OffloadReport,
    /// A bound on [`OffloadReport::planned_s`] past which operations fail (the planner's
    /// pricing runs stop a candidate already dearer than the best).
    budget_s: Option<f64>,
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
    /// In hybrid mode, the backend of degree [`slice_degree`] that runs conversions on
    /// coefficient slices (`hybrid.rs`).
    slices: Option<Box<PimBackend>>,
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
        let slices = match plan.mode() {
            Mode::Hybrid if dpus.measures_time() => {
                return Err(setup("hybrid mode runs on the emulator only (its slices are a second DPU set)".into()))
            }
            Mode::Hybrid => Some(Self::slicer(&config, used, n, primes)?),
            Mode::Parallel | Mode::Sequential | Mode::CiphertextMajor => None,
        };
        let mram_bytes = config.emulator.mram_bytes;
        let mut table_offsets = vec![BTreeMap::new(); used];
        let mut prime_records = vec![BTreeMap::new(); used];
        let mut memory = Vec::with_capacity(used);
        for (dpu, (offsets, records)) in table_offsets.iter_mut().zip(&mut prime_records).enumerate() {
            // Each DPU holds the twiddles of the primes it serves only (one in parallel mode), 16
            // MiB per prime at N = 2^20: refused before anything is written when they do not fit.
            let served: Vec<usize> = (0..primes.len()).filter(|&s| plan.group(s).contains(&dpu)).collect();
            let mut offset = layout::HEADER_BYTES + MAX_COMMANDS * layout::COMMAND_BYTES;
            let record_bytes = if plan.mode() == Mode::CiphertextMajor { layout::HEADER_BYTES } else { 0 };
            let needed = offset
                + served
                    .iter()
                    .map(|&s| 4 * (tables[s].forward.len() + tables[s].inverse.len()) + record_bytes)
                    .sum::<usize>();
            if needed > mram_bytes {
                return Err(setup(format!(
                    "DPU {dpu} serves {} primes at N = {n}: their twiddle tables need {needed} bytes of MRAM, \
                     more than the {mram_bytes} bytes it has (the parallel mode keeps one prime's tables on a DPU)",
                    served.len()
                )));
            }
            for &slot in &served {
                let forward = offset;
                let inverse = forward + 4 * tables[slot].forward.len();
                dpus.write_u32s(dpu, forward, &tables[slot].forward).map_err(device_error)?;
                dpus.write_u32s(dpu, inverse, &tables[slot].inverse).map_err(device_error)?;
                offsets.insert(slot, (forward as u32, inverse as u32));
                offset = inverse + 4 * tables[slot].inverse.len();
                if plan.mode() == Mode::CiphertextMajor {
                    // The header this slot's launches would have: SET_PRIME loads it mid-launch.
                    let record =
                        tables[slot].header(config.variant, &launch_layout(n, (forward as u32, inverse as u32)), 0);
                    dpus.write(dpu, offset, &record.to_bytes()).map_err(device_error)?;
                    records.insert(slot, offset as u32);
                    offset += layout::HEADER_BYTES;
                }
            }
            memory.push(MramAllocator::new(offset, mram_bytes));
        }
        let report = OffloadReport { model: Self::source(&config, dpus.as_ref()), ..OffloadReport::default() };
        let (pending, deferred, residency) = (Pending::new(), Vec::new(), residency::Residency::default());
        let state =
            State { dpus, memory, pending, deferred, table_offsets, prime_records, residency, report, budget_s: None };
        Ok(Self {
            n,
            primes: tables.iter().map(|t| t.modulus).collect(),
            tables,
            plan,
            cpu: CpuBackend::new(None)?,
            config,
            state: Arc::new(Mutex::new(state)),
            slices,
        })
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

    /// Makes every operation fail once the run's [`OffloadReport::planned_s`] exceeds
    /// `budget_s` (`None`: no bound). The planner prices a candidate placement this way and
    /// stops it as soon as it is dearer than the best so far; [`Self::over_budget`] tells that
    /// failure from others.
    pub fn set_budget(&self, budget_s: Option<f64>) {
        self.lock().budget_s = budget_s;
    }

    /// Whether the run went past the budget of [`Self::set_budget`].
    pub fn over_budget(&self) -> bool {
        let state = self.lock();
        state.budget_s.is_some_and(|budget| state.report.planned_s() > budget)
    }

    /// Fails when the run is past its budget (see [`Self::set_budget`]).
    fn check_budget(&self, state: &State) -> pimhe_exec::Result<()> {
        match state.budget_s {
            Some(budget) if state.report.planned_s() > budget => {
                Err(setup(format!("stopped: this placement's modeled cost passed {budget:.6} s, the best placement's")))
            }
            Some(_) | None => Ok(()),
        }
    }

    /// The least free MRAM of any DPU, in bytes: what bounds the batches that stay resident
    /// (larger ones are streamed in rounds).
    pub fn mram_free_bytes(&self) -> usize {
        self.lock().memory.iter().map(MramAllocator::available).min().unwrap_or(0)
    }

    /// Ranks the configured DPUs occupy (64 DPUs each).
    fn ranks(&self) -> u32 {
        self.config.dpus.div_ceil(64) as u32
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
}

/// The MRAM layout of a launch (or a prime record) of the prime whose (forward, inverse) twiddle
/// tables are at `twiddles`: the command list right after the header, operands allocated apart.
fn launch_layout(n: usize, (twiddle_offset, inv_twiddle_offset): (u32, u32)) -> layout::MramLayout {
    layout::MramLayout {
        n,
        twiddle_offset,
        inv_twiddle_offset,
        command_offset: layout::HEADER_BYTES as u32,
        command_capacity: MAX_COMMANDS as u32,
        data_offset: 0,
    }
}

fn setup(message: String) -> ExecError {
    ExecError::Setup(message)
}

fn device_error(e: impl Into<DeviceError>) -> ExecError {
    ExecError::Setup(format!("UPMEM DPUs: {}", e.into()))
}
