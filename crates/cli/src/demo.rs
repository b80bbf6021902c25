//! `pimhe demo`: BGV or CKKS end to end on a backend, checked against the plaintext
//! computation ([`pimhe_bench::demo`]); this module parses the arguments and prints the lines.

use clap::Args;
use pimhe_bench::demo::{self, DemoConfig, DemoScheme};
use pimhe_bench::target::TargetFlags;

use crate::error::Result;
use crate::target::TargetArgs;

/// Arguments of `pimhe demo`.
#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Scheme of the demo: bgv (a product of integer vectors, checked exactly) or ckks (a
    /// product, a rotation and a sigmoid of real vectors, checked in bits of precision)
    #[arg(long, default_value = "bgv")]
    scheme: String,
    /// Ring degree N of the preset parameters. bgv: 2048 .. 32768 (1024's preset has no noise
    /// budget for a multiplication; 4096 and up also relinearize and switch modulus); ckks:
    /// 8192 .. 65536
    #[arg(long, default_value_t = 8192)]
    n: usize,
    /// Number of ciphertexts in each of the two batches
    #[arg(long, default_value_t = 8)]
    batch: usize,
    /// Where the server computes: upmem-emu (default: 64 emulated DPUs in the mode the planner
    /// picks, ciphertext-major where the computation switches keys and moduli, beside the cpu
    /// backend's measured time), cpu, or nearbank (the modeled times beside "w/o PIM");
    /// --threads sets the CPU client's threads
    #[command(flatten)]
    target: TargetArgs,
    /// Seed of the random input vectors (the keys and encryptions always use OS randomness)
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

/// Runs the demo, printing each line as it comes.
pub fn run(args: &DemoArgs) -> Result<()> {
    let config = DemoConfig {
        scheme: DemoScheme::parse(&args.scheme)?,
        n: args.n,
        batch: args.batch,
        target: TargetFlags::from(&args.target).parse(&demo::RULES)?,
        seed: args.seed,
    };
    demo::run(&config, &mut |line| crate::output::line(&line))
}
