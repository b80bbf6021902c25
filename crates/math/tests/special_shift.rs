//! Multiplication by 2^y (the corrected Algorithms 5 and 6), halving (Theorems 1 and 2) and
//! Lemma 2's negation, against num-bigint; and the counterexamples to the printed algorithms.

mod special_common;

use num_bigint::BigUint;
use num_traits::Zero;
use pimhe_math::special::SpecialForm;
use special_common::*;

fn inverse_of_two(m: &BigUint) -> BigUint {
    (m + 1u32) / 2u32
}

#[test]
fn mul_pow2_matches_num_bigint_for_every_exponent_up_to_twice_the_order() {
    let mut r = rng(10);
    for form in FORMS {
        for g in WIDTHS {
            let q = special(form, g);
            let m = big_modulus(form, g);
            let mut xs = edge_residues(&m, g);
            xs.extend((0..4).map(|_| random_below(&mut r, &m)));
            let ys: Vec<u64> = if g <= 8 {
                (0..(4 * g as u64 + 3)).collect()
            } else {
                vec![
                    0,
                    1,
                    2,
                    g as u64 - 1,
                    g as u64,
                    g as u64 + 1,
                    2 * g as u64 - 1,
                    2 * g as u64,
                    2 * g as u64 + 5,
                    1000,
                    r_exp(&mut r),
                ]
            };
            for x in &xs {
                for &y in &ys {
                    let want = (x * BigUint::from(2u32).modpow(&BigUint::from(y), &m)) % &m;
                    assert_eq!(to_big(&q.mul_pow2(&from_big(x), y)), want, "{q}: {x} * 2^{y}");
                }
            }
        }
    }
}

fn r_exp(r: &mut rand_chacha::ChaCha20Rng) -> u64 {
    use rand_chacha::rand_core::Rng;
    r.next_u64() % 100_000
}

#[test]
fn halve_is_theorem_1_and_theorem_2_and_negate_is_lemma_2() {
    let mut r = rng(11);
    for g in WIDTHS {
        for form in [SpecialForm::Mersenne, SpecialForm::FermatLike] {
            let q = special(form, g);
            let m = big_modulus(form, g);
            let half = inverse_of_two(&m);
            let mut xs = edge_residues(&m, g);
            xs.extend((0..50).map(|_| random_below(&mut r, &m)));
            for x in &xs {
                assert_eq!(to_big(&q.halve(&from_big(x))), (x * &half) % &m, "{q}: {x} / 2");
                // Theorem 1's corrected statement: x/2 for even x, 2^(g-1) + (x-1)/2 for odd x.
                if form == SpecialForm::Mersenne && x.bit(0) {
                    assert_eq!(to_big(&q.halve(&from_big(x))), pow2(g - 1) + (x - 1u32) / 2u32);
                }
            }
        }
        let q = special(SpecialForm::PowerOfTwo, g);
        let m = pow2(g);
        for x in edge_residues(&m, g) {
            assert_eq!(to_big(&q.negate(&from_big(&x))), (&m - &x) % &m);
        }
    }
}

/// Algorithm 5 as printed: hi = x >> (g - y); lo = x & ((1 << y) - 1); lo - hi or
/// (2^g - 1) - hi + lo.
fn printed_algorithm_5(x: &BigUint, y: u32, g: u32) -> BigUint {
    let hi = x >> (g - y);
    let lo = x & (pow2(y) - 1u32);
    if lo >= hi {
        lo - hi
    } else {
        pow2(g) - 1u32 - hi + lo
    }
}

/// Algorithm 6 as printed: lo | hi.
fn printed_algorithm_6(x: &BigUint, y: u32, g: u32) -> BigUint {
    (x >> (g - y)) | (x & (pow2(y) - 1u32))
}

#[test]
fn printed_algorithms_5_and_6_are_wrong_and_the_corrected_ones_are_right() {
    let g = 8;
    for (form, printed) in [
        (SpecialForm::Mersenne, printed_algorithm_5 as fn(&BigUint, u32, u32) -> BigUint),
        (SpecialForm::FermatLike, printed_algorithm_6),
    ] {
        let m = big_modulus(form, g);
        let mut wrong = 0;
        let mut total = 0;
        for x in 0..m.clone().try_into().unwrap() {
            let x = BigUint::from(x as u32);
            for y in 1..g {
                let want = (&x << y) % &m;
                total += 1;
                if printed(&x, y, g) % &m != want {
                    wrong += 1;
                }
            }
        }
        assert!(wrong * 2 > total, "printed algorithm for {form:?}: wrong on {wrong} of {total}");
    }
    // The counterexample in shift.rs's doc comment: x = 3, y = 1 modulo 2^8 - 1 gives 6, the
    // printed Algorithm 5 returns lo - hi = 1 - 0 = 1.
    assert_eq!(printed_algorithm_5(&BigUint::from(3u32), 1, 8), BigUint::from(1u32));
    // The corrected forms: a rotation for 2^g - 1, lo - hi (negacyclic) for 2^g + 1.
    for x in 0u32..255 {
        let x = BigUint::from(x);
        for y in 1..8u32 {
            let lo = (&x << y) & (pow2(8) - 1u32);
            let hi = &x >> (8 - y);
            assert_eq!(&lo | &hi, (&x << y) % 255u32);
            let m = BigUint::from(257u32);
            assert_eq!((&lo + &m - &hi) % &m, (&x << y) % &m);
        }
    }
    assert!(!BigUint::from(256u32).is_zero());
}
