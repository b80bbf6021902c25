//! Every opcode of the DPU program, both arithmetic variants, against the CPU (pimhe-math's
//! NttTable and per-element Modulus arithmetic) as the oracle: degrees 16 ..= 4096 (and one
//! 32768 NTT), primes of 30 bits and fewer, sub-polynomial counts of 1, odd counts and counts
//! that do not divide among the tasklets, tasklet counts from 1 to v1A's 24.

mod emulator_support;

use emulator_support::{primes_for, residues, set, Dpu};
use pimhe_math::Modulus;
use pimhe_pim::emulator::{DpuGeneration, EmulatorConfig};
use pimhe_pim::layout::{PimheCommand, Variant};

/// Runs all eight opcodes in one launch on disjoint operands and checks each against the CPU.
fn check_all_ops(q: u32, n: usize, count: usize, variant: Variant, config: EmulatorConfig, seed: u64) {
    let d = Dpu::new(q, n, 8);
    let m = Modulus::new(q as u64).unwrap();
    let len = n * count;
    let c = count as u32;
    // Operand slots, each `count` sub-polynomials.
    let slot = |k: usize| d.at(k * count);
    let inputs: Vec<Vec<u32>> = (0..12).map(|k| residues(len, q, seed * 100 + k as u64)).collect();
    let scalar = residues(1, q, seed ^ 0xabc)[0];
    let commands = [
        PimheCommand::ntt(slot(0), c),
        PimheCommand::intt(slot(1), c),
        PimheCommand::add(slot(2), slot(2), slot(3), c),
        PimheCommand::sub(slot(4), slot(4), slot(5), c),
        PimheCommand::mul(slot(6), slot(6), slot(7), c),
        PimheCommand::mac(slot(8), slot(9), slot(10), c),
        PimheCommand::mulc(slot(11), slot(11), scalar, &m, c),
        PimheCommand::tensor([slot(12), slot(13), slot(14)], [slot(15), slot(16), slot(17), slot(18)], c),
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
    // Inputs of other operations are untouched.
    assert_eq!(get(3), inputs[3], "ADD's second operand {what}");
    assert_eq!(get(15), t[0], "TENSOR's a0 {what}");
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
fn largest_degree_ntt_and_intt() {
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
fn extreme_residues() {
    // All zeros, all q - 1, and alternating: the lazy bounds are exercised at their edges.
    let n = 256;
    for q in primes_for(n) {
        let m = Modulus::new(q as u64).unwrap();
        let d = Dpu::new(q, n, 4);
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
                    ],
                );
                for k in 0..4 {
                    d.put(&mut dpus, 0, k, &pattern);
                }
                dpus.launch(&[0]).unwrap();
                assert_eq!(d.get(&dpus, 0, 0, n), d.cpu_ntt(&pattern));
                assert_eq!(d.get(&dpus, 0, 1, n), d.cpu_intt(&pattern));
                assert_eq!(d.get(&dpus, 0, 2, n), pattern.iter().map(|&x| m.mul(x, x)).collect::<Vec<_>>());
                assert_eq!(d.get(&dpus, 0, 3, n), pattern.iter().map(|&x| m.mul(x, q - 1)).collect::<Vec<_>>());
            }
        }
    }
}
