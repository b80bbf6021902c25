//! The DRAM-command schedule of a PIM instruction: Alg. 1 generalised to every opcode.
//!
//! **Buffer plan** ([`BufferPlan`]). Per element position an instruction reads `reads`
//! polynomials and writes `writes`. Operands that several products of the position reuse (the
//! `p_k` of PAccum, the `p` of PMult/PMac, `a, b` of Tensor, `a` of TensorSq) are loaded into
//! the buffer first; constants are broadcast from the instruction, so CAccum/CMult/... reuse
//! nothing. The other operands stream from the bank straight through the MMAC lanes, and every
//! output is an accumulator that lives in the buffer until it is written back. A chunk block of
//! G positions needs `G x (reused + writes)` entries, so `G = floor(B / (reused + writes))`
//! (PAccum(4): B / 6, as Alg. 1) and the instruction is unsupported when G = 0.
//!
//! **Phases.** For each block of G chunk positions of a limb, in every bank: (1) read the
//! reused operands into the buffer, (2) stream the other operands through the MMAC lanes, (3)
//! write the outputs. Each phase reads or writes one PolyGroup (three PolyGroups per
//! instruction, as Alg. 1's PolyGroup0/1/2); a PolyGroup of more polynomials than a row has
//! chunks is split into several. A phase visits every row its block occupies
//! ([`super::layout::rows_of_block`]): PRE (if a row is open) + ACT, then the column accesses.
//! With [`DataLayout::Contiguous`] every polynomial is its own PolyGroup, so a phase costs one
//! PRE + ACT per polynomial (Alg. 1's 4x / 8x / 2x).
//!
//! **Timing of a row visit** ([`simulate`]): PRE no earlier than tRAS after the ACT, tRTP after
//! the last read and tWR after the end of the last write; ACT tRP after PRE; the first column
//! tRCD after ACT; column accesses one per `max(tCCD_L, 1 / f_PIM)` (a bank streaming its own
//! row is bound by tCCD_L; the unit takes one chunk per clock), and a visit lasts at least its
//! MMAC cycles (a chunk of 8 words per lane-op per clock: `max(mmac_ops, streamed reads)` clocks
//! per position, since every input passes a lane). Reads and writes never share an open row
//! (phases are read-only or write-only), so a write-to-read turnaround (tWTR) is always covered
//! by tWR + tRP + tRCD and never binds. All banks of a near-bank die run in lock step
//! (all-bank commands), so one bank's schedule is the die's; tFAW is not applied
//! ([`super::timing::Timing::t_faw`]).
//!
//! **Custom-HBM** ([`PimPlacement::LogicDie`]): a unit serves 8 banks (across the stack's
//! dies) and owns one command stream to them. PolyGroup rows are skewed over the unit's banks:
//! the `v`-th row visit of a limb job (block after block, phase after phase) is placed in bank
//! set `v mod sets` (a static placement, fixed when the PolyGroups are allocated), so
//! consecutive row visits go round-robin over the banks and a bank can
//! PRE/ACT (and recover from writes) while the unit streams the others; the unit consumes at
//! most one chunk per 756 MHz clock (its TSV share) and a bank still delivers at most one per
//! tCCD_L, so the unit drives `ceil(tCCD_L x f_PIM)` banks (2, on different dies) in lock step
//! as one *bank set* and rotates over the `8 / 2 = 4` sets. Blocks are processed set after set
//! with the same buffer plan (B entries per unit).
//!
//! **Refresh**: all-bank REF every tREFI blocks the banks for tRFC; the schedule's time is
//! divided by `(tREFI - tRFC) / tREFI` and the REF commands are counted.
//!
//! **Parallelism**: every unit of a die group works on its banks' share of one limb at a time;
//! die groups work in parallel on their limbs; a die group runs its `ceil(instances x L / S)`
//! limb jobs one after another.

use serde::Serialize;

use super::layout::{column_group_width, rows_of_block, split_into_polygroups, DataLayout, Geometry};
use super::system::{PimPlacement, System};
use crate::isa::{Opcode, PimInstruction};

/// DRAM commands of one instruction **per bank** (every bank of an active die group issues
/// the same ones under near-bank all-bank operation; for custom-HBM, the average over the
/// banks of a unit, rounded up).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct CommandCounts {
    /// Row activations.
    pub act: u64,
    /// Precharges.
    pub pre: u64,
    /// Column reads (one 256-bit chunk each).
    pub rd: u64,
    /// Column writes.
    pub wr: u64,
    /// All-bank refreshes that fell into the instruction.
    pub refresh: u64,
}

/// Cost of one PIM instruction.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PimCost {
    /// Time on the PIM units (no GPU <-> PIM transition; [`super::Model::price`] adds those).
    pub seconds: f64,
    /// Energy: DRAM commands + MMAC lanes + the GPU's idle power over `seconds`.
    pub joules: f64,
    /// Commands per bank.
    pub commands: CommandCounts,
    /// Chunk granularity G used.
    pub chunk_granularity: usize,
    /// DRAM (ACT/PRE + column) energy.
    pub dram_joules: f64,
    /// MMAC energy.
    pub mmac_joules: f64,
    /// The GPU's idle energy while the PIM units run.
    pub gpu_idle_joules: f64,
    /// Limb jobs each die group runs in sequence.
    pub jobs_per_die_group: usize,
    /// Time of one limb job, refresh excluded (ns).
    pub limb_job_ns: f64,
}

/// How an instruction uses the data buffer (module doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct BufferPlan {
    /// Operands loaded into the buffer before the streamed ones (phase 1).
    pub reused: usize,
    /// Operands streamed through the MMAC lanes (phase 2).
    pub streamed: usize,
    /// Outputs accumulated in the buffer and written back (phase 3).
    pub outputs: usize,
    /// MMAC clocks per chunk position in phase 2: `max(mmac_ops, streamed)`.
    pub mmac_per_position: usize,
}

impl BufferPlan {
    /// The plan of an opcode.
    pub fn of(opcode: Opcode) -> BufferPlan {
        use Opcode::*;
        let ops = opcode.operands();
        let reused = match opcode {
            PMult | PMac | TensorSq => 1,
            Tensor => 2,
            PAccum(k) => k,
            _ => 0,
        };
        let streamed = ops.reads - reused;
        BufferPlan { reused, streamed, outputs: ops.writes, mmac_per_position: ops.mmac_ops.max(streamed) }
    }

    /// Buffer entries per chunk position.
    pub fn slots(&self) -> usize {
        self.reused + self.outputs
    }

    /// G = floor(B / slots); 0 means unsupported.
    pub fn chunk_granularity(&self, buffer_entries: usize) -> usize {
        buffer_entries / self.slots().max(1)
    }
}

/// One visit of the unit to one open row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct RowVisit {
    /// Bank of the unit (0 for near-bank).
    pub bank: usize,
    /// Chunks read.
    pub reads: u32,
    /// Chunks written.
    pub writes: u32,
    /// MMAC clocks the visit needs (reads pass the lanes too).
    pub mmac_cycles: u32,
}

/// The outcome of [`simulate`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Schedule {
    /// Time from the first command to the last bank precharged (ns).
    pub ns: f64,
    /// Commands summed over the unit's banks.
    pub commands: CommandCounts,
    /// MMAC clocks of the unit.
    pub mmac_cycles: u64,
}

#[derive(Clone, Copy, Default)]
struct BankState {
    open: bool,
    act_at: f64,
    last_rd_issue: f64,
    wr_end: f64,
    closed_at: f64,
}

/// Times a sequence of row visits of one unit (see the module doc for the rules).
/// `column_ns` is the spacing of column accesses to one bank, `cycle_ns` the unit's clock.
pub fn simulate(
    visits: &[RowVisit],
    banks: usize,
    timing: &super::timing::Timing,
    column_ns: f64,
    cycle_ns: f64,
) -> Schedule {
    let mut state =
        vec![BankState { last_rd_issue: f64::NEG_INFINITY, wr_end: f64::NEG_INFINITY, ..Default::default() }; banks];
    let mut commands = CommandCounts::default();
    let mut unit_free = 0.0_f64;
    let mut mmac_cycles = 0u64;
    let pre_ready =
        |b: &BankState| (b.act_at + timing.t_ras).max(b.last_rd_issue + timing.t_rtp).max(b.wr_end + timing.t_wr);
    for v in visits {
        let b = &mut state[v.bank];
        if b.open {
            b.closed_at = pre_ready(b) + timing.t_rp;
            commands.pre += 1;
        }
        let act = b.closed_at;
        commands.act += 1;
        let start = (act + timing.t_rcd).max(unit_free);
        let cols = f64::from(v.reads + v.writes);
        let duration = (cols * column_ns).max(f64::from(v.mmac_cycles) * cycle_ns);
        let end = start + duration;
        *b = BankState {
            open: true,
            act_at: act,
            last_rd_issue: if v.reads > 0 { end - column_ns } else { f64::NEG_INFINITY },
            wr_end: if v.writes > 0 { end } else { f64::NEG_INFINITY },
            closed_at: act,
        };
        commands.rd += u64::from(v.reads);
        commands.wr += u64::from(v.writes);
        mmac_cycles += u64::from(v.mmac_cycles);
        unit_free = end;
    }
    let mut ns = unit_free;
    for b in &state {
        if b.open {
            commands.pre += 1;
            ns = ns.max(pre_ready(b) + timing.t_rp);
        }
    }
    Schedule { ns, commands, mmac_cycles }
}

/// The row visits of one limb job on one unit: every block of G positions of the unit's banks,
/// in phase order (module doc).
pub fn limb_job_visits(
    plan: &BufferPlan,
    g: usize,
    chunks_per_bank: usize,
    banks_per_unit: usize,
    chunks_per_row: usize,
    layout: DataLayout,
) -> Vec<RowVisit> {
    let g = g.min(chunks_per_bank).max(1);
    // (polys, is_write, kind) per phase: 0 reused, 1 streamed, 2 outputs.
    let phases = [(plan.reused, 0u8), (plan.streamed, 1u8), (plan.outputs, 2u8)];
    let mut visits = Vec::new();
    let mut start = 0;
    let mut row_visit = 0;
    while start < chunks_per_bank {
        let len = g.min(chunks_per_bank - start);
        for _block_bank in 0..banks_per_unit {
            for &(polys, kind) in &phases {
                for (group, width) in phase_polygroups(layout, polys, chunks_per_row, g, chunks_per_bank, start, len) {
                    for positions in rows_of_block(start, len, width) {
                        let bank = row_visit % banks_per_unit;
                        row_visit += 1;
                        let chunks = (group * positions) as u32;
                        let visit = match kind {
                            0 => RowVisit { bank, reads: chunks, writes: 0, mmac_cycles: chunks },
                            1 => {
                                let m = (positions * plan.mmac_per_position * group).div_ceil(plan.streamed.max(1));
                                RowVisit { bank, reads: chunks, writes: 0, mmac_cycles: m as u32 }
                            }
                            _ => RowVisit { bank, reads: 0, writes: chunks, mmac_cycles: 0 },
                        };
                        visits.push(visit);
                    }
                }
            }
        }
        start += len;
    }
    visits
}

/// The PolyGroups (polynomials, column-group width) one phase's `polys` operands are placed
/// in. Contiguous: one per polynomial, a whole row wide. Column partitioned: packed
/// ([`split_into_polygroups`], [`column_group_width`]), unless the packing wastes so much of the
/// row (e.g. 3 polynomials with a block of a whole row) that one polynomial per row touches
/// fewer rows — the runtime allocates PolyGroups knowing the instruction (section V-C), so it
/// takes the placement with fewer row visits.
pub fn phase_polygroups(
    layout: DataLayout,
    polys: usize,
    chunks_per_row: usize,
    g: usize,
    chunks_per_bank: usize,
    start: usize,
    len: usize,
) -> Vec<(usize, usize)> {
    let place = |layout: DataLayout| -> Vec<(usize, usize)> {
        split_into_polygroups(layout, polys, chunks_per_row)
            .into_iter()
            .map(|group| (group, column_group_width(layout, chunks_per_row, group, g, chunks_per_bank)))
            .collect()
    };
    let rows =
        |groups: &[(usize, usize)]| -> usize { groups.iter().map(|&(_, w)| rows_of_block(start, len, w).len()).sum() };
    let contiguous = place(DataLayout::Contiguous);
    match layout {
        DataLayout::Contiguous => contiguous,
        DataLayout::ColumnPartitioned => {
            let packed = place(DataLayout::ColumnPartitioned);
            if rows(&contiguous) < rows(&packed) {
                contiguous
            } else {
                packed
            }
        }
    }
}

/// Cost of `instruction` on `system` with at most `g_max` = floor(B / slots) (>= 1) chunks per
/// block under `layout`. The runtime picks the granularity `g <= g_max` with the least time
/// (usually `g_max`, or the largest useful one: a block never needs more positions than a bank
/// set holds per limb; a `g` that splits blocks unevenly over rows can lose to a smaller one),
/// so a larger buffer is never slower. The chosen `g` is reported.
pub fn cost(system: &System, instruction: &PimInstruction, g_max: usize, layout: DataLayout) -> PimCost {
    let c = Geometry {
        die_groups: system.die_groups(),
        banks_per_group: system.banks_per_group(),
        chunks_per_row: system.timing.chunks_per_row,
    }
    .chunks_per_bank_per_limb(instruction.degree);
    let (lockstep, _) = bank_sets(system);
    let useful = g_max.min(c * lockstep).max(1);
    (1..=useful)
        .rev()
        .map(|g| cost_at(system, instruction, g, layout))
        .fold(None, |best: Option<PimCost>, x| match best {
            Some(b) if b.seconds <= x.seconds => Some(b),
            _ => Some(x),
        })
        .expect("at least one granularity")
}

/// Cost of `instruction` at exactly chunk granularity `g` (>= 1).
pub fn cost_at(system: &System, instruction: &PimInstruction, g: usize, layout: DataLayout) -> PimCost {
    let plan = BufferPlan::of(instruction.opcode);
    let geometry = Geometry {
        die_groups: system.die_groups(),
        banks_per_group: system.banks_per_group(),
        chunks_per_row: system.timing.chunks_per_row,
    };
    let c = geometry.chunks_per_bank_per_limb(instruction.degree);
    let cycle_ns = 1e9 / system.pim_clock_hz;
    let (lockstep, sets) = bank_sets(system);
    // A bank set of `lockstep` banks holds `lockstep x C` positions of the limb; each bank C.
    let visits = limb_job_visits(&plan, g, c * lockstep, sets, geometry.chunks_per_row * lockstep, layout);
    let column_ns = (system.timing.t_ccd_l() / lockstep as f64).max(cycle_ns);
    let mut job = simulate(&visits, sets, &system.timing, column_ns, cycle_ns);
    job.commands.act *= lockstep as u64;
    job.commands.pre *= lockstep as u64;
    let jobs_total = instruction.instances * instruction.limbs;
    let jobs_per_group = jobs_total.div_ceil(geometry.die_groups);
    let seconds = jobs_per_group as f64 * job.ns * 1e-9 / system.timing.refresh_availability();

    let per_bank = |x: u64| (x * jobs_per_group as u64).div_ceil(system.banks_per_unit as u64);
    let commands = CommandCounts {
        act: per_bank(job.commands.act),
        pre: per_bank(job.commands.pre),
        rd: per_bank(job.commands.rd),
        wr: per_bank(job.commands.wr),
        refresh: (seconds * 1e9 / system.timing.t_refi).floor() as u64,
    };
    // Energy over all limb jobs: every unit of the job's die group does `job`.
    let units = system.units_per_group() as f64 * jobs_total as f64;
    let e = &system.energy;
    let dram_joules =
        units * (job.commands.act as f64 * e.act_pre_j + (job.commands.rd + job.commands.wr) as f64 * e.column_j);
    let mmac_joules = units * job.mmac_cycles as f64 * system.mmac_lanes as f64 * e.mmac_lane_j;
    let gpu_idle_joules = seconds * e.gpu_idle_w;
    PimCost {
        seconds,
        joules: dram_joules + mmac_joules + gpu_idle_joules,
        commands,
        chunk_granularity: g,
        dram_joules,
        mmac_joules,
        gpu_idle_joules,
        jobs_per_die_group: jobs_per_group,
        limb_job_ns: job.ns,
    }
}

/// Banks a unit drives in lock step as one set, and the number of such sets it rotates over:
/// `(1, 1)` near-bank; custom-HBM `(ceil(tCCD_L x f_PIM), 8 / that)` = `(2, 4)`.
pub fn bank_sets(system: &System) -> (usize, usize) {
    let cycle_ns = 1e9 / system.pim_clock_hz;
    let need = ((system.timing.t_ccd_l() / cycle_ns) - 1e-6).ceil().max(1.0) as usize;
    let lockstep = need.min(system.banks_per_unit).max(1);
    (lockstep, (system.banks_per_unit / lockstep).max(1))
}

/// Whether `system`'s placement lets a unit hide one bank's ACT/PRE behind another's columns.
pub fn hides_act_pre(system: &System) -> bool {
    system.placement == PimPlacement::LogicDie && system.banks_per_unit > 1
}
