//! The CPU backend's fused operations (Anaheim's TensorSq, CAccum, ModDownEp) against their
//! definitions (`pimhe_testkit::fused`) and against the unfused sequences of the operations
//! they replace, in both representations where allowed; and their refusals.

mod common;

use common::backends;
use pimhe_exec::{Backend, ExecError};
use pimhe_ring::Representation;
use pimhe_testkit::fused;
use pimhe_testkit::inputs::{basis, random_batch, rng};
use rand_chacha::rand_core::Rng;

#[test]
fn tensor_square_is_the_tensor_of_a_pair_with_itself() {
    let mut rng = rng(90);
    for backend in backends() {
        for n in [16usize, 1024] {
            let basis = basis(n, &[30, 29, 17]);
            let a0 = random_batch(&mut rng, &basis, 3, Representation::Ntt);
            let a1 = random_batch(&mut rng, &basis, 3, Representation::Ntt);
            let expected = fused::tensor_square(&a0, &a1);
            let (x0, x1) = (backend.upload(a0).unwrap(), backend.upload(a1).unwrap());
            let squared = backend.tensor_square(&x0, &x1).unwrap();
            let unfused = backend.tensor(&x0, &x1, &x0, &x1).unwrap();
            for part in 0..3 {
                assert_eq!(backend.download(&squared[part]).unwrap(), expected[part], "n={n} part {part}");
                assert_eq!(squared[part], unfused[part], "n={n} part {part}");
            }
        }
    }
}

#[test]
fn constant_accumulate_is_the_sum_of_scaled_terms() {
    let mut rng = rng(91);
    for backend in backends() {
        let basis = basis(256, &[30, 25, 20]);
        for representation in [Representation::Coefficient, Representation::Ntt] {
            for k in [1usize, 2, 5] {
                let terms: Vec<_> = (0..k).map(|_| random_batch(&mut rng, &basis, 2, representation)).collect();
                // Constants at and above the primes, to check the reduction.
                let constants: Vec<Vec<u64>> = (0..k).map(|_| (0..3).map(|_| rng.next_u64()).collect()).collect();
                let offset: Vec<u64> = (0..3).map(|_| rng.next_u64() >> 20).collect();
                for offset in [None, Some(offset.as_slice())] {
                    let host: Vec<_> = terms.iter().zip(&constants).map(|(t, c)| (t, c.as_slice())).collect();
                    let expected = fused::constant_accumulate(&host, offset);
                    let buffers: Vec<_> = terms.iter().map(|t| backend.upload(t.clone()).unwrap()).collect();
                    let args: Vec<_> = buffers.iter().zip(&constants).map(|(b, c)| (b, c.as_slice())).collect();
                    let got = backend.constant_accumulate(&args, offset).unwrap();
                    assert_eq!(got, expected, "{representation} k={k} offset {}", offset.is_some());
                    let mut unfused = backend.mul_limb_constants(args[0].0, args[0].1).unwrap();
                    for &(b, c) in &args[1..] {
                        backend.add_assign(&mut unfused, &backend.mul_limb_constants(b, c).unwrap()).unwrap();
                    }
                    if offset.is_none() {
                        assert_eq!(got, unfused, "{representation} k={k}");
                    }
                }
            }
        }
    }
}

#[test]
fn mod_down_epilogue_is_a_scaled_difference() {
    let mut rng = rng(92);
    for backend in backends() {
        let basis = basis(512, &[30, 28, 22, 19]);
        for representation in [Representation::Coefficient, Representation::Ntt] {
            let a = random_batch(&mut rng, &basis, 3, representation);
            let constants: Vec<u64> = (0..4).map(|_| rng.next_u64()).collect();
            for b_count in [3usize, 1] {
                let b = random_batch(&mut rng, &basis, b_count, representation);
                let expected = fused::mod_down_epilogue(&a, &b, &constants);
                let (x, y) = (backend.upload(a.clone()).unwrap(), backend.upload(b).unwrap());
                let got = backend.mod_down_epilogue(&x, &y, &constants).unwrap();
                assert_eq!(got, expected, "{representation} b holds {b_count}");
                let unfused = backend.mul_limb_constants(&backend.sub(&x, &y).unwrap(), &constants).unwrap();
                assert_eq!(got, unfused, "{representation} b holds {b_count}");
            }
        }
    }
}

#[test]
fn fused_operations_refuse_misuse() {
    let mut rng = rng(93);
    let backend = &backends()[0];
    let basis = basis(16, &[30, 29]);
    let ntt = backend.upload(random_batch(&mut rng, &basis, 2, Representation::Ntt)).unwrap();
    let coefficient = backend.upload(random_batch(&mut rng, &basis, 2, Representation::Coefficient)).unwrap();
    let three = backend.upload(random_batch(&mut rng, &basis, 3, Representation::Ntt)).unwrap();
    assert!(backend.tensor_square(&coefficient, &coefficient).is_err(), "tensor_square needs NTT form");
    assert!(backend.tensor_square(&ntt, &three).is_err(), "tensor_square needs equal shapes");
    let no_terms: [(&pimhe_ring::PolyBatch, &[u64]); 0] = [];
    let error = backend.constant_accumulate(&no_terms, None).unwrap_err();
    assert!(matches!(error, ExecError::Shape { .. }) && error.to_string().contains("at least one"), "{error}");
    let error = backend.constant_accumulate(&[(&ntt, &[1, 2, 3])], None).unwrap_err();
    assert!(error.to_string().contains("one per prime"), "{error}");
    assert!(backend.constant_accumulate(&[(&ntt, &[1, 2]), (&three, &[1, 2])], None).is_err());
    assert!(backend.constant_accumulate(&[(&ntt, &[1, 2])], Some(&[1])).is_err());
    assert!(backend.mod_down_epilogue(&ntt, &ntt, &[1]).is_err());
    assert!(backend.mod_down_epilogue(&ntt, &coefficient, &[1, 2]).is_err());
}
