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
