//! Whole command lists in one launch: NTT -> TENSOR -> INTT (a ciphertext tensor product, as in
//! BGV multiplication), on several DPUs with different primes at once, checked against the CPU
//! computing the same products through pimhe-math.

mod emulator_support;

use emulator_support::{residues, set, Dpu};
use pimhe_math::Modulus;
use pimhe_pim::emulator::EmulatorConfig;
use pimhe_pim::layout::{PimheCommand, Variant};

/// Negacyclic product by schoolbook multiplication (independent of the NTT).
fn schoolbook(a: &[u32], b: &[u32], m: &Modulus) -> Vec<u32> {
    let n = a.len();
    let mut out = vec![0u32; n];
    for (i, &x) in a.iter().enumerate() {
        for (j, &y) in b.iter().enumerate() {
            let p = m.mul(x, y);
            let k = i + j;
            if k < n {
                out[k] = m.add(out[k], p);
            } else {
                out[k - n] = m.sub(out[k - n], p);
            }
        }
    }
    out
}

#[test]
fn ntt_tensor_intt_in_one_launch_on_several_dpus() {
    let n = 64;
    let count = 5; // sub-polynomials per operand (e.g. 5 ciphertext pairs), not a multiple of 16
    let primes = pimhe_math::ntt_primes(30, n, 2, &[]).unwrap();
    let small = pimhe_math::ntt_primes(20, n, 1, &[]).unwrap();
    let primes = [primes[0], primes[1], small[0]];
    for variant in Variant::ALL {
        let mut dpus = set(primes.len(), EmulatorConfig::default());
        let mut setups = Vec::new();
        for (dpu, &q) in primes.iter().enumerate() {
            let d = Dpu::new(q, n, 4);
            let c = count as u32;
            let (a0, a1, b0, b1) = (d.at(0), d.at(count), d.at(2 * count), d.at(3 * count));
            let (d0, d1, d2) = (d.at(4 * count), d.at(5 * count), d.at(6 * count));
            let commands = [
                // the four inputs are contiguous: one NTT command transforms all of them
                PimheCommand::ntt(a0, 4 * c),
                PimheCommand::tensor([d0, d1, d2], [a0, a1, b0, b1], c),
                PimheCommand::intt(d0, 3 * c),
            ];
            d.load(&mut dpus, dpu, variant, &commands);
            let inputs = residues(4 * count * n, q, 99 + dpu as u64);
            d.put(&mut dpus, dpu, 0, &inputs);
            setups.push((d, inputs));
        }
        let all: Vec<usize> = (0..primes.len()).collect();
        dpus.launch(&all).unwrap();
        for (dpu, (d, inputs)) in setups.iter().enumerate() {
            let m = d.tables.modulus;
            let out = d.get(&dpus, dpu, 4 * count, 3 * count * n);
            let poly = |k: usize, i: usize| &inputs[(k * count + i) * n..(k * count + i + 1) * n];
            for i in 0..count {
                let (a0, a1, b0, b1) = (poly(0, i), poly(1, i), poly(2, i), poly(3, i));
                let want0 = schoolbook(a0, b0, &m);
                let x = schoolbook(a0, b1, &m);
                let y = schoolbook(a1, b0, &m);
                let want1: Vec<u32> = x.iter().zip(&y).map(|(&u, &v)| m.add(u, v)).collect();
                let want2 = schoolbook(a1, b1, &m);
                let got = |k: usize| &out[(k * count + i) * n..(k * count + i + 1) * n];
                assert_eq!(got(0), &want0[..], "d0 dpu {dpu} ct {i} {variant:?}");
                assert_eq!(got(1), &want1[..], "d1 dpu {dpu} ct {i} {variant:?}");
                assert_eq!(got(2), &want2[..], "d2 dpu {dpu} ct {i} {variant:?}");
            }
            // The inputs stay in NTT form.
            assert_eq!(d.get(&dpus, dpu, 0, 4 * count * n), d.cpu_ntt(inputs));
        }
    }
}

#[test]
fn data_stays_resident_across_launches_and_commands_chain() {
    // ADD then MAC then MULC then SUB on the same buffers, then a second launch that undoes the
    // NTT of the first: results of one command feed the next (the barrier between them).
    let n = 512;
    let q = pimhe_math::ntt_primes(28, n, 1, &[]).unwrap()[0];
    let m = Modulus::new(q as u64).unwrap();
    let d = Dpu::new(q, n, 6);
    let count = 33;
    let c = count as u32;
    let (a, b, acc) = (d.at(0), d.at(count), d.at(2 * count));
    let va = residues(count * n, q, 1);
    let vb = residues(count * n, q, 2);
    let vacc = residues(count * n, q, 3);
    let scalar = 123_456_789 % q;
    for variant in Variant::ALL {
        let mut dpus = set(1, EmulatorConfig::default());
        d.load(
            &mut dpus,
            0,
            variant,
            &[
                PimheCommand::add(acc, acc, a, c),
                PimheCommand::mac(acc, a, b, c),
                PimheCommand::mulc(acc, acc, scalar, &m, c),
                PimheCommand::sub(acc, acc, b, c),
                PimheCommand::ntt(acc, c),
            ],
        );
        d.put(&mut dpus, 0, 0, &va);
        d.put(&mut dpus, 0, count, &vb);
        d.put(&mut dpus, 0, 2 * count, &vacc);
        dpus.launch(&[0]).unwrap();
        let want: Vec<u32> = (0..count * n)
            .map(|i| {
                let x = m.add(vacc[i], va[i]);
                let x = m.mul_add(va[i], vb[i], x);
                m.sub(m.mul(x, scalar), vb[i])
            })
            .collect();
        assert_eq!(d.get(&dpus, 0, 2 * count, count * n), d.cpu_ntt(&want), "{variant:?}");
        // second launch: only the inverse
        d.load(&mut dpus, 0, variant, &[PimheCommand::intt(acc, c)]);
        dpus.launch(&[0]).unwrap();
        assert_eq!(d.get(&dpus, 0, 2 * count, count * n), want, "{variant:?}");
    }
}
