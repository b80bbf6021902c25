//! mod_down_last against a big-integer oracle: Y = (X - delta) / p with delta the centred
//! residue of X modulo p, made divisible by t for BGV.

mod common;

use common::backends;
use num_bigint::BigInt;
use num_integer::Integer;
use num_traits::{Signed, Zero};
use pimhe_exec::{Backend, ExecError};
use pimhe_math::Modulus;
use pimhe_ring::{PolyBatch, Representation};
use pimhe_testkit::bigint::{big_mod, centre_big, crt_centred, inverse_mod};
use pimhe_testkit::inputs::{basis_of, distinct_primes, random_batch, random_signed, residues_at, rng};
use rand_chacha::rand_core::Rng;

/// The expected Y for the integer X (any representative), with the bound check on delta.
fn expected_y(x: &BigInt, p: u32, t: Option<u32>) -> BigInt {
    let p_big = BigInt::from(p);
    let r = centre_big(x, &p_big);
    let delta = match t {
        None => r.clone(),
        Some(t) => {
            let t_big = BigInt::from(t);
            let p_inv = inverse_mod(&p_big, t);
            let u = centre_big(&(&r * p_inv).mod_floor(&t_big), &t_big);
            &r - &p_big * u
        }
    };
    let diff = x - &delta;
    assert!(diff.mod_floor(&p_big).is_zero(), "X - delta must be divisible by p");
    let y = diff / &p_big;
    // |Y p - X| = |delta| <= p/2 (+ p t/2 with the correction).
    let bound = match t {
        None => &p_big / 2,
        Some(t) => (&p_big * BigInt::from(t + 1)) / 2,
    };
    assert!((&y * &p_big - x).abs() <= bound);
    if let Some(t) = t {
        let t_big = BigInt::from(t);
        // Y p - X = -delta is a multiple of t, so Y = X p^{-1} mod t.
        assert!((&y * &p_big - x).mod_floor(&t_big).is_zero());
        let p_inv = inverse_mod(&p_big, t);
        assert_eq!(y.mod_floor(&t_big), (x * p_inv).mod_floor(&t_big));
    }
    y
}

fn plain_moduli() -> [Option<u32>; 4] {
    [None, Some(65537), Some(257), Some(256)]
}

#[test]
fn random_inputs_match_big_integer_oracle() {
    let mut rng = rng(60);
    for n in [16usize, 128] {
        // The dropped prime p is the largest in one configuration and the smallest in another.
        for bits in [[28u32, 26, 29, 30], [30, 29, 27, 20]] {
            let primes = distinct_primes(n, &bits);
            let p = *primes.last().unwrap();
            let q_primes = &primes[..primes.len() - 1];
            let basis = basis_of(n, &primes);
            let x = random_batch(&mut rng, &basis, 2, Representation::Coefficient);
            let mut x_ntt = x.clone();
            x_ntt.to_ntt().unwrap();
            for t in plain_moduli() {
                let t_mod = t.map(|t| Modulus::new(t as u64).unwrap());
                let mut results = Vec::new();
                for be in backends() {
                    let out = be.mod_down_last(&x, t_mod).unwrap();
                    assert_eq!(out.basis().primes(), q_primes.to_vec());
                    assert_eq!(out.count(), 2);
                    assert_eq!(out.representation(), Representation::Coefficient);
                    for k in 0..2 {
                        for c in 0..n {
                            let big_x = crt_centred(&residues_at(&x, k, c), &primes);
                            let y = expected_y(&big_x, p, t);
                            for (j, &q) in q_primes.iter().enumerate() {
                                assert_eq!(
                                    out.poly_limb(j, k)[c],
                                    big_mod(&y, q),
                                    "n={n} bits={bits:?} t={t:?} k={k} c={c} limb {j}"
                                );
                            }
                        }
                    }
                    // NTT input: NTT output, equal to the transform of the coefficient result.
                    let out_ntt = be.mod_down_last(&x_ntt, t_mod).unwrap();
                    assert_eq!(out_ntt.representation(), Representation::Ntt);
                    assert_eq!(out_ntt.basis().primes(), q_primes.to_vec());
                    let mut back = out_ntt.clone();
                    be.intt(&mut back).unwrap();
                    assert_eq!(back, out, "NTT path n={n} t={t:?}");
                    results.push((out, out_ntt));
                }
                assert_eq!(results[0], results[1], "1 and 3 threads differ");
            }
        }
    }
}

#[test]
fn bgv_messages_are_scaled_by_p_inverse_modulo_t() {
    // X = m + t e with a small e: the result is small and congruent to m p^{-1} modulo t.
    let mut rng = rng(61);
    let n = 64;
    let primes = distinct_primes(n, &[30, 29, 28]);
    let p = primes[2];
    let basis = basis_of(n, &primes);
    for t in [65537u32, 257] {
        let t_mod = Modulus::new(t as u64).unwrap();
        let messages: Vec<i64> = (0..n).map(|_| (rng.next_u32() % t) as i64).collect();
        let noise = random_signed(&mut rng, n, 1 << 20);
        let coeffs: Vec<i64> = messages.iter().zip(&noise).map(|(&m, &e)| m + t as i64 * e).collect();
        let mut x = PolyBatch::from_signed(&basis, &[&coeffs]).unwrap();
        for representation in [Representation::Coefficient, Representation::Ntt] {
            if representation == Representation::Ntt {
                x.to_ntt().unwrap();
            }
            for be in backends() {
                let mut out = be.mod_down_last(&x, Some(t_mod)).unwrap();
                if representation == Representation::Ntt {
                    be.intt(&mut out).unwrap();
                }
                let p_inv_t = inverse_mod(&BigInt::from(p), t);
                for c in 0..n {
                    let y = crt_centred(&residues_at(&out, 0, c), &primes[..2]);
                    let big_x = BigInt::from(coeffs[c]);
                    assert_eq!(
                        y.mod_floor(&BigInt::from(t)),
                        (BigInt::from(messages[c]) * &p_inv_t).mod_floor(&BigInt::from(t)),
                        "t={t} c={c}"
                    );
                    // |Y - X/p| <= (t + 1) / 2.
                    assert!((&y * BigInt::from(p) - &big_x).abs() <= BigInt::from(p) * BigInt::from(t + 1) / 2);
                    assert_eq!(y, expected_y(&big_x, p, Some(t)));
                }
            }
        }
    }
}

#[test]
fn without_plain_modulus_it_rounds_x_over_p() {
    // Y = round(X / p) for X = p * z + r with |r| < p/2.
    let mut rng = rng(62);
    let n = 32;
    let primes = distinct_primes(n, &[30, 29, 25]);
    let p = primes[2] as i64;
    let basis = basis_of(n, &primes);
    let z = random_signed(&mut rng, n, 1 << 28);
    let r = random_signed(&mut rng, n, p / 2);
    let coeffs: Vec<i64> = z.iter().zip(&r).map(|(&z, &r)| p * z + r).collect();
    let x = PolyBatch::from_signed(&basis, &[&coeffs]).unwrap();
    for be in backends() {
        let out = be.mod_down_last(&x, None).unwrap();
        for (c, &z) in z.iter().enumerate() {
            for (j, &q) in primes[..2].iter().enumerate() {
                assert_eq!(out.poly_limb(j, 0)[c], z.rem_euclid(q as i64) as u32, "c={c} limb {j}");
            }
        }
    }
}

#[test]
fn single_prime_and_non_invertible_p_are_errors() {
    let mut rng = rng(63);
    let n = 16;
    let primes = distinct_primes(n, &[30, 29]);
    let single = random_batch(&mut rng, &basis_of(n, &primes[..1]), 2, Representation::Coefficient);
    let pair = random_batch(&mut rng, &basis_of(n, &primes), 2, Representation::Coefficient);
    for be in backends() {
        for t in [None, Some(Modulus::new(65537).unwrap())] {
            let err = be.mod_down_last(&single, t).unwrap_err();
            assert!(matches!(err, ExecError::Shape { operation: "mod_down_last", .. }), "{err:?}");
        }
        // t = p: p has no inverse modulo t.
        let t = Modulus::new(primes[1] as u64).unwrap();
        assert!(be.mod_down_last(&pair, Some(t)).is_err());
    }
}
