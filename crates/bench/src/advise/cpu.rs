//! The CPU side of the verdict: the server CPU of DRAMatic's setup that this machine's CPU
//! ([`CpuFacts`], measure's) is scaled to ([`ServerCpu::scale`]).

use serde::Serialize;

use crate::measure::machine::CpuFacts;

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
