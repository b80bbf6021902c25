//! `pimhe bench`: the arguments of `bench OP` and `bench scheme`, turned into the library's
//! configurations ([`pimhe_bench::measure::kernels`], [`pimhe_bench::measure::scheme`]) and printed as text or
//! JSON; `bench reproduce` is [`crate::reproduce`].

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use clap::{Args, Subcommand};
use pimhe_bench::measure::bandwidth::{self, BandwidthConfig};
use pimhe_bench::measure::bootstrap::{self, BootstrapBenchConfig};
use pimhe_bench::measure::kernels::{self, KernelConfig, Op};
use pimhe_bench::measure::keygen::{self, KeygenConfig};
use pimhe_bench::measure::scheme::{self, SchemeConfig};
use pimhe_bench::target::TargetFlags;
use pimhe_bench::Render;

use crate::error::{CliError, Result};
use crate::progress::TermProgress;
use crate::target::TargetArgs;

/// `OP` as clap reads it: the library's operations by name, each with its description.
fn op_parser() -> impl TypedValueParser<Value = Op> {
    PossibleValuesParser::new(Op::ALL.map(|op| PossibleValue::new(op.name()).help(op.description())))
        .map(|name| Op::from_name(&name).expect("clap admits only the listed names"))
}

/// `pimhe bench`: either one workload (`bench OP ...`) or a reproduction (`bench reproduce`).
#[derive(Debug, Clone, Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct BenchCommand {
    /// A set of experiments instead of one workload.
    #[command(subcommand)]
    pub action: Option<BenchAction>,
    /// The workload to time.
    #[command(flatten)]
    pub args: Option<BenchArgs>,
}

/// Subcommands of `pimhe bench`.
#[derive(Debug, Clone, Subcommand)]
pub enum BenchAction {
    /// Reproduce a seed paper's experiments beside its published numbers: one subcommand per
    /// paper (dramatic, mhy, gupta, anaheim, ceram) with its own flags.
    Reproduce(crate::reproduce::ReproduceArgs),
    /// Time a scheme's operations (encrypt, decrypt, multiply, relinearize, modulus switching,
    /// NTT) per ciphertext batch on the 128-bit preset of a ring degree.
    Scheme(SchemeArgs),
    /// Measure this machine's memory bandwidth, STREAM-style (copy, add, triad): the limit a
    /// memory-bound operation is compared with (also `bench stream`).
    #[command(alias = "stream")]
    Bandwidth(BandwidthArgs),
    /// Time the relinearization key and Galois keys of a CKKS preset on the CPU: keys per
    /// second.
    Keygen(KeygenArgs),
    /// Time one CKKS bootstrapping on a backend: precision against the input, levels before
    /// and after, the keys it needs (INSECURE test presets for now).
    Bootstrap(BootstrapArgs),
}

/// Arguments of `pimhe bench bootstrap`.
#[derive(Debug, Clone, Args)]
pub struct BootstrapArgs {
    /// Ring degree: 65536 (the 128-bit preset) or 1024 to 16384 (insecure presets).
    #[arg(long)]
    pub n: usize,
    /// Slots: N/2 (full packing, the default) or a power of two below it (sparse packing).
    #[arg(long)]
    pub slots: Option<usize>,
    /// Where it runs [default: cpu].
    #[command(flatten)]
    pub target: TargetArgs,
    /// cpu: timed bootstrappings, the best reported (1..=100000); modeled targets run once.
    #[arg(long, default_value_t = 1)]
    pub repeat: usize,
    /// Seed of the keys and the input.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Real inputs, the error measured on the real parts (as OpenFHE's bootstrapping examples);
    /// complex ones otherwise.
    #[arg(long)]
    pub real: bool,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `pimhe bench bandwidth`.
#[derive(Debug, Clone, Args)]
pub struct BandwidthArgs {
    /// Each of the three arrays, MiB (1..=16384); far above the last-level cache.
    #[arg(long, default_value_t = 256)]
    pub mib: usize,
    /// Passes of each kernel, the best reported (1..=100000).
    #[arg(long, default_value_t = 5)]
    pub repeat: usize,
    /// Threads [default: every core].
    #[arg(long)]
    pub threads: Option<usize>,
    /// Print one JSON object (threads, array_mib, repeat, kernels, best_gb_per_s).
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `pimhe bench keygen`.
#[derive(Debug, Clone, Args)]
pub struct KeygenArgs {
    /// Ring degree of the CKKS preset: 8192, 16384, 32768 or 65536.
    #[arg(long)]
    pub n: usize,
    /// Galois keys to make (rotations by 1..=G slots), 1..=64.
    #[arg(long, default_value_t = 4)]
    pub galois: usize,
    /// Runs, the best reported (1..=100000).
    #[arg(long, default_value_t = 1)]
    pub repeat: usize,
    /// Threads [default: every core].
    #[arg(long)]
    pub threads: Option<usize>,
    /// Seed of the keys.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `pimhe bench OP`.
#[derive(Debug, Clone, Args)]
pub struct BenchArgs {
    /// Operation to time.
    // It names this struct's argument group by hand: clap leaves the group of a struct with a
    // flattened one empty, and `bench` tells `bench OP` from its subcommands by whether that
    // group is present.
    #[arg(group = "BenchArgs", value_parser = op_parser())]
    pub op: Op,
    /// Ring degree N: a power of two from 16 (2^4) to 1048576 (2^20).
    #[arg(long)]
    pub n: usize,
    /// Number K of RNS primes (at least 1); bfv-mul, bfv-add and bgv-mul-relin use the preset's.
    #[arg(long, required_if_eq_any = [("op", "ntt"), ("op", "intt"), ("op", "bgv-mul"), ("op", "pipeline")])]
    pub primes: Option<usize>,
    /// Size of each prime in bits (2..=30); the K largest primes p = 1 mod 2N of that size are
    /// used (not for bfv-mul, bfv-add, bgv-mul-relin).
    #[arg(long, default_value_t = 30)]
    pub prime_bits: u32,
    /// Number C of input ciphertexts (two polynomials each); even for bgv-mul, pipeline, bfv-mul,
    /// bfv-add and bgv-mul-relin.
    #[arg(long)]
    pub batch: usize,
    /// Where it runs [default: cpu; upmem-emu: the placement of least modeled cost, auto
    /// emulation; no --threads, the emulator uses every core].
    #[command(flatten)]
    pub target: TargetArgs,
    /// Print one JSON object (op, backend, n, primes, prime_bits, batch, wall_s, ...; for
    /// upmem-emu also transfer_s, compute_s, retrieve_s, energy_j, model, ...; for nearbank
    /// gpu_s, pim_s, total_s, energy_j, edp_js, without_pim_s, speedup, ...) instead of text.
    #[arg(long)]
    pub json: bool,
    /// cpu: number of timed repeats, 1..=100000; the best is reported as wall time, the mean
    /// alongside [default: 3]. (upmem-emu and nearbank run once and model the run.)
    #[arg(long)]
    pub repeat: Option<usize>,
    /// Seed of the input generator (ChaCha20).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

impl BenchArgs {
    /// The library's configuration, the target flags parsed under `bench OP`'s rules.
    fn config(&self) -> Result<KernelConfig> {
        let (args, target) = (self, TargetFlags::from(&self.target).parse(&kernels::RULES)?);
        Ok(KernelConfig {
            op: args.op,
            n: args.n,
            primes: args.primes,
            prime_bits: args.prime_bits,
            batch: args.batch,
            target,
            repeat: args.repeat,
            seed: args.seed,
        })
    }
}

/// Arguments of `pimhe bench scheme`.
#[derive(Debug, Clone, Args)]
pub struct SchemeArgs {
    /// Scheme to time: bgv, bfv, ckks, or bfv-special (BFV on the CE-RAM B/FV paper's special
    /// moduli, one case of its Table 1: --case).
    #[arg(long, default_value = "bgv")]
    pub scheme: String,
    /// Ring degree N of the 128-bit preset: 4096, 8192, 16384 or 32768 for bgv and bfv (the
    /// presets with a key-switching prime, so relinearization can be timed); 8192 .. 65536 for
    /// ckks; bfv-special: the paper's 16384 only [default there: 16384].
    #[arg(long)]
    pub n: Option<usize>,
    /// bfv-special only: the CE-RAM paper's case, A (balanced moduli, Barrett reductions) or B
    /// (the same moduli, its special reductions and FastBConv).
    #[arg(long)]
    pub case: Option<String>,
    /// Number C of ciphertexts in each operand batch [default: 8; bfv-special: 1, the only one
    /// it takes].
    #[arg(long)]
    pub batch: Option<usize>,
    /// Where it runs: cpu (default) or nearbank (the results computed on this host, and each
    /// operation's modeled cost on a GPU with near-bank PIM, Anaheim).
    #[command(flatten)]
    pub target: TargetArgs,
    /// Number of timed rounds (after one untimed warm-up); the best and the median are reported.
    #[arg(long, default_value_t = 5)]
    pub repeat: usize,
    /// Seed of the keys, the encryption randomness and the plaintext slots (ChaCha20).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Key-switching digits instead of the preset's: the longest 128-bit chain for that dnum
    /// (`pimhe params` lists the presets' choice; dnum = L is one digit per data prime).
    #[arg(long)]
    pub dnum: Option<usize>,
    /// CKKS only: the scale 2^bits (20..=58) instead of the preset's, at the preset's depth and
    /// dnum (a smaller scale shortens the chain, so it stays 128-bit secure).
    #[arg(long)]
    pub scale_bits: Option<u32>,
    /// Print one JSON object (scheme, backend, n, batch, threads, repeats, seed, params,
    /// checked, ops[op, best_s, median_s, best_per_ciphertext_s, median_per_ciphertext_s,
    /// times_s]; nearbank: modeled{model, ops[op, gpu_s, pim_s, ...]}; bfv-special: case)
    /// instead of a table.
    #[arg(long)]
    pub json: bool,
}

impl SchemeArgs {
    /// The library's configuration, the target flags parsed under `bench scheme`'s rules.
    fn config(&self) -> Result<SchemeConfig> {
        let n = self.n.or_else(|| SchemeConfig::default_n(&self.scheme)).ok_or_else(|| {
            CliError::usage(format!("bench scheme --scheme {} needs --n (the ring degree)", self.scheme))
        })?;
        Ok(SchemeConfig {
            scheme: self.scheme.clone(),
            n,
            batch: self.batch.unwrap_or_else(|| SchemeConfig::default_batch(&self.scheme)),
            target: TargetFlags::from(&self.target).parse(&scheme::RULES)?,
            repeat: self.repeat,
            seed: self.seed,
            dnum: self.dnum,
            scale_bits: self.scale_bits,
            case: self.case.clone(),
        })
    }
}

/// Runs `pimhe bench`.
pub fn run(command: &BenchCommand) -> Result<()> {
    match (&command.action, &command.args) {
        (Some(BenchAction::Reproduce(args)), _) => crate::reproduce::run(args),
        (Some(BenchAction::Scheme(args)), _) => {
            let report = scheme::measure(&args.config()?, &TermProgress::new(args.json))?;
            print_report(&report, args.json)
        }
        (Some(BenchAction::Bandwidth(args)), _) => {
            let config = BandwidthConfig { mib: args.mib, repeat: args.repeat, threads: args.threads };
            print_report(&bandwidth::run(&config)?, args.json)
        }
        (Some(BenchAction::Keygen(args)), _) => {
            let config =
                KeygenConfig { n: args.n, galois: args.galois, repeat: args.repeat, threads: args.threads, seed: args.seed };
            print_report(&keygen::run(&config)?, args.json)
        }
        (Some(BenchAction::Bootstrap(args)), _) => {
            let config = BootstrapBenchConfig {
                n: args.n,
                slots: args.slots,
                target: TargetFlags::from(&args.target).parse(&bootstrap::RULES)?,
                repeat: args.repeat,
                seed: args.seed,
                real: args.real,
            };
            print_report(&bootstrap::run(&config)?, args.json)
        }
        (None, Some(args)) => print_report(&kernels::run(&args.config()?)?, args.json),
        (None, None) => Err(CliError::usage(
            "bench needs an operation (ntt, intt, bgv-mul, pipeline with --n, --primes and --batch; bfv-mul, \
             bfv-add, bgv-mul-relin with --n and --batch), or \
             `bench reproduce dramatic`, `bench scheme --n N`, `bench bootstrap --n N`, `bench keygen --n N` or `bench bandwidth`",
        )),
    }
}

/// Prints `report` as `--json` asks: one JSON object on one line, or its text.
pub(crate) fn print_report(report: &impl Render, json: bool) -> Result<()> {
    if json {
        crate::output::line(&pimhe_bench::format::to_json(report)?);
    } else {
        crate::output::line(&report.render());
    }
    Ok(())
}
