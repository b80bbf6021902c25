//! base_convert: FastBConv of a whole batch to another basis, checked against big-integer CRT:
//! each output coefficient is x + u Q modulo the target prime, for one integer 0 <= u < L per
//! coefficient (the same u on every target prime).

mod common;

use common::backends;
use num_bigint::BigInt;
use pimhe_exec::{Backend, ExecError};
use pimhe_ring::{PolyBatch, Representation};
use pimhe_testkit::bigint::{big_mod, crt, product};
use pimhe_testkit::inputs::{basis_of, distinct_primes, random_batch, residues_at, rng};

fn check(x: &PolyBatch, y: &PolyBatch, label: &str) {
    let from = x.basis().primes();
    let to = y.basis().primes();
    let big_q = product(&from);
    for k in 0..x.count() {
        for c in 0..x.degree() {
            let value = crt(&residues_at(x, k, c), &from);
            let got = residues_at(y, k, c);
            let overflow = (0..from.len() as u32).find(|&u| {
                let lifted = &value + BigInt::from(u) * &big_q;
                to.iter().zip(&got).all(|(&p, &r)| big_mod(&lifted, p) == r)
            });
            assert!(overflow.is_some(), "{label}: k={k} c={c} is not x + uQ for any 0 <= u < L: {got:?}");
        }
    }
}

#[test]
fn converted_coefficients_are_x_plus_a_small_multiple_of_q() {
    let mut rng = rng(70);
    // A batch whose column count is not a multiple of the threads' block, and a single large
    // polynomial spread over several blocks.
    for (n, count) in [(16usize, 3usize), (4096, 1)] {
        let primes = distinct_primes(n, &[30, 29, 27, 30, 26, 28]);
        let from = basis_of(n, &primes[..3]);
        // Disjoint target, and a target sharing a prime with the source (that limb is unchanged).
        for target in [basis_of(n, &primes[3..]), basis_of(n, &[primes[4], primes[1]])] {
            let x = random_batch(&mut rng, &from, count, Representation::Coefficient);
            let results: Vec<PolyBatch> = backends().iter().map(|be| be.base_convert(&x, &target).unwrap()).collect();
            assert_eq!(results[0], results[1], "1 and 3 threads differ");
            let y = &results[0];
            assert_eq!((y.basis(), y.count(), y.representation()), (&target, count, Representation::Coefficient));
            check(&x, y, &format!("n={n} count={count} -> {target}"));
            if target.primes().contains(&primes[1]) {
                assert_eq!(y.limb(1), x.limb(1), "a shared prime's limb must come out unchanged");
            }
        }
    }
}

#[test]
fn base_convert_needs_coefficient_form_and_the_same_degree() {
    let mut rng = rng(71);
    let primes = distinct_primes(32, &[30, 29, 28]);
    let ntt = random_batch(&mut rng, &basis_of(16, &primes[..2]), 1, Representation::Ntt);
    let coefficients = random_batch(&mut rng, &basis_of(16, &primes[..2]), 1, Representation::Coefficient);
    for be in backends() {
        let err = be.base_convert(&ntt, &basis_of(16, &primes[2..])).err().unwrap();
        assert!(matches!(err, ExecError::Ring(_) | ExecError::Shape { .. }), "{err:?}");
        let err = be.base_convert(&coefficients, &basis_of(32, &primes[2..])).err().unwrap();
        assert!(matches!(err, ExecError::Shape { operation: "base_convert", .. }), "{err:?}");
        assert!(err.to_string().contains("degree"), "{err}");
    }
}
