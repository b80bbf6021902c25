//! One polynomial of Z_q[x]/(x^n + 1) spread over DPUs by coefficient ranges, as MHY+ lays
//! out its raw polynomial operations (shared/seeds/001_*, section IV-A): DPU `d` holds the
//! coefficients [`coefficient_ranges`]`[d]` of the operands of an addition or a coefficient-wise
//! multiplication, or both whole operands of a textbook convolution and computes that range of
//! the product. [`run`] executes one operation on emulated DPUs (the kernels of
//! `dpu/kernels/raw_poly.h`) and returns the result with what each DPU counted;
//! [`transfer_bytes`] is what each DPU receives and returns, for the transfer model.
//!
//! ```
//! use pimhe_pim::emulator::EmulatorConfig;
//! use pimhe_pim::layout::Variant;
//! use pimhe_pim::raw_poly::{run, RawOp};
//!
//! // (1 + x) (1 + x) = 1 + 2x + x^2 in Z_65537[x]/(x^4 + 1), over 2 DPUs.
//! let (a, b) = (vec![1, 1, 0, 0], vec![1, 1, 0, 0]);
//! let out = run(RawOp::Conv, 65537, &a, &b, 2, EmulatorConfig::default(), Variant::Barrett).unwrap();
//! assert_eq!(out.result, [1, 2, 1, 0]);
//! assert_eq!(out.report.dpus.len(), 2);
//! ```

use serde::{Deserialize, Serialize};

use crate::emulator::{DpuSet, EmulatorConfig, EmulatorError, LaunchReport};
use crate::layout::{prime_image, prime_tables, LayoutError, MramLayout, PimheCommand, Variant, N_MIN};

/// A raw polynomial operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RawOp {
    /// Coefficient-wise addition (`RAW_ADD`).
    Add,
    /// Coefficient-wise multiplication (`RAW_MUL`).
    Mul,
    /// Textbook O(n^2) negacyclic convolution (`RAW_CONV`).
    Conv,
}

impl RawOp {
    /// Every operation, in MHY+'s Fig. 3 order (a: add, c: convolution, e: coefficient-wise).
    pub const ALL: [RawOp; 3] = [RawOp::Add, RawOp::Conv, RawOp::Mul];

    /// The operation's name as MHY+ and the reports call it.
    pub fn name(self) -> &'static str {
        match self {
            RawOp::Add => "add",
            RawOp::Mul => "coefficient-wise multiply",
            RawOp::Conv => "convolution",
        }
    }
}

/// What can go wrong running a raw polynomial operation.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RawPolyError {
    /// The polynomial length is not a power of two of at least 4.
    #[error("polynomial length {n} is not a power of two >= 4")]
    Length {
        /// The length given.
        n: usize,
    },
    /// Fewer than two coefficients per DPU (a DMA moves at least 8 bytes: two words).
    #[error("{dpus} DPUs for {n} coefficients: each DPU needs at least 2 (allowed: 1 ..= {max})", max = n / 2)]
    Dpus {
        /// The polynomial length.
        n: usize,
        /// The DPU count given.
        dpus: usize,
    },
    /// The operands differ in length, or a coefficient is not below q.
    #[error("operands must both have {n} coefficients below q = {q}")]
    Operands {
        /// The expected length.
        n: usize,
        /// The modulus.
        q: u32,
    },
    /// The modulus has no DPU header (it must be a prime = 1 mod 32 below 2^30).
    #[error("modulus {q} cannot head a DPU launch: {source}")]
    Modulus {
        /// The modulus.
        q: u32,
        /// Why.
        source: LayoutError,
    },
    /// The emulator failed.
    #[error(transparent)]
    Emulator(#[from] EmulatorError),
}

/// The coefficient ranges `[start, end)` of `n` over `dpus` DPUs: as equal as even lengths
/// allow (a DMA moves pairs of words), the longer ranges first.
///
/// ```
/// assert_eq!(pimhe_pim::raw_poly::coefficient_ranges(16, 3).unwrap(), [(0, 6), (6, 12), (12, 16)]);
/// ```
pub fn coefficient_ranges(n: usize, dpus: usize) -> Result<Vec<(usize, usize)>, RawPolyError> {
    if n < 4 || !n.is_power_of_two() {
        return Err(RawPolyError::Length { n });
    }
    if dpus == 0 || dpus > n / 2 {
        return Err(RawPolyError::Dpus { n, dpus });
    }
    let (pairs, extra) = (n / 2 / dpus, n / 2 % dpus);
    let mut start = 0;
    Ok((0..dpus)
        .map(|d| {
            let end = start + 2 * (pairs + usize::from(d < extra));
            let range = (start, end);
            start = end;
            range
        })
        .collect())
}

/// Bytes each DPU receives (host -> DPU) and returns (DPU -> host) for `op` on `n`
/// coefficients over `dpus` DPUs: a range of both operands in and of the result out, except
/// that the convolution needs both whole operands on every DPU. The operands only: the 64-byte
/// header and 48-byte command are left out, as MHY+'s Table II leaves them out.
pub fn transfer_bytes(op: RawOp, n: usize, dpus: usize) -> Result<(Vec<u64>, Vec<u64>), RawPolyError> {
    let ranges = coefficient_ranges(n, dpus)?;
    let words_in = |(s, e): (usize, usize)| if op == RawOp::Conv { 2 * n } else { 2 * (e - s) };
    let to_dpu = ranges.iter().map(|&r| 4 * words_in(r) as u64).collect();
    let from_dpu = ranges.iter().map(|&(s, e)| 4 * (e - s) as u64).collect();
    Ok((to_dpu, from_dpu))
}

/// One raw operation's result and what each DPU counted.
#[derive(Debug, Clone)]
pub struct RawRun {
    /// The n coefficients of the result, reassembled from the DPUs' ranges.
    pub result: Vec<u32>,
    /// Per-DPU, per-tasklet counts of the launch.
    pub report: LaunchReport,
}

/// Runs `op` on `a` and `b` (n coefficients below q each) over `dpus` emulated DPUs of
/// `config`, in the arithmetic `variant`, and returns the reassembled result. The launch header
/// carries q with the smallest ring degree the kernel takes ([`N_MIN`]): the raw commands take
/// their lengths from the command, not the header.
pub fn run(
    op: RawOp,
    q: u32,
    a: &[u32],
    b: &[u32],
    dpus: usize,
    config: EmulatorConfig,
    variant: Variant,
) -> Result<RawRun, RawPolyError> {
    let n = a.len();
    let ranges = coefficient_ranges(n, dpus)?;
    if b.len() != n || a.iter().chain(b).any(|&x| x >= q) {
        return Err(RawPolyError::Operands { n, q });
    }
    let tables = prime_tables(q, N_MIN).map_err(|source| RawPolyError::Modulus { q, source })?;
    let layout = MramLayout::new(N_MIN, 1);
    let mut set = DpuSet::new(dpus, config)?;
    let data = layout.data_offset;
    for (d, &(start, end)) in ranges.iter().enumerate() {
        let words = (end - start) as u32;
        // a at `data`, b after it, the result after b; a range of each, or whole a and b.
        let (a_in, b_in) = if op == RawOp::Conv { (a, b) } else { (&a[start..end], &b[start..end]) };
        let b_at = data + 4 * a_in.len() as u32;
        let dst = b_at + 4 * b_in.len() as u32;
        let command = match op {
            RawOp::Add => PimheCommand::raw_add(dst, data, b_at, words),
            RawOp::Mul => PimheCommand::raw_mul(dst, data, b_at, words),
            RawOp::Conv => PimheCommand::raw_conv(dst, data, b_at, start as u32, n as u32, words),
        };
        let image =
            prime_image(&tables, variant, &layout, &[command]).map_err(|source| RawPolyError::Modulus { q, source })?;
        set.write(d, 0, &image)?;
        set.write_u32s(d, data as usize, a_in)?;
        set.write_u32s(d, b_at as usize, b_in)?;
    }
    let all: Vec<usize> = (0..dpus).collect();
    let report = set.launch(&all)?;
    let mut result = vec![0u32; n];
    for (d, &(start, end)) in ranges.iter().enumerate() {
        let in_words = if op == RawOp::Conv { 2 * n } else { 2 * (end - start) };
        set.read_u32s(d, data as usize + 4 * in_words, &mut result[start..end])?;
    }
    Ok(RawRun { result, report })
}
