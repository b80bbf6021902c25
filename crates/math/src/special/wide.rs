//! The wide words of the special-moduli arithmetic: [`Wide`] (256 bits) holds a residue of any
//! modulus up to [`MAX_MODULUS_BITS`] bits, [`WideProduct`] (512 bits) the full product of two
//! residues. Both are `crypto_bigint` fixed-width integers: no heap, no carries that depend on
//! the values, so the helpers below are branch-free in the data.

use crypto_bigint::{Limb, Uint, Word, U256, U512};

/// A residue: 256 bits, enough for moduli below 2^[`MAX_MODULUS_BITS`] with room for a sum.
pub type Wide = U256;
/// The product of two residues: 512 bits (the paper's widest modulus, 2^220 + 1, gives 442-bit
/// products; Barrett's intermediate q1 * mu needs 2k + 2 bits).
pub type WideProduct = U512;

/// The largest modulus width, in bits, that the wide arithmetic accepts. Barrett's estimate
/// q1 * mu has up to 2k + 2 bits and must fit [`WideProduct`]; a sum of two residues and 3m (the
/// Barrett remainder before correction) must fit [`Wide`]. 248 leaves a few bits to spare.
pub const MAX_MODULUS_BITS: u32 = 248;

/// All-ones in every limb when `flag` is 1, zero when it is 0 (no branch).
#[inline(always)]
pub(crate) fn mask_of<const L: usize>(flag: Word) -> Uint<L> {
    Uint::<L>::from_words([flag.wrapping_neg(); L])
}

/// `if_set` when `flag` is set, `if_clear` otherwise, by masks (no branch on the flag, which
/// may be secret: the sign of a key's coefficient).
///
/// ```
/// use pimhe_math::special::wide::select;
/// use pimhe_math::special::Wide;
/// let (a, b) = (Wide::from_u64(7), Wide::from_u64(9));
/// assert_eq!((select(true, &a, &b), select(false, &a, &b)), (a, b));
/// ```
#[inline(always)]
pub fn select<const L: usize>(flag: bool, if_set: &Uint<L>, if_clear: &Uint<L>) -> Uint<L> {
    let mask = mask_of::<L>(Word::from(flag));
    if_set.bitand(&mask).bitor(&if_clear.bitand(&mask.not()))
}

/// x - m if x >= m, else x; constant-time (a borrow mask, not a branch). Needs x < 2^(bits of
/// the type) and m < 2^(bits - 1) so that the difference is meaningful.
#[inline(always)]
pub(crate) fn csub<const L: usize>(x: &Uint<L>, m: &Uint<L>) -> Uint<L> {
    let (d, borrow) = x.borrowing_sub(m, Limb::ZERO);
    // borrow is all-ones on underflow: add m back exactly then.
    d.wrapping_add(&m.bitand(&mask_of::<L>(borrow.0 >> (Word::BITS - 1))))
}

/// (x - y) mod m for x, y in [0, m); constant-time.
#[inline(always)]
pub(crate) fn sub_mod<const L: usize>(x: &Uint<L>, y: &Uint<L>, m: &Uint<L>) -> Uint<L> {
    let (d, borrow) = x.borrowing_sub(y, Limb::ZERO);
    d.wrapping_add(&m.bitand(&mask_of::<L>(borrow.0 >> (Word::BITS - 1))))
}

/// 2^e as a wide word (e below the type's width).
#[inline]
pub fn pow2<const L: usize>(e: u32) -> Uint<L> {
    Uint::<L>::ONE.shl_vartime(e)
}

/// 2^g - 1: the low-g-bits mask.
#[inline]
pub fn low_mask<const L: usize>(g: u32) -> Uint<L> {
    pow2::<L>(g).wrapping_sub(&Uint::<L>::ONE)
}

/// The low 256 bits of a product.
#[inline(always)]
pub(crate) fn low(x: &WideProduct) -> Wide {
    x.resize::<{ Wide::LIMBS }>()
}

/// A residue widened to a product-sized word.
#[inline(always)]
pub(crate) fn widen(x: &Wide) -> WideProduct {
    x.resize::<{ WideProduct::LIMBS }>()
}

/// The full 512-bit product a * b: 4 x 4 limb schoolbook on u128, no data-dependent branch
/// (measured faster than the generic Karatsuba path of `concatenating_mul` at this size).
#[inline(always)]
pub(crate) fn mul_wide(a: &Wide, b: &Wide) -> WideProduct {
    let (a, b) = (a.as_words(), b.as_words());
    let mut out = [0u64; 8];
    for (i, &ai) in a.iter().enumerate() {
        let mut carry = 0u128;
        for (j, &bj) in b.iter().enumerate() {
            let t = ai as u128 * bj as u128 + out[i + j] as u128 + carry;
            out[i + j] = t as u64;
            carry = t >> 64;
        }
        out[i + 4] = carry as u64;
    }
    WideProduct::from_words(out)
}

/// A wide word from little-endian 64-bit words (missing words are zero). Panics if a word
/// beyond the fourth is non-zero. Meant for tests and conversions, not hot paths.
pub fn wide_from_u64_words(words: &[u64]) -> Wide {
    assert!(words.iter().skip(4).all(|&w| w == 0), "value does not fit 256 bits");
    let mut out = [0u64; 4];
    for (o, &w) in out.iter_mut().zip(words) {
        *o = w;
    }
    Wide::from_words(out)
}

/// The little-endian 64-bit words of a wide word.
pub fn wide_to_u64_words(x: &Wide) -> [u64; 4] {
    x.to_words()
}

// The word conversions above and the limb counts assume 64-bit limbs.
const _: () = assert!(Word::BITS == 64);
