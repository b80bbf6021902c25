//! Bindings to the C shim (`dpu/emulator/pimhe_emu.h`), compiled by `build.rs`.

use std::ffi::{c_char, c_int, c_void};

pub const MAX_TASKLETS: usize = 24;
pub const KERNEL_LEN: usize = 64;
pub const DETAIL_LEN: usize = 256;

pub const PROGRAM_MAIN: u32 = 0;

pub const ERR_OK: i32 = 0;
pub const ERR_DMA_SIZE: i32 = 1;
pub const ERR_DMA_ALIGN: i32 = 2;
pub const ERR_MRAM_RANGE: i32 = 3;
pub const ERR_WRAM_RANGE: i32 = 4;
pub const ERR_WRAM_OVERFLOW: i32 = 5;
pub const ERR_BARRIER: i32 = 6;
pub const ERR_TASKLETS: i32 = 7;
pub const ERR_HOST: i32 = 8;
pub const ERR_PROGRAM: i32 = 9;
pub const ERR_SELFTEST: i32 = 10;

pub type MramIoFn =
    unsafe extern "C" fn(host: *mut c_void, offset: u64, buf: *mut c_void, len: u32, write: c_int) -> c_int;

pub type IntervalFn = unsafe extern "C" fn(host: *mut c_void, counts: *const Counts, nr: u32);

#[repr(C)]
pub struct LaunchParams {
    pub host: *mut c_void,
    pub mram_io: Option<MramIoFn>,
    pub program: u32,
    pub nr_tasklets: u32,
    pub mram_bytes: u64,
    pub wram_bytes: u32,
    pub stack_bytes: u32,
    pub interval: Option<IntervalFn>,
}

#[repr(C)]
#[derive(Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub instructions: u64,
    pub dma_reads: u64,
    pub dma_read_bytes: u64,
    pub dma_writes: u64,
    pub dma_write_bytes: u64,
    pub mul32: u64,
    pub mul64: u64,
    pub mul_instructions: u64,
}

#[repr(C)]
pub struct LaunchResult {
    pub error: i32,
    pub tasklet: u32,
    pub kernel: [c_char; KERNEL_LEN],
    pub detail: [c_char; DETAIL_LEN],
    pub counts: [Counts; MAX_TASKLETS],
}

impl Default for LaunchResult {
    fn default() -> Self {
        Self {
            error: ERR_OK,
            tasklet: 0,
            kernel: [0; KERNEL_LEN],
            detail: [0; DETAIL_LEN],
            counts: [Counts::default(); MAX_TASKLETS],
        }
    }
}

unsafe extern "C" {
    pub fn pimhe_emu_launch(params: *const LaunchParams, result: *mut LaunchResult) -> c_int;
    pub fn pimhe_emu_header_layout(offsets: *mut u32, capacity: u32) -> u32;
    pub fn pimhe_emu_command_layout(offsets: *mut u32, capacity: u32) -> u32;
    pub fn pimhe_emu_opcodes(values: *mut u32, capacity: u32) -> u32;
    pub fn pimhe_emu_limits(values: *mut u32, capacity: u32) -> u32;
    pub fn pimhe_emu_stack_size_default() -> u32;
    pub fn pimhe_emu_static_wram_bytes() -> u32;
}

/// A NUL-terminated C string buffer as a Rust string.
pub fn c_text(buf: &[c_char]) -> String {
    let bytes: Vec<u8> = buf.iter().take_while(|&&c| c != 0).map(|&c| c as u8).collect();
    String::from_utf8_lossy(&bytes).into_owned()
}
