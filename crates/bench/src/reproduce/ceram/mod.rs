//! The CE-RAM B/FV paper's reproduction (`pimhe bench reproduce ceram`): the `ceram` model's
//! figures for the paper's Tables 2, 3, 4, 6, 7, 8 and section 4.4's projection
//! (shared/seeds/004_*, sections 4.2-4.5) beside the published ones; Tables 9 and 10 as published.
//!
//! - **Table 2**: full-RNS CE-RAM without NTT vs Reis et al.'s textbook CE-RAM (one
//!   power-of-two q, no RNS, no NTT), homomorphic multiplication, actual transfer, cases A-C.
//! - **Table 3**: with vs without NTT (full-RNS both), multiplication, decryption, encryption,
//!   without transfer and with the actual and the specified transfer, cases A-C.
//! - **Table 4**: cases B and C vs case A, *without NTT on either side* (the caption's "not
//!   including NTT"; Tables 3 and 7 confirm it, see [`table_4_reading`]), multiplication,
//!   decryption, encryption, addition, subtraction, no / actual / specified transfer.
//! - **Table 6**: CE-RAM (modeled, with NTT, actual transfer) vs CPUs. The paper's CPUs ran SEAL;
//!   here the CPU side is *measured in the same run*: pimhe's cpu backend (BFV at N = 2^14,
//!   |q| = 438 bits counted as SEAL and the security standard count it, the special prime
//!   included) and, where an environment with TenSEAL exists, SEAL through
//!   bench/compare/peer_seal.py at the same primes' sizes and at SEAL's own default 438-bit
//!   modulus (what the paper ran). A missing SEAL is reported as n/a with the reason.
//! - **Table 7**: operations per second (1 s / the model's time with NTT), cases A-C, with the
//!   actual and the specified transfer and computation only.
//! - **Table 8**: Reis et al.'s textbook CE-RAM time / this design's with NTT, multiplication,
//!   specified and actual transfer (Table 2 x Table 3, as in the paper).
//! - **Section 4.4**: two banks, multiplication, under [`TWO_BANK_RULE`], beside the paper's
//!   11222 per second (case B, actual transfer).
//! - **Tables 9, 10** (Roy et al.'s FPGA, Al Badawi et al.'s GPU): published only; their
//!   systems' absolute times could not be read from their own papers, and deriving them from
//!   these tables' ratios would be circular ([`PublishedOnly::why_not_ours`]).
//!
//! Every modeled number carries the model's label (`ceram@1 (modeled)`); the published
//! numbers are constants below, each citing its table. A cell is "within" when ours /
//! published lies in [1 - [`TOLERANCE`], 1 + [`TOLERANCE`]].
//!
//! The module's files: `published` (the paper's constants), `model` (Tables 2-4 and the
//! transfers from the model, the misses and notes), `config` (what a run takes), `cpu` (Table
//! 6's CPU side measured here), `table6` (Table 6), `throughput` (Tables 7-10 and section 4.4), `report` (the report, its text, and its
//! rows in the common shape).

mod config;
mod cpu;
mod model;
mod published;
mod report;
mod table6;
mod throughput;

pub use config::CeramConfig;
pub use cpu::{
    cpu_params, find_seal_python, measure_cpus, seal_script, CpuColumn, CpuMeasurement, CPU_PLAIN_MODULUS,
    SEAL_DEFAULT_LABEL, SPECIAL_LABEL,
};
pub use model::{
    model_params, table_2, table_3, table_4, transfers, Miss, RatioCell, RatioTable, RatioUnit, Transfer,
    TransferCheck, TOLERANCE,
};
pub use published::{
    published_compute_s, table_4_reading, PAPER_DEGREE, PAPER_LOG_Q, PUBLISHED_TABLE_10, PUBLISHED_TABLE_2,
    PUBLISHED_TABLE_3, PUBLISHED_TABLE_4, PUBLISHED_TABLE_6, PUBLISHED_TABLE_7_ACTUAL, PUBLISHED_TABLE_7_COMPUTE,
    PUBLISHED_TABLE_7_SPECIFIED, PUBLISHED_TABLE_8, PUBLISHED_TABLE_9, PUBLISHED_TWO_BANKS, TABLE_10_OPS, TABLE_6_OPS,
};
pub use report::{reproduce, Ceram, CeramReport};
pub use table6::{table_6, CpuComparison, MeasuredSpeedup, PublishedSpeedup, Table6, Table6Row};
pub use throughput::{
    published_only, table_7, table_8, two_banks, two_banks_ops_per_s, ProjectionRow, PublishedOnly, TwoBankProjection,
    TWO_BANK_RULE,
};
