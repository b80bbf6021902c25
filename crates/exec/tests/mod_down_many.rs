//! mod_down (dropping the last k primes, the ModDown of hybrid key switching) against a
//! big-integer oracle: delta is FastBConv of [X]_P (of [X t^{-1}]_P times t for BGV) computed
//! term by term in big integers, and Y = (X - delta) / P exactly.

mod common;

use common::backends;
use num_bigint::BigInt;
use num_integer::Integer;
use num_traits::{Signed, ToPrimitive, Zero};
use pimhe_exec::{Backend, ExecError};
use pimhe_math::Modulus;
use pimhe_ring::Representation;
use pimhe_testkit::bigint::{big_mod, crt_centred, inverse_mod, product};
use pimhe_testkit::inputs::{basis_of, distinct_primes, random_batch, residues_at, rng};

/// Y for X (any representative) dropping the primes `dropped`, with the checks on delta.
fn expected_y(x: &BigInt, dropped: &[u32], t: Option<u32>) -> BigInt {
    let p = product(dropped);
    let scale = BigInt::from(t.unwrap_or(1));
    // FastBConv: sum_i [x_i (P/p_i)^{-1}]_{p_i} (P/p_i), x_i = [X t^{-1}]_{p_i}, each term's
    // residue centred in (-p_i/2, p_i/2), not reduced mod P.
    let u: BigInt = dropped
        .iter()
        .map(|&p_i| {
            let p_hat = &p / p_i;
            let x_i = (x * inverse_mod(&scale, p_i)).mod_floor(&BigInt::from(p_i));
            let mut term = (x_i * inverse_mod(&p_hat, p_i)).mod_floor(&BigInt::from(p_i));
            if term > BigInt::from(p_i / 2) {
                term -= p_i;
            }
            term * p_hat
        })
        .sum();
    let delta = &scale * u;
    assert!(delta.abs() * 2 < &scale * &p * dropped.len(), "delta out of range");
    let diff = x - &delta;
    assert!(diff.mod_floor(&p).is_zero(), "X - delta must be divisible by P");
    let y = diff / &p;
    if let Some(t) = t {
        // delta is a multiple of t, so Y = X P^{-1} mod t.
        let t_big = BigInt::from(t);
        assert_eq!(y.mod_floor(&t_big), (x * inverse_mod(&p, t)).mod_floor(&t_big));
    }
    y
}

#[test]
fn random_inputs_match_big_integer_oracle() {
    let mut rng = rng(64);
    for n in [16usize, 64] {
        for (bits, count) in [(&[30u32, 29, 30][..], 1), (&[28, 30, 29, 30][..], 2), (&[30, 27, 30, 29, 28][..], 3)] {
            let primes = distinct_primes(n, bits);
            let kept = primes.len() - count;
            let basis = basis_of(n, &primes);
            let x = random_batch(&mut rng, &basis, 2, Representation::Coefficient);
            let mut x_ntt = x.clone();
            x_ntt.to_ntt().unwrap();
            for t in [None, Some(65537u32), Some(256)] {
                let t_mod = t.map(|t| Modulus::new(t as u64).unwrap());
                let mut results = Vec::new();
                for be in backends() {
                    let out = be.mod_down(&x, count, t_mod).unwrap();
                    assert_eq!(out.basis().primes(), primes[..kept].to_vec());
                    assert_eq!((out.count(), out.representation()), (2, Representation::Coefficient));
                    for k in 0..2 {
                        for c in 0..n {
                            let big_x = crt_centred(&residues_at(&x, k, c), &primes);
                            let y = expected_y(&big_x, &primes[kept..], t);
                            for (j, &q) in primes[..kept].iter().enumerate() {
                                assert_eq!(
                                    out.poly_limb(j, k)[c],
                                    big_mod(&y, q),
                                    "n={n} t={t:?} k={k} c={c} limb {j}"
                                );
                            }
                        }
                    }
                    let out_ntt = be.mod_down(&x_ntt, count, t_mod).unwrap();
                    assert_eq!(out_ntt.representation(), Representation::Ntt);
                    let mut back = out_ntt.clone();
                    be.intt(&mut back).unwrap();
                    assert_eq!(back, out, "NTT path n={n} count={count} t={t:?}");
                    results.push(out);
                }
                assert_eq!(results[0], results[1], "1 and 3 threads differ");
            }
        }
    }
}

#[test]
fn the_result_rounds_x_over_p_without_bias() {
    // Checked on the centred values alone, without re-deriving FastBConv: |Y P - X| = |delta| <
    // count P / 2 = P, and the errors Y - X / P average to about zero (from residues in [0, p_i)
    // they would average about -count / 2: a bias CKKS decodes as a large slot error).
    let mut rng = rng(65);
    let n = 1024;
    let primes = distinct_primes(n, &[30, 29, 25, 26]);
    let p = product(&primes[2..]);
    let x = random_batch(&mut rng, &basis_of(n, &primes), 1, Representation::Coefficient);
    for be in backends() {
        let out = be.mod_down(&x, 2, None).unwrap();
        let mut error_sum = 0.0;
        for c in 0..n {
            let big_x = crt_centred(&residues_at(&x, 0, c), &primes);
            let y = crt_centred(&residues_at(&out, 0, c), &primes[..2]);
            let delta = &y * &p - &big_x;
            assert!(delta.abs() < p, "c={c}");
            error_sum += delta.to_f64().unwrap() / p.to_f64().unwrap();
        }
        let mean = error_sum / n as f64;
        assert!(mean.abs() < 0.1, "mean rounding error {mean} (an unbiased rounding averages about 0)");
    }
}

#[test]
fn dropping_one_prime_rounds_as_mod_down_last() {
    let mut rng = rng(67);
    let n = 64;
    let primes = distinct_primes(n, &[30, 29, 28]);
    let x = random_batch(&mut rng, &basis_of(n, &primes), 2, Representation::Coefficient);
    for be in backends() {
        assert_eq!(be.mod_down(&x, 1, None).unwrap(), be.mod_down_last(&x, None).unwrap());
    }
}

#[test]
fn bad_counts_and_non_invertible_t_are_errors() {
    let mut rng = rng(66);
    let n = 16;
    let primes = distinct_primes(n, &[30, 29, 28]);
    let x = random_batch(&mut rng, &basis_of(n, &primes), 1, Representation::Coefficient);
    for be in backends() {
        for count in [0, 3, 4] {
            let err = be.mod_down(&x, count, None).unwrap_err();
            assert!(matches!(err, ExecError::Shape { operation: "mod_down", .. }), "{err:?}");
            assert!(err.to_string().contains("allowed 1..=2"), "{err}");
        }
        // t equal to a dropped prime has no inverse modulo it.
        let t = Modulus::new(primes[2] as u64).unwrap();
        assert!(be.mod_down(&x, 1, Some(t)).is_err());
    }
}
