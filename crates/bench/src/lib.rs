//! # pimhe-bench
//!
//! Benchmarks, reproductions and PIM settings shared by the `pimhe` CLI and the Python
//! package: everything those commands do but parse arguments and print.
//!
//! The modules are layered, each using only those before it:
//!
//! - [`error`]: [`BenchError`] (a usage error or a failed run, with the CLI's messages);
//! - [`format`]: seconds and SI formatting, the [`Render`] trait of every report, JSON;
//! - [`what_if`]: DRAMatic section 5's hardware what-ifs of an emulated UPMEM run (`--what-if
//!   mul-cycles=N`, `--what-if zero-copy`), applied to its model;
//! - [`settings`]: the emulated UPMEM system of a run ([`upmem::PimSettings`]), its
//!   backend, and what a run on it reported ([`upmem::PimOutcome`]);
//! - [`nearbank`]: the GPU + near-bank PIM system of a run (`--system`, `--buffer-entries`)
//!   and what the `anaheim-nb` model says a recorded program costs there
//!   ([`nearbank::NearbankOutcome`]);
//! - [`kernels`]: polynomial workloads (NTT, inverse NTT, BGV tensor, the pipeline; BFV's
//!   multiply and add on real ciphertexts) on the cpu and upmem-emu backends
//!   ([`kernels::run`]);
//! - [`scheme`]: BGV, BFV and CKKS operations timed per ciphertext batch, every result checked
//!   against the plaintext computation ([`scheme::measure`]);
//! - [`reproduce`]: the seed papers' experiments beside their published numbers, one module per
//!   paper (DRAMatic, Anaheim, CE-RAM) behind one trait ([`reproduce::Reproduction`]) whose rows
//!   have one shape ([`reproduce::Comparison`]) and one printer;
//! - [`stats`]: the encrypted statistics of seed 002 in one process, server on the cpu or
//!   upmem-emu ([`stats::run`]);
//! - [`advise`]: the CPU-vs-PIM verdict of a workload over DPU counts and what-ifs, from
//!   `kernels` runs on both sides ([`advise::run`]).
//!
//! Configurations are plain structs whose string fields are validated by the run itself, so
//! that the errors name the CLI's flags whoever calls. Long runs report their progress to a
//! [`Progress`] ([`NoProgress`] reports nothing).
//!
//! ```
//! use pimhe_bench::measure::kernels::{self, KernelConfig, KernelReport, Op};
//! use pimhe_bench::target::Target;
//! use pimhe_bench::Render;
//!
//! // The forward NTT of 2 ciphertexts (4 polynomials) of N = 16 over one prime, on the cpu.
//! let mut config = KernelConfig::new(Op::Ntt, 16, Some(1), 2);
//! config.target = Target::Cpu { threads: Some(1) };
//! let report = kernels::run(&config).unwrap();
//! let KernelReport::Cpu(cpu) = &report else { panic!("a cpu report") };
//! assert_eq!(cpu.times_s().len(), 3);
//! assert!(report.render().starts_with("ntt  backend=cpu n=16 primes=1x30b batch=2 threads=1"));
//!
//! // Invalid settings are usage errors naming the flag.
//! config.batch = 0;
//! let error = kernels::run(&config).unwrap_err();
//! assert!(error.is_usage() && error.to_string().starts_with("--batch 0"));
//! ```

pub mod advise;
pub mod demo;
pub mod error;
pub mod format;
pub mod measure;
pub mod reproduce;
pub mod target;

pub use error::{BenchError, Result};
pub use format::Render;
pub use pimhe_workloads::progress::{NoProgress, Progress};
