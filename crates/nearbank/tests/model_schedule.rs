//! Hand-computed DRAM-command schedules, Table III consistency checks, monotonicity, errors and
//! program pricing of the `anaheim-nb` model.

use pimhe_nearbank::isa::{without_pim, GpuKernel, GpuOp, Kernel, Opcode, PimInstruction};
use pimhe_nearbank::model::pim::{simulate, RowVisit};
use pimhe_nearbank::model::{DataLayout, Model, ModelError, System};

fn instr(opcode: Opcode, degree: usize, limbs: usize) -> PimInstruction {
    PimInstruction { opcode, degree, limbs, instances: 1 }
}

#[test]
fn table3_tops_follow_from_units_lanes_and_clock() {
    for s in System::all() {
        let tops = s.mmac_ops_per_s_per_table_unit() / 1e12;
        assert!((tops - s.table_tops).abs() / s.table_tops < 0.01, "{}: {tops} vs {}", s.name, s.table_tops);
    }
    // 0.194 TOPS per die = 8 lanes x 64 banks x 378 MHz.
    assert!((8.0 * 64.0 * 378e6 / 1e12 - 0.194_f64).abs() < 0.001);
    // Custom-HBM: 64 units per stack, each serving 8 of the stack's 512 banks.
    let c = System::a100_custom_hbm();
    assert_eq!((c.units_per_group(), c.banks_per_unit, c.banks_per_group()), (64, 8, 512));
}

#[test]
fn near_bank_pim_clock_is_the_bank_column_rate() {
    for s in [System::a100_nearbank(), System::rtx4090_nearbank()] {
        let f = 1e9 / s.timing.t_ccd_l();
        assert!((f - s.pim_clock_hz).abs() / s.pim_clock_hz < 0.005, "{}: {f} Hz", s.name);
    }
}

#[test]
fn bandwidth_increase_is_near_table3() {
    for s in System::all() {
        let x = s.bandwidth_increase();
        assert!((x - s.table_bw_increase).abs() / s.table_bw_increase < 0.10, "{}: {x}", s.name);
    }
}

#[test]
fn geometry_of_the_paper_example() {
    let s = System::a100_nearbank();
    assert_eq!((s.die_groups(), s.banks_per_group()), (5, 512));
    let rtx = System::rtx4090_nearbank();
    assert_eq!((rtx.die_groups(), rtx.banks_per_group()), (3, 128));
}

/// One bank, one row, G reads: ACT, G column reads, PRE.
#[test]
fn one_bank_one_row_by_hand() {
    let t = System::a100_nearbank().timing;
    let col = 2.5;
    for g in [1u32, 4, 16] {
        let s = simulate(&[RowVisit { bank: 0, reads: g, writes: 0, mmac_cycles: g }], 1, &t, col, col);
        let last_rd = t.t_rcd + f64::from(g) * col - col;
        let expect = t.t_ras.max(last_rd + t.t_rtp) + t.t_rp;
        assert!((s.ns - expect).abs() < 1e-9, "g = {g}: {} vs {expect}", s.ns);
        assert_eq!((s.commands.act, s.commands.pre, s.commands.rd, s.commands.wr), (1, 1, u64::from(g), 0));
    }
    // MMAC-bound visit: 4 reads but 12 MMAC clocks.
    let s = simulate(&[RowVisit { bank: 0, reads: 4, writes: 0, mmac_cycles: 12 }], 1, &t, 1.0, 2.0);
    assert!((s.ns - (t.t_ras.max(t.t_rcd + 24.0 - 1.0 + t.t_rtp) + t.t_rp)).abs() < 1e-9);
}

/// Add at N = 4096 on the A100 near-bank system: C = 4096 x 4 / 32 / 512 = 1 chunk per bank per
/// limb, 5 limbs on 5 die groups, one limb job each. Per bank: ACT, RD a, RD b, PRE, ACT, WR x, PRE.
#[test]
fn add_tiny_shape_by_hand() {
    let model = Model::new(System::a100_nearbank(), None).unwrap();
    let t = model.system.timing;
    let col = t.t_ccd_l().max(1e9 / model.system.pim_clock_hz);
    let cost = model.pim(&instr(Opcode::Add, 4096, 5)).unwrap();
    assert_eq!(cost.chunk_granularity, 1);
    let c = cost.commands;
    assert_eq!((c.act, c.pre, c.rd, c.wr, c.refresh), (2, 2, 2, 1, 0));
    let reads_end = t.t_rcd + 2.0 * col;
    let pre1 = t.t_ras.max(reads_end - col + t.t_rtp);
    let act1 = pre1 + t.t_rp;
    let writes_end = act1 + t.t_rcd + col;
    let pre2 = (act1 + t.t_ras).max(writes_end + t.t_wr);
    let ns = pre2 + t.t_rp;
    assert!((cost.limb_job_ns - ns).abs() < 1e-9, "{} vs {ns}", cost.limb_job_ns);
    let seconds = ns * 1e-9 * t.t_refi / (t.t_refi - t.t_rfc);
    assert!((cost.seconds - seconds).abs() < 1e-15);
    // 10 limbs: two jobs per die group, twice the time.
    let two = model.pim(&instr(Opcode::Add, 4096, 10)).unwrap();
    assert!((two.seconds - 2.0 * seconds).abs() < 1e-15);
    assert_eq!(two.commands.act, 4);
}

/// Alg. 1: PAccum(4) at N = 2^16 on the A100 (C = 16), B = 16 -> G = 2: 8 blocks of 3 phases,
/// one row each (column partitioned); the contiguous layout needs 4 + 8 + 2 rows per block.
#[test]
fn paccum4_matches_algorithm_1() {
    let model = Model::new(System::a100_nearbank(), Some(16)).unwrap();
    let cp = model.pim(&instr(Opcode::PAccum(4), 1 << 16, 5)).unwrap();
    assert_eq!(cp.chunk_granularity, 2);
    assert_eq!((cp.commands.act, cp.commands.pre), (24, 24));
    assert_eq!((cp.commands.rd, cp.commands.wr), (16 * 12, 16 * 2));
    let contiguous = model.clone().with_layout(DataLayout::Contiguous);
    let naive = contiguous.pim(&instr(Opcode::PAccum(4), 1 << 16, 5)).unwrap();
    assert_eq!(naive.commands.act, 8 * (4 + 8 + 2));
    assert_eq!((naive.commands.rd, naive.commands.wr), (cp.commands.rd, cp.commands.wr));
    assert!(naive.seconds > 2.0 * cp.seconds);
}

#[test]
fn unsupported_at_small_b() {
    let model = Model::new(System::a100_nearbank(), Some(4)).unwrap();
    match model.pim(&instr(Opcode::PAccum(4), 1 << 16, 40)) {
        Err(ModelError::Unsupported { opcode, buffer_entries, needed }) => {
            assert_eq!((opcode.as_str(), buffer_entries, needed), ("PAccum(4)", 4, 6));
        }
        other => panic!("{other:?}"),
    }
    let err = model.pim(&instr(Opcode::Tensor, 1 << 16, 40)).unwrap_err();
    assert!(err.to_string().contains("Tensor") && err.to_string().contains("5"), "{err}");
    assert!(model.pim(&instr(Opcode::Add, 1 << 16, 40)).is_ok());
    assert!(model.pim(&instr(Opcode::CAccum(8), 1 << 16, 40)).is_ok());
}

#[test]
fn errors_say_what_is_allowed() {
    let e = System::named("h100").unwrap_err().to_string();
    assert!(e.contains("a100-nearbank") && e.contains("a100-custom-hbm") && e.contains("rtx4090-nearbank"), "{e}");
    assert!(Model::new(System::a100_nearbank(), Some(0)).is_err());
    let e = Model::new(System::a100_nearbank(), Some(5000)).unwrap_err().to_string();
    assert!(e.contains("1..=1024"), "{e}");
    let model = Model::new(System::a100_nearbank(), None).unwrap();
    assert!(matches!(model.pim(&instr(Opcode::Add, 0, 4)), Err(ModelError::InvalidShape(_))));
    assert_eq!(System::all().iter().map(|s| s.default_buffer_entries()).collect::<Vec<_>>(), [16, 16, 32]);
}

fn shapes() -> Vec<(Opcode, usize, usize)> {
    let mut v = Vec::new();
    for op in Opcode::all(4).into_iter().chain([Opcode::CAccum(8), Opcode::PAccum(8), Opcode::CAccum(40)]) {
        for (n, l) in [(1 << 12, 3), (1 << 16, 40), (1 << 15, 7)] {
            v.push((op, n, l));
        }
    }
    v
}

#[test]
fn larger_b_is_never_slower() {
    for s in System::all() {
        for (op, n, l) in shapes() {
            let mut last = f64::INFINITY;
            for b in [4, 6, 8, 12, 16, 24, 32, 48, 64, 128] {
                let m = Model::new(s.clone(), Some(b)).unwrap();
                if let Ok(c) = m.pim(&instr(op, n, l)) {
                    assert!(
                        c.seconds <= last * (1.0 + 1e-12),
                        "{} {} B={b}: {} > {last}",
                        s.name,
                        op.name(),
                        c.seconds
                    );
                    last = c.seconds;
                }
            }
        }
    }
}

#[test]
fn contiguous_is_never_faster() {
    for s in System::all() {
        for b in [8, 16, 32, 64] {
            let cp = Model::new(s.clone(), Some(b)).unwrap();
            let naive = cp.clone().with_layout(DataLayout::Contiguous);
            for (op, n, l) in shapes() {
                if let (Ok(a), Ok(z)) = (cp.pim(&instr(op, n, l)), naive.pim(&instr(op, n, l))) {
                    assert!(
                        z.seconds >= a.seconds * (1.0 - 1e-12),
                        "{} {} N={n} L={l} B={b}: {} < {} G {} {}",
                        s.name,
                        op.name(),
                        z.seconds,
                        a.seconds,
                        z.chunk_granularity,
                        a.chunk_granularity
                    );
                }
            }
        }
    }
}

#[test]
fn more_banks_or_die_groups_are_never_slower() {
    for base in System::all() {
        let mut more_banks = base.clone();
        more_banks.banks_per_die *= 2;
        let mut more_groups = base.clone();
        more_groups.dies *= 2;
        for (op, n, l) in shapes() {
            let t = |s: &System| Model::new(s.clone(), None).unwrap().pim(&instr(op, n, l)).map(|c| c.seconds);
            if let (Ok(a), Ok(b), Ok(c)) = (t(&base), t(&more_banks), t(&more_groups)) {
                assert!(b <= a * (1.0 + 1e-12), "{} {} more banks: {b} > {a}", base.name, op.name());
                assert!(c <= a * (1.0 + 1e-12), "{} {} more die groups: {c} > {a}", base.name, op.name());
            }
        }
    }
}

#[test]
fn gpu_roofline_is_monotone_in_bytes() {
    for s in System::all() {
        let model = Model::new(s, None).unwrap();
        for op in
            [GpuOp::Ntt, GpuOp::Automorphism, GpuOp::BaseConvert { from: 12 }, GpuOp::Elementwise(Opcode::PAccum(4))]
        {
            let mut last = (0u64, 0.0);
            for polys in 1..6 {
                let c = model.gpu(&GpuKernel { op, degree: 1 << 16, limbs: 20, polys });
                assert!(c.bytes > last.0 && c.seconds > last.1);
                last = (c.bytes, c.seconds);
            }
        }
        // Element-wise kernels are memory bound.
        let e = model.gpu(&GpuKernel { op: GpuOp::Elementwise(Opcode::Add), degree: 1 << 16, limbs: 40, polys: 1 });
        assert!((e.busy_s - e.bytes as f64 / model.system.gpu_bandwidth).abs() < 1e-15);
    }
    // The NTT at N = 2^16 is compute bound on the A100 (on the RTX 4090 the one-pass roofline
    // makes it memory bound: a known deviation from the paper's measurement, section IV-D).
    let model = Model::new(System::a100_nearbank(), None).unwrap();
    let ntt = model.gpu(&GpuKernel { op: GpuOp::Ntt, degree: 1 << 16, limbs: 40, polys: 1 });
    assert!(ntt.busy_s > ntt.bytes as f64 / model.system.gpu_bandwidth);
}

#[test]
fn price_counts_fallbacks_and_never_overlaps() {
    let n = 1 << 16;
    let program = vec![
        Kernel::Gpu(GpuKernel { op: GpuOp::Intt, degree: n, limbs: 40, polys: 2 }),
        Kernel::Pim(PimInstruction { opcode: Opcode::PAccum(4), degree: n, limbs: 40, instances: 2 }),
        Kernel::Pim(PimInstruction { opcode: Opcode::Add, degree: n, limbs: 40, instances: 2 }),
        Kernel::Gpu(GpuKernel { op: GpuOp::Ntt, degree: n, limbs: 40, polys: 2 }),
    ];
    let big = Model::new(System::a100_nearbank(), None).unwrap();
    let c = big.price(&program);
    assert_eq!((c.pim_instructions, c.gpu_kernels, c.gpu_fallbacks, c.transitions), (2, 2, 0, 2));
    assert_eq!(c.overlap_s, 0.0);
    assert!((c.total_s - (c.gpu_s + c.pim_s + c.transition_s)).abs() < 1e-15);
    let baseline: f64 = without_pim(&program)
        .iter()
        .map(|k| match k {
            Kernel::Gpu(g) => big.gpu(g).seconds,
            Kernel::Pim(_) => unreachable!(),
        })
        .sum();
    assert!((c.without_pim_s - baseline).abs() < 1e-15);
    assert!(c.speedup() > 1.0 && c.edp_ratio() > c.speedup());
    assert_eq!(c.kinds.iter().map(|k| k.count).sum::<usize>(), 4);

    // At B = 4 PAccum(4) falls back to the GPU: one transition fewer, one fallback.
    let small = Model::new(System::a100_nearbank(), Some(4)).unwrap();
    let c = small.price(&program);
    assert_eq!((c.pim_instructions, c.gpu_kernels, c.gpu_fallbacks, c.transitions), (1, 3, 1, 2));
    let paccum = c.kinds.iter().find(|k| k.kind == "PAccum(4)").unwrap();
    assert_eq!(paccum.seconds, paccum.without_pim_seconds);
}

#[test]
fn custom_hbm_hides_act_pre_better() {
    // Share of the ideal (column-bound) time: closer to 1 on the logic-die units.
    let ratio = |s: System| {
        let m = Model::new(s.clone(), Some(16)).unwrap();
        let c = m.pim(&instr(Opcode::PAccum(4), 1 << 16, 5)).unwrap();
        let (lockstep, _) = pimhe_nearbank::model::pim::bank_sets(&s);
        let col = (s.timing.t_ccd_l() / lockstep as f64).max(1e9 / s.pim_clock_hz);
        let cols_per_unit = (c.commands.rd + c.commands.wr) as f64 * s.banks_per_unit as f64;
        cols_per_unit * col / c.limb_job_ns
    };
    assert!(ratio(System::a100_custom_hbm()) > ratio(System::a100_nearbank()));
}

#[test]
fn label_names_model_system_and_b() {
    let m = Model::new(System::rtx4090_nearbank(), None).unwrap();
    assert_eq!(m.label(), "anaheim-nb@1 rtx4090-nearbank B=32 (modeled)");
    assert_eq!(m.with_layout(DataLayout::Contiguous).label(), "anaheim-nb@1 rtx4090-nearbank B=32 w/o CP (modeled)");
}
