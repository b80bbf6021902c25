//! What the runtime needs of a set of DPUs, implemented by the emulator and (with the `upmem`
//! feature) by real UPMEM hardware, so that placement, residency, rounds and fallbacks are one
//! code path for both.

use zeroize::Zeroize;

use crate::emulator::{DpuSet, EmulatorError, LaunchReport};

/// Why a DPU set failed.
#[derive(Debug, thiserror::Error)]
pub enum DeviceError {
    /// The emulator refused (a hardware limit, a kernel status, ...).
    #[error(transparent)]
    Emulator(#[from] EmulatorError),
    /// A libdpu call failed on real hardware.
    #[error("UPMEM SDK: {call} failed with dpu_error_t {code}")]
    Hardware {
        /// The bridge function that failed (`dpu/host/upmem_host.h`).
        call: &'static str,
        /// libdpu's error code.
        code: i32,
    },
    /// The DPU program reported a status other than OK in its header.
    #[error("DPU {dpu}: the kernel stopped with status {status} ({meaning})")]
    KernelStatus {
        /// DPU index.
        dpu: usize,
        /// Status code from the header (docs/PIM.md).
        status: u32,
        /// What the code means.
        meaning: &'static str,
    },
}

/// What one launch cost, as the device can tell.
#[derive(Debug, Clone)]
pub enum LaunchCost {
    /// The emulator's counts, which a timing model turns into modeled seconds.
    Counted(LaunchReport),
    /// Wall time measured around a launch on real hardware.
    Measured {
        /// Seconds from launch to the last DPU's completion.
        seconds: f64,
    },
}

/// A set of DPUs, each with its own MRAM, all running pimhe's DPU program (docs/PIM.md).
/// MRAM offsets are bytes from `DPU_MRAM_HEAP_POINTER`, multiples of 8.
pub trait DpuDevice: Send {
    /// Number of DPUs.
    fn len(&self) -> usize;

    /// Whether the set has no DPUs.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether times come from the clock (hardware) rather than from a model (emulator).
    fn measures_time(&self) -> bool;

    /// Host -> MRAM of DPU `dpu`.
    fn write(&mut self, dpu: usize, offset: usize, bytes: &[u8]) -> Result<(), DeviceError>;

    /// MRAM of DPU `dpu` -> host.
    fn read(&mut self, dpu: usize, offset: usize, out: &mut [u8]) -> Result<(), DeviceError>;

    /// Runs the program on `dpus` (the others must not run their stale command lists) and
    /// checks every listed DPU's status.
    fn launch(&mut self, dpus: &[usize]) -> Result<LaunchCost, DeviceError>;

    /// Host -> MRAM of little-endian words.
    /// The staging bytes are wiped after the transfer: the words may be secret (a key, a
    /// decryption phase), and freed memory is kept by the process for reuse.
    fn write_u32s(&mut self, dpu: usize, offset: usize, words: &[u32]) -> Result<(), DeviceError> {
        let mut bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        let written = self.write(dpu, offset, &bytes);
        bytes.zeroize();
        written
    }

    /// MRAM -> host of little-endian words (staging bytes wiped, as in `write_u32s`).
    fn read_u32s(&mut self, dpu: usize, offset: usize, out: &mut [u32]) -> Result<(), DeviceError> {
        let mut bytes = vec![0u8; 4 * out.len()];
        let read = self.read(dpu, offset, &mut bytes);
        if read.is_ok() {
            for (w, chunk) in out.iter_mut().zip(bytes.chunks_exact(4)) {
                *w = u32::from_le_bytes(chunk.try_into().expect("chunks of 4"));
            }
        }
        bytes.zeroize();
        read
    }
}

impl DpuDevice for DpuSet {
    fn len(&self) -> usize {
        DpuSet::len(self)
    }

    fn measures_time(&self) -> bool {
        false
    }

    fn write(&mut self, dpu: usize, offset: usize, bytes: &[u8]) -> Result<(), DeviceError> {
        Ok(DpuSet::write(self, dpu, offset, bytes)?)
    }

    fn read(&mut self, dpu: usize, offset: usize, out: &mut [u8]) -> Result<(), DeviceError> {
        Ok(DpuSet::read(self, dpu, offset, out)?)
    }

    fn launch(&mut self, dpus: &[usize]) -> Result<LaunchCost, DeviceError> {
        Ok(LaunchCost::Counted(DpuSet::launch(self, dpus)?))
    }
}

/// An emulated DPU set the caller keeps a handle on (`Arc::clone` before handing it to
/// [`crate::runtime::PimBackend::with_device`]), to look into its MRAM: what a test of wiping or
/// placement needs to see.
impl DpuDevice for std::sync::Arc<std::sync::Mutex<DpuSet>> {
    fn len(&self) -> usize {
        self.lock().map_or(0, |set| set.len())
    }

    fn measures_time(&self) -> bool {
        false
    }

    fn write(&mut self, dpu: usize, offset: usize, bytes: &[u8]) -> Result<(), DeviceError> {
        DpuDevice::write(&mut *self.lock().unwrap_or_else(std::sync::PoisonError::into_inner), dpu, offset, bytes)
    }

    fn read(&mut self, dpu: usize, offset: usize, out: &mut [u8]) -> Result<(), DeviceError> {
        DpuDevice::read(&mut *self.lock().unwrap_or_else(std::sync::PoisonError::into_inner), dpu, offset, out)
    }

    fn launch(&mut self, dpus: &[usize]) -> Result<LaunchCost, DeviceError> {
        DpuDevice::launch(&mut *self.lock().unwrap_or_else(std::sync::PoisonError::into_inner), dpus)
    }
}
