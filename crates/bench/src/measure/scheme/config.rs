//! What `pimhe bench scheme` is asked ([`SchemeConfig`]), what it accepts of the target flags
//! ([`RULES`]), and the checks every scheme shares.

use pimhe_ring::memory;
use pimhe_schemes::bgv::{BgvParameters, DEGREES};

use crate::error::{check_repeat, BenchError, Result};
use crate::target::{BackendKind, Target, TargetRules, UpmemFlags};

/// The schemes `--scheme` names.
const SCHEMES: &[&str] = &["bgv", "bfv", "ckks", "bfv-special"];

/// What `bench scheme` accepts of the target flags: cpu or nearbank (its operations need key
/// switching on the device, which the emulated UPMEM kernels of `bench OP` measure instead).
pub const RULES: TargetRules = TargetRules {
    backends: &[BackendKind::Cpu, BackendKind::Nearbank],
    default: BackendKind::Cpu,
    upmem: UpmemFlags { mode: false, kernel: false, emulate: false, what_if: false },
    threads_beside_upmem: false,
};

/// What `pimhe bench scheme` measures. The strings are validated by [`measure`] (with the
/// CLI's messages).
#[derive(Debug, Clone, PartialEq)]
pub struct SchemeConfig {
    /// `bgv`, `bfv`, `ckks` or `bfv-special` (BFV on the CE-RAM paper's special moduli)
    /// [default: bgv].
    pub scheme: String,
    /// Ring degree N of the 128-bit preset: 4096 .. 32768 for bgv and bfv (the presets with a
    /// key-switching prime); 8192 .. 65536 for ckks.
    pub n: usize,
    /// Ciphertexts in each operand batch [default: 8].
    pub batch: usize,
    /// Where it runs: cpu or nearbank ([`RULES`]).
    pub target: Target,
    /// Timed rounds after one untimed warm-up [default: 5].
    pub repeat: usize,
    /// Seed of the keys, the encryption randomness and the plaintext slots [default: 1].
    pub seed: u64,
    /// Key-switching digits instead of the preset's.
    pub dnum: Option<usize>,
    /// CKKS only: the scale 2^bits instead of the preset's.
    pub scale_bits: Option<u32>,
    /// bfv-special only: the CE-RAM paper's case, `A` or `B` (Table 1).
    pub case: Option<String>,
}

impl SchemeConfig {
    /// `scheme` at the preset of `n` with the defaults: batch 8 on cpu with all cores, 5 rounds,
    /// seed 1, the preset's dnum and scale.
    pub fn new(scheme: &str, n: usize) -> Self {
        Self {
            scheme: scheme.to_string(),
            n,
            batch: 8,
            target: Target::Cpu { threads: None },
            repeat: 5,
            seed: 1,
            dnum: None,
            scale_bits: None,
            case: None,
        }
    }

    /// The batch when `--batch` is left out: 1 for bfv-special (one ciphertext per call, as the
    /// CE-RAM paper counts operations), 8 otherwise.
    pub fn default_batch(scheme: &str) -> usize {
        if scheme == "bfv-special" {
            1
        } else {
            8
        }
    }

    /// The ring degree when `--n` is left out: bfv-special's cases are at the paper's N = 2^14;
    /// the other schemes need `--n`.
    pub fn default_n(scheme: &str) -> Option<usize> {
        (scheme == "bfv-special").then_some(pimhe_schemes::bfv::special::SpecialBfvParameters::PAPER_DEGREE)
    }
}

/// The ring degrees `--n` accepts: the presets with a key-switching prime.
fn allowed_degrees() -> Vec<usize> {
    DEGREES
        .iter()
        .copied()
        .filter(|&n| BgvParameters::preset(n).is_ok_and(|p| !p.special_primes().is_empty()))
        .collect()
}

/// Bytes the run holds at its peak, estimated: relinearization's coefficient copy of c2 (L
/// primes), one extended digit and two accumulators over the L + k data and special primes,
/// beside about a dozen polynomials of L + k primes (operands, products, copies). BFV's product
/// adds BEHZ's: both operands (4 polynomials) and the 3-part tensor over Bsk (about L + 2
/// primes), and q-side copies, counted as 10 polynomials over 2L + 2 primes.
pub(super) fn estimated_bytes(scheme: &str, params: &BgvParameters, batch: usize) -> u128 {
    let data = params.data_primes().len() as u128;
    let extended = data + params.special_primes().len() as u128;
    let behz = if scheme == "bfv" { 10 * (2 * data + 2) } else { 0 };
    let polys = data + 3 * extended + 12 * extended + behz;
    4 * params.degree() as u128 * batch as u128 * polys
}

/// Checks the flags every scheme shares. Every error names its flag and what is allowed.
pub(super) fn validate_common(args: &SchemeConfig) -> Result<()> {
    if !SCHEMES.contains(&args.scheme.as_str()) {
        return Err(BenchError::usage(format!(
            "--scheme {} is not known; choose one of: {}",
            args.scheme,
            SCHEMES.join(", ")
        )));
    }
    RULES.check(&args.target)?;
    if args.case.is_some() && args.scheme != "bfv-special" {
        return Err(BenchError::usage(format!(
            "--case applies to bfv-special only (the CE-RAM paper's cases); --scheme {} has none",
            args.scheme
        )));
    }
    if args.batch == 0 {
        return Err(BenchError::usage("--batch 0 is not allowed: at least 1 ciphertext is needed"));
    }
    check_repeat(args.repeat, "round")?;
    Ok(())
}

/// Checks the arguments of BGV and BFV and builds the parameters (BGV's set; BFV uses its
/// primes).
pub(super) fn validate(args: &SchemeConfig) -> Result<BgvParameters> {
    validate_common(args)?;
    if args.scale_bits.is_some() {
        return Err(BenchError::usage(format!(
            "--scale-bits is a CKKS option; --scheme {} encodes integers modulo t",
            args.scheme
        )));
    }
    let allowed = allowed_degrees();
    if !allowed.contains(&args.n) {
        let list: Vec<String> = allowed.iter().map(|n| n.to_string()).collect();
        return Err(BenchError::usage(format!(
            "--n {} is not allowed: choose one of {} (the 128-bit presets with a key-switching prime)",
            args.n,
            list.join(", ")
        )));
    }
    let params = match args.dnum {
        None => BgvParameters::preset(args.n)?,
        Some(dnum) => BgvParameters::preset_with_dnum(args.n, dnum)
            .map_err(|e| BenchError::usage(format!("--dnum {dnum} is not allowed at --n {}: {e}", args.n)))?,
    };
    let needed = estimated_bytes(&args.scheme, &params, args.batch);
    memory::ensure_fits(&format!("the buffers of --batch {} at --n {}", args.batch, args.n), needed)
        .map_err(|e| BenchError::usage(format!("{e}; lower --batch")))?;
    Ok(params)
}
