//! The UPMEM DPU emulator: runs the real DPU program (`dpu/kernels/main.c`, compiled for the
//! host against the runtime shim in `dpu/emulator/`) on emulated DPUs, enforces the hardware's
//! limits, and counts what every tasklet did.
//!
//! - A [`DpuSet`] holds the MRAM of each DPU as a lazily grown byte vector (bytes never written
//!   read as zero), so hundreds of DPUs cost only what they store.
//! - [`DpuSet::write`] / [`DpuSet::read`] are the host's transfers (8-byte aligned offsets and
//!   lengths, as the UPMEM host API requires for MRAM).
//! - [`DpuSet::launch`] runs the program on some DPUs. Each DPU's launch runs its `tasklets`
//!   tasklets as coroutines on one host thread, each until its next barrier or its end
//!   (`dpu/emulator/tasklets.h`); distinct DPUs run concurrently on rayon's pool, which is safe
//!   because the kernel keeps no mutable globals (all its state is per-DPU WRAM from
//!   `mem_alloc`, and the shim keeps the barrier state per DPU). Results and counts do not
//!   depend on the interleaving: every tasklet's work is fixed by its id.
//! - A hardware-limit violation (DMA size/alignment/range, WRAM overflow, barrier misuse)
//!   ends the offending tasklet without performing the access, lets the others stop at their
//!   next barrier, and comes back as [`EmulatorError::Limit`] naming the kernel phase
//!   ("pimhe_main/ntt") and the limit. A header or command the kernel rejects comes back as
//!   [`EmulatorError::BadMagic`] or [`EmulatorError::KernelStatus`].
//!
//! ```
//! use pimhe_math::NttTable;
//! use pimhe_pim::emulator::{DpuSet, EmulatorConfig};
//! use pimhe_pim::layout::{prime_image, prime_tables, MramLayout, PimheCommand, Variant};
//!
//! let (q, n) = (12289, 256);
//! let tables = prime_tables(q, n).unwrap();
//! let layout = MramLayout::new(n, 1);
//! let data = layout.operand_offset(0);
//! let image = prime_image(&tables, Variant::Best, &layout, &[PimheCommand::ntt(data, 1)]).unwrap();
//!
//! let mut dpus = DpuSet::new(1, EmulatorConfig::default()).unwrap();
//! dpus.write(0, 0, &image).unwrap();
//! let poly: Vec<u32> = (0..n as u32).collect();
//! dpus.write_u32s(0, data as usize, &poly).unwrap();
//! let report = dpus.launch(&[0]).unwrap();
//! assert!(report.dpus[0].1.total().instructions > 0);
//!
//! let mut on_dpu = vec![0u32; n];
//! dpus.read_u32s(0, data as usize, &mut on_dpu).unwrap();
//! let mut on_cpu = poly.clone();
//! tables.table.forward(&mut on_cpu);
//! assert_eq!(on_dpu, on_cpu);
//! ```

mod ffi;

use std::ffi::{c_int, c_void};
use std::fmt;
use std::sync::Mutex;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use zeroize::Zeroize;

use crate::counts::{DpuCounts, IntervalCounts, TaskletCounts};
use crate::layout::{self, PimheHeader, HEADER_BYTES};
use crate::model::MultiplyCounts;

/// MRAM of one DPU: 64 MiB.
pub const MRAM_BYTES: usize = 64 << 20;
/// WRAM of one DPU: 64 KiB (heap + static data + tasklet stacks).
pub const WRAM_BYTES: usize = 64 << 10;
/// Largest DMA between MRAM and WRAM.
pub const DMA_MAX_BYTES: usize = 2048;

/// The per-tasklet stack the WRAM budget reserves (`STACK_SIZE_DEFAULT` in `build.rs`).
pub fn stack_size_default() -> usize {
    // SAFETY: a pure C function returning a constant.
    unsafe { ffi::pimhe_emu_stack_size_default() as usize }
}

/// WRAM the budget reserves for the runtime and the program's static data.
pub fn static_wram_bytes() -> usize {
    // SAFETY: a pure C function returning a constant.
    unsafe { ffi::pimhe_emu_static_wram_bytes() as usize }
}

/// DPU generation; decides the tasklet limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum DpuGeneration {
    /// v1A: up to 24 tasklets.
    V1A,
    /// v1B: up to 16 tasklets (DRAMatic's machine).
    V1B,
}

impl DpuGeneration {
    /// Most tasklets a DPU of this generation runs.
    pub const fn max_tasklets(self) -> u32 {
        match self {
            DpuGeneration::V1A => 24,
            DpuGeneration::V1B => 16,
        }
    }
}

impl fmt::Display for DpuGeneration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            DpuGeneration::V1A => "v1A",
            DpuGeneration::V1B => "v1B",
        })
    }
}

/// Shape of the emulated DPUs.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct EmulatorConfig {
    /// DPU generation (tasklet limit).
    pub generation: DpuGeneration,
    /// Tasklets per DPU, 1 ..= `generation.max_tasklets()`.
    pub tasklets: u32,
    /// MRAM per DPU in bytes (at most 64 MiB, a multiple of 8).
    pub mram_bytes: usize,
    /// WRAM per DPU in bytes (at most 64 KiB, a multiple of 8).
    pub wram_bytes: usize,
}

impl Default for EmulatorConfig {
    /// v1B with 16 tasklets, 64 MiB MRAM, 64 KiB WRAM.
    fn default() -> Self {
        Self { generation: DpuGeneration::V1B, tasklets: 16, mram_bytes: MRAM_BYTES, wram_bytes: WRAM_BYTES }
    }
}

impl EmulatorConfig {
    /// v1A with its 24 tasklets.
    pub fn v1a() -> Self {
        Self { generation: DpuGeneration::V1A, tasklets: 24, ..Self::default() }
    }

    /// The same configuration with another tasklet count.
    pub fn with_tasklets(mut self, tasklets: u32) -> Self {
        self.tasklets = tasklets;
        self
    }

    /// Checks the configuration against the hardware's limits.
    pub fn validate(&self) -> Result<(), EmulatorError> {
        let max = self.generation.max_tasklets();
        if self.tasklets == 0 || self.tasklets > max {
            return Err(EmulatorError::Tasklets { generation: self.generation, tasklets: self.tasklets, max });
        }
        if self.mram_bytes == 0 || self.mram_bytes > MRAM_BYTES || !self.mram_bytes.is_multiple_of(8) {
            return Err(EmulatorError::Config(format!(
                "MRAM of {} bytes: must be 8..={MRAM_BYTES} and a multiple of 8",
                self.mram_bytes
            )));
        }
        if self.wram_bytes > WRAM_BYTES || !self.wram_bytes.is_multiple_of(8) {
            return Err(EmulatorError::Config(format!(
                "WRAM of {} bytes: must be at most {WRAM_BYTES} and a multiple of 8",
                self.wram_bytes
            )));
        }
        Ok(())
    }
}

/// Which hardware limit a kernel broke.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum LimitKind {
    /// DMA of a size outside 8..=2048 or not a multiple of 8.
    DmaSize,
    /// DMA with an MRAM or WRAM address not 8-byte aligned.
    DmaAlignment,
    /// DMA outside the DPU's MRAM.
    MramRange,
    /// DMA to or from a buffer outside the WRAM heap.
    WramRange,
    /// `mem_alloc` beyond 64 KiB of WRAM (with static data and stacks).
    WramOverflow,
    /// A tasklet ended while others wait at a barrier, or a barrier not of all tasklets.
    Barrier,
}

impl fmt::Display for LimitKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            LimitKind::DmaSize => "DMA size limit",
            LimitKind::DmaAlignment => "DMA alignment limit",
            LimitKind::MramRange => "MRAM range limit",
            LimitKind::WramRange => "WRAM range limit",
            LimitKind::WramOverflow => "WRAM capacity limit",
            LimitKind::Barrier => "barrier rule",
        })
    }
}

/// What can go wrong with emulated DPUs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EmulatorError {
    /// Tasklet count 0 or above the generation's limit.
    #[error("{tasklets} tasklets: a {generation} DPU runs 1..={max}")]
    Tasklets {
        /// The generation.
        generation: DpuGeneration,
        /// Tasklets asked for.
        tasklets: u32,
        /// The generation's limit.
        max: u32,
    },
    /// Other invalid configuration.
    #[error("invalid emulator configuration: {0}")]
    Config(String),
    /// A DPU index outside the set.
    #[error("DPU {dpu} is not in this set of {len} DPUs")]
    NoSuchDpu {
        /// The index.
        dpu: usize,
        /// DPUs in the set.
        len: usize,
    },
    /// The same DPU twice in one launch.
    #[error("DPU {dpu} is listed twice in one launch")]
    DuplicateDpu {
        /// The index.
        dpu: usize,
    },
    /// A host transfer outside the DPU's MRAM.
    #[error("host transfer of {len} bytes at MRAM offset {offset} of DPU {dpu} is outside its {mram_bytes} bytes")]
    MramOutOfRange {
        /// The DPU.
        dpu: usize,
        /// Start offset.
        offset: usize,
        /// Length in bytes.
        len: usize,
        /// The DPU's MRAM size.
        mram_bytes: usize,
    },
    /// A host transfer whose offset or length is not a multiple of 8.
    #[error(
        "host transfer of {len} bytes at MRAM offset {offset} of DPU {dpu}: offset and length must be multiples of 8"
    )]
    TransferAlignment {
        /// The DPU.
        dpu: usize,
        /// Start offset.
        offset: usize,
        /// Length in bytes.
        len: usize,
    },
    /// The kernel broke a hardware limit.
    #[error("{kernel} on DPU {dpu}, tasklet {tasklet}: {kind}: {details}")]
    Limit {
        /// The DPU.
        dpu: usize,
        /// The tasklet that broke it.
        tasklet: u32,
        /// Program and phase, e.g. "pimhe_main/ntt".
        kernel: String,
        /// Which limit.
        kind: LimitKind,
        /// What exactly, e.g. "mram_read: DMA size 12 bytes: must be 8..=2048 and a multiple of 8".
        details: String,
    },
    /// The header's magic is wrong (nothing, or not a pimhe image, at MRAM offset 0).
    #[error("DPU {dpu}: bad header: magic {magic:#010x}, expected {expected:#010x} (\"PIMH\")")]
    BadMagic {
        /// The DPU.
        dpu: usize,
        /// The magic found.
        magic: u32,
        /// [`layout::PIMHE_MAGIC`].
        expected: u32,
    },
    /// The kernel rejected the header or a command (header.status != 0).
    #[error("DPU {dpu}: the kernel reported status {status}: {meaning}")]
    KernelStatus {
        /// The DPU.
        dpu: usize,
        /// header.status.
        status: u32,
        /// What it means.
        meaning: &'static str,
    },
    /// An emulator self-test program found a mismatch.
    #[error("{kernel} on DPU {dpu}, tasklet {tasklet}: {details}")]
    SelfTest {
        /// The DPU.
        dpu: usize,
        /// The tasklet.
        tasklet: u32,
        /// Program and phase.
        kernel: String,
        /// The failed check.
        details: String,
    },
    /// The emulator itself failed (threads, host memory).
    #[error("emulator failure on DPU {dpu}: {details}")]
    Host {
        /// The DPU.
        dpu: usize,
        /// What failed.
        details: String,
    },
}

/// Counts of one launch, per DPU in the order the DPUs were given.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LaunchReport {
    /// (DPU index, its tasklets' counts).
    pub dpus: Vec<(usize, DpuCounts)>,
    /// (DPU index, per tasklet: the multiply routines among its instructions), same order as
    /// `dpus`. 32-bit: `mul32_32` and `mul32_lo_split`; 64-bit: `mul32_64` and the truncated
    /// high word `mulhi_trunc` (cost.h). Input of the model's multiplier what-if.
    pub multiplies: Vec<(usize, Vec<MultiplyCounts>)>,
    /// (DPU index, its barrier intervals in launch order), same order as `dpus`: what
    /// `upmem-v1b@2` prices ([`crate::counts::IntervalCounts`]). Their sum over intervals is
    /// the DPU's entry of `dpus`.
    pub intervals: Vec<(usize, Vec<IntervalCounts>)>,
}

impl LaunchReport {
    /// Sum over all DPUs and tasklets.
    pub fn total(&self) -> TaskletCounts {
        let mut total = TaskletCounts::default();
        for (_, d) in &self.dpus {
            total.accumulate(&d.total());
        }
        total
    }
}

/// Emulator self-test programs (`dpu/emulator/selftest.c`): each breaks one limit on purpose or
/// checks the shim. For the emulator's own tests.
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum SelfTest {
    /// `mram_read` of 12 bytes.
    DmaSize = 1,
    /// `mram_read` of 4096 bytes.
    DmaTooLarge = 2,
    /// MRAM offset 4.
    MramAlign = 3,
    /// WRAM buffer + 4.
    WramAlign = 4,
    /// A DMA running past 64 MiB.
    MramRange = 5,
    /// `mem_alloc` of more than the heap.
    WramOverflow = 6,
    /// DMA into a host stack buffer.
    WramRange = 7,
    /// Tasklet 1 breaks a limit between barriers.
    BarrierAbort = 8,
    /// Tasklet 0 returns while the others wait at a barrier.
    BarrierExit = 9,
    /// 16-bit multiply compositions, Barrett and Shoup against native arithmetic.
    Arith = 10,
    /// Known charges and DMAs per tasklet.
    Counts = 11,
    /// Known work per barrier interval: tasklet 0 alone, then every tasklet, then a tail.
    Intervals = 12,
}

/// One DPU's MRAM during a launch, reached by its tasklets' DMA callback, and the barrier
/// intervals the shim closed so far.
struct HostMram {
    bytes: Mutex<Vec<u8>>,
    limit: usize,
    intervals: Mutex<Vec<IntervalCounts>>,
}

/// Copies MRAM bytes `[offset, offset + out.len())` to `out`; bytes never written read as zero.
fn copy_out(mem: &[u8], offset: usize, out: &mut [u8]) {
    let have = mem.len().saturating_sub(offset).min(out.len());
    if have > 0 {
        out[..have].copy_from_slice(&mem[offset..offset + have]);
    }
    out[have..].fill(0);
}

/// The shim's MRAM callback: copies between a tasklet's WRAM buffer and the DPU's MRAM, growing
/// the MRAM vector on writes. The shim has already checked the range against the MRAM size.
unsafe extern "C" fn mram_io(host: *mut c_void, offset: u64, buf: *mut c_void, len: u32, write: c_int) -> c_int {
    // SAFETY: `host` is the `HostMram` that `launch_one` passed in and keeps alive until the
    // launch returns; `buf` points to `len` bytes of the launch's WRAM.
    let host = unsafe { &*(host as *const HostMram) };
    let (Ok(offset), len) = (usize::try_from(offset), len as usize) else {
        return -1;
    };
    let end = match offset.checked_add(len) {
        Some(end) if end <= host.limit => end,
        _ => return -1,
    };
    let Ok(mut mem) = host.bytes.lock() else {
        return -1;
    };
    if write != 0 {
        if mem.len() < end {
            mem.resize(end, 0);
        }
        // SAFETY: see above; the ranges do not overlap (WRAM is a separate allocation).
        let src = unsafe { std::slice::from_raw_parts(buf as *const u8, len) };
        mem[offset..end].copy_from_slice(src);
    } else {
        // SAFETY: see above.
        let dst = unsafe { std::slice::from_raw_parts_mut(buf as *mut u8, len) };
        copy_out(&mem, offset, dst);
    }
    0
}

fn tasklet_counts(c: &ffi::Counts) -> TaskletCounts {
    TaskletCounts {
        instructions: c.instructions,
        dma_reads: c.dma_reads,
        dma_read_bytes: c.dma_read_bytes,
        dma_writes: c.dma_writes,
        dma_write_bytes: c.dma_write_bytes,
    }
}

fn multiply_counts(c: &ffi::Counts) -> MultiplyCounts {
    MultiplyCounts { mul32: c.mul32, mul64: c.mul64, instructions: c.mul_instructions }
}

/// The shim's interval callback: appends one barrier interval to the DPU's list, or counts it
/// as one more repeat of the last one when every tasklet's counts are the same.
unsafe extern "C" fn interval(host: *mut c_void, counts: *const ffi::Counts, nr: u32) {
    // SAFETY: `host` is the `HostMram` that `launch_one` passed in (alive until the launch
    // returns); `counts` points to `nr` entries, valid for the call.
    let (host, counts) = unsafe { (&*(host as *const HostMram), std::slice::from_raw_parts(counts, nr as usize)) };
    let Ok(mut intervals) = host.intervals.lock() else {
        return;
    };
    let same = |last: &IntervalCounts| {
        counts
            .iter()
            .zip(last.tasklets.iter().zip(&last.multiplies))
            .all(|(c, (t, m))| tasklet_counts(c) == *t && multiply_counts(c) == *m)
    };
    match intervals.last_mut() {
        Some(last) if last.tasklets.len() == counts.len() && same(last) => last.repeats += 1,
        _ => intervals.push(IntervalCounts {
            repeats: 1,
            tasklets: counts.iter().map(tasklet_counts).collect(),
            multiplies: counts.iter().map(multiply_counts).collect(),
        }),
    }
}

/// Emulated DPUs, each with its own MRAM, all running pimhe's DPU program.
#[derive(Debug)]
pub struct DpuSet {
    config: EmulatorConfig,
    mram: Vec<Vec<u8>>,
}

/// MRAM may hold secrets (keys, decryption phases) that the buffers holding them failed to
/// wipe; the host memory that emulates it is wiped before it goes back to the allocator.
impl Drop for DpuSet {
    fn drop(&mut self) {
        self.mram.iter_mut().for_each(|mram| mram.zeroize());
    }
}

impl DpuSet {
    /// `dpus` DPUs of the given configuration, their MRAM empty (reads as zero).
    pub fn new(dpus: usize, config: EmulatorConfig) -> Result<Self, EmulatorError> {
        config.validate()?;
        Ok(Self { config, mram: vec![Vec::new(); dpus] })
    }

    /// Number of DPUs.
    pub fn len(&self) -> usize {
        self.mram.len()
    }

    /// Whether the set has no DPUs.
    pub fn is_empty(&self) -> bool {
        self.mram.is_empty()
    }

    /// The configuration.
    pub fn config(&self) -> &EmulatorConfig {
        &self.config
    }

    /// Bytes of host memory backing a DPU's MRAM (the highest byte ever written, not 64 MiB).
    pub fn resident_bytes(&self, dpu: usize) -> Result<usize, EmulatorError> {
        self.check_dpu(dpu)?;
        Ok(self.mram[dpu].len())
    }

    fn check_dpu(&self, dpu: usize) -> Result<(), EmulatorError> {
        if dpu < self.mram.len() {
            Ok(())
        } else {
            Err(EmulatorError::NoSuchDpu { dpu, len: self.mram.len() })
        }
    }

    fn check_transfer(&self, dpu: usize, offset: usize, len: usize) -> Result<(), EmulatorError> {
        self.check_dpu(dpu)?;
        if !offset.is_multiple_of(8) || !len.is_multiple_of(8) {
            return Err(EmulatorError::TransferAlignment { dpu, offset, len });
        }
        match offset.checked_add(len) {
            Some(end) if end <= self.config.mram_bytes => Ok(()),
            _ => Err(EmulatorError::MramOutOfRange { dpu, offset, len, mram_bytes: self.config.mram_bytes }),
        }
    }

    /// Host -> MRAM: copies `bytes` to MRAM offset `offset` of DPU `dpu`.
    pub fn write(&mut self, dpu: usize, offset: usize, bytes: &[u8]) -> Result<(), EmulatorError> {
        self.check_transfer(dpu, offset, bytes.len())?;
        let mem = &mut self.mram[dpu];
        let end = offset + bytes.len();
        if mem.len() < end {
            mem.resize(end, 0);
        }
        mem[offset..end].copy_from_slice(bytes);
        Ok(())
    }

    /// MRAM -> host: fills `out` from MRAM offset `offset` of DPU `dpu`.
    pub fn read(&self, dpu: usize, offset: usize, out: &mut [u8]) -> Result<(), EmulatorError> {
        self.check_transfer(dpu, offset, out.len())?;
        copy_out(&self.mram[dpu], offset, out);
        Ok(())
    }

    /// Host -> MRAM of little-endian words.
    pub fn write_u32s(&mut self, dpu: usize, offset: usize, words: &[u32]) -> Result<(), EmulatorError> {
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        self.write(dpu, offset, &bytes)
    }

    /// MRAM -> host of little-endian words.
    pub fn read_u32s(&self, dpu: usize, offset: usize, out: &mut [u32]) -> Result<(), EmulatorError> {
        let mut bytes = vec![0u8; 4 * out.len()];
        self.read(dpu, offset, &mut bytes)?;
        for (w, chunk) in out.iter_mut().zip(bytes.chunks_exact(4)) {
            *w = u32::from_le_bytes(chunk.try_into().expect("chunks of 4"));
        }
        Ok(())
    }

    /// Runs pimhe's DPU program on the listed DPUs and returns what each tasklet did. Fails with
    /// the first failing DPU's error, in list order (the other DPUs' MRAM keeps their results).
    pub fn launch(&mut self, dpus: &[usize]) -> Result<LaunchReport, EmulatorError> {
        let report = self.run(dpus, ffi::PROGRAM_MAIN)?;
        for &dpu in dpus {
            let mut bytes = [0u8; HEADER_BYTES];
            self.read(dpu, 0, &mut bytes)?;
            let header = PimheHeader::from_bytes(&bytes).expect("64 bytes");
            if header.status == layout::status::ERR_MAGIC {
                return Err(EmulatorError::BadMagic { dpu, magic: header.magic, expected: layout::PIMHE_MAGIC });
            }
            if header.status != layout::status::OK {
                return Err(EmulatorError::KernelStatus {
                    dpu,
                    status: header.status,
                    meaning: layout::status::describe(header.status),
                });
            }
        }
        Ok(report)
    }

    /// Runs an emulator self-test program instead of the kernel.
    #[doc(hidden)]
    pub fn launch_selftest(&mut self, dpus: &[usize], test: SelfTest) -> Result<LaunchReport, EmulatorError> {
        self.run(dpus, test as u32)
    }

    fn run(&mut self, dpus: &[usize], program: u32) -> Result<LaunchReport, EmulatorError> {
        let mut seen = vec![false; self.mram.len()];
        for &dpu in dpus {
            self.check_dpu(dpu)?;
            if std::mem::replace(&mut seen[dpu], true) {
                return Err(EmulatorError::DuplicateDpu { dpu });
            }
        }
        let limit = self.config.mram_bytes;
        let hosts: Vec<(usize, HostMram)> = dpus
            .iter()
            .map(|&dpu| {
                let bytes = Mutex::new(std::mem::take(&mut self.mram[dpu]));
                (dpu, HostMram { bytes, limit, intervals: Mutex::new(Vec::new()) })
            })
            .collect();
        let config = &self.config;
        let outcomes: Vec<Result<(DpuCounts, Vec<MultiplyCounts>), EmulatorError>> =
            hosts.par_iter().map(|(dpu, host)| launch_one(*dpu, host, config, program)).collect();
        let mut intervals = Vec::with_capacity(dpus.len());
        for (dpu, host) in hosts {
            self.mram[dpu] = host.bytes.into_inner().unwrap_or_else(|poisoned| poisoned.into_inner());
            intervals.push((dpu, host.intervals.into_inner().unwrap_or_else(|poisoned| poisoned.into_inner())));
        }
        let mut report = LaunchReport {
            dpus: Vec::with_capacity(dpus.len()),
            multiplies: Vec::with_capacity(dpus.len()),
            intervals,
        };
        for (&dpu, outcome) in dpus.iter().zip(outcomes) {
            let (counts, muls) = outcome?;
            report.dpus.push((dpu, counts));
            report.multiplies.push((dpu, muls));
        }
        Ok(report)
    }
}

fn launch_one(
    dpu: usize,
    host: &HostMram,
    config: &EmulatorConfig,
    program: u32,
) -> Result<(DpuCounts, Vec<MultiplyCounts>), EmulatorError> {
    let params = ffi::LaunchParams {
        host: host as *const HostMram as *mut c_void,
        mram_io: Some(mram_io),
        program,
        nr_tasklets: config.tasklets,
        mram_bytes: config.mram_bytes as u64,
        wram_bytes: config.wram_bytes as u32,
        stack_bytes: 0,
        interval: Some(interval),
    };
    let mut result = ffi::LaunchResult::default();
    // SAFETY: `params` and `result` are valid for the call; `host` outlives it (every tasklet
    // has ended when the shim returns) and is only touched through `mram_io`.
    unsafe { ffi::pimhe_emu_launch(&params, &mut result) };
    let used = &result.counts[..config.tasklets as usize];
    let muls = used.iter().map(multiply_counts).collect();
    let counts = DpuCounts { tasklets: used.iter().map(tasklet_counts).collect() };
    let kernel = ffi::c_text(&result.kernel);
    let details = ffi::c_text(&result.detail);
    let tasklet = result.tasklet;
    let limit =
        |kind| Err(EmulatorError::Limit { dpu, tasklet, kernel: kernel.clone(), kind, details: details.clone() });
    match result.error {
        ffi::ERR_OK => Ok((counts, muls)),
        ffi::ERR_DMA_SIZE => limit(LimitKind::DmaSize),
        ffi::ERR_DMA_ALIGN => limit(LimitKind::DmaAlignment),
        ffi::ERR_MRAM_RANGE => limit(LimitKind::MramRange),
        ffi::ERR_WRAM_RANGE => limit(LimitKind::WramRange),
        ffi::ERR_WRAM_OVERFLOW => limit(LimitKind::WramOverflow),
        ffi::ERR_BARRIER => limit(LimitKind::Barrier),
        ffi::ERR_SELFTEST => Err(EmulatorError::SelfTest { dpu, tasklet, kernel, details }),
        ffi::ERR_TASKLETS => Err(EmulatorError::Tasklets {
            generation: config.generation,
            tasklets: config.tasklets,
            max: config.generation.max_tasklets(),
        }),
        ffi::ERR_HOST | ffi::ERR_PROGRAM => Err(EmulatorError::Host { dpu, details }),
        other => Err(EmulatorError::Host { dpu, details: format!("unknown emulator error {other}: {details}") }),
    }
}

/// `pimhe_header_t` as the C compiler lays it out: its field offsets in declaration order, then
/// its size; returns how many entries that is (written up to `out.len()`). For layout checks.
pub fn c_header_layout(out: &mut [u32]) -> usize {
    // SAFETY: the C function writes at most `out.len()` entries.
    unsafe { ffi::pimhe_emu_header_layout(out.as_mut_ptr(), out.len() as u32) as usize }
}

/// `pimhe_command_t` as the C compiler lays it out (see [`c_header_layout`]).
pub fn c_command_layout(out: &mut [u32]) -> usize {
    // SAFETY: the C function writes at most `out.len()` entries.
    unsafe { ffi::pimhe_emu_command_layout(out.as_mut_ptr(), out.len() as u32) as usize }
}

/// The C header's opcodes `PIMHE_OP_NTT ..= PIMHE_OP_SET_PRIME` in numeric order, then
/// `PIMHE_OP_FIRST`, `PIMHE_OP_LAST`, the flags `PIMHE_FLAG_BROADCAST_SRC1`, `PIMHE_FLAG_NTT_FORM`,
/// `PIMHE_FLAG_ACCUMULATE`, `PIMHE_FLAG_CENTRED`, `PIMHE_VARIANT_BARRETT`, `PIMHE_VARIANT_BEST`,
/// and `PIMHE_STATUS_OK`, `PIMHE_ERR_MAGIC ..= PIMHE_ERR_CONVERSION` in numeric order; returns
/// how many entries that is (written up to `out.len()`). For the opcode, variant and status
/// cross-check.
pub fn c_opcodes(out: &mut [u32]) -> usize {
    // SAFETY: the C function writes at most `out.len()` entries.
    unsafe { ffi::pimhe_emu_opcodes(out.as_mut_ptr(), out.len() as u32) as usize }
}

/// The limits and table sizes the kernel is compiled with: `PIMHE_MAGIC`, `PIMHE_N_MIN`,
/// `PIMHE_N_MAX`, `PIMHE_LOG_N_MIN`, `PIMHE_LOG_N_MAX`, `PIMHE_Q_LIMIT` (`pimhe_dpu.h`), then the
/// `best` kernel's `TABLE_MIN_N`, `TABLE_COUNT`, `TABLE_WORDS` and `TABLE_BYTES`
/// (`dpu/kernels/context.h`); returns how many entries that is (written up to `out.len()`). For
/// the cross-check of [`crate::layout`]'s constants.
pub fn c_limits(out: &mut [u32]) -> usize {
    // SAFETY: the C function writes at most `out.len()` entries.
    unsafe { ffi::pimhe_emu_limits(out.as_mut_ptr(), out.len() as u32) as usize }
}
