//! What `pimhe advise` reports: its rows, the CPU side, the verdicts, how they were computed,
//! and the text of all of it.

use pimhe_pim::runtime::placement::Mode;
use serde::Serialize;

use crate::format::{format_seconds, Render};
use crate::target::what_if::TABLE_CAVEAT;

use super::cpu::ServerCpu;
use super::efficiency::EfficiencyVerdict;
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
    /// PIM's energy with the host fallbacks' at the server's power, joules
    /// ([`super::efficiency`]).
    pub energy_with_host_j: Option<f64>,
    /// That energy x PIM's total (fallbacks as compared with the server), joule-seconds.
    pub edp_js: Option<f64>,
    /// The placement that ran (with `--mode auto`, the one priced cheapest at this point).
    pub placement: String,
    /// With `--mode auto`: every candidate placement's price at this point.
    pub plan: Option<String>,
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
    /// Energy at the table's batch, against the CPU scaled to the server.
    pub energy: EfficiencyVerdict,
    /// Energy-delay product at the table's batch, against the CPU scaled to the server.
    pub edp: EfficiencyVerdict,
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
    /// How the DPUs hold the limbs: a placement, or `auto` (each row names the one chosen).
    pub mode: String,
    /// The table's batch: ciphertexts, or for the statistics users (one ciphertext each per
    /// encoded vector).
    pub batch: usize,
    /// What the batch counts: `ciphertexts` or `users`.
    pub batch_of: String,
    /// The largest batch the crossover search tried.
    pub max_batch: usize,
    /// The CPU measured and scaled.
    pub cpu: CpuSide,
    /// The subset workloads: the PIM runs' CPU fallbacks measured on this host at `batch`
    /// (median), seconds, every row's fallbacks this, linear in the batch; the whole jobs: 0,
    /// each row's own fallbacks priced by `seal-host` ([`AdviseReport::fallbacks`]).
    pub fallback_s: f64,
    /// How the rows' fallbacks were obtained.
    pub fallbacks: String,
    /// The table: every what-if x DPU count at `batch`.
    pub rows: Vec<AdviseRow>,
    /// The crossover of each what-if.
    pub verdicts: Vec<WhatIfVerdicts>,
    /// How the numbers were obtained.
    pub method: Vec<String>,
}

/// How the numbers were obtained, printed under the report: `mode` the placement (`None`:
/// auto), `whole_jobs` whether every DPU was emulated (the statistics, CKKS), `mul_what_if`: a
/// scenario changes the multiplier, which the best kernel's table multiplies escape.
pub(super) fn method_notes(mode: Option<Mode>, whole_jobs: bool, mul_what_if: bool) -> Vec<String> {
    let placement = mode.map_or("auto".to_string(), |m| m.name().to_string());
    let emulated = match (whole_jobs, mode) {
        (true, _) => {
            "every DPU emulated (the whole job: users' or operands' ciphertexts in, the server's \
                      computation, results out; the transfers the emulated ones)"
        }
        (false, Some(Mode::CiphertextMajor)) => {
            "one emulated DPU holding every prime and the busiest share of the \
                                                 full system (`bench OP --backend upmem-emu --emulate subset`), \
                                                 transfers priced on the full system's placement"
        }
        (false, _) => {
            "one emulated DPU per prime holding the busiest share of the full system (`bench OP --backend \
                       upmem-emu --emulate subset`), transfers priced on the full system's placement"
        }
    };
    let auto = match (mode, whole_jobs) {
        (Some(_), _) => None,
        (None, true) => Some(
            "--mode auto: at each point the planner prices parallel, sequential, hybrid and \
                              ciphertext-major (modeled DPU side + host fallbacks by seal-host@1) and the cheapest \
                              runs; the row names it",
        ),
        (None, false) => Some(
            "--mode auto: at each point parallel and ciphertext-major (the placements the subset \
                               emulation follows) are both modeled and the one with the smaller PIM total is the \
                               row's; the row names it",
        ),
    };
    let fallbacks = match (whole_jobs, mode) {
        (true, _) => {
            "CPU fallbacks: each run's own, priced by seal-host@1 (SEAL's throughput on DRAMatic's \
                      server, modeled), not scaled again against the scaled CPU"
        }
        (false, Some(Mode::CiphertextMajor)) => {
            "CPU fallbacks: none (ciphertext-major: key switching runs on the DPUs)"
        }
        (false, _) => {
            "CPU fallbacks (the PIM run's steps on the host, parallel mode): measured on this host at \
                       --batch (median of --repeat runs on one DPU per prime), linear in the batch, the same for \
                       every DPU count and what-if"
        }
    };
    let mut notes = vec![
        format!("PIM: modeled by upmem-v1b, {emulated}, best kernel, {placement} mode"),
        fallbacks.to_string(),
        format!(
            "CPU: the cpu backend measured on this machine at the table's batch (median), linear in the batch \
             elsewhere (DRAMatic 4.3); scaled: x (cores x GHz x 32-bit SIMD lanes here) / (the server's){}",
            if whole_jobs { "" } else { ", fallbacks scaled alike" }
        ),
        "crossover: the batch doubles from --batch to --max-batch on the most DPUs; at the first batch where PIM \
         wins, the fewest DPUs that win"
            .to_string(),
        "energy and EDP: at --batch, PIM's least over the DPU counts (the model's DPU energy + the host fallbacks \
         at the server's 223 W) against the CPU scaled to the server at its 223 W (DRAMatic 4.4); this machine's \
         power is not known, so there is no energy verdict against it"
            .to_string(),
    ];
    notes.extend(auto.map(str::to_string));
    if mul_what_if {
        notes.push(format!("mul-cycles caveat: {TABLE_CAVEAT}"));
    }
    notes
}

impl Render for AdviseReport {
    fn render(&self) -> String {
        let c = &self.cpu;
        let mut text = format!(
            "pimhe advise: {} ({}), N={}, {} primes on the DPUs ({} mode), batch {} {}\n  cpu measured here: {} \
             (median of {}; {} cores x {:.2} GHz x {} lanes, {})\n  cpu scaled to {}: {} x {:.4} = {} (scaled, not \
             measured), {:.3} J at {:.0} W (scaled)\n  PIM's CPU fallbacks: {}\n",
            self.workload,
            self.computation,
            self.n,
            self.primes,
            self.mode,
            self.batch,
            self.batch_of,
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
            self.fallbacks,
        );
        let mut last_what_if = "";
        for row in &self.rows {
            if row.what_if != last_what_if {
                last_what_if = &row.what_if;
                text.push_str(&format!(
                    "  what-if {}:\n    {:>5} {:>11} {:>11} {:>11} {:>11} {:>11} {:>11} {:>11} {:>9} {:>9}\n",
                    row.what_if,
                    "dpus",
                    "transfer",
                    "compute",
                    "retrieve",
                    "fallbacks",
                    "total",
                    "energy",
                    "EDP",
                    "vs here",
                    "vs scaled"
                ));
            }
            match (&row.pim, row.energy_with_host_j, row.edp_js, row.speedup_vs_measured, row.speedup_vs_scaled) {
                (Some(p), Some(energy), Some(edp), Some(here), Some(scaled)) => text.push_str(&format!(
                    "    {:>5} {:>11} {:>11} {:>11} {:>11} {:>11} {:>9.3} J {:>7.2e} Js {:>8.3}x {:>8.3}x  {}, {}\n",
                    row.dpus,
                    format_seconds(p.transfer_s),
                    format_seconds(p.compute_s),
                    format_seconds(p.retrieve_s),
                    format_seconds(p.fallback_s),
                    format_seconds(p.total_s()),
                    energy,
                    edp,
                    here,
                    scaled,
                    row.model,
                    row.placement
                )),
                _ => text.push_str(&format!("    {:>5} {}\n", row.dpus, row.emulation)),
            }
            if let Some(plan) = &row.plan {
                text.push_str(&format!("          {plan}\n"));
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
                text.push_str(&format!("  verdict [{}] vs {against}: time: {}\n", v.what_if, verdict_line(verdict)));
            }
            for efficiency in [&v.energy, &v.edp] {
                text.push_str(&format!(
                    "  verdict [{}] vs cpu scaled to the server: {}\n",
                    v.what_if,
                    efficiency.line(self.batch)
                ));
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
