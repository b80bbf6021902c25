//! `bfv-mul`, `bfv-add` and `bgv-mul-relin`: an exact scheme's homomorphic operations on real
//! ciphertexts of the 128-bit preset of N, in the report format of the other `bench`
//! operations. The run is written once over the scheme's context ([`ExactScheme`]: its preset
//! and the primes a backend must hold come from the scheme traits).
//!
//! The C input ciphertexts (random slots, encrypted on the CPU with the public key) form C/2
//! pairs, ciphertext i with ciphertext C/2 + i. `bfv-mul` is the full product a user gets:
//! BEHZ's multiplication (extension to Bsk, tensor, fast floor, back to q) followed by
//! relinearization, in NTT form in and out; `bgv-mul-relin` is BGV's tensor product followed by
//! relinearization (no modulus switch); `bfv-add` is the slot-wise sum. The first result is
//! decrypted and checked slot by slot against the plaintext before any time is reported.
//!
//! On `cpu` every repeat is timed. On `upmem-emu` one run is emulated, on every DPU or on a
//! representative DPU per prime (`--emulate subset`, see [`run_upmem`]); the backend holds every
//! prime the scheme uses (q and P, and for BFV BEHZ's auxiliary primes and t): the operands go to
//! the DPUs, the operation runs, the result comes back, and the report gives the model's
//! transfer, compute and retrieval, labelled with its name and version, and the operations that
//! fell back to the CPU (BEHZ's base conversions and key switching's base conversion and
//! ModDown run on the host in parallel mode). Key generation, encryption and the upload of the
//! relinearization key are not counted.

use std::sync::Arc;
use std::time::Instant;

use pimhe_exec::{Backend, CpuBackend};
use pimhe_pim::runtime::placement::{Mode, Plan};
use pimhe_pim::runtime::subset::{busiest_share, price_transfers, ScaledTransfers};
use pimhe_pim::runtime::PimBackend;
use pimhe_schemes::bfv::BfvContext;
use pimhe_schemes::bgv::{BgvContext, BgvParameters, DEGREES};
use pimhe_schemes::encoder::{BatchEncoder, ExactScheme};
use pimhe_schemes::rlwe::{CiphertextBatch, Decryptor, Encryptor, Evaluator, KeyGenerator, RelinKey, SecretKey};

use super::{
    check_memory, CpuReport, ExactReport, KernelConfig, KernelReport, NearbankReport, Op, PimReport, Workload,
};
use crate::error::{BenchError, Result};
use crate::format::FIXED_SEED_KEYS;
use crate::measure::inputs::{random_slots, seed_stream};
use crate::target::nearbank::NearbankOutcome;
use crate::target::upmem::{Emulate, PimOutcome, PimSettings, Sources, AUTO_FULL_MAX_DPUS};
use crate::target::{NearbankTarget, Target, UpmemTarget};
use pimhe_nearbank::NearbankBackend;

/// The operations of this module.
pub const OPS: [Op; 3] = [Op::BfvMul, Op::BfvAdd, Op::BgvMulRelin];

/// What each operation computes, as the report states it.
fn computation(op: Op) -> &'static str {
    match op {
        Op::BfvMul => "BFV multiply (BEHZ) + relinearize, C/2 pairs",
        Op::BfvAdd => "BFV add, C/2 pairs",
        Op::BgvMulRelin => "BGV multiply + relinearize, C/2 pairs",
        other => other.name(),
    }
}

/// The client side: keys, the encoded inputs, their encryptions, the expected slots.
struct Inputs<S: ExactScheme> {
    ctx: Arc<S>,
    secret: SecretKey<S>,
    relin: Option<RelinKey<S>>,
    encoder: BatchEncoder,
    a: CiphertextBatch<CpuBackend, S>,
    b: CiphertextBatch<CpuBackend, S>,
    expected: Vec<Vec<u64>>,
}

/// Runs `pimhe bench bfv-mul|bfv-add|bgv-mul-relin` with `repeat` timed repeats on the cpu
/// (the target's flags are checked by the caller).
pub fn run(args: &KernelConfig, repeat: usize) -> Result<KernelReport> {
    validate(args)?;
    match args.op {
        Op::BgvMulRelin => run_with::<BgvContext>(args, repeat),
        _ => run_with::<BfvContext>(args, repeat),
    }
}

fn run_with<S: ExactScheme>(args: &KernelConfig, repeats: usize) -> Result<KernelReport> {
    // The client (keys, encryption, the check) is the target's CPU threads, or all cores.
    let client = CpuBackend::new(args.target.threads())?;
    let ctx = S::preset(args.n)?;
    let workload = Workload { op: args.op, basis: ctx.rlwe().top_basis().clone(), batch: args.batch, seed: args.seed };
    let prime_bits = workload.basis.primes().iter().map(|p| 32 - p.leading_zeros()).max().unwrap_or(0);
    let nearbank = match &args.target {
        Target::UpmemEmu(upmem) => return run_upmem(args, upmem, &client, ctx, &workload, prime_bits),
        Target::Cpu { .. } => None,
        Target::Nearbank(nearbank) => Some(nearbank),
    };
    // Before the keys and ciphertexts are allocated.
    check_memory(&workload, pimhe_ring::memory::available_memory())?;
    let inputs = prepare(&client, ctx, args.op, args.batch, args.seed)?;
    if let Some(nearbank) = nearbank {
        return run_nearbank(args, nearbank, &client, &inputs, &workload, prime_bits);
    }
    let evaluator = evaluator(&client, &inputs)?;
    let mut times = Vec::with_capacity(repeats);
    for repeat in 0..repeats {
        let start = Instant::now();
        let result = apply(&evaluator, args.op, &inputs.a, &inputs.b)?;
        times.push(start.elapsed().as_secs_f64());
        if repeat == 0 {
            check(&client, &inputs, &result)?;
        }
    }
    let report = CpuReport::new(&workload, "cpu", client.threads(), prime_bits, times);
    Ok(KernelReport::ExactCpu(ExactReport {
        report,
        computation: computation(args.op),
        keys: FIXED_SEED_KEYS,
        checked: true,
        host_fallback_s: None,
    }))
}

/// `--backend nearbank`: the operation recorded on the host and priced by the model.
fn run_nearbank<S: ExactScheme>(
    args: &KernelConfig,
    nearbank: &NearbankTarget,
    client: &CpuBackend,
    inputs: &Inputs<S>,
    workload: &Workload,
    prime_bits: u32,
) -> Result<KernelReport> {
    let backend = NearbankBackend::new(nearbank.threads)?;
    let evaluator = evaluator(&backend, inputs)?;
    let (a, b) = (inputs.a.transfer(client, &backend)?, inputs.b.transfer(client, &backend)?);
    // Only the operation is planned: keys and operands are resident, as in Anaheim's runs.
    backend.take_trace();
    let start = Instant::now();
    let result = apply(&evaluator, args.op, &a, &b)?;
    let wall_s = start.elapsed().as_secs_f64();
    let outcome = NearbankOutcome::of(&nearbank.model, &backend.take_trace());
    check(client, inputs, &result.transfer(&backend, client)?)?;
    let report = NearbankReport::new(workload, prime_bits, wall_s, outcome);
    Ok(KernelReport::ExactNearbank(ExactReport {
        report,
        computation: computation(args.op),
        keys: FIXED_SEED_KEYS,
        checked: true,
        host_fallback_s: None,
    }))
}

/// `--backend upmem-emu`: the operands go in, the operation runs, the result comes out, on every
/// DPU (`--emulate full`, the default) or on a representative system (`--emulate subset`; `auto`
/// is full up to [`AUTO_FULL_MAX_DPUS`] DPUs): one DPU per prime holding the full system's
/// busiest share of ciphertext pairs. Its launches are the full system's (every DPU of a prime
/// group runs the same commands on its share, the busiest one is the slowest); the transfers it
/// recorded are priced on the full system's placement, scaled from its share to the batch
/// ([`price_transfers`]); the CPU fallbacks' measured time is scaled by the same ratio (it is
/// linear in the batch). Either way the emulated result is decrypted and checked.
fn run_upmem<S: ExactScheme>(
    args: &KernelConfig,
    upmem: &UpmemTarget,
    client: &CpuBackend,
    ctx: Arc<S>,
    workload: &Workload,
    prime_bits: u32,
) -> Result<KernelReport> {
    let mode = upmem.mode.unwrap_or(Mode::Parallel);
    let emulate = upmem.emulate.unwrap_or(Emulate::Full);
    let primes = ctx.backend_primes();
    let settings = PimSettings::new(upmem.dpus, mode, upmem.variant, primes.len())?
        .with_what_if(upmem.what_if)
        .with_model(upmem.model);
    let full = match emulate {
        Emulate::Full => true,
        Emulate::Subset => false,
        Emulate::Auto => settings.dpus <= AUTO_FULL_MAX_DPUS,
    };
    if !full && mode == Mode::Sequential {
        return Err(BenchError::usage(format!(
            "--emulate {} is not allowed for {} with --mode sequential: the representative system has one DPU \
             per prime (parallel mode) or one DPU for all primes (ciphertext-major); use --emulate full",
            emulate.name(),
            args.op.name()
        )));
    }
    let pairs = args.batch / 2;
    let plan = Plan::new(mode, settings.dpus, primes.len()).map_err(BenchError::usage)?;
    let share = busiest_share(&plan, primes.len(), pairs);
    let (emulated_dpus, emulated_pairs, config) = if full {
        (plan.used_dpus(), pairs, settings.config(settings.dpus, mode))
    } else {
        // One DPU per prime with the busiest share (parallel), or one DPU with all of them.
        let dpus = if mode == Mode::Parallel { primes.len() } else { 1 };
        (dpus, share, settings.config(dpus, mode))
    };
    let emulated = Workload { batch: 2 * emulated_pairs, ..workload.clone() };
    // Before the keys and ciphertexts are allocated.
    check_memory(&emulated, pimhe_ring::memory::available_memory())?;
    let inputs = prepare(client, ctx, args.op, emulated.batch, args.seed)?;

    let model = config.model.clone();
    let pim = PimBackend::new(config, args.n, &primes)?;
    let evaluator = evaluator(&pim, &inputs)?;
    // Only the operands' way in, the operation and the result's way out are counted.
    pim.reset_report()?;
    let start = Instant::now();
    let (a, b) = (inputs.a.transfer(client, &pim)?, inputs.b.transfer(client, &pim)?);
    let result = apply(&evaluator, args.op, &a, &b)?.transfer(&pim, client)?;
    let cost = pim.report()?;
    let wall_s = start.elapsed().as_secs_f64();
    check(client, &inputs, &result)?;

    let (transfers, host_fallback_s, emulation, sources) = if full {
        let transfers = ScaledTransfers {
            transfer_s: cost.transfer_s,
            retrieve_s: cost.retrieve_s,
            bytes_to_dpus: cost.bytes_to_dpus,
            bytes_from_dpus: cost.bytes_from_dpus,
        };
        let sources = Sources {
            compute_s: format!("emulated: all {emulated_dpus} DPUs (the scheme's {} primes resident)", primes.len()),
            transfer_s: "model, on the bytes the emulated uploads and downloads moved".into(),
            energy_j: "model power x modeled total time".into(),
            wall_s: "measured: emulator on this host (operands in, operation, result out)".into(),
        };
        (transfers, cost.host_fallback_s, "full".to_string(), sources)
    } else {
        let scale = pairs as f64 / share as f64;
        let transfers = price_transfers(&model, &plan, &cost.transfers, share, pairs, args.n);
        let emulation = format!(
            "subset: {emulated_dpus} emulated DPU(s) holding the busiest share, {share} of {pairs} ciphertext \
             pairs (groups of {}), transfers and fallbacks scaled x{scale:.2}",
            plan.group(0).len()
        );
        let sources = Sources {
            compute_s: "emulated: the representative DPU(s) with the busiest share (their launches are the \
                        system's)"
                .into(),
            transfer_s: format!(
                "model, on the full system's bytes per DPU ({} DPUs, {} rank(s)): the representative's {} copies \
                 scaled from its share to the batch",
                plan.used_dpus(),
                settings.ranks(),
                cost.transfers.len()
            ),
            energy_j: "model power x modeled total time".into(),
            wall_s: "measured: emulator on this host (the representative only)".into(),
        };
        (transfers, cost.host_fallback_s * scale, emulation, sources)
    };
    let total_s = transfers.transfer_s + cost.compute_s + transfers.retrieve_s;
    let outcome = PimOutcome {
        emulation,
        emulated_dpus,
        busiest_share: share,
        wall_s,
        transfer_s: transfers.transfer_s,
        compute_s: cost.compute_s,
        retrieve_s: transfers.retrieve_s,
        total_s,
        energy_j: model.energy_joules(total_s, settings.ranks()),
        model: cost.model.clone(),
        launches: cost.launches,
        fallbacks: cost.fallbacks,
        counted_instructions: cost.counted.instructions,
        counted: cost.counted,
        bytes_to_dpus: transfers.bytes_to_dpus,
        bytes_from_dpus: transfers.bytes_from_dpus,
        sources,
    };
    let report = PimReport::new(workload, prime_bits, &settings, outcome);
    Ok(KernelReport::ExactPim(ExactReport {
        report,
        computation: computation(args.op),
        keys: FIXED_SEED_KEYS,
        checked: true,
        host_fallback_s: Some(host_fallback_s),
    }))
}

/// Checks the flags that apply to runs on real ciphertexts, `--n` against the presets. Every
/// error names its flag and what is allowed.
fn validate(args: &KernelConfig) -> Result<()> {
    let op = args.op.name();
    if args.primes.is_some() {
        return Err(BenchError::usage(format!(
            "--primes does not apply to {op}: it runs on the 128-bit preset of --n (see `pimhe params`)"
        )));
    }
    if args.batch < 2 || !args.batch.is_multiple_of(2) {
        return Err(BenchError::usage(format!(
            "--batch {} is not allowed for {op}: ciphertexts are combined in pairs, so the batch must be even and \
             at least 2",
            args.batch
        )));
    }
    // A product is relinearized, which needs a key-switching prime.
    // BFV's presets have BGV's primes, so one list serves both schemes.
    let needs_special = args.op != Op::BfvAdd;
    let allowed: Vec<usize> = DEGREES
        .iter()
        .copied()
        .filter(|&n| BgvParameters::preset(n).is_ok_and(|p| !needs_special || !p.special_primes().is_empty()))
        .collect();
    if !allowed.contains(&args.n) {
        let list: Vec<String> = allowed.iter().map(usize::to_string).collect();
        return Err(BenchError::usage(format!(
            "--n {} is not allowed for {op}: choose one of {} (the 128-bit presets{})",
            args.n,
            list.join(", "),
            if needs_special { " with a key-switching prime, for relinearization" } else { "" }
        )));
    }
    Ok(())
}

/// Keys, and C/2 + C/2 ciphertexts of random slots with the slots their combination must give.
fn prepare<S: ExactScheme>(client: &CpuBackend, ctx: Arc<S>, op: Op, batch: usize, seed: u64) -> Result<Inputs<S>> {
    let stream = |k: u64| seed_stream(seed, k);
    let mut keygen = KeyGenerator::with_sampler(client, &ctx, stream(0));
    let secret = keygen.secret_key()?;
    let public = keygen.public_key(&secret)?;
    let relin = if op == Op::BfvAdd { None } else { Some(keygen.relin_key(&secret)?) };
    let encoder = BatchEncoder::new(&ctx);
    let t = *ctx.plain_space().modulus();
    let (x, y) = random_slots(&t, ctx.plain_space().degree(), batch / 2, stream(1));
    let expected = x
        .iter()
        .zip(&y)
        .map(|(x, y)| {
            // bfv-add adds, the others multiply (`validate` let no other op through).
            let combine = |(&a, &b): (&u64, &u64)| match op {
                Op::BfvAdd => (a + b) % u64::from(t.value()),
                _ => a * b % u64::from(t.value()),
            };
            x.iter().zip(y).map(combine).collect()
        })
        .collect();
    let mut encryptor = Encryptor::with_public_key(client, &public)?.with_sampler(stream(2));
    let mut encrypt = |values: &[Vec<u64>]| -> Result<CiphertextBatch<CpuBackend, S>> {
        let plains = values.iter().map(|v| encoder.encode(v)).collect::<pimhe_schemes::Result<Vec<_>>>()?;
        Ok(encryptor.encrypt(&plains)?)
    };
    let (a, b) = (encrypt(&x)?, encrypt(&y)?);
    Ok(Inputs { ctx, secret, relin, encoder, a, b, expected })
}

/// The server's evaluator on `backend`, with the relinearization key when the op needs it.
fn evaluator<'a, B: Backend, S: ExactScheme>(backend: &'a B, inputs: &Inputs<S>) -> Result<Evaluator<'a, B, S>> {
    let evaluator = Evaluator::new(backend, &inputs.ctx);
    Ok(match &inputs.relin {
        Some(key) => evaluator.with_relin_key(key)?,
        None => evaluator,
    })
}

/// The timed operation.
fn apply<B: Backend, S: ExactScheme>(
    evaluator: &Evaluator<'_, B, S>,
    op: Op,
    a: &CiphertextBatch<B, S>,
    b: &CiphertextBatch<B, S>,
) -> Result<CiphertextBatch<B, S>> {
    match op {
        Op::BfvMul | Op::BgvMulRelin => Ok(evaluator.relinearize(&evaluator.multiply(a, b)?)?),
        Op::BfvAdd => Ok(evaluator.add(a, b)?),
        other => {
            Err(BenchError::Failed(format!("internal error: {} is not an operation on real ciphertexts", other.name())))
        }
    }
}

/// Fails unless every decrypted slot of `result` is the expected one.
fn check<S: ExactScheme>(
    client: &CpuBackend,
    inputs: &Inputs<S>,
    result: &CiphertextBatch<CpuBackend, S>,
) -> Result<()> {
    let plains = Decryptor::new(client, &inputs.secret)?.decrypt(result)?;
    for (k, (plain, expected)) in plains.iter().zip(&inputs.expected).enumerate() {
        let slots = inputs.encoder.decode(plain)?;
        if let Some(i) = (0..expected.len()).find(|&i| slots[i] != expected[i]) {
            return Err(BenchError::Failed(format!(
                "internal error: pair {k} slot {i} decrypted to {}, expected {}",
                slots[i], expected[i]
            )));
        }
    }
    Ok(())
}
