//! Element-wise operations of CpuBackend against per-element u64 oracles, with both broadcast
//! kinds, on 1 and 3 threads; and the shape errors, which must leave inputs untouched.

mod common;

use common::backends;
use pimhe_exec::{Backend, CpuBackend, ExecError, Shape};
use pimhe_ring::{PolyBatch, Representation, RingError};
use pimhe_testkit::inputs::{basis_of, distinct_primes, random_batch, rng};
use rand_chacha::rand_core::Rng;
use rand_chacha::ChaCha20Rng;

/// Position of prime `p` in `primes`, found by a linear scan (independent of the library).
fn position(primes: &[u32], p: u32) -> usize {
    primes.iter().position(|&x| x == p).expect("prime present")
}

/// (label, a, b): b with a's shape, b with one polynomial, b over a superset basis in another
/// prime order (with count 3 and with count 1), and a single polynomial against a single one.
fn operand_pairs(
    rng: &mut ChaCha20Rng,
    n: usize,
    representation: Representation,
) -> Vec<(String, PolyBatch, PolyBatch)> {
    let primes = distinct_primes(n, &[30, 27, 24, 29, 22]);
    let a_basis = basis_of(n, &primes[..3]);
    let superset = basis_of(n, &[primes[3], primes[2], primes[4], primes[0], primes[1]]);
    let a = random_batch(rng, &a_basis, 3, representation);
    let mut pairs = vec![
        ("same shape".to_string(), a.clone(), random_batch(rng, &a_basis, 3, representation)),
        ("b count 1".to_string(), a.clone(), random_batch(rng, &a_basis, 1, representation)),
        ("b over superset".to_string(), a.clone(), random_batch(rng, &superset, 3, representation)),
        ("b over superset, count 1".to_string(), a.clone(), random_batch(rng, &superset, 1, representation)),
        (
            "single vs single".to_string(),
            random_batch(rng, &a_basis, 1, representation),
            random_batch(rng, &superset, 1, representation),
        ),
    ];
    // Put zeros and q-1 in a and b to hit the reduction edges.
    for (_, a, b) in pairs.iter_mut() {
        for batch in [a, b] {
            for l in 0..batch.basis().len() {
                let q = batch.basis().primes()[l];
                let chunk = batch.poly_limb_mut(l, 0);
                chunk[0] = 0;
                chunk[1] = q - 1;
                chunk[2] = q - 1;
                chunk[3] = 0;
            }
        }
    }
    pairs
}

/// Checks `out == f(a, b)` element by element, with b's limb found by prime and b's polynomial
/// broadcast when it holds one.
fn expect_binary(label: &str, a: &PolyBatch, b: &PolyBatch, out: &PolyBatch, f: impl Fn(u64, u64, u64) -> u64) {
    assert_eq!(out.basis(), a.basis(), "{label}: output basis");
    assert_eq!(out.count(), a.count(), "{label}: output count");
    assert_eq!(out.representation(), a.representation(), "{label}: output representation");
    let b_primes = b.basis().primes();
    let n = a.degree();
    for (l, &q) in a.basis().primes().iter().enumerate() {
        let lb = position(&b_primes, q);
        for k in 0..a.count() {
            let kb = if b.count() == 1 { 0 } else { k };
            for c in 0..n {
                let x = a.poly_limb(l, k)[c] as u64;
                let y = b.poly_limb(lb, kb)[c] as u64;
                let expected = f(x, y, q as u64);
                assert_eq!(out.poly_limb(l, k)[c] as u64, expected, "{label}: l={l} k={k} c={c}");
            }
        }
    }
}

/// Runs `op` on both backends, checks both with `check`, and checks they agree.
fn on_both(op: impl Fn(&CpuBackend) -> PolyBatch, check: impl Fn(&PolyBatch)) {
    let [one, three] = backends();
    assert_eq!(one.threads(), 1);
    assert_eq!(three.threads(), 3);
    let r1 = op(&one);
    let r3 = op(&three);
    check(&r1);
    check(&r3);
    assert_eq!(r1, r3, "1-thread and 3-thread results differ");
    assert_eq!(r1.data(), r3.data());
}

#[test]
fn add_sub_match_oracle_in_both_representations() {
    let mut rng = rng(30);
    for n in [32usize, 1024] {
        for representation in [Representation::Coefficient, Representation::Ntt] {
            for (label, a, b) in operand_pairs(&mut rng, n, representation) {
                let label = format!("add {label} n={n} {representation}");
                on_both(
                    |be| {
                        be.download(&be.add(&be.upload(a.clone()).unwrap(), &be.upload(b.clone()).unwrap()).unwrap())
                            .unwrap()
                    },
                    |out| expect_binary(&label, &a, &b, out, |x, y, q| (x + y) % q),
                );
                let label = label.replacen("add", "sub", 1);
                on_both(
                    |be| be.sub(&a, &b).unwrap(),
                    |out| expect_binary(&label, &a, &b, out, |x, y, q| (x + q - y) % q),
                );
                let label = label.replacen("sub", "add_assign", 1);
                on_both(
                    |be| {
                        let mut acc = a.clone();
                        be.add_assign(&mut acc, &b).unwrap();
                        acc
                    },
                    |out| expect_binary(&label, &a, &b, out, |x, y, q| (x + y) % q),
                );
            }
        }
    }
}

#[test]
fn mul_and_mac_match_oracle() {
    let mut rng = rng(31);
    for n in [32usize, 1024] {
        for (label, a, b) in operand_pairs(&mut rng, n, Representation::Ntt) {
            let label = format!("mul {label} n={n}");
            on_both(|be| be.mul(&a, &b).unwrap(), |out| expect_binary(&label, &a, &b, out, |x, y, q| x * y % q));

            // mac onto a random accumulator of a's shape, twice (with b, then with a itself).
            let acc0 = random_batch(&mut rng, a.basis(), a.count(), Representation::Ntt);
            on_both(
                |be| {
                    let mut acc = acc0.clone();
                    be.mac(&mut acc, &a, &b).unwrap();
                    be.mac(&mut acc, &a, &a).unwrap();
                    acc
                },
                |out| {
                    let b_primes = b.basis().primes();
                    assert_eq!(Shape::of(out), Shape::of(&a));
                    for (l, &q) in a.basis().primes().iter().enumerate() {
                        let q = q as u64;
                        let lb = position(&b_primes, q as u32);
                        for k in 0..a.count() {
                            let kb = if b.count() == 1 { 0 } else { k };
                            for c in 0..n {
                                let x = a.poly_limb(l, k)[c] as u64;
                                let y = b.poly_limb(lb, kb)[c] as u64;
                                let s = acc0.poly_limb(l, k)[c] as u64;
                                let expected = (s + x * y % q + x * x % q) % q;
                                assert_eq!(out.poly_limb(l, k)[c] as u64, expected, "mac {label} l={l} k={k} c={c}");
                            }
                        }
                    }
                },
            );
        }
    }
}

#[test]
fn neg_and_mul_scalar_match_oracle() {
    let mut rng = rng(32);
    let n = 256;
    let primes = distinct_primes(n, &[30, 26, 19]);
    let basis = basis_of(n, &primes);
    for representation in [Representation::Coefficient, Representation::Ntt] {
        let mut a = random_batch(&mut rng, &basis, 3, representation);
        for (l, &q) in primes.iter().enumerate() {
            a.poly_limb_mut(l, 1)[0..4].copy_from_slice(&[0, 1, q - 1, q / 2]);
        }
        let unary = |label: &str, out: &PolyBatch, f: &dyn Fn(u64, u64) -> u64| {
            assert_eq!(Shape::of(out), Shape::of(&a), "{label}");
            for (l, &q) in primes.iter().enumerate() {
                for k in 0..3 {
                    for c in 0..n {
                        let expected = f(a.poly_limb(l, k)[c] as u64, q as u64);
                        assert_eq!(out.poly_limb(l, k)[c] as u64, expected, "{label} l={l} k={k} c={c}");
                    }
                }
            }
        };
        on_both(|be| be.neg(&a).unwrap(), |out| unary("neg", out, &|x, q| (q - x) % q));
        let scalars = [
            0u64,
            1,
            2,
            primes[0] as u64 - 1,
            primes[0] as u64,
            primes[2] as u64 + 3,
            u64::MAX,
            rng.next_u64(),
            1 << 40,
        ];
        for c in scalars {
            on_both(
                |be| be.mul_scalar(&a, c).unwrap(),
                |out| {
                    unary(&format!("mul_scalar c={c}"), out, &|x, q| ((x as u128 * (c % q) as u128) % q as u128) as u64)
                },
            );
        }
    }
}

#[test]
fn broadcast_output_takes_first_operand_basis_even_when_b_is_larger() {
    // a over [q1, q0] against b over [q0, q1, q2]: the output is over [q1, q0].
    let mut rng = rng(33);
    let n = 16;
    let primes = distinct_primes(n, &[30, 28, 26]);
    let a = random_batch(&mut rng, &basis_of(n, &[primes[1], primes[0]]), 2, Representation::Ntt);
    let b = random_batch(&mut rng, &basis_of(n, &primes), 2, Representation::Ntt);
    for be in backends() {
        let out = be.mul(&a, &b).unwrap();
        assert_eq!(out.basis().primes(), vec![primes[1], primes[0]]);
        for k in 0..2 {
            for c in 0..n {
                let q1 = primes[1] as u64;
                let q0 = primes[0] as u64;
                assert_eq!(
                    out.poly_limb(0, k)[c] as u64,
                    a.poly_limb(0, k)[c] as u64 * b.poly_limb(1, k)[c] as u64 % q1
                );
                assert_eq!(
                    out.poly_limb(1, k)[c] as u64,
                    a.poly_limb(1, k)[c] as u64 * b.poly_limb(0, k)[c] as u64 % q0
                );
            }
        }
    }
}

fn is_shape_error(result: &ExecError, operation: &str) -> bool {
    matches!(result, ExecError::Shape { operation: op, .. } if *op == operation)
}

fn is_wrong_representation(
    result: &ExecError,
    operation: &str,
    expected: Representation,
    found: Representation,
) -> bool {
    matches!(
        result,
        ExecError::Ring(RingError::WrongRepresentation { operation: op, expected: e, found: f })
            if *op == operation && *e == expected && *f == found
    )
}

#[test]
fn mismatched_operands_are_errors_and_leave_inputs_unchanged() {
    let mut rng = rng(34);
    let n = 32;
    let primes = distinct_primes(n, &[30, 28, 26, 24]);
    let basis = basis_of(n, &primes[..3]);
    let a = random_batch(&mut rng, &basis, 3, Representation::Ntt);
    let a_copy = a.clone();
    let two = random_batch(&mut rng, &basis, 2, Representation::Ntt);
    let missing = random_batch(&mut rng, &basis_of(n, &[primes[0], primes[1], primes[3]]), 3, Representation::Ntt);
    let other_degree = random_batch(&mut rng, &basis_of(16, &primes[..3]), 3, Representation::Ntt);
    let coeff = random_batch(&mut rng, &basis, 3, Representation::Coefficient);
    let coeff_copy = coeff.clone();

    for be in backends() {
        // Count mismatch (neither equal nor 1).
        for (op, result) in [
            ("add", be.add(&a, &two)),
            ("sub", be.sub(&a, &two)),
            ("mul", be.mul(&a, &two)),
            // b over a basis missing one of a's primes.
            ("add", be.add(&a, &missing)),
            ("sub", be.sub(&a, &missing)),
            ("mul", be.mul(&a, &missing)),
            // b over another ring degree.
            ("add", be.add(&a, &other_degree)),
            ("mul", be.mul(&a, &other_degree)),
            // Additions of mixed representations.
            ("add", be.add(&a, &coeff)),
            ("add", be.add(&coeff, &a)),
            ("sub", be.sub(&coeff, &a)),
        ] {
            let err = result.unwrap_err();
            assert!(is_shape_error(&err, op), "{op}: {err:?}");
        }
        // a with count 1 and b with count 3: b cannot broadcast "up".
        let single = a.poly(0).unwrap();
        assert!(is_shape_error(&be.add(&single, &a).unwrap_err(), "add"));

        // Products in coefficient form, either operand.
        let err = be.mul(&coeff, &a).unwrap_err();
        assert!(is_wrong_representation(&err, "mul", Representation::Ntt, Representation::Coefficient), "{err:?}");
        let err = be.mul(&a, &coeff).unwrap_err();
        assert!(is_wrong_representation(&err, "mul", Representation::Ntt, Representation::Coefficient), "{err:?}");

        // add_assign failures leave the accumulator untouched.
        for b in [&two, &missing, &coeff, &other_degree] {
            let mut acc = a.clone();
            let err = be.add_assign(&mut acc, b).unwrap_err();
            assert!(is_shape_error(&err, "add_assign"), "{err:?}");
            assert_eq!(acc, a_copy);
        }

        // mac: accumulator of another shape (count, basis, representation), b of a bad shape,
        // operands in coefficient form.
        let acc_shapes = [
            random_batch(&mut rng, &basis, 2, Representation::Ntt),
            random_batch(&mut rng, &basis.prefix(2).unwrap(), 3, Representation::Ntt),
            random_batch(&mut rng, &basis_of(n, &primes[..4]), 3, Representation::Ntt),
            random_batch(&mut rng, &basis, 3, Representation::Coefficient),
        ];
        for acc0 in acc_shapes {
            let mut acc = acc0.clone();
            let err = be.mac(&mut acc, &a, &a).unwrap_err();
            assert!(is_shape_error(&err, "mac"), "{err:?}");
            assert_eq!(acc, acc0);
        }
        for b in [&two, &missing] {
            let acc0 = random_batch(&mut rng, &basis, 3, Representation::Ntt);
            let mut acc = acc0.clone();
            let err = be.mac(&mut acc, &a, b).unwrap_err();
            assert!(is_shape_error(&err, "mac"), "{err:?}");
            assert_eq!(acc, acc0);
        }
        let acc0 = random_batch(&mut rng, &basis, 3, Representation::Ntt);
        let mut acc = acc0.clone();
        let err = be.mac(&mut acc, &a, &coeff).unwrap_err();
        assert!(is_wrong_representation(&err, "mac", Representation::Ntt, Representation::Coefficient), "{err:?}");
        assert_eq!(acc, acc0);
        let mut acc = coeff.clone();
        let err = be.mac(&mut acc, &coeff, &coeff).unwrap_err();
        assert!(is_wrong_representation(&err, "mac", Representation::Ntt, Representation::Coefficient), "{err:?}");
        assert_eq!(acc, coeff_copy);

        assert_eq!(a, a_copy);
        assert_eq!(coeff, coeff_copy);
    }
}

#[test]
fn copy_restrict_and_shape_round_trip() {
    let mut rng = rng(35);
    let n = 64;
    let primes = distinct_primes(n, &[30, 28, 26]);
    let basis = basis_of(n, &primes);
    let a = random_batch(&mut rng, &basis, 2, Representation::Ntt);
    let target = basis_of(n, &[primes[2], primes[0]]);
    for be in backends() {
        let buf = be.upload(a.clone()).unwrap();
        assert_eq!(be.shape(&buf), Shape { basis: basis.clone(), count: 2, representation: Representation::Ntt });
        assert_eq!(be.download(&be.copy(&buf).unwrap()).unwrap(), a);
        let r = be.download(&be.restrict(&buf, &target).unwrap()).unwrap();
        assert_eq!(r.basis().primes(), vec![primes[2], primes[0]]);
        for k in 0..2 {
            assert_eq!(r.poly_limb(0, k), a.poly_limb(2, k));
            assert_eq!(r.poly_limb(1, k), a.poly_limb(0, k));
        }
        let missing = basis_of(n, &distinct_primes(n, &[30, 28, 26, 25])[3..]);
        assert!(matches!(be.restrict(&buf, &missing).unwrap_err(), ExecError::Ring(RingError::BasisMismatch(_))));
    }
}

#[test]
fn zeroize_keeps_the_shape_and_clears_residues() {
    let mut rng = rng(36);
    let n = 16;
    let basis = basis_of(n, &distinct_primes(n, &[30, 28]));
    let a = random_batch(&mut rng, &basis, 2, Representation::Ntt);
    for be in backends() {
        let mut buf = be.upload(a.clone()).unwrap();
        be.zeroize(&mut buf);
        assert_eq!(be.shape(&buf), Shape::of(&a));
        let host = be.download(&buf).unwrap();
        assert_eq!(host.data().len(), a.data().len(), "zeroize must keep every residue slot");
        assert!(host.data().iter().all(|&x| x == 0));
        // A zeroized buffer is still a valid operand: a + 0 = a.
        let sum = be.add(&a, &buf).unwrap();
        assert_eq!(sum, a);
    }
}

#[test]
fn thread_counts_outside_one_to_the_maximum_are_rejected() {
    assert!(matches!(CpuBackend::new(Some(0)), Err(ExecError::Setup(_))));
    // Refused before a single thread is spawned (100000 threads would run until the OS refuses).
    let too_many = CpuBackend::new(Some(100_000)).err().unwrap().to_string();
    assert!(too_many.contains("100000 threads requested: allowed 1 ..= 1024"), "{too_many}");
    let be = CpuBackend::new(None).unwrap();
    assert!(be.threads() >= 1);
    assert_eq!(be.name(), "cpu");
}

#[test]
fn sum_adds_every_polynomial_of_the_batch() {
    let mut rng = rng(44);
    let n = 64;
    let primes = distinct_primes(n, &[30, 22]);
    let basis = basis_of(n, &primes);
    for (count, representation) in
        [(0, Representation::Ntt), (1, Representation::Coefficient), (37, Representation::Ntt)]
    {
        let mut a = random_batch(&mut rng, &basis, count, representation);
        if count > 1 {
            // The largest residues in every polynomial: the sum must not overflow or stay lazy.
            for (l, &q) in primes.iter().enumerate() {
                (0..count).for_each(|k| a.poly_limb_mut(l, k)[0] = q - 1);
            }
        }
        on_both(
            |be| be.sum(&a).unwrap(),
            |out| {
                assert_eq!((out.count(), out.representation()), (1, representation));
                for (l, &q) in primes.iter().enumerate() {
                    for c in 0..n {
                        let expected = (0..count).map(|k| a.poly_limb(l, k)[c] as u64).sum::<u64>() % q as u64;
                        assert_eq!(out.poly_limb(l, 0)[c] as u64, expected, "count={count} l={l} c={c}");
                    }
                }
            },
        );
    }
}
