//! [`Lanes`]: the handful of vector instructions the kernels are written in, and its AVX2 and
//! AVX-512 implementations, plus the modular arithmetic built from them.

use std::mem::MaybeUninit;

/// A vector of `WIDTH` u32 lanes and the instructions the kernels need. Implemented by tokens
/// that exist only once the CPU is known to support the instruction set, so the methods are
/// safe; every method is `#[inline(always)]` so it compiles into the caller's
/// `#[target_feature]` function (see [`super::dispatch`]).
pub(crate) trait Lanes: Copy {
    type V: Copy;
    const WIDTH: usize;
    /// The first `WIDTH` values of `src`; panics if `src` is shorter.
    fn load(self, src: &[u32]) -> Self::V;
    /// Writes the lanes to the first `WIDTH` values of `dst`; panics if `dst` is shorter.
    fn store(self, dst: &mut [u32], v: Self::V);
    /// Writes the lanes to the first `WIDTH` values of `dst` with a non-temporal store, which
    /// goes to memory without first reading the line into the caches; `dst` must start on a
    /// vector-size boundary (panics otherwise, or if it is shorter). Such stores are weakly
    /// ordered: a run of them ends with [`Lanes::fence_streams`].
    fn store_stream(self, dst: &mut [MaybeUninit<u32>], v: Self::V);
    /// Orders every earlier streaming store before any later store (`sfence`), so another
    /// thread that is handed the memory afterwards sees the values.
    fn fence_streams(self);
    fn splat(self, x: u32) -> Self::V;
    /// Wrapping 32-bit add, subtract, and low half of the product; unsigned minimum.
    fn add(self, a: Self::V, b: Self::V) -> Self::V;
    fn sub(self, a: Self::V, b: Self::V) -> Self::V;
    fn mul_lo(self, a: Self::V, b: Self::V) -> Self::V;
    fn min(self, a: Self::V, b: Self::V) -> Self::V;
    /// Full 64-bit products of the even 32-bit lanes, as 64-bit lanes (odd lanes ignored).
    fn mul_even(self, a: Self::V, b: Self::V) -> Self::V;
    /// 64-bit lane add and logical shifts.
    fn add64(self, a: Self::V, b: Self::V) -> Self::V;
    fn shr64(self, a: Self::V, bits: u32) -> Self::V;
    fn shl64(self, a: Self::V, bits: u32) -> Self::V;
    /// Even 32-bit lanes from `even`, odd lanes from `odd`.
    fn blend_odd(self, even: Self::V, odd: Self::V) -> Self::V;
    /// Lane i is lane `idx[i] mod WIDTH` of `v` (the low bits of each index select).
    fn permute(self, v: Self::V, idx: Self::V) -> Self::V;
    /// The AVX2 token, for the transforms' last stages, which are written for 8 lanes.
    #[cfg(target_arch = "x86_64")]
    fn avx2(self) -> Avx2;
    /// The AVX-512 token where these lanes are AVX-512's (the transforms' 16-lane last stages).
    #[cfg(target_arch = "x86_64")]
    fn avx512(self) -> Option<Avx512>;
}

/// `x - m` where `x >= m`, else `x`: branch-free as `min(x, x - m)`, because `x - m` wraps to a
/// value above `x` exactly when `x < m` (needs `m <= 2^31`).
#[inline(always)]
pub(crate) fn csub<L: Lanes>(l: L, x: L::V, m: L::V) -> L::V {
    l.min(x, l.sub(x, m))
}

/// High 32 bits of a * b per lane; `b_odd` holds b's odd lanes in its even positions (for a
/// broadcast b it is b itself, saving a shift).
#[inline(always)]
pub(crate) fn mul_hi<L: Lanes>(l: L, a: L::V, b: L::V, b_odd: L::V) -> L::V {
    let even = l.shr64(l.mul_even(a, b), 32);
    let odd = l.mul_even(l.shr64(a, 32), b_odd);
    l.blend_odd(even, odd)
}

/// A fixed multiplicand w < q with Shoup's quotient, in lanes.
#[derive(Clone, Copy)]
pub(crate) struct ShoupVec<V> {
    pub w: V,
    pub shoup: V,
    /// `shoup`'s odd lanes moved to the even positions (see [`mul_hi`]).
    pub shoup_odd: V,
}

impl<V: Copy> ShoupVec<V> {
    /// One constant w in every lane (`shoup = Modulus::shoup(w)`).
    #[inline(always)]
    pub(crate) fn splat<L: Lanes<V = V>>(l: L, w: u32, shoup: u32) -> Self {
        let shoup = l.splat(shoup);
        Self { w: l.splat(w), shoup, shoup_odd: shoup }
    }

    /// Lane-wise constants from `WIDTH` values of `w` and of their Shoup quotients.
    #[inline(always)]
    pub(crate) fn load<L: Lanes<V = V>>(l: L, w: &[u32], shoup: &[u32]) -> Self {
        let shoup = l.load(shoup);
        Self { w: l.load(w), shoup, shoup_odd: l.shr64(shoup, 32) }
    }
}

/// a * w mod q in [0, 2q) for any a (Shoup; the lane form of `Modulus::mul_shoup_lazy`).
#[inline(always)]
pub(crate) fn mul_shoup_lazy<L: Lanes>(l: L, a: L::V, w: ShoupVec<L::V>, q: L::V) -> L::V {
    let quotient = mul_hi(l, a, w.shoup, w.shoup_odd);
    l.sub(l.mul_lo(a, w.w), l.mul_lo(quotient, q))
}

/// A modulus in lanes, with the constants of a Barrett reduction of 64-bit products.
///
/// The scalar path (`Modulus::reduce_u64`) multiplies by a 64-bit constant, which vectors lack;
/// this one needs only 32x32->64 products: with s = bits(q) and mu = floor(2^(2s) / q) < 2^32,
/// the quotient estimate floor(floor(x / 2^(s-1)) * mu / 2^(s+1)) is at most 3 below
/// floor(x / q) for x < 2 q^2 (the error terms sum below 3), so the remainder is in [0, 4q)
/// and two conditional subtractions finish it. Results equal the scalar ones exactly: both are
/// the unique residue in [0, q).
#[derive(Clone, Copy)]
pub(crate) struct ModVec<V> {
    pub q: V,
    pub two_q: V,
    mu: V,
    /// s - 1 and s + 1, the shifts of the Barrett estimate.
    shift_in: u32,
    shift_out: u32,
}

impl<V: Copy> ModVec<V> {
    #[inline(always)]
    pub(crate) fn new<L: Lanes<V = V>>(l: L, q: &crate::Modulus) -> Self {
        let s = q.bits();
        let mu = ((1u64 << (2 * s)) / q.value() as u64) as u32;
        Self {
            q: l.splat(q.value()),
            two_q: l.splat(2 * q.value()),
            mu: l.splat(mu),
            shift_in: s - 1,
            shift_out: s + 1,
        }
    }
}

/// (a + b) mod q for a, b < q.
#[inline(always)]
pub(crate) fn add_mod<L: Lanes>(l: L, m: &ModVec<L::V>, a: L::V, b: L::V) -> L::V {
    csub(l, l.add(a, b), m.q)
}

/// (a - b) mod q for a, b < q.
#[inline(always)]
pub(crate) fn sub_mod<L: Lanes>(l: L, m: &ModVec<L::V>, a: L::V, b: L::V) -> L::V {
    csub(l, l.sub(l.add(a, m.q), b), m.q)
}

/// 64-bit products of the even lanes of a and b, and of the odd lanes (moved to even positions).
#[inline(always)]
pub(crate) fn mul_wide<L: Lanes>(l: L, a: L::V, b: L::V) -> (L::V, L::V) {
    (l.mul_even(a, b), l.mul_even(l.shr64(a, 32), l.shr64(b, 32)))
}

/// The 32-bit lanes of `c` zero-extended to 64 bits: even lanes, then odd lanes.
#[inline(always)]
pub(crate) fn widen<L: Lanes>(l: L, c: L::V) -> (L::V, L::V) {
    (l.blend_odd(c, l.splat(0)), l.shr64(c, 32))
}

/// x mod q in [0, q) for 64-bit lanes x < 2 q^2, given as even and odd halves (see
/// [`ModVec`]).
#[inline(always)]
pub(crate) fn reduce_wide<L: Lanes>(l: L, m: &ModVec<L::V>, (even, odd): (L::V, L::V)) -> L::V {
    let quotient_even = l.shr64(l.mul_even(l.shr64(even, m.shift_in), m.mu), m.shift_out);
    let quotient_odd = l.shr64(l.mul_even(l.shr64(odd, m.shift_in), m.mu), m.shift_out);
    let quotient = l.blend_odd(quotient_even, l.shl64(quotient_odd, 32));
    let low = l.blend_odd(even, l.shl64(odd, 32));
    // The remainder is below 4q < 2^32, so its low 32 bits are all of it.
    let r = l.sub(low, l.mul_lo(quotient, m.q));
    csub(l, csub(l, r, m.two_q), m.q)
}

/// x mod q in [0, q) for any 64-bit lanes x (even and odd halves, as [`mul_wide`] makes them),
/// for q > 2^16; `two_32` holds [2^32]_q in every lane. [`reduce_wide`] needs x < 2 q^2, so x =
/// hi 2^32 + lo is folded first: [hi]_q (hi < 2^32 < 2 q^2), then [hi]_q [2^32]_q + lo <
/// q^2 + 2^32 < 2 q^2, the bound for q > 2^16.
#[inline(always)]
pub(crate) fn reduce_u64_wide<L: Lanes>(l: L, m: &ModVec<L::V>, two_32: L::V, (even, odd): (L::V, L::V)) -> L::V {
    let high = reduce_wide(l, m, (l.shr64(even, 32), l.shr64(odd, 32)));
    let (high_even, high_odd) = mul_wide(l, high, two_32);
    let zero = l.splat(0);
    let (low_even, low_odd) = (l.blend_odd(even, zero), l.blend_odd(odd, zero));
    reduce_wide(l, m, (l.add64(high_even, low_even), l.add64(high_odd, low_odd)))
}

#[cfg(target_arch = "x86_64")]
pub(crate) use x86::{Avx2, Avx512};

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;
    use std::mem::MaybeUninit;

    use super::Lanes;

    /// Proof that the CPU supports AVX2: made only by [`Avx2::new`] after detection.
    #[derive(Clone, Copy)]
    pub(crate) struct Avx2(());

    impl Avx2 {
        #[inline]
        pub(crate) fn new() -> Option<Self> {
            is_x86_feature_detected!("avx2").then_some(Self(()))
        }
    }

    /// Proof that the CPU supports AVX-512F and AVX2: made only by [`Avx512::new`].
    #[derive(Clone, Copy)]
    pub(crate) struct Avx512(());

    impl Avx512 {
        #[inline]
        pub(crate) fn new() -> Option<Self> {
            (is_x86_feature_detected!("avx512f") && is_x86_feature_detected!("avx2")).then_some(Self(()))
        }
    }

    // SAFETY (every `unsafe` block in this impl): an `Avx2` value exists only after
    // `is_x86_feature_detected!("avx2")` returned true, so the AVX2 intrinsics are supported;
    // loads and stores touch exactly the 8 values of a slice whose length (and, streaming, whose
    // alignment) was asserted.
    impl Lanes for Avx2 {
        type V = __m256i;
        const WIDTH: usize = 8;

        #[inline(always)]
        fn load(self, src: &[u32]) -> __m256i {
            assert!(src.len() >= 8);
            unsafe { _mm256_loadu_si256(src.as_ptr().cast()) }
        }
        #[inline(always)]
        fn store(self, dst: &mut [u32], v: __m256i) {
            assert!(dst.len() >= 8);
            unsafe { _mm256_storeu_si256(dst.as_mut_ptr().cast(), v) }
        }
        #[inline(always)]
        fn store_stream(self, dst: &mut [MaybeUninit<u32>], v: __m256i) {
            assert!(dst.len() >= 8 && (dst.as_ptr() as usize).is_multiple_of(32));
            unsafe { _mm256_stream_si256(dst.as_mut_ptr().cast(), v) }
        }
        #[inline(always)]
        fn fence_streams(self) {
            unsafe { _mm_sfence() }
        }
        #[inline(always)]
        fn splat(self, x: u32) -> __m256i {
            unsafe { _mm256_set1_epi32(x as i32) }
        }
        #[inline(always)]
        fn add(self, a: __m256i, b: __m256i) -> __m256i {
            unsafe { _mm256_add_epi32(a, b) }
        }
        #[inline(always)]
        fn sub(self, a: __m256i, b: __m256i) -> __m256i {
            unsafe { _mm256_sub_epi32(a, b) }
        }
        #[inline(always)]
        fn mul_lo(self, a: __m256i, b: __m256i) -> __m256i {
            unsafe { _mm256_mullo_epi32(a, b) }
        }
        #[inline(always)]
        fn min(self, a: __m256i, b: __m256i) -> __m256i {
            unsafe { _mm256_min_epu32(a, b) }
        }
        #[inline(always)]
        fn mul_even(self, a: __m256i, b: __m256i) -> __m256i {
            unsafe { _mm256_mul_epu32(a, b) }
        }
        #[inline(always)]
        fn add64(self, a: __m256i, b: __m256i) -> __m256i {
            unsafe { _mm256_add_epi64(a, b) }
        }
        #[inline(always)]
        fn shr64(self, a: __m256i, bits: u32) -> __m256i {
            unsafe { _mm256_srl_epi64(a, _mm_cvtsi32_si128(bits as i32)) }
        }
        #[inline(always)]
        fn shl64(self, a: __m256i, bits: u32) -> __m256i {
            unsafe { _mm256_sll_epi64(a, _mm_cvtsi32_si128(bits as i32)) }
        }
        #[inline(always)]
        fn blend_odd(self, even: __m256i, odd: __m256i) -> __m256i {
            unsafe { _mm256_blend_epi32::<0b1010_1010>(even, odd) }
        }
        #[inline(always)]
        fn permute(self, v: __m256i, idx: __m256i) -> __m256i {
            // vpermd reads the low 3 bits of each index.
            unsafe { _mm256_permutevar8x32_epi32(v, idx) }
        }
        #[inline(always)]
        fn avx2(self) -> Avx2 {
            self
        }
        #[inline(always)]
        fn avx512(self) -> Option<Avx512> {
            None
        }
    }

    // SAFETY (every `unsafe` block in this impl): an `Avx512` value exists only after
    // AVX-512F and AVX2 were detected; loads and stores touch exactly the 16 values of a slice
    // whose length (and, streaming, whose alignment) was asserted.
    impl Lanes for Avx512 {
        type V = __m512i;
        const WIDTH: usize = 16;

        #[inline(always)]
        fn load(self, src: &[u32]) -> __m512i {
            assert!(src.len() >= 16);
            unsafe { _mm512_loadu_si512(src.as_ptr().cast()) }
        }
        #[inline(always)]
        fn store(self, dst: &mut [u32], v: __m512i) {
            assert!(dst.len() >= 16);
            unsafe { _mm512_storeu_si512(dst.as_mut_ptr().cast(), v) }
        }
        #[inline(always)]
        fn store_stream(self, dst: &mut [MaybeUninit<u32>], v: __m512i) {
            assert!(dst.len() >= 16 && (dst.as_ptr() as usize).is_multiple_of(64));
            unsafe { _mm512_stream_si512(dst.as_mut_ptr().cast(), v) }
        }
        #[inline(always)]
        fn fence_streams(self) {
            unsafe { _mm_sfence() }
        }
        #[inline(always)]
        fn splat(self, x: u32) -> __m512i {
            unsafe { _mm512_set1_epi32(x as i32) }
        }
        #[inline(always)]
        fn add(self, a: __m512i, b: __m512i) -> __m512i {
            unsafe { _mm512_add_epi32(a, b) }
        }
        #[inline(always)]
        fn sub(self, a: __m512i, b: __m512i) -> __m512i {
            unsafe { _mm512_sub_epi32(a, b) }
        }
        #[inline(always)]
        fn mul_lo(self, a: __m512i, b: __m512i) -> __m512i {
            unsafe { _mm512_mullo_epi32(a, b) }
        }
        #[inline(always)]
        fn min(self, a: __m512i, b: __m512i) -> __m512i {
            unsafe { _mm512_min_epu32(a, b) }
        }
        #[inline(always)]
        fn mul_even(self, a: __m512i, b: __m512i) -> __m512i {
            unsafe { _mm512_mul_epu32(a, b) }
        }
        #[inline(always)]
        fn add64(self, a: __m512i, b: __m512i) -> __m512i {
            unsafe { _mm512_add_epi64(a, b) }
        }
        #[inline(always)]
        fn shr64(self, a: __m512i, bits: u32) -> __m512i {
            unsafe { _mm512_srl_epi64(a, _mm_cvtsi32_si128(bits as i32)) }
        }
        #[inline(always)]
        fn shl64(self, a: __m512i, bits: u32) -> __m512i {
            unsafe { _mm512_sll_epi64(a, _mm_cvtsi32_si128(bits as i32)) }
        }
        #[inline(always)]
        fn blend_odd(self, even: __m512i, odd: __m512i) -> __m512i {
            unsafe { _mm512_mask_blend_epi32(0xAAAA, even, odd) }
        }
        #[inline(always)]
        fn permute(self, v: __m512i, idx: __m512i) -> __m512i {
            // vpermd reads the low 4 bits of each index.
            unsafe { _mm512_permutexvar_epi32(idx, v) }
        }
        #[inline(always)]
        fn avx2(self) -> Avx2 {
            Avx2(())
        }
        #[inline(always)]
        fn avx512(self) -> Option<Avx512> {
            Some(self)
        }
    }
}
