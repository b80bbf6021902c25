//! The DPU kernels at the ring degrees above 2^15 (up to the kernel's 2^20), where a
//! sub-polynomial (256 KiB .. 4 MiB) and its twiddle tables (1 .. 16 MiB per prime) stream
//! through the 64 KiB WRAM in DMA tiles: NTT and INTT at N = 2^16 for both variants against
//! the CPU's NttTable; a negacyclic product (NTT, MUL, INTT on the DPU) checked at sampled
//! coefficients by a direct schoolbook sum; element-wise kernels and a base conversion at 2^16
//! against u64 arithmetic; an NTT round trip at 2^20 on one DPU (what `--emulate subset` emulates
//! of a large system: one representative DPU per prime) checked at sampled slots by evaluating
//! the input at the slot's root of unity, and both automorphism forms there against their
//! definition; and the counted instructions and DMAs of a barrett NTT at 2^16 against a hand
//! count of its charges (dpu/kernels/cost.h).

mod emulator_support;

use emulator_support::{residues, set, Dpu};
use pimhe_math::Modulus;
use pimhe_pim::emulator::EmulatorConfig;
use pimhe_pim::layout::{PimheCommand, Variant, N_MAX};
use pimhe_testkit::oracle::{automorphism_residues, bit_reverse, evaluate, pow_mod};

const N16: usize = 1 << 16;

fn prime(n: usize) -> u32 {
    pimhe_math::ntt_primes(30, n, 1, &[]).unwrap()[0]
}

/// Coefficients 0, 1, N - 1 and `extra` more spread over [0, N) by a fixed stride.
fn sampled(n: usize, extra: usize) -> Vec<usize> {
    let mut at = vec![0, 1, n - 1];
    at.extend((0..extra).map(|k| (k * 40_503 + 17) % n));
    at
}

/// Coefficient k of a b in Z_q[x]/(x^N + 1), summed directly: sum_{i <= k} a_i b_{k-i} minus
/// sum_{i > k} a_i b_{N+k-i} (x^N = -1).
fn negacyclic_coefficient(a: &[u32], b: &[u32], k: usize, q: u64) -> u64 {
    let n = a.len();
    let (mut plus, mut minus) = (0u64, 0u64);
    for i in 0..n {
        let p = a[i] as u64 * b[(n + k - i) % n] as u64 % q;
        if i <= k {
            plus = (plus + p) % q;
        } else {
            minus = (minus + p) % q;
        }
    }
    (plus + q - minus) % q
}

#[test]
fn ntt_and_intt_at_2_16_match_the_cpu_for_both_variants() {
    let q = prime(N16);
    let d = Dpu::new(q, N16, 2);
    let data = residues(N16, q, 61);
    for variant in Variant::ALL {
        let mut dpus = set(1, EmulatorConfig::default());
        d.load(&mut dpus, 0, variant, &[PimheCommand::ntt(d.at(0), 1), PimheCommand::intt(d.at(1), 1)]);
        d.put(&mut dpus, 0, 0, &data);
        d.put(&mut dpus, 0, 1, &data);
        dpus.launch(&[0]).unwrap();
        assert!(d.get(&dpus, 0, 0, N16) == d.cpu_ntt(&data), "NTT N=2^16 {variant:?}");
        assert!(d.get(&dpus, 0, 1, N16) == d.cpu_intt(&data), "INTT N=2^16 {variant:?}");
    }
}

#[test]
fn negacyclic_product_at_2_16_matches_a_schoolbook_sum_at_sampled_coefficients() {
    let q = prime(N16);
    let d = Dpu::new(q, N16, 4);
    let (a, b) = (residues(N16, q, 62), residues(N16, q, 63));
    for variant in Variant::ALL {
        // Two sub-polynomials in one NTT command (the best variant's tasklets share each).
        let commands = [
            PimheCommand::ntt(d.at(0), 2),
            PimheCommand::mul(d.at(2), d.at(0), d.at(1), 1),
            PimheCommand::intt(d.at(2), 1),
        ];
        let mut dpus = set(1, EmulatorConfig::default());
        d.load(&mut dpus, 0, variant, &commands);
        d.put(&mut dpus, 0, 0, &a);
        d.put(&mut dpus, 0, 1, &b);
        dpus.launch(&[0]).unwrap();
        let product = d.get(&dpus, 0, 2, N16);
        for k in sampled(N16, 13) {
            assert_eq!(product[k] as u64, negacyclic_coefficient(&a, &b, k, q as u64), "{variant:?} coefficient {k}");
        }
    }
}

#[test]
fn elementwise_kernels_and_a_base_conversion_at_2_16_match_u64_arithmetic() {
    let n = N16;
    let primes = pimhe_math::ntt_primes(30, n, 2, &[]).unwrap();
    let (q, source) = (primes[0], primes[1]);
    let (q64, m) = (q as u64, Modulus::new(q as u64).unwrap());
    let d = Dpu::new(q, n, 4);
    // Slots: 0, 1 inputs modulo q; 2 a residue modulo the source prime; 3.. outputs.
    let (x, y, z) = (residues(n, q, 64), residues(n, q, 65), residues(n, source, 66));
    let scalar = 987_654_321 % q;
    let commands = [
        PimheCommand::add(d.at(3), d.at(0), d.at(1), 1),
        PimheCommand::mul(d.at(4), d.at(0), d.at(1), 1),
        PimheCommand::tensor([d.at(5), d.at(6), d.at(7)], [d.at(0), d.at(1), d.at(1), d.at(0)], 1),
        PimheCommand::bconv(d.at(8), d.at(2), source, scalar, true, false, &m, 1),
    ];
    for variant in Variant::ALL {
        let mut dpus = set(1, EmulatorConfig::default());
        d.load(&mut dpus, 0, variant, &commands);
        d.put(&mut dpus, 0, 0, &x);
        d.put(&mut dpus, 0, 1, &y);
        d.put(&mut dpus, 0, 2, &z);
        dpus.launch(&[0]).unwrap();
        let out: Vec<Vec<u32>> = (3..9).map(|slot| d.get(&dpus, 0, slot, n)).collect();
        for j in 0..n {
            let (a, b) = (x[j] as u64, y[j] as u64);
            // The source residue centred: y - source above source / 2, as an integer.
            let centred = if z[j] > source / 2 { z[j] as i64 - source as i64 } else { z[j] as i64 };
            let want = [
                (a + b) % q64,
                a * b % q64,
                a * b % q64,
                (a * a + b * b) % q64,
                b * a % q64,
                centred.rem_euclid(q as i64) as u64 * scalar as u64 % q64,
            ];
            let got: Vec<u64> = out.iter().map(|o| o[j] as u64).collect();
            assert_eq!(got, want, "{variant:?} element {j} (ADD, MUL, TENSOR d0 d1 d2, BCONV)");
        }
    }
}

#[test]
fn ntt_round_trip_at_the_largest_degree_on_one_dpu() {
    // N = 2^20: 4 MiB per sub-polynomial, 16 MiB of twiddle tables; the DPU a large run's
    // `--emulate subset` would emulate for this prime.
    let n = N_MAX;
    let q = prime(n);
    let d = Dpu::new(q, n, 2);
    let data = residues(n, q, 67);
    let mut dpus = set(1, EmulatorConfig::default());
    d.load(&mut dpus, 0, Variant::Best, &[PimheCommand::ntt(d.at(0), 1)]);
    d.put(&mut dpus, 0, 0, &data);
    dpus.launch(&[0]).unwrap();
    let slots = d.get(&dpus, 0, 0, n);
    // Slot j holds a(psi^(2 bitrev(j) + 1)), psi the table's 2N-th root of unity.
    let (q64, psi) = (q as u64, d.tables.table.root() as u64);
    for j in sampled(n, 5) {
        let point = pow_mod(psi, 2 * bit_reverse(j, n.trailing_zeros()) as u64 + 1, q64);
        assert_eq!(slots[j] as u64, evaluate(&data, point, q64), "slot {j}");
    }
    d.load(&mut dpus, 0, Variant::Best, &[PimheCommand::intt(d.at(0), 1)]);
    dpus.launch(&[0]).unwrap();
    assert!(d.get(&dpus, 0, 0, n) == data, "INTT(NTT(a)) != a at N = 2^20");
}

#[test]
fn automorphisms_at_the_largest_degree() {
    // Index products pass 2^32 here (a block index of 12 bits times k < 2^21) and wrap before
    // the mask to N - 1; k^-1 mod 2^32 needs 21 correct bits.
    let n = N_MAX;
    let q = prime(n);
    let d = Dpu::new(q, n, 2);
    let data = residues(n, q, 69);
    let k = (2 * n - 3) as u32;
    let commands = [
        PimheCommand::automorphism(d.at(1), d.at(0), k, true, 1),
        PimheCommand::automorphism(d.at(2), d.at(0), k, false, 1),
    ];
    let mut dpus = set(1, EmulatorConfig::default());
    d.load(&mut dpus, 0, Variant::Best, &commands);
    d.put(&mut dpus, 0, 0, &data);
    dpus.launch(&[0]).unwrap();
    let coefficients = automorphism_residues(&data, k as usize, q);
    assert!(d.get(&dpus, 0, 2, n) == coefficients, "coefficient form");
    let ntt_form = d.cpu_ntt(&automorphism_residues(&d.cpu_intt(&data), k as usize, q));
    assert!(d.get(&dpus, 0, 1, n) == ntt_form, "NTT form");
}

/// Instructions and DMAs of one barrett NTT of degree n by one tasklet, from cost.h's charges
/// (ntt_barrett.h's loops, dma.h's fetch_words, the shim's 2 per DMA call), for the 2048-byte
/// block of up to 16 tasklets: (instructions, DMA reads, DMA writes).
fn barrett_ntt_hand_count(n: u64) -> (u64, u64, u64) {
    const BLOCK: u64 = 512; // words
    const HALF: u64 = BLOCK / 2;
    const DMA_CALL: u64 = 2; // COST_RT_DMA
                             // CT butterfly: the loop and two ld/sd pairs (6), bar_mulmod = mul32_64 (35) + bar_reduce
                             // (2 shift64 + 1 = 7, mul32_64 35, mul32_32 21, two csub 4), addmod 3, submod 3.
    const BUTTERFLY: u64 = 6 + 35 + (7 + 35 + 21 + 4) + 3 + 3;
    // fetch_words of one DMA: 4 ALU, one loop step and add (3), the DMA call.
    const FETCH: u64 = 4 + 3 + DMA_CALL;
    let (mut instructions, mut reads, mut writes) = (0, 0, 0);
    let (mut groups, mut gap) = (1u64, n / 2);
    while groups < n {
        // bar_ntt's loop step and shift (3), bar_stage's set-up (6).
        instructions += 3 + 6;
        if gap >= HALF {
            // Per group: loop, load, 2 ALU (5) and one twiddle fetched; per half-block span:
            // loop and 2 ALU (4), four DMA calls, HALF butterflies.
            let spans = groups * gap / HALF;
            instructions += groups * (5 + FETCH) + spans * (4 + 4 * DMA_CALL + HALF * BUTTERFLY);
            reads += groups + 2 * spans;
            writes += 2 * spans;
        } else {
            // Per block: loop and 2 ALU (4), read, the block's twiddles in one fetch, write;
            // per group of the block: loop, load, ALU (4) and its gap butterflies.
            let (blocks, per_block) = (n / BLOCK, BLOCK / (2 * gap));
            instructions += blocks * (4 + 2 * DMA_CALL + FETCH + per_block * (4 + gap * BUTTERFLY));
            reads += 2 * blocks;
            writes += blocks;
        }
        groups <<= 1;
        gap >>= 1;
    }
    // transform_command's loop step over the sub-polynomial (loop, 2 ALU).
    (instructions + 4, reads, writes)
}

#[test]
fn barrett_ntt_at_2_16_counts_what_the_hand_count_says() {
    let n = N16;
    let q = prime(n);
    let d = Dpu::new(q, n, 1);
    // One sub-polynomial goes to tasklet 0; the same launch with none is the baseline.
    let launch = |count: u32| {
        let mut dpus = set(1, EmulatorConfig::default());
        d.load(&mut dpus, 0, Variant::Barrett, &[PimheCommand::ntt(d.at(0), count)]);
        d.put(&mut dpus, 0, 0, &residues(n, q, 68));
        dpus.launch(&[0]).unwrap().dpus[0].1.tasklets[0]
    };
    let (one, none) = (launch(1), launch(0));
    let counted =
        (one.instructions - none.instructions, one.dma_reads - none.dma_reads, one.dma_writes - none.dma_writes);
    assert_eq!(counted, barrett_ntt_hand_count(n as u64));
    // Every coefficient read and written once per stage, twiddles on top.
    let stages = n.trailing_zeros() as u64;
    assert_eq!(one.dma_write_bytes - none.dma_write_bytes, stages * 4 * n as u64);
}
