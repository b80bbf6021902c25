//! NTT_STAGE (dpu/kernels/ntt_stage.h) and its host drivers (pimhe_pim::ntt_stage) on the
//! emulator: MHY+'s per-stage NTT and pimhe's resident NTT against the CPU NTT
//! (pimhe_math::NttTable, Harvey's lazy butterflies: no code shared with the kernel) and, for
//! small n, against the definition (the input polynomial evaluated at psi^(2 bitrev(j) + 1));
//! both arithmetic variants, odd DPU counts, 1, 16 and 24 tasklets, edge residues 0 and q - 1;
//! bad commands and shapes refused; the counted instructions of one chunk against a hand count
//! from cost.h.

mod emulator_support;

use emulator_support::{assert_refused, primes_for, residues, Dpu};
use pimhe_math::{Modulus, NttTable};
use pimhe_pim::emulator::EmulatorConfig;
use pimhe_pim::layout::{status, PimheCommand, Variant};
use pimhe_pim::ntt_stage::{butterfly_ranges, run_per_stage, run_resident, stage_counts, stage_gaps};
use pimhe_pim::raw_poly::RawPolyError;
use pimhe_testkit::oracle::{bit_reverse, evaluate, pow_mod};

/// MHY+'s modulus, 2^16 + 1 (section IV-A): 1 mod 2n up to n = 2^15.
const Q: u32 = 65537;

fn cpu_ntt(q: u32, a: &[u32]) -> Vec<u32> {
    let mut out = a.to_vec();
    NttTable::new(Modulus::new(q as u64).unwrap(), a.len()).unwrap().forward(&mut out);
    out
}

/// Residues with the edge values q - 1 and 0 at both ends and in the middle.
fn operand(n: usize, q: u32, seed: u64) -> Vec<u32> {
    let mut a = residues(n, q, seed);
    for (k, i) in [0, 1, n / 2, n - 1].into_iter().enumerate() {
        a[i] = if k == 2 { 0 } else { q - 1 };
    }
    a
}

#[test]
fn the_cpu_ntt_is_the_negacyclic_evaluation_the_stages_must_reproduce() {
    // Output j is a(psi^(2 bitrev(j) + 1)): the definition, independent of both NTTs.
    let n = 64;
    let a = operand(n, Q, 3);
    let psi = NttTable::new(Modulus::new(Q as u64).unwrap(), n).unwrap().root() as u64;
    let by_definition: Vec<u32> = (0..n)
        .map(|j| evaluate(&a, pow_mod(psi, 2 * bit_reverse(j, 6) as u64 + 1, Q as u64), Q as u64) as u32)
        .collect();
    assert_eq!(cpu_ntt(Q, &a), by_definition);
    let staged = run_per_stage(Q, &a, 5, EmulatorConfig::default(), Variant::Barrett).unwrap();
    assert_eq!(staged.result, by_definition);
}

#[test]
fn per_stage_and_resident_ntts_equal_the_cpu_over_odd_dpu_counts_tasklets_and_primes() {
    let configs = [EmulatorConfig::default(), EmulatorConfig::v1a(), EmulatorConfig::default().with_tasklets(1)];
    // (n, DPUs): two butterflies a DPU, unequal ranges, ranges crossing groups, several chunks
    // per tasklet (n = 8192 on 3 DPUs: 1366-butterfly ranges), one DPU, the best variant's
    // table layout (n >= 2048).
    let shapes = [(16, 4), (64, 3), (256, 7), (1024, 5), (8192, 3), (2048, 1)];
    for &(n, dpus) in &shapes {
        for (k, config) in configs.iter().enumerate() {
            for variant in Variant::ALL {
                let q = if k == 2 { primes_for(n)[0] } else { Q }; // a 30-bit prime once
                let a = operand(n, q, n as u64 + dpus as u64);
                let expected = cpu_ntt(q, &a);
                let what = format!("n={n} dpus={dpus} q={q} {variant:?} tasklets={}", config.tasklets);
                let staged = run_per_stage(q, &a, dpus, config.clone(), variant).unwrap();
                assert_eq!(staged.result, expected, "per stage {what}");
                assert_eq!(staged.stages.len(), n.trailing_zeros() as usize, "{what}");
                assert!(staged.stages.iter().all(|s| s.dpus.len() == dpus), "{what}");
                let resident = run_resident(q, &a, config.clone(), variant).unwrap();
                assert_eq!(resident.result, expected, "resident {what}");
            }
        }
    }
}

#[test]
fn all_q_minus_one_and_all_zero_transform_as_the_cpu_does() {
    let n = 512;
    for a in [vec![Q - 1; n], vec![0; n]] {
        for variant in Variant::ALL {
            let staged = run_per_stage(Q, &a, 7, EmulatorConfig::default(), variant).unwrap();
            assert_eq!(staged.result, cpu_ntt(Q, &a), "{variant:?} a[0] = {}", a[0]);
        }
    }
}

#[test]
fn bad_shapes_and_operands_are_refused_with_what_is_allowed() {
    let config = EmulatorConfig::default();
    let a = vec![1u32; 64];
    let staged = |n: usize, dpus: usize| run_per_stage(Q, &a[..n], dpus, config.clone(), Variant::Barrett);
    assert!(matches!(staged(48, 2), Err(RawPolyError::Length { n: 48 })));
    assert_eq!(
        staged(64, 17).unwrap_err().to_string(),
        "17 DPUs for the 32 butterflies of an NTT stage of 64 points: each DPU needs at least 2 (allowed: 1 ..= 16)"
    );
    assert!(matches!(staged(64, 0), Err(RawPolyError::Butterflies { n: 64, dpus: 0 })));
    assert!(matches!(
        run_per_stage(Q, &[Q; 64], 2, config.clone(), Variant::Best),
        Err(RawPolyError::Operands { n: 64, q: Q })
    ));
    // 65537 is not 1 mod 2n at n = 2^16; 65539 is not a prime of the kernel.
    assert!(matches!(
        run_resident(Q, &vec![0; 1 << 16], config.clone(), Variant::Best),
        Err(RawPolyError::Modulus { .. })
    ));
    assert!(matches!(run_per_stage(65539, &a, 2, config.clone(), Variant::Best), Err(RawPolyError::Modulus { .. })));
    assert!(matches!(
        stage_counts(Q, 64, 1, (2, 3), config, Variant::Best),
        Err(RawPolyError::Range { n: 32, start: 2, end: 3 })
    ));
    assert_eq!(butterfly_ranges(32, 3).unwrap(), [(0, 6), (6, 12), (12, 16)]);
    assert_eq!(stage_gaps(16).collect::<Vec<_>>(), [8, 4, 2, 1]);
}

#[test]
fn the_kernel_refuses_bad_commands_with_err_operand() {
    let d = Dpu::new(Q, 16, 1);
    let at = d.at(0);
    let bad = [
        PimheCommand::ntt_stage(at, at + 64, 0, 4, 0),      // no butterflies
        PimheCommand::ntt_stage(at, at + 64, 0, 4, 3),      // odd count
        PimheCommand::ntt_stage(at, at + 64, 1, 4, 2),      // odd lo
        PimheCommand::ntt_stage(at, at + 64, 6, 4, 4),      // lo + count > n / 2
        PimheCommand::ntt_stage(at, at + 64, 0, 16, 2),     // gap above n / 2
        PimheCommand::ntt_stage(at, at + 64, 0, 3, 2),      // gap not a power of two
        PimheCommand::ntt_stage(at, at + 64, 0, 0, 2),      // gap zero
        PimheCommand::ntt_stage(at, u32::MAX - 4, 0, 4, 2), // y's past 2^32
        PimheCommand { flags: 1, ..PimheCommand::ntt_stage(at, at + 64, 0, 4, 2) }, // a flag
    ];
    for command in bad {
        assert_refused(&d, command, status::ERR_OPERAND);
    }
}

#[test]
fn counted_instructions_of_a_chunk_match_a_hand_count() {
    // cost.h: LOAD = STORE = ALU = BRANCH = 1, LOOP = 2, ADDMOD = SUBMOD = 3, RT_DMA = 2;
    // barrett mulmod 102 (emulator_raw_poly.rs has its sum). A barrett butterfly (bar_ct_span):
    // a loop iteration, two loads, two stores, a mulmod, an addmod and a submod = 114. A span
    // (one per group a chunk meets): LOOP + 6 ALU + LOAD = 9. A chunk: its loop (LOOP + 4 ALU
    // = 6), its index work (10 ALU), four DMAs of x's and y's (4 x 2) and the twiddle fetch
    // (4 ALU, one DMA-loop iteration of LOOP + ALU, one DMA: 9) = 33.
    let (butterfly, span, chunk) = (114u64, 9u64, 33u64);
    // One tasklet, n = 1024: 126-butterfly chunks (a 2048-byte block is 512 words: four
    // arrays of 126 + 2). Two chunks minus one chunk is one chunk's work; at gap n / 2 it is
    // one span, at gap 1 one span per butterfly (126 twiddles from an even index: one DMA).
    let config = EmulatorConfig::default().with_tasklets(1);
    let counted = |gap: usize, count: usize| {
        stage_counts(Q, 1024, gap, (0, count), config.clone(), Variant::Barrett).unwrap().total().instructions
    };
    assert_eq!(counted(512, 252) - counted(512, 126), chunk + span + 126 * butterfly);
    assert_eq!(counted(1, 252) - counted(1, 126), chunk + 126 * (span + butterfly));
}

#[test]
fn one_dpu_alone_counts_what_it_counts_among_all() {
    let (n, dpus) = (2048, 3);
    let a = operand(n, Q, 9);
    let staged = run_per_stage(Q, &a, dpus, EmulatorConfig::default(), Variant::Best).unwrap();
    for (s, gap) in stage_gaps(n).enumerate() {
        for (d, range) in butterfly_ranges(n, dpus).unwrap().into_iter().enumerate() {
            let alone = stage_counts(Q, n, gap, range, EmulatorConfig::default(), Variant::Best).unwrap();
            assert_eq!(alone, staged.stages[s].dpus[d].1, "stage {s} DPU {d}");
        }
    }
}
