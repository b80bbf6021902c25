//! The flag group of every command that runs on a backend, declared once and flattened into
//! each command's arguments; [`pimhe_bench::target::TargetFlags::parse`] turns it into a
//! target under the command's rules.

use clap::{ArgAction, Args};
use pimhe_bench::target::TargetFlags;

/// Where the command computes.
#[derive(Debug, Clone, Args)]
pub struct TargetArgs {
    /// Backend: cpu (the host's cores), upmem-emu (emulated UPMEM DPUs, modeled times) or
    /// nearbank (a GPU with near-bank PIM, Anaheim: results computed on this host, modeled
    /// times) [default: the command's; each command lists the ones it runs on].
    #[arg(long)]
    pub backend: Option<String>,

    /// Worker threads of the CPU backend, or of the CPU client beside a PIM backend (default:
    /// all cores).
    #[arg(long)]
    pub threads: Option<usize>,

    /// upmem-emu: number of DPUs of the modeled system, 1..=2560 [default: 64].
    #[arg(long)]
    pub dpus: Option<usize>,

    /// upmem-emu: how DPUs hold the limbs: auto (the cheapest of parallel, hybrid and
    /// ciphertext-major by modeled cost, host fallbacks included; the choice is printed),
    /// parallel (a DPU group per prime, conversions on the host), sequential (all DPUs, one
    /// prime after another), ciphertext-major (each DPU whole ciphertexts with all their limbs)
    /// or hybrid (groups per prime, conversions on coefficient slices over every DPU)
    /// [default: auto].
    #[arg(long)]
    pub mode: Option<String>,

    /// upmem-emu: DPU kernel arithmetic, barrett (DRAMatic's) or best [default: best].
    #[arg(long)]
    pub kernel: Option<String>,

    /// upmem-emu: emulate every DPU (full), only the busiest DPU of each prime group and
    /// extrapolate (subset), or full below 256 MiB of MRAM and 64 DPUs, else subset (auto)
    /// [default: the command's].
    #[arg(long)]
    pub emulate: Option<String>,

    /// upmem-emu: a hardware what-if of DRAMatic's section 5, applied to the model:
    /// mul-cycles=N (32x32 multiplies of N cycles, 2N for a 64-bit product), mul-cycles=N/M
    /// (N and M cycles), zero-copy (no host <-> DPU transfer). Repeatable, or comma-separated.
    #[arg(long = "what-if", value_name = "WHAT-IF", action = ArgAction::Append)]
    pub what_if: Vec<String>,

    /// upmem-emu: the timing model, upmem-v1b@1 (each launch priced from every tasklet's
    /// totals) or upmem-v1b@2 (priced barrier interval by barrier interval, transfers parallel
    /// across ranks) [default: upmem-v1b@2].
    #[arg(long)]
    pub model: Option<String>,

    /// nearbank: the GPU + near-bank PIM system of Anaheim's Table III: a100-nearbank,
    /// a100-custom-hbm or rtx4090-nearbank [default: a100-nearbank].
    #[arg(long)]
    pub system: Option<String>,

    /// nearbank: entries B of each PIM unit's data buffer [default: the system's, 16 or 32].
    #[arg(long)]
    pub buffer_entries: Option<usize>,
}

impl From<&TargetArgs> for TargetFlags {
    fn from(args: &TargetArgs) -> Self {
        Self {
            backend: args.backend.clone(),
            threads: args.threads,
            dpus: args.dpus,
            mode: args.mode.clone(),
            kernel: args.kernel.clone(),
            emulate: args.emulate.clone(),
            what_if: args.what_if.clone(),
            model: args.model.clone(),
            system: args.system.clone(),
            buffer_entries: args.buffer_entries,
        }
    }
}
