//! The GPU side: a roofline per kernel.
//!
//! `time = launch overhead + max(bytes / bandwidth, instructions / instruction throughput)`.
//!
//! - **Bytes**: an element-wise kernel reads every operand once and writes every output once
//!   ([`Opcode::operands`], 4-byte words, `degree x limbs x polys`). NTT and INTT read and write
//!   their data once (**assumption**: Cheddar-style multi-pass NTT whose passes stay in shared
//!   memory / L2, so DRAM sees one pass). Base conversion reads `from` limbs and writes `limbs`;
//!   an automorphism reads and writes once.
//! - **Instructions** (32-bit integer instructions; Table III's TOPS count a multiply-add as two
//!   operations, so the instruction rate is TOPS / 2): a 32-bit Montgomery modular
//!   multiplication is [`MODMUL_INSTRUCTIONS`] = 6 (low and high product, the product by
//!   -q^-1, the high product by q, a subtraction and a conditional correction), a modular
//!   addition [`MODADD_INSTRUCTIONS`] = 3 (add, compare, conditional subtract) — the paper's "a
//!   handful of instructions". An element-wise MMAC is one of each; an NTT butterfly is one
//!   modular multiplication and two modular additions, `(N / 2) log2 N` butterflies per limb;
//!   base conversion multiplies each input limb by its constant once per coefficient, then
//!   accumulates `from x limbs` products with two-instruction wide multiply-adds (lazy
//!   reduction) and reduces each output once.
//! - **Launch**: [`GPU_LAUNCH_S`] per kernel.
//! - **Energy**: board power (TDP) x time — an upper bound for memory-bound kernels, which draw
//!   less than TDP (**assumption**, stated in the report).

use serde::Serialize;

use super::system::System;
use crate::isa::{GpuKernel, GpuOp, WORD_BYTES};

/// Integer instructions of one 32-bit Montgomery modular multiplication on a GPU.
pub const MODMUL_INSTRUCTIONS: u64 = 6;
/// Integer instructions of one modular addition or subtraction.
pub const MODADD_INSTRUCTIONS: u64 = 3;
/// Integer instructions of one wide (64-bit accumulator) multiply-add of a lazily reduced sum.
pub const WIDE_MAC_INSTRUCTIONS: u64 = 2;
/// Integer instructions per element of an automorphism (index arithmetic).
pub const PERMUTE_INSTRUCTIONS: u64 = 2;

/// Launch overhead of one GPU kernel, and of one GPU <-> PIM transition: 2 us. Anaheim
/// (section V-C): "It only takes a couple of microseconds for each transition".
pub const GPU_LAUNCH_S: f64 = 2e-6;

/// Cost of one GPU kernel.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct GpuCost {
    /// Launch overhead + roofline time.
    pub seconds: f64,
    /// Board power x `seconds`.
    pub joules: f64,
    /// DRAM bytes read and written.
    pub bytes: u64,
    /// 32-bit integer instructions.
    pub int_ops: u64,
    /// The roofline part of `seconds` (no launch overhead).
    pub busy_s: f64,
}

/// DRAM bytes and integer instructions of a kernel.
pub fn work(kernel: &GpuKernel) -> (u64, u64) {
    let n = kernel.degree as u64;
    let l = kernel.limbs as u64;
    let p = kernel.polys as u64;
    let w = WORD_BYTES as u64;
    let elems = n * l * p;
    let mac = MODMUL_INSTRUCTIONS + MODADD_INSTRUCTIONS;
    match kernel.op {
        GpuOp::Ntt | GpuOp::Intt => {
            let log_n = u64::from(kernel.degree.max(2).trailing_zeros());
            let butterflies = n / 2 * log_n * l * p;
            (2 * elems * w, butterflies * (MODMUL_INSTRUCTIONS + 2 * MODADD_INSTRUCTIONS))
        }
        GpuOp::BaseConvert { from } => {
            let from = from as u64;
            let bytes = (from + l) * n * p * w;
            let ops = n * p * (from * MODMUL_INSTRUCTIONS + from * l * WIDE_MAC_INSTRUCTIONS + l * MODMUL_INSTRUCTIONS);
            (bytes, ops)
        }
        GpuOp::Automorphism => (2 * elems * w, elems * PERMUTE_INSTRUCTIONS),
        GpuOp::Elementwise(op) => {
            let o = op.operands();
            ((o.reads + o.writes) as u64 * elems * w, o.mmac_ops as u64 * elems * mac)
        }
    }
}

/// Roofline time of `bytes` and `int_ops` on `system`'s GPU (no launch).
pub fn roofline_s(system: &System, bytes: u64, int_ops: u64) -> f64 {
    let memory = bytes as f64 / system.gpu_bandwidth;
    let compute = int_ops as f64 / (system.gpu_int_ops_per_s / 2.0);
    memory.max(compute)
}

/// Cost of `kernel` on `system`'s GPU.
pub fn cost(system: &System, kernel: &GpuKernel) -> GpuCost {
    let (bytes, int_ops) = work(kernel);
    let busy_s = roofline_s(system, bytes, int_ops);
    let seconds = GPU_LAUNCH_S + busy_s;
    GpuCost { seconds, joules: seconds * system.energy.gpu_active_w, bytes, int_ops, busy_s }
}
