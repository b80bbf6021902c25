//! The CPU side of the verdict: the facts of this machine's CPU, and the server CPU of
//! DRAMatic's setup it is scaled to ([`ServerCpu::scale`]).

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

/// The server CPU the CPU time is scaled to, with its power.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ServerCpu {
    /// Its facts.
    pub facts: CpuFacts,
    /// Full-system power at the wall under load, watts.
    pub power_w: f64,
}

impl ServerCpu {
    /// DRAMatic's CPU baseline (section 4.1: SEAL ran on an Intel Xeon Gold 5415+; section 4.4:
    /// 8 physical cores, 223 W at the wall with 16 threads). The clock (2.9 GHz base) is
    /// Intel's specification of that part, not DRAMatic's; the lanes are AVX-512's 16.
    pub fn dramatic() -> Self {
        Self {
            facts: CpuFacts {
                name: "Intel Xeon Gold 5415+ (DRAMatic's SEAL machine)".to_string(),
                cores: 8,
                ghz: 2.9,
                simd_lanes: 16,
                source: "DRAMatic 4.1 (the CPU) and 4.4 (8 physical cores, 223 W with 16 threads); 2.9 GHz base \
                         clock from Intel's specification; AVX-512"
                    .to_string(),
            },
            power_w: 223.0,
        }
    }

    /// The factor that turns seconds on `here` into seconds on this server: `here`'s cores x GHz x
    /// lanes over the server's (1 when `here`'s clock is unknown, so nothing is scaled blindly).
    /// It credits the server with every core, cycle and lane, and ignores memory bandwidth and
    /// SMT: an upper bound on the server's speed, so a PIM win over the scaled CPU is not an
    /// artefact of a slow machine here.
    pub fn scale(&self, here: &CpuFacts) -> f64 {
        if here.capacity() > 0.0 {
            here.capacity() / self.facts.capacity()
        } else {
            1.0
        }
    }
}
