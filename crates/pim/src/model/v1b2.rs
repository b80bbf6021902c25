//! `upmem-v1b@2`: what it changes over `@1`, and how a model is picked by name.
//!
//! - **Launches priced per barrier interval** ([`LaunchPricing::PerBarrierInterval`]): pimhe's
//!   kernel puts a barrier after every command (and inside the shared NTT's passes), so no
//!   tasklet starts a command before every tasklet has finished the previous one. `@1` prices
//!   a launch from each tasklet's totals, which lets a command that busies few tasklets hide
//!   behind another's work (docs/PIM.md, "Counting -> time"); `@2` applies the same revolver
//!   formula ([`UpmemModel::dpu_cycles`]) to each interval the emulator recorded
//!   ([`IntervalCounts`]) and adds them up.
//! - **Transfers parallel across ranks** ([`RankTransfers::Parallel`]): each rank of 64 DPUs
//!   is a separate DIMM rank that the host writes through its own transfer (UPMEM SDK,
//!   "Controlling the execution of DPUs from host applications": DPUs are grouped by ranks and
//!   an operation addresses the DPUs of one rank at a time), so a copy takes as long as its
//!   busiest rank, `bytes in that rank / per-rank bandwidth`, and no less than all its bytes
//!   over the host's ceiling. For evenly loaded ranks that is `@1`'s pooled formula; it
//!   differs when a copy loads the ranks unevenly (a partial last rank, a prime group's
//!   ranks).
//! - **Tasklets and DPU clock are settings** ([`UpmemModel::with_tasklets`],
//!   [`UpmemModel::with_clock`], on either version): the emulated system takes its tasklet
//!   count from the model, and the Gupta reproduction sets its 425 MHz with `with_clock`.
//!
//! Every other constant is `@1`'s (the PrIM DMA costs, DRAMatic's revolver and idle power,
//! and the host-side constants `@1` fitted on DRAMatic's rows: `@2` adds no fitted constant).
//! A per-rank launch cost is not modeled: no published measurement of one was found, and
//! fitting it on DRAMatic's compute rows would fit the rows the model is compared with; a
//! launch keeps `@1`'s single overhead.

use serde::Serialize;

use super::{UpmemModel, MODEL_NAME};
use crate::counts::{DpuCounts, IntervalCounts, MultiplyCounts};

/// Version of `upmem-v1b` that [`UpmemModel::v1b2`] builds.
pub const MODEL_VERSION_2: &str = "2";

/// The models `--model` (and [`UpmemModel::named`]) accepts, as `name@version`.
pub const MODEL_CHOICES: [&str; 2] = ["upmem-v1b@1", "upmem-v1b@2"];

/// A version of `upmem-v1b`, as `--model` names it: a small `Copy` handle on
/// [`UpmemModel::v1b`] / [`UpmemModel::v1b2`] for settings that must stay `Copy`.
///
/// ```
/// use pimhe_pim::model::{ModelVersion, UpmemModel};
/// let v = ModelVersion::parse("upmem-v1b@2").unwrap();
/// assert_eq!((v, v.name()), (ModelVersion::V2, "upmem-v1b@2"));
/// assert_eq!(v.model(), UpmemModel::v1b2());
/// assert_eq!(ModelVersion::default(), ModelVersion::V2);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize)]
pub enum ModelVersion {
    /// `upmem-v1b@1`.
    V1,
    /// `upmem-v1b@2`, the default: DRAMatic's published rows move by at most 0.002 % from
    /// `@1` (docs/PIM.md).
    #[default]
    V2,
}

impl ModelVersion {
    /// The version `name` (`upmem-v1b@1` or `upmem-v1b@2`) names.
    pub fn parse(name: &str) -> Result<Self, String> {
        match name.strip_prefix(MODEL_NAME).and_then(|v| v.strip_prefix('@')) {
            Some("1") => Ok(Self::V1),
            Some(MODEL_VERSION_2) => Ok(Self::V2),
            _ => Err(format!("model {name} is not known: choose {} or {}", MODEL_CHOICES[0], MODEL_CHOICES[1])),
        }
    }

    /// `name@version`.
    pub fn name(self) -> &'static str {
        match self {
            Self::V1 => MODEL_CHOICES[0],
            Self::V2 => MODEL_CHOICES[1],
        }
    }

    /// The model with no what-if and its default settings.
    pub fn model(self) -> UpmemModel {
        match self {
            Self::V1 => UpmemModel::v1b(),
            Self::V2 => UpmemModel::v1b2(),
        }
    }
}

/// How a launch's counts become a DPU's cycles.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum LaunchPricing {
    /// `@1`: the revolver formula on each tasklet's totals over the launch.
    WholeLaunch,
    /// `@2`: the revolver formula on each barrier interval, summed.
    PerBarrierInterval,
}

/// How a host <-> DPU copy uses the ranks it touches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum RankTransfers {
    /// `@1`: all bytes over `min(ranks * per-rank bandwidth, host ceiling)`.
    Pooled,
    /// `@2`: the busiest rank's bytes over the per-rank bandwidth, at least all bytes over the
    /// host ceiling.
    Parallel,
}

/// The constants of one direction of the host <-> DPU link.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Link {
    /// Fixed seconds of one copy.
    pub latency_s: f64,
    /// Seconds per DPU addressed.
    pub latency_s_per_dpu: f64,
    /// Bytes per second one rank moves.
    pub bytes_per_s_per_rank: f64,
    /// Bytes per second the host moves at most.
    pub max_bytes_per_s: f64,
}

impl UpmemModel {
    /// The `upmem-v1b` model, version 2: [`UpmemModel::v1b`]'s constants with launches priced
    /// per barrier interval and transfers parallel across ranks (see the module
    /// documentation).
    ///
    /// ```
    /// use pimhe_pim::model::{LaunchPricing, UpmemModel};
    /// let m = UpmemModel::v1b2();
    /// assert_eq!(m.label(), "upmem-v1b@2 (modeled)");
    /// assert_eq!(m.pricing, LaunchPricing::PerBarrierInterval);
    /// assert_eq!((m.dpu_hz, m.tasklets), (350e6, 16));
    /// ```
    pub fn v1b2() -> Self {
        Self {
            version: MODEL_VERSION_2,
            pricing: LaunchPricing::PerBarrierInterval,
            rank_transfers: RankTransfers::Parallel,
            ..Self::v1b()
        }
    }

    /// The model named `name@version`, one of [`MODEL_CHOICES`].
    ///
    /// ```
    /// use pimhe_pim::model::UpmemModel;
    /// assert_eq!(UpmemModel::named("upmem-v1b@2").unwrap(), UpmemModel::v1b2());
    /// let e = UpmemModel::named("upmem-v1b@3").unwrap_err();
    /// assert!(e.contains("choose upmem-v1b@1 or upmem-v1b@2"), "{e}");
    /// ```
    pub fn named(name: &str) -> Result<Self, String> {
        ModelVersion::parse(name).map(ModelVersion::model)
    }

    /// This model with the DPU clock at `hz` (e.g. Gupta et al.'s 425 MHz); refused unless
    /// positive and finite.
    ///
    /// ```
    /// use pimhe_pim::model::UpmemModel;
    /// assert_eq!(UpmemModel::v1b2().with_clock(425e6).unwrap().dpu_hz, 425e6);
    /// assert!(UpmemModel::v1b2().with_clock(0.0).is_err());
    /// ```
    pub fn with_clock(self, hz: f64) -> Result<Self, String> {
        if !(hz.is_finite() && hz > 0.0) {
            return Err(format!("DPU clock {hz} Hz is not allowed: it must be a positive number of Hz"));
        }
        Ok(Self { dpu_hz: hz, ..self })
    }

    /// This model with launches of `tasklets` tasklets, refused outside 1..=`max_tasklets`.
    ///
    /// ```
    /// use pimhe_pim::model::UpmemModel;
    /// assert_eq!(UpmemModel::v1b2().with_tasklets(11).unwrap().tasklets, 11);
    /// assert!(UpmemModel::v1b2().with_tasklets(17).unwrap_err().contains("1..=16"));
    /// ```
    pub fn with_tasklets(self, tasklets: u32) -> Result<Self, String> {
        if !(1..=self.max_tasklets).contains(&tasklets) {
            return Err(format!(
                "{tasklets} tasklets are not allowed: a DPU of {} runs 1..={}",
                MODEL_NAME, self.max_tasklets
            ));
        }
        Ok(Self { tasklets, ..self })
    }

    /// Cycles of one DPU's barrier intervals run one after the other: the sum over intervals
    /// of `repeats` times [`UpmemModel::dpu_cycles_with`] of the interval's counts.
    ///
    /// ```
    /// use pimhe_pim::counts::{IntervalCounts, TaskletCounts};
    /// use pimhe_pim::model::UpmemModel;
    /// let busy = |i| TaskletCounts { instructions: i, ..Default::default() };
    /// // One tasklet busy, then all 16: 11 * 100 + 16 * 100, where @1's totals give 16 * 100 + 100.
    /// let mut alone = vec![busy(0); 16];
    /// alone[0] = busy(100);
    /// let intervals = [
    ///     IntervalCounts { repeats: 1, tasklets: alone, multiplies: vec![] },
    ///     IntervalCounts { repeats: 1, tasklets: vec![busy(100); 16], multiplies: vec![] },
    /// ];
    /// assert_eq!(UpmemModel::v1b2().interval_cycles(&intervals), 1100 + 1600);
    /// ```
    pub fn interval_cycles(&self, intervals: &[IntervalCounts]) -> u64 {
        intervals.iter().map(|i| i.repeats * self.cycles_of(&i.tasklets, &i.multiplies)).sum()
    }

    /// Cycles of one DPU's launch under [`UpmemModel::pricing`]: its totals `counts` (with the
    /// multiplies `muls`) for [`LaunchPricing::WholeLaunch`], its barrier `intervals` for
    /// [`LaunchPricing::PerBarrierInterval`]. Counts with no intervals recorded (a launch
    /// without barriers, or counts not from the emulator) are one interval: their totals.
    pub fn launch_dpu_cycles(&self, counts: &DpuCounts, muls: &[MultiplyCounts], intervals: &[IntervalCounts]) -> u64 {
        match self.pricing {
            LaunchPricing::PerBarrierInterval if !intervals.is_empty() => self.interval_cycles(intervals),
            LaunchPricing::PerBarrierInterval | LaunchPricing::WholeLaunch => self.dpu_cycles_with(counts, muls),
        }
    }

    /// Seconds of one launch: the slowest DPU by [`UpmemModel::launch_dpu_cycles`] plus
    /// [`UpmemModel::launch_overhead_s`]; 0 when no DPU takes part. `muls[d]` and
    /// `intervals[d]` belong to `per_dpu[d]` (missing entries: none).
    pub fn launch_seconds_of(
        &self,
        per_dpu: &[DpuCounts],
        muls: &[Vec<MultiplyCounts>],
        intervals: &[Vec<IntervalCounts>],
    ) -> f64 {
        if per_dpu.is_empty() {
            return 0.0;
        }
        let slowest = per_dpu
            .iter()
            .enumerate()
            .map(|(d, c)| {
                let m = muls.get(d).map_or(&[][..], |m| &m[..]);
                self.launch_dpu_cycles(c, m, intervals.get(d).map_or(&[][..], |i| &i[..]))
            })
            .max()
            .unwrap_or(0);
        self.time_of(slowest).seconds + self.launch_overhead_s
    }

    /// The host -> DPU link's constants.
    pub fn transfer_link(&self) -> Link {
        Link {
            latency_s: self.transfer_latency_s,
            latency_s_per_dpu: self.transfer_latency_s_per_dpu,
            bytes_per_s_per_rank: self.transfer_bytes_per_s_per_rank,
            max_bytes_per_s: self.max_transfer_bytes_per_s,
        }
    }

    /// The DPU -> host link's constants.
    pub fn retrieve_link(&self) -> Link {
        Link {
            latency_s: self.retrieve_latency_s,
            latency_s_per_dpu: self.retrieve_latency_s_per_dpu,
            bytes_per_s_per_rank: self.retrieve_bytes_per_s_per_rank,
            max_bytes_per_s: self.max_retrieve_bytes_per_s,
        }
    }

    /// Seconds of one copy of `bytes_per_dpu[i]` bytes to or from DPU `i` over `link` with the
    /// ranks working in parallel:
    ///
    /// ```text
    /// latency + latency_per_dpu * dpus + max(busiest rank's bytes / per_rank, bytes / max)
    /// ```
    ///
    /// 0 for no bytes, or with [`UpmemModel::zero_copy`].
    ///
    /// ```
    /// use pimhe_pim::model::UpmemModel;
    /// let m = UpmemModel::v1b2();
    /// // 65 DPUs: a full rank and one DPU of the next; the full rank sets the time.
    /// let bytes = vec![1u64 << 20; 65];
    /// let link = m.transfer_link();
    /// let expected = link.latency_s + (64u64 << 20) as f64 / link.bytes_per_s_per_rank;
    /// assert!((m.transfer_seconds(&bytes) - expected).abs() < 1e-12);
    /// // @1 pools the two ranks' bandwidth: 65 MiB over 2 ranks.
    /// assert!(UpmemModel::v1b().transfer_seconds(&bytes) < expected);
    /// ```
    pub fn parallel_rank_seconds(&self, bytes_per_dpu: &[u64], link: Link) -> f64 {
        let (bytes, dpus, _) = self.footprint(bytes_per_dpu);
        if self.zero_copy || bytes == 0 {
            return 0.0;
        }
        let per_rank = self.dpus_per_rank.max(1) as usize;
        let busiest = bytes_per_dpu.chunks(per_rank).map(|rank| rank.iter().sum::<u64>()).max().unwrap_or(0);
        let seconds = (busiest as f64 / link.bytes_per_s_per_rank).max(bytes as f64 / link.max_bytes_per_s);
        link.latency_s + link.latency_s_per_dpu * dpus as f64 + seconds
    }
}
