//! CE-RAM micro-operations and their latency as a function of the word width.
//!
//! The vocabulary is the CE-RAM B/FV paper's (seed 004, section 3.1: MOVE through the in-place
//! move buffers, parallel WRITE of constants, MODMULT, SUB, ADD) plus the bit operations its
//! special reductions are written in (Algorithms 3-6: shifts, masks, compare/select). Reis et
//! al.'s CiM-HE peripherals are sense amplifiers, adders, bit-shifters and sequencing circuits
//! (Reis et al., TVLSI 2020, abstract), and "in CE-RAM, multiplication is not a basic
//! operation; it is constructed through shifting and addition [33]" (seed 004, section 3.2).
//!
//! Every micro-op acts on one row index of every array at once (all bitlines): one issue covers
//! N coefficients (N <= arrays) of the two polynomials of that row.
//!
//! **Latency constants.** Reis et al.'s per-instruction latencies (circuit simulation, 14 nm
//! FinFET) could not be read here: only the paper's abstract was reachable. The constants of
//! [`Latencies::CERAM_V1`] are therefore stated **assumptions**, chosen from first principles
//! and never fitted to the CE-RAM B/FV paper's results (Tables 2-4, 6-8):
//!
//! - one row read (sense) and one row write each take [`Latencies::read_ns`] /
//!   [`Latencies::write_ns`] = 1 ns (the order of an SRAM array access);
//! - an ADD / SUB of a w-bit word reads both operands (two wordlines on the bitlines), ripples
//!   the carry through w bitline adders at [`Latencies::carry_ns_per_bit`] = 20 ps per bit (the
//!   order of a full adder's carry delay at 14 nm) and writes the result back;
//! - logic (AND / OR), shifts (the bit-shifter moves a whole word by any distance) and MOVE are
//!   a read and a write, independent of w; SELECT (keep one of two values by a flag) is a masked
//!   write;
//! - MULT is shift-and-add: w steps, each a SHIFT and an ADD of the 2w-bit partial sum, so it
//!   grows with w^2 — the quadratic growth the CE-RAM B/FV paper states ("multiplication's
//!   complexity ... increases quadratically with the number of bits", section 4.3);
//! - MODMULT is MULT followed by the reduction of each modulus kind present (see
//!   [`reduction_sequence`]).

use serde::Serialize;

use crate::params::ModulusKind;

/// One CE-RAM micro-operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum MicroOp {
    /// Copy a word between rows or arrays through the move buffers.
    Move,
    /// Write a row (constants such as twiddle factors, broadcast from the controller).
    Write,
    /// Read a row out.
    Read,
    /// w-bit addition on the bitlines.
    Add,
    /// w-bit subtraction (also the comparison of Algorithms 3-6: the sign of the difference).
    Sub,
    /// Shift left by any distance.
    ShiftLeft,
    /// Shift right by any distance.
    ShiftRight,
    /// Bitwise AND (masks).
    And,
    /// Bitwise OR.
    Or,
    /// Keep one of two values by a flag (the if / else of Algorithms 3-6).
    Select,
    /// Shift-and-add multiplication of w-bit words.
    Mult,
    /// Modular multiplication: MULT, then the reduction of each modulus kind in the row.
    ModMult,
}

impl MicroOp {
    /// All of them, in a fixed order.
    pub const ALL: [MicroOp; 12] = [
        MicroOp::Move,
        MicroOp::Write,
        MicroOp::Read,
        MicroOp::Add,
        MicroOp::Sub,
        MicroOp::ShiftLeft,
        MicroOp::ShiftRight,
        MicroOp::And,
        MicroOp::Or,
        MicroOp::Select,
        MicroOp::Mult,
        MicroOp::ModMult,
    ];

    /// Upper-case name as in the paper.
    pub fn name(&self) -> &'static str {
        match self {
            MicroOp::Move => "MOVE",
            MicroOp::Write => "WRITE",
            MicroOp::Read => "READ",
            MicroOp::Add => "ADD",
            MicroOp::Sub => "SUB",
            MicroOp::ShiftLeft => "SHL",
            MicroOp::ShiftRight => "SHR",
            MicroOp::And => "AND",
            MicroOp::Or => "OR",
            MicroOp::Select => "SELECT",
            MicroOp::Mult => "MULT",
            MicroOp::ModMult => "MODMULT",
        }
    }
}

/// A reduction that a MODMULT carries out: the kind and the widest residue of that kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct Reduction {
    /// Modulus kind.
    pub kind: ModulusKind,
    /// Widest residue of that kind in the row.
    pub width: u32,
}

/// One issued micro-op: the op, the word width it runs at (the widest residue it covers:
/// residues of one row are processed together and the widest sets the time, section 4.3) and,
/// for MODMULT, the reductions it ends with.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct Issue {
    /// The micro-op.
    pub op: MicroOp,
    /// Word width in bits.
    pub width: u32,
    /// MODMULT only: one reduction per modulus kind in the row.
    pub reductions: Vec<Reduction>,
}

impl Issue {
    /// A micro-op at a width.
    pub fn new(op: MicroOp, width: u32) -> Self {
        Issue { op, width, reductions: Vec::new() }
    }
}

/// The micro-ops that reduce a value below 2^(2w) (a product or a sum) modulo a modulus of this
/// kind, at width w. Each is the algorithm the paper names for it:
///
/// - PowerOfTwo: `x & (2^g - 1)` — one AND (section 3.3);
/// - Mersenne (Algorithm 3): `y = x >> g` (SHR), `x &= 2^g - 1` (AND), `x += y` (ADD),
///   compare-and-subtract `2^g - 1` (SUB, SELECT);
/// - FermatLike (Algorithm 4): SHR, AND, the comparison x >= y and x - y (SUB), the other branch
///   `(2^g + 1) - y + x` (SUB, ADD), SELECT;
/// - Generic (Barrett, section 3.5): `q' = ((x >> (w - 1)) * mu) >> (w + 1)` (SHR, MULT, SHR),
///   `r = x - q' * p` (MULT, SUB), one conditional subtraction (SUB, SELECT);
/// - Integer: nothing.
pub fn reduction_sequence(kind: ModulusKind) -> &'static [MicroOp] {
    use MicroOp::*;
    match kind {
        ModulusKind::PowerOfTwo => &[And],
        ModulusKind::Mersenne => &[ShiftRight, And, Add, Sub, Select],
        ModulusKind::FermatLike => &[ShiftRight, And, Sub, Sub, Add, Select],
        ModulusKind::Generic => &[ShiftRight, Mult, ShiftRight, Mult, Sub, Sub, Select],
        ModulusKind::Integer => &[],
    }
}

/// Per-micro-op timing constants of the `ceram` model (all stated assumptions; see the module
/// documentation).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Latencies {
    /// One row read (sensing on the bitlines), ns.
    pub read_ns: f64,
    /// One row write, ns.
    pub write_ns: f64,
    /// Carry propagation per bit of an ADD / SUB, ns.
    pub carry_ns_per_bit: f64,
}

impl Latencies {
    /// Version 1 of the `ceram` model's constants (assumptions, see the module documentation).
    pub const CERAM_V1: Latencies = Latencies { read_ns: 1.0, write_ns: 1.0, carry_ns_per_bit: 0.02 };

    /// Latency in ns of `op` on w-bit words (MODMULT without its reductions: see
    /// [`Latencies::issue_ns`]).
    pub fn op_ns(&self, op: MicroOp, w: u32) -> f64 {
        let (r, wr) = (self.read_ns, self.write_ns);
        match op {
            MicroOp::Read => r,
            MicroOp::Write | MicroOp::Select => wr,
            MicroOp::Move | MicroOp::ShiftLeft | MicroOp::ShiftRight | MicroOp::And | MicroOp::Or => r + wr,
            MicroOp::Add | MicroOp::Sub => r + self.carry_ns_per_bit * w as f64 + wr,
            MicroOp::Mult | MicroOp::ModMult => {
                w as f64 * (self.op_ns(MicroOp::Add, 2 * w) + self.op_ns(MicroOp::ShiftLeft, w))
            }
        }
    }

    /// Latency in ns of the reduction of one modulus kind at width w ([`reduction_sequence`]).
    pub fn reduction_ns(&self, red: Reduction) -> f64 {
        reduction_sequence(red.kind).iter().map(|&op| self.op_ns(op, red.width)).sum()
    }

    /// Latency in ns of one issue (a MODMULT includes its reductions, run one kind after another).
    pub fn issue_ns(&self, issue: &Issue) -> f64 {
        let base = self.op_ns(issue.op, issue.width);
        if issue.op == MicroOp::ModMult {
            base + issue.reductions.iter().map(|&r| self.reduction_ns(r)).sum::<f64>()
        } else {
            base
        }
    }
}
