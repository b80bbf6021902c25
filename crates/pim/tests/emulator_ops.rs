//! Every opcode of the DPU program, both arithmetic variants, against the CPU (pimhe-math's
//! NttTable and per-element Modulus arithmetic; automorphisms by their definition on
//! coefficients, and in NTT form through the transforms) as the oracle: degrees 16 ..= 4096
//! (and one 32768 NTT, automorphisms at 32768 and 65536; emulator_large_n.rs has the other
//! large-N kernels), primes of 30 bits and fewer, sub-polynomial counts of 1, odd counts and
//! counts that do not divide among the tasklets, tasklet counts from 1 to v1A's 24.

mod emulator_support;

use emulator_support::{primes_for, residues, set, Dpu};
use pimhe_math::Modulus;
use pimhe_pim::emulator::{DpuGeneration, EmulatorConfig};
use pimhe_pim::layout::{PimheCommand, Variant};
use pimhe_testkit::oracle::{automorphism_residues, pow_mod};

/// X -> X^k of every sub-polynomial of `data` by its definition: in coefficient form directly,
/// in NTT form as NTT(sigma_k(INTT(x))).
fn automorphism_oracle(d: &Dpu, data: &[u32], k: u32, ntt_form: bool) -> Vec<u32> {
    let n = d.n();
    if ntt_form {
        return d.cpu_ntt(&automorphism_oracle(d, &d.cpu_intt(data), k, false));
    }
    data.chunks(n).flat_map(|poly| automorphism_residues(poly, k as usize, d.q())).collect()
}

/// A Galois element below 2N from `seed`: 5^seed, conjugated for odd seeds.
fn galois_element(n: usize, seed: u64) -> u32 {
    let two_n = 2 * n as u64;
    let k = pow_mod(5, seed, two_n);
    (if seed % 2 == 1 { two_n - k } else { k }) as u32
}

/// Runs every opcode in one launch on disjoint operands and checks each against the CPU. The
/// NTT-form automorphism runs first and again after the other commands (which overwrite the
/// WRAM its bit-reversal table is kept in).
fn check_all_ops(q: u32, n: usize, count: usize, variant: Variant, config: EmulatorConfig, seed: u64) {
    let d = Dpu::new(q, n, 11);
    let m = Modulus::new(q as u64).unwrap();
    let len = n * count;
    let c = count as u32;
    // Operand slots, each `count` sub-polynomials.
    let slot = |k: usize| d.at(k * count);
    let inputs: Vec<Vec<u32>> = (0..12).map(|k| residues(len, q, seed * 100 + k as u64)).collect();
    let scalar = residues(1, q, seed ^ 0xabc)[0];
    let (k, k_later) = (galois_element(n, seed), (2 * n - 1) as u32);
    let commands = [
        PimheCommand::automorphism(slot(19), slot(20), k, true, c),
        PimheCommand::ntt(slot(0), c),
        PimheCommand::intt(slot(1), c),
        PimheCommand::add(slot(2), slot(2), slot(3), c),
        PimheCommand::sub(slot(4), slot(4), slot(5), c),
        PimheCommand::mul(slot(6), slot(6), slot(7), c),
        PimheCommand::mac(slot(8), slot(9), slot(10), c),
        PimheCommand::mulc(slot(11), slot(11), scalar, &m, c),
        PimheCommand::tensor([slot(12), slot(13), slot(14)], [slot(15), slot(16), slot(17), slot(18)], c),
        PimheCommand::automorphism(slot(21), slot(20), k_later, true, c),
        PimheCommand::automorphism(slot(22), slot(23), k, false, c),
    ];
    let mut dpus = set(1, config.clone());
    d.load(&mut dpus, 0, variant, &commands);
    for (k, v) in inputs.iter().enumerate() {
        d.put(&mut dpus, 0, k * count, v);
    }
    let t: Vec<Vec<u32>> = (0..4).map(|k| residues(len, q, seed * 7 + 1000 + k)).collect();
    for (k, v) in t.iter().enumerate() {
        d.put(&mut dpus, 0, (15 + k) * count, v);
    }
    let (ntt_input, coefficient_input) = (residues(len, q, seed * 11 + 1), residues(len, q, seed * 11 + 2));
    d.put(&mut dpus, 0, 20 * count, &ntt_input);
    d.put(&mut dpus, 0, 23 * count, &coefficient_input);
    let report = dpus.launch(&[0]).unwrap();
    assert_eq!(report.dpus[0].1.tasklets.len(), config.tasklets as usize);

    let get = |k: usize| d.get(&dpus, 0, k * count, len);
    let what = format!("q={q} n={n} count={count} {variant:?} tasklets={}", config.tasklets);
    assert_eq!(get(0), d.cpu_ntt(&inputs[0]), "NTT {what}");
    assert_eq!(get(1), d.cpu_intt(&inputs[1]), "INTT {what}");
    let zip =
        |a: &[u32], b: &[u32], f: &dyn Fn(u32, u32) -> u32| a.iter().zip(b).map(|(&x, &y)| f(x, y)).collect::<Vec<_>>();
    assert_eq!(get(2), zip(&inputs[2], &inputs[3], &|x, y| m.add(x, y)), "ADD {what}");
    assert_eq!(get(4), zip(&inputs[4], &inputs[5], &|x, y| m.sub(x, y)), "SUB {what}");
    assert_eq!(get(6), zip(&inputs[6], &inputs[7], &|x, y| m.mul(x, y)), "MUL {what}");
    let mac: Vec<u32> = (0..len).map(|i| m.mul_add(inputs[9][i], inputs[10][i], inputs[8][i])).collect();
    assert_eq!(get(8), mac, "MAC {what}");
    assert_eq!(get(11), inputs[11].iter().map(|&x| m.mul(x, scalar)).collect::<Vec<_>>(), "MULC {what}");
    let (a0, a1, b0, b1) = (&t[0], &t[1], &t[2], &t[3]);
    assert_eq!(get(12), zip(a0, b0, &|x, y| m.mul(x, y)), "TENSOR d0 {what}");
    let d1: Vec<u32> = (0..len).map(|i| m.add(m.mul(a0[i], b1[i]), m.mul(a1[i], b0[i]))).collect();
    assert_eq!(get(13), d1, "TENSOR d1 {what}");
    assert_eq!(get(14), zip(a1, b1, &|x, y| m.mul(x, y)), "TENSOR d2 {what}");
    assert_eq!(get(19), automorphism_oracle(&d, &ntt_input, k, true), "AUTOMORPHISM k={k} NTT form {what}");
    assert_eq!(get(21), automorphism_oracle(&d, &ntt_input, k_later, true), "AUTOMORPHISM k=2N-1 NTT form {what}");
    assert_eq!(
        get(22),
        automorphism_oracle(&d, &coefficient_input, k, false),
        "AUTOMORPHISM k={k} coefficients {what}"
    );
    // Inputs of other operations are untouched.
    assert_eq!(get(3), inputs[3], "ADD's second operand {what}");
    assert_eq!(get(15), t[0], "TENSOR's a0 {what}");
    assert_eq!(get(20), ntt_input, "AUTOMORPHISM's input {what}");
}

#[test]
fn every_opcode_both_variants_all_degrees() {
    let mut seed = 1;
    for n in [16usize, 32, 64, 128, 256, 512, 1024, 2048, 4096] {
        let primes = primes_for(n);
        assert!(primes.len() >= 2, "primes for N = {n}");
        for (i, &q) in primes.iter().enumerate() {
            // counts: 1, odd counts, more and fewer sub-polynomials than tasklets
            let count = [1usize, 3, 17][i % 3];
            for variant in Variant::ALL {
                check_all_ops(q, n, count, variant, EmulatorConfig::default(), seed);
                seed += 1;
            }
        }
    }
}

#[test]
fn odd_tasklet_counts_and_v1a() {
    let n = 1024;
    let q = primes_for(n)[0];
    for (tasklets, count, generation) in [
        (1u32, 3usize, DpuGeneration::V1B),
        (3, 7, DpuGeneration::V1B),
        (11, 13, DpuGeneration::V1B),
        (24, 25, DpuGeneration::V1A),
    ] {
        let config = EmulatorConfig { generation, tasklets, ..EmulatorConfig::default() };
        for variant in Variant::ALL {
            check_all_ops(q, n, count, variant, config.clone(), tasklets as u64);
        }
    }
}

#[test]
fn ntt_and_intt_at_2_15() {
    let n = 32768;
    let q = pimhe_math::ntt_primes(30, n, 1, &[]).unwrap()[0];
    let d = Dpu::new(q, n, 2);
    let data = residues(n, q, 42);
    for variant in Variant::ALL {
        let mut dpus = set(1, EmulatorConfig::default());
        d.load(&mut dpus, 0, variant, &[PimheCommand::ntt(d.at(0), 1), PimheCommand::intt(d.at(1), 1)]);
        d.put(&mut dpus, 0, 0, &data);
        d.put(&mut dpus, 0, 1, &data);
        dpus.launch(&[0]).unwrap();
        assert_eq!(d.get(&dpus, 0, 0, n), d.cpu_ntt(&data), "NTT N=32768 {variant:?}");
        assert_eq!(d.get(&dpus, 0, 1, n), d.cpu_intt(&data), "INTT N=32768 {variant:?}");
    }
}

#[test]
fn automorphisms_at_2_15_and_2_16() {
    // 2^16: the Galois element and the block index products pass 2^16 (large-N index math).
    let cases = [1usize << 15, 1 << 16].into_iter().flat_map(|n| Variant::ALL.map(|v| (n, v)));
    for (n, variant) in cases {
        let q = pimhe_math::ntt_primes(30, n, 1, &[]).unwrap()[0];
        let d = Dpu::new(q, n, 2);
        let data = residues(2 * n, q, 43);
        let k = galois_element(n, 12345);
        let mut dpus = set(1, EmulatorConfig::default());
        d.load(
            &mut dpus,
            0,
            variant,
            &[
                PimheCommand::automorphism(d.at(2), d.at(0), k, true, 2),
                PimheCommand::automorphism(d.at(4), d.at(0), k, false, 2),
            ],
        );
        d.put(&mut dpus, 0, 0, &data);
        dpus.launch(&[0]).unwrap();
        assert_eq!(d.get(&dpus, 0, 2, 2 * n), automorphism_oracle(&d, &data, k, true), "NTT form {variant:?}");
        assert_eq!(d.get(&dpus, 0, 4, 2 * n), automorphism_oracle(&d, &data, k, false), "coefficients {variant:?}");
    }
}

#[test]
fn automorphisms_of_every_element_at_small_degrees() {
    // Every odd k below 2N at N = 16 and 32 (a block is the whole sub-polynomial) and a spread
    // of them at 256 (several blocks), with 5 tasklets dealing 3 sub-polynomials' blocks.
    for n in [16usize, 32, 256] {
        let q = primes_for(n)[0];
        let d = Dpu::new(q, n, 2);
        let data = residues(3 * n, q, n as u64);
        let step = if n == 256 { 26 } else { 2 };
        for k in (1..2 * n as u32).step_by(step) {
            let mut dpus = set(1, EmulatorConfig::default().with_tasklets(5));
            d.load(
                &mut dpus,
                0,
                Variant::Best,
                &[
                    PimheCommand::automorphism(d.at(3), d.at(0), k, true, 3),
                    PimheCommand::automorphism(d.at(6), d.at(0), k, false, 3),
                ],
            );
            d.put(&mut dpus, 0, 0, &data);
            dpus.launch(&[0]).unwrap();
            assert_eq!(d.get(&dpus, 0, 3, 3 * n), automorphism_oracle(&d, &data, k, true), "NTT form n={n} k={k}");
            assert_eq!(d.get(&dpus, 0, 6, 3 * n), automorphism_oracle(&d, &data, k, false), "coefficients n={n} k={k}");
        }
    }
}

#[test]
fn extreme_residues() {
    // All zeros, all q - 1, and alternating: the lazy bounds are exercised at their edges.
    let n = 256;
    for q in primes_for(n) {
        let m = Modulus::new(q as u64).unwrap();
        let d = Dpu::new(q, n, 5);
        let conjugation = (2 * n - 1) as u32;
        for pattern in [vec![0u32; n], vec![q - 1; n], (0..n).map(|i| if i % 2 == 0 { q - 1 } else { 0 }).collect()] {
            for variant in Variant::ALL {
                let mut dpus = set(1, EmulatorConfig::default().with_tasklets(4));
                d.load(
                    &mut dpus,
                    0,
                    variant,
                    &[
                        PimheCommand::ntt(d.at(0), 1),
                        PimheCommand::intt(d.at(1), 1),
                        PimheCommand::mul(d.at(2), d.at(2), d.at(2), 1),
                        PimheCommand::mulc(d.at(3), d.at(3), q - 1, &m, 1),
                        PimheCommand::automorphism(d.at(4), d.at(5), conjugation, false, 1),
                    ],
                );
                d.put(&mut dpus, 0, 5, &pattern);
                for k in 0..4 {
                    d.put(&mut dpus, 0, k, &pattern);
                }
                dpus.launch(&[0]).unwrap();
                assert_eq!(d.get(&dpus, 0, 0, n), d.cpu_ntt(&pattern));
                assert_eq!(d.get(&dpus, 0, 1, n), d.cpu_intt(&pattern));
                assert_eq!(d.get(&dpus, 0, 2, n), pattern.iter().map(|&x| m.mul(x, x)).collect::<Vec<_>>());
                assert_eq!(d.get(&dpus, 0, 3, n), pattern.iter().map(|&x| m.mul(x, q - 1)).collect::<Vec<_>>());
                assert_eq!(d.get(&dpus, 0, 4, n), automorphism_oracle(&d, &pattern, conjugation, false));
            }
        }
    }
}
