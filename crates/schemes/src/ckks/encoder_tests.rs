//! The encoder's unit tests (a file of their own: the encoder is long enough alone).

use rand_chacha::rand_core::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;

use super::*;

fn rng(seed: u64) -> ChaCha20Rng {
    ChaCha20Rng::seed_from_u64(seed)
}

/// Uniform in [-1, 1).
fn uniform(rng: &mut ChaCha20Rng) -> f64 {
    (rng.next_u64() >> 11) as f64 / (1u64 << 52) as f64 - 1.0
}

fn random_values(rng: &mut ChaCha20Rng, count: usize) -> Vec<Complex64> {
    (0..count).map(|_| Complex64::new(uniform(rng), uniform(rng))).collect()
}

fn to_f64(coefficients: &[i128]) -> Vec<f64> {
    coefficients.iter().map(|&c| c as f64).collect()
}

/// X -> X^k on integer coefficients: X^i goes to X^(ik mod 2N), negated past N.
fn automorphism(coefficients: &[i128], k: usize) -> Vec<i128> {
    let n = coefficients.len();
    let mut out = vec![0i128; n];
    for (i, &c) in coefficients.iter().enumerate() {
        let t = i * k % (2 * n);
        if t < n {
            out[t] = c;
        } else {
            out[t - n] = -c;
        }
    }
    out
}

fn pow_mod(base: usize, mut e: usize, m: usize) -> usize {
    let (mut result, mut base) = (1 % m, base % m);
    while e > 0 {
        if e & 1 == 1 {
            result = result * base % m;
        }
        base = base * base % m;
        e >>= 1;
    }
    result
}

/// The Galois element of a left rotation by r (negative: right): 5^r mod 2N.
fn rotation_element(r: i64, degree: usize) -> usize {
    let k = pow_mod(5, r.unsigned_abs() as usize, 2 * degree);
    if r >= 0 {
        k
    } else {
        (1..2 * degree).step_by(2).find(|&x| x * k % (2 * degree) == 1).unwrap()
    }
}

/// The canonical embedding evaluated directly, O(N n): m(zeta^(5^j mod 2N)) for j < slots,
/// exponents reduced exactly before the trigonometry.
fn naive_slots(coefficients: &[f64], slots: usize) -> Vec<Complex64> {
    let n = coefficients.len();
    let two_n = 2 * n;
    let mut root = 1usize; // 5^j mod 2N
    let mut out = Vec::with_capacity(slots);
    for _ in 0..slots {
        let mut sum = Complex64::new(0.0, 0.0);
        for (k, &c) in coefficients.iter().enumerate() {
            if c != 0.0 {
                let e = k * root % two_n;
                sum += Complex64::from_polar(c, PI * e as f64 / n as f64);
            }
        }
        out.push(sum);
        root = root * 5 % two_n;
    }
    out
}

/// What rounding the 2n coefficients to integers can move a slot by, with margin: each
/// rounding error is at most 1/2 and they add up like a random walk (8 standard
/// deviations), plus the FFT's own floating-point error.
fn rounding_tolerance(slots: usize, scale: f64) -> f64 {
    8.0 * (slots as f64 / 6.0).sqrt() / scale + 1e-13
}

fn max_distance(a: &[Complex64], b: &[Complex64]) -> f64 {
    assert_eq!(a.len(), b.len());
    a.iter().zip(b).map(|(x, y)| (x - y).norm()).fold(0.0, f64::max)
}

/// (N, slots) pairs: full and sparse packings from N = 2 up to 2^12, and 1 slot.
fn shapes() -> Vec<(usize, usize)> {
    let mut shapes = Vec::new();
    for log_n in [1u32, 2, 3, 5, 8, 12] {
        let degree = 1 << log_n;
        let mut slots = degree / 2;
        while slots >= 1 {
            shapes.push((degree, slots));
            slots /= 2;
        }
    }
    shapes
}

#[test]
fn encode_decode_round_trip_complex_and_real() {
    let scale = 2f64.powi(40);
    let mut rng = rng(1);
    for (degree, slots) in shapes() {
        let encoder = CkksEncoder::new(degree).unwrap();
        let values = random_values(&mut rng, slots);
        let coefficients = encoder.encode(&values, slots, scale).unwrap();
        let decoded = encoder.decode(&to_f64(&coefficients), slots, scale).unwrap();
        let error = max_distance(&decoded, &values);
        assert!(error <= rounding_tolerance(slots, scale), "N = {degree}, {slots} slots: error {error:e}");
        // At scale 2^40 that is 2^-40 relative to the values' size, up to the sqrt(n) of
        // the rounding's random walk.
        assert!(error <= 2f64.powi(-40) * (slots as f64).sqrt() * 4.0, "N = {degree}, {slots} slots: {error:e}");

        let reals: Vec<f64> = values.iter().map(|z| z.re).collect();
        let coefficients = encoder.encode_real(&reals, slots, scale).unwrap();
        let decoded = encoder.decode_real(&to_f64(&coefficients), slots, scale).unwrap();
        let error = decoded.iter().zip(&reals).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
        assert!(error <= rounding_tolerance(slots, scale), "N = {degree}, {slots} real slots: error {error:e}");
    }
}

#[test]
fn round_trip_at_the_largest_degrees() {
    let scale = 2f64.powi(45);
    let mut rng = rng(2);
    for (degree, slots) in [(1 << 15, 1 << 14), (1 << 16, 1 << 15), (1 << 17, 1 << 16), (1 << 17, 8)] {
        let encoder = CkksEncoder::new(degree).unwrap();
        let values = random_values(&mut rng, slots);
        let coefficients = encoder.encode(&values, slots, scale).unwrap();
        let decoded = encoder.decode(&to_f64(&coefficients), slots, scale).unwrap();
        let error = max_distance(&decoded, &values);
        assert!(error <= rounding_tolerance(slots, scale), "N = {degree}, {slots} slots: error {error:e}");
    }
}

#[test]
fn short_inputs_are_zero_padded() {
    let encoder = CkksEncoder::new(64).unwrap();
    let scale = 2f64.powi(40);
    let values = [Complex64::new(0.5, -0.25), Complex64::new(-3.0, 1.0), Complex64::new(7.0, 0.0)];
    for slots in [4, 8, 32] {
        let decoded = encoder.decode(&to_f64(&encoder.encode(&values, slots, scale).unwrap()), slots, scale).unwrap();
        assert_eq!(decoded.len(), slots);
        let mut expected = values.to_vec();
        expected.resize(slots, Complex64::new(0.0, 0.0));
        assert!(max_distance(&decoded, &expected) < 1e-10, "{slots} slots");
    }
    // No values at all: the zero polynomial.
    assert!(encoder.encode(&[], 16, scale).unwrap().iter().all(|&c| c == 0));
}

#[test]
fn decode_matches_naive_canonical_embedding() {
    let scale = 2f64.powi(20);
    let mut rng = rng(3);
    for (degree, slots) in shapes() {
        let encoder = CkksEncoder::new(degree).unwrap();
        // Random integer coefficients on the packing's grid (multiples of N/(2n)).
        let gap = degree / (2 * slots);
        let mut coefficients = vec![0.0; degree];
        for c in coefficients.iter_mut().step_by(gap) {
            *c = (uniform(&mut rng) * 2f64.powi(30)).round();
        }
        let fast = encoder.decode(&coefficients, slots, scale).unwrap();
        let naive: Vec<Complex64> = naive_slots(&coefficients, slots).into_iter().map(|z| z / scale).collect();
        let size: f64 = coefficients.iter().map(|c| c.abs()).sum::<f64>() / scale;
        let error = max_distance(&fast, &naive);
        assert!(error <= 1e-13 * size.max(1.0), "N = {degree}, {slots} slots: error {error:e} (size {size:e})");
    }
}

#[test]
fn encode_inverts_the_naive_canonical_embedding() {
    let scale = 2f64.powi(40);
    let mut rng = rng(4);
    for (degree, slots) in shapes() {
        let encoder = CkksEncoder::new(degree).unwrap();
        let values = random_values(&mut rng, slots);
        let coefficients = encoder.encode(&values, slots, scale).unwrap();
        // Off the grid everything is zero.
        let gap = degree / (2 * slots);
        assert!(coefficients.iter().enumerate().all(|(i, &c)| i % gap == 0 || c == 0));
        let naive = naive_slots(&to_f64(&coefficients), slots);
        let expected: Vec<Complex64> = values.iter().map(|z| z * scale).collect();
        let error = max_distance(&naive, &expected) / scale;
        assert!(error <= rounding_tolerance(slots, scale) + 1e-12, "N = {degree}, {slots} slots: error {error:e}");
    }
}

#[test]
fn galois_element_5_to_the_r_rotates_slots_left_by_r() {
    let scale = 2f64.powi(40);
    let mut rng = rng(5);
    for (degree, slots) in [(8, 4), (16, 8), (16, 2), (64, 32), (64, 8), (256, 128), (256, 16), (1024, 64), (32, 1)] {
        let encoder = CkksEncoder::new(degree).unwrap();
        let values = random_values(&mut rng, slots);
        let coefficients = encoder.encode(&values, slots, scale).unwrap();
        let n = slots as i64;
        for r in [0, 1, 2, 3, 5, n - 1, n, n + 1, -1, -2, -3, -(n - 1), 2 * n + 3] {
            let k = rotation_element(r, degree);
            let decoded = encoder.decode(&to_f64(&automorphism(&coefficients, k)), slots, scale).unwrap();
            let expected: Vec<Complex64> = (0..n).map(|j| values[(j + r).rem_euclid(n) as usize]).collect();
            let error = max_distance(&decoded, &expected);
            assert!(
                error <= rounding_tolerance(slots, scale),
                "N = {degree}, {slots} slots, rotation by {r} (k = {k}): error {error:e}"
            );
        }
    }
}

#[test]
fn galois_element_2n_minus_1_conjugates_every_slot() {
    let scale = 2f64.powi(40);
    let mut rng = rng(6);
    for (degree, slots) in [(2, 1), (8, 4), (64, 32), (64, 4), (1024, 512), (1024, 1)] {
        let encoder = CkksEncoder::new(degree).unwrap();
        let values = random_values(&mut rng, slots);
        let coefficients = encoder.encode(&values, slots, scale).unwrap();
        let decoded = encoder.decode(&to_f64(&automorphism(&coefficients, 2 * degree - 1)), slots, scale).unwrap();
        let expected: Vec<Complex64> = values.iter().map(|z| z.conj()).collect();
        let error = max_distance(&decoded, &expected);
        assert!(error <= rounding_tolerance(slots, scale), "N = {degree}, {slots} slots: error {error:e}");
    }
}

#[test]
fn sparse_decoding_ignores_coefficients_off_the_grid() {
    let encoder = CkksEncoder::new(32).unwrap();
    let scale = 2f64.powi(30);
    let values = random_values(&mut rng(7), 4);
    let mut coefficients = to_f64(&encoder.encode(&values, 4, scale).unwrap());
    // gap = 4: positions 1, 2, 3, 5, ... are off the grid.
    for (i, c) in coefficients.iter_mut().enumerate() {
        if i % 4 != 0 {
            *c = 1000.0 * i as f64;
        }
    }
    let decoded = encoder.decode(&coefficients, 4, scale).unwrap();
    assert!(max_distance(&decoded, &values) <= rounding_tolerance(4, scale));
}

fn message(result: Result<impl std::fmt::Debug>) -> String {
    result.unwrap_err().to_string()
}

#[test]
fn rejects_bad_degrees_slots_scales_and_values() {
    for degree in [0, 1, 3, 12, 1 << 18] {
        let err = CkksEncoder::new(degree).unwrap_err().to_string();
        assert!(err.contains(&format!("ring degree {degree} is not allowed")) && err.contains("2^17"), "{err}");
    }
    let encoder = CkksEncoder::new(16).unwrap();
    assert_eq!(format!("{encoder:?}"), "CkksEncoder { degree: 16, .. }");
    let one = [Complex64::new(1.0, 0.0)];
    for slots in [0, 3, 6, 16, 32] {
        let err = message(encoder.encode(&one, slots, 1e6));
        assert!(
            err.contains(&format!("slot count {slots} is not allowed")) && err.contains("from 1 to N/2 = 8"),
            "{err}"
        );
        let err = message(encoder.decode(&[0.0; 16], slots, 1e6));
        assert!(err.contains(&format!("slot count {slots} is not allowed")), "{err}");
    }
    let err = message(encoder.encode(&[Complex64::new(0.0, 0.0); 5], 4, 1e6));
    assert_eq!(err, "5 values do not fit in 4 slots");
    assert_eq!(
        encoder.encode(&[Complex64::new(0.0, 0.0); 5], 4, 1e6).unwrap_err(),
        SchemeError::TooManyValues { len: 5, slots: 4 }
    );
    let err = message(encoder.encode(&[Complex64::new(1.0, 0.0), Complex64::new(0.0, f64::NAN)], 4, 1e6));
    assert!(err.contains("value at index 1") && err.contains("NaN"), "{err}");
    let err = message(encoder.encode_real(&[1.0, 2.0, f64::NEG_INFINITY], 4, 1e6));
    assert!(err.contains("value at index 2") && err.contains("-inf"), "{err}");
    for scale in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        let err = message(encoder.encode(&one, 4, scale));
        assert!(err.contains("scale") && err.contains("finite number greater than 0"), "{scale}: {err}");
        let err = message(encoder.decode(&[0.0; 16], 4, scale));
        assert!(err.contains("finite number greater than 0"), "{scale}: {err}");
    }
    // 2^100 * 2^30 = 2^130 > 2^126.
    let err = message(encoder.encode_real(&[2f64.powi(100)], 1, 2f64.powi(30)));
    assert!(err.starts_with("invalid parameters: scale overflow") && err.contains("too large"), "{err}");
    // A product that overflows f64 itself.
    let err = message(encoder.encode_real(&[1e300], 8, 1e300));
    assert!(err.contains("scale overflow"), "{err}");
    // Just below the limit is fine: one slot puts the value itself in coefficient 0.
    let ok = encoder.encode_real(&[2f64.powi(95)], 1, 2f64.powi(30)).unwrap();
    assert_eq!(ok[0], 1i128 << 125);
    let err = message(encoder.decode(&[0.0; 15], 4, 1.0));
    assert!(err.contains("N = 16 coefficients") && err.contains("got 15"), "{err}");
    let mut bad = [0.0; 16];
    bad[8] = f64::INFINITY;
    let err = message(encoder.decode(&bad, 8, 1.0));
    assert!(err.contains("coefficient 8 is inf"), "{err}");
}

#[test]
fn to_poly_batch_reduces_every_coefficient_modulo_every_prime() {
    let primes = pimhe_math::ntt_primes(30, 16, 3, &[]).unwrap();
    let basis = RingBasis::new(16, &primes).unwrap();
    let special = [0i128, 1, -1, i128::MAX, i128::MIN, i128::MIN + 1, 1 << 125, -(1 << 125), 1 << 64, -(1 << 64) - 1];
    let mut rng = rng(8);
    let first: Vec<i128> = special.iter().copied().chain((0..6).map(|_| rng.next_u64() as i128)).collect();
    let second: Vec<i128> = (0..16).map(|_| ((rng.next_u64() as i128) << 60) ^ rng.next_u64() as i128).collect();
    let second: Vec<i128> = second.iter().enumerate().map(|(i, &x)| if i % 2 == 0 { -x } else { x }).collect();
    let batch = to_poly_batch(&[first.as_slice(), second.as_slice()], &basis).unwrap();
    assert_eq!((batch.count(), batch.representation()), (2, Representation::Coefficient));
    for (limb, &q) in primes.iter().enumerate() {
        for (k, poly) in [&first, &second].into_iter().enumerate() {
            let expected: Vec<u32> = poly.iter().map(|&c| c.rem_euclid(i128::from(q)) as u32).collect();
            assert_eq!(batch.poly_limb(limb, k), expected.as_slice(), "prime {q}, polynomial {k}");
        }
    }
    let err = message(to_poly_batch(&[vec![0i128; 15]], &basis));
    assert!(err.contains("polynomial 0 has 15 coefficients") && err.contains("ring degree 16"), "{err}");
}

#[test]
fn rns_round_trip_through_crt_to_float() {
    // encode -> residues -> centred f64 (word-only CRT) -> decode gives the values back.
    let degree = 1 << 10;
    let primes = pimhe_math::ntt_primes(30, degree, 4, &[]).unwrap();
    let basis = RingBasis::new(degree, &primes).unwrap();
    let crt = CrtToFloat::new(&basis.moduli()).unwrap();
    let encoder = CkksEncoder::new(degree).unwrap();
    let scale = 2f64.powi(50);
    let mut rng = rng(9);
    let a = random_values(&mut rng, 512);
    let b = random_values(&mut rng, 64);
    let coefficients = [encoder.encode(&a, 512, scale).unwrap(), encoder.encode(&b, 64, scale).unwrap()];
    let batch = to_poly_batch(&coefficients, &basis).unwrap();
    let centred = centered_coefficients(&batch, &crt).unwrap();
    assert_eq!(centred[0], to_f64(&coefficients[0]));
    assert_eq!(centred[1], to_f64(&coefficients[1]));
    let decoded = encoder.decode(&centred[1], 64, scale).unwrap();
    assert!(max_distance(&decoded, &b) <= rounding_tolerance(64, scale));

    let wrong = CrtToFloat::new(&basis.moduli()[..3]).unwrap();
    assert!(message(centered_coefficients(&batch, &wrong)).contains("the CRT was built for primes"));
    let mut ntt = batch.clone();
    ntt.to_ntt().unwrap();
    assert!(centered_coefficients(&ntt, &crt).is_err());
}

#[test]
fn roots_of_unity_are_accurate_in_every_octant() {
    for order in [8usize, 64, 1 << 17] {
        for k in (0..order).step_by((order / 64).max(1)) {
            let exact = Complex64::from_polar(1.0, 2.0 * PI * k as f64 / order as f64);
            assert!((root_of_unity(k, order) - exact).norm() < 1e-15, "k = {k}, order = {order}");
        }
    }
    assert_eq!(root_of_unity(0, 8), Complex64::new(1.0, 0.0));
    assert_eq!(root_of_unity(2, 8), Complex64::new(0.0, 1.0));
    assert_eq!(root_of_unity(4, 8), Complex64::new(-1.0, 0.0));
    assert_eq!(root_of_unity(6, 8), Complex64::new(0.0, -1.0));
}
