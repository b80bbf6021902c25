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

use crate::counts::DpuCounts;
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
    /// Fewer than two butterflies of a stage per DPU (NTT_STAGE, [`crate::ntt_stage`]).
    #[error("{dpus} DPUs for the {half} butterflies of an NTT stage of {n} points: each DPU needs at least 2 (allowed: 1 ..= {max})", half = n / 2, max = n / 4)]
    Butterflies {
        /// The transform's length.
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
    /// A DPU's coefficient range is empty, odd-bounded or past n.
    #[error("coefficient range [{start}, {end}) of {n}: it must be non-empty, inside, with even bounds")]
    Range {
        /// The polynomial length.
        n: usize,
        /// First coefficient.
        start: usize,
        /// One past the last.
        end: usize,
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
    Ok(even_ranges(n, dpus))
}

/// `len` (even) items over `dpus` (1 ..= len / 2) DPUs: ranges of even lengths, as equal as
/// that allows, the longer first ([`coefficient_ranges`] and `multiword`'s split).
pub(crate) fn even_ranges(len: usize, dpus: usize) -> Vec<(usize, usize)> {
    let (pairs, extra) = (len / 2 / dpus, len / 2 % dpus);
    let mut start = 0;
    (0..dpus)
        .map(|d| {
            let end = start + 2 * (pairs + usize::from(d < extra));
            let range = (start, end);
            start = end;
            range
        })
        .collect()
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

/// The convolution kernel's a-block for polynomial length n with `tasklets` tasklets: 128
/// words (raw_poly.h's `RAW_BLOCK`) halved until four fit a tasklet's work area (main.c: 3088
/// bytes up to 16 tasklets, 1552 above, at the header's degree 16) and at most n / 2.
pub fn conv_block_words(n: usize, tasklets: u32) -> usize {
    let area_bytes = if tasklets <= 16 { 3088 } else { 1552 };
    let mut block = 128;
    while 16 * block > area_bytes || block > n / 2 {
        block /= 2;
    }
    block
}

/// The output chunk the host asks the convolution kernel for, for a DPU computing `words`
/// outputs of length n: the a-block ([`conv_block_words`]), halved (down to 2) until every
/// tasklet gets a chunk, so that a DPU with few outputs still keeps all its tasklets busy.
///
/// ```
/// use pimhe_pim::raw_poly::conv_chunk_words;
/// assert_eq!(conv_chunk_words(1 << 20, 16384, 16), 128);
/// assert_eq!(conv_chunk_words(1 << 20, 1024, 16), 64); // 16 chunks for 16 tasklets
/// assert_eq!(conv_chunk_words(1 << 16, 4, 16), 2);
/// ```
pub fn conv_chunk_words(n: usize, words: usize, tasklets: u32) -> usize {
    let mut chunk = conv_block_words(n, tasklets);
    while chunk > 2 && words.div_ceil(chunk) < tasklets as usize {
        chunk /= 2;
    }
    chunk
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
/// `config`, in the arithmetic `variant`, and returns the reassembled result.
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
    let mut set = DpuSet::new(dpus, config)?;
    let launch = Launch { op, q, n, variant };
    let mut results = Vec::with_capacity(dpus);
    for (d, &(start, end)) in ranges.iter().enumerate() {
        let (a_in, b_in) = if op == RawOp::Conv { (a, b) } else { (&a[start..end], &b[start..end]) };
        let result_at = launch.load(&mut set, d, (start, end), None)?;
        let data = result_at - 4 * (a_in.len() + b_in.len());
        set.write_u32s(d, data, a_in)?;
        set.write_u32s(d, data + 4 * a_in.len(), b_in)?;
        results.push(result_at);
    }
    let all: Vec<usize> = (0..dpus).collect();
    let report = set.launch(&all)?;
    let mut result = vec![0u32; n];
    for (d, &(start, end)) in ranges.iter().enumerate() {
        set.read_u32s(d, results[d], &mut result[start..end])?;
    }
    Ok(RawRun { result, report })
}

/// What one DPU counts computing `range` of `op` on n-coefficient polynomials: the launch of
/// [`run`] for that DPU alone, or for the convolution with `chunk` words per tasklet chunk
/// instead of [`conv_chunk_words`]'s. The counts do not depend on the coefficients (every primitive
/// of the kernels charges its cost whatever the values, and the loops' bounds depend on the
/// lengths only), so the operands are left as they read before any write, zero.
///
/// ```
/// use pimhe_pim::emulator::EmulatorConfig;
/// use pimhe_pim::layout::Variant;
/// use pimhe_pim::raw_poly::{range_counts, RawOp};
/// let config = EmulatorConfig::default();
/// let counts = range_counts(RawOp::Add, 65537, 1 << 20, (0, 1024), None, config, Variant::Barrett).unwrap();
/// assert_eq!(counts.tasklets.len(), 16);
/// assert_eq!(counts.total().dma_write_bytes, 4 * 1024 + 8); // the result, and the status word pair
/// ```
pub fn range_counts(
    op: RawOp,
    q: u32,
    n: usize,
    range: (usize, usize),
    chunk: Option<usize>,
    config: EmulatorConfig,
    variant: Variant,
) -> Result<DpuCounts, RawPolyError> {
    coefficient_ranges(n, 1)?;
    let (start, end) = range;
    if start % 2 != 0 || end % 2 != 0 || start >= end || end > n {
        return Err(RawPolyError::Range { n, start, end });
    }
    let mut set = DpuSet::new(1, config)?;
    Launch { op, q, n, variant }.load(&mut set, 0, range, chunk)?;
    let mut report = set.launch(&[0])?;
    Ok(report.dpus.remove(0).1)
}

/// One DPU's launch of a raw operation: what it computes and how.
struct Launch {
    op: RawOp,
    q: u32,
    n: usize,
    variant: Variant,
}

impl Launch {
    /// Writes DPU `d`'s header and command for `range` and returns the MRAM offset of its
    /// result; its operands go right before it: a at the data offset, then b (a range of each,
    /// or the whole polynomials for the convolution, in chunks of `chunk` words or
    /// [`conv_chunk_words`]'s). The header carries q with the smallest ring degree the kernel
    /// takes ([`N_MIN`]): the raw commands take their lengths from the command.
    fn load(
        &self,
        set: &mut DpuSet,
        d: usize,
        (start, end): (usize, usize),
        chunk: Option<usize>,
    ) -> Result<usize, RawPolyError> {
        let (op, q, n) = (self.op, self.q, self.n);
        let chunk = chunk.unwrap_or_else(|| conv_chunk_words(n, end - start, set.config().tasklets));
        let tables = prime_tables(q, N_MIN).map_err(|source| RawPolyError::Modulus { q, source })?;
        let layout = MramLayout::new(N_MIN, 1);
        let words = (end - start) as u32;
        let operand_words = if op == RawOp::Conv { n } else { end - start } as u32;
        let a_at = layout.data_offset;
        let b_at = a_at + 4 * operand_words;
        let dst = b_at + 4 * operand_words;
        let command = match op {
            RawOp::Add => PimheCommand::raw_add(dst, a_at, b_at, words),
            RawOp::Mul => PimheCommand::raw_mul(dst, a_at, b_at, words),
            RawOp::Conv => PimheCommand::raw_conv(dst, a_at, b_at, start as u32, n as u32, words, chunk as u32),
        };
        let image = prime_image(&tables, self.variant, &layout, &[command])
            .map_err(|source| RawPolyError::Modulus { q, source })?;
        set.write(d, 0, &image)?;
        Ok(dst as usize)
    }
}

/// Deterministic residues below q (xorshift64*): MHY+'s "randomly generated positive integers
/// modulo q" for the raw operations, and the tests' inputs.
///
/// ```
/// let r = pimhe_pim::raw_poly::residues(1000, 65537, 7);
/// assert!(r.iter().all(|&x| x < 65537) && r == pimhe_pim::raw_poly::residues(1000, 65537, 7));
/// ```
pub fn residues(len: usize, q: u32, seed: u64) -> Vec<u32> {
    let mut s = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..len)
        .map(|_| {
            s ^= s >> 12;
            s ^= s << 25;
            s ^= s >> 27;
            (s.wrapping_mul(0x2545_f491_4f6c_dd1d) % q as u64) as u32
        })
        .collect()
}
