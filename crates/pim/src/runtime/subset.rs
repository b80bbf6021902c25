//! Modeling a run too large to emulate in full from a representative subset of its DPUs.
//!
//! Every DPU of a prime group runs the same program on its share of the group's polynomials,
//! so the slowest DPU of a launch is the one with the largest share: emulating that one DPU
//! per group gives the launch time of the whole system. What the subset cannot give, the
//! host <-> DPU transfers of the full system, depends only on how many bytes go to which DPU;
//! these helpers compute that exactly as [`super::PimBackend`] places a buffer (one transfer
//! per upload or download, for all DPUs at once), so [`crate::model::UpmemModel`] can price
//! it without the data. A computation whose transfers are not known in advance (a scheme's
//! operation with CPU fallbacks between its launches) is run once on a representative system,
//! which records them ([`super::OffloadReport::transfers`]), and [`price_transfers`] prices
//! that log on the full system.
//!
//! ```
//! use pimhe_pim::runtime::placement::{Mode, Plan};
//! use pimhe_pim::runtime::subset::{busiest_share, pull_bytes_per_dpu, push_bytes_per_dpu};
//!
//! // DRAMatic's Table 3 NTT at N = 4096: 3 primes on 383 DPUs, 65536 polynomials.
//! let plan = Plan::new(Mode::Parallel, 383, 3).unwrap();
//! assert_eq!(busiest_share(&plan, 3, 65536), 517); // ceil(65536 / 127)
//! let bytes = push_bytes_per_dpu(&plan, &[0, 1, 2], 65536, 4096);
//! assert_eq!(bytes.len(), 381); // 3 groups of 127 DPUs; 2 stay idle
//! assert_eq!(bytes.iter().sum::<u64>(), 65536 * 3 * 4096 * 4);
//! assert_eq!(pull_bytes_per_dpu(&plan, &[0, 1, 2], 65536, 4096), bytes);
//! ```

use super::placement::{split, Plan};
use super::stats::TransferShape;
use crate::model::UpmemModel;

/// Largest number of polynomials of one operand of `count` polynomials that any DPU holds,
/// over the prime slots `0..primes` of `plan` (`ceil(count / group size)`; 1 for a single
/// polynomial, which is replicated). 0 when `count` or `primes` is 0.
pub fn busiest_share(plan: &Plan, primes: usize, count: usize) -> usize {
    if count == 0 {
        return 0;
    }
    (0..primes).flat_map(|slot| split(count, plan.group(slot))).map(|share| share.len).max().unwrap_or(0)
}

/// Bytes each DPU (index = DPU) receives when a batch of `count` polynomials of degree `n`
/// over the prime slots `slots` is uploaded: what [`super::PimBackend`] writes, single
/// polynomials replicated on every DPU of their group. The vector has one entry per DPU the
/// plan uses.
pub fn push_bytes_per_dpu(plan: &Plan, slots: &[usize], count: usize, n: usize) -> Vec<u64> {
    let mut bytes = vec![0u64; plan.used_dpus()];
    for &slot in slots {
        for share in split(count, plan.group(slot)) {
            bytes[share.dpu] += (share.len * n * 4) as u64;
        }
    }
    bytes
}

/// Bytes each DPU sends back when that batch is downloaded: as [`push_bytes_per_dpu`], except
/// that a replicated single polynomial is read from the first DPU of its group only.
pub fn pull_bytes_per_dpu(plan: &Plan, slots: &[usize], count: usize, n: usize) -> Vec<u64> {
    let mut bytes = vec![0u64; plan.used_dpus()];
    for &slot in slots {
        let shares = split(count, plan.group(slot));
        let take = if count == 1 { 1 } else { shares.len() };
        for share in shares.iter().take(take) {
            bytes[share.dpu] += (share.len * n * 4) as u64;
        }
    }
    bytes
}

/// What the transfers of a representative run cost on the full system ([`price_transfers`]).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct ScaledTransfers {
    /// Modeled host -> DPU seconds.
    pub transfer_s: f64,
    /// Modeled DPU -> host seconds.
    pub retrieve_s: f64,
    /// Bytes pushed.
    pub bytes_to_dpus: u64,
    /// Bytes pulled.
    pub bytes_from_dpus: u64,
}

/// Prices on the system of `plan`, with `model`, the transfers `log` of a representative run
/// (one DPU per prime) in which every batch held `share` polynomials where the full system's
/// hold `count`: each transfer's count is scaled by `count / share` (rounded up), its bytes
/// placed over `plan` as [`super::PimBackend`] places them, and priced as one copy for all
/// DPUs. Exact when the representative's batches are whole multiples of `share` and `share`
/// is the full system's busiest share of every batch, as for a computation on ciphertext
/// batches of `count` (then the representative's launches are the full system's too).
///
/// ```
/// use pimhe_pim::model::UpmemModel;
/// use pimhe_pim::runtime::placement::{Mode, Plan};
/// use pimhe_pim::runtime::subset::{price_transfers, push_bytes_per_dpu};
/// use pimhe_pim::runtime::TransferShape;
///
/// let model = UpmemModel::v1b();
/// let plan = Plan::new(Mode::Parallel, 64, 2).unwrap();
/// // The representative pushed 1 polynomial over both primes; the full system pushes 64.
/// let log = [TransferShape { to_dpus: true, slots: vec![0, 1], count: 1 }];
/// let priced = price_transfers(&model, &plan, &log, 1, 64, 4096);
/// assert_eq!(priced.transfer_s, model.transfer_seconds(&push_bytes_per_dpu(&plan, &[0, 1], 64, 4096)));
/// assert_eq!(priced.bytes_to_dpus, 2 * 64 * 4096 * 4);
/// assert_eq!(priced.retrieve_s, 0.0);
/// ```
pub fn price_transfers(
    model: &UpmemModel,
    plan: &Plan,
    log: &[TransferShape],
    share: usize,
    count: usize,
    n: usize,
) -> ScaledTransfers {
    let mut priced = ScaledTransfers::default();
    for transfer in log {
        let full_count = (transfer.count * count).div_ceil(share.max(1));
        if transfer.to_dpus {
            let bytes = push_bytes_per_dpu(plan, &transfer.slots, full_count, n);
            priced.transfer_s += model.transfer_seconds(&bytes);
            priced.bytes_to_dpus += bytes.iter().sum::<u64>();
        } else {
            let bytes = pull_bytes_per_dpu(plan, &transfer.slots, full_count, n);
            priced.retrieve_s += model.retrieve_seconds(&bytes);
            priced.bytes_from_dpus += bytes.iter().sum::<u64>();
        }
    }
    priced
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::placement::Mode;

    #[test]
    fn shares_and_bytes_follow_the_placement() {
        let plan = Plan::new(Mode::Sequential, 5, 2).unwrap();
        assert_eq!(busiest_share(&plan, 2, 11), 3);
        assert_eq!(busiest_share(&plan, 2, 1), 1);
        assert_eq!(busiest_share(&plan, 2, 0), 0);
        let push = push_bytes_per_dpu(&plan, &[0, 1], 11, 16);
        assert_eq!(push, vec![2 * 3 * 64, 2 * 2 * 64, 2 * 2 * 64, 2 * 2 * 64, 2 * 2 * 64]);
        let single = push_bytes_per_dpu(&plan, &[0, 1], 1, 16);
        assert_eq!(single, vec![128; 5]);
        assert_eq!(pull_bytes_per_dpu(&plan, &[0, 1], 1, 16), vec![128, 0, 0, 0, 0]);
        let parallel = Plan::new(Mode::Parallel, 7, 3).unwrap();
        assert_eq!(busiest_share(&parallel, 3, 5), 3);
        assert_eq!(push_bytes_per_dpu(&parallel, &[1], 5, 16), vec![0, 0, 3 * 64, 2 * 64, 0, 0]);
    }
}
