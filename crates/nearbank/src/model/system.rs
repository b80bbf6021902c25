//! The three GPU + PIM configurations of Anaheim's Table III, and the energy constants of
//! their DRAM and PIM units.

use serde::Serialize;

use super::timing::Timing;
use super::ModelError;

/// Where the PIM units sit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum PimPlacement {
    /// One unit beside every bank of every DRAM die (section VI-A); all banks of a die run in
    /// lock step (all-bank ACT/PRE/RD/WR), so ACT/PRE times are exposed.
    NearBank,
    /// Units on the HBM logic die (section VI-D, custom-HBM), each serving several banks of the
    /// stack through TSVs: a unit can open the row of one bank while it streams another's.
    LogicDie,
}

/// Energy per DRAM event and per MMAC lane-operation (joules), and the GPU's power figures.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Energy {
    /// One ACT + PRE pair of one bank.
    pub act_pre_j: f64,
    /// One 256-bit column access (RD or WR) consumed at the PIM unit.
    pub column_j: f64,
    /// One 28-bit modular multiply-accumulate on one MMAC lane.
    pub mmac_lane_j: f64,
    /// GPU board power while it runs a kernel (W).
    pub gpu_active_w: f64,
    /// GPU board power while PIM runs and the GPU waits (W).
    pub gpu_idle_w: f64,
}

/// HBM2E ACT + PRE energy: VDD x (IDD0 x tRC - IDD3N x tRAS - IDD2N x tRP) (Micron TN-41-01's
/// activation-power method) with DRAMsim3 `HBM2_8Gb_x128.ini`'s VDD = 1.2 V, IDD0 = 65 mA,
/// IDD3N = 55 mA, IDD2N = 40 mA and tRAS = 34, tRP = 14 ns: 1.2 x (65 x 48 - 55 x 34 - 40 x 14)
/// pJ = 828 pJ.
pub const HBM2E_ACT_PRE_J: f64 = 1.2 * (65.0 * 48.0 - 55.0 * 34.0 - 40.0 * 14.0) * 1e-12;

/// Full internal read energy of one HBM2 column access, VDD x (IDD4R - IDD3N) x burst:
/// 1.2 V x 335 mA x 2 ns (BL4 at DRAMsim3's 1 ns tCK) = 804 pJ per 256 bits (3.1 pJ/bit,
/// DRAMsim3 `HBM2_8Gb_x128.ini`). It covers array, bank I/O, the die's global datapath and
/// the TSVs; it is what a custom-HBM logic-die unit pays per chunk (the data leaves the die but
/// not the stack).
pub const HBM2E_INTERNAL_COLUMN_J: f64 = 1.2 * (390.0 - 55.0) * 2.0 * 1e-12;

/// **Assumption**: a near-bank unit consumes a column at the bank's I/O sense amplifiers and
/// pays only the array-to-IOSA part of [`HBM2E_INTERNAL_COLUMN_J`]; taken as one third of it
/// (268 pJ per chunk, 1.05 pJ/bit). Anaheim approximates this from datapath lengths ([65],
/// [70], [73]) without giving a number; O'Connor et al. (FGDRAM, MICRO 2017, Anaheim's [62])
/// attribute most of HBM2's on-die movement energy to the long global wires a near-bank unit
/// does not use. The one-third split was not found in a source: it is a stated assumption.
pub const NEAR_BANK_COLUMN_FRACTION: f64 = 1.0 / 3.0;

/// **Assumption**: the row-activation energy scales with the page size, so a 2 KB GDDR6X row
/// costs twice the 1 KB HBM2E row of [`HBM2E_ACT_PRE_J`] (no GDDR6X IDD table is public).
pub const GDDR6X_ACT_PRE_J: f64 = 2.0 * HBM2E_ACT_PRE_J;

/// Energy of one MMAC lane operation: a 28-bit Montgomery multiply-accumulate is about three
/// 32-bit multiplies and two adds; Horowitz, "Computing's energy problem", ISSCC 2014: 3.1 pJ
/// per 32-bit integer multiply and 0.1 pJ per 32-bit add at 45 nm, so 9.5 pJ. **Assumption**:
/// the DRAM-process logic of a near-bank unit is about as costly as 45 nm logic (Anaheim
/// synthesises in ASAP7 and scales to 14 nm, then applies a 10x area penalty; its energy number
/// is not published). The logic-die unit of custom-HBM uses the same figure.
pub const MMAC_LANE_J: f64 = (3.0 * 3.1 + 2.0 * 0.1) * 1e-12;

/// A100 80GB PCIe board power: 300 W TDP (NVIDIA A100 80GB PCIe product brief). The PCIe part
/// is taken because its 1512 MHz HBM2E clock gives Table III's 378 MHz PIM clock exactly
/// (1512 / 4); the SXM4 part (400 W, 1593 MHz) would give 398 MHz.
pub const A100_TDP_W: f64 = 300.0;

/// RTX 4090 board power: 450 W total graphics power (NVIDIA GeForce RTX 4090 specifications).
pub const RTX4090_TDP_W: f64 = 450.0;

/// **Assumption**: A100 80GB board power while idle waiting for PIM, 50 W (typical `nvidia-smi`
/// idle reading of an A100 with HBM clocks up; not from a datasheet).
pub const A100_IDLE_W: f64 = 50.0;

/// **Assumption**: RTX 4090 board power while idle waiting for PIM, 30 W (typical idle reading
/// with memory clocks up; not from a datasheet).
pub const RTX4090_IDLE_W: f64 = 30.0;

/// One GPU + PIM configuration of Table III.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct System {
    /// Short name: `a100-nearbank`, `a100-custom-hbm` or `rtx4090-nearbank`.
    pub name: &'static str,
    /// The GPU.
    pub gpu: &'static str,
    /// Where the PIM units sit.
    pub placement: PimPlacement,
    /// DRAM dies in the GPU (HBM: stacks x dies per stack).
    pub dies: usize,
    /// Banks per DRAM die (Table III: 64 for HBM2E, 32 for GDDR6X).
    pub banks_per_die: usize,
    /// Dies per PIM die group (Table III: 1 stack = 8 dies; 4 GDDR6X dies).
    pub dies_per_group: usize,
    /// Banks one PIM unit serves (1 near-bank; 8 on the custom-HBM logic die).
    pub banks_per_unit: usize,
    /// PIM unit clock (Hz).
    pub pim_clock_hz: f64,
    /// MMAC lanes per unit: eight 28-bit lanes matching the 256-bit global I/O (section VI-A).
    pub mmac_lanes: usize,
    /// Data buffer entries of Table III.
    pub buffer_entries: usize,
    /// DRAM timing.
    pub timing: Timing,
    /// Energy constants.
    pub energy: Energy,
    /// GPU peak 32-bit integer multiply-add throughput (Table III, ops/s; a multiply-add counts 2).
    pub gpu_int_ops_per_s: f64,
    /// GPU DRAM bandwidth (Table III, bytes/s).
    pub gpu_bandwidth: f64,
    /// Table III's MMAC throughput per die (near-bank) or per stack (custom-HBM), TOPS: a check.
    pub table_tops: f64,
    /// Table III's "BW incr." (theoretical effective bandwidth increase): a check.
    pub table_bw_increase: f64,
}

impl System {
    /// A100 80GB with a near-bank unit per bank (Table III, first column).
    pub fn a100_nearbank() -> System {
        System {
            name: "a100-nearbank",
            gpu: "A100 80GB",
            placement: PimPlacement::NearBank,
            dies: 5 * 8,
            banks_per_die: 64,
            dies_per_group: 8,
            banks_per_unit: 1,
            pim_clock_hz: 378e6,
            mmac_lanes: 8,
            buffer_entries: 16,
            timing: Timing::HBM2E_A100,
            energy: Energy {
                act_pre_j: HBM2E_ACT_PRE_J,
                column_j: HBM2E_INTERNAL_COLUMN_J * NEAR_BANK_COLUMN_FRACTION,
                mmac_lane_j: MMAC_LANE_J,
                gpu_active_w: A100_TDP_W,
                gpu_idle_w: A100_IDLE_W,
            },
            gpu_int_ops_per_s: 19.5e12,
            gpu_bandwidth: 1802e9,
            table_tops: 0.194,
            table_bw_increase: 16.0,
        }
    }

    /// A100 80GB with the PIM units on each HBM stack's logic die (custom-HBM, section VI-D):
    /// 0.388 TOPS per stack at 756 MHz = 64 units of 8 lanes, each serving 8 of the stack's 512
    /// banks through TSVs.
    pub fn a100_custom_hbm() -> System {
        System {
            name: "a100-custom-hbm",
            banks_per_unit: 8,
            placement: PimPlacement::LogicDie,
            pim_clock_hz: 756e6,
            energy: Energy { column_j: HBM2E_INTERNAL_COLUMN_J, ..System::a100_nearbank().energy },
            table_tops: 0.388,
            table_bw_increase: 4.0,
            ..System::a100_nearbank()
        }
    }

    /// RTX 4090 with a near-bank unit per bank of its 12 GDDR6X dies (Table III, last column).
    pub fn rtx4090_nearbank() -> System {
        System {
            name: "rtx4090-nearbank",
            gpu: "RTX 4090",
            placement: PimPlacement::NearBank,
            dies: 12,
            banks_per_die: 32,
            dies_per_group: 4,
            banks_per_unit: 1,
            pim_clock_hz: 656e6,
            mmac_lanes: 8,
            buffer_entries: 32,
            timing: Timing::GDDR6X_RTX4090,
            energy: Energy {
                act_pre_j: GDDR6X_ACT_PRE_J,
                column_j: HBM2E_INTERNAL_COLUMN_J * NEAR_BANK_COLUMN_FRACTION,
                mmac_lane_j: MMAC_LANE_J,
                gpu_active_w: RTX4090_TDP_W,
                gpu_idle_w: RTX4090_IDLE_W,
            },
            gpu_int_ops_per_s: 41.3e12,
            gpu_bandwidth: 939e9,
            table_tops: 0.168,
            table_bw_increase: 8.0,
        }
    }

    /// The three configurations of Table III.
    pub fn all() -> Vec<System> {
        vec![System::a100_nearbank(), System::a100_custom_hbm(), System::rtx4090_nearbank()]
    }

    /// The configuration of that name.
    pub fn named(name: &str) -> Result<System, ModelError> {
        System::all().into_iter().find(|s| s.name == name).ok_or_else(|| ModelError::UnknownSystem {
            name: name.to_string(),
            allowed: System::all().iter().map(|s| s.name).collect::<Vec<_>>().join(", "),
        })
    }

    /// Table III's buffer size B: 16, 16, 32.
    pub fn default_buffer_entries(&self) -> usize {
        self.buffer_entries
    }

    /// Die groups: limb `l` lives on die group `l mod die_groups` (section VI-B).
    pub fn die_groups(&self) -> usize {
        self.dies / self.dies_per_group
    }

    /// Banks of one die group, over which each limb is spread evenly.
    pub fn banks_per_group(&self) -> usize {
        self.dies_per_group * self.banks_per_die
    }

    /// PIM units in one die group.
    pub fn units_per_group(&self) -> usize {
        self.banks_per_group() / self.banks_per_unit
    }

    /// PIM units in the whole system.
    pub fn units(&self) -> usize {
        self.units_per_group() * self.die_groups()
    }

    /// Peak MMAC throughput of one die (near-bank) or one stack (custom-HBM) in ops/s:
    /// units x lanes x clock. Table III's TOPS column.
    pub fn mmac_ops_per_s_per_table_unit(&self) -> f64 {
        let units = match self.placement {
            PimPlacement::NearBank => self.banks_per_die,
            PimPlacement::LogicDie => self.units_per_group(),
        };
        (units * self.mmac_lanes) as f64 * self.pim_clock_hz
    }

    /// Peak PIM-side bandwidth over the GPU's: one 32-byte chunk per unit per cycle, bounded by
    /// what a bank delivers (1 / tCCD_L) where a unit serves one bank. Table III's "BW incr.".
    pub fn bandwidth_increase(&self) -> f64 {
        let per_unit = 32.0 * self.pim_clock_hz.min(1e9 / self.timing.t_ccd_l() * self.banks_per_unit as f64);
        per_unit * self.units() as f64 / self.gpu_bandwidth
    }
}
