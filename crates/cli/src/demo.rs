//! `pimhe demo`: BGV end to end on a backend, checked against the plaintext computation.

use std::time::{Duration, Instant};

use clap::Args;
use pimhe_exec::{Backend, CpuBackend};
use pimhe_math::Sampler;
use pimhe_schemes::bgv::{BatchEncoder, BgvContext, BgvParameters, Decryptor, Encryptor, Evaluator, KeyGenerator};

use crate::error::{CliError, Result};

/// Arguments of `pimhe demo`.
#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Ring degree N of the preset parameters (1024 .. 32768; 4096 and up support relinearization)
    #[arg(long, default_value_t = 8192)]
    n: usize,
    /// Number of ciphertexts in each of the two batches
    #[arg(long, default_value_t = 8)]
    batch: usize,
    /// Worker threads of the CPU backend (default: all cores)
    #[arg(long)]
    threads: Option<usize>,
    /// Seed of the random input vectors (the keys and encryptions always use OS randomness)
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

/// Times one step and prints it.
fn step<T>(name: &str, f: impl FnOnce() -> Result<T>) -> Result<(T, Duration)> {
    let start = Instant::now();
    let value = f()?;
    let elapsed = start.elapsed();
    println!("  {name:<34} {:>10.3} ms", elapsed.as_secs_f64() * 1e3);
    Ok((value, elapsed))
}

/// Runs the demo.
pub fn run(args: &DemoArgs) -> Result<()> {
    if args.batch == 0 {
        return Err(CliError::usage("--batch must be at least 1"));
    }
    let backend = CpuBackend::new(args.threads)?;
    let params = BgvParameters::preset(args.n).map_err(|e| CliError::usage(e.to_string()))?;
    println!("pimhe demo: BGV multiplication of two encrypted batches on the {} backend", backend.name());
    println!("  parameters: {params}");
    println!("  batch: {} ciphertext pairs x {} slots, {} threads", args.batch, args.n, backend.threads());
    let ctx = BgvContext::new(params)?;
    let encoder = BatchEncoder::new(&ctx);
    let t = *ctx.plain_modulus();

    // Client: keys, random vectors, encryption.
    let ((secret, public, relin), _) = step("key generation", || {
        let mut keygen = KeyGenerator::new(&backend, &ctx)?;
        let secret = keygen.secret_key()?;
        let public = keygen.public_key(&secret)?;
        let relin = keygen.relin_key(&secret).ok();
        Ok((secret, public, relin))
    })?;
    let mut sampler = Sampler::from_seed_u64(args.seed);
    let mut random_vectors = || -> Vec<Vec<u64>> {
        (0..args.batch).map(|_| sampler.uniform_vec(&t, ctx.slots()).into_iter().map(u64::from).collect()).collect()
    };
    let (x, y) = (random_vectors(), random_vectors());
    let ((cx, cy), _) = step("encode + encrypt (both batches)", || {
        let mut encryptor = Encryptor::with_public_key(&backend, &public)?;
        let encode =
            |v: &Vec<Vec<u64>>| v.iter().map(|v| encoder.encode(v)).collect::<std::result::Result<Vec<_>, _>>();
        Ok((encryptor.encrypt(&encode(&x)?)?, encryptor.encrypt(&encode(&y)?)?))
    })?;

    // Server: multiply, relinearize, switch modulus.
    let evaluator = match &relin {
        Some(key) => Evaluator::new(&backend, &ctx).with_relin_key(key)?,
        None => Evaluator::new(&backend, &ctx),
    };
    let (product, multiply_time) = step("multiply (tensor)", || Ok(evaluator.multiply(&cx, &cy)?))?;
    let (product, server_rest) = if relin.is_some() {
        let (relinearized, relin_time) = step("relinearize", || Ok(evaluator.relinearize(&product)?))?;
        let (switched, switch_time) = step("modulus switch", || Ok(evaluator.mod_switch_to_next(&relinearized)?))?;
        (switched, relin_time + switch_time)
    } else {
        println!("  (no special prime at N={}: relinearization skipped)", args.n);
        (product, Duration::ZERO)
    };

    // Client: decrypt and check against the plaintext product.
    let decryptor = Decryptor::new(&backend, &secret)?;
    let budget = decryptor.noise_budget(&product)?.into_iter().min().unwrap_or(0);
    let (decrypted, _) = step("decrypt + decode", || {
        decryptor.decrypt(&product)?.iter().map(|p| Ok(encoder.decode(p)?)).collect::<Result<Vec<_>>>()
    })?;
    let expected: Vec<Vec<u64>> =
        x.iter().zip(&y).map(|(a, b)| a.iter().zip(b).map(|(&a, &b)| a * b % t.value() as u64).collect()).collect();
    let server = multiply_time + server_rest;
    println!(
        "  server time: {:.3} ms for {} products ({:.3} ms each); remaining noise budget {budget} bits",
        server.as_secs_f64() * 1e3,
        args.batch,
        server.as_secs_f64() * 1e3 / args.batch as f64
    );
    if decrypted != expected {
        let wrong = decrypted.iter().zip(&expected).position(|(a, b)| a != b).unwrap_or(0);
        return Err(CliError::Failed(format!("MISMATCH: ciphertext {wrong} decrypted to a different product")));
    }
    println!("OK: all {} x {} slot products match the plaintext computation", args.batch, ctx.slots());
    Ok(())
}
