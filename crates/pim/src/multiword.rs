//! Gupta et al.'s non-RNS coefficients on the DPUs (shared/seeds/002_*, section 3): each
//! coefficient modulo one q of up to 128 bits in w = 1, 2 or 4 32-bit words, added with
//! add/addc and multiplied by schoolbook or Karatsuba products of words, reduced by Barrett
//! (`dpu/kernels/multiword.h`, opcodes `MW_ADD` and `MW_MUL`). A vector of coefficients is
//! spread over the DPUs by ranges, as [`crate::raw_poly`] spreads a raw polynomial; [`run`]
//! executes one operation on emulated DPUs and returns the result and what each DPU counted,
//! [`range_counts`] what one DPU counts for a range of a given length.
//!
//! ```
//! use pimhe_pim::emulator::EmulatorConfig;
//! use pimhe_pim::layout::Variant;
//! use pimhe_pim::multiword::{run, MwOp, MultiwordModulus};
//!
//! // Two 109-bit coefficients (4 words) multiplied modulo q = 2^109 - 1 over one DPU.
//! let q = MultiwordModulus::new((1u128 << 109) - 1).unwrap();
//! let (a, b) = (vec![1u128 << 100, 3], vec![1u128 << 10, 5]);
//! let out = run(MwOp::Mul, &q, &a, &b, 1, EmulatorConfig::default(), Variant::Best).unwrap();
//! assert_eq!(out.result, [2, 15]); // 2^110 = 2 mod 2^109 - 1
//! ```

use num_bigint::BigUint;
use serde::{Deserialize, Serialize};

use crate::counts::DpuCounts;
use crate::emulator::{DpuSet, EmulatorConfig, EmulatorError, LaunchReport};
use crate::layout::{prime_image, prime_tables, LayoutError, MramLayout, PimheCommand, Variant, N_MIN};
use crate::raw_poly::even_ranges;

/// The prime that heads a multi-word launch: the kernel checks a header before any command,
/// but the multi-word commands take their modulus from their record, not from it.
const HEADER_PRIME: u32 = 7681;

/// A multi-word element-wise operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MwOp {
    /// `a + b mod q` (`MW_ADD`).
    Add,
    /// `a b mod q` (`MW_MUL`).
    Mul,
}

impl MwOp {
    /// Both operations.
    pub const ALL: [MwOp; 2] = [MwOp::Add, MwOp::Mul];

    /// `add` or `mul`.
    pub fn name(self) -> &'static str {
        match self {
            MwOp::Add => "add",
            MwOp::Mul => "mul",
        }
    }
}

/// What can go wrong running a multi-word operation.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MultiwordError {
    /// q does not fill 1, 2 or 4 words.
    #[error(
        "modulus {q} has {bits} bits: the kernels take 2 <= q < 2^32 (1 word), 2^32 <= q < 2^64 (2 words) or \
         2^96 <= q < 2^128 (4 words)"
    )]
    Modulus {
        /// The modulus given.
        q: u128,
        /// Its bit length.
        bits: u32,
    },
    /// The coefficient count is odd or zero.
    #[error("{len} coefficients: the count must be even and at least 2")]
    Length {
        /// The count given.
        len: usize,
    },
    /// Fewer than two coefficients per DPU.
    #[error("{dpus} DPUs for {len} coefficients: each DPU needs at least 2 (allowed: 1 ..= {max})", max = len / 2)]
    Dpus {
        /// The coefficient count.
        len: usize,
        /// The DPU count given.
        dpus: usize,
    },
    /// The operands differ in length, or a coefficient is not below q.
    #[error("operands must both have {len} coefficients below q = {q}")]
    Operands {
        /// The expected length.
        len: usize,
        /// The modulus.
        q: u128,
    },
    /// The operands do not fit a DPU's MRAM.
    #[error("{len} coefficients of {words} words need {need} bytes of MRAM per DPU; it has {mram}: use more DPUs")]
    Capacity {
        /// Coefficients on the DPU.
        len: usize,
        /// Words per coefficient.
        words: usize,
        /// Bytes needed (header, command, record, both operands and the result).
        need: usize,
        /// Bytes of MRAM.
        mram: usize,
    },
    /// The launch's header or command image could not be built.
    #[error("the launch's image: {0}")]
    Layout(#[from] LayoutError),
    /// The emulator failed.
    #[error(transparent)]
    Emulator(#[from] EmulatorError),
}

/// A modulus of the multi-word kernels: q, its width in words and its Barrett constant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MultiwordModulus {
    q: u128,
    words: usize,
    mu: BigUint,
}

impl MultiwordModulus {
    /// q with its top word nonzero in 1, 2 or 4 words (the kernel's Barrett reduction needs
    /// it: HAC 14.42's k is q's word count), and mu = floor(2^(64 w) / q).
    ///
    /// ```
    /// use pimhe_pim::multiword::MultiwordModulus;
    /// assert_eq!(MultiwordModulus::new((1 << 54) - 33).unwrap().words(), 2);
    /// assert!(MultiwordModulus::new(1 << 70).is_err()); // 3 words
    /// ```
    pub fn new(q: u128) -> Result<Self, MultiwordError> {
        let bits = 128 - q.leading_zeros();
        let words = bits.div_ceil(32) as usize;
        if q < 2 || words == 3 {
            return Err(MultiwordError::Modulus { q, bits });
        }
        let mu = (BigUint::from(1u32) << (64 * words)) / BigUint::from(q);
        Ok(Self { q, words, mu })
    }

    /// q.
    pub fn value(&self) -> u128 {
        self.q
    }

    /// Words per coefficient: 1, 2 or 4.
    pub fn words(&self) -> usize {
        self.words
    }

    /// The record the kernel reads (`pimhe_dpu.h`): q's w words, a zero word, mu's w + 1.
    pub fn record(&self) -> Vec<u32> {
        let mut record = to_words(self.q, self.words + 1);
        let mut mu = self.mu.to_u32_digits();
        mu.resize(self.words + 1, 0);
        record.extend(mu);
        record
    }

    /// The coefficients' little-endian words, w per coefficient.
    pub fn pack(&self, coefficients: &[u128]) -> Vec<u32> {
        coefficients.iter().flat_map(|&c| to_words(c, self.words)).collect()
    }

    /// The coefficients of w-word groups.
    pub fn unpack(&self, words: &[u32]) -> Vec<u128> {
        words.chunks(self.words).map(|c| c.iter().rev().fold(0u128, |x, &w| (x << 32) | w as u128)).collect()
    }
}

fn to_words(x: u128, words: usize) -> Vec<u32> {
    (0..words).map(|i| x.checked_shr(32 * i as u32).unwrap_or(0) as u32).collect()
}

/// One operation's result and what each DPU counted.
#[derive(Debug, Clone)]
pub struct MwRun {
    /// The coefficients of the result, reassembled from the DPUs' ranges.
    pub result: Vec<u128>,
    /// Per-DPU, per-tasklet counts of the launch.
    pub report: LaunchReport,
}

/// The coefficient ranges of `len` coefficients over `dpus` DPUs: even lengths (a one-word
/// coefficient is half a DMA's 8 bytes), as equal as that allows, the longer first.
///
/// ```
/// assert_eq!(pimhe_pim::multiword::ranges(10, 3).unwrap(), [(0, 4), (4, 8), (8, 10)]);
/// ```
pub fn ranges(len: usize, dpus: usize) -> Result<Vec<(usize, usize)>, MultiwordError> {
    if len < 2 || !len.is_multiple_of(2) {
        return Err(MultiwordError::Length { len });
    }
    if dpus == 0 || dpus > len / 2 {
        return Err(MultiwordError::Dpus { len, dpus });
    }
    Ok(even_ranges(len, dpus))
}

/// Runs `op` on `a` and `b` (coefficients below q) over `dpus` emulated DPUs of `config` in
/// the arithmetic `variant` (barrett: schoolbook products; best: Karatsuba).
pub fn run(
    op: MwOp,
    modulus: &MultiwordModulus,
    a: &[u128],
    b: &[u128],
    dpus: usize,
    config: EmulatorConfig,
    variant: Variant,
) -> Result<MwRun, MultiwordError> {
    let len = a.len();
    let ranges = ranges(len, dpus)?;
    if b.len() != len || a.iter().chain(b).any(|&x| x >= modulus.q) {
        return Err(MultiwordError::Operands { len, q: modulus.q });
    }
    let mut set = DpuSet::new(dpus, config)?;
    let mut results = Vec::with_capacity(dpus);
    for (d, &(start, end)) in ranges.iter().enumerate() {
        let at = load(&mut set, d, op, modulus, end - start, variant)?;
        set.write_u32s(d, at.a, &modulus.pack(&a[start..end]))?;
        set.write_u32s(d, at.b, &modulus.pack(&b[start..end]))?;
        results.push(at.dst);
    }
    let all: Vec<usize> = (0..dpus).collect();
    let report = set.launch(&all)?;
    let mut result = Vec::with_capacity(len);
    for (d, &(start, end)) in ranges.iter().enumerate() {
        let mut words = vec![0u32; modulus.words * (end - start)];
        set.read_u32s(d, results[d], &mut words)?;
        result.extend(modulus.unpack(&words));
    }
    Ok(MwRun { result, report })
}

/// What one DPU counts running `op` on a range of `len` coefficients (even). The counts do
/// not depend on the coefficients (every step of the kernel is charged whatever the values),
/// so the operands are left as they read before any write, zero.
///
/// ```
/// use pimhe_pim::emulator::EmulatorConfig;
/// use pimhe_pim::layout::Variant;
/// use pimhe_pim::multiword::{range_counts, MwOp, MultiwordModulus};
/// let q = MultiwordModulus::new((1 << 54) - 33).unwrap();
/// let counts = range_counts(MwOp::Add, &q, 1024, EmulatorConfig::default(), Variant::Best).unwrap();
/// assert_eq!(counts.total().dma_write_bytes, 8 * 1024 + 8); // the result, and the status word pair
/// ```
pub fn range_counts(
    op: MwOp,
    modulus: &MultiwordModulus,
    len: usize,
    config: EmulatorConfig,
    variant: Variant,
) -> Result<DpuCounts, MultiwordError> {
    ranges(len, 1)?;
    let mut set = DpuSet::new(1, config)?;
    load(&mut set, 0, op, modulus, len, variant)?;
    let mut report = set.launch(&[0])?;
    Ok(report.dpus.remove(0).1)
}

/// Bytes each DPU receives (both operands' ranges) and returns (the result's) for `len`
/// coefficients over `dpus` DPUs; the header, command and record are left out, as
/// [`crate::raw_poly::transfer_bytes`] leaves them.
pub fn transfer_bytes(
    modulus: &MultiwordModulus,
    len: usize,
    dpus: usize,
) -> Result<(Vec<u64>, Vec<u64>), MultiwordError> {
    let ranges = ranges(len, dpus)?;
    let bytes = |(s, e): &(usize, usize)| (4 * modulus.words * (e - s)) as u64;
    Ok((ranges.iter().map(|r| 2 * bytes(r)).collect(), ranges.iter().map(bytes).collect()))
}

/// Where one DPU's operands go.
struct Operands {
    a: usize,
    b: usize,
    dst: usize,
}

/// Writes DPU `d`'s header, command and modulus record for `len` coefficients: the record at
/// the data offset, then a, b and the result.
fn load(
    set: &mut DpuSet,
    d: usize,
    op: MwOp,
    modulus: &MultiwordModulus,
    len: usize,
    variant: Variant,
) -> Result<Operands, MultiwordError> {
    let tables = prime_tables(HEADER_PRIME, N_MIN)?;
    let layout = MramLayout::new(N_MIN, 1);
    let record = modulus.record();
    let operand_bytes = 4 * modulus.words * len;
    let record_at = layout.data_offset as usize;
    let a = record_at + 4 * record.len();
    let (b, dst) = (a + operand_bytes, a + 2 * operand_bytes);
    let (w, count) = (modulus.words as u32, len as u32);
    let mram = set.config().mram_bytes;
    if dst + operand_bytes > mram {
        return Err(MultiwordError::Capacity { len, words: modulus.words, need: dst + operand_bytes, mram });
    }
    let command = match op {
        MwOp::Add => PimheCommand::mw_add(dst as u32, a as u32, b as u32, record_at as u32, w, count),
        MwOp::Mul => PimheCommand::mw_mul(dst as u32, a as u32, b as u32, record_at as u32, w, count),
    };
    let image = prime_image(&tables, variant, &layout, &[command])?;
    set.write(d, 0, &image)?;
    set.write_u32s(d, record_at, &record)?;
    Ok(Operands { a, b, dst })
}
