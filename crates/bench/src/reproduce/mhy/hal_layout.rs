//! Figs. 4-5 and 8 as MHY+'s own code lays them out. The paper's text gives neither the ring
//! dimension nor the towers of its HAL figures; the authors' benchmark is public
//! (github.com/MpokiAbel/UPMEM--OpenFHE, `benchmark/src/upmem-poly-benchmark.cpp` and
//! `src/core/Pim/dpu/`, March to June 2024): n = 2^18 (`RING_DIM_LOG`), 1 to 32 towers of
//! OpenFHE's 60-bit native moduli (`MAX_MODULUS_SIZE`) held in 64-bit words, the DPUs split
//! evenly among the towers and each tower's coefficients cut into one contiguous range per DPU.
//! Its DPU kernels add with one conditional subtraction and multiply by a Karatsuba product of
//! 32-bit halves and Barrett's reduction, on 16 tasklets.
//!
//! pimhe's multi-word kernels do that arithmetic (`MW_ADD`, `MW_MUL` on two-word coefficients,
//! Karatsuba: `dpu/kernels/multiword.h`), so these rows run them on that layout over
//! [`HAL_DPUS`] DPUs (the paper's text; the benchmark's default was 256): the busiest DPU's
//! range emulated (the counts do not depend on the values) and priced by the model, its result
//! checked against the CPU loop (`--quick` runs every DPU of every tower); the copies are every
//! DPU's two operand ranges in and its result out. The CPU side is the libraries' loops written
//! plainly ([`cpu_op`]): a modular add and a Barrett multiply on u64 coefficients, one thread,
//! measured here and scaled by clock; the multi-threaded baseline gives each tower a thread
//! (OpenFHE's OpenMP loop over the towers) on at most the paper's [`PAPER_CPU_CORES`] cores,
//! perfect scaling.

use pimhe_math::Sampler;
use pimhe_pim::layout::Variant;
use pimhe_pim::multiword::{self, MultiwordModulus, MwOp};
use serde::Serialize;

use super::cpu::median_seconds;
use super::hal::HalSides;
use super::ntt::{scaled_single_thread, HAL_DPUS};
use super::published::{HalOp, PAPER_CPU_CORES};
use super::rows::RowSetup;
use crate::error::{BenchError, Result};
use crate::format::format_seconds;

/// Ring dimension of the authors' HAL benchmark (`RING_DIM_LOG = 18`).
pub const LAYOUT_N: usize = 1 << 18;
/// Towers of the authors' HAL benchmark (its `tow_args`).
pub const LAYOUT_TOWERS: [usize; 6] = [1, 2, 4, 8, 16, 32];
/// A `--quick` run's ring dimension.
pub const QUICK_LAYOUT_N: usize = 1 << 12;
/// A `--quick` run's towers.
pub const QUICK_LAYOUT_TOWERS: [usize; 2] = [1, 4];
/// Bits of a tower's modulus: OpenFHE's native moduli in the authors' benchmark.
pub const TOWER_BITS: u32 = 60;

/// One bar group of Figs. 4-5 (and 8 for the addition) in MHY+'s layout.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HalLayoutRow {
    /// The operation.
    pub op: HalOp,
    /// Ring dimension.
    pub n: usize,
    /// Towers of 60-bit moduli.
    pub towers: usize,
    /// DPUs of the system.
    pub dpus: usize,
    /// Coefficients of the busiest DPU (of one tower).
    pub per_dpu: usize,
    /// The plain loop's times (the multi-threaded baseline over min(towers, 20) threads) and
    /// the busiest DPU's launch and every DPU's copies, modeled.
    #[serde(flatten)]
    pub sides: HalSides,
    /// Instructions a coefficient on the busiest DPU, summed over its tasklets.
    pub instructions_per_coefficient: f64,
    /// Whether what ran on the emulated DPUs equals the CPU loop's result.
    pub executed_equal: bool,
}

fn mw_op(op: HalOp) -> MwOp {
    match op {
        HalOp::Add => MwOp::Add,
        HalOp::Mul => MwOp::Mul,
    }
}

/// Tower t's modulus: 60 bits, odd (the counts and the loops do not depend on which; OpenFHE's
/// are NTT primes).
fn tower_modulus(t: usize) -> u64 {
    (1u64 << TOWER_BITS) - 1 - 2 * t as u64
}

/// `op` on one tower's coefficients as OpenFHE's native vector loops do it: the sum with one
/// conditional subtraction, or the product reduced by Barrett (HAC 14.42 with base 2: with
/// k = 60 and mu = floor(2^120 / q), the quotient estimate ((x >> 59) mu) >> 61 is at most two
/// below the quotient).
pub fn cpu_op(op: HalOp, q: u64, a: &[u64], b: &[u64], out: &mut [u64]) {
    match op {
        HalOp::Add => {
            for ((r, &x), &y) in out.iter_mut().zip(a).zip(b) {
                let s = x + y;
                *r = if s >= q { s - q } else { s };
            }
        }
        HalOp::Mul => {
            let k = TOWER_BITS;
            let mu = (1u128 << (2 * k)) / q as u128;
            for ((r, &x), &y) in out.iter_mut().zip(a).zip(b) {
                let p = x as u128 * y as u128;
                let estimate = ((p >> (k - 1)) * mu) >> (k + 1);
                let mut rest = (p - estimate * q as u128) as u64;
                for _ in 0..2 {
                    if rest >= q {
                        rest -= q;
                    }
                }
                *r = rest;
            }
        }
    }
}

/// The row of `op` at ring dimension n with `towers` towers.
pub fn row(setup: &RowSetup, op: HalOp, n: usize, towers: usize) -> Result<HalLayoutRow> {
    let failed =
        |e: multiword::MultiwordError| BenchError::Failed(format!("MHY+ HAL layout n={n} towers={towers}: {e}"));
    if towers == 0 || !HAL_DPUS.is_multiple_of(towers) {
        return Err(BenchError::Failed(format!(
            "MHY+ HAL layout: {towers} towers do not split {HAL_DPUS} DPUs evenly"
        )));
    }
    let per_tower = HAL_DPUS / towers;
    let mut sampler = Sampler::from_seed_u64((n * 64 + towers) as u64 + op as u64);
    let qs: Vec<u64> = (0..towers).map(tower_modulus).collect();
    let operand = |sampler: &mut Sampler| -> Vec<Vec<u64>> {
        qs.iter().map(|&q| (0..n).map(|_| sampler.next_u64() % q).collect()).collect()
    };
    let (a, b) = (operand(&mut sampler), operand(&mut sampler));
    let every_tower = |out: &mut [Vec<u64>]| {
        for (((&q, a), b), out) in qs.iter().zip(&a).zip(&b).zip(out) {
            cpu_op(op, q, a, b, out);
        }
    };
    let mut expected = vec![vec![0u64; n]; towers];
    every_tower(&mut expected);
    let cpu_here_s = setup.cpu.map(|_| {
        let mut out = vec![vec![0u64; n]; towers];
        median_seconds(|| {
            every_tower(&mut out);
            std::hint::black_box(&out);
        })
    });
    let cpu_single_s = cpu_here_s.zip(setup.cpu).map(|(s, here)| scaled_single_thread(s, here));

    // The DPU side: every tower's ranges alike, so tower 0's first (busiest) range is priced.
    let wide = |v: &[u64]| v.iter().map(|&x| x as u128).collect::<Vec<u128>>();
    let modulus = MultiwordModulus::new(qs[0] as u128).map_err(failed)?;
    let ranges = multiword::ranges(n, per_tower).map_err(failed)?;
    let (start, end) = ranges[0];
    let counts = multiword::range_counts(mw_op(op), &modulus, end - start, setup.config.clone(), Variant::Best)
        .map_err(failed)?;
    // Executed: every tower over its DPUs (--quick), else the priced range of tower 0.
    let (checked_towers, dpus, span) = if setup.execute { (towers, per_tower, 0..n) } else { (1, 1, start..end) };
    let mut executed_equal = true;
    for (((&q, a), b), expected) in qs.iter().zip(&a).zip(&b).zip(&expected).take(checked_towers) {
        let modulus = MultiwordModulus::new(q as u128).map_err(failed)?;
        let (a, b) = (wide(&a[span.clone()]), wide(&b[span.clone()]));
        let out =
            multiword::run(mw_op(op), &modulus, &a, &b, dpus, setup.config.clone(), Variant::Best).map_err(failed)?;
        executed_equal &= out.result == wide(&expected[span.clone()]);
    }
    let (to_dpu, from_dpu) = multiword::transfer_bytes(&modulus, n, per_tower).map_err(failed)?;
    let every = |bytes: Vec<u64>| bytes.repeat(towers);
    let m = setup.model;
    Ok(HalLayoutRow {
        op,
        n,
        towers,
        dpus: HAL_DPUS,
        per_dpu: end - start,
        sides: HalSides {
            cpu_here_s,
            cpu_single_s,
            cpu_multi_s: cpu_single_s.map(|s| s / towers.min(PAPER_CPU_CORES) as f64),
            dpu_s: m.launch_seconds(std::slice::from_ref(&counts)),
            host_dpu_s: m.transfer_seconds(&every(to_dpu)),
            dpu_host_s: m.retrieve_seconds(&every(from_dpu)),
        },
        instructions_per_coefficient: counts.total().instructions as f64 / (end - start) as f64,
        executed_equal,
    })
}

/// Why a statement misses on these rows (docs/PIM.md, "MHY+", has the evidence).
pub const LAYOUT_MISS: &str = "MHY+'s layout and shapes from the authors' public benchmark (n = 2^18, 1-32 towers \
    of 60-bit moduli in 64-bit words, the DPUs split among the towers by coefficient ranges) with pimhe's multi-word \
    kernels doing the paper's kernels' arithmetic; the CPU side is a plain loop of that arithmetic measured here, \
    not OpenFHE's or HElib's code, and the DPU side includes the model's launch overhead; see docs/PIM.md, MHY+";

/// The layout rows' table as the report prints it.
pub fn table(rows: &[HalLayoutRow]) -> String {
    let opt = |x: Option<f64>| x.map_or("-".to_string(), format_seconds);
    let mut text = format!(
        "\n\nFigs. 4-5, 8 in MHY+'s layout (the authors' benchmark): one DCRT polynomial per operand, towers of \
         {TOWER_BITS}-bit moduli in 64-bit words, {HAL_DPUS} DPUs split among the towers by coefficient ranges, \
         pimhe's MW_ADD / MW_MUL (two words, Karatsuba, 16 tasklets; modeled), the CPU a plain loop (one thread, \
         measured here)\n  {:<9} {:>7} {:>6} {:>7} {:>7} {:>11} {:>11} {:>11} {:>11} {:>11} {:>9} {:>9} {:>9}  executed",
        "operation", "n", "towers", "per-DPU", "instr", "cpu-1t", "cpu-mt", "dpu-time", "host-dpu", "dpu-host", "1t/dpu",
        "mt/dpu", "1t/+copy"
    );
    for r in rows {
        let t = &r.sides;
        let ratio = |c: Option<f64>, d: f64| c.map_or("-".to_string(), |c| format!("{:.3}", c / d));
        text += &format!(
            "\n  {:<9} {:>7} {:>6} {:>7} {:>7.1} {:>11} {:>11} {:>11} {:>11} {:>11} {:>9} {:>9} {:>9}  {}",
            r.op.name(),
            r.n,
            r.towers,
            r.per_dpu,
            r.instructions_per_coefficient,
            opt(t.cpu_single_s),
            opt(t.cpu_multi_s),
            format_seconds(t.dpu_s),
            format_seconds(t.host_dpu_s),
            format_seconds(t.dpu_host_s),
            ratio(t.cpu_single_s, t.dpu_s),
            ratio(t.cpu_multi_s, t.dpu_s),
            ratio(t.cpu_single_s, t.dpu_with_copies_s()),
            if r.executed_equal { "= CPU loop" } else { "!= CPU loop (WRONG)" }
        );
    }
    text += &format!(
        "\n  cpu-1t: the loop's one thread here scaled by clock to the paper's 2.4 GHz; cpu-mt: cpu-1t over one thread \
         per tower on at most {PAPER_CPU_CORES} cores, perfect scaling; instr: instructions a coefficient on the \
         busiest DPU"
    );
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cpu_loops_equal_the_definition_at_every_tower_and_edge() {
        // Random coefficients and the edges 0, 1, q - 1 against u128 arithmetic and `%`.
        let mut sampler = Sampler::from_seed_u64(7);
        for t in [0, 1, 31] {
            let q = tower_modulus(t);
            let mut a: Vec<u64> = (0..1000).map(|_| sampler.next_u64() % q).collect();
            let mut b: Vec<u64> = (0..1000).map(|_| sampler.next_u64() % q).collect();
            for (x, y) in [(0, 0), (q - 1, q - 1), (q - 1, 1), (1, q - 1), (q - 1, 0)] {
                a.push(x);
                b.push(y);
            }
            for op in HalOp::ALL {
                let mut out = vec![0; a.len()];
                cpu_op(op, q, &a, &b, &mut out);
                for ((&x, &y), &r) in a.iter().zip(&b).zip(&out) {
                    let (x, y, q) = (x as u128, y as u128, q as u128);
                    let want = match op {
                        HalOp::Add => (x + y) % q,
                        HalOp::Mul => x * y % q,
                    };
                    assert_eq!(r as u128, want, "{op:?} q={q} {x} {y}");
                }
            }
        }
    }
}
