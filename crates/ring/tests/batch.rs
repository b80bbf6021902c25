//! PolyBatch: limb-major layout, construction errors, NTT round trips and the copying
//! operations (select, poly, concat, restrict), each checked against direct indexing.

use pimhe_ring::{PolyBatch, Representation, RingBasis, RingError};
use pimhe_testkit::inputs::{basis, distinct_primes, random_batch, random_signed, rng};
use pimhe_testkit::oracle::{bit_reverse, evaluate, pow_mod, schoolbook};
use rand_chacha::rand_core::Rng;

#[test]
fn from_signed_places_residue_l_k_c_at_limb_major_index() {
    let mut rng = rng(10);
    for n in [16usize, 64] {
        let basis = basis(n, &[30, 25, 20]);
        let count = 3;
        let mut polys: Vec<Vec<i64>> = (0..count).map(|_| random_signed(&mut rng, n, 1 << 40)).collect();
        // Extremes of i64 and the values around each prime.
        polys[0][0] = i64::MIN;
        polys[0][1] = i64::MAX;
        polys[0][2] = -1;
        polys[0][3] = basis.primes()[0] as i64;
        polys[0][4] = -(basis.primes()[1] as i64);
        polys[0][5] = basis.primes()[2] as i64 - 1;
        let refs: Vec<&[i64]> = polys.iter().map(|p| p.as_slice()).collect();
        let batch = PolyBatch::from_signed(&basis, &refs).unwrap();
        assert_eq!(batch.count(), count);
        assert_eq!(batch.degree(), n);
        assert_eq!(batch.representation(), Representation::Coefficient);
        assert_eq!(batch.data().len(), basis.len() * count * n);
        let data = batch.data();
        for (l, &q) in basis.primes().iter().enumerate() {
            for (k, poly) in polys.iter().enumerate() {
                for (c, &value) in poly.iter().enumerate() {
                    let expected = (value as i128).rem_euclid(q as i128) as u32;
                    assert_eq!(data[(l * count + k) * n + c], expected, "l={l} k={k} c={c}");
                    assert_eq!(batch.poly_limb(l, k)[c], expected);
                    assert_eq!(batch.limb(l)[k * n + c], expected);
                }
            }
            // limb(l) is the contiguous slice of the whole data.
            assert_eq!(batch.limb(l), &data[l * count * n..(l + 1) * count * n]);
            assert!(std::ptr::eq(batch.limb(l).as_ptr(), data[l * count * n..].as_ptr()));
        }
    }
}

#[test]
fn from_data_keeps_layout_and_into_data_returns_it() {
    let mut rng = rng(11);
    let n = 32;
    let basis = basis(n, &[28, 29, 30, 27]);
    let count = 5;
    let mut data = Vec::new();
    for q in basis.primes() {
        for _ in 0..count * n {
            data.push(rng.next_u32() % q);
        }
    }
    // Make sure q - 1 (the largest reduced value) is accepted.
    data[7] = basis.primes()[0] - 1;
    let batch = PolyBatch::from_data(&basis, count, Representation::Ntt, data.clone()).unwrap();
    assert_eq!(batch.representation(), Representation::Ntt);
    for l in 0..basis.len() {
        for k in 0..count {
            for c in 0..n {
                assert_eq!(batch.poly_limb(l, k)[c], data[(l * count + k) * n + c]);
            }
        }
    }
    // Writes through poly_limb_mut / limb_mut land at the documented index.
    let mut batch = batch;
    batch.poly_limb_mut(2, 3)[5] = 1;
    batch.limb_mut(1)[4 * n + 9] = 2;
    let mut expected = data.clone();
    expected[(2 * count + 3) * n + 5] = 1;
    expected[(count + 4) * n + 9] = 2;
    assert_eq!(batch.into_data(), expected);
}

#[test]
fn from_data_rejects_wrong_length() {
    let n = 16;
    let basis = basis(n, &[30, 25]);
    for got in [0usize, 2 * 3 * n - 1, 2 * 3 * n + 1, 3 * n] {
        let err = PolyBatch::from_data(&basis, 3, Representation::Coefficient, vec![0; got]).unwrap_err();
        assert_eq!(err, RingError::WrongDataLength { count: 3, limbs: 2, n, expected: 2 * 3 * n, got }, "got={got}");
    }
    assert!(PolyBatch::from_data(&basis, 3, Representation::Coefficient, vec![0; 2 * 3 * n]).is_ok());
}

#[test]
fn from_data_rejects_unreduced_residue() {
    let n = 16;
    let basis = basis(n, &[30, 20, 25]);
    let primes = basis.primes();
    let count = 2;
    let len = basis.len() * count * n;
    // Value q at limb 1, poly 1, coeff 3: index inside the limb is n + 3.
    let mut data = vec![0u32; len];
    data[(count + 1) * n + 3] = primes[1];
    let err = PolyBatch::from_data(&basis, count, Representation::Coefficient, data).unwrap_err();
    assert_eq!(err, RingError::UnreducedResidue { limb: 1, index: n + 3, value: primes[1], modulus: primes[1] });
    // A value valid for limb 0 (30-bit prime) but not for limb 2 (25-bit prime).
    let mut data = vec![0u32; len];
    data[2 * count * n] = primes[2] + 5;
    assert!(primes[2] + 5 < primes[0]);
    let err = PolyBatch::from_data(&basis, count, Representation::Ntt, data).unwrap_err();
    assert_eq!(err, RingError::UnreducedResidue { limb: 2, index: 0, value: primes[2] + 5, modulus: primes[2] });
    // u32::MAX in the last slot.
    let mut data = vec![0u32; len];
    data[len - 1] = u32::MAX;
    let err = PolyBatch::from_data(&basis, count, Representation::Ntt, data).unwrap_err();
    assert_eq!(err, RingError::UnreducedResidue { limb: 2, index: count * n - 1, value: u32::MAX, modulus: primes[2] });
}

#[test]
fn from_signed_rejects_wrong_polynomial_length() {
    let n = 16;
    let basis = basis(n, &[30]);
    let good = vec![1i64; n];
    let bad = vec![1i64; n + 1];
    let err = PolyBatch::from_signed(&basis, &[&good, &bad]).unwrap_err();
    assert!(matches!(err, RingError::WrongDataLength { expected, got, .. } if expected == n && got == n + 1));
    let short = vec![1i64; n - 1];
    assert!(matches!(
        PolyBatch::from_signed(&basis, &[&short]).unwrap_err(),
        RingError::WrongDataLength { got, .. } if got == n - 1
    ));
}

#[test]
fn to_ntt_evaluates_at_odd_powers_of_psi_in_bit_reversed_order() {
    let mut rng = rng(12);
    for n in [16usize, 64] {
        let basis = basis(n, &[30, 24]);
        let coeffs = random_batch(&mut rng, &basis, 2, Representation::Coefficient);
        let mut ntt = coeffs.clone();
        ntt.to_ntt().unwrap();
        assert_eq!(ntt.representation(), Representation::Ntt);
        let log_n = n.trailing_zeros();
        for l in 0..basis.len() {
            let q = basis.primes()[l] as u64;
            let psi = basis.table(l).root() as u64;
            // psi is a primitive 2N-th root of unity.
            assert_eq!(pow_mod(psi, n as u64, q), q - 1);
            for k in 0..2 {
                for j in 0..n {
                    let point = pow_mod(psi, 2 * bit_reverse(j, log_n) as u64 + 1, q);
                    let expected = evaluate(coeffs.poly_limb(l, k), point, q);
                    assert_eq!(ntt.poly_limb(l, k)[j] as u64, expected, "n={n} l={l} k={k} j={j}");
                }
            }
        }
    }
}

#[test]
fn ntt_round_trip_and_products_match_schoolbook() {
    let mut rng = rng(13);
    for n in [16usize, 128, 1024] {
        let basis = basis(n, &[30, 29, 17]);
        let a = random_batch(&mut rng, &basis, 3, Representation::Coefficient);
        let b = random_batch(&mut rng, &basis, 3, Representation::Coefficient);
        let mut a_ntt = a.clone();
        a_ntt.to_ntt().unwrap();
        assert_ne!(a_ntt.data(), a.data());
        let mut back = a_ntt.clone();
        back.to_coefficient().unwrap();
        assert_eq!(back, a);

        if n <= 128 {
            let mut b_ntt = b.clone();
            b_ntt.to_ntt().unwrap();
            let mut prod = a_ntt.clone();
            for l in 0..basis.len() {
                let q = *basis.modulus(l);
                for k in 0..3 {
                    let y = b_ntt.poly_limb(l, k).to_vec();
                    for (x, y) in prod.poly_limb_mut(l, k).iter_mut().zip(y) {
                        *x = (*x as u64 * y as u64 % q.value() as u64) as u32;
                    }
                }
            }
            prod.to_coefficient().unwrap();
            for l in 0..basis.len() {
                for k in 0..3 {
                    let q = basis.primes()[l];
                    assert_eq!(prod.poly_limb(l, k), schoolbook(a.poly_limb(l, k), b.poly_limb(l, k), q).as_slice());
                }
            }
        }
    }
}

#[test]
fn transforms_refuse_the_wrong_representation_and_leave_data_alone() {
    let mut rng = rng(14);
    let basis = basis(32, &[30, 25]);
    let mut ntt = random_batch(&mut rng, &basis, 2, Representation::Ntt);
    let before = ntt.clone();
    let err = ntt.to_ntt().unwrap_err();
    assert!(matches!(
        err,
        RingError::WrongRepresentation { expected: Representation::Coefficient, found: Representation::Ntt, .. }
    ));
    assert_eq!(ntt, before);

    let mut coeff = random_batch(&mut rng, &basis, 2, Representation::Coefficient);
    let before = coeff.clone();
    let err = coeff.to_coefficient().unwrap_err();
    assert!(matches!(
        err,
        RingError::WrongRepresentation { expected: Representation::Ntt, found: Representation::Coefficient, .. }
    ));
    assert_eq!(coeff, before);
}

#[test]
fn select_and_poly_copy_the_indexed_polynomials() {
    let mut rng = rng(15);
    let n = 16;
    let basis = basis(n, &[30, 28, 26]);
    let batch = random_batch(&mut rng, &basis, 4, Representation::Ntt);
    let indices = [3usize, 0, 3, 1];
    let chosen = batch.select(&indices).unwrap();
    assert_eq!(chosen.count(), indices.len());
    assert_eq!(chosen.representation(), Representation::Ntt);
    assert_eq!(chosen.basis(), batch.basis());
    for l in 0..basis.len() {
        for (dst, &src) in indices.iter().enumerate() {
            for c in 0..n {
                assert_eq!(chosen.data()[(l * indices.len() + dst) * n + c], batch.data()[(l * 4 + src) * n + c]);
            }
        }
    }
    for k in 0..4 {
        let single = batch.poly(k).unwrap();
        assert_eq!(single.count(), 1);
        for l in 0..basis.len() {
            assert_eq!(single.limb(l), batch.poly_limb(l, k));
        }
    }
    assert_eq!(batch.select(&[0, 4]).unwrap_err(), RingError::OutOfRange { what: "polynomial", index: 4, size: 4 });
    assert!(matches!(batch.poly(7).unwrap_err(), RingError::OutOfRange { index: 7, size: 4, .. }));
    let empty = batch.select(&[]).unwrap();
    assert_eq!(empty.count(), 0);
    assert!(empty.data().is_empty());
}

#[test]
fn concat_joins_polynomials_in_order() {
    let mut rng = rng(16);
    let n = 16;
    let basis = basis(n, &[30, 28, 26]);
    let parts = [
        random_batch(&mut rng, &basis, 2, Representation::Coefficient),
        random_batch(&mut rng, &basis, 1, Representation::Coefficient),
        random_batch(&mut rng, &basis, 3, Representation::Coefficient),
    ];
    let joined = PolyBatch::concat(&parts).unwrap();
    assert_eq!(joined.count(), 6);
    assert_eq!(joined.representation(), Representation::Coefficient);
    let owner = [(0usize, 0usize), (0, 1), (1, 0), (2, 0), (2, 1), (2, 2)];
    for l in 0..basis.len() {
        for (k, &(part, index)) in owner.iter().enumerate() {
            assert_eq!(&joined.data()[(l * 6 + k) * n..(l * 6 + k + 1) * n], parts[part].poly_limb(l, index));
        }
    }
    // Concatenating the single polynomials of a batch rebuilds it.
    let singles: Vec<PolyBatch> = (0..6).map(|k| joined.poly(k).unwrap()).collect();
    assert_eq!(PolyBatch::concat(&singles).unwrap(), joined);

    assert!(matches!(PolyBatch::concat(&[]).unwrap_err(), RingError::OutOfRange { .. }));
    let other_basis = basis.prefix(2).unwrap();
    let foreign = random_batch(&mut rng, &other_basis, 1, Representation::Coefficient);
    assert!(matches!(PolyBatch::concat(&[parts[0].clone(), foreign]).unwrap_err(), RingError::BasisMismatch(_)));
    let ntt = random_batch(&mut rng, &basis, 1, Representation::Ntt);
    assert!(matches!(PolyBatch::concat(&[parts[0].clone(), ntt]).unwrap_err(), RingError::WrongRepresentation { .. }));
}

#[test]
fn restrict_drops_and_reorders_limbs() {
    let mut rng = rng(17);
    let n = 16;
    let primes = distinct_primes(n, &[30, 29, 28, 27]);
    let basis = RingBasis::new(n, &primes).unwrap();
    let batch = random_batch(&mut rng, &basis, 3, Representation::Ntt);
    for order in [vec![2usize, 0], vec![3, 2, 1, 0], vec![1], vec![0, 1, 2, 3]] {
        let target_primes: Vec<u32> = order.iter().map(|&i| primes[i]).collect();
        let target = RingBasis::new(n, &target_primes).unwrap();
        let restricted = batch.restrict(&target).unwrap();
        assert_eq!(restricted.basis().primes(), target_primes);
        assert_eq!(restricted.count(), 3);
        assert_eq!(restricted.representation(), Representation::Ntt);
        for (j, &src) in order.iter().enumerate() {
            for k in 0..3 {
                assert_eq!(restricted.poly_limb(j, k), batch.poly_limb(src, k));
            }
        }
    }
    // A prime the batch does not hold.
    let extra = distinct_primes(n, &[30, 29, 28, 27, 26])[4];
    let missing = RingBasis::new(n, &[primes[0], extra]).unwrap();
    assert!(matches!(batch.restrict(&missing).unwrap_err(), RingError::BasisMismatch(_)));
    // Same primes, different degree.
    let other_n = RingBasis::new(8, &primes[..2]).unwrap();
    assert!(matches!(batch.restrict(&other_n).unwrap_err(), RingError::BasisMismatch(_)));
}

#[test]
fn zeroize_clears_every_residue() {
    let mut rng = rng(18);
    let basis = basis(16, &[30, 25]);
    let mut batch = random_batch(&mut rng, &basis, 2, Representation::Ntt);
    assert!(batch.data().iter().any(|&x| x != 0));
    batch.zeroize();
    // The batch keeps its shape: 2 limbs x 2 polynomials x N = 16 residues, all zero.
    assert_eq!(batch.data().len(), 2 * 2 * 16, "zeroize must not shrink the residue vector");
    assert!(batch.data().iter().all(|&x| x == 0));
    for l in 0..2 {
        for k in 0..2 {
            assert_eq!(batch.poly_limb(l, k), &[0u32; 16]);
        }
    }
}

#[test]
fn bounded_signed_is_from_signed_within_the_bound_and_refuses_beyond_it() {
    let basis = basis(64, &[20, 20, 20]);
    let mut rng = rng(11);
    for bound in [0i64, 1, 20, 1000, 500_000] {
        let polys: Vec<Vec<i64>> = (0..3).map(|_| random_signed(&mut rng, 64, bound)).collect();
        let refs: Vec<&[i64]> = polys.iter().map(Vec::as_slice).collect();
        let expected = PolyBatch::from_signed(&basis, &refs).unwrap();
        assert_eq!(PolyBatch::from_bounded_signed(&basis, &refs, bound as u64).unwrap(), expected, "bound {bound}");
    }
    // The extremes of the bound are inside; one past it is refused without the value.
    let edge: Vec<i64> = (0..64).map(|i| if i % 2 == 0 { 20 } else { -20 }).collect();
    assert!(PolyBatch::from_bounded_signed(&basis, &[&edge], 20).is_ok());
    let mut over = edge.clone();
    over[7] = -21;
    let error = PolyBatch::from_bounded_signed(&basis, &[&over], 20).unwrap_err().to_string();
    assert_eq!(error, "a coefficient's magnitude exceeds the bound 20 it was promised to keep");
    // A bound not below every prime takes the general path: any value, still exact.
    let large: Vec<i64> = (0..64).map(|i| (i as i64 - 32) * 1_000_000_007).collect();
    let general = PolyBatch::from_bounded_signed(&basis, &[&large], u64::MAX).unwrap();
    assert_eq!(general, PolyBatch::from_signed(&basis, &[&large]).unwrap());
}
