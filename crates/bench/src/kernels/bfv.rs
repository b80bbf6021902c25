//! `bfv-mul` and `bfv-add`: BFV's homomorphic operations on real ciphertexts of the
//! 128-bit preset of N, in the report format of the other `bench` operations.
//!
//! The C input ciphertexts (random slots, encrypted on the CPU with the public key) form C/2
//! pairs, ciphertext i with ciphertext C/2 + i. `bfv-mul` is the full product a user gets:
//! BEHZ's multiplication (extension to Bsk, tensor, fast floor, back to q) followed by
//! relinearization, in NTT form in and out; `bfv-add` is the slot-wise sum. The first result is
//! decrypted and checked slot by slot against the plaintext before any time is reported.
//!
//! On `cpu` every repeat is timed. On `upmem-emu` one run is emulated on every DPU (the backend
//! holds every prime BFV uses: q, P, BEHZ's auxiliary primes and t): the operands go to the
//! DPUs, the operation runs, the result comes back, and the report gives the model's transfer,
//! compute and retrieval, labelled with its name and version, and the operations that fell
//! back to the CPU (BEHZ's base conversions and key switching's ModDown run on the host).
//! Key generation, encryption and the upload of the relinearization key are not counted.

use std::sync::Arc;
use std::time::Instant;

use pimhe_exec::{Backend, CpuBackend};
use pimhe_pim::runtime::placement::Plan;
use pimhe_pim::runtime::subset::busiest_share;
use pimhe_pim::runtime::PimBackend;
use pimhe_schemes::bfv::{
    BatchEncoder, BfvContext, BfvParameters, CiphertextBatch, Decryptor, Encryptor, Evaluator, KeyGenerator, RelinKey,
    SecretKey,
};
use pimhe_schemes::bgv::DEGREES;
use serde::Serialize;

use super::{
    check_memory, random_slots, reject_upmem_flags, seed_stream, CpuReport, KernelConfig, KernelReport, NearbankReport,
    Op, PimReport, Workload,
};
use crate::error::{check_threads, BenchError, Result};
use crate::format::{format_seconds, Render, FIXED_SEED_KEYS};
use crate::nearbank::{self, NearbankOutcome};
use crate::settings::{self, PimOutcome, PimSettings, Sources};
use crate::what_if::WhatIf;
use pimhe_nearbank::NearbankBackend;

/// What each operation computes, as the report states it.
fn computation(op: Op) -> &'static str {
    match op {
        Op::BfvMul => "BFV multiply (BEHZ) + relinearize, C/2 pairs",
        Op::BfvAdd => "BFV add, C/2 pairs",
        other => other.name(),
    }
}

/// A `bench` report of a BFV operation: the common fields, what was computed, and that the
/// result was checked.
#[derive(Debug, Clone, Serialize)]
pub struct BfvReport<R: Render> {
    #[serde(flatten)]
    report: R,
    computation: &'static str,
    /// Where the keys come from: always `--seed` here ([`FIXED_SEED_KEYS`]).
    keys: &'static str,
    /// The decrypted result equalled the plaintext one (always true in a printed report).
    checked: bool,
    /// upmem-emu: measured seconds of the steps that ran on the CPU instead of the DPUs.
    #[serde(skip_serializing_if = "Option::is_none")]
    host_fallback_s: Option<f64>,
}

impl<R: Render> Render for BfvReport<R> {
    fn render(&self) -> String {
        let mut text = format!(
            "{}\n  {}; result checked against the plaintext; {} (--seed)",
            self.report.render(),
            self.computation,
            self.keys
        );
        if let Some(seconds) = self.host_fallback_s {
            text += &format!("; host fallback steps {} measured", format_seconds(seconds));
        }
        text
    }
}

/// The client side: keys, the encoded inputs, their encryptions, the expected slots.
struct Inputs {
    ctx: Arc<BfvContext>,
    secret: SecretKey,
    relin: Option<RelinKey>,
    encoder: BatchEncoder,
    a: CiphertextBatch<CpuBackend>,
    b: CiphertextBatch<CpuBackend>,
    expected: Vec<Vec<u64>>,
}

/// Runs `pimhe bench bfv-mul|bfv-add` (the backend's name is checked by the caller).
pub fn run(args: &KernelConfig) -> Result<KernelReport> {
    let params = validate(args)?;
    let client = CpuBackend::new(if args.backend == "upmem-emu" { None } else { args.threads })?;
    let ctx = BfvContext::new(params)?;
    let workload = Workload { op: args.op, basis: ctx.ciphertext_basis().clone(), batch: args.batch, seed: args.seed };
    // Before the keys and ciphertexts are allocated.
    check_memory(&workload, pimhe_ring::memory::available_memory())?;
    let inputs = prepare(&client, ctx, args.op, args.batch, args.seed)?;
    let prime_bits = inputs.ctx.ciphertext_basis().primes().iter().map(|p| 32 - p.leading_zeros()).max().unwrap_or(0);
    let computation = computation(args.op);
    if args.backend == "cpu" {
        let evaluator = evaluator(&client, &inputs)?;
        let mut times = Vec::with_capacity(args.repeat);
        for repeat in 0..args.repeat {
            let start = Instant::now();
            let result = apply(&evaluator, args.op, &inputs.a, &inputs.b)?;
            times.push(start.elapsed().as_secs_f64());
            if repeat == 0 {
                check(&client, &inputs, &result)?;
            }
        }
        let report = CpuReport::new(&workload, "cpu", client.threads(), prime_bits, times);
        return Ok(KernelReport::BfvCpu(BfvReport {
            report,
            computation,
            keys: FIXED_SEED_KEYS,
            checked: true,
            host_fallback_s: None,
        }));
    }

    if args.backend == "nearbank" {
        let model = nearbank::model(args.system.as_deref(), args.buffer_entries)?;
        let backend = NearbankBackend::new(args.threads)?;
        let evaluator = evaluator(&backend, &inputs)?;
        let (a, b) = (inputs.a.transfer(&client, &backend)?, inputs.b.transfer(&client, &backend)?);
        // Only the operation is planned: keys and operands are resident, as in Anaheim's runs.
        backend.take_trace();
        let start = Instant::now();
        let result = apply(&evaluator, args.op, &a, &b)?;
        let wall_s = start.elapsed().as_secs_f64();
        let outcome = NearbankOutcome::of(&model, &backend.take_trace());
        check(&client, &inputs, &result.transfer(&backend, &client)?)?;
        let report = NearbankReport::new(&workload, prime_bits, wall_s, outcome);
        return Ok(KernelReport::BfvNearbank(BfvReport {
            report,
            computation,
            keys: FIXED_SEED_KEYS,
            checked: true,
            host_fallback_s: None,
        }));
    }

    let mode = settings::parse_mode(args.mode.as_deref().unwrap_or("parallel"))?;
    let variant = settings::parse_kernel(args.kernel.as_deref().unwrap_or("best"))?;
    let primes = inputs.ctx.all_primes();
    let what_if = WhatIf::parse(&args.what_if)?;
    let settings = PimSettings::new(args.dpus.unwrap_or(settings::DEFAULT_DPUS), mode, variant, primes.len())?
        .with_what_if(what_if);
    let config = settings.config(settings.dpus, mode);
    let model = config.model.clone();
    let pim = PimBackend::new(config, args.n, &primes)?;
    let evaluator = evaluator(&pim, &inputs)?;
    // Only the operands' way in, the operation and the result's way out are counted.
    pim.reset_report()?;
    let start = Instant::now();
    let (a, b) = (inputs.a.transfer(&client, &pim)?, inputs.b.transfer(&client, &pim)?);
    let result = apply(&evaluator, args.op, &a, &b)?.transfer(&pim, &client)?;
    let cost = pim.report()?;
    let wall_s = start.elapsed().as_secs_f64();
    check(&client, &inputs, &result)?;

    let plan = Plan::new(mode, settings.dpus, primes.len()).map_err(BenchError::usage)?;
    let energy_j = model.energy_joules(cost.total_s(), settings.ranks());
    let outcome = PimOutcome {
        emulation: "full".to_string(),
        emulated_dpus: plan.used_dpus(),
        busiest_share: busiest_share(&plan, primes.len(), args.batch / 2),
        wall_s,
        transfer_s: cost.transfer_s,
        compute_s: cost.compute_s,
        retrieve_s: cost.retrieve_s,
        total_s: cost.total_s(),
        energy_j,
        model: cost.model.clone(),
        launches: cost.launches,
        fallbacks: cost.fallbacks,
        counted_instructions: cost.counted.instructions,
        counted: cost.counted,
        bytes_to_dpus: cost.bytes_to_dpus,
        bytes_from_dpus: cost.bytes_from_dpus,
        sources: Sources {
            compute_s: format!("emulated: all {} DPUs (BFV's {} primes resident)", plan.used_dpus(), primes.len()),
            transfer_s: "model, on the bytes the emulated uploads and downloads moved".into(),
            energy_j: "model power x modeled total time".into(),
            wall_s: "measured: emulator on this host (operands in, operation, result out)".into(),
        },
    };
    let report = PimReport::new(&workload, prime_bits, &settings, outcome);
    let host_fallback_s = Some(cost.host_fallback_s);
    Ok(KernelReport::BfvPim(BfvReport { report, computation, keys: FIXED_SEED_KEYS, checked: true, host_fallback_s }))
}

/// Checks the flags that apply to BFV runs and returns the preset of `--n`. Every error names
/// its flag and what is allowed.
fn validate(args: &KernelConfig) -> Result<BfvParameters> {
    let op = args.op.name();
    if args.primes.is_some() {
        return Err(BenchError::usage(format!(
            "--primes does not apply to {op}: it runs on the 128-bit preset of --n (see `pimhe params`)"
        )));
    }
    if args.backend != "upmem-emu" {
        reject_upmem_flags(args)?;
    } else if args.threads.is_some() {
        return Err(BenchError::usage(
            "--threads applies to --backend cpu only (the emulator uses every core of this host)",
        ));
    }
    if args.emulate.as_deref().is_some_and(|e| e != "full") {
        return Err(BenchError::usage(format!(
            "--emulate {} is not allowed for {op}: its ciphertexts are real, so every DPU is emulated (full)",
            args.emulate.as_deref().unwrap_or_default()
        )));
    }
    check_threads(args.threads)?;
    if args.repeat == 0 {
        return Err(BenchError::usage("--repeat 0 is not allowed: at least 1 repeat is needed"));
    }
    if args.batch < 2 || !args.batch.is_multiple_of(2) {
        return Err(BenchError::usage(format!(
            "--batch {} is not allowed for {op}: ciphertexts are combined in pairs, so the batch must be even and \
             at least 2",
            args.batch
        )));
    }
    // A product is relinearized, which needs a key-switching prime.
    let needs_special = args.op == Op::BfvMul;
    let allowed: Vec<usize> = DEGREES
        .iter()
        .copied()
        .filter(|&n| BfvParameters::preset(n).is_ok_and(|p| !needs_special || !p.special_primes().is_empty()))
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
    Ok(BfvParameters::preset(args.n)?)
}

/// Keys, and C/2 + C/2 ciphertexts of random slots with the slots their combination must give.
fn prepare(client: &CpuBackend, ctx: Arc<BfvContext>, op: Op, batch: usize, seed: u64) -> Result<Inputs> {
    let stream = |k: u64| seed_stream(seed, k);
    let mut keygen = KeyGenerator::with_sampler(client, &ctx, stream(0));
    let secret = keygen.secret_key()?;
    let public = keygen.public_key(&secret)?;
    let relin = if op == Op::BfvMul { Some(keygen.relin_key(&secret)?) } else { None };
    let encoder = BatchEncoder::new(&ctx);
    let t = ctx.plain_modulus();
    let (x, y) = random_slots(t, ctx.slots(), batch / 2, stream(1));
    let expected = x
        .iter()
        .zip(&y)
        .map(|(x, y)| {
            // bfv-mul multiplies, bfv-add adds (`validate` let no other op through).
            let combine = |(&a, &b): (&u64, &u64)| match op {
                Op::BfvMul => a * b % u64::from(t.value()),
                _ => (a + b) % u64::from(t.value()),
            };
            x.iter().zip(y).map(combine).collect()
        })
        .collect();
    let mut encryptor = Encryptor::with_public_key(client, &public)?.with_sampler(stream(2));
    let mut encrypt = |values: &[Vec<u64>]| -> Result<CiphertextBatch<CpuBackend>> {
        let plains = values.iter().map(|v| encoder.encode(v)).collect::<pimhe_schemes::Result<Vec<_>>>()?;
        Ok(encryptor.encrypt(&plains)?)
    };
    let (a, b) = (encrypt(&x)?, encrypt(&y)?);
    Ok(Inputs { ctx, secret, relin, encoder, a, b, expected })
}

/// The server's evaluator on `backend`, with the relinearization key when the op needs it.
fn evaluator<'a, B: Backend>(backend: &'a B, inputs: &Inputs) -> Result<Evaluator<'a, B>> {
    let evaluator = Evaluator::new(backend, &inputs.ctx);
    Ok(match &inputs.relin {
        Some(key) => evaluator.with_relin_key(key)?,
        None => evaluator,
    })
}

/// The timed operation.
fn apply<B: Backend>(
    evaluator: &Evaluator<'_, B>,
    op: Op,
    a: &CiphertextBatch<B>,
    b: &CiphertextBatch<B>,
) -> Result<CiphertextBatch<B>> {
    match op {
        Op::BfvMul => Ok(evaluator.relinearize(&evaluator.multiply(a, b)?)?),
        Op::BfvAdd => Ok(evaluator.add(a, b)?),
        other => Err(BenchError::Failed(format!("internal error: {} is not a BFV operation", other.name()))),
    }
}

/// Fails unless every decrypted slot of `result` is the expected one.
fn check(client: &CpuBackend, inputs: &Inputs, result: &CiphertextBatch<CpuBackend>) -> Result<()> {
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
