//! Backend NTTs against per-polynomial NttTable transforms, and the tensor product against
//! schoolbook negacyclic products.

mod common;

use common::backends;
use pimhe_exec::{Backend, ExecError};
use pimhe_ring::{PolyBatch, Representation, RingError};
use pimhe_testkit::inputs::{basis_of, distinct_primes, random_batch, rng};
use pimhe_testkit::oracle::schoolbook;

#[test]
fn ntt_and_intt_match_per_polynomial_tables() {
    let mut rng = rng(40);
    for n in [16usize, 256, 1024] {
        let primes = distinct_primes(n, &[30, 27, 20]);
        let basis = basis_of(n, &primes);
        let a = random_batch(&mut rng, &basis, 5, Representation::Coefficient);
        let b = random_batch(&mut rng, &basis, 5, Representation::Ntt);
        let mut results = Vec::new();
        for be in backends() {
            let mut buf = be.upload(a.clone()).unwrap();
            be.ntt(&mut buf).unwrap();
            let forward = be.download(&buf).unwrap();
            assert_eq!(forward.representation(), Representation::Ntt);
            for l in 0..basis.len() {
                for k in 0..5 {
                    let mut expected = a.poly_limb(l, k).to_vec();
                    basis.table(l).forward(&mut expected);
                    assert_eq!(forward.poly_limb(l, k), expected.as_slice(), "forward n={n} l={l} k={k}");
                }
            }
            // Inverse on an independent NTT-form batch (not just our own output).
            let mut buf_b = be.upload(b.clone()).unwrap();
            be.intt(&mut buf_b).unwrap();
            let inverse = be.download(&buf_b).unwrap();
            assert_eq!(inverse.representation(), Representation::Coefficient);
            for l in 0..basis.len() {
                for k in 0..5 {
                    let mut expected = b.poly_limb(l, k).to_vec();
                    basis.table(l).inverse(&mut expected);
                    assert_eq!(inverse.poly_limb(l, k), expected.as_slice(), "inverse n={n} l={l} k={k}");
                }
            }
            be.intt(&mut buf).unwrap();
            assert_eq!(be.download(&buf).unwrap(), a);
            results.push((forward, inverse));
        }
        assert_eq!(results[0], results[1], "1 and 3 threads differ");
    }
}

#[test]
fn transforms_refuse_the_wrong_representation() {
    let mut rng = rng(41);
    let n = 32;
    let basis = basis_of(n, &distinct_primes(n, &[30, 25]));
    for be in backends() {
        let ntt = random_batch(&mut rng, &basis, 2, Representation::Ntt);
        let mut buf = ntt.clone();
        let err = be.ntt(&mut buf).unwrap_err();
        assert!(matches!(
            err,
            ExecError::Ring(RingError::WrongRepresentation {
                operation: "ntt",
                expected: Representation::Coefficient,
                found: Representation::Ntt
            })
        ));
        assert_eq!(buf, ntt);
        let coeff = random_batch(&mut rng, &basis, 2, Representation::Coefficient);
        let mut buf = coeff.clone();
        let err = be.intt(&mut buf).unwrap_err();
        assert!(matches!(
            err,
            ExecError::Ring(RingError::WrongRepresentation {
                operation: "intt",
                expected: Representation::Ntt,
                found: Representation::Coefficient
            })
        ));
        assert_eq!(buf, coeff);
    }
}

#[test]
fn tensor_is_the_negacyclic_ciphertext_product() {
    let mut rng = rng(42);
    for (n, count) in [(16usize, 3usize), (128, 2)] {
        let primes = distinct_primes(n, &[30, 29, 23]);
        let basis = basis_of(n, &primes);
        let inputs: Vec<PolyBatch> =
            (0..4).map(|_| random_batch(&mut rng, &basis, count, Representation::Coefficient)).collect();
        let mut outputs = Vec::new();
        for be in backends() {
            let mut bufs: Vec<PolyBatch> = inputs.iter().map(|x| be.upload(x.clone()).unwrap()).collect();
            for buf in bufs.iter_mut() {
                be.ntt(buf).unwrap();
            }
            let [mut d0, mut d1, mut d2] = be.tensor(&bufs[0], &bufs[1], &bufs[2], &bufs[3]).unwrap();
            for d in [&mut d0, &mut d1, &mut d2] {
                assert_eq!(d.representation(), Representation::Ntt);
                be.intt(d).unwrap();
            }
            let (a0, a1, b0, b1) = (&inputs[0], &inputs[1], &inputs[2], &inputs[3]);
            for (l, &q) in primes.iter().enumerate() {
                for k in 0..count {
                    let p = |x: &PolyBatch, y: &PolyBatch| schoolbook(x.poly_limb(l, k), y.poly_limb(l, k), q);
                    assert_eq!(d0.poly_limb(l, k), p(a0, b0).as_slice(), "d0 n={n} l={l} k={k}");
                    let cross: Vec<u32> = p(a0, b1)
                        .iter()
                        .zip(p(a1, b0))
                        .map(|(&x, y)| ((x as u64 + y as u64) % q as u64) as u32)
                        .collect();
                    assert_eq!(d1.poly_limb(l, k), cross.as_slice(), "d1 n={n} l={l} k={k}");
                    assert_eq!(d2.poly_limb(l, k), p(a1, b1).as_slice(), "d2 n={n} l={l} k={k}");
                }
            }
            outputs.push([d0, d1, d2]);
        }
        assert_eq!(outputs[0], outputs[1], "1 and 3 threads differ");
    }
}

#[test]
fn tensor_with_extreme_residues_does_not_overflow() {
    // All residues q-1: (q-1)^2 + (q-1)^2 must reduce correctly (the cross term is summed
    // before one reduction).
    let n = 16;
    let primes = distinct_primes(n, &[30, 29]);
    let basis = basis_of(n, &primes);
    let mut data = Vec::new();
    for &q in &primes {
        data.extend(std::iter::repeat_n(q - 1, n));
    }
    let x = PolyBatch::from_data(&basis, 1, Representation::Ntt, data).unwrap();
    for be in backends() {
        let [d0, d1, d2] = be.tensor(&x, &x, &x, &x).unwrap();
        for (l, &q) in primes.iter().enumerate() {
            let q = q as u64;
            assert!(d0.poly_limb(l, 0).iter().all(|&v| v == 1));
            assert!(d1.poly_limb(l, 0).iter().all(|&v| v as u64 == 2 % q));
            assert!(d2.poly_limb(l, 0).iter().all(|&v| v == 1));
        }
    }
}

#[test]
fn tensor_rejects_mismatched_operands() {
    let mut rng = rng(43);
    let n = 16;
    let primes = distinct_primes(n, &[30, 29, 28]);
    let basis = basis_of(n, &primes[..2]);
    let x = random_batch(&mut rng, &basis, 2, Representation::Ntt);
    let coeff = random_batch(&mut rng, &basis, 2, Representation::Coefficient);
    let one = random_batch(&mut rng, &basis, 1, Representation::Ntt);
    let wider = random_batch(&mut rng, &basis_of(n, &primes), 2, Representation::Ntt);
    for be in backends() {
        let err = be.tensor(&coeff, &coeff, &coeff, &coeff).unwrap_err();
        assert!(matches!(err, ExecError::Ring(RingError::WrongRepresentation { operation: "tensor", .. })), "{err:?}");
        for (i, bad) in [&coeff, &one, &wider].into_iter().enumerate() {
            let err = be.tensor(&x, bad, &x, &x).unwrap_err();
            assert!(matches!(err, ExecError::Shape { operation: "tensor", .. }), "case {i}: {err:?}");
            let err = be.tensor(&x, &x, &x, bad).unwrap_err();
            assert!(matches!(err, ExecError::Shape { operation: "tensor", .. }), "case {i}: {err:?}");
        }
    }
}
