//! mul_limb_constants: each limb times its own constant, checked against big integers: the
//! output is x * C modulo Q, where C is the one integer whose residues are the constants.

mod common;

use common::backends;
use pimhe_exec::{Backend, ExecError};
use pimhe_ring::Representation;
use pimhe_testkit::bigint::{crt, product};
use pimhe_testkit::inputs::{basis_of, distinct_primes, random_batch, residues_at, rng};
use rand_chacha::rand_core::Rng;

#[test]
fn each_limb_is_multiplied_by_its_own_constant_in_either_representation() {
    let mut rng = rng(80);
    let primes = distinct_primes(16, &[30, 29, 27]);
    let basis = basis_of(16, &primes);
    let big_q = product(&primes);
    for representation in [Representation::Coefficient, Representation::Ntt] {
        let x = random_batch(&mut rng, &basis, 3, representation);
        // Constants above the primes (and above 2^32) must be reduced first.
        let constants: Vec<u64> = primes.iter().map(|_| rng.next_u64()).collect();
        let residues: Vec<u32> = constants.iter().zip(&primes).map(|(&c, &p)| (c % p as u64) as u32).collect();
        let c = crt(&residues, &primes);
        let results: Vec<_> = backends().iter().map(|be| be.mul_limb_constants(&x, &constants).unwrap()).collect();
        assert_eq!(results[0], results[1], "1 and 3 threads differ");
        let y = &results[0];
        assert_eq!((y.basis(), y.count(), y.representation()), (&basis, 3, representation));
        for k in 0..3 {
            for i in 0..16 {
                let expected = (crt(&residues_at(&x, k, i), &primes) * &c) % &big_q;
                assert_eq!(crt(&residues_at(y, k, i), &primes), expected, "{representation:?} k={k} i={i}");
            }
        }
    }
}

#[test]
fn a_constant_per_limb_is_required() {
    let mut rng = rng(81);
    let basis = basis_of(16, &distinct_primes(16, &[30, 29]));
    let x = random_batch(&mut rng, &basis, 1, Representation::Coefficient);
    for be in backends() {
        for constants in [&[1u64][..], &[1, 2, 3]] {
            let err = be.mul_limb_constants(&x, constants).err().unwrap();
            assert!(matches!(err, ExecError::Shape { operation: "mul_limb_constants", .. }), "{err:?}");
            assert!(err.to_string().contains("exactly one per prime"), "{err}");
        }
    }
}
