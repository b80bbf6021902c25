//! What the emulator counts: deterministic across runs and DPUs, exact for known work, and the
//! cost of the two arithmetic variants under docs/PIM.md's cycle model, checked against
//! DRAMatic's measurement (shared/reference/dramatic_calibration.csv) and against each other.
//!
//! `cargo test -p pimhe-pim --test emulator_counts -- --nocapture` prints the cost table.

mod emulator_support;

use emulator_support::{butterflies, model_cycles, residues, set, Dpu};
use pimhe_pim::counts::DpuCounts;
use pimhe_pim::emulator::{EmulatorConfig, LaunchReport, SelfTest};
use pimhe_pim::layout::{PimheCommand, Variant};

/// One launch of `count` NTTs (or INTTs) of degree n on one DPU; returns the report.
fn transform(n: usize, count: usize, variant: Variant, inverse: bool, config: EmulatorConfig) -> LaunchReport {
    let q = pimhe_math::ntt_primes(30, n, 1, &[]).unwrap()[0];
    let d = Dpu::new(q, n, 1);
    let mut dpus = set(1, config);
    let c = count as u32;
    let command = if inverse { PimheCommand::intt(d.at(0), c) } else { PimheCommand::ntt(d.at(0), c) };
    d.load(&mut dpus, 0, variant, &[command]);
    d.put(&mut dpus, 0, 0, &residues(count * n, q, 3));
    dpus.launch(&[0]).unwrap()
}

#[test]
fn counts_are_deterministic_across_runs_and_parallel_dpus() {
    let n = 1024;
    let q = pimhe_math::ntt_primes(30, n, 1, &[]).unwrap()[0];
    let d = Dpu::new(q, n, 3);
    let commands = [
        PimheCommand::ntt(d.at(0), 21),
        PimheCommand::tensor([d.at(21), d.at(22), d.at(23)], [d.at(0), d.at(1), d.at(2), d.at(3)], 1),
        PimheCommand::intt(d.at(0), 21),
    ];
    let data = residues(21 * n, q, 8);
    let run = |dpus_n: usize| {
        let mut dpus = set(dpus_n, EmulatorConfig::default());
        for dpu in 0..dpus_n {
            d.load(&mut dpus, dpu, Variant::Best, &commands);
            d.put(&mut dpus, dpu, 0, &data);
        }
        let all: Vec<usize> = (0..dpus_n).collect();
        dpus.launch(&all).unwrap()
    };
    let first = run(1);
    let again = run(1);
    assert_eq!(first, again);
    let many = run(6);
    for (dpu, counts) in &many.dpus {
        assert_eq!(counts, &first.dpus[0].1, "DPU {dpu}");
    }
    // Coarse-grained dealing continues across commands: the NTT of 21 polynomials gives
    // tasklets 0..=4 two and the rest one; the INTT then starts at tasklet 5, giving 5..=9 two
    // and the rest one. So 0..=4 do 2 NTT + 1 INTT, 5..=9 do 1 NTT + 2 INTT, 10..=15 one of
    // each. The fine-grained TENSOR of one sub-polynomial (8 chunks of 128 words) adds a chunk
    // to tasklets 0..=7; tasklet 0 also resets the heap and writes the status.
    let t = &first.dpus[0].1.tasklets;
    let i: Vec<u64> = t.iter().map(|c| c.instructions).collect();
    assert_eq!((t[1], t[5], t[8], t[10]), (t[4], t[7], t[9], t[15]), "{i:?}");
    assert!(i[0] > i[1], "tasklet 0 also writes the status: {i:?}");
    assert!(i[5] > i[1], "an INTT costs more than an NTT: {i:?}");
    assert!(i[7] > i[8], "tasklets 0..=7 carry a TENSOR chunk: {i:?}");
    assert!(i[9] > i[10], "tasklets 5..=9 carry a third transform: {i:?}");
    // Multiply tallies are part of the instructions.
    for (counts, muls) in first.dpus[0].1.tasklets.iter().zip(&first.multiplies[0].1) {
        assert!(muls.instructions < counts.instructions && muls.mul32 > 0 && muls.mul64 > 0);
    }
}

#[test]
fn known_work_is_counted_exactly() {
    let mut dpus = set(1, EmulatorConfig::default().with_tasklets(7));
    let report = dpus.launch_selftest(&[0], SelfTest::Counts).unwrap();
    let t = &report.dpus[0].1.tasklets;
    assert_eq!(t.len(), 7);
    for (i, c) in t.iter().enumerate() {
        assert_eq!((c.dma_reads, c.dma_read_bytes, c.dma_writes, c.dma_write_bytes), (3, 192, 2, 256), "tasklet {i}");
        assert_eq!(c.instructions - t[0].instructions, i as u64, "tasklet {i}");
    }
}

#[test]
fn best_mul_and_mac_count_what_the_hand_count_says() {
    // Best, N = 4096, 16 tasklets: the difference between 4 and 2 sub-polynomials per operand
    // is 8192 elements in chunks of 128 words for MUL's 2 buffers and 64 for MAC's 3 (2048-byte
    // DMAs halved until they fit the 1248-byte work area the NTT's WRAM tables leave each
    // tasklet: a 1024-byte block and 56 words). Per element (cost.h): the product 35 and best_reduce_sq's shift
    // and split 3 + 1, mulhi11 21, Q q 11 for a prime 2^30 + 1 - k 2^s (k < 2^8, s >= 8) or 21
    // otherwise, three conditional subtractions 3 x 2; MAC adds its accumulator (a 64-bit add,
    // 2). Loads and stores move word pairs: per pair one per operand and a loop iteration (2).
    // Per chunk: the loop step and bounds (2 + 4 + 2 ALU), the branch to the loop specialized
    // on the prime's form, and 2 per DMA.
    let n = 4096;
    let q = pimhe_math::ntt_primes(30, n, 1, &[]).unwrap()[0];
    let k = (1u32 << 30) + 1 - q;
    let special_form = (k >> k.trailing_zeros()) < 256 && k.trailing_zeros() >= 8;
    let reduce = 3 + 1 + 21 + if special_form { 11 } else { 21 } + 3 * 2;
    let d = Dpu::new(q, n, 2);
    let mul = |c| PimheCommand::mul(d.at(0), d.at(4), d.at(8), c);
    let mac = |c| PimheCommand::mac(d.at(0), d.at(4), d.at(8), c);
    // (name, command, words read, words written, chunk, instructions per pair of elements)
    type Case<'a> = (&'static str, &'a dyn Fn(u32) -> PimheCommand, u64, u64, u64, u64);
    let cases: [Case<'_>; 2] = [
        ("MUL", &mul, 2, 1, 128, 2 * (35 + reduce) + (2 + 1 + 2)),
        ("MAC", &mac, 3, 1, 64, 2 * (35 + 2 + reduce) + (3 + 1 + 2)),
    ];
    let elements = 2 * n as u64;
    for (name, build, reads, writes, chunk, per_pair) in cases {
        let run = |c| {
            let mut dpus = set(1, EmulatorConfig::default());
            d.load(&mut dpus, 0, Variant::Best, &[build(c)]);
            d.put(&mut dpus, 0, 0, &residues(12 * n, q, 4));
            dpus.launch(&[0]).unwrap().dpus[0].1.total()
        };
        let (b, s) = (run(4), run(2));
        let chunks = elements / chunk;
        let moved = (b.dma_reads - s.dma_reads, b.dma_read_bytes - s.dma_read_bytes, b.dma_writes - s.dma_writes);
        assert_eq!(moved, (reads * chunks, 4 * reads * elements, writes * chunks), "{name}");
        let per_chunk = 8 + 1 + 2 * (reads + writes);
        assert_eq!(b.instructions - s.instructions, elements / 2 * per_pair + chunks * per_chunk, "{name}");
    }
}

#[test]
fn multiply_compositions_match_native_arithmetic() {
    let mut dpus = set(1, EmulatorConfig::default().with_tasklets(4));
    dpus.launch_selftest(&[0], SelfTest::Arith).unwrap();
}

/// One launch of an automorphism of `count` sub-polynomials of degree n on one DPU.
fn automorphism(n: usize, count: usize, ntt_form: bool, variant: Variant) -> DpuCounts {
    let q = pimhe_math::ntt_primes(30, n, 1, &[]).unwrap()[0];
    let d = Dpu::new(q, n, 1);
    let mut dpus = set(1, EmulatorConfig::default());
    let k = (2 * n - 5) as u32;
    d.load(&mut dpus, 0, variant, &[PimheCommand::automorphism(d.at(count), d.at(0), k, ntt_form, count as u32)]);
    d.put(&mut dpus, 0, 0, &residues(count * n, q, 5));
    dpus.launch(&[0]).unwrap().dpus[0].1.clone()
}

#[test]
fn automorphism_moves_what_its_dma_pattern_says() {
    // 16 sub-polynomials of N = 4096 on 16 tasklets, less a launch of none (header, command).
    // Blocks are 256 words, or 128 when the best variant keeps the NTT's tables in WRAM.
    let (n, count) = (4096usize, 16usize);
    let words = (n * count) as u64;
    for (variant, block) in [(Variant::Barrett, 256u64), (Variant::Best, 128)] {
        let mut cycles = Vec::new();
        for ntt_form in [true, false] {
            let run = automorphism(n, count, ntt_form, variant);
            let idle = automorphism(n, 0, ntt_form, variant).total();
            let total = run.total();
            let moved = (
                total.dma_reads - idle.dma_reads,
                total.dma_read_bytes - idle.dma_read_bytes,
                total.dma_writes - idle.dma_writes,
                total.dma_write_bytes - idle.dma_write_bytes,
            );
            // NTT form: one read and one write per block; coefficients: one 8-byte read per word.
            let expected = if ntt_form {
                (words / block, 4 * words, words / block, 4 * words)
            } else {
                (words, 8 * words, words / block, 4 * words)
            };
            assert_eq!(moved, expected, "{variant:?} ntt_form={ntt_form}");
            let per_word = (total.instructions - idle.instructions) as f64 / words as f64;
            let range = if ntt_form { 12.0..15.0 } else { 18.0..22.0 };
            assert!(range.contains(&per_word), "{variant:?} ntt_form={ntt_form}: {per_word:.2} instructions per word");
            cycles.push(model_cycles(&run));
        }
        // The gathers of the coefficient form cost about alpha + 4 cycles a word on the DMA engine.
        let coefficient_per_word = cycles[1] / words as f64;
        assert!((80.0..84.0).contains(&coefficient_per_word), "{coefficient_per_word:.1} cycles per word");
        assert!(
            cycles[1] > 5.0 * cycles[0],
            "{variant:?}: NTT form {} vs coefficients {} cycles",
            cycles[0],
            cycles[1]
        );
    }
}

fn per_ntt(n: usize, variant: Variant) -> (DpuCounts, f64, f64, u64) {
    // 16 NTTs on 16 tasklets: one each, the DRAMatic calibration point for N = 2048.
    let report = transform(n, 16, variant, false, EmulatorConfig::default());
    let counts = report.dpus[0].1.clone();
    // Setup-only launch to subtract the per-launch overhead from a tasklet's counts.
    let idle = transform(n, 0, variant, false, EmulatorConfig::default()).dpus[0].1.tasklets[1];
    let t = counts.tasklets[1];
    let instr = t.instructions - idle.instructions;
    let dma = t.dma_read_bytes + t.dma_write_bytes - idle.dma_read_bytes - idle.dma_write_bytes;
    let cycles = model_cycles(&counts);
    (counts, instr as f64, cycles, dma)
}

#[test]
fn best_ntt_is_at_least_1_5x_cheaper_than_barrett() {
    let n = 4096;
    let (_, bar_instr, bar_cycles, _) = per_ntt(n, Variant::Barrett);
    let (_, best_instr, best_cycles, _) = per_ntt(n, Variant::Best);
    let ratio = bar_cycles / best_cycles;
    assert!(ratio >= 1.5, "barrett {bar_cycles} cycles vs best {best_cycles}: only {ratio:.3}x");
    assert!(bar_instr / best_instr >= 1.5);
    // One NTT alone on a DPU (the pipeline term of the model) is cheaper too.
    let one = |v| model_cycles(&transform(n, 1, v, false, EmulatorConfig::default()).dpus[0].1);
    assert!(one(Variant::Barrett) / one(Variant::Best) >= 1.5);
}

#[test]
fn barrett_lands_near_dramatics_measurement() {
    // DRAMatic Table 2: 512 ciphertexts (N = 2048, 2 primes) on 128 DPUs = 16 NTTs per DPU in
    // 0.061 s at 350 MHz with 16 tasklets: 0.061 * 350e6 / (16 * 1024 * 11) = 118.5 cycles
    // per butterfly.
    let n = 2048;
    let (_, _, cycles, _) = per_ntt(n, Variant::Barrett);
    let per_butterfly = cycles / (16 * butterflies(n)) as f64;
    let measured = 0.061 * 350e6 / (16 * butterflies(n)) as f64;
    let off = per_butterfly / measured - 1.0;
    assert!(off.abs() < 0.2, "{per_butterfly:.1} cycles per butterfly vs DRAMatic {measured:.1}");
}

#[test]
fn cost_table() {
    println!(
        "{:>8} {:>5} {:>7} | {:>12} {:>12} {:>11} {:>12} | {:>14} {:>10}",
        "variant", "N", "op", "instr/NTT", "instr/bfly", "DMAs/NTT", "DMA B/NTT", "cycles(16x16)", "cyc/bfly"
    );
    for n in [2048usize, 4096] {
        for variant in Variant::ALL {
            for inverse in [false, true] {
                let report = transform(n, 16, variant, inverse, EmulatorConfig::default());
                let idle = transform(n, 0, variant, inverse, EmulatorConfig::default()).dpus[0].1.tasklets[1];
                let counts = &report.dpus[0].1;
                let t = counts.tasklets[1];
                let instr = t.instructions - idle.instructions;
                let dmas = t.dma_reads + t.dma_writes - idle.dma_reads - idle.dma_writes;
                let bytes = t.dma_read_bytes + t.dma_write_bytes - idle.dma_read_bytes - idle.dma_write_bytes;
                let cycles = model_cycles(counts);
                let bf = butterflies(n) as f64;
                println!(
                    "{:>8} {:>5} {:>7} | {:>12} {:>12.1} {:>11} {:>12} | {:>14.0} {:>10.1}",
                    format!("{variant:?}"),
                    n,
                    if inverse { "INTT" } else { "NTT" },
                    instr,
                    instr as f64 / bf,
                    dmas,
                    bytes,
                    cycles,
                    cycles / (16.0 * bf)
                );
            }
        }
    }
    // Element-wise operations: 16 sub-polynomials of N = 4096 per operand, all 16 tasklets.
    let n = 4096;
    let q = pimhe_math::ntt_primes(30, n, 1, &[]).unwrap()[0];
    let d = Dpu::new(q, n, 1);
    let m = d.tables.modulus;
    let (c, k) = (16u32, 16usize);
    let ops = [
        ("ADD", PimheCommand::add(d.at(0), d.at(0), d.at(k), c)),
        ("SUB", PimheCommand::sub(d.at(0), d.at(0), d.at(k), c)),
        ("MUL", PimheCommand::mul(d.at(0), d.at(0), d.at(k), c)),
        ("MAC", PimheCommand::mac(d.at(0), d.at(k), d.at(2 * k), c)),
        ("MULC", PimheCommand::mulc(d.at(0), d.at(0), 12345, &m, c)),
        (
            "TENSOR",
            PimheCommand::tensor(
                [d.at(0), d.at(k), d.at(2 * k)],
                [d.at(3 * k), d.at(4 * k), d.at(5 * k), d.at(6 * k)],
                c,
            ),
        ),
    ];
    let fused = [
        ("TENS_SQ", PimheCommand::tensor_square([d.at(0), d.at(k), d.at(2 * k)], d.at(3 * k), d.at(4 * k), c)),
        ("CMAC", PimheCommand::cmac(d.at(0), d.at(k), 12345, &m, c)),
        ("CADD", PimheCommand::cadd(d.at(0), d.at(k), 12345, true, &m, c)),
        ("SUBMULC", PimheCommand::sub_mulc(d.at(0), d.at(0), d.at(k), 12345, false, &m, c)),
    ];
    let automorphisms = [
        ("AUT-NTT", PimheCommand::automorphism(d.at(k), d.at(0), 5, true, c)),
        ("AUT-COEF", PimheCommand::automorphism(d.at(k), d.at(0), 5, false, c)),
    ];
    let ops = ops.into_iter().chain(fused).chain(automorphisms);
    println!("{:>8} {:>8} | {:>14} {:>14} {:>16}", "variant", "op", "instr/element", "DMA B/element", "cycles/element");
    for variant in Variant::ALL {
        for (name, command) in ops.clone() {
            let mut dpus = set(1, EmulatorConfig::default());
            d.load(&mut dpus, 0, variant, &[command]);
            d.put(&mut dpus, 0, 0, &residues(7 * k * n, q, 4));
            let counts = dpus.launch(&[0]).unwrap().dpus[0].1.clone();
            let total = counts.total();
            let elements = (k * n) as f64;
            println!(
                "{:>8} {:>8} | {:>14.1} {:>14.1} {:>16.1}",
                format!("{variant:?}"),
                name,
                total.instructions as f64 / elements,
                (total.dma_read_bytes + total.dma_write_bytes) as f64 / elements,
                model_cycles(&counts) / elements
            );
        }
    }
}

/// The modeled compute time of one DPU's share of the benchmark pipeline at N = 4096, three
/// 30-bit primes, 32768 ciphertexts on 383 DPUs in parallel mode (127 DPUs per prime):
/// NTT of the 4 x 16384 input polynomials, the 16384 BGV tensors, INTT of the 3 x 16384
/// outputs. One launch per DPU with its real share (`ntts` NTTs, `pairs` tensors, 3 `pairs`
/// INTTs), one DPU per prime, timed with `UpmemModel::v1b()` (slowest DPU + launch overhead).
/// Spot-checks the results against the CPU.
fn pipeline_share_seconds(ntts: usize, pairs: usize) -> (f64, Vec<u64>) {
    let n = 4096;
    let primes = pimhe_math::ntt_primes(30, n, 3, &[]).unwrap();
    let quarter = ntts / 4;
    assert_eq!(quarter, pairs);
    let dpus: Vec<Dpu> = primes.iter().map(|&q| Dpu::new(q, n, 3)).collect();
    let mut set = set(3, EmulatorConfig::default());
    let out = ntts; // d0, d1, d2 follow the inputs
    let commands = |d: &Dpu| {
        [
            PimheCommand::ntt(d.at(0), ntts as u32),
            PimheCommand::tensor(
                [d.at(out), d.at(out + pairs), d.at(out + 2 * pairs)],
                [d.at(0), d.at(pairs), d.at(2 * pairs), d.at(3 * pairs)],
                pairs as u32,
            ),
            PimheCommand::intt(d.at(out), 3 * pairs as u32),
        ]
    };
    let mut inputs = Vec::new();
    for (i, d) in dpus.iter().enumerate() {
        d.load(&mut set, i, Variant::Best, &commands(d));
        let data = residues(ntts * n, d.q(), 11 + i as u64);
        d.put(&mut set, i, 0, &data);
        inputs.push(data);
    }
    let report = set.launch(&[0, 1, 2]).unwrap();
    // Spot-check the first and the last pair of each prime: INTT(NTT(a) .* NTT(b) ...).
    for (i, d) in dpus.iter().enumerate() {
        let q = d.q() as u64;
        for p in [0, pairs - 1] {
            let poly = |k: usize| d.cpu_ntt(&inputs[i][(k * pairs + p) * n..(k * pairs + p + 1) * n]);
            let (a0, a1, b0, b1) = (poly(0), poly(1), poly(2), poly(3));
            let m = |x: u32, y: u32| x as u64 * y as u64 % q;
            let d0: Vec<u32> = (0..n).map(|j| m(a0[j], b0[j]) as u32).collect();
            let d1: Vec<u32> = (0..n).map(|j| ((m(a0[j], b1[j]) + m(a1[j], b0[j])) % q) as u32).collect();
            let d2: Vec<u32> = (0..n).map(|j| m(a1[j], b1[j]) as u32).collect();
            for (k, want) in [d0, d1, d2].iter().enumerate() {
                assert_eq!(d.get(&set, i, out + k * pairs + p, n), d.cpu_intt(want), "prime {i} pair {p} output {k}");
            }
        }
    }
    let model = pimhe_pim::model::UpmemModel::v1b();
    let counts: Vec<DpuCounts> = report.dpus.iter().map(|(_, c)| c.clone()).collect();
    let cycles = counts.iter().map(|c| model.dpu_cycles(c)).collect();
    (model.launch_seconds(&counts), cycles)
}

#[test]
fn pipeline_target_compute_time() {
    // 65536 sub-polynomials / 127 DPUs = 516 NTTs (4 DPUs get 517), 16384 pairs / 127 = 129
    // tensors and 387 INTTs (one DPU gets 130 / 390).
    let (seconds, cycles) = pipeline_share_seconds(516, 129);
    println!(
        "pipeline target (N = 4096, 3 x 30-bit primes, 32768 ciphertexts, 383 DPUs, parallel, best): \
         {seconds:.3} s compute modeled (upmem-v1b), DPU cycles per prime {cycles:?}"
    );
    // The busiest DPU of an even split of each batch of 16384 over 127 DPUs: 130 of each.
    let (busiest, _) = pipeline_share_seconds(520, 130);
    println!("  busiest DPU (4 x 130 NTTs, 130 tensors, 390 INTTs): {busiest:.3} s");
    assert!(seconds <= 4.0, "pipeline target: {seconds:.3} s modeled > 4.0 s");
}
