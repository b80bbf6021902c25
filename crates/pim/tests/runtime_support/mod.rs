//! The runtime tests' shared fixture: PIM configurations over both kernel variants, and a
//! basis of three data primes beside a key-switching prime.

use std::sync::Arc;

use pimhe_pim::layout::Variant;
use pimhe_pim::runtime::placement::Mode;
use pimhe_pim::runtime::PimConfig;
use pimhe_ring::RingBasis;
use pimhe_testkit::inputs::distinct_primes;

/// Ring degree of the runtime tests.
pub const N: usize = 256;

/// Each (DPUs, mode) with each kernel variant.
pub fn configs(shapes: &[(usize, Mode)]) -> Vec<PimConfig> {
    let mut configs = Vec::new();
    for &(dpus, mode) in shapes {
        for variant in Variant::ALL {
            let mut config = PimConfig::new(dpus, mode);
            config.variant = variant;
            configs.push(config);
        }
    }
    configs
}

/// Three data primes and one extra (as a key-switching prime would be): the primes, the data
/// basis and the basis of all four.
pub fn setup() -> (Vec<u32>, Arc<RingBasis>, Arc<RingBasis>) {
    let primes = distinct_primes(N, &[30, 29, 28, 30]);
    let data = RingBasis::new(N, &primes[..3]).unwrap();
    let all = RingBasis::new(N, &primes).unwrap();
    (primes, data, all)
}
