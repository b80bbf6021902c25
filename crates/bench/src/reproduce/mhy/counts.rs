//! What the slowest DPU of a raw operation counts: emulated where the emulator runs it in well
//! under a second, extrapolated from two emulated lengths for the long convolutions.
//!
//! The first coefficient range is the longest ([`coefficient_ranges`]), so its DPU is the
//! launch's slowest. Additions and coefficient-wise products are always emulated: one DPU's
//! range is at most 2^20 / 64 words. A convolution's DPU does `range x n` products; up to
//! [`EMULATED_PRODUCTS_MAX`] it is emulated, beyond it built per tasklet from the kernel's
//! structure (raw_poly.h): tasklet t takes output chunks t, t + 16, ... of L words
//! ([`conv_chunk_words`]), and a chunk of `len` outputs costs `alpha(len) + beta(len) n`
//! (n / 128 blocks, each the same for a given `len`; up to one DMA more where a window wraps),
//! so launches at two emulated lengths n1 < n2 with the same L give every count at any n by a
//! straight line. The test `mhy_counts` checks the extrapolation against a direct emulation.

use pimhe_pim::counts::{DpuCounts, TaskletCounts};
use pimhe_pim::emulator::EmulatorConfig;
use pimhe_pim::layout::Variant;
use pimhe_pim::raw_poly::{coefficient_ranges, conv_chunk_words, range_counts, RawOp, RawPolyError};
use serde::{Deserialize, Serialize};

/// The largest convolution work (products on one DPU) emulated directly: 2^22, about a second.
pub const EMULATED_PRODUCTS_MAX: usize = 1 << 22;

/// The two polynomial lengths a convolution's chunk is emulated at for the straight line:
/// long enough for two chunks of 128 outputs per tasklet (4096 outputs).
const FIT_LENGTHS: [usize; 2] = [1 << 12, 1 << 13];

/// How a row's DPU counts were obtained.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "counts", rename_all = "snake_case")]
pub enum CountsBasis {
    /// The slowest DPU's range executed on the emulator.
    Emulated,
    /// Built per tasklet from chunks emulated at n = `from[0]` and `from[1]`.
    Extrapolated {
        /// The emulated lengths.
        from: [usize; 2],
    },
}

/// The slowest DPU's counts for `op` on `n` coefficients over `dpus` DPUs, and how they were
/// obtained.
pub fn slowest_dpu(
    op: RawOp,
    q: u32,
    n: usize,
    dpus: usize,
    config: &EmulatorConfig,
    variant: Variant,
) -> Result<(DpuCounts, CountsBasis), RawPolyError> {
    let range = coefficient_ranges(n, dpus)?[0];
    let work = if op == RawOp::Conv { (range.1 - range.0) * n } else { 0 };
    if work <= EMULATED_PRODUCTS_MAX {
        return Ok((range_counts(op, q, n, range, None, config.clone(), variant)?, CountsBasis::Emulated));
    }
    Ok((conv_extrapolated(q, n, range.1 - range.0, config, variant)?, CountsBasis::Extrapolated { from: FIT_LENGTHS }))
}

/// The counts of a convolution DPU computing outputs [0, words) of length n, per tasklet, from
/// chunks emulated at [`FIT_LENGTHS`] (see the module documentation).
pub fn conv_extrapolated(
    q: u32,
    n: usize,
    words: usize,
    config: &EmulatorConfig,
    variant: Variant,
) -> Result<DpuCounts, RawPolyError> {
    let tasklets = config.tasklets as usize;
    let chunk_words = conv_chunk_words(n, words, config.tasklets);
    let (full, rest) = (words / chunk_words, words % chunk_words);
    // At each fit length, with the target's chunk: every tasklet's fixed work and the cost of
    // a full and of the partial chunk, from launches of one chunk per tasklet, two per
    // tasklet, and one per tasklet plus the partial one (tasklet 0's second).
    let mut fits = Vec::new();
    for &m in &FIT_LENGTHS {
        let counts =
            |outputs: usize| range_counts(RawOp::Conv, q, m, (0, outputs), Some(chunk_words), config.clone(), variant);
        let one = counts(tasklets * chunk_words)?;
        let two = counts(2 * tasklets * chunk_words)?;
        let chunk: Vec<TaskletCounts> = (0..tasklets).map(|t| minus(&two.tasklets[t], &one.tasklets[t])).collect();
        let fixed: Vec<TaskletCounts> = (0..tasklets).map(|t| minus(&one.tasklets[t], &chunk[t])).collect();
        let partial = if rest > 0 {
            minus(&counts(tasklets * chunk_words + rest)?.tasklets[0], &one.tasklets[0])
        } else {
            TaskletCounts::default()
        };
        fits.push((fixed, chunk, partial));
    }
    type Fit = (Vec<TaskletCounts>, Vec<TaskletCounts>, TaskletCounts);
    let at_n = |f: &dyn Fn(&Fit) -> TaskletCounts| line(&f(&fits[0]), &f(&fits[1]), FIT_LENGTHS, n);
    let partial = at_n(&|f| f.2);
    let chunks = full + usize::from(rest > 0);
    let counts = (0..tasklets)
        .map(|t| {
            let mut c = at_n(&|f| f.0[t]);
            let chunk = at_n(&|f| f.1[t]);
            for k in (t..chunks).step_by(tasklets) {
                c.accumulate(if k < full { &chunk } else { &partial });
            }
            c
        })
        .collect();
    Ok(DpuCounts { tasklets: counts })
}

fn minus(a: &TaskletCounts, b: &TaskletCounts) -> TaskletCounts {
    TaskletCounts {
        instructions: a.instructions - b.instructions,
        dma_reads: a.dma_reads - b.dma_reads,
        dma_read_bytes: a.dma_read_bytes - b.dma_read_bytes,
        dma_writes: a.dma_writes - b.dma_writes,
        dma_write_bytes: a.dma_write_bytes - b.dma_write_bytes,
    }
}

/// Every count on the straight line through (n1, a) and (n2, b), at n (rounded).
fn line(a: &TaskletCounts, b: &TaskletCounts, [n1, n2]: [usize; 2], n: usize) -> TaskletCounts {
    let at = |x: u64, y: u64| {
        let slope = (y as f64 - x as f64) / (n2 - n1) as f64;
        (x as f64 + slope * (n as f64 - n1 as f64)).round().max(0.0) as u64
    };
    TaskletCounts {
        instructions: at(a.instructions, b.instructions),
        dma_reads: at(a.dma_reads, b.dma_reads),
        dma_read_bytes: at(a.dma_read_bytes, b.dma_read_bytes),
        dma_writes: at(a.dma_writes, b.dma_writes),
        dma_write_bytes: at(a.dma_write_bytes, b.dma_write_bytes),
    }
}
