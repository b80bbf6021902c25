//! RAW_ADD, RAW_MUL and RAW_CONV (dpu/kernels/raw_poly.h) on the emulator against the host:
//! the schoolbook negacyclic product (pimhe-testkit, i128) and per-coefficient u64 arithmetic,
//! both arithmetic variants, odd DPU counts, 1, 16 and 24 tasklets, edge residues 0 and q - 1;
//! bad operands refused; the counted instructions per coefficient and per product against a
//! hand count from cost.h.

mod emulator_support;

use emulator_support::{assert_refused, residues};
use pimhe_pim::emulator::EmulatorConfig;
use pimhe_pim::layout::{status, PimheCommand, Variant};
use pimhe_pim::raw_poly::{coefficient_ranges, run, RawOp, RawPolyError};
use pimhe_testkit::oracle::schoolbook;

/// MHY+'s modulus, 2^16 + 1 (section IV-A).
const Q: u32 = 65537;

fn oracle(op: RawOp, a: &[u32], b: &[u32], q: u32) -> Vec<u32> {
    let zip =
        |f: fn(u64, u64) -> u64| a.iter().zip(b).map(|(&x, &y)| (f(x as u64, y as u64) % q as u64) as u32).collect();
    match op {
        RawOp::Add => zip(|x, y| x + y),
        RawOp::Mul => zip(|x, y| x * y),
        RawOp::Conv => schoolbook(a, b, q),
    }
}

/// Operands with the edge residues q - 1 and 0 at both ends and in the middle.
fn operands(n: usize, q: u32, seed: u64) -> (Vec<u32>, Vec<u32>) {
    let (mut a, mut b) = (residues(n, q, seed), residues(n, q, seed + 1));
    for i in [0, 1, n / 2, n - 1] {
        a[i] = q - 1;
        b[i] = if i == n / 2 { 0 } else { q - 1 };
    }
    (a, b)
}

#[test]
fn every_raw_op_matches_the_host_over_odd_dpu_counts_and_tasklet_counts() {
    let configs = [EmulatorConfig::default(), EmulatorConfig::v1a(), EmulatorConfig::default().with_tasklets(1)];
    // (n, DPUs): a range per DPU of 2 words, ranges of unequal lengths, several output chunks
    // per tasklet (n = 4096 on 3 DPUs: 683-word ranges of 6 chunks of 128), one DPU.
    let shapes = [(4, 2), (16, 3), (64, 5), (256, 7), (4096, 3), (512, 1)];
    for op in RawOp::ALL {
        for &(n, dpus) in &shapes {
            for (k, config) in configs.iter().enumerate() {
                for variant in Variant::ALL {
                    let q = if k == 2 { 7681 } else { Q }; // a second prime (1 mod 32) once
                    let (a, b) = operands(n, q, n as u64 * 31 + dpus as u64);
                    let out = run(op, q, &a, &b, dpus, config.clone(), variant).unwrap();
                    let what = format!("{op:?} n={n} dpus={dpus} q={q} {variant:?} tasklets={}", config.tasklets);
                    assert_eq!(out.result, oracle(op, &a, &b, q), "{what}");
                    assert_eq!(out.report.dpus.len(), dpus, "{what}");
                }
            }
        }
    }
}

#[test]
fn all_q_minus_one_is_the_worst_case_of_the_sums() {
    // Every product (q - 1)^2 = 1 and every coefficient's sum at its extreme.
    let n = 1024;
    let a = vec![Q - 1; n];
    for variant in Variant::ALL {
        let out = run(RawOp::Conv, Q, &a, &a, 4, EmulatorConfig::default(), variant).unwrap();
        assert_eq!(out.result, schoolbook(&a, &a, Q), "{variant:?}");
    }
}

#[test]
fn bad_shapes_and_operands_are_refused() {
    let config = EmulatorConfig::default();
    let a = vec![1u32; 16];
    let err = |n: usize, dpus: usize| run(RawOp::Add, Q, &a[..n], &a[..n], dpus, config.clone(), Variant::Barrett);
    assert!(matches!(err(12, 2), Err(RawPolyError::Length { n: 12 })));
    assert!(matches!(err(16, 9), Err(RawPolyError::Dpus { n: 16, dpus: 9 })));
    assert_eq!(
        err(16, 0).unwrap_err().to_string(),
        "0 DPUs for 16 coefficients: each DPU needs at least 2 (allowed: 1 ..= 8)"
    );
    let big = vec![Q; 16];
    assert!(matches!(
        run(RawOp::Mul, Q, &a, &big, 2, config.clone(), Variant::Best),
        Err(RawPolyError::Operands { n: 16, q: Q })
    ));
    assert!(matches!(run(RawOp::Mul, 65539, &a, &a, 2, config, Variant::Best), Err(RawPolyError::Modulus { .. })));
    assert_eq!(coefficient_ranges(16, 3).unwrap(), [(0, 6), (6, 12), (12, 16)]);
}

#[test]
fn the_kernel_refuses_bad_commands_with_err_operand() {
    use emulator_support::Dpu;
    let d = Dpu::new(Q, 16, 1);
    let at = d.at(0);
    let bad = [
        PimheCommand::raw_add(at, at, at, 3),                              // odd count
        PimheCommand::raw_conv(at, at, at, 1, 16, 2, 2),                   // odd lo
        PimheCommand::raw_conv(at, at, at, 14, 16, 4, 2),                  // lo + count > n
        PimheCommand::raw_conv(at, at, at, 0, 24, 2, 2),                   // n not a power of two
        PimheCommand::raw_conv(at, at, at, 0, 16, 2, 16),                  // chunk above the block (n / 2)
        PimheCommand::raw_conv(at, at, at, 0, 16, 2, 3),                   // odd chunk
        PimheCommand::raw_mul(u32::MAX - 8, at, at, 4),                    // dst past 2^32
        PimheCommand { flags: 1, ..PimheCommand::raw_add(at, at, at, 2) }, // a flag
    ];
    for command in bad {
        assert_refused(&d, command, status::ERR_OPERAND);
    }
}

/// The counted instructions of one DPU, summed over its tasklets.
fn instructions(op: RawOp, n: usize, dpus: usize, variant: Variant) -> u64 {
    let (a, b) = operands(n, Q, 5);
    let out = run(op, Q, &a, &b, dpus, EmulatorConfig::default(), variant).unwrap();
    out.report.dpus[0].1.total().instructions
}

#[test]
fn counted_instructions_per_coefficient_and_per_product_match_a_hand_count() {
    // cost.h: LOAD = STORE = ALU = BRANCH = 1, LOOP = 2, ADDMOD = SUBMOD = 3, CSUB = 2,
    // SHIFT64 = 3, MUL32_64 = 35, MUL32_32 = 21.
    // barrett mulmod: mul32_64 (35) + bar_reduce: 2 SHIFT64 + ALU (7) + mul32_64 (35) +
    // mul32_32 (21) + 2 CSUB (4) = 102.
    let bar_mulmod = 35 + 7 + 35 + 21 + 4;
    // Per coefficient of ADD / MUL (barrett: lw, lw, sw and a loop iteration per element).
    let ew = 2 + 1 + 2;
    let per_add = ew + 3;
    let per_mul = ew + bar_mulmod;
    // Per product of CONV: two loads, a loop iteration, the mulmod and an add or sub mod q.
    let per_product = 2 + 2 + bar_mulmod + 3;
    // Doubling one DPU's range (1 DPU, n and 2n) adds that many coefficients' work; the
    // fixed costs (setup, chunk dealing at 512 words a chunk) cancel except per chunk.
    for (op, per) in [(RawOp::Add, per_add), (RawOp::Mul, per_mul)] {
        let (small, large) =
            (instructions(op, 8192, 1, Variant::Barrett), instructions(op, 16384, 1, Variant::Barrett));
        // 8192 more words = 16 more chunks of 512, each with a chunk's loop, index and DMA work.
        let chunk_overhead = (large - small - 8192 * per) / 16;
        assert_eq!(large - small - 8192 * per, 16 * chunk_overhead, "{op:?}");
        assert!(chunk_overhead < 40, "{op:?}: {chunk_overhead} instructions per chunk");
    }
    // CONV: n = 512 on 1 DPU is 512^2 products; n = 1024 is 4 times as many. The per-output and
    // per-block overheads grow as n and n^2 / 128: together under 1 % of the products' count.
    let (small, large) =
        (instructions(RawOp::Conv, 512, 1, Variant::Barrett), instructions(RawOp::Conv, 1024, 1, Variant::Barrett));
    let products = (1024u64 * 1024 - 512 * 512) * per_product;
    assert!(large - small >= products && large - small < products + products / 50, "{} vs {products}", large - small);
}

#[test]
fn one_dpu_alone_counts_what_it_counts_among_all_whatever_the_coefficients() {
    use pimhe_pim::raw_poly::range_counts;
    for op in RawOp::ALL {
        let (n, dpus) = (2048, 3);
        let (a, b) = operands(n, Q, 77);
        let out = run(op, Q, &a, &b, dpus, EmulatorConfig::default(), Variant::Best).unwrap();
        for (d, range) in coefficient_ranges(n, dpus).unwrap().into_iter().enumerate() {
            let alone = range_counts(op, Q, n, range, None, EmulatorConfig::default(), Variant::Best).unwrap();
            assert_eq!(alone, out.report.dpus[d].1, "{op:?} DPU {d}");
        }
    }
    assert!(matches!(
        range_counts(RawOp::Add, Q, 16, (2, 3), None, EmulatorConfig::default(), Variant::Best),
        Err(RawPolyError::Range { n: 16, start: 2, end: 3 })
    ));
}
