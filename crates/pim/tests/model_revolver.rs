//! The per-DPU cycle formula of `upmem-v1b` against hand-computed values (docs/PIM.md,
//! "Counting -> time"; revolver from DRAMatic 2.1, DMA costs from PrIM).

use pimhe_pim::counts::{DpuCounts, TaskletCounts};
use pimhe_pim::model::{MultiplierCycles, MultiplyCounts, UpmemModel, MODEL_NAME, MODEL_VERSION};

fn compute(instructions: u64) -> TaskletCounts {
    TaskletCounts { instructions, ..Default::default() }
}

fn dpu(tasklets: Vec<TaskletCounts>) -> DpuCounts {
    DpuCounts { tasklets }
}

#[test]
fn constants_are_the_documented_ones() {
    let m = UpmemModel::v1b();
    assert_eq!((m.name, m.version), (MODEL_NAME, MODEL_VERSION));
    assert_eq!(m.name, "upmem-v1b");
    assert_eq!(m.dpu_hz, 350e6);
    assert_eq!(m.revolver_cycles, 11);
    assert_eq!(m.max_tasklets, 16);
    assert_eq!(m.dpus_per_rank, 64);
    assert_eq!((m.dma_read_alpha_cycles, m.dma_write_alpha_cycles, m.dma_beta_cycles_per_byte), (77.0, 61.0, 0.5));
    assert_eq!(m.idle_power_w, 310.0);
    assert_eq!(m.multiplier_cycles, None);
    assert!(!m.zero_copy);
    // The default is @2, which keeps every constant of @1.
    let v2 = UpmemModel::v1b2();
    assert_eq!(UpmemModel::default(), v2);
    assert_eq!(UpmemModel { version: v2.version, pricing: v2.pricing, rank_transfers: v2.rank_transfers, ..m }, v2);
}

#[test]
fn one_tasklet_issues_every_eleven_cycles() {
    let m = UpmemModel::v1b();
    assert_eq!(m.dpu_cycles(&dpu(vec![compute(1)])), 11);
    assert_eq!(m.dpu_cycles(&dpu(vec![compute(12_345)])), 11 * 12_345);
    // Idle tasklets change nothing.
    let mut tasklets = vec![compute(0); 16];
    tasklets[7] = compute(1000);
    assert_eq!(m.dpu_cycles(&dpu(tasklets)), 11_000);
}

#[test]
fn balanced_tasklets_fill_the_pipeline_from_eleven_on() {
    let m = UpmemModel::v1b();
    for t in 1..=16u64 {
        let cycles = m.dpu_cycles(&dpu(vec![compute(1000); t as usize]));
        // Below 11 tasklets each still waits 11 cycles per instruction; from 11 on the DPU
        // issues one instruction per cycle and the time is the sum.
        assert_eq!(cycles, 1000 * t.max(11), "{t} tasklets");
    }
    assert_eq!(m.dpu_cycles(&dpu(vec![compute(1000); 16])), 16_000);
}

#[test]
fn uneven_loads_pay_for_the_tail() {
    let m = UpmemModel::v1b();
    // 22 equal items over 16 tasklets: 6 tasklets do 2, 10 do 1. All 16 run the first item
    // (16 units), then 6 run alone at one instruction per 11 cycles (11 units).
    let mut loads = vec![compute(100); 16];
    for t in loads.iter_mut().take(6) {
        *t = compute(200);
    }
    assert_eq!(m.dpu_cycles(&dpu(loads.clone())), 1600 + 1100);
    // docs/PIM.md's max(sum, 11 * max) is a lower bound that misses the tail.
    let sum: u64 = loads.iter().map(|t| t.instructions).sum();
    assert_eq!(sum.max(11 * 200), 2200);
    // Hand computation of the general formula: loads 10, 20, 30 over 3 tasklets.
    assert_eq!(m.dpu_cycles(&dpu(vec![compute(30), compute(10), compute(20)])), 11 * 30);
    // 12 tasklets, one twice as long: 12 * 100 for the common part, then 11 * 100 alone.
    let mut twelve = vec![compute(100); 12];
    twelve[3] = compute(200);
    assert_eq!(m.dpu_cycles(&dpu(twelve)), 1200 + 1100);
    assert_eq!(m.revolver_issue_cycles(&[]), 0);
    assert_eq!(m.dpu_cycles(&DpuCounts::default()), 0);
}

#[test]
fn dma_bound_dpu_is_the_sum_of_its_transfers() {
    let m = UpmemModel::v1b();
    // 16 tasklets, 100 instructions and 10 reads + 10 writes of 2048 bytes each.
    let t = TaskletCounts {
        instructions: 100,
        dma_reads: 10,
        dma_read_bytes: 20_480,
        dma_writes: 10,
        dma_write_bytes: 20_480,
    };
    let per_tasklet = 10.0 * (77.0 + 1024.0) + 10.0 * (61.0 + 1024.0);
    assert_eq!(m.dma_cycles(&t), per_tasklet);
    assert_eq!(m.dpu_cycles(&dpu(vec![t; 16])), (16.0 * per_tasklet) as u64);
    // Odd byte counts round the total up.
    let odd = TaskletCounts { dma_reads: 1, dma_read_bytes: 9, ..Default::default() };
    assert_eq!(m.dpu_cycles(&dpu(vec![odd])), 82); // 77 + 4.5, rounded up
}

#[test]
fn a_lone_tasklet_adds_its_dma_latency_once() {
    let m = UpmemModel::v1b();
    let t = TaskletCounts { instructions: 1000, dma_reads: 2, dma_read_bytes: 4096, ..Default::default() };
    // Chain: 11 * 1000 issue cycles + 2 * (77 + 1024) DMA cycles, not 11 * (1000 + 2202).
    assert_eq!(m.dpu_cycles(&dpu(vec![t])), 11_000 + 2202);
    // With 16 such tasklets the pipeline (16 000) and the DMA engine (35 232) compete.
    assert_eq!(m.dpu_cycles(&dpu(vec![t; 16])), 16 * 2202);
    // With little DMA the pipeline wins.
    let light = TaskletCounts { instructions: 10_000, dma_reads: 1, dma_read_bytes: 8, ..Default::default() };
    assert_eq!(m.dpu_cycles(&dpu(vec![light; 16])), 160_000);
}

#[test]
fn launch_is_the_slowest_dpu_plus_overhead() {
    let m = UpmemModel::v1b();
    let full = dpu(vec![compute(1000); 16]); // 16 000 cycles
    let lone = dpu(vec![compute(2000)]); // 22 000 cycles: fewer instructions, slower
    let t = m.dpu_time(&lone);
    assert_eq!(t.cycles, 22_000);
    assert!((t.seconds - 22_000.0 / 350e6).abs() < 1e-18);
    let launch = m.launch_seconds(&[full, lone]);
    assert!((launch - (22_000.0 / 350e6 + m.launch_overhead_s)).abs() < 1e-15);
    assert_eq!(m.launch_seconds(&[]), 0.0);
}

#[test]
fn multiplier_what_if_replaces_the_multiply_instructions() {
    let butterfly = 118u64;
    // Hypothetical butterfly: two 32x32->64 multiplies (35 each) and one 32x32->32 (21).
    let muls_per = MultiplyCounts { mul32: 1, mul64: 2, instructions: 2 * 35 + 21 };
    let items = 1000u64;
    let tasklet = compute(butterfly * items);
    let muls = MultiplyCounts {
        mul32: muls_per.mul32 * items,
        mul64: muls_per.mul64 * items,
        instructions: muls_per.instructions * items,
    };
    let counts = dpu(vec![tasklet; 16]);
    let per_dpu_muls = vec![muls; 16];

    let mut m = UpmemModel::v1b();
    // Without the what-if the multiply counts change nothing.
    assert_eq!(m.dpu_cycles_with(&counts, &per_dpu_muls), m.dpu_cycles(&counts));
    assert_eq!(m.dpu_cycles(&counts), 16 * 118 * 1000);

    m.multiplier_cycles = Some(MultiplierCycles::DRAMATIC_DUMMY);
    // 118 - 91 + 1 * 2 + 2 * 4 = 37 cycles per butterfly.
    assert_eq!(m.dpu_cycles_with(&counts, &per_dpu_muls), 16 * 37 * 1000);
    m.multiplier_cycles = Some(MultiplierCycles::SINGLE_CYCLE);
    assert_eq!(m.dpu_cycles_with(&counts, &per_dpu_muls), 16 * 30 * 1000);
    // Without multiply counts the what-if has nothing to replace.
    assert_eq!(m.dpu_cycles(&counts), 16 * 118 * 1000);
    // Launch level: DPU d's tasklet t uses muls[d][t].
    let launch = m.launch_seconds_with(&[counts.clone(), counts], &[per_dpu_muls.clone(), vec![]]);
    assert!((launch - (16.0 * 118_000.0 / 350e6 + m.launch_overhead_s)).abs() < 1e-12);
    // Saturation: more multiply instructions than counted cannot go negative.
    let silly = MultiplyCounts { mul32: 1, mul64: 0, instructions: 10 };
    assert_eq!(m.effective_instructions(&compute(5), Some(&silly)), 1);
    assert_eq!(m.label(), "upmem-v1b@1+mul=1/1 (modeled)");
}
