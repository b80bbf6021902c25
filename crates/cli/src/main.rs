//! `pimhe`: the command line of the pimhe homomorphic-encryption library.
//!
//! Each subcommand lives in its own module and exposes `run(&Args) -> error::Result<()>`;
//! `main` only parses, dispatches and turns errors into an exit status. What the commands run
//! (benchmarks, reproductions, PIM settings) is the library `pimhe-bench`'s.

mod advise;
mod bench;
mod demo;
mod error;
mod helr;
mod output;
mod params;
mod progress;
mod reproduce;
mod stats;
mod study;
mod target;

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use error::ExitStatus;

/// pimhe: homomorphic encryption (BGV, BFV, CKKS) on the CPU and on processing-in-memory
/// backends (emulated UPMEM DPUs, near-bank PIM beside a GPU), with the seed papers' models.
#[derive(Debug, Parser)]
#[command(name = "pimhe", version, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Encrypt two batches of random vectors, compute on them homomorphically (bgv: a product;
    /// ckks: a product, a rotation and a sigmoid), decrypt and check the result against the
    /// plaintext computation.
    Demo(demo::DemoArgs),
    /// Should I buy PIM? A workload's modeled PIM time and energy for DPU counts up to 2560 and
    /// DRAMatic's what-ifs, beside the CPU measured here and scaled to a server CPU, and the
    /// crossover (the batch and DPU count where PIM wins, or never and why).
    Advise(advise::AdviseArgs),
    /// Print the parameter presets of a scheme (bgv/bfv, ckks) with their security level.
    Params(params::ParamsArgs),
    /// Time a polynomial workload (NTT, inverse NTT, BGV multiplication, both combined) on a
    /// backend, with uniformly random inputs; `bench reproduce dramatic`; or `bench scheme`.
    Bench(bench::BenchCommand),
    /// Encrypted statistics over users (mean, variance, linear regression) from a CSV file or
    /// synthetic data, beside the same statistic computed in plaintext.
    Stats(stats::StatsArgs),
    /// Logistic-regression training on encrypted data (HELR): per-iteration time and loss, and
    /// the held-out accuracy beside the plaintext model (same sigmoid polynomial, iterations).
    Helr(helr::HelrArgs),
    /// Client/server statistics, the analyst's first step: declare a study (statistic, columns,
    /// bounds) and write its public keys and, separately, its secret keys.
    Keygen(study::KeygenArgs),
    /// A user's step: encrypt each row of a CSV with the study's public keys, one submission
    /// file per row.
    Encrypt(study::EncryptArgs),
    /// The server's step: add up the submissions with the public keys only, on any backend.
    Eval(study::EvalArgs),
    /// The analyst's last step: decrypt the aggregates and print the statistic.
    Decrypt(study::DecryptArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match &cli.command {
        Command::Demo(args) => demo::run(args),
        Command::Advise(args) => advise::run(args),
        Command::Params(args) => params::run(args),
        Command::Bench(args) => bench::run(args),
        Command::Stats(args) => stats::run(args),
        Command::Helr(args) => helr::run(args),
        Command::Keygen(args) => study::keygen(args),
        Command::Encrypt(args) => study::encrypt(args),
        Command::Eval(args) => study::eval(args),
        Command::Decrypt(args) => study::decrypt(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            e.exit_code()
        }
    }
}
