//! The paper's custom CPU code as this host runs it: Fig. 1's "CPU" column is Gupta et al.'s
//! own code (4.1: "our own custom CPU ... implementations"), which keeps a coefficient modulo
//! one q in one 32-, 64- or 128-bit integer (section 3) and multiplies ciphertexts without NTT
//! (4.2). Its source is not published; this is the same arithmetic written plainly, timed on the
//! threads of the run, so that the textbook rows compare one algorithm on both sides:
//!
//! - **Multiply**: four textbook negacyclic products (a0 b0, a0 b1, a1 b0, a1 b1) and the
//!   coefficient-wise sum of the middle two, as the DPUs' `MW_CONV` rows price it. Each output
//!   sums its n products unreduced in a word twice as wide as the coefficient's (u64, u128, or a
//!   pair of u128), the added terms and the subtracted ones apart, and is reduced once, as
//!   `MW_CONV`'s sums are at the paper's widths (the DPUs sum word products apart, a CPU with
//!   native 64x64 products needs no such split).
//! - **Add**: the coefficient-wise sum modulo q of two ciphertexts (one trial subtraction), over
//!   a batch of [`super::cpu::MEASURED_BYTES`] of inputs as the RNS rows' CPU measures.
//!
//! The outputs of a product are dealt to the threads (rayon), the add's coefficients likewise.

use std::time::Instant;

use rayon::prelude::*;
use rayon::ThreadPool;

use super::cpu::WidthTimes;
use super::Width;
use crate::error::{BenchError, Result};

/// A coefficient in the paper's representation: one machine integer of 32, 64 or 128 bits,
/// with a sum type wide enough for products.
pub trait Coefficient: Copy + Send + Sync + PartialOrd {
    /// An unreduced sum of products.
    type Sum: Copy + Send;
    /// Bits of the sum type.
    const SUM_BITS: u32;
    /// Bits of the coefficient type.
    const BITS: u32;
    /// The zero sum.
    const ZERO: Self::Sum;
    /// `value` as a coefficient (the caller checked it fits).
    fn from_u128(value: u128) -> Self;
    /// The coefficient as a u128.
    fn to_u128(self) -> u128;
    /// `sum + a b`, exact while the caller's bound holds.
    fn mul_add(sum: Self::Sum, a: Self, b: Self) -> Self::Sum;
    /// `(plus - minus) mod q`.
    fn reduce(plus: Self::Sum, minus: Self::Sum, q: Self) -> Self;
    /// `(a + b) mod q` for a, b below q (q below half the type's range).
    fn add_mod(a: Self, b: Self, q: Self) -> Self;
}

/// A native coefficient whose sum is the next wider native integer.
macro_rules! native_coefficient {
    ($coefficient:ty, $sum:ty) => {
        impl Coefficient for $coefficient {
            type Sum = $sum;
            const SUM_BITS: u32 = <$sum>::BITS;
            const BITS: u32 = <$coefficient>::BITS;
            const ZERO: $sum = 0;
            fn from_u128(value: u128) -> Self {
                value as $coefficient
            }
            fn to_u128(self) -> u128 {
                self.into()
            }
            fn mul_add(sum: $sum, a: Self, b: Self) -> $sum {
                sum + <$sum>::from(a) * <$sum>::from(b)
            }
            fn reduce(plus: $sum, minus: $sum, q: Self) -> Self {
                let q = <$sum>::from(q);
                ((plus % q + q - minus % q) % q) as $coefficient
            }
            fn add_mod(a: Self, b: Self, q: Self) -> Self {
                let s = a + b;
                s.min(s.wrapping_sub(q))
            }
        }
    };
}

native_coefficient!(u32, u64);
native_coefficient!(u64, u128);

/// A 256-bit sum as (high, low) halves.
type U256 = (u128, u128);

impl Coefficient for u128 {
    type Sum = U256;
    const SUM_BITS: u32 = 256;
    const BITS: u32 = 128;
    const ZERO: U256 = (0, 0);
    fn from_u128(value: u128) -> Self {
        value
    }
    fn to_u128(self) -> u128 {
        self
    }
    fn mul_add((high, low): U256, a: u128, b: u128) -> U256 {
        // The 256-bit product from four 64 x 64-bit ones.
        let (a0, a1, b0, b1) = (a as u64 as u128, a >> 64, b as u64 as u128, b >> 64);
        let (p00, p01, p10, p11) = (a0 * b0, a0 * b1, a1 * b0, a1 * b1);
        let (middle, middle_carry) = p01.overflowing_add(p10);
        let (product_low, low_carry) = p00.overflowing_add(middle << 64);
        let product_high = p11 + (middle >> 64) + (u128::from(middle_carry) << 64) + u128::from(low_carry);
        let (low, carry) = low.overflowing_add(product_low);
        (high + product_high + u128::from(carry), low)
    }
    fn reduce(plus: U256, minus: U256, q: u128) -> u128 {
        let (plus, minus) = (mod_u256(plus, q), mod_u256(minus, q));
        let difference = plus.wrapping_sub(minus);
        if plus >= minus {
            difference
        } else {
            difference.wrapping_add(q)
        }
    }
    fn add_mod(a: u128, b: u128, q: u128) -> u128 {
        let s = a + b;
        s.min(s.wrapping_sub(q))
    }
}

/// `(high 2^128 + low) mod q` for q below 2^124: the high half reduced, then the low half's bits
/// shifted in at most `128 - bits(q)` at a time (each step stays below 2^128).
fn mod_u256((high, low): U256, q: u128) -> u128 {
    let step = q.leading_zeros();
    let mut x = high % q;
    let mut left = 128;
    while left > 0 {
        let take = step.min(left);
        left -= take;
        let bits = (low >> left) & ((1u128 << take) - 1);
        x = ((x << take) | bits) % q;
    }
    x
}

/// Checks that `Coefficient` C holds q and its products' sums over n terms: n (q - 1)^2 below
/// 2^SUM_BITS, q below half the type (the add's trial subtraction), and for 128-bit
/// coefficients q below 2^124 ([`mod_u256`]'s steps).
fn check_bounds<C: Coefficient>(q: u128, n: usize) -> Result<()> {
    let q_bits = 128 - q.leading_zeros();
    let terms_bits = usize::BITS - n.saturating_sub(1).leading_zeros(); // ceil(log2 n)
    let fits = q > 1 && q_bits < C::BITS && 2 * q_bits + terms_bits <= C::SUM_BITS && (C::BITS < 128 || q_bits <= 124);
    if fits {
        Ok(())
    } else {
        Err(BenchError::usage(format!(
            "the paper's CPU arithmetic on {}-bit integers takes a q of 2 .. {} bits whose n = {n} products sum \
             within {} bits; q has {q_bits} bits",
            C::BITS,
            if C::BITS == 128 { 124 } else { C::BITS - 1 },
            C::SUM_BITS
        )))
    }
}

/// The negacyclic product of `a` and `b` (n coefficients below q each, n a power of two; else a
/// usage error, as for a q whose sums could overflow [`Coefficient::Sum`]) in
/// Z_q\[x\]/(x^n + 1), textbook: output k sums a_i b_(k-i) for i <= k and subtracts a_i
/// b_(n+k-i) for i > k, unreduced, then reduces once. Outputs are computed on `pool`.
///
/// ```
/// use pimhe_bench::reproduce::gupta::paper_cpu::negacyclic;
///
/// let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
/// // (1 + x)^2 = 1 + 2x + x^2, and x^3 x = x^4 = -1, in Z_17[x]/(x^4 + 1).
/// assert_eq!(negacyclic::<u32>(&pool, &[1, 1, 0, 0], &[1, 1, 0, 0], 17).unwrap(), [1, 2, 1, 0]);
/// assert_eq!(negacyclic::<u32>(&pool, &[0, 0, 0, 1], &[0, 1, 0, 0], 17).unwrap(), [16, 0, 0, 0]);
/// ```
pub fn negacyclic<C: Coefficient>(pool: &ThreadPool, a: &[C], b: &[C], q: C) -> Result<Vec<C>> {
    negacyclic_head(pool, a, b, q, a.len())
}

/// The first `outputs` coefficients of [`negacyclic`]'s product (each costs n terms, so a head
/// of the product takes that fraction of its time).
pub fn negacyclic_head<C: Coefficient>(pool: &ThreadPool, a: &[C], b: &[C], q: C, outputs: usize) -> Result<Vec<C>> {
    let n = a.len();
    if b.len() != n || !n.is_power_of_two() {
        return Err(BenchError::usage(format!(
            "a textbook product of {} and {} coefficients: both must have one power-of-two length",
            n,
            b.len()
        )));
    }
    check_bounds::<C>(q.to_u128(), n)?;
    if let Some(c) = a.iter().chain(b).find(|&&c| c >= q) {
        return Err(BenchError::usage(format!(
            "a textbook product modulo q = {}: coefficient {} is not below q",
            q.to_u128(),
            c.to_u128()
        )));
    }
    Ok(pool.install(|| {
        (0..outputs.min(n))
            .into_par_iter()
            .map(|k| {
                let plus = (0..=k).fold(C::ZERO, |s, i| C::mul_add(s, a[i], b[k - i]));
                let minus = (k + 1..n).fold(C::ZERO, |s, i| C::mul_add(s, a[i], b[n + k - i]));
                C::reduce(plus, minus, q)
            })
            .collect()
    }))
}

/// `a + b mod q` coefficient-wise into `a`, on `pool`.
fn add_into<C: Coefficient>(pool: &ThreadPool, a: &mut [C], b: &[C], q: C) {
    pool.install(|| a.par_iter_mut().zip(b.par_iter()).for_each(|(x, &y)| *x = C::add_mod(*x, y, q)));
}

/// `count` pseudo-random coefficients below q (splitmix64 from `seed`).
fn coefficients<C: Coefficient>(count: usize, q: u128, seed: u64) -> Vec<C> {
    let mut state = seed;
    let mut next = move || {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    (0..count).map(|_| C::from_u128(((u128::from(next()) << 64) | u128::from(next())) % q)).collect()
}

/// `--quick` times the first 1/16 of each product's outputs and scales by 16 (exact in work:
/// every output costs n terms; the middle sum's add is scaled with it, a few percent).
pub const QUICK_OUTPUT_DIVISOR: usize = 16;

/// Times the paper's add and multiply at `width` on `threads` threads: per ciphertext, the
/// fastest of `repeat` rounds after a warm-up; the add over a batch of `bytes` of inputs, the
/// products' first n / `output_divisor` outputs, scaled.
pub fn measure(
    width: &Width,
    threads: usize,
    bytes: usize,
    output_divisor: usize,
    repeat: usize,
    seed: u64,
) -> Result<WidthTimes> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| BenchError::Failed(format!("a pool of {threads} threads for the paper's CPU code: {e}")))?;
    match width.word_bits {
        32 => measure_with::<u32>(&pool, width, bytes, output_divisor, repeat, seed),
        64 => measure_with::<u64>(&pool, width, bytes, output_divisor, repeat, seed),
        128 => measure_with::<u128>(&pool, width, bytes, output_divisor, repeat, seed),
        other => Err(BenchError::Failed(format!("internal error: no {other}-bit integer coefficients"))),
    }
}

fn measure_with<C: Coefficient>(
    pool: &ThreadPool,
    width: &Width,
    bytes: usize,
    output_divisor: usize,
    repeat: usize,
    seed: u64,
) -> Result<WidthTimes> {
    // The DPU rows' q (neither side's time depends on which q of the width).
    let (n, q) = (width.n, super::multiword::modulus(width.coefficient_bits)?.value());
    let (qc, outputs) = (C::from_u128(q), (n / output_divisor.max(1)).max(1));
    let parts: Vec<Vec<C>> = (0..4).map(|k| coefficients(n, q, seed + k)).collect();
    let multiply = || -> Result<Vec<Vec<C>>> {
        let (a0, a1, b0, b1) = (&parts[0], &parts[1], &parts[2], &parts[3]);
        let mut middle = negacyclic_head(pool, a0, b1, qc, outputs)?;
        add_into(pool, &mut middle, &negacyclic_head(pool, a1, b0, qc, outputs)?, qc);
        Ok(vec![negacyclic_head(pool, a0, b0, qc, outputs)?, middle, negacyclic_head(pool, a1, b1, qc, outputs)?])
    };
    let mul_s = fastest(repeat, || {
        let start = Instant::now();
        multiply()?;
        Ok(start.elapsed().as_secs_f64() * (n / outputs) as f64)
    })?;
    // Two ciphertexts of 2 n coefficients per pair, C::BITS / 8 bytes each.
    let pairs = (bytes / (4 * n * (C::BITS / 8) as usize)).max(1);
    let b: Vec<C> = coefficients(2 * n * pairs, q, seed + 4);
    let a: Vec<C> = coefficients(2 * n * pairs, q, seed + 5);
    let add_s = fastest(repeat, || {
        let mut sum = a.clone();
        let start = Instant::now();
        add_into(pool, &mut sum, &b, qc);
        Ok(start.elapsed().as_secs_f64())
    })?;
    Ok(WidthTimes {
        n,
        coefficient_bits: width.coefficient_bits,
        add_s_per_ciphertext: add_s / pairs as f64,
        mul_s_per_ciphertext: mul_s,
    })
}

/// The fastest of `repeat` rounds after one untimed; a round returns its own seconds.
fn fastest(repeat: usize, mut round: impl FnMut() -> Result<f64>) -> Result<f64> {
    round()?;
    let mut best = f64::INFINITY;
    for _ in 0..repeat.max(1) {
        best = best.min(round()?);
    }
    Ok(best)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pimhe_pim::emulator::EmulatorConfig;
    use pimhe_pim::layout::Variant;
    use pimhe_pim::multiword::{conv, MultiwordModulus};

    fn pool(threads: usize) -> ThreadPool {
        rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap()
    }

    fn wide<C: Coefficient>(v: &[C]) -> Vec<u128> {
        v.iter().map(|c| c.to_u128()).collect()
    }

    /// Random operands (with q - 1 and 0 among them) against the DPUs' MW_CONV on the emulator
    /// (itself checked against big integers in crates/pim/tests/emulator_multiword.rs), and
    /// every coefficient q - 1 at the full length against its closed form: (q - 1)^2 = 1 mod q,
    /// so output k is (k + 1) - (n - 1 - k) = 2k + 2 - n mod q (every sum at its largest).
    fn check<C: Coefficient>(q: u128, n: usize) {
        let (pool, qc) = (pool(3), C::from_u128(q));
        let small = n.min(128);
        let mut a: Vec<C> = coefficients(small, q, 11);
        let b: Vec<C> = coefficients(small, q, 12);
        (a[0], a[small - 1], a[small / 2]) = (C::from_u128(q - 1), C::from_u128(q - 1), C::from_u128(0));
        let modulus = MultiwordModulus::new(q).unwrap();
        let dpus = conv(&modulus, &wide(&a), &wide(&b), 3, EmulatorConfig::default(), Variant::Best).unwrap();
        assert_eq!(wide(&negacyclic(&pool, &a, &b, qc).unwrap()), dpus.result, "q = {q}, n = {small}");
        let all = vec![C::from_u128(q - 1); n];
        let closed: Vec<u128> = (0..n as u128).map(|k| (2 * k + 2 + q - n as u128 % q) % q).collect();
        assert_eq!(wide(&negacyclic(&pool, &all, &all, qc).unwrap()), closed, "all q - 1, q = {q}, n = {n}");
    }

    #[test]
    fn textbook_products_match_the_dpus_and_a_closed_form_at_the_papers_widths() {
        check::<u32>((1 << 27) - 1, 1024);
        check::<u32>((1 << 27) - 39, 64);
        check::<u64>((1 << 54) - 1, 2048);
        check::<u64>((1 << 54) - 33, 256);
        check::<u128>((1 << 109) - 1, 4096);
        check::<u128>((1 << 124) - 59, 16);
    }

    #[test]
    fn sums_that_could_overflow_are_refused() {
        let pool = pool(1);
        let a = vec![1u32; 2048];
        let err = negacyclic::<u32>(&pool, &a, &a, (1 << 27) - 1).unwrap_err().to_string();
        assert!(err.contains("q has 27 bits"), "{err}");
        assert!(negacyclic::<u128>(&pool, &[1u128; 4], &[1u128; 4], 1 << 125).is_err());
        assert!(negacyclic::<u64>(&pool, &[1u64; 4], &[1u64; 2], 7).is_err());
        let err = negacyclic::<u64>(&pool, &[1, 2, 7, 3], &[1u64; 4], 7).unwrap_err().to_string();
        assert!(err.contains("coefficient 7 is not below q"), "{err}");
    }

    #[test]
    fn the_add_reduces_every_sum() {
        let q = (1u128 << 109) - 1;
        let a: Vec<u128> = coefficients(1000, q, 3);
        let b: Vec<u128> = coefficients(1000, q, 4);
        let mut sum = a.clone();
        add_into(&pool(2), &mut sum, &b, q);
        for ((s, x), y) in sum.iter().zip(&a).zip(&b) {
            assert_eq!(*s, (x + y) % q);
        }
    }
}
