//! Prime search and primitive roots against trial division and brute force.

use pimhe_math::{is_prime, minimal_primitive_root, ntt_primes, MathError, Modulus};
use pimhe_testkit::oracle::pow_mod;

fn trial_division(n: u64) -> bool {
    if n < 2 {
        return false;
    }
    let mut d = 2u64;
    while d * d <= n {
        if n.is_multiple_of(d) {
            return false;
        }
        d += 1;
    }
    true
}

/// Multiplicative order of x modulo prime q, restricted to powers of two up to 2N.
fn has_order_exactly(x: u64, order: u64, q: u64) -> bool {
    // order is a power of two: x has that order iff x^(order/2) = -1.
    pow_mod(x, order / 2, q) == q - 1
}

#[test]
fn is_prime_matches_trial_division() {
    for n in 0..200_000u64 {
        assert_eq!(is_prime(n), trial_division(n), "n={n}");
    }
    // Strong pseudoprimes to several bases, Carmichael numbers and big primes.
    for n in [
        2047u64,
        3277,
        4033,
        4681,
        8321,
        561,
        1105,
        1729,
        25_326_001,
        3_215_031_751,
        1_073_741_789,
        1_073_741_823,
        4_294_967_291,
        4_294_967_295,
        4_294_967_279,
    ] {
        assert_eq!(is_prime(n), trial_division(n), "n={n}");
    }
    let mut x = 0x9E37_79B9u64;
    for _ in 0..3000 {
        x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        let n = (x >> 32) | 1;
        assert_eq!(is_prime(n), trial_division(n), "n={n}");
    }
}

fn check_primes(bits: u32, n: usize, primes: &[u32], exclude: &[u32]) {
    let step = 2 * n as u64;
    for (i, &p) in primes.iter().enumerate() {
        assert!(trial_division(p as u64), "{p} is not prime");
        assert_eq!(32 - p.leading_zeros(), bits, "{p} does not have {bits} bits");
        assert_eq!(p as u64 % step, 1, "{p} != 1 mod {step}");
        assert!(!exclude.contains(&p), "{p} was excluded");
        if i > 0 {
            assert!(primes[i - 1] > p, "not strictly descending at {i}: {primes:?}");
        }
    }
    // Completeness: no qualifying prime was skipped from 2^bits down to the last one returned.
    let last = *primes.last().unwrap() as u64;
    let mut candidate = (1u64 << bits) - 1;
    let mut expected = Vec::new();
    while candidate >= last {
        if candidate % step == 1 && trial_division(candidate) && !exclude.contains(&(candidate as u32)) {
            expected.push(candidate as u32);
        }
        candidate -= 1;
    }
    assert_eq!(primes, expected.as_slice(), "bits={bits} n={n}");
}

#[test]
fn ntt_primes_are_the_largest_qualifying_primes() {
    for (bits, n, count) in [
        (30u32, 1usize << 10, 6usize),
        (30, 1 << 12, 8),
        (30, 1 << 16, 4),
        (30, 1 << 17, 3),
        (25, 1 << 11, 5),
        (20, 1 << 8, 10),
        (18, 1 << 12, 2),
        (14, 1 << 4, 20),
    ] {
        let primes = ntt_primes(bits, n, count, &[]).unwrap();
        assert_eq!(primes.len(), count);
        check_primes(bits, n, &primes, &[]);
        // Deterministic.
        assert_eq!(ntt_primes(bits, n, count, &[]).unwrap(), primes);

        // Excluding the first two shifts the list (one more prime must exist for count - 1).
        let exclude = &primes[..2];
        let rest = ntt_primes(bits, n, count - 1, exclude).unwrap();
        check_primes(bits, n, &rest, exclude);
        assert_eq!(&rest[..count - 2], &primes[2..]);
        // Excluding values that are not candidates changes nothing.
        assert_eq!(ntt_primes(bits, n, count, &[4, 1 << 29, 7681]).unwrap(), primes);
    }
}

#[test]
fn exhausting_the_search_reports_not_enough_primes() {
    // Count every 17-bit prime = 1 mod 2^12 by brute force.
    let (bits, n) = (17u32, 1usize << 11);
    let step = 2 * n as u64;
    let all: Vec<u32> =
        ((1u64 << 16) + 1..1 << 17).rev().filter(|&c| c % step == 1 && trial_division(c)).map(|c| c as u32).collect();
    assert!(!all.is_empty());
    assert_eq!(ntt_primes(bits, n, all.len(), &[]).unwrap(), all);
    assert_eq!(
        ntt_primes(bits, n, all.len() + 1, &[]),
        Err(MathError::NotEnoughPrimes { bits, step, requested: all.len() + 1, found: all.len() })
    );
    assert_eq!(
        ntt_primes(bits, n, all.len(), &all[..1]),
        Err(MathError::NotEnoughPrimes { bits, step, requested: all.len(), found: all.len() - 1 })
    );
    // No 10-bit number is 1 mod 2^18.
    assert_eq!(
        ntt_primes(10, 1 << 17, 1, &[]),
        Err(MathError::NotEnoughPrimes { bits: 10, step: 1 << 18, requested: 1, found: 0 })
    );
    assert!(matches!(ntt_primes(2, 2, 1, &[]), Err(MathError::NotEnoughPrimes { found: 0, .. })));
    assert_eq!(ntt_primes(30, 1024, 0, &[]).unwrap(), Vec::<u32>::new());
}

#[test]
fn invalid_prime_requests() {
    for bits in [0u32, 1, 31, 32, 64] {
        assert_eq!(ntt_primes(bits, 1024, 1, &[]), Err(MathError::InvalidPrimeBits(bits)));
    }
    for n in [0usize, 1, 3, 1000, 1 << 21] {
        assert_eq!(ntt_primes(30, n, 1, &[]), Err(MathError::InvalidDegree(n)));
    }
}

#[test]
fn minimal_primitive_root_brute_force_small_primes() {
    for n in [2usize, 4, 8, 16, 64, 256, 1024] {
        let order = 2 * n as u64;
        for bits in 12..=17u32 {
            let Ok(primes) = ntt_primes(bits, n, 3, &[]) else {
                continue;
            };
            for p in primes {
                let q = Modulus::new(p as u64).unwrap();
                let root = minimal_primitive_root(&q, n).unwrap() as u64;
                let expected = (1..p as u64).find(|&x| has_order_exactly(x, order, p as u64)).unwrap();
                assert_eq!(root, expected, "p={p} n={n}");
            }
        }
    }
    for (p, n, expected) in [(7681u64, 16usize, 97u64), (12289, 1024, 7), (17, 8, 3)] {
        let root = minimal_primitive_root(&Modulus::new(p).unwrap(), n).unwrap() as u64;
        assert_eq!(root, expected, "p={p} n={n}");
    }
}

#[test]
fn minimal_primitive_root_30_bit_primes() {
    for n in [1usize << 12, 1 << 14, 1 << 16] {
        for p in ntt_primes(30, n, 2, &[]).unwrap() {
            let q = Modulus::new(p as u64).unwrap();
            let root = minimal_primitive_root(&q, n).unwrap() as u64;
            assert!(has_order_exactly(root, 2 * n as u64, p as u64), "p={p} n={n}");
            // No smaller element has order 2N.
            let smaller = (2..root).find(|&x| has_order_exactly(x, 2 * n as u64, p as u64));
            assert_eq!(smaller, None, "p={p} n={n} root={root}");
        }
    }
}

#[test]
fn minimal_primitive_root_errors() {
    let q = Modulus::new(7681).unwrap();
    assert_eq!(minimal_primitive_root(&q, 512), Err(MathError::NotNttFriendly { q: 7681, n: 512 }));
    let composite = Modulus::new(97 * 193).unwrap(); // = 1 mod 32 but not prime
    assert_eq!(minimal_primitive_root(&composite, 16), Err(MathError::NotNttFriendly { q: 97 * 193, n: 16 }));
    assert_eq!(minimal_primitive_root(&q, 3), Err(MathError::InvalidDegree(3)));
}

#[test]
fn is_prime_is_exact_beyond_32_bits() {
    // Known 64-bit primes and composites, including strong pseudoprimes to small bases.
    for p in [4_294_967_311u64, 1_000_000_000_000_000_003, 18_446_744_073_709_551_557] {
        assert!(pimhe_math::is_prime(p), "{p} is prime");
    }
    // 3215031751 = 151*751*28351 fools bases 2,3,5,7; the last is 4294967291 * 4294967279.
    for c in [3_215_031_751u64, 3_825_123_056_546_413_051, 18_446_743_979_220_271_189] {
        assert!(!pimhe_math::is_prime(c), "{c} is composite");
    }
}
