//! Reproductions (`pimhe bench reproduce dramatic`): our modeled numbers for the experiments of DRAMatic
//! (shared/seeds/000_*, sections 4.0-4.4, appendix Tables 2-5), beside the published
//! measurements that `shared/reference/dramatic_calibration.csv` holds, and the hardware
//! what-ifs of its section 5 (rows `s5-...`) beside what the section's text states.
//!
//! Every row runs on the emulated UPMEM backend with the subset method of [`crate::measure::kernels::pim`]:
//! the busiest DPU of each prime group is emulated (compute, energy), transfers and
//! retrievals are priced by the model on the full system's bytes. A row whose busiest share
//! would take longer than the emulation budget (20 s by default) is emulated in whole rounds
//! and scaled, and says so.
//!
//! The configurations, from the paper's text and the CSV:
//!
//! | table | operation | N | modulus | ciphertexts | DPUs |
//! |---|---|---|---|---|---|
//! | 2 | NTT, iNTT | 2048 | 54 bits, 2 primes | 1, 4, 16 / 64 .. 4096 | 2, 8, 32 / 128, parallel |
//! | 3 | NTT, iNTT, BGV mul | 1024 .. 8192 | 27, 54, 72, 174 bits | 32768 | 383, parallel |
//! | 3 | NTT, iNTT, BGV mul | 16384, 32768 | 377, 812 bits (13, 28 primes) | 4096 | 383, sequential |
//! | 4 | pipeline | 4096 | 109 bits, 3 primes | 8192, 16384, 32768 | 383, parallel |
//! | 5 | pipeline | 4096 | 109 bits, 3 primes | 32768 | 128 s, 192 p, 256 s, 383 p, 509 s |
//!
//! Section 5 (rows `s5-{op}-4096-{what-if}`, [`section5_rows`]): NTT, iNTT, BGV mul and the
//! pipeline at 32768 ciphertexts on 509 DPUs (8 ranks), each on the hardware as it is (`base`),
//! with DRAMatic 5.1's 2/4-cycle dummy multiplies (`dummy`), with its single-cycle ones
//! (`1cycle`), and two with DRAMatic 5.2's zero-copy (`-zc`). The text sweeps N = 1024 .. 8192
//! but states its speed-ups and overheads without an N (Table 6, the raw results, is not in
//! shared/reference); we model N = 4096 (109 bits, 3 primes of 30 bits: Table 5's 509-DPU
//! sequential configuration, as 3 primes cannot each take whole ranks of 8) and set the text's
//! figures beside it ([`SECTION5_STATEMENTS`]). `--what-if` applies to the Tables 2-5 rows only.
//!
//! Primes have `round(mod_bits / primes)` bits, at most 30 (our kernels' limit; the 109-bit
//! modulus gets 3 primes of 30 bits). "Ciphertexts" counts inputs: BGV mul and the pipeline
//! multiply them in pairs (C/2 products). Table 3's 13- and 28-prime rows run sequentially:
//! 6 ranks cannot hold 13 or 28 whole-rank groups (DRAMatic 3.3).

use std::collections::HashMap;
use std::time::Instant;

use pimhe_pim::layout::Variant;
use pimhe_pim::model::reference::{self, ReferenceRow};
use pimhe_pim::model::{MultiplierCycles, UpmemModel};
use pimhe_pim::runtime::placement::Mode;
use pimhe_workloads::progress::Progress;
use serde::Serialize;

use crate::error::{BenchError, Result};
use crate::format::Render;
use crate::measure::kernels::{pim, Op, Workload};
use crate::target::upmem::{self, PimOutcome, PimSettings};
use crate::target::what_if::WhatIf;

/// Emulation budget of one row, seconds (see the module documentation).
pub const DEFAULT_MAX_EMULATION_S: f64 = 20.0;

/// The target: the pipeline of Table 4/5's 383-DPU row in this many modeled seconds
/// of compute with the best kernel.
pub const TARGET_COMPUTE_S: f64 = 4.0;

/// Papers whose experiments can be reproduced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Experiment {
    /// DRAMatic (Tables 2-5): NTT, iNTT, BGV multiplication and the combined pipeline.
    #[default]
    Dramatic,
}

/// What `pimhe bench reproduce` runs.
#[derive(Debug, Clone, PartialEq)]
pub struct ReproduceConfig {
    /// The paper whose experiments to run.
    pub experiment: Experiment,
    /// DPU kernel arithmetic: `barrett` (DRAMatic's own: the model-fidelity check) or `best`
    /// (pimhe's: the speed-up) [default: barrett].
    pub kernel: String,
    /// Only these rows: comma-separated row ids or id prefixes ending at a '-' (t2, t3-ntt,
    /// t5-pipeline-128-seq), and `target` for the target summary [default: all].
    pub rows: Option<String>,
    /// Emulation budget of one row in seconds [default: [`DEFAULT_MAX_EMULATION_S`]].
    pub max_emulation_s: f64,
    /// `--what-if` values applied to the Tables 2-5 rows ([`crate::target::what_if`]; the section-5
    /// rows have their own) [default: none].
    pub what_if: Vec<String>,
}

impl Default for ReproduceConfig {
    fn default() -> Self {
        Self {
            experiment: Experiment::Dramatic,
            kernel: "barrett".to_string(),
            rows: None,
            max_emulation_s: DEFAULT_MAX_EMULATION_S,
            what_if: Vec::new(),
        }
    }
}

/// One experiment of the paper.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowSpec {
    /// Stable name, e.g. `t3-ntt-4096` (what `--rows` selects).
    pub id: String,
    /// Table of DRAMatic's appendix.
    pub table: u32,
    /// Operation.
    pub op: Op,
    /// Ring degree.
    pub n: usize,
    /// Bits of the ciphertext modulus in the paper.
    pub mod_bits: u32,
    /// RNS primes.
    pub primes: usize,
    /// Bits of each prime.
    pub prime_bits: u32,
    /// Input ciphertexts.
    pub ciphertexts: usize,
    /// DPUs.
    pub dpus: usize,
    /// Parallel or sequential implementation.
    pub mode: Mode,
    /// Hardware what-ifs of the row (section 5's rows; `--what-if` for the others).
    pub what_if: WhatIf,
}

impl RowSpec {
    fn new(table: u32, op: Op, n: usize, mod_bits: u32, primes: usize, ciphertexts: usize, dpus: usize) -> Self {
        let ranks = dpus.div_ceil(64);
        // DRAMatic 3.3: groups take whole ranks, so more primes than ranks run sequentially.
        let mode = if (dpus >= 64 && primes > ranks) || dpus < primes { Mode::Sequential } else { Mode::Parallel };
        Self::with_mode(table, op, n, mod_bits, primes, ciphertexts, dpus, mode)
    }

    #[allow(clippy::too_many_arguments)]
    fn with_mode(
        table: u32,
        op: Op,
        n: usize,
        mod_bits: u32,
        primes: usize,
        ciphertexts: usize,
        dpus: usize,
        mode: Mode,
    ) -> Self {
        let prime_bits = ((mod_bits as f64 / primes as f64).round() as u32).min(30);
        let id = match table {
            2 => format!("t2-{}-{ciphertexts}", op.name()),
            3 => format!("t3-{}-{n}", op.name()),
            4 => format!("t4-{}-{ciphertexts}", op.name()),
            _ => format!("t{table}-{}-{dpus}-{}", op.name(), &mode.name()[..3]),
        };
        Self { id, table, op, n, mod_bits, primes, prime_bits, ciphertexts, dpus, mode, what_if: WhatIf::NONE }
    }

    /// The CSV's name of the operation, for the rows it may hold.
    fn csv_operation(&self) -> Option<&'static str> {
        match self.op {
            Op::Ntt => Some("NTT"),
            Op::Intt => Some("iNTT"),
            _ => None,
        }
    }

    /// A section-5 row: `op` at N = 4096 on 509 DPUs with `what_if`, id `s5-{op}-4096-{tag}`.
    fn section5(op: Op, tag: &str, what_if: WhatIf) -> Self {
        let mut spec = Self::with_mode(SECTION5_TABLE, op, 4096, 109, 3, 32768, 509, Mode::Sequential);
        spec.id = format!("s5-{}-4096-{tag}", op.name());
        spec.what_if = what_if;
        spec
    }

    /// Whether this is one of section 5's rows.
    fn is_section5(&self) -> bool {
        self.table == SECTION5_TABLE
    }

    /// The published DRAMatic row with this configuration.
    fn published<'a>(&self, reference: &'a [ReferenceRow]) -> Option<&'a ReferenceRow> {
        if self.is_section5() || self.what_if.is_active() {
            return None;
        }
        let operation = self.csv_operation()?;
        reference.iter().find(|r| {
            r.is_dramatic()
                && r.table == self.table
                && r.operation == operation
                && r.cores as usize == self.dpus
                && r.degree as usize == self.n
                && r.mod_bits == self.mod_bits
                && r.ciphertexts as usize == self.ciphertexts
        })
    }

    fn selected(&self, filter: &Option<Vec<String>>) -> bool {
        selected(&self.id, filter)
    }

    /// The cache key of the emulation: the configuration and the multiplier (zero-copy does
    /// not change what is emulated; [`Runner::outcome`] applies it to the cached outcome).
    fn key(&self, variant: Variant) -> (String, Variant) {
        (
            format!(
                "{:?}/{}/{}/{}/{}/{}/{:?}/{:?}",
                self.op,
                self.n,
                self.primes,
                self.prime_bits,
                self.ciphertexts,
                self.dpus,
                self.mode,
                self.what_if.multiplier
            ),
            variant,
        )
    }
}

fn selected(id: &str, filter: &Option<Vec<String>>) -> bool {
    match filter {
        None => true,
        Some(patterns) => patterns.iter().any(|p| id == p || id.starts_with(&format!("{p}-"))),
    }
}

/// DRAMatic's experiments (Tables 2-5), in the paper's order.
pub fn dramatic_rows() -> Vec<RowSpec> {
    let mut rows = Vec::new();
    for op in [Op::Ntt, Op::Intt] {
        for ciphertexts in [1, 4, 16, 64, 256, 512, 1024, 4096] {
            // Few ciphertexts use only the DPUs they fill (the CSV's cores column).
            let dpus = match ciphertexts {
                1 => 2,
                4 => 8,
                16 => 32,
                _ => 128,
            };
            rows.push(RowSpec::new(2, op, 2048, 54, 2, ciphertexts, dpus));
        }
    }
    let table3 = [
        (1024, 27, 1, 32768),
        (2048, 54, 2, 32768),
        (4096, 72, 3, 32768),
        (8192, 174, 6, 32768),
        (16384, 377, 13, 4096),
        (32768, 812, 28, 4096),
    ];
    for op in [Op::Ntt, Op::Intt, Op::BgvMul] {
        for (n, mod_bits, primes, ciphertexts) in table3 {
            rows.push(RowSpec::new(3, op, n, mod_bits, primes, ciphertexts, 383));
        }
    }
    for ciphertexts in [8192, 16384, 32768] {
        rows.push(RowSpec::new(4, Op::Pipeline, 4096, 109, 3, ciphertexts, 383));
    }
    for (dpus, mode) in [
        (128, Mode::Sequential),
        (192, Mode::Parallel),
        (256, Mode::Sequential),
        (383, Mode::Parallel),
        (509, Mode::Sequential),
    ] {
        rows.push(RowSpec::with_mode(5, Op::Pipeline, 4096, 109, 3, 32768, dpus, mode));
    }
    rows.extend(section5_rows());
    rows
}

/// Cycles a called multiply routine adds to its body on a DPU: `call` and the return
/// (`jump r23`), one instruction each (UPMEM DPU ISA).
pub const CALL_CYCLES: u32 = 2;

/// DRAMatic 5.1's dummy multiplies as the section-5 rows model them: the 2- and 4-cycle bodies
/// ([`MultiplierCycles::DRAMATIC_DUMMY`]) plus [`CALL_CYCLES`], because they are called
/// routines: the text says only the single-cycle ones "are inlined to prevent function call
/// overhead". The single-cycle rows use [`MultiplierCycles::SINGLE_CYCLE`] as it is.
/// (`--what-if mul-cycles=4/6` runs the same on any workload.)
pub const SECTION5_DUMMY: MultiplierCycles = MultiplierCycles {
    mul32: MultiplierCycles::DRAMATIC_DUMMY.mul32 + CALL_CYCLES,
    mul64: MultiplierCycles::DRAMATIC_DUMMY.mul64 + CALL_CYCLES,
};

/// The `table` of section 5's rows: its raw results are DRAMatic's appendix Table 6.
pub const SECTION5_TABLE: u32 = 6;

/// DRAMatic section 5's what-if experiments ([`SECTION5_STATEMENTS`] says what the text states
/// of them): the four operations on the hardware as it is, with the 2/4-cycle dummy multiplies
/// and with the single-cycle ones; BGV mul with the dummies and the pipeline with single-cycle
/// multiplies also with zero-copy (5.2's proposal, which the paper does not measure).
pub fn section5_rows() -> Vec<RowSpec> {
    let dummy = WhatIf { multiplier: Some(SECTION5_DUMMY), zero_copy: false };
    let single = WhatIf { multiplier: Some(MultiplierCycles::SINGLE_CYCLE), zero_copy: false };
    let mut rows = Vec::new();
    for op in [Op::Ntt, Op::Intt, Op::BgvMul, Op::Pipeline] {
        rows.push(RowSpec::section5(op, "base", WhatIf::NONE));
        rows.push(RowSpec::section5(op, "dummy", dummy));
        if op == Op::BgvMul {
            rows.push(RowSpec::section5(op, "dummy-zc", WhatIf { zero_copy: true, ..dummy }));
        }
        rows.push(RowSpec::section5(op, "1cycle", single));
        if op == Op::Pipeline {
            rows.push(RowSpec::section5(op, "1cycle-zc", WhatIf { zero_copy: true, ..single }));
        }
    }
    rows
}

/// A figure section 5's text states of one of its experiments.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Quantity {
    /// Compute speed-up of the row over the row with this id (`compute(base) / compute(row)`).
    SpeedupOver(&'static str),
    /// Transfer time as a share of compute time.
    TransferOverCompute,
    /// Retrieval time as a share of compute time.
    RetrieveOverCompute,
    /// Transfer + retrieval time as a share of compute time.
    OverheadOverCompute,
}

/// One statement of DRAMatic section 5: the row it is about, the quantity, its value, and the
/// words it comes from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Statement {
    /// Row id.
    pub row: &'static str,
    /// What is stated.
    pub quantity: Quantity,
    /// The stated value (a speed-up, or a share: 1.5 = 150 %).
    pub value: f64,
    /// Section and quote.
    pub quote: &'static str,
}

/// What DRAMatic's section 5 text states of its what-if experiments (shared/seeds/000_*,
/// 5.1 and 5.2; stated for the N = 1024 .. 8192 sweep without an N, compared here to N = 4096).
/// The "total speed-up ... about 2.8 times in the combined test" is read as compute: NTT 2.7,
/// iNTT 2.8 and BGV mul 3.3 bracket it, and the overheads rise from 9 % to 28 %, so the
/// speed-up of transfer + compute + retrieval would be lower than the compute speed-up.
pub const SECTION5_STATEMENTS: &[Statement] = &[
    Statement {
        row: "s5-ntt-4096-dummy",
        quantity: Quantity::SpeedupOver("s5-ntt-4096-base"),
        value: 2.7,
        quote: "5.1: \"For NTT, the dummy multiplication brings a 2.7 times speed-up.\"",
    },
    Statement {
        row: "s5-intt-4096-dummy",
        quantity: Quantity::SpeedupOver("s5-intt-4096-base"),
        value: 2.8,
        quote: "5.1: \"The iNTT tests behave similarly, achieving a 2.8 times speed-up.\"",
    },
    Statement {
        row: "s5-bgv-mul-4096-dummy",
        quantity: Quantity::SpeedupOver("s5-bgv-mul-4096-base"),
        value: 3.3,
        quote: "5.1: \"[BGV multiplication] achieves a 3.3 times speed-up\"",
    },
    Statement {
        row: "s5-bgv-mul-4096-dummy",
        quantity: Quantity::TransferOverCompute,
        value: 1.5,
        quote: "5.1: \"In the BGV multiplication test, the transfer and retrieval overheads dominate the total \
                runtime at 150% and 270% respectively.\"",
    },
    Statement {
        row: "s5-bgv-mul-4096-dummy",
        quantity: Quantity::RetrieveOverCompute,
        value: 2.7,
        quote: "5.1: (as above) retrieval 270%",
    },
    Statement {
        row: "s5-pipeline-4096-dummy",
        quantity: Quantity::SpeedupOver("s5-pipeline-4096-base"),
        value: 2.8,
        quote: "5.1: \"The total speed-up due to the dummy multiplications is about 2.8 times in the combined test\"",
    },
    Statement {
        row: "s5-pipeline-4096-dummy",
        quantity: Quantity::TransferOverCompute,
        value: 0.10,
        quote: "5.1: \"In the combined NTT, BGV multiplication, and iNTT tests [...] the transfer and retrieval \
                overhead are reduced to 10% and 18% respectively\"",
    },
    Statement {
        row: "s5-pipeline-4096-dummy",
        quantity: Quantity::RetrieveOverCompute,
        value: 0.18,
        quote: "5.1: (as above) retrieval 18%",
    },
    Statement {
        row: "s5-pipeline-4096-dummy",
        quantity: Quantity::OverheadOverCompute,
        value: 0.28,
        quote: "5.2: \"it rises to 28% if we simulate improved DPU multiplication performance\"",
    },
    Statement {
        row: "s5-ntt-4096-1cycle",
        quantity: Quantity::SpeedupOver("s5-ntt-4096-dummy"),
        value: 1.8,
        quote: "5.1: \"For NTT, the more optimistic dummy routines bring another 1.8 times speed-up\"",
    },
    Statement {
        row: "s5-ntt-4096-1cycle",
        quantity: Quantity::TransferOverCompute,
        value: 0.32,
        quote: "5.1: \"For NTT, these overheads are 32% and 65% respectively.\"",
    },
    Statement {
        row: "s5-ntt-4096-1cycle",
        quantity: Quantity::RetrieveOverCompute,
        value: 0.65,
        quote: "5.1: (as above) retrieval 65%",
    },
    Statement {
        row: "s5-intt-4096-1cycle",
        quantity: Quantity::SpeedupOver("s5-intt-4096-dummy"),
        value: 1.7,
        quote: "5.1: \"Similarly for iNTT, we would achieve an additional 1.7 times speed-up.\"",
    },
    Statement {
        row: "s5-intt-4096-1cycle",
        quantity: Quantity::TransferOverCompute,
        value: 0.30,
        quote: "5.1: \"For iNTT, they are 30% and 62%.\"",
    },
    Statement {
        row: "s5-intt-4096-1cycle",
        quantity: Quantity::RetrieveOverCompute,
        value: 0.62,
        quote: "5.1: (as above) retrieval 62%",
    },
    Statement {
        row: "s5-bgv-mul-4096-1cycle",
        quantity: Quantity::SpeedupOver("s5-bgv-mul-4096-dummy"),
        value: 1.8,
        quote: "5.1: \"For BGV multiplication, the speed-up is 1.8 times\"",
    },
    Statement {
        row: "s5-bgv-mul-4096-1cycle",
        quantity: Quantity::TransferOverCompute,
        value: 2.85,
        quote: "5.1: \"For BGV multiplication, they are 285% and 436%.\"",
    },
    Statement {
        row: "s5-bgv-mul-4096-1cycle",
        quantity: Quantity::RetrieveOverCompute,
        value: 4.36,
        quote: "5.1: (as above) retrieval 436%",
    },
    Statement {
        row: "s5-pipeline-4096-1cycle",
        quantity: Quantity::TransferOverCompute,
        value: 0.17,
        quote: "5.1: \"for combined NTT, BGV multiplication, and iNTT, the overheads are 17% and 30%\"",
    },
    Statement {
        row: "s5-pipeline-4096-1cycle",
        quantity: Quantity::RetrieveOverCompute,
        value: 0.30,
        quote: "5.1: (as above) retrieval 30%",
    },
    Statement {
        row: "s5-pipeline-4096-1cycle",
        quantity: Quantity::OverheadOverCompute,
        value: 0.47,
        quote: "5.2: \"or even 47% with the more optimistic dummy routines\"",
    },
    Statement {
        row: "s5-pipeline-4096-base",
        quantity: Quantity::OverheadOverCompute,
        value: 0.09,
        quote: "5.2: \"DRAMatic's normal transfer and retrieval overhead is about 9% total in a combined NTT, BGV \
                multiplication, and iNTT test (Figure 9)\"",
    },
];

/// One of [`SECTION5_STATEMENTS`] with our value beside it.
#[derive(Debug, Clone, Serialize)]
pub struct Claim {
    /// `speedup over <row id>`, `transfer/compute`, `retrieve/compute` or `overhead/compute`.
    pub quantity: String,
    /// Ours.
    pub ours: f64,
    /// What the text states.
    pub published: f64,
    /// ours / published.
    pub ratio: f64,
    /// Where the text states it.
    pub quote: &'static str,
}

impl Quantity {
    fn name(&self) -> String {
        match self {
            Quantity::SpeedupOver(id) => format!("speed-up over {id}"),
            Quantity::TransferOverCompute => "transfer/compute".to_string(),
            Quantity::RetrieveOverCompute => "retrieve/compute".to_string(),
            Quantity::OverheadOverCompute => "overhead/compute".to_string(),
        }
    }
}

/// The target configuration: Table 4's largest / Table 5's 383-DPU pipeline.
fn target_spec() -> RowSpec {
    RowSpec::with_mode(5, Op::Pipeline, 4096, 109, 3, 32768, 383, Mode::Parallel)
}

/// The NTT row of the best-vs-barrett comparison: Table 3 at the pipeline's N = 4096.
fn ntt_ratio_spec() -> RowSpec {
    RowSpec::new(3, Op::Ntt, 4096, 72, 3, 32768, 383)
}

/// One row of the output.
#[derive(Debug, Clone, Serialize)]
pub struct RowReport {
    id: String,
    table: u32,
    op: &'static str,
    n: usize,
    mod_bits: u32,
    primes: usize,
    prime_bits: u32,
    ciphertexts: usize,
    dpus: usize,
    ranks: u32,
    mode: &'static str,
    kernel: &'static str,
    backend: &'static str,
    emulation: String,
    /// Emulator wall time on this host.
    wall_s: f64,
    compute_s: f64,
    transfer_s: f64,
    retrieve_s: f64,
    total_s: f64,
    energy_j: f64,
    /// Modeled whole-system power: energy / total time.
    power_w: f64,
    model: String,
    launches: u64,
    busiest_share: usize,
    /// Where the published values come from, or why there are none.
    reference: String,
    published_compute_s: Option<f64>,
    published_transfer_s: Option<f64>,
    published_retrieve_s: Option<f64>,
    published_power_w: Option<f64>,
    /// ours / published (absent where nothing, or 0 after rounding, was published).
    compute_ratio: Option<f64>,
    transfer_ratio: Option<f64>,
    retrieve_ratio: Option<f64>,
    power_ratio: Option<f64>,
    /// The row's hardware what-ifs (absent when none).
    #[serde(skip_serializing_if = "Option::is_none")]
    what_if: Option<String>,
    /// Section 5's rows: what the text states of the row, with ours beside it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    claims: Vec<Claim>,
}

fn ratio(ours: f64, published: Option<f64>) -> Option<f64> {
    published.filter(|&p| p > 0.0).map(|p| ours / p)
}

impl RowReport {
    fn new(
        spec: &RowSpec,
        variant: Variant,
        outcome: &PimOutcome,
        reference: &std::result::Result<Vec<ReferenceRow>, String>,
    ) -> Self {
        let published = reference.as_ref().ok().and_then(|rows| spec.published(rows));
        let stated = SECTION5_STATEMENTS.iter().any(|s| s.row == spec.id);
        let reference_note = match (reference, published) {
            _ if spec.is_section5() && spec.what_if.zero_copy => {
                "no published value: DRAMatic 5.2 proposes zero-copy and measures nothing".to_string()
            }
            _ if spec.is_section5() && stated => {
                "DRAMatic 5.1/5.2 text (Table 6, the raw results, is not in shared/reference)".to_string()
            }
            _ if spec.is_section5() => {
                "no published value: the text states none for this row (Table 6 is not in shared/reference)".to_string()
            }
            _ if spec.what_if.is_active() => "what-if: not comparable to the published measurements".to_string(),
            (Err(_), _) => "reference missing".to_string(),
            (Ok(_), Some(_)) => format!("DRAMatic Table {} (dramatic_calibration.csv)", spec.table),
            (Ok(_), None) => "not in shared/reference".to_string(),
        };
        let power_w = if outcome.total_s > 0.0 { outcome.energy_j / outcome.total_s } else { 0.0 };
        let published_compute_s = published.map(|r| r.compute_s);
        let published_transfer_s = published.map(|r| r.transfer_s);
        let published_retrieve_s = published.map(|r| r.retrieve_s);
        let published_power_w = published.and_then(|r| r.power_w);
        Self {
            id: spec.id.clone(),
            table: spec.table,
            op: spec.op.name(),
            n: spec.n,
            mod_bits: spec.mod_bits,
            primes: spec.primes,
            prime_bits: spec.prime_bits,
            ciphertexts: spec.ciphertexts,
            dpus: spec.dpus,
            ranks: spec.dpus.div_ceil(64) as u32,
            mode: spec.mode.name(),
            kernel: upmem::kernel_name(variant),
            backend: "upmem-emu",
            emulation: outcome.emulation.clone(),
            wall_s: outcome.wall_s,
            compute_s: outcome.compute_s,
            transfer_s: outcome.transfer_s,
            retrieve_s: outcome.retrieve_s,
            total_s: outcome.total_s,
            energy_j: outcome.energy_j,
            power_w,
            model: outcome.model.clone(),
            launches: outcome.launches,
            busiest_share: outcome.busiest_share,
            reference: reference_note,
            published_compute_s,
            published_transfer_s,
            published_retrieve_s,
            published_power_w,
            compute_ratio: ratio(outcome.compute_s, published_compute_s),
            transfer_ratio: ratio(outcome.transfer_s, published_transfer_s),
            retrieve_ratio: ratio(outcome.retrieve_s, published_retrieve_s),
            power_ratio: ratio(power_w, published_power_w),
            what_if: spec.what_if.is_active().then(|| spec.what_if.describe()),
            claims: Vec::new(),
        }
    }

    /// Whether this is one of section 5's rows.
    fn is_section5(&self) -> bool {
        self.table == SECTION5_TABLE
    }

    /// Whether the emulation covered only part of the busiest share.
    fn partial(&self) -> bool {
        self.emulation.contains("emulated in part")
    }
}

/// The target summary (printed last).
#[derive(Debug, Clone, Serialize)]
pub struct TargetReport {
    id: &'static str,
    op: &'static str,
    n: usize,
    primes: usize,
    ciphertexts: usize,
    dpus: usize,
    mode: &'static str,
    kernel: &'static str,
    /// Modeled compute of the pipeline with the best kernel.
    compute_s: f64,
    target_s: f64,
    met: bool,
    /// The same with DRAMatic's Barrett kernel.
    barrett_compute_s: f64,
    /// barrett / best for the pipeline.
    pipeline_speedup: f64,
    /// The NTT row compared (Table 3, N = 4096).
    ntt_row: String,
    ntt_best_compute_s: f64,
    ntt_barrett_compute_s: f64,
    /// best / barrett NTT compute.
    ntt_best_over_barrett: f64,
    model: String,
}

/// Runs the experiments of one row set, with a cache so that a configuration appearing twice
/// (Table 4's last row is Table 5's 383-DPU row) is emulated once.
struct Runner {
    max_emulation_s: f64,
    cache: HashMap<(String, Variant), PimOutcome>,
}

impl Runner {
    /// The outcome of `spec` with `variant`: emulated once per configuration and multiplier;
    /// zero-copy is applied to that outcome (it changes no count, only the transfers).
    fn outcome(&mut self, spec: &RowSpec, variant: Variant) -> Result<PimOutcome> {
        let key = spec.key(variant);
        let outcome = match self.cache.get(&key) {
            Some(outcome) => outcome.clone(),
            None => {
                let workload = Workload::new(spec.op, spec.n, spec.primes, spec.prime_bits, spec.ciphertexts, 1)?;
                let multiplier = WhatIf { zero_copy: false, ..spec.what_if };
                let settings = PimSettings::new(spec.dpus, spec.mode, variant, spec.primes)?.with_what_if(multiplier);
                let outcome = pim::run_subset(&workload, &settings, Some(self.max_emulation_s))
                    .map_err(|e| BenchError::Failed(format!("row {}: {e}", spec.id)))?;
                self.cache.insert(key, outcome.clone());
                outcome
            }
        };
        Ok(if spec.what_if.zero_copy { zero_copy(outcome, spec) } else { outcome })
    }

    /// What section 5's text states of `spec`, with ours from `outcome` (and the rows the
    /// speed-ups are over, run or taken from the cache).
    fn claims(&mut self, spec: &RowSpec, variant: Variant, outcome: &PimOutcome) -> Result<Vec<Claim>> {
        let mut claims = Vec::new();
        for statement in SECTION5_STATEMENTS.iter().filter(|s| s.row == spec.id) {
            let share = |x: f64| if outcome.compute_s > 0.0 { x / outcome.compute_s } else { 0.0 };
            let ours = match statement.quantity {
                Quantity::SpeedupOver(id) => {
                    let base = dramatic_rows()
                        .into_iter()
                        .find(|r| r.id == id)
                        .ok_or_else(|| BenchError::Failed(format!("row {id} is not defined")))?;
                    self.outcome(&base, variant)?.compute_s / outcome.compute_s
                }
                Quantity::TransferOverCompute => share(outcome.transfer_s),
                Quantity::RetrieveOverCompute => share(outcome.retrieve_s),
                Quantity::OverheadOverCompute => share(outcome.transfer_s + outcome.retrieve_s),
            };
            claims.push(Claim {
                quantity: statement.quantity.name(),
                ours,
                published: statement.value,
                ratio: ours / statement.value,
                quote: statement.quote,
            });
        }
        Ok(claims)
    }
}

/// `outcome` (emulated without zero-copy) under `spec`'s what-ifs with zero-copy: no transfer or
/// retrieval, the energy of the compute alone, the label with `+zero-copy`.
fn zero_copy(mut outcome: PimOutcome, spec: &RowSpec) -> PimOutcome {
    let mut model = UpmemModel::v1b();
    spec.what_if.apply(&mut model);
    outcome.transfer_s = 0.0;
    outcome.retrieve_s = 0.0;
    outcome.total_s = outcome.transfer_s + outcome.compute_s + outcome.retrieve_s;
    outcome.energy_j = model.energy_joules(outcome.total_s, spec.dpus.div_ceil(64) as u32);
    outcome.model = model.label();
    outcome.sources.transfer_s = "model with the zero-copy what-if: no host <-> DPU transfer".into();
    outcome
}

/// A reproduction, validated and ready to run row by row: [`Reproduction::intro`] first, then
/// [`Reproduction::run_rows`], [`Reproduction::footer`] and [`Reproduction::target`]
/// ([`reproduce`] does it all at once).
pub struct Reproduction {
    variant: Variant,
    what_if: WhatIf,
    specs: Vec<RowSpec>,
    want_target: bool,
    reference: std::result::Result<Vec<ReferenceRow>, String>,
    runner: Runner,
    start: Instant,
}

impl Reproduction {
    /// Validates `config` (kernel, budget, row filter) and loads the published values (a
    /// missing reference file is not an error: the rows then have our numbers only).
    pub fn new(config: &ReproduceConfig) -> Result<Self> {
        let variant = upmem::parse_kernel(&config.kernel)?;
        if config.max_emulation_s.is_nan() || config.max_emulation_s <= 0.0 {
            return Err(BenchError::usage("--max-emulation-s must be positive"));
        }
        let filter: Option<Vec<String>> = config
            .rows
            .as_ref()
            .map(|r| r.split(',').map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect());
        let Experiment::Dramatic = config.experiment;
        let what_if = WhatIf::parse(&config.what_if)?;
        let specs: Vec<RowSpec> = dramatic_rows()
            .into_iter()
            .filter(|s| s.selected(&filter))
            .map(|s| if s.is_section5() { s } else { RowSpec { what_if, ..s } })
            .collect();
        let want_target = selected("target", &filter);
        if specs.is_empty() && !want_target {
            return Err(BenchError::usage(format!(
                "--rows {} selects no row; ids look like t2-ntt-64, t3-bgv-mul-4096, t4-pipeline-8192, \
                 t5-pipeline-128-seq, s5-ntt-4096-dummy (s5: section 5's what-ifs), or target",
                config.rows.as_deref().unwrap_or("")
            )));
        }
        let reference = reference::load_default().map_err(|e| e.to_string());
        Ok(Self {
            variant,
            what_if,
            specs,
            want_target,
            reference,
            runner: Runner { max_emulation_s: config.max_emulation_s, cache: HashMap::new() },
            start: Instant::now(),
        })
    }

    /// The kernel arithmetic of the rows.
    pub fn variant(&self) -> Variant {
        self.variant
    }

    /// The selected rows, in the paper's order.
    pub fn specs(&self) -> &[RowSpec] {
        &self.specs
    }

    /// Whether the target summary is selected.
    pub fn wants_target(&self) -> bool {
        self.want_target
    }

    /// Seconds since [`Reproduction::new`].
    pub fn elapsed_s(&self) -> f64 {
        self.start.elapsed().as_secs_f64()
    }

    /// The text before the rows: what is modeled, where the published values come from, a blank
    /// line and the column headings.
    pub fn intro(&self) -> String {
        let mut lines = vec![
            format!(
                "DRAMatic (Tables 2-5) on the emulated UPMEM backend, kernel {}: modeled by {}{}; section 5's what-ifs as \
                 rows s5",
                upmem::kernel_name(self.variant),
                UpmemModel::v1b().label(),
                if self.what_if.is_active() {
                    format!("; Tables 2-5 with --what-if {}", self.what_if.describe())
                } else {
                    String::new()
                }
            ),
            "  ours: compute and energy from the emulated busiest DPU of each prime group (subset method), transfer \
             and retrieve from the model on the full byte count; published: DRAMatic's measurements"
                .to_string(),
        ];
        lines.push(match &self.reference {
            Ok(_) => format!("  published values: {}", reference::default_path().display()),
            Err(e) => format!("  reference missing: {e}; printing our numbers only"),
        });
        lines.push(String::new());
        lines.push(header());
        lines.join("\n")
    }

    /// Runs the selected rows in order, handing each report to `each` as soon as it is made
    /// (the CLI prints it), and returns them all. `progress` counts the rows and, when the
    /// target is selected, the target as one more step (run by [`Reproduction::target`]).
    pub fn run_rows(
        &mut self,
        progress: &dyn Progress,
        mut each: impl FnMut(&RowReport) -> Result<()>,
    ) -> Result<Vec<RowReport>> {
        progress.start(self.specs.len() as u64 + u64::from(self.want_target), "rows");
        let mut reports = Vec::new();
        let mut result = Ok(());
        for spec in &self.specs {
            let variant = self.variant;
            let runner = &mut self.runner;
            result = runner.outcome(spec, variant).and_then(|outcome| {
                let mut report = RowReport::new(spec, variant, &outcome, &self.reference);
                report.claims = runner.claims(spec, variant, &outcome)?;
                each(&report)?;
                reports.push(report);
                Ok(())
            });
            if result.is_err() {
                break;
            }
            progress.advance(1);
        }
        if result.is_err() || !self.want_target {
            progress.finish();
        }
        result.map(|()| reports)
    }

    /// The text after the rows (empty when there are none): the legend, the partial rows, and
    /// the fidelity or speed-up summary of the NTT/iNTT rows.
    pub fn footer(&self, reports: &[RowReport]) -> String {
        if reports.is_empty() {
            return String::new();
        }
        footer(reports, self.variant)
    }

    /// The target summary (best and barrett kernels on the target pipeline and the NTT row),
    /// reusing rows already run; `None` when it is not selected. Finishes `progress`.
    pub fn target(&mut self, progress: &dyn Progress) -> Result<Option<TargetReport>> {
        if !self.want_target {
            return Ok(None);
        }
        let target = target_report(&mut self.runner);
        progress.advance(1);
        progress.finish();
        target.map(Some)
    }
}

/// Everything a reproduction made: the rows and, if selected, the target.
#[derive(Debug, Clone, Serialize)]
pub struct ReproductionReport {
    /// The rows' text header ([`Reproduction::intro`]), not serialised.
    #[serde(skip)]
    pub intro: String,
    /// The rows, in the paper's order.
    pub rows: Vec<RowReport>,
    /// The footer's text ([`Reproduction::footer`]), not serialised.
    #[serde(skip)]
    pub footer: String,
    /// The target summary, when selected.
    pub target: Option<TargetReport>,
    /// Host seconds the emulation took.
    pub elapsed_s: f64,
}

impl Render for ReproductionReport {
    /// The table `pimhe bench reproduce` prints.
    fn render(&self) -> String {
        let mut text = self.intro.clone();
        for row in &self.rows {
            text.push('\n');
            text.push_str(&row.render());
        }
        if !self.footer.is_empty() {
            text.push('\n');
            text.push_str(&self.footer);
        }
        if let Some(target) = &self.target {
            text.push('\n');
            text.push_str(&target.render());
        }
        text.push_str(&format!("\n(emulation took {:.1} s on this host)", self.elapsed_s));
        text
    }
}

/// Runs a whole reproduction (what `pimhe bench reproduce` prints row by row).
pub fn reproduce(config: &ReproduceConfig, progress: &dyn Progress) -> Result<ReproductionReport> {
    let mut reproduction = Reproduction::new(config)?;
    let rows = reproduction.run_rows(progress, |_| Ok(()))?;
    let target = reproduction.target(progress)?;
    Ok(ReproductionReport {
        intro: reproduction.intro(),
        footer: reproduction.footer(&rows),
        rows,
        target,
        elapsed_s: reproduction.elapsed_s(),
    })
}

fn target_report(runner: &mut Runner) -> Result<TargetReport> {
    let spec = target_spec();
    let best = runner.outcome(&spec, Variant::Best)?;
    let barrett = runner.outcome(&spec, Variant::Barrett)?;
    let ntt = ntt_ratio_spec();
    let ntt_best = runner.outcome(&ntt, Variant::Best)?;
    let ntt_barrett = runner.outcome(&ntt, Variant::Barrett)?;
    Ok(TargetReport {
        id: "target",
        op: spec.op.name(),
        n: spec.n,
        primes: spec.primes,
        ciphertexts: spec.ciphertexts,
        dpus: spec.dpus,
        mode: spec.mode.name(),
        kernel: "best",
        compute_s: best.compute_s,
        target_s: TARGET_COMPUTE_S,
        met: best.compute_s <= TARGET_COMPUTE_S,
        barrett_compute_s: barrett.compute_s,
        pipeline_speedup: barrett.compute_s / best.compute_s,
        ntt_row: ntt.id.clone(),
        ntt_best_compute_s: ntt_best.compute_s,
        ntt_barrett_compute_s: ntt_barrett.compute_s,
        ntt_best_over_barrett: ntt_best.compute_s / ntt_barrett.compute_s,
        model: best.model,
    })
}

/// A modeled or published time, in seconds.
fn secs(x: f64) -> String {
    if x >= 10.0 {
        format!("{x:.2}")
    } else if x >= 0.01 {
        format!("{x:.3}")
    } else {
        format!("{x:.4}")
    }
}

fn opt(x: Option<f64>, f: impl Fn(f64) -> String) -> String {
    x.map_or("-".to_string(), f)
}

/// The column headings of the rows.
fn header() -> String {
    format!(
        "{:<5} {:<8} {:>5} {:>2} {:>6} {:>4} {:<4} | {:>24} | {:>24} | {:>24} | {:>8} | {:>16} | note",
        "table",
        "op",
        "N",
        "K",
        "ctxts",
        "DPUs",
        "mode",
        "compute s: ours pub ratio",
        "transfer s: ours pub rat",
        "retrieve s: ours pub rat",
        "energy J",
        "power W: ours pub",
    )
}

fn triple(ours: f64, published: Option<f64>, ratio: Option<f64>) -> String {
    format!("{:>8} {:>8} {:>6}", secs(ours), opt(published, secs), opt(ratio, |r| format!("{r:.2}")))
}

impl Render for RowReport {
    /// One line of the table.
    fn render(&self) -> String {
        let r = self;
        let mut note = if r.partial() { "partial*".to_string() } else { String::new() };
        if let Some(what_if) = &r.what_if {
            note = format!("{note} what-if {what_if}").trim_start().to_string();
        }
        let table = if r.is_section5() { "s5".to_string() } else { r.table.to_string() };
        let mut line = format!(
            "{:<5} {:<8} {:>5} {:>2} {:>6} {:>4} {:<4} | {} | {} | {} | {:>8.1} | {:>6.0} {:>4} {:>4} | {}",
            table,
            r.op,
            r.n,
            r.primes,
            r.ciphertexts,
            r.dpus,
            &r.mode[..3],
            triple(r.compute_s, r.published_compute_s, r.compute_ratio),
            triple(r.transfer_s, r.published_transfer_s, r.transfer_ratio),
            triple(r.retrieve_s, r.published_retrieve_s, r.retrieve_ratio),
            r.energy_j,
            r.power_w,
            opt(r.published_power_w, |p| format!("{p:.0}")),
            opt(r.power_ratio, |p| format!("{p:.2}")),
            note
        );
        if r.is_section5() {
            let stated: Vec<String> = r
                .claims
                .iter()
                .map(|c| {
                    let show = |x: f64| {
                        if c.quantity.starts_with("speed-up") {
                            format!("{x:.2}x")
                        } else {
                            format!("{:.0}%", 100.0 * x)
                        }
                    };
                    format!("{} {} vs {} stated ({:.2})", c.quantity, show(c.ours), show(c.published), c.ratio)
                })
                .collect();
            line.push_str(&format!(
                "\n        {}: {}",
                r.id,
                if stated.is_empty() { r.reference.clone() } else { stated.join("; ") }
            ));
        }
        line
    }
}

/// The footer of [`Reproduction::footer`], lines joined.
fn footer(reports: &[RowReport], variant: Variant) -> String {
    let mut lines = vec![String::new()];
    lines.push(format!(
        "  modeled figures: (modeled, {}); N/K/ctxts = ring degree / primes / input ciphertexts (bgv-mul and \
         pipeline multiply them in pairs); par/seq = parallel/sequential; ratio = ours / published",
        UpmemModel::v1b().label().trim_end_matches(" (modeled)")
    ));
    let partial: Vec<&RowReport> = reports.iter().filter(|r| r.partial()).collect();
    for r in &partial {
        lines.push(format!("  * {}: {}", r.id, r.emulation));
    }
    let claims: Vec<(&RowReport, &Claim)> = reports.iter().flat_map(|r| r.claims.iter().map(move |c| (r, c))).collect();
    if reports.iter().any(|r| r.is_section5()) {
        lines.push(
            "  s5 = DRAMatic section 5's what-ifs on 509 DPUs (mul-cycles=4/6: 5.1's 2/4-cycle dummy multiplies \
             plus a call and return; 1/1: its inlined single-cycle ones; zero-copy: 5.2's proposal); the text states its figures for N = 1024 .. 8192 without \
             an N, ours are at N = 4096"
                .to_string(),
        );
    }
    if variant == Variant::Best && reports.iter().any(|r| r.what_if.as_deref().is_some_and(|w| w.contains("mul-"))) {
        lines.push(format!("  what-if caveat: {}", crate::target::what_if::TABLE_CAVEAT));
    }
    if let Some(&(first_row, first)) = claims.first() {
        let within = claims.iter().filter(|(_, c)| (c.ratio - 1.0).abs() <= 0.1).count();
        let (worst_row, worst) = claims.iter().copied().fold((first_row, first), |w, c| {
            if (c.1.ratio - 1.0).abs() > (w.1.ratio - 1.0).abs() {
                c
            } else {
                w
            }
        });
        lines.push(format!(
            "  section 5: {within} of {} figures the text states within 10% of ours; worst ratio {:.3} ({} {})",
            claims.len(),
            worst.ratio,
            worst_row.id,
            worst.quantity
        ));
    }
    let compared: Vec<(&RowReport, f64)> = reports
        .iter()
        .filter(|r| matches!(r.op, "ntt" | "intt"))
        .filter_map(|r| r.compute_ratio.map(|x| (r, x)))
        .collect();
    if compared.is_empty() {
        return lines.join("\n");
    }
    let within = compared.iter().filter(|(_, x)| (x - 1.0).abs() <= 0.2).count();
    let (worst, worst_ratio) = compared.iter().copied().fold((compared[0].0, compared[0].1), |w, c| {
        if (c.1 - 1.0).abs() > (w.1 - 1.0).abs() {
            c
        } else {
            w
        }
    });
    let geomean = (compared.iter().map(|(_, x)| x.ln()).sum::<f64>() / compared.len() as f64).exp();
    lines.push(match variant {
        Variant::Barrett => format!(
            "  model fidelity (barrett = DRAMatic's kernel): NTT/iNTT compute of {within} of {} calibration rows within \
             20% of the published value; worst ratio {worst_ratio:.3} ({}); geometric mean ratio {geomean:.3}",
            compared.len(),
            worst.id
        ),
        Variant::Best => format!(
            "  speed-up of the best kernel over DRAMatic's published NTT/iNTT compute: {:.2}x (geometric mean over {} \
             rows; range {:.2}x .. {:.2}x)",
            1.0 / geomean,
            compared.len(),
            compared.iter().map(|(_, x)| 1.0 / x).fold(f64::INFINITY, f64::min),
            compared.iter().map(|(_, x)| 1.0 / x).fold(0.0, f64::max),
        ),
    });
    lines.join("\n")
}

impl Render for TargetReport {
    /// A blank line and two lines of text.
    fn render(&self) -> String {
        let t = self;
        let first = format!(
        "target: pipeline N={} {} primes {} ciphertexts on {} DPUs ({}), compute only, best kernel: {} s (modeled, {}) vs \
         the {:.1} s target: {}",
        t.n,
        t.primes,
        t.ciphertexts,
        t.dpus,
        t.mode,
        secs(t.compute_s),
        t.model.trim_end_matches(" (modeled)"),
        t.target_s,
        if t.met { "met" } else { "NOT met" }
    );
        let second = format!(
        "        barrett kernel on the same pipeline: {} s (best is {:.2}x faster); NTT ({}) best / barrett = {:.3} \
         ({} s / {} s, {:.2}x faster)",
        secs(t.barrett_compute_s),
        t.pipeline_speedup,
        t.ntt_row,
        t.ntt_best_over_barrett,
        secs(t.ntt_best_compute_s),
        secs(t.ntt_barrett_compute_s),
        1.0 / t.ntt_best_over_barrett
    );
        format!("\n{first}\n{second}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_follow_the_paper() {
        let rows = dramatic_rows();
        assert_eq!(rows.len(), 16 + 18 + 3 + 5 + 14);
        let ids: std::collections::HashSet<&str> = rows.iter().map(|r| r.id.as_str()).collect();
        assert_eq!(ids.len(), rows.len(), "ids are unique");
        let t3 = |op: &str, n| rows.iter().find(|r| r.id == format!("t3-{op}-{n}")).unwrap();
        assert_eq!((t3("ntt", 4096).primes, t3("ntt", 4096).prime_bits), (3, 24));
        assert_eq!(t3("ntt", 16384).mode, Mode::Sequential);
        assert_eq!(t3("intt", 32768).primes, 28);
        assert_eq!(t3("bgv-mul", 8192).mode, Mode::Parallel);
        assert_eq!(t3("bgv-mul", 8192).prime_bits, 29);
        let t5: Vec<_> = rows.iter().filter(|r| r.table == 5).map(|r| (r.dpus, r.mode, r.prime_bits)).collect();
        assert_eq!(t5[0], (128, Mode::Sequential, 30));
        assert_eq!(t5[3], (383, Mode::Parallel, 30));
        let t2 = rows.iter().find(|r| r.id == "t2-intt-1").unwrap();
        assert_eq!((t2.dpus, t2.mode), (2, Mode::Parallel));
        assert!(selected("t5-pipeline-128-seq", &Some(vec!["t5".into()])));
        assert!(selected("t2-ntt-64", &Some(vec!["t2-ntt-64".into()])));
        assert!(!selected("t2-ntt-64", &Some(vec!["t2-ntt-6".into()])));
        assert!(!selected("target", &Some(vec!["t2".into()])));
    }

    #[test]
    fn section5_rows_and_statements_follow_the_text() {
        let rows = dramatic_rows();
        let s5: Vec<&RowSpec> = rows.iter().filter(|r| r.is_section5()).collect();
        assert_eq!(s5.len(), 14);
        for r in &s5 {
            assert!(r.id.starts_with("s5-") && r.id.contains("-4096-"), "{}", r.id);
            assert_eq!((r.dpus, r.ciphertexts, r.primes, r.mode), (509, 32768, 3, Mode::Sequential));
            assert!(selected(&r.id, &Some(vec!["s5".into()])));
        }
        let find = |id: &str| rows.iter().find(|r| r.id == id).unwrap_or_else(|| panic!("{id}"));
        assert_eq!(find("s5-ntt-4096-dummy").what_if.multiplier, Some(MultiplierCycles { mul32: 4, mul64: 6 }));
        assert_eq!(find("s5-bgv-mul-4096-1cycle").what_if.multiplier, Some(MultiplierCycles::SINGLE_CYCLE));
        assert!(find("s5-pipeline-4096-1cycle-zc").what_if.zero_copy);
        // The pipeline's base row is Table 5's 509-DPU row: one emulation for both.
        assert_eq!(
            find("s5-pipeline-4096-base").key(Variant::Barrett),
            find("t5-pipeline-509-seq").key(Variant::Barrett)
        );
        assert_ne!(find("s5-ntt-4096-dummy").key(Variant::Barrett), find("s5-ntt-4096-base").key(Variant::Barrett));
        for statement in SECTION5_STATEMENTS {
            find(statement.row);
            if let Quantity::SpeedupOver(base) = statement.quantity {
                find(base);
            }
            assert!(statement.quote.starts_with("5."), "{}", statement.quote);
        }
    }

    #[test]
    fn published_rows_are_matched_by_configuration() {
        let csv = "table,impl,operation,cores,degree,mod_bits,ciphertexts,compute_s,transfer_s,retrieve_s,power_w\n\
                   2,DRAMatic,NTT,128,2048,54,64,0.042,0.001,0.001,313\n\
                   2,MHY⁺,NTT,128,2048,54,64,2.542,0.638,0.512,278\n";
        let reference = reference::parse(csv).unwrap();
        let rows = dramatic_rows();
        let ntt64 = rows.iter().find(|r| r.id == "t2-ntt-64").unwrap();
        assert_eq!(ntt64.published(&reference).unwrap().compute_s, 0.042);
        let intt64 = rows.iter().find(|r| r.id == "t2-intt-64").unwrap();
        assert!(intt64.published(&reference).is_none());
        assert_eq!(ratio(0.084, Some(0.042)), Some(2.0));
        assert_eq!(ratio(0.001, Some(0.0)), None);
    }
}
