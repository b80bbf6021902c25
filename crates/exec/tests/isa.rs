//! Every operation of CpuBackend gives the same batches on every instruction set: each
//! available ISA is pinned in turn and the outputs compared with the scalar ones. A test binary
//! of its own with one test, because `Isa::pin` is process-wide.

use pimhe_exec::{Backend, CpuBackend, KeySwitchPlan};
use pimhe_math::{Isa, Modulus};
use pimhe_ring::{PolyBatch, Representation};
use pimhe_testkit::inputs::{basis, random_batch, rng};

/// Every operation's outputs on four random batches, for one ISA.
fn outputs(backend: &CpuBackend, n: usize) -> Vec<PolyBatch> {
    let mut rng = rng(n as u64);
    let basis = basis(n, &[30, 29, 25, 22, 17]);
    let [x, y, z, w] = [(); 4].map(|_| random_batch(&mut rng, &basis, 3, Representation::Ntt));
    let mut out = vec![
        backend.add(&x, &y).unwrap(),
        backend.sub(&x, &y).unwrap(),
        backend.neg(&x).unwrap(),
        backend.mul(&x, &y).unwrap(),
        backend.mul_scalar(&x, 1 << 40).unwrap(),
        backend.sum(&x).unwrap(),
    ];
    let mut acc = z.clone();
    backend.mac(&mut acc, &x, &y).unwrap();
    backend.add_assign(&mut acc, &w).unwrap();
    out.push(acc);
    out.extend(backend.tensor(&x, &y, &z, &w).unwrap());
    let mut coefficients = x.clone();
    backend.intt(&mut coefficients).unwrap();
    out.push(coefficients.clone());
    backend.ntt(&mut coefficients).unwrap();
    out.push(coefficients);
    out.push(backend.mul_limb_constants(&x, &[3, 1 << 40, 0, u64::MAX, 65537]).unwrap());
    // Base conversion of x's first three primes to the last two, and to all five in NTT form.
    let (low, high) = (basis.prefix(3).unwrap(), basis.select(&[3, 4]).unwrap());
    let mut x_low = x.restrict(&low).unwrap();
    let x_low_ntt = x_low.clone();
    backend.intt(&mut x_low).unwrap();
    out.push(backend.base_convert(&x_low, &high).unwrap());
    out.push(backend.base_convert_ntt(&x_low, &x_low_ntt, &basis).unwrap());
    let t = Some(Modulus::new(65537).unwrap());
    out.push(backend.mod_down_last(&x, t).unwrap());
    let mut divided = x.clone();
    backend.mod_down_last_in_place(&mut divided, t).unwrap();
    out.push(divided);
    out.push(backend.mod_down(&x, 2, t).unwrap());
    let mut divided = x.clone();
    backend.mod_down_in_place(&mut divided, 2, t).unwrap();
    out.push(divided);
    // Key switching of x's first three primes, in digits {q0, q1} and {q2}; the last two primes
    // are the special ones.
    let c = x_low_ntt;
    let digits = [basis.select(&[0, 1]).unwrap(), basis.select(&[2]).unwrap()];
    let keys = [(y.clone(), z.clone()), (w.clone(), x.clone())];
    let plan = KeySwitchPlan { digits: &digits, extended: &basis, plain_modulus: t };
    let (c0, c1) = backend.key_switch(&c, &keys, &plan).unwrap();
    out.extend([c0, c1]);
    // Automorphisms in both forms (the NTT form's is the vector gather from N = 16 up), and the
    // hoisting halves of the same switch, the digits mapped by a rotation.
    let mut x_coefficients = x.clone();
    x_coefficients.to_coefficient().unwrap();
    for k in [5, 2 * n - 1] {
        out.push(backend.automorphism(&x, k).unwrap());
        out.push(backend.automorphism(&x_coefficients, k).unwrap());
    }
    let decomposed = backend.mod_up(&c, &plan).unwrap();
    let (c0, c1) = backend.key_switch_decomposed(&decomposed, &keys, Some(5), &plan).unwrap();
    out.extend(decomposed);
    out.extend([c0, c1]);
    out
}

#[test]
fn every_operation_is_identical_on_every_isa() {
    let backend = CpuBackend::new(Some(2)).unwrap();
    for n in [16, 64, 4096] {
        Isa::pin(Isa::Scalar).unwrap();
        let expected = outputs(&backend, n);
        for isa in Isa::ALL.into_iter().skip(1) {
            if Isa::pin(isa).is_err() {
                eprintln!("note: this CPU has no {isa}; the backend is not tested on it");
                continue;
            }
            assert_eq!(Isa::active(), isa);
            let got = outputs(&backend, n);
            for (k, (g, e)) in got.iter().zip(&expected).enumerate() {
                assert_eq!(g, e, "output {k} differs on {isa}, n={n}");
            }
        }
    }
    Isa::pin(Isa::detected()).unwrap();
}
