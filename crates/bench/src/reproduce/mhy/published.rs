//! What MHY+ states as numbers (shared/seeds/001_*, section IV-A), each with where it is: the
//! text's "up to" ratios over Fig. 3's bars, Table II's alpha, and the setup it ran on.

use pimhe_pim::raw_poly::RawOp;
use serde::Serialize;

/// The paper's modulus, 2^16 + 1 (section IV-A: "q = 2^16 + 1").
pub const PAPER_Q: u32 = 65537;

/// Polynomial lengths of Fig. 3 (a, c, e): 2^10 .. 2^20 (the text names 2^10, 2^12, 2^16,
/// 2^18 and 2^20; the even powers between are the figure's bars).
pub const PAPER_SIZES: [usize; 6] = [1 << 10, 1 << 12, 1 << 14, 1 << 16, 1 << 18, 1 << 20];

/// Fig. 3 (b, d, f): n = 2^20 on these DPU counts (section IV-A, "DPU scaling").
pub const PAPER_SCALING_N: usize = 1 << 20;
/// The DPU counts of Fig. 3 (b, d, f).
pub const PAPER_SCALING_DPUS: [usize; 5] = [64, 128, 256, 512, 1024];

/// DPUs of Fig. 3 (a, c, e). The paper does not state them for these panels; its text explains
/// the convolution's speedup by "a large number of DPUs, e.g., 1024", the largest of panels
/// (b, d, f), so 1024 it is here (at most n / 2: a DPU holds at least two coefficients).
pub const PAPER_DPUS: usize = 1024;

/// Tasklets per DPU ("DPUs use 16 tasklets", Methodology).
pub const PAPER_TASKLETS: u32 = 16;

/// CPU threads of the baseline ("the CPU-based experiments are run with 16 threads").
pub const PAPER_CPU_THREADS: usize = 16;
/// Clock of the paper's Xeon Silver 4210R, GHz (Experimental setup: "clocked at 2.40GHz").
pub const PAPER_CPU_GHZ: f64 = 2.4;
/// Its cores (Experimental setup: two sockets of a 10-core Xeon Silver 4210R): the most threads the
/// multi-threaded HAL baseline scales over.
pub const PAPER_CPU_CORES: usize = 20;
/// The paper's CPU, as its setup names it.
pub const PAPER_CPU: &str = "2 x 10-core Intel Xeon Silver 4210R at 2.40 GHz, 16 threads";

/// Which side of Fig. 3 a stated ratio puts ahead, and with which costs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Claim {
    /// dpu-time / cpu-time: the CPU "up to X faster" than the DPUs without copies.
    CpuFaster,
    /// (dpu-time + host-dpu + dpu-host) / cpu-time: the CPU ahead with copies.
    CpuFasterWithCopies,
    /// cpu-time / dpu-time: the DPUs ahead without copies.
    DpuFaster,
    /// cpu-time / (dpu-time + host-dpu + dpu-host): the DPUs ahead with copies.
    DpuFasterWithCopies,
}

/// One "up to X" ratio the text states: the largest over `sizes` of `claim`'s ratio.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StatedRatio {
    /// Stable id of the comparison row.
    pub id: &'static str,
    /// The operation.
    pub op: RawOp,
    /// Which ratio.
    pub claim: Claim,
    /// The lengths the text takes the maximum over.
    pub sizes: &'static [usize],
    /// The stated figure.
    pub published: f64,
    /// Where it is stated.
    pub source: &'static str,
}

const SMALL: &[usize] = &[1 << 10, 1 << 12, 1 << 14, 1 << 16];
const LARGE: &[usize] = &[1 << 18, 1 << 20];

/// Every ratio section IV-A states for Fig. 3 (a, c, e), in the text's order.
pub const STATED_RATIOS: [StatedRatio; 8] = [
    StatedRatio {
        id: "fig3a-add-cpu-faster",
        op: RawOp::Add,
        claim: Claim::CpuFaster,
        sizes: SMALL,
        published: 7.0,
        source: "section IV-A, Fig. 3 (a): CPU up to 7x faster at 2^10..2^16",
    },
    StatedRatio {
        id: "fig3a-add-dpu-faster",
        op: RawOp::Add,
        claim: Claim::DpuFaster,
        sizes: LARGE,
        published: 5.0,
        source: "section IV-A, Fig. 3 (a): DPUs up to 5x faster at 2^18, 2^20 without copies",
    },
    StatedRatio {
        id: "fig3c-conv-cpu-faster",
        op: RawOp::Conv,
        claim: Claim::CpuFaster,
        sizes: &[1 << 10, 1 << 12],
        published: 3.7,
        source: "section IV-A, Fig. 3 (c): CPU up to 3.7x faster at 2^10, 2^12",
    },
    StatedRatio {
        id: "fig3c-conv-dpu-faster",
        op: RawOp::Conv,
        claim: Claim::DpuFaster,
        sizes: &[1 << 16, 1 << 18],
        published: 1397.0,
        source: "section IV-A, Fig. 3 (c): DPUs up to 1397x faster at 2^16, 2^18 without copies",
    },
    StatedRatio {
        id: "fig3c-conv-dpu-faster-with-copies",
        op: RawOp::Conv,
        claim: Claim::DpuFasterWithCopies,
        sizes: &[1 << 16, 1 << 18],
        published: 898.0,
        source: "section IV-A, Fig. 3 (c) and Table II: DPUs up to 898x faster with copies (n = 2^18)",
    },
    StatedRatio {
        id: "fig3e-mul-cpu-faster",
        op: RawOp::Mul,
        claim: Claim::CpuFaster,
        sizes: SMALL,
        published: 9.0,
        source: "section IV-A, Fig. 3 (e): CPU up to 9x faster at 2^10..2^16 without copies",
    },
    StatedRatio {
        id: "fig3e-mul-dpu-faster",
        op: RawOp::Mul,
        claim: Claim::DpuFaster,
        sizes: LARGE,
        published: 6.0,
        source: "section IV-A, Fig. 3 (e): DPUs up to 6x faster at 2^18, 2^20 without copies",
    },
    StatedRatio {
        id: "fig3e-mul-cpu-faster-with-copies",
        op: RawOp::Mul,
        claim: Claim::CpuFasterWithCopies,
        sizes: LARGE,
        published: 3.0,
        source: "section IV-A, Fig. 3 (e): with copies the CPU up to 3x faster (at the sizes the DPUs win without)",
    },
];

/// Fig. 3 (b, d, f)'s statement: DPU execution times improve "as the number of DPUs increases
/// up to 512 DPUs" — the fastest DPU count of the five.
pub const PUBLISHED_FASTEST_DPUS: usize = 512;
/// Where [`PUBLISHED_FASTEST_DPUS`] is stated.
pub const SCALING_SOURCE: &str = "section IV-A, DPU scaling, Fig. 3 (b, d, f): times improve up to 512 DPUs";

/// Table II's alpha for `op` at length `n`: on-DPU operations / coefficients copied both ways
/// (2n in, n out): 1/3 for the addition and the coefficient-wise product, (n^2 + (n - 1)^2) / 3n
/// for the convolution (n^2 products and (n - 1)^2 additions of the linear product).
pub fn published_alpha(op: RawOp, n: usize) -> f64 {
    let n = n as f64;
    match op {
        RawOp::Add | RawOp::Mul => 1.0 / 3.0,
        RawOp::Conv => (n * n + (n - 1.0) * (n - 1.0)) / (3.0 * n),
    }
}

/// Where Table II is.
pub const ALPHA_SOURCE: &str = "Table II: alpha = on-DPU operations / coefficients copied";

/// Fig. 7's statement: with the copies, one DPU stage of OpenFHE's Cooley-Tukey NTT is "up to
/// 21x slower" than the single-threaded CPU's (section IV-B, "NTT in OpenFHE").
pub const FIG7_CPU_FASTER_WITH_COPIES: f64 = 21.0;
/// Where [`FIG7_CPU_FASTER_WITH_COPIES`] is stated.
pub const FIG7_SOURCE: &str =
    "section IV-B, Fig. 7: one Cooley-Tukey iteration on DPUs with copying up to 21x slower than the single-threaded CPU";

/// The operation of a HAL row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum HalOp {
    /// Figs. 4 and 8: DCRT polynomial addition.
    Add,
    /// Fig. 5: DCRT polynomial multiplication (coefficient-wise, NTT form).
    Mul,
}

impl HalOp {
    /// Both, in the figures' order.
    pub const ALL: [HalOp; 2] = [HalOp::Add, HalOp::Mul];

    /// The operation's name.
    pub fn name(self) -> &'static str {
        match self {
            HalOp::Add => "add",
            HalOp::Mul => "multiply",
        }
    }
}

/// Which ratio a statement of Figs. 4, 5 and 8 makes, over the HAL rows of its operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HalClaim {
    /// single-threaded cpu-time / dpu-time.
    DpuFasterThanSingle,
    /// multi-threaded cpu-time / dpu-time.
    DpuFasterThanMulti,
    /// single-threaded cpu-time / (dpu-time + copies).
    DpuFasterThanSingleWithCopies,
    /// (dpu-time + copies) / multi-threaded cpu-time.
    MultiFasterWithCopies,
    /// (dpu-time + copies) / single-threaded cpu-time.
    SingleFasterWithCopies,
}

/// One "up to X" of section IV-B's OpenFHE and HElib evaluations: the largest over the rows
/// of `op`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HalStated {
    /// Stable id of the comparison row.
    pub id: &'static str,
    /// The operation.
    pub op: HalOp,
    /// Which ratio.
    pub claim: HalClaim,
    /// The stated figure.
    pub published: f64,
    /// Where it is stated.
    pub source: &'static str,
}

/// Every ratio section IV-B states for Figs. 4, 5 and 8, in the text's order.
pub const HAL_STATED: [HalStated; 7] = [
    HalStated {
        id: "fig4-add-dpu-faster-than-single",
        op: HalOp::Add,
        claim: HalClaim::DpuFasterThanSingle,
        published: 97.0,
        source: "section IV-B, Fig. 4: OpenFHE add on DPUs up to 97x faster than single-threaded without copies",
    },
    HalStated {
        id: "fig4-add-dpu-faster-than-multi",
        op: HalOp::Add,
        claim: HalClaim::DpuFasterThanMulti,
        published: 8.0,
        source: "section IV-B, Fig. 4: OpenFHE add on DPUs up to 8x faster than multi-threaded without copies",
    },
    HalStated {
        id: "fig4-add-multi-faster-with-copies",
        op: HalOp::Add,
        claim: HalClaim::MultiFasterWithCopies,
        published: 3.0,
        source: "section IV-B, Fig. 4: with copies the multi-threaded CPU up to 3x faster",
    },
    HalStated {
        id: "fig5-mul-dpu-faster-than-single",
        op: HalOp::Mul,
        claim: HalClaim::DpuFasterThanSingle,
        published: 15.0,
        source: "section IV-B, Fig. 5: OpenFHE multiply on DPUs up to 15x faster than single-threaded without copies",
    },
    HalStated {
        id: "fig5-mul-dpu-faster-than-single-with-copies",
        op: HalOp::Mul,
        claim: HalClaim::DpuFasterThanSingleWithCopies,
        published: 6.0,
        source: "section IV-B, Fig. 5: OpenFHE multiply on DPUs up to 6x faster than single-threaded with copies",
    },
    HalStated {
        id: "fig8-helib-add-dpu-faster-than-single",
        op: HalOp::Add,
        claim: HalClaim::DpuFasterThanSingle,
        published: 10.0,
        source: "section IV-B, Fig. 8: HElib add on DPUs up to 10x faster than single-threaded without copies",
    },
    HalStated {
        id: "fig8-helib-add-single-faster-with-copies",
        op: HalOp::Add,
        claim: HalClaim::SingleFasterWithCopies,
        published: 13.0,
        source: "section IV-B, Fig. 8: with copies the single-threaded HElib add up to 13x faster",
    },
];
