//! What the emulator counts during a launch: the input of every timing model.

use serde::{Deserialize, Serialize};

/// Work of one tasklet during one launch.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskletCounts {
    /// DPU instructions (cycles of issue) its operations cost, per `dpu/kernels/cost.h`.
    pub instructions: u64,
    /// Number of MRAM -> WRAM transfers (`mram_read`).
    pub dma_reads: u64,
    /// Bytes moved by those reads.
    pub dma_read_bytes: u64,
    /// Number of WRAM -> MRAM transfers (`mram_write`).
    pub dma_writes: u64,
    /// Bytes moved by those writes.
    pub dma_write_bytes: u64,
}

impl TaskletCounts {
    /// Adds another tasklet's (or launch's) counts to these.
    pub fn accumulate(&mut self, other: &TaskletCounts) {
        self.instructions += other.instructions;
        self.dma_reads += other.dma_reads;
        self.dma_read_bytes += other.dma_read_bytes;
        self.dma_writes += other.dma_writes;
        self.dma_write_bytes += other.dma_write_bytes;
    }
}

/// Multiply work of one tasklet in one launch: the input of the multiplier what-if.
///
/// The emulator charges each multiply routine its cost from `dpu/kernels/cost.h`; to let the
/// model swap that cost for a hypothetical multiplier it must also say how many multiplies of
/// each width ran and how many of the tasklet's [`TaskletCounts::instructions`] they accounted
/// for (routine bodies including call overhead). [`crate::model::UpmemModel::effective_instructions`] then
/// replaces `instructions` by `mul32 * m32 + mul64 * m64`.
///
/// ```
/// use pimhe_pim::model::MultiplyCounts;
/// // 10 butterflies of a Barrett NTT: one 32x32->64 and one 32x32->32 multiply each.
/// let m = MultiplyCounts { mul32: 10, mul64: 10, instructions: 10 * (35 + 21) };
/// assert_eq!(m.instructions, 560);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MultiplyCounts {
    /// 32x32 -> 32-bit multiplies executed.
    pub mul32: u64,
    /// 32x32 -> 64-bit multiplies executed.
    pub mul64: u64,
    /// Instructions (already counted in [`TaskletCounts::instructions`]) those multiplies cost.
    pub instructions: u64,
}

/// Work of one DPU's tasklets between two consecutive barrier releases (or the launch's start
/// or end): a barrier interval. Every tasklet waits at the barrier that ends an interval, so no
/// work of one interval overlaps another's; `upmem-v1b@2` prices a launch interval by interval.
///
/// The emulator merges consecutive intervals with equal counts (a list of identical commands)
/// into one with `repeats` > 1, which keeps a launch of thousands of barriers small.
///
/// ```
/// use pimhe_pim::counts::{IntervalCounts, TaskletCounts};
/// let busy = TaskletCounts { instructions: 100, ..Default::default() };
/// let interval = IntervalCounts { repeats: 3, tasklets: vec![busy; 2], multiplies: vec![] };
/// assert_eq!(interval.total().instructions, 600);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct IntervalCounts {
    /// Consecutive intervals with exactly these counts.
    pub repeats: u64,
    /// Per-tasklet counts of one of them (index = `me()`).
    pub tasklets: Vec<TaskletCounts>,
    /// Per-tasklet multiply work among those counts (empty: none tallied).
    pub multiplies: Vec<MultiplyCounts>,
}

impl IntervalCounts {
    /// Sum over all tasklets and repeats.
    pub fn total(&self) -> TaskletCounts {
        let mut one = TaskletCounts::default();
        for t in &self.tasklets {
            one.accumulate(t);
        }
        TaskletCounts {
            instructions: one.instructions * self.repeats,
            dma_reads: one.dma_reads * self.repeats,
            dma_read_bytes: one.dma_read_bytes * self.repeats,
            dma_writes: one.dma_writes * self.repeats,
            dma_write_bytes: one.dma_write_bytes * self.repeats,
        }
    }
}

/// Work of one DPU during one launch: one entry per tasklet (index = `me()`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DpuCounts {
    /// Per-tasklet counts.
    pub tasklets: Vec<TaskletCounts>,
}

impl DpuCounts {
    /// Sum over all tasklets.
    pub fn total(&self) -> TaskletCounts {
        let mut total = TaskletCounts::default();
        for t in &self.tasklets {
            total.accumulate(t);
        }
        total
    }
}
