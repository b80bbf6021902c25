//! PIM settings: the emulated UPMEM system a run uses (DPU count, prime-group mode, kernel
//! arithmetic, how much of it to emulate), its backend, and what a run on it reported
//! ([`PimOutcome`], modeled by `upmem-v1b`).
//!
//! The flag names in the parse functions and the errors are the CLI's (`--dpus`, `--mode`,
//! `--kernel`, `--emulate`); [`DEFAULT_DPUS`] is one rank.

use pimhe_pim::counts::TaskletCounts;
use pimhe_pim::layout::Variant;
use pimhe_pim::model::ModelVersion;
use pimhe_pim::runtime::placement::{Mode, Plan};
use pimhe_pim::runtime::subset::push_bytes_per_dpu;
use pimhe_pim::runtime::{OffloadReport, PimBackend, PimConfig, MAX_DPUS};
use serde::Serialize;

use crate::error::{BenchError, Result};
use crate::format::format_seconds;
use crate::target::what_if::WhatIf;

/// Default `--dpus`: one rank.
pub const DEFAULT_DPUS: usize = 64;

/// `--emulate auto` emulates in full below this MRAM footprint (and at most
/// [`AUTO_FULL_MAX_DPUS`] DPUs).
pub const AUTO_FULL_MAX_BYTES: u128 = 256 << 20;
/// `--emulate auto` emulates in full on at most this many DPUs.
pub const AUTO_FULL_MAX_DPUS: usize = 64;

/// How much of the system to emulate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Emulate {
    /// Every DPU.
    Full,
    /// The busiest DPU of each prime group.
    Subset,
    /// Full when small (see [`AUTO_FULL_MAX_BYTES`]), else subset.
    Auto,
}

impl Emulate {
    /// The name `--emulate` takes.
    pub fn name(self) -> &'static str {
        match self {
            Emulate::Full => "full",
            Emulate::Subset => "subset",
            Emulate::Auto => "auto",
        }
    }
}

/// The `upmem-emu` settings of a run, validated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PimSettings {
    /// DPUs of the system.
    pub dpus: usize,
    /// Parallel or sequential prime groups.
    pub mode: Mode,
    /// Kernel arithmetic.
    pub variant: Variant,
    /// Hardware what-ifs applied to the model (`--what-if`; none by default).
    pub what_if: WhatIf,
    /// Tasklets per DPU; `None` for the model's (16; the Python package sets it).
    pub tasklets: Option<u32>,
    /// The version of `upmem-v1b` that prices the run (`--model`).
    pub model: ModelVersion,
}

/// A server's modeled UPMEM cost on one line (`  server on UPMEM, MODEL: transfer .. s, compute
/// .. s, retrieve .. s, total .. s, energy .. J; N launches`), as the statistics and the study's
/// eval print it after their own lines.
pub fn server_cost_line(u: &OffloadReport) -> String {
    format!(
        "\n  server on UPMEM, {}: transfer {:.6} s, compute {:.6} s, retrieve {:.6} s, total {:.6} s, energy {:.3} J; \
         {} launches{}",
        u.model,
        u.transfer_s,
        u.compute_s,
        u.retrieve_s,
        u.total_s(),
        u.energy_j,
        u.launches,
        u.eviction_note()
    )
}

/// `--kernel` names.
pub fn kernel_name(variant: Variant) -> &'static str {
    match variant {
        Variant::Barrett => "barrett",
        Variant::Best => "best",
    }
}

/// Parses `--mode`: a placement, or `auto` (`None`: the planner chooses by modeled cost).
pub fn parse_mode(value: &str) -> Result<Option<Mode>> {
    if value == "auto" {
        return Ok(None);
    }
    value
        .parse()
        .map(Some)
        .map_err(|_| BenchError::usage(format!("--mode {value} is not allowed: choose auto, {}", Mode::NAMES)))
}

/// Parses `--kernel`.
pub fn parse_kernel(value: &str) -> Result<Variant> {
    match value {
        "barrett" => Ok(Variant::Barrett),
        "best" => Ok(Variant::Best),
        other => Err(BenchError::usage(format!("--kernel {other} is not allowed: choose barrett or best"))),
    }
}

/// Parses `--model`.
pub fn parse_model(value: &str) -> Result<ModelVersion> {
    ModelVersion::parse(value).map_err(|e| BenchError::usage(format!("--model {value} is not allowed: {e}")))
}

/// Parses `--emulate`.
pub fn parse_emulate(value: &str) -> Result<Emulate> {
    match value {
        "full" => Ok(Emulate::Full),
        "subset" => Ok(Emulate::Subset),
        "auto" => Ok(Emulate::Auto),
        other => Err(BenchError::usage(format!("--emulate {other} is not allowed: choose full, subset or auto"))),
    }
}

impl PimSettings {
    /// Checks `dpus` against the system size and, in parallel mode, against the primes.
    pub fn new(dpus: usize, mode: Mode, variant: Variant, primes: usize) -> Result<Self> {
        Self::checked(dpus, mode, variant, primes, true)
    }

    /// The checks of [`PimSettings::new`]; `has_mode_flag` says whether the command has
    /// `--mode`, so the advice may point to it.
    pub(crate) fn checked(
        dpus: usize,
        mode: Mode,
        variant: Variant,
        primes: usize,
        has_mode_flag: bool,
    ) -> Result<Self> {
        if !(1..=MAX_DPUS).contains(&dpus) {
            return Err(BenchError::usage(format!(
                "--dpus {dpus} is not allowed: choose 1..={MAX_DPUS} DPUs (an UPMEM system has at most {MAX_DPUS})"
            )));
        }
        if mode.groups_per_prime() && dpus < primes {
            let flag = format!("--mode {}", mode.name());
            let text = format!("{} mode", mode.name());
            let (which, alternative) =
                if has_mode_flag { (flag.as_str(), " or --mode sequential") } else { (text.as_str(), "") };
            return Err(BenchError::usage(format!(
                "--dpus {dpus} is too few for {which} with {primes} primes: {} mode needs at least \
                 one DPU per prime, so --dpus {dpus} is not allowed; use --dpus {primes}..={MAX_DPUS}{alternative}",
                mode.name()
            )));
        }
        Ok(Self { dpus, mode, variant, what_if: WhatIf::NONE, tasklets: None, model: ModelVersion::default() })
    }

    /// These settings with the hardware what-ifs `what_if` applied to the model of every run.
    pub fn with_what_if(self, what_if: WhatIf) -> Self {
        Self { what_if, ..self }
    }

    /// These settings priced by `model`.
    pub fn with_model(self, model: ModelVersion) -> Self {
        Self { model, ..self }
    }

    /// Ranks the system occupies: `ceil(dpus / 64)`.
    pub fn ranks(&self) -> u32 {
        self.dpus.div_ceil(64) as u32
    }

    /// The configuration of an emulated system of `dpus` DPUs in `mode` with this kernel,
    /// priced by these settings' model with their what-ifs; the emulated DPUs run the model's
    /// tasklets.
    pub fn config(&self, dpus: usize, mode: Mode) -> PimConfig {
        let mut config = PimConfig::new(dpus, mode);
        config.model = self.model.model();
        if let Some(tasklets) = self.tasklets {
            config.model.tasklets = tasklets;
        }
        config.emulator.tasklets = config.model.tasklets;
        config.variant = self.variant;
        self.what_if.apply(&mut config.model);
        config
    }

    /// The emulated UPMEM backend of these settings for ring degree `n` over `primes`.
    pub fn backend(&self, n: usize, primes: &[u32]) -> Result<PimBackend> {
        Ok(PimBackend::new(self.config(self.dpus, self.mode), n, primes)?)
    }
}

/// What a `upmem-emu` run reported. Modeled figures carry [`PimOutcome::model`].
#[derive(Debug, Clone, Serialize)]
pub struct PimOutcome {
    /// `full`, or `subset: ...` with how the numbers were extrapolated.
    pub emulation: String,
    /// DPUs the emulator ran.
    pub emulated_dpus: usize,
    /// Polynomials of each operand on the busiest DPU (per prime).
    pub busiest_share: usize,
    /// Host wall time of the emulation (not a DPU time).
    pub wall_s: f64,
    /// Modeled host -> DPU seconds of the inputs.
    pub transfer_s: f64,
    /// Modeled DPU seconds (launches with their overheads).
    pub compute_s: f64,
    /// Modeled DPU -> host seconds of the outputs.
    pub retrieve_s: f64,
    /// `transfer_s + compute_s + retrieve_s`.
    pub total_s: f64,
    /// Modeled whole-system energy over `total_s` with `ceil(dpus / 64)` ranks active.
    pub energy_j: f64,
    /// The model's label, e.g. `upmem-v1b@1 (modeled)`.
    pub model: String,
    /// Kernel launches of the full system.
    pub launches: u64,
    /// Operations that ran on the CPU instead.
    pub fallbacks: u64,
    /// Instructions the emulator counted (over the emulated DPUs; scaled like compute when
    /// only part of a share was emulated).
    pub counted_instructions: u64,
    /// Everything the emulator counted (same scope as `counted_instructions`).
    pub counted: TaskletCounts,
    /// Bytes moved to the DPUs (full system).
    pub bytes_to_dpus: u64,
    /// Bytes moved back (full system).
    pub bytes_from_dpus: u64,
    /// Where each figure came from.
    pub sources: Sources,
}

/// Where each figure of a [`PimOutcome`] came from.
#[derive(Debug, Clone, Serialize)]
pub struct Sources {
    /// Source of `compute_s` (and `counted`).
    pub compute_s: String,
    /// Source of `transfer_s` and `retrieve_s`.
    pub transfer_s: String,
    /// Source of `energy_j`.
    pub energy_j: String,
    /// Source of `wall_s`.
    pub wall_s: String,
}

impl PimOutcome {
    /// The model label without its ` (modeled)` suffix, for `(modeled, <label>)` annotations.
    pub fn model_short(&self) -> &str {
        self.model.strip_suffix(" (modeled)").unwrap_or(&self.model)
    }
}

/// A server computation on an emulated system, modeled: the input ciphertexts' upload priced by
/// the model, plus what the backend's [`OffloadReport`] counted (the demos print it).
#[derive(Debug, Clone, Serialize)]
pub struct ModeledServer {
    /// What the server computed, e.g. `multiply + relinearize + modulus switch`.
    pub what: String,
    /// The model's label without ` (modeled)`.
    pub model: String,
    /// Modeled upload of the input ciphertexts, seconds.
    pub inputs_s: f64,
    /// Modeled pushes during the computation (results of CPU fallbacks, constants made on the
    /// host), seconds.
    pub computation_transfer_s: f64,
    /// `inputs_s + computation_transfer_s`.
    pub transfer_s: f64,
    /// Modeled DPU seconds.
    pub compute_s: f64,
    /// Modeled result and fallback pulls, seconds.
    pub retrieve_s: f64,
    /// `transfer_s + compute_s + retrieve_s`.
    pub total_s: f64,
    /// Kernel launches.
    pub launches: u64,
    /// Modeled energy over `total_s`, joules.
    pub energy_j: f64,
    /// Modeled power of the active ranks, watts.
    pub power_w: f64,
    /// Ranks active: `ceil(dpus / 64)`.
    pub ranks: u32,
}

impl ModeledServer {
    /// Models a server computation on a system of `config` (over `primes` primes) from its
    /// `report`. `inputs` = (polynomials, their primes' slots, batch, N): the input ciphertexts
    /// a server would receive, whose upload is priced by the model.
    pub fn new(
        config: &PimConfig,
        report: &OffloadReport,
        primes: usize,
        (polys, data_slots, batch, n): (usize, &[usize], usize, usize),
        what: &str,
    ) -> Result<Self> {
        let (model, dpus) = (&config.model, config.dpus);
        let plan = Plan::new(config.mode, dpus, primes).map_err(BenchError::Failed)?;
        let inputs_s = polys as f64 * model.transfer_seconds(&push_bytes_per_dpu(&plan, data_slots, batch, n));
        let transfer_s = inputs_s + report.transfer_s;
        let total_s = transfer_s + report.compute_s + report.retrieve_s;
        let ranks = dpus.div_ceil(64) as u32;
        Ok(Self {
            what: what.to_string(),
            model: report.model.trim_end_matches(" (modeled)").to_string(),
            inputs_s,
            computation_transfer_s: report.transfer_s,
            transfer_s,
            compute_s: report.compute_s,
            retrieve_s: report.retrieve_s,
            total_s,
            launches: report.launches,
            energy_j: model.energy_joules(total_s, ranks),
            power_w: model.power_watts(ranks),
            ranks,
        })
    }

    /// Five lines: the heading, transfer, compute, retrieve, and the total with its energy.
    pub fn render(&self) -> String {
        format!(
            "  upmem-emu server computation ({}), modeled, {}:\n    transfer {:>11}  (input ciphertexts {}, \
             pushes during the computation {})\n    compute  {:>11}  ({} launch{})\n    retrieve {:>11}  \
             (result and pulls during the computation)\n    total    {:>11}  energy {:.3} J ({:.0} W, {} rank{})",
            self.what,
            self.model,
            format_seconds(self.transfer_s),
            format_seconds(self.inputs_s),
            format_seconds(self.computation_transfer_s),
            format_seconds(self.compute_s),
            self.launches,
            if self.launches == 1 { "" } else { "es" },
            format_seconds(self.retrieve_s),
            format_seconds(self.total_s),
            self.energy_j,
            self.power_w,
            self.ranks,
            if self.ranks == 1 { "" } else { "s" }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_parse_and_name_their_values() {
        assert_eq!(parse_mode("sequential").unwrap(), Some(Mode::Sequential));
        assert_eq!(parse_mode("hybrid").unwrap(), Some(Mode::Hybrid));
        assert_eq!(parse_mode("auto").unwrap(), None);
        assert_eq!(parse_kernel("barrett").unwrap(), Variant::Barrett);
        assert_eq!(parse_emulate("auto").unwrap(), Emulate::Auto);
        assert!(parse_mode("serial")
            .unwrap_err()
            .to_string()
            .contains("auto, parallel, sequential, ciphertext-major or hybrid"));
        assert!(parse_kernel("x").unwrap_err().to_string().contains("barrett or best"));
        assert!(parse_emulate("x").unwrap_err().to_string().contains("full, subset or auto"));
        assert_eq!((Mode::Parallel.name(), kernel_name(Variant::Best)), ("parallel", "best"));
        assert!(PimSettings::new(0, Mode::Parallel, Variant::Best, 1).is_err());
        assert!(PimSettings::new(2561, Mode::Sequential, Variant::Best, 1).is_err());
        assert!(PimSettings::new(2, Mode::Parallel, Variant::Best, 3).is_err());
        assert!(PimSettings::new(2, Mode::Sequential, Variant::Best, 3).is_ok());
        assert_eq!(PimSettings::new(383, Mode::Parallel, Variant::Best, 3).unwrap().ranks(), 6);
    }
}
