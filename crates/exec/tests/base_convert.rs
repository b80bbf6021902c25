//! base_convert: FastBConv of a whole batch to another basis, checked against big-integer CRT:
//! each output coefficient is x + u Q modulo the target prime, for one integer 0 <= u < L per
//! coefficient (the same u on every target prime). base_convert_ntt: the same, in NTT form, with
//! the limbs of shared primes taken unchanged from the NTT-form input.

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

#[test]
fn base_convert_ntt_is_the_conversion_in_ntt_form_keeping_shared_limbs() {
    let mut rng = rng(72);
    for (n, count) in [(16usize, 3usize), (4096, 1)] {
        let primes = distinct_primes(n, &[30, 29, 27, 30, 26, 28]);
        let from = basis_of(n, &primes[1..3]);
        // The source's primes inside a larger basis (key switching's ModUp), and a disjoint one.
        for target in [basis_of(n, &[primes[0], primes[1], primes[2], primes[4]]), basis_of(n, &primes[3..])] {
            let x = random_batch(&mut rng, &from, count, Representation::Coefficient);
            let mut x_ntt = x.clone();
            backends()[0].ntt(&mut x_ntt).unwrap();
            let results: Vec<PolyBatch> =
                backends().iter().map(|be| be.base_convert_ntt(&x, &x_ntt, &target).unwrap()).collect();
            assert_eq!(results[0], results[1], "1 and 3 threads differ");
            let y = &results[0];
            assert_eq!((y.basis(), y.count(), y.representation()), (&target, count, Representation::Ntt));
            for (limb, prime) in target.primes().iter().enumerate() {
                if let Some(source) = from.primes().iter().position(|p| p == prime) {
                    assert_eq!(y.limb(limb), x_ntt.limb(source), "shared prime {prime}: not the NTT-form limb");
                }
            }
            let mut coefficients = y.clone();
            backends()[0].intt(&mut coefficients).unwrap();
            check(&x, &coefficients, &format!("ntt n={n} count={count} -> {target}"));
        }
    }
}

#[test]
fn base_convert_ntt_refuses_inputs_that_do_not_match() {
    let mut rng = rng(73);
    let primes = distinct_primes(32, &[30, 29, 28]);
    let from = basis_of(16, &primes[..2]);
    let target = basis_of(16, &primes);
    let x = random_batch(&mut rng, &from, 2, Representation::Coefficient);
    let x_ntt = random_batch(&mut rng, &from, 2, Representation::Ntt);
    let other_primes = random_batch(&mut rng, &basis_of(16, &primes[1..]), 2, Representation::Ntt);
    let other_count = random_batch(&mut rng, &from, 1, Representation::Ntt);
    for be in backends() {
        // Both inputs in the same form, either way round.
        for (a, a_ntt) in [(&x_ntt, &x_ntt), (&x, &x)] {
            let err = be.base_convert_ntt(a, a_ntt, &target).err().unwrap();
            assert!(matches!(err, ExecError::Ring(_) | ExecError::Shape { .. }), "{err:?}");
        }
        for a_ntt in [&other_primes, &other_count] {
            let err = be.base_convert_ntt(&x, a_ntt, &target).err().unwrap();
            assert!(matches!(err, ExecError::Shape { operation: "base_convert_ntt", .. }), "{err:?}");
        }
        let err = be.base_convert_ntt(&x, &x_ntt, &basis_of(32, &primes)).err().unwrap();
        assert!(err.to_string().contains("degree"), "{err}");
    }
}
