//! `pimhe bench reproduce gupta`'s multi-word rows (the paper's non-RNS coefficients on the
//! same DPUs): the priced kernel time against the whole system emulated with
//! `pimhe_pim::multiword::run`, the addition's instructions per coefficient against a hand
//! count, and the rows' comparison ids.

use pimhe_bench::reproduce::gupta::dpu::{paper_model, CtOp};
use pimhe_bench::reproduce::gupta::published::PAPER_DPU_HZ;
use pimhe_bench::reproduce::gupta::{Gupta, GuptaConfig, QUICK_DPUS, TASKLETS};
use pimhe_bench::reproduce::Reproduction;
use pimhe_bench::NoProgress;
use pimhe_pim::emulator::EmulatorConfig;
use pimhe_pim::layout::Variant;
use pimhe_pim::multiword::{run, MultiwordModulus, MwOp};

#[test]
fn multiword_rows_match_the_whole_system_emulated_and_a_hand_count() {
    let config = GuptaConfig { quick: true, skip_cpu: true, ..GuptaConfig::default() };
    let report = Gupta::run(&config, &NoProgress).unwrap();
    let model = paper_model(PAPER_DPU_HZ).unwrap();
    assert_eq!(report.multiword.len(), report.rows.len());
    let emulator = EmulatorConfig { tasklets: TASKLETS, ..EmulatorConfig::default() };
    for (mw, rns) in report.multiword.iter().zip(&report.rows) {
        assert_eq!((mw.op, mw.coefficient_bits, mw.ciphertexts), (rns.op, rns.coefficient_bits, rns.ciphertexts));
        assert_eq!(mw.rns_s, rns.kernel_s);
        assert_eq!(mw.words, [(27, 1), (54, 2), (109, 4)].iter().find(|w| w.0 == mw.coefficient_bits).unwrap().1);
        // The whole quick system, every DPU its range of the operands (values below q; the
        // counts do not depend on them): the busiest DPU's modeled cycles.
        let q = MultiwordModulus::new((1u128 << mw.coefficient_bits) - 1).unwrap();
        let len = mw.op.operand_polys(mw.ciphertexts) * mw.n;
        let a: Vec<u128> = (0..len as u128).map(|i| i * 0x9e37_79b9 % q.value()).collect();
        let busiest = |op: MwOp, variant: Variant| {
            let out = run(op, &q, &a, &a, QUICK_DPUS, emulator.clone(), variant).unwrap();
            out.report.dpus.iter().map(|(_, counts)| model.dpu_cycles(counts)).max().unwrap()
        };
        for (variant, priced) in [(Variant::Best, mw.karatsuba_s), (Variant::Barrett, mw.schoolbook_s)] {
            let cycles = match mw.op {
                CtOp::Add => busiest(MwOp::Add, variant),
                CtOp::Mul => 4 * busiest(MwOp::Mul, variant) + busiest(MwOp::Add, variant),
            };
            let whole = cycles as f64 / model.dpu_hz + model.launch_overhead_s;
            assert!((priced / whole - 1.0).abs() < 1e-12, "{mw:?} {variant:?}: priced {priced} vs whole {whole}");
        }
        assert!(mw.speedup.is_none(), "--skip-cpu measures no CPU");
    }
    // MW_ADD by hand (cost.h): the chunk loop's 4, a w-word sum and trial difference (6 a word
    // each), the select's 3 and the w-word copy (4 a word): 16 w + 7 a coefficient. Between
    // the smallest and the largest count of a width the fixed costs (setup, the record's
    // check) cancel; what a chunk adds besides (under 40 instructions, at least 64
    // coefficients a chunk) stays under 0.7 a coefficient.
    for bits in [27, 54, 109] {
        let adds: Vec<_> =
            report.multiword.iter().filter(|r| r.op == CtOp::Add && r.coefficient_bits == bits).collect();
        let (small, large) = (adds[0], adds[adds.len() - 1]);
        let total = |r: &pimhe_bench::reproduce::gupta::multiword::MultiwordRow| {
            r.karatsuba_instructions * r.coefficients_per_dpu as f64
        };
        let marginal = (total(large) - total(small)) / (large.coefficients_per_dpu - small.coefficients_per_dpu) as f64;
        let hand = (16 * large.words + 7) as f64;
        assert!(marginal >= hand - 1e-9 && marginal < hand + 0.7, "{bits} bits: {marginal} vs {hand} a coefficient");
    }
    let rows = Gupta::comparison(&report);
    let multiword = rows.iter().filter(|r| r.id.ends_with("-multiword")).count();
    // fig1-add (every add row), fig1-add-abstract (109-bit add rows), fig1-mul (every mul row).
    assert_eq!(multiword, 9 + 3 + 9);
    assert!(rows.iter().all(|r| r.within().is_none()), "a quick run judges no row");
}
