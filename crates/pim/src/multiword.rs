//! Gupta et al.'s non-RNS coefficients on the DPUs (shared/seeds/002_*, section 3): each
//! coefficient modulo one q of up to 128 bits in w = 1, 2 or 4 32-bit words, added with
//! add/addc and multiplied by schoolbook or Karatsuba products of words, reduced by Barrett
//! (`dpu/kernels/multiword.h`, opcodes `MW_ADD`, `MW_MUL` and `MW_CONV`). A vector of
//! coefficients is spread over the DPUs by ranges, as [`crate::raw_poly`] spreads a raw
//! polynomial; [`run`] executes one element-wise operation on emulated DPUs and returns the
//! result and what each DPU counted, [`range_counts`] what one DPU counts for a range of a given
//! length. [`conv`] and [`conv_range_counts`] do the same for the textbook negacyclic product
//! (the paper's polynomial multiplication without NTT), whose output coefficients are spread
//! over the DPUs by ranges, each DPU holding both whole operands.
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
    /// The product's length is not a power of two in `[4, 2^20]`.
    #[error("a product of {n} coefficients: the length must be a power of two in [4, 2^20]")]
    ProductLength {
        /// The length given.
        n: usize,
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
    let ranges = ranges(a.len(), dpus)?;
    check_operands(modulus, a, b)?;
    launch_over_ranges(modulus, &ranges, config, variant, |range| {
        let (start, end) = range;
        (Kernel::Elementwise(op), &a[start..end], &b[start..end])
    })
}

/// The negacyclic product `a b` in Z_q[x]/(x^n + 1) (n = `a.len()`, a power of two in
/// `[4, 2^20]`; coefficients below q) by `MW_CONV` over `dpus` emulated DPUs: each DPU holds
/// both operands and computes a range of the output coefficients, n products per coefficient
/// (barrett variant: schoolbook word products; best: Karatsuba).
///
/// ```
/// use pimhe_pim::emulator::EmulatorConfig;
/// use pimhe_pim::layout::Variant;
/// use pimhe_pim::multiword::{conv, MultiwordModulus};
///
/// // (1 + x) (1 + x^3) = 1 + x + x^3 + x^4 = 1 + x + x^3 - 1 in Z_q[x]/(x^4 + 1).
/// let q = MultiwordModulus::new((1 << 54) - 33).unwrap();
/// let out = conv(&q, &[1, 1, 0, 0], &[1, 0, 0, 1], 2, EmulatorConfig::default(), Variant::Best).unwrap();
/// assert_eq!(out.result, [0, 1, 0, 1]);
/// ```
pub fn conv(
    modulus: &MultiwordModulus,
    a: &[u128],
    b: &[u128],
    dpus: usize,
    config: EmulatorConfig,
    variant: Variant,
) -> Result<MwRun, MultiwordError> {
    let n = product_length(a.len())?;
    let ranges = ranges(n, dpus)?;
    check_operands(modulus, a, b)?;
    launch_over_ranges(modulus, &ranges, config, variant, |(lo, _)| (Kernel::Conv { n, lo }, a, b))
}

/// Loads each DPU's range (`operands` gives its kernel and the operands it holds), launches
/// every DPU once and reassembles the result from the ranges.
fn launch_over_ranges<'a>(
    modulus: &MultiwordModulus,
    ranges: &[(usize, usize)],
    config: EmulatorConfig,
    variant: Variant,
    operands: impl Fn((usize, usize)) -> (Kernel, &'a [u128], &'a [u128]),
) -> Result<MwRun, MultiwordError> {
    let mut set = DpuSet::new(ranges.len(), config)?;
    let mut results = Vec::with_capacity(ranges.len());
    for (d, &(start, end)) in ranges.iter().enumerate() {
        let (kernel, a, b) = operands((start, end));
        let at = load(&mut set, d, kernel, modulus, end - start, variant)?;
        set.write_u32s(d, at.a, &modulus.pack(a))?;
        set.write_u32s(d, at.b, &modulus.pack(b))?;
        results.push(at.dst);
    }
    let all: Vec<usize> = (0..ranges.len()).collect();
    let report = set.launch(&all)?;
    let mut result = Vec::with_capacity(ranges.last().map_or(0, |r| r.1));
    for (d, &(start, end)) in ranges.iter().enumerate() {
        let mut words = vec![0u32; modulus.words * (end - start)];
        set.read_u32s(d, results[d], &mut words)?;
        result.extend(modulus.unpack(&words));
    }
    Ok(MwRun { result, report })
}

/// The operands are as long as each other and below q.
fn check_operands(modulus: &MultiwordModulus, a: &[u128], b: &[u128]) -> Result<(), MultiwordError> {
    if b.len() != a.len() || a.iter().chain(b).any(|&x| x >= modulus.q) {
        return Err(MultiwordError::Operands { len: a.len(), q: modulus.q });
    }
    Ok(())
}

/// `n` if it is a product length the kernel takes: a power of two in `[4, 2^20]`.
fn product_length(n: usize) -> Result<usize, MultiwordError> {
    if n < 4 || n > 1 << 20 || !n.is_power_of_two() {
        return Err(MultiwordError::ProductLength { n });
    }
    Ok(n)
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
    one_dpu_counts(modulus, Kernel::Elementwise(op), len, config, variant)
}

/// What one DPU counts computing `len` (even, at most n) output coefficients of an
/// n-coefficient product by `MW_CONV`: n coefficient products each, whatever the operands
/// (zero, as [`range_counts`] leaves them).
///
/// ```
/// use pimhe_pim::emulator::EmulatorConfig;
/// use pimhe_pim::layout::Variant;
/// use pimhe_pim::multiword::{conv_range_counts, MultiwordModulus};
/// let q = MultiwordModulus::new((1 << 27) - 39).unwrap();
/// let counts = conv_range_counts(&q, 1024, 32, EmulatorConfig::default(), Variant::Best).unwrap();
/// assert_eq!(counts.total().dma_write_bytes, 4 * 32 + 8); // the outputs, and the status word pair
/// ```
pub fn conv_range_counts(
    modulus: &MultiwordModulus,
    n: usize,
    len: usize,
    config: EmulatorConfig,
    variant: Variant,
) -> Result<DpuCounts, MultiwordError> {
    let n = product_length(n)?;
    if len < 2 || len > n || !len.is_multiple_of(2) {
        return Err(MultiwordError::Length { len });
    }
    one_dpu_counts(modulus, Kernel::Conv { n, lo: 0 }, len, config, variant)
}

fn one_dpu_counts(
    modulus: &MultiwordModulus,
    kernel: Kernel,
    len: usize,
    config: EmulatorConfig,
    variant: Variant,
) -> Result<DpuCounts, MultiwordError> {
    let mut set = DpuSet::new(1, config)?;
    load(&mut set, 0, kernel, modulus, len, variant)?;
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

/// What one DPU runs: an element-wise operation on its range, or the output coefficients
/// `[lo, lo + len)` of an n-coefficient product.
#[derive(Debug, Clone, Copy)]
enum Kernel {
    Elementwise(MwOp),
    Conv { n: usize, lo: usize },
}

/// Where one DPU's operands go.
struct Operands {
    a: usize,
    b: usize,
    dst: usize,
}

/// Writes DPU `d`'s header, command and modulus record for `len` result coefficients: the
/// record at the data offset, then a, b (`len` coefficients each, or the product's n) and the
/// result.
fn load(
    set: &mut DpuSet,
    d: usize,
    kernel: Kernel,
    modulus: &MultiwordModulus,
    len: usize,
    variant: Variant,
) -> Result<Operands, MultiwordError> {
    let tables = prime_tables(HEADER_PRIME, N_MIN)?;
    let layout = MramLayout::new(N_MIN, 1);
    let record = modulus.record();
    let operand_len = match kernel {
        Kernel::Elementwise(_) => len,
        Kernel::Conv { n, .. } => n,
    };
    let (operand_bytes, result_bytes) = (4 * modulus.words * operand_len, 4 * modulus.words * len);
    let record_at = layout.data_offset as usize;
    let a = record_at + 4 * record.len();
    let (b, dst) = (a + operand_bytes, a + 2 * operand_bytes);
    let (w, count) = (modulus.words as u32, len as u32);
    let mram = set.config().mram_bytes;
    if dst + result_bytes > mram {
        return Err(MultiwordError::Capacity {
            len: operand_len,
            words: modulus.words,
            need: dst + result_bytes,
            mram,
        });
    }
    let (to, x, y, at) = (dst as u32, a as u32, b as u32, record_at as u32);
    let command = match kernel {
        Kernel::Elementwise(MwOp::Add) => PimheCommand::mw_add(to, x, y, at, w, count),
        Kernel::Elementwise(MwOp::Mul) => PimheCommand::mw_mul(to, x, y, at, w, count),
        Kernel::Conv { n, lo } => PimheCommand::mw_conv(to, x, y, at, w, n as u32, lo as u32, count),
    };
    let image = prime_image(&tables, variant, &layout, &[command])?;
    set.write(d, 0, &image)?;
    set.write_u32s(d, record_at, &record)?;
    Ok(Operands { a, b, dst })
}
