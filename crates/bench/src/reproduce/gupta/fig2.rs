//! Gupta et al.'s Fig. 2: the statistics workloads (arithmetic mean, variance, linear
//! regression) end to end with pimhe's encrypted statistics, at the paper's 109-bit width.
//!
//! - **The workloads** are `pimhe stats`' own ([`pimhe_workloads::stats`]): every user encrypts
//!   one row (BFV, N = 4096, the 128-bit preset's 109-bit modulus, Fig. 2's caption width), the
//!   server sums the ciphertexts (mean), also the products of each with itself (variance), or
//!   the products of each row's two encodings (linear regression: every product of the
//!   features and the response in one multiplication per sample), and the client decrypts and
//!   checks every aggregate against the plaintext computation. Fig. 2(c)'s "32 and 64
//!   ciphertexts per user (data samples with 3 features)" are 32 and 64 samples per user, each
//!   one pimhe row of three features and a response.
//! - **The plaintext modulus**: pimhe's aggregates are exact, so t must hold the largest one;
//!   where one t large enough leaves too little noise budget for a product summed over all
//!   samples at 109 bits, the totals are split over smaller plaintext moduli by CRT, each a run
//!   of its own ([`driver_within_noise`]: the largest per-modulus size whose noise check
//!   passes). The paper does not say which t it used; the row prints the moduli.
//! - **The PIM side** is the server's step on the paper's 2,524 DPUs at 425 MHz, modeled by
//!   `upmem-v1b` at that clock, in the placement that the planner's rule prices cheapest
//!   ([`planner::cheapest`] over [`FIG2_CANDIDATES`]: DPU time and copies plus host fallbacks
//!   by `seal-host`). The paper's system is too large to emulate whole, so each placement is
//!   priced from a representative system holding the busiest DPU's share of rows (one DPU per
//!   prime in parallel mode, one DPU in ciphertext-major mode, as `--emulate subset`): its
//!   launches are the full system's; its copies and host fallbacks are scaled from the share to
//!   every row ([`price_transfers`]). The figure is the kernel time (the compute plus the host
//!   fallbacks), as Fig. 1's; the copies are printed beside. `--quick` also emulates the
//!   chosen placement's whole system: the products' compute agrees within 1%; the steps on the
//!   single aggregate after the host's sum of the DPUs' partials differ by a few ms, which
//!   shows in the smallest means.
//! - **The CPU side** is the same server step on pimhe's cpu backend, measured in the run (its
//!   aggregation alone, without (de)serialization: [`aggregate_shard`]) on the first rows, up to
//!   [`CPU_SAMPLE_ROWS`], and scaled linearly to every row. Where that is every row, the
//!   aggregate is decrypted and checked against the plaintext totals; every representative's
//!   partial equals the cpu backend's of the same rows byte for byte. **SEAL** is composed from its per-ciphertext add and multiply
//!   measured by `bench/compare/gupta_seal.py` at 109 bits, times the workload's operations
//!   (one plaintext modulus: SEAL's t is not tied to exact totals here).
//!
//! The client's encryption is excluded everywhere (it runs once per row, on the client).

use std::collections::HashMap;

use pimhe_exec::CpuBackend;
use pimhe_math::Sampler;
use pimhe_pim::layout::Variant;
use pimhe_pim::model::{ModelVersion, UpmemModel};
use pimhe_pim::multiword::MultiwordModulus;
use pimhe_pim::runtime::placement::{Mode, Plan};
use pimhe_pim::runtime::subset::{busiest_share, price_transfers, ScaledTransfers};
use pimhe_pim::runtime::PimBackend;
use pimhe_schemes::bfv::BfvContext;
use pimhe_schemes::encoder::ExactScheme;
use pimhe_workloads::stats::sharded::{aggregate_shard, StatsDriver};
use pimhe_workloads::stats::{Dataset, Statistic, StatsError, StatsPlan};
use serde::Serialize;

use super::cpu::WidthTimes;
use super::multiword::textbook_kernel_s;
use super::published::PAPER_DPU_HZ;
use super::{TASKLETS, WIDTHS};
use crate::error::{BenchError, Result};
use crate::target::planner::{self, PlanChoice, Priced, CANDIDATES};
use crate::target::upmem::PimSettings;

/// Users of Fig. 2(a) and (b) (4.3: "640, 1280, and 2560 users").
pub const STATS_USERS: [usize; 3] = [640, 1280, 2560];
/// Users of Fig. 2(c) (4.3: "For linear regression, we evaluate 640 users").
pub const LINREG_USERS: usize = 640;
/// Samples (ciphertexts) per user of Fig. 2(c) (4.3: "32 and 64 ciphertexts per user").
pub const LINREG_SAMPLES: [usize; 2] = [32, 64];
/// The regression's features (4.3: "data samples with 3 features"), then the response.
pub const LINREG_COLUMNS: [&str; 4] = ["x1", "x2", "x3", "y"];
/// `--quick` divides the paper's users by this (4, 8, 16 users; 4 for the regression).
pub const QUICK_USERS_DIVISOR: usize = 160;
/// `--quick` divides the regression's samples per user by this (2 and 4).
pub const QUICK_SAMPLES_DIVISOR: usize = 16;
/// Rows the cpu backend is timed on: the first rows, up to this many; the server step is one
/// multiply-add (or add) per row, so its time is scaled linearly to the rest (as Fig. 1's CPU
/// side), and at most this many rows are encrypted at once (81,920 regression ciphertexts of
/// two plaintext moduli would take 21 GB).
pub const CPU_SAMPLE_ROWS: usize = 1024;
/// The smallest plaintext modulus size tried when a product's noise needs a smaller t: below
/// it the totals would need more than the plan's four moduli at these sizes.
const MIN_PLAIN_BITS: u32 = 12;

/// One point of Fig. 2: a statistic over users, each with some samples.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Fig2Point {
    /// Mean, variance or linear regression.
    pub statistic: Statistic,
    /// The paper's users.
    pub users: usize,
    /// Samples (rows, one ciphertext per encoded vector) per user.
    pub samples_per_user: usize,
}

impl Fig2Point {
    /// Rows pimhe encrypts and aggregates: users times samples.
    pub fn rows(&self) -> usize {
        self.users * self.samples_per_user
    }

    /// The row id part: `mean-640`, `linreg-640x32`.
    pub fn id(&self) -> String {
        match self.statistic {
            Statistic::Linreg => format!("linreg-{}x{}", self.users, self.samples_per_user),
            Statistic::Mean | Statistic::Variance => format!("{}-{}", self.statistic.name(), self.users),
        }
    }

    /// The columns of the synthetic rows.
    fn columns(&self) -> &'static [&'static str] {
        match self.statistic {
            Statistic::Linreg => &LINREG_COLUMNS,
            Statistic::Mean | Statistic::Variance => &LINREG_COLUMNS[..1],
        }
    }
}

/// Fig. 2's points: the paper's, or with `quick` its users divided by [`QUICK_USERS_DIVISOR`]
/// and the regression's samples by [`QUICK_SAMPLES_DIVISOR`].
pub fn points(quick: bool) -> Vec<Fig2Point> {
    let divided = |count: usize, divisor: usize| if quick { count / divisor } else { count };
    let mut points = Vec::new();
    for statistic in [Statistic::Mean, Statistic::Variance] {
        points.extend(STATS_USERS.iter().map(|&u| Fig2Point {
            statistic,
            users: divided(u, QUICK_USERS_DIVISOR),
            samples_per_user: 1,
        }));
    }
    points.extend(LINREG_SAMPLES.iter().map(|&samples| Fig2Point {
        statistic: Statistic::Linreg,
        users: divided(LINREG_USERS, QUICK_USERS_DIVISOR),
        samples_per_user: divided(samples, QUICK_SAMPLES_DIVISOR),
    }));
    points
}

/// One point of Fig. 2, modeled, measured and checked.
#[derive(Debug, Clone, Serialize)]
pub struct Fig2Row {
    /// The statistic, users and samples.
    pub point: Fig2Point,
    /// Rows encrypted and aggregated.
    pub rows: usize,
    /// The plaintext moduli (one server run each; their product holds the exact totals).
    pub plain_moduli: Vec<u32>,
    /// The placement chosen and every candidate's price.
    pub plan: PlanChoice,
    /// Modeled kernel seconds of the chosen placement: DPU compute plus host fallbacks (priced
    /// by `seal-host`).
    pub kernel_s: f64,
    /// Of which the DPU compute (the busiest DPU's launches).
    pub compute_s: f64,
    /// Modeled host -> DPU seconds (the rows' ciphertexts and the keys).
    pub transfer_s: f64,
    /// Modeled DPU -> host seconds.
    pub retrieve_s: f64,
    /// Operations that fell back to the host in the chosen placement.
    pub fallbacks: u64,
    /// Rows on the busiest DPU (or each prime's busiest DPU) of the chosen placement.
    pub share: usize,
    /// With `--quick`: the chosen placement's whole system emulated, its modeled compute
    /// (beside the representative's `kernel_s` less the host fallbacks).
    pub whole_system_compute_s: Option<f64>,
    /// Whether every row's aggregate was decrypted and checked against the plaintext totals
    /// (runs of at most [`CPU_SAMPLE_ROWS`] rows; larger ones are checked share by share against
    /// the cpu backend).
    pub checked_against_plaintext: bool,
    /// Rows the cpu backend aggregated and was timed on.
    pub cpu_rows: usize,
    /// The server step on pimhe's cpu backend, measured on `cpu_rows` rows (fastest round) and
    /// scaled linearly to every row; `None` with `--skip-cpu`.
    pub cpu_s: Option<f64>,
    /// `cpu_s / kernel_s`.
    pub speedup: Option<f64>,
    /// SEAL's per-ciphertext times (`--seal-json`, 109 bits) times the workload's operations.
    pub seal_s: Option<f64>,
    /// The same operations in the paper's own arithmetic on the same DPUs: each multiply four
    /// textbook products and an addition, each addition `MW_ADD`, on 109-bit multi-word
    /// coefficients (modeled kernel seconds; [`super::multiword::textbook_kernel_s`]).
    pub textbook_s: f64,
    /// The same operations in the paper's arithmetic on this host's CPU: its per-ciphertext add
    /// and multiply at 109 bits ([`super::paper_cpu`]) times the workload's operations; `None`
    /// with `--skip-cpu`.
    pub textbook_cpu_s: Option<f64>,
}

/// The workload's SEAL operations per row: (adds, multiplies). Mean adds each row into the
/// sum; variance also multiplies it by itself and adds the product; a regression sample
/// multiplies its two encodings and adds the product.
pub fn seal_operations(statistic: Statistic) -> (usize, usize) {
    match statistic {
        Statistic::Mean => (1, 0),
        Statistic::Variance => (2, 1),
        Statistic::Linreg => (1, 1),
    }
}

/// Seconds of `statistic` over `rows` rows composed from per-ciphertext `times`: each row's
/// [`seal_operations`].
pub fn composed_s(times: &WidthTimes, statistic: Statistic, rows: usize) -> f64 {
    let (adds, muls) = seal_operations(statistic);
    rows as f64 * (adds as f64 * times.add_s_per_ciphertext + muls as f64 * times.mul_s_per_ciphertext)
}

fn stats_error(e: StatsError) -> BenchError {
    match e {
        StatsError::Input(why) => BenchError::usage(why),
        other => BenchError::Failed(other.to_string()),
    }
}

/// The client of `point` at ring degree `n`: its synthetic rows (from `seed`) planned with the
/// largest plaintext moduli whose noise budget survives the aggregate over every row, trying
/// sizes from the preset's largest down to [`MIN_PLAIN_BITS`].
pub fn driver_within_noise(point: &Fig2Point, n: usize, threads: Option<usize>, seed: u64) -> Result<StatsDriver> {
    let data = Dataset::synthetic(point.rows(), seed, point.columns()).map_err(stats_error)?;
    let max_bits = BfvContext::max_plain_bits(n).map_err(|e| BenchError::usage(format!("N = {n}: {e}")))?;
    let mut last = None;
    for bits in (MIN_PLAIN_BITS..=max_bits).rev() {
        let plan = StatsPlan::new(point.statistic, data.clone(), n, bits).map_err(stats_error)?;
        match StatsDriver::new("bfv", plan, n, threads, Sampler::from_seed_u64(seed)) {
            Ok(driver) => return Ok(driver),
            // Too little noise budget for this t: smaller moduli (more of them) leave more.
            Err(e @ StatsError::Capacity(_)) => last = Some(e),
            Err(e) => return Err(stats_error(e)),
        }
    }
    Err(BenchError::Failed(format!(
        "{}: no plaintext moduli of {MIN_PLAIN_BITS}..={max_bits} bits leave noise budget at N = {n} ({})",
        point.id(),
        last.map_or_else(String::new, |e| e.to_string())
    )))
}

/// The emulated system of `dpus` DPUs in `mode` for `primes`, priced by `model` (version) at
/// the paper's clock.
fn pim_server(dpus: usize, mode: Mode, model: ModelVersion, n: usize, primes: &[u32]) -> Result<PimBackend> {
    let settings = PimSettings::new(dpus, mode, Variant::Best, primes.len())?.with_model(model);
    let mut config = settings.config(dpus, mode);
    config.model = config.model.with_clock(PAPER_DPU_HZ).map_err(BenchError::usage)?;
    Ok(PimBackend::new(config, n, primes)?)
}

/// The placements Fig. 2 prices: those a representative system stands for (one DPU per prime
/// in parallel mode, one DPU in ciphertext-major mode, each with the busiest share of rows).
/// Sequential mode's per-prime launches and hybrid's slices over every DPU have no
/// representative of a few DPUs, and the paper's system is too large to emulate whole.
pub const FIG2_CANDIDATES: [Mode; 2] = [Mode::Parallel, Mode::CiphertextMajor];

/// The server step of a run on the full system of `dpus` DPUs in `mode`, priced from a
/// representative system with its busiest share (see [`pimhe_pim::runtime::subset`]).
#[derive(Debug, Clone)]
struct Priced2 {
    /// Modeled DPU compute of the busiest DPU's launches: the full system's.
    compute_s: f64,
    /// The representative's copies, scaled from its share to every row and placed as the
    /// full system places them.
    transfers: ScaledTransfers,
    /// Host fallbacks priced by `seal-host`, scaled by rows / share (linear in the rows; the
    /// host's sum of the DPUs' partials is one add per DPU holding rows, about the same).
    host_fallback_modeled_s: f64,
    /// Operations that fell back to the host.
    fallbacks: u64,
    /// Rows of the busiest share.
    share: usize,
}

impl Priced2 {
    fn planned_s(&self) -> f64 {
        self.transfers.transfer_s + self.compute_s + self.transfers.retrieve_s + self.host_fallback_modeled_s
    }
}

/// Prices the server step of `point` in `mode` on `setup`'s system: a representative system
/// aggregates the busiest share of rows (encrypted by `driver`), its partial checked byte for
/// byte against the cpu backend's of the same rows.
fn price_mode(point: &Fig2Point, setup: &Fig2Setup, driver: &mut StatsDriver, mode: Mode) -> Result<Priced2> {
    let n = WIDTHS[2].n;
    let primes = driver.header().backend_primes().map_err(stats_error)?;
    let plan = Plan::new(mode, setup.dpus, primes.len()).map_err(BenchError::usage)?;
    let share = busiest_share(&plan, primes.len(), point.rows());
    let representative = if mode.groups_per_prime() { primes.len() } else { 1 };
    let server = pim_server(representative, mode, setup.model, n, &primes)?;
    let shard = driver.encrypt_shard(0..share).map_err(stats_error)?;
    let public = driver.public_bytes().to_vec();
    server.reset_report()?;
    let on_dpus = aggregate_shard(&server, &public, &shard).map_err(stats_error)?;
    let cost = server.report()?;
    let on_cpu = aggregate_shard(&CpuBackend::new(Some(1))?, &public, &shard).map_err(stats_error)?;
    if on_dpus.partial != on_cpu.partial {
        return Err(BenchError::Failed(format!(
            "{}: the emulated DPUs' aggregate of {share} rows ({}) differs from the cpu backend's",
            point.id(),
            mode.name()
        )));
    }
    let model = fig2_model(setup.model)?;
    let scale = point.rows() as f64 / share as f64;
    Ok(Priced2 {
        compute_s: cost.compute_s,
        transfers: price_transfers(&model, &plan, &cost.transfers, share, point.rows(), n),
        host_fallback_modeled_s: cost.host_fallback_modeled_s * scale,
        fallbacks: cost.fallbacks,
        share,
    })
}

/// The model Fig. 2 prices with: `model` at the paper's clock.
pub fn fig2_model(model: ModelVersion) -> Result<UpmemModel> {
    model.model().with_clock(PAPER_DPU_HZ).map_err(BenchError::usage)
}

/// What [`fig2_row`] needs besides the point.
pub struct Fig2Setup<'a> {
    /// DPUs of the modeled system.
    pub dpus: usize,
    /// The version of `upmem-v1b`.
    pub model: ModelVersion,
    /// The cpu backend that checks every result, and is timed unless `skip_cpu`.
    pub cpu: &'a CpuBackend,
    /// Whether the CPU's time is left out (it still checks).
    pub skip_cpu: bool,
    /// Threads of the client.
    pub threads: Option<usize>,
    /// Timed CPU rounds.
    pub repeat: usize,
    /// SEAL at 109 bits, from `--seal-json`.
    pub seal: Option<&'a WidthTimes>,
    /// The paper's CPU arithmetic at 109 bits, measured ([`super::paper_cpu`]); `None` with
    /// `--skip-cpu`.
    pub paper_cpu: Option<&'a WidthTimes>,
    /// Also emulate the chosen placement's whole system and report its compute (`--quick`).
    pub emulate_whole: bool,
    /// Seed of the rows and keys.
    pub seed: u64,
    /// How the paper's own arithmetic is priced on the same DPUs.
    pub textbook: TextbookPricing<'a>,
}

/// The paper's arithmetic at 109 bits: Fig. 1's model and modulus, and the modeled cycles of one
/// textbook product ([`super::multiword::textbook_product`]).
pub struct TextbookPricing<'a> {
    /// The model of Fig. 1's multi-word rows.
    pub model: &'a UpmemModel,
    /// The 109-bit modulus.
    pub modulus: &'a MultiwordModulus,
    /// Cycles of one N = 4096 product on one DPU.
    pub product_cycles: f64,
}

impl TextbookPricing<'_> {
    /// The modeled kernel seconds of `statistic` over `rows` rows on `dpus` DPUs: each multiply
    /// four textbook products and the addition of its two middle ones, each addition `MW_ADD`.
    fn kernel_s(&self, statistic: Statistic, rows: usize, dpus: usize) -> Result<f64> {
        let (adds, muls) = seal_operations(statistic);
        let add_coefficients = rows * WIDTHS[2].n * (2 * adds + muls);
        let products = 4 * muls * rows;
        let (s, _) = textbook_kernel_s(
            self.model,
            self.modulus,
            products,
            self.product_cycles,
            add_coefficients,
            dpus,
            TASKLETS,
        )?;
        Ok(s)
    }
}

/// Runs `point`: its server step priced in each of [`FIG2_CANDIDATES`] from a representative
/// system (the planner's rule picks the cheapest), then every row aggregated on the cpu
/// backend (timed) and decrypted and checked against the plaintext totals.
pub fn fig2_row(point: &Fig2Point, setup: &Fig2Setup) -> Result<Fig2Row> {
    let n = WIDTHS[2].n;
    let mut driver = driver_within_noise(point, n, setup.threads, setup.seed)?;
    let mut runs: HashMap<&'static str, Priced2> = HashMap::new();
    let (best, mut candidates, first_error) = planner::cheapest(&FIG2_CANDIDATES, |mode, _budget| {
        let run = price_mode(point, setup, &mut driver, mode)?;
        let priced = Priced {
            mode: mode.name(),
            planned_s: Some(run.planned_s()),
            host_fallback_modeled_s: Some(run.host_fallback_modeled_s),
            fallbacks: Some(run.fallbacks),
            stopped: None,
        };
        runs.insert(mode.name(), run);
        Ok::<_, BenchError>(priced)
    });
    let Some(chosen) = best else {
        return Err(first_error.unwrap_or_else(|| BenchError::Failed(format!("{}: no placement ran", point.id()))));
    };
    for mode in CANDIDATES.iter().filter(|m| !FIG2_CANDIDATES.contains(m)) {
        candidates.push(Priced {
            mode: mode.name(),
            planned_s: None,
            host_fallback_modeled_s: None,
            fallbacks: None,
            stopped: Some("not priced: no representative system of a few DPUs".into()),
        });
    }
    let run = runs.remove(chosen.name()).expect("the cheapest candidate ran");
    // The cpu backend's server step on the first rows (all of them up to CPU_SAMPLE_ROWS),
    // timed; when that is every row, the partial is decrypted and checked against the
    // plaintext totals and the whole emulated system's result compared with it.
    let sample = point.rows().min(CPU_SAMPLE_ROWS);
    let shard = driver.encrypt_shard(0..sample).map_err(stats_error)?;
    let public = driver.public_bytes().to_vec();
    let mut sample_s = f64::INFINITY;
    let mut partial = Vec::new();
    for _ in 0..if setup.skip_cpu { 1 } else { setup.repeat.max(1) } {
        let aggregated = aggregate_shard(setup.cpu, &public, &shard).map_err(stats_error)?;
        sample_s = sample_s.min(aggregated.aggregate_s);
        partial = aggregated.partial;
    }
    let checked = sample == point.rows();
    if checked && !driver.finish(&partial, sample_s).map_err(stats_error)?.aggregates_exact {
        return Err(BenchError::Failed(format!(
            "{}: a decrypted aggregate differs from the plaintext total",
            point.id()
        )));
    }
    let whole_system_compute_s = if setup.emulate_whole && checked {
        let primes = driver.header().backend_primes().map_err(stats_error)?;
        let server = pim_server(setup.dpus, chosen, setup.model, n, &primes)?;
        server.reset_report()?;
        let on_dpus = aggregate_shard(&server, &public, &shard).map_err(stats_error)?;
        if on_dpus.partial != partial {
            return Err(BenchError::Failed(format!(
                "{}: the whole emulated system's aggregate differs from the cpu backend's",
                point.id()
            )));
        }
        Some(server.report()?.compute_s)
    } else {
        None
    };
    let cpu_s = sample_s * point.rows() as f64 / sample as f64;
    let cpu_s = (!setup.skip_cpu).then_some(cpu_s);
    let kernel_s = run.compute_s + run.host_fallback_modeled_s;
    Ok(Fig2Row {
        point: *point,
        rows: point.rows(),
        plain_moduli: driver.header().plain_moduli.clone(),
        plan: PlanChoice { mode: chosen, chosen: chosen.name(), candidates },
        share: run.share,
        kernel_s,
        compute_s: run.compute_s,
        transfer_s: run.transfers.transfer_s,
        retrieve_s: run.transfers.retrieve_s,
        fallbacks: run.fallbacks,
        whole_system_compute_s,
        checked_against_plaintext: checked,
        cpu_rows: sample,
        cpu_s,
        speedup: cpu_s.map(|c| c / kernel_s),
        seal_s: setup.seal.map(|s| composed_s(s, point.statistic, point.rows())),
        textbook_s: setup.textbook.kernel_s(point.statistic, point.rows(), setup.dpus)?,
        textbook_cpu_s: setup.paper_cpu.map(|s| composed_s(s, point.statistic, point.rows())),
    })
}
