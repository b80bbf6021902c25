//! The verdict of one what-if: a PIM run's breakdown, the candidates of the search, the
//! crossover (the smallest batch and DPU count at which PIM is faster) or `never` with the
//! dominant reason, and the search over batches.

use serde::Serialize;

use crate::format::format_seconds;

use crate::error::Result;

/// A PIM run's modeled breakdown for the verdict (seconds).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct PimBreakdown {
    /// Modeled host -> DPU copies.
    pub transfer_s: f64,
    /// Modeled DPU launches.
    pub compute_s: f64,
    /// Modeled DPU -> host copies.
    pub retrieve_s: f64,
    /// The steps without a DPU kernel, on the host CPU (measured here; scaled with the CPU when
    /// compared with the scaled CPU).
    pub fallback_s: f64,
}

impl PimBreakdown {
    /// Everything: what a user waits for.
    pub fn total_s(&self) -> f64 {
        self.transfer_s + self.compute_s + self.retrieve_s + self.fallback_s
    }

    /// This breakdown with the CPU fallbacks scaled by `factor` (the server's host CPU).
    pub(super) fn with_fallbacks_scaled(self, factor: f64) -> Self {
        Self { fallback_s: self.fallback_s * factor, ..self }
    }
}

/// What holds PIM back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Bottleneck {
    /// Moving the operands in and the results out.
    Transfer,
    /// The DPUs' own arithmetic (32-bit multiplies in software on an 8x8 multiplier).
    Compute,
    /// The steps that run on the host CPU.
    CpuFallbacks,
}

/// One point of the crossover search: a batch on a DPU count, PIM against the CPU.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Candidate {
    /// Ciphertexts.
    pub batch: usize,
    /// DPUs.
    pub dpus: usize,
    /// PIM's breakdown.
    pub pim: PimBreakdown,
    /// The CPU's seconds for the same batch.
    pub cpu_s: f64,
}

/// The crossover of one what-if against one CPU.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "verdict", rename_all = "kebab-case")]
pub enum Verdict {
    /// PIM is faster from here on.
    Wins {
        /// The first candidate (in search order) where PIM is faster.
        at: Candidate,
    },
    /// PIM is never faster among the candidates.
    Never {
        /// The largest part of PIM's time at the closest candidate.
        bottleneck: Bottleneck,
        /// Why, with the numbers.
        reason: String,
        /// The candidate where PIM came closest (smallest PIM / CPU).
        closest: Candidate,
    },
    /// No candidate could be modeled (every one overflowed a DPU's MRAM).
    NotModeled,
}

/// The verdict on `candidates`, in search order: the first where PIM's total is below the CPU's
/// time wins; otherwise `Never`, with the bottleneck of the candidate where PIM came closest —
/// the largest of its transfers (in + out), compute and CPU fallbacks — and whether that part
/// alone exceeds the CPU's time. `mul_what_if` says whether the multiplier was already made
/// faster (then compute is not blamed on the 8x8 multiplier alone).
pub fn crossover(candidates: &[Candidate], mul_what_if: bool) -> Verdict {
    if let Some(&at) = candidates.iter().find(|c| c.pim.total_s() < c.cpu_s) {
        return Verdict::Wins { at };
    }
    let Some(&closest) =
        candidates.iter().min_by(|a, b| (a.pim.total_s() / a.cpu_s).total_cmp(&(b.pim.total_s() / b.cpu_s)))
    else {
        return Verdict::NotModeled;
    };
    let p = closest.pim;
    let parts = [
        (Bottleneck::Transfer, p.transfer_s + p.retrieve_s),
        (Bottleneck::Compute, p.compute_s),
        (Bottleneck::CpuFallbacks, p.fallback_s),
    ];
    let (bottleneck, seconds) = parts.into_iter().fold(parts[0], |a, b| if b.1 > a.1 { b } else { a });
    let what = match bottleneck {
        Bottleneck::Transfer => "transfer: the host<->DPU copies (operands in, results out)".to_string(),
        Bottleneck::Compute if mul_what_if => {
            "compute: the DPUs' arithmetic at 350 MHz, even with the faster multiplier".to_string()
        }
        Bottleneck::Compute => {
            "compute: the DPUs' arithmetic (32-bit multiplies in software on the 8x8 multiplier)".to_string()
        }
        Bottleneck::CpuFallbacks => {
            "CPU fallbacks: the steps without a DPU kernel (base conversions, ModDown) on the host".to_string()
        }
    };
    let relation = if seconds >= closest.cpu_s { "alone take" } else { "are the largest part of PIM's" };
    let reason = format!(
        "{what} {relation} {} against the CPU's {} (batch {}, {} DPUs, PIM total {})",
        format_seconds(seconds),
        format_seconds(closest.cpu_s),
        closest.batch,
        closest.dpus,
        format_seconds(closest.pim.total_s())
    );
    Verdict::Never { bottleneck, reason, closest }
}

/// The order of the crossover search: the batch doubling from `batch` to `max_batch` on the
/// most DPUs (compute and the per-rank bandwidth only improve with DPUs, so more DPUs never lose
/// where fewer win); at the first batch where PIM wins there, the DPU counts from the fewest,
/// so the first win in this order has the smallest batch, and for it the fewest DPUs.
/// `evaluate` gives a candidate (`None`: not modeled, e.g. the share overflows MRAM).
pub fn search(
    batch: usize,
    max_batch: usize,
    dpus: &[usize],
    mul_what_if: bool,
    mut evaluate: impl FnMut(usize, usize) -> Result<Option<Candidate>>,
) -> Result<Verdict> {
    let Some(most) = dpus.iter().copied().max() else {
        return Ok(Verdict::NotModeled);
    };
    let mut tried = Vec::new();
    let mut b = batch;
    while b <= max_batch {
        if let Some(candidate) = evaluate(b, most)? {
            if candidate.pim.total_s() < candidate.cpu_s {
                let mut at_this_batch = Vec::new();
                for &d in dpus.iter().filter(|&&d| d < most) {
                    at_this_batch.extend(evaluate(b, d)?);
                }
                at_this_batch.push(candidate);
                return Ok(crossover(&at_this_batch, mul_what_if));
            }
            tried.push(candidate);
        }
        b *= 2;
    }
    Ok(crossover(&tried, mul_what_if))
}
