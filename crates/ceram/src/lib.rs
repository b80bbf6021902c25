//! # pimhe-ceram
//!
//! CE-RAM (compute-enabled SRAM) as the CE-RAM B/FV paper (seed 004) uses it, after Reis et
//! al.'s CiM-HE (IEEE TVLSI 2020): a bank of SRAM arrays whose peripherals compute on the
//! bitlines. This crate maps full-RNS B/FV (and the textbook design of Reis et al.) to the
//! bank's micro-operations, counts them and prices them with the `ceram` model:
//!
//! - [`machine`]: the section-4.1 bank (16,384 arrays of 8 x 1024, 512-bit coefficient slots,
//!   column-aligned polynomials) and capacity checks;
//! - [`isa`]: the micro-ops (MOVE, WRITE, READ, ADD, SUB, shifts, AND, OR, SELECT, MULT,
//!   MODMULT) and their latency as a function of the word width;
//! - [`params`]: moduli by kind and width, bases, cases A, B, C of Table 1, the textbook design;
//! - [`program`]: polynomial-level [`program::Step`]s and the programs of encryption,
//!   decryption (Algorithm 1), addition, subtraction, multiplication (Algorithm 2 +
//!   relinearization);
//! - [`lowering`]: step -> micro-ops (NTT per section 3.1 / Algorithm 7, FastBConv, the special
//!   reductions of section 3);
//! - [`model`]: [`model::CeramModel`], `ceram@1`: counts x latencies, DDR4 transfers at the
//!   specified and the actual rate.
//!
//! ```
//! use pimhe_ceram::{model::CeramModel, params::Params, program::{program, HomOp}};
//!
//! let model = CeramModel::default();
//! let a = model.price(&program(HomOp::Multiply, &Params::case_a(true)))?;
//! let b = model.price(&program(HomOp::Multiply, &Params::case_b(true)))?;
//! assert_eq!(a.label, "ceram@1 (modeled)");
//! assert!(b.compute_s < a.compute_s); // the special moduli help
//! # Ok::<(), pimhe_ceram::machine::CapacityError>(())
//! ```

pub mod isa;
pub mod lowering;
pub mod machine;
pub mod model;
pub mod params;
pub mod program;
