//! Timing of BFV on special moduli (`pimhe_schemes::bfv::special`): the CE-RAM B/FV paper's
//! own bases on the CPU, on wide words, with the operations of its Table 6, each result checked
//! against the plaintext computation; `pimhe bench scheme --scheme bfv-special --case A|B`
//! ([`measure_special`]).

use pimhe_schemes::bfv::special::{
    add, decrypt, encrypt, multiply, relinearize, sub, SecretKey, SpecialBfvContext, SpecialBfvParameters, SpecialCase,
};
use pimhe_schemes::encoder::BatchEncoder;
use serde::Serialize;

use super::config::{validate_common, SchemeConfig};
use super::rounds::{check_product, check_slots, ops_table, time_rounds, OpTiming, Rounds};
use crate::error::{check_repeat, BenchError, Result};
use crate::format::{Render, FIXED_SEED_KEYS};
use crate::measure::inputs::{random_slots, seed_stream};
use crate::target::Target;
use pimhe_workloads::progress::Progress;

/// The cases `--case` admits: the paper's 128-bit ones (case C's q = 2^440 - 1 is above the
/// 438 bits the HomomorphicEncryption.org table allows at N = 2^14).
const CASES: [SpecialCase; 2] = [SpecialCase::A, SpecialCase::B];

/// The parameters a [`SpecialSchemeReport`] was measured with.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SpecialParams {
    /// Ring degree N (the paper's 2^14).
    pub n: usize,
    /// Plaintext modulus t.
    pub plain_modulus: u32,
    /// The moduli of Q, e.g. `2^146 - 1`.
    pub moduli: Vec<String>,
    /// Bits of q.
    pub log_q: u32,
    /// Whether the special reductions and FastBConv run (case B) or Barrett (case A).
    pub optimized: bool,
}

/// The result of `pimhe bench scheme --scheme bfv-special` (`--json` serialises it as one
/// object).
#[derive(Debug, Clone, Serialize)]
pub struct SpecialSchemeReport {
    /// `bfv-special`.
    pub scheme: &'static str,
    /// The paper's case: `A` or `B`.
    pub case: &'static str,
    /// `cpu`.
    pub backend: &'static str,
    /// Ring degree.
    pub n: usize,
    /// One ciphertext per call.
    pub batch: usize,
    /// rayon's threads (a product runs one modulus per thread).
    pub threads: usize,
    /// Timed rounds.
    pub repeats: usize,
    /// Seed of keys, randomness and slots.
    pub seed: u64,
    /// Where the keys come from ([`FIXED_SEED_KEYS`]).
    pub keys: &'static str,
    /// The parameters.
    pub params: SpecialParams,
    /// Whether every warm-up result decrypted to the plaintext computation (a mismatch is an
    /// error, so always true in a report).
    pub checked: bool,
    /// Per operation: encrypt, decrypt, add, sub, multiply_relin.
    pub ops: Vec<OpTiming>,
}

impl Render for SpecialSchemeReport {
    /// The parameters, then one line per operation.
    fn render(&self) -> String {
        let p = &self.params;
        let mut text = format!(
            "bfv-special case {} backend={} n={} batch={} threads={} (best and median of {} after a warm-up, seed {}; \
             {})\n  t={} Q={{{}}} log2(q)={} {}; every result checked against the plaintext\n",
            self.case,
            self.backend,
            self.n,
            self.batch,
            self.threads,
            self.repeats,
            self.seed,
            self.keys,
            p.plain_modulus,
            p.moduli.join(", "),
            p.log_q,
            if p.optimized { "special reductions + FastBConv" } else { "Barrett reductions" }
        );
        text.push_str(&ops_table(&self.ops, 16));
        text
    }
}

/// The case `--case` names, or an error naming the allowed ones.
fn parse_case(case: Option<&str>) -> Result<SpecialCase> {
    let allowed = CASES.map(|c| c.letter()).join(" or ");
    let Some(name) = case else {
        return Err(BenchError::usage(format!("--scheme bfv-special needs --case: {allowed} (seed 004, Table 1)")));
    };
    if let Some(case) = CASES.into_iter().find(|c| c.letter() == name) {
        return Ok(case);
    }
    if name == SpecialCase::C.letter() {
        return Err(BenchError::usage(format!(
            "--case C is not allowed: its q = 2^440 - 1 is above the 438 bits the 128-bit table allows at N = \
             16384; choose {allowed}"
        )));
    }
    Err(BenchError::usage(format!("--case {name} is not known; choose {allowed}")))
}

/// Checks what `--scheme bfv-special` can take: a case, the cpu, one ciphertext per call, the
/// paper's degree, no dnum or scale. Every error names the flag and what is allowed.
fn validate(config: &SchemeConfig) -> Result<(SpecialCase, Option<usize>)> {
    validate_common(config)?;
    let case = parse_case(config.case.as_deref())?;
    let threads = match &config.target {
        Target::Cpu { threads } => *threads,
        Target::UpmemEmu(_) | Target::Nearbank(_) => {
            return Err(BenchError::usage(
                "--scheme bfv-special runs on --backend cpu only (its wide words have no device kernels)",
            ))
        }
    };
    if config.n != SpecialBfvParameters::PAPER_DEGREE {
        return Err(BenchError::usage(format!(
            "--n {} is not allowed with --scheme bfv-special: the paper's cases are at N = {} (leave it out)",
            config.n,
            SpecialBfvParameters::PAPER_DEGREE
        )));
    }
    if config.batch != 1 {
        return Err(BenchError::usage(format!(
            "--batch {} is not allowed with --scheme bfv-special: it times one ciphertext per call, as the \
             paper's Table 7 counts operations (give 1, or leave it out)",
            config.batch
        )));
    }
    if config.dnum.is_some() {
        return Err(BenchError::usage(
            "--dnum does not apply to --scheme bfv-special: its relinearization has one digit per modulus of Q",
        ));
    }
    if config.scale_bits.is_some() {
        return Err(BenchError::usage(
            "--scale-bits applies to CKKS only; --scheme bfv-special encodes integers modulo t",
        ));
    }
    Ok((case, threads))
}

/// Runs `pimhe bench scheme --scheme bfv-special --case A|B`: the special-moduli BFV's
/// encrypt, decrypt, add, sub and multiply + relinearize at the paper's parameters of that case
/// (N = 2^14, t = 65537), on `--threads` threads (all cores when `None`), each warm-up result
/// checked.
pub fn measure_special(config: &SchemeConfig, progress: &dyn Progress) -> Result<SpecialSchemeReport> {
    let (case, threads) = validate(config)?;
    let params = SpecialBfvParameters::case(case)?;
    let summary = SpecialParams {
        n: params.degree(),
        plain_modulus: params.plain_modulus(),
        moduli: params.base().moduli().iter().map(|m| m.to_string()).collect(),
        log_q: params.log_q(),
        optimized: params.optimized(),
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads.unwrap_or(0))
        .build()
        .map_err(|e| BenchError::Failed(format!("could not start {threads:?} threads: {e}")))?;
    let ops = pool.install(|| measure_special_bfv_ops(params, config.repeat, config.seed, progress))?;
    Ok(SpecialSchemeReport {
        scheme: "bfv-special",
        case: case.letter(),
        backend: "cpu",
        n: summary.n,
        batch: 1,
        threads: pool.current_num_threads(),
        repeats: config.repeat,
        seed: config.seed,
        keys: FIXED_SEED_KEYS,
        params: summary,
        checked: true,
        ops,
    })
}

/// Times encrypt, decrypt, add, sub and multiply + relinearize (`multiply_relin`) of one
/// ciphertext under `params`, a warm-up and `repeat` rounds, keys and randomness from `seed`;
/// fails if a result does not decrypt to the plaintext computation.
pub fn measure_special_bfv_ops(
    params: SpecialBfvParameters,
    repeat: usize,
    seed: u64,
    progress: &dyn Progress,
) -> Result<Vec<OpTiming>> {
    check_repeat(repeat, "round")?;
    let ctx = SpecialBfvContext::new(params)?;
    let mut keys = seed_stream(seed, 0);
    let secret = SecretKey::generate(&ctx, &mut keys);
    let (public, relin) = (secret.public_key(&mut keys), secret.relin_key(&mut keys));
    let encoder = BatchEncoder::new(&ctx);
    let t = *pimhe_schemes::encoder::PlainContext::plain_space(&*ctx).modulus();
    let tv = t.value() as u64;
    let (x, y) = random_slots(&t, ctx.params().degree(), 1, seed_stream(seed, 1));
    let (plain_x, plain_y) = (encoder.encode(&x[0])?, encoder.encode(&y[0])?);
    let mut randomness = seed_stream(seed, 2);
    let cy = encrypt(&public, &plain_y, &mut randomness)?;

    let mut rounds = Rounds::new(None);
    progress.start(repeat as u64 + 1, "rounds");
    time_rounds(repeat, progress, |round| {
        let cx = rounds.time("encrypt", || Ok(encrypt(&public, &plain_x, &mut randomness)?))?;
        let decrypted = rounds.time("decrypt", || Ok(decrypt(&secret, &cx)?))?;
        let sum = rounds.time("add", || Ok(add(&cx, &cy)?))?;
        let difference = rounds.time("sub", || Ok(sub(&cx, &cy)?))?;
        let product = rounds.time("multiply_relin", || Ok(relinearize(&multiply(&cx, &cy)?, &relin)?))?;
        if round == 0 {
            check_slots("decrypt", &encoder, &[decrypted], |_, i| x[0][i])?;
            check_slots("add", &encoder, &[decrypt(&secret, &sum)?], |_, i| (x[0][i] + y[0][i]) % tv)?;
            check_slots("sub", &encoder, &[decrypt(&secret, &difference)?], |_, i| (x[0][i] + tv - y[0][i]) % tv)?;
            check_product(&encoder, &[decrypt(&secret, &product)?], &x, &y, t.value())?;
        }
        Ok(())
    })?;
    Ok(rounds.finish(1))
}
