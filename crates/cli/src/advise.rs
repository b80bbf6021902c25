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
    /// ciphertexts, checked by decryption), mean, variance or linreg (seed 002's statistics
    /// over --users users, BGV, checked exactly), ckks-mul-relin-rescale (CKKS multiply +
    /// relinearize + rescale, checked against the plaintext product).
    #[arg(long)]
    pub workload: String,

    /// Ring degree N of the 128-bit preset (pipeline and the statistics: 1024 .. 32768; the
    /// BGV/BFV products: 4096 .. 32768; CKKS: 8192 .. 65536).
    #[arg(long)]
    pub n: usize,

    /// Ciphertexts of the table's batch (even); the crossover search doubles it. Not for the
    /// statistics, whose batch is --users.
    #[arg(long, required_unless_present = "users")]
    pub batch: Option<usize>,

    /// Users of the statistics (mean, variance, linreg): one ciphertext each per encoded
    /// vector, summed on the server; at least 1.
    #[arg(long)]
    pub users: Option<usize>,

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
    /// conversion and ModDown run on the CPU, measured here), ciphertext-major (each DPU whole
    /// ciphertexts with all their limbs: everything on the DPUs), sequential or hybrid (the
    /// statistics and CKKS only, which emulate every DPU), or auto (the placement priced
    /// cheapest at each point; each row names it) [default: parallel].
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
            users: args.users,
            // 0: not given (the statistics take --users; the others are told they need --batch).
            ..AdviseConfig::new(&args.workload, args.n, args.batch.unwrap_or(0))
        }
    }
}

/// Runs `pimhe advise`.
pub fn run(args: &AdviseArgs) -> Result<()> {
    print_report(&advise::run(&args.into())?, args.json)
}
