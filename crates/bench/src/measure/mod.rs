//! What pimhe measures: polynomial kernels and operations on real ciphertexts
//! ([`kernels`]), each scheme's operations per batch ([`scheme`]), and the statistics of seed
//! 002 ([`stats`]), on any [`crate::target`]; and the machine they are measured on
//! ([`machine`]).

pub mod bandwidth;
pub mod bootstrap;
pub mod inputs;
pub mod kernels;
pub mod machine;
pub mod scheme;
pub mod stats;
