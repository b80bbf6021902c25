//! Where a call's chunks run: on the backend's thread pool, or on the calling thread when the
//! work is too small to pay for the hand-over.
//!
//! `ThreadPool::install` from a thread outside the pool queues the job, wakes a worker and puts
//! the caller to sleep until the job is done: two context switches, measured at 10-30 us per
//! call on a 2-core machine (more when other processes compete for the cores). An element-wise
//! pass over a single ciphertext component at N = 4096 with 3 primes takes about 4 us and its
//! NTT about 20 us, so at batch 1 the pool made most calls several times slower, and BFV's
//! product (about a hundred backend calls) spent most of its time handing work over. Work
//! estimated below [`MIN_POOL_WORK`] therefore stays on the calling thread.

use rayon::prelude::*;

use super::CpuBackend;

/// Relative cost per residue of what a chunk does, in units of one element-wise pass (about
/// 0.2-0.4 ns per residue with AVX2): the estimate [`CpuBackend::each_chunk`] compares with
/// [`MIN_POOL_WORK`].
pub(super) const ELEMENTWISE: usize = 1;
/// An NTT or inverse NTT costs about 1.6-2 ns per residue at N = 4096 .. 16384.
pub(super) const TRANSFORM: usize = 6;

/// Work units (residues times their cost) from which the pool is used: about 50 us on one
/// thread, where splitting over two threads saves more than the hand-over costs.
const MIN_POOL_WORK: usize = 1 << 17;

impl CpuBackend {
    /// Calls `f(index, chunk)` on every `n`-element chunk of `data`, in parallel when `cost`
    /// per element (see [`ELEMENTWISE`]) makes the work large enough. Stops at the first error.
    pub(super) fn each_chunk<T: Send, E: Send>(
        &self,
        data: &mut [T],
        n: usize,
        cost: usize,
        f: impl Fn(usize, &mut [T]) -> Result<(), E> + Sync + Send,
    ) -> Result<(), E> {
        self.each_chunk_with(data, n, cost, || (), |_, index, chunk| f(index, chunk))
    }

    /// [`CpuBackend::each_chunk`] with a scratch value from `init` for each task (each thread
    /// that takes chunks), passed to `f(scratch, index, chunk)`.
    pub(super) fn each_chunk_with<T: Send, S, E: Send>(
        &self,
        data: &mut [T],
        n: usize,
        cost: usize,
        init: impl Fn() -> S + Sync + Send,
        f: impl Fn(&mut S, usize, &mut [T]) -> Result<(), E> + Sync + Send,
    ) -> Result<(), E> {
        if self.in_pool(data.len(), n, cost) {
            self.pool.install(|| {
                data.par_chunks_mut(n)
                    .enumerate()
                    .try_for_each_init(&init, |scratch, (index, chunk)| f(scratch, index, chunk))
            })
        } else {
            let mut scratch = init();
            data.chunks_mut(n).enumerate().try_for_each(|(index, chunk)| f(&mut scratch, index, chunk))
        }
    }

    /// [`CpuBackend::each_chunk_with`] over three slices of one length at once:
    /// `f(scratch, index, [chunk0, chunk1, chunk2])` gets chunk `index` of each (an operation
    /// with three outputs, as the tensor product), in parallel when `cost` per element of one
    /// slice makes the work large enough.
    pub(super) fn each_triple_with<T: Send, S, E: Send>(
        &self,
        [d0, d1, d2]: [&mut [T]; 3],
        n: usize,
        cost: usize,
        init: impl Fn() -> S + Sync + Send,
        f: impl Fn(&mut S, usize, [&mut [T]; 3]) -> Result<(), E> + Sync + Send,
    ) -> Result<(), E> {
        if self.in_pool(d0.len(), n, cost) {
            self.pool.install(|| {
                d0.par_chunks_mut(n)
                    .zip(d1.par_chunks_mut(n))
                    .zip(d2.par_chunks_mut(n))
                    .enumerate()
                    .try_for_each_init(&init, |scratch, (index, ((c0, c1), c2))| f(scratch, index, [c0, c1, c2]))
            })
        } else {
            let mut scratch = init();
            d0.chunks_mut(n)
                .zip(d1.chunks_mut(n))
                .zip(d2.chunks_mut(n))
                .enumerate()
                .try_for_each(|(index, ((c0, c1), c2))| f(&mut scratch, index, [c0, c1, c2]))
        }
    }

    /// Whether `residues` elements in chunks of `n`, at `cost` each, are worth handing to the
    /// pool: never a single chunk, which one thread runs either way.
    pub(super) fn in_pool(&self, residues: usize, n: usize, cost: usize) -> bool {
        self.threads > 1 && residues > n && residues.saturating_mul(cost) >= MIN_POOL_WORK
    }
}
