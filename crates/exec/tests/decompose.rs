//! decompose_digits: each digit is the centred residue [x]_{q_i} lifted to every prime of the
//! extended basis, and the digits recombine to x modulo Q (checked with big-integer CRT).

mod common;

use std::sync::Arc;

use common::backends;
use num_bigint::BigInt;
use num_integer::Integer;
use num_traits::Zero;
use pimhe_exec::{Backend, ExecError};
use pimhe_ring::{PolyBatch, Representation, RingBasis};
use pimhe_testkit::bigint::{crt, crt_centred, inverse_mod, product};
use pimhe_testkit::inputs::{basis_of, distinct_primes, random_batch, residues_at, rng};
use pimhe_testkit::oracle::centre;

struct Setup {
    basis: Arc<RingBasis>,
    extended: Vec<Arc<RingBasis>>,
}

fn setup(n: usize) -> Setup {
    // Digit primes of mixed sizes; the extra prime is smaller than some digit primes and larger
    // than others, so the centred lift really is reduced modulo a different prime.
    let primes = distinct_primes(n, &[30, 24, 27, 26]);
    let (q, p) = (&primes[..3], primes[3]);
    let basis = basis_of(n, q);
    let extended = vec![basis.concat(&basis_of(n, &[p])).unwrap(), basis_of(n, &[p, q[2], q[0], q[1]])];
    Setup { basis, extended }
}

/// The digits, in coefficient form, as host batches.
fn digits_in_coefficient_form<B: Backend<Buffer = PolyBatch>>(
    be: &B,
    x: &PolyBatch,
    extended: &Arc<RingBasis>,
) -> Vec<PolyBatch> {
    let digits = be.decompose_digits(x, extended).unwrap();
    assert_eq!(digits.len(), x.basis().len());
    digits
        .into_iter()
        .map(|mut d| {
            assert_eq!(d.basis(), extended);
            assert_eq!(d.count(), x.count());
            assert_eq!(d.representation(), x.representation());
            if d.representation() == Representation::Ntt {
                be.intt(&mut d).unwrap();
            }
            d
        })
        .collect()
}

fn check_digits(x_coeff: &PolyBatch, extended: &Arc<RingBasis>, digits: &[PolyBatch], label: &str) {
    let q_primes = x_coeff.basis().primes();
    let ext_primes = extended.primes();
    let n = x_coeff.degree();
    let big_q = product(&q_primes);
    for k in 0..x_coeff.count() {
        for c in 0..n {
            let x = crt(&residues_at(x_coeff, k, c), &q_primes);
            let mut sum = BigInt::zero();
            for (i, &qi) in q_primes.iter().enumerate() {
                let centred = centre(x_coeff.poly_limb(i, k)[c] as u64, qi as u64);
                // Per limb: the centred residue reduced modulo that limb's prime.
                for (j, &r) in ext_primes.iter().enumerate() {
                    let expected = (centred as i128).rem_euclid(r as i128) as u32;
                    assert_eq!(digits[i].poly_limb(j, k)[c], expected, "{label}: digit {i} limb {j} k={k} c={c}");
                }
                // As an integer (CRT over the extended basis): exactly the centred residue.
                let d = crt_centred(&residues_at(&digits[i], k, c), &ext_primes);
                assert_eq!(d, BigInt::from(centred), "{label}: digit {i} integer k={k} c={c}");
                let q_hat = &big_q / BigInt::from(qi);
                let q_hat_inv = inverse_mod(&q_hat, qi);
                sum += d * q_hat * q_hat_inv;
            }
            assert_eq!(sum.mod_floor(&big_q), x, "{label}: recombination k={k} c={c}");
        }
    }
}

#[test]
fn digits_are_centred_residues_and_recombine_to_x() {
    let mut rng = rng(50);
    for n in [16usize, 256] {
        let s = setup(n);
        let x = random_batch(&mut rng, &s.basis, 2, Representation::Coefficient);
        let mut x_ntt = x.clone();
        x_ntt.to_ntt().unwrap();
        for extended in &s.extended {
            let mut per_backend = Vec::new();
            for be in backends() {
                let from_coeff = digits_in_coefficient_form(&be, &x, extended);
                check_digits(&x, extended, &from_coeff, &format!("coefficient n={n} {extended}"));
                let from_ntt = digits_in_coefficient_form(&be, &x_ntt, extended);
                check_digits(&x, extended, &from_ntt, &format!("NTT n={n} {extended}"));
                // NTT-form digits are the transforms of the coefficient-form ones.
                let ntt_digits = be.decompose_digits(&x_ntt, extended).unwrap();
                for (d_ntt, d_coeff) in ntt_digits.iter().zip(&from_coeff) {
                    let mut expected = d_coeff.clone();
                    expected.to_ntt().unwrap();
                    assert_eq!(d_ntt, &expected);
                }
                per_backend.push((from_coeff, ntt_digits));
            }
            assert_eq!(per_backend[0], per_backend[1], "1 and 3 threads differ");
        }
    }
}

#[test]
fn digits_of_extreme_residues() {
    // Residues 0, 1, (q-1)/2, (q+1)/2 and q-1 at each digit prime: the centring boundary.
    let n = 16;
    let s = setup(n);
    let primes = s.basis.primes();
    let mut data = Vec::new();
    for &q in &primes {
        let pattern = [0, 1, (q - 1) / 2, q.div_ceil(2), q - 1, q - 2, 2, q / 3];
        for c in 0..n {
            data.push(pattern[c % pattern.len()]);
        }
    }
    let x = PolyBatch::from_data(&s.basis, 1, Representation::Coefficient, data).unwrap();
    for extended in &s.extended {
        for be in backends() {
            let digits = digits_in_coefficient_form(&be, &x, extended);
            check_digits(&x, extended, &digits, "extremes");
        }
    }
}

#[test]
fn extended_basis_must_contain_the_input_primes() {
    let mut rng = rng(51);
    let n = 16;
    let primes = distinct_primes(n, &[30, 28, 26]);
    let x = random_batch(&mut rng, &basis_of(n, &primes[..2]), 1, Representation::Ntt);
    let x_copy = x.clone();
    let missing = basis_of(n, &[primes[0], primes[2]]);
    for be in backends() {
        let err = be.decompose_digits(&x, &missing).err().unwrap();
        assert!(matches!(err, ExecError::Shape { operation: "decompose_digits", .. }), "{err:?}");
        assert_eq!(x, x_copy);
    }
}
