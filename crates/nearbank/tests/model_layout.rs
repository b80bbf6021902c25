//! Layout invariants of column partitioning over random shapes (section VI-B).

use std::collections::HashMap;

use pimhe_nearbank::model::layout::{column_group_width, place_polygroup, rows_of_block, DataLayout, Geometry};
use pimhe_nearbank::model::System;
use proptest::prelude::*;

fn geometry(s: &System) -> Geometry {
    Geometry {
        die_groups: s.die_groups(),
        banks_per_group: s.banks_per_group(),
        chunks_per_row: s.timing.chunks_per_row,
    }
}

#[test]
fn paper_example_a100() {
    // N = 2^16 on 512 banks: 16 chunks per bank per limb; 4/8/16 column groups of 8/4/2 chunks
    // make row groups of 2/4/8 rows (Fig. 7).
    let g = geometry(&System::a100_nearbank());
    assert_eq!(g.chunks_per_bank_per_limb(1 << 16), 16);
    for (polys, width, rows) in [(4, 8, 2), (8, 4, 4), (16, 2, 8)] {
        assert_eq!(column_group_width(DataLayout::ColumnPartitioned, 32, polys, 2, 16), width);
        let (slots, used) = place_polygroup(&g, 1 << 16, polys, 10, width, 0).unwrap();
        assert!(slots.iter().all(|s| s.rows == rows));
        assert_eq!(used, 2 * rows); // 10 limbs on 5 die groups: 2 row groups
    }
    // GDDR6X: 2 KB rows of 64 chunks; 2^16 words over 128 banks = 64 chunks, one row per limb.
    let r = geometry(&System::rtx4090_nearbank());
    assert_eq!((r.chunks_per_bank_per_limb(1 << 16), r.chunks_per_row), (64, 64));
    assert_eq!(rows_of_block(6, 5, 4), vec![2, 3]);
}

#[test]
fn a_polygroup_that_does_not_fit_a_row_is_an_error() {
    let g = geometry(&System::a100_nearbank());
    assert!(place_polygroup(&g, 1 << 16, 5, 4, 8, 0).is_err());
    assert!(place_polygroup(&g, 1 << 16, 0, 4, 8, 0).is_err());
}

proptest! {
    #[test]
    fn placement_invariants(
        system in 0usize..3,
        log_n in 10u32..17,
        groups in proptest::collection::vec((1usize..9, 1usize..4), 1..4),
        limbs in 1usize..24,
        g in 1usize..9,
    ) {
        let s = System::all().swap_remove(system);
        let geo = geometry(&s);
        let degree = 1usize << log_n;
        let c = geo.chunks_per_bank_per_limb(degree);
        // Several PolyGroups (operands of one instruction), stacked in rows.
        let mut base = 0;
        let mut owner: HashMap<(usize, usize, usize), (usize, usize, usize)> = HashMap::new();
        for (pg, &(polys, _)) in groups.iter().enumerate() {
            let polys = polys.min(geo.chunks_per_row);
            let width = column_group_width(DataLayout::ColumnPartitioned, geo.chunks_per_row, polys, g, c);
            prop_assert!(polys * width <= geo.chunks_per_row);
            let (slots, used) = place_polygroup(&geo, degree, polys, limbs, width, base).unwrap();
            prop_assert_eq!(slots.len(), polys * limbs);
            for slot in &slots {
                // One prime per die: limb l on die group l mod S, whatever the PolyGroup.
                prop_assert_eq!(slot.die_group, slot.limb % geo.die_groups);
                prop_assert_eq!(slot.column_group, slot.poly);
                for j in 0..slot.chunks {
                    let (row, col) = slot.cell(j);
                    prop_assert!(col < geo.chunks_per_row);
                    prop_assert!(row >= base && row < base + used);
                    // Nothing overlaps, across PolyGroups too.
                    let prev = owner.insert((slot.die_group, row, col), (pg, slot.poly, slot.limb));
                    prop_assert!(prev.is_none(), "cell {:?} taken twice", (slot.die_group, row, col));
                }
            }
            // Polynomials of a PolyGroup share rows (same limb: same rows, other columns).
            for limb in 0..limbs {
                let of_limb: Vec<_> = slots.iter().filter(|s| s.limb == limb).collect();
                for pair in of_limb.windows(2) {
                    prop_assert_eq!(pair[0].first_row, pair[1].first_row);
                    prop_assert_ne!(pair[0].first_column, pair[1].first_column);
                }
            }
            // Limbs of one polynomial on one die group are in different row groups.
            for poly in 0..polys {
                let mut seen = HashMap::new();
                for slot in slots.iter().filter(|s| s.poly == poly) {
                    prop_assert!(seen.insert((slot.die_group, slot.first_row), slot.limb).is_none());
                }
            }
            base += used;
        }
    }

    #[test]
    fn blocks_cover_their_positions(start in 0usize..64, len in 1usize..40, width in 1usize..33) {
        let rows = rows_of_block(start, len, width);
        prop_assert_eq!(rows.iter().sum::<usize>(), len);
        prop_assert!(rows.iter().all(|&r| r >= 1 && r <= width));
        prop_assert_eq!(rows.len(), (start + len - 1) / width - start / width + 1);
    }
}
