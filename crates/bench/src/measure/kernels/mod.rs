//! Polynomial workloads: the polynomial work of BGV timed on a backend, with uniformly random
//! inputs (`pimhe bench OP`), and BFV's and BGV's operations on real ciphertexts ([`exact`]).
//!
//! A run is described by a [`Workload`] (operation, ring, batch, seed). Its inputs are generated
//! on the host from a seeded [`Sampler`] and uploaded once; only the backend operations are
//! timed (uploads and the untimed steps that restore the inputs between repeats are excluded).
//! The timed part is [`execute`], written against [`Backend`] only, so adding a backend is one
//! `match` arm in [`run`] (and its name in [`BACKENDS`]).
//!
//! On `upmem-emu` the same operations run on emulated DPUs and are reported as the
//! `upmem-v1b` model's transfer / compute / retrieve seconds and energy (see [`pim`]);
//! [`crate::reproduce::dramatic`] runs DRAMatic's experiments that way. On `nearbank` one run is
//! recorded, planned into GPU kernels and PIM instructions and priced by the `anaheim-nb`
//! model ([`crate::target::nearbank`]).
//!
//! Operations, for a batch of C input ciphertexts of two polynomials each:
//! - `ntt`: forward NTT of the 2C polynomials (coefficient form in), one `ntt` call;
//! - `intt`: inverse NTT of the 2C polynomials (NTT form in), one `intt` call;
//! - `bgv-mul`: the C/2 products of ciphertext i with ciphertext C/2 + i (NTT form in and out):
//!   one `tensor` call on the four operand batches a0, a1, b0, b1;
//! - `pipeline`: NTT of the four operand batches, their tensor, inverse NTT of its three outputs;
//! - `bfv-mul`, `bfv-add`: BFV's multiply (BEHZ, relinearized) and add of C/2 pairs of real
//!   ciphertexts at the preset of N, checked by decryption ([`exact`]);
//! - `bgv-mul-relin`: BGV's multiply and relinearize of C/2 pairs of real ciphertexts at the
//!   preset of N, checked by decryption ([`exact`]).
//!
//! `coefficients_per_s` counts the residues of the input polynomials (2C x N x K) per second of
//! the best repeat, for every operation.

pub mod exact;
pub mod pim;

use std::sync::Arc;
use std::time::Instant;

use pimhe_exec::{Backend, CpuBackend};
use pimhe_math::{ntt_primes, MathError, Modulus, Sampler};
use pimhe_nearbank::NearbankBackend;
use pimhe_pim::layout::Variant;
use pimhe_pim::runtime::placement::Mode;
use pimhe_ring::{memory, PolyBatch, Representation, RingBasis};
use serde::Serialize;

use crate::error::{check_repeat, BenchError, Result};
use crate::format::{format_seconds, format_si, Render};
use crate::target::nearbank::NearbankOutcome;
use crate::target::upmem::{self, Emulate, PimOutcome, PimSettings};
use crate::target::what_if;
use crate::target::{BackendKind, NearbankTarget, Target, TargetRules, UpmemFlags, UpmemTarget};

/// Smallest and largest ring degree the benchmark accepts (log2).
const LOG_N_RANGE: std::ops::RangeInclusive<u32> = 4..=17;

/// The operation to time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Op {
    /// Forward NTT of the 2C input polynomials.
    Ntt,
    /// Inverse NTT of the 2C input polynomials.
    Intt,
    /// C/2 ciphertext products (BGV tensor, NTT form in and out).
    BgvMul,
    /// NTT of the inputs, the C/2 tensor products, inverse NTT of the outputs.
    Pipeline,
    /// C/2 BFV products of real ciphertexts at the preset of N: BEHZ multiply + relinearize.
    BfvMul,
    /// C/2 BFV sums of real ciphertexts at the preset of N.
    BfvAdd,
    /// C/2 BGV products of real ciphertexts at the preset of N: multiply + relinearize.
    BgvMulRelin,
}

impl Op {
    /// Every operation, in the order `bench` lists them.
    pub const ALL: [Op; 7] = [Op::Ntt, Op::Intt, Op::BgvMul, Op::Pipeline, Op::BfvMul, Op::BfvAdd, Op::BgvMulRelin];

    /// The operation `name` spells (`ntt`, `bgv-mul`, ...), if any.
    pub fn from_name(name: &str) -> Option<Op> {
        Op::ALL.into_iter().find(|op| op.name() == name)
    }

    /// The name `bench` takes and reports.
    pub fn name(self) -> &'static str {
        match self {
            Op::Ntt => "ntt",
            Op::Intt => "intt",
            Op::BgvMul => "bgv-mul",
            Op::Pipeline => "pipeline",
            Op::BfvMul => "bfv-mul",
            Op::BfvAdd => "bfv-add",
            Op::BgvMulRelin => "bgv-mul-relin",
        }
    }

    /// Whether the operation multiplies ciphertexts in pairs (needs an even batch).
    pub fn pairs(self) -> bool {
        matches!(self, Op::BgvMul | Op::Pipeline | Op::BfvMul | Op::BfvAdd | Op::BgvMulRelin)
    }

    /// Resident polynomials per input polynomial, as a fraction (numerator, denominator):
    /// the inputs, plus for products the three outputs of C/2 polynomials each (3.5C in all).
    fn memory_factor(self) -> (u128, u128) {
        if self.pairs() {
            (7, 4)
        } else {
            (1, 1)
        }
    }

    /// What the throughput counts: polynomials transformed, or ciphertext products.
    pub fn unit(self) -> &'static str {
        if self.pairs() {
            "products"
        } else {
            "polys"
        }
    }
}

/// Timed repeats of a cpu run when none are asked for.
pub const DEFAULT_REPEAT: usize = 3;

/// What `bench OP` accepts of the target flags: every backend and every UPMEM flag; no
/// `--threads` on upmem-emu, whose emulator uses every core.
pub const RULES: TargetRules = TargetRules {
    backends: &BackendKind::ALL,
    default: BackendKind::Cpu,
    upmem: UpmemFlags { mode: true, kernel: true, emulate: true, what_if: true },
    threads_beside_upmem: false,
};

/// What `pimhe bench OP` runs: the operation, the ring, the batch and where.
#[derive(Debug, Clone, PartialEq)]
pub struct KernelConfig {
    /// Operation to time.
    pub op: Op,
    /// Ring degree N: a power of two from 16 (2^4) to 131072 (2^17).
    pub n: usize,
    /// Number K of RNS primes; needed by the kernels, refused by bfv-mul, bfv-add and
    /// bgv-mul-relin (they use the preset's).
    pub primes: Option<usize>,
    /// Bits of each prime (2..=30) [default: 30].
    pub prime_bits: u32,
    /// Number C of input ciphertexts (two polynomials each); even for the paired operations.
    pub batch: usize,
    /// Where it runs ([`RULES`]; upmem-emu: parallel mode and auto emulation unless set).
    pub target: Target,
    /// Timed repeats on cpu, 1..=[`crate::error::MAX_REPEAT`] [default: [`DEFAULT_REPEAT`]];
    /// refused on the other backends, which run once and model the run.
    pub repeat: Option<usize>,
    /// Seed of the input generator [default: 1].
    pub seed: u64,
}

impl KernelConfig {
    /// `op` over `n` and `batch` with the defaults: `primes` primes of 30 bits, on cpu with all
    /// cores, [`DEFAULT_REPEAT`] repeats, seed 1.
    pub fn new(op: Op, n: usize, primes: Option<usize>, batch: usize) -> Self {
        Self { op, n, primes, prime_bits: 30, batch, target: Target::Cpu { threads: None }, repeat: None, seed: 1 }
    }

    /// The timed repeats: refused off the cpu backend, checked on it.
    fn repeats(&self) -> Result<usize> {
        match (&self.target, self.repeat) {
            (Target::Cpu { .. }, repeat) => {
                let repeat = repeat.unwrap_or(DEFAULT_REPEAT);
                check_repeat(repeat, "repeat")?;
                Ok(repeat)
            }
            (_, None) => Ok(1),
            // The other backends run once and model the run: a count would do nothing.
            (target, Some(_)) => Err(BenchError::usage(format!(
                "--repeat applies to --backend cpu only (this run uses --backend {})",
                target.name()
            ))),
        }
    }
}

/// What to run: an operation over a basis, on a batch of ciphertexts generated from a seed.
#[derive(Debug, Clone)]
pub struct Workload {
    /// The operation.
    pub op: Op,
    /// Ring degree and primes.
    pub basis: Arc<RingBasis>,
    /// Number C of input ciphertexts.
    pub batch: usize,
    /// Seed of the input generator.
    pub seed: u64,
}

impl Workload {
    /// Validates the parameters and finds the primes. Every error names the offending flag.
    pub fn new(op: Op, n: usize, primes: usize, prime_bits: u32, batch: usize, seed: u64) -> Result<Self> {
        if !n.is_power_of_two() || !LOG_N_RANGE.contains(&n.trailing_zeros()) {
            return Err(BenchError::usage(format!(
                "--n {n} is not allowed: the ring degree must be a power of two from {} (2^{}) to {} (2^{})",
                1usize << LOG_N_RANGE.start(),
                LOG_N_RANGE.start(),
                1usize << LOG_N_RANGE.end(),
                LOG_N_RANGE.end()
            )));
        }
        if primes == 0 {
            return Err(BenchError::usage("--primes 0 is not allowed: at least 1 prime is needed"));
        }
        if !(2..=30).contains(&prime_bits) {
            return Err(BenchError::usage(format!(
                "--prime-bits {prime_bits} is not allowed: primes must have 2..=30 bits"
            )));
        }
        if batch == 0 {
            return Err(BenchError::usage("--batch 0 is not allowed: at least 1 ciphertext is needed"));
        }
        if op.pairs() && !batch.is_multiple_of(2) {
            return Err(BenchError::usage(format!(
                "--batch {batch} is not allowed for {}: ciphertexts are multiplied in pairs, so the \
                 batch must be even and at least 2",
                op.name()
            )));
        }
        if batch.checked_mul(2).and_then(|p| p.checked_mul(primes)).and_then(|r| r.checked_mul(n)).is_none() {
            return Err(BenchError::usage(format!(
                "--batch {batch} with --primes {primes} and --n {n} is too large to address"
            )));
        }
        let moduli = ntt_primes(prime_bits, n, primes, &[]).map_err(|e| match e {
            MathError::NotEnoughPrimes { found, step, .. } => BenchError::usage(format!(
                "--primes {primes} is not available: only {found} primes of {prime_bits} bits with \
                 p = 1 mod {step} (2N) exist; lower --primes or --n, or raise --prime-bits"
            )),
            other => BenchError::usage(format!("cannot choose primes: {other}")),
        })?;
        let basis = RingBasis::new(n, &moduli)?;
        Ok(Self { op, basis, batch, seed })
    }

    /// Ring degree N.
    pub fn n(&self) -> usize {
        self.basis.degree()
    }

    /// Number K of primes.
    pub fn primes(&self) -> usize {
        self.basis.len()
    }

    /// Input polynomials: two per ciphertext.
    pub fn input_polys(&self) -> usize {
        2 * self.batch
    }

    /// Residues of the input polynomials (2C x N x K).
    pub fn input_residues(&self) -> u128 {
        (self.input_polys() * self.n() * self.primes()) as u128
    }

    /// Estimated bytes of the device buffers a run holds at once: 4 bytes a residue, inputs
    /// plus outputs.
    pub fn estimated_bytes(&self) -> u128 {
        let (num, den) = self.op.memory_factor();
        4 * self.input_residues() * num / den
    }
}

/// Runs `pimhe bench OP`: validates `config`, times the workload on its backend, and returns
/// the report (cpu: timed repeats; upmem-emu: the modeled figures; bfv-mul, bfv-add and
/// bgv-mul-relin: the checked operation on real ciphertexts, see [`exact`]).
pub fn run(config: &KernelConfig) -> Result<KernelReport> {
    let repeat = config.repeats()?;
    if exact::OPS.contains(&config.op) {
        return exact::run(config, repeat);
    }
    match &config.target {
        Target::Cpu { threads } => {
            let workload = workload(config)?;
            check_memory(&workload, memory::available_memory())?;
            let backend = CpuBackend::new(*threads)?;
            let times = run_op(&backend, &workload, repeat)?;
            Ok(KernelReport::Cpu(CpuReport::new(&workload, "cpu", backend.threads(), config.prime_bits, times)))
        }
        Target::UpmemEmu(upmem) => run_upmem(config, upmem).map(KernelReport::Pim),
        Target::Nearbank(nearbank) => run_nearbank(config, nearbank).map(KernelReport::Nearbank),
    }
}

/// The workload of a kernel operation's configuration.
fn workload(config: &KernelConfig) -> Result<Workload> {
    let primes = config.primes.ok_or_else(|| BenchError::usage(format!("{} needs --primes", config.op.name())))?;
    Workload::new(config.op, config.n, primes, config.prime_bits, config.batch, config.seed)
}

/// `pimhe bench OP --backend upmem-emu`: parallel mode and auto emulation unless set.
fn run_upmem(config: &KernelConfig, upmem: &UpmemTarget) -> Result<PimReport> {
    let workload = workload(config)?;
    let settings =
        PimSettings::new(upmem.dpus, upmem.mode.unwrap_or(Mode::Parallel), upmem.variant, workload.primes())?
            .with_what_if(upmem.what_if);
    let outcome = pim::run(&workload, &settings, upmem.emulate.unwrap_or(Emulate::Auto), None)?;
    Ok(PimReport::new(&workload, config.prime_bits, &settings, outcome))
}

/// `pimhe bench OP --backend nearbank`: one run of the operation on the recording backend,
/// planned and priced.
fn run_nearbank(config: &KernelConfig, nearbank: &NearbankTarget) -> Result<NearbankReport> {
    let workload = workload(config)?;
    check_memory(&workload, memory::available_memory())?;
    let backend = NearbankBackend::new(nearbank.threads)?;
    let mut inputs = generate_inputs(&workload)?
        .into_iter()
        .map(|batch| backend.upload(batch))
        .collect::<pimhe_exec::Result<Vec<_>>>()?;
    backend.take_trace();
    let start = Instant::now();
    execute(&backend, workload.op, &mut inputs)?;
    let wall_s = start.elapsed().as_secs_f64();
    let outcome = NearbankOutcome::of(&nearbank.model, &backend.take_trace());
    Ok(NearbankReport::new(&workload, config.prime_bits, wall_s, outcome))
}

/// What [`run`] returns: one of the report kinds (`--json` serialises the inner report as it is).
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum KernelReport {
    /// A kernel timed on the cpu backend.
    Cpu(CpuReport),
    /// A kernel on emulated DPUs, modeled.
    Pim(PimReport),
    /// An operation on real ciphertexts (bfv-mul, bfv-add, bgv-mul-relin) on the cpu backend.
    ExactCpu(exact::ExactReport<CpuReport>),
    /// An operation on real ciphertexts on emulated DPUs, modeled.
    ExactPim(exact::ExactReport<PimReport>),
    /// A kernel on the GPU + near-bank PIM model.
    Nearbank(NearbankReport),
    /// An operation on real ciphertexts on the GPU + near-bank PIM model.
    ExactNearbank(exact::ExactReport<NearbankReport>),
}

impl Render for KernelReport {
    fn render(&self) -> String {
        match self {
            KernelReport::Cpu(r) => r.render(),
            KernelReport::Pim(r) => r.render(),
            KernelReport::ExactCpu(r) => r.render(),
            KernelReport::ExactPim(r) => r.render(),
            KernelReport::Nearbank(r) => r.render(),
            KernelReport::ExactNearbank(r) => r.render(),
        }
    }
}

/// The result of an `upmem-emu` run (`--json` serialises it as one object).
#[derive(Debug, Clone, Serialize)]
pub struct PimReport {
    op: &'static str,
    backend: &'static str,
    n: usize,
    primes: usize,
    prime_bits: u32,
    moduli: Vec<u32>,
    batch: usize,
    dpus: usize,
    ranks: u32,
    mode: &'static str,
    kernel: &'static str,
    seed: u64,
    /// The active `--what-if`s (absent when none).
    #[serde(skip_serializing_if = "Option::is_none")]
    what_if: Option<String>,
    /// What the multiplier what-if cannot re-cost in this kernel (absent when nothing).
    #[serde(skip_serializing_if = "Option::is_none")]
    what_if_caveat: Option<&'static str>,
    #[serde(flatten)]
    outcome: PimOutcome,
}

impl PimReport {
    /// What the run reported: the modeled breakdown and where each figure came from.
    pub fn outcome(&self) -> &PimOutcome {
        &self.outcome
    }

    /// The report of `outcome`, a run of `workload` on `settings`.
    pub fn new(workload: &Workload, prime_bits: u32, settings: &PimSettings, outcome: PimOutcome) -> Self {
        Self {
            op: workload.op.name(),
            backend: "upmem-emu",
            n: workload.n(),
            primes: workload.primes(),
            prime_bits,
            moduli: workload.basis.primes(),
            batch: workload.batch,
            dpus: settings.dpus,
            ranks: settings.ranks(),
            mode: settings.mode.name(),
            kernel: upmem::kernel_name(settings.variant),
            seed: workload.seed,
            what_if: settings.what_if.is_active().then(|| settings.what_if.describe()),
            what_if_caveat: (settings.what_if.multiplier.is_some() && settings.variant == Variant::Best)
                .then_some(what_if::TABLE_CAVEAT),
            outcome,
        }
    }
}

impl Render for PimReport {
    /// Three lines of text: the run, the emulation, the modeled figures.
    fn render(&self) -> String {
        let o = &self.outcome;
        let modeled = format!("(modeled, {})", o.model_short());
        let caveat = self.what_if_caveat.map_or(String::new(), |c| format!("\n  what-if caveat: {c}"));
        format!(
            "{}  backend=upmem-emu n={} primes={}x{}b batch={} dpus={} mode={} kernel={}\n  \
             emulation: {}; wall={} (emulator on this host)\n  \
             transfer={} compute={} retrieve={} total={} energy={:.3} J {modeled}; launches={} fallbacks={} \
             counted instructions={}{caveat}",
            self.op,
            self.n,
            self.primes,
            self.prime_bits,
            self.batch,
            self.dpus,
            self.mode,
            self.kernel,
            o.emulation,
            format_seconds(o.wall_s),
            format_seconds(o.transfer_s),
            format_seconds(o.compute_s),
            format_seconds(o.retrieve_s),
            format_seconds(o.total_s),
            o.energy_j,
            o.launches,
            o.fallbacks,
            format_si(o.counted_instructions as f64),
        )
    }
}

/// The result of a `nearbank` run (`--json` serialises it as one object).
#[derive(Debug, Clone, Serialize)]
pub struct NearbankReport {
    op: &'static str,
    backend: &'static str,
    n: usize,
    primes: usize,
    prime_bits: u32,
    batch: usize,
    seed: u64,
    /// Measured: the host computing the results (not a modeled figure).
    host_wall_s: f64,
    #[serde(flatten)]
    outcome: NearbankOutcome,
}

impl NearbankReport {
    /// The report of `outcome`, one run of `workload` that took `host_wall_s` on this host.
    pub fn new(workload: &Workload, prime_bits: u32, host_wall_s: f64, outcome: NearbankOutcome) -> Self {
        Self {
            op: workload.op.name(),
            backend: "nearbank",
            n: workload.n(),
            primes: workload.primes(),
            prime_bits,
            batch: workload.batch,
            seed: workload.seed,
            host_wall_s,
            outcome,
        }
    }
}

impl Render for NearbankReport {
    /// The run, then the modeled figures.
    fn render(&self) -> String {
        format!(
            "{}  backend=nearbank n={} primes={}x{}b batch={} system={} B={}  host wall={} (computing the results \
             on this host)\n{}",
            self.op,
            self.n,
            self.primes,
            self.prime_bits,
            self.batch,
            self.outcome.system,
            self.outcome.buffer_entries,
            format_seconds(self.host_wall_s),
            self.outcome.render()
        )
    }
}

/// Refuses workloads whose buffers would fill more than [`memory::MEMORY_SHARE`] of
/// `available` bytes (no check when the available memory is unknown).
pub fn check_memory(workload: &Workload, available: Option<u64>) -> Result<()> {
    let what = format!(
        "the buffers of this run ({} ciphertexts of N={} over {} primes, {})",
        workload.batch,
        workload.n(),
        workload.primes(),
        workload.op.name()
    );
    memory::ensure_fits_in(&what, workload.estimated_bytes(), available)
        .map_err(|e| BenchError::usage(format!("{e}; lower --batch, --primes or --n")))
}

/// A batch of `count` uniformly random polynomials, limb by limb from `sampler`.
pub fn random_batch(
    basis: &Arc<RingBasis>,
    count: usize,
    representation: Representation,
    sampler: &mut Sampler,
) -> Result<PolyBatch> {
    let len = count * basis.degree();
    let mut data = Vec::with_capacity(basis.len() * len);
    for limb in 0..basis.len() {
        data.extend_from_slice(&sampler.uniform_vec(basis.modulus(limb), len));
    }
    Ok(PolyBatch::from_data(basis, count, representation, data)?)
}

/// The host inputs of a workload, in the order [`execute`] takes them: one batch of 2C
/// polynomials for `ntt`/`intt`; a0, a1, b0, b1 (C/2 polynomials each: the two components of
/// ciphertexts 0..C/2, then of C/2..C) for `bgv-mul` and `pipeline`.
pub fn generate_inputs(workload: &Workload) -> Result<Vec<PolyBatch>> {
    let mut sampler = Sampler::from_seed_u64(workload.seed);
    let basis = &workload.basis;
    let polys = workload.input_polys();
    match workload.op {
        Op::Ntt => Ok(vec![random_batch(basis, polys, Representation::Coefficient, &mut sampler)?]),
        Op::Intt => Ok(vec![random_batch(basis, polys, Representation::Ntt, &mut sampler)?]),
        Op::BfvMul | Op::BfvAdd | Op::BgvMulRelin => Err(BenchError::Failed(format!(
            "internal error: {} encrypts real inputs (kernels::exact), it has no random ones",
            workload.op.name()
        ))),
        Op::BgvMul | Op::Pipeline => {
            let representation =
                if workload.op == Op::BgvMul { Representation::Ntt } else { Representation::Coefficient };
            (0..4).map(|_| random_batch(basis, workload.batch / 2, representation, &mut sampler)).collect()
        }
    }
}

/// The timed work of `op` on uploaded inputs (see [`generate_inputs`]). Transforms run in
/// place on the inputs; products return their outputs (d0, d1, d2).
pub fn execute<B: Backend>(backend: &B, op: Op, inputs: &mut [B::Buffer]) -> Result<Vec<B::Buffer>> {
    match (op, inputs) {
        (Op::Ntt, [a]) => {
            backend.ntt(a)?;
            Ok(Vec::new())
        }
        (Op::Intt, [a]) => {
            backend.intt(a)?;
            Ok(Vec::new())
        }
        (Op::BgvMul, [a0, a1, b0, b1]) => Ok(backend.tensor(a0, a1, b0, b1)?.into()),
        (Op::Pipeline, [a0, a1, b0, b1]) => {
            for x in [&mut *a0, &mut *a1, &mut *b0, &mut *b1] {
                backend.ntt(x)?;
            }
            let mut outputs = backend.tensor(a0, a1, b0, b1)?;
            for d in &mut outputs {
                backend.intt(d)?;
            }
            Ok(outputs.into())
        }
        (op, inputs) => Err(BenchError::Failed(format!(
            "internal error: {} takes {} input batches, got {}",
            op.name(),
            if op.pairs() { 4 } else { 1 },
            inputs.len()
        ))),
    }
}

/// Brings inputs transformed in place by [`execute`] back to their initial representation
/// (untimed, between repeats).
pub fn restore<B: Backend>(backend: &B, op: Op, inputs: &mut [B::Buffer]) -> Result<()> {
    match op {
        Op::Ntt => inputs.iter_mut().try_for_each(|a| backend.intt(a))?,
        Op::Intt => inputs.iter_mut().try_for_each(|a| backend.ntt(a))?,
        Op::BgvMul | Op::BfvMul | Op::BfvAdd | Op::BgvMulRelin => {}
        Op::Pipeline => inputs.iter_mut().try_for_each(|a| backend.intt(a))?,
    }
    Ok(())
}

/// Generates and uploads the inputs, then times `repeats` runs of [`execute`]; returns the
/// seconds of each.
pub fn run_op<B: Backend>(backend: &B, workload: &Workload, repeats: usize) -> Result<Vec<f64>> {
    let mut inputs = generate_inputs(workload)?
        .into_iter()
        .map(|batch| backend.upload(batch))
        .collect::<pimhe_exec::Result<Vec<_>>>()?;
    let mut times = Vec::with_capacity(repeats);
    for repeat in 0..repeats {
        if repeat > 0 {
            restore(backend, workload.op, &mut inputs)?;
        }
        let start = Instant::now();
        let outputs = execute(backend, workload.op, &mut inputs)?;
        times.push(start.elapsed().as_secs_f64());
        drop(outputs);
    }
    Ok(times)
}

/// The result of a cpu run of a kernel, as printed (`--json` serialises it as one object).
#[derive(Debug, Clone, Serialize)]
pub struct CpuReport {
    op: &'static str,
    backend: String,
    n: usize,
    primes: usize,
    prime_bits: u32,
    moduli: Vec<u32>,
    batch: usize,
    threads: usize,
    repeats: usize,
    seed: u64,
    /// Best repeat, seconds.
    wall_s: f64,
    /// Mean over the repeats, seconds.
    mean_s: f64,
    times_s: Vec<f64>,
    /// Input residues (2C x N x K) per second of the best repeat.
    coefficients_per_s: f64,
    /// Polynomials (ntt, intt) or ciphertext products (bgv-mul, pipeline) per second.
    throughput: f64,
    throughput_unit: &'static str,
}

impl CpuReport {
    /// Seconds of every timed repeat.
    pub fn times_s(&self) -> &[f64] {
        &self.times_s
    }

    /// Seconds of the best repeat.
    pub fn wall_s(&self) -> f64 {
        self.wall_s
    }

    /// Worker threads of the backend.
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// The report of `times` (seconds of each repeat) of `workload` on `backend`.
    pub fn new(workload: &Workload, backend: &str, threads: usize, prime_bits: u32, times: Vec<f64>) -> Self {
        let wall_s = times.iter().copied().fold(f64::INFINITY, f64::min);
        let mean_s = times.iter().sum::<f64>() / times.len() as f64;
        // A zero reading (coarse clock, empty work) would make the rates infinite.
        let seconds = wall_s.max(1e-9);
        let items = if workload.op.pairs() { workload.batch / 2 } else { workload.input_polys() };
        Self {
            op: workload.op.name(),
            backend: backend.to_string(),
            n: workload.n(),
            primes: workload.primes(),
            prime_bits,
            moduli: workload.basis.primes(),
            batch: workload.batch,
            threads,
            repeats: times.len(),
            seed: workload.seed,
            wall_s,
            mean_s,
            coefficients_per_s: workload.input_residues() as f64 / seconds,
            throughput: items as f64 / seconds,
            throughput_unit: workload.op.unit(),
            times_s: times,
        }
    }
}

impl Render for CpuReport {
    /// One line of text.
    fn render(&self) -> String {
        format!(
            "{}  backend={} n={} primes={}x{}b batch={} threads={}  wall={} (best of {}, mean {})  \
             throughput={} {}/s ({} coefficients/s)",
            self.op,
            self.backend,
            self.n,
            self.primes,
            self.prime_bits,
            self.batch,
            self.threads,
            format_seconds(self.wall_s),
            self.repeats,
            format_seconds(self.mean_s),
            format_si(self.throughput),
            self.throughput_unit,
            format_si(self.coefficients_per_s),
        )
    }
}

/// Stream `k` of `seed`: independent samplers for the keys (0), the plaintext slots (1) and
/// the encryptions (2).
pub fn seed_stream(seed: u64, k: u64) -> Sampler {
    Sampler::from_seed_u64(seed.wrapping_mul(4).wrapping_add(k))
}

/// Two lists (x, then y) of `batch` vectors of `slots` uniformly random slots modulo t.
pub fn random_slots(t: &Modulus, slots: usize, batch: usize, mut sampler: Sampler) -> (Vec<Vec<u64>>, Vec<Vec<u64>>) {
    let mut vectors = || -> Vec<Vec<u64>> {
        (0..batch).map(|_| sampler.uniform_vec(t, slots).into_iter().map(u64::from).collect()).collect()
    };
    let x = vectors();
    (x, vectors())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn backend() -> CpuBackend {
        CpuBackend::new(Some(2)).unwrap()
    }

    fn upload_all(backend: &CpuBackend, batches: &[PolyBatch]) -> Vec<PolyBatch> {
        batches.iter().map(|b| backend.upload(b.clone()).unwrap()).collect()
    }

    /// Negacyclic product of two polynomials modulo q, by the schoolbook formula.
    fn schoolbook(a: &[u32], b: &[u32], q: u64) -> Vec<u64> {
        let n = a.len();
        let mut out = vec![0u64; n];
        for (i, &x) in a.iter().enumerate() {
            for (j, &y) in b.iter().enumerate() {
                let product = x as u64 * y as u64 % q;
                let k = (i + j) % n;
                out[k] = if i + j < n { (out[k] + product) % q } else { (out[k] + q - product) % q };
            }
        }
        out
    }

    #[test]
    fn bgv_mul_matches_a_per_element_oracle() {
        let workload = Workload::new(Op::BgvMul, 16, 2, 20, 6, 7).unwrap();
        let host = generate_inputs(&workload).unwrap();
        assert_eq!(host.len(), 4);
        assert!(host.iter().all(|b| b.count() == 3 && b.representation() == Representation::Ntt));
        let backend = backend();
        let mut inputs = upload_all(&backend, &host);
        let outputs = execute(&backend, Op::BgvMul, &mut inputs).unwrap();
        assert_eq!(outputs.len(), 3);
        let outputs: Vec<PolyBatch> = outputs.iter().map(|d| backend.download(d).unwrap()).collect();
        let (a0, a1, b0, b1) = (&host[0], &host[1], &host[2], &host[3]);
        let mut nonzero = 0;
        for limb in 0..workload.primes() {
            let q = workload.basis.modulus(limb).value() as u64;
            for poly in 0..3 {
                for i in 0..16 {
                    let x0 = a0.poly_limb(limb, poly)[i] as u64;
                    let x1 = a1.poly_limb(limb, poly)[i] as u64;
                    let y0 = b0.poly_limb(limb, poly)[i] as u64;
                    let y1 = b1.poly_limb(limb, poly)[i] as u64;
                    let expected = [x0 * y0 % q, (x0 * y1 + x1 * y0) % q, x1 * y1 % q];
                    for (d, e) in outputs.iter().zip(expected) {
                        assert_eq!(d.representation(), Representation::Ntt);
                        assert_eq!(d.poly_limb(limb, poly)[i] as u64, e, "limb {limb} poly {poly} slot {i}");
                        nonzero += (e != 0) as usize;
                    }
                }
            }
        }
        assert!(nonzero > 0, "random inputs should give nonzero products");
    }

    #[test]
    fn pipeline_computes_negacyclic_ciphertext_products() {
        let workload = Workload::new(Op::Pipeline, 16, 2, 20, 4, 3).unwrap();
        let host = generate_inputs(&workload).unwrap();
        let backend = backend();
        let mut inputs = upload_all(&backend, &host);
        let outputs = execute(&backend, Op::Pipeline, &mut inputs).unwrap();
        let outputs: Vec<PolyBatch> = outputs.iter().map(|d| backend.download(d).unwrap()).collect();
        let (a0, a1, b0, b1) = (&host[0], &host[1], &host[2], &host[3]);
        for limb in 0..workload.primes() {
            let q = workload.basis.modulus(limb).value() as u64;
            for poly in 0..2 {
                let p = |b: &PolyBatch| b.poly_limb(limb, poly).to_vec();
                let d0 = schoolbook(&p(a0), &p(b0), q);
                let d1: Vec<u64> = schoolbook(&p(a0), &p(b1), q)
                    .iter()
                    .zip(schoolbook(&p(a1), &p(b0), q))
                    .map(|(x, y)| (x + y) % q)
                    .collect();
                let d2 = schoolbook(&p(a1), &p(b1), q);
                for (out, expected) in outputs.iter().zip([d0, d1, d2]) {
                    assert_eq!(out.representation(), Representation::Coefficient);
                    let got: Vec<u64> = out.poly_limb(limb, poly).iter().map(|&x| x as u64).collect();
                    assert_eq!(got, expected, "limb {limb} poly {poly}");
                }
            }
        }
    }

    #[test]
    fn restore_brings_transformed_inputs_back() {
        let backend = backend();
        for op in [Op::Ntt, Op::Intt, Op::BgvMul, Op::Pipeline] {
            let workload = Workload::new(op, 32, 2, 30, 4, 5).unwrap();
            let host = generate_inputs(&workload).unwrap();
            let mut inputs = upload_all(&backend, &host);
            execute(&backend, op, &mut inputs).unwrap();
            restore(&backend, op, &mut inputs).unwrap();
            let back: Vec<PolyBatch> = inputs.iter().map(|b| backend.download(b).unwrap()).collect();
            assert_eq!(back, host, "{}", op.name());
            assert_eq!(run_op(&backend, &workload, 3).unwrap().len(), 3);
        }
    }

    #[test]
    fn ntt_transforms_every_polynomial() {
        let workload = Workload::new(Op::Ntt, 64, 3, 30, 5, 1).unwrap();
        let host = generate_inputs(&workload).unwrap();
        assert_eq!(host[0].count(), 10);
        let backend = backend();
        let mut inputs = upload_all(&backend, &host);
        execute(&backend, Op::Ntt, &mut inputs).unwrap();
        let mut expected = host[0].clone();
        expected.to_ntt().unwrap();
        assert_eq!(backend.download(&inputs[0]).unwrap(), expected);
    }

    #[test]
    fn inputs_depend_on_the_seed_only() {
        let a = Workload::new(Op::Intt, 16, 1, 30, 2, 9).unwrap();
        let b = Workload::new(Op::Intt, 16, 1, 30, 2, 10).unwrap();
        assert_eq!(generate_inputs(&a).unwrap(), generate_inputs(&a).unwrap());
        assert_ne!(generate_inputs(&a).unwrap(), generate_inputs(&b).unwrap());
    }

    #[test]
    fn invalid_parameters_name_their_flag() {
        let message = |r: Result<Workload>| match r {
            Err(BenchError::Usage(m)) => m,
            other => panic!("expected a usage error, got {other:?}"),
        };
        assert!(message(Workload::new(Op::Ntt, 1000, 1, 30, 1, 1)).starts_with("--n 1000"));
        assert!(message(Workload::new(Op::Ntt, 8, 1, 30, 1, 1)).starts_with("--n 8"));
        assert!(message(Workload::new(Op::Ntt, 1 << 18, 1, 30, 1, 1)).starts_with("--n 262144"));
        assert!(message(Workload::new(Op::Ntt, 16, 0, 30, 1, 1)).starts_with("--primes 0"));
        assert!(message(Workload::new(Op::Ntt, 16, 1, 31, 1, 1)).starts_with("--prime-bits 31"));
        assert!(message(Workload::new(Op::Ntt, 16, 1, 1, 1, 1)).starts_with("--prime-bits 1"));
        assert!(message(Workload::new(Op::Ntt, 16, 1, 30, 0, 1)).starts_with("--batch 0"));
        assert!(message(Workload::new(Op::BgvMul, 16, 1, 30, 3, 1)).starts_with("--batch 3"));
        assert!(message(Workload::new(Op::Pipeline, 16, 1, 30, 1, 1)).contains("even"));
        assert!(message(Workload::new(Op::Ntt, 4096, 1000, 20, 1, 1)).starts_with("--primes 1000"));
        assert!(Workload::new(Op::Ntt, 16, 1, 30, 1, 1).is_ok());
    }

    #[test]
    fn memory_guard_refuses_oversized_runs() {
        let workload = Workload::new(Op::BgvMul, 4096, 3, 30, 1024, 1).unwrap();
        // 2C x N x K residues of 4 bytes, times 7/4 for the three outputs.
        assert_eq!(workload.estimated_bytes(), 4 * 2048 * 4096 * 3 * 7 / 4);
        let needed = workload.estimated_bytes() as u64;
        assert!(check_memory(&workload, None).is_ok());
        assert!(check_memory(&workload, Some(needed * 2)).is_ok());
        let refused = check_memory(&workload, Some(needed)).unwrap_err();
        assert!(matches!(refused, BenchError::Usage(_)));
        assert!(refused.to_string().contains("--batch"));
    }

    #[test]
    fn report_rates_follow_the_best_time() {
        let workload = Workload::new(Op::BgvMul, 16, 2, 30, 8, 1).unwrap();
        let report = CpuReport::new(&workload, "cpu", 2, 30, vec![2.0, 1.0, 3.0]);
        assert_eq!(report.wall_s, 1.0);
        assert_eq!(report.mean_s, 2.0);
        assert_eq!(report.throughput, 4.0);
        assert_eq!(report.coefficients_per_s, (16 * 16 * 2) as f64);
        let line = report.render();
        assert!(line.starts_with("bgv-mul  backend=cpu n=16 primes=2x30b batch=8 threads=2  wall=1.000 s"), "{line}");
        assert!(line.contains("products/s"), "{line}");
    }
}
