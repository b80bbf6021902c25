//! What pimhe measures: polynomial kernels and operations on real ciphertexts
//! ([`kernels`]), each scheme's operations per batch ([`scheme`]), and the statistics of seed
//! 002 ([`stats`]), CKKS bootstrapping ([`bootstrap`]) and encrypted HELR training
//! ([`helr`]), on any [`crate::target`]; and the machine they are measured on
//! ([`machine`]).

pub mod bandwidth;
pub mod bootstrap;
pub mod helr;
pub mod inputs;
pub mod kernels;
pub mod keygen;
pub mod machine;
pub mod scheme;
pub mod stats;
pub mod study;
pub mod workers;
