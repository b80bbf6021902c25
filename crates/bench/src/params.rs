//! The parameter presets of a scheme and their security, as `pimhe params` prints them and
//! `pimhe.presets()` returns them: one row per preset, smallest ring degree first, with the
//! largest log Q the HomomorphicEncryption.org tables allow at 128 bits beside the preset's.
//!
//! ```
//! use pimhe_bench::params::{presets, Presets};
//! use pimhe_bench::Render;
//! let Presets::Integer(rows) = presets("bfv").unwrap() else { panic!("BGV's presets") };
//! assert!(rows.iter().all(|row| row.chain.log_q <= row.chain.max_log_q_128 && row.chain.security_bits == Some(128)));
//! assert!(presets("ckks").unwrap().render().starts_with("CKKS presets"));
//! assert!(presets("tfhe").unwrap_err().is_usage());
//! ```

use pimhe_schemes::bgv::BgvParameters;
use pimhe_schemes::ckks::CkksParameters;
use pimhe_schemes::rlwe::RlweParameters;
use pimhe_schemes::security::max_log_q_128;
use serde::Serialize;

use crate::error::{BenchError, Result};
use crate::format::{to_json, Render};

/// A preset's modulus chain and its security, as every scheme's row has it.
#[derive(Debug, Clone, Serialize)]
pub struct ModulusChain {
    pub data_primes: Vec<u32>,
    pub special_primes: Vec<u32>,
    pub dnum: usize,
    /// Bits of every prime together, special ones included.
    pub log_q: u32,
    pub max_log_q_128: u32,
    pub security_bits: Option<u32>,
}

impl ModulusChain {
    fn of(p: &RlweParameters) -> Self {
        Self {
            data_primes: p.data_primes().to_vec(),
            special_primes: p.special_primes().to_vec(),
            dnum: p.dnum(),
            log_q: p.total_bits(),
            max_log_q_128: max_log_q_128(p.degree()).expect("presets use supported degrees"),
            security_bits: p.security_bits(),
        }
    }
}

/// One BGV/BFV preset (BFV uses BGV's sets).
#[derive(Debug, Clone, Serialize)]
pub struct IntegerPresetRow {
    pub n: usize,
    pub plain_modulus: u32,
    #[serde(flatten)]
    pub chain: ModulusChain,
    /// Levels of the modulus chain: the highest level + 1.
    pub levels: usize,
    /// Whether the preset has special primes, so relinearization and rotations.
    pub relinearization: bool,
}

/// One CKKS preset.
#[derive(Debug, Clone, Serialize)]
pub struct CkksPresetRow {
    pub n: usize,
    pub slots: usize,
    pub depth: usize,
    pub scale_bits: u32,
    pub primes_per_level: usize,
    #[serde(flatten)]
    pub chain: ModulusChain,
}

/// The presets of one scheme family.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum Presets {
    Integer(Vec<IntegerPresetRow>),
    Ckks(Vec<CkksPresetRow>),
}

/// The presets of `scheme` (bgv, bfv or ckks); any other name is a usage error.
pub fn presets(scheme: &str) -> Result<Presets> {
    match scheme {
        "bgv" | "bfv" => Ok(Presets::Integer(BgvParameters::presets().iter().map(integer_row).collect())),
        "ckks" => Ok(Presets::Ckks(CkksParameters::presets().iter().map(ckks_row).collect())),
        other => Err(BenchError::usage(format!("--scheme {other} is not known; choose one of: bgv, bfv, ckks"))),
    }
}

fn integer_row(p: &BgvParameters) -> IntegerPresetRow {
    IntegerPresetRow {
        n: p.degree(),
        plain_modulus: p.plain_modulus(),
        chain: ModulusChain::of(p.rlwe()),
        levels: p.max_level() + 1,
        relinearization: !p.special_primes().is_empty(),
    }
}

fn ckks_row(p: &CkksParameters) -> CkksPresetRow {
    CkksPresetRow {
        n: p.degree(),
        slots: p.max_slots(),
        depth: p.depth(),
        scale_bits: p.scale_bits(),
        primes_per_level: p.primes_per_level(),
        chain: ModulusChain::of(p.rlwe()),
    }
}

impl Presets {
    /// One JSON object per preset, one per line (`pimhe params --json`).
    pub fn json_lines(&self) -> Result<String> {
        let lines = match self {
            Presets::Integer(rows) => rows.iter().map(to_json).collect::<Result<Vec<_>>>()?,
            Presets::Ckks(rows) => rows.iter().map(to_json).collect::<Result<Vec<_>>>()?,
        };
        Ok(lines.join("\n"))
    }
}

/// "128-bit", or "<128" for a preset below the standard's bound.
fn security(bits: Option<u32>) -> String {
    bits.map_or("<128".to_string(), |b| format!("{b}-bit"))
}

impl Render for Presets {
    fn render(&self) -> String {
        let mut lines = Vec::new();
        match self {
            Presets::Integer(rows) => {
                lines.push(
                    "BGV and BFV presets (HomomorphicEncryption.org standard, ternary secret; log Q counts every prime)"
                        .to_string(),
                );
                lines.push(format!(
                    "{:>6} {:>6} {:>22} {:>10} {:>5} {:>7} {:>8} {:>9} {:>7}",
                    "N", "t", "data primes", "special", "dnum", "log Q", "max 128", "security", "relin"
                ));
                let bits = |p: u32| 32 - p.leading_zeros();
                for row in rows {
                    let data = format!("{} x {} bits", row.chain.data_primes.len(), bits(row.chain.data_primes[0]));
                    let special = match row.chain.special_primes.as_slice() {
                        [] => "-".to_string(),
                        [first, ..] => format!("{} x {} b", row.chain.special_primes.len(), bits(*first)),
                    };
                    let dnum = if row.relinearization { row.chain.dnum.to_string() } else { "-".to_string() };
                    lines.push(format!(
                        "{:>6} {:>6} {:>22} {:>10} {:>5} {:>7} {:>8} {:>9} {:>7}",
                        row.n,
                        row.plain_modulus,
                        data,
                        special,
                        dnum,
                        row.chain.log_q,
                        row.chain.max_log_q_128,
                        security(row.chain.security_bits),
                        if row.relinearization { "yes" } else { "no" }
                    ));
                }
            }
            Presets::Ckks(rows) => {
                lines.push(
                    "CKKS presets (HomomorphicEncryption.org standard, ternary secret; log Q counts every prime)"
                        .to_string(),
                );
                lines.push(format!(
                    "{:>6} {:>6} {:>6} {:>6} {:>12} {:>10} {:>5} {:>7} {:>8} {:>9}",
                    "N", "slots", "depth", "scale", "primes/level", "special", "dnum", "log Q", "max 128", "security"
                ));
                for row in rows {
                    lines.push(format!(
                        "{:>6} {:>6} {:>6} {:>6} {:>12} {:>10} {:>5} {:>7} {:>8} {:>9}",
                        row.n,
                        row.slots,
                        row.depth,
                        format!("2^{}", row.scale_bits),
                        row.primes_per_level,
                        format!("{} x 30 b", row.chain.special_primes.len()),
                        row.chain.dnum,
                        row.chain.log_q,
                        row.chain.max_log_q_128,
                        security(row.chain.security_bits)
                    ));
                }
            }
        }
        lines.join("\n")
    }
}
