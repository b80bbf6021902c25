//! Scheme benchmarks (`pimhe bench scheme`): time a scheme's operations on ciphertext batches built from the
//! 128-bit preset of a ring degree, for side-by-side comparisons with other libraries
//! (bench/compare/ in the repository runs it next to SEAL and OpenFHE).
//!
//! Where `pimhe bench OP` times single backend kernels on random residues, this command times
//! what a user of the library calls: encryption with the public key, decryption, the tensor
//! product, relinearization, both together, modulus switching (BGV; BFV has no modulus chain),
//! and the NTT and inverse NTT of a ciphertext's two components. BFV's product is BEHZ's
//! (base extension to Bsk, tensor, fast floor, Shenoy-Kumaresan back to q). Every operation runs on a whole batch of C ciphertexts (one
//! call), so each is reported per batch and per ciphertext (batch time / C). Keys, plaintexts
//! and the operands are made once, untimed; an untimed warm-up round (first-touch allocations,
//! caches) is followed by `--repeat` timed rounds of every operation, and the report gives the
//! best and the median round. The warm-up's product is decrypted and checked slot by slot
//! against the plaintext product, so a report is never the time of a wrong computation.

mod bandwidth_use;
pub mod ckks;
mod config;
mod exact;
pub mod modeled;
mod on_backend;
mod rounds;
pub mod special;

pub use bandwidth_use::BandwidthUse;
pub use config::{SchemeConfig, RULES};
pub use exact::{measure_bfv_ops, measure_exact, BfvOpsReport, SchemeParams, SchemeReport};
pub(crate) use rounds::median;
pub use rounds::{ops_table, OpObserver, OpTiming, Rounds};

use pimhe_workloads::progress::Progress;
use serde::Serialize;

use crate::error::Result;
use crate::format::Render;
use config::validate_common;

/// What [`measure`] returns (`--json` serialises the inner report as it is).
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum SchemeBenchReport {
    /// BGV or BFV.
    Exact(SchemeReport),
    /// CKKS.
    Ckks(ckks::CkksReport),
    /// BFV on special moduli.
    Special(special::SpecialSchemeReport),
}

impl Render for SchemeBenchReport {
    fn render(&self) -> String {
        match self {
            SchemeBenchReport::Exact(r) => r.render(),
            SchemeBenchReport::Ckks(r) => r.render(),
            SchemeBenchReport::Special(r) => r.render(),
        }
    }
}

/// Runs `pimhe bench scheme`: validates `config`, measures, and checks every result against the
/// plaintext computation (bfv-special: [`special::measure_special`]). `progress` sees the rounds (the warm-up and the timed ones) and, for
/// CKKS, the Galois keys.
pub fn measure(config: &SchemeConfig, progress: &dyn Progress) -> Result<SchemeBenchReport> {
    if config.scheme == "ckks" {
        validate_common(config)?;
        return Ok(SchemeBenchReport::Ckks(ckks::measure(config, progress)?));
    }
    if config.scheme == "bfv-special" {
        return Ok(SchemeBenchReport::Special(special::measure_special(config, progress)?));
    }
    Ok(SchemeBenchReport::Exact(measure_exact(config, progress)?))
}
