//! Small-integer oracles: negacyclic products, modular powers, polynomial evaluation, bit
//! reversal, Galois automorphisms and centring, each straight from its definition.

/// Schoolbook product in `Z_q[X]/(X^N + 1)`.
pub fn schoolbook(a: &[u32], b: &[u32], q: u32) -> Vec<u32> {
    let n = a.len();
    let mut acc = vec![0i128; n];
    for i in 0..n {
        for j in 0..n {
            let prod = a[i] as i128 * b[j] as i128;
            if i + j < n {
                acc[i + j] += prod;
            } else {
                acc[i + j - n] -= prod;
            }
        }
    }
    acc.iter().map(|&x| x.rem_euclid(q as i128) as u32).collect()
}

/// base^e mod q by square-and-multiply in u128 (any q >= 1 below 2^64).
pub fn pow_mod(base: u64, mut e: u64, q: u64) -> u64 {
    let q = q as u128;
    let mut acc = 1u128 % q;
    let mut b = base as u128 % q;
    while e > 0 {
        if e & 1 == 1 {
            acc = acc * b % q;
        }
        b = b * b % q;
        e >>= 1;
    }
    acc as u64
}

/// Greatest common divisor by Euclid's algorithm.
pub fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// a(point) mod q by Horner's rule, the coefficients given lowest degree first.
pub fn evaluate<T: Copy + Into<u64>>(a: &[T], point: u64, q: u64) -> u64 {
    let (point, q) = (point as u128, q as u128);
    a.iter().rev().fold(0u128, |acc, &c| (acc * point + c.into() as u128) % q) as u64
}

/// The low `bits` bits of x in reverse order, one bit at a time.
pub fn bit_reverse(x: usize, bits: u32) -> usize {
    let mut r = 0;
    for i in 0..bits {
        if x >> i & 1 == 1 {
            r |= 1 << (bits - 1 - i);
        }
    }
    r
}

/// The direct definition of X -> X^k on signed coefficients: coefficient i goes to i*k mod 2N,
/// negated when it lands in [N, 2N).
pub fn automorphism_signed(a: &[i64], k: usize) -> Vec<i64> {
    automorphism_by_definition(a, k, |c| -c)
}

/// Same definition on residues modulo q.
pub fn automorphism_residues(a: &[u32], k: usize, q: u32) -> Vec<u32> {
    automorphism_by_definition(a, k, |c| (q - c) % q)
}

/// Coefficient i of `a` moved to i*k mod 2N, through `negate` when it lands in [N, 2N).
fn automorphism_by_definition<T: Copy + Default>(a: &[T], k: usize, negate: impl Fn(T) -> T) -> Vec<T> {
    let n = a.len();
    let mut out = vec![T::default(); n];
    for (i, &c) in a.iter().enumerate() {
        let e = (i as u128 * k as u128 % (2 * n) as u128) as usize;
        if e < n {
            out[e] = c;
        } else {
            out[e - n] = negate(c);
        }
    }
    out
}

/// The representative of x mod q in (-q/2, q/2].
pub fn centre(x: u64, q: u64) -> i64 {
    let r = (x % q) as i64;
    if r > (q / 2) as i64 {
        r - q as i64
    } else {
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn oracles_on_hand_computed_values() {
        // X * X^3 = X^4 = -1 in Z_17[X]/(X^4 + 1).
        assert_eq!(schoolbook(&[0, 1, 0, 0], &[0, 0, 0, 1], 17), vec![16, 0, 0, 0]);
        assert_eq!(pow_mod(3, 4, 7), 4);
        assert_eq!(pow_mod(5, 0, 1), 0);
        assert_eq!(pow_mod(u64::MAX, 2, u64::MAX - 1), 1);
        assert_eq!(gcd(12, 18), 6);
        // 1 + 2x + 3x^2 at x = 2 is 17 = 3 mod 7.
        assert_eq!(evaluate(&[1u32, 2, 3], 2, 7), 3);
        assert_eq!(evaluate(&[1u64, 2, 3], 2, 100), 17);
        assert_eq!(bit_reverse(0b0011, 4), 0b1100);
        assert_eq!(bit_reverse(0, 0), 0);
        // X -> X^3 on Z[X]/(X^4 + 1): X^2 -> X^6 = -X^2, X^3 -> X^9 = X.
        assert_eq!(automorphism_signed(&[1, 2, 3, 4], 3), vec![1, 4, -3, 2]);
        assert_eq!(automorphism_residues(&[1, 2, 3, 4], 3, 17), vec![1, 4, 14, 2]);
        assert_eq!((centre(8, 17), centre(9, 17), centre(8, 16), centre(9, 16)), (8, -8, 8, -7));
    }
}
