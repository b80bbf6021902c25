//! The workloads `pimhe advise` weighs, and how each runs: the `bench` operations on a
//! representative DPU subset (`pipeline`, `bgv-mul-relin`, `bfv-mul-relin`), or whole jobs
//! with every DPU emulated ([`super::jobs`]: the statistics over U users, CKKS products).

use pimhe_schemes::bfv::{BfvContext, BfvParameters};
use pimhe_schemes::bgv::{BgvParameters, DEGREES};
use pimhe_schemes::ckks::CkksParameters;
use pimhe_schemes::rlwe::RlweScheme;
use pimhe_workloads::stats::Statistic;

use crate::error::{BenchError, Result};
use crate::measure::kernels::Op;

/// The workloads `--workload` names.
pub const WORKLOADS: [&str; 7] =
    ["pipeline", "bgv-mul-relin", "bfv-mul-relin", "mean", "variance", "linreg", "ckks-mul-relin-rescale"];

/// A workload and how it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Workload {
    /// NTT of the inputs, the BGV tensor, inverse NTT (DRAMatic's combined pipeline) on random
    /// residues over the preset's data primes.
    Pipeline,
    /// BGV multiply + relinearize of real ciphertexts at the preset.
    BgvMulRelin,
    /// BFV (BEHZ) multiply + relinearize of real ciphertexts at the preset.
    BfvMulRelin,
    /// A statistic of seed 002 over `--users` users (BGV).
    Statistics(Statistic),
    /// CKKS multiply + relinearize + rescale of real ciphertexts at the CKKS preset.
    CkksMulRelinRescale,
}

impl Workload {
    pub(super) fn parse(name: &str) -> Result<Self> {
        match name {
            "pipeline" => Ok(Self::Pipeline),
            "bgv-mul-relin" => Ok(Self::BgvMulRelin),
            "bfv-mul-relin" => Ok(Self::BfvMulRelin),
            "mean" => Ok(Self::Statistics(Statistic::Mean)),
            "variance" => Ok(Self::Statistics(Statistic::Variance)),
            "linreg" => Ok(Self::Statistics(Statistic::Linreg)),
            "ckks-mul-relin-rescale" => Ok(Self::CkksMulRelinRescale),
            other => Err(BenchError::usage(format!(
                "--workload {other} is not known: choose one of {}",
                WORKLOADS.join(", ")
            ))),
        }
    }

    /// The `bench` operation that runs it on a representative DPU subset; `None` for the whole
    /// jobs, which emulate every DPU.
    pub(super) fn op(self) -> Option<Op> {
        match self {
            Self::Pipeline => Some(Op::Pipeline),
            Self::BgvMulRelin => Some(Op::BgvMulRelin),
            Self::BfvMulRelin => Some(Op::BfvMul),
            Self::Statistics(_) | Self::CkksMulRelinRescale => None,
        }
    }

    /// Whether its batch is `--users` (the statistics) rather than `--batch`.
    pub(super) fn takes_users(self) -> bool {
        matches!(self, Self::Statistics(_))
    }

    /// The ring degrees it accepts: the presets (with a key-switching prime when a product is
    /// relinearized; the statistics relinearize their sums of products where the preset has
    /// one).
    pub(super) fn allowed_degrees(self) -> Vec<usize> {
        match self {
            Self::CkksMulRelinRescale => CkksParameters::presets().iter().map(|p| p.rlwe().degree()).collect(),
            Self::Pipeline | Self::Statistics(_) => {
                DEGREES.iter().copied().filter(|&n| BgvParameters::preset(n).is_ok()).collect()
            }
            Self::BgvMulRelin | Self::BfvMulRelin => DEGREES
                .iter()
                .copied()
                .filter(|&n| BgvParameters::preset(n).is_ok_and(|p| !p.special_primes().is_empty()))
                .collect(),
        }
    }

    /// Why `--n` is restricted, for the refusal.
    pub(super) fn degrees_note(self) -> &'static str {
        match self {
            Self::Pipeline | Self::Statistics(_) => "the 128-bit presets",
            Self::BgvMulRelin | Self::BfvMulRelin => {
                "the 128-bit presets with a key-switching prime, for relinearization"
            }
            Self::CkksMulRelinRescale => "the 128-bit CKKS presets",
        }
    }

    /// Primes the DPUs hold at the preset of `n` for the subset workloads: the data primes for
    /// the pipeline, every prime the scheme's operation touches otherwise (the whole jobs
    /// count theirs from their contexts).
    pub(super) fn backend_primes(self, n: usize) -> Result<usize> {
        Ok(match self {
            Self::Pipeline => BgvParameters::preset(n)?.data_primes().len(),
            Self::BgvMulRelin | Self::Statistics(_) => BgvParameters::preset(n)?.primes().len(),
            Self::BfvMulRelin => {
                BfvContext::new(BfvParameters::from(BgvParameters::preset(n)?))?.backend_primes().len()
            }
            Self::CkksMulRelinRescale => {
                let ctx = pimhe_schemes::ckks::CkksContext::new(CkksParameters::preset(n)?)?;
                ctx.backend_primes().len()
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workload_names_map_to_how_they_run() {
        assert_eq!(Workload::parse("bfv-mul-relin").unwrap().op(), Some(Op::BfvMul));
        assert_eq!(Workload::parse("pipeline").unwrap().op(), Some(Op::Pipeline));
        assert_eq!(Workload::parse("linreg").unwrap(), Workload::Statistics(Statistic::Linreg));
        assert_eq!(Workload::parse("ckks-mul-relin-rescale").unwrap().op(), None);
        assert!(Workload::parse("mean").unwrap().takes_users());
        assert!(Workload::Pipeline.allowed_degrees().contains(&1024));
        assert!(!Workload::BgvMulRelin.allowed_degrees().contains(&1024));
        assert!(Workload::CkksMulRelinRescale.allowed_degrees().contains(&65536));
        let refused = Workload::parse("median").unwrap_err().to_string();
        assert!(refused.contains("--workload median is not known") && refused.contains("linreg"), "{refused}");
    }
}
