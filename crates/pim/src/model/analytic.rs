//! Counts of DRAMatic-style kernels built from first principles, without the emulator: the
//! check that the model's structure explains the published compute times, and a yardstick
//! for what the emulator counts.
//!
//! A DPU that runs `k` sub-polynomial NTTs of size `N`, coarse-grained over `T = 16`
//! tasklets (sub-polynomial `i` on tasklet `i mod T`), at `c` instructions per butterfly,
//! has `n_t = ceil((k - t) / T)` NTTs on tasklet `t` and `B = N/2 * log2 N` butterflies per
//! NTT, so (DMA aside, see [`ntt_item`]) [`super::UpmemModel::dpu_cycles`] gives
//!
//! ```text
//! cycles = c * B * sum over rounds r of max(busy_r, 11),   busy_r = min(16, k - 16 r)
//! compute_s = launches * (cycles / f_dpu + launch_overhead_s)
//! ```
//!
//! i.e. `c * B * k` once 11 or more tasklets are busy, `11 * c * B` per round below that.
//!
//! ```
//! use pimhe_pim::model::{analytic, UpmemModel};
//! let item = analytic::ntt_item(2048, 118.0, 0);
//! let dpu = analytic::coarse_grained(16, 16, &item);
//! let seconds = UpmemModel::v1b().dpu_time(&dpu).seconds;
//! assert!((seconds - 16.0 * 118.0 * 11264.0 / 350e6).abs() < 1e-9); // DRAMatic: 0.061 s
//! ```

use crate::counts::{DpuCounts, TaskletCounts};

/// Butterflies of one size-`n` NTT: `n/2 * log2 n` (`n` a power of two).
///
/// ```
/// assert_eq!(pimhe_pim::model::analytic::ntt_butterflies(2048), 1024 * 11);
/// ```
pub fn ntt_butterflies(n: u64) -> u64 {
    if n < 2 {
        return 0;
    }
    n / 2 * n.ilog2() as u64
}

/// Counts of one in-MRAM NTT of size `n`: `cycles_per_butterfly * ntt_butterflies(n)`
/// instructions (rounded), and with `dma_block_bytes > 0` the DMAs of a streaming kernel that
/// reads and writes the whole sub-polynomial once per stage and reads its `n` twiddles and `n`
/// Shoup constants once, in blocks of `dma_block_bytes` (8..=2048). With 0, no DMA (a
/// sub-polynomial resident in WRAM).
///
/// ```
/// let item = pimhe_pim::model::analytic::ntt_item(1024, 120.0, 2048);
/// assert_eq!(item.instructions, 120 * 512 * 10);
/// assert_eq!(item.dma_read_bytes, 10 * 4096 + 8192);
/// assert_eq!(item.dma_writes, 10 * 2);
/// ```
pub fn ntt_item(n: u64, cycles_per_butterfly: f64, dma_block_bytes: u64) -> TaskletCounts {
    let instructions = (cycles_per_butterfly * ntt_butterflies(n) as f64).round() as u64;
    if dma_block_bytes == 0 || n < 2 {
        return TaskletCounts { instructions, ..Default::default() };
    }
    let stages = n.ilog2() as u64;
    let poly_bytes = 4 * n;
    let blocks = |bytes: u64| bytes.div_ceil(dma_block_bytes);
    TaskletCounts {
        instructions,
        dma_reads: stages * blocks(poly_bytes) + blocks(2 * poly_bytes),
        dma_read_bytes: stages * poly_bytes + 2 * poly_bytes,
        dma_writes: stages * blocks(poly_bytes),
        dma_write_bytes: stages * poly_bytes,
    }
}

/// Counts of one DPU that runs `items` independent work items, each costing `per_item`,
/// coarse-grained over `tasklets` tasklets: item `i` on tasklet `i mod tasklets`, as
/// DRAMatic's NTT/iNTT and pimhe's kernels do (docs/PIM.md).
///
/// ```
/// use pimhe_pim::counts::TaskletCounts;
/// let one = TaskletCounts { instructions: 10, ..Default::default() };
/// let dpu = pimhe_pim::model::analytic::coarse_grained(18, 16, &one);
/// assert_eq!(dpu.tasklets[0].instructions, 20);
/// assert_eq!(dpu.tasklets[2].instructions, 10);
/// ```
pub fn coarse_grained(items: u64, tasklets: u32, per_item: &TaskletCounts) -> DpuCounts {
    let tasklets = tasklets.max(1) as u64;
    let counts = (0..tasklets)
        .map(|t| {
            let n = if items > t { (items - t).div_ceil(tasklets) } else { 0 };
            TaskletCounts {
                instructions: per_item.instructions * n,
                dma_reads: per_item.dma_reads * n,
                dma_read_bytes: per_item.dma_read_bytes * n,
                dma_writes: per_item.dma_writes * n,
                dma_write_bytes: per_item.dma_write_bytes * n,
            }
        })
        .collect();
    DpuCounts { tasklets: counts }
}
