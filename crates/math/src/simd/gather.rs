//! Gathers `out[j] = input[indices[j]]` whose indices stay within aligned blocks, as the
//! automorphisms X -> X^k of polynomials in NTT form do (`pimhe_ring::GaloisPermutation`): there
//! each aligned block of 2^s outputs reads one aligned block of 2^s inputs, for every s, because
//! the slots are in bit-reversed order (multiplying an evaluation point's exponent by k changes
//! only the bits above those that vary within a block, which bit reversal turns into the low
//! bits). Such a gather is one vector load of the input block and one in-register permutation
//! (`vpermd`) per vector, against a load, a bounds check and a store per residue for the scalar
//! gather: an automorphism in NTT form then costs about a copy.

use super::{dispatch, Isa, Kernel, Lanes};

/// The widest vector the kernels use (AVX-512: 16 lanes). Blocks of this many and of every
/// narrower vector width (8, AVX2) must be local.
const WIDEST: usize = 16;

/// Gather indices checked to be block-local: the length is a multiple of 16, every index is
/// below the length, and each aligned block of 8 indices (and of 16) points into one aligned
/// block of 8 (16) positions. Only such indices reach the vector path of [`BlockLocalIndices::gather`].
///
/// ```
/// use pimhe_math::simd::gather::BlockLocalIndices;
/// use pimhe_math::Isa;
/// // Swap the two halves, reversing each block of 8.
/// let indices: Vec<u32> = (0..32u32).map(|j| (j ^ 16) ^ 7).collect();
/// let local = BlockLocalIndices::new(&indices).unwrap();
/// let input: Vec<u32> = (100..132).collect();
/// let mut out = vec![0; 32];
/// local.gather(Isa::active(), &mut out, &input);
/// assert_eq!(out[0], 100 + 23);
/// // Index 8 of a block of 8 starting at 0 leaves the block: not local.
/// assert!(BlockLocalIndices::new(&(0..16u32).map(|j| (j + 1) % 16).collect::<Vec<_>>()).is_none());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockLocalIndices {
    indices: Vec<u32>,
    /// The output blocks of 8 and of 16, ordered by the input block they read: the vector path
    /// visits them in that order, so it reads the input front to back, which the hardware
    /// prefetcher follows (in output order the reads jump across the input, and when the input
    /// is not in cache each one waits on a miss) while the scattered writes stay in cache.
    by_source: [Vec<u32>; 2],
}

impl BlockLocalIndices {
    /// The indices, when they are block-local (see the type); `None` otherwise.
    pub fn new(indices: &[u32]) -> Option<Self> {
        let len = indices.len();
        if len == 0 || !len.is_multiple_of(WIDEST) || indices.iter().any(|&i| i as usize >= len) {
            return None;
        }
        let local = |width: usize| {
            let mask = !(width as u32 - 1);
            indices.chunks_exact(width).all(|block| block.iter().all(|&i| i & mask == block[0] & mask))
        };
        if !(local(8) && local(WIDEST)) {
            return None;
        }
        let by_source = |width: usize| {
            let mut blocks: Vec<u32> = (0..(len / width) as u32).collect();
            blocks.sort_by_key(|&block| indices[block as usize * width]);
            blocks
        };
        Some(Self { indices: indices.to_vec(), by_source: [by_source(8), by_source(WIDEST)] })
    }

    /// The indices.
    pub fn as_slice(&self) -> &[u32] {
        &self.indices
    }

    /// `out[j] = input[indices[j]]` for every j, on `isa`. Both slices hold as many values as
    /// there are indices (it panics otherwise).
    pub fn gather(&self, isa: Isa, out: &mut [u32], input: &[u32]) {
        assert!(
            out.len() == self.indices.len() && input.len() == self.indices.len(),
            "a gather of {} indices needs as many values in and out",
            self.indices.len()
        );
        dispatch(isa, Gather { out, input, local: self });
    }
}

struct Gather<'a> {
    out: &'a mut [u32],
    input: &'a [u32],
    local: &'a BlockLocalIndices,
}

impl Kernel for Gather<'_> {
    fn scalar(self) {
        for (o, &i) in self.out.iter_mut().zip(&self.local.indices) {
            *o = self.input[i as usize];
        }
    }

    #[inline(always)]
    fn lanes<L: Lanes>(self, l: L) {
        // Blocks of L::WIDTH (8 or 16) are local and the length is a multiple of 16: each output
        // vector is one input vector, permuted by the indices' low bits.
        let order = match L::WIDTH {
            8 => &self.local.by_source[0],
            WIDEST => &self.local.by_source[1],
            width => unreachable!("no vector of {width} lanes"),
        };
        let block_mask = !(L::WIDTH as u32 - 1);
        for &block in order {
            let start = block as usize * L::WIDTH;
            let idx = &self.local.indices[start..start + L::WIDTH];
            let base = (idx[0] & block_mask) as usize;
            l.store(&mut self.out[start..], l.permute(l.load(&self.input[base..]), l.load(idx)));
        }
    }
}
