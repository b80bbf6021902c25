//! The exec integration tests' own fixture: backends with 1 and 3 threads, the second writing
//! every add, sub and mul output with streaming stores. The oracles and seeded inputs they
//! share with the other crates' tests live in `pimhe-testkit`.

use pimhe_exec::CpuBackend;

/// One backend with a single worker and one with three that streams every element-wise output
/// (which large batches would do): every result must agree.
pub fn backends() -> [CpuBackend; 2] {
    [CpuBackend::new(Some(1)).unwrap(), CpuBackend::new(Some(3)).unwrap().with_streaming_threshold(0)]
}
