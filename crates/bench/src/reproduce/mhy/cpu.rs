//! The CPU side of Fig. 3: each raw operation as a simple single-threaded Rust loop (u64
//! arithmetic, `%` per result as the paper's C code would), timed here once, and the rule that
//! scales it to the paper's 16 threads. The loops' results are also the host oracle the
//! emulated DPUs are checked against: they share no code with the kernels.

use std::time::Instant;

use pimhe_pim::raw_poly::RawOp;
use serde::{Deserialize, Serialize};

use super::published::{PAPER_CPU, PAPER_CPU_GHZ, PAPER_CPU_THREADS};
use crate::measure::machine::CpuFacts;

/// The largest convolution timed here: 2^26 products, a fraction of a second; longer ones are
/// extrapolated from it by n^2 (the loop's work, with no cache effect: it streams two
/// operands of at most 2^13 words, 64 KiB, from L2).
pub const CPU_CONV_MAX_N: usize = 1 << 13;

/// `op` on `a` and `b` modulo q, straight from its definition.
pub fn compute(op: RawOp, a: &[u32], b: &[u32], q: u32) -> Vec<u32> {
    let q = q as u64;
    match op {
        RawOp::Add => a.iter().zip(b).map(|(&x, &y)| ((x as u64 + y as u64) % q) as u32).collect(),
        RawOp::Mul => a.iter().zip(b).map(|(&x, &y)| ((x as u64 * y as u64) % q) as u32).collect(),
        RawOp::Conv => {
            // x^n = -1: a product landing at i + j >= n is subtracted at i + j - n.
            let n = a.len();
            let mut c = vec![0u64; n];
            for (i, &x) in a.iter().enumerate() {
                for (j, &y) in b.iter().enumerate() {
                    let p = x as u64 * y as u64 % q;
                    let k = i + j;
                    if k < n {
                        c[k] = (c[k] + p) % q;
                    } else {
                        c[k - n] = (c[k - n] + q - p) % q;
                    }
                }
            }
            c.into_iter().map(|x| x as u32).collect()
        }
    }
}

/// The rule that turns a single-thread time here into the paper's CPU's, stated in every report.
pub fn scaling_rule(here: &CpuFacts) -> String {
    format!(
        "scaled = single-thread time here x {:.2} GHz / ({PAPER_CPU_THREADS} threads x {PAPER_CPU_GHZ} GHz): the paper's \
         {PAPER_CPU}, perfect scaling over its 16 threads and the same work per cycle (no memory-bandwidth limit: \
         optimistic for the large additions and products, which stream memory)",
        here.ghz
    )
}

/// A time measured here scaled by [`scaling_rule`].
pub fn scaled(seconds: f64, here: &CpuFacts) -> f64 {
    seconds * here.ghz / (PAPER_CPU_THREADS as f64 * PAPER_CPU_GHZ)
}

/// How the single-thread CPU time of a row was obtained.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "basis", rename_all = "snake_case")]
pub enum CpuTime {
    /// Timed here, one run.
    Measured {
        /// Seconds.
        seconds: f64,
    },
    /// The convolution beyond [`CPU_CONV_MAX_N`]: the time at `from_n` times (n / from_n)^2.
    Extrapolated {
        /// Seconds.
        seconds: f64,
        /// The measured length it is scaled from.
        from_n: usize,
    },
    /// Not measured in this run (`--skip-cpu`).
    Skipped,
}

impl CpuTime {
    /// The seconds, if any.
    pub fn seconds(&self) -> Option<f64> {
        match self {
            CpuTime::Measured { seconds } | CpuTime::Extrapolated { seconds, .. } => Some(*seconds),
            CpuTime::Skipped => None,
        }
    }
}

/// Timed runs of one operation at most (MHY+ takes the median of 100 after 20 warm-ups).
const MAX_RUNS: usize = 100;
/// Timed runs go on while they have taken less than this, seconds: the short operations get
/// many runs, the long convolutions one.
const RUN_BUDGET_S: f64 = 0.2;

/// Times `op` on `a` and `b` after one warm-up run ([`median_seconds`]); returns the time with
/// the result.
pub fn time(op: RawOp, a: &[u32], b: &[u32], q: u32) -> (f64, Vec<u32>) {
    let out = compute(op, a, b, q);
    (median_seconds(|| drop(std::hint::black_box(compute(op, std::hint::black_box(a), b, q)))), out)
}

/// The median of up to [`MAX_RUNS`] timed runs of `run` within [`RUN_BUDGET_S`] (at least
/// one), the caller having warmed it up.
pub fn median_seconds(mut run: impl FnMut()) -> f64 {
    let mut times = Vec::new();
    while times.len() < MAX_RUNS && times.iter().sum::<f64>() < RUN_BUDGET_S {
        let start = Instant::now();
        run();
        times.push(start.elapsed().as_secs_f64());
    }
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}
