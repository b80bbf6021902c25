//! The column-partitioning data layout of section VI-B: die groups, row groups, column groups
//! and PolyGroups.
//!
//! - Limb `l` of every polynomial lives on die group `l mod S` (S die groups), so all banks of
//!   a die work on one prime per instruction; a die group handles `ceil(L / S)` limbs one after
//!   another.
//! - Within a die group a limb's N words are spread evenly over all its banks: `C = ceil(N x 4
//!   bytes / 32 bytes / banks)` chunks per bank per limb (A100: N = 2^16 over 512 banks gives
//!   C = 16, the paper's example).
//! - A PolyGroup of P polynomials splits each row into P column groups of `w` chunks; the C
//!   chunks of limb `l` of polynomial `p` go into column group `p`, wrapped over `ceil(C / w)`
//!   adjacent rows: a row group. The `m`-th limb a die group holds occupies row group `m`. So
//!   one PolyGroup's polynomials share rows (one ACT serves all of them) and one polynomial's
//!   limbs are in different row groups.
//! - [`DataLayout::Contiguous`] (the paper's "w/o CP") gives every polynomial its own rows:
//!   P PolyGroups of one polynomial each, `w` = a whole row.

use serde::Serialize;

use super::ModelError;

/// Bytes of one column access: the 256-bit chunk of the DRAM global I/O.
pub const CHUNK_BYTES: usize = 32;

/// How polynomials are placed in banks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum DataLayout {
    /// Anaheim's column partitioning with PolyGroups (section VI-B).
    ColumnPartitioned,
    /// Every polynomial in its own rows ("w/o CP", section VII-D).
    Contiguous,
}

/// What the layout needs to know about the memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Geometry {
    /// Die groups S.
    pub die_groups: usize,
    /// Banks in one die group.
    pub banks_per_group: usize,
    /// Chunks per row of a bank.
    pub chunks_per_row: usize,
}

impl Geometry {
    /// Chunks per bank per limb, C (at least one: a tiny limb still occupies every bank).
    pub fn chunks_per_bank_per_limb(&self, degree: usize) -> usize {
        (degree * crate::isa::WORD_BYTES).div_ceil(CHUNK_BYTES * self.banks_per_group).max(1)
    }
}

/// Where one limb of one polynomial of a PolyGroup lives, in every bank of its die group (all
/// banks hold the same rows and columns of their share).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Slot {
    /// Polynomial index within the PolyGroup (= its column group).
    pub poly: usize,
    /// Limb index.
    pub limb: usize,
    /// Die group `limb mod S`.
    pub die_group: usize,
    /// Row group: `limb / S`.
    pub row_group: usize,
    /// Column group (= `poly`).
    pub column_group: usize,
    /// First row (relative to the bank).
    pub first_row: usize,
    /// Rows of the row group.
    pub rows: usize,
    /// First chunk column.
    pub first_column: usize,
    /// Column-group width w in chunks.
    pub columns: usize,
    /// Chunks of this limb per bank, C.
    pub chunks: usize,
}

impl Slot {
    /// (row, column) of the slot's `j`-th chunk in each bank: column group wrapped over rows.
    pub fn cell(&self, j: usize) -> (usize, usize) {
        (self.first_row + j / self.columns, self.first_column + j % self.columns)
    }
}

/// Column-group width for a PolyGroup of `polys` polynomials accessed `g` chunks at a time:
/// the largest multiple of `g` that fits `polys` groups in a row (so a chunk block never
/// straddles rows), or the plain `chunks_per_row / polys` when even `g` does not fit; never more
/// than `c`, the chunks a limb has per bank. `Contiguous` uses a whole row.
pub fn column_group_width(layout: DataLayout, chunks_per_row: usize, polys: usize, g: usize, c: usize) -> usize {
    let fit = match layout {
        DataLayout::Contiguous => chunks_per_row,
        DataLayout::ColumnPartitioned => chunks_per_row / polys.max(1),
    };
    let w = if g > 0 && fit >= g { fit / g * g } else { fit };
    w.clamp(1, c.max(1))
}

/// Places a PolyGroup of `polys` polynomials of `limbs` limbs from row `base_row` of every
/// bank, column groups `w` chunks wide, C = [`Geometry::chunks_per_bank_per_limb`] chunks per
/// limb. Returns one [`Slot`] per (poly, limb), and the rows the PolyGroup takes.
pub fn place_polygroup(
    geometry: &Geometry,
    degree: usize,
    polys: usize,
    limbs: usize,
    width: usize,
    base_row: usize,
) -> Result<(Vec<Slot>, usize), ModelError> {
    if polys == 0 || limbs == 0 || degree == 0 || width == 0 {
        return Err(ModelError::InvalidShape(format!(
            "a PolyGroup needs polys, limbs, degree and column-group width >= 1 (got {polys}, {limbs}, {degree}, {width})"
        )));
    }
    if polys * width > geometry.chunks_per_row {
        return Err(ModelError::InvalidShape(format!(
            "{polys} column groups of {width} chunks do not fit a row of {} chunks",
            geometry.chunks_per_row
        )));
    }
    let c = geometry.chunks_per_bank_per_limb(degree);
    let rows_per_group = c.div_ceil(width);
    let row_groups = limbs.div_ceil(geometry.die_groups);
    let mut slots = Vec::with_capacity(polys * limbs);
    for limb in 0..limbs {
        let row_group = limb / geometry.die_groups;
        for poly in 0..polys {
            slots.push(Slot {
                poly,
                limb,
                die_group: limb % geometry.die_groups,
                row_group,
                column_group: poly,
                first_row: base_row + row_group * rows_per_group,
                rows: rows_per_group,
                first_column: poly * width,
                columns: width,
                chunks: c,
            });
        }
    }
    Ok((slots, row_groups * rows_per_group))
}

/// The operands of one schedule phase split into PolyGroups that each fit a row: `polys`
/// polynomials become groups of at most `chunks_per_row` polynomials (column partitioned) or
/// groups of one (contiguous).
pub fn split_into_polygroups(layout: DataLayout, polys: usize, chunks_per_row: usize) -> Vec<usize> {
    if polys == 0 {
        return Vec::new();
    }
    let per = match layout {
        DataLayout::Contiguous => 1,
        DataLayout::ColumnPartitioned => chunks_per_row.max(1),
    };
    let n = polys.div_ceil(per);
    (0..n).map(|i| if i + 1 < n { per } else { polys - per * (n - 1) }).collect()
}

/// Rows a block of chunk positions `[start, start + len)` touches in a column group `width`
/// chunks wide (the positions wrap over rows), with the positions each row holds.
pub fn rows_of_block(start: usize, len: usize, width: usize) -> Vec<usize> {
    let mut out: Vec<usize> = Vec::new();
    let mut last_row = usize::MAX;
    for j in start..start + len {
        let row = j / width;
        if row != last_row {
            out.push(0);
            last_row = row;
        }
        *out.last_mut().expect("pushed") += 1;
    }
    out
}
