//! The near-bank settings of a run (`--system`, `--buffer-entries`) and what a run on the
//! `nearbank` backend reports: the recorded program planned into GPU kernels and PIM
//! instructions ([`pimhe_nearbank::planner`]) and priced by the `anaheim-nb` model, beside
//! the same program with every operation on the GPU ("w/o PIM").
//!
//! The backend computes on this host (its results are the CPU backend's); every time and
//! energy in a [`NearbankOutcome`] is modeled and labelled with the model's name and version.

use std::cell::RefCell;

use pimhe_nearbank::isa::Kernel;
use pimhe_nearbank::model::{Model, ProgramCost, System};
use pimhe_nearbank::planner::plan;
use pimhe_nearbank::trace::Trace;
use pimhe_nearbank::NearbankBackend;
use serde::{Deserialize, Serialize};

use super::{on, Cost, Job, NearbankTarget, Ran};
use crate::error::{BenchError, Result};
use crate::format::format_seconds;

/// `--system` when none is given: Anaheim's main configuration.
pub const DEFAULT_SYSTEM: &str = "a100-nearbank";

/// The model of `--system` and `--buffer-entries` (each system's Table III B by default).
pub fn model(system: Option<&str>, buffer_entries: Option<usize>) -> Result<Model> {
    let system =
        System::named(system.unwrap_or(DEFAULT_SYSTEM)).map_err(|e| BenchError::usage(format!("--system: {e}")))?;
    Model::new(system, buffer_entries).map_err(|e| BenchError::usage(format!("--buffer-entries: {e}")))
}

impl NearbankTarget {
    /// Runs `job` on the near-bank backend: its output priced on this target's model, and the
    /// planned program of what ran while priced, so that one recording (a bootstrapping at
    /// N = 2^16 takes half a minute and 12 GB) can be priced on every system of Table III.
    pub fn record<J: Job>(&self, job: J) -> Result<(Ran<J::Output>, Vec<Kernel>)> {
        let backend = NearbankBackend::new(self.threads)?;
        let program = RefCell::new(Vec::new());
        let meter = (
            || {
                backend.take_trace();
                Ok(())
            },
            || {
                let planned = plan(&backend.trace());
                let outcome = NearbankOutcome::of_program(&self.model, &planned);
                program.replace(planned);
                Ok(Cost::Nearbank(outcome))
            },
        );
        let ran = on(&backend, &meter, job)?;
        Ok((ran, program.into_inner()))
    }
}

/// A program's modeled cost on one system, beside "w/o PIM" (`--json` serialises it flat).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NearbankOutcome {
    /// The model's label: name, version, system, B, "(modeled)".
    pub model: String,
    /// The system of Table III.
    pub system: String,
    /// PIM data-buffer entries B.
    pub buffer_entries: usize,
    /// The times and energies with PIM and without, and what ran where.
    #[serde(flatten)]
    pub cost: ProgramCost,
    /// without_pim_s / total_s.
    pub speedup: f64,
    /// without_pim_energy_j / energy_j.
    pub energy_ratio: f64,
    /// without_pim_edp_js / edp_js.
    pub edp_ratio: f64,
}

impl NearbankOutcome {
    /// Plans `trace` and prices it with `model`.
    pub fn of(model: &Model, trace: &Trace) -> Self {
        Self::of_program(model, &plan(trace))
    }

    /// Prices a planned `program` with `model`.
    pub fn of_program(model: &Model, program: &[Kernel]) -> Self {
        let cost = model.price(program);
        Self {
            model: model.label(),
            system: model.system.name.to_string(),
            buffer_entries: model.buffer_entries,
            speedup: cost.speedup(),
            energy_ratio: cost.energy_ratio(),
            edp_ratio: cost.edp_ratio(),
            cost,
        }
    }

    /// Adds `other`'s cost to this one ([`ProgramCost::accumulate`]: programs on separate
    /// systems, their work summed) and recomputes the ratios; the model stays this one's.
    pub fn accumulate(&mut self, other: &NearbankOutcome) {
        self.cost.accumulate(&other.cost);
        self.speedup = self.cost.speedup();
        self.energy_ratio = self.cost.energy_ratio();
        self.edp_ratio = self.cost.edp_ratio();
    }

    /// The header of [`NearbankOutcome::table_row`]s whose first column is `name`'s width.
    pub fn table_header(name: &str) -> String {
        format!(
            "{name} {:>11} {:>11} {:>11} {:>11} {:>8} {:>8} {:>8}",
            "gpu", "pim", "total", "w/o PIM", "speedup", "energy", "EDP"
        )
    }

    /// One table row: `name`, then the modeled GPU, PIM and total seconds, "w/o PIM" and the
    /// ratios of time, energy and EDP.
    pub fn table_row(&self, name: &str) -> String {
        format!(
            "{name} {:>11} {:>11} {:>11} {:>11} {:>7.2}x {:>7.2}x {:>7.2}x",
            format_seconds(self.cost.gpu_s),
            format_seconds(self.cost.pim_s),
            format_seconds(self.cost.total_s),
            format_seconds(self.cost.without_pim_s),
            self.speedup,
            self.energy_ratio,
            self.edp_ratio
        )
    }

    /// Three lines: with PIM, without, and what ran where.
    pub fn render(&self) -> String {
        let kinds: Vec<String> = self.cost.kinds.iter().map(|k| format!("{} x{}", k.kind, k.count)).collect();
        format!(
            "    with PIM: gpu {} + pim {} + switches {} (overlap {}) = {}, {:.4} J, EDP {:.3e} J s  [{}]\n    \
             w/o PIM:  {}, {:.4} J, EDP {:.3e} J s  ->  speedup {:.2}x, energy {:.2}x, EDP {:.2}x\n    \
             {} PIM instructions and {} GPU kernels ({} instructions on the GPU for lack of buffer): {}",
            format_seconds(self.cost.gpu_s),
            format_seconds(self.cost.pim_s),
            format_seconds(self.cost.transition_s),
            format_seconds(self.cost.overlap_s),
            format_seconds(self.cost.total_s),
            self.cost.energy_j,
            self.cost.edp_js,
            self.model,
            format_seconds(self.cost.without_pim_s),
            self.cost.without_pim_energy_j,
            self.cost.without_pim_edp_js,
            self.speedup,
            self.energy_ratio,
            self.edp_ratio,
            self.cost.pim_instructions,
            self.cost.gpu_kernels,
            self.cost.gpu_fallbacks,
            kinds.join(", "),
        )
    }
}
