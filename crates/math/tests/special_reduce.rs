//! Reductions modulo 2^g - 1, 2^g and 2^g + 1 (Algorithms 3 and 4, branch-free), modular
//! add/sub/mul, and the generic Barrett path, against num-bigint on random and edge inputs.

mod special_common;

use num_bigint::BigUint;
use pimhe_math::special::{BarrettModulus, SpecialForm, SpecialModulus, WideArith};
use proptest::prelude::*;
use special_common::*;

#[test]
fn reduce_product_matches_num_bigint_on_edges_and_random_inputs() {
    let mut r = rng(1);
    for form in FORMS {
        for g in WIDTHS {
            let q = special(form, g);
            let m = big_modulus(form, g);
            assert_eq!(to_big(q.value()), m, "{q}");
            let mut inputs = edge_products(&m, g);
            let m2 = &m * &m;
            inputs.extend((0..200).map(|_| random_below(&mut r, &m2)));
            for x in inputs {
                let got = to_big(&q.reduce_product(&product_from_big(&x)));
                assert_eq!(got, &x % &m, "{q}: x = {x}");
                assert_eq!(to_big(&q.barrett().reduce_product(&product_from_big(&x))), &x % &m, "Barrett {q}: {x}");
            }
        }
    }
}

#[test]
fn small_widths_reduce_every_input_below_m_squared() {
    for form in FORMS {
        for g in 2..=7 {
            let q = special(form, g);
            let m = big_modulus(form, g);
            let m2: u64 = (&m * &m).try_into().unwrap();
            for x in 0..m2 {
                let got = to_big(&q.reduce_product(&product_from_big(&BigUint::from(x))));
                assert_eq!(got, BigUint::from(x) % &m, "{q}: x = {x}");
            }
        }
    }
}

/// The one input in Algorithm 4's stated range [0, (2^g + 1)^2) that the printed algorithm
/// gets wrong: x = m^2 - 1 gives hi = 2^g + 2, lo = 0 and m - hi + lo = -1.
#[test]
fn fermat_reduction_covers_the_top_of_the_range_where_algorithm_4_underflows() {
    for g in [3, 8, 146] {
        let m = big_modulus(SpecialForm::FermatLike, g);
        let x = &m * &m - 1u32;
        let (hi, lo) = (&x >> g, &x & (pow2(g) - 1u32));
        assert!(lo < hi, "Algorithm 4 takes its else branch");
        assert!(&m + &lo < hi, "and (2^g + 1) - hi + lo is negative");
        let q = special(SpecialForm::FermatLike, g);
        assert_eq!(to_big(&q.reduce_product(&product_from_big(&x))), &x % &m);
    }
}

#[test]
fn add_sub_mul_neg_match_num_bigint() {
    let mut r = rng(2);
    for form in FORMS {
        for g in WIDTHS {
            let q = special(form, g);
            let m = big_modulus(form, g);
            let mut residues = edge_residues(&m, g);
            residues.extend((0..12).map(|_| random_below(&mut r, &m)));
            for a in &residues {
                let wa = from_big(a);
                assert_eq!(to_big(&q.neg(&wa)), (&m - a) % &m, "{q}: -{a}");
                assert_eq!(to_big(&q.negate(&wa)), (&m - a) % &m, "{q}: negate {a}");
                for b in &residues {
                    let wb = from_big(b);
                    assert_eq!(to_big(&q.add(&wa, &wb)), (a + b) % &m, "{q}: {a} + {b}");
                    assert_eq!(to_big(&q.sub(&wa, &wb)), (&m + a - b) % &m, "{q}: {a} - {b}");
                    assert_eq!(to_big(&q.mul(&wa, &wb)), (a * b) % &m, "{q}: {a} * {b}");
                    let bar = q.barrett();
                    assert_eq!(bar.mul(&wa, &wb), q.mul(&wa, &wb), "Barrett and special agree for {q}");
                }
            }
        }
    }
}

#[test]
fn reduce_takes_any_256_bit_word() {
    let mut r = rng(3);
    let top = pow2(256);
    for form in FORMS {
        for g in WIDTHS {
            let q = special(form, g);
            let m = big_modulus(form, g);
            for x in (0..50).map(|_| random_below(&mut r, &top)).chain([&top - 1u32]) {
                assert_eq!(to_big(&q.reduce(&from_big(&x))), &x % &m, "{q}: {x}");
            }
        }
    }
}

#[test]
fn barrett_reduces_odd_and_even_moduli_of_every_width() {
    let mut r = rng(4);
    for bits in [2u32, 3, 17, 63, 64, 65, 128, 147, 200, 221, 247, 248] {
        for _ in 0..4 {
            let m = random_below(&mut r, &pow2(bits - 1)) + pow2(bits - 1); // exactly `bits` bits
            let b = BarrettModulus::new(from_big(&m)).unwrap();
            assert_eq!(b.bits(), bits);
            let m2 = &m * &m;
            for x in (0..50).map(|_| random_below(&mut r, &m2)).chain([&m2 - 1u32, &m - 1u32, m.clone()]) {
                assert_eq!(to_big(&b.reduce_product(&product_from_big(&x))), &x % &m, "m = {m}, x = {x}");
            }
            let top = pow2(256);
            for x in (0..20).map(|_| random_below(&mut r, &top)).chain([&top - 1u32]) {
                assert_eq!(to_big(&b.reduce(&from_big(&x))), &x % &m, "m = {m}, x = {x}");
            }
        }
    }
}

#[test]
fn out_of_range_parameters_are_errors_that_say_what_is_allowed() {
    for g in [0, 1, 248, 300] {
        let err = SpecialModulus::fermat_like(g).unwrap_err().to_string();
        assert!(err.contains("2 <= g <= 247"), "{err}");
    }
    let err = BarrettModulus::new(from_big(&pow2(250))).unwrap_err().to_string();
    assert!(err.contains("2 <= m < 2^248"), "{err}");
}

proptest! {
    #[test]
    fn products_modulo_the_paper_moduli(a in proptest::collection::vec(any::<u32>(), 8), b in proptest::collection::vec(any::<u32>(), 8)) {
        for (form, g) in [(SpecialForm::Mersenne, 146), (SpecialForm::PowerOfTwo, 146), (SpecialForm::FermatLike, 146),
                          (SpecialForm::FermatLike, 220), (SpecialForm::FermatLike, 110), (SpecialForm::Mersenne, 110)] {
            let q = special(form, g);
            let m = big_modulus(form, g);
            let (x, y) = (BigUint::from_slice(&a) % &m, BigUint::from_slice(&b) % &m);
            prop_assert_eq!(to_big(&q.mul(&from_big(&x), &from_big(&y))), (&x * &y) % &m);
        }
    }
}
