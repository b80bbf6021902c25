//! `pimhe demo`: BGV end to end on a backend, checked against the plaintext computation.
//!
//! On `upmem-emu` (the default) the client side (key generation on the CPU, encryption and
//! decryption on the device) surrounds a server computation — multiply, relinearize, switch
//! modulus — that runs on emulated UPMEM DPUs; the demo prints that computation's modeled
//! transfer / compute / retrieve seconds and energy beside the measured time of the same
//! computation on the CPU backend, and checks both results against the plaintext product. On
//! `nearbank` the server computation is recorded, planned into GPU kernels and PIM
//! instructions, and priced on a system of Anaheim's Table III beside "w/o PIM".

use std::time::{Duration, Instant};

use clap::Args;
use pimhe_bench::format::format_seconds;
use pimhe_bench::target::nearbank::NearbankOutcome;
use pimhe_bench::target::upmem::{ModeledServer, PimSettings, DEFAULT_DPUS};
use pimhe_bench::target::what_if::WhatIf;
use pimhe_exec::{Backend, CpuBackend};
use pimhe_math::Sampler;
use pimhe_nearbank::NearbankBackend;
use pimhe_pim::layout::Variant;
use pimhe_pim::runtime::placement::Mode;
use pimhe_pim::runtime::{PimBackend, PimConfig};
use pimhe_ring::memory;
use pimhe_schemes::bgv::{
    BatchEncoder, BgvContext, BgvParameters, CiphertextBatch, Decryptor, Encryptor, Evaluator, KeyGenerator, PublicKey,
    RelinKey, SecretKey,
};
use std::sync::Arc;

use crate::error::{check_threads, CliError, Result};

/// Backends the demo runs on.
const DEMO_BACKENDS: &[&str] = &["upmem-emu", "cpu", "nearbank"];

/// Arguments of `pimhe demo`.
#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Scheme of the demo: bgv (a product of integer vectors, checked exactly) or ckks (a
    /// product, a rotation and a sigmoid of real vectors, checked in bits of precision)
    #[arg(long, default_value = "bgv")]
    pub(crate) scheme: String,
    /// Ring degree N of the preset parameters. bgv: 2048 .. 32768 (1024's preset has no noise
    /// budget for a multiplication; 4096 and up also relinearize and switch modulus); ckks:
    /// 8192 .. 65536
    #[arg(long, default_value_t = 8192)]
    n: usize,
    /// Number of ciphertexts in each of the two batches
    #[arg(long, default_value_t = 8)]
    pub(crate) batch: usize,
    /// Backend of the computation: upmem-emu (emulated UPMEM DPUs with modeled times, beside
    /// the cpu backend's measured time), cpu, or nearbank (a GPU with near-bank PIM, Anaheim:
    /// the results computed on this host, the modeled times beside "w/o PIM")
    #[arg(long, default_value = "upmem-emu")]
    pub(crate) backend: String,
    /// upmem-emu: number of emulated DPUs, 1..=2560 (parallel mode: at least one per prime)
    /// [default: 64]
    #[arg(long)]
    pub(crate) dpus: Option<usize>,
    /// upmem-emu: how the DPUs hold the limbs: ciphertext-major (each DPU whole ciphertexts
    /// with all their limbs: key and modulus switching run on the DPUs), parallel (a DPU group
    /// per prime: those run on the CPU) or sequential [default: the planner's: ciphertext-major
    /// where the preset relinearizes and switches modulus (N >= 4096, and CKKS), else parallel]
    #[arg(long)]
    pub(crate) mode: Option<String>,
    /// upmem-emu: a hardware what-if of DRAMatic's section 5, applied to the model:
    /// mul-cycles=N (32x32 multiplies of N cycles, 2N for a 64-bit product), mul-cycles=N/M,
    /// zero-copy (no host <-> DPU transfer). Repeatable, or comma-separated
    #[arg(long = "what-if", value_name = "WHAT-IF", action = clap::ArgAction::Append)]
    pub(crate) what_if: Vec<String>,
    /// nearbank: the system of Anaheim's Table III, a100-nearbank, a100-custom-hbm or
    /// rtx4090-nearbank [default: a100-nearbank]
    #[arg(long)]
    pub(crate) system: Option<String>,
    /// nearbank: entries B of each PIM unit's data buffer [default: the system's]
    #[arg(long)]
    pub(crate) buffer_entries: Option<usize>,
    /// Worker threads of the CPU backend (default: all cores)
    #[arg(long)]
    pub(crate) threads: Option<usize>,
    /// Seed of the random input vectors (the keys and encryptions always use OS randomness)
    #[arg(long, default_value_t = 1)]
    pub(crate) seed: u64,
}

/// The emulated system of the demo: `dpus` DPUs over `primes` primes in `--mode` (by default
/// the planner's, given whether the computation switches keys and moduli), the best kernel,
/// the model with `--what-if` applied.
pub(crate) fn upmem_settings(args: &DemoArgs, dpus: usize, primes: usize, switches: bool) -> Result<PimSettings> {
    let mode = match &args.mode {
        Some(mode) => pimhe_bench::target::upmem::parse_mode(mode)?,
        None => Mode::choose(switches),
    };
    let what_if = WhatIf::parse(&args.what_if)?;
    Ok(PimSettings::new(dpus, mode, Variant::Best, primes)?.with_what_if(what_if))
}

/// The [`PimConfig`] of [`upmem_settings`].
pub(crate) fn upmem_config(args: &DemoArgs, dpus: usize, primes: usize, switches: bool) -> Result<PimConfig> {
    let settings = upmem_settings(args, dpus, primes, switches)?;
    Ok(settings.config(dpus, settings.mode))
}

/// Times one step and prints it, unless `name` is `None` (a step of the noise probe).
fn step<T>(name: Option<&str>, f: impl FnOnce() -> Result<T>) -> Result<(T, Duration)> {
    let start = Instant::now();
    let value = f()?;
    let elapsed = start.elapsed();
    if let Some(name) = name {
        println!("  {name:<40} {:>10.3} ms", elapsed.as_secs_f64() * 1e3);
    }
    Ok((value, elapsed))
}

/// The client's inputs and keys.
struct Client {
    ctx: Arc<BgvContext>,
    encoder: BatchEncoder,
    secret: SecretKey,
    public: PublicKey,
    relin: Option<RelinKey>,
    x: Vec<Vec<u64>>,
    y: Vec<Vec<u64>>,
}

/// The server computation's result and step times.
struct Served<B: Backend> {
    product: CiphertextBatch<B>,
    time: Duration,
}

/// Runs the demo.
pub fn run(args: &DemoArgs) -> Result<()> {
    if args.batch == 0 {
        return Err(CliError::usage("--batch must be at least 1"));
    }
    if !DEMO_BACKENDS.contains(&args.backend.as_str()) {
        return Err(CliError::usage(format!(
            "--backend {} is not allowed: choose {}",
            args.backend,
            DEMO_BACKENDS.join(" or ")
        )));
    }
    if args.backend != "upmem-emu" && args.dpus.is_some() {
        return Err(CliError::usage("--dpus applies to --backend upmem-emu only"));
    }
    if args.backend != "upmem-emu" && args.mode.is_some() {
        return Err(CliError::usage("--mode applies to --backend upmem-emu only"));
    }
    if args.backend != "upmem-emu" {
        pimhe_bench::target::what_if::reject_on(&args.backend, &args.what_if)?;
    }
    WhatIf::parse(&args.what_if)?;
    if args.backend != "nearbank" {
        pimhe_bench::target::nearbank::reject_flags(&args.backend, args.system.as_deref(), args.buffer_entries)?;
    }
    check_threads(args.threads)?;
    match args.scheme.as_str() {
        "bgv" => {}
        "ckks" => return crate::demo_ckks::run(args, args.n),
        other => return Err(CliError::usage(format!("--scheme {other} is not known; choose bgv or ckks"))),
    }
    let params = BgvParameters::preset(args.n).map_err(|e| CliError::usage(e.to_string()))?;
    memory::ensure_fits(
        &format!("the buffers of --batch {} at --n {}", args.batch, args.n),
        demo_bytes(&params, args.batch, &args.backend),
    )
    .map_err(|e| CliError::usage(format!("{e}; lower --batch")))?;
    let cpu = CpuBackend::new(args.threads)?;
    let primes = params.primes();
    // Relinearization and the modulus switch need a special prime (N >= 4096's presets).
    let switches = !params.special_primes().is_empty();
    let dpus = args.dpus.unwrap_or(DEFAULT_DPUS);
    if args.backend != "upmem-emu" {
        println!("pimhe demo: BGV multiplication of two encrypted batches on the {} backend", args.backend);
    } else {
        // The range (and in parallel mode a DPU per prime), as `bench` checks them.
        let mode = upmem_settings(args, dpus, primes.len(), switches)?.mode;
        println!(
            "pimhe demo: BGV multiplication of two encrypted batches on the upmem-emu backend ({dpus} emulated DPUs, \
             {}, best kernel), beside the cpu backend",
            mode.name()
        );
    }
    println!("  parameters: {params}");
    println!("  batch: {} ciphertext pairs x {} slots, {} CPU threads", args.batch, args.n, cpu.threads());
    let ctx = BgvContext::new(params)?;
    let client = client(&cpu, &ctx, args)?;
    ensure_budget_for_one_product(&cpu, &client)?;

    if args.backend == "nearbank" {
        let model = pimhe_bench::target::nearbank::model(args.system.as_deref(), args.buffer_entries)?;
        let nearbank = NearbankBackend::new(args.threads)?;
        let (cx, cy) = step(Some("encode + encrypt (both batches)"), || encrypt(&nearbank, &client))?.0;
        let evaluator = evaluator(&nearbank, &client)?;
        // Only the server computation is planned (keys and inputs resident, as in Anaheim).
        nearbank.take_trace();
        println!("  server (computed on this host, recorded):");
        let served = serve_with(&evaluator, &client, &cx, &cy, Some("  "))?;
        let outcome = NearbankOutcome::of(&model, &nearbank.take_trace());
        let budget = check(&nearbank, &client, &served.product, "decrypt + decode")?;
        println!("  server on {} (multiply + relinearize + modulus switch):\n{}", outcome.system, outcome.render());
        println!("  remaining noise budget {budget} bits");
    } else if args.backend == "cpu" {
        let (cx, cy) = step(Some("encode + encrypt (both batches)"), || encrypt(&cpu, &client))?.0;
        let served = serve(&cpu, &client, &cx, &cy, Some(""))?;
        let budget = check(&cpu, &client, &served.product, "decrypt + decode")?;
        println!(
            "  server time: {:.3} ms for {} products ({:.3} ms each); remaining noise budget {budget} bits",
            served.time.as_secs_f64() * 1e3,
            args.batch,
            served.time.as_secs_f64() * 1e3 / args.batch as f64
        );
    } else {
        let pim = PimBackend::new(upmem_config(args, dpus, primes.len(), switches)?, args.n, &primes)?;
        let (cx, cy) = step(Some("encode + encrypt (both batches, upmem-emu)"), || encrypt(&pim, &client))?.0;
        // The key upload is setup, not part of the server computation.
        let evaluator = evaluator(&pim, &client)?;
        pim.reset_report()?;
        println!("  server on upmem-emu (emulator wall time; commands are deferred until data must come back):");
        let served = serve_with(&evaluator, &client, &cx, &cy, Some("  "))?;
        let (_, download_time) = step(Some("  download the result"), || {
            served.product.parts().iter().try_for_each(|p| pim.download(p).map(drop))?;
            Ok(())
        })?;
        let report = pim.report()?;
        let budget = check(&pim, &client, &served.product, "decrypt + decode (upmem-emu)")?;

        println!("  server on cpu (same computation, measured):");
        let (cpu_x, cpu_y) = encrypt(&cpu, &client)?;
        let cpu_served = serve(&cpu, &client, &cpu_x, &cpu_y, Some("  "))?;
        check(&cpu, &client, &cpu_served.product, "decrypt + decode (cpu)")?;

        // The input ciphertexts: 2 batches x 2 components at the top level, as a server would
        // receive them; they were made on the device here, so their upload is modeled.
        let data_slots: Vec<usize> = (0..client.ctx.params().data_primes().len()).collect();
        let modeled = ModeledServer::new(
            &pim,
            &report,
            dpus,
            primes.len(),
            (4, &data_slots, args.batch, args.n),
            "multiply + relinearize + modulus switch, result retrieved",
        )?;
        println!("{}", modeled.render());
        let total_s = modeled.total_s;
        let fallback_note = if report.fallbacks > 0 {
            format!(
                " (base conversion, ModDown and modulus switching on the host: {} measured)",
                format_seconds(report.host_fallback_s)
            )
        } else {
            String::new()
        };
        println!("    launches {}, fallbacks {}{fallback_note}", report.launches, report.fallbacks);
        if pim.config().mode == Mode::CiphertextMajor {
            println!(
                "    (ciphertext-major: each DPU holds whole ciphertexts, so at most --batch of the {dpus} DPUs work; \
                 --mode parallel spreads the limbs and runs the conversions on the host; `pimhe advise --mode` \
                 compares both at scale)"
            );
        }
        println!(
            "  side by side: upmem-emu {} modeled (+ {} host fallback) vs cpu {} measured ({} threads); emulator wall \
             time {}",
            format_seconds(total_s),
            format_seconds(report.host_fallback_s),
            format_seconds(cpu_served.time.as_secs_f64()),
            cpu.threads(),
            format_seconds((served.time + download_time).as_secs_f64())
        );
        println!("  remaining noise budget {budget} bits");
    }
    println!("OK: all {} x {} slot products match the plaintext computation", args.batch, ctx.slots());
    Ok(())
}

/// Keys (on the CPU) and the random input vectors.
fn client(cpu: &CpuBackend, ctx: &Arc<BgvContext>, args: &DemoArgs) -> Result<Client> {
    let ((secret, public, relin), _) = step(Some("key generation (cpu)"), || {
        let mut keygen = KeyGenerator::new(cpu, ctx)?;
        let secret = keygen.secret_key()?;
        let public = keygen.public_key(&secret)?;
        let relin = keygen.relin_key(&secret).ok();
        Ok((secret, public, relin))
    })?;
    let t = *ctx.plain_modulus();
    let mut sampler = Sampler::from_seed_u64(args.seed);
    let mut random_vectors = || -> Vec<Vec<u64>> {
        (0..args.batch).map(|_| sampler.uniform_vec(&t, ctx.slots()).into_iter().map(u64::from).collect()).collect()
    };
    let (x, y) = (random_vectors(), random_vectors());
    Ok(Client { ctx: ctx.clone(), encoder: BatchEncoder::new(ctx), secret, public, relin, x, y })
}

fn encrypt<B: Backend>(backend: &B, client: &Client) -> Result<(CiphertextBatch<B>, CiphertextBatch<B>)> {
    let mut encryptor = Encryptor::with_public_key(backend, &client.public)?;
    let encode =
        |v: &Vec<Vec<u64>>| v.iter().map(|v| client.encoder.encode(v)).collect::<std::result::Result<Vec<_>, _>>();
    Ok((encryptor.encrypt(&encode(&client.x)?)?, encryptor.encrypt(&encode(&client.y)?)?))
}

fn evaluator<'a, B: Backend>(backend: &'a B, client: &Client) -> Result<Evaluator<'a, B>> {
    Ok(match &client.relin {
        Some(key) => Evaluator::new(backend, &client.ctx).with_relin_key(key)?,
        None => Evaluator::new(backend, &client.ctx),
    })
}

/// Multiply, relinearize and switch modulus (the last two when a special prime exists), each
/// step timed and printed with `indent` (not printed with `None`).
fn serve<B: Backend>(
    backend: &B,
    client: &Client,
    cx: &CiphertextBatch<B>,
    cy: &CiphertextBatch<B>,
    indent: Option<&str>,
) -> Result<Served<B>> {
    let evaluator = evaluator(backend, client)?;
    serve_with(&evaluator, client, cx, cy, indent)
}

fn serve_with<B: Backend>(
    evaluator: &Evaluator<'_, B>,
    client: &Client,
    cx: &CiphertextBatch<B>,
    cy: &CiphertextBatch<B>,
    indent: Option<&str>,
) -> Result<Served<B>> {
    let name = |step: &str| indent.map(|indent| format!("{indent}{step}"));
    let (product, multiply_time) = step(name("multiply (tensor)").as_deref(), || Ok(evaluator.multiply(cx, cy)?))?;
    if client.relin.is_none() {
        if let Some(indent) = indent {
            println!("  {indent}(no special prime at N={}: relinearization skipped)", client.ctx.degree());
        }
        return Ok(Served { product, time: multiply_time });
    }
    let (relinearized, relin_time) = step(name("relinearize").as_deref(), || Ok(evaluator.relinearize(&product)?))?;
    let (switched, switch_time) =
        step(name("modulus switch").as_deref(), || Ok(evaluator.mod_switch_to_next(&relinearized)?))?;
    Ok(Served { product: switched, time: multiply_time + relin_time + switch_time })
}

/// Refuses, before the batch is encrypted, a preset whose noise budget does not survive the
/// demo's computation: the same steps on one ciphertext of the largest slot values, unprinted.
fn ensure_budget_for_one_product(cpu: &CpuBackend, client: &Client) -> Result<()> {
    let t = client.ctx.plain_modulus().value() as u64;
    let largest = client.encoder.encode(&vec![t - 1; client.ctx.slots()])?;
    let ciphertext = Encryptor::with_public_key(cpu, &client.public)?.encrypt(&[largest])?;
    let served = serve(cpu, client, &ciphertext, &ciphertext, None)?;
    let budget = Decryptor::new(cpu, &client.secret)?.noise_budget(&served.product)?[0];
    if budget == 0 {
        let params = client.ctx.params();
        return Err(CliError::usage(format!(
            "--n {}: its preset ({params}) supports encryption and additions but leaves no noise budget after one \
             multiplication; use --n 2048 or more (4096 and up also relinearize and switch modulus)",
            client.ctx.degree()
        )));
    }
    Ok(())
}

/// What the demo allocates for `batch` ciphertext pairs, in bytes: the random inputs (64-bit)
/// and their plaintexts, both input batches, the product and relinearization's digits, all over
/// the top modulus with the special primes; twice on `upmem-emu` (the emulated MRAM holds a
/// copy, and the same computation runs again on the CPU).
fn demo_bytes(params: &BgvParameters, batch: usize, backend: &str) -> u128 {
    let primes = params.primes().len();
    let ciphertext_words = 2 * 2 + 3 + 2 * (params.dnum() + 2);
    let per_coefficient = 2 * 8 + 2 * 4 + 4 * primes * ciphertext_words;
    let copies = if backend == "upmem-emu" { 2 } else { 1 };
    memory::bytes(&[batch, params.degree(), per_coefficient, copies], 1)
}

/// Decrypts, checks every slot against the plaintext product, returns the noise budget left.
fn check<B: Backend>(backend: &B, client: &Client, product: &CiphertextBatch<B>, name: &str) -> Result<u32> {
    let decryptor = Decryptor::new(backend, &client.secret)?;
    let budget = decryptor.noise_budget(product)?.into_iter().min().unwrap_or(0);
    let (decrypted, _) = step(Some(&format!("{}{name}", if name.contains('(') { "  " } else { "" })), || {
        decryptor.decrypt(product)?.iter().map(|p| Ok(client.encoder.decode(p)?)).collect::<Result<Vec<_>>>()
    })?;
    let t = client.ctx.plain_modulus().value() as u64;
    let expected: Vec<Vec<u64>> =
        client.x.iter().zip(&client.y).map(|(a, b)| a.iter().zip(b).map(|(&a, &b)| a * b % t).collect()).collect();
    if decrypted != expected {
        let wrong = decrypted.iter().zip(&expected).position(|(a, b)| a != b).unwrap_or(0);
        return Err(CliError::Failed(format!(
            "MISMATCH ({name}): ciphertext {wrong} decrypted to a different product"
        )));
    }
    Ok(budget)
}
