//! The MRAM interface of the DPU program: Rust mirrors of `dpu/include/pimhe_dpu.h` (header,
//! commands, opcodes, variants, status codes), their byte serialization, and the tables and
//! image a DPU needs for one prime.
//!
//! Layout of one DPU's MRAM (docs/PIM.md; offsets in bytes from `DPU_MRAM_HEAP_POINTER`, all
//! 8-aligned), as [`MramLayout::new`] places it:
//!
//! | offset | content |
//! |---|---|
//! | 0 | [`PimheHeader`] (64 bytes) |
//! | 64 | forward twiddles psi^bitrev(k), k < N, then their Shoup constants (8N bytes), then for N >= [`TABLE_MIN_N`] the multiplication tables of psi^bitrev(1..=7) (28 KiB) |
//! | 64 + T | inverse twiddles in consumption order (slot 0 unused), then Shoup constants (8N bytes), then for N >= [`TABLE_MIN_N`] the tables of slots N-7 ..= N-1, the last times N^-1 (28 KiB) |
//! | 64 + 2T | `command_capacity` x [`PimheCommand`] (48 bytes each) |
//! | [`MramLayout::data_offset`] | operands: `count` sub-polynomials = `count * N` u32 each |
//!
//! with T = 4 [`table_words`]`(N)`. A multiplication table of a constant w is 4 x 256 words,
//! R_i\[x\] = x w 2^(8i) mod q (x < 256, i < 4): the `best` kernel multiplies by w with four
//! lookups in WRAM (dpu/kernels/arith_best.h) in the stages that have few distinct twiddles.
//!
//! Everything is little-endian, as on the DPU.
//!
//! ```
//! use pimhe_pim::layout::{prime_image, prime_tables, MramLayout, PimheCommand, Variant};
//! let tables = prime_tables(12289, 1024).unwrap();
//! let layout = MramLayout::new(1024, 4);
//! let data = layout.operand_offset(0);
//! let image = prime_image(&tables, Variant::Best, &layout, &[PimheCommand::ntt(data, 1)]).unwrap();
//! assert_eq!(image.len(), layout.data_offset as usize);
//! ```

mod image;
mod interface;

pub use image::{prime_image, prime_tables, MramLayout, PrimeTables};
pub use interface::*;
