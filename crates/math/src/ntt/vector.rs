//! The NTT on vector lanes: the same lazy Harvey butterflies with Shoup twiddles as the scalar
//! transforms in [`super`], giving the same outputs bit for bit.
//!
//! Stages whose butterfly distance (gap) is at least the vector width pair whole registers:
//! lane j of x meets lane j of y under one broadcast twiddle. The four stages with gaps 8, 4, 2
//! and 1 are merged into one pass over blocks of 16 coefficients held in two AVX2 registers
//! (a pass over memory saved per stage): the gap-8 stage pairs the two registers as loaded;
//! before each of the others a 2x2 transpose of 128-, 64- or 32-bit elements between the two
//! registers lines the partners up in the same lanes (each transpose is its own inverse), and
//! a table built for this order ([`TailTwiddles`]) gives each lane its twiddle with one load.
//! The forward transform's final reduction to [0, q) is folded into that pass. AVX-512 runs the
//! stages with gaps of 32 and more here and merges those from 16 down in `tail512` (blocks of
//! 32 coefficients), except at N = 16, where it takes this AVX2 pass.

use std::arch::x86_64::*;

use super::{tail512, NttTable};
use crate::simd::lanes::{csub, mul_shoup_lazy, ShoupVec};
use crate::simd::{Avx2, Lanes};
use crate::Modulus;

/// Coefficients of one block of the merged last stages (two AVX2 registers).
const BLOCK: usize = 16;
/// Twiddles per block: 8 lanes for each of the 3 merged stages.
const BLOCK_TWIDDLES: usize = 24;
/// Smallest degree the vector transforms handle (one block); smaller ones stay scalar.
pub(super) const MIN_DEGREE: usize = BLOCK;

/// Twiddles of the merged last three stages, lane by lane, in the order the blocks read them.
#[derive(Debug, Clone, Default)]
pub(super) struct TailTwiddles {
    forward: Vec<u32>,
    forward_shoup: Vec<u32>,
    inverse: Vec<u32>,
    inverse_shoup: Vec<u32>,
}

impl TailTwiddles {
    /// From the scalar tables: `forward[k]` = psi^bitrev(k); `inverse` in consumption order.
    pub(super) fn new(q: &Modulus, forward: &[u32], inverse: &[u32]) -> Self {
        let n = forward.len();
        if n < MIN_DEGREE {
            return Self::default();
        }
        let mut tail = Self::default();
        for block in 0..n / BLOCK {
            // Lane k of the gap-4, gap-2 and gap-1 stages (see the layouts in `forward_tail`).
            for k in 0..8 {
                tail.forward.push(forward[n / 8 + 2 * block + k / 4]);
            }
            for k in 0..8 {
                tail.forward.push(forward[n / 4 + 4 * block + k / 2]);
            }
            tail.forward.extend_from_slice(&forward[n / 2 + 8 * block..n / 2 + 8 * block + 8]);
            // The inverse runs the same stages in the opposite order: gap 1, 2, 4.
            tail.inverse.extend_from_slice(&inverse[1 + 8 * block..1 + 8 * block + 8]);
            for k in 0..8 {
                tail.inverse.push(inverse[1 + n / 2 + 4 * block + k / 2]);
            }
            for k in 0..8 {
                tail.inverse.push(inverse[1 + n / 2 + n / 4 + 2 * block + k / 4]);
            }
        }
        tail.forward_shoup = tail.forward.iter().map(|&w| q.shoup(w)).collect();
        tail.inverse_shoup = tail.inverse.iter().map(|&w| q.shoup(w)).collect();
        tail
    }
}

/// Cooley-Tukey butterfly on lanes; inputs and outputs in [0, 4q) (as the scalar one).
#[inline(always)]
pub(super) fn ct<L: Lanes>(l: L, x: L::V, y: L::V, w: ShoupVec<L::V>, q: L::V, two_q: L::V) -> (L::V, L::V) {
    let u = csub(l, x, two_q);
    let v = mul_shoup_lazy(l, y, w, q);
    (l.add(u, v), l.sub(l.add(u, two_q), v))
}

/// Gentleman-Sande butterfly on lanes; inputs and outputs in [0, 2q) (as the scalar one).
#[inline(always)]
pub(super) fn gs<L: Lanes>(l: L, x: L::V, y: L::V, w: ShoupVec<L::V>, q: L::V, two_q: L::V) -> (L::V, L::V) {
    (csub(l, l.add(x, y), two_q), mul_shoup_lazy(l, l.sub(l.add(x, two_q), y), w, q))
}

/// One stage on pairs of registers `gap` apart (`gap` >= 16, a multiple of the width), group i
/// using twiddle `w[i]`.
#[inline(always)]
fn stage<L: Lanes>(l: L, q: u32, a: &mut [u32], gap: usize, w: &[u32], ws: &[u32], forward: bool) {
    let (q, two_q) = (l.splat(q), l.splat(2 * q));
    for ((group, &w), &ws) in a.chunks_exact_mut(2 * gap).zip(w).zip(ws) {
        let w = ShoupVec::splat(l, w, ws);
        let (lo, hi) = group.split_at_mut(gap);
        for (x, y) in lo.chunks_exact_mut(L::WIDTH).zip(hi.chunks_exact_mut(L::WIDTH)) {
            let (u, v) = if forward {
                ct(l, l.load(x), l.load(y), w, q, two_q)
            } else {
                gs(l, l.load(x), l.load(y), w, q, two_q)
            };
            l.store(x, u);
            l.store(y, v);
        }
    }
}

/// The 8 lane twiddles of merged stage `stage` (0, 1, 2) of a block.
#[inline(always)]
fn tail_twiddle(l: Avx2, w: &[u32], ws: &[u32], stage: usize) -> ShoupVec<__m256i> {
    ShoupVec::load(l, &w[8 * stage..8 * stage + 8], &ws[8 * stage..8 * stage + 8])
}

/// 2x2 transposes between two registers, each its own inverse: of 128-bit halves, of 64-bit
/// and of 32-bit elements within each 128-bit half.
#[inline(always)]
fn transpose128(_: Avx2, x: __m256i, y: __m256i) -> (__m256i, __m256i) {
    // SAFETY: the Avx2 token proves the CPU has AVX2.
    unsafe { (_mm256_permute2x128_si256::<0x20>(x, y), _mm256_permute2x128_si256::<0x31>(x, y)) }
}

#[inline(always)]
fn transpose64(_: Avx2, x: __m256i, y: __m256i) -> (__m256i, __m256i) {
    // SAFETY: the Avx2 token proves the CPU has AVX2.
    unsafe { (_mm256_unpacklo_epi64(x, y), _mm256_unpackhi_epi64(x, y)) }
}

#[inline(always)]
fn transpose32(l: Avx2, x: __m256i, y: __m256i) -> (__m256i, __m256i) {
    (l.blend_odd(x, l.shl64(y, 32)), l.blend_odd(l.shr64(x, 32), y))
}

/// Forward stages with gaps 8, 4, 2, 1 and the final reduction, per block of 16 = registers
/// (A, B). Gap 8 pairs A with B as loaded, under one twiddle per block (`w8`). After
/// `transpose128` the pairs are (A0-3 B0-3 | A4-7 B4-7); after `transpose64`
/// (A0 A1 A4 A5 B0 B1 B4 B5 | A2 A3 A6 A7 B2 B3 B6 B7); after `transpose32` (evens | odds).
/// Interleaving evens and odds (unpack) and swapping halves restores A and B.
#[inline(always)]
fn forward_tail(l: Avx2, q: u32, a: &mut [u32], tail: (&[u32], &[u32]), w8: (&[u32], &[u32])) {
    if a.len() >= TAIL_BLOCKS * BLOCK {
        forward_tail_blocks::<TAIL_BLOCKS>(l, q, a, tail, w8)
    } else {
        forward_tail_blocks::<1>(l, q, a, tail, w8)
    }
}

/// Blocks side by side in the merged passes: one block's stages are a single chain of
/// dependent products, which alone leaves the multipliers idle (`tail512` does the same).
const TAIL_BLOCKS: usize = 4;

/// The twiddles of block `p`'s merged stages, from the table in block order.
#[inline(always)]
fn block_twiddles<'a>(tail: (&'a [u32], &'a [u32]), p: usize) -> (&'a [u32], &'a [u32]) {
    let lanes = p * BLOCK_TWIDDLES..(p + 1) * BLOCK_TWIDDLES;
    (&tail.0[lanes.clone()], &tail.1[lanes])
}

/// [`forward_tail`] on `K` blocks at a time.
#[inline(always)]
fn forward_tail_blocks<const K: usize>(l: Avx2, q: u32, a: &mut [u32], tail: (&[u32], &[u32]), w8: (&[u32], &[u32])) {
    let (qv, two_q) = (l.splat(q), l.splat(2 * q));
    for (group, blocks) in a.chunks_exact_mut(K * BLOCK).enumerate() {
        let first = group * K;
        // No closures here: they would not inherit the caller's target features.
        let mut v = [(qv, qv); K];
        for (k, v) in v.iter_mut().enumerate() {
            let (p, block) = (first + k, &blocks[k * BLOCK..(k + 1) * BLOCK]);
            let (x, y) =
                ct(l, l.load(&block[..8]), l.load(&block[8..]), ShoupVec::splat(l, w8.0[p], w8.1[p]), qv, two_q);
            *v = transpose128(l, x, y);
        }
        for stage in 0..3 {
            for (k, v) in v.iter_mut().enumerate() {
                let (w, ws) = block_twiddles(tail, first + k);
                let (x, y) = ct(l, v.0, v.1, tail_twiddle(l, w, ws, stage), qv, two_q);
                *v = match stage {
                    0 => transpose64(l, x, y),
                    1 => transpose32(l, x, y),
                    _ => (x, y),
                };
            }
        }
        for (k, (x, y)) in v.into_iter().enumerate() {
            let (x, y) = (csub(l, csub(l, x, two_q), qv), csub(l, csub(l, y, two_q), qv));
            // SAFETY: the Avx2 token proves the CPU has AVX2.
            let (x, y) = unsafe { (_mm256_unpacklo_epi32(x, y), _mm256_unpackhi_epi32(x, y)) };
            let (x, y) = transpose128(l, x, y);
            let (lo, hi) = blocks[k * BLOCK..(k + 1) * BLOCK].split_at_mut(8);
            l.store(lo, x);
            l.store(hi, y);
        }
    }
}

/// Inverse stages with gaps 1, 2, 4: [`forward_tail`]'s arrangements in reverse order.
/// Then the gap-8 stage when `w8` has a twiddle per block (not at N = 16, where gap 8 is the
/// last stage, which scales by N^{-1}).
#[inline(always)]
fn inverse_tail(l: Avx2, q: u32, a: &mut [u32], tail: (&[u32], &[u32]), w8: Option<(&[u32], &[u32])>) {
    if a.len() >= TAIL_BLOCKS * BLOCK {
        inverse_tail_blocks::<TAIL_BLOCKS>(l, q, a, tail, w8)
    } else {
        inverse_tail_blocks::<1>(l, q, a, tail, w8)
    }
}

/// [`inverse_tail`] on `K` blocks at a time.
#[inline(always)]
fn inverse_tail_blocks<const K: usize>(
    l: Avx2,
    q: u32,
    a: &mut [u32],
    tail: (&[u32], &[u32]),
    w8: Option<(&[u32], &[u32])>,
) {
    let (qv, two_q) = (l.splat(q), l.splat(2 * q));
    for (group, blocks) in a.chunks_exact_mut(K * BLOCK).enumerate() {
        let first = group * K;
        let mut v = [(qv, qv); K];
        for (k, v) in v.iter_mut().enumerate() {
            let block = &blocks[k * BLOCK..(k + 1) * BLOCK];
            let (x, y) = transpose128(l, l.load(&block[..8]), l.load(&block[8..]));
            // SAFETY: the Avx2 token proves the CPU has AVX2. Selects lanes 0, 2 (odd: 1, 3)
            // of each 128-bit half of x, then of y: the evens and the odds of A and of B.
            *v = unsafe {
                let (x, y) = (_mm256_castsi256_ps(x), _mm256_castsi256_ps(y));
                (
                    _mm256_castps_si256(_mm256_shuffle_ps::<0x88>(x, y)),
                    _mm256_castps_si256(_mm256_shuffle_ps::<0xDD>(x, y)),
                )
            };
        }
        for stage in 0..3 {
            for (k, v) in v.iter_mut().enumerate() {
                let (w, ws) = block_twiddles(tail, first + k);
                let (x, y) = gs(l, v.0, v.1, tail_twiddle(l, w, ws, stage), qv, two_q);
                *v = match stage {
                    0 => transpose32(l, x, y),
                    1 => transpose64(l, x, y),
                    _ => transpose128(l, x, y),
                };
            }
        }
        for (k, (x, y)) in v.into_iter().enumerate() {
            let p = first + k;
            let (x, y) = match w8 {
                Some((w8, ws8)) => gs(l, x, y, ShoupVec::splat(l, w8[p], ws8[p]), qv, two_q),
                None => (x, y),
            };
            let (lo, hi) = blocks[k * BLOCK..(k + 1) * BLOCK].split_at_mut(8);
            l.store(lo, x);
            l.store(hi, y);
        }
    }
}

/// The forward transform on lanes; `a.len()` = N >= [`MIN_DEGREE`] (checked by the caller).
#[inline(always)]
pub(super) fn forward<L: Lanes>(l: L, table: &NttTable, a: &mut [u32]) {
    let n = table.n;
    assert!(n >= MIN_DEGREE && a.len() == n);
    let q = table.modulus.value();
    // AVX-512 merges the stages from gap 16 down (blocks of 32), AVX2 from gap 8 (blocks of 16).
    let wide_tail = l.avx512().filter(|_| n >= tail512::BLOCK);
    let tail_block = if wide_tail.is_some() { tail512::BLOCK } else { BLOCK };
    let (mut gap, mut groups) = (n / 2, 1);
    while gap > tail_block / 2 {
        let twiddles = groups..2 * groups;
        let (w, ws) = (&table.forward_twiddles[twiddles.clone()], &table.forward_shoup[twiddles]);
        stage(l, q, a, gap, w, ws, true);
        gap /= 2;
        groups *= 2;
    }
    if let Some(wide) = wide_tail {
        return tail512::forward(wide, table, a);
    }
    // gap = 8, groups = N/16: one group per block.
    let w8 = (&table.forward_twiddles[groups..2 * groups], &table.forward_shoup[groups..2 * groups]);
    forward_tail(l.avx2(), q, a, (&table.tail.forward, &table.tail.forward_shoup), w8);
}

/// The inverse transform on lanes; `a.len()` = N >= [`MIN_DEGREE`] (checked by the caller).
#[inline(always)]
pub(super) fn inverse<L: Lanes>(l: L, table: &NttTable, a: &mut [u32]) {
    let n = table.n;
    assert!(n >= MIN_DEGREE && a.len() == n);
    let modulus = table.modulus;
    let q = modulus.value();
    let (mut next, mut gap, mut groups);
    if let Some(wide) = l.avx512().filter(|_| n >= tail512::BLOCK) {
        (next, gap, groups) = (1 + n / 2 + n / 4 + n / 8 + n / 16, 16, n / 32);
        // The gap-16 stage is merged into the tail pass unless it is the last one.
        let merged = groups > 1;
        tail512::inverse(wide, table, a, merged.then_some(next));
        if merged {
            next += groups;
            groups /= 2;
            gap *= 2;
        }
    } else {
        (next, gap, groups) = (1 + n / 2 + n / 4 + n / 8, 8, n / 16);
        let mut w8 = None;
        if groups > 1 {
            // The gap-8 stage is not the last one: merge it into the tail pass.
            w8 = Some((&table.inverse_twiddles[next..next + groups], &table.inverse_shoup[next..next + groups]));
            next += groups;
            groups /= 2;
            gap *= 2;
        }
        inverse_tail(l.avx2(), q, a, (&table.tail.inverse, &table.tail.inverse_shoup), w8);
    }
    while groups > 1 {
        let twiddles = next..next + groups;
        let (w, ws) = (&table.inverse_twiddles[twiddles.clone()], &table.inverse_shoup[twiddles]);
        stage(l, q, a, gap, w, ws, false);
        next += groups;
        groups /= 2;
        gap *= 2;
    }
    if gap >= L::WIDTH {
        last_inverse_stage(l, table, a)
    } else {
        last_inverse_stage(l.avx2(), table, a)
    }
}

/// The inverse's last stage (gap N/2), which folds in N^{-1} and reduces to [0, q).
#[inline(always)]
fn last_inverse_stage<L: Lanes>(l: L, table: &NttTable, a: &mut [u32]) {
    let q = table.modulus.value();
    let (qv, two_q) = (l.splat(q), l.splat(2 * q));
    let n_inv = ShoupVec::splat(l, table.n_inv, table.n_inv_shoup);
    let last = ShoupVec::splat(l, table.last_twiddle_scaled, table.last_twiddle_scaled_shoup);
    let (lo, hi) = a.split_at_mut(table.n / 2);
    for (x, y) in lo.chunks_exact_mut(L::WIDTH).zip(hi.chunks_exact_mut(L::WIDTH)) {
        let (u, v) = (l.load(x), l.load(y));
        let sum = mul_shoup_lazy(l, l.add(u, v), n_inv, qv);
        let diff = mul_shoup_lazy(l, l.sub(l.add(u, two_q), v), last, qv);
        l.store(x, csub(l, sum, qv));
        l.store(y, csub(l, diff, qv));
    }
}
