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

mod config;
pub mod exact;
pub mod pim;
mod report;
mod workload;

pub use config::{KernelConfig, DEFAULT_REPEAT, RULES};
pub use report::{CpuReport, ExactReport, KernelReport, NearbankReport, PimReport};
pub use workload::{check_memory, execute, generate_inputs, restore, run_op, Op, Workload};

use std::time::Instant;

use pimhe_exec::{Backend, CpuBackend};
use pimhe_nearbank::NearbankBackend;
use pimhe_ring::memory;

use crate::error::{BenchError, Result};
use crate::target::nearbank::NearbankOutcome;
use crate::target::planner::{self, PlanChoice, Priced, CANDIDATES};
use crate::target::upmem::{Emulate, PimSettings};
use crate::target::{NearbankTarget, Target, UpmemTarget};

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

/// `pimhe bench OP --backend upmem-emu`: auto emulation unless set; the placement asked for,
/// or with `--mode auto` every one of [`CANDIDATES`] modeled and the cheapest total reported
/// (the subset emulation follows each: these kernels cross no primes, so a prime's work is its
/// own in every placement). They have no fallback, and hybrid prices as parallel (the earlier
/// wins a tie).
fn run_upmem(config: &KernelConfig, upmem: &UpmemTarget) -> Result<PimReport> {
    let workload = workload(config)?;
    let emulate = upmem.emulate.unwrap_or(Emulate::Auto);
    let settings_in = |mode| -> Result<PimSettings> {
        Ok(PimSettings::new(upmem.dpus, mode, upmem.variant, workload.primes())?
            .with_what_if(upmem.what_if)
            .with_model(upmem.model))
    };
    if let Some(mode) = upmem.mode {
        let settings = settings_in(mode)?;
        let outcome = pim::run(&workload, &settings, emulate, None)?;
        return Ok(PimReport::new(&workload, config.prime_bits, &settings, outcome));
    }
    let mut runs = Vec::new();
    let (chosen, candidates, first_error) = planner::cheapest(&CANDIDATES, |mode, _| {
        let settings = settings_in(mode)?;
        let outcome = pim::run(&workload, &settings, emulate, None)?;
        let priced = Priced::finished(mode, outcome.total_s, 0.0, outcome.fallbacks);
        runs.push((mode, settings, outcome));
        Ok(priced)
    });
    let Some(chosen) = chosen else {
        return Err(first_error.unwrap_or_else(|| BenchError::usage("no placement could run this workload")));
    };
    let (_, settings, outcome) = runs.into_iter().find(|(mode, _, _)| *mode == chosen).expect("the chosen one ran");
    let plan = PlanChoice { mode: chosen, chosen: chosen.name(), candidates };
    Ok(PimReport::new(&workload, config.prime_bits, &settings, outcome).with_plan(plan))
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
