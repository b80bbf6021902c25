//! MW_ADD, MW_MUL and MW_CONV (dpu/kernels/multiword.h, Gupta et al.'s multi-word non-RNS
//! coefficients) on the emulator against big-integer arithmetic on the host (num-bigint; the
//! negacyclic product against its schoolbook sum): moduli of 1, 2 and 4 words (the paper's 27-,
//! 54- and 109-bit widths and full-word ones), both variants (schoolbook and Karatsuba
//! products), odd DPU counts, 1, 16 and 24 tasklets, edge values (0, q - 1, all-ones words that
//! carry across every word); bad input refused; the counted instructions per coefficient (per
//! term of a product) against a hand count from cost.h.

mod emulator_support;

use emulator_support::{set, Dpu};
use num_bigint::BigUint;
use pimhe_pim::emulator::{EmulatorConfig, EmulatorError};
use pimhe_pim::layout::{status, Opcode, PimheCommand, Variant};
use pimhe_pim::multiword::{
    conv, conv_range_counts, range_counts, ranges, run, MultiwordError, MultiwordModulus, MwOp,
};

/// Moduli: the paper's widths (27, 54, 109 bits: 2^k minus the smallest c making q prime is
/// not needed, Barrett takes any q), ones that fill their words to the top bit (MW_CONV then
/// reduces every term) and a 30-bit one (MW_CONV folds its sums every 8 terms, inside a block).
const MODULI: [u128; 7] = [
    (1 << 27) - 39,
    u32::MAX as u128 - 4,
    (1 << 54) - 33,
    u64::MAX as u128 - 58,
    (1 << 109) - 1,
    u128::MAX - 158,
    (1 << 30) - 35,
];

fn oracle(op: MwOp, a: &[u128], b: &[u128], q: u128) -> Vec<u128> {
    let q = BigUint::from(q);
    a.iter()
        .zip(b)
        .map(|(&x, &y)| {
            let (x, y) = (BigUint::from(x), BigUint::from(y));
            let r = match op {
                MwOp::Add => (x + y) % &q,
                MwOp::Mul => (x * y) % &q,
            };
            r.to_u64_digits().iter().rev().fold(0u128, |acc, &d| (acc << 64) | d as u128)
        })
        .collect()
}

/// `len` pseudo-random values below q (xorshift64*, four draws a value), with edge values at
/// both ends and in the middle: q - 1, 0, and all-ones words (2^(32 k) - 1 below q, whose sums
/// and products carry through every word).
fn operands(len: usize, q: u128, seed: u64) -> (Vec<u128>, Vec<u128>) {
    let mut s = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let mut draw = || {
        let mut x = 0u128;
        for _ in 0..2 {
            s ^= s >> 12;
            s ^= s << 25;
            s ^= s >> 27;
            x = (x << 64) | s.wrapping_mul(0x2545_f491_4f6c_dd1d) as u128;
        }
        x % q
    };
    let (mut a, mut b): (Vec<u128>, Vec<u128>) =
        ((0..len).map(|_| draw()).collect(), (0..len).map(|_| draw()).collect());
    let ones = (1..=4).map(|k| if k == 4 { u128::MAX } else { (1u128 << (32 * k)) - 1 }).filter(|&x| x < q).max();
    let ones = ones.unwrap_or(q - 1);
    let edges = [(q - 1, q - 1), (0, q - 1), (ones, ones), (q - 1, ones)];
    for (k, &(x, y)) in edges.iter().enumerate() {
        for i in [k, len / 2 + k, len - 1 - k] {
            if i < len {
                (a[i], b[i]) = (x, y);
            }
        }
    }
    (a, b)
}

#[test]
fn every_op_matches_big_integers_over_widths_odd_dpu_counts_and_tasklets() {
    let configs = [EmulatorConfig::default(), EmulatorConfig::v1a(), EmulatorConfig::default().with_tasklets(1)];
    // (coefficients, DPUs): 2 per DPU, unequal ranges, several chunks per tasklet, one DPU.
    let shapes = [(6, 3), (30, 5), (98, 7), (2050, 3), (64, 1)];
    for &q in &MODULI {
        let modulus = MultiwordModulus::new(q).unwrap();
        for op in MwOp::ALL {
            for &(len, dpus) in &shapes {
                for (k, config) in configs.iter().enumerate() {
                    if k > 0 && len > 100 {
                        continue; // the long shape at the default tasklets only: seconds
                    }
                    for variant in Variant::ALL {
                        let (a, b) = operands(len, q, len as u64 * 131 + dpus as u64);
                        let out = run(op, &modulus, &a, &b, dpus, config.clone(), variant).unwrap();
                        let what =
                            format!("{op:?} q={q} len={len} dpus={dpus} {variant:?} tasklets={}", config.tasklets);
                        assert_eq!(out.result, oracle(op, &a, &b, q), "{what}");
                        assert_eq!(out.report.dpus.len(), dpus, "{what}");
                    }
                }
            }
        }
    }
}

#[test]
fn all_q_minus_one_and_all_ones_are_exact() {
    // (q - 1)^2 and (2^(32w) - 1 mod q)^2: the largest products, every Barrett trial subtraction.
    for &q in &MODULI {
        let modulus = MultiwordModulus::new(q).unwrap();
        for x in [q - 1, q / 2, q - 2] {
            let a = vec![x; 8];
            for variant in Variant::ALL {
                for op in MwOp::ALL {
                    let out = run(op, &modulus, &a, &a, 2, EmulatorConfig::default(), variant).unwrap();
                    assert_eq!(out.result, oracle(op, &a, &a, q), "{op:?} q={q} x={x} {variant:?}");
                }
            }
        }
    }
}

#[test]
fn bad_moduli_shapes_and_operands_are_refused() {
    assert!(matches!(MultiwordModulus::new(1 << 80), Err(MultiwordError::Modulus { bits: 81, .. })));
    assert_eq!(
        MultiwordModulus::new(1).unwrap_err().to_string(),
        "modulus 1 has 1 bits: the kernels take 2 <= q < 2^32 (1 word), 2^32 <= q < 2^64 (2 words) or 2^96 <= q < \
         2^128 (4 words)"
    );
    let q = MultiwordModulus::new((1 << 54) - 33).unwrap();
    let config = EmulatorConfig::default();
    let a = vec![1u128; 8];
    assert!(matches!(
        run(MwOp::Add, &q, &a[..7], &a[..7], 1, config.clone(), Variant::Best),
        Err(MultiwordError::Length { len: 7 })
    ));
    assert_eq!(
        run(MwOp::Add, &q, &a, &a, 5, config.clone(), Variant::Best).unwrap_err().to_string(),
        "5 DPUs for 8 coefficients: each DPU needs at least 2 (allowed: 1 ..= 4)"
    );
    let big = vec![q.value(); 8];
    assert!(matches!(
        run(MwOp::Mul, &q, &a, &big, 2, config.clone(), Variant::Barrett),
        Err(MultiwordError::Operands { len: 8, .. })
    ));
    assert!(matches!(
        range_counts(MwOp::Add, &q, 1 << 22, config, Variant::Best),
        Err(MultiwordError::Capacity { .. })
    ));
    assert_eq!(ranges(10, 3).unwrap(), [(0, 4), (4, 8), (8, 10)]);
}

#[test]
fn the_kernel_refuses_bad_commands_and_records_with_err_operand() {
    let d = Dpu::new(7681, 16, 1);
    let (record_at, data) = (d.at(0), d.at(1));
    let q = MultiwordModulus::new((1 << 54) - 33).unwrap();
    let good = q.record();
    let mut wrong_mu = good.clone();
    wrong_mu[3] ^= 1; // mu one off: b^4 - mu q leaves [0, q)
    let mut low_top = good.clone();
    low_top[1] = 0; // q's top word zero: not a 2-word modulus
    let cases = [
        (PimheCommand::mw_add(data, data, data, record_at, 3, 2), &good), // w = 3
        (PimheCommand::mw_mul(data, data, data, record_at, 2, 3), &good), // odd count
        (PimheCommand::mw_mul(data, data, data, record_at + 4, 2, 2), &good), // record not 8-aligned
        (PimheCommand::mw_add(u32::MAX - 8, data, data, record_at, 2, 2), &good), // dst past 2^32
        (PimheCommand { flags: 1, ..PimheCommand::mw_add(data, data, data, record_at, 2, 2) }, &good),
        (PimheCommand::mw_mul(data, data, data, record_at, 2, 2), &wrong_mu),
        (PimheCommand::mw_mul(data, data, data, record_at, 2, 2), &low_top),
        (PimheCommand::mw_conv(data, data, data, record_at, 2, 12, 0, 2), &good), // n not a power of two
        (PimheCommand::mw_conv(data, data, data, record_at, 2, 2, 0, 2), &good),  // n below 4
        (PimheCommand::mw_conv(data, data, data, record_at, 2, 1 << 21, 0, 2), &good), // n above 2^20
        (PimheCommand::mw_conv(data, data, data, record_at, 2, 16, 1, 2), &good), // lo odd
        (PimheCommand::mw_conv(data, data, data, record_at, 2, 16, 14, 4), &good), // lo + count > n
        (PimheCommand::mw_conv(data, u32::MAX - 64, data, record_at, 2, 16, 0, 2), &good), // a past 2^32
        (PimheCommand::mw_conv(data, data, data, record_at, 2, 16, 0, 2), &wrong_mu),
    ];
    for (command, record) in cases {
        let mut dpus = set(1, EmulatorConfig::default());
        d.load(&mut dpus, 0, Variant::Barrett, &[command]);
        dpus.write_u32s(0, record_at as usize, record).unwrap();
        match dpus.launch(&[0]) {
            Err(EmulatorError::KernelStatus { status: s, .. }) => assert_eq!(s, status::ERR_OPERAND, "{command:?}"),
            other => panic!("{command:?}: {other:?}"),
        }
    }
    // The opcode after the last is unknown.
    let mut dpus = set(1, EmulatorConfig::default());
    d.load(
        &mut dpus,
        0,
        Variant::Barrett,
        &[PimheCommand {
            opcode: Opcode::MwConv as u32 + 1,
            ..PimheCommand::mw_add(data, data, data, record_at, 2, 2)
        }],
    );
    assert!(matches!(dpus.launch(&[0]), Err(EmulatorError::KernelStatus { status: status::ERR_OPCODE, .. })));
}

/// cost.h: LOAD = STORE = ALU = BRANCH = 1, LOOP = 2, MUL32_64 = 35, MW_WORD = 6,
/// MW_PRODUCT = 10. Per coefficient of the chunk loop: a loop iteration and two ALU (4), then
/// [`modular_step`].
fn per_coefficient(op: MwOp, w: u64, variant: Variant) -> u64 {
    4 + modular_step(op, w, variant)
}

const WORD: u64 = 6;

/// mw_mul_school(na, nb, nout): zeroing (store + loop a word); per row a loop iteration, 3 ALU
/// and a branch (6), MW_PRODUCT + MUL32_64 (45) a product, a store of the carry word when the row
/// ends below nout.
fn school(na: u64, nb: u64, nout: u64) -> u64 {
    let rows: u64 = (0..na.min(nout)).map(|i| 6 + 45 * nb.min(nout - i) + u64::from(i + nb.min(nout - i) < nout)).sum();
    3 * nout + rows
}

/// Karatsuba of n words: a leaf is a branch, 2 loads, 2 stores and MUL32_64 (40); a level of n
/// words, halves of h: a branch, four h-word subtractions, 4 ALU, z0 + z2 (n words), the signed
/// middle term (n words and 5 more), x += mid (n + 1 words), the carry through h - 1 words
/// (load, ALU, store, loop: 5 each) = 3 K(h) + 32 n + 12.
fn karatsuba(n: u64) -> u64 {
    let mut k = 40;
    let mut m = 2;
    while m <= n {
        k = 3 * k + 1 + 4 * WORD * (m / 2) + 4 + WORD * m + 5 + WORD * m + WORD * (m + 1) + 5 * (m / 2 - 1);
        m *= 2;
    }
    k
}

/// The 2w-word product of two w-word coefficients (mw_product).
fn product(w: u64, variant: Variant) -> u64 {
    match variant {
        Variant::Barrett => school(w, w, 2 * w),
        Variant::Best => karatsuba(w),
    }
}

/// Barrett: q1 mu in full, q3 q to w + 1 words, r1 - r2, two trial subtractions (each a loop
/// iteration, 2 ALU and a (w + 1)-word subtraction), the w-word copy (load, store, loop).
fn barrett(w: u64) -> u64 {
    school(w + 1, w + 1, 2 * w + 2) + school(w + 1, w, w + 1) + WORD * (w + 1) + 2 * (4 + WORD * (w + 1)) + 4 * w
}

/// One coefficient's a + b mod q (MwOp::Add) or a b mod q (MwOp::Mul), as the kernel's
/// mw_add_mod and mw_mul_mod charge it.
fn modular_step(op: MwOp, w: u64, variant: Variant) -> u64 {
    match op {
        // sum, trial difference, the select (3 ALU) and the w-word copy
        MwOp::Add => 2 * WORD * w + 3 + 4 * w,
        MwOp::Mul => product(w, variant) + barrett(w),
    }
}

#[test]
fn counted_instructions_per_coefficient_match_a_hand_count() {
    // Worked values: add 23 / 39 / 71 at w = 1 / 2 / 4; Karatsuba K(1) = 40, K(2) = 196,
    // K(4) = 729 (9 products of 35 instructions: 315).
    assert_eq!([1, 2, 4].map(|w| per_coefficient(MwOp::Add, w, Variant::Best)), [23, 39, 71]);
    let config = EmulatorConfig::default();
    for &q in &[MODULI[0], MODULI[2], MODULI[4]] {
        let modulus = MultiwordModulus::new(q).unwrap();
        let w = modulus.words() as u64;
        // A chunk is 2048 bytes of an operand, halved until both operands and the record fit
        // the 3088-byte work area of 16 tasklets: 256, 128, 64 coefficients at w = 1, 2, 4.
        let chunk = 256 / w;
        for op in MwOp::ALL {
            for variant in Variant::ALL {
                let count =
                    |len| range_counts(op, &modulus, len, config.clone(), variant).unwrap().total().instructions;
                let (small, large) = (count(4096), count(8192));
                let per = per_coefficient(op, w, variant);
                let extra = large - small - 4096 * per;
                let chunks = 4096 / chunk;
                assert_eq!(extra % chunks, 0, "{op:?} w={w} {variant:?}: {} vs {per} a coefficient", large - small);
                assert!(extra / chunks < 40, "{op:?} w={w} {variant:?}: {} instructions a chunk", extra / chunks);
            }
        }
    }
}

#[test]
fn one_dpu_alone_counts_what_it_counts_among_all_whatever_the_coefficients() {
    let modulus = MultiwordModulus::new(MODULI[5]).unwrap();
    for op in MwOp::ALL {
        let (len, dpus) = (1000, 3);
        let (a, b) = operands(len, modulus.value(), 77);
        let out = run(op, &modulus, &a, &b, dpus, EmulatorConfig::default(), Variant::Best).unwrap();
        for (d, (start, end)) in ranges(len, dpus).unwrap().into_iter().enumerate() {
            let alone = range_counts(op, &modulus, end - start, EmulatorConfig::default(), Variant::Best).unwrap();
            assert_eq!(alone, out.report.dpus[d].1, "{op:?} DPU {d}");
        }
    }
}

/// The negacyclic product of `a` and `b` modulo q, term by term in big integers.
fn negacyclic_oracle(a: &[u128], b: &[u128], q: u128) -> Vec<u128> {
    let n = a.len();
    let q = BigUint::from(q);
    (0..n)
        .map(|k| {
            let (mut plus, mut minus) = (BigUint::from(0u32), BigUint::from(0u32));
            for (i, &x) in a.iter().enumerate() {
                let x = BigUint::from(x);
                if i <= k {
                    plus += x * BigUint::from(b[k - i]);
                } else {
                    minus += x * BigUint::from(b[n + k - i]);
                }
            }
            let r = (plus + &q * (&minus / &q + 1u32) - minus) % &q;
            r.to_u64_digits().iter().rev().fold(0u128, |acc, &d| (acc << 64) | d as u128)
        })
        .collect()
}

#[test]
fn the_negacyclic_product_matches_its_schoolbook_sum() {
    // (n, DPUs): one DPU, ranges of unequal length, several a-blocks (n = 256 at every width).
    let shapes = [(4, 1), (16, 3), (64, 7), (256, 5)];
    let configs = [EmulatorConfig::default(), EmulatorConfig::v1a(), EmulatorConfig::default().with_tasklets(1)];
    for &q in &MODULI {
        let modulus = MultiwordModulus::new(q).unwrap();
        for &(n, dpus) in &shapes {
            for (k, config) in configs.iter().enumerate() {
                if k > 0 && n > 64 {
                    continue; // the long shape at the default tasklets only
                }
                for variant in Variant::ALL {
                    let (a, b) = operands(n, q, n as u64 * 7 + dpus as u64);
                    let out = conv(&modulus, &a, &b, dpus, config.clone(), variant).unwrap();
                    let what = format!("q={q} n={n} dpus={dpus} {variant:?} tasklets={}", config.tasklets);
                    assert_eq!(out.result, negacyclic_oracle(&a, &b, q), "{what}");
                    assert_eq!(out.report.dpus.len(), dpus, "{what}");
                }
            }
        }
    }
}

#[test]
fn bad_products_are_refused() {
    let q = MultiwordModulus::new((1 << 54) - 33).unwrap();
    let config = EmulatorConfig::default();
    let a = vec![1u128; 12];
    assert_eq!(
        conv(&q, &a, &a, 1, config.clone(), Variant::Best).unwrap_err().to_string(),
        "a product of 12 coefficients: the length must be a power of two in [4, 2^20]"
    );
    assert!(matches!(
        conv(&q, &a[..8], &a[..4], 1, config.clone(), Variant::Best),
        Err(MultiwordError::Operands { len: 8, .. })
    ));
    assert!(matches!(conv(&q, &a[..8], &a[..8], 5, config.clone(), Variant::Best), Err(MultiwordError::Dpus { .. })));
    assert!(matches!(
        conv_range_counts(&q, 1024, 3, config.clone(), Variant::Best),
        Err(MultiwordError::Length { len: 3 })
    ));
    // Both whole operands on every DPU: 2 x 2^16 coefficients of 2 words do not fit 1 MiB.
    let small = EmulatorConfig { mram_bytes: 1 << 20, ..config };
    assert!(matches!(conv_range_counts(&q, 1 << 16, 2, small, Variant::Best), Err(MultiwordError::Capacity { .. })));
}

/// Terms MW_CONV sums unreduced between folds (multiword.h's mw_conv_lazy_terms): 1 when q
/// fills its top word, else 2^(2h - 1) for h <= 11 leading zero bits of the top word.
fn lazy_terms(q: u128, w: u64) -> u64 {
    let top = (q >> (32 * (w - 1))) as u32;
    let h = u64::from(top.leading_zeros().min(11));
    if h == 0 {
        1
    } else {
        1 << (2 * h - 1)
    }
}

/// MW_CONV's leaves (multiword_conv.h): how many, which have sign bytes, the word offsets each
/// leaf's sum is added at in a fold, and the instructions to build one coefficient's leaves.
struct Leaves {
    count: u64,
    signed: u64,
    offsets: Vec<Vec<u64>>,
    build: u64,
}

fn leaves(w: u64, variant: Variant) -> Leaves {
    // Karatsuba's identity a b = a0 b0 (1 + B) + a1 b1 (B + B^2) + (a0 - a1)(b1 - b0) B, the
    // middle product signed, each half product expanded again.
    let karatsuba = |w: u64| -> Vec<(Vec<u64>, bool)> {
        let two = vec![(vec![0, 1], false), (vec![1, 2], false), (vec![1], true)];
        if w == 2 {
            return two;
        }
        let mut out = Vec::new();
        for (shifts, outer) in [(vec![0, 2], false), (vec![2, 4], false), (vec![2], true)] {
            for (inner, signed) in &two {
                let offsets = shifts.iter().flat_map(|s| inner.iter().map(move |i| s + i)).collect();
                out.push((offsets, outer || *signed));
            }
        }
        out
    };
    match (variant, w) {
        (Variant::Best, 2 | 4) => {
            let leaves = karatsuba(w);
            // mw_leaves2: |x - y| (5 ALU), 3 leaf words and a sign byte stored, the xor (5), and
            // two more sign bytes under a signed middle product. mw_leaves: 2 loads and a
            // branch; at w = 4 two more loads and 8 ALU for the halves' difference.
            let two = 5 + 5;
            let build = if w == 2 { 3 + two } else { 3 + 10 + 3 * two + 2 };
            Leaves {
                count: leaves.len() as u64,
                signed: leaves.iter().filter(|(_, s)| *s).count() as u64,
                offsets: leaves.into_iter().map(|(o, _)| o).collect(),
                build,
            }
        }
        // Schoolbook (and w = 1): word u of a times word v of b at offset u + v, read in place.
        _ => Leaves { count: w * w, signed: 0, offsets: (0..w * w).map(|k| vec![k / w + k % w]).collect(), build: 0 },
    }
}

#[test]
fn a_products_counted_instructions_match_a_hand_count_per_term() {
    // One tasklet, so each chunk is as long as an a-block of A coefficients, and the count grows
    // by each output's terms, runs and folds plus the leaves built per block of each chunk. A:
    // 128 words / w halved until the work area (mw_conv_area_words) fits 3088 bytes: 64, 16, 8
    // coefficients (Karatsuba) and 64, 32, 8 (schoolbook) at w = 1, 2, 4.
    let config = EmulatorConfig::default().with_tasklets(1);
    let n = 256u64;
    // Folds: once an output (27, 54, 109 bits), every term (a full top word), every 8 terms.
    for (q, expected_lazy) in
        [(MODULI[0], 512), (MODULI[1], 1), (MODULI[2], 1 << 19), (MODULI[4], 1 << 21), (MODULI[6], 8)]
    {
        let modulus = MultiwordModulus::new(q).unwrap();
        let w = modulus.words() as u64;
        let lazy = lazy_terms(q, w);
        assert_eq!(lazy, expected_lazy, "q = {q}");
        for variant in Variant::ALL {
            let leaves = leaves(w, variant);
            let block = match (variant, w) {
                (_, 1) => 64,
                (Variant::Best, 2) => 16,
                (Variant::Barrett, 2) => 32,
                _ => 8,
            };
            let run = lazy.min(block);
            let count = |len: u64| {
                conv_range_counts(&modulus, n as usize, len as usize, config.clone(), variant)
                    .unwrap()
                    .total()
                    .instructions
            };
            let (from, to) = (n / 2, n);
            // A term of a leaf: two leaf words loaded, the product (MUL32_64), xor'ed with the
            // sign mask, added into three words, the negative count, a loop iteration (45); a
            // signed leaf also loads two sign bytes and xors them in (49).
            // Per term: 45 / 139 / 425 (Karatsuba) and 45 / 180 / 720 (schoolbook) at w = 1, 2, 4.
            let terms = n * (45 * leaves.count + 4 * leaves.signed);
            // A leaf's sum over a run: its three words loaded and stored, the two ranges' loop
            // steps (6 each), the count added (3), the leaf loop's own step (11): 33.
            let runs = (n / run) * (9 + 33 * leaves.count);
            // A fold: the total and a zero of w words cleared, the residue added; per leaf a
            // loop step, its offsets (4) and its sum cleared (3), per offset 7 and a
            // sign-extended add over the words above it; the magnitude (4 + 6 a word over 2w),
            // Barrett, the negation mod q (two w-word passes, 2, a 4-instruction copy a word),
            // and the select and copy of the residue.
            let tw = 2 * w + 2;
            let offsets: u64 = leaves.offsets.iter().flatten().map(|o| 7 + WORD * (tw - o)).sum();
            let fold = 3 * (tw + w)
                + 1
                + WORD * w
                + 9 * leaves.count
                + offsets
                + 4
                + 12 * w
                + barrett(w)
                + (2 * WORD * w + 2 + 4 * w)
                + 1
                + 4 * w;
            let folds = (n / lazy).max(1);
            // Per output: its sums and residue zeroed, per a-block a loop step and 6 ALU.
            let per_output = terms + runs + folds * fold + 3 * (3 * leaves.count + w) + (n / block) * 8;
            let extra = count(to) - count(from) - (to - from) * per_output;
            // Per chunk and a-block: the leaves of the a-block and the window (A + L + A
            // coefficients, each a loop step, 3 ALU and the build), then 15 to 40 for the
            // block's loop step, its DMAs (one or two for the window) and the chunk's own.
            let blocks = (to - from) / block * (n / block);
            let built = blocks * 3 * block * (5 + leaves.build) * u64::from(leaves.build > 0);
            let rest = extra.checked_sub(built).unwrap_or_else(|| panic!("{variant:?} w={w}: {extra} < {built}"));
            assert!((15 * blocks..40 * blocks).contains(&rest), "{variant:?} w={w}: {rest} left over, {blocks} blocks");
        }
    }
}
