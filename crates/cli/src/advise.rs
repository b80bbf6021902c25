//! `pimhe advise`: the arguments, turned into [`pimhe_bench::advise::AdviseConfig`], and the
//! report printed as text or JSON.

use clap::Args;
use pimhe_bench::advise::{self, AdviseConfig};

use crate::bench::print_report;
use crate::error::Result;

/// Arguments of `pimhe advise`.
#[derive(Debug, Clone, Args)]
pub struct AdviseArgs {
    /// The workload: pipeline (NTT, BGV tensor, inverse NTT on random residues, DRAMatic's
    /// combined test), bgv-mul-relin or bfv-mul-relin (multiply + relinearize of real
    /// ciphertexts, checked by decryption).
    #[arg(long)]
    pub workload: String,

    /// Ring degree N of the 128-bit preset (pipeline: 1024 .. 32768; the products: 4096 ..
    /// 32768).
    #[arg(long)]
    pub n: usize,

    /// Ciphertexts of the table's batch (even); the crossover search doubles it.
    #[arg(long)]
    pub batch: usize,

    /// DPU counts of the table, comma-separated, each 1..=2560 [default:
    /// 64,128,256,509,1024,2048,2560].
    #[arg(long, value_delimiter = ',')]
    pub dpus: Vec<usize>,

    /// A what-if scenario: none, or DRAMatic section 5's what-ifs (mul-cycles=N, mul-cycles=N/M,
    /// zero-copy) joined by commas into one scenario. Repeat for several scenarios [default:
    /// none, mul-cycles=1, zero-copy, mul-cycles=1,zero-copy].
    #[arg(long = "what-if", value_name = "WHAT-IF", action = clap::ArgAction::Append)]
    pub what_if: Vec<String>,

    /// The largest batch the crossover search tries [default: 16384, or --batch if larger].
    #[arg(long)]
    pub max_batch: Option<usize>,

    /// Timed CPU runs at --batch; their median is the measured time.
    #[arg(long, default_value_t = 3)]
    pub repeat: usize,

    /// Worker threads of the CPU backend (default: all cores).
    #[arg(long)]
    pub threads: Option<usize>,

    /// Seed of the inputs and keys (the keys are made from it: never use on real data).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,

    /// How the DPUs hold the limbs: parallel (DRAMatic's prime groups; key switching's base
    /// conversion and ModDown run on the CPU, measured here) or ciphertext-major (each DPU whole
    /// ciphertexts with all their limbs: everything on the DPUs) [default: parallel].
    #[arg(long)]
    pub mode: Option<String>,

    /// Print the report as one JSON object.
    #[arg(long)]
    pub json: bool,
}

impl From<&AdviseArgs> for AdviseConfig {
    fn from(args: &AdviseArgs) -> Self {
        Self {
            dpus: args.dpus.clone(),
            what_ifs: args.what_if.clone(),
            max_batch: args.max_batch,
            repeat: args.repeat,
            threads: args.threads,
            seed: args.seed,
            mode: args.mode.clone(),
            ..AdviseConfig::new(&args.workload, args.n, args.batch)
        }
    }
}

/// Runs `pimhe advise`.
pub fn run(args: &AdviseArgs) -> Result<()> {
    print_report(&advise::run(&args.into())?, args.json)
}
