//! The DPU side of Gupta et al.'s operations: pimhe's element-wise kernels really run on the
//! emulator at a small share, and the share of the paper's sizes priced from their counts.
//!
//! Every DPU of a prime group runs the same program on its own share of the polynomials, so
//! the busiest DPU's launch is the system's (as `measure::kernels::pim`'s subset runs). The
//! element-wise kernels deal 2 KiB chunks (at most N words, so a whole number `m` per
//! polynomial) round-robin to the `T` tasklets, chunk `j` to tasklet `j mod T`. A share of
//! `S = k T + r` polynomials is `k` rounds of `m` chunks per tasklet followed by the same
//! `r m` tail chunks whatever `k` is, so each tasklet's counts are exactly
//!
//! ```text
//! counts(k T + r) = counts(T + r) + (k - 1) * (counts(2T) - counts(T))
//! ```
//!
//! with the three shares on the right emulated (per tasklet, through a device that keeps each
//! launch's counts), and the model ([`UpmemModel::dpu_cycles`]) prices the sum. The test
//! `crates/bench/tests/reproduce_gupta.rs` checks this against whole emulated shares.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use pimhe_exec::{Backend, CpuBackend};
use pimhe_math::Sampler;
use pimhe_pim::counts::{DpuCounts, TaskletCounts};
use pimhe_pim::device::{DeviceError, DpuDevice, LaunchCost};
use pimhe_pim::emulator::{DpuSet, EmulatorConfig, LaunchReport};
use pimhe_pim::model::UpmemModel;
use pimhe_pim::runtime::placement::Mode;
use pimhe_pim::runtime::{OffloadReport, PimBackend, PimConfig};
use pimhe_ring::{PolyBatch, Representation, RingBasis};
use serde::Serialize;

use crate::error::{BenchError, Result};
use crate::measure::inputs::random_batch;

/// The homomorphic operations of the paper's Fig. 1, as pimhe runs them on the DPUs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CtOp {
    /// Ciphertext addition: both components added coefficient-wise (pimhe's `ADD`, two
    /// polynomials per ciphertext).
    Add,
    /// Ciphertext multiplication as the paper's DPUs run it: "polynomial multiplication and
    /// polynomial addition" of the two ciphertexts' components, without relinearization or
    /// NTT on the DPUs. pimhe keeps ciphertexts in NTT form, where this is BFV's tensor
    /// product `(a0 b0, a0 b1 + a1 b0, a1 b1)` coefficient-wise (pimhe's `TENSOR`).
    Mul,
}

impl CtOp {
    /// Both operations, in the paper's order.
    pub const ALL: [CtOp; 2] = [CtOp::Add, CtOp::Mul];

    /// `add` or `mul`.
    pub fn name(self) -> &'static str {
        match self {
            CtOp::Add => "add",
            CtOp::Mul => "mul",
        }
    }

    /// Polynomials of each input operand for `ciphertexts` operations: an addition of two
    /// vectors of C ciphertexts adds two operands of 2C polynomials; C products take the four
    /// operands a0, a1, b0, b1 of C polynomials each.
    pub fn operand_polys(self, ciphertexts: usize) -> usize {
        match self {
            CtOp::Add => 2 * ciphertexts,
            CtOp::Mul => ciphertexts,
        }
    }

    /// (operands uploaded, operands downloaded).
    pub fn operands(self) -> (usize, usize) {
        match self {
            CtOp::Add => (2, 1),
            CtOp::Mul => (4, 3),
        }
    }

    /// Bytes the operation reads and writes for `ciphertexts` at `n` x `limbs` 4-byte residues
    /// per polynomial: every operand read once and every result written once (the paper's
    /// 32/64/128-bit words per coefficient are the same 4, 8, 16 bytes).
    pub fn bytes_moved(self, ciphertexts: usize, n: usize, limbs: usize) -> u64 {
        let (inputs, outputs) = self.operands();
        ((inputs + outputs) * self.operand_polys(ciphertexts) * n * limbs * 4) as u64
    }

    /// Runs the operation on `backend` over uploaded `operands` (two for add, four for mul).
    pub fn execute<B: Backend>(self, backend: &B, operands: &[B::Buffer]) -> Result<Vec<B::Buffer>> {
        Ok(match (self, operands) {
            (CtOp::Add, [a, b]) => vec![backend.add(a, b)?],
            (CtOp::Mul, [a0, a1, b0, b1]) => backend.tensor(a0, a1, b0, b1)?.into(),
            _ => {
                return Err(BenchError::Failed(format!(
                    "internal error: {} takes {} operands, got {}",
                    self.name(),
                    self.operands().0,
                    operands.len()
                )))
            }
        })
    }

    /// Random NTT-form operands of `polys` polynomials each over `basis`, from `seed`.
    pub fn inputs(self, basis: &Arc<RingBasis>, polys: usize, seed: u64) -> Result<Vec<PolyBatch>> {
        let mut sampler = Sampler::from_seed_u64(seed);
        (0..self.operands().0).map(|_| random_batch(basis, polys, Representation::Ntt, &mut sampler)).collect()
    }
}

/// The UPMEM model of the paper's machine: `upmem-v1b@1` with its DPU clock setting at
/// `dpu_hz`, the paper's 425 MHz (Gupta et al. 4.1: "2,524 PIM cores (running at 425 MHz)");
/// every other constant as `v1b()` has it. Version 1 because the pricer below extrapolates a
/// share's summed counts, which keep no barrier intervals.
pub fn paper_model(dpu_hz: f64) -> Result<UpmemModel> {
    UpmemModel::v1b().with_clock(dpu_hz).map_err(BenchError::usage)
}

/// The emulator's DPUs with every launch's per-tasklet counts kept: what the pricer adds up
/// (the backend's report keeps only their sum).
struct CountingDpus {
    dpus: DpuSet,
    launches: Arc<Mutex<Vec<LaunchReport>>>,
}

impl DpuDevice for CountingDpus {
    fn len(&self) -> usize {
        DpuDevice::len(&self.dpus)
    }

    fn measures_time(&self) -> bool {
        DpuDevice::measures_time(&self.dpus)
    }

    fn write(&mut self, dpu: usize, offset: usize, bytes: &[u8]) -> std::result::Result<(), DeviceError> {
        DpuDevice::write(&mut self.dpus, dpu, offset, bytes)
    }

    fn read(&mut self, dpu: usize, offset: usize, out: &mut [u8]) -> std::result::Result<(), DeviceError> {
        DpuDevice::read(&mut self.dpus, dpu, offset, out)
    }

    fn launch(&mut self, dpus: &[usize]) -> std::result::Result<LaunchCost, DeviceError> {
        let cost = DpuDevice::launch(&mut self.dpus, dpus)?;
        if let LaunchCost::Counted(report) = &cost {
            self.launches.lock().expect("no panic while held").push(report.clone());
        }
        Ok(cost)
    }
}

/// One emulated run: an operation on `dpus` DPUs in parallel mode, its results checked
/// against pimhe's CPU backend on the same inputs.
pub struct Emulated {
    /// What the backend reported (modeled compute, summed counts, launches).
    pub report: OffloadReport,
    /// Per-tasklet counts of the busiest DPU over the operation's launches.
    pub busiest: DpuCounts,
}

/// Runs `op` over `polys` polynomials per operand of `basis` on `dpus` emulated DPUs (parallel
/// mode: `dpus / limbs` per prime) with `tasklets` tasklets and `model`; fails when a result
/// residue differs from the CPU backend's.
pub fn emulate(
    op: CtOp,
    basis: &Arc<RingBasis>,
    polys: usize,
    dpus: usize,
    tasklets: u32,
    model: &UpmemModel,
    seed: u64,
) -> Result<Emulated> {
    let mut config = PimConfig::new(dpus, Mode::Parallel);
    config.emulator = EmulatorConfig { tasklets, ..EmulatorConfig::default() };
    config.model = model.clone();
    let launches = Arc::new(Mutex::new(Vec::new()));
    let device = CountingDpus {
        dpus: DpuSet::new(dpus, config.emulator.clone()).map_err(|e| BenchError::Failed(e.to_string()))?,
        launches: Arc::clone(&launches),
    };
    let pim = PimBackend::with_device(config, Box::new(device), basis.degree(), &basis.primes())?;
    let cpu = CpuBackend::new(Some(1))?;
    let host = op.inputs(basis, polys, seed)?;
    let on_dpus = host.iter().map(|b| pim.upload(b.clone())).collect::<pimhe_exec::Result<Vec<_>>>()?;
    let on_cpu = host.into_iter().map(|b| cpu.upload(b)).collect::<pimhe_exec::Result<Vec<_>>>()?;
    pim.reset_report()?;
    launches.lock().expect("no panic while held").clear();
    let pim_out = op.execute(&pim, &on_dpus)?;
    let report = pim.report()?;
    let cpu_out = op.execute(&cpu, &on_cpu)?;
    for (k, (p, c)) in pim_out.iter().zip(&cpu_out).enumerate() {
        if pim.download(p)?.data() != cpu.download(c)?.data() {
            return Err(BenchError::Failed(format!(
                "{} on the emulated DPUs differs from the cpu backend in output {k} (N = {}, {} limbs, {polys} \
                 polynomials, {tasklets} tasklets)",
                op.name(),
                basis.degree(),
                basis.len()
            )));
        }
    }
    let mut per_dpu: Vec<DpuCounts> =
        vec![DpuCounts { tasklets: vec![TaskletCounts::default(); tasklets as usize] }; dpus];
    for launch in launches.lock().expect("no panic while held").iter() {
        for (dpu, counts) in &launch.dpus {
            per_dpu[*dpu] = add_counts(&per_dpu[*dpu], counts, 1);
        }
    }
    let busiest = per_dpu.into_iter().max_by_key(|d| model.dpu_cycles(d)).unwrap_or_default();
    Ok(Emulated { report, busiest })
}

/// `a + factor * b`, tasklet by tasklet.
fn add_counts(a: &DpuCounts, b: &DpuCounts, factor: u64) -> DpuCounts {
    let tasklets = a.tasklets.len().max(b.tasklets.len());
    let at = |d: &DpuCounts, t: usize| d.tasklets.get(t).copied().unwrap_or_default();
    let tasklets = (0..tasklets)
        .map(|t| {
            let (x, y) = (at(a, t), at(b, t));
            TaskletCounts {
                instructions: x.instructions + factor * y.instructions,
                dma_reads: x.dma_reads + factor * y.dma_reads,
                dma_read_bytes: x.dma_read_bytes + factor * y.dma_read_bytes,
                dma_writes: x.dma_writes + factor * y.dma_writes,
                dma_write_bytes: x.dma_write_bytes + factor * y.dma_write_bytes,
            }
        })
        .collect();
    DpuCounts { tasklets }
}

/// `b - a`, tasklet by tasklet: the counts a larger share adds (never negative: a larger share
/// runs every chunk of the smaller one and more).
fn difference(a: &DpuCounts, b: &DpuCounts) -> DpuCounts {
    let tasklets = a
        .tasklets
        .iter()
        .zip(&b.tasklets)
        .map(|(x, y)| TaskletCounts {
            instructions: y.instructions.saturating_sub(x.instructions),
            dma_reads: y.dma_reads.saturating_sub(x.dma_reads),
            dma_read_bytes: y.dma_read_bytes.saturating_sub(x.dma_read_bytes),
            dma_writes: y.dma_writes.saturating_sub(x.dma_writes),
            dma_write_bytes: y.dma_write_bytes.saturating_sub(x.dma_write_bytes),
        })
        .collect();
    DpuCounts { tasklets }
}

/// Prices shares from emulated per-tasklet counts (see the module documentation), caching
/// each emulated share.
pub struct SharePricer {
    model: UpmemModel,
    seed: u64,
    cache: HashMap<(CtOp, usize, u32, usize), DpuCounts>,
    /// Emulated runs so far (each checked against the CPU backend).
    pub emulations: usize,
}

impl SharePricer {
    /// A pricer under `model`, its inputs from `seed`.
    pub fn new(model: UpmemModel, seed: u64) -> Self {
        Self { model, seed, cache: HashMap::new(), emulations: 0 }
    }

    /// The model prices are made with.
    pub fn model(&self) -> &UpmemModel {
        &self.model
    }

    /// Emulated per-tasklet counts of one DPU holding `polys` polynomials per operand of one
    /// limb of `basis` (its first prime), with `tasklets` tasklets.
    fn share_counts(&mut self, op: CtOp, basis: &RingBasis, polys: usize, tasklets: u32) -> Result<DpuCounts> {
        let key = (op, basis.degree(), tasklets, polys);
        if let Some(counts) = self.cache.get(&key) {
            return Ok(counts.clone());
        }
        let limb = RingBasis::new(basis.degree(), &basis.primes()[..1])?;
        let run = emulate(op, &limb, polys, 1, tasklets, &self.model, self.seed)?;
        self.emulations += 1;
        self.cache.insert(key, run.busiest.clone());
        Ok(run.busiest)
    }

    /// Per-tasklet counts of a share of `share = k T + r` polynomials per operand with `T`
    /// tasklets: the emulated share of `T + r` plus `k - 1` rounds, a round being what `2T`
    /// polynomials add to `T` (see the module documentation). Shares below `2T` are emulated
    /// as they are.
    pub fn counts(&mut self, op: CtOp, basis: &RingBasis, share: usize, tasklets: u32) -> Result<DpuCounts> {
        let round = tasklets as usize;
        if share < 2 * round {
            return self.share_counts(op, basis, share, tasklets);
        }
        let base = self.share_counts(op, basis, round + share % round, tasklets)?;
        let one = self.share_counts(op, basis, round, tasklets)?;
        let two = self.share_counts(op, basis, 2 * round, tasklets)?;
        Ok(add_counts(&base, &difference(&one, &two), (share / round - 1) as u64))
    }

    /// Modeled DPU cycles of [`SharePricer::counts`].
    pub fn cycles(&mut self, op: CtOp, basis: &RingBasis, share: usize, tasklets: u32) -> Result<u64> {
        let counts = self.counts(op, basis, share, tasklets)?;
        Ok(self.model.dpu_cycles(&counts))
    }

    /// Modeled seconds of one launch on the busiest DPU: [`SharePricer::cycles`] at the
    /// model's clock plus its launch overhead.
    pub fn launch_seconds(&mut self, op: CtOp, basis: &RingBasis, share: usize, tasklets: u32) -> Result<f64> {
        let cycles = self.cycles(op, basis, share, tasklets)?;
        Ok(cycles as f64 / self.model.dpu_hz + self.model.launch_overhead_s)
    }
}
