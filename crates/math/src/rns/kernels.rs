//! FastBConv's inner loops, for [`dispatch`](crate::simd::dispatch): the sum over the source
//! limbs of scaled residues times the constants Q/q_i mod p_j, as a scalar loop and in vector
//! lanes. Both give the unique residues in [0, p_j), so every instruction set agrees word for
//! word.

use super::BaseConverter;
use crate::simd::lanes::{
    add_mod, csub, mul_shoup_lazy, mul_wide, reduce_u64_wide, reduce_wide, widen, ModVec, ShoupVec,
};
use crate::simd::{Kernel, Lanes};

/// Number of 60-bit products that fit a u64 accumulator together with a reduced carry:
/// 16 (2^30 - 1)^2 + 2^30 < 2^64.
const PRODUCTS_PER_REDUCTION: usize = 16;

/// Source limbs up to which [`BaseConverter::accumulate_lanes`] sums Shoup products (about 14
/// vector instructions each, and nothing at the end) rather than 64-bit products (about 5
/// each, and a 64-bit reduction of about 45 at the end): below 7 limbs the first is fewer.
/// At most 4, so that the centred correction, at most this many times [-Q]_p, fits 32 bits.
const SHOUP_SOURCES: usize = 4;

/// Coefficients converted per block: the block's scaled residues (from.len() x BLOCK words)
/// stay in cache while every output limb reads them; also the scalar loop's accumulator size.
const BLOCK: usize = 128;

/// Coefficients of target limb `j` to sum: `out.len()` of them, source limb i's scaled
/// residues starting at `scaled[i * stride + start]`; `centred` as in
/// [`BaseConverter::accumulate_centred_on`].
pub(super) struct Accumulation<'a> {
    pub j: usize,
    pub scaled: &'a [u32],
    pub stride: usize,
    pub start: usize,
    pub out: &'a mut [u32],
    pub centred: bool,
}

impl BaseConverter {
    /// The conversion of `n` coefficients, lengths checked by [`BaseConverter::convert_on`]:
    /// block by block, each source limb scaled once, then every target limb summed from the
    /// block while it is in cache.
    #[inline(always)]
    fn convert_checked(&self, input: &[u32], output: &mut [u32], n: usize, accumulate: impl Fn(Accumulation<'_>)) {
        let block = BLOCK.min(n);
        // scaled[i * block + c] = [x_i * q_hat_inv_i]_{q_i} for the current block.
        let mut scaled = vec![0u32; self.from.len() * block];
        let mut start = 0;
        while start < n {
            let width = block.min(n - start);
            for (i, q) in self.from.moduli.iter().enumerate() {
                let w = self.from.q_hat_inv[i];
                let w_shoup = self.from.q_hat_inv_shoup[i];
                let src = &input[i * n + start..i * n + start + width];
                let dst = &mut scaled[i * block..i * block + width];
                for (d, &x) in dst.iter_mut().zip(src) {
                    *d = q.mul_shoup(x, w, w_shoup);
                }
            }
            for j in 0..self.to.len() {
                let out = &mut output[j * n + start..j * n + start + width];
                accumulate(Accumulation { j, scaled: &scaled, stride: block, start: 0, out, centred: false });
            }
            start += width;
        }
    }

    /// The scalar loop over at most [`BLOCK`] coefficients: 64-bit sums, folded every 16
    /// products, and a 64-bit Barrett reduction per coefficient.
    #[inline(always)]
    fn accumulate_scalar(&self, Accumulation { j, scaled, stride, start, out, centred }: Accumulation<'_>) {
        let l = self.from.len();
        let p = &self.to.moduli[j];
        let row = &self.q_hat_mod_p[j * l..(j + 1) * l];
        let width = out.len();
        let mut acc = [0u64; BLOCK];
        let acc = &mut acc[..width];
        let mut above = [0u32; BLOCK];
        let above = &mut above[..width];
        for (chunk_index, chunk) in row.chunks(PRODUCTS_PER_REDUCTION).enumerate() {
            if chunk_index > 0 {
                // Fold the running sum back below p so 16 more products fit.
                for a in acc.iter_mut() {
                    *a = p.reduce_u64(*a) as u64;
                }
            }
            for (offset, &m) in chunk.iter().enumerate() {
                let i = chunk_index * PRODUCTS_PER_REDUCTION + offset;
                let src = &scaled[i * stride + start..i * stride + start + width];
                for (a, &t) in acc.iter_mut().zip(src) {
                    *a += t as u64 * m as u64;
                }
                if centred {
                    let half = self.from.moduli[i].value() / 2;
                    for (count, &t) in above.iter_mut().zip(src) {
                        *count += u32::from(t > half);
                    }
                }
            }
        }
        let minus_q = u64::from(self.minus_q_mod_p[j]);
        for ((d, &a), &count) in out.iter_mut().zip(acc.iter()).zip(above.iter()) {
            *d = p.reduce_u64(a);
            if centred {
                *d = p.add(*d, p.reduce_u64(u64::from(count) * minus_q));
            }
        }
    }

    /// The sums in vector lanes, `L::WIDTH` coefficients at a time over any number of them.
    /// From at most [`SHOUP_SOURCES`] limbs (a rescale's, most ModDowns') each product is a
    /// Shoup product by the constant's precomputed quotient. From more, their 64-bit sums stay
    /// in registers over all source limbs and are reduced once in lanes ([`reduce_u64_wide`]),
    /// where the scalar loop's 64-bit Barrett reduction per coefficient (a product by a 64-bit
    /// constant, which vectors lack) cost most of a conversion. Targets p < 2^16 and a last
    /// partial vector take the scalar loop.
    #[inline(always)]
    fn accumulate_lanes<L: Lanes>(
        &self,
        l: L,
        Accumulation { j, scaled, stride, start, out, centred }: Accumulation<'_>,
    ) {
        let p = &self.to.moduli[j];
        let width = out.len();
        let vectors = if p.bits() > 16 { width - width % L::WIDTH } else { 0 };
        let row = &self.q_hat_mod_p[j * self.from.len()..(j + 1) * self.from.len()];
        let m = ModVec::new(l, p);
        let minus_q = l.splat(self.minus_q_mod_p[j]);
        if self.from.len() <= SHOUP_SOURCES {
            let shoup_row = &self.q_hat_mod_p_shoup[j * self.from.len()..(j + 1) * self.from.len()];
            for c in (0..vectors).step_by(L::WIDTH) {
                // Each product lazily in [0, 2p); the sum kept below 2p, so sum plus product stays
                // below 4p < 2^32.
                let (mut sum, mut above) = (l.splat(0), l.splat(0));
                for (i, (&factor, &factor_shoup)) in row.iter().zip(shoup_row).enumerate() {
                    let t = l.load(&scaled[i * stride + start + c..]);
                    let product = mul_shoup_lazy(l, t, ShoupVec::splat(l, factor, factor_shoup), m.q);
                    sum = csub(l, l.add(sum, product), m.two_q);
                    if centred {
                        above = l.add(above, centred_above(l, t, self.from.moduli[i].value() / 2));
                    }
                }
                let mut sum = csub(l, sum, m.q);
                if centred {
                    // above [-Q]_p < 4p < 2^32 (p < 2^30): exact in 32 bits, then reduced.
                    let correction = l.mul_lo(above, minus_q);
                    sum = add_mod(l, &m, sum, csub(l, csub(l, correction, m.two_q), m.q));
                }
                l.store(&mut out[c..], sum);
            }
        } else {
            let two_32 = l.splat(p.reduce_u64(1 << 32));
            for c in (0..vectors).step_by(L::WIDTH) {
                let (mut even, mut odd) = (l.splat(0), l.splat(0));
                let mut above = l.splat(0);
                for (i, &factor) in row.iter().enumerate() {
                    if i > 0 && i % PRODUCTS_PER_REDUCTION == 0 {
                        // Fold the running sums back below p so 16 more products fit.
                        (even, odd) = widen(l, reduce_u64_wide(l, &m, two_32, (even, odd)));
                    }
                    let t = l.load(&scaled[i * stride + start + c..]);
                    let (products_even, products_odd) = mul_wide(l, t, l.splat(factor));
                    (even, odd) = (l.add64(even, products_even), l.add64(odd, products_odd));
                    if centred {
                        above = l.add(above, centred_above(l, t, self.from.moduli[i].value() / 2));
                    }
                }
                let mut sum = reduce_u64_wide(l, &m, two_32, (even, odd));
                if centred {
                    // above [-Q]_p < L p < 2 p^2, so one Barrett reduction finishes it.
                    sum = add_mod(l, &m, sum, reduce_wide(l, &m, mul_wide(l, above, minus_q)));
                }
                l.store(&mut out[c..], sum);
            }
        }
        let out = &mut out[vectors..];
        self.accumulate_scalar_blocks(Accumulation { j, scaled, stride, start: start + vectors, out, centred });
    }

    /// [`BaseConverter::accumulate_scalar`] over any number of coefficients, [`BLOCK`] at a time.
    #[inline(always)]
    fn accumulate_scalar_blocks(&self, Accumulation { j, scaled, stride, start, out, centred }: Accumulation<'_>) {
        for (block, out) in out.chunks_mut(BLOCK).enumerate() {
            let start = start + block * BLOCK;
            self.accumulate_scalar(Accumulation { j, scaled, stride, start, out, centred });
        }
    }
}

/// 1 in the lanes where `t` > `half` (a residue whose centred form is negative), else 0:
/// min(t, half + 1) exceeds min(t, half) by one exactly there.
#[inline(always)]
fn centred_above<L: Lanes>(l: L, t: L::V, half: u32) -> L::V {
    let capped = l.min(t, l.splat(half + 1));
    l.sub(capped, l.min(capped, l.splat(half)))
}

/// One conversion ([`BaseConverter::convert_on`]), for `dispatch`.
pub(super) struct Convert<'a> {
    pub converter: &'a BaseConverter,
    pub input: &'a [u32],
    pub output: &'a mut [u32],
    pub n: usize,
}

impl Kernel for Convert<'_> {
    fn scalar(self) {
        let converter = self.converter;
        converter.convert_checked(self.input, self.output, self.n, |block| converter.accumulate_scalar(block))
    }

    #[inline(always)]
    fn lanes<L: Lanes>(self, l: L) {
        let converter = self.converter;
        converter.convert_checked(self.input, self.output, self.n, |block| converter.accumulate_lanes(l, block))
    }
}

/// One target limb from scaled residues ([`BaseConverter::accumulate_on`] and its centred
/// form), for `dispatch`.
pub(super) struct Accumulate<'a> {
    pub converter: &'a BaseConverter,
    pub to_index: usize,
    pub scaled: &'a [u32],
    pub out: &'a mut [u32],
    pub centred: bool,
}

impl Kernel for Accumulate<'_> {
    fn scalar(self) {
        let Self { converter, to_index: j, scaled, out, centred } = self;
        let stride = out.len();
        converter.accumulate_scalar_blocks(Accumulation { j, scaled, stride, start: 0, out, centred });
    }

    #[inline(always)]
    fn lanes<L: Lanes>(self, l: L) {
        let Self { converter, to_index: j, scaled, out, centred } = self;
        let stride = out.len();
        converter.accumulate_lanes(l, Accumulation { j, scaled, stride, start: 0, out, centred });
    }
}
