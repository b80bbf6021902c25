//! Figs. 4-5 and 8: pimhe's analogue of MHY+'s HAL path (section IV-B). MHY+ routes OpenFHE's
//! DCRT polynomial addition and multiplication (Figs. 4, 5) and HElib's addition (Fig. 8)
//! through the libraries' polynomial layer to 2048 DPUs, a number of DPUs per tower, and
//! compares them with the libraries' single- and multi-threaded CPU code ("ciphertexts encoded
//! as polynomials in DCRT form"). Here the same operations run on pimhe's [`Backend`]: one
//! ciphertext per operand, its two DCRT polynomials (n coefficients x [`HAL_TOWERS`] towers,
//! NTT form as OpenFHE's EVALUATION format) added or multiplied polynomial by polynomial on
//! `upmem-emu` with 2048 DPUs in parallel mode (pimhe's placement: a prime group of 512 DPUs
//! per tower, each residue polynomial whole on one DPU of its group, so two DPUs per group
//! busy; modeled) and on the CPU backend, one thread (measured here). Two polynomials, not
//! one: pimhe replicates a single polynomial on every DPU of its group, to broadcast it
//! against a batch, which would price 512 copies of it. The libraries' own code is not pimhe's: these rows are pimhe's
//! analogue of the HAL path, not OpenFHE or HElib. HElib's addition is the same `add` on the
//! same shapes, so Fig. 8's statements are judged on the add rows.

use pimhe_exec::{Backend, CpuBackend};
use pimhe_math::Sampler;
use pimhe_pim::layout::Variant;
use pimhe_pim::runtime::placement::Mode;
use pimhe_pim::runtime::{PimBackend, PimConfig};
use pimhe_ring::{PolyBatch, Representation, RingBasis};
use serde::Serialize;

use super::cpu::median_seconds;
use super::ntt::{scaled_single_thread, HAL_DPUS};
use super::published::{HalClaim, HalOp, HalStated};
use super::rows::RowSetup;
use crate::error::{BenchError, Result};
use crate::format::format_seconds;
use crate::measure::inputs::random_batch;

/// Towers of the HAL rows. The figures' axes are not in the text; 4 towers of 30-bit primes
/// (a 120-bit modulus, a small OpenFHE BGV/CKKS chain) is this reproduction's assumption.
pub const HAL_TOWERS: usize = 4;
/// Ring dimensions of the HAL rows (the figures' axis is not in the text; OpenFHE's and
/// HElib's usual dimensions).
pub const HAL_SIZES: [usize; 3] = [1 << 12, 1 << 14, 1 << 16];
/// Ring dimensions of a `--quick` run's HAL rows.
pub const QUICK_HAL_SIZES: [usize; 1] = [1 << 12];

/// `op` on pimhe's backend.
fn run<B: Backend>(op: HalOp, backend: &B, a: &B::Buffer, b: &B::Buffer) -> pimhe_exec::Result<B::Buffer> {
    match op {
        HalOp::Add => backend.add(a, b),
        HalOp::Mul => backend.mul(a, b),
    }
}

/// The result of `op` residue by residue, a plain u64 loop (the oracle both backends are
/// checked against).
fn expected(op: HalOp, a: &PolyBatch, b: &PolyBatch) -> Vec<u32> {
    let basis = a.basis();
    (0..basis.len())
        .flat_map(|k| {
            let q = basis.modulus(k).value() as u64;
            a.limb(k).iter().zip(b.limb(k)).map(move |(&x, &y)| {
                let (x, y) = (x as u64, y as u64);
                (match op {
                    HalOp::Add => (x + y) % q,
                    HalOp::Mul => x * y % q,
                }) as u32
            })
        })
        .collect()
}

/// The two sides of a HAL row, whichever layout it ran in (pimhe's placement here, MHY+'s in
/// `hal_layout`): the CPU baselines and the modeled DPUs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HalSides {
    /// The CPU side, one thread, measured here.
    pub cpu_here_s: Option<f64>,
    /// `cpu_here_s` scaled by clock to the paper's CPU: the single-threaded baseline.
    pub cpu_single_s: Option<f64>,
    /// The multi-threaded baseline: `cpu_single_s` over one thread per tower (OpenFHE's
    /// OpenMP loop over the towers), perfect scaling.
    pub cpu_multi_s: Option<f64>,
    /// Modeled DPU compute (launch overhead included).
    pub dpu_s: f64,
    /// Modeled host -> DPU copies of both operands.
    pub host_dpu_s: f64,
    /// Modeled DPU -> host copies of the result.
    pub dpu_host_s: f64,
}

impl HalSides {
    /// dpu-time + copies.
    pub fn dpu_with_copies_s(&self) -> f64 {
        self.dpu_s + self.host_dpu_s + self.dpu_host_s
    }
}

/// One bar group of Figs. 4-5 (and 8 for the addition) on pimhe's `Backend`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HalRow {
    /// The operation.
    pub op: HalOp,
    /// Ring dimension.
    pub n: usize,
    /// Towers (RNS primes).
    pub towers: usize,
    /// DPUs of the system.
    pub dpus: usize,
    /// The CPU backend's times and the modeled DPUs'.
    #[serde(flatten)]
    pub sides: HalSides,
    /// Whether both backends' results equal the plain loop's.
    pub executed_equal: bool,
}

/// Polynomials per operand: one ciphertext's two.
pub const HAL_POLYS: usize = 2;

/// The HAL row of `op` at ring dimension n.
pub fn row(setup: &RowSetup, op: HalOp, n: usize) -> Result<HalRow> {
    let primes = pimhe_math::ntt_primes(30, n, HAL_TOWERS, &[])
        .map_err(|e| BenchError::Failed(format!("MHY+ HAL rows n={n}: {e}")))?;
    let basis = RingBasis::new(n, &primes)?;
    let mut sampler = Sampler::from_seed_u64(n as u64 + op as u64);
    let a = random_batch(&basis, HAL_POLYS, Representation::Ntt, &mut sampler)?;
    let b = random_batch(&basis, HAL_POLYS, Representation::Ntt, &mut sampler)?;
    let expected = expected(op, &a, &b);

    let mut config = PimConfig::new(HAL_DPUS, Mode::Parallel);
    (config.variant, config.model, config.emulator) = (Variant::Barrett, setup.model.clone(), setup.config.clone());
    let pim = PimBackend::new(config, n, &primes)?;
    let (pa, pb) = (pim.upload(a.clone())?, pim.upload(b.clone())?);
    let on_dpus = pim.download(&run(op, &pim, &pa, &pb)?)?;
    let report = pim.report()?;

    let cpu = CpuBackend::new(Some(1))?;
    let (ca, cb) = (cpu.upload(a)?, cpu.upload(b)?);
    let on_cpu = cpu.download(&run(op, &cpu, &ca, &cb)?)?;
    let cpu_here_s = setup.cpu.map(|_| median_seconds(|| drop(std::hint::black_box(run(op, &cpu, &ca, &cb)))));
    let cpu_single_s = cpu_here_s.zip(setup.cpu).map(|(s, here)| scaled_single_thread(s, here));
    Ok(HalRow {
        op,
        n,
        towers: HAL_TOWERS,
        dpus: HAL_DPUS,
        sides: HalSides {
            cpu_here_s,
            cpu_single_s,
            cpu_multi_s: cpu_single_s.map(|s| s / HAL_TOWERS as f64),
            dpu_s: report.compute_s,
            host_dpu_s: report.transfer_s,
            dpu_host_s: report.retrieve_s,
        },
        executed_equal: on_dpus.data() == expected && on_cpu.data() == expected,
    })
}

/// Ours for a statement: its ratio's largest value over the rows of its operation, `None`
/// where the CPU was not timed.
pub fn stated_ratio<'a>(s: &HalStated, rows: impl IntoIterator<Item = (HalOp, &'a HalSides)>) -> Option<f64> {
    rows.into_iter()
        .filter(|(op, _)| *op == s.op)
        .map(|(_, r)| {
            let (single, multi) = (r.cpu_single_s?, r.cpu_multi_s?);
            Some(match s.claim {
                HalClaim::DpuFasterThanSingle => single / r.dpu_s,
                HalClaim::DpuFasterThanMulti => multi / r.dpu_s,
                HalClaim::DpuFasterThanSingleWithCopies => single / r.dpu_with_copies_s(),
                HalClaim::MultiFasterWithCopies => r.dpu_with_copies_s() / multi,
                HalClaim::SingleFasterWithCopies => r.dpu_with_copies_s() / single,
            })
        })
        .try_fold(f64::NEG_INFINITY, |max, x| x.map(|x| max.max(x)))
}

/// Why a statement misses, where it does (docs/PIM.md, "MHY+", has the evidence).
pub const HAL_MISS: &str = "pimhe's analogue, not the libraries' HAL: pimhe keeps each tower's residue \
    polynomial whole on one DPU (8 of the 2048 busy for a ciphertext of 4 towers) where MHY+ spreads a tower \
    over many DPUs, and the model prices a few DPUs' copies by their per-DPU bandwidth; the figures' n and towers are not in \
    the text (ours: n = 2^12..2^16, 4 towers; the authors' benchmark: n = 2^18, 1-32 towers, the -layout rows); the CPU \
    side is pimhe's CPU backend, not OpenFHE's or HElib's code; see docs/PIM.md, MHY+";

/// The HAL rows' table as the report prints it.
pub fn table(rows: &[HalRow]) -> String {
    let opt = |x: Option<f64>| x.map_or("-".to_string(), format_seconds);
    let mut text = format!(
        "\n\nFigs. 4-5, 8: pimhe's analogue of the HAL path: one ciphertext per operand ({HAL_POLYS} DCRT polynomials \
         of {HAL_TOWERS} towers of 30-bit primes, NTT form) added or multiplied on pimhe's Backend, upmem-emu with {HAL_DPUS} DPUs in \
         parallel mode (barrett kernels, modeled) and the CPU backend (one thread, measured here)\n  \
         {:<9} {:>6} {:>6} {:>11} {:>11} {:>11} {:>11} {:>11} {:>11} {:>9} {:>9}  executed",
        "operation", "n", "towers", "cpu-1t", "cpu-mt", "dpu-time", "host-dpu", "dpu-host", "dpu+copy", "1t/dpu",
        "1t/+copy"
    );
    for r in rows {
        let ratio = |d: f64| r.sides.cpu_single_s.map_or("-".to_string(), |c| format!("{:.3}", c / d));
        text += &format!(
            "\n  {:<9} {:>6} {:>6} {:>11} {:>11} {:>11} {:>11} {:>11} {:>11} {:>9} {:>9}  {}",
            r.op.name(),
            r.n,
            r.towers,
            opt(r.sides.cpu_single_s),
            opt(r.sides.cpu_multi_s),
            format_seconds(r.sides.dpu_s),
            format_seconds(r.sides.host_dpu_s),
            format_seconds(r.sides.dpu_host_s),
            format_seconds(r.sides.dpu_with_copies_s()),
            ratio(r.sides.dpu_s),
            ratio(r.sides.dpu_with_copies_s()),
            if r.executed_equal { "both = CPU loop" } else { "!= CPU loop (WRONG)" }
        );
    }
    text +=
        "\n  cpu-1t: the CPU backend's one thread here scaled by clock to the paper's 2.4 GHz; cpu-mt: cpu-1t over \
             one thread per tower, perfect scaling (OpenFHE's OpenMP loop over the towers); HElib's add (Fig. 8) is \
             the add rows";
    text
}
