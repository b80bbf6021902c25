//! The `ceram` cost model: a [`Program`] -> micro-op counts, compute time, DDR4 transfer time.
//!
//! Every modeled number must be shown with [`CeramModel::label`], e.g. `ceram@1 (modeled)`.
//!
//! Transfers (section 4.1 of the CE-RAM B/FV paper):
//!
//! - **specified**: DDR4's peak of 25,600 MB/s ([`DDR4_SPECIFIED_BYTES_PER_S`]; DDR4-3200 on a
//!   64-bit channel), "which gives 70 us per ciphertext" — a ciphertext of 2 x 2^14 x 438 bits
//!   is 1,794,048 bytes, 70.08 us at that rate (tested);
//! - **actual**: the paper's stated input of 21.2 us per ciphertext "from DRAM to CE-RAM"
//!   (estimated from CPU runs, pipelining and interleaving included). The model turns it into a
//!   rate, [`actual_bytes_per_s`] = 1,794,048 bytes / 21.2 us = 84.6 GB/s, so that transfers of
//!   other sizes scale with their bytes; this is a derivation, not a measurement.
//!
//! Compute and transfer never overlap (one bank, one operation: section 4.4 projects overlap
//! only with two banks). No energy: no per-micro-op energy could be sourced.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::isa::{Latencies, MicroOp};
use crate::lowering::{counts, lower};
use crate::machine::{CapacityError, Machine};
use crate::params::{Modulus, Params};
use crate::program::{program, Direction, HomOp, Program, Step};

/// Name of the model.
pub const MODEL_NAME: &str = "ceram";

/// Version of [`MODEL_NAME`]'s constants and rules; bumped whenever any of them changes.
///
/// - `1`: section-4.1 bank; [`Latencies::CERAM_V1`] (assumed); shift-and-add MULT; per-kind
///   reductions (Algorithms 3, 4, Barrett, mask); NTT per section 3.1; DDR4 specified and the
///   paper's actual per-ciphertext time.
pub const MODEL_VERSION: &str = "1";

/// DDR4 peak transfer rate of section 4.1: 25,600 MB/s.
pub const DDR4_SPECIFIED_BYTES_PER_S: f64 = 25_600.0e6;

/// Section 4.1's "actual" time per ciphertext transfer from DRAM to CE-RAM: 21.2 us.
pub const ACTUAL_SECONDS_PER_CIPHERTEXT: f64 = 21.2e-6;

/// Bytes of the ciphertext section 4.1's times refer to: 2 x N x |q| bits, N = 2^14, |q| = 438.
pub const SECTION_4_1_CIPHERTEXT_BYTES: f64 = 2.0 * 16384.0 * 438.0 / 8.0;

/// The "actual" rate derived from [`ACTUAL_SECONDS_PER_CIPHERTEXT`]: bytes per second.
pub fn actual_bytes_per_s() -> f64 {
    SECTION_4_1_CIPHERTEXT_BYTES / ACTUAL_SECONDS_PER_CIPHERTEXT
}

/// The cost of one program.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Cost {
    /// `ceram@1 (modeled)`.
    pub label: String,
    /// Issued micro-ops by kind (MODMULT's internal shift-and-add and reduction not expanded).
    pub micro_ops: BTreeMap<String, u64>,
    /// Compute seconds (sum over issues of count x latency).
    pub compute_s: f64,
    /// Compute seconds per step kind (NTT, FastBConv, ...).
    pub compute_by_step_s: BTreeMap<String, f64>,
    /// Bytes moved between DRAM and the bank.
    pub transfer_bytes: f64,
    /// Transfer seconds at the specified DDR4 rate.
    pub transfer_specified_s: f64,
    /// Transfer seconds at the paper's actual rate.
    pub transfer_actual_s: f64,
    /// Slot-rows per array at the program's peak, and the bank's.
    pub peak_slots: usize,
    /// The bank's slot-rows per array.
    pub bank_slots: usize,
}

impl Cost {
    /// Compute plus transfer at the specified rate.
    pub fn total_specified_s(&self) -> f64 {
        self.compute_s + self.transfer_specified_s
    }
    /// Compute plus transfer at the actual rate.
    pub fn total_actual_s(&self) -> f64 {
        self.compute_s + self.transfer_actual_s
    }
    /// Count of one micro-op.
    pub fn count(&self, op: MicroOp) -> u64 {
        self.micro_ops.get(op.name()).copied().unwrap_or(0)
    }
}

/// The model: a machine and its micro-op latencies.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct CeramModel {
    /// The bank.
    pub machine: Machine,
    /// Per-micro-op latencies.
    pub latencies: Latencies,
}

impl Default for CeramModel {
    fn default() -> Self {
        CeramModel { machine: Machine::SECTION_4_1, latencies: Latencies::CERAM_V1 }
    }
}

/// Short name of a step's kind.
pub fn step_kind(step: &Step) -> &'static str {
    match step {
        Step::PolyAdd { .. } => "PolyAdd",
        Step::PolySub { .. } => "PolySub",
        Step::PointwiseMul { .. } => "PointwiseMul",
        Step::MulByConstant { .. } => "MulByConstant",
        Step::MulByPowerOfTwo { .. } => "MulByPowerOfTwo",
        Step::Reduce { .. } => "Reduce",
        Step::Center { .. } => "Center",
        Step::Ntt { .. } => "NTT",
        Step::Intt { .. } => "iNTT",
        Step::SchoolbookMul { .. } => "SchoolbookMul",
        Step::IntegerSchoolbookMul { .. } => "IntegerSchoolbookMul",
        Step::Rescale { .. } => "Rescale",
        Step::DigitDecompose { .. } => "DigitDecompose",
        Step::RnsDecompose { .. } => "RnsDecompose",
        Step::FastBConv { .. } => "FastBConv",
        Step::Realign { .. } => "Realign",
        Step::Write { .. } => "Write",
        Step::Move { .. } => "Move",
        Step::Transfer { .. } => "Transfer",
    }
}

impl CeramModel {
    /// `ceram@1 (modeled)`.
    pub fn label(&self) -> String {
        format!("{MODEL_NAME}@{MODEL_VERSION} (modeled)")
    }

    /// Compute seconds and counts of one step.
    pub fn step(&self, step: &Step, n: usize) -> Result<(f64, BTreeMap<MicroOp, u64>), CapacityError> {
        let lowered = lower(step, &self.machine, n)?;
        let ns: f64 = lowered.iter().map(|(i, t)| self.latencies.issue_ns(i) * *t as f64).sum();
        Ok((ns * 1e-9, counts(&lowered)))
    }

    /// Slot-rows per array that a program keeps at its peak.
    pub fn peak_slots(&self, program: &Program) -> Result<usize, CapacityError> {
        let mut slots = program.scratch_slots * self.machine.repeats(program.n)?;
        for live in &program.peak {
            for group in &live.moduli.groups {
                let widths: Vec<u32> = group.iter().map(Modulus::width).collect();
                slots += self.machine.slots_for(program.n, &widths, live.polys)?;
            }
        }
        Ok(slots)
    }

    /// Prices the program of one homomorphic operation for these parameters.
    pub fn price_op(&self, op: HomOp, params: &Params) -> Result<Cost, CapacityError> {
        self.price(&program(op, params))
    }

    /// Prices a program; errors when its peak does not fit the bank or a word a row.
    pub fn price(&self, program: &Program) -> Result<Cost, CapacityError> {
        let peak = self.peak_slots(program)?;
        self.machine.check(&format!("{:?}", program.op), program.n, peak)?;
        let mut micro = BTreeMap::new();
        let mut by_step = BTreeMap::new();
        let mut compute = 0.0;
        let mut bytes = 0.0;
        for step in &program.steps {
            if let Step::Transfer { direction: Direction::In | Direction::Out, bytes: b } = step {
                bytes += b;
                continue;
            }
            let (s, c) = self.step(step, program.n)?;
            compute += s;
            *by_step.entry(step_kind(step).to_string()).or_insert(0.0) += s;
            for (op, k) in c {
                *micro.entry(op.name().to_string()).or_insert(0) += k;
            }
        }
        Ok(Cost {
            label: self.label(),
            micro_ops: micro,
            compute_s: compute,
            compute_by_step_s: by_step,
            transfer_bytes: bytes,
            transfer_specified_s: bytes / DDR4_SPECIFIED_BYTES_PER_S,
            transfer_actual_s: bytes / actual_bytes_per_s(),
            peak_slots: peak,
            bank_slots: self.machine.slot_rows(),
        })
    }
}
