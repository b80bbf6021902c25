//! The `upmem-v1b` model: constants and the pure functions that use them.

use serde::{Deserialize, Serialize};

use super::{
    LaunchPricing, RankTransfers, DPUS_PER_RANK, MODEL_NAME, MODEL_VERSION, REVOLVER_CYCLES, V1B_MAX_TASKLETS,
};
use crate::counts::{DpuCounts, MultiplyCounts, TaskletCounts};

/// Cycles of the 32x32-bit multiply routines under a hardware what-if (DRAMatic 5.1).
///
/// DRAMatic's custom routines take 21 cycles (32x32 -> 32) and 35 cycles (32x32 -> 64)
/// (DRAMatic 3.1.1); its what-if experiments replace them by dummies of 2 and 4 cycles
/// ([`MultiplierCycles::DRAMATIC_DUMMY`]) and by single-cycle inlined ones
/// ([`MultiplierCycles::SINGLE_CYCLE`]).
///
/// ```
/// use pimhe_pim::model::MultiplierCycles;
/// assert_eq!(MultiplierCycles::DRAMATIC_DUMMY, MultiplierCycles { mul32: 2, mul64: 4 });
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct MultiplierCycles {
    /// Cycles of one 32x32 -> 32-bit multiply.
    pub mul32: u32,
    /// Cycles of one 32x32 -> 64-bit multiply.
    pub mul64: u32,
}

impl MultiplierCycles {
    /// DRAMatic 5.1's "fast dummy routines": `(a + b) ^ 0x12345678` in 2 cycles and
    /// `a * 2^20 + b` in 4 cycles.
    pub const DRAMATIC_DUMMY: Self = Self { mul32: 2, mul64: 4 };
    /// DRAMatic 5.1's "more optimistic" routines: one cycle each, inlined.
    pub const SINGLE_CYCLE: Self = Self { mul32: 1, mul64: 1 };
}

/// Modeled time of one DPU in one launch.
///
/// ```
/// use pimhe_pim::counts::{DpuCounts, TaskletCounts};
/// use pimhe_pim::model::UpmemModel;
/// let m = UpmemModel::v1b();
/// let one = DpuCounts { tasklets: vec![TaskletCounts { instructions: 350, ..Default::default() }] };
/// let t = m.dpu_time(&one);
/// assert_eq!(t.cycles, 11 * 350);
/// assert!((t.seconds - 11e-6).abs() < 1e-15);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LaunchTime {
    /// DPU cycles from start to the last tasklet's end.
    pub cycles: u64,
    /// `cycles / dpu_hz` (no launch overhead: that belongs to the launch, not the DPU).
    pub seconds: f64,
}

/// Where the modeled time and energy of an offloaded computation went.
///
/// ```
/// use pimhe_pim::model::UpmemModel;
/// let b = UpmemModel::v1b().breakdown(0.1, 1.0, 0.2, 6);
/// assert!((b.total_s() - 1.3).abs() < 1e-12);
/// assert_eq!(b.model, "upmem-v1b@1 (modeled)");
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Breakdown {
    /// Modeled host -> DPU transfer seconds.
    pub transfer_s: f64,
    /// Modeled DPU compute seconds (launches, with their overheads).
    pub compute_s: f64,
    /// Modeled DPU -> host retrieval seconds.
    pub retrieve_s: f64,
    /// Modeled whole-system energy over `transfer_s + compute_s + retrieve_s`.
    pub energy_j: f64,
    /// The model that produced these figures, from [`UpmemModel::label`].
    pub model: String,
}

impl Breakdown {
    /// Modeled transfer + compute + retrieval seconds.
    pub fn total_s(&self) -> f64 {
        self.transfer_s + self.compute_s + self.retrieve_s
    }
}

/// The `upmem-v1b` timing and energy model: constants (each with its source) and pure
/// functions. Build it with [`UpmemModel::v1b`]; the what-ifs are plain fields to set.
///
/// Fitted constants come from [`super::calibrate::calibrate`] on the DRAMatic rows of
/// `shared/reference/dramatic_calibration.csv` (the only measured data the project calibrates
/// on), rounded to 5 significant digits; the worst fit errors are quoted per field.
///
/// ```
/// use pimhe_pim::model::{MultiplierCycles, UpmemModel};
/// let mut what_if = UpmemModel::v1b();
/// what_if.zero_copy = true;
/// what_if.multiplier_cycles = Some(MultiplierCycles::SINGLE_CYCLE);
/// assert_eq!(what_if.transfer_seconds(&[1 << 20; 8]), 0.0);
/// assert!(what_if.label().contains("zero-copy"));
/// ```
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UpmemModel {
    /// [`MODEL_NAME`].
    pub name: &'static str,
    /// [`MODEL_VERSION`].
    pub version: &'static str,

    /// DPU clock, Hz. 350 MHz: the clock of deployed UPMEM servers (seed 001's 2048-DPU
    /// machine, PrIM's 2556-DPU machine) and docs/PIM.md's choice for DRAMatic's machine.
    /// DRAMatic 2.1 says "up to 400 MHz" and the UPMEM SDK lists v1B at 400 MHz nominal
    /// (450 MHz parts exist). The published compute times fix only the ratio
    /// cycles-per-butterfly / clock, so at 400 MHz the implied cycle counts scale by 8/7.
    pub dpu_hz: f64,
    /// Revolver depth: a tasklet issues at most one instruction every 11 cycles, so 11 busy
    /// tasklets fill the pipeline (DRAMatic 2.1).
    pub revolver_cycles: u32,
    /// Tasklets of a v1B DPU (16; DRAMatic 2.1, UPMEM SDK). Informational: the formulas take
    /// however many tasklets the counts have.
    pub max_tasklets: u32,
    /// Tasklets a launch runs (`NR_TASKLETS`): 16, all a v1B DPU has, as DRAMatic and pimhe's
    /// kernels run. The setting the emulated system takes its tasklet count from; the formulas
    /// price whatever tasklets the counts have.
    pub tasklets: u32,
    /// How a launch's counts become cycles: over the whole launch (`@1`) or barrier interval
    /// by barrier interval (`@2`).
    pub pricing: LaunchPricing,
    /// How a host <-> DPU copy spreads over the ranks it touches: one pooled bandwidth (`@1`)
    /// or each rank on its own path, the slowest bounding the copy (`@2`).
    pub rank_transfers: RankTransfers,

    /// Fixed cycles of one `mram_read` (MRAM -> WRAM DMA): 77, PrIM (Gomez-Luna et al., 2022,
    /// sec. 3.2.1: latency = alpha + beta * size, alpha = 77 cycles for reads).
    pub dma_read_alpha_cycles: f64,
    /// Fixed cycles of one `mram_write` (WRAM -> MRAM DMA): 61, PrIM sec. 3.2.1.
    pub dma_write_alpha_cycles: f64,
    /// Cycles per byte of either DMA direction: 0.5, PrIM sec. 3.2.1. Reads and writes use
    /// their own alpha (the counts separate them) and share beta.
    pub dma_beta_cycles_per_byte: f64,

    /// Host -> DPU bandwidth contributed by each rank touched, bytes/s: 2.4022 GB/s. Fitted
    /// (minimax, [`super::calibrate::calibrate`]) on the DRAMatic `transfer_s` column
    /// together with the three constants below; worst error over the 28 rows 19.99 % beyond
    /// the published rounding. Set by the 2-rank rows (Table 2); only 2 and 6 ranks were
    /// measured, so 3..5 ranks are interpolated by this `min(ranks * per_rank, max)` shape.
    pub transfer_bytes_per_s_per_rank: f64,
    /// Most host -> DPU bandwidth the host sustains, bytes/s: 10.394 GB/s, set by the 6-rank
    /// rows (Table 3). Fitted with the above.
    pub max_transfer_bytes_per_s: f64,
    /// Fixed cost of one host -> DPU transfer: 155 us. Fitted with the above (the 2-rank rows
    /// of a few MB are slower per byte than the large ones).
    pub transfer_latency_s: f64,
    /// Cost per DPU addressed by a host -> DPU transfer: 0 (the fit's choice). Fitted.
    pub transfer_latency_s_per_dpu: f64,
    /// DPU -> host bandwidth contributed by each rank touched, bytes/s: 1.2410 GB/s. Fitted
    /// (minimax) on the DRAMatic `retrieve_s` column with the three constants below; worst
    /// error over the 28 rows 18.79 % beyond the published rounding.
    pub retrieve_bytes_per_s_per_rank: f64,
    /// Most DPU -> host bandwidth the host sustains, bytes/s: 5.3429 GB/s (6-rank rows).
    pub max_retrieve_bytes_per_s: f64,
    /// Fixed cost of one DPU -> host retrieval: 0 (the fit's choice). Fitted.
    pub retrieve_latency_s: f64,
    /// Cost per DPU addressed by a DPU -> host retrieval: 5.35 us, i.e. 2.0 ms on 383 DPUs
    /// (the 6-rank N = 1024 rows are slower per byte than the larger ones). Weakly
    /// determined (DRAMatic measured 2..383 DPUs); extrapolate to 2560 DPUs with care.
    pub retrieve_latency_s_per_dpu: f64,

    /// Host-side cost of one launch (boot, synchronous wait, status poll): 405 us. Fitted as
    /// the shared intercept of DRAMatic's 28 `compute_s` rows, one slope per kernel
    /// ([`super::calibrate::calibrate`]); the published rounding (1 ms) leaves it uncertain
    /// to a few hundred us.
    pub launch_overhead_s: f64,

    /// Whole-system power with the DPUs idle, W: "about 310 watts even when idle"
    /// (DRAMatic 4.4; wall power of the 2-socket, 8-rank machine).
    pub idle_power_w: f64,
    /// Power added per active rank, W: 8.2605. Least-squares fit of the 24 DRAMatic rows with
    /// `power_w`, idle fixed at [`UpmemModel::idle_power_w`]; worst error 4.32 % (Table 2,
    /// 64 ciphertexts on 2 ranks: 313 W measured, 326.5 W modeled). DRAMatic 4.4's text
    /// (329 W on 2 ranks, 374 W on 8) is reproduced within 1 %.
    pub power_per_active_rank_w: f64,

    /// DPUs per rank: 64 on UPMEM DIMMs. DPU `i` of a set is taken to sit in rank
    /// `i / dpus_per_rank` (DPUs are allocated rank by rank).
    pub dpus_per_rank: u32,

    /// What-if (DRAMatic 5.1): the cost of the 32x32 multiply routines. `None` models the
    /// hardware as it is (the counted instructions stand). With `Some`, the functions that
    /// take [`MultiplyCounts`] replace the counted multiply instructions by these costs; the
    /// functions that do not take them cannot apply it and model the counts as they are.
    pub multiplier_cycles: Option<MultiplierCycles>,
    /// What-if (DRAMatic 5.2): the CPU works in PIM memory directly, so host <-> DPU
    /// transfers and retrievals cost nothing.
    pub zero_copy: bool,
}

/// The default version ([`super::ModelVersion::default`]), with no what-if.
impl Default for UpmemModel {
    fn default() -> Self {
        super::ModelVersion::default().model()
    }
}

impl UpmemModel {
    /// The `upmem-v1b` model, version [`MODEL_VERSION`], with no what-if active.
    ///
    /// ```
    /// let m = pimhe_pim::model::UpmemModel::v1b();
    /// assert_eq!((m.name, m.dpu_hz, m.revolver_cycles), ("upmem-v1b", 350e6, 11));
    /// ```
    pub fn v1b() -> Self {
        Self {
            name: MODEL_NAME,
            version: MODEL_VERSION,
            dpu_hz: 350e6,
            revolver_cycles: REVOLVER_CYCLES,
            max_tasklets: V1B_MAX_TASKLETS,
            tasklets: V1B_MAX_TASKLETS,
            pricing: LaunchPricing::WholeLaunch,
            rank_transfers: RankTransfers::Pooled,
            dma_read_alpha_cycles: 77.0,
            dma_write_alpha_cycles: 61.0,
            dma_beta_cycles_per_byte: 0.5,
            // Frozen output of calibrate::calibrate on dramatic_calibration.csv, 5 significant
            // digits (the model_calibration test re-fits and compares). Worst published_error
            // over the 28 DRAMatic rows: transfer 19.99 % (the floor for this family: the
            // 6-rank N = 4096 and N = 8192 NTT rows imply 12.5 vs 8.3 GB/s), retrieve 18.79 %.
            transfer_bytes_per_s_per_rank: 2.4022e9,
            max_transfer_bytes_per_s: 10.394e9,
            transfer_latency_s: 155e-6,
            transfer_latency_s_per_dpu: 0.0,
            retrieve_bytes_per_s_per_rank: 1.2410e9,
            max_retrieve_bytes_per_s: 5.3429e9,
            retrieve_latency_s: 0.0,
            retrieve_latency_s_per_dpu: 5.35e-6,
            // Shared intercept of the 28 DRAMatic compute_s rows (relative least squares).
            launch_overhead_s: 405.22e-6,
            idle_power_w: 310.0,
            // Least squares on the 24 DRAMatic rows with power_w; worst error 4.32 %.
            power_per_active_rank_w: 8.2605,
            dpus_per_rank: DPUS_PER_RANK,
            multiplier_cycles: None,
            zero_copy: false,
        }
    }

    /// `name@version (modeled)`, plus `+mul=<m32>/<m64>` and `+zero-copy` for active
    /// what-ifs: the label every modeled figure must carry.
    ///
    /// ```
    /// let mut m = pimhe_pim::model::UpmemModel::v1b();
    /// assert_eq!(m.label(), "upmem-v1b@1 (modeled)");
    /// m.multiplier_cycles = Some(pimhe_pim::model::MultiplierCycles::DRAMATIC_DUMMY);
    /// assert_eq!(m.label(), "upmem-v1b@1+mul=2/4 (modeled)");
    /// ```
    pub fn label(&self) -> String {
        let mut label = format!("{}@{}", self.name, self.version);
        if let Some(m) = self.multiplier_cycles {
            label.push_str(&format!("+mul={}/{}", m.mul32, m.mul64));
        }
        if self.zero_copy {
            label.push_str("+zero-copy");
        }
        label.push_str(" (modeled)");
        label
    }

    /// Instructions a tasklet issues under this model: the counted ones, or with the
    /// multiplier what-if active and `muls` given, the counted ones with the multiply
    /// routines' instructions replaced by `mul32 * m32 + mul64 * m64` (saturating at 0 if
    /// `muls.instructions` exceeds the count).
    ///
    /// ```
    /// use pimhe_pim::counts::TaskletCounts;
    /// use pimhe_pim::model::{MultiplierCycles, MultiplyCounts, UpmemModel};
    /// let t = TaskletCounts { instructions: 1000, ..Default::default() };
    /// let muls = MultiplyCounts { mul32: 10, mul64: 10, instructions: 560 };
    /// let mut m = UpmemModel::v1b();
    /// assert_eq!(m.effective_instructions(&t, Some(&muls)), 1000);
    /// m.multiplier_cycles = Some(MultiplierCycles::DRAMATIC_DUMMY);
    /// assert_eq!(m.effective_instructions(&t, Some(&muls)), 1000 - 560 + 10 * 2 + 10 * 4);
    /// ```
    pub fn effective_instructions(&self, tasklet: &TaskletCounts, muls: Option<&MultiplyCounts>) -> u64 {
        match (self.multiplier_cycles, muls) {
            (Some(cost), Some(m)) => tasklet
                .instructions
                .saturating_sub(m.instructions)
                .saturating_add(m.mul32.saturating_mul(cost.mul32 as u64))
                .saturating_add(m.mul64.saturating_mul(cost.mul64 as u64)),
            _ => tasklet.instructions,
        }
    }

    /// Cycles the DMA engine spends on a tasklet's transfers:
    /// `reads * alpha_read + writes * alpha_write + beta * (read bytes + write bytes)`.
    ///
    /// ```
    /// use pimhe_pim::counts::TaskletCounts;
    /// let t = TaskletCounts { dma_reads: 1, dma_read_bytes: 2048, ..Default::default() };
    /// assert_eq!(pimhe_pim::model::UpmemModel::v1b().dma_cycles(&t), 77.0 + 1024.0);
    /// ```
    pub fn dma_cycles(&self, tasklet: &TaskletCounts) -> f64 {
        tasklet.dma_reads as f64 * self.dma_read_alpha_cycles
            + tasklet.dma_writes as f64 * self.dma_write_alpha_cycles
            + (tasklet.dma_read_bytes + tasklet.dma_write_bytes) as f64 * self.dma_beta_cycles_per_byte
    }

    /// Issue cycles of tasklets with these instruction counts on the revolver pipeline, DMA
    /// aside: while `k` tasklets are still running each issues every `max(k, 11)` cycles, so
    /// with the counts sorted, `I(1) <= ... <= I(T)`,
    ///
    /// ```text
    /// issue = sum_j (I(j) - I(j-1)) * max(T - j + 1, revolver_cycles)
    /// ```
    ///
    /// This is `sum_t I(t)` when at least 11 tasklets stay busy to the end and
    /// `11 * I` for one tasklet (docs/PIM.md's two bounds, `max(sum, 11 * max)`), and above
    /// both when the load is uneven: the tail, where fewer than 11 tasklets are left, runs at
    /// one instruction per 11 cycles per tasklet. DRAMatic's sequential-mode rows need this
    /// (22 sub-polynomials per DPU over 16 tasklets take 16 + 11 = 27 NTT-times, not 22).
    ///
    /// ```
    /// let m = pimhe_pim::model::UpmemModel::v1b();
    /// assert_eq!(m.revolver_issue_cycles(&[100]), 1100);
    /// assert_eq!(m.revolver_issue_cycles(&[100; 16]), 1600);
    /// let mut uneven = vec![100; 16];
    /// uneven[..6].fill(200);
    /// assert_eq!(m.revolver_issue_cycles(&uneven), 1600 + 1100);
    /// ```
    pub fn revolver_issue_cycles(&self, instructions: &[u64]) -> u128 {
        let mut sorted: Vec<u64> = instructions.to_vec();
        sorted.sort_unstable();
        let depth = self.revolver_cycles.max(1) as u128;
        let tasklets = sorted.len();
        let mut previous = 0u64;
        let mut cycles = 0u128;
        for (j, &count) in sorted.iter().enumerate() {
            let running = (tasklets - j) as u128;
            cycles += (count - previous) as u128 * running.max(depth);
            previous = count;
        }
        cycles
    }

    /// Cycles one DPU needs for one launch (docs/PIM.md, "Counting -> time"):
    ///
    /// ```text
    /// instr_t = effective instructions of tasklet t      (counted, or multiplier what-if)
    /// dma_t   = sum over t's DMAs of (alpha + beta * bytes)          (one DMA engine)
    /// cycles  = max( revolver_issue_cycles(instr),                    pipeline
    ///                max_t (11 * instr_t + dma_t),                    one tasklet's chain
    ///                sum_t dma_t )                                    DMA engine
    /// ```
    ///
    /// rounded up. Each term is a lower bound on the real schedule and each is exact in its
    /// limit: a single tasklet (`11 * instr + dma`), 11 or more balanced compute-bound
    /// tasklets (`sum instr`), a DMA-bound DPU (`sum dma`). A tasklet waiting on its DMA is
    /// out of the revolver, so its DMA latency adds to its own chain once, not 11 times.
    ///
    /// ```
    /// use pimhe_pim::counts::{DpuCounts, TaskletCounts};
    /// let m = pimhe_pim::model::UpmemModel::v1b();
    /// let t = TaskletCounts { instructions: 100, dma_reads: 10, dma_read_bytes: 20480, ..Default::default() };
    /// // DMA-bound: 16 tasklets x 10 reads of 2048 B = 160 x (77 + 1024) cycles.
    /// assert_eq!(m.dpu_cycles(&DpuCounts { tasklets: vec![t; 16] }), 160 * 1101);
    /// ```
    pub fn dpu_cycles(&self, counts: &DpuCounts) -> u64 {
        self.dpu_cycles_with(counts, &[])
    }

    /// [`UpmemModel::dpu_cycles`] with the multiply work of each tasklet (`muls[t]` for
    /// tasklet `t`; missing entries mean no multiplies), for the multiplier what-if.
    ///
    /// ```
    /// use pimhe_pim::counts::{DpuCounts, TaskletCounts};
    /// use pimhe_pim::model::{MultiplierCycles, MultiplyCounts, UpmemModel};
    /// let mut m = UpmemModel::v1b();
    /// m.multiplier_cycles = Some(MultiplierCycles::SINGLE_CYCLE);
    /// let dpu = DpuCounts { tasklets: vec![TaskletCounts { instructions: 118, ..Default::default() }; 16] };
    /// let muls = vec![MultiplyCounts { mul32: 1, mul64: 2, instructions: 91 }; 16];
    /// assert_eq!(m.dpu_cycles_with(&dpu, &muls), 16 * (118 - 91 + 3));
    /// ```
    pub fn dpu_cycles_with(&self, counts: &DpuCounts, muls: &[MultiplyCounts]) -> u64 {
        self.cycles_of(&counts.tasklets, muls)
    }

    /// The formula of [`UpmemModel::dpu_cycles`] on these per-tasklet counts and multiplies.
    pub(super) fn cycles_of(&self, tasklets: &[TaskletCounts], muls: &[MultiplyCounts]) -> u64 {
        let instructions: Vec<u64> =
            tasklets.iter().enumerate().map(|(t, c)| self.effective_instructions(c, muls.get(t))).collect();
        let issue = self.revolver_issue_cycles(&instructions) as f64;
        let depth = self.revolver_cycles as f64;
        let mut chain = 0f64;
        let mut engine = 0f64;
        for (tasklet, &instr) in tasklets.iter().zip(&instructions) {
            let dma = self.dma_cycles(tasklet);
            chain = chain.max(depth * instr as f64 + dma);
            engine += dma;
        }
        issue.max(chain).max(engine).ceil() as u64
    }

    /// [`UpmemModel::dpu_cycles`] and the seconds they take at [`UpmemModel::dpu_hz`].
    pub fn dpu_time(&self, counts: &DpuCounts) -> LaunchTime {
        self.time_of(self.dpu_cycles(counts))
    }

    pub(super) fn time_of(&self, cycles: u64) -> LaunchTime {
        LaunchTime { cycles, seconds: cycles as f64 / self.dpu_hz }
    }

    /// Seconds of one launch on these DPUs: the slowest DPU plus
    /// [`UpmemModel::launch_overhead_s`]; 0 when no DPU takes part.
    ///
    /// ```
    /// use pimhe_pim::counts::{DpuCounts, TaskletCounts};
    /// let m = pimhe_pim::model::UpmemModel::v1b();
    /// let dpu = |i| DpuCounts { tasklets: vec![TaskletCounts { instructions: i, ..Default::default() }; 16] };
    /// let s = m.launch_seconds(&[dpu(1000), dpu(3500)]);
    /// assert!((s - (16.0 * 3500.0 / 350e6 + m.launch_overhead_s)).abs() < 1e-15);
    /// assert_eq!(m.launch_seconds(&[]), 0.0);
    /// ```
    pub fn launch_seconds(&self, per_dpu: &[DpuCounts]) -> f64 {
        self.launch_seconds_with(per_dpu, &[])
    }

    /// [`UpmemModel::launch_seconds`] with each DPU's per-tasklet multiply work
    /// (`muls[d][t]`; missing entries mean none), for the multiplier what-if.
    pub fn launch_seconds_with(&self, per_dpu: &[DpuCounts], muls: &[Vec<MultiplyCounts>]) -> f64 {
        self.launch_seconds_of(per_dpu, muls, &[])
    }

    /// Total bytes, DPUs addressed and ranks touched by a transfer with `bytes_per_dpu[i]`
    /// bytes for DPU `i` (entries of 0 do not take part; DPU `i` sits in rank
    /// `i / dpus_per_rank`).
    ///
    /// ```
    /// let m = pimhe_pim::model::UpmemModel::v1b();
    /// let mut bytes = vec![0u64; 192];
    /// bytes[3] = 100;
    /// bytes[130] = 50;
    /// assert_eq!(m.footprint(&bytes), (150, 2, 2));
    /// ```
    pub fn footprint(&self, bytes_per_dpu: &[u64]) -> (u64, u32, u32) {
        let per_rank = self.dpus_per_rank.max(1) as usize;
        let mut total = 0u64;
        let mut dpus = 0u32;
        let mut ranks = 0u32;
        let mut last_rank = None;
        for (i, &b) in bytes_per_dpu.iter().enumerate() {
            if b == 0 {
                continue;
            }
            total += b;
            dpus += 1;
            if last_rank != Some(i / per_rank) {
                last_rank = Some(i / per_rank);
                ranks += 1;
            }
        }
        (total, dpus, ranks)
    }

    /// Seconds of one host -> DPU transfer (one push for all DPUs) of `bytes_per_dpu[i]`
    /// bytes to DPU `i`: with [`RankTransfers::Pooled`], [`UpmemModel::transfer_seconds_for`]
    /// of its [`UpmemModel::footprint`]; with [`RankTransfers::Parallel`], bounded by its
    /// busiest rank ([`UpmemModel::parallel_rank_seconds`]).
    pub fn transfer_seconds(&self, bytes_per_dpu: &[u64]) -> f64 {
        match self.rank_transfers {
            RankTransfers::Pooled => {
                let (bytes, dpus, ranks) = self.footprint(bytes_per_dpu);
                self.transfer_seconds_for(bytes, dpus, ranks)
            }
            RankTransfers::Parallel => self.parallel_rank_seconds(bytes_per_dpu, self.transfer_link()),
        }
    }

    /// Seconds of one host -> DPU transfer of `total_bytes` to `dpus` DPUs in `ranks` ranks:
    ///
    /// ```text
    /// latency + latency_per_dpu * dpus + total_bytes / min(ranks * per_rank, max)
    /// ```
    ///
    /// 0 for no bytes, or with [`UpmemModel::zero_copy`].
    ///
    /// ```
    /// let m = pimhe_pim::model::UpmemModel::v1b();
    /// // DRAMatic Table 3: 1 GiB (N = 2048, 2 primes, 32768 ciphertexts) to 383 DPUs, 6 ranks.
    /// let s = m.transfer_seconds_for(1 << 30, 383, 6);
    /// assert!((s - 0.104).abs() < 0.02); // published: 0.102 s (NTT), 0.106 s (iNTT)
    /// ```
    pub fn transfer_seconds_for(&self, total_bytes: u64, dpus: u32, ranks: u32) -> f64 {
        if self.zero_copy || total_bytes == 0 {
            return 0.0;
        }
        link_seconds(
            total_bytes,
            dpus,
            ranks,
            self.transfer_latency_s,
            self.transfer_latency_s_per_dpu,
            self.transfer_bytes_per_s_per_rank,
            self.max_transfer_bytes_per_s,
        )
    }

    /// Seconds of one DPU -> host retrieval of `bytes_per_dpu[i]` bytes from DPU `i`: as
    /// [`UpmemModel::transfer_seconds`], with the retrieve constants.
    pub fn retrieve_seconds(&self, bytes_per_dpu: &[u64]) -> f64 {
        match self.rank_transfers {
            RankTransfers::Pooled => {
                let (bytes, dpus, ranks) = self.footprint(bytes_per_dpu);
                self.retrieve_seconds_for(bytes, dpus, ranks)
            }
            RankTransfers::Parallel => self.parallel_rank_seconds(bytes_per_dpu, self.retrieve_link()),
        }
    }

    /// Seconds of one DPU -> host retrieval of `total_bytes` from `dpus` DPUs in `ranks` ranks:
    /// the formula of [`UpmemModel::transfer_seconds_for`] with the retrieve constants.
    ///
    /// ```
    /// let m = pimhe_pim::model::UpmemModel::v1b();
    /// let s = m.retrieve_seconds_for(1 << 30, 383, 6);
    /// assert!((s - 0.199).abs() < 0.04); // published: 0.213 s (NTT), 0.185 s (iNTT)
    /// ```
    pub fn retrieve_seconds_for(&self, total_bytes: u64, dpus: u32, ranks: u32) -> f64 {
        if self.zero_copy || total_bytes == 0 {
            return 0.0;
        }
        link_seconds(
            total_bytes,
            dpus,
            ranks,
            self.retrieve_latency_s,
            self.retrieve_latency_s_per_dpu,
            self.retrieve_bytes_per_s_per_rank,
            self.max_retrieve_bytes_per_s,
        )
    }

    /// Whole-system power with `active_ranks` ranks working:
    /// `idle_power_w + power_per_active_rank_w * active_ranks`.
    ///
    /// ```
    /// let m = pimhe_pim::model::UpmemModel::v1b();
    /// assert_eq!(m.power_watts(0), 310.0);
    /// ```
    pub fn power_watts(&self, active_ranks: u32) -> f64 {
        self.idle_power_w + self.power_per_active_rank_w * active_ranks as f64
    }

    /// Whole-system energy of `seconds` with `active_ranks` ranks working:
    /// [`UpmemModel::power_watts`] times `seconds`.
    ///
    /// ```
    /// let m = pimhe_pim::model::UpmemModel::v1b();
    /// assert_eq!(m.energy_joules(2.0, 6), 2.0 * m.power_watts(6));
    /// ```
    pub fn energy_joules(&self, seconds: f64, active_ranks: u32) -> f64 {
        self.power_watts(active_ranks) * seconds
    }

    /// A [`Breakdown`] of these modeled times, with the energy of their sum on
    /// `active_ranks` ranks and this model's [`UpmemModel::label`].
    pub fn breakdown(&self, transfer_s: f64, compute_s: f64, retrieve_s: f64, active_ranks: u32) -> Breakdown {
        Breakdown {
            transfer_s,
            compute_s,
            retrieve_s,
            energy_j: self.energy_joules(transfer_s + compute_s + retrieve_s, active_ranks),
            model: self.label(),
        }
    }
}

/// `latency + per_dpu * dpus + bytes / min(ranks * per_rank, max)`, the host <-> DPU link.
pub(crate) fn link_seconds(
    bytes: u64,
    dpus: u32,
    ranks: u32,
    latency_s: f64,
    latency_s_per_dpu: f64,
    bytes_per_s_per_rank: f64,
    max_bytes_per_s: f64,
) -> f64 {
    let bandwidth = (ranks.max(1) as f64 * bytes_per_s_per_rank).min(max_bytes_per_s);
    latency_s + latency_s_per_dpu * dpus as f64 + bytes as f64 / bandwidth
}
