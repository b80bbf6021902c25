//! DRAMatic's experiments: the configuration of every row of its Tables 2-5, section 5 and
//! section 7.2, and the target.

use pimhe_pim::layout::Variant;
use pimhe_pim::model::reference::ReferenceRow;
use pimhe_pim::model::MultiplierCycles;
use pimhe_pim::runtime::placement::Mode;

use crate::measure::kernels::Op;
use crate::target::what_if::WhatIf;

/// The target: the pipeline of Table 4/5's 383-DPU row in this many modeled seconds
/// of compute with the best kernel.
pub const TARGET_COMPUTE_S: f64 = 4.0;

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
    pub(super) fn new(
        table: u32,
        op: Op,
        n: usize,
        mod_bits: u32,
        primes: usize,
        ciphertexts: usize,
        dpus: usize,
    ) -> Self {
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
    pub(super) fn csv_operation(&self) -> Option<&'static str> {
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
    pub(super) fn is_section5(&self) -> bool {
        self.table == SECTION5_TABLE
    }

    /// Whether this is one of section 7.2's rows.
    pub(super) fn is_section72(&self) -> bool {
        self.table == SECTION72_TABLE
    }

    /// Whether the row is one of the appendix tables' (2-5), the rows `--what-if` applies to.
    pub(super) fn is_appendix(&self) -> bool {
        !self.is_section5() && !self.is_section72()
    }

    /// The published DRAMatic row with this configuration.
    pub(super) fn published<'a>(&self, reference: &'a [ReferenceRow]) -> Option<&'a ReferenceRow> {
        if !self.is_appendix() || self.what_if.is_active() {
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

    pub(super) fn selected(&self, filter: &Option<Vec<String>>) -> bool {
        selected(&self.id, filter)
    }

    /// The cache key of the emulation: the configuration and the multiplier (zero-copy does
    /// not change what is emulated; [`Runner::outcome`] applies it to the cached outcome).
    pub(super) fn key(&self, variant: Variant) -> (String, Variant) {
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

pub(super) fn selected(id: &str, filter: &Option<Vec<String>>) -> bool {
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
    rows.extend(section72_rows());
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

/// The `table` of section 7.2's rows: DRAMatic's NTT at BMP+'s test conditions.
pub const SECTION72_TABLE: u32 = 72;

/// DPU counts of section 7.2: BMP+'s 256, and all 509 of DRAMatic's machine.
pub const SECTION72_DPUS: [usize; 2] = [256, 509];

/// Polynomials section 7.2 transforms at once: 4096, i.e. 2048 ciphertexts.
pub const SECTION72_POLYNOMIALS: usize = 4096;

/// Bits of section 7.2's coefficients (BMP+'s 1241-bit modulus).
pub const SECTION72_MOD_BITS: u32 = 1241;

/// Largest prime our kernels take, in bits (`bench --prime-bits`, 2..=30).
const MAX_PRIME_BITS: u32 = 30;

/// DRAMatic 7.2's NTT at BMP+'s test conditions (rows `s72-ntt-{dpus}`): N = 2^16, the 1241-bit
/// modulus as ceil(1241 / 30) = 42 primes of 30 bits (our kernels' limit; DRAMatic's 32-bit
/// words hold residues of the same size, 1241 / 42 = 29.5 bits), 4096 polynomials on 256 and
/// 509 DPUs. 42 primes cannot each take whole ranks of 4 or 8, so both run sequentially
/// (DRAMatic 3.3): one prime after another on all DPUs, 16 (256 DPUs) or at most 9 (509)
/// sub-polynomials of 256 KiB per DPU in each prime's pass. The whole batch, 4096 x 42
/// sub-polynomials of 256 KiB (42 GiB), fits neither 256 nor 509 DPUs' 64 MiB at once (16 and
/// 32 GiB), so the passes also stream the data: each prime's 4096 sub-polynomials are copied
/// in, transformed and copied back, which the rows price as the same bytes in one copy each way
/// (the per-pass copies add 41 copy latencies, which the row's note prices).
pub fn section72_rows() -> Vec<RowSpec> {
    let primes = SECTION72_MOD_BITS.div_ceil(MAX_PRIME_BITS) as usize;
    SECTION72_DPUS
        .iter()
        .map(|&dpus| {
            let ciphertexts = SECTION72_POLYNOMIALS / 2;
            let mut spec =
                RowSpec::new(SECTION72_TABLE, Op::Ntt, 1 << 16, SECTION72_MOD_BITS, primes, ciphertexts, dpus);
            spec.id = format!("s72-ntt-{dpus}");
            spec
        })
        .collect()
}

/// The target configuration: Table 4's largest / Table 5's 383-DPU pipeline.
pub(super) fn target_spec() -> RowSpec {
    RowSpec::with_mode(5, Op::Pipeline, 4096, 109, 3, 32768, 383, Mode::Parallel)
}

/// The NTT row of the best-vs-barrett comparison: Table 3 at the pipeline's N = 4096.
pub(super) fn ntt_ratio_spec() -> RowSpec {
    RowSpec::new(3, Op::Ntt, 4096, 72, 3, 32768, 383)
}

#[cfg(test)]
mod tests {
    use pimhe_pim::model::reference;

    use super::*;
    use crate::reproduce::dramatic::statements::{Quantity, SECTION5_STATEMENTS};

    #[test]
    fn rows_follow_the_paper() {
        let rows = dramatic_rows();
        assert_eq!(rows.len(), 16 + 18 + 3 + 5 + 14 + 2);
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
        // Section 7.2: 1241 bits as 42 primes of 30 bits, sequential on 4 and 8 ranks.
        let s72: Vec<_> = rows.iter().filter(|r| r.is_section72()).map(|r| (r.id.as_str(), r.dpus)).collect();
        assert_eq!(s72, [("s72-ntt-256", 256), ("s72-ntt-509", 509)]);
        for r in rows.iter().filter(|r| r.is_section72()) {
            assert_eq!((r.n, r.primes, r.prime_bits, r.ciphertexts), (65536, 42, 30, 2048));
            assert!(r.primes as u32 * r.prime_bits >= 1241 && r.mode == Mode::Sequential);
            assert!(!r.is_appendix() && !r.is_section5());
        }
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
    }
}
