//! The in-place and fresh-output forms of the CPU backend against the composed ones, on random
//! batches (property tests): `mod_down_last_in_place` is `mod_down_last` and `mod_down_in_place`
//! is `mod_down` bit for bit (in both
//! representations, with and without BGV's plain modulus), and the fresh outputs of `add`,
//! `sub` and `mul` (written without a zero-filled batch first) are the in-place accumulation
//! of a copy.

use pimhe_exec::{Backend, CpuBackend};
use pimhe_math::Modulus;
use pimhe_ring::Representation;
use pimhe_testkit::inputs::{basis, random_batch, rng};
use proptest::prelude::*;

const PRIME_BITS: [u32; 5] = [30, 29, 25, 22, 17];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn dividing_in_place_is_the_fresh_division(
        log_n in 4usize..=10,
        limbs in 2usize..=5,
        count in 1usize..=3,
        ntt in any::<bool>(),
        bgv in any::<bool>(),
        threads in 1usize..=3,
        seed in any::<u64>(),
    ) {
        let backend = CpuBackend::new(Some(threads)).unwrap();
        let representation = if ntt { Representation::Ntt } else { Representation::Coefficient };
        let x = random_batch(&mut rng(seed), &basis(1 << log_n, &PRIME_BITS[..limbs]), count, representation);
        let t = bgv.then(|| Modulus::new(257).unwrap());
        let expected = backend.mod_down_last(&x, t).unwrap();
        let mut in_place = x.clone();
        backend.mod_down_last_in_place(&mut in_place, t).unwrap();
        prop_assert_eq!(in_place, expected);
    }

    #[test]
    fn dividing_by_several_primes_in_place_is_the_fresh_division(
        log_n in 4usize..=10,
        limbs in 2usize..=5,
        dropped in 1usize..=4,
        ntt in any::<bool>(),
        bgv in any::<bool>(),
        seed in any::<u64>(),
    ) {
        let backend = CpuBackend::new(Some(2)).unwrap();
        let representation = if ntt { Representation::Ntt } else { Representation::Coefficient };
        let x = random_batch(&mut rng(seed), &basis(1 << log_n, &PRIME_BITS[..limbs]), 2, representation);
        let dropped = dropped.min(limbs - 1);
        let t = bgv.then(|| Modulus::new(257).unwrap());
        let expected = backend.mod_down(&x, dropped, t).unwrap();
        let mut in_place = x.clone();
        backend.mod_down_in_place(&mut in_place, dropped, t).unwrap();
        prop_assert_eq!(in_place, expected);
    }

    #[test]
    fn fresh_sums_and_products_are_the_accumulated_copies(
        log_n in 4usize..=12,
        limbs in 1usize..=5,
        count in 1usize..=3,
        threads in 1usize..=3,
        seed in any::<u64>(),
    ) {
        let backend = CpuBackend::new(Some(threads)).unwrap();
        let mut rng = rng(seed);
        let basis = basis(1 << log_n, &PRIME_BITS[..limbs]);
        let [x, y] = [(); 2].map(|_| random_batch(&mut rng, &basis, count, Representation::Ntt));
        let mut sum = x.clone();
        backend.add_assign(&mut sum, &y).unwrap();
        prop_assert_eq!(backend.add(&x, &y).unwrap(), sum);
        // x - y + y = x and x * y, as the multiply-accumulate into zero computes it.
        let difference = backend.sub(&x, &y).unwrap();
        let mut back = difference.clone();
        backend.add_assign(&mut back, &y).unwrap();
        prop_assert_eq!(back, x.clone());
        let mut product = backend.sub(&x, &x).unwrap();
        backend.mac(&mut product, &x, &y).unwrap();
        prop_assert_eq!(backend.mul(&x, &y).unwrap(), product);
    }
}

#[test]
fn a_single_prime_is_refused_and_left_as_it_was() {
    let backend = CpuBackend::new(Some(1)).unwrap();
    let x = random_batch(&mut rng(1), &basis(16, &[30]), 1, Representation::Ntt);
    let mut in_place = x.clone();
    let err = backend.mod_down_last_in_place(&mut in_place, None).unwrap_err();
    assert!(err.to_string().contains("single prime"), "{err}");
    assert!(backend.mod_down_in_place(&mut in_place, 1, None).is_err());
    assert_eq!(in_place, x);
}
