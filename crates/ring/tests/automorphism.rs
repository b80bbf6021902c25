//! Galois automorphisms X -> X^k against their direct definition, in both representations.

use pimhe_ring::{PolyBatch, Representation, RingError};
use pimhe_testkit::inputs::{basis, random_batch, random_signed, rng};
use pimhe_testkit::oracle::{automorphism_residues, automorphism_signed, pow_mod, schoolbook};

/// Odd exponents worth testing for degree n: small ones, the BGV/CKKS generators, conjugation,
/// and values at or above 2N (which act as k mod 2N).
fn exponents(n: usize) -> Vec<usize> {
    let two_n = 2 * n;
    let g5 = pow_mod(5, 3, two_n as u64) as usize;
    let mut ks = vec![1, 3, 5, 7, g5, n - 1, n + 1, two_n - 1, two_n - 3, two_n + 5, 3 * two_n + 1];
    ks.sort_unstable();
    ks.dedup();
    ks
}

#[test]
fn coefficient_form_matches_direct_definition() {
    let mut rng = rng(20);
    for n in [16usize, 64, 256] {
        let basis = basis(n, &[30, 23]);
        let polys: Vec<Vec<i64>> = (0..3).map(|_| random_signed(&mut rng, n, 1 << 35)).collect();
        let refs: Vec<&[i64]> = polys.iter().map(|p| p.as_slice()).collect();
        let batch = PolyBatch::from_signed(&basis, &refs).unwrap();
        for k in exponents(n) {
            let image = batch.automorphism(k).unwrap();
            assert_eq!(image.representation(), Representation::Coefficient);
            assert_eq!(image.count(), 3);
            let expected: Vec<Vec<i64>> = polys.iter().map(|p| automorphism_signed(p, k)).collect();
            let expected_refs: Vec<&[i64]> = expected.iter().map(|p| p.as_slice()).collect();
            let expected = PolyBatch::from_signed(&basis, &expected_refs).unwrap();
            assert_eq!(image, expected, "n={n} k={k}");
        }
    }
}

#[test]
fn monomials_map_to_signed_monomials() {
    // X^i -> X^(ik mod 2N), with X^N = -1; checked one monomial at a time.
    let n = 32;
    let basis = basis(n, &[20]);
    let q = basis.primes()[0];
    for k in [3usize, 5, 63] {
        for i in 0..n {
            let mut x = vec![0i64; n];
            x[i] = 1;
            let image = PolyBatch::from_signed(&basis, &[&x]).unwrap().automorphism(k).unwrap();
            let e = i * k % (2 * n);
            let mut expected = vec![0u32; n];
            if e < n {
                expected[e] = 1;
            } else {
                expected[e - n] = q - 1;
            }
            assert_eq!(image.poly_limb(0, 0), expected.as_slice(), "i={i} k={k}");
        }
    }
}

#[test]
fn ntt_form_commutes_with_the_transform() {
    let mut rng = rng(21);
    for n in [16usize, 64, 512, 1024] {
        let basis = basis(n, &[30, 27, 21]);
        let coeffs = random_batch(&mut rng, &basis, 2, Representation::Coefficient);
        let mut ntt = coeffs.clone();
        ntt.to_ntt().unwrap();
        for k in exponents(n) {
            let mut expected = coeffs.automorphism(k).unwrap();
            expected.to_ntt().unwrap();
            let image = ntt.automorphism(k).unwrap();
            assert_eq!(image.representation(), Representation::Ntt);
            assert_eq!(image, expected, "n={n} k={k}");
        }
    }
}

#[test]
fn coefficient_form_on_residues_matches_definition() {
    // Random residues (not small signed values): negation must happen modulo each prime.
    let mut rng = rng(22);
    let n = 128;
    let basis = basis(n, &[30, 29, 18]);
    let batch = random_batch(&mut rng, &basis, 3, Representation::Coefficient);
    for k in exponents(n) {
        let image = batch.automorphism(k).unwrap();
        for l in 0..basis.len() {
            let q = basis.primes()[l];
            for p in 0..3 {
                assert_eq!(
                    image.poly_limb(l, p),
                    automorphism_residues(batch.poly_limb(l, p), k, q).as_slice(),
                    "k={k} l={l} p={p}"
                );
            }
        }
    }
}

#[test]
fn composition_multiplies_exponents() {
    let mut rng = rng(23);
    for n in [16usize, 256] {
        let basis = basis(n, &[30, 25]);
        let two_n = 2 * n;
        for representation in [Representation::Coefficient, Representation::Ntt] {
            let x = random_batch(&mut rng, &basis, 2, representation);
            for (a, b) in [(3usize, 5usize), (5, 5), (7, two_n - 1), (n + 1, 3), (two_n - 1, two_n - 1)] {
                let lhs = x.automorphism(b).unwrap().automorphism(a).unwrap();
                let rhs = x.automorphism(a * b % two_n).unwrap();
                assert_eq!(lhs, rhs, "n={n} a={a} b={b} {representation}");
            }
            // sigma_1 is the identity; sigma_k followed by sigma_{k^-1} too.
            assert_eq!(x.automorphism(1).unwrap(), x);
            let k = 5usize;
            let k_inv = (1..two_n).step_by(2).find(|&j| j * k % two_n == 1).unwrap();
            assert_eq!(x.automorphism(k).unwrap().automorphism(k_inv).unwrap(), x);
        }
    }
}

#[test]
fn automorphism_is_a_ring_homomorphism() {
    let mut rng = rng(24);
    for n in [16usize, 64] {
        let basis = basis(n, &[30, 26]);
        let a = random_batch(&mut rng, &basis, 1, Representation::Coefficient);
        let b = random_batch(&mut rng, &basis, 1, Representation::Coefficient);
        for k in exponents(n) {
            let sa = a.automorphism(k).unwrap();
            let sb = b.automorphism(k).unwrap();
            for l in 0..basis.len() {
                let q = basis.primes()[l];
                let product = schoolbook(a.poly_limb(l, 0), b.poly_limb(l, 0), q);
                let lhs = automorphism_residues(&product, k, q);
                let rhs = schoolbook(sa.poly_limb(l, 0), sb.poly_limb(l, 0), q);
                assert_eq!(lhs, rhs, "n={n} k={k} l={l}");
                // Additive as well.
                let sum: Vec<u32> = a
                    .poly_limb(l, 0)
                    .iter()
                    .zip(b.poly_limb(l, 0))
                    .map(|(&x, &y)| ((x as u64 + y as u64) % q as u64) as u32)
                    .collect();
                let s_sum: Vec<u32> = sa
                    .poly_limb(l, 0)
                    .iter()
                    .zip(sb.poly_limb(l, 0))
                    .map(|(&x, &y)| ((x as u64 + y as u64) % q as u64) as u32)
                    .collect();
                assert_eq!(automorphism_residues(&sum, k, q), s_sum);
            }
        }
    }
}

#[test]
fn even_exponents_are_rejected() {
    let mut rng = rng(25);
    let n = 16;
    let basis = basis(n, &[30]);
    for representation in [Representation::Coefficient, Representation::Ntt] {
        let x = random_batch(&mut rng, &basis, 1, representation);
        for k in [0usize, 2, 4, n, 2 * n, 2 * n + 2] {
            assert_eq!(x.automorphism(k).unwrap_err(), RingError::InvalidGaloisElement { k, n });
        }
    }
}
