//! What `pimhe advise` reports: its rows, the CPU side, the verdicts, how they were computed,
//! and the text of all of it.

use pimhe_pim::runtime::placement::Mode;
use serde::Serialize;

use crate::format::{format_seconds, Render};
use crate::target::what_if::TABLE_CAVEAT;

use super::cpu::ServerCpu;
use super::verdict::{PimBreakdown, Verdict};
use crate::measure::machine::CpuFacts;

/// One cell of the table: a DPU count under a what-if, at the table's batch.
#[derive(Debug, Clone, Serialize)]
pub struct AdviseRow {
    /// The what-if scenario (`none`, or the values).
    pub what_if: String,
    /// DPUs.
    pub dpus: usize,
    /// The modeled breakdown and the host fallbacks (`None`: not modeled).
    pub pim: Option<PimBreakdown>,
    /// Modeled energy of the PIM system, joules.
    pub energy_j: Option<f64>,
    /// The model's label, e.g. `upmem-v1b@1+mul=1/2 (modeled)`.
    pub model: String,
    /// How the run was emulated (or why it was not modeled).
    pub emulation: String,
    /// CPU measured here / PIM total (> 1: PIM faster).
    pub speedup_vs_measured: Option<f64>,
    /// CPU scaled to the server / PIM total with its fallbacks scaled alike.
    pub speedup_vs_scaled: Option<f64>,
}

/// The verdicts of one what-if.
#[derive(Debug, Clone, Serialize)]
pub struct WhatIfVerdicts {
    /// The scenario.
    pub what_if: String,
    /// Against the CPU measured on this machine.
    pub vs_measured: Verdict,
    /// Against the CPU scaled to the server.
    pub vs_scaled: Verdict,
}

/// The CPU side of the report.
#[derive(Debug, Clone, Serialize)]
pub struct CpuSide {
    /// This machine.
    pub here: CpuFacts,
    /// Every timed run at the table's batch, seconds.
    pub times_s: Vec<f64>,
    /// Their median: the measured time.
    pub measured_s: f64,
    /// The server it is scaled to.
    pub server: ServerCpu,
    /// here's cores x GHz x lanes / the server's.
    pub scale: f64,
    /// `measured_s x scale`: scaled, not measured.
    pub scaled_s: f64,
    /// `scaled_s x` the server's power: scaled, not measured.
    pub scaled_energy_j: f64,
}

/// What `pimhe advise` reports (`--json` serializes it as one object).
#[derive(Debug, Clone, Serialize)]
pub struct AdviseReport {
    /// The workload.
    pub workload: String,
    /// What it computes.
    pub computation: String,
    /// Ring degree.
    pub n: usize,
    /// Primes the DPUs hold.
    pub primes: usize,
    /// How the DPUs hold the limbs (parallel or ciphertext-major).
    pub mode: String,
    /// The table's batch.
    pub batch: usize,
    /// The largest batch the crossover search tried.
    pub max_batch: usize,
    /// The CPU measured and scaled.
    pub cpu: CpuSide,
    /// The PIM runs' CPU fallbacks measured on this host at `batch` (median), seconds; every
    /// row's fallbacks are this, linear in the batch.
    pub fallback_s: f64,
    /// The table: every what-if x DPU count at `batch`.
    pub rows: Vec<AdviseRow>,
    /// The crossover of each what-if.
    pub verdicts: Vec<WhatIfVerdicts>,
    /// How the numbers were obtained.
    pub method: Vec<String>,
}

/// How the numbers were obtained, printed under the report; `mul_what_if`: a scenario changes
/// the multiplier, which the best kernel's table multiplies escape.
pub(super) fn method_notes(mode: Mode, mul_what_if: bool) -> Vec<String> {
    let representative = match mode {
        Mode::CiphertextMajor => "one emulated DPU holding every prime and",
        _ => "one emulated DPU per prime holding",
    };
    let mut notes = vec![
        format!(
            "PIM: modeled by upmem-v1b, {representative} the busiest share of the full system (`bench OP --backend \
             upmem-emu --emulate subset`), transfers priced on the full system's placement, best kernel, {} mode",
            mode.name()
        ),
        match mode {
            Mode::CiphertextMajor => {
                "CPU fallbacks: none (ciphertext-major: key switching runs on the DPUs)".to_string()
            }
            _ => "CPU fallbacks (the PIM run's steps on the host): measured on this host at --batch (median of \
                  --repeat runs on one DPU per prime), linear in the batch, the same for every DPU count and what-if"
                .to_string(),
        },
        "CPU: the cpu backend measured on this machine at --batch (median), linear in the batch elsewhere \
         (DRAMatic 4.3); scaled: x (cores x GHz x 32-bit SIMD lanes here) / (the server's), fallbacks scaled alike"
            .to_string(),
        "crossover: the batch doubles from --batch to --max-batch on the most DPUs; at the first batch where PIM \
         wins, the fewest DPUs that win"
            .to_string(),
    ];
    if mul_what_if {
        notes.push(format!("mul-cycles caveat: {TABLE_CAVEAT}"));
    }
    notes
}

impl Render for AdviseReport {
    fn render(&self) -> String {
        let c = &self.cpu;
        let mut text = format!(
            "pimhe advise: {} ({}), N={}, {} primes on the DPUs ({} mode), batch {} ciphertexts\n  cpu measured here: {} \
             (median of {}; {} cores x {:.2} GHz x {} lanes, {})\n  cpu scaled to {}: {} x {:.4} = {} (scaled, not \
             measured), {:.3} J at {:.0} W (scaled)\n  PIM's CPU fallbacks measured here: {} (median; linear in the \
             batch)\n",
            self.workload,
            self.computation,
            self.n,
            self.primes,
            self.mode,
            self.batch,
            format_seconds(c.measured_s),
            c.times_s.len(),
            c.here.cores,
            c.here.ghz,
            c.here.simd_lanes,
            c.here.name,
            c.server.facts.name,
            format_seconds(c.measured_s),
            c.scale,
            format_seconds(c.scaled_s),
            c.scaled_energy_j,
            c.server.power_w,
            format_seconds(self.fallback_s),
        );
        let mut last_what_if = "";
        for row in &self.rows {
            if row.what_if != last_what_if {
                last_what_if = &row.what_if;
                text.push_str(&format!(
                    "  what-if {}:\n    {:>5} {:>11} {:>11} {:>11} {:>11} {:>11} {:>11} {:>9} {:>9}\n",
                    row.what_if,
                    "dpus",
                    "transfer",
                    "compute",
                    "retrieve",
                    "fallbacks",
                    "total",
                    "energy",
                    "vs here",
                    "vs scaled"
                ));
            }
            match (&row.pim, row.energy_j, row.speedup_vs_measured, row.speedup_vs_scaled) {
                (Some(p), Some(energy), Some(here), Some(scaled)) => text.push_str(&format!(
                    "    {:>5} {:>11} {:>11} {:>11} {:>11} {:>11} {:>9.3} J {:>8.3}x {:>8.3}x  {}\n",
                    row.dpus,
                    format_seconds(p.transfer_s),
                    format_seconds(p.compute_s),
                    format_seconds(p.retrieve_s),
                    format_seconds(p.fallback_s),
                    format_seconds(p.total_s()),
                    energy,
                    here,
                    scaled,
                    row.model
                )),
                _ => text.push_str(&format!("    {:>5} {}\n", row.dpus, row.emulation)),
            }
        }
        text.push_str(&format!(
            "  (speed-up = CPU time / PIM total; > 1 means PIM is faster; crossover searched up to batch {})\n",
            self.max_batch
        ));
        for v in &self.verdicts {
            for (against, verdict) in
                [("cpu measured here", &v.vs_measured), ("cpu scaled to the server", &v.vs_scaled)]
            {
                text.push_str(&format!("  verdict [{}] vs {against}: {}\n", v.what_if, verdict_line(verdict)));
            }
        }
        for note in &self.method {
            text.push_str(&format!("  method: {note}\n"));
        }
        text.trim_end().to_string()
    }
}

/// One line for a verdict.
pub fn verdict_line(verdict: &Verdict) -> String {
    match verdict {
        Verdict::Wins { at } => format!(
            "PIM wins from batch {} on {} DPUs (modeled {} vs cpu {}, {:.3}x)",
            at.batch,
            at.dpus,
            format_seconds(at.pim.total_s()),
            format_seconds(at.cpu_s),
            at.cpu_s / at.pim.total_s()
        ),
        Verdict::Never { reason, .. } => format!("never: {reason}"),
        Verdict::NotModeled => "not modeled: no batch fits the DPUs' MRAM".to_string(),
    }
}
