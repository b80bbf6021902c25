//! key_switch: the CPU backend's fused switch against the composition of element-wise
//! operations (`key_switch::composed`, on the same backend), residue for residue, on random
//! operands at every level and grouping of digits; and the refusal of operands that do not line
//! up. Both switches divide by P with the CPU backend's ModDown steps (`cpu/division.rs`; the
//! fused ones on their sums as they make them), so this test does not tell their bugs apart:
//! `mod_down_many.rs` checks ModDown against big integers, and pimhe-schemes checks that a
//! switch decrypts to `c s'` against big integers.

mod common;

use std::sync::Arc;

use common::backends;
use pimhe_exec::{key_switch, Backend, CpuBackend, KeySwitchPlan};
use pimhe_math::Modulus;
use pimhe_ring::{PolyBatch, Representation, RingBasis};
use pimhe_testkit::inputs::{basis_of, distinct_primes, random_batch, rng};
use proptest::prelude::*;
use rand_chacha::ChaCha20Rng;

const DATA: usize = 6;
const SPECIAL: usize = 3;

/// A key basis of 6 data primes then 3 special primes, mixed sizes.
fn key_basis(n: usize) -> Arc<RingBasis> {
    basis_of(n, &distinct_primes(n, &[30, 29, 30, 28, 30, 27, 30, 30, 29]))
}

/// The key basis's limbs `start..end` as a basis.
fn limbs(basis: &RingBasis, start: usize, end: usize) -> Arc<RingBasis> {
    basis.select(&(start..end).collect::<Vec<_>>()).unwrap()
}

/// Digits of the given sizes over the first primes of `basis`.
fn digits(basis: &RingBasis, sizes: &[usize]) -> Vec<Arc<RingBasis>> {
    let mut start = 0;
    sizes
        .iter()
        .map(|&size| {
            start += size;
            limbs(basis, start - size, start)
        })
        .collect()
}

/// `pairs` random key pairs over `basis`, `polys` polynomials each.
fn random_keys(
    rng: &mut ChaCha20Rng,
    basis: &Arc<RingBasis>,
    pairs: usize,
    polys: usize,
) -> Vec<(PolyBatch, PolyBatch)> {
    (0..pairs)
        .map(|_| {
            (random_batch(rng, basis, polys, Representation::Ntt), random_batch(rng, basis, polys, Representation::Ntt))
        })
        .collect()
}

#[test]
fn fused_switch_equals_the_composed_switch() {
    let mut rng = rng(91);
    let n = 64;
    let key_basis = key_basis(n);
    let special = limbs(&key_basis, DATA, DATA + SPECIAL);
    // (primes of the input, digit sizes): the top level in several groupings, and lower levels
    // where the last digit is cut short or left out.
    let cases: [(usize, &[usize]); 6] =
        [(6, &[2, 2, 2]), (6, &[1; 6]), (6, &[6]), (5, &[2, 2, 1]), (4, &[3, 1]), (1, &[1])];
    for (level_primes, sizes) in cases {
        let level = key_basis.prefix(level_primes).unwrap();
        let extended = level.concat(&special).unwrap();
        let digits = digits(&key_basis, sizes);
        // One key polynomial for every input (broadcast) or one per input; one pair more than
        // the digits, as a key made at the top level has at a lower one.
        for (polys, key_polys) in [(1, 1), (3, 1), (3, 3)] {
            let c = random_batch(&mut rng, &level, polys, Representation::Ntt);
            let keys = random_keys(&mut rng, &key_basis, digits.len() + 1, key_polys);
            for plain_modulus in [None, Some(Modulus::new(65537).unwrap())] {
                let plan = KeySwitchPlan { digits: &digits, extended: &extended, plain_modulus };
                for backend in backends() {
                    let fused = backend.key_switch(&c, &keys, &plan).unwrap();
                    let composed = key_switch::composed(&backend, &c, &keys, &plan).unwrap();
                    let case =
                        format!("primes {level_primes} digits {sizes:?} polys {polys}/{key_polys} t {plain_modulus:?}");
                    assert_eq!(fused.0.basis().primes(), level.primes(), "{case}");
                    assert_eq!(fused.0.representation(), Representation::Ntt, "{case}");
                    assert!(fused.0 == composed.0 && fused.1 == composed.1, "{case}");
                }
            }
        }
    }
}

/// The hoisting halves: the CPU backend's fused ModUp and inner product (each digit mapped by
/// X -> X^k) equal the compositions of element-wise operations that are every other backend's
/// default, residue for residue; with no automorphism the two halves give the whole switch.
/// Galois elements: none, the identity 1, rotations and conjugation, one above 2N (taken
/// modulo 2N); 1 to 3 digits; one key polynomial for all inputs (broadcast) or one per input.
#[test]
fn fused_hoisting_halves_equal_the_composed_ones() {
    let mut rng = rng(93);
    let n = 64;
    let key_basis = key_basis(n);
    let special = limbs(&key_basis, DATA, DATA + SPECIAL);
    let cases: [(usize, &[usize]); 5] = [(6, &[2, 2, 2]), (6, &[6]), (5, &[3, 2]), (4, &[1, 1, 2]), (1, &[1])];
    let elements = [None, Some(1), Some(5), Some(25), Some(2 * n - 1), Some(2 * n + 3)];
    for (level_primes, sizes) in cases {
        let level = key_basis.prefix(level_primes).unwrap();
        let extended = level.concat(&special).unwrap();
        let digits = digits(&key_basis, sizes);
        for (polys, key_polys) in [(1, 1), (3, 1), (3, 3)] {
            let c = random_batch(&mut rng, &level, polys, Representation::Ntt);
            let keys = random_keys(&mut rng, &key_basis, digits.len() + 1, key_polys);
            for plain_modulus in [None, Some(Modulus::new(65537).unwrap())] {
                let plan = KeySwitchPlan { digits: &digits, extended: &extended, plain_modulus };
                for backend in backends() {
                    let case =
                        format!("primes {level_primes} digits {sizes:?} polys {polys}/{key_polys} t {plain_modulus:?}");
                    let decomposed = backend.mod_up(&c, &plan).unwrap();
                    assert_eq!(decomposed, key_switch::composed_mod_up(&backend, &c, &plan).unwrap(), "{case}");
                    assert_eq!(decomposed.len(), sizes.len(), "{case}");
                    for digit in &decomposed {
                        assert_eq!(digit.basis().primes(), extended.primes(), "{case}");
                        assert_eq!((digit.count(), digit.representation()), (polys, Representation::Ntt), "{case}");
                    }
                    for element in elements {
                        let fused = backend.key_switch_decomposed(&decomposed, &keys, element, &plan).unwrap();
                        let composed =
                            key_switch::composed_decomposed(&backend, &decomposed, &keys, element, &plan).unwrap();
                        assert_eq!(fused.0.basis().primes(), level.primes(), "{case} k {element:?}");
                        assert!(fused.0 == composed.0 && fused.1 == composed.1, "{case} k {element:?}");
                        // Lazy: the same sums over the extended basis, whose ModDown is the switch.
                        let lazy = backend.key_switch_decomposed_lazy(&decomposed, &keys, element, &plan).unwrap();
                        let composed_lazy =
                            key_switch::composed_decomposed_lazy(&backend, &decomposed, &keys, element, &plan).unwrap();
                        assert_eq!(lazy.0.basis().primes(), extended.primes(), "{case} k {element:?}");
                        assert!(lazy.0 == composed_lazy.0 && lazy.1 == composed_lazy.1, "{case} k {element:?}");
                        let special_count = extended.len() - level.len();
                        let down = |x| backend.mod_down(x, special_count, plain_modulus).unwrap();
                        assert!(down(&lazy.0) == fused.0 && down(&lazy.1) == fused.1, "{case} k {element:?}: lazy");
                        if element.is_none() {
                            let whole = backend.key_switch(&c, &keys, &plan).unwrap();
                            assert!(fused.0 == whole.0 && fused.1 == whole.1, "{case}: halves against the whole");
                        }
                    }
                }
            }
        }
    }
}

/// The whole switch and both hoisting halves of `backend` against their compositions, residue
/// for residue (the whole switch also against the halves with no automorphism), for the
/// Galois element `element` of the decomposed switch.
fn assert_fused_switches_are_composed(
    backend: &CpuBackend,
    c: &PolyBatch,
    keys: &[(PolyBatch, PolyBatch)],
    element: usize,
    plan: &KeySwitchPlan,
) -> Result<(), TestCaseError> {
    let whole = backend.key_switch(c, keys, plan).unwrap();
    let composed = key_switch::composed(backend, c, keys, plan).unwrap();
    prop_assert!(whole.0 == composed.0 && whole.1 == composed.1, "key_switch");
    let digits = backend.mod_up(c, plan).unwrap();
    prop_assert!(digits == key_switch::composed_mod_up(backend, c, plan).unwrap(), "mod_up");
    for element in [None, Some(element)] {
        let fused = backend.key_switch_decomposed(&digits, keys, element, plan).unwrap();
        let composed = key_switch::composed_decomposed(backend, &digits, keys, element, plan).unwrap();
        prop_assert!(fused.0 == composed.0 && fused.1 == composed.1, "key_switch_decomposed, k {:?}", element);
        let lazy = backend.key_switch_decomposed_lazy(&digits, keys, element, plan).unwrap();
        let composed = key_switch::composed_decomposed_lazy(backend, &digits, keys, element, plan).unwrap();
        prop_assert!(lazy.0 == composed.0 && lazy.1 == composed.1, "key_switch_decomposed_lazy, k {:?}", element);
        if element.is_none() {
            prop_assert!(fused.0 == whole.0 && fused.1 == whole.1, "halves against the whole");
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// The fused switches (the whole one, and the decomposed one of hoisting, which divide by P
    /// as they make their sums) equal the compositions on random shapes: ring degree, data and
    /// special primes of mixed sizes, any grouping of the data primes into digits, batch sizes
    /// with a broadcast key or one per input, BGV's plain modulus or none, any Galois element,
    /// and 1 to 3 threads.
    #[test]
    fn fused_switches_equal_the_composed_ones_on_random_shapes(
        log_n in 4usize..=10,
        data in 1usize..=7,
        special in 1usize..=3,
        cuts in prop::collection::vec(any::<bool>(), 7),
        polys in 1usize..=4,
        broadcast_key in any::<bool>(),
        bgv in any::<bool>(),
        element in (0usize..2048).prop_map(|k| 2 * k + 1),
        threads in 1usize..=3,
        seed in any::<u64>(),
    ) {
        let n = 1 << log_n;
        let bits: Vec<u32> = (0..data + special).map(|i| [30, 29, 28, 27][i % 4]).collect();
        let key_basis = basis_of(n, &distinct_primes(n, &bits));
        let level = key_basis.prefix(data).unwrap();
        let extended = level.concat(&limbs(&key_basis, data, data + special)).unwrap();
        // A digit ends after data prime i where cuts[i] says so, and after the last.
        let mut sizes = vec![0];
        for (i, &cut) in cuts.iter().enumerate().take(data) {
            *sizes.last_mut().unwrap() += 1;
            if cut && i + 1 < data {
                sizes.push(0);
            }
        }
        let digits = digits(&key_basis, &sizes);
        let mut rng = rng(seed);
        let c = random_batch(&mut rng, &level, polys, Representation::Ntt);
        let keys = random_keys(&mut rng, &extended, digits.len(), if broadcast_key { 1 } else { polys });
        let plain_modulus = bgv.then(|| Modulus::new(65537).unwrap());
        let plan = KeySwitchPlan { digits: &digits, extended: &extended, plain_modulus };
        assert_fused_switches_are_composed(&CpuBackend::new(Some(threads)).unwrap(), &c, &keys, element, &plan)?;
    }
}

/// The same at the BFV preset's shape at N = 8192 (5 data primes, 2 special, 3 digits), batch 1
/// and 2, where the composed ModDown's passes run on the pool or on the calling thread by the
/// sizes of a real switch.
#[test]
fn fused_switches_equal_the_composed_ones_at_a_preset_size() {
    let n = 8192;
    let key_basis = basis_of(n, &distinct_primes(n, &[30; 7]));
    let level = key_basis.prefix(5).unwrap();
    let extended = level.concat(&limbs(&key_basis, 5, 7)).unwrap();
    let digits = digits(&key_basis, &[2, 2, 1]);
    let mut rng = rng(95);
    for polys in [1, 2] {
        let c = random_batch(&mut rng, &level, polys, Representation::Ntt);
        let keys = random_keys(&mut rng, &extended, digits.len(), 1);
        for plain_modulus in [None, Some(Modulus::new(65537).unwrap())] {
            let plan = KeySwitchPlan { digits: &digits, extended: &extended, plain_modulus };
            for backend in backends() {
                assert_fused_switches_are_composed(&backend, &c, &keys, 5, &plan).unwrap();
            }
        }
    }
}

/// A valid switch at N = 32 for the refusal tests: the key basis, the input's level, the
/// extended basis, two digits of three primes, an NTT-form input of two polynomials and keys.
struct Operands {
    key_basis: Arc<RingBasis>,
    level: Arc<RingBasis>,
    extended: Arc<RingBasis>,
    good_digits: Vec<Arc<RingBasis>>,
    c: PolyBatch,
    keys: Vec<(PolyBatch, PolyBatch)>,
}

fn operands(seed: u64) -> Operands {
    let mut rng = rng(seed);
    let key_basis = key_basis(32);
    let level = key_basis.prefix(DATA).unwrap();
    let extended = level.concat(&limbs(&key_basis, DATA, DATA + SPECIAL)).unwrap();
    let good_digits = digits(&key_basis, &[3, 3]);
    let c = random_batch(&mut rng, &level, 2, Representation::Ntt);
    let keys = random_keys(&mut rng, &key_basis, 2, 1);
    Operands { key_basis, level, extended, good_digits, c, keys }
}

/// Decomposed digits, their keys, the Galois element and what the refusal must say.
type BadDecomposition<'a> = (&'a [PolyBatch], &'a [(PolyBatch, PolyBatch)], Option<usize>, &'a str);

/// Decomposed digits that do not match the plan, and an even Galois element, are refused the
/// same way by the fused and the composed implementations.
#[test]
fn misaligned_decompositions_are_refused_by_every_implementation() {
    let Operands { level, extended, good_digits, c, keys, .. } = operands(94);
    let plan = KeySwitchPlan { digits: &good_digits, extended: &extended, plain_modulus: None };
    let backend = CpuBackend::new(Some(2)).unwrap();
    let decomposed = backend.mod_up(&c, &plan).unwrap();
    let mut coefficient_digit = decomposed.clone();
    coefficient_digit[1].to_coefficient().unwrap();
    let short_digit = vec![decomposed[0].clone(), decomposed[1].restrict(&level).unwrap()];
    let other_count = vec![decomposed[0].clone(), decomposed[1].poly(0).unwrap()];
    let cases: [BadDecomposition; 6] = [
        (&decomposed[..1], &keys, None, "the plan has 2 digits; got 1"),
        (&[], &keys, None, "got 0 decomposed digits"),
        (&coefficient_digit, &keys, Some(5), "decomposed digit 1"),
        (&short_digit, &keys, None, "decomposed digit 1"),
        (&other_count, &keys, None, "decomposed digit 1"),
        (&decomposed, &keys, Some(4), "k must be odd"),
    ];
    for (digits, keys, element, expected) in cases {
        for backend in backends() {
            let fused =
                backend.key_switch_decomposed(digits, keys, element, &plan).expect_err("fused accepted bad digits");
            let composed = key_switch::composed_decomposed(&backend, digits, keys, element, &plan)
                .expect_err("composed accepted bad digits");
            assert_eq!(fused, composed);
            assert!(fused.to_string().contains(expected), "{fused}");
        }
    }
    for backend in backends() {
        let fused = backend.key_switch_decomposed(&decomposed, &keys[..1], None, &plan).unwrap_err();
        assert!(fused.to_string().contains("2 digits need as many key pairs; got 1"), "{fused}");
        let mut coefficients = c.clone();
        coefficients.to_coefficient().unwrap();
        let fused = backend.mod_up(&coefficients, &plan).unwrap_err();
        assert_eq!(fused, key_switch::composed_mod_up(&backend, &coefficients, &plan).unwrap_err());
        assert!(fused.to_string().contains("NTT"), "{fused}");
    }
}

/// An input, its keys, the plan and what the refusal must say.
type BadCase<'a> = (&'a PolyBatch, &'a [(PolyBatch, PolyBatch)], KeySwitchPlan<'a>, &'a str);

#[test]
fn misaligned_operands_are_refused_by_every_implementation() {
    let mut rng = rng(93);
    let Operands { key_basis, level, extended, good_digits, c, keys } = operands(92);
    let mut c_coefficients = c.clone();
    c_coefficients.to_coefficient().unwrap();
    let out_of_order = vec![limbs(&key_basis, 3, 6), limbs(&key_basis, 0, 3)];
    let short = digits(&key_basis, &[3, 2]);
    // No special prime, and the input's primes in another order.
    let not_extended = level.clone();
    let reordered = key_basis.select(&[1, 0, 2, 3, 4, 5, 6, 7, 8]).unwrap();
    // Keys without the last special prime.
    let short_keys = random_keys(&mut rng, &key_basis.prefix(DATA + SPECIAL - 1).unwrap(), 2, 1);
    let plan = |digits, extended| KeySwitchPlan { digits, extended, plain_modulus: None };
    let cases: [BadCase; 7] = [
        (&c_coefficients, &keys, plan(&good_digits, &extended), "NTT"),
        (&c, &keys, plan(&out_of_order, &extended), "consecutive non-empty groups"),
        (&c, &keys, plan(&short, &extended), "cover 5 of the input's 6 primes"),
        (&c, &keys[..1], plan(&good_digits, &extended), "2 digits need as many key pairs; got 1"),
        (&c, &keys, plan(&good_digits, &not_extended), "followed by at least one special prime"),
        (&c, &keys, plan(&good_digits, &reordered), "followed by at least one special prime"),
        (&c, &short_keys, plan(&good_digits, &extended), "must contain the first's primes"),
    ];
    for (c, keys, plan, expected) in cases {
        for backend in backends() {
            let fused = backend.key_switch(c, keys, &plan).expect_err("fused switch accepted bad operands");
            let composed = key_switch::composed(&backend, c, keys, &plan).expect_err("composed switch accepted them");
            assert_eq!(fused, composed);
            assert!(fused.to_string().contains(expected), "{fused}");
        }
    }
}
