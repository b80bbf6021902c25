//! Fig. 9: the PIM-instruction microbenchmark, printed with `--nocapture`.

use pimhe_nearbank::isa::{Opcode, PimInstruction};
use pimhe_nearbank::model::{microbenchmark, microbenchmark_ops, DataLayout, Model, System};

/// N = 2^16 and L = 45 (a multiple of both die-group counts, 5 on the A100 and 3 on the RTX
/// 4090, and within Table IV's L <= 54), PAccum(4) (Alg. 1's K) and CAccum(8) (the K = 8 linear
/// transform of Fig. 5; Fig. 9 does not state its K).
const N: usize = 1 << 16;
const L: usize = 45;

/// Fig. 9 / section VII-C: speedups at the default B for PAccum and CAccum.
const PAPER: [(&str, f64, f64); 3] =
    [("a100-nearbank", 7.26, 10.33), ("a100-custom-hbm", 3.98, 4.31), ("rtx4090-nearbank", 3.63, 6.20)];

fn ops() -> Vec<Opcode> {
    let mut ops: Vec<Opcode> = Opcode::all(4).into_iter().filter(|o| !matches!(o, Opcode::CAccum(_))).collect();
    ops.push(Opcode::CAccum(8));
    ops
}

fn fmt(x: Option<f64>) -> String {
    x.map_or("   -  ".into(), |v| format!("{v:6.2}"))
}

#[test]
fn fig9_table() {
    let bs = [4, 8, 16, 32, 64];
    for system in System::all() {
        let label = Model::new(system.clone(), None).unwrap().label();
        println!("\n{label}: N = 2^16, L = {L}; speedup / energy efficiency (G) per B");
        print!("{:<12}", "op");
        for b in bs {
            print!(" | B={b:<2} speedup  eff   G");
        }
        println!();
        let rows = microbenchmark_ops(&system, &bs, N, L, &ops());
        for chunk in rows.chunks(bs.len()) {
            print!("{:<12}", chunk[0].opcode.name());
            for r in chunk {
                print!(
                    " |  {}  {} {:>3}",
                    fmt(r.speedup),
                    fmt(r.energy_efficiency),
                    r.chunk_granularity.map_or("-".into(), |g| g.to_string())
                );
            }
            println!();
        }
        let at_default = microbenchmark_ops(&system, &[system.default_buffer_entries()], N, L, &ops());
        let s: Vec<f64> = at_default.iter().filter_map(|r| r.speedup).collect();
        let e: Vec<f64> = at_default.iter().filter_map(|r| r.energy_efficiency).collect();
        let (smin, smax) = s.iter().fold((f64::MAX, 0.0_f64), |(a, b), &x| (a.min(x), b.max(x)));
        let (emin, emax) = e.iter().fold((f64::MAX, 0.0_f64), |(a, b), &x| (a.min(x), b.max(x)));
        println!(
            "at default B = {}: speedup {smin:.2}-{smax:.2}x, energy efficiency {emin:.2}-{emax:.2}x \
             (paper, all systems: 1.65-10.33x, 2.63-17.39x)",
            system.default_buffer_entries()
        );
        let (_, paccum, caccum) = PAPER.iter().find(|p| p.0 == system.name).unwrap();
        let get = |op: Opcode| at_default.iter().find(|r| r.opcode == op).and_then(|r| r.speedup).unwrap();
        println!(
            "PAccum(4) {:.2}x (paper {paccum:.2}x), CAccum(8) {:.2}x (paper {caccum:.2}x)",
            get(Opcode::PAccum(4)),
            get(Opcode::CAccum(8))
        );
        // w/o CP (section VII-D: element-wise ops 2.24x / 2.11x slower, geometric mean).
        let cp = Model::new(system.clone(), None).unwrap();
        let naive = cp.clone().with_layout(DataLayout::Contiguous);
        let (mut log_sum, mut count) = (0.0, 0);
        for op in ops() {
            let i = PimInstruction { opcode: op, degree: N, limbs: L, instances: 1 };
            if let (Ok(a), Ok(z)) = (cp.pim(&i), naive.pim(&i)) {
                log_sum += (z.seconds / a.seconds).ln();
                count += 1;
            }
        }
        println!("w/o CP: {:.2}x slower (geometric mean over the supported opcodes)", (log_sum / count as f64).exp());
        let i = PimInstruction { opcode: Opcode::PAccum(4), degree: N, limbs: L, instances: 1 };
        let c = cp.pim(&i).unwrap();
        println!(
            "PAccum(4) energy: DRAM {:.3e} J, MMAC {:.3e} J, GPU idle {:.3e} J; per bank {:?}",
            c.dram_joules, c.mmac_joules, c.gpu_idle_joules, c.commands
        );
    }
}

#[test]
fn microbenchmark_marks_unsupported_and_uses_k() {
    let system = System::named("a100-nearbank").unwrap();
    let rows = microbenchmark(&system, &[4, 16], N, L, 4);
    assert_eq!(rows.len(), Opcode::all(4).len() * 2);
    let paccum_b4 = rows.iter().find(|r| r.opcode == Opcode::PAccum(4) && r.buffer_entries == 4).unwrap();
    assert!(paccum_b4.pim_s.is_none() && paccum_b4.speedup.is_none());
    let paccum_b16 = rows.iter().find(|r| r.opcode == Opcode::PAccum(4) && r.buffer_entries == 16).unwrap();
    assert_eq!(paccum_b16.chunk_granularity, Some(2));
    assert!(paccum_b16.speedup.unwrap() > 1.0);
    let tensor_b4 = rows.iter().find(|r| r.opcode == Opcode::Tensor && r.buffer_entries == 4).unwrap();
    assert!(tensor_b4.speedup.is_none());
}

/// Section VII-C: "the saturation is faster for custom-HBM, which suffers less from the ACT/PRE
/// overhead": going from B = 16 to B = 64 helps the near-bank A100 more.
#[test]
fn custom_hbm_saturates_faster_in_b() {
    let gain = |s: System| {
        let rows = microbenchmark_ops(&s, &[16, 64], N, L, &[Opcode::PAccum(4), Opcode::Tensor, Opcode::PMac]);
        rows.chunks(2).map(|r| r[1].speedup.unwrap() / r[0].speedup.unwrap()).product::<f64>()
    };
    assert!(gain(System::a100_custom_hbm()) < gain(System::a100_nearbank()));
}
