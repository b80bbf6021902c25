//! BGV's and BFV's operations timed per batch ([`measure_exact`]), and BFV's basic operations
//! for the CE-RAM reproduction ([`measure_bfv_ops`]).

use std::sync::Arc;

use pimhe_exec::{Backend, CpuBackend};
use pimhe_schemes::bfv::{BfvContext, BfvParameters};
use pimhe_schemes::bgv::{BgvContext, BgvParameters};
use pimhe_schemes::encoder::{BatchEncoder, ExactScheme, PlainContext};
use pimhe_schemes::rlwe::{CiphertextBatch, Decryptor, Encryptor, Evaluator, KeyGenerator};
use pimhe_schemes::SchemeError;
use pimhe_workloads::progress::Progress;
use serde::Serialize;

use crate::error::{check_threads, BenchError, Result};
use crate::format::{Render, FIXED_SEED_KEYS};
use crate::measure::inputs::{random_slots, seed_stream};

use super::bandwidth_use::ciphertext_bytes;
use super::config::{validate, SchemeConfig};
use super::modeled::ModeledOps;
use super::on_backend::on_backend;
use super::rounds::attach;
use super::rounds::{check_product, check_slots, ops_table, time_rounds, BenchOnBackend, OpObserver, OpTiming, Rounds};

/// The parameters a report was measured with.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SchemeParams {
    n: usize,
    plain_modulus: u32,
    data_primes: Vec<u32>,
    data_prime_bits: Vec<u32>,
    special_primes: Vec<u32>,
    special_prime_bits: Vec<u32>,
    /// Key-switching digits: the data primes form dnum groups, P has ceil(L / dnum) primes.
    dnum: usize,
    /// Bits of the modulus of a fresh ciphertext (the data primes): what an NTT transforms.
    log_q_ciphertext: u32,
    /// Bits of every prime, the special prime included (the total SEAL and the 128-bit table count).
    log_q_total: u32,
}

impl SchemeParams {
    /// BFV's are read the same way: its ciphertext primes are BGV's data primes.
    fn from_bgv(params: &BgvParameters) -> Self {
        let bits = |p: u32| 32 - p.leading_zeros();
        let data_prime_bits: Vec<u32> = params.data_primes().iter().map(|&p| bits(p)).collect();
        Self {
            n: params.degree(),
            plain_modulus: params.plain_modulus(),
            data_primes: params.data_primes().to_vec(),
            log_q_ciphertext: data_prime_bits.iter().sum(),
            data_prime_bits,
            special_primes: params.special_primes().to_vec(),
            special_prime_bits: params.special_primes().iter().map(|&p| bits(p)).collect(),
            dnum: params.dnum(),
            log_q_total: params.total_bits(),
        }
    }
}

impl SchemeParams {
    /// Bits of the ciphertext modulus (the data primes).
    pub fn log_q_ciphertext(&self) -> u32 {
        self.log_q_ciphertext
    }
    /// Bits of every prime, the special primes included.
    pub fn log_q_total(&self) -> u32 {
        self.log_q_total
    }
    /// Bits of each data prime.
    pub fn data_prime_bits(&self) -> &[u32] {
        &self.data_prime_bits
    }
    /// Bits of each special prime.
    pub fn special_prime_bits(&self) -> &[u32] {
        &self.special_prime_bits
    }
}

/// The result of `pimhe bench scheme` (`--json` serialises it as one object).
#[derive(Debug, Clone, Serialize)]
pub struct SchemeReport {
    scheme: &'static str,
    backend: &'static str,
    n: usize,
    batch: usize,
    threads: usize,
    repeats: usize,
    seed: u64,
    /// Where the keys come from: always the seed here ([`FIXED_SEED_KEYS`]).
    keys: &'static str,
    params: SchemeParams,
    /// Whether the decrypted product matched the slot-wise plaintext product (always true in a
    /// printed report: a mismatch is an error).
    checked: bool,
    ops: Vec<OpTiming>,
    /// nearbank: each operation's modeled cost on the GPU + near-bank PIM system.
    #[serde(skip_serializing_if = "Option::is_none")]
    modeled: Option<ModeledOps>,
}

impl Render for SchemeReport {
    /// The parameters, then one line per operation.
    fn render(&self) -> String {
        let p = &self.params;
        let data_bits = match (p.data_prime_bits.iter().min(), p.data_prime_bits.iter().max()) {
            (Some(lo), Some(hi)) if lo == hi => format!("{lo}"),
            (Some(lo), Some(hi)) => format!("{lo}-{hi}"),
            _ => "-".to_string(),
        };
        let mut text = format!(
            "{} backend={} n={} batch={} threads={} (best and median of {} after a warm-up, seed {}; {})\n  t={} data primes={}x{}b \
             special={} log2(q)={} ciphertext, {} total; product checked against the plaintext\n",
            self.scheme,
            self.backend,
            self.n,
            self.batch,
            self.threads,
            self.repeats,
            self.seed,
            self.keys,
            p.plain_modulus,
            p.data_primes.len(),
            data_bits,
            match p.special_prime_bits.as_slice() {
                [] => "none".to_string(),
                [first, ..] => format!("{}x{first}b dnum={}", p.special_prime_bits.len(), p.dnum),
            },
            p.log_q_ciphertext,
            p.log_q_total,
        );
        text.push_str(&ops_table(&self.ops, 16));
        if let Some(modeled) = &self.modeled {
            text.push_str(&modeled.render(16));
        }
        text
    }
}

/// [`measure`] for BGV and BFV.
pub fn measure_exact(args: &SchemeConfig, progress: &dyn Progress) -> Result<SchemeReport> {
    let params = validate(args)?;
    let (backend, threads, mut ops, modeled, bandwidth) =
        on_backend(args, ExactBench { args, params: &params, progress })?;
    if let Some(gb_per_s) = bandwidth {
        attach(&mut ops, gb_per_s);
    }
    Ok(SchemeReport {
        scheme: if args.scheme == "bfv" { "bfv" } else { "bgv" },
        backend,
        n: args.n,
        batch: args.batch,
        threads,
        repeats: args.repeat,
        seed: args.seed,
        keys: FIXED_SEED_KEYS,
        params: SchemeParams::from_bgv(&params),
        checked: true,
        ops,
        modeled,
    })
}

/// [`bench_exact`] of `--scheme` on any backend.
struct ExactBench<'a> {
    args: &'a SchemeConfig,
    params: &'a BgvParameters,
    progress: &'a dyn Progress,
}

impl BenchOnBackend<Vec<OpTiming>> for ExactBench<'_> {
    fn call<B: Backend>(&self, backend: &B, observer: Option<&dyn OpObserver>) -> Result<Vec<OpTiming>> {
        let run = (self.args.batch, self.args.repeat, self.args.seed);
        match self.args.scheme.as_str() {
            // BFV has no modulus chain: the relinearized product is checked as it is.
            "bfv" => {
                let ctx = BfvContext::new(BfvParameters::from(self.params.clone()))?;
                bench_exact(backend, ctx, run, self.progress, observer, |_, _, product| Ok(product))
            }
            _ => {
                let ctx = BgvContext::new(self.params.clone())?;
                bench_exact(backend, ctx, run, self.progress, observer, |rounds, evaluator, product| {
                    let switched = rounds.time("mod_switch", || Ok(evaluator.mod_switch_to_next(&product)?))?;
                    rounds.moves(
                        "mod_switch",
                        ciphertext_bytes(backend, &product) + ciphertext_bytes(backend, &switched),
                    );
                    Ok(switched)
                })
            }
        }
    }
}

/// Times the operations of an exact scheme (BGV, BFV) on batches of `batch` ciphertexts, a
/// warm-up and `repeat` rounds, keys and randomness from `seed`, and fails if the product does
/// not decrypt to the plaintext product. The schemes share every call but what follows
/// relinearization: `after` times it (BGV's modulus switch) and gives the ciphertext that is
/// decrypted and checked.
fn bench_exact<B: Backend, S: ExactScheme>(
    backend: &B,
    ctx: Arc<S>,
    (batch, repeat, seed): (usize, usize, u64),
    progress: &dyn Progress,
    observer: Option<&dyn OpObserver>,
    after: impl Fn(&mut Rounds, &Evaluator<'_, B, S>, CiphertextBatch<B, S>) -> Result<CiphertextBatch<B, S>>,
) -> Result<Vec<OpTiming>> {
    let stream = |k: u64| seed_stream(seed, k);
    let mut keygen = KeyGenerator::with_sampler(backend, &ctx, stream(0));
    let secret = keygen.secret_key()?;
    let public = keygen.public_key(&secret)?;
    let relin = keygen.relin_key(&secret)?;
    let encoder = BatchEncoder::new(&ctx);
    let t = *ctx.plain_space().modulus();
    let (x, y) = random_slots(&t, ctx.plain_space().degree(), batch, stream(1));
    let encode =
        |values: &[Vec<u64>]| values.iter().map(|v| encoder.encode(v)).collect::<pimhe_schemes::Result<Vec<_>>>();
    let (plain_x, plain_y) = (encode(&x)?, encode(&y)?);
    let mut encryptor = Encryptor::with_public_key(backend, &public)?.with_sampler(stream(2));
    let evaluator = Evaluator::new(backend, &ctx).with_relin_key(&relin)?;
    let decryptor = Decryptor::new(backend, &secret)?;
    let cy = encryptor.encrypt(&plain_y)?;

    let mut rounds = Rounds::new(observer);
    progress.start(repeat as u64 + 1, "rounds");
    let timed = time_rounds(repeat, progress, |round| {
        let cx = rounds.time("encrypt", || Ok(encryptor.encrypt(&plain_x)?))?;
        rounds.time("decrypt", || Ok(decryptor.decrypt(&cx)?))?;
        let product = rounds.time("multiply", || Ok(evaluator.multiply(&cx, &cy)?))?;
        rounds.time("relinearize", || Ok(evaluator.relinearize(&product)?))?;
        let product = rounds.time("multiply_relin", || Ok(evaluator.relinearize(&evaluator.multiply(&cx, &cy)?)?))?;
        let result = after(&mut rounds, &evaluator, product)?;
        // The transforms run on copies of a fresh ciphertext's components (NTT form): inverse first.
        let mut parts = cx.parts().iter().map(|p| backend.copy(p)).collect::<pimhe_exec::Result<Vec<_>>>()?;
        rounds.time("intt", || Ok(parts.iter_mut().try_for_each(|p| backend.intt(p))?))?;
        rounds.time("ntt", || Ok(parts.iter_mut().try_for_each(|p| backend.ntt(p))?))?;
        if round == 0 {
            // The warm-up round is the probe: parameters without the noise budget for this
            // computation are refused (exit 2) before any round is timed.
            let decrypted = decryptor.decrypt(&result).map_err(|e| match e {
                SchemeError::NoiseBudgetExhausted { .. } => BenchError::usage(format!(
                    "the parameters ({}) leave no noise budget for the benchmarked product; use another \
                     --dnum or a larger --n",
                    ctx.params()
                )),
                other => other.into(),
            })?;
            check_product(&encoder, &decrypted, &x, &y, t.value())?;
        }
        Ok(())
    });
    timed?;
    Ok(rounds.finish(batch))
}

/// What [`measure_bfv_ops`] measured: BFV's operations as the CE-RAM B/FV paper's Table 6 lists
/// them, on the cpu backend.
#[derive(Debug, Clone, Serialize)]
pub struct BfvOpsReport {
    /// `cpu`.
    pub backend: &'static str,
    /// Worker threads of the backend.
    pub threads: usize,
    /// Ciphertexts per call.
    pub batch: usize,
    /// Timed rounds after the warm-up.
    pub repeats: usize,
    /// The parameters.
    pub params: SchemeParams,
    /// Whether every result was checked (always true in a returned report).
    pub checked: bool,
    /// encrypt, decrypt, add, sub, multiply_relin.
    pub ops: Vec<OpTiming>,
}

/// Times BFV's encrypt (public key), decrypt, add, sub and multiply + relinearize on the cpu
/// backend, as [`measure`] times the scheme benchmark's (a warm-up round, then `repeat` timed
/// ones; batches of `batch` ciphertexts, keys and inputs from `seed`), and checks every result
/// of the warm-up against the plaintext computation: the decryption of a fresh x, x + y, x - y
/// and x * y, slot by slot mod t.
pub fn measure_bfv_ops(
    params: &BgvParameters,
    batch: usize,
    repeat: usize,
    threads: Option<usize>,
    seed: u64,
    progress: &dyn Progress,
) -> Result<BfvOpsReport> {
    check_threads(threads)?;
    if batch == 0 || repeat == 0 {
        return Err(BenchError::usage("the batch and --repeat must be at least 1"));
    }
    let backend = CpuBackend::new(threads)?;
    let ctx = BfvContext::new(BfvParameters::from(params.clone()))?;
    let stream = |k: u64| seed_stream(seed, k);
    let mut keygen = KeyGenerator::with_sampler(&backend, &ctx, stream(0));
    let secret = keygen.secret_key()?;
    let public = keygen.public_key(&secret)?;
    let relin = keygen.relin_key(&secret)?;
    let encoder = BatchEncoder::new(&ctx);
    let t = *ctx.plain_space().modulus();
    let tv = t.value() as u64;
    let (x, y) = random_slots(&t, ctx.plain_space().degree(), batch, stream(1));
    let encode =
        |values: &[Vec<u64>]| values.iter().map(|v| encoder.encode(v)).collect::<pimhe_schemes::Result<Vec<_>>>();
    let (plain_x, plain_y) = (encode(&x)?, encode(&y)?);
    let mut encryptor = Encryptor::with_public_key(&backend, &public)?.with_sampler(stream(2));
    let evaluator = Evaluator::new(&backend, &ctx).with_relin_key(&relin)?;
    let decryptor = Decryptor::new(&backend, &secret)?;
    let cy = encryptor.encrypt(&plain_y)?;

    let mut rounds = Rounds::new(None);
    progress.start(repeat as u64 + 1, "rounds");
    time_rounds(repeat, progress, |round| {
        let cx = rounds.time("encrypt", || Ok(encryptor.encrypt(&plain_x)?))?;
        let decrypted = rounds.time("decrypt", || Ok(decryptor.decrypt(&cx)?))?;
        let sum = rounds.time("add", || Ok(evaluator.add(&cx, &cy)?))?;
        let difference = rounds.time("sub", || Ok(evaluator.sub(&cx, &cy)?))?;
        let product = rounds.time("multiply_relin", || Ok(evaluator.relinearize(&evaluator.multiply(&cx, &cy)?)?))?;
        if round == 0 {
            check_slots("decrypt", &encoder, &decrypted, |k, i| x[k][i])?;
            check_slots("add", &encoder, &decryptor.decrypt(&sum)?, |k, i| (x[k][i] + y[k][i]) % tv)?;
            check_slots("sub", &encoder, &decryptor.decrypt(&difference)?, |k, i| (x[k][i] + tv - y[k][i]) % tv)?;
            check_product(&encoder, &decryptor.decrypt(&product)?, &x, &y, t.value())?;
        }
        Ok(())
    })?;
    Ok(BfvOpsReport {
        backend: "cpu",
        threads: backend.threads(),
        batch,
        repeats: repeat,
        params: SchemeParams::from_bgv(params),
        checked: true,
        ops: rounds.finish(batch),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::scheme::config::estimated_bytes;
    use crate::measure::scheme::rounds::median;
    use crate::target::Target;
    use crate::target::UpmemTarget;
    use pimhe_workloads::progress::NoProgress;

    fn args(n: usize) -> SchemeConfig {
        SchemeConfig {
            scheme: "bgv".into(),
            n,
            batch: 2,
            target: Target::Cpu { threads: Some(2) },
            repeat: 2,
            seed: 3,
            dnum: None,
            scale_bits: None,
            case: None,
        }
    }

    fn usage(args: &SchemeConfig) -> String {
        match measure_exact(args, &NoProgress) {
            Err(BenchError::Usage(message)) => message,
            other => panic!("expected a usage error, got {other:?}"),
        }
    }

    #[test]
    fn json_report_has_every_field_and_the_preset() {
        let report = measure_exact(&args(4096), &NoProgress).unwrap();
        let json: serde_json::Value = serde_json::from_str(&crate::format::to_json(&report).unwrap()).unwrap();
        for field in ["scheme", "backend", "n", "batch", "threads", "repeats", "seed", "params", "checked", "ops"] {
            assert!(json.get(field).is_some(), "missing {field} in {json}");
        }
        assert_eq!(json["scheme"], "bgv");
        assert_eq!(json["n"], 4096);
        assert_eq!(json["batch"], 2);
        assert_eq!(json["threads"], 2);
        assert_eq!(json["repeats"], 2);
        assert_eq!(json["checked"], true);
        // The parameters are the preset's, as `pimhe params` lists them.
        let preset = BgvParameters::preset(4096).unwrap();
        let params = &json["params"];
        assert_eq!(params["plain_modulus"], preset.plain_modulus());
        assert_eq!(params["data_primes"], serde_json::json!(preset.data_primes()));
        assert_eq!(params["data_prime_bits"], serde_json::json!([27, 27, 27]));
        assert_eq!(params["special_primes"], serde_json::json!(preset.special_primes()));
        assert_eq!(params["special_prime_bits"], serde_json::json!([27]));
        assert_eq!(params["dnum"], preset.dnum());
        assert_eq!(params["log_q_ciphertext"], 81);
        assert_eq!(params["log_q_total"], preset.total_bits());
        let ops = json["ops"].as_array().unwrap();
        let names: Vec<&str> = ops.iter().map(|o| o["op"].as_str().unwrap()).collect();
        assert_eq!(
            names,
            ["encrypt", "decrypt", "multiply", "relinearize", "multiply_relin", "mod_switch", "intt", "ntt"]
        );
        // JSON numbers parse back to within an ulp or so.
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-12 * b.abs();
        for op in ops {
            let field = |name: &str| op[name].as_f64().unwrap();
            let times: Vec<f64> = op["times_s"].as_array().unwrap().iter().map(|t| t.as_f64().unwrap()).collect();
            assert_eq!(times.len(), 2, "{op}");
            assert!(times.iter().all(|&t| t > 0.0), "{op}");
            assert!(close(field("best_s"), times[0].min(times[1])), "{op}");
            assert!(close(field("median_s"), (times[0] + times[1]) / 2.0), "{op}");
            assert!(close(field("best_per_ciphertext_s"), field("best_s") / 2.0), "{op}");
            assert!(close(field("median_per_ciphertext_s"), field("median_s") / 2.0), "{op}");
        }
        let text = report.render();
        assert!(text.starts_with("bgv backend=cpu n=4096 batch=2 threads=2"), "{text}");
        assert!(text.contains("data primes=3x27b special=1x27b dnum=3 log2(q)=81 ciphertext, 108 total"), "{text}");
        // The memory-bound row (and only it) has its bytes: two components of two ciphertexts
        // of 4096 residues read at 3 primes and written at 2, 4 bytes each; and its share of
        // the bandwidth, with the line that explains it.
        let with_bytes: Vec<&str> =
            ops.iter().filter(|o| o.get("bytes_moved").is_some()).map(|o| o["op"].as_str().unwrap()).collect();
        assert_eq!(with_bytes, ["mod_switch"]);
        assert_eq!(ops[5]["bytes_moved"], 2 * 2 * 4096 * 4 * (3 + 2));
        assert_eq!(ops[5]["bandwidth"]["bytes_moved"], ops[5]["bytes_moved"]);
        assert!(ops[5]["bandwidth"]["best_fraction"].as_f64().unwrap() > 0.0);
        assert!(text.contains("of bandwidth: bytes that must move"), "{text}");
        assert_eq!(text.lines().count(), 4 + names.len(), "{text}");
    }

    /// BFV: BGV's rows but modulus switching, the preset's primes, the product checked.
    #[test]
    fn bfv_report_has_the_bfv_rows_and_the_preset() {
        let report = measure_exact(&SchemeConfig { scheme: "bfv".into(), ..args(4096) }, &NoProgress).unwrap();
        let json: serde_json::Value = serde_json::from_str(&crate::format::to_json(&report).unwrap()).unwrap();
        assert_eq!(json["scheme"], "bfv");
        assert_eq!(json["checked"], true);
        let preset = BfvParameters::preset(4096).unwrap();
        assert_eq!(json["params"]["data_primes"], serde_json::json!(preset.ciphertext_primes()));
        assert_eq!(json["params"]["special_primes"], serde_json::json!(preset.special_primes()));
        assert_eq!(json["params"]["plain_modulus"], preset.plain_modulus());
        let names: Vec<&str> = json["ops"].as_array().unwrap().iter().map(|o| o["op"].as_str().unwrap()).collect();
        assert_eq!(names, ["encrypt", "decrypt", "multiply", "relinearize", "multiply_relin", "intt", "ntt"]);
        assert!(report.render().starts_with("bfv backend=cpu n=4096"), "{}", report.render());
    }

    #[test]
    fn bad_degree_lists_the_allowed_values() {
        for n in [1000, 2048, 65536] {
            let message = usage(&args(n));
            assert!(message.starts_with(&format!("--n {n} is not allowed")), "{message}");
            assert!(message.contains("4096, 8192, 16384, 32768"), "{message}");
        }
    }

    #[test]
    fn bad_flags_are_usage_errors_naming_the_flag() {
        let with = |f: fn(&mut SchemeConfig)| {
            let mut a = args(4096);
            f(&mut a);
            usage(&a)
        };
        assert!(with(|a| a.batch = 0).starts_with("--batch 0"));
        assert!(with(|a| a.repeat = 0).starts_with("--repeat 0"));
        let dnum = with(|a| a.dnum = Some(4));
        assert!(dnum.starts_with("--dnum 4 is not allowed at --n 4096") && dnum.contains("allowed 1..=3"), "{dnum}");
        let backend = with(|a| a.target = Target::UpmemEmu(UpmemTarget::new(8)));
        assert!(backend.starts_with("--backend upmem-emu") && backend.contains("cpu or nearbank"), "{backend}");
        let unknown = with(|a| a.scheme = "ckks2".into());
        assert!(unknown.starts_with("--scheme ckks2 is not known") && unknown.contains("bgv, bfv"), "{unknown}");
        let huge = with(|a| {
            a.n = 32768;
            a.batch = 1 << 20
        });
        assert!(huge.starts_with("the buffers of --batch 1048576 at --n 32768 need about"), "{huge}");
    }

    #[test]
    fn median_takes_the_middle() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
        assert_eq!(median(&[7.0]), 7.0);
    }

    #[test]
    fn memory_estimate_counts_the_relinearization_digits() {
        let params = BgvParameters::preset(8192).unwrap();
        // 5 data and 2 special primes: c2's copy over 5, one digit and two sums over 7, plus 12
        // polynomials over 7, 4 bytes each.
        assert_eq!(estimated_bytes("bgv", &params, 3), 4 * 8192 * 3 * (5 + 3 * 7 + 12 * 7));
        // BFV adds BEHZ's operands and tensor over Bsk.
        assert_eq!(estimated_bytes("bfv", &params, 3), 4 * 8192 * 3 * (5 + 3 * 7 + 12 * 7 + 10 * 12));
    }
}
