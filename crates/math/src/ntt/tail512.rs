//! The transforms' last stages on AVX-512: the five stages with butterfly distances (gaps) 16,
//! 8, 4, 2 and 1 merged into one pass over blocks of 32 coefficients held in two registers.
//!
//! The stages with gaps of 16 and more pair whole registers; below that, a butterfly's partners
//! sit in one register. Before each stage, two `vpermt2d` (any permutation of the 32 lanes of
//! both registers) line the partners up: lane k of the first register meets lane k of the
//! second ([`layout`]). Each lane's twiddle is read from the transform's own tables: at gap g a
//! block spans 16 / g groups of g lanes each, so one load of the block's 16 / g consecutive
//! twiddles and one permutation give every lane its own. Blocks are taken four at a time: a
//! block's stages are one chain of dependent products, which alone left the multipliers idle.
//!
//! The AVX2 pass of `vector` (16 coefficients, gaps 8 .. 1, a table in its own order) stays for
//! AVX2 and N = 16. On the 2-core AVX-512 Xeon of bench/compare, `cargo bench -p pimhe-math
//! --bench ntt -- 'ntt_.*/avx512'` (one 30-bit prime, one thread) measured the forward transform
//! at N = 8192 in 13.3 us with this pass against 18.1 us with the AVX2 one (the inverse 15.0
//! against 17.2), and at N = 65536 129 against 172 us (130 against 157).

use std::arch::x86_64::*;

use super::vector::{ct, gs};
use super::NttTable;
use crate::simd::lanes::{csub, ShoupVec};
use crate::simd::{Avx512, Lanes};

/// Coefficients of one block (two AVX-512 registers).
pub(super) const BLOCK: usize = 32;

/// Which coefficient of a block each lane holds for the stage with gap `gap` (16, 8, 4, 2, 1):
/// lane k of the first register the k-th smallest index i with i mod 2 gap < gap, lane k of
/// the second i + gap. Gap 16 is the natural order (the block as loaded).
const fn layout(gap: usize) -> [[u32; 16]; 2] {
    let mut lanes = [[0u32; 16]; 2];
    let (mut k, mut i) = (0, 0);
    while i < BLOCK {
        if i % (2 * gap) < gap {
            lanes[0][k] = i as u32;
            lanes[1][k] = (i + gap) as u32;
            k += 1;
        }
        i += 1;
    }
    lanes
}

/// `vpermt2d` indices (below 16: a lane of the first register, else of the second) that take
/// the registers from layout `from` to layout `to`.
const fn transition(from: usize, to: usize) -> [[u32; 16]; 2] {
    let (source, target) = (layout(from), layout(to));
    let mut indices = [[0u32; 16]; 2];
    let mut r = 0;
    while r < 2 {
        let mut k = 0;
        while k < 16 {
            let mut j = 0;
            while j < 16 {
                if source[0][j] == target[r][k] {
                    indices[r][k] = j as u32;
                }
                if source[1][j] == target[r][k] {
                    indices[r][k] = 16 + j as u32;
                }
                j += 1;
            }
            k += 1;
        }
        r += 1;
    }
    indices
}

/// The forward transform's rearrangements: before gaps 8, 4, 2, 1, then back to natural order.
const FORWARD: [[[u32; 16]; 2]; 5] =
    [transition(16, 8), transition(8, 4), transition(4, 2), transition(2, 1), transition(1, 16)];
/// The inverse's: before gaps 1, 2, 4, 8, then to natural order (the gap-16 layout).
const INVERSE: [[[u32; 16]; 2]; 5] =
    [transition(16, 1), transition(1, 2), transition(2, 4), transition(4, 8), transition(8, 16)];

/// Lane k's twiddle at gaps 8, 4 and 2 is the block's twiddle k / gap.
const fn spread(gap: usize) -> [u32; 16] {
    let mut indices = [0u32; 16];
    let mut k = 0;
    while k < 16 {
        indices[k] = (k / gap) as u32;
        k += 1;
    }
    indices
}

/// Index vectors in registers, loaded once per transform.
struct Permutations {
    steps: [[__m512i; 2]; 5],
    /// [`spread`] for gaps 8, 4, 2.
    spread: [__m512i; 3],
}

impl Permutations {
    #[inline(always)]
    fn new(l: Avx512, steps: &[[[u32; 16]; 2]; 5]) -> Self {
        // Plain loops, not closures: a closure is not compiled with its caller's target
        // features, so its vector loads would not be inlined as AVX-512 instructions.
        let mut loaded = [[l.splat(0); 2]; 5];
        for (pair, [x, y]) in loaded.iter_mut().zip(steps) {
            *pair = [l.load(x), l.load(y)];
        }
        Self { steps: loaded, spread: [l.load(&spread(8)), l.load(&spread(4)), l.load(&spread(2))] }
    }
}

/// Registers (x, y) rearranged by `indices`.
#[inline(always)]
fn rearrange(_: Avx512, (x, y): (__m512i, __m512i), [first, second]: [__m512i; 2]) -> (__m512i, __m512i) {
    // SAFETY: the Avx512 token proves the CPU has AVX-512F.
    unsafe { (_mm512_permutex2var_epi32(x, first, y), _mm512_permutex2var_epi32(x, second, y)) }
}

/// The first `count` (<= 16) values of `src` in the low lanes, zeros above; panics if `src`
/// is shorter. The tables' ends are reached at small N, where a full load would overrun them.
#[inline(always)]
fn load_prefix(_: Avx512, src: &[u32], count: usize) -> __m512i {
    assert!(count <= 16 && src.len() >= count);
    // SAFETY: the Avx512 token proves the CPU has AVX-512F; the mask enables exactly the
    // first `count` lanes, all inside `src` (asserted), and masked-off lanes are not accessed.
    unsafe { _mm512_maskz_loadu_epi32(((1u32 << count) - 1) as u16, src.as_ptr().cast()) }
}

/// Lane twiddles of the stage with gap `gap` (8, 4, 2, 1) for a block whose first group's
/// twiddle is at `start` of `(w, ws)`.
#[inline(always)]
fn twiddles(
    l: Avx512,
    (w, ws): (&[u32], &[u32]),
    start: usize,
    gap: usize,
    spread: &[__m512i; 3],
) -> ShoupVec<__m512i> {
    let groups = 16 / gap;
    let (w, ws) = (load_prefix(l, &w[start..], groups), load_prefix(l, &ws[start..], groups));
    let (w, shoup) = match gap {
        1 => (w, ws),
        // spread[0], [1], [2] are for gaps 8, 4, 2.
        _ => {
            let spread = spread[3 - gap.trailing_zeros() as usize];
            (l.permute(w, spread), l.permute(ws, spread))
        }
    };
    ShoupVec { w, shoup, shoup_odd: l.shr64(shoup, 32) }
}

/// The forward transform's stages with gaps 16 .. 1 and its final reduction to [0, q), on a
/// transform of N >= [`BLOCK`] whose larger gaps are done.
#[inline(always)]
pub(super) fn forward(l: Avx512, table: &NttTable, a: &mut [u32]) {
    if a.len() >= 4 * BLOCK {
        forward_blocks::<4>(l, table, a)
    } else {
        forward_blocks::<1>(l, table, a)
    }
}

/// [`forward`] on `K` blocks at a time: a block's five stages are one long chain of dependent
/// products, so independent blocks side by side keep the multipliers busy.
#[inline(always)]
fn forward_blocks<const K: usize>(l: Avx512, table: &NttTable, a: &mut [u32]) {
    let n = table.n;
    let q = table.modulus.value();
    let (qv, two_q) = (l.splat(q), l.splat(2 * q));
    let permutations = Permutations::new(l, &FORWARD);
    let tables = (&table.forward_twiddles[..], &table.forward_shoup[..]);
    for (group, blocks) in a.chunks_exact_mut(K * BLOCK).enumerate() {
        let first = group * K;
        // No closures here: they would not inherit the caller's target features.
        let mut v = [(qv, qv); K];
        for (k, v) in v.iter_mut().enumerate() {
            // Gap 16: one group per block.
            let b = first + k;
            let w16 = ShoupVec::splat(l, tables.0[n / 32 + b], tables.1[n / 32 + b]);
            let block = &blocks[k * BLOCK..(k + 1) * BLOCK];
            *v = ct(l, l.load(&block[..16]), l.load(&block[16..]), w16, qv, two_q);
        }
        for (step, gap) in [8, 4, 2, 1].into_iter().enumerate() {
            for (k, v) in v.iter_mut().enumerate() {
                let r = rearrange(l, *v, permutations.steps[step]);
                // The block's first group at gap g is 32 b / 2g of the stage's N / 2g.
                let w = twiddles(l, tables, n / (2 * gap) + (first + k) * 16 / gap, gap, &permutations.spread);
                *v = ct(l, r.0, r.1, w, qv, two_q);
            }
        }
        for (k, v) in v.into_iter().enumerate() {
            let reduced = (csub(l, csub(l, v.0, two_q), qv), csub(l, csub(l, v.1, two_q), qv));
            let (x, y) = rearrange(l, reduced, permutations.steps[4]);
            let (lo, hi) = blocks[k * BLOCK..(k + 1) * BLOCK].split_at_mut(16);
            l.store(lo, x);
            l.store(hi, y);
        }
    }
}

/// The inverse transform's stages with gaps 1 .. 8, then the gap-16 stage where `w16` holds
/// its first twiddle's index (not at N = 32, where gap 16 is the last stage, which scales by
/// N^{-1}).
#[inline(always)]
pub(super) fn inverse(l: Avx512, table: &NttTable, a: &mut [u32], w16: Option<usize>) {
    if a.len() >= 4 * BLOCK {
        inverse_blocks::<4>(l, table, a, w16)
    } else {
        inverse_blocks::<1>(l, table, a, w16)
    }
}

/// [`inverse`] on `K` blocks at a time (see [`forward_blocks`]).
#[inline(always)]
fn inverse_blocks<const K: usize>(l: Avx512, table: &NttTable, a: &mut [u32], w16: Option<usize>) {
    let n = table.n;
    let q = table.modulus.value();
    let (qv, two_q) = (l.splat(q), l.splat(2 * q));
    let permutations = Permutations::new(l, &INVERSE);
    let tables = (&table.inverse_twiddles[..], &table.inverse_shoup[..]);
    // The inverse reads its stages' twiddles in turn: gap 1's N/2 from index 1, then gap 2's
    // N/4, and so on.
    let offsets = [1, 1 + n / 2, 1 + n / 2 + n / 4, 1 + n / 2 + n / 4 + n / 8];
    for (group, blocks) in a.chunks_exact_mut(K * BLOCK).enumerate() {
        let first = group * K;
        let mut v = [(qv, qv); K];
        for (k, v) in v.iter_mut().enumerate() {
            let block = &blocks[k * BLOCK..(k + 1) * BLOCK];
            *v = (l.load(&block[..16]), l.load(&block[16..]));
        }
        for (step, gap) in [1, 2, 4, 8].into_iter().enumerate() {
            for (k, v) in v.iter_mut().enumerate() {
                let r = rearrange(l, *v, permutations.steps[step]);
                let w = twiddles(l, tables, offsets[step] + (first + k) * 16 / gap, gap, &permutations.spread);
                *v = gs(l, r.0, r.1, w, qv, two_q);
            }
        }
        for (k, v) in v.into_iter().enumerate() {
            let mut v = rearrange(l, v, permutations.steps[4]);
            if let Some(start) = w16 {
                let b = first + k;
                v = gs(l, v.0, v.1, ShoupVec::splat(l, tables.0[start + b], tables.1[start + b]), qv, two_q);
            }
            let (lo, hi) = blocks[k * BLOCK..(k + 1) * BLOCK].split_at_mut(16);
            l.store(lo, v.0);
            l.store(hi, v.1);
        }
    }
}
