//! Fresh output batches without a zero-fill pass: every (limb, polynomial) chunk is initialised
//! by the worker thread that computes it, just before it does (a copy of the input's chunk, or
//! zeros), so the memory is first touched by the thread that uses it and is already in its
//! cache when the kernel writes it. `vec![0; len]` instead zeroed the whole batch first, on
//! the calling thread alone (glibc's `calloc` clears reused heap memory), and the kernel then
//! streamed it from memory a second time.

use std::mem::MaybeUninit;
use std::sync::Arc;

use pimhe_ring::{recycle, PolyBatch, Representation, RingBasis};

use super::CpuBackend;

/// What each chunk of a fresh batch holds before `f` sees it.
pub(super) enum Start<'a> {
    /// Zeros (an output every residue of which the kernel writes).
    Zeros,
    /// The same chunk of this batch, whose basis starts with the output's primes (an output
    /// computed in place from its input's residues).
    CopyOf(&'a PolyBatch),
}

impl CpuBackend {
    /// A batch over `basis` of `count` polynomials in `representation` whose chunk `index`
    /// (limb-major: limb `index / count`, polynomial `index % count`) is set by
    /// `f(scratch, index, chunk)`, chunk first holding what `start` says; in parallel when
    /// `cost` per residue makes it worth it (`pool.rs`), each task with a scratch from `init`.
    pub(super) fn fresh<S>(
        &self,
        (basis, count, representation): (&Arc<RingBasis>, usize, Representation),
        start: Start<'_>,
        cost: usize,
        init: impl Fn() -> S + Sync + Send,
        f: impl Fn(&mut S, usize, &mut [u32]) + Sync + Send,
    ) -> PolyBatch {
        let len = basis.len() * count * basis.degree();
        let Ok(data) = self.fresh_data(len, basis.degree(), start, cost, init, |scratch, index, chunk| {
            f(scratch, index, chunk);
            Ok::<_, std::convert::Infallible>(())
        });
        PolyBatch::from_reduced_data(basis, count, representation, data).expect("the data has the batch's length")
    }

    /// A batch like [`CpuBackend::fresh`]'s whose chunk `index` is written by `f(index, chunk)`
    /// into memory nothing has initialised: for the streamed kernels, whose point is that the
    /// output's lines are never read into the caches, which zeroing them first would do.
    ///
    /// # Safety
    ///
    /// `f` must write every value of every chunk it is handed.
    pub(super) unsafe fn fresh_unwritten(
        &self,
        (basis, count, representation): (&Arc<RingBasis>, usize, Representation),
        cost: usize,
        f: impl Fn(usize, &mut [MaybeUninit<u32>]) + Sync + Send,
    ) -> PolyBatch {
        let (len, n) = (basis.len() * count * basis.degree(), basis.degree());
        let mut data: Vec<u32> = recycle::take(len);
        let Ok(()) = self.each_chunk(&mut data.spare_capacity_mut()[..len], n, cost, |index, chunk| {
            f(index, chunk);
            Ok::<_, std::convert::Infallible>(())
        });
        // SAFETY: the chunks of n residues cover all `len` elements, and the caller's `f` wrote
        // every value of each.
        unsafe { data.set_len(len) };
        PolyBatch::from_reduced_data(basis, count, representation, data).expect("the data has the batch's length")
    }

    /// `len` residues (a multiple of `n`) whose `n`-residue chunk `index` is set by
    /// `f(scratch, index, chunk)` as in [`CpuBackend::fresh`]: an intermediate that is not a
    /// batch (a fused operation's scaled residues). Stops at the first error.
    pub(super) fn fresh_data<S, E: Send>(
        &self,
        len: usize,
        n: usize,
        start: Start<'_>,
        cost: usize,
        init: impl Fn() -> S + Sync + Send,
        f: impl Fn(&mut S, usize, &mut [u32]) -> Result<(), E> + Sync + Send,
    ) -> Result<Vec<u32>, E> {
        let mut data: Vec<u32> = recycle::take(len);
        self.each_chunk_with(&mut data.spare_capacity_mut()[..len], n, cost, init, |scratch, index, chunk| {
            match start {
                Start::Zeros => chunk.iter_mut().for_each(|x| {
                    x.write(0);
                }),
                Start::CopyOf(source) => {
                    let from = &source.data()[index * n..(index + 1) * n];
                    chunk.iter_mut().zip(from).for_each(|(x, &value)| {
                        x.write(value);
                    });
                }
            }
            // SAFETY: every element of `chunk` was written just above, and MaybeUninit<u32>
            // has the layout of u32.
            let chunk = unsafe { &mut *(chunk as *mut [MaybeUninit<u32>] as *mut [u32]) };
            f(scratch, index, chunk)
        })?;
        // SAFETY: the chunks of n residues cover all `len` elements (len is a multiple of n),
        // and each was initialised above; no call failed (an error returned above), so none
        // was skipped.
        unsafe { data.set_len(len) };
        Ok(data)
    }

    /// Three fresh vectors of `len` residues (a multiple of `n`) whose chunks `index` are set
    /// together by `f(scratch, index, [chunk0, chunk1, chunk2])`, each chunk zeroed first by the
    /// task that computes it (the three parts of a tensor product). Stops at the first error.
    pub(super) fn fresh_triple<S, E: Send>(
        &self,
        len: usize,
        n: usize,
        cost: usize,
        init: impl Fn() -> S + Sync + Send,
        f: impl Fn(&mut S, usize, [&mut [u32]; 3]) -> Result<(), E> + Sync + Send,
    ) -> Result<[Vec<u32>; 3], E> {
        let mut data: [Vec<u32>; 3] = [(); 3].map(|_| recycle::take(len));
        let [d0, d1, d2] = &mut data;
        let spare = [d0, d1, d2].map(|d| &mut d.spare_capacity_mut()[..len]);
        self.each_triple_with(spare, n, cost, init, |scratch, index, chunks| {
            let chunks = chunks.map(|chunk| {
                chunk.iter_mut().for_each(|x| {
                    x.write(0);
                });
                // SAFETY: every element of `chunk` was written just above, and MaybeUninit<u32>
                // has the layout of u32.
                unsafe { &mut *(chunk as *mut [MaybeUninit<u32>] as *mut [u32]) }
            });
            f(scratch, index, chunks)
        })?;
        for d in &mut data {
            // SAFETY: as in `fresh_data`: every chunk of every vector was initialised above.
            unsafe { d.set_len(len) };
        }
        Ok(data)
    }
}
