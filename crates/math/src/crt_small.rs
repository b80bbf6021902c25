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

/// Maps residues modulo Q = q_0 ... q_{L-1} to (v mod t, v / Q) for the centred v.
///
/// ```
/// use pimhe_math::{CrtToSmall, Modulus};
/// let primes = [Modulus::new(97).unwrap(), Modulus::new(193).unwrap()];
/// let crt = CrtToSmall::new(&primes, Modulus::new(17).unwrap()).unwrap();
/// // v = -1000: residues modulo 97 and 193.
/// let (mod_t, fraction) = crt.reduce(&[(97 * 11 - 1000) as u32, (193 * 6 - 1000) as u32]);
/// assert_eq!(mod_t, (-1000i64).rem_euclid(17) as u32);
/// assert!((fraction - (-1000.0 / (97.0 * 193.0))).abs() < 1e-12);
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

    /// For the residues of one value v (one per modulus, reduced), v mod t and v / Q, with v
    /// centred in (-Q/2, Q/2]. `v mod t` is exact when |v / Q| < 1/4.
    pub fn reduce(&self, residues: &[u32]) -> (u32, f64) {
        let t = &self.t;
        let mut sum = 0.0f64;
        let mut mod_t = 0u32;
        let terms = residues.iter().zip(&self.moduli).zip(&self.q_hat_inv).zip(&self.q_hat_mod_t);
        for (((&r, q), &(y, y_shoup)), &q_hat) in terms {
            let x = q.mul_shoup(r, y, y_shoup);
            sum += f64::from(x) / f64::from(q.value());
            mod_t = t.reduce_u64(u64::from(mod_t) + u64::from(x) * u64::from(q_hat));
        }
        // 0 <= sum < L, so k is a small non-negative integer.
        let k = sum.round();
        let fraction = sum - k;
        let v = t.sub(mod_t, t.reduce_u64(k as u64 * u64::from(self.q_mod_t)));
        (v, fraction)
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
        for v in values {
            let (mod_t, fraction) = crt.reduce(&base.decompose_signed(&v));
            let expected = ((&v % 65537) + 65537) % 65537;
            assert_eq!(BigInt::from(mod_t), expected, "v = {v}");
            let exact = v.to_string().parse::<f64>().unwrap() / q.to_string().parse::<f64>().unwrap();
            assert!((fraction - exact).abs() < 1e-13, "v = {v}: {fraction} vs {exact}");
        }
    }
}
