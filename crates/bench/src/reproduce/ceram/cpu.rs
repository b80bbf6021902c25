//! Table 6's CPU side, measured on this machine in the same run: pimhe's cpu backend at the
//! paper's |q|, pimhe's BFV on the paper's case-B base, and SEAL through bench/compare, or why
//! not.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use pimhe_schemes::bfv::special::{SpecialBfvParameters, SpecialCase};
use pimhe_schemes::bgv::BgvParameters;
use pimhe_schemes::security::max_log_q_128;
use pimhe_workloads::progress::Progress;
use serde::{Deserialize, Serialize};

use super::config::CeramConfig;
use crate::error::{check_repeat, BenchError, Result};
use crate::measure::machine::CpuFacts;
use crate::measure::scheme::special::measure_special_bfv_ops;
use crate::measure::scheme::{measure_bfv_ops, BfvOpsReport};

/// The plaintext modulus of the CPU measurement (pimhe's presets and SEAL's in bench/compare).
pub const CPU_PLAIN_MODULUS: u32 = 65537;

/// One CPU's measurement (median seconds per ciphertext, per operation).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CpuMeasurement {
    /// `pimhe`, `SEAL (same primes)` or `SEAL (default modulus)`.
    pub label: String,
    /// Library and version.
    pub version: String,
    /// The CPU it ran on: this machine's (`model name` of /proc/cpuinfo).
    pub machine: String,
    /// Threads per operation.
    pub threads: usize,
    /// Ciphertexts per call.
    pub batch: usize,
    /// Ring degree.
    pub n: usize,
    /// Bits of every prime, the special primes included (the 128-bit table's count).
    pub log_q_total: u32,
    /// Bits of the ciphertext modulus (without the special primes).
    pub log_q_ciphertext: u32,
    /// Bits of each ciphertext prime.
    pub ciphertext_prime_bits: Vec<u32>,
    /// Bits of each special prime.
    pub special_prime_bits: Vec<u32>,
    /// Whether every result was decrypted and checked against the plaintext computation.
    pub checked: bool,
    /// Median seconds per ciphertext by operation (`multiply` is multiply + relinearize).
    pub median_s: BTreeMap<String, f64>,
}

impl CpuMeasurement {
    /// `438 = 13x30,1x18 + P 1x30`.
    pub fn modulus(&self) -> String {
        let groups = |bits: &[u32]| {
            let mut counts = BTreeMap::new();
            for &b in bits {
                *counts.entry(b).or_insert(0) += 1;
            }
            counts.iter().rev().map(|(b, c)| format!("{c}x{b}")).collect::<Vec<_>>().join(",")
        };
        if self.special_prime_bits.is_empty() {
            // Relinearization by the RNS decomposition of BEHZ: no special prime.
            format!("{} = {}", self.log_q_total, groups(&self.ciphertext_prime_bits))
        } else {
            format!(
                "{} = {} + P {}",
                self.log_q_total,
                groups(&self.ciphertext_prime_bits),
                groups(&self.special_prime_bits)
            )
        }
    }
}

/// A CPU column of Table 6: measured, or why not.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CpuColumn {
    /// `pimhe`, `SEAL (same primes)`, `SEAL (default modulus)`.
    pub label: String,
    /// The measurement.
    pub measured: Option<CpuMeasurement>,
    /// Why there is none (`n/a: ...`).
    pub unavailable: Option<String>,
}

/// The CPU parameters at `n`: the largest modulus within the 128-bit bound (N = 2^14: 438 bits,
/// the paper's |q|) in pimhe's primes (at most 30 bits): one 30-bit special prime (key switching
/// with one digit per ciphertext prime, as SEAL's), 30-bit ciphertext primes, and one smaller
/// ciphertext prime taking the remaining bits when they are at least 18 (above t = 65537). At
/// N = 2^14: 13 x 30 + 18 = 408 ciphertext bits + P 30 = 438. A ciphertext modulus of 438 bits
/// *and* a special prime would exceed the bound.
pub fn cpu_params(n: usize) -> Result<BgvParameters> {
    let max = max_log_q_128(n).ok_or_else(|| BenchError::usage(format!("--n {n}: no 128-bit bound known")))?;
    if !(4096..=32768).contains(&n) {
        return Err(BenchError::usage(format!(
            "the CPU side's ring degree {n} is not allowed: choose 4096 .. 32768 (BFV with key switching)"
        )));
    }
    let primes = (max / 30) as usize;
    let mut data = vec![30; primes - 1];
    if max % 30 >= 18 {
        data.push(max % 30);
    }
    let params = BgvParameters::new(n, CPU_PLAIN_MODULUS, &data, Some(30))?;
    params.validate()?;
    Ok(params)
}

fn pimhe_column(report: &BfvOpsReport, n: usize) -> CpuMeasurement {
    CpuMeasurement {
        label: "pimhe".into(),
        version: format!("pimhe {} cpu backend", env!("CARGO_PKG_VERSION")),
        machine: this_machine(),
        threads: report.threads,
        batch: report.batch,
        n,
        log_q_total: report.params.log_q_total(),
        log_q_ciphertext: report.params.log_q_ciphertext(),
        ciphertext_prime_bits: report.params.data_prime_bits().to_vec(),
        special_prime_bits: report.params.special_prime_bits().to_vec(),
        checked: report.checked,
        median_s: report.ops.iter().map(|o| (op_key(o.op).to_string(), o.median_per_ciphertext_s)).collect(),
    }
}

/// The name of this machine's CPU, which every column runs on (SEAL in a child process).
fn this_machine() -> String {
    // The facts' thread count is not part of the name.
    CpuFacts::this_machine(0).name
}

/// The benchmarks' operation names -> Table 6's (`multiply_relin` is the paper's hom. mult.:
/// "relinearization is considered to be a part of multiplication", section 4).
fn op_key(op: &str) -> &str {
    if op == "multiply_relin" {
        "multiply"
    } else {
        op
    }
}

/// peer_seal.py of this checkout.
pub fn seal_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench/compare/peer_seal.py")
}

/// The Python of the SEAL environment bench/compare/run.py makes (`venv-seal-py3.X` under
/// `$PIMHE_COMPARE_CACHE` or `~/.cache/pimhe-compare`), if there is one.
pub fn find_seal_python() -> Option<PathBuf> {
    let cache = std::env::var_os("PIMHE_COMPARE_CACHE")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cache/pimhe-compare")))?;
    let mut found: Vec<PathBuf> = std::fs::read_dir(&cache)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("venv-seal-py")))
        .map(|p| p.join("bin/python"))
        .filter(|p| p.exists())
        .collect();
    found.sort();
    found.pop()
}

/// Runs peer_seal.py for BFV's Table-6 operations at `n`, with `coeff_bits` (the last the special
/// prime) or SEAL's default modulus; a failure is the column's n/a reason.
fn seal_column(
    python: &Path,
    label: &str,
    n: usize,
    coeff_bits: Option<&[u32]>,
    repeat: usize,
    seed: u64,
) -> CpuColumn {
    let unavailable = |why: String| CpuColumn { label: label.into(), measured: None, unavailable: Some(why) };
    let script = seal_script();
    if !script.exists() {
        return unavailable(format!("n/a: {} is missing", script.display()));
    }
    let mut command = Command::new(python);
    command.arg(&script).args(["--n", &n.to_string(), "--schemes", "bfv", "--bfv-ops", "all"]);
    command.args(["--repeat", &repeat.to_string(), "--seed", &seed.to_string()]);
    if let Some(bits) = coeff_bits {
        let list: Vec<String> = bits.iter().map(u32::to_string).collect();
        command.args(["--coeff-bits", &format!("{n}:{}", list.join(","))]);
    }
    let output = match command.output() {
        Ok(o) => o,
        Err(e) => return unavailable(format!("n/a: cannot run {}: {e}", python.display())),
    };
    let last =
        |bytes: &[u8]| String::from_utf8_lossy(bytes).lines().rfind(|l| !l.trim().is_empty()).unwrap_or("").to_string();
    if !output.status.success() {
        return unavailable(format!("n/a: peer_seal.py failed: {}", last(&output.stderr)));
    }
    let parsed: serde_json::Value = match serde_json::from_slice(&output.stdout) {
        Ok(v) => v,
        Err(e) => return unavailable(format!("n/a: peer_seal.py printed no JSON ({e})")),
    };
    let result = &parsed["results"][0];
    if let Some(error) = result["error"].as_str() {
        return unavailable(format!("n/a: SEAL: {error}"));
    }
    let bits = |key: &str| -> Vec<u32> {
        let list = result["params"][key].as_array();
        list.map(|a| a.iter().filter_map(|b| b.as_u64()).map(|b| b as u32).collect()).unwrap_or_default()
    };
    let median_s: BTreeMap<String, f64> = result["ops"]
        .as_object()
        .map(|ops| ops.iter().filter_map(|(op, t)| Some((op_key(op).to_string(), t["median_s"].as_f64()?))).collect())
        .unwrap_or_default();
    let (ciphertext, special) = (bits("ciphertext_prime_bits"), bits("special_prime_bits"));
    CpuColumn {
        label: label.into(),
        measured: Some(CpuMeasurement {
            label: label.into(),
            version: parsed["version"].as_str().unwrap_or("SEAL").to_string(),
            machine: this_machine(),
            threads: parsed["threads"].as_u64().unwrap_or(1) as usize,
            batch: 1,
            n,
            log_q_total: ciphertext.iter().chain(&special).sum(),
            log_q_ciphertext: ciphertext.iter().sum(),
            ciphertext_prime_bits: ciphertext,
            special_prime_bits: special,
            checked: result["checked"].as_bool().unwrap_or(false),
            median_s,
        }),
        unavailable: None,
    }
}

/// The CPU columns: pimhe's cpu backend at [`cpu_params`] (batch 1, one ciphertext per call as
/// SEAL), then SEAL at the same primes' sizes and at its default modulus, or n/a.
pub fn measure_cpus(config: &CeramConfig, progress: &dyn Progress) -> Result<Vec<CpuColumn>> {
    check_repeat(config.repeat, "round")?;
    let params = cpu_params(config.n)?;
    let report = measure_bfv_ops(&params, 1, config.repeat, config.threads, config.seed, progress)?;
    let pimhe = pimhe_column(&report, config.n);
    let mut columns = vec![CpuColumn { label: "pimhe".into(), measured: Some(pimhe.clone()), unavailable: None }];
    columns.push(special_column(config, progress)?);
    let same: Vec<u32> = pimhe.ciphertext_prime_bits.iter().chain(&pimhe.special_prime_bits).copied().collect();
    let python = config.seal_python.clone().or_else(find_seal_python);
    for (label, bits) in [("SEAL (same primes)", Some(same.as_slice())), (SEAL_DEFAULT_LABEL, None)] {
        columns.push(match &python {
            Some(python) => seal_column(python, label, config.n, bits, config.repeat, config.seed),
            None => CpuColumn {
                label: label.into(),
                measured: None,
                unavailable: Some(
                    "n/a: no Python with TenSEAL found (pass --seal-python PATH, or run python3 \
                     bench/compare/run.py once to make ~/.cache/pimhe-compare/venv-seal-py3.X)"
                        .into(),
                ),
            },
        });
    }
    Ok(columns)
}

/// The label of the column of SEAL at its default 438-bit modulus: what the paper's CPUs ran.
pub const SEAL_DEFAULT_LABEL: &str = "SEAL (default modulus)";

/// The label of the column of pimhe's BFV on the paper's own base (case B, wide words).
pub const SPECIAL_LABEL: &str = "pimhe special (B)";

/// pimhe's BFV on the paper's case-B base {2^146 - 1, 2^146, 2^146 + 1} at N = `config.n`, on
/// the CPU with wide words: what the CE-RAM design's moduli cost a CPU, beside the 30-bit
/// primes pimhe uses by default. The degree must keep q = 2^438 - 2^146 within the 128-bit table.
fn special_column(config: &CeramConfig, progress: &dyn Progress) -> Result<CpuColumn> {
    let case = SpecialCase::B;
    let params = SpecialBfvParameters::new(config.n, CPU_PLAIN_MODULUS, case.base()?, case.optimized())?;
    if let Err(e) = params.validate() {
        return Ok(CpuColumn { label: SPECIAL_LABEL.into(), measured: None, unavailable: Some(format!("n/a: {e}")) });
    }
    let widths: Vec<u32> = params.base().moduli().iter().map(|m| m.value().bit_width_vartime()).collect();
    let log_q = params.log_q();
    let ops = measure_special_bfv_ops(params, config.repeat, config.seed, progress)?;
    Ok(CpuColumn {
        label: SPECIAL_LABEL.into(),
        measured: Some(CpuMeasurement {
            label: SPECIAL_LABEL.into(),
            version: format!("pimhe {} bfv::special (case B, crypto-bigint words)", env!("CARGO_PKG_VERSION")),
            machine: this_machine(),
            // A product per modulus runs on rayon's pool, one thread per core.
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            batch: 1,
            n: config.n,
            log_q_total: log_q,
            log_q_ciphertext: log_q,
            ciphertext_prime_bits: widths,
            special_prime_bits: Vec::new(),
            checked: true,
            median_s: ops.iter().map(|o| (op_key(o.op).to_string(), o.median_per_ciphertext_s)).collect(),
        }),
        unavailable: None,
    })
}
