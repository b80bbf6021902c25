//! # pimhe-nearbank
//!
//! Anaheim (Kim et al., seed 003): a GPU whose DRAM dies carry a small PIM unit beside every
//! bank, which runs the element-wise operations of HE while the GPU keeps the NTT, the base
//! conversion and the automorphism. This crate is that system in pimhe:
//!
//! - [`isa`]: the PIM instruction set of Anaheim's Table II and the GPU kernels beside it;
//! - [`planner`]: the fusion of section V, once for every scheme: a recorded trace of
//!   [`pimhe_exec::Backend`] operations becomes PIM instructions (a key switch's products
//!   become PAccum, ModDown's tail ModDownEp, a constant linear combination CAccum) and GPU
//!   kernels;
//! - [`backend`]: [`NearbankBackend`], a `Backend` that computes on the host CPU (its results
//!   are the CPU backend's, bit for bit) and records what the GPU + PIM system would run;
//! - [`trace`]: the recorded dataflow the planner reads;
//! - [`model`]: what that costs on the configurations of Table III, at the level of DRAM
//!   commands on the PIM side and as a roofline on the GPU side.

pub mod backend;
pub mod isa;
pub mod model;
pub mod planner;
pub mod trace;

pub use backend::NearbankBackend;
