//! The CE-RAM bank of the CE-RAM B/FV paper's section 4.1 (seed 004) and how polynomials sit in
//! it.
//!
//! - 16 MB built of 16,384 arrays of 8 rows x 1024 columns of SRAM cells with compute-enabled
//!   peripherals (section 4.1, after Reis et al.'s CiM-HE arrays of 1 KB each).
//! - Computing is at the bitline level, so the coefficients of two operand polynomials must be
//!   column-aligned: a polynomial is always mapped to the same row index across the arrays,
//!   one coefficient per array (section 4.1).
//! - "This mapping holds up to 512 bits for coefficients in each row": a row of 1024 columns
//!   holds two 512-bit *slots*, one coefficient of each of two polynomials, so "two polynomial
//!   primitives are performed simultaneously" (section 4.1). The residues of one coefficient in
//!   several moduli sit side by side in a slot (the spare bits beside base Q hold m_sk and
//!   m~, section 4.1).
//!
//! **Assumptions** (not stated by the paper, documented in docs/PIM.md):
//!
//! - a residue wider than a slot (the textbook design's double-width products) takes a whole
//!   row of 1024 columns; wider than a row is a [`CapacityError::WordTooWide`];
//! - moduli are packed into slots first-fit in the order given;
//! - with N larger than the number of arrays, each array holds ceil(N / arrays) coefficients of
//!   a polynomial in as many slots, and every row operation repeats that many times.

use serde::Serialize;

/// What does not fit.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CapacityError {
    /// One residue is wider than a row.
    #[error("a {width}-bit word does not fit a CE-RAM row of {columns} columns")]
    WordTooWide {
        /// The residue's width in bits.
        width: u32,
        /// Columns of one array row.
        columns: u32,
    },
    /// The live polynomials need more slots than the bank has.
    #[error(
        "{what} needs {needed} slot-rows per array (N = {n}) but the {bytes}-byte bank has {available}: \
         {arrays} arrays x {rows} rows x {slots_per_row} slots"
    )]
    BankFull {
        /// What was being placed.
        what: String,
        /// Ring degree.
        n: usize,
        /// Slot-rows per array needed.
        needed: usize,
        /// Slot-rows per array available.
        available: usize,
        /// Bank size in bytes.
        bytes: usize,
        /// Arrays in the bank.
        arrays: usize,
        /// Rows per array.
        rows: usize,
        /// Slots per row.
        slots_per_row: usize,
    },
    /// N must be a power of two >= 2.
    #[error("ring degree N = {0} is not a power of two >= 2")]
    BadDegree(usize),
}

/// One CE-RAM bank.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Machine {
    /// Arrays in the bank (tiled; all execute the same micro-op on the same row index).
    pub arrays: usize,
    /// Rows per array.
    pub rows: usize,
    /// Columns (bitlines) per array row.
    pub columns: u32,
    /// Bits of one coefficient slot in a row.
    pub slot_bits: u32,
}

impl Machine {
    /// Section 4.1: 16 MB of 16,384 arrays of 8 x 1024, 512 bits of coefficients per row slot.
    pub const SECTION_4_1: Machine = Machine { arrays: 16_384, rows: 8, columns: 1024, slot_bits: 512 };

    /// Capacity in bytes (16 MiB for [`Machine::SECTION_4_1`]).
    pub fn bytes(&self) -> usize {
        self.arrays * self.rows * self.columns as usize / 8
    }

    /// Coefficient slots per row (2: "two polynomial primitives are performed simultaneously").
    pub fn slots_per_row(&self) -> usize {
        (self.columns / self.slot_bits) as usize
    }

    /// Slot-rows of one array (rows x slots per row: 16).
    pub fn slot_rows(&self) -> usize {
        self.rows * self.slots_per_row()
    }

    /// How many times a row operation repeats for a polynomial of N coefficients: ceil(N / arrays)
    /// coefficients per array.
    pub fn repeats(&self, n: usize) -> Result<usize, CapacityError> {
        if n < 2 || !n.is_power_of_two() {
            return Err(CapacityError::BadDegree(n));
        }
        Ok(n.div_ceil(self.arrays))
    }

    /// Packs residues of the given widths into slots, first fit in the order given. Returns, per
    /// slot, the indices of the residues in it and how many slots that slot takes (2 for a word
    /// wider than a slot, which takes a whole row).
    pub fn pack(&self, widths: &[u32]) -> Result<Vec<Slot>, CapacityError> {
        let mut slots: Vec<Slot> = Vec::new();
        for (i, &w) in widths.iter().enumerate() {
            if w > self.columns {
                return Err(CapacityError::WordTooWide { width: w, columns: self.columns });
            }
            if w > self.slot_bits {
                slots.push(Slot { members: vec![i], used_bits: w, width_in_slots: self.slots_per_row() });
                continue;
            }
            match slots.iter_mut().find(|s| s.width_in_slots == 1 && s.used_bits + w <= self.slot_bits) {
                Some(s) => {
                    s.members.push(i);
                    s.used_bits += w;
                }
                None => slots.push(Slot { members: vec![i], used_bits: w, width_in_slots: 1 }),
            }
        }
        Ok(slots)
    }

    /// Slot-rows per array that `polys` polynomials over residues of these widths take.
    pub fn slots_for(&self, n: usize, widths: &[u32], polys: usize) -> Result<usize, CapacityError> {
        let per_poly: usize = self.pack(widths)?.iter().map(|s| s.width_in_slots).sum();
        Ok(per_poly * polys * self.repeats(n)?)
    }

    /// Errors unless `needed` slot-rows per array fit the bank.
    pub fn check(&self, what: &str, n: usize, needed: usize) -> Result<(), CapacityError> {
        if needed > self.slot_rows() {
            return Err(CapacityError::BankFull {
                what: what.to_string(),
                n,
                needed,
                available: self.slot_rows(),
                bytes: self.bytes(),
                arrays: self.arrays,
                rows: self.rows,
                slots_per_row: self.slots_per_row(),
            });
        }
        Ok(())
    }
}

/// Residues sharing one slot (or a whole row, for a word wider than a slot).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Slot {
    /// Indices (into the widths given to [`Machine::pack`]) of the residues here.
    pub members: Vec<usize>,
    /// Bits used.
    pub used_bits: u32,
    /// Slots taken: 1, or a whole row for a word wider than a slot.
    pub width_in_slots: usize,
}
