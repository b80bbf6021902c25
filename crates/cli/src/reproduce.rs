//! `pimhe bench reproduce dramatic|anaheim|ceram`: the arguments, and the rows printed as
//! [`pimhe_bench::reproduce::dramatic`], [`pimhe_bench::reproduce::anaheim`] and [`pimhe_bench::reproduce::ceram`] make them (a
//! progress bar on stderr counts them).

use clap::{Args, ValueEnum};
use std::path::PathBuf;

use pimhe_bench::format::to_json;
use pimhe_bench::reproduce::anaheim::{self, AnaheimConfig};
use pimhe_bench::reproduce::ceram::{self, CeramConfig};
use pimhe_bench::reproduce::dramatic::{Experiment, ReproduceConfig, Reproduction, DEFAULT_MAX_EMULATION_S};
use pimhe_bench::Render;

use crate::error::{CliError, Result};
use crate::progress::TermProgress;

/// Papers whose experiments can be reproduced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExperimentArg {
    /// DRAMatic (Tables 2-5): NTT, iNTT, BGV multiplication and the combined pipeline.
    Dramatic,
    /// Anaheim (Fig. 9 microbenchmark of the PIM instructions on the three systems of Table
    /// III; CKKS operations on them beside "w/o PIM").
    Anaheim,
    /// The CE-RAM B/FV paper (Tables 2, 3, 4 modeled beside the published ratios; Table 6 with
    /// the CPU side measured: pimhe's cpu backend and SEAL, if installed).
    Ceram,
}

/// Arguments of `pimhe bench reproduce`.
#[derive(Debug, Clone, Args)]
pub struct ReproduceArgs {
    /// The paper whose experiments to run.
    #[arg(value_enum)]
    pub experiment: ExperimentArg,

    /// dramatic: DPU kernel arithmetic, barrett (DRAMatic's own: the model-fidelity check) or
    /// best (pimhe's: the speed-up) [default: barrett].
    #[arg(long)]
    pub kernel: Option<String>,

    /// anaheim: ring degree of the CKKS workloads, a CKKS preset (8192 .. 65536), or 0 to skip
    /// them [default: 65536, the paper's].
    #[arg(long)]
    pub workload_n: Option<usize>,

    /// Print one JSON object per row (and one for the target) instead of a table (anaheim,
    /// ceram: one object for the whole report).
    #[arg(long)]
    pub json: bool,

    /// ceram: timed rounds of the CPU measurement, after a warm-up [default: 5].
    #[arg(long)]
    pub repeat: Option<usize>,

    /// ceram: the Python of an environment with TenSEAL [default: the one bench/compare/run.py
    /// makes under ~/.cache/pimhe-compare]; without one the SEAL column is n/a.
    #[arg(long, value_name = "PATH")]
    pub seal_python: Option<PathBuf>,

    /// ceram: model only; skip the CPU measurement of Table 6.
    #[arg(long)]
    pub skip_cpu: bool,

    /// ceram: worker threads of pimhe's cpu backend [default: all cores].
    #[arg(long)]
    pub threads: Option<usize>,

    /// Only these rows: comma-separated row ids or id prefixes ending at a '-' (t2, t3-ntt,
    /// t5-pipeline-128-seq, s5, s5-ntt), and `target` for the target summary.
    #[arg(long, hide = true)]
    pub rows: Option<String>,

    /// Emulation budget of one row in seconds.
    #[arg(long, hide = true, default_value_t = DEFAULT_MAX_EMULATION_S)]
    pub max_emulation_s: f64,

    /// dramatic: a hardware what-if applied to the Tables 2-5 rows (the section-5 rows, s5-...,
    /// have their own): mul-cycles=N, mul-cycles=N/M or zero-copy. Repeatable, or comma-separated.
    #[arg(long = "what-if", value_name = "WHAT-IF", action = clap::ArgAction::Append)]
    pub what_if: Vec<String>,
}

impl From<&ReproduceArgs> for ReproduceConfig {
    fn from(args: &ReproduceArgs) -> Self {
        let experiment = Experiment::Dramatic;
        Self {
            experiment,
            kernel: args.kernel.clone().unwrap_or_else(|| "barrett".to_string()),
            rows: args.rows.clone(),
            max_emulation_s: args.max_emulation_s,
            what_if: args.what_if.clone(),
        }
    }
}

/// Runs `pimhe bench reproduce`.
pub fn run(args: &ReproduceArgs) -> Result<()> {
    let ceram_only = args.repeat.is_some() || args.seal_python.is_some() || args.skip_cpu || args.threads.is_some();
    if ceram_only && args.experiment != ExperimentArg::Ceram {
        return Err(CliError::usage(
            "--repeat, --seal-python, --skip-cpu and --threads apply to `reproduce ceram` only",
        ));
    }
    match args.experiment {
        ExperimentArg::Dramatic => {
            if args.workload_n.is_some() {
                return Err(CliError::usage("--workload-n applies to `reproduce anaheim` only"));
            }
            run_dramatic(args)
        }
        ExperimentArg::Anaheim => run_anaheim(args),
        ExperimentArg::Ceram => run_ceram(args),
    }
}

/// `pimhe bench reproduce ceram`: the whole report at the end (the CPU rounds' progress on
/// stderr).
fn run_ceram(args: &ReproduceArgs) -> Result<()> {
    if args.kernel.is_some() || args.rows.is_some() || !args.what_if.is_empty() || args.workload_n.is_some() {
        return Err(CliError::usage("--kernel, --rows, --what-if and --workload-n do not apply to `reproduce ceram`"));
    }
    let defaults = CeramConfig::default();
    let config = CeramConfig {
        cpu: !args.skip_cpu,
        repeat: args.repeat.unwrap_or(defaults.repeat),
        threads: args.threads,
        seal_python: args.seal_python.clone(),
        ..defaults
    };
    let report = ceram::reproduce(&config, &TermProgress::new(args.json))?;
    println!("{}", if args.json { to_json(&report)? } else { report.render() });
    Ok(())
}

/// `pimhe bench reproduce anaheim`: the whole report at the end (the workloads' progress on
/// stderr).
fn run_anaheim(args: &ReproduceArgs) -> Result<()> {
    if args.kernel.is_some() || args.rows.is_some() || !args.what_if.is_empty() {
        return Err(CliError::usage("--kernel, --rows and --what-if apply to `reproduce dramatic` only"));
    }
    let config = AnaheimConfig {
        workload_degree: match args.workload_n {
            Some(0) => None,
            Some(n) => Some(n),
            None => AnaheimConfig::default().workload_degree,
        },
        threads: None,
    };
    let report = anaheim::reproduce(&config, &TermProgress::new(args.json))?;
    println!("{}", if args.json { to_json(&report)? } else { report.render() });
    Ok(())
}

/// `pimhe bench reproduce dramatic`: each row is printed as soon as it is modeled.
fn run_dramatic(args: &ReproduceArgs) -> Result<()> {
    let mut reproduction = Reproduction::new(&args.into())?;
    let progress = TermProgress::new(args.json);
    if !args.json {
        println!("{}", reproduction.intro());
    }
    let reports = reproduction.run_rows(&progress, |report| {
        progress.println(&if args.json { to_json(report)? } else { report.render() });
        Ok(())
    })?;
    if !args.json && !reports.is_empty() {
        progress.println(&reproduction.footer(&reports));
    }
    if let Some(target) = reproduction.target(&progress)? {
        println!("{}", if args.json { to_json(&target)? } else { target.render() });
    }
    if !args.json {
        println!("(emulation took {:.1} s on this host)", reproduction.elapsed_s());
    }
    Ok(())
}
