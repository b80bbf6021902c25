//! How `bench scheme` times: rounds of every operation after an untimed warm-up
//! ([`Rounds`]), each seen by an optional [`OpObserver`], the timings ([`OpTiming`]) and their
//! table, and the checks of a warm-up's results.

use std::time::Instant;

use pimhe_exec::Backend;
use pimhe_schemes::encoder::{BatchEncoder, Plaintext};
use pimhe_workloads::progress::Progress;
use serde::Serialize;

use super::bandwidth_use::BandwidthUse;
use crate::error::{BenchError, Result};
use crate::format::format_seconds;

/// The times of one operation over the rounds.
#[derive(Debug, Clone, Serialize)]
pub struct OpTiming {
    /// The operation, e.g. `multiply`.
    pub op: &'static str,
    /// Fastest round, seconds for the whole batch.
    pub best_s: f64,
    /// Median round, seconds for the whole batch.
    pub median_s: f64,
    /// `best_s / batch`.
    pub best_per_ciphertext_s: f64,
    /// `median_s / batch`.
    pub median_per_ciphertext_s: f64,
    /// Every round, seconds for the whole batch.
    pub times_s: Vec<f64>,
    /// Memory-bound rows: the bytes the operation must move for the whole batch
    /// ([`super::bandwidth_use`]'s rule).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bytes_moved: Option<u64>,
    /// Memory-bound rows on the CPU: the share of the measured bandwidth they reached.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bandwidth: Option<BandwidthUse>,
}

impl OpTiming {
    pub(crate) fn new(op: &'static str, times_s: Vec<f64>, batch: usize) -> Self {
        let best_s = times_s.iter().copied().fold(f64::INFINITY, f64::min);
        let median_s = median(&times_s);
        Self {
            op,
            best_s,
            median_s,
            best_per_ciphertext_s: best_s / batch as f64,
            median_per_ciphertext_s: median_s / batch as f64,
            times_s,
            bytes_moved: None,
            bandwidth: None,
        }
    }
}

/// The median of a non-empty list (the mean of the two middle values for an even length).
pub(crate) fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let mid = sorted.len() / 2;
    if sorted.len() % 2 == 1 {
        sorted[mid]
    } else {
        (sorted[mid - 1] + sorted[mid]) / 2.0
    }
}

/// The timing rows of a report, the operation's name in a column `name_width` wide; where a
/// row has a [`BandwidthUse`], a last column with its best round's share of the measured
/// bandwidth, and a line under the table with that bandwidth and the byte rule.
pub fn ops_table(ops: &[OpTiming], name_width: usize) -> String {
    let mut text = format!(
        "  {:<name_width$} {:>14} {:>14} {:>16} {:>16}",
        "op", "best/batch", "median/batch", "best/ciphertext", "median/ciphertext"
    );
    let measured = ops.iter().find_map(|op| op.bandwidth.as_ref().map(|b| b.measured_gb_per_s));
    if measured.is_some() {
        text.push_str(&format!(" {:>14}", "of bandwidth"));
    }
    for op in ops {
        text.push_str(&format!(
            "\n  {:<name_width$} {:>14} {:>14} {:>16} {:>16}",
            op.op,
            format_seconds(op.best_s),
            format_seconds(op.median_s),
            format_seconds(op.best_per_ciphertext_s),
            format_seconds(op.median_per_ciphertext_s),
        ));
        if let Some(used) = &op.bandwidth {
            text.push_str(&format!(" {:>13.0}%", 100.0 * used.best_fraction));
        }
    }
    if let Some(gb_per_s) = measured {
        text.push_str(&format!(
            "\n  of bandwidth: bytes that must move (4 per residue read or written) / best time / {gb_per_s:.2} GB/s \
             (this machine, STREAM-style, measured)"
        ));
    }
    text
}

/// A benchmark generic over the backend (a closure cannot be generic; this trait is).
pub(crate) trait BenchOnBackend<T> {
    /// Runs the benchmark on `backend`, `observer` seeing each timed operation.
    fn call<B: Backend>(&self, backend: &B, observer: Option<&dyn OpObserver>) -> Result<T>;
}

/// Told when each timed operation starts and ends (the near-bank backend's recorder,
/// [`crate::target::nearbank::OpRecorder`], cuts its trace there).
pub trait OpObserver {
    /// `op` is about to run.
    fn before(&self, op: &'static str);
    /// `op` has run.
    fn after(&self, op: &'static str);
}

/// The seconds of each operation, round after round; round 0 is the warm-up.
pub struct Rounds<'o> {
    ops: Vec<(&'static str, Vec<f64>)>,
    bytes_moved: Vec<(&'static str, u64)>,
    observer: Option<&'o dyn OpObserver>,
}

impl<'o> Rounds<'o> {
    /// No operation timed yet; `observer` (if any) sees each one.
    pub fn new(observer: Option<&'o dyn OpObserver>) -> Self {
        Self { ops: Vec::new(), bytes_moved: Vec::new(), observer }
    }

    /// Records that `op` must move `bytes` for the whole batch (a memory-bound row; the last
    /// record counts).
    pub fn moves(&mut self, op: &'static str, bytes: u64) {
        self.bytes_moved.retain(|(name, _)| *name != op);
        self.bytes_moved.push((op, bytes));
    }

    /// Runs `f`, adds its time to `op`'s list and returns its value.
    pub fn time<T>(&mut self, op: &'static str, f: impl FnOnce() -> Result<T>) -> Result<T> {
        if let Some(observer) = self.observer {
            observer.before(op);
        }
        let start = Instant::now();
        let value = f()?;
        let seconds = start.elapsed().as_secs_f64();
        if let Some(observer) = self.observer {
            observer.after(op);
        }
        match self.ops.iter_mut().find(|(name, _)| *name == op) {
            Some((_, times)) => times.push(seconds),
            None => self.ops.push((op, vec![seconds])),
        }
        Ok(value)
    }

    /// The timings without the warm-up round.
    pub fn finish(self, batch: usize) -> Vec<OpTiming> {
        let bytes_moved = self.bytes_moved;
        self.ops
            .into_iter()
            .map(|(op, times)| OpTiming {
                bytes_moved: bytes_moved.iter().find(|(name, _)| *name == op).map(|&(_, bytes)| bytes),
                ..OpTiming::new(op, times[1..].to_vec(), batch)
            })
            .collect()
    }
}

/// Runs `round(0)` (the warm-up) to `round(repeat)`, advancing `progress` after each, and
/// finishes it whatever the outcome (its caller started it).
pub(crate) fn time_rounds(
    repeat: usize,
    progress: &dyn Progress,
    mut round: impl FnMut(usize) -> Result<()>,
) -> Result<()> {
    let result = (0..=repeat).try_for_each(|r| {
        round(r)?;
        progress.advance(1);
        Ok(())
    });
    progress.finish();
    result
}

/// Fails unless every decrypted slot equals the product of the input slots modulo t.
pub(crate) fn check_product(
    encoder: &BatchEncoder,
    decrypted: &[Plaintext],
    x: &[Vec<u64>],
    y: &[Vec<u64>],
    t: u32,
) -> Result<()> {
    check_slots("product", encoder, decrypted, |k, i| x[k][i] * y[k][i] % t as u64)
}

/// Fails unless slot i of decrypted ciphertext k is `expected(k, i)` (reduced mod t).
pub(crate) fn check_slots(
    what: &str,
    encoder: &BatchEncoder,
    decrypted: &[Plaintext],
    expected: impl Fn(usize, usize) -> u64,
) -> Result<()> {
    for (k, plain) in decrypted.iter().enumerate() {
        let slots = encoder.decode(plain)?;
        if let Some(i) = (0..slots.len()).find(|&i| slots[i] != expected(k, i)) {
            return Err(BenchError::Failed(format!(
                "internal error: {what}: ciphertext {k} slot {i} decrypted to {}, expected {}",
                slots[i],
                expected(k, i)
            )));
        }
    }
    Ok(())
}

/// Fills each row's [`BandwidthUse`] from the bytes it recorded and `gb_per_s`.
pub(crate) fn attach(ops: &mut [OpTiming], gb_per_s: f64) {
    for op in ops {
        if let Some(bytes) = op.bytes_moved {
            let fraction = |seconds: f64| bytes as f64 / seconds / (gb_per_s * 1e9);
            op.bandwidth = Some(BandwidthUse {
                bytes_moved: bytes,
                measured_gb_per_s: gb_per_s,
                best_fraction: fraction(op.best_s),
                median_fraction: fraction(op.median_s),
            });
        }
    }
}
