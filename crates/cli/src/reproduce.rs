//! `pimhe bench reproduce dramatic|mhy|gupta|anaheim|ceram`: one subcommand per paper with its own flags,
//! turned into the paper's configuration and printed by the library's one printer
//! ([`pimhe_bench::reproduce::report_text`], [`pimhe_bench::reproduce::report_json`]).
//! DRAMatic's rows are printed as they are made (a progress bar on stderr counts them).

use clap::{Args, Subcommand};
use std::path::PathBuf;

use pimhe_bench::reproduce::anaheim::{Anaheim, AnaheimConfig};
use pimhe_bench::reproduce::ceram::{Ceram, CeramConfig};
use pimhe_bench::reproduce::dramatic::{Dramatic, DramaticConfig, DramaticRun, RowReport, DEFAULT_MAX_EMULATION_S};
use pimhe_bench::reproduce::gupta::{Gupta, GuptaConfig};
use pimhe_bench::reproduce::mhy::{Mhy, MhyConfig};
use pimhe_bench::reproduce::{comparison_text, report_json, report_text, with_comparison, Reproduction};
use pimhe_bench::{format::to_json, Render};

use crate::error::Result;
use crate::output::line;
use crate::progress::TermProgress;

/// Arguments of `pimhe bench reproduce`: the paper, with its own flags.
#[derive(Debug, Clone, Args)]
pub struct ReproduceArgs {
    /// The paper whose experiments to run.
    #[command(subcommand)]
    pub paper: Paper,
}

/// The papers whose experiments can be reproduced.
#[derive(Debug, Clone, Subcommand)]
pub enum Paper {
    /// MHY+ (Fig. 3 and Table II: raw polynomial addition, textbook convolution and
    /// coefficient-wise multiplication over coefficient ranges of up to 1024 DPUs, modeled, beside
    /// a CPU loop measured here and scaled to the paper's 16 threads).
    Mhy(MhyArgs),
    /// DRAMatic (Tables 1-5, Fig. 3, section 5's what-ifs, section 7.2): NTT, iNTT, BGV
    /// multiplication and the combined pipeline on the emulated UPMEM backend.
    Dramatic(DramaticArgs),
    /// Gupta et al. (Fig. 1: BFV ciphertext vector addition and multiplication on 2,524 DPUs at
    /// 425 MHz, modeled from emulated counts, with a tasklet sweep, beside pimhe's cpu backend
    /// measured here and the speed-up ranges the paper states).
    Gupta(GuptaArgs),
    /// Anaheim (Fig. 9 microbenchmark of the PIM instructions on the three systems of Table
    /// III; CKKS operations on them beside "w/o PIM").
    Anaheim(AnaheimArgs),
    /// The CE-RAM B/FV paper (Tables 2, 3, 4 modeled beside the published ratios; Table 6 with
    /// the CPU side measured: pimhe's cpu backend and SEAL, if installed).
    Ceram(CeramArgs),
}

/// Arguments of `pimhe bench reproduce mhy`.
#[derive(Debug, Clone, Args)]
pub struct MhyArgs {
    /// Two small lengths (2^10, 2^12; scaling at 2^12), every row also executed whole on the
    /// emulated DPUs and checked against the CPU loop: seconds.
    #[arg(long)]
    pub quick: bool,

    /// Model only: time no CPU loop (the stated ratios are then not judged).
    #[arg(long)]
    pub skip_cpu: bool,

    /// Print one JSON object (the report, with every published figure beside ours under
    /// `comparison`) instead of the tables.
    #[arg(long)]
    pub json: bool,
}

impl From<&MhyArgs> for MhyConfig {
    fn from(args: &MhyArgs) -> Self {
        Self { quick: args.quick, skip_cpu: args.skip_cpu }
    }
}

/// Arguments of `pimhe bench reproduce dramatic`.
#[derive(Debug, Clone, Args)]
pub struct DramaticArgs {
    /// DPU kernel arithmetic, barrett (DRAMatic's own: the model-fidelity check) or best
    /// (pimhe's: the speed-up) [default: barrett].
    #[arg(long)]
    pub kernel: Option<String>,

    /// A hardware what-if applied to the Tables 2-5 rows (the section-5 rows, s5-..., have their
    /// own): mul-cycles=N, mul-cycles=N/M or zero-copy. Repeatable, or comma-separated.
    #[arg(long = "what-if", value_name = "WHAT-IF", action = clap::ArgAction::Append)]
    pub what_if: Vec<String>,

    /// The timing model: upmem-v1b@1 (each launch priced from every tasklet's totals) or
    /// upmem-v1b@2 (priced barrier interval by barrier interval, transfers parallel across
    /// ranks) [default: upmem-v1b@2].
    #[arg(long)]
    pub model: Option<String>,

    /// Print one JSON object per row (its published figures beside ours under `comparison`) and
    /// one for the target instead of a table.
    #[arg(long)]
    pub json: bool,

    /// Only these rows: comma-separated row ids or id prefixes ending at a '-' (t2, t3-ntt,
    /// t5-pipeline-128-seq, s5, s5-ntt, s72), `target` for the target summary, `fig3` for
    /// Fig. 3's multiply costs and `table1` for Table 1's batch sizes.
    #[arg(long, hide = true)]
    pub rows: Option<String>,

    /// Emulation budget of one row in seconds.
    #[arg(long, hide = true, default_value_t = DEFAULT_MAX_EMULATION_S)]
    pub max_emulation_s: f64,
}

impl From<&DramaticArgs> for DramaticConfig {
    fn from(args: &DramaticArgs) -> Self {
        let defaults = DramaticConfig::default();
        Self {
            kernel: args.kernel.clone().unwrap_or(defaults.kernel),
            rows: args.rows.clone(),
            max_emulation_s: args.max_emulation_s,
            what_if: args.what_if.clone(),
            model: args.model.clone().unwrap_or(defaults.model),
        }
    }
}

/// Arguments of `pimhe bench reproduce gupta`.
#[derive(Debug, Clone, Args)]
pub struct GuptaArgs {
    /// Small counts on a 12-DPU system, every row's whole system also emulated and checked
    /// against the priced time and the cpu backend's results (seconds).
    #[arg(long)]
    pub quick: bool,

    /// Model only; skip the CPU measurement.
    #[arg(long)]
    pub skip_cpu: bool,

    /// Timed rounds of each CPU measurement, after a warm-up [default: 3].
    #[arg(long)]
    pub repeat: Option<usize>,

    /// Worker threads of pimhe's cpu backend [default: all cores].
    #[arg(long)]
    pub threads: Option<usize>,

    /// SEAL's times on this machine: the JSON bench/compare/gupta_seal.py printed (run it in a
    /// venv with tenseal); without it the SEAL rows are not judged.
    #[arg(long, value_name = "FILE")]
    pub seal_json: Option<PathBuf>,

    /// Print one JSON object (the report, with every published figure beside ours under
    /// `comparison`) instead of the tables.
    #[arg(long)]
    pub json: bool,
}

impl From<&GuptaArgs> for GuptaConfig {
    fn from(args: &GuptaArgs) -> Self {
        let defaults = GuptaConfig::default();
        Self {
            quick: args.quick,
            skip_cpu: args.skip_cpu,
            repeat: args.repeat.unwrap_or(defaults.repeat),
            threads: args.threads,
            seal_json: args.seal_json.clone(),
            ..defaults
        }
    }
}

/// Arguments of `pimhe bench reproduce anaheim`.
#[derive(Debug, Clone, Args)]
pub struct AnaheimArgs {
    /// Ring degree of the CKKS workloads, a CKKS preset (8192 .. 65536), or 0 to skip them
    /// [default: 65536, the paper's].
    #[arg(long)]
    pub workload_n: Option<usize>,

    /// Worker threads computing the CKKS workloads (and Boot) on this host [default: all cores].
    #[arg(long)]
    pub threads: Option<usize>,

    /// Also record Anaheim's Boot: one full-slot bootstrapping of the 128-bit N = 2^16 preset
    /// on the nearbank backend, checked by decryption, priced on each system beside Fig. 8's
    /// band and Table V's time. Takes 25-40 s of CPU and about 12 GB of memory.
    #[arg(long)]
    pub boot: bool,

    /// Boot's ring degree with --boot: 65536 (the paper's, 128-bit), or 1024 .. 16384 for an
    /// INSECURE preset that takes seconds [default: 65536].
    #[arg(long, value_name = "N")]
    pub boot_n: Option<usize>,

    /// Also record Anaheim's HELR per iteration: a bootstrapping and two iterations of the
    /// encrypted trainer on 1024-sample batches at the 128-bit N = 2^16 preset on the nearbank
    /// backend, checked against the plaintext trainer, priced on each system beside Fig. 8's
    /// bands and Table V's time. Takes about 5 minutes of CPU and 17 GB of memory.
    #[arg(long)]
    pub helr: bool,

    /// HELR's ring degree with --helr: 65536 (the paper's, 128-bit), or 1024 .. 16384 for an
    /// INSECURE preset that takes seconds (the batch shrinks with N) [default: 65536].
    #[arg(long, value_name = "N")]
    pub helr_n: Option<usize>,

    /// Print one JSON object (the report, with every published figure beside ours under
    /// `comparison`) instead of the tables.
    #[arg(long)]
    pub json: bool,
}

impl From<&AnaheimArgs> for AnaheimConfig {
    fn from(args: &AnaheimArgs) -> Self {
        Self {
            workload_n: args.workload_n.unwrap_or(AnaheimConfig::default().workload_n),
            threads: args.threads,
            boot: args.boot,
            boot_n: args.boot_n,
            helr: args.helr,
            helr_n: args.helr_n,
        }
    }
}

/// Arguments of `pimhe bench reproduce ceram`.
#[derive(Debug, Clone, Args)]
pub struct CeramArgs {
    /// Model only; skip the CPU measurement of Table 6.
    #[arg(long)]
    pub skip_cpu: bool,

    /// Timed rounds of the CPU measurement, after a warm-up [default: 5].
    #[arg(long)]
    pub repeat: Option<usize>,

    /// Worker threads of pimhe's cpu backend [default: all cores].
    #[arg(long)]
    pub threads: Option<usize>,

    /// The Python of an environment with TenSEAL [default: the one bench/compare/run.py
    /// makes under ~/.cache/pimhe-compare]; without one the SEAL column is n/a.
    #[arg(long, value_name = "PATH")]
    pub seal_python: Option<PathBuf>,

    /// Print one JSON object (the report, with every published figure beside ours under
    /// `comparison`) instead of the tables.
    #[arg(long)]
    pub json: bool,
}

impl From<&CeramArgs> for CeramConfig {
    fn from(args: &CeramArgs) -> Self {
        let defaults = CeramConfig::default();
        Self {
            skip_cpu: args.skip_cpu,
            repeat: args.repeat.unwrap_or(defaults.repeat),
            threads: args.threads,
            seal_python: args.seal_python.clone(),
            ..defaults
        }
    }
}

/// Runs `pimhe bench reproduce PAPER`.
pub fn run(args: &ReproduceArgs) -> Result<()> {
    match &args.paper {
        Paper::Mhy(args) => print_whole::<Mhy>(&args.into(), args.json),
        Paper::Dramatic(args) => run_dramatic(args),
        Paper::Gupta(args) => print_whole::<Gupta>(&args.into(), args.json),
        Paper::Anaheim(args) => print_whole::<Anaheim>(&args.into(), args.json),
        Paper::Ceram(args) => print_whole::<Ceram>(&args.into(), args.json),
    }
}

/// Runs `R` and prints the whole report at the end (its progress on stderr).
fn print_whole<R: Reproduction>(config: &R::Config, json: bool) -> Result<()> {
    let report = R::run(config, &TermProgress::new(json))?;
    line(&if json { report_json::<R>(&report)? } else { report_text::<R>(&report) });
    Ok(())
}

/// `pimhe bench reproduce dramatic`: each row is printed as soon as it is modeled, then the
/// same text as [`report_text`] (or, with `--json`, each row with its comparison rows).
fn run_dramatic(args: &DramaticArgs) -> Result<()> {
    let mut reproduction = DramaticRun::new(&args.into())?;
    let progress = TermProgress::new(args.json);
    if !args.json {
        line(&reproduction.intro());
    }
    let reports = reproduction.run_rows(&progress, |report| {
        progress.println(&if args.json { with_comparison(report, &report.comparison())? } else { report.render() });
        Ok(())
    })?;
    if !args.json && !reports.is_empty() {
        progress.println(&reproduction.footer(&reports));
    }
    if let Some(target) = reproduction.target(&progress)? {
        line(&if args.json { to_json(&target)? } else { target.render() });
    }
    let mut rows: Vec<_> = reports.iter().flat_map(RowReport::comparison).collect();
    for section in reproduction.sections()? {
        line(if args.json { &section.json } else { &section.text });
        rows.extend(section.comparison);
    }
    if !args.json {
        line(&format!("(emulation took {:.1} s on this host)", reproduction.elapsed_s()));
        line(&format!("\n{}", comparison_text::<Dramatic>(&rows)));
    }
    Ok(())
}
