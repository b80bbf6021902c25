//! Which DPUs serve which prime, and how a batch's sub-polynomials spread over them.

use std::ops::Range;

/// How DPUs are assigned to RNS primes: DRAMatic's two limb-major modes (3.3), pimhe's
/// ciphertext-major one and a hybrid of limb-major and coefficient slices.
///
/// | mode | a DPU holds | launches | base conversion, ModDown, modulus switch |
/// |---|---|---|---|
/// | parallel | one prime's limb of its share of the polynomials | one | CPU fallback (a polynomial's limbs are on different DPUs) |
/// | sequential | every limb of its share | one per prime, plus one before a conversion whose sources are pending on a target's or a later prime's launch | on the DPUs, per coefficient across the limbs it holds: the terms onto prime q run in q's launch |
/// | ciphertext-major | every limb of its share | one: `SET_PRIME` switches the prime between commands | on the DPUs, per coefficient across the limbs it holds |
/// | hybrid | as parallel | one, plus one per conversion | on the DPUs, on coefficient slices of every limb spread over all DPUs, re-sliced through the host ([`super`]'s `hybrid.rs`) |
///
/// The price of ciphertext-major: every DPU keeps the twiddles of every prime (4N words and
/// from N = 2048 the 56 KiB of multiplication tables, per prime), a key (one polynomial) is
/// replicated on every DPU, so its upload costs DPUs times its size, once; and a polynomial's
/// limbs are transformed one after another on one DPU, so a batch smaller than the DPU count
/// leaves DPUs idle where parallel mode spreads the limbs. The bench crate's planner
/// (`--mode auto`) weighs that by modeled cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// A group of DPUs per prime, all primes at once; each DPU holds only its prime's twiddles.
    Parallel,
    /// All DPUs serve one prime after another, each prime in its own launch; any DPU count can
    /// be used. A DPU holds every limb of its share, so conversions run on the DPUs, the terms
    /// onto a prime in that prime's launch.
    Sequential,
    /// Every DPU owns whole polynomials with all their limbs and works through the primes in
    /// one launch, so key switching and modulus switching run where the data is.
    CiphertextMajor,
    /// As parallel for the transforms and element-wise kernels; the work across primes runs on
    /// coefficient slices over every DPU, the operands re-sliced through the host (priced).
    Hybrid,
}

impl Mode {
    /// Every mode, as the CLI spells them.
    pub const NAMES: &'static str = "parallel, sequential, ciphertext-major or hybrid";

    /// Every mode.
    pub const ALL: [Mode; 4] = [Mode::Parallel, Mode::Sequential, Mode::CiphertextMajor, Mode::Hybrid];

    /// Whether each prime has its own DPU group (parallel and hybrid), so a DPU holds one
    /// prime's limbs and the system needs a DPU per prime.
    pub fn groups_per_prime(self) -> bool {
        match self {
            Mode::Parallel | Mode::Hybrid => true,
            Mode::Sequential | Mode::CiphertextMajor => false,
        }
    }

    /// The name the CLI and reports use.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Parallel => "parallel",
            Mode::Sequential => "sequential",
            Mode::CiphertextMajor => "ciphertext-major",
            Mode::Hybrid => "hybrid",
        }
    }
}

impl std::str::FromStr for Mode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "parallel" => Ok(Mode::Parallel),
            "sequential" => Ok(Mode::Sequential),
            "ciphertext-major" => Ok(Mode::CiphertextMajor),
            "hybrid" => Ok(Mode::Hybrid),
            _ => Err(format!("mode {s} is not known; choose {}", Mode::NAMES)),
        }
    }
}

/// The DPU groups of a backend: for each prime slot, the DPUs that serve it.
#[derive(Debug, Clone)]
pub struct Plan {
    mode: Mode,
    groups: Vec<Range<usize>>,
}

impl Plan {
    /// Groups for `primes` primes over `dpus` DPUs. Parallel and hybrid modes give each prime
    /// floor(dpus / primes) consecutive DPUs (the rest stay idle, as whole-rank allocation does
    /// in DRAMatic); sequential and ciphertext-major modes give every prime all DPUs (so a
    /// polynomial's limbs land on one DPU).
    pub fn new(mode: Mode, dpus: usize, primes: usize) -> Result<Self, String> {
        if primes == 0 || dpus == 0 {
            return Err("a PIM backend needs at least one DPU and one prime".into());
        }
        let groups = match mode.groups_per_prime() {
            true => {
                let size = dpus / primes;
                if size == 0 {
                    return Err(format!(
                        "{} mode needs at least one DPU per prime: {dpus} DPUs for {primes} primes; \
                         use more DPUs or sequential mode",
                        mode.name()
                    ));
                }
                (0..primes).map(|p| p * size..(p + 1) * size).collect()
            }
            false => vec![0..dpus; primes],
        };
        Ok(Self { mode, groups })
    }

    /// The mode.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// DPUs serving prime slot `slot`.
    pub fn group(&self, slot: usize) -> Range<usize> {
        self.groups[slot].clone()
    }

    /// Number of DPUs that ever receive work.
    pub fn used_dpus(&self) -> usize {
        self.groups.iter().map(|g| g.end).max().unwrap_or(0)
    }
}

/// The sub-polynomials `[first, first + len)` of one limb held by one DPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Share {
    /// DPU index.
    pub dpu: usize,
    /// First polynomial of the batch on this DPU.
    pub first: usize,
    /// Number of polynomials on this DPU.
    pub len: usize,
}

/// Splits `count` polynomials as evenly as possible over `group` (contiguous ranges, the
/// first DPUs taking one more when it does not divide); DPUs that get nothing are left out. A
/// single polynomial is replicated on every DPU of the group so that it can be broadcast
/// against any batch placed on the same group.
pub fn split(count: usize, group: Range<usize>) -> Vec<Share> {
    let dpus = group.len();
    if count == 1 {
        return group.map(|dpu| Share { dpu, first: 0, len: 1 }).collect();
    }
    let base = count / dpus;
    let extra = count % dpus;
    let mut first = 0;
    group
        .enumerate()
        .filter_map(|(i, dpu)| {
            let len = base + usize::from(i < extra);
            let share = Share { dpu, first, len };
            first += len;
            (len > 0).then_some(share)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parallel_groups_are_disjoint_and_sequential_groups_cover_all() {
        let plan = Plan::new(Mode::Parallel, 383, 3).unwrap();
        assert_eq!(plan.group(0), 0..127);
        assert_eq!(plan.group(2), 254..381);
        assert_eq!(plan.used_dpus(), 381);
        let plan = Plan::new(Mode::Sequential, 509, 3).unwrap();
        assert_eq!(plan.group(1), 0..509);
        assert!(Plan::new(Mode::Parallel, 2, 3).is_err());
    }

    #[test]
    fn split_covers_every_polynomial_once() {
        for (count, dpus) in [(10, 3), (3, 10), (128, 127), (7, 7), (2, 5)] {
            let shares = split(count, 4..4 + dpus);
            let mut next = 0;
            for share in &shares {
                assert_eq!(share.first, next);
                assert!(share.len >= 1 && (4..4 + dpus).contains(&share.dpu));
                next += share.len;
            }
            assert_eq!(next, count);
            let (lo, hi) = (shares.iter().map(|s| s.len).min().unwrap(), shares.iter().map(|s| s.len).max().unwrap());
            assert!(hi - lo <= 1);
        }
        assert_eq!(split(1, 0..3).len(), 3, "a single polynomial is replicated");
    }
}
