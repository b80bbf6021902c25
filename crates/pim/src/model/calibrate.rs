//! Fitting the host-side constants of `upmem-v1b` on DRAMatic's published measurements.
//!
//! [`calibrate`] takes the rows of [`super::reference`] (only the `DRAMatic` ones are used;
//! MHY⁺ and SEAL rows are ignored) and fits:
//!
//! - **transfer / retrieve** ([`LinkFit`]): `t = latency + latency_per_dpu * dpus +
//!   bytes / min(ranks * per_rank, max)` on the `transfer_s` / `retrieve_s` columns, with
//!   `bytes = ciphertexts * 2 * primes * N * 4`, `ranks = ceil(dpus / 64)`. The fit is
//!   minimax (Chebyshev) in the error measure of [`published_error`], the one the acceptance
//!   test uses: NTT and iNTT rows of the same configuration move the same bytes yet differ by
//!   up to 1.5x (Table 2, 4096 ciphertexts: 0.035 s vs 0.023 s), so no model sits much closer
//!   than 20 % to every row, and a least-squares fit would spend that budget unevenly.
//!   Method: a grid over the two latencies (coarse, then refined around the best cell); for
//!   each cell and each split rank count `k`, the rows on at most `k` ranks fix `per_rank`
//!   and the others fix `max`, each by ternary search on the reciprocal bandwidth (the
//!   worst error is convex in it); the cell and split with the smallest worst error over all
//!   rows (evaluated with the `min`) win, the first one on ties.
//! - **power** ([`PowerFit`]): `P = idle + per_rank * ranks`, with `idle = 310 W` from
//!   DRAMatic 4.4's text ("about 310 watts even when idle") and `per_rank` by least squares
//!   on the `power_w` column.
//! - **launch overhead** ([`LaunchFit`]): `compute_s = L * launches + k_g * slots` by
//!   relative (1/t^2-weighted) least squares with one slope `k_g` per (operation, degree) —
//!   the kernel's cost, which the emulator counts and the model does not fit — and the
//!   intercept `L` shared. `slots` is the revolver issue time of the busiest DPU in NTT units
//!   ([`revolver_slots`]), from DRAMatic's work split ([`super::reference::DramaticSetup`]);
//!   the byproduct is the implied cycles per butterfly of every row.
//!
//! The results are frozen as the constants of [`super::UpmemModel::v1b`]; the
//! `model_calibration` test re-fits from the CSV and checks they agree.
//!
//! ```
//! use pimhe_pim::model::{calibrate, reference};
//! if let Ok(rows) = reference::load_default() {
//!     let fit = calibrate::calibrate(&rows).unwrap();
//!     assert!(fit.transfer.worst_error <= 0.2);
//!     assert!(fit.power.worst_error <= 0.05);
//! }
//! ```

use std::collections::BTreeMap;

use serde::Serialize;

use super::analytic::ntt_butterflies;
use super::reference::{DramaticSetup, ReferenceRow, TIME_RESOLUTION_S};
use super::upmem::link_seconds;
use super::UpmemModel;

/// Whole-system idle power, W: "about 310 watts even when idle" (DRAMatic 4.4).
pub const IDLE_POWER_W: f64 = 310.0;

/// Latency grid of the link fit: fixed latency in `[0, 1 ms]`, per-DPU latency in
/// `[0, 10 us]`, 40 steps each, then 20 steps across one coarse step either side of the best.
const FIXED_LATENCY_MAX_S: f64 = 1e-3;
const PER_DPU_LATENCY_MAX_S: f64 = 10e-6;
const COARSE_STEPS: usize = 40;
const FINE_STEPS: usize = 20;
/// Slowest link the ternary search considers: 100 MB/s (as seconds per byte).
const MAX_SECONDS_PER_BYTE: f64 = 1e-8;
const TERNARY_ITERATIONS: usize = 100;

/// Why a calibration could not be done.
#[derive(Debug, thiserror::Error)]
pub enum CalibrationError {
    /// The rows lack what a fit needs.
    #[error("no DRAMatic rows with {0} to calibrate on")]
    NoRows(&'static str),
}

/// A fitted host <-> DPU link (one direction).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LinkFit {
    /// Bandwidth per rank touched, bytes/s.
    pub bytes_per_s_per_rank: f64,
    /// Bandwidth ceiling, bytes/s (infinite if no row sits on it).
    pub max_bytes_per_s: f64,
    /// Fixed latency per transfer, s.
    pub latency_s: f64,
    /// Latency per DPU addressed, s.
    pub latency_s_per_dpu: f64,
    /// Largest [`published_error`] over the rows fitted.
    pub worst_error: f64,
    /// Index (into the rows given to [`calibrate`]) of the row with that error.
    pub worst_row: usize,
    /// Rows fitted.
    pub rows: usize,
}

/// The fitted power model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PowerFit {
    /// Idle power, W ([`IDLE_POWER_W`], not fitted).
    pub idle_w: f64,
    /// Power per active rank, W.
    pub per_rank_w: f64,
    /// Largest `|model - published| / published` over the rows with power.
    pub worst_error: f64,
    /// Index of the row with that error.
    pub worst_row: usize,
    /// Rows fitted.
    pub rows: usize,
}

/// What one DRAMatic compute row implies about its kernel.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ImpliedButterfly {
    /// Index of the row.
    pub row: usize,
    /// Sub-polynomials on the busiest DPU per launch.
    pub subpolys_per_dpu: u64,
    /// Launches (primes in sequential mode).
    pub launches: u32,
    /// Revolver issue time of the busiest DPU over all launches, in NTT units.
    pub slots: u64,
    /// `(compute_s - launches * L) * f_dpu / (slots * N/2 log2 N)`.
    pub cycles_per_butterfly: f64,
}

/// The cost of one kernel as the compute fit sees it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KernelSlope {
    /// `NTT` or `iNTT`.
    pub operation: String,
    /// Ring degree N.
    pub degree: u32,
    /// Fitted slope, as DPU cycles per butterfly at a full pipeline.
    pub cycles_per_butterfly: f64,
}

/// The fitted launch overhead and the per-kernel slopes that came with it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LaunchFit {
    /// Shared intercept per launch, s.
    pub launch_overhead_s: f64,
    /// Per (operation, degree): the fitted slope as cycles per butterfly.
    pub kernels: Vec<KernelSlope>,
    /// Per row: the cycles per butterfly it implies.
    pub implied: Vec<ImpliedButterfly>,
}

/// Everything [`calibrate`] fits.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Calibration {
    /// Host -> DPU.
    pub transfer: LinkFit,
    /// DPU -> host.
    pub retrieve: LinkFit,
    /// Power.
    pub power: PowerFit,
    /// Launch overhead.
    pub launch: LaunchFit,
}

impl Calibration {
    /// `base` with the fitted constants put in (name, version and what-ifs unchanged).
    pub fn apply(&self, base: &UpmemModel) -> UpmemModel {
        UpmemModel {
            transfer_bytes_per_s_per_rank: self.transfer.bytes_per_s_per_rank,
            max_transfer_bytes_per_s: self.transfer.max_bytes_per_s,
            transfer_latency_s: self.transfer.latency_s,
            transfer_latency_s_per_dpu: self.transfer.latency_s_per_dpu,
            retrieve_bytes_per_s_per_rank: self.retrieve.bytes_per_s_per_rank,
            max_retrieve_bytes_per_s: self.retrieve.max_bytes_per_s,
            retrieve_latency_s: self.retrieve.latency_s,
            retrieve_latency_s_per_dpu: self.retrieve.latency_s_per_dpu,
            launch_overhead_s: self.launch.launch_overhead_s,
            idle_power_w: self.power.idle_w,
            power_per_active_rank_w: self.power.per_rank_w,
            ..base.clone()
        }
    }
}

/// Error of a modeled time against a published one, which is rounded to
/// [`TIME_RESOLUTION_S`]: the distance from `model_s` to the interval the published value
/// stands for, `[max(0, t - 0.5 ms), t + 0.5 ms]`, relative to `t` (to 0.5 ms for a published
/// 0). So 0.2 means "20 % off, beyond the rounding".
///
/// ```
/// use pimhe_pim::model::calibrate::published_error;
/// assert_eq!(published_error(0.0105, 0.010), 0.0);
/// assert!((published_error(0.0125, 0.010) - 0.2).abs() < 1e-12);
/// assert_eq!(published_error(0.0004, 0.0), 0.0);
/// ```
pub fn published_error(model_s: f64, published_s: f64) -> f64 {
    let half = TIME_RESOLUTION_S / 2.0;
    let low = (published_s - half).max(0.0);
    let high = published_s + half;
    let distance = if model_s < low {
        low - model_s
    } else if model_s > high {
        model_s - high
    } else {
        0.0
    };
    distance / published_s.max(half)
}

/// Revolver issue time, in units of one item's instructions, of `items` equal work items
/// coarse-grained over `tasklets` tasklets on `model`'s pipeline.
///
/// ```
/// use pimhe_pim::model::{calibrate::revolver_slots, UpmemModel};
/// let m = UpmemModel::v1b();
/// assert_eq!(revolver_slots(&m, 2, 16), 11);
/// assert_eq!(revolver_slots(&m, 32, 16), 32);
/// assert_eq!(revolver_slots(&m, 22, 16), 27);
/// ```
pub fn revolver_slots(model: &UpmemModel, items: u64, tasklets: u32) -> u64 {
    let t = tasklets.max(1) as u64;
    let loads: Vec<u64> = (0..t).map(|i| if items > i { (items - i).div_ceil(t) } else { 0 }).collect();
    model.revolver_issue_cycles(&loads) as u64
}

/// One observation of a link: bytes, DPUs, ranks, published seconds.
#[derive(Clone, Copy)]
struct LinkPoint {
    row: usize,
    bytes: f64,
    dpus: f64,
    ranks: u32,
    seconds: f64,
}

/// Fits all host-side constants of `upmem-v1b` on `rows` (see the module docs).
pub fn calibrate(rows: &[ReferenceRow]) -> Result<Calibration, CalibrationError> {
    let structure = UpmemModel::v1b();
    let setups: Vec<RowSetup> =
        rows.iter().enumerate().filter_map(|(i, r)| r.dramatic_setup().map(|s| (i, r, s))).collect();
    if setups.is_empty() {
        return Err(CalibrationError::NoRows("a known work split"));
    }
    let points = |seconds: fn(&ReferenceRow) -> f64| -> Vec<LinkPoint> {
        setups
            .iter()
            .map(|(i, r, s)| LinkPoint {
                row: *i,
                bytes: s.bytes as f64,
                dpus: s.dpus as f64,
                ranks: s.ranks,
                seconds: seconds(r),
            })
            .collect()
    };
    let transfer = fit_link(&points(|r| r.transfer_s));
    let retrieve = fit_link(&points(|r| r.retrieve_s));

    // Power: least squares through (ranks, P - idle).
    let powered: Vec<(usize, f64, f64)> =
        setups.iter().filter_map(|(i, r, s)| r.power_w.map(|p| (*i, s.ranks as f64, p))).collect();
    if powered.is_empty() {
        return Err(CalibrationError::NoRows("power_w"));
    }
    let per_rank_w = powered.iter().map(|(_, r, p)| r * (p - IDLE_POWER_W)).sum::<f64>()
        / powered.iter().map(|(_, r, _)| r * r).sum::<f64>();
    let (worst_row, worst_error) = powered
        .iter()
        .map(|&(i, r, p)| (i, ((IDLE_POWER_W + per_rank_w * r) - p).abs() / p))
        .fold((0, 0.0), |best, x| if x.1 > best.1 { x } else { best });
    let power = PowerFit { idle_w: IDLE_POWER_W, per_rank_w, worst_error, worst_row, rows: powered.len() };

    let launch = fit_launch(&structure, &setups)?;
    Ok(Calibration { transfer, retrieve, power, launch })
}

/// A DRAMatic row with its work split: (index, row, setup).
type RowSetup<'a> = (usize, &'a ReferenceRow, DramaticSetup);

/// One compute observation: `seconds ~ L * launches + k * slots`.
#[derive(Clone, Copy)]
struct ComputePoint {
    row: usize,
    subpolys_per_dpu: u64,
    launches: f64,
    slots: f64,
    seconds: f64,
}

/// `sum f(point) / seconds^2` (relative weights).
fn weighted(points: &[ComputePoint], f: impl Fn(&ComputePoint) -> f64) -> f64 {
    points.iter().map(|p| f(p) / (p.seconds * p.seconds)).sum()
}

fn fit_launch(structure: &UpmemModel, setups: &[RowSetup]) -> Result<LaunchFit, CalibrationError> {
    let mut groups: BTreeMap<(String, u32), Vec<ComputePoint>> = BTreeMap::new();
    for (i, r, s) in setups {
        if r.compute_s <= 0.0 {
            continue;
        }
        let slots = revolver_slots(structure, s.subpolys_per_dpu, structure.max_tasklets) * s.launches as u64;
        groups.entry((r.operation.clone(), r.degree)).or_default().push(ComputePoint {
            row: *i,
            subpolys_per_dpu: s.subpolys_per_dpu,
            launches: s.launches as f64,
            slots: slots as f64,
            seconds: r.compute_s,
        });
    }
    if groups.is_empty() {
        return Err(CalibrationError::NoRows("compute_s"));
    }
    // Minimise sum w (t - L l - k_g S)^2 with w = 1/t^2: eliminate each k_g, solve for L.
    let (mut numerator, mut denominator) = (0.0, 0.0);
    for points in groups.values() {
        let ss = weighted(points, |p| p.slots * p.slots);
        let sl = weighted(points, |p| p.slots * p.launches);
        let st = weighted(points, |p| p.slots * p.seconds);
        numerator += weighted(points, |p| p.launches * p.seconds) - sl * st / ss;
        denominator += weighted(points, |p| p.launches * p.launches) - sl * sl / ss;
    }
    let launch_overhead_s = if denominator > 0.0 { (numerator / denominator).max(0.0) } else { 0.0 };
    let mut kernels = Vec::new();
    let mut implied = Vec::new();
    for ((operation, degree), points) in &groups {
        let butterflies = ntt_butterflies(*degree as u64) as f64;
        let slope = weighted(points, |p| p.slots * (p.seconds - launch_overhead_s * p.launches))
            / weighted(points, |p| p.slots * p.slots);
        kernels.push(KernelSlope {
            operation: operation.clone(),
            degree: *degree,
            cycles_per_butterfly: slope * structure.dpu_hz / butterflies,
        });
        for p in points {
            implied.push(ImpliedButterfly {
                row: p.row,
                subpolys_per_dpu: p.subpolys_per_dpu,
                launches: p.launches as u32,
                slots: p.slots as u64,
                cycles_per_butterfly: (p.seconds - launch_overhead_s * p.launches) * structure.dpu_hz
                    / (p.slots * butterflies),
            });
        }
    }
    implied.sort_by_key(|x| x.row);
    Ok(LaunchFit { launch_overhead_s, kernels, implied })
}

fn fit_link(points: &[LinkPoint]) -> LinkFit {
    let mut ranks: Vec<u32> = points.iter().map(|p| p.ranks).collect();
    ranks.sort_unstable();
    ranks.dedup();

    let mut best: Option<LinkFit> = None;
    let consider = |best: &mut Option<LinkFit>, latency: f64, per_dpu: f64| {
        for &split in &ranks {
            let fit = fit_link_at(points, latency, per_dpu, split);
            if best.as_ref().is_none_or(|b| fit.worst_error < b.worst_error) {
                *best = Some(fit);
            }
        }
    };
    let coarse_a = FIXED_LATENCY_MAX_S / COARSE_STEPS as f64;
    let coarse_p = PER_DPU_LATENCY_MAX_S / COARSE_STEPS as f64;
    for i in 0..=COARSE_STEPS {
        for j in 0..=COARSE_STEPS {
            consider(&mut best, i as f64 * coarse_a, j as f64 * coarse_p);
        }
    }
    let (center_a, center_p) = {
        let fit = best.as_ref().expect("at least one grid cell");
        (fit.latency_s, fit.latency_s_per_dpu)
    };
    for i in 0..=FINE_STEPS {
        for j in 0..=FINE_STEPS {
            let a = center_a - coarse_a + 2.0 * coarse_a * i as f64 / FINE_STEPS as f64;
            let p = center_p - coarse_p + 2.0 * coarse_p * j as f64 / FINE_STEPS as f64;
            if a >= 0.0 && p >= 0.0 {
                consider(&mut best, a, p);
            }
        }
    }
    best.expect("at least one grid cell")
}

/// Best per-rank bandwidth and ceiling for fixed latencies, rows on at most `split` ranks
/// setting the per-rank bandwidth.
fn fit_link_at(points: &[LinkPoint], latency: f64, per_dpu: f64, split: u32) -> LinkFit {
    let fixed = |p: &LinkPoint| latency + per_dpu * p.dpus;
    let below: Vec<&LinkPoint> = points.iter().filter(|p| p.ranks <= split).collect();
    let above: Vec<&LinkPoint> = points.iter().filter(|p| p.ranks > split).collect();
    let per_rank_spb = ternary(|u| {
        below.iter().map(|p| published_error(fixed(p) + p.bytes * u / p.ranks as f64, p.seconds)).fold(0.0, f64::max)
    });
    let max_spb = if above.is_empty() {
        0.0
    } else {
        ternary(|u| above.iter().map(|p| published_error(fixed(p) + p.bytes * u, p.seconds)).fold(0.0, f64::max))
    };
    let bytes_per_s_per_rank = 1.0 / per_rank_spb;
    let max_bytes_per_s = 1.0 / max_spb;
    let (worst_row, worst_error) = points
        .iter()
        .map(|p| {
            let model = link_seconds(
                p.bytes as u64,
                p.dpus as u32,
                p.ranks,
                latency,
                per_dpu,
                bytes_per_s_per_rank,
                max_bytes_per_s,
            );
            (p.row, published_error(model, p.seconds))
        })
        .fold((0, 0.0), |best, x| if x.1 > best.1 { x } else { best });
    LinkFit {
        bytes_per_s_per_rank,
        max_bytes_per_s,
        latency_s: latency,
        latency_s_per_dpu: per_dpu,
        worst_error,
        worst_row,
        rows: points.len(),
    }
}

/// Minimiser of a convex function on `[0, MAX_SECONDS_PER_BYTE]` by ternary search (on
/// ties the left part is kept, which is safe for convex functions with flat stretches).
fn ternary(f: impl Fn(f64) -> f64) -> f64 {
    let (mut lo, mut hi) = (0.0, MAX_SECONDS_PER_BYTE);
    for _ in 0..TERNARY_ITERATIONS {
        let m1 = lo + (hi - lo) / 3.0;
        let m2 = hi - (hi - lo) / 3.0;
        if f(m1) <= f(m2) {
            hi = m2;
        } else {
            lo = m1;
        }
    }
    (lo + hi) / 2.0
}
