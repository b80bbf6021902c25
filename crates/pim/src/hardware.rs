//! Real UPMEM DPUs through UPMEM's libdpu (cargo feature `upmem`).
//!
//! A thin layer on purpose: everything above it (placement, residency, rounds, fallbacks, the
//! kernels themselves) is shared with the emulator and tested there. This file and the C bridge
//! `dpu/host/upmem_host.c` are compiled only with the feature and have never run: our machines
//! have no UPMEM hardware or SDK (docs/PIM.md, "Real hardware").

use std::ffi::{c_char, c_void, CString};
use std::path::Path;
use std::ptr::NonNull;
use std::time::Instant;

use crate::device::{DeviceError, DpuDevice, LaunchCost};
use crate::layout::{self, PimheHeader, HEADER_BYTES};

/// The bridge's opaque handle (`pimhe_upmem` in dpu/host/upmem_host.h).
#[repr(C)]
struct RawSet {
    _opaque: [u8; 0],
}

extern "C" {
    fn pimhe_upmem_open(nr_dpus: u32, binary_path: *const c_char, out: *mut *mut RawSet) -> i32;
    fn pimhe_upmem_len(set: *const RawSet) -> u32;
    fn pimhe_upmem_write(set: *mut RawSet, dpu: u32, offset: u32, src: *const c_void, len: usize) -> i32;
    fn pimhe_upmem_read(set: *mut RawSet, dpu: u32, offset: u32, dst: *mut c_void, len: usize) -> i32;
    fn pimhe_upmem_launch(set: *mut RawSet) -> i32;
    fn pimhe_upmem_close(set: *mut RawSet);
}

/// DPUs allocated through libdpu, running the DPU program built from `dpu/kernels/main.c`
/// with `dpu-upmem-dpurte-clang` (dpu/README.md).
pub struct UpmemDpus {
    raw: NonNull<RawSet>,
    len: usize,
}

// The handle is only used under the runtime's mutex, one call at a time.
unsafe impl Send for UpmemDpus {}

impl UpmemDpus {
    /// Allocates `dpus` DPUs and loads the DPU program at `binary`.
    pub fn open(dpus: usize, binary: &Path) -> Result<Self, DeviceError> {
        let path = CString::new(binary.to_string_lossy().as_bytes())
            .map_err(|_| DeviceError::Hardware { call: "pimhe_upmem_open (path contains NUL)", code: -1 })?;
        let count = u32::try_from(dpus).map_err(|_| DeviceError::Hardware { call: "pimhe_upmem_open", code: -1 })?;
        let mut raw = std::ptr::null_mut();
        // SAFETY: `path` outlives the call; `raw` is written only on success.
        check("pimhe_upmem_open", unsafe { pimhe_upmem_open(count, path.as_ptr(), &mut raw) })?;
        let raw = NonNull::new(raw).ok_or(DeviceError::Hardware { call: "pimhe_upmem_open", code: -1 })?;
        // SAFETY: `raw` is a live handle from pimhe_upmem_open.
        let len = unsafe { pimhe_upmem_len(raw.as_ptr()) } as usize;
        Ok(Self { raw, len })
    }

    fn header(&mut self, dpu: usize) -> Result<PimheHeader, DeviceError> {
        let mut bytes = [0u8; HEADER_BYTES];
        self.read(dpu, 0, &mut bytes)?;
        Ok(PimheHeader::from_bytes(&bytes).expect("a header is HEADER_BYTES long"))
    }
}

impl Drop for UpmemDpus {
    fn drop(&mut self) {
        // SAFETY: `raw` is live and not used after this.
        unsafe { pimhe_upmem_close(self.raw.as_ptr()) }
    }
}

impl DpuDevice for UpmemDpus {
    fn len(&self) -> usize {
        self.len
    }

    fn measures_time(&self) -> bool {
        true
    }

    fn write(&mut self, dpu: usize, offset: usize, bytes: &[u8]) -> Result<(), DeviceError> {
        let offset = mram_offset(offset)?;
        // SAFETY: `bytes` is valid for `bytes.len()` reads; the bridge checks the DPU index.
        let code =
            unsafe { pimhe_upmem_write(self.raw.as_ptr(), dpu as u32, offset, bytes.as_ptr().cast(), bytes.len()) };
        check("pimhe_upmem_write", code)
    }

    fn read(&mut self, dpu: usize, offset: usize, out: &mut [u8]) -> Result<(), DeviceError> {
        let offset = mram_offset(offset)?;
        // SAFETY: `out` is valid for `out.len()` writes; the bridge checks the DPU index.
        let code =
            unsafe { pimhe_upmem_read(self.raw.as_ptr(), dpu as u32, offset, out.as_mut_ptr().cast(), out.len()) };
        check("pimhe_upmem_read", code)
    }

    fn launch(&mut self, dpus: &[usize]) -> Result<LaunchCost, DeviceError> {
        // libdpu launches the whole set: DPUs not listed get an empty command list, so they
        // do not rerun the commands of their last launch.
        for dpu in (0..self.len).filter(|d| !dpus.contains(d)) {
            let mut header = self.header(dpu)?;
            if header.magic == layout::PIMHE_MAGIC && header.command_count != 0 {
                header.command_count = 0;
                self.write(dpu, 0, &header.to_bytes())?;
            }
        }
        let start = Instant::now();
        // SAFETY: `raw` is a live handle.
        check("pimhe_upmem_launch", unsafe { pimhe_upmem_launch(self.raw.as_ptr()) })?;
        let seconds = start.elapsed().as_secs_f64();
        for &dpu in dpus {
            let status = self.header(dpu)?.status;
            if status != layout::status::OK {
                return Err(DeviceError::KernelStatus { dpu, status, meaning: layout::status::describe(status) });
            }
        }
        Ok(LaunchCost::Measured { seconds })
    }
}

fn mram_offset(offset: usize) -> Result<u32, DeviceError> {
    u32::try_from(offset).map_err(|_| DeviceError::Hardware { call: "MRAM offset beyond 4 GiB", code: -1 })
}

fn check(call: &'static str, code: i32) -> Result<(), DeviceError> {
    if code == 0 {
        Ok(())
    } else {
        Err(DeviceError::Hardware { call, code })
    }
}
