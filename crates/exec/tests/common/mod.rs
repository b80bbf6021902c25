//! The exec integration tests' own fixture: backends with 1 and 3 threads. The oracles and
//! seeded inputs they share with the other crates' tests live in `pimhe-testkit`.

use pimhe_exec::CpuBackend;

/// One backend with a single worker and one with three: every result must agree.
pub fn backends() -> [CpuBackend; 2] {
    [CpuBackend::new(Some(1)).unwrap(), CpuBackend::new(Some(3)).unwrap()]
}
