//! DRAM timing parameters of the two memory standards of Table III, in nanoseconds.
//!
//! Two kinds of numbers are here:
//!
//! - **array (analog) timings** — tRCD, tRP, tRAS, tWR, tRTP, tWTR, tFAW, tRFC, tREFI — are set
//!   by the cell array and stay (nearly) constant in nanoseconds across speed bins, so they are
//!   taken in ns from a simulator preset of the same standard;
//! - **column cadence** — tCCD_S, tCCD_L — is set by the interface clock: tCCD_S is one burst of
//!   one 256-bit column access on the channel (burst length x unit interval at the GPU's data
//!   rate), and tCCD_L, the same-bank-group spacing that a bank streaming from its own row is
//!   bound by, is twice tCCD_S (the ratio of both simulator presets cited below: HBM2 tCCD_S =
//!   1, tCCD_L = 2 clocks in DRAMsim3's `HBM2_8Gb_x128.ini` and in Ramulator 2.0's
//!   `HBM2_2Gbps`).
//!
//! A check that this derivation is the paper's: 1 / tCCD_L is 378 MHz for the A100 80GB's
//! HBM2E at 3.024 Gb/s and 656 MHz for the RTX 4090's GDDR6X at 21 Gb/s, exactly the PIM clocks
//! of Table III (tested in `tests/model_schedule.rs`): Anaheim clocks its near-bank unit at the
//! rate a bank can deliver columns.

use serde::Serialize;

/// Timing parameters of one memory standard as the PIM side sees them (all in ns).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Timing {
    /// Name of the preset, with its data rate.
    pub name: &'static str,
    /// Interface data rate per pin in Gb/s (sets the column cadence).
    pub data_rate_gbps: f64,
    /// Bits per pin that one 256-bit column access (one chunk) takes on the channel.
    pub burst_bits_per_pin: f64,
    /// ACT to RD/WR, same bank.
    pub t_rcd: f64,
    /// PRE to ACT, same bank.
    pub t_rp: f64,
    /// ACT to PRE, same bank (minimum row-open time).
    pub t_ras: f64,
    /// Write recovery: end of the last write data to PRE.
    pub t_wr: f64,
    /// Last RD to PRE.
    pub t_rtp: f64,
    /// Write to read turnaround, same bank group (end of write data to RD).
    pub t_wtr_l: f64,
    /// Four-activation window (see [`Timing::t_faw`] on how all-bank PIM treats it).
    pub t_faw: f64,
    /// Average all-bank refresh interval.
    pub t_refi: f64,
    /// All-bank refresh cycle time (banks unavailable).
    pub t_rfc: f64,
    /// Chunks (256-bit column accesses) per row of one bank.
    pub chunks_per_row: usize,
}

impl Timing {
    /// HBM2E of the A100 80GB.
    ///
    /// - Data rate 3.024 Gb/s: the A100 80GB PCIe's 1512 MHz HBM2E over a 5120-bit bus
    ///   (NVIDIA A100 datasheet: 1,935 GB/s). A pseudo channel is 64 bits wide and a column
    ///   access is a burst of 4 (JESD235 HBM2 pseudo-channel mode, BL4): 4 bits per pin per chunk.
    /// - tRCD = tRP = 14 ns, tRAS = 34 ns, tWR = 16 ns, tRTP_L = 6 ns, tWTR_L = 8 ns,
    ///   tFAW = 30 ns, tREFI = 3900 ns: DRAMsim3 `configs/HBM2_8Gb_x128.ini` (cycle counts at its
    ///   tCK = 1 ns). Ramulator 2.0's `HBM2_2Gbps` preset has the same cycle counts but at a 1 ns
    ///   tCK that its own timing code derives from the 2 Gb/s rate, which makes tRCD 7 ns, half
    ///   of any HBM2 part; it is not used for the array timings.
    /// - tRFC = 450 ns: Ramulator 2.0 `HBM2.cpp` tRFC table for a 16 Gb die (the A100 80GB's
    ///   16 GB 8-high stacks have 16 Gb dies).
    /// - 32 chunks per row: an 8 Kb (1 KB) row per pseudo-channel bank (Anaheim section VI-B:
    ///   "many 8Kb-wide rows ... a row contains 32 chunks"; JESD235 HBM2 page size 1 KB).
    pub const HBM2E_A100: Timing = Timing {
        name: "HBM2E 3.024 Gb/s (A100 80GB)",
        data_rate_gbps: 3.024,
        burst_bits_per_pin: 4.0,
        t_rcd: 14.0,
        t_rp: 14.0,
        t_ras: 34.0,
        t_wr: 16.0,
        t_rtp: 6.0,
        t_wtr_l: 8.0,
        t_faw: 30.0,
        t_refi: 3900.0,
        t_rfc: 450.0,
        chunks_per_row: 32,
    };

    /// GDDR6X of the RTX 4090.
    ///
    /// - Data rate 21 Gb/s (NVIDIA GeForce RTX 4090 specifications: 21 Gbps GDDR6X, 384-bit).
    ///   A x16 channel moves a 256-bit chunk in 16 bits per pin (GDDR6 BL16, JESD250; GDDR6X
    ///   keeps the 32-byte access with PAM4 symbols).
    /// - tRCD = tRP = 14.82 ns (26 clocks), tRAS = 30.21 ns (53), tWR = 14.82 ns (26),
    ///   tRTP = 2.28 ns (4), tWTR_L = 6.27 ns (11), tFAW = 15.96 ns (28), tRFC = 119.7 ns (210):
    ///   Ramulator 2.0 `GDDR6.cpp` preset `GDDR6_2000_1350mV_quad`, cycle counts times the
    ///   preset's own `tCK_ps` column (570 ps, a 14 Gb/s GDDR6 clock). GDDR6X-specific array
    ///   timings are not public (Micron's GDDR6X datasheet is under NDA); GDDR6 stands in.
    /// - tREFI = 1953 ns: 16k refresh commands per 32 ms (Micron 8Gb GDDR6 MT61K256M32
    ///   datasheet, features: "Auto refresh mode (32ms, 16k cycles)").
    /// - 64 chunks per row: a 2 KB page per bank per channel, as Ramulator 2.0's
    ///   `GDDR6_8Gb_x16` organisation (1024 columns x 16 DQ). Its `GDDR6_16Gb_x16` preset
    ///   implies 4 KB; 2 KB is kept as the conservative (smaller-row) choice and is a
    ///   parameter of the model, not fitted.
    pub const GDDR6X_RTX4090: Timing = Timing {
        name: "GDDR6X 21 Gb/s (RTX 4090)",
        data_rate_gbps: 21.0,
        burst_bits_per_pin: 16.0,
        t_rcd: 26.0 * 0.570,
        t_rp: 26.0 * 0.570,
        t_ras: 53.0 * 0.570,
        t_wr: 26.0 * 0.570,
        t_rtp: 4.0 * 0.570,
        t_wtr_l: 11.0 * 0.570,
        t_faw: 28.0 * 0.570,
        t_refi: 32.0e6 / 16384.0,
        t_rfc: 210.0 * 0.570,
        chunks_per_row: 64,
    };

    /// tCCD_S: one chunk's burst on the channel (ns).
    pub fn t_ccd_s(&self) -> f64 {
        self.burst_bits_per_pin / self.data_rate_gbps
    }

    /// tCCD_L: consecutive column accesses to the same bank group, which a bank streaming its
    /// own open row is bound by (ns): twice tCCD_S (module doc).
    pub fn t_ccd_l(&self) -> f64 {
        2.0 * self.t_ccd_s()
    }

    /// The four-activation window is **not applied** to PIM: like HBM-PIM's all-bank mode and
    /// GDDR6-AiM's all-bank ACT (which Anaheim follows, section VI), an all-bank ACT is one
    /// command whose power delivery the PIM die is designed for, and a custom-HBM unit's
    /// activations of its own banks are spread over 8 dies. Kept here for documentation; the
    /// schedule applies tRCD, tRP, tRAS, tWR, tRTP and refresh per bank.
    pub fn t_faw(&self) -> f64 {
        self.t_faw
    }

    /// Fraction of time left to PIM by all-bank refresh: every tREFI, tRFC is lost.
    pub fn refresh_availability(&self) -> f64 {
        (self.t_refi - self.t_rfc) / self.t_refi
    }
}
