//! The machine a measurement runs on: its CPU's facts, by which a CPU time measured here is
//! named and scaled.

use pimhe_math::Isa;
use serde::Serialize;

/// A CPU's facts as the scaling rule uses them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CpuFacts {
    /// Model name.
    pub name: String,
    /// Cores (threads) that run the work.
    pub cores: usize,
    /// Clock, GHz.
    pub ghz: f64,
    /// 32-bit lanes of the vector unit pimhe's kernels use.
    pub simd_lanes: u32,
    /// Where the facts come from.
    pub source: String,
}

impl CpuFacts {
    /// Relative throughput under the rule: cores x GHz x lanes.
    pub fn capacity(&self) -> f64 {
        self.cores as f64 * self.ghz * self.simd_lanes as f64
    }

    /// This machine: the CPU backend's threads, the clock and name from `/proc/cpuinfo` (the
    /// first processor's `cpu MHz` and `model name`; 0 GHz and "unknown" where it is missing),
    /// and the lanes of the ISA pimhe's kernels run on ([`Isa::active`]).
    pub fn this_machine(threads: usize) -> Self {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let field = |key: &str| {
            cpuinfo
                .lines()
                .find(|line| line.split(':').next().is_some_and(|k| k.trim() == key))
                .and_then(|line| line.split_once(':'))
                .map(|(_, value)| value.trim().to_string())
        };
        let ghz = field("cpu MHz").and_then(|mhz| mhz.parse::<f64>().ok()).map_or(0.0, |mhz| mhz / 1000.0);
        let isa = Isa::active();
        Self {
            name: field("model name").unwrap_or_else(|| "unknown".to_string()),
            cores: threads,
            ghz,
            simd_lanes: isa_lanes(isa),
            source: format!("this machine: /proc/cpuinfo, the CPU backend's threads, pimhe's ISA {}", isa.name()),
        }
    }
}

/// 32-bit residues per vector register of `isa`.
fn isa_lanes(isa: Isa) -> u32 {
    match isa {
        Isa::Scalar => 1,
        Isa::Avx2 => 8,
        Isa::Avx512 => 16,
    }
}
