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
//! Section 7.2 (rows `s72-ntt-{256,509}`, [`section72_rows`]): the NTT at BMP+'s test
//! conditions (N = 2^16, 1241 bits as 42 primes of 30 bits, 4096 polynomials, sequential), its
//! copies priced per prime's pass and its NTT checked against the CPU backend (`large_n`),
//! beside the 32.6 / 23 ms per polynomial and BMP+'s times the text states
//! ([`SECTION72_STATEMENTS`]). Two sections without emulation: Table 1's batch sizes beside
//! section 3.5's rule and pimhe's placement ([`Table1Report`], `--rows table1`) and Fig. 3's
//! multiply costs by factor width ([`MultiplyReport`], `--rows fig3`).
//!
//! Primes have `round(mod_bits / primes)` bits, at most 30 (our kernels' limit; the 109-bit
//! modulus gets 3 primes of 30 bits). "Ciphertexts" counts inputs: BGV mul and the pipeline
//! multiply them in pairs (C/2 products). Table 3's 13- and 28-prime rows run sequentially:
//! 6 ranks cannot hold 13 or 28 whole-rank groups (DRAMatic 3.3).
//!
//! The module's files: `experiments` (the rows of the paper and their configurations),
//! `statements` (what sections 5 and 7.2 state), `run` (the emulation of the rows, row by row),
//! `large_n` (section 7.2's per-pass copies and check), `report` (the rows' reports and their
//! text), `table1` (Table 1) and `multiply` (Fig. 3).

mod experiments;
mod large_n;
mod multiply;
mod report;
mod run;
mod statements;
mod table1;

pub use experiments::{
    dramatic_rows, section5_rows, section72_rows, RowSpec, CALL_CYCLES, SECTION5_DUMMY, SECTION5_TABLE, SECTION72_DPUS,
    SECTION72_MOD_BITS, SECTION72_POLYNOMIALS, SECTION72_TABLE, TARGET_COMPUTE_S,
};
pub use multiply::{
    native_mul32_cycles, MultiplyReport, WidthRow, CUSTOM_MUL32_CYCLES, CUSTOM_MUL64_CYCLES, NATIVE_MUL32_FIXED,
    NATIVE_MUL64_CYCLES,
};
pub use report::{Claim, DramaticReport, RowReport, TargetReport, COMPUTE_TOLERANCE, STATEMENT_TOLERANCE};
pub use run::{reproduce, Dramatic, DramaticConfig, DramaticRun, Section, DEFAULT_MAX_EMULATION_S};
pub use statements::{
    statements, Quantity, Statement, SECTION5_STATEMENTS, SECTION72_STATEMENTS, SINGLE_FIGURE_TOLERANCE,
};
pub use table1::{
    pimhe_fill, rule, rule_memory_mib, Cell, Fill, PublishedRow, Table1Report, Table1Row, TABLE1, TABLE1_DPUS,
    TABLE1_SUBPOLYS,
};
