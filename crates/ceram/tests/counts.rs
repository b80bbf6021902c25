//! Micro-op counts of small cases (N = 16) against hand counts, and pricing = counts x
//! latencies computed independently here.

use std::collections::BTreeMap;

use pimhe_ceram::isa::{Issue, Latencies, MicroOp, Reduction};
use pimhe_ceram::lowering::{counts, lower};
use pimhe_ceram::machine::Machine;
use pimhe_ceram::model::CeramModel;
use pimhe_ceram::params::{Modulus, ModulusKind};
use pimhe_ceram::program::Step;

use MicroOp::*;

const N: usize = 16;

fn count_map(step: &Step) -> BTreeMap<MicroOp, u64> {
    counts(&lower(step, &Machine::SECTION_4_1, N).unwrap())
}

fn expect(pairs: &[(MicroOp, u64)]) -> BTreeMap<MicroOp, u64> {
    pairs.iter().copied().filter(|&(_, k)| k > 0).collect()
}

// Independent latency formulas (ns) for the ceram@1 constants: read 1, write 1, 20 ps/bit carry.
fn add_ns(w: u32) -> f64 {
    2.0 + 0.02 * w as f64
}
fn mult_ns(w: u32) -> f64 {
    w as f64 * (add_ns(2 * w) + 2.0)
}
fn barrett_ns(w: u32) -> f64 {
    // SHR, MULT, SHR, MULT, SUB, SUB, SELECT
    2.0 + mult_ns(w) + 2.0 + mult_ns(w) + 2.0 * add_ns(w) + 1.0
}
fn mersenne_ns(w: u32) -> f64 {
    // SHR, AND, ADD, SUB, SELECT
    2.0 + 2.0 + 2.0 * add_ns(w) + 1.0
}

#[test]
fn one_ntt_n16_generic_modulus() {
    // Bit reversal: N = 16 MOVEs. log2(16) = 4 stages, each: WRITE of the twiddles, MODMULT,
    // SUB + Barrett (SHR, MULT, SHR, MULT, SUB, SUB, SELECT), ADD + Barrett.
    let step = Step::Ntt { moduli: vec![Modulus::generic(30)].into(), polys: 1 };
    let c = count_map(&step);
    assert_eq!(
        c,
        expect(&[
            (Move, 16),
            (Write, 4),
            (ModMult, 4),
            (Sub, 4 * (1 + 2 + 2)),
            (Add, 4),
            (ShiftRight, 4 * 4),
            (Mult, 4 * 4),
            (Select, 4 * 2),
        ])
    );
    // Pricing: sum of counts x latencies.
    let w = 30;
    let stage = 1.0 + (mult_ns(w) + barrett_ns(w)) + (add_ns(w) + barrett_ns(w)) + (add_ns(w) + barrett_ns(w));
    let expected_ns = 16.0 * 2.0 + 4.0 * stage;
    let (s, _) = CeramModel::default().step(&step, N).unwrap();
    assert!((s * 1e9 - expected_ns).abs() < 1e-6 * expected_ns, "{} vs {expected_ns}", s * 1e9);
}

#[test]
fn one_ntt_n16_mersenne_modulus_uses_algorithm_3() {
    let step = Step::Ntt { moduli: vec![Modulus::mersenne(30)].into(), polys: 1 };
    // Per stage: WRITE, MODMULT, SUB + (SHR, AND, ADD, SUB, SELECT), ADD + the same.
    assert_eq!(
        count_map(&step),
        expect(&[
            (Move, 16),
            (Write, 4),
            (ModMult, 4),
            (Sub, 4 * 3),
            (Add, 4 * 3),
            (ShiftRight, 4 * 2),
            (And, 4 * 2),
            (Select, 4 * 2)
        ])
    );
    let w = 30;
    let stage = 1.0 + (mult_ns(w) + mersenne_ns(w)) + 2.0 * (add_ns(w) + mersenne_ns(w));
    let (s, _) = CeramModel::default().step(&step, N).unwrap();
    assert!((s * 1e9 - (32.0 + 4.0 * stage)).abs() < 1e-6);
}

#[test]
fn intt_adds_the_scaling_by_n_inverse() {
    let f = count_map(&Step::Ntt { moduli: vec![Modulus::generic(30)].into(), polys: 1 });
    let i = count_map(&Step::Intt { moduli: vec![Modulus::generic(30)].into(), polys: 1 });
    assert_eq!(i[&Write], f[&Write] + 1);
    assert_eq!(i[&ModMult], f[&ModMult] + 1);
    assert_eq!(i[&Move], f[&Move]);
}

#[test]
fn two_polynomials_share_a_row_three_do_not() {
    let one = count_map(&Step::Ntt { moduli: vec![Modulus::generic(30)].into(), polys: 1 });
    let two = count_map(&Step::Ntt { moduli: vec![Modulus::generic(30)].into(), polys: 2 });
    let three = count_map(&Step::Ntt { moduli: vec![Modulus::generic(30)].into(), polys: 3 });
    assert_eq!(one, two);
    assert_eq!(three[&ModMult], 2 * one[&ModMult]);
}

#[test]
fn fastbconv_three_moduli_to_two_generic() {
    // Phase 1 (one slot holds the 3 source residues): WRITE |(q/q_i)^-1|, MODMULT.
    // Phase 2, per source residue i = 0, 1, 2 (one slot holds the 2 targets): MOVE it into the
    // target positions, WRITE |q/q_i|_{b_j}, MODMULT; i > 0 also ADD + Barrett.
    let step = Step::FastBConv {
        from: vec![Modulus::generic(60); 3].into(),
        to: vec![Modulus::generic(61); 2].into(),
        polys: 1,
        special: false,
    };
    assert_eq!(
        count_map(&step),
        expect(&[
            (Move, 3),
            (Write, 1 + 3),
            (ModMult, 1 + 3),
            (Add, 2),
            (ShiftRight, 2 * 2),
            (Mult, 2 * 2),
            (Sub, 2 * 2),
            (Select, 2)
        ])
    );
}

#[test]
fn fastbconv_special_balanced_set_replaces_the_first_modmult_with_bit_operations() {
    // Theorem 1 (2^g - 1): SHR, AND, SHL, ADD; Lemma 2 (2^g): SUB, AND; Theorem 2 (2^g + 1):
    // ADD, SHR, AND, SHL, ADD. Phase 2 is unchanged (targets are generic).
    let q = vec![Modulus::mersenne(8), Modulus::power_of_two(8), Modulus::fermat(8)];
    let to = vec![Modulus::generic(10); 2];
    let special =
        count_map(&Step::FastBConv { from: q.clone().into(), to: to.clone().into(), polys: 1, special: true });
    assert_eq!(
        special,
        expect(&[
            (Move, 3),
            (Write, 3),
            (ModMult, 3),
            (Add, 3 + 2),
            (Sub, 1 + 4),
            (ShiftRight, 2 + 4),
            (ShiftLeft, 2),
            (And, 3),
            (Mult, 4),
            (Select, 2)
        ])
    );
    // The same moduli with the optimizations off: phase 1 is WRITE + MODMULT.
    let plain = count_map(&Step::FastBConv { from: q.into(), to: to.into(), polys: 1, special: false });
    assert_eq!(plain[&ModMult], 4);
    assert_eq!(plain.get(&ShiftLeft), None);
}

#[test]
fn fastbconv_special_mersenne_fermat_set_uses_modular_shifts() {
    // Algorithm 5 (2^g - 1): SHR, AND, SUB, SUB, ADD, SELECT; Algorithm 6 (2^g + 1): SHR, AND, OR.
    let q = vec![Modulus::fermat(16), Modulus::fermat(8), Modulus::mersenne(8)];
    let c = count_map(&Step::RnsDecompose { moduli: q.into(), polys: 1, special: true });
    assert_eq!(c, expect(&[(ShiftRight, 2), (And, 2), (Sub, 2), (Add, 1), (Select, 1), (Or, 1)]));
}

#[test]
fn special_reduction_is_cheaper_than_barrett_at_the_same_width() {
    let l = Latencies::CERAM_V1;
    for w in [16, 64, 146, 220] {
        let generic = count_map(&Step::Reduce { moduli: vec![Modulus::generic(w)].into(), polys: 1 });
        let mersenne = count_map(&Step::Reduce { moduli: vec![Modulus::mersenne(w)].into(), polys: 1 });
        let pow2 = count_map(&Step::Reduce { moduli: vec![Modulus::power_of_two(w)].into(), polys: 1 });
        assert_eq!(generic, expect(&[(ShiftRight, 2), (Mult, 2), (Sub, 2), (Select, 1)]));
        assert_eq!(mersenne, expect(&[(ShiftRight, 1), (And, 1), (Add, 1), (Sub, 1), (Select, 1)]));
        assert_eq!(pow2, expect(&[(And, 1)]));
        let g = l.reduction_ns(Reduction { kind: ModulusKind::Generic, width: w });
        let m = l.reduction_ns(Reduction { kind: ModulusKind::Mersenne, width: w });
        let f = l.reduction_ns(Reduction { kind: ModulusKind::FermatLike, width: w });
        let p = l.reduction_ns(Reduction { kind: ModulusKind::PowerOfTwo, width: w });
        assert!((g - barrett_ns(w)).abs() < 1e-9 && (m - mersenne_ns(w)).abs() < 1e-9);
        assert!(p < m && m < f && f < g, "w = {w}: {p} {m} {f} {g}");
    }
}

#[test]
fn mixed_kinds_in_a_row_reduce_one_kind_after_another() {
    // One MODMULT at the widest width, ending with each kind's reduction.
    let moduli = vec![Modulus::mersenne(100), Modulus::power_of_two(100), Modulus::generic(120)];
    let lowered = lower(&Step::PointwiseMul { moduli: moduli.into(), polys: 1 }, &Machine::SECTION_4_1, N).unwrap();
    assert_eq!(lowered.len(), 1);
    let (issue, times) = &lowered[0];
    assert_eq!(*times, 1);
    assert_eq!(issue.width, 120);
    assert_eq!(issue.reductions.len(), 3);
    let l = Latencies::CERAM_V1;
    let expected = mult_ns(120) + mersenne_ns(100) + 2.0 + barrett_ns(120);
    assert!((l.issue_ns(issue) - expected).abs() < 1e-6);
    let alone = Issue::new(Mult, 120);
    assert!(l.issue_ns(issue) > l.issue_ns(&alone));
}

#[test]
fn schoolbook_product_n16() {
    // N = 16 iterations of WRITE, MODMULT, ADD + Barrett, MOVE (rotation), SUB + SELECT.
    let c = count_map(&Step::SchoolbookMul { moduli: vec![Modulus::generic(30)].into(), products: 1 });
    assert_eq!(
        c,
        expect(&[
            (Write, 16),
            (ModMult, 16),
            (Add, 16),
            (ShiftRight, 32),
            (Mult, 32),
            (Sub, 16 * 3),
            (Select, 16 * 2),
            (Move, 16)
        ])
    );
}

#[test]
fn residues_in_different_slots_take_a_pass_each() {
    use pimhe_ceram::params::Residues;
    // m_sk beside base Q, base B in its own slot (section 4.1): a constant product over
    // Bsk = B U {m_sk} is a pass in each slot, although 3 x 147 + 36 bits would fit one.
    let b = vec![Modulus::generic(147); 3];
    let msk = Modulus::generic(36);
    let split = Residues::grouped(vec![vec![msk], b.clone()]);
    let together: Residues = [b, vec![msk]].concat().into();
    let c_split = count_map(&Step::MulByConstant { moduli: split, polys: 1 });
    let c_together = count_map(&Step::MulByConstant { moduli: together, polys: 1 });
    assert_eq!(c_split[&ModMult], 2);
    assert_eq!(c_together[&ModMult], 1);
    // A group wider than a slot spills into a second one (case C's B: 3 x 221 bits).
    let wide = count_map(&Step::PointwiseMul { moduli: vec![Modulus::generic(221); 3].into(), polys: 2 });
    assert_eq!(wide[&ModMult], 2);
}
