//! `Modulus` arithmetic against plain u64/u128/i128 `%` arithmetic.

use pimhe_math::modular::{csub, MODULUS_LIMIT};
use pimhe_math::{bit_reverse, inverse_mod, MathError, Modulus};
use pimhe_testkit::oracle::{bit_reverse as naive_bit_reverse, gcd, pow_mod};
use proptest::prelude::*;

/// Largest primes below 2^30, 30-bit NTT primes (1 mod 2^17) and a few awkward composites.
const SPECIAL_MODULI: &[u32] = &[
    2,
    3,
    4,
    5,
    7681,
    12289,
    65536,
    65537,
    (1 << 29) + 1,
    (1 << 30) - 1,
    1_073_741_783,
    1_073_741_789,
    1_073_479_681,
    1_071_513_601,
    1_070_727_169,
    805_306_368,
];

fn modulus_strategy() -> impl Strategy<Value = u32> {
    prop_oneof![2u32..(1 << 30), 2u32..64, ((1u32 << 30) - 4096)..(1 << 30), prop::sample::select(SPECIAL_MODULI),]
}

/// A residue in [0, q): an edge value (0, 1, q - 1, q/2, q/2 + 1) or a uniform one.
fn residue(q: u32, selector: u8, raw: u32) -> u32 {
    match selector % 8 {
        0 => 0,
        1 => 1 % q,
        2 => q - 1,
        3 => q / 2,
        4 => (q / 2 + 1) % q,
        _ => raw % q,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn add_sub_neg(q in modulus_strategy(), sa: u8, sb: u8, ra: u32, rb: u32) {
        let m = Modulus::new(q as u64).unwrap();
        let (a, b) = (residue(q, sa, ra), residue(q, sb, rb));
        let q64 = q as u64;
        prop_assert_eq!(m.add(a, b) as u64, (a as u64 + b as u64) % q64);
        prop_assert_eq!(m.sub(a, b) as u64, (a as u64 + q64 - b as u64) % q64);
        prop_assert_eq!(m.neg(a) as u64, (q64 - a as u64) % q64);
        prop_assert_eq!(m.reduce_once(a), a);
        prop_assert_eq!(m.reduce_once(a + q), a);
    }

    #[test]
    fn mul_and_mul_add(q in modulus_strategy(), sa: u8, sb: u8, ra: u32, rb: u32, c: u32, wide_a: u32, wide_b: u32) {
        let m = Modulus::new(q as u64).unwrap();
        let (a, b) = (residue(q, sa, ra), residue(q, sb, rb));
        let q64 = q as u64;
        prop_assert_eq!(m.mul(a, b) as u64, a as u64 * b as u64 % q64);
        prop_assert_eq!(m.mul_add(a, b, c) as u64, (a as u64 * b as u64 + c as u64) % q64);
        // Documented for any operands below 2^32.
        prop_assert_eq!(m.mul(wide_a, wide_b) as u64, wide_a as u64 * wide_b as u64 % q64);
        prop_assert_eq!(
            m.mul_add(wide_a, wide_b, c) as u128,
            (wide_a as u128 * wide_b as u128 + c as u128) % q as u128
        );
    }

    #[test]
    fn reduce_u64_any(q in modulus_strategy(), x: u64) {
        let m = Modulus::new(q as u64).unwrap();
        prop_assert_eq!(m.reduce_u64(x) as u64, x % q as u64);
        for edge in [0, 1, q as u64 - 1, q as u64, u64::MAX, u64::MAX - 1, 1 << 63, x >> 3] {
            prop_assert_eq!(m.reduce_u64(edge) as u64, edge % q as u64, "x={}", edge);
        }
    }

    #[test]
    fn reduce_i64_any(q in modulus_strategy(), x: i64) {
        let m = Modulus::new(q as u64).unwrap();
        let q128 = q as i128;
        for value in [x, i64::MIN, i64::MIN + 1, i64::MAX, -1, 0, 1, -(q as i64), -(q as i64) + 1, q as i64] {
            prop_assert_eq!(m.reduce_i64(value) as i128, (value as i128).rem_euclid(q128), "x={}", value);
        }
    }

    #[test]
    fn shoup_multiplication(q in modulus_strategy(), sw: u8, rw: u32, sa: u8, ra: u32, wide: u32) {
        let m = Modulus::new(q as u64).unwrap();
        let w = residue(q, sw, rw);
        let w_shoup = m.shoup(w);
        prop_assert_eq!(w_shoup as u64, ((w as u64) << 32) / q as u64);
        let a_reduced = residue(q, sa, ra);
        for a in [a_reduced, wide, u32::MAX, 0, q - 1, 4 * q - 1] {
            let expected = a as u64 * w as u64 % q as u64;
            let lazy = m.mul_shoup_lazy(a, w, w_shoup);
            prop_assert!(lazy < 2 * q, "lazy result {} not below 2q for a={} w={} q={}", lazy, a, w, q);
            prop_assert_eq!(lazy as u64 % q as u64, expected);
            prop_assert_eq!(m.mul_shoup(a, w, w_shoup) as u64, expected);
        }
    }

    #[test]
    fn pow_matches_square_and_multiply(q in modulus_strategy(), a: u32, e: u64, small_e in 0u64..70) {
        let m = Modulus::new(q as u64).unwrap();
        prop_assert_eq!(m.pow(a, e) as u64, pow_mod(a as u64, e, q as u64));
        // Small exponents against repeated multiplication.
        let mut naive = 1u64 % q as u64;
        for _ in 0..small_e {
            naive = naive * (a as u64 % q as u64) % q as u64;
        }
        prop_assert_eq!(m.pow(a, small_e) as u64, naive);
    }

    #[test]
    fn inverse(q in modulus_strategy(), sa: u8, ra: u32) {
        let m = Modulus::new(q as u64).unwrap();
        let a = residue(q, sa, ra);
        match m.inv(a) {
            Ok(inv) => {
                prop_assert!(inv < q);
                prop_assert_eq!(a as u64 * inv as u64 % q as u64, 1 % q as u64);
                prop_assert_eq!(gcd(a as u64, q as u64), 1);
            }
            Err(e) => {
                prop_assert!(gcd(a as u64, q as u64) != 1, "{} should be invertible mod {}", a, q);
                prop_assert_eq!(e, MathError::NotInvertible { value: a as u64, modulus: q as u64 });
            }
        }
    }

    #[test]
    fn inverse_mod_u64(m in 2u64..u64::MAX / 4, a: u64) {
        match inverse_mod(a, m) {
            Ok(inv) => {
                prop_assert!(inv < m);
                prop_assert_eq!(a as u128 % m as u128 * inv as u128 % m as u128, 1);
            }
            Err(_) => prop_assert!(gcd(a % m, m) != 1),
        }
    }

    #[test]
    fn center(q in modulus_strategy(), sa: u8, ra: u32) {
        let m = Modulus::new(q as u64).unwrap();
        let a = residue(q, sa, ra);
        let c = m.center(a);
        let q = q as i64;
        // c in (-q/2, q/2] and c = a mod q.
        prop_assert!(2 * c > -q && 2 * c <= q, "center({}) = {} outside (-q/2, q/2] for q={}", a, c, q);
        prop_assert_eq!(c.rem_euclid(q), a as i64);
    }

    #[test]
    fn conditional_subtraction(m in 1u32..=(1 << 31), x_raw: u32) {
        let x = (x_raw as u64 % (2 * m as u64)) as u32;
        let expected = if x >= m { x - m } else { x };
        prop_assert_eq!(csub(x, m), expected);
    }

    #[test]
    fn bit_reverse_matches_naive(bits in 0u32..=20, x_raw: usize) {
        let x = if bits == 0 { 0 } else { x_raw & ((1usize << bits) - 1) };
        prop_assert_eq!(bit_reverse(x, bits), naive_bit_reverse(x, bits));
    }
}

#[test]
fn explicit_edges_for_every_special_modulus() {
    for &q in SPECIAL_MODULI {
        let m = Modulus::new(q as u64).unwrap();
        let q64 = q as u64;
        let edges = [0, 1 % q, q - 1, q / 2];
        for &a in &edges {
            for &b in &edges {
                assert_eq!(m.add(a, b) as u64, (a as u64 + b as u64) % q64, "q={q} {a}+{b}");
                assert_eq!(m.sub(a, b) as u64, (a as u64 + q64 - b as u64) % q64, "q={q} {a}-{b}");
                assert_eq!(m.mul(a, b) as u64, a as u64 * b as u64 % q64, "q={q} {a}*{b}");
                assert_eq!(m.mul_add(a, b, q - 1) as u64, (a as u64 * b as u64 + q64 - 1) % q64, "q={q} {a}*{b}+q-1");
                let lazy = m.mul_shoup_lazy(a, b, m.shoup(b));
                assert!(lazy < 2 * q);
                assert_eq!(lazy as u64 % q64, a as u64 * b as u64 % q64);
            }
            assert_eq!(m.neg(a) as u64, (q64 - a as u64) % q64);
        }
        assert_eq!(m.reduce_u64(u64::MAX) as u64, u64::MAX % q64);
        assert_eq!(m.reduce_i64(i64::MIN) as i128, (i64::MIN as i128).rem_euclid(q as i128));
        assert_eq!(m.reduce_i64(-1) as u64, q64 - 1);
        assert_eq!(m.pow(0, 0), 1 % q, "0^0 = 1 by convention");
        assert_eq!(m.pow(q - 1, 2) as u64, 1 % q64);
        assert_eq!(m.center(0), 0);
        assert_eq!(m.value(), q);
        assert_eq!(m.bits(), 32 - q.leading_zeros());
        assert_eq!(m.barrett_constant() as u128, (1u128 << 64) / q as u128);
    }
}

#[test]
fn modulus_range() {
    for bad in [0u64, 1, 1 << 30, (1 << 30) + 1, 1 << 31, u32::MAX as u64, 1 << 40, u64::MAX] {
        assert_eq!(Modulus::new(bad), Err(MathError::ModulusOutOfRange(bad)), "q={bad}");
    }
    for good in [2u64, 3, (1 << 30) - 1, 1_073_741_789] {
        assert_eq!(Modulus::new(good).unwrap().value() as u64, good);
    }
    assert_eq!(MODULUS_LIMIT, 1 << 30);
}
