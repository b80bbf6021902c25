//! The energy and energy-delay-product (EDP) verdicts of one what-if, at the table's batch.
//!
//! Only one CPU here has a stated power: the server the CPU time is scaled to (DRAMatic 4.4:
//! 223 W at the wall with 16 threads, [`super::ServerCpu::dramatic`]); this machine's power is
//! not known, so the energy verdicts are against the scaled server only. PIM's energy is the
//! model's for the DPU side (`upmem-v1b`: its power per rank x its modeled time) plus the host
//! fallbacks' seconds (as compared with the server) at the server's power: the host CPU does
//! those steps. EDP is energy x time (J s), each side's own.

use serde::Serialize;

/// A quantity compared: energy or EDP.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Quantity {
    /// Joules.
    Energy,
    /// Joule-seconds.
    EnergyDelayProduct,
}

impl Quantity {
    fn describe(self) -> &'static str {
        match self {
            Quantity::Energy => "energy",
            Quantity::EnergyDelayProduct => "energy-delay product",
        }
    }

    fn unit(self) -> &'static str {
        match self {
            Quantity::Energy => "J",
            Quantity::EnergyDelayProduct => "J s",
        }
    }
}

/// One PIM point of the table for the efficiency verdicts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EfficiencyPoint {
    /// DPUs.
    pub dpus: usize,
    /// PIM's energy with the host fallbacks', joules.
    pub energy_j: f64,
    /// PIM's total time (fallbacks as compared with the server), seconds.
    pub total_s: f64,
}

/// The verdict on one quantity at the table's batch, against the CPU scaled to the server.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EfficiencyVerdict {
    /// What is compared.
    pub quantity: Quantity,
    /// Its unit.
    pub unit: &'static str,
    /// The DPU count where PIM's value is least (`None`: no point was modeled).
    pub dpus: Option<usize>,
    /// PIM's least value (modeled).
    pub pim: Option<f64>,
    /// The scaled CPU's value (scaled, not measured).
    pub cpu: f64,
    /// Whether PIM's least value is below the CPU's.
    pub pim_wins: bool,
}

impl EfficiencyVerdict {
    /// The verdict on `quantity` over `points`, against the CPU's `cpu_energy_j` in `cpu_s`.
    ///
    /// ```
    /// use pimhe_bench::advise::{EfficiencyPoint, EfficiencyVerdict, Quantity};
    /// let points = [EfficiencyPoint { dpus: 64, energy_j: 2.0, total_s: 3.0 }];
    /// // 2 J beats the CPU's 3 J, but 2 J x 3 s loses to 3 J x 1 s.
    /// assert!(EfficiencyVerdict::of(Quantity::Energy, &points, 3.0, 1.0).pim_wins);
    /// assert!(!EfficiencyVerdict::of(Quantity::EnergyDelayProduct, &points, 3.0, 1.0).pim_wins);
    /// ```
    pub fn of(quantity: Quantity, points: &[EfficiencyPoint], cpu_energy_j: f64, cpu_s: f64) -> Self {
        let value = |energy_j: f64, seconds: f64| match quantity {
            Quantity::Energy => energy_j,
            Quantity::EnergyDelayProduct => energy_j * seconds,
        };
        let best = points.iter().map(|p| (p.dpus, value(p.energy_j, p.total_s))).min_by(|a, b| a.1.total_cmp(&b.1));
        let cpu = value(cpu_energy_j, cpu_s);
        Self {
            quantity,
            unit: quantity.unit(),
            dpus: best.map(|(d, _)| d),
            pim: best.map(|(_, v)| v),
            cpu,
            pim_wins: best.is_some_and(|(_, v)| v < cpu),
        }
    }

    /// One line: which side is lower, where, by how much.
    pub fn line(&self, batch: usize) -> String {
        let what = self.quantity.describe();
        let number = |v: f64| match self.quantity {
            Quantity::Energy => format!("{v:.4} {}", self.unit),
            Quantity::EnergyDelayProduct => format!("{v:.4e} {}", self.unit),
        };
        match (self.dpus, self.pim) {
            (Some(dpus), Some(pim)) if self.pim_wins => format!(
                "{what}: PIM lower at batch {batch}, least on {dpus} DPUs: {} (modeled) vs cpu {} (scaled), {:.3}x less",
                number(pim),
                number(self.cpu),
                self.cpu / pim
            ),
            (Some(dpus), Some(pim)) => format!(
                "{what}: PIM never lower at batch {batch}: least {} on {dpus} DPUs (modeled) vs cpu {} (scaled), \
                 {:.3}x more",
                number(pim),
                number(self.cpu),
                pim / self.cpu
            ),
            _ => format!("{what}: not modeled at batch {batch} (no DPU count fits)"),
        }
    }
}

/// A PIM point's energy with its host fallbacks: the DPU side's modeled `dpu_energy_j` plus
/// `fallback_s` at the server's `power_w`.
pub fn with_host_energy(dpu_energy_j: f64, fallback_s: f64, power_w: f64) -> f64 {
    dpu_energy_j + fallback_s * power_w
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_least_value_is_compared_and_edp_multiplies_by_each_sides_time() {
        let points = [
            EfficiencyPoint { dpus: 64, energy_j: 4.0, total_s: 2.0 },
            EfficiencyPoint { dpus: 128, energy_j: 3.0, total_s: 4.0 },
        ];
        let energy = EfficiencyVerdict::of(Quantity::Energy, &points, 5.0, 1.0);
        assert_eq!((energy.dpus, energy.pim, energy.pim_wins), (Some(128), Some(3.0), true));
        assert!(energy.line(8).contains("PIM lower") && energy.line(8).contains("128 DPUs"), "{}", energy.line(8));
        // EDP: 8 on 64 DPUs, 12 on 128; the CPU's 5 J x 1 s = 5 J s.
        let edp = EfficiencyVerdict::of(Quantity::EnergyDelayProduct, &points, 5.0, 1.0);
        assert_eq!((edp.dpus, edp.pim, edp.pim_wins), (Some(64), Some(8.0), false));
        assert!(edp.line(8).contains("never lower"), "{}", edp.line(8));
        assert!(!EfficiencyVerdict::of(Quantity::Energy, &[], 1.0, 1.0).pim_wins);
        assert_eq!(with_host_energy(2.0, 0.5, 223.0), 113.5);
    }
}
