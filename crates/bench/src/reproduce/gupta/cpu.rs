//! The CPU side of Fig. 1, measured in the same run: pimhe's cpu backend on the same
//! operations, at a batch that fits this host, scaled linearly to the paper's counts.
//!
//! Element-wise operations over independent ciphertexts cost the same per ciphertext at any
//! count once the operands are beyond the caches; the measured batch is sized to
//! [`MEASURED_BYTES`] of inputs (far beyond any L3) so the per-ciphertext time is the
//! streaming one, and the paper's 20,480 .. 327,680 ciphertexts (tens of GB) are that time
//! times the count.

use std::path::Path;
use std::time::Instant;

use pimhe_exec::{Backend, CpuBackend};
use serde::{Deserialize, Serialize};

use super::dpu::CtOp;
use super::Width;
use crate::error::{BenchError, Result};

/// Input bytes of a measured batch in a full run: 64 MiB, beyond the caches of any CPU the
/// reproduction runs on.
pub const MEASURED_BYTES: usize = 64 << 20;
/// Input bytes of a measured batch with `--quick`.
pub const QUICK_MEASURED_BYTES: usize = 1 << 20;

/// One operation measured on the cpu backend.
#[derive(Debug, Clone, Serialize)]
pub struct CpuMeasurement {
    /// `add` or `mul`.
    pub op: CtOp,
    /// The paper's coefficient width (27, 54, 109).
    pub coefficient_bits: u32,
    /// Ciphertexts of the measured batch.
    pub ciphertexts: usize,
    /// Fastest of the timed rounds, seconds.
    pub seconds: f64,
    /// `seconds / ciphertexts`: what the counts of Fig. 1 are scaled by.
    pub seconds_per_ciphertext: f64,
}

/// Ciphertexts of a measured batch of `width` with `bytes` of inputs: the operands of `op`
/// take `2 * 2C` (add) or `4 * C` (mul) polynomials of `N x limbs` 4-byte residues, both
/// `16 C N limbs` bytes; at least 2.
pub fn measured_ciphertexts(width: &Width, bytes: usize) -> usize {
    (bytes / (16 * width.n * width.limbs)).max(2)
}

/// Measures `op` at `width` on `cpu`: a warm-up, then `repeat` timed rounds, the fastest kept.
pub fn measure(
    cpu: &CpuBackend,
    op: CtOp,
    width: &Width,
    bytes: usize,
    repeat: usize,
    seed: u64,
) -> Result<CpuMeasurement> {
    let basis = width.basis()?;
    let ciphertexts = measured_ciphertexts(width, bytes);
    let operands = op
        .inputs(&basis, op.operand_polys(ciphertexts), seed)?
        .into_iter()
        .map(|b| cpu.upload(b))
        .collect::<pimhe_exec::Result<Vec<_>>>()?;
    op.execute(cpu, &operands)?;
    let mut seconds = f64::INFINITY;
    for _ in 0..repeat.max(1) {
        let start = Instant::now();
        let outputs = op.execute(cpu, &operands)?;
        seconds = seconds.min(start.elapsed().as_secs_f64());
        drop(outputs);
    }
    Ok(CpuMeasurement {
        op,
        coefficient_bits: width.coefficient_bits,
        ciphertexts,
        seconds,
        seconds_per_ciphertext: seconds / ciphertexts as f64,
    })
}

/// Per-ciphertext add and multiply times at one width: SEAL's, as `bench/compare/gupta_seal.py`
/// prints them, or the paper's CPU arithmetic's ([`super::paper_cpu`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WidthTimes {
    /// Ring degree.
    pub n: usize,
    /// Coefficient modulus bits (27, 54, 109).
    pub coefficient_bits: u32,
    /// Seconds of one ciphertext addition (SEAL: `Evaluator.add`).
    pub add_s_per_ciphertext: f64,
    /// Seconds of one ciphertext multiplication, no relinearization (SEAL: `Evaluator.multiply`).
    pub mul_s_per_ciphertext: f64,
}

impl WidthTimes {
    /// Seconds per ciphertext of `op`.
    pub fn seconds_per_ciphertext(&self, op: CtOp) -> f64 {
        match op {
            CtOp::Add => self.add_s_per_ciphertext,
            CtOp::Mul => self.mul_s_per_ciphertext,
        }
    }
}

#[derive(Deserialize)]
struct SealOutput {
    widths: Vec<WidthTimes>,
}

/// Reads the JSON `bench/compare/gupta_seal.py` printed (the reproduction runs no Python: SEAL
/// is measured by that script, in a venv with TenSEAL, and its output handed over as a file).
pub fn read_seal(path: &Path) -> Result<Vec<WidthTimes>> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| BenchError::usage(format!("--seal-json {}: cannot read it: {e}", path.display())))?;
    let output: SealOutput = serde_json::from_str(text.trim()).map_err(|e| {
        BenchError::usage(format!(
            "--seal-json {}: not the output of bench/compare/gupta_seal.py ({e}); expected {{\"widths\": [{{\"n\", \
             \"coefficient_bits\", \"add_s_per_ciphertext\", \"mul_s_per_ciphertext\"}}, ...]}}",
            path.display()
        ))
    })?;
    for w in &output.widths {
        let valid = |s: f64| s.is_finite() && s > 0.0;
        if !valid(w.add_s_per_ciphertext) || !valid(w.mul_s_per_ciphertext) {
            return Err(BenchError::usage(format!(
                "--seal-json {}: the {}-bit width has a time that is not a positive number of seconds",
                path.display(),
                w.coefficient_bits
            )));
        }
    }
    Ok(output.widths)
}
