//! Shared helpers of the special-moduli tests: conversions between the wide words and
//! num-bigint (the oracle), seeded random values and the edge inputs of each modulus.

#![allow(dead_code)]

use num_bigint::BigUint;
use num_traits::{One, Zero};
use pimhe_math::special::wide::{wide_from_u64_words, wide_to_u64_words};
use pimhe_math::special::{SpecialForm, SpecialModulus, Wide};
use rand_chacha::rand_core::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;

/// The widths the tests cover: small ones exhaustively where possible, and the paper's.
pub const WIDTHS: [u32; 11] = [3, 4, 5, 6, 7, 8, 61, 64, 110, 146, 220];
pub const FORMS: [SpecialForm; 3] = [SpecialForm::Mersenne, SpecialForm::PowerOfTwo, SpecialForm::FermatLike];

pub fn to_big(x: &Wide) -> BigUint {
    BigUint::from_slice(&wide_to_u64_words(x).iter().flat_map(|w| [*w as u32, (w >> 32) as u32]).collect::<Vec<u32>>())
}

pub fn to_big_product(x: &pimhe_math::special::WideProduct) -> BigUint {
    BigUint::from_slice(&x.to_words().iter().flat_map(|w| [*w as u32, (w >> 32) as u32]).collect::<Vec<u32>>())
}

pub fn from_big(x: &BigUint) -> Wide {
    wide_from_u64_words(&x.to_u64_digits())
}

pub fn product_from_big(x: &BigUint) -> pimhe_math::special::WideProduct {
    let mut words = [0u64; 8];
    for (w, d) in words.iter_mut().zip(x.to_u64_digits()) {
        *w = d;
    }
    pimhe_math::special::WideProduct::from_words(words)
}

pub fn pow2(e: u32) -> BigUint {
    BigUint::one() << e
}

/// The modulus value, from its definition.
pub fn big_modulus(form: SpecialForm, g: u32) -> BigUint {
    match form {
        SpecialForm::Mersenne => pow2(g) - 1u32,
        SpecialForm::PowerOfTwo => pow2(g),
        SpecialForm::FermatLike => pow2(g) + 1u32,
    }
}

pub fn rng(seed: u64) -> ChaCha20Rng {
    ChaCha20Rng::seed_from_u64(seed)
}

/// A uniform-ish value below `bound` (bound <= 2^512).
pub fn random_below(rng: &mut ChaCha20Rng, bound: &BigUint) -> BigUint {
    let words: Vec<u32> = (0..20).map(|_| rng.next_u32()).collect();
    BigUint::from_slice(&words) % bound
}

/// Residues that sit on edges: 0, 1, 2, m - 2, m - 1, 2^(g-1) +- 1, 2^g - 1 and 2^g when below m.
pub fn edge_residues(m: &BigUint, g: u32) -> Vec<BigUint> {
    let mut v = vec![BigUint::zero(), BigUint::one(), BigUint::from(2u32)];
    for c in [m - 2u32, m - 1u32, pow2(g - 1) - 1u32, pow2(g - 1), pow2(g - 1) + 1u32, pow2(g) - 1u32, pow2(g)] {
        if &c < m {
            v.push(c);
        }
    }
    v.sort();
    v.dedup();
    v
}

/// Product-range edges: below m^2, around m, around k m, (m - 1)^2, m^2 - 1, 2^(2g) - 1.
pub fn edge_products(m: &BigUint, g: u32) -> Vec<BigUint> {
    let m2 = m * m;
    let mut v = vec![
        BigUint::zero(),
        BigUint::one(),
        m - 1u32,
        m.clone(),
        m + 1u32,
        m * 2u32 - 1u32,
        m * 2u32,
        m * 2u32 + 1u32,
        pow2(g) - 1u32,
        pow2(g),
        pow2(g) + 1u32,
        (m - 1u32) * (m - 1u32),
        &m2 - 1u32,
        &m2 - m,
        &m2 - m - 1u32,
        pow2(2 * g) - 1u32,
        pow2(2 * g),
        pow2(g) * (m - 1u32),
    ];
    v.retain(|x| x < &m2);
    v.sort();
    v.dedup();
    v
}

pub fn special(form: SpecialForm, g: u32) -> SpecialModulus {
    SpecialModulus::new(form, g).unwrap()
}

/// Miller-Rabin with fixed witnesses, written on num-bigint (an oracle independent of the
/// library's wide implementation).
pub fn big_is_prime(n: &BigUint) -> bool {
    let two = BigUint::from(2u32);
    if n < &two {
        return false;
    }
    for p in [2u32, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37] {
        if n == &BigUint::from(p) {
            return true;
        }
        if (n % p).is_zero() {
            return false;
        }
    }
    let n1 = n - 1u32;
    let s = n1.trailing_zeros().unwrap();
    let d = &n1 >> s;
    'w: for a in [2u32, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53] {
        let mut x = BigUint::from(a).modpow(&d, n);
        if x.is_one() || x == n1 {
            continue;
        }
        for _ in 1..s {
            x = x.modpow(&two, n);
            if x == n1 {
                continue 'w;
            }
        }
        return false;
    }
    true
}
