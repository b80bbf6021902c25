//! CRT reconstruction straight to a small modulus, without big integers: what decryption needs
//! (the message modulo t, and whether the phase is safely below Q/4).
//!
//! For v in (-Q/2, Q/2] with residues r_i, let x_i = [r_i (Q/q_i)^{-1}]_{q_i}. Then
//! v = sum_i x_i Q/q_i - k Q with k = round(sum_i x_i / q_i), and v/Q is the distance of that sum
//! to k (Halevi, Polyakov, Shoup: "An improved RNS variant of the BFV scheme", 2019). The sum is
//! taken in f64, so v mod t comes out exact whenever |v| < Q/4 (k cannot be misrounded then:
//! the error is about L 2^-53, far below the 1/4 margin), and v/Q itself to about 2^-48.

use crate::error::Result;
use crate::modular::Modulus;
use crate::rns::RnsBase;
use crate::simd::{dispatch, Isa, Kernel, Lanes};

/// Terms x_i (Q/q_i mod t) < 2^60 added before the sum modulo t is reduced: a reduced sum
/// (< 2^30) plus 8 of them stays below 2^64.
const LAZY_LIMBS: usize = 8;

/// Maps residues modulo Q = q_0 ... q_{L-1} to (v mod t, v / Q) for the centred v.
///
/// ```
/// use pimhe_math::{CrtToSmall, Modulus};
/// let primes = [Modulus::new(97).unwrap(), Modulus::new(193).unwrap()];
/// let crt = CrtToSmall::new(&primes, Modulus::new(17).unwrap()).unwrap();
/// // v = -1000 and v = 5: their residues modulo 97, then modulo 193.
/// let limbs: [&[u32]; 2] = [&[(97 * 11 - 1000) as u32, 5], &[(193 * 6 - 1000) as u32, 5]];
/// let (mut mod_t, mut fraction) = ([0u32; 2], [0f64; 2]);
/// crt.reduce(&limbs, &mut mod_t, &mut fraction);
/// assert_eq!(mod_t, [(-1000i64).rem_euclid(17) as u32, 5]);
/// assert!((fraction[0] - (-1000.0 / (97.0 * 193.0))).abs() < 1e-12);
/// ```
#[derive(Debug, Clone)]
pub struct CrtToSmall {
    moduli: Vec<Modulus>,
    /// (Q/q_i)^{-1} mod q_i and its Shoup constant.
    q_hat_inv: Vec<(u32, u32)>,
    /// (Q/q_i) mod t.
    q_hat_mod_t: Vec<u32>,
    /// Q mod t.
    q_mod_t: u32,
    t: Modulus,
}

impl CrtToSmall {
    /// Precomputes for the base `moduli` and the small modulus `t`.
    pub fn new(moduli: &[Modulus], t: Modulus) -> Result<Self> {
        let base = RnsBase::new(moduli)?;
        let q_hat_inv = moduli.iter().zip(base.q_hat_inv()).map(|(q, &y)| (y, q.shoup(y))).collect();
        let t_big = num_bigint::BigUint::from(t.value());
        let to_t = |x: &num_bigint::BigUint| (x % &t_big).to_u32_digits().first().copied().unwrap_or(0);
        let q_hat_mod_t = moduli.iter().map(|q| to_t(&(base.product() / q.value()))).collect();
        let q_mod_t = to_t(base.product());
        Ok(Self { moduli: moduli.to_vec(), q_hat_inv, q_hat_mod_t, q_mod_t, t })
    }

    /// For values v_j given limb-major (`limbs[i][j]` is the residue of v_j modulo q_i,
    /// reduced), writes v_j mod t to `mod_t[j]` and v_j / Q to `fraction[j]`, with v_j centred
    /// in (-Q/2, Q/2]. `mod_t[j]` is exact when |v_j / Q| < 1/4.
    ///
    /// Limb by limb over all values, so each pass is a loop the compiler vectorises and the
    /// sum modulo t is reduced once per [`LAZY_LIMBS`] limbs rather than once per term.
    ///
    /// Panics unless there is one slice per modulus and every slice, `mod_t` and `fraction`
    /// have the same length.
    pub fn reduce(&self, limbs: &[&[u32]], mod_t: &mut [u32], fraction: &mut [f64]) {
        let len = mod_t.len();
        assert!(limbs.len() == self.moduli.len() && fraction.len() == len && limbs.iter().all(|l| l.len() == len));
        dispatch(Isa::active(), Reduce { crt: self, limbs, mod_t, fraction });
    }

    /// [`CrtToSmall::reduce`] with the lengths checked: the same loops under every instruction
    /// set, which the compiler vectorises where [`dispatch`] compiles them for AVX2 or AVX-512
    /// (the f64 division and the 64-bit products are most of a decryption otherwise). IEEE
    /// division and the unfused sums give the same f64 values on every ISA.
    #[inline(always)]
    fn reduce_checked(&self, limbs: &[&[u32]], mod_t: &mut [u32], fraction: &mut [f64]) {
        let t = &self.t;
        let len = mod_t.len();
        // The sum of x_i (Q/q_i) modulo t, lazily reduced; wiped like the residues it comes from.
        let mut sum_mod_t = zeroize::Zeroizing::new(vec![0u64; len]);
        fraction.fill(0.0);
        let terms = limbs.iter().zip(&self.moduli).zip(&self.q_hat_inv).zip(&self.q_hat_mod_t);
        for (i, (((residues, q), &(y, y_shoup)), &q_hat)) in terms.enumerate() {
            let q_value = f64::from(q.value());
            for ((&r, sum), acc) in residues.iter().zip(fraction.iter_mut()).zip(sum_mod_t.iter_mut()) {
                let x = q.mul_shoup(r, y, y_shoup);
                *sum += f64::from(x) / q_value;
                *acc += u64::from(x) * u64::from(q_hat);
            }
            if i % LAZY_LIMBS == LAZY_LIMBS - 1 {
                sum_mod_t.iter_mut().for_each(|acc| *acc = u64::from(t.reduce_u64(*acc)));
            }
        }
        for ((out, sum), &acc) in mod_t.iter_mut().zip(fraction.iter_mut()).zip(sum_mod_t.iter()) {
            // 0 <= sum < L, so k is a small non-negative integer.
            let k = sum.round();
            *sum -= k;
            *out = t.sub(t.reduce_u64(acc), t.reduce_u64(k as u64 * u64::from(self.q_mod_t)));
        }
    }
}

/// One [`CrtToSmall::reduce`], for [`dispatch`].
struct Reduce<'a> {
    crt: &'a CrtToSmall,
    limbs: &'a [&'a [u32]],
    mod_t: &'a mut [u32],
    fraction: &'a mut [f64],
}

impl Kernel for Reduce<'_> {
    fn scalar(self) {
        self.crt.reduce_checked(self.limbs, self.mod_t, self.fraction)
    }

    #[inline(always)]
    fn lanes<L: Lanes>(self, _: L) {
        self.crt.reduce_checked(self.limbs, self.mod_t, self.fraction)
    }
}

#[cfg(test)]
mod tests {
    use num_bigint::BigInt;

    use super::*;
    use crate::primes::ntt_primes;

    #[test]
    fn matches_big_integer_reconstruction_for_values_below_a_quarter() {
        let primes: Vec<Modulus> =
            ntt_primes(30, 1024, 12, &[]).unwrap().into_iter().map(|p| Modulus::new(p as u64).unwrap()).collect();
        let base = RnsBase::new(&primes).unwrap();
        let t = Modulus::new(65537).unwrap();
        let crt = CrtToSmall::new(&primes, t).unwrap();
        let q = BigInt::from(base.product().clone());
        let quarter = &q / 4;
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let edge: BigInt = &quarter - 1u32;
        let mut values: Vec<BigInt> = vec![BigInt::from(0), BigInt::from(1), BigInt::from(-1), -edge.clone(), edge];
        for bits in [10u32, 64, 150, 300, 357] {
            for _ in 0..20 {
                let mut v = BigInt::from(next() >> 1);
                while v.bits() < u64::from(bits) {
                    v = (v << 63) + BigInt::from(next() >> 1);
                }
                v %= &quarter;
                values.push(if next() % 2 == 0 { v.clone() } else { -v });
            }
        }
        // All values in one call, limb-major.
        let residues: Vec<Vec<u32>> = values.iter().map(|v| base.decompose_signed(v)).collect();
        let limbs: Vec<Vec<u32>> = (0..primes.len()).map(|i| residues.iter().map(|r| r[i]).collect()).collect();
        let limb_refs: Vec<&[u32]> = limbs.iter().map(|l| l.as_slice()).collect();
        let (mut mod_t, mut fraction) = (vec![0u32; values.len()], vec![0f64; values.len()]);
        crt.reduce(&limb_refs, &mut mod_t, &mut fraction);
        for (j, v) in values.iter().enumerate() {
            let expected = ((v % 65537) + 65537) % 65537;
            assert_eq!(BigInt::from(mod_t[j]), expected, "v = {v}");
            let exact = v.to_string().parse::<f64>().unwrap() / q.to_string().parse::<f64>().unwrap();
            assert!((fraction[j] - exact).abs() < 1e-13, "v = {v}: {} vs {exact}", fraction[j]);
        }
    }
}
