//! What an offloaded computation cost: modeled seconds and joules, and what ran where.

use serde::{Deserialize, Serialize};

use crate::counts::TaskletCounts;

/// Accumulated cost of everything a [`crate::runtime::PimBackend`] did since it was created or
/// last reset. All times except `host_fallback_s` are *modeled* by the named model; the
/// fallback time is measured wall time of the CPU doing what the DPUs cannot.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct OffloadReport {
    /// Model that produced the modeled figures, e.g. `upmem-v1b@1 (modeled)`.
    pub model: String,
    /// Modeled host -> DPU transfer time.
    pub transfer_s: f64,
    /// Modeled DPU compute time (sum over launches of the slowest DPU, plus launch overhead).
    pub compute_s: f64,
    /// Modeled DPU -> host retrieval time.
    pub retrieve_s: f64,
    /// Modeled energy of the whole system over the modeled time.
    pub energy_j: f64,
    /// Measured wall time of operations that fell back to the CPU.
    pub host_fallback_s: f64,
    /// The conversions' fallbacks (base conversion, ModDown, division by the last prime)
    /// priced by the host model ([`crate::model::host`]): what the planner counts, the same on
    /// every run.
    pub host_fallback_modeled_s: f64,
    /// Number of kernel launches.
    pub launches: u64,
    /// Number of rounds run for batches larger than MRAM (each one push, launch and retrieval).
    pub rounds: u64,
    /// Number of operations that ran on the CPU instead (their transfers are included above).
    pub fallbacks: u64,
    /// Buffers evicted from MRAM to the host to make room (each a retrieval, included above).
    /// Not serialized while 0, so reports of runs that never ran short read as before.
    #[serde(skip_serializing_if = "is_zero", default)]
    pub evictions: u64,
    /// Evicted buffers pushed back into MRAM when used (each a transfer, included above).
    #[serde(skip_serializing_if = "is_zero", default)]
    pub restores: u64,
    /// Bytes pushed to the DPUs and pulled back.
    pub bytes_to_dpus: u64,
    /// Bytes pulled back from the DPUs.
    pub bytes_from_dpus: u64,
    /// Work counted by the emulator over all DPUs and launches.
    pub counted: TaskletCounts,
    /// Every push and pull in order, by shape: what the same computation would move on a
    /// larger system, so its transfers can be priced there without the data
    /// ([`super::subset`]). Not serialized (the totals above are the report).
    #[serde(skip)]
    pub transfers: Vec<TransferShape>,
}

fn is_zero(count: &u64) -> bool {
    *count == 0
}

/// One host <-> DPU copy as the runtime issued it, by shape: which way, over which prime slots
/// of the backend, how many polynomials per prime.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TransferShape {
    /// Host -> DPUs (a push) or DPUs -> host (a pull).
    pub to_dpus: bool,
    /// The backend's prime slots of the buffer's limbs.
    pub slots: Vec<usize>,
    /// Polynomials of the buffer (per prime).
    pub count: usize,
}

impl OffloadReport {
    /// Adds `other`'s costs and counts to these (reports of separate runs; the model label
    /// stays this one's).
    pub fn accumulate(&mut self, other: &OffloadReport) {
        self.transfer_s += other.transfer_s;
        self.compute_s += other.compute_s;
        self.retrieve_s += other.retrieve_s;
        self.energy_j += other.energy_j;
        self.host_fallback_s += other.host_fallback_s;
        self.host_fallback_modeled_s += other.host_fallback_modeled_s;
        self.launches += other.launches;
        self.rounds += other.rounds;
        self.fallbacks += other.fallbacks;
        self.evictions += other.evictions;
        self.restores += other.restores;
        self.bytes_to_dpus += other.bytes_to_dpus;
        self.bytes_from_dpus += other.bytes_from_dpus;
        self.counted.accumulate(&other.counted);
        self.transfers.extend_from_slice(&other.transfers);
    }

    /// `, N evictions and M restores` when MRAM ran short and buffers went to the host and back,
    /// empty otherwise: what the printed reports append to their launch counts.
    ///
    /// ```
    /// use pimhe_pim::runtime::OffloadReport;
    ///
    /// assert_eq!(OffloadReport::default().eviction_note(), "");
    /// let report = OffloadReport { evictions: 3, restores: 1, ..OffloadReport::default() };
    /// assert_eq!(report.eviction_note(), ", 3 evictions and 1 restores (MRAM full)");
    /// ```
    pub fn eviction_note(&self) -> String {
        if self.evictions == 0 {
            return String::new();
        }
        format!(", {} evictions and {} restores (MRAM full)", self.evictions, self.restores)
    }

    /// Modeled transfer + compute + retrieval.
    pub fn total_s(&self) -> f64 {
        self.transfer_s + self.compute_s + self.retrieve_s
    }

    /// [`Self::total_s`] plus the host fallbacks priced by the host model: what the planner
    /// compares placements by (the same on every run).
    pub fn planned_s(&self) -> f64 {
        self.total_s() + self.host_fallback_modeled_s
    }
}
