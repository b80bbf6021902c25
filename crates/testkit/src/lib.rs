//! Independent oracles and seeded inputs shared by pimhe's integration tests.
//!
//! The oracles in [`oracle`] and [`bigint`] are written from the definitions with plain `%`,
//! `i128`/`u128` and num-bigint arithmetic: none of them calls `Modulus`, `NttTable` or
//! `RnsBase`, so a bug in the library cannot hide behind the same bug in its checker.
//! [`inputs`] builds the seeded test inputs (which may use the library: they are data, not
//! expectations).

pub mod bigint;
pub mod fused;
pub mod inputs;
pub mod oracle;
