//! This machine's memory bandwidth, measured the way STREAM measures it (McCalpin, "Memory
//! Bandwidth and Machine Balance in Current High Performance Computers", IEEE TCCA Newsletter,
//! 1995): three arrays far larger than the caches, and the best of several passes of
//! copy (`c = a`), add (`c = a + b`) and triad (`a = b + k c`), counting the bytes the kernel
//! names (16 per element for copy, 24 for add and triad; the write-allocate reads a cache may
//! add are not counted, as in STREAM). It is the physical limit a memory-bound operation is
//! compared with: bytes it must move / its time / this figure.
//!
//! The elements are 64-bit words (the residues' arithmetic does not matter to a bandwidth), the
//! work is split over the threads in contiguous blocks, and each thread first touches the
//! blocks it will stream, so that on a NUMA machine its pages are local.
//!
//! ```
//! use pimhe_bench::measure::bandwidth::{self, BandwidthConfig};
//! // A tiny run (8 MiB arrays), as a doc example; the default is 256 MiB per array.
//! let report = bandwidth::run(&BandwidthConfig { mib: 8, repeat: 2, threads: Some(1) }).unwrap();
//! assert_eq!(report.kernels.iter().map(|k| k.kernel).collect::<Vec<_>>(), ["copy", "add", "triad"]);
//! assert!(report.kernels.iter().all(|k| k.gb_per_s > 0.0));
//! // Copy reads one array and writes another: 2 x 8 MiB a pass.
//! assert_eq!(report.kernels[0].bytes_per_pass, 2 * (8 << 20));
//! ```

use std::time::Instant;

use rayon::prelude::*;
use serde::Serialize;

use crate::error::{check_repeat, check_threads, BenchError, Result};
use crate::format::Render;

/// Largest array the probe takes, MiB (three of them are allocated).
pub const MAX_MIB: usize = 16 << 10;

/// What a run takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BandwidthConfig {
    /// Each array's size, MiB (1 ..= [`MAX_MIB`]); far above the last-level cache, or the
    /// figure is the cache's.
    pub mib: usize,
    /// Passes of each kernel; the best is reported (1 ..= `MAX_REPEAT`).
    pub repeat: usize,
    /// Threads (`None`: every core, as the CPU backend).
    pub threads: Option<usize>,
}

impl Default for BandwidthConfig {
    fn default() -> Self {
        Self { mib: 256, repeat: 5, threads: None }
    }
}

/// One kernel's best pass.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KernelBandwidth {
    /// `copy`, `add` or `triad`.
    pub kernel: &'static str,
    /// Bytes the kernel reads and writes in one pass over the arrays.
    pub bytes_per_pass: u64,
    /// The best pass, seconds.
    pub best_s: f64,
    /// `bytes_per_pass / best_s`, in 10^9 bytes per second.
    pub gb_per_s: f64,
}

/// What a run measured.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BandwidthReport {
    /// Threads that streamed.
    pub threads: usize,
    /// Each array's size, MiB.
    pub array_mib: usize,
    /// Passes of each kernel.
    pub repeat: usize,
    /// Copy, add and triad, in that order.
    pub kernels: Vec<KernelBandwidth>,
    /// The best of the kernels, 10^9 bytes per second: the figure memory-bound operations are
    /// compared with.
    pub best_gb_per_s: f64,
}

/// Runs the probe.
pub fn run(config: &BandwidthConfig) -> Result<BandwidthReport> {
    if !(1..=MAX_MIB).contains(&config.mib) {
        return Err(BenchError::usage(format!("--mib {} is not allowed: 1..={MAX_MIB}", config.mib)));
    }
    check_repeat(config.repeat, "pass")?;
    check_threads(config.threads)?;
    let bytes = 3 * (config.mib as u128) << 20;
    pimhe_ring::memory::ensure_fits(&format!("three arrays of --mib {}", config.mib), bytes)
        .map_err(|e| BenchError::usage(format!("{e}; lower --mib")))?;
    let threads = config.threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| BenchError::Failed(format!("cannot start {threads} threads: {e}")))?;
    let len = (config.mib << 20) / 8;
    // A block per thread (the last may be shorter), the same blocks for every kernel.
    let block = len.div_ceil(threads);
    let kernels = pool.install(|| {
        // The zeroed allocation maps its pages lazily: the parallel fill is their first touch.
        let first_touch = |value: u64| {
            let mut v = vec![0u64; len];
            v.par_chunks_mut(block).for_each(|chunk| chunk.fill(value));
            v
        };
        let (mut a, mut b, mut c) = (first_touch(1), first_touch(2), first_touch(0));
        let k = 3u64;
        let mut best = [f64::INFINITY; 3];
        for _ in 0..config.repeat {
            best[0] = best[0].min(timed(|| {
                c.par_chunks_mut(block).zip(a.par_chunks(block)).for_each(|(c, a)| c.copy_from_slice(a))
            }));
            best[1] = best[1].min(timed(|| {
                c.par_chunks_mut(block).zip(a.par_chunks(block)).zip(b.par_chunks(block)).for_each(|((c, a), b)| {
                    for ((c, a), b) in c.iter_mut().zip(a).zip(b) {
                        *c = a.wrapping_add(*b);
                    }
                })
            }));
            best[2] = best[2].min(timed(|| {
                a.par_chunks_mut(block).zip(b.par_chunks(block)).zip(c.par_chunks(block)).for_each(|((a, b), c)| {
                    for ((a, b), c) in a.iter_mut().zip(b).zip(c) {
                        *a = b.wrapping_add(k.wrapping_mul(*c));
                    }
                })
            }));
        }
        // The arrays stay live until every pass is timed; reading one keeps the passes from being
        // optimized away.
        std::hint::black_box((&mut a, &mut b, &mut c));
        best
    });
    let kernels: Vec<KernelBandwidth> = [("copy", 2u64), ("add", 3), ("triad", 3)]
        .iter()
        .zip(kernels)
        .map(|(&(kernel, arrays), best_s)| {
            let bytes_per_pass = arrays * 8 * len as u64;
            KernelBandwidth { kernel, bytes_per_pass, best_s, gb_per_s: bytes_per_pass as f64 / best_s / 1e9 }
        })
        .collect();
    let best_gb_per_s = kernels.iter().map(|k| k.gb_per_s).fold(0.0, f64::max);
    Ok(BandwidthReport { threads, array_mib: config.mib, repeat: config.repeat, kernels, best_gb_per_s })
}

/// Seconds `pass` takes.
fn timed(pass: impl FnOnce()) -> f64 {
    let start = Instant::now();
    pass();
    start.elapsed().as_secs_f64()
}

impl Render for BandwidthReport {
    fn render(&self) -> String {
        let mut out = format!(
            "pimhe bench bandwidth: STREAM-style, {} thread(s), three arrays of {} MiB, best of {} passes (measured)",
            self.threads, self.array_mib, self.repeat
        );
        for k in &self.kernels {
            out += &format!(
                "\n  {:<6} {:>8.2} GB/s  ({:.1} MB in {:.6} s)",
                k.kernel,
                k.gb_per_s,
                k.bytes_per_pass as f64 / 1e6,
                k.best_s
            );
        }
        out + &format!(
            "\n  best   {:>8.2} GB/s: the limit a memory-bound operation is compared with",
            self.best_gb_per_s
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_sizes_and_repeats_are_refused_naming_the_range() {
        let refused = |config: BandwidthConfig| run(&config).unwrap_err().to_string();
        assert_eq!(refused(BandwidthConfig { mib: 0, ..Default::default() }), "--mib 0 is not allowed: 1..=16384");
        assert!(refused(BandwidthConfig { mib: MAX_MIB + 1, ..Default::default() }).contains("1..=16384"));
        assert!(refused(BandwidthConfig { repeat: 0, ..Default::default() }).contains("--repeat 0"));
        assert!(refused(BandwidthConfig { threads: Some(0), ..Default::default() }).contains("--threads"));
    }

    #[test]
    fn the_bytes_follow_the_kernels_and_more_threads_split_the_same_work() {
        for threads in [1, 3] {
            let report = run(&BandwidthConfig { mib: 4, repeat: 1, threads: Some(threads) }).unwrap();
            let len = (4u64 << 20) / 8;
            let bytes: Vec<u64> = report.kernels.iter().map(|k| k.bytes_per_pass).collect();
            assert_eq!(bytes, [16 * len, 24 * len, 24 * len]);
            for k in &report.kernels {
                assert!((k.gb_per_s - k.bytes_per_pass as f64 / k.best_s / 1e9).abs() < 1e-9 * k.gb_per_s);
            }
            assert_eq!(report.best_gb_per_s, report.kernels.iter().map(|k| k.gb_per_s).fold(0.0, f64::max));
            assert_eq!(report.threads, threads);
        }
    }
}
