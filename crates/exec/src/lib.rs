//! # pimhe-exec
//!
//! The execution layer: [`Backend`], the set of polynomial operations a device can own (the
//! "PIM instruction set" of DESIGN.md), and [`CpuBackend`], the default implementation.
//! Schemes are written against [`Backend`] only, so the same BGV program runs on the CPU and on
//! PIM backends.

pub mod backend;
pub mod behz;
pub mod cpu;
pub mod error;
pub mod key_switch;
pub mod operands;

pub use backend::{Backend, Shape};
pub use behz::BehzPlan;
pub use cpu::CpuBackend;
pub use error::{ExecError, Result};
pub use key_switch::KeySwitchPlan;
