//! Barrier intervals: what the emulator records between barriers, and `upmem-v1b@2`'s price
//! of a launch from them, against hand-computed counts and cycles.

mod emulator_support;

use emulator_support::{residues, set, Dpu};
use pimhe_pim::counts::{DpuCounts, IntervalCounts, TaskletCounts};
use pimhe_pim::emulator::{EmulatorConfig, LaunchReport, SelfTest};
use pimhe_pim::layout::{PimheCommand, Variant};
use pimhe_pim::model::UpmemModel;

/// The runtime charges of `dpu/kernels/cost.h` that the self-test's intervals contain.
const RT_ME: u64 = 1;
const RT_MEM_ALLOC: u64 = 8;
const RT_DMA: u64 = 2;
const RT_BARRIER: u64 = 12;

fn work(instructions: u64) -> TaskletCounts {
    TaskletCounts { instructions, ..Default::default() }
}

fn intervals_selftest() -> LaunchReport {
    let mut dpus = set(1, EmulatorConfig::default());
    dpus.launch_selftest(&[0], SelfTest::Intervals).unwrap()
}

#[test]
fn each_barrier_closes_an_interval_with_every_tasklets_work_since_the_last() {
    let report = intervals_selftest();
    let intervals = &report.intervals[0].1;
    assert_eq!(intervals.len(), 3);
    // 1: me(), mem_alloc, then tasklet 0 alone charges 1000 and reads 64 bytes; the barrier.
    let mut first = vec![work(RT_ME + RT_MEM_ALLOC + RT_BARRIER); 16];
    first[0] = TaskletCounts {
        instructions: RT_ME + RT_MEM_ALLOC + 1000 + RT_DMA + RT_BARRIER,
        dma_reads: 1,
        dma_read_bytes: 64,
        ..Default::default()
    };
    // 2: every tasklet t charges 1000 + t; the barrier. 3: 7 each to the end.
    let second: Vec<_> = (0..16).map(|t| work(1000 + t + RT_BARRIER)).collect();
    let third = vec![work(7); 16];
    for (i, want) in [first, second, third].into_iter().enumerate() {
        assert_eq!(intervals[i].repeats, 1, "interval {i}");
        assert_eq!(intervals[i].tasklets, want, "interval {i}");
    }
    // The totals stay what they were: the sum of the intervals.
    let mut summed = vec![TaskletCounts::default(); 16];
    for interval in intervals {
        for (sum, t) in summed.iter_mut().zip(&interval.tasklets) {
            sum.accumulate(t);
        }
    }
    assert_eq!(report.dpus[0].1.tasklets, summed);
}

#[test]
fn v1b2_prices_the_selftest_interval_by_interval_and_v1b1_from_the_totals() {
    let report = intervals_selftest();
    let (counts, muls, intervals) = (&report.dpus[0].1, &report.multiplies[0].1, &report.intervals[0].1);
    // Interval 1: tasklet 0 alone issues 1023 instructions every 11 cycles after its 64-byte
    // read (77 + 0.5 * 64 cycles): 11 * 1023 + 109 = 11362.
    // Interval 2: 1012 + t instructions, t < 16: 16 * 1012, then the tail's steps at
    // max(running, 11) cycles, running 15 .. 1: 15 + 14 + 13 + 12 + 11 + 10 * 11 = 175.
    // Interval 3: 16 tasklets of 7: 112.
    let v1b2 = 11362 + (16 * 1012 + 175) + 112;
    assert_eq!(UpmemModel::v1b2().launch_dpu_cycles(counts, muls, intervals), v1b2);
    // @1 on the totals (tasklet 0: 2042; tasklet t > 0: 1040 + t): 16 * 1041, the steps of
    // tasklets 2 .. 15 at max(running, 11) (65 + 9 * 11 = 164), then tasklet 0's last 987
    // instructions alone at 11 cycles each: the lone work hides behind the others' work of
    // the next interval.
    let v1b1 = 16 * 1041 + 164 + 987 * 11;
    assert_eq!(UpmemModel::v1b().launch_dpu_cycles(counts, muls, intervals), v1b1);
    assert_eq!(UpmemModel::v1b().dpu_cycles(counts), v1b1);
    let m = UpmemModel::v1b2();
    let seconds =
        m.launch_seconds_of(std::slice::from_ref(counts), std::slice::from_ref(muls), std::slice::from_ref(intervals));
    assert!((seconds - (v1b2 as f64 / 350e6 + m.launch_overhead_s)).abs() < 1e-15);
}

/// One launch of `commands` (barrett, degree 256) on one DPU: its counts and intervals.
fn launch(d: &Dpu, commands: &[PimheCommand]) -> (DpuCounts, Vec<IntervalCounts>) {
    let mut dpus = set(1, EmulatorConfig::default());
    d.load(&mut dpus, 0, Variant::Barrett, commands);
    d.put(&mut dpus, 0, 0, &residues(32 * d.n(), d.q(), 11));
    let mut report = dpus.launch(&[0]).unwrap();
    (report.dpus.remove(0).1, report.intervals.remove(0).1)
}

#[test]
fn v1b2_prices_an_add_then_two_ntts_as_the_sum_of_the_commands() {
    let n = 256;
    let d = Dpu::new(pimhe_math::ntt_primes(30, n, 1, &[]).unwrap()[0], n, 3);
    // An element-wise add that deals its 8 sub-polynomials (16 chunks) to all tasklets, then
    // two barrett NTTs of one sub-polynomial each: tasklet 0 runs the first while the others
    // wait at the barrier after the command, tasklet 1 the second (the kernel deals NTT
    // sub-polynomials round robin across commands).
    let add = PimheCommand::add(d.at(16), d.at(0), d.at(8), 8);
    let (first, second) = (PimheCommand::ntt(d.at(24), 1), PimheCommand::ntt(d.at(25), 1));
    // The kernel's setup shares the first command's interval (no barrier between them), so
    // every launch starts with the same add: a launch = prologue (setup + add) + its other
    // commands + the status write, and [add, ntt, ntt'] = [add, ntt] + [add, ntt'] - [add].
    let all = launch(&d, &[add, first, second]);
    let (with_first, with_second, prologue) =
        (launch(&d, &[add, first]), launch(&d, &[add, second]), launch(&d, &[add]));
    let v1b2 = UpmemModel::v1b2();
    let cycles = |(c, i): &(DpuCounts, Vec<IntervalCounts>)| v1b2.launch_dpu_cycles(c, &[], i);
    assert_eq!(cycles(&all), cycles(&with_first) + cycles(&with_second) - cycles(&prologue));
    // Each NTT interval: one tasklet at 11 cycles per instruction (plus its DMAs).
    let lone = |(_, i): &(DpuCounts, Vec<IntervalCounts>)| {
        i[i.len() - 2].tasklets.iter().map(|t| t.instructions).max().unwrap()
    };
    assert!(cycles(&with_first) - cycles(&prologue) >= 11 * lone(&with_first));
    // @1 runs the two lone NTTs side by side on tasklets 0 and 1: barely more than one.
    let v1b1 = UpmemModel::v1b();
    let totals = |(c, _): &(DpuCounts, Vec<IntervalCounts>)| v1b1.dpu_cycles(c);
    assert!(10 * totals(&all) < 6 * (totals(&with_first) + totals(&with_second) - totals(&prologue)));
    assert!(10 * totals(&all) < 6 * cycles(&all));
}

#[test]
fn identical_consecutive_intervals_are_one_record_with_repeats() {
    let n = 256;
    let d = Dpu::new(pimhe_math::ntt_primes(30, n, 1, &[]).unwrap()[0], n, 4);
    let add = PimheCommand::add(d.at(16), d.at(0), d.at(8), 8);
    let (_, once) = launch(&d, &[add]);
    let (counts, four) = launch(&d, &[add; 4]);
    // The first add shares the setup's interval; the other three are one record.
    assert_eq!(four.len(), once.len() + 1);
    let repeated: Vec<u64> = four.iter().map(|i| i.repeats).collect();
    assert_eq!(repeated.iter().filter(|&&r| r == 3).count(), 1, "repeats {repeated:?}");
    let total = |intervals: &[IntervalCounts]| intervals.iter().map(|i| i.total().instructions).sum::<u64>();
    assert_eq!(total(&four), counts.total().instructions);
}
