//! MHY+'s per-stage NTT offload (shared/seeds/001_*, section IV-B, Figs. 6-7) beside pimhe's
//! whole-NTT-resident mode. MHY+ offloads the butterflies of OpenFHE's Cooley-Tukey NTT
//! through its hardware abstraction layer one iteration (stage) at a time: for each of the
//! log2 n stages the host copies the data to the DPUs, launches, and copies it back, because
//! every stage reads what the previous one wrote. [`run_per_stage`] does exactly that on
//! emulated DPUs with the `NTT_STAGE` kernel (`dpu/kernels/ntt_stage.h`): DPU `d` takes the
//! butterflies [`butterfly_ranges`]`[d]` of every stage, the host gathering their x's and y's
//! before each launch and scattering them after (the twiddles stay resident, written once with
//! the header). [`run_resident`] is pimhe's mode: the polynomial pushed once, the whole NTT in
//! one launch of the `NTT` kernel on one DPU, pulled once. Both equal
//! [`pimhe_math::NttTable::forward`] bit for bit (natural order in, bit-reversed out).
//!
//! ```
//! use pimhe_math::{Modulus, NttTable};
//! use pimhe_pim::emulator::EmulatorConfig;
//! use pimhe_pim::layout::Variant;
//! use pimhe_pim::ntt_stage::{run_per_stage, run_resident};
//!
//! let (q, n) = (65537, 64);
//! let a: Vec<u32> = (0..n as u32).collect();
//! let mut expected = a.clone();
//! NttTable::new(Modulus::new(q as u64).unwrap(), n).unwrap().forward(&mut expected);
//! let staged = run_per_stage(q, &a, 3, EmulatorConfig::default(), Variant::Barrett).unwrap();
//! assert_eq!(staged.result, expected);
//! assert_eq!(staged.stages.len(), 6); // log2 64 launches
//! let resident = run_resident(q, &a, EmulatorConfig::default(), Variant::Best).unwrap();
//! assert_eq!(resident.result, expected);
//! ```

use crate::counts::DpuCounts;
use crate::emulator::{DpuSet, EmulatorConfig, LaunchReport};
use crate::layout::{prime_image, prime_tables, MramLayout, PimheCommand, PrimeTables, Variant};
use crate::raw_poly::{coefficient_ranges, RawPolyError};

/// The butterfly ranges `[start, end)` of one stage of an n-point NTT (n / 2 butterflies) over
/// `dpus` DPUs: as equal as even lengths allow, the longer first; at least two per DPU.
///
/// ```
/// assert_eq!(pimhe_pim::ntt_stage::butterfly_ranges(32, 3).unwrap(), [(0, 6), (6, 12), (12, 16)]);
/// ```
pub fn butterfly_ranges(n: usize, dpus: usize) -> Result<Vec<(usize, usize)>, RawPolyError> {
    if n < 8 || !n.is_power_of_two() {
        return Err(RawPolyError::Length { n });
    }
    coefficient_ranges(n / 2, dpus).map_err(|_| RawPolyError::Butterflies { n, dpus })
}

/// Bytes each DPU receives and returns around one stage: the x's and y's of its butterflies
/// both ways (4 bytes a word). The operands only, as [`crate::raw_poly::transfer_bytes`]: the
/// 48-byte command is left out, the resident twiddles are not sent again.
pub fn stage_transfer_bytes(n: usize, dpus: usize) -> Result<Vec<u64>, RawPolyError> {
    Ok(butterfly_ranges(n, dpus)?.iter().map(|&(s, e)| 8 * (e - s) as u64).collect())
}

/// The gaps of the forward NTT's stages in order: n / 2, n / 4, ..., 1.
pub fn stage_gaps(n: usize) -> impl Iterator<Item = usize> {
    (0..n.trailing_zeros()).map(move |s| n >> (s + 1))
}

/// The x and y indices of butterfly b of the stage of gap `gap`.
fn pair(b: usize, gap: usize) -> (usize, usize) {
    let x = 2 * gap * (b / gap) + b % gap;
    (x, x + gap)
}

/// A per-stage NTT's result and each stage's launch.
#[derive(Debug, Clone)]
pub struct StagedRun {
    /// The NTT of the input, bit-reversed order.
    pub result: Vec<u32>,
    /// One launch per stage, gap n / 2 first.
    pub stages: Vec<LaunchReport>,
}

/// The forward NTT of `a` (n coefficients below q, n a power of two in 16 ..= 2^20, q prime
/// = 1 mod 2n below 2^30) one stage per launch over `dpus` emulated DPUs, the butterflies'
/// data copied to the DPUs before every launch and back after it.
pub fn run_per_stage(
    q: u32,
    a: &[u32],
    dpus: usize,
    config: EmulatorConfig,
    variant: Variant,
) -> Result<StagedRun, RawPolyError> {
    let n = a.len();
    let ranges = butterfly_ranges(n, dpus)?;
    let tables = checked_tables(q, n, a)?;
    let layout = MramLayout::new(n, 1);
    let mut set = DpuSet::new(dpus, config)?;
    let mut data = a.to_vec();
    let mut stages = Vec::new();
    let all: Vec<usize> = (0..dpus).collect();
    for (s, gap) in stage_gaps(n).enumerate() {
        let mut ys_at = Vec::with_capacity(dpus);
        for (d, &range) in ranges.iter().enumerate() {
            // The twiddles go once, with the first stage's image; later stages rewrite the
            // command only.
            let (command, x_at, y_at) = stage_command(&layout, gap, range);
            if s == 0 {
                load_image(&mut set, d, &tables, &layout, variant, command)?;
            } else {
                set.write(d, layout.command_offset as usize, &command.to_bytes())?;
            }
            let (xs, ys): (Vec<u32>, Vec<u32>) = (range.0..range.1)
                .map(|b| {
                    let (x, y) = pair(b, gap);
                    (data[x], data[y])
                })
                .unzip();
            set.write_u32s(d, x_at, &xs)?;
            set.write_u32s(d, y_at, &ys)?;
            ys_at.push(y_at);
        }
        stages.push(set.launch(&all)?);
        for (d, &(start, end)) in ranges.iter().enumerate() {
            let (mut xs, mut ys) = (vec![0u32; end - start], vec![0u32; end - start]);
            set.read_u32s(d, layout.data_offset as usize, &mut xs)?;
            set.read_u32s(d, ys_at[d], &mut ys)?;
            for (k, b) in (start..end).enumerate() {
                let (x, y) = pair(b, gap);
                (data[x], data[y]) = (xs[k], ys[k]);
            }
        }
    }
    Ok(StagedRun { result: data, stages })
}

/// What one DPU counts running butterflies `range` of the stage of gap `gap` of an n-point
/// NTT modulo q: the launch of [`run_per_stage`] for that DPU alone. The counts do not depend
/// on the values (every primitive charges its cost whatever they are), so the operands are
/// left as they read before any write, zero.
///
/// ```
/// use pimhe_pim::emulator::EmulatorConfig;
/// use pimhe_pim::layout::Variant;
/// let config = EmulatorConfig::default();
/// let c = pimhe_pim::ntt_stage::stage_counts(65537, 1024, 1, (0, 512), config, Variant::Barrett).unwrap();
/// assert_eq!(c.total().dma_write_bytes, 2 * 4 * 512 + 8); // x's and y's back, and the status
/// ```
pub fn stage_counts(
    q: u32,
    n: usize,
    gap: usize,
    range: (usize, usize),
    config: EmulatorConfig,
    variant: Variant,
) -> Result<DpuCounts, RawPolyError> {
    butterfly_ranges(n, 1)?;
    let (start, end) = range;
    if start % 2 != 0 || end % 2 != 0 || start >= end || end > n / 2 {
        return Err(RawPolyError::Range { n: n / 2, start, end });
    }
    let tables = prime_tables(q, n).map_err(|source| RawPolyError::Modulus { q, source })?;
    let layout = MramLayout::new(n, 1);
    let mut set = DpuSet::new(1, config)?;
    load_image(&mut set, 0, &tables, &layout, variant, stage_command(&layout, gap, range).0)?;
    let mut report = set.launch(&[0])?;
    Ok(report.dpus.remove(0).1)
}

/// The command of butterflies `range` of the stage of gap `gap`, and where its x's and y's go:
/// right after the command slot, the y's after the x's.
fn stage_command(layout: &MramLayout, gap: usize, (start, end): (usize, usize)) -> (PimheCommand, usize, usize) {
    let x_at = layout.data_offset;
    let y_at = x_at + 4 * (end - start) as u32;
    let command = PimheCommand::ntt_stage(x_at, y_at, start as u32, gap as u32, (end - start) as u32);
    (command, x_at as usize, y_at as usize)
}

/// Writes DPU `d`'s image: header, twiddles and `command`.
fn load_image(
    set: &mut DpuSet,
    d: usize,
    tables: &PrimeTables,
    layout: &MramLayout,
    variant: Variant,
    command: PimheCommand,
) -> Result<(), RawPolyError> {
    let q = tables.modulus.value();
    let image =
        prime_image(tables, variant, layout, &[command]).map_err(|source| RawPolyError::Modulus { q, source })?;
    Ok(set.write(d, 0, &image)?)
}

/// The tables of q at degree n, once `a` is checked to be n residues below q.
fn checked_tables(q: u32, n: usize, a: &[u32]) -> Result<PrimeTables, RawPolyError> {
    let tables = prime_tables(q, n).map_err(|source| RawPolyError::Modulus { q, source })?;
    if a.iter().any(|&x| x >= q) {
        return Err(RawPolyError::Operands { n, q });
    }
    Ok(tables)
}

/// pimhe's whole-NTT-resident mode for one polynomial: its result and its one launch.
#[derive(Debug, Clone)]
pub struct ResidentRun {
    /// The NTT of the input, bit-reversed order.
    pub result: Vec<u32>,
    /// The launch (one DPU).
    pub report: LaunchReport,
}

/// The forward NTT of `a` (as [`run_per_stage`] takes it) on one emulated DPU: pushed once,
/// transformed whole by the `NTT` command in one launch, pulled once.
pub fn run_resident(q: u32, a: &[u32], config: EmulatorConfig, variant: Variant) -> Result<ResidentRun, RawPolyError> {
    let n = a.len();
    butterfly_ranges(n, 1)?;
    let tables = checked_tables(q, n, a)?;
    let layout = MramLayout::new(n, 1);
    let data = layout.operand_offset(0);
    let mut set = DpuSet::new(1, config)?;
    load_image(&mut set, 0, &tables, &layout, variant, PimheCommand::ntt(data, 1))?;
    set.write_u32s(0, data as usize, a)?;
    let report = set.launch(&[0])?;
    let mut result = vec![0u32; n];
    set.read_u32s(0, data as usize, &mut result)?;
    Ok(ResidentRun { result, report })
}
