//! The fused element-wise opcodes (TENSOR_SQ, CMAC, CADD, SUB_MULC: Anaheim's TensorSq, CAccum
//! and ModDownEp) on one emulated DPU, both arithmetic variants, against per-element Modulus
//! arithmetic; their DMA traffic and (barrett) instruction counts against a hand count from
//! dpu/kernels/cost.h; and their modeled cost against the unfused command sequences they
//! replace.

mod emulator_support;

use emulator_support::{model_cycles, primes_for, residues, set, Dpu};
use pimhe_math::Modulus;
use pimhe_pim::counts::DpuCounts;
use pimhe_pim::emulator::{DpuGeneration, EmulatorConfig, EmulatorError};
use pimhe_pim::layout::{status, PimheCommand, Variant};

/// Runs the fused opcodes in one launch on disjoint operands of `count` sub-polynomials and
/// checks each against the CPU.
fn check_fused(q: u32, n: usize, count: usize, variant: Variant, config: EmulatorConfig, seed: u64) {
    let d = Dpu::new(q, n, 12);
    let m = Modulus::new(q as u64).unwrap();
    let (len, c) = (n * count, count as u32);
    let slot = |k: usize| d.at(k * count);
    let inputs: Vec<Vec<u32>> = (0..12).map(|k| residues(len, q, seed * 100 + k as u64)).collect();
    let single = residues(n, q, seed * 100 + 99);
    let s: Vec<u32> = (0..6).map(|k| residues(1, q, seed ^ (0xabc + k))[0]).collect();
    // The broadcast operand sits after the 16 operand slots.
    let broadcast_at = d.at(16 * count);
    let commands = [
        // TENSOR_SQ: a0 = 0, a1 = 1 -> 2, 3, 4.
        PimheCommand::tensor_square([slot(2), slot(3), slot(4)], slot(0), slot(1), c),
        // CAccum of three terms (5, 6, 7) into 8, offset in NTT form.
        PimheCommand::mulc(slot(8), slot(5), s[0], &m, c),
        PimheCommand::cmac(slot(8), slot(6), s[1], &m, c),
        PimheCommand::cmac(slot(8), slot(7), s[2], &m, c),
        PimheCommand::cadd(slot(8), slot(8), s[3], true, &m, c),
        // CADD in coefficient form: in place on 9, and from 9's copy 10 into 11.
        PimheCommand::cadd(slot(9), slot(9), s[3], false, &m, c),
        PimheCommand::cadd(slot(11), slot(10), s[4], false, &m, c),
        // SUB_MULC: (12 - 13) s5 -> 14, and (12 - broadcast) s5 -> 15.
        PimheCommand::sub_mulc(slot(14), slot(12), slot(13), s[5], false, &m, c),
        PimheCommand::sub_mulc(slot(15), slot(12), broadcast_at, s[5], true, &m, c),
    ];
    let mut dpus = set(1, config.clone());
    d.load(&mut dpus, 0, variant, &commands);
    for (k, at) in [0, 1, 5, 6, 7, 9, 10, 12, 13].into_iter().enumerate() {
        d.put(&mut dpus, 0, at * count, &inputs[k]);
    }
    d.put(&mut dpus, 0, 16 * count, &single);
    dpus.launch(&[0]).unwrap();

    let get = |k: usize| d.get(&dpus, 0, k * count, len);
    let what = format!("q={q} n={n} count={count} {variant:?} tasklets={}", config.tasklets);
    let map =
        |a: &[u32], f: &dyn Fn(usize, u32) -> u32| a.iter().enumerate().map(|(i, &x)| f(i, x)).collect::<Vec<_>>();
    let (a0, a1) = (&inputs[0], &inputs[1]);
    assert_eq!(get(2), map(a0, &|_, x| m.mul(x, x)), "TENSOR_SQ d0 {what}");
    assert_eq!(get(3), map(a0, &|i, x| m.add(m.mul(x, a1[i]), m.mul(x, a1[i]))), "TENSOR_SQ d1 {what}");
    assert_eq!(get(4), map(a1, &|_, x| m.mul(x, x)), "TENSOR_SQ d2 {what}");
    let (t0, t1, t2) = (&inputs[2], &inputs[3], &inputs[4]);
    let accumulated =
        map(t0, &|i, x| m.add(m.add(m.add(m.mul(x, s[0]), m.mul(t1[i], s[1])), m.mul(t2[i], s[2])), s[3]));
    assert_eq!(get(8), accumulated, "MULC + 2 CMAC + CADD (NTT form) {what}");
    let coefficient0 = |a: &[u32], c: u32| map(a, &|i, x| if i % n == 0 { m.add(x, c) } else { x });
    assert_eq!(get(9), coefficient0(&inputs[5], s[3]), "CADD coefficient form in place {what}");
    assert_eq!(get(11), coefficient0(&inputs[6], s[4]), "CADD coefficient form {what}");
    assert_eq!(get(10), inputs[6], "CADD's source {what}");
    let (a, b) = (&inputs[7], &inputs[8]);
    assert_eq!(get(14), map(a, &|i, x| m.mul(m.sub(x, b[i]), s[5])), "SUB_MULC {what}");
    assert_eq!(get(15), map(a, &|i, x| m.mul(m.sub(x, single[i % n]), s[5])), "SUB_MULC broadcast {what}");
    // Inputs are untouched.
    assert_eq!((get(0), get(1)), (inputs[0].clone(), inputs[1].clone()), "TENSOR_SQ's inputs {what}");
    assert_eq!(get(13), inputs[8], "SUB_MULC's second operand {what}");
}

#[test]
fn fused_opcodes_both_variants_all_degrees() {
    let mut seed = 1;
    for n in [16usize, 64, 256, 1024, 2048, 4096] {
        for (i, &q) in primes_for(n).iter().enumerate() {
            let count = [1usize, 3, 17][i % 3];
            for variant in Variant::ALL {
                check_fused(q, n, count, variant, EmulatorConfig::default(), seed);
                seed += 1;
            }
        }
    }
}

#[test]
fn fused_opcodes_odd_tasklet_counts_and_v1a() {
    let n = 1024;
    let q = primes_for(n)[0];
    for (tasklets, count, generation) in
        [(1u32, 3usize, DpuGeneration::V1B), (5, 7, DpuGeneration::V1B), (24, 25, DpuGeneration::V1A)]
    {
        let config = EmulatorConfig { generation, tasklets, ..EmulatorConfig::default() };
        for variant in Variant::ALL {
            check_fused(q, n, count, variant, config.clone(), tasklets as u64 + 50);
        }
    }
}

#[test]
fn fused_opcodes_at_extreme_residues() {
    // Zeros and q - 1 everywhere, scalars 0 and q - 1: the lazy bounds at their edges.
    let n = 256;
    for q in primes_for(n) {
        let m = Modulus::new(q as u64).unwrap();
        let d = Dpu::new(q, n, 5);
        for (x, y) in [(q - 1, q - 1), (0, q - 1), (q - 1, 0)] {
            for c in [0, q - 1] {
                for variant in Variant::ALL {
                    let mut dpus = set(1, EmulatorConfig::default().with_tasklets(3));
                    d.load(
                        &mut dpus,
                        0,
                        variant,
                        &[
                            PimheCommand::tensor_square([d.at(2), d.at(3), d.at(4)], d.at(0), d.at(1), 1),
                            PimheCommand::mulc(d.at(5), d.at(0), c, &m, 1),
                            PimheCommand::cmac(d.at(5), d.at(1), c, &m, 1),
                            PimheCommand::cadd(d.at(5), d.at(5), c, true, &m, 1),
                            PimheCommand::sub_mulc(d.at(6), d.at(0), d.at(1), c, false, &m, 1),
                        ],
                    );
                    d.put(&mut dpus, 0, 0, &vec![x; n]);
                    d.put(&mut dpus, 0, 1, &vec![y; n]);
                    dpus.launch(&[0]).unwrap();
                    let what = format!("q={q} x={x} y={y} c={c} {variant:?}");
                    assert_eq!(d.get(&dpus, 0, 2, n), vec![m.mul(x, x); n], "{what}");
                    assert_eq!(d.get(&dpus, 0, 3, n), vec![m.add(m.mul(x, y), m.mul(x, y)); n], "{what}");
                    assert_eq!(d.get(&dpus, 0, 4, n), vec![m.mul(y, y); n], "{what}");
                    assert_eq!(d.get(&dpus, 0, 5, n), vec![m.add(m.add(m.mul(x, c), m.mul(y, c)), c); n], "{what}");
                    assert_eq!(d.get(&dpus, 0, 6, n), vec![m.mul(m.sub(x, y), c); n], "{what}");
                }
            }
        }
    }
}

#[test]
fn an_unreduced_scalar_of_a_fused_opcode_is_refused() {
    let n = 64;
    let q = primes_for(n)[0];
    let m = Modulus::new(q as u64).unwrap();
    let d = Dpu::new(q, n, 1);
    let bad = |mut command: PimheCommand| {
        command.scalar_shoup ^= 1;
        command
    };
    for command in [
        bad(PimheCommand::cmac(d.at(0), d.at(1), 5, &m, 1)),
        bad(PimheCommand::cadd(d.at(0), d.at(0), 5, false, &m, 1)),
        bad(PimheCommand::sub_mulc(d.at(0), d.at(1), d.at(2), 5, false, &m, 1)),
        PimheCommand { scalar: q, ..PimheCommand::cmac(d.at(0), d.at(1), 5, &m, 1) },
    ] {
        let mut dpus = set(1, EmulatorConfig::default());
        d.load(&mut dpus, 0, Variant::Best, &[command]);
        match dpus.launch(&[0]) {
            Err(EmulatorError::KernelStatus { status: s, .. }) => assert_eq!(s, status::ERR_SCALAR, "{command:?}"),
            other => panic!("{command:?}: expected ERR_SCALAR, got {other:?}"),
        }
    }
}

/// One launch of `commands` on one DPU (N = 4096, 16 tasklets) with every operand slot filled.
fn run(d: &Dpu, variant: Variant, commands: &[PimheCommand], slots: usize) -> DpuCounts {
    let mut dpus = set(1, EmulatorConfig::default());
    d.load(&mut dpus, 0, variant, commands);
    d.put(&mut dpus, 0, 0, &residues(slots * d.n(), d.q(), 4));
    dpus.launch(&[0]).unwrap().dpus[0].1.clone()
}

#[test]
fn fused_opcodes_move_and_count_what_the_hand_count_says() {
    // Barrett, N = 4096, 16 tasklets: the difference between 4 and 2 sub-polynomials per
    // operand is 8192 elements in chunks of `chunk` words (2048-byte DMAs cut to fit nbuf
    // buffers in a 3088-byte work area: 256 words for 3 buffers, 256 for 2, 512 for 1).
    // Per element (cost.h): a Barrett product 35 + (2 * 3 + 1 + 35 + 21 + 2 * 2) = 102, an
    // add/sub mod 3, per word loaded or stored 1, a loop iteration 2. Per chunk: the loop step
    // and bounds (2 + 4 + 2 ALU) and COST_RT_DMA = 2 per DMA.
    let n = 4096;
    let q = pimhe_math::ntt_primes(30, n, 1, &[]).unwrap()[0];
    let m = Modulus::new(q as u64).unwrap();
    let d = Dpu::new(q, n, 2);
    let product = 102u64;
    // (name, commands of `count` sub-polynomials, words read, words written, nbuf, per element)
    type Case<'a> = (&'static str, Box<dyn Fn(u32) -> PimheCommand + 'a>, u64, u64, u64, u64);
    let cases: [Case<'_>; 5] = [
        (
            "TENSOR_SQ",
            Box::new(|c| PimheCommand::tensor_square([d.at(8), d.at(12), d.at(16)], d.at(0), d.at(4), c)),
            2,
            3,
            256,
            (2 + 3 + 2) + 3 * product + 3,
        ),
        ("CMAC", Box::new(|c| PimheCommand::cmac(d.at(8), d.at(0), 77, &m, c)), 2, 1, 256, (2 + 1 + 2) + product + 3),
        ("CADD-NTT", Box::new(|c| PimheCommand::cadd(d.at(8), d.at(0), 77, true, &m, c)), 1, 1, 512, (1 + 1 + 2) + 3),
        (
            "SUB_MULC",
            Box::new(|c| PimheCommand::sub_mulc(d.at(8), d.at(0), d.at(4), 77, false, &m, c)),
            2,
            1,
            256,
            (2 + 1 + 2) + 3 + product,
        ),
        (
            "SUB_MULC-bcast",
            Box::new(|c| PimheCommand::sub_mulc(d.at(8), d.at(0), d.at(4), 77, true, &m, c)),
            2,
            1,
            256,
            (2 + 1 + 2) + 3 + product,
        ),
    ];
    let elements = 2 * n as u64;
    for (name, build, reads, writes, chunk, per_element) in cases {
        let (big, small) = (run(&d, Variant::Barrett, &[build(4)], 20), run(&d, Variant::Barrett, &[build(2)], 20));
        let (b, s) = (big.total(), small.total());
        let chunks = elements / chunk;
        let moved = (
            b.dma_reads - s.dma_reads,
            b.dma_read_bytes - s.dma_read_bytes,
            b.dma_writes - s.dma_writes,
            b.dma_write_bytes - s.dma_write_bytes,
        );
        assert_eq!(moved, (reads * chunks, 4 * reads * elements, writes * chunks, 4 * writes * elements), "{name}");
        let per_chunk = 8 + 2 * (reads + writes);
        assert_eq!(b.instructions - s.instructions, elements * per_element + chunks * per_chunk, "{name}");
    }
    // CADD in coefficient form, in place: one 8-byte read and write per sub-polynomial, and per
    // sub-polynomial the loop (2), its offset (2 ALU), a load, an add mod q (3), a store and two
    // DMAs (2 each).
    let cadd = |c| PimheCommand::cadd(d.at(0), d.at(0), 77, false, &m, c);
    let (b, s) =
        (run(&d, Variant::Barrett, &[cadd(20)], 20).total(), run(&d, Variant::Barrett, &[cadd(4)], 20).total());
    let moved = (
        b.dma_reads - s.dma_reads,
        b.dma_read_bytes - s.dma_read_bytes,
        b.dma_writes - s.dma_writes,
        b.dma_write_bytes - s.dma_write_bytes,
    );
    assert_eq!(moved, (16, 128, 16, 128), "CADD coefficient form in place");
    assert_eq!(b.instructions - s.instructions, 16 * (2 + 2 + 1 + 3 + 1 + 2 * 2), "CADD coefficient form in place");
}

#[test]
fn fused_opcodes_cost_less_than_the_sequences_they_replace() {
    // 16 sub-polynomials of N = 4096 per operand on 16 tasklets, modeled cycles (PIM.md).
    let n = 4096;
    let q = pimhe_math::ntt_primes(30, n, 1, &[]).unwrap()[0];
    let m = Modulus::new(q as u64).unwrap();
    let d = Dpu::new(q, n, 8);
    let (c, k) = (16u32, 16usize);
    let at = |i: usize| d.at(i * k);
    let pairs: [(&str, Vec<PimheCommand>, Vec<PimheCommand>); 3] = [
        (
            "TensorSq",
            vec![PimheCommand::tensor_square([at(2), at(3), at(4)], at(0), at(1), c)],
            vec![PimheCommand::tensor([at(2), at(3), at(4)], [at(0), at(1), at(0), at(1)], c)],
        ),
        (
            "CAccum (4 terms and an offset)",
            vec![
                PimheCommand::mulc(at(5), at(0), 3, &m, c),
                PimheCommand::cmac(at(5), at(1), 5, &m, c),
                PimheCommand::cmac(at(5), at(2), 7, &m, c),
                PimheCommand::cmac(at(5), at(3), 9, &m, c),
                PimheCommand::cadd(at(5), at(5), 11, true, &m, c),
            ],
            vec![
                PimheCommand::mulc(at(5), at(0), 3, &m, c),
                PimheCommand::mulc(at(6), at(1), 5, &m, c),
                PimheCommand::add(at(5), at(5), at(6), c),
                PimheCommand::mulc(at(6), at(2), 7, &m, c),
                PimheCommand::add(at(5), at(5), at(6), c),
                PimheCommand::mulc(at(6), at(3), 9, &m, c),
                PimheCommand::add(at(5), at(5), at(6), c),
                PimheCommand::add(at(5), at(5), at(7), c),
            ],
        ),
        (
            "ModDownEp",
            vec![PimheCommand::sub_mulc(at(5), at(0), at(1), 13, false, &m, c)],
            vec![PimheCommand::sub(at(5), at(0), at(1), c), PimheCommand::mulc(at(5), at(5), 13, &m, c)],
        ),
    ];
    for variant in Variant::ALL {
        for (name, fused, composed) in &pairs {
            let fused = model_cycles(&run(&d, variant, fused, 8 * k));
            let composed = model_cycles(&run(&d, variant, composed, 8 * k));
            println!("{variant:?} {name}: fused {fused:.0} cycles, composed {composed:.0}");
            assert!(fused < composed, "{variant:?} {name}: fused {fused} >= composed {composed} cycles");
        }
    }
}
