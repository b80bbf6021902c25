//! # pimhe-workloads
//!
//! The workloads of the papers pimhe implements, written once against the schemes and so run
//! on every backend: encrypted statistics over many users (seed 002: mean, variance, linear
//! regression) and the pipelines of the demo (BGV: a product, relinearized and switched down a
//! modulus; CKKS: a product, a rotation, a polynomial); the data and plaintext reference of
//! HELR, encrypted logistic-regression training (seed 003's workload, Han et al.); and the
//! [`progress::Progress`] hook through which long runs report how far they got.

pub mod batch_ops;
pub mod bgv_pipeline;
pub mod ckks_pipeline;
pub mod helr;
pub mod progress;
pub mod stats;
