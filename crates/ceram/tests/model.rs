//! The model's properties: width scaling, capacity, transfers, the programs' shapes.

use pimhe_ceram::isa::{Latencies, MicroOp};
use pimhe_ceram::machine::{CapacityError, Machine};
use pimhe_ceram::model::{actual_bytes_per_s, CeramModel, DDR4_SPECIFIED_BYTES_PER_S};
use pimhe_ceram::params::{Modulus, Params};
use pimhe_ceram::program::{program, HomOp, Step};

#[test]
fn the_section_4_1_bank() {
    let m = Machine::SECTION_4_1;
    assert_eq!(m.bytes(), 16 << 20);
    assert_eq!(m.slots_per_row(), 2);
    assert_eq!(m.slot_rows(), 16);
    assert_eq!(m.repeats(1 << 14).unwrap(), 1);
    assert_eq!(m.repeats(1 << 15).unwrap(), 2);
    // Q (146 + 146 + 147) and m_sk, m~ share a slot; B (3 x 147) takes another.
    let widths = [146, 146, 147, 36, 32, 147, 147, 147];
    let slots = m.pack(&widths).unwrap();
    assert_eq!(slots.len(), 2);
    assert_eq!(slots[0].members, vec![0, 1, 2, 3, 4]);
    assert_eq!(slots[1].members, vec![5, 6, 7]);
}

#[test]
fn latency_grows_with_width_and_multiplication_quadratically() {
    let l = Latencies::CERAM_V1;
    for op in [MicroOp::Add, MicroOp::Sub, MicroOp::Mult] {
        let mut last = 0.0;
        for w in [8, 16, 32, 64, 128, 146, 220, 438] {
            let t = l.op_ns(op, w);
            assert!(t > last, "{op:?} at {w}");
            last = t;
        }
    }
    for op in [MicroOp::Move, MicroOp::Write, MicroOp::ShiftLeft, MicroOp::And] {
        assert_eq!(l.op_ns(op, 8), l.op_ns(op, 438));
    }
    // Shift-and-add: doubling the width more than triples a multiplication (-> 4x).
    assert!(l.op_ns(MicroOp::Mult, 292) > 3.0 * l.op_ns(MicroOp::Mult, 146));
    // A whole NTT at a wider modulus costs more.
    let m = CeramModel::default();
    let ntt = |w| m.step(&Step::Ntt { moduli: vec![Modulus::generic(w)].into(), polys: 1 }, 1 << 14).unwrap().0;
    assert!(ntt(221) > ntt(147) && ntt(147) > ntt(60));
}

#[test]
fn capacity_errors() {
    let m = Machine::SECTION_4_1;
    assert!(matches!(m.pack(&[1025]), Err(CapacityError::WordTooWide { width: 1025, columns: 1024 })));
    // A word wider than a slot takes a whole row.
    assert_eq!(m.pack(&[600]).unwrap()[0].width_in_slots, 2);
    assert!(matches!(m.repeats(1000), Err(CapacityError::BadDegree(1000))));
    // Case A multiplication fits at N = 2^14 but not at N = 2^16 (4 coefficients per array).
    let model = CeramModel::default();
    assert!(model.price(&program(HomOp::Multiply, &Params::case_a(true))).is_ok());
    let mut big = Params::case_a(true);
    big.n = 1 << 16;
    let err = model.price(&program(HomOp::Multiply, &big)).unwrap_err();
    assert!(matches!(err, CapacityError::BankFull { needed: 44, available: 16, .. }), "{err}");
    assert!(err.to_string().contains("16777216-byte bank"), "{err}");
}

#[test]
fn cases_a_b_c_and_the_textbook_design_fit_at_n_2_14() {
    let model = CeramModel::default();
    for p in [Params::case_a(true), Params::case_b(false), Params::case_c(true), Params::textbook(1 << 14, 438)] {
        for op in HomOp::ALL {
            let c = model.price(&program(op, &p)).unwrap();
            assert!(c.peak_slots <= c.bank_slots);
            assert!(c.compute_s > 0.0);
            assert_eq!(c.label, "ceram@1 (modeled)");
        }
    }
}

#[test]
fn ddr4_transfers_of_section_4_1() {
    // 25,600 MB/s "gives 70 us per ciphertext": 2 x 2^14 x 438 bits.
    let p = Params::case_a(true);
    assert_eq!(p.ciphertext_bytes(), 1_794_048.0);
    let spec = p.ciphertext_bytes() / DDR4_SPECIFIED_BYTES_PER_S;
    assert!((spec - 70.08e-6).abs() < 0.01e-6);
    // The actual rate is the paper's 21.2 us per such ciphertext, as a rate.
    assert!((p.ciphertext_bytes() / actual_bytes_per_s() - 21.2e-6).abs() < 1e-12);
    // Addition: two ciphertexts in, one out.
    let c = CeramModel::default().price(&program(HomOp::Add, &p)).unwrap();
    assert!((c.transfer_actual_s - 3.0 * 21.2e-6).abs() < 1e-12);
    assert!((c.transfer_specified_s - 3.0 * spec).abs() < 1e-12);
    assert!(c.total_specified_s() > c.total_actual_s() && c.total_actual_s() > c.compute_s);
}

#[test]
fn flags_change_the_programs_not_tables() {
    let has = |p: &Params, op, f: fn(&Step) -> bool| program(op, p).steps.iter().any(f);
    let is_ntt = |s: &Step| matches!(s, Step::Ntt { .. });
    let is_school = |s: &Step| matches!(s, Step::SchoolbookMul { .. });
    assert!(has(&Params::case_a(true), HomOp::Multiply, is_ntt));
    assert!(!has(&Params::case_a(true), HomOp::Multiply, is_school));
    assert!(has(&Params::case_a(false), HomOp::Multiply, is_school));
    assert!(!has(&Params::case_a(false), HomOp::Multiply, is_ntt));
    // Case A reduces base Q generically; case B keeps the special kinds.
    assert!(Params::case_a(true).q_effective().iter().all(|m| m.kind == pimhe_ceram::params::ModulusKind::Generic));
    assert_eq!(Params::case_b(true).q_effective(), pimhe_ceram::params::balanced());
    // Micro-op counts: case B's NTTs in Q use no Barrett multiplications beyond MODMULT's.
    let m = CeramModel::default();
    let a = m.price(&program(HomOp::Add, &Params::case_a(true))).unwrap();
    let b = m.price(&program(HomOp::Add, &Params::case_b(true))).unwrap();
    assert!(a.count(MicroOp::Mult) > 0);
    assert_eq!(b.count(MicroOp::Mult), 0);
    // NTT-based multiplication is far cheaper than schoolbook; the special moduli help (B < A).
    let mul = |p: &Params| m.price(&program(HomOp::Multiply, p)).unwrap().compute_s;
    assert!(mul(&Params::case_a(false)) > 100.0 * mul(&Params::case_a(true)));
    assert!(mul(&Params::case_b(true)) < mul(&Params::case_a(true)));
    // The cost serializes.
    let json = serde_json::to_string(&a).unwrap();
    assert!(json.contains("\"ceram@1 (modeled)\""));
}
