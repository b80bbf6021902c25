//! The `ceram` programs' step counts against the special-moduli BFV evaluator's own operation
//! counts on a run. The two come from separate generators (crates/ceram/src/program.rs writes
//! the paper's algorithms as steps; crates/schemes/src/bfv/special runs BEHZ on wide words), so
//! this is what ties the modeled CE-RAM times to the scheme pimhe executes: each counted
//! polynomial-level operation (products over Q and over Bsk, base extensions, fast floors,
//! Shenoy-Kumaresan conversions, relinearization digits, component-wise additions, Algorithm 1's
//! scaling) must be the same number in the program of an operation and in a run of it.
//!
//! One difference is known and asserted as such: the evaluator's tensor uses Karatsuba's three
//! products per basis, the programs the four of Algorithm 2's line 4 as the paper writes it.

use pimhe_bench::reproduce::ceram::model_params;
use pimhe_ceram::params::{Modulus, Params, Residues};
use pimhe_ceram::program::{program, HomOp, Step};
use pimhe_math::Sampler;
use pimhe_schemes::bfv::special::{
    add, decrypt, encrypt, multiply, relinearize, sub, OpCounts, SecretKey, SpecialBfvContext, SpecialBfvParameters,
    SpecialCase,
};
use pimhe_schemes::encoder::BatchEncoder;

fn cat(a: &[Modulus], b: &[Modulus]) -> Vec<Modulus> {
    a.iter().chain(b).copied().collect()
}

/// A program's steps in the evaluator's terms: each step that does one of the counted
/// operations, recognised by its kind and its bases (as `program::full_rns` builds them); a
/// product or base conversion over any other bases fails the test, so a changed program cannot
/// slip past uncounted.
fn program_counts(op: HomOp, p: &Params) -> OpCounts {
    let qv = p.q_effective();
    let q = Residues::from(qv.clone());
    let b = Residues::from(p.b.clone());
    let bsk = Residues::grouped(vec![vec![p.msk], p.b.clone()]);
    let q_bsk = Residues::grouped(vec![cat(&qv, &[p.msk]), p.b.clone()]);
    let to_ext = Residues::grouped(vec![vec![p.msk, p.m_tilde], p.b.clone()]);
    let t_gamma = Residues::from(vec![p.t, p.gamma]);
    let mut counts = OpCounts::default();
    for step in program(op, p).steps {
        match step {
            Step::PointwiseMul { moduli, polys: k } | Step::SchoolbookMul { moduli, products: k } => {
                let k = k as u64;
                if moduli == q {
                    counts.products_q += k;
                } else if moduli == q_bsk {
                    counts.tensor_products_q += k;
                    counts.tensor_products_bsk += k;
                } else {
                    panic!("{op:?}: a product over {moduli:?}, neither Q nor Q u Bsk");
                }
            }
            Step::FastBConv { from, to, polys, .. } => {
                let k = polys as u64;
                match (from == q, from == b) {
                    (true, _) if to == to_ext => counts.extended += k,
                    (true, _) if to == bsk => counts.floored += k,
                    (true, _) if to == t_gamma => counts.scaled_to_t += k,
                    (_, true) => counts.converted_to_q += k,
                    _ => panic!("{op:?}: a conversion {from:?} -> {to:?} the evaluator has no counter for"),
                }
            }
            Step::RnsDecompose { moduli, polys, .. } => counts.digits += (moduli.len() * polys) as u64,
            Step::PolyAdd { polys, .. } | Step::PolySub { polys, .. } if matches!(op, HomOp::Add | HomOp::Sub) => {
                counts.componentwise += polys as u64
            }
            _ => {}
        }
    }
    counts
}

/// Runs `op` once with the special BFV of `case` (its base and reductions) at a small insecure
/// degree and returns the evaluator's counts of that run; a product is checked slot by slot.
fn evaluator_counts(op: HomOp, case: SpecialCase) -> OpCounts {
    let (n, t) = (64, 65537u64);
    let params = SpecialBfvParameters::new(n, t as u32, case.base().unwrap(), case.optimized()).unwrap();
    let ctx = SpecialBfvContext::new(params.allow_insecure()).unwrap();
    let mut sampler = Sampler::from_seed_u64(11);
    let secret = SecretKey::generate(&ctx, &mut sampler);
    let (public, relin) = (secret.public_key(&mut sampler), secret.relin_key(&mut sampler));
    let encoder = BatchEncoder::new(&ctx);
    let (xs, ys): (Vec<u64>, Vec<u64>) =
        ((0..n as u64).map(|i| i * 7 + 1).collect(), (0..n as u64).map(|i| 3 * i + 2).collect());
    let (px, py) = (encoder.encode(&xs).unwrap(), encoder.encode(&ys).unwrap());
    let x = encrypt(&public, &px, &mut sampler).unwrap();
    let y = encrypt(&public, &py, &mut sampler).unwrap();
    ctx.reset_op_counts();
    match op {
        HomOp::Encrypt => drop(encrypt(&public, &px, &mut sampler).unwrap()),
        HomOp::Decrypt => drop(decrypt(&secret, &x).unwrap()),
        HomOp::Add => drop(add(&x, &y).unwrap()),
        HomOp::Sub => drop(sub(&x, &y).unwrap()),
        HomOp::Multiply => {
            let product = relinearize(&multiply(&x, &y).unwrap(), &relin).unwrap();
            let counts = ctx.op_counts();
            let slots = encoder.decode(&decrypt(&secret, &product).unwrap()).unwrap();
            let expected: Vec<u64> = xs.iter().zip(&ys).map(|(a, b)| a * b % t).collect();
            assert_eq!(slots, expected, "case {}: the counted product is wrong", case.letter());
            return counts;
        }
    }
    ctx.op_counts()
}

#[test]
fn ceram_programs_count_what_the_special_bfv_evaluator_runs() {
    for case in [SpecialCase::A, SpecialCase::B] {
        for op in HomOp::ALL {
            let with_ntt = program_counts(op, &model_params(case, true));
            // Schoolbook or NTT products: the same operations counted either way.
            assert_eq!(with_ntt, program_counts(op, &model_params(case, false)), "{op:?} case {}", case.letter());
            let mut ran = evaluator_counts(op, case);
            assert_ne!(ran, OpCounts::default(), "{op:?}: the evaluator counted nothing");
            let mut modeled = with_ntt;
            if op == HomOp::Multiply {
                // Karatsuba (3) on the evaluator, Algorithm 2's line 4 (4) in the program, per basis.
                let tensor = |c: &OpCounts| (c.tensor_products_q, c.tensor_products_bsk);
                assert_eq!((tensor(&ran), tensor(&modeled)), ((3, 3), (4, 4)), "case {}", case.letter());
                (ran.tensor_products_q, ran.tensor_products_bsk) = (0, 0);
                (modeled.tensor_products_q, modeled.tensor_products_bsk) = (0, 0);
            }
            assert_eq!(ran, modeled, "{op:?} case {}: evaluator (left) vs ceram program (right)", case.letter());
        }
    }
}

/// The hand count of a multiplication with relinearization over Q = {2^146 - 1, 2^146, 2^146 + 1}
/// (k = 3): BEHZ extends the four input polynomials, floors and converts back the three of the
/// tensor, and relinearization makes one digit per modulus and two products per digit.
#[test]
fn a_multiplication_runs_the_hand_counted_operations() {
    let ran = evaluator_counts(HomOp::Multiply, SpecialCase::B);
    let expected = OpCounts {
        products_q: 6,
        tensor_products_q: 3,
        tensor_products_bsk: 3,
        extended: 4,
        floored: 3,
        converted_to_q: 3,
        digits: 3,
        componentwise: 0,
        scaled_to_t: 0,
    };
    assert_eq!(ran, expected);
}
