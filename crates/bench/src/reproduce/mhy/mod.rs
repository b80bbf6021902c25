//! MHY+'s reproduction (`pimhe bench reproduce mhy`; shared/seeds/001_*, section IV-A): raw
//! polynomial addition, textbook negacyclic convolution and coefficient-wise multiplication in
//! Z_q[x]/(x^n + 1), q = 2^16 + 1, one polynomial spread over the DPUs by coefficient ranges,
//! 16 tasklets.
//!
//! - **Fig. 3 (a, c, e)**: n = 2^10 .. 2^20 on [`PAPER_DPUS`] DPUs (at most n / 2);
//! - **Fig. 3 (b, d, f)**: n = 2^20 on 64 .. 1024 DPUs, the transfers by the rank structure;
//! - **Table II**: alpha, the on-DPU operations per copied coefficient, per operation and n;
//! - every ratio the text states ([`STATED_RATIOS`], the fastest DPU count) as a [`Comparison`];
//! - **Figs. 6-7**: one NTT stage per launch with the copies around it, beside the CPU's stage
//!   and pimhe's resident NTT ([`Fig7Row`]);
//! - **Figs. 4-5, 8**: the HAL path's add and multiply, on pimhe's `Backend` and placement
//!   ([`HalRow`]) and in MHY+'s own layout and shapes from the authors' benchmark, towers of
//!   60-bit moduli split over the DPUs by coefficient ranges ([`HalLayoutRow`]), section IV-B's
//!   statements judged on each ([`HAL_STATED`]);
//! - DRAMatic's published MHY+ and SEAL rows beside DRAMatic's own ([`Peers`]).
//!
//! The DPU side is modeled (`upmem-v1b@1 (modeled)`) from the counts of the kernels of
//! `dpu/kernels/raw_poly.h` executed on the emulator: the slowest DPU's range emulated, or for
//! the long convolutions extrapolated from emulated chunks ([`counts`]). The CPU side is a
//! simple single-threaded Rust loop timed here once ([`cpu`]; the convolution beyond
//! [`cpu::CPU_CONV_MAX_N`] extrapolated by n^2) and scaled to the paper's 16 threads by a
//! stated rule. `--quick` runs two small lengths and executes every row whole on the emulated
//! DPUs, comparing the result with the CPU loop's.
//!
//! ```
//! use pimhe_bench::reproduce::mhy::{slowest_dpu, CountsBasis, PAPER_Q};
//! use pimhe_pim::emulator::EmulatorConfig;
//! use pimhe_pim::layout::Variant;
//! use pimhe_pim::model::UpmemModel;
//! use pimhe_pim::raw_poly::RawOp;
//!
//! // Fig. 3 (c) at n = 2^20 on 1024 DPUs: 1024 outputs x 2^20 products per DPU, extrapolated.
//! let config = EmulatorConfig::default();
//! let (counts, basis) = slowest_dpu(RawOp::Conv, PAPER_Q, 1 << 20, 1024, &config, Variant::Barrett).unwrap();
//! assert!(matches!(basis, CountsBasis::Extrapolated { .. }));
//! let seconds = UpmemModel::v1b().launch_seconds(&[counts]);
//! assert!(seconds > 100.0 && seconds < 1000.0, "{seconds}");
//! ```
//!
//! `pimhe bench reproduce mhy --quick` (or `Mhy::run(&MhyConfig { quick: true, .. }, ..)`)
//! runs it all at two small lengths in seconds.

mod counts;
mod cpu;
mod hal;
mod hal_layout;
mod ntt;
mod peers;
mod published;
mod report;
mod rows;

pub use counts::{conv_extrapolated, slowest_dpu, CountsBasis, EMULATED_PRODUCTS_MAX};
pub use cpu::{compute, median_seconds, scaled, scaling_rule, CpuTime, CPU_CONV_MAX_N};
pub use hal::{HalRow, HalSides, HAL_POLYS, HAL_SIZES, HAL_TOWERS, QUICK_HAL_SIZES};
pub use hal_layout::{cpu_op, HalLayoutRow, LAYOUT_N, LAYOUT_TOWERS, QUICK_LAYOUT_N, QUICK_LAYOUT_TOWERS, TOWER_BITS};
pub use ntt::{ct_ntt, ct_stage, ntt_prime, scaled_single_thread, Fig7Row, HAL_DPUS, RESIDENT_VARIANT};
pub use peers::{pair, PeerRow, Peers};
pub use published::{
    published_alpha, Claim, HalClaim, HalOp, HalStated, StatedRatio, FIG7_CPU_FASTER_WITH_COPIES, HAL_STATED,
    PAPER_CPU_CORES, PAPER_DPUS, PAPER_Q, PAPER_SCALING_DPUS, PAPER_SCALING_N, PAPER_SIZES, PUBLISHED_FASTEST_DPUS,
    STATED_RATIOS,
};
pub use report::{
    stated_ratio, Mhy, MhyConfig, MhyReport, QUICK_FIG7_SIZES, QUICK_SCALING_DPUS, QUICK_SCALING_N, QUICK_SIZES,
};
pub use rows::Fig3Row;
