//! CKKS scheme benchmarks (`pimhe bench scheme --scheme ckks`): time CKKS's operations on ciphertext batches made with a
//! 128-bit preset, for the comparison with OpenFHE and SEAL (bench/compare/): encode + encrypt,
//! decrypt + decode, add, multiply + relinearize + rescale, rescale, a rotation, 8 hoisted
//! rotations, a 64 x 64 linear transform and a sigmoid (in the least depth, and where the
//! preset has it, with one level more, as OpenFHE evaluates it). The warm-up round decrypts the product
//! and every other result and checks each against the plaintext computation, and measures the
//! precision of one multiplication in bits: a report is never the time of a wrong computation.
//!
//! The inputs are the same on every library: [`input_value`] (bench/compare/peer_common.py has
//! its twin), so precisions are compared on the same numbers.

use std::sync::Arc;

use num_complex::Complex64;
use pimhe_exec::Backend;
use pimhe_schemes::ckks::linear::LinearTransform;
use pimhe_schemes::ckks::polynomial::ChebyshevSeries;
use pimhe_schemes::ckks::{
    CiphertextBatch, CkksContext, CkksParameters, Decryptor, Encoder, Encryptor, Evaluator, KeyGenerator,
    PrecisionStats,
};
use pimhe_schemes::SchemeError;
use pimhe_workloads::progress::Progress;
use serde::Serialize;

use super::bandwidth_use::ciphertext_bytes;
use super::config::SchemeConfig;
use super::on_backend::on_backend;
use super::rounds::attach;
use super::rounds::{ops_table, time_rounds, BenchOnBackend, OpObserver, OpTiming, Rounds};
use crate::error::{BenchError, Result};
use crate::format::{Render, FIXED_SEED_KEYS};
use crate::measure::inputs::seed_stream;
use crate::measure::scheme::modeled::{ModeledOps, OpRecorder};
use pimhe_nearbank::isa::Program;
use pimhe_nearbank::NearbankBackend;

/// Slots of the linear transform's ciphertexts and size of its matrix.
const TRANSFORM_SLOTS: usize = 64;

/// Rotations of the hoisted row.
const HOISTED: i64 = 8;

/// The sigmoid's interval and the largest degree timed (less where the preset lacks the depth).
const SIGMOID_INTERVAL: (f64, f64) = (-8.0, 8.0);
const SIGMOID_DEGREE: usize = 31;

/// The parameters a CKKS report was measured with.
#[derive(Debug, Clone, Serialize)]
pub struct CkksBenchParams {
    n: usize,
    slots: usize,
    depth: usize,
    scale_bits: u32,
    primes_per_level: usize,
    data_prime_bits: Vec<u32>,
    special_prime_bits: Vec<u32>,
    dnum: usize,
    /// Bits of a fresh ciphertext's modulus (the data primes).
    log_q_ciphertext: u32,
    /// Bits of every prime, the special primes included (what the 128-bit table bounds).
    log_q_total: u32,
}

/// The result of `pimhe bench scheme --scheme ckks` (`--json` serialises it as one object).
#[derive(Debug, Clone, Serialize)]
pub struct CkksReport {
    scheme: &'static str,
    backend: &'static str,
    n: usize,
    batch: usize,
    threads: usize,
    repeats: usize,
    seed: u64,
    keys: &'static str,
    params: CkksBenchParams,
    /// Whether every result decrypted to the plaintext computation within its bound.
    checked: bool,
    /// Degree of the timed sigmoid approximation.
    sigmoid_degree: usize,
    /// Bits of precision of x * y after one multiply + relinearize + rescale, against the
    /// plaintext product of the same inputs.
    precision_after_multiply: PrecisionRow,
    ops: Vec<OpTiming>,
    /// nearbank: each operation's modeled cost on the GPU + near-bank PIM system.
    #[serde(skip_serializing_if = "Option::is_none")]
    modeled: Option<ModeledOps>,
}

/// [`PrecisionStats`] as the report serialises it.
#[derive(Debug, Clone, Serialize)]
struct PrecisionRow {
    slots: usize,
    min_bits: f64,
    mean_bits: f64,
    median_bits: f64,
    max_bits: f64,
    max_error: f64,
    mean_error: f64,
    #[serde(skip)]
    text: String,
}

impl From<PrecisionStats> for PrecisionRow {
    fn from(p: PrecisionStats) -> Self {
        Self {
            slots: p.slots,
            min_bits: p.min_bits,
            mean_bits: p.mean_bits,
            median_bits: p.median_bits,
            max_bits: p.max_bits,
            max_error: p.max_error,
            mean_error: p.mean_error,
            text: p.to_string(),
        }
    }
}

impl Render for CkksReport {
    fn render(&self) -> String {
        let p = &self.params;
        let mut text = format!(
            "ckks backend={} n={} batch={} threads={} (best and median of {} after a warm-up, seed {}; {})\n  \
             depth={} scale=2^{} ({} primes/level) log2(q)={} ciphertext, {} total, dnum={}; every result checked; \
             precision after one multiply: {}\n",
            self.backend,
            self.n,
            self.batch,
            self.threads,
            self.repeats,
            self.seed,
            self.keys,
            p.depth,
            p.scale_bits,
            p.primes_per_level,
            p.log_q_ciphertext,
            p.log_q_total,
            p.dnum,
            self.precision_after_multiply.text,
        );
        text.push_str(&ops_table(&self.ops, 24));
        if let Some(modeled) = &self.modeled {
            text.push_str(&modeled.render(24));
        }
        text
    }
}

/// Input value `i` of stream `stream` (0: x, 1: y, 2: the matrix) for `seed`, in [-1, 1): a
/// multiplicative hash simple enough to compute identically in every library's harness
/// (bench/compare/peer_common.py, `input_value`).
pub fn input_value(i: usize, seed: u64, stream: u64) -> f64 {
    let h = (i as u64).wrapping_mul(2_654_435_761).wrapping_add((seed * 2 + stream).wrapping_mul(1_013_904_223))
        & 0xffff_ffff;
    h as f64 / 2f64.powi(31) - 1.0
}

/// Measures (the configuration's common checks are the caller's: [`super::measure`]).
pub fn measure(args: &SchemeConfig, progress: &dyn Progress) -> Result<CkksReport> {
    let params = parameters(args)?;
    let bits = |primes: &[u32]| primes.iter().map(|&p| 32 - p.leading_zeros()).collect::<Vec<u32>>();
    let report_params = CkksBenchParams {
        n: params.degree(),
        slots: params.max_slots(),
        depth: params.depth(),
        scale_bits: params.scale_bits(),
        primes_per_level: params.primes_per_level(),
        data_prime_bits: bits(params.rlwe().data_primes()),
        special_prime_bits: bits(params.rlwe().special_primes()),
        dnum: params.rlwe().dnum(),
        log_q_ciphertext: bits(params.rlwe().data_primes()).iter().sum(),
        log_q_total: params.rlwe().total_bits(),
    };
    let ctx = CkksContext::new(params)?;
    let (backend, threads, (mut ops, precision, sigmoid_degree), modeled, bandwidth) =
        on_backend(args, CkksBench { ctx: &ctx, args, progress })?;
    if let Some(gb_per_s) = bandwidth {
        attach(&mut ops, gb_per_s);
    }
    Ok(CkksReport {
        scheme: "ckks",
        backend,
        n: args.n,
        batch: args.batch,
        threads,
        repeats: args.repeat,
        seed: args.seed,
        keys: FIXED_SEED_KEYS,
        params: report_params,
        checked: true,
        sigmoid_degree,
        precision_after_multiply: precision.into(),
        ops,
        modeled,
    })
}

/// The CKKS parameters of `args`: the preset of `--n`, with the scale of `--scale-bits` and
/// `--dnum` digits if given. The depth is the preset's, or with `--dnum` the longest chain up to
/// it that stays 128-bit secure (fewer digits mean more special primes: the chain shortens).
fn parameters(args: &SchemeConfig) -> Result<CkksParameters> {
    let preset = CkksParameters::preset(args.n).map_err(|e| BenchError::usage(format!("--n {}: {e}", args.n)))?;
    if args.dnum.is_none() && args.scale_bits.is_none() {
        return Ok(preset);
    }
    let dnum = args.dnum.unwrap_or_else(|| preset.rlwe().dnum());
    let scale_bits = args.scale_bits.unwrap_or_else(|| preset.scale_bits());
    let build = |depth| CkksParameters::builder(args.n).depth(depth).scale_bits(scale_bits).dnum(dnum).build();
    let deepest = build(preset.depth());
    if args.dnum.is_none() {
        return deepest.map_err(|e| refused(args, dnum, scale_bits, preset.depth(), e));
    }
    deepest
        .or_else(|e| (1..preset.depth()).rev().find_map(|depth| build(depth).ok()).ok_or(e))
        .map_err(|e| refused(args, dnum, scale_bits, preset.depth(), e))
}

fn refused(args: &SchemeConfig, dnum: usize, scale_bits: u32, depth: usize, e: SchemeError) -> BenchError {
    BenchError::usage(format!(
        "--dnum {dnum} with --scale-bits {scale_bits} is not allowed at --n {} (depth {depth}): {e}",
        args.n
    ))
}

/// The benchmark's operations recorded on the nearbank backend and planned, each result
/// checked as [`measure`] checks it: what Anaheim's reproduction prices on every system.
/// Returns the parameters' dnum beside the programs.
pub fn programs(args: &SchemeConfig, progress: &dyn Progress) -> Result<(usize, Vec<(&'static str, Program)>)> {
    let params = parameters(args)?;
    let dnum = params.rlwe().dnum();
    let ctx = CkksContext::new(params)?;
    let backend = NearbankBackend::new(args.target.threads())?;
    let recorder = OpRecorder::new(&backend);
    bench(&backend, &ctx, args, progress, Some(&recorder))?;
    Ok((dnum, recorder.programs()))
}

/// The largest slot error of decrypted batches against the expected vectors.
fn max_error(got: &[Vec<Complex64>], expected: &[Vec<Complex64>]) -> f64 {
    got.iter().zip(expected).flat_map(|(g, e)| g.iter().zip(e).map(|(a, b)| (a - b).norm())).fold(0.0, f64::max)
}

/// Fails unless `got` is within `bound` of `expected` slot by slot.
fn check(op: &str, got: &[Vec<Complex64>], expected: &[Vec<Complex64>], bound: f64) -> Result<()> {
    let error = max_error(got, expected);
    if error <= bound {
        Ok(())
    } else {
        Err(BenchError::Failed(format!("internal error: {op} decrypted {error:e} away from the plaintext result")))
    }
}

/// [`bench`] on any backend.
struct CkksBench<'a> {
    ctx: &'a Arc<CkksContext>,
    args: &'a SchemeConfig,
    progress: &'a dyn Progress,
}

impl BenchOnBackend<(Vec<OpTiming>, PrecisionStats, usize)> for CkksBench<'_> {
    fn call<B: Backend>(
        &self,
        backend: &B,
        observer: Option<&dyn OpObserver>,
    ) -> Result<(Vec<OpTiming>, PrecisionStats, usize)> {
        bench(backend, self.ctx, self.args, self.progress, observer)
    }
}

/// Times every operation; returns the timings, the precision after one multiplication and the
/// sigmoid's degree.
fn bench<B: Backend>(
    backend: &B,
    ctx: &Arc<CkksContext>,
    args: &SchemeConfig,
    progress: &dyn Progress,
    observer: Option<&dyn OpObserver>,
) -> Result<(Vec<OpTiming>, PrecisionStats, usize)> {
    let (batch, seed) = (args.batch, args.seed);
    let slots = ctx.max_slots();
    let scale = ctx.default_scale();
    let vectors = |stream: u64| -> Vec<Vec<Complex64>> {
        (0..batch)
            .map(|k| (0..slots).map(|i| Complex64::new(input_value(k * slots + i, seed, stream), 0.0)).collect())
            .collect()
    };
    let (x, y) = (vectors(0), vectors(1));
    let matrix: Vec<Vec<Complex64>> = (0..TRANSFORM_SLOTS)
        .map(|r| {
            (0..TRANSFORM_SLOTS)
                .map(|c| Complex64::new(input_value(r * TRANSFORM_SLOTS + c, seed, 2) / 8.0, 0.0))
                .collect()
        })
        .collect();
    let transform = LinearTransform::from_matrix(&matrix)?;
    // The deepest sigmoid the preset allows after the fresh level (a degree 2^k - 1 needs k + 1 levels).
    let sigmoid_degree = (1..=SIGMOID_DEGREE)
        .rev()
        .find(|&d| {
            (d + 1).is_power_of_two()
                && ChebyshevSeries::sigmoid(SIGMOID_INTERVAL, d).is_ok_and(|p| p.depth() <= ctx.params().depth())
        })
        .unwrap_or(1);
    let sigmoid = ChebyshevSeries::sigmoid(SIGMOID_INTERVAL, sigmoid_degree)?;
    // The same series with a level more than the least, where the preset has it: fewer products
    // (evaluate_polynomial_in_levels), and the depth OpenFHE's EvalChebyshevFunction takes for
    // it (7 levels at degree 31 on [-8, 8]), so this row is the like-for-like comparison.
    let spare_level = (sigmoid.depth() < ctx.params().depth()).then_some(sigmoid.depth() + 1);

    let stream = |k: u64| seed_stream(seed, k);
    let mut keygen = KeyGenerator::with_sampler(backend, ctx, stream(0));
    let secret = keygen.secret_key()?;
    let public = keygen.public_key(&secret)?;
    let relin = keygen.relin_key(&secret)?;
    let mut steps: Vec<i64> = (1..=HOISTED).collect();
    steps.extend(transform.rotations());
    // The Galois keys are the long part of the key generation (one key-switching key each).
    let elements = ctx.galois_elements(&steps, false);
    progress.start(elements.len() as u64, "Galois keys");
    let galois = keygen.galois_keys(&secret, &elements);
    progress.advance(elements.len() as u64);
    progress.finish();
    let galois = galois?;
    let encoder = Encoder::new(ctx);
    let mut encryptor = Encryptor::with_public_key(backend, &public)?.with_sampler(stream(2));
    let evaluator = Evaluator::new(backend, ctx).with_relin_key(&relin)?.with_galois_keys(&galois)?;
    let decryptor = Decryptor::new(backend, &secret)?;
    let encode = |values: &[Vec<Complex64>], slots: usize| {
        values.iter().map(|v| encoder.encode_sparse(v, slots, scale)).collect::<pimhe_schemes::Result<Vec<_>>>()
    };
    let decrypt = |c: &CiphertextBatch<B>| -> Result<Vec<Vec<Complex64>>> {
        Ok(decryptor.decrypt(c)?.iter().map(|p| encoder.decode(p)).collect::<pimhe_schemes::Result<Vec<_>>>()?)
    };
    let cy = encryptor.encrypt(&encode(&y, slots)?)?;
    let short: Vec<Vec<Complex64>> = x.iter().map(|v| v[..TRANSFORM_SLOTS].to_vec()).collect();
    let c_short = encryptor.encrypt(&encode(&short, TRANSFORM_SLOTS)?)?;
    let prepared = evaluator.prepare_linear_transform(&transform, c_short.level())?;

    let mut rounds = Rounds::new(observer);
    let mut precision = None;
    progress.start(args.repeat as u64 + 1, "rounds");
    time_rounds(args.repeat, progress, |round| {
        let cx = rounds.time("encrypt", || Ok(encryptor.encrypt(&encode(&x, slots)?)?))?;
        let decrypted = rounds.time("decrypt", || decrypt(&cx))?;
        let sum = rounds.time("add", || Ok(evaluator.add(&cx, &cy)?))?;
        rounds.moves("add", [&cx, &cy, &sum].map(|c| ciphertext_bytes(backend, c)).iter().sum());
        let product = rounds.time("multiply_relin_rescale", || Ok(evaluator.multiply_relin_rescale(&cx, &cy)?))?;
        let unscaled = evaluator.relinearize(&evaluator.multiply(&cx, &cy)?)?;
        let rescaled = rounds.time("rescale", || Ok(evaluator.rescale(&unscaled)?))?;
        rounds.moves("rescale", ciphertext_bytes(backend, &unscaled) + ciphertext_bytes(backend, &rescaled));
        let rotated = rounds.time("rotate", || Ok(evaluator.rotate(&cx, 1)?))?;
        let hoisted =
            rounds.time("rotate_hoisted_8", || Ok(evaluator.rotate_hoisted(&cx, &steps[..HOISTED as usize])?))?;
        let transformed =
            rounds.time("linear_transform_64", || Ok(evaluator.apply_linear_transform(&c_short, &prepared)?))?;
        let activated = rounds.time("sigmoid", || Ok(evaluator.evaluate_polynomial(&cx, &sigmoid)?))?;
        let spared = spare_level
            .map(|levels| {
                rounds
                    .time("sigmoid_spare_level", || Ok(evaluator.evaluate_polynomial_in_levels(&cx, &sigmoid, levels)?))
            })
            .transpose()?;
        if round == 0 {
            let map = |f: &dyn Fn(usize, usize) -> Complex64, len: usize| -> Vec<Vec<Complex64>> {
                (0..batch).map(|k| (0..len).map(|i| f(k, i)).collect()).collect()
            };
            check("decrypt", &decrypted, &x, 1e-5)?;
            check("add", &decrypt(&sum)?, &map(&|k, i| x[k][i] + y[k][i], slots), 1e-5)?;
            let expected_product = map(&|k, i| x[k][i] * y[k][i], slots);
            let got = decrypt(&product)?;
            check("multiply", &got, &expected_product, 1e-4)?;
            precision = Some(pimhe_schemes::ckks::precision::precision(&got.concat(), &expected_product.concat()));
            check("rotate", &decrypt(&rotated)?, &map(&|k, i| x[k][(i + 1) % slots], slots), 1e-4)?;
            for (s, h) in steps[..HOISTED as usize].iter().zip(&hoisted) {
                let step = *s as usize;
                check("hoisted rotate", &decrypt(h)?, &map(&|k, i| x[k][(i + step) % slots], slots), 1e-4)?;
            }
            let expected = map(&|k, i| transform.apply_plain(&short[k])[i], TRANSFORM_SLOTS);
            check("linear transform", &decrypt(&transformed)?, &expected, 1e-3)?;
            let expected = map(&|k, i| Complex64::new(sigmoid.evaluate_plain(x[k][i].re), 0.0), slots);
            check("sigmoid", &decrypt(&activated)?, &expected, 1e-3)?;
            if let Some(spared) = &spared {
                check("sigmoid with a spare level", &decrypt(spared)?, &expected, 1e-3)?;
            }
        }
        Ok(())
    })?;
    let precision = precision.expect("the warm-up round measured it");
    Ok((rounds.finish(batch), precision, sigmoid_degree))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::target::Target;

    #[test]
    fn input_values_are_in_range_and_match_the_python_twin() {
        // bench/compare/peer_common.py: input_value(0, 1, 0) .. computed by hand here.
        let h = (2u64 * 1_013_904_223) & 0xffff_ffff;
        assert_eq!(input_value(0, 1, 0), h as f64 / 2f64.powi(31) - 1.0);
        assert!((0..10_000).all(|i| (-1.0..1.0).contains(&input_value(i, 7, 1))));
    }

    #[test]
    fn scale_bits_keep_the_presets_depth_and_dnum() {
        let args = |dnum, scale_bits| SchemeConfig {
            scheme: "ckks".into(),
            n: 16384,
            batch: 1,
            target: Target::Cpu { threads: Some(1) },
            repeat: 1,
            seed: 1,
            dnum,
            scale_bits,
            case: None,
        };
        let preset = CkksParameters::preset(16384).unwrap();
        assert_eq!(parameters(&args(None, None)).unwrap(), preset);
        let at_29 = parameters(&args(None, Some(29))).unwrap();
        assert_eq!(
            (at_29.depth(), at_29.scale_bits(), at_29.rlwe().dnum()),
            (preset.depth(), 29, preset.rlwe().dnum())
        );
        assert!(at_29.rlwe().total_bits() < preset.rlwe().total_bits());
        // Fewer digits take more special primes: the chain shortens to stay 128-bit secure.
        let few = parameters(&args(Some(2), None)).unwrap();
        assert_eq!(few.rlwe().dnum(), 2);
        assert!(few.depth() < preset.depth() && few.security_bits() == Some(128), "{few}");
        let longer = CkksParameters::builder(16384).depth(few.depth() + 1).scale_bits(50).dnum(2).build();
        assert!(longer.is_err(), "the chain is the longest secure one");
        // A scale beyond what the builder allows is a usage error naming the options.
        match parameters(&args(None, Some(70))) {
            Err(BenchError::Usage(message)) => assert!(message.contains("--scale-bits 70"), "{message}"),
            other => panic!("expected a usage error, got {other:?}"),
        }
    }
}
