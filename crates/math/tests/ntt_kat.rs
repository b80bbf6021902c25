//! NTT round trips, direct-evaluation known answers, literal test vectors and error paths.

use pimhe_math::{ntt_primes, MathError, Modulus, NttTable};
use pimhe_testkit::inputs::{random_residues, rng};
use pimhe_testkit::oracle::{bit_reverse, evaluate, pow_mod};

/// a(psi^(2 bitrev(k) + 1)) for every k, by Horner's rule with plain `%` arithmetic.
fn naive_ntt(a: &[u32], psi: u64, q: u64) -> Vec<u32> {
    let n = a.len();
    let log_n = n.trailing_zeros();
    (0..n)
        .map(|k| {
            let point = pow_mod(psi, 2 * bit_reverse(k, log_n) as u64 + 1, q);
            evaluate(a, point, q) as u32
        })
        .collect()
}

/// Smallest prime p = 1 mod 2N with at least `min_bits` bits that the prime search can give.
fn small_ntt_prime(n: usize) -> u32 {
    let min_bits = (2 * n).trailing_zeros() + 1;
    (min_bits..=30).find_map(|bits| ntt_primes(bits, n, 1, &[]).ok()).unwrap()[0]
}

#[test]
fn round_trip_every_degree() {
    let mut rng = rng(2);
    for log_n in 4..=16 {
        let n = 1usize << log_n;
        let mut primes = ntt_primes(30, n, 2, &[]).unwrap();
        primes.push(ntt_primes(22, n, 1, &[]).unwrap()[0]);
        primes.push(small_ntt_prime(n));
        for p in primes {
            let q = Modulus::new(p as u64).unwrap();
            let table = NttTable::new(q, n).unwrap();
            assert_eq!(table.degree(), n);
            assert_eq!(table.modulus().value(), p);
            for input in [random_residues(&mut rng, n, p), vec![p - 1; n], vec![0; n]] {
                let mut a = input.clone();
                table.forward(&mut a);
                assert!(a.iter().all(|&x| x < p), "forward output not reduced, n={n} p={p}");
                if input.iter().any(|&x| x != 0) {
                    assert_ne!(a, input, "forward is the identity? n={n} p={p}");
                }
                table.inverse(&mut a);
                assert_eq!(a, input, "round trip failed, n={n} p={p}");
            }
            // Inverse then forward is the identity too.
            let input = random_residues(&mut rng, n, p);
            let mut a = input.clone();
            table.inverse(&mut a);
            assert!(a.iter().all(|&x| x < p));
            table.forward(&mut a);
            assert_eq!(a, input, "inverse-forward failed, n={n} p={p}");
        }
    }
}

#[test]
fn forward_is_evaluation_at_odd_powers_of_psi() {
    let mut rng = rng(3);
    for n in [16usize, 32, 64] {
        let mut primes = ntt_primes(30, n, 2, &[]).unwrap();
        primes.push(small_ntt_prime(n));
        primes.push(7681);
        primes.push(12289);
        for p in primes {
            let q = Modulus::new(p as u64).unwrap();
            let table = NttTable::new(q, n).unwrap();
            let psi = table.root() as u64;
            // psi is a primitive 2N-th root of unity.
            assert_eq!(pow_mod(psi, n as u64, p as u64), p as u64 - 1);
            for _ in 0..4 {
                let input = random_residues(&mut rng, n, p);
                let mut a = input.clone();
                table.forward(&mut a);
                assert_eq!(a, naive_ntt(&input, psi, p as u64), "n={n} p={p}");
                // And the inverse maps the evaluations back.
                table.inverse(&mut a);
                assert_eq!(a, input);
            }
        }
    }
}

/// Vectors for N = 16, q = 7681 computed outside this crate by direct evaluation at
/// 97^(2 bitrev(k) + 1), 97 being the smallest primitive 32nd root of unity modulo 7681.
const KAT_INPUTS: [[u32; 16]; 5] = [
    [1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
    [0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15],
    [7680; 16],
    [5, 42, 153, 338, 597, 930, 1337, 1818, 2373, 3002, 3705, 4482, 5333, 6258, 7257, 649],
];
const KAT_OUTPUTS: [[u32; 16]; 5] = [
    [1; 16],
    [97, 7584, 5549, 2132, 5300, 2381, 2446, 5235, 6315, 1366, 2784, 4897, 2648, 5033, 2138, 5543],
    [6239, 3991, 4426, 5809, 4443, 6858, 3691, 4392, 3595, 732, 5738, 712, 7447, 1003, 6358, 3695],
    [7521, 627, 6986, 4902, 1206, 7610, 7015, 6190, 1489, 664, 69, 6473, 2777, 693, 7052, 158],
    [1086, 6706, 4265, 2946, 4004, 4422, 96, 1589, 2910, 6790, 1850, 6090, 2315, 6736, 5836, 3887],
];

#[test]
fn literal_known_answers_n16_q7681() {
    let table = NttTable::new(Modulus::new(7681).unwrap(), 16).unwrap();
    assert_eq!(table.root(), 97);
    for (input, output) in KAT_INPUTS.iter().zip(&KAT_OUTPUTS) {
        let mut a = input.to_vec();
        table.forward(&mut a);
        assert_eq!(a, output.to_vec(), "forward of {input:?}");
        let mut b = output.to_vec();
        table.inverse(&mut b);
        assert_eq!(b, input.to_vec(), "inverse of {output:?}");
    }
}

#[test]
fn twiddle_tables_and_inverse_degree() {
    for n in [16usize, 256, 4096] {
        let p = ntt_primes(30, n, 1, &[]).unwrap()[0];
        let table = NttTable::new(Modulus::new(p as u64).unwrap(), n).unwrap();
        let psi = table.root() as u64;
        let log_n = n.trailing_zeros();
        for (k, &w) in table.forward_twiddles().iter().enumerate() {
            assert_eq!(w as u64, pow_mod(psi, bit_reverse(k, log_n) as u64, p as u64));
        }
        assert_eq!(table.inverse_twiddles().len(), n);
        assert_eq!(table.n_inv() as u64 * n as u64 % p as u64, 1);
    }
}

#[test]
fn length_and_parameter_errors() {
    let table = NttTable::new(Modulus::new(7681).unwrap(), 16).unwrap();
    for len in [0usize, 8, 15, 17, 32] {
        let mut a = vec![0u32; len];
        let expected = MathError::LengthMismatch { what: "NTT input", expected: 16, got: len };
        assert_eq!(table.try_forward(&mut a), Err(expected.clone()));
        assert_eq!(table.try_inverse(&mut a), Err(expected));
    }
    let mut ok = vec![3u32; 16];
    assert_eq!(table.try_forward(&mut ok), Ok(()));
    assert_eq!(table.try_inverse(&mut ok), Ok(()));
    assert_eq!(ok, vec![3u32; 16]);

    let q = Modulus::new(7681).unwrap(); // 7680 = 2^9 * 15: supports N <= 256
    assert!(NttTable::new(q, 256).is_ok());
    assert_eq!(NttTable::new(q, 512).unwrap_err(), MathError::NotNttFriendly { q: 7681, n: 512 });
    let composite = Modulus::new(7681 * 3).unwrap();
    assert!(matches!(NttTable::new(composite, 16), Err(MathError::NotNttFriendly { .. })));
    for bad_n in [0usize, 1, 3, 24, 1 << 21] {
        assert_eq!(NttTable::new(q, bad_n).unwrap_err(), MathError::InvalidDegree(bad_n));
    }
}

#[test]
#[should_panic(expected = "NTT input length must equal the ring degree")]
fn forward_panics_on_wrong_length() {
    let table = NttTable::new(Modulus::new(7681).unwrap(), 16).unwrap();
    table.forward(&mut [0u32; 8]);
}
