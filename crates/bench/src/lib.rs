//! # pimhe-bench
//!
//! Everything the `pimhe` CLI and the Python package do but parse arguments and print: where
//! a run computes, what pimhe measures, the seed papers' reproductions, the demo and the
//! CPU-vs-PIM verdict. The modules are layered, each using only those before it (no module
//! imports a later one, and no two files import each other):
//!
//! - [`error`]: [`BenchError`] (a usage error or a failed run, with the CLI's messages) and
//!   [`format`]: seconds and SI formatting, the [`Render`] trait of every report, JSON;
//! - [`params`]: the parameter presets of each scheme and their security (`pimhe params`,
//!   `pimhe.presets()`);
//! - [`target`]: where a run computes, one type ([`target::Target`]: cpu, the emulated UPMEM
//!   system with DRAMatic's what-ifs, the GPU + near-bank PIM system), parsed from one flag
//!   group in one place, and one way to run a job on it ([`target::Target::run`]);
//! - [`measure`]: polynomial kernels and operations on real ciphertexts
//!   ([`measure::kernels::run`]), each scheme's operations per batch
//!   ([`measure::scheme::measure`]), the statistics of seed 002 ([`measure::stats::run`]), and
//!   their seeded inputs;
//! - [`demo`]: `pimhe demo`'s pipelines end to end on a target;
//! - [`reproduce`]: one module per seed paper, its experiments beside the published numbers,
//!   behind one trait ([`reproduce::Reproduction`]) whose rows have one shape
//!   ([`reproduce::Comparison`]) and one printer;
//! - [`advise`]: the CPU-vs-PIM verdict of a workload over DPU counts and what-ifs, from
//!   `measure` runs on both sides ([`advise::run`]).
//!
//! Long runs report their progress to a [`Progress`] ([`NoProgress`] reports nothing).
//!
//! ```
//! use pimhe_bench::measure::kernels::{self, KernelConfig, KernelReport, Op};
//! use pimhe_bench::target::{Target, TargetFlags};
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
//! let flags = TargetFlags { backend: Some("gpu".into()), ..TargetFlags::default() };
//! assert!(flags.parse(&kernels::RULES).unwrap_err().to_string().starts_with("--backend gpu is not allowed"));
//! ```

pub mod advise;
pub mod demo;
pub mod error;
pub mod format;
pub mod measure;
pub mod params;
pub mod reproduce;
pub mod target;

pub use error::{BenchError, Result};
pub use format::Render;
pub use pimhe_workloads::progress::{NoProgress, Progress};
