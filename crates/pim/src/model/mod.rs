//! Timing and energy models: what the emulator counted -> modeled DPU seconds and joules.
//!
//! The one model here is `upmem-v1b`, a named, versioned set of constants plus pure functions
//! (docs/PIM.md, "Counting -> time"), in two versions: `@1` ([`UpmemModel::v1b`]) prices a
//! launch from each tasklet's totals, `@2` ([`UpmemModel::v1b2`]) barrier interval by barrier
//! interval, with transfers parallel across ranks ([`UpmemModel::named`] picks one by name):
//!
//! - **compute**: per DPU and launch, the revolver pipeline of a v1B DPU turns the per-tasklet
//!   instruction and DMA counts of [`crate::counts`] into cycles ([`UpmemModel::dpu_cycles`]);
//!   a launch takes as long as its slowest DPU plus a launch overhead
//!   ([`UpmemModel::launch_seconds`]);
//! - **transfers**: host -> DPU and DPU -> host copies cost a latency plus bytes over a
//!   bandwidth that grows with the ranks touched up to a host limit
//!   ([`UpmemModel::transfer_seconds`], [`UpmemModel::retrieve_seconds`]);
//! - **energy**: whole-system power (idle + per active rank) times time
//!   ([`UpmemModel::energy_joules`]).
//!
//! Every constant is a documented field of [`UpmemModel`] with its source. The host-side
//! constants were fitted by [`calibrate::calibrate`] on the published DRAMatic measurements
//! (`shared/reference/dramatic_calibration.csv`, read by [`mod@reference`]) and are frozen in
//! [`UpmemModel::v1b`], so nothing reads the CSV at run time; a test re-fits and compares.
//! [`analytic`] builds the counts of DRAMatic's NTT from first principles, which checks that
//! the model's structure (11-deep revolver, 16 tasklets, 350 MHz) explains the published
//! compute times.
//!
//! Every modeled number must be shown with [`UpmemModel::label`], e.g.
//! `upmem-v1b@1 (modeled)`.
//!
//! ```
//! use pimhe_pim::counts::{DpuCounts, TaskletCounts};
//! use pimhe_pim::model::UpmemModel;
//!
//! let model = UpmemModel::v1b();
//! // 16 tasklets, 1000 instructions each: the pipeline is full, one instruction per cycle.
//! let dpu = DpuCounts { tasklets: vec![TaskletCounts { instructions: 1000, ..Default::default() }; 16] };
//! assert_eq!(model.dpu_cycles(&dpu), 16_000);
//! let compute_s = model.launch_seconds(&[dpu]);
//! let transfer_s = model.transfer_seconds(&[1 << 20; 64]); // 1 MiB to each DPU of one rank
//! let b = model.breakdown(transfer_s, compute_s, 0.0, 1);
//! assert_eq!(b.model, "upmem-v1b@1 (modeled)");
//! ```

pub mod analytic;
pub mod calibrate;
pub mod host;
pub mod reference;
mod upmem;
mod v1b2;

pub use crate::counts::MultiplyCounts;
pub use upmem::{Breakdown, LaunchTime, MultiplierCycles, UpmemModel};
pub use v1b2::{LaunchPricing, Link, ModelVersion, RankTransfers, MODEL_CHOICES, MODEL_VERSION_2};

/// Name of the UPMEM v1B timing and energy model.
pub const MODEL_NAME: &str = "upmem-v1b";

/// Version of [`MODEL_NAME`] that [`UpmemModel::v1b`] builds ([`MODEL_VERSION_2`]:
/// [`UpmemModel::v1b2`]). Bumped whenever any constant of
/// [`UpmemModel::v1b`] (or the formulas using them) changes, so a modeled figure always names
/// the exact model that produced it.
///
/// - `1`: first calibration on `dramatic_calibration.csv` (transfer/retrieve, power, launch
///   overhead); PrIM DMA costs; tail-aware revolver.
/// - `2` ([`UpmemModel::v1b2`]): `1`'s constants, launches priced per barrier interval,
///   transfers parallel across ranks.
pub const MODEL_VERSION: &str = "1";

/// Tasklets a v1B DPU runs at most (UPMEM SDK, "DPU chip characteristics"; DRAMatic 2.1).
pub const V1B_MAX_TASKLETS: u32 = 16;

/// Pipeline depth that a tasklet's consecutive instructions are spaced by: 14 stages of which
/// 3 overlap, so 11 tasklets fill it (DRAMatic 2.1, after Gomez-Luna et al. / UPMEM).
pub const REVOLVER_CYCLES: u32 = 11;

/// DPUs per rank on UPMEM DIMMs (UPMEM SDK, "Controlling the execution of DPUs from host").
pub const DPUS_PER_RANK: u32 = 64;
