//! # pimhe-pim
//!
//! HE polynomial work on UPMEM processing-in-memory: the DPU kernels (in `dpu/`, plain C),
//! an emulator that runs those same kernel sources on the host against a shim of the UPMEM
//! runtime, timing and energy models that turn what the emulator counted into modeled DPU
//! seconds and joules, and a runtime that implements [`pimhe_exec::Backend`] on top. The
//! contract between these parts is `docs/PIM.md`.

pub mod counts;
pub mod device;
pub mod emulator;
#[cfg(feature = "upmem")]
pub mod hardware;
pub mod layout;
pub mod model;
pub mod multiword;
pub mod ntt_stage;
pub mod raw_poly;
pub mod runtime;
