//! The work a GPU + near-bank PIM system runs: Anaheim's PIM instructions (Table II) and the
//! GPU kernels that stay on the GPU (NTT, base conversion, automorphism; and, without PIM, the
//! element-wise operations too).
//!
//! A [`Program`] is a sequence of [`Kernel`]s in execution order, each with the shape it runs
//! on (ring degree, limbs, how many polynomials or instances). The [`crate::planner`] builds it
//! from a recorded trace; the [`crate::model`] prices it.

use serde::Serialize;

/// Bytes a residue takes in DRAM: Anaheim stores 32-bit words (its primes are below 2^28 and
/// the PIM unit truncates to 28 bits; section VI-A), as pimhe's one data layout does.
pub const WORD_BYTES: usize = 4;

/// A PIM instruction of Anaheim's Table II. `K` of the compound accumulations is the number of
/// terms. Every instruction works limb by limb on polynomials in NTT form (or on any
/// element-wise data); constants and primes are broadcast from the instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum Opcode {
    /// x = a (a copy).
    Move,
    /// x = -a.
    Neg,
    /// x = a + b.
    Add,
    /// x = a - b.
    Sub,
    /// x = a * b.
    Mult,
    /// x = a * b + c.
    Mac,
    /// x = a * p, y = b * p (a ciphertext times a plaintext).
    PMult,
    /// x = a * p + c, y = b * p + d.
    PMac,
    /// x = a + C.
    CAdd,
    /// x = a - C.
    CSub,
    /// x = C * a.
    CMult,
    /// x = C * a + b.
    CMac,
    /// x = a c, y = a d + b c, z = b d (the tensor of two ciphertexts).
    Tensor,
    /// x = a a, y = 2 a b, z = b b (the tensor of a ciphertext with itself).
    TensorSq,
    /// x = C (a - b) (the tail of ModDown: subtract the converted residue, scale by P^-1).
    ModDownEp,
    /// x = sum a_i p_i, y = sum b_i p_i over K terms (KeyMult, a linear transform's products).
    PAccum(usize),
    /// x = C_0 + sum C_i a_i, y = C_0 + sum C_i b_i over K terms (a constant linear
    /// combination: hoisted rotations' and polynomial evaluation's accumulation).
    CAccum(usize),
}

/// How many polynomials an instruction reads and writes per element position, and how many
/// modular multiply-accumulates it takes there.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Operands {
    /// Polynomials read (each one word per element position).
    pub reads: usize,
    /// Polynomials written.
    pub writes: usize,
    /// Modular multiply-accumulate operations (one MMAC lane-cycle each per element).
    pub mmac_ops: usize,
}

impl Opcode {
    /// Every opcode with fixed arity, and the accumulations at `k` terms: the set the
    /// microbenchmark of Fig. 9 sweeps.
    pub fn all(k: usize) -> Vec<Opcode> {
        use Opcode::*;
        vec![
            Move,
            Neg,
            Add,
            Sub,
            Mult,
            Mac,
            PMult,
            PMac,
            CAdd,
            CSub,
            CMult,
            CMac,
            Tensor,
            TensorSq,
            ModDownEp,
            PAccum(k),
            CAccum(k),
        ]
    }

    /// The name as Table II spells it, with K for the accumulations (`PAccum(4)`).
    pub fn name(self) -> String {
        match self {
            Opcode::PAccum(k) => format!("PAccum({k})"),
            Opcode::CAccum(k) => format!("CAccum({k})"),
            other => format!("{other:?}"),
        }
    }

    /// Reads, writes and MMAC operations per element position (Table II's operand lists). Each
    /// output of a product-sum takes one MMAC per product; an addition, a negation or a copy
    /// passes the MMAC lanes once (the unit multiplexes its inputs; section VI-A).
    pub fn operands(self) -> Operands {
        use Opcode::*;
        let (reads, writes, mmac_ops) = match self {
            Move | Neg | CAdd | CSub | CMult => (1, 1, 1),
            Add | Sub | Mult | CMac => (2, 1, 1),
            Mac => (3, 1, 1),
            PMult => (3, 2, 2),
            PMac => (5, 2, 2),
            Tensor => (4, 3, 4),
            TensorSq => (2, 3, 3),
            // C (a - b): the difference, then the product.
            ModDownEp => (2, 1, 2),
            PAccum(k) => (3 * k, 2, 2 * k),
            CAccum(k) => (2 * k, 2, 2 * k),
        };
        Operands { reads, writes, mmac_ops }
    }
}

/// A PIM instruction on a shape: `instances` independent executions (one per ciphertext or
/// polynomial group of a batch), each over `limbs` limbs of `degree` residues.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct PimInstruction {
    /// The instruction.
    pub opcode: Opcode,
    /// Ring degree N.
    pub degree: usize,
    /// Limbs (RNS primes) of every operand.
    pub limbs: usize,
    /// Independent executions of the instruction.
    pub instances: usize,
}

/// What a GPU kernel does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum GpuOp {
    /// Forward NTT of every limb.
    Ntt,
    /// Inverse NTT of every limb.
    Intt,
    /// FastBConv from `from` limbs to the kernel's `limbs` output limbs (coefficient form).
    BaseConvert {
        /// Input limbs.
        from: usize,
    },
    /// A permutation of every limb's residues (X -> X^k).
    Automorphism,
    /// An element-wise operation of Table II run as a GPU kernel (the "w/o PIM" baseline, or
    /// work the planner keeps on the GPU).
    Elementwise(Opcode),
}

/// A GPU kernel on a shape: `polys` polynomials of `limbs` limbs of `degree` residues (for an
/// element-wise opcode, `polys` counts instances, as [`PimInstruction::instances`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct GpuKernel {
    /// The kernel.
    pub op: GpuOp,
    /// Ring degree N.
    pub degree: usize,
    /// Limbs of the output (and of the input, but for base conversion).
    pub limbs: usize,
    /// Polynomials (or element-wise instances).
    pub polys: usize,
}

/// One step of a program: on the GPU or on the PIM units. Anaheim never overlaps the two
/// (section V-C, "(No) pipelining"): a program's time is the sum of its kernels'.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Kernel {
    /// A GPU kernel.
    Gpu(GpuKernel),
    /// A PIM instruction.
    Pim(PimInstruction),
}

/// Kernels in execution order.
pub type Program = Vec<Kernel>;

/// The same program with every PIM instruction run as a GPU element-wise kernel: Anaheim's
/// "w/o PIM" baseline.
///
/// ```
/// use pimhe_nearbank::isa::{without_pim, GpuOp, Kernel, Opcode, PimInstruction};
/// let program = vec![Kernel::Pim(PimInstruction { opcode: Opcode::PAccum(4), degree: 1 << 16, limbs: 40, instances: 1 })];
/// let Kernel::Gpu(k) = without_pim(&program)[0] else { panic!() };
/// assert_eq!(k.op, GpuOp::Elementwise(Opcode::PAccum(4)));
/// assert_eq!((k.limbs, k.polys), (40, 1));
/// ```
pub fn without_pim(program: &[Kernel]) -> Program {
    program
        .iter()
        .map(|kernel| match *kernel {
            Kernel::Pim(p) => Kernel::Gpu(GpuKernel {
                op: GpuOp::Elementwise(p.opcode),
                degree: p.degree,
                limbs: p.limbs,
                polys: p.instances,
            }),
            gpu => gpu,
        })
        .collect()
}
