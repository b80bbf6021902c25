//! Figs. 6-7's rows: MHY+'s per-stage NTT offload (section IV-B: OpenFHE's Cooley-Tukey
//! butterflies sent to the DPUs one stage per launch, the data copied in and out around every
//! stage) beside the single-threaded CPU stage measured here and pimhe's whole-NTT-resident
//! mode, so that the paper's "up to 21x slower" and its cure sit side by side.
//!
//! Per-stage mode: `NTT_STAGE` (`pimhe_pim::ntt_stage`) on [`HAL_DPUS`] DPUs (at most n / 4,
//! two butterflies a DPU), each stage's slowest DPU emulated alone, its launch and its copies
//! priced by the model; "one stage" is the mean of the log2 n stages (Fig. 7 plots one
//! iteration), "whole NTT" their sum. Resident mode: the `NTT` kernel in pimhe's `best`
//! arithmetic transforming the polynomial in one launch on one DPU, pushed and pulled once;
//! with a batch of one polynomial per DPU on the same DPUs, the launch is the same and only
//! the copies grow ("per polynomial" divides the batch's total by its size). The CPU stage is
//! a plain loop ([`ct_stage`]) timed here, the CPU NTT pimhe_math's, both single-threaded and
//! scaled by clock only (the paper's baseline for Fig. 7 is single-threaded).

use pimhe_math::{Modulus, NttTable};
use pimhe_pim::layout::Variant;
use pimhe_pim::ntt_stage::{
    butterfly_ranges, run_per_stage, run_resident, stage_counts, stage_gaps, stage_transfer_bytes,
};
use pimhe_pim::raw_poly::residues;
use serde::Serialize;

use super::cpu::median_seconds;
use super::published::PAPER_CPU_GHZ;
use super::rows::RowSetup;
use crate::error::{BenchError, Result};
use crate::format::format_seconds;
use crate::measure::machine::CpuFacts;

/// DPUs of MHY+'s OpenFHE runs ("We leverage a total of 2048 DPUs for evaluations on
/// OpenFHE", section IV-B).
pub const HAL_DPUS: usize = 2048;

/// The arithmetic of the resident mode: pimhe's default kernels (all tasklets share one
/// polynomial's stages; the barrett NTT gives a polynomial one tasklet).
pub const RESIDENT_VARIANT: Variant = Variant::Best;

/// The prime of the NTT rows: the first 30-bit prime = 1 mod 2^21 pimhe_math finds, valid for every n up to 2^20 (65537 stops at 2^15; OpenFHE's towers are
/// 60-bit words the 32-bit DPU kernels do not take, and the counts do not depend on q's value).
pub fn ntt_prime() -> Result<u32> {
    let primes = pimhe_math::ntt_primes(30, 1 << 20, 1, &[]).map_err(math_failed)?;
    Ok(primes[0])
}

fn math_failed(e: pimhe_math::MathError) -> BenchError {
    BenchError::Failed(format!("MHY+ NTT rows: {e}"))
}

/// One bar group of Fig. 7, with the whole transform in both modes beside it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Fig7Row {
    /// Coefficients.
    pub n: usize,
    /// The prime.
    pub q: u32,
    /// DPUs of the per-stage mode.
    pub dpus: usize,
    /// One CPU stage (the mean of the loop's log2 n), single thread, measured here.
    pub cpu_stage_here_s: Option<f64>,
    /// `cpu_stage_here_s` scaled by clock to the paper's CPU ([`scaled_single_thread`]).
    pub cpu_stage_s: Option<f64>,
    /// pimhe_math's whole forward NTT, single thread, measured here and scaled by clock.
    pub cpu_ntt_s: Option<f64>,
    /// Modeled: one stage's launch (mean over the stages, launch overhead included).
    pub stage_dpu_s: f64,
    /// Modeled: one stage's host -> DPU copy of the butterflies' x's and y's.
    pub stage_host_dpu_s: f64,
    /// Modeled: one stage's DPU -> host copy.
    pub stage_dpu_host_s: f64,
    /// Modeled: the whole NTT per stage, log2 n launches and their copies.
    pub staged_ntt_s: f64,
    /// Modeled: the resident NTT's one launch on one DPU.
    pub resident_dpu_s: f64,
    /// Modeled: its push and pull of n words.
    pub resident_copies_s: f64,
    /// Modeled: per polynomial of a batch of `dpus` polynomials, one per DPU (one launch,
    /// `dpus` n words pushed and pulled).
    pub resident_batch_per_poly_s: f64,
    /// Quick runs: whether both modes executed whole on the emulated DPUs equal [`ct_stage`]'s
    /// NTT (`None`: not executed whole).
    pub executed_equal: Option<bool>,
}

impl Fig7Row {
    /// One stage with its copies: Fig. 7's "with copying" bar.
    pub fn stage_with_copies_s(&self) -> f64 {
        self.stage_dpu_s + self.stage_host_dpu_s + self.stage_dpu_host_s
    }

    /// The resident NTT of one polynomial, copies included.
    pub fn resident_ntt_s(&self) -> f64 {
        self.resident_dpu_s + self.resident_copies_s
    }
}

/// One Cooley-Tukey stage of gap `gap` on `a` in place, as a plain single-threaded loop: u64
/// arithmetic, `%` per result, the twiddles psi^bitrev(k) of `tw` (the host oracle of the
/// DPU runs: it shares no code with the kernels).
pub fn ct_stage(a: &mut [u32], tw: &[u32], gap: usize, q: u32) {
    let (q, groups) = (q as u64, a.len() / (2 * gap));
    for g in 0..groups {
        let w = tw[groups + g] as u64;
        for j in 2 * gap * g..2 * gap * g + gap {
            let (u, v) = (a[j] as u64, a[j + gap] as u64 * w % q);
            a[j] = ((u + v) % q) as u32;
            a[j + gap] = ((u + q - v) % q) as u32;
        }
    }
}

/// The forward NTT of `a` by [`ct_stage`], every stage in order.
///
/// ```
/// use pimhe_bench::reproduce::mhy::ct_ntt;
/// use pimhe_math::{Modulus, NttTable};
/// let table = NttTable::new(Modulus::new(65537).unwrap(), 16).unwrap();
/// let a: Vec<u32> = (0..16).map(|i| 65536 - i).collect();
/// let mut expected = a.clone();
/// table.forward(&mut expected); // bit-reversed output, as the loop's
/// assert_eq!(ct_ntt(&a, table.forward_twiddles(), 65537), expected);
/// ```
pub fn ct_ntt(a: &[u32], tw: &[u32], q: u32) -> Vec<u32> {
    let mut out = a.to_vec();
    for gap in stage_gaps(a.len()) {
        ct_stage(&mut out, tw, gap, q);
    }
    out
}

/// A single-thread time here scaled to the paper's single thread by clock only.
pub fn scaled_single_thread(seconds: f64, here: &CpuFacts) -> f64 {
    seconds * here.ghz / PAPER_CPU_GHZ
}

/// Fig. 7's row at length n.
pub fn row(setup: &RowSetup, n: usize) -> Result<Fig7Row> {
    let failed = |e: pimhe_pim::raw_poly::RawPolyError| BenchError::Failed(format!("MHY+ NTT n={n}: {e}"));
    let q = ntt_prime()?;
    let dpus = HAL_DPUS.min(n / 4);
    let table = NttTable::new(Modulus::new(q as u64).map_err(math_failed)?, n).map_err(math_failed)?;
    let a = residues(n, q, 3 * n as u64);
    let stages = n.trailing_zeros() as f64;
    let expected = ct_ntt(&a, table.forward_twiddles(), q);
    let (cpu_stage_here_s, cpu_ntt_here_s) = match setup.cpu {
        None => (None, None),
        Some(_) => {
            let loop_s = median_seconds(|| drop(std::hint::black_box(ct_ntt(&a, table.forward_twiddles(), q))));
            let mut b = a.clone();
            table.forward(&mut b); // the warm-up
            let ntt_s = median_seconds(|| {
                b.copy_from_slice(&a);
                table.forward(std::hint::black_box(&mut b));
            });
            (Some(loop_s / stages), Some(ntt_s))
        }
    };
    let executed_equal = if setup.execute {
        let staged = run_per_stage(q, &a, dpus, setup.config.clone(), setup.variant).map_err(failed)?;
        let resident = run_resident(q, &a, setup.config.clone(), RESIDENT_VARIANT).map_err(failed)?;
        Some(staged.result == expected && resident.result == expected)
    } else {
        None
    };
    let m = setup.model;
    let slowest = butterfly_ranges(n, dpus).map_err(failed)?[0];
    let mut launches = 0.0;
    for gap in stage_gaps(n) {
        let counts = stage_counts(q, n, gap, slowest, setup.config.clone(), setup.variant).map_err(failed)?;
        launches += m.launch_seconds(&[counts]);
    }
    let bytes = stage_transfer_bytes(n, dpus).map_err(failed)?;
    let (host_dpu, dpu_host) = (m.transfer_seconds(&bytes), m.retrieve_seconds(&bytes));
    let resident = run_resident(q, &vec![0; n], setup.config.clone(), RESIDENT_VARIANT).map_err(failed)?;
    let resident_dpu_s = m.launch_seconds(&[resident.report.dpus[0].1.clone()]);
    let poly = [4 * n as u64];
    let batch = vec![4 * n as u64; dpus];
    let here = |s: Option<f64>| s.zip(setup.cpu).map(|(s, here)| scaled_single_thread(s, here));
    Ok(Fig7Row {
        n,
        q,
        dpus,
        cpu_stage_s: here(cpu_stage_here_s),
        cpu_stage_here_s,
        cpu_ntt_s: here(cpu_ntt_here_s),
        stage_dpu_s: launches / stages,
        stage_host_dpu_s: host_dpu,
        stage_dpu_host_s: dpu_host,
        staged_ntt_s: launches + stages * (host_dpu + dpu_host),
        resident_dpu_s,
        resident_copies_s: m.transfer_seconds(&poly) + m.retrieve_seconds(&poly),
        resident_batch_per_poly_s: (resident_dpu_s + m.transfer_seconds(&batch) + m.retrieve_seconds(&batch))
            / dpus as f64,
        executed_equal,
    })
}

/// Fig. 7's table as the report prints it.
pub fn table(rows: &[Fig7Row]) -> String {
    let opt = |x: Option<f64>| x.map_or("-".to_string(), format_seconds);
    let mut text = format!(
        "\n\nFigs. 6-7: the forward NTT one Cooley-Tukey stage per launch (NTT_STAGE, barrett, the data copied in and \
         out around every stage) vs the single-thread CPU, and pimhe's resident NTT ({} kernels, pushed once, one \
         launch, pulled once)\n  {:>8} {:>5} {:>11} {:>11} {:>11} {:>11} {:>9} {:>11} {:>11} {:>11} {:>11} {:>11}  executed",
        match RESIDENT_VARIANT {
            Variant::Barrett => "barrett",
            Variant::Best => "best",
        },
        "n",
        "DPUs",
        "cpu-stage",
        "stage-dpu",
        "stage-copy",
        "stage+copy",
        "x cpu",
        "cpu-ntt",
        "staged-ntt",
        "resident",
        "res+copy",
        "res/poly"
    );
    for r in rows {
        let ratio = r.cpu_stage_s.map_or("-".to_string(), |c| format!("{:.2}", r.stage_with_copies_s() / c));
        let executed = match r.executed_equal {
            Some(true) => "both = CPU",
            Some(false) => "!= CPU (WRONG)",
            None => "-",
        };
        text += &format!(
            "\n  {:>8} {:>5} {:>11} {:>11} {:>11} {:>11} {:>9} {:>11} {:>11} {:>11} {:>11} {:>11}  {executed}",
            r.n,
            r.dpus,
            opt(r.cpu_stage_s),
            format_seconds(r.stage_dpu_s),
            format_seconds(r.stage_host_dpu_s + r.stage_dpu_host_s),
            format_seconds(r.stage_with_copies_s()),
            ratio,
            opt(r.cpu_ntt_s),
            format_seconds(r.staged_ntt_s),
            format_seconds(r.resident_dpu_s),
            format_seconds(r.resident_ntt_s()),
            format_seconds(r.resident_batch_per_poly_s),
        );
    }
    text +=
        "\n  cpu-stage: a plain loop's mean stage, one thread here, scaled by clock to the paper's 2.4 GHz; cpu-ntt: \
             pimhe_math's forward NTT, the same; stage-*: the mean of the log2 n stages on the DPUs, x cpu = \
             stage+copy / cpu-stage (the paper: up to 21x); staged-ntt: all log2 n stages with their copies; \
             resident: one launch on one DPU, res+copy with its push and pull, res/poly per polynomial of a batch \
             of one polynomial per DPU on the same DPUs; q = the first 30-bit prime = 1 mod 2^21";
    text
}
