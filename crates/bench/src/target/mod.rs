//! Where a run computes: the emulated UPMEM system ([`upmem`], with DRAMatic's hardware
//! [`what_if`]s) and the GPU + near-bank PIM system ([`nearbank`]) beside the CPU.

pub mod nearbank;
pub mod upmem;
pub mod what_if;
