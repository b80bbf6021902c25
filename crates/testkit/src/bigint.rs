//! Big-integer oracles (num-bigint): products of primes, modular inverses, CRT and centring.

use num_bigint::BigInt;
use num_integer::Integer;
use num_traits::{One, Zero};

/// The product of the primes.
pub fn product(primes: &[u32]) -> BigInt {
    primes.iter().fold(BigInt::one(), |acc, &p| acc * BigInt::from(p))
}

/// a^{-1} mod m (any m coprime to a) by the extended Euclidean algorithm on big integers.
pub fn inverse_mod(a: &BigInt, m: u32) -> BigInt {
    let m_big = BigInt::from(m);
    let a = a.mod_floor(&m_big);
    let egcd = a.extended_gcd(&m_big);
    assert!(egcd.gcd.is_one(), "{a} is not invertible modulo {m}");
    let inv = egcd.x.mod_floor(&m_big);
    assert!((&inv * &a).mod_floor(&m_big).is_one());
    inv
}

/// CRT: the integer in [0, prod) with the given residues.
pub fn crt(residues: &[u32], primes: &[u32]) -> BigInt {
    let q = product(primes);
    let mut x = BigInt::zero();
    for (&r, &p) in residues.iter().zip(primes) {
        let q_hat = &q / BigInt::from(p);
        let inv = inverse_mod(&q_hat, p);
        x += BigInt::from(r) * &q_hat * inv;
    }
    let x = x.mod_floor(&q);
    for (&r, &p) in residues.iter().zip(primes) {
        assert_eq!(x.mod_floor(&BigInt::from(p)), BigInt::from(r), "CRT self-check");
    }
    x
}

/// CRT, centred into (-prod/2, prod/2].
pub fn crt_centred(residues: &[u32], primes: &[u32]) -> BigInt {
    centre_big(&crt(residues, primes), &product(primes))
}

/// The representative of x mod m in (-m/2, m/2], as a big integer.
pub fn centre_big(x: &BigInt, m: &BigInt) -> BigInt {
    let r = x.mod_floor(m);
    if &r * 2 > *m {
        r - m
    } else {
        r
    }
}

/// x mod p in [0, p) as u32, for a signed big integer.
pub fn big_mod(x: &BigInt, p: u32) -> u32 {
    let r = x.mod_floor(&BigInt::from(p));
    u32::try_from(r).unwrap()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crt_and_centring_on_hand_computed_values() {
        // 23 = 2 mod 3 = 3 mod 5 = 2 mod 7; the product is 105.
        assert_eq!(product(&[3, 5, 7]), BigInt::from(105));
        assert_eq!(crt(&[2, 3, 2], &[3, 5, 7]), BigInt::from(23));
        // 100 = 1 mod 3 = 0 mod 5 = 2 mod 7 centres to 100 - 105.
        assert_eq!(crt_centred(&[1, 0, 2], &[3, 5, 7]), BigInt::from(-5));
        assert_eq!(crt_centred(&[2, 3, 2], &[3, 5, 7]), BigInt::from(23));
        assert_eq!(inverse_mod(&BigInt::from(-3), 7), BigInt::from(2));
        assert_eq!(centre_big(&BigInt::from(-9), &BigInt::from(4)), BigInt::from(-1));
        assert_eq!(centre_big(&BigInt::from(2), &BigInt::from(4)), BigInt::from(2));
        assert_eq!(big_mod(&BigInt::from(-1), 7), 6);
    }
}
