//! The CPU backend's automorphisms X -> X^k against the ring's host implementation and the
//! direct definition (coefficient i to i k mod 2N, negated past N), and in NTT form against the
//! transform: NTT(sigma_k(a)) = sigma_k(NTT(a)).

mod common;

use common::backends;
use pimhe_exec::{Backend, ExecError};
use pimhe_ring::{PolyBatch, Representation, RingError};
use pimhe_testkit::inputs::{basis, random_batch, rng};
use pimhe_testkit::oracle::{automorphism_residues, pow_mod};

/// Galois elements worth testing at degree n: the identity, small ones, rotations 5^r mod 2N,
/// conjugation 2N - 1, N +/- 1, and elements at or above 2N (which act as k mod 2N).
fn elements(n: usize) -> Vec<usize> {
    let two_n = 2 * n;
    let mut ks = vec![1, 3, n - 1, n + 1, two_n - 1, two_n + 5, 3 * two_n + 7];
    ks.extend([1u64, 2, 7, (n / 4) as u64].map(|r| pow_mod(5, r, two_n as u64) as usize));
    ks.sort_unstable();
    ks.dedup();
    ks
}

#[test]
fn cpu_automorphism_matches_the_ring_and_the_definition() {
    let mut rng = rng(60);
    for n in [16usize, 256, 2048] {
        let basis = basis(n, &[30, 26, 19]);
        for representation in [Representation::Coefficient, Representation::Ntt] {
            let a = random_batch(&mut rng, &basis, 3, representation);
            for k in elements(n) {
                let expected = a.automorphism(k).unwrap();
                if representation == Representation::Coefficient {
                    for (limb, &q) in basis.primes().iter().enumerate() {
                        for poly in 0..3 {
                            let by_definition = automorphism_residues(a.poly_limb(limb, poly), k, q);
                            assert_eq!(expected.poly_limb(limb, poly), by_definition.as_slice(), "n={n} k={k}");
                        }
                    }
                }
                for be in backends() {
                    let buffer = be.upload(a.clone()).unwrap();
                    let image = be.download(&be.automorphism(&buffer, k).unwrap()).unwrap();
                    assert_eq!(image, expected, "n={n} k={k} {representation} threads={}", be.threads());
                    assert_eq!(be.download(&buffer).unwrap(), a, "the input is kept");
                }
            }
        }
    }
}

#[test]
fn ntt_form_automorphism_commutes_with_the_ntt() {
    let mut rng = rng(61);
    for n in [32usize, 1024, 65536] {
        let (primes, count) = if n == 65536 { (&[30][..], 1) } else { (&[30, 28, 22][..], 4) };
        let basis = basis(n, primes);
        let a = random_batch(&mut rng, &basis, count, Representation::Coefficient);
        let be = &backends()[1];
        let mut a_ntt = be.upload(a.clone()).unwrap();
        be.ntt(&mut a_ntt).unwrap();
        let ks = if n == 65536 { vec![5, 2 * n - 1, pow_mod(5, 1000, 2 * n as u64) as usize] } else { elements(n) };
        for k in ks {
            let mut transformed = be.automorphism(&be.upload(a.clone()).unwrap(), k).unwrap();
            be.ntt(&mut transformed).unwrap();
            let image = be.automorphism(&a_ntt, k).unwrap();
            assert_eq!(be.shape(&image).representation, Representation::Ntt);
            assert_eq!(be.download(&image).unwrap(), be.download(&transformed).unwrap(), "n={n} k={k}");
        }
    }
}

#[test]
fn automorphisms_compose_and_invert() {
    // sigma_a(sigma_b(x)) = sigma_(ab mod 2N)(x), and sigma_(k^-1) undoes sigma_k: the cached
    // tables of several elements and both forms used side by side.
    let mut rng = rng(62);
    let n = 512;
    let two_n = 2 * n as u64;
    let basis = basis(n, &[30, 24]);
    for be in backends() {
        for representation in [Representation::Coefficient, Representation::Ntt] {
            let x = be.upload(random_batch(&mut rng, &basis, 2, representation)).unwrap();
            let original = be.download(&x).unwrap();
            for (a, b) in [(5usize, 25usize), (2 * n - 1, 5), (3, 2 * n - 3)] {
                let lhs = be.automorphism(&be.automorphism(&x, b).unwrap(), a).unwrap();
                let rhs = be.automorphism(&x, (a as u64 * b as u64 % two_n) as usize).unwrap();
                assert_eq!(be.download(&lhs).unwrap(), be.download(&rhs).unwrap(), "a={a} b={b} {representation}");
            }
            let k = pow_mod(5, 17, two_n) as usize;
            // k^-1 = 5^(N/2 - 17): 5 has order N/2 modulo 2N.
            let k_inv = pow_mod(5, (n / 2 - 17) as u64, two_n) as usize;
            let back = be.automorphism(&be.automorphism(&x, k).unwrap(), k_inv).unwrap();
            assert_eq!(be.download(&back).unwrap(), original);
        }
    }
}

#[test]
fn even_galois_elements_are_refused_and_the_input_kept() {
    let mut rng = rng(63);
    let n = 64;
    let basis = basis(n, &[30, 20]);
    for be in backends() {
        for representation in [Representation::Coefficient, Representation::Ntt] {
            let a = random_batch(&mut rng, &basis, 2, representation);
            let buffer = be.upload(a.clone()).unwrap();
            for k in [0usize, 2, 64, 2 * n, 2 * n + 2, usize::MAX - 1] {
                let err = be.automorphism(&buffer, k).unwrap_err();
                assert_eq!(err, ExecError::Ring(RingError::InvalidGaloisElement { k, n }));
                let message = err.to_string();
                assert!(message.contains("automorphism") && message.contains(&k.to_string()), "{message}");
                assert!(message.contains("must be odd"), "{message}");
            }
            assert_eq!(be.download(&buffer).unwrap(), a);
        }
    }
}

#[test]
fn empty_batches_and_the_identity() {
    let mut rng = rng(64);
    let basis = basis(128, &[30]);
    for be in backends() {
        let empty = be.upload(PolyBatch::zeros(&basis, 0, Representation::Ntt)).unwrap();
        assert_eq!(be.shape(&be.automorphism(&empty, 5).unwrap()).count, 0);
        let a = random_batch(&mut rng, &basis, 3, Representation::Coefficient);
        let image = be.automorphism(&be.upload(a.clone()).unwrap(), 1 + 2 * 128).unwrap();
        assert_eq!(be.download(&image).unwrap(), a, "k = 2N + 1 acts as the identity");
    }
}
