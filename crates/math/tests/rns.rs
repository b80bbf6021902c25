//! RNS bases and FastBConv against num-bigint.

use num_bigint::{BigInt, BigUint};
use num_traits::{One, ToPrimitive, Zero};
use pimhe_math::{ntt_primes, BaseConverter, Isa, MathError, Modulus, RnsBase};
use pimhe_testkit::bigint::inverse_mod;
use pimhe_testkit::inputs::rng;
use pimhe_testkit::oracle::gcd;
use rand_chacha::rand_core::Rng;
use rand_chacha::ChaCha20Rng;

fn moduli(values: &[u32]) -> Vec<Modulus> {
    values.iter().map(|&q| Modulus::new(q as u64).unwrap()).collect()
}

/// `count` pairwise coprime moduli, mixing random composites, small values and 30-bit primes.
fn random_coprime_moduli(rng: &mut ChaCha20Rng, count: usize) -> Vec<u32> {
    let primes = ntt_primes(30, 1 << 10, 64, &[]).unwrap();
    let mut chosen: Vec<u32> = Vec::with_capacity(count);
    while chosen.len() < count {
        let candidate = match rng.next_u32() % 4 {
            0 => primes[rng.next_u32() as usize % primes.len()],
            1 => 2 + rng.next_u32() % 1000,
            _ => 2 + rng.next_u32() % ((1 << 30) - 2),
        };
        if chosen.iter().all(|&q| gcd(q as u64, candidate as u64) == 1) {
            chosen.push(candidate);
        }
    }
    chosen
}

fn random_below(rng: &mut ChaCha20Rng, bound: &BigUint) -> BigUint {
    let words = bound.bits().div_ceil(32) as usize + 1;
    let digits: Vec<u32> = (0..words).map(|_| rng.next_u32()).collect();
    BigUint::from_slice(&digits) % bound
}

#[test]
fn base_constants() {
    let mut rng = rng(10);
    for size in [1usize, 2, 3, 7, 20] {
        let values = random_coprime_moduli(&mut rng, size);
        let base = RnsBase::new(&moduli(&values)).unwrap();
        assert_eq!(base.len(), size);
        assert!(!base.is_empty());
        assert_eq!(base.moduli(), moduli(&values).as_slice());
        let product: BigUint = values.iter().map(|&q| BigUint::from(q)).product();
        assert_eq!(base.product(), &product);
        for (i, &q) in values.iter().enumerate() {
            let q_hat = &product / q;
            let inv = base.q_hat_inv()[i];
            assert!(inv < q);
            assert_eq!((q_hat * inv) % q, BigUint::one() % q, "q_hat_inv[{i}] wrong");
        }
    }
}

#[test]
fn compose_matches_num_bigint() {
    let mut rng = rng(11);
    for size in [1usize, 2, 3, 5, 8, 13, 20, 40] {
        for _ in 0..8 {
            let values = random_coprime_moduli(&mut rng, size);
            let base = RnsBase::new(&moduli(&values)).unwrap();
            let q_big = base.product().clone();
            for trial in 0..20 {
                let residues: Vec<u32> = values
                    .iter()
                    .map(|&q| match trial {
                        0 => 0,
                        1 => q - 1,
                        2 => q / 2,
                        _ => rng.next_u32() % q,
                    })
                    .collect();
                let x = base.compose(&residues).unwrap();
                assert!(x < q_big, "compose out of range");
                for (&q, &r) in values.iter().zip(&residues) {
                    assert_eq!(&x % q, BigUint::from(r), "compose({residues:?}) wrong mod {q}");
                }
                let centered = base.compose_centered(&residues).unwrap();
                let q_signed = BigInt::from(q_big.clone());
                let twice = &centered * 2;
                assert!(twice > -q_signed.clone() && twice <= q_signed, "centered out of range");
                for (&q, &r) in values.iter().zip(&residues) {
                    let m = BigInt::from(q);
                    assert_eq!(((&centered % &m) + &m) % &m, BigInt::from(r));
                }
                // Centered is x or x - Q.
                let x_signed = BigInt::from(x);
                assert!(centered == x_signed || centered == x_signed - BigInt::from(q_big.clone()));
            }
        }
    }
}

#[test]
fn compose_centered_boundary() {
    // Q even: Q/2 stays positive, Q/2 + 1 becomes -(Q/2 - 1).
    let base = RnsBase::new(&moduli(&[4, 9, 25])).unwrap();
    let q = 900u64;
    for x in [0u64, 1, q / 2 - 1, q / 2, q / 2 + 1, q - 1] {
        let residues = base.decompose(&BigUint::from(x));
        let expected = if 2 * x > q { x as i64 - q as i64 } else { x as i64 };
        assert_eq!(base.compose_centered(&residues).unwrap(), BigInt::from(expected), "x={x}");
    }
    // Q odd: (Q-1)/2 positive, (Q+1)/2 negative.
    let base = RnsBase::new(&moduli(&[7, 9, 25])).unwrap();
    let q = 1575u64;
    for x in [q / 2, q / 2 + 1] {
        let residues = base.decompose(&BigUint::from(x));
        let expected = if 2 * x > q { x as i64 - q as i64 } else { x as i64 };
        assert_eq!(base.compose_centered(&residues).unwrap(), BigInt::from(expected), "x={x}");
    }
}

#[test]
fn decompose_round_trips() {
    let mut rng = rng(12);
    for size in [1usize, 2, 4, 9, 20] {
        let values = random_coprime_moduli(&mut rng, size);
        let base = RnsBase::new(&moduli(&values)).unwrap();
        let q_big = base.product().clone();
        let wide = &q_big * &q_big * 3u32;
        for trial in 0..50 {
            // Values below Q round-trip; larger ones come back reduced mod Q.
            let x = if trial % 2 == 0 { random_below(&mut rng, &q_big) } else { random_below(&mut rng, &wide) };
            let residues = base.decompose(&x);
            let expected: Vec<u32> = values.iter().map(|&q| (&x % q).to_u32().unwrap()).collect();
            assert_eq!(residues, expected);
            assert_eq!(base.compose(&residues).unwrap(), &x % &q_big);

            let negative = -BigInt::from(x.clone());
            let residues = base.decompose_signed(&negative);
            for (&q, &r) in values.iter().zip(&residues) {
                let m = BigInt::from(q);
                assert!(r < q);
                assert_eq!(BigInt::from(r), ((&negative % &m) + &m) % &m);
            }
            assert_eq!(base.decompose_signed(&BigInt::from(x.clone())), base.decompose(&x));
            let centered = base.compose_centered(&residues).unwrap();
            let reduced =
                ((&negative % BigInt::from(q_big.clone())) + BigInt::from(q_big.clone())) % BigInt::from(q_big.clone());
            assert!(centered == reduced || centered == reduced - BigInt::from(q_big.clone()));
        }
        assert_eq!(base.decompose(&BigUint::zero()), vec![0; size]);
        assert_eq!(base.decompose_signed(&BigInt::from(-1)), values.iter().map(|&q| q - 1).collect::<Vec<_>>());
    }
}

#[test]
fn base_errors() {
    assert!(matches!(RnsBase::new(&[]), Err(MathError::InvalidBase(_))));
    for (values, a, b) in [
        (vec![7681u32, 12289, 7681], 7681u32, 7681u32),
        (vec![6, 35, 21], 6, 21),
        (vec![1 << 20, 3, 5, 1 << 29], 1 << 20, 1 << 29),
        (vec![11, 13, 17, 19, 23 * 3, 29, 46], 69, 46),
    ] {
        match RnsBase::new(&moduli(&values)) {
            Err(MathError::InvalidBase(message)) => {
                assert!(message.contains(&a.to_string()), "{message:?} should name {a}");
                assert!(message.contains(&b.to_string()), "{message:?} should name {b}");
            }
            other => panic!("{values:?} accepted: {other:?}"),
        }
    }
    let base = RnsBase::new(&moduli(&[7681, 12289])).unwrap();
    for len in [0usize, 1, 3] {
        let expected_err = |e: MathError| matches!(e, MathError::LengthMismatch { expected: 2, got, .. } if got == len);
        assert!(expected_err(base.compose(&vec![0; len]).unwrap_err()));
        assert!(expected_err(base.compose_centered(&vec![0; len]).unwrap_err()));
    }
}

/// Checks one FastBConv output against the definition computed with num-bigint:
/// S = sum_i [x_i (Q/q_i)^{-1}]_{q_i} (Q/q_i) must equal x + a Q with 0 <= a < L, and every
/// output limb must equal S mod p_j.
fn check_conversion(from: &RnsBase, to: &RnsBase, xs: &[BigUint], input: &[u32], output: &[u32]) {
    let n = xs.len();
    let l = from.len();
    let q_big = from.product();
    let q_hat: Vec<BigUint> = from.moduli().iter().map(|q| q_big / q.value()).collect();
    let q_hat_inv: Vec<u64> = from
        .moduli()
        .iter()
        .zip(&q_hat)
        .map(|(q, hat)| inverse_mod(&BigInt::from(hat.clone()), q.value()).to_u64().unwrap())
        .collect();
    for (c, x) in xs.iter().enumerate() {
        let mut sum = BigUint::zero();
        for (i, q) in from.moduli().iter().enumerate() {
            let x_i = input[i * n + c] as u64;
            let scaled = x_i * q_hat_inv[i] % q.value() as u64;
            sum += &q_hat[i] * scaled;
        }
        assert!(&sum >= x);
        let excess = &sum - x;
        assert!((&excess % q_big).is_zero(), "S - x not a multiple of Q");
        let a = &excess / q_big;
        assert!(a < BigUint::from(l), "a = {a} not below L = {l}");
        for (j, p) in to.moduli().iter().enumerate() {
            let expected = (&sum % p.value()).to_u32().unwrap();
            assert_eq!(output[j * n + c], expected, "coefficient {c}, target limb {j}");
            assert_eq!(BigUint::from(output[j * n + c]), (x + &a * q_big) % p.value());
        }
    }
}

fn limb_major(base: &RnsBase, xs: &[BigUint]) -> Vec<u32> {
    let mut out = Vec::with_capacity(base.len() * xs.len());
    for q in base.moduli() {
        out.extend(xs.iter().map(|x| (x % q.value()).to_u32().unwrap()));
    }
    out
}

#[test]
fn fast_base_conversion_matches_definition() {
    let mut rng = rng(13);
    let primes = ntt_primes(30, 1 << 12, 120, &[]).unwrap();
    for (from_len, to_len) in [
        (1usize, 1usize),
        (1, 3),
        (2, 1),
        (3, 4),
        (5, 5),
        (8, 2),
        (15, 3),
        (16, 2),
        (17, 3),
        (20, 20),
        (33, 4),
        (60, 5),
    ] {
        for round in 0..3 {
            let (from_values, to_values) = if round == 0 {
                // Largest 30-bit primes: the accumulation overflow bound is tightest here.
                (primes[..from_len].to_vec(), primes[60..60 + to_len].to_vec())
            } else {
                let all = random_coprime_moduli(&mut rng, from_len + to_len);
                (all[..from_len].to_vec(), all[from_len..].to_vec())
            };
            let from = RnsBase::new(&moduli(&from_values)).unwrap();
            let to = RnsBase::new(&moduli(&to_values)).unwrap();
            let conv = BaseConverter::new(&from, &to).unwrap();
            assert_eq!(conv.from_base(), &from);
            assert_eq!(conv.to_base(), &to);
            let n = [8usize, 13, 64, 200][round + (from_len % 2)];
            let xs: Vec<BigUint> = (0..n)
                .map(|c| match c {
                    0 => BigUint::zero(),
                    1 => from.product() - 1u32,
                    _ => random_below(&mut rng, from.product()),
                })
                .collect();
            let input = limb_major(&from, &xs);
            let mut output = vec![u32::MAX; to.len() * n];
            conv.convert(&input, &mut output).unwrap();
            check_conversion(&from, &to, &xs, &input, &output);
        }
    }
}

#[test]
fn fast_base_conversion_worst_case_accumulation() {
    // Residues chosen so every scaled value [x_i (Q/q_i)^{-1}]_{q_i} is q_i - 1, the largest
    // possible, with 60 source moduli and targets near 2^30: the sum of products is near its
    // maximum and a missed reduction would overflow.
    let primes = ntt_primes(30, 1 << 10, 70, &[]).unwrap();
    let mut from_values = primes[..60].to_vec();
    from_values[0] = (1 << 30) - 1; // the largest allowed modulus (composite, coprime to the rest)
    let from = RnsBase::new(&moduli(&from_values)).unwrap();
    let to = RnsBase::new(&moduli(&primes[60..70])).unwrap();
    let conv = BaseConverter::new(&from, &to).unwrap();
    let q_big = from.product();
    // x = sum_i (q_i - 1) (Q/q_i) mod Q has scaled residues q_i - 1.
    let x_max: BigUint = from.moduli().iter().map(|q| (q_big / q.value()) * (q.value() - 1)).sum::<BigUint>() % q_big;
    let xs = vec![x_max; 40];
    let input = limb_major(&from, &xs);
    let mut output = vec![0u32; to.len() * xs.len()];
    conv.convert(&input, &mut output).unwrap();
    check_conversion(&from, &to, &xs, &input, &output);
}

#[test]
fn fast_base_conversion_shared_moduli_and_unreduced_input() {
    let mut rng = rng(14);
    let primes = ntt_primes(30, 1 << 10, 6, &[]).unwrap();
    let from = RnsBase::new(&moduli(&primes[..4])).unwrap();
    // Target shares q_1 and q_3 with the source.
    let to = RnsBase::new(&moduli(&[primes[1], primes[4], primes[3]])).unwrap();
    let conv = BaseConverter::new(&from, &to).unwrap();
    let n = 32;
    let xs: Vec<BigUint> = (0..n).map(|_| random_below(&mut rng, from.product())).collect();
    let input = limb_major(&from, &xs);
    let mut output = vec![0u32; 3 * n];
    conv.convert(&input, &mut output).unwrap();
    check_conversion(&from, &to, &xs, &input, &output);
    // On a shared modulus, x + aQ = x mod q_i.
    assert_eq!(&output[..n], &input[n..2 * n]);
    assert_eq!(&output[2 * n..], &input[3 * n..]);

    // Adding q_i to a residue (still below 2^32) does not change the result.
    let unreduced: Vec<u32> =
        input.iter().enumerate().map(|(k, &x)| x + from.moduli()[k / n].value() * (k % 3) as u32).collect();
    let mut output2 = vec![0u32; 3 * n];
    conv.convert(&unreduced, &mut output2).unwrap();
    assert_eq!(output2, output);
}

#[test]
fn fast_base_conversion_length_errors() {
    let from = RnsBase::new(&moduli(&[7681, 12289, 40961])).unwrap();
    let to = RnsBase::new(&moduli(&[65537, 114689])).unwrap();
    let conv = BaseConverter::new(&from, &to).unwrap();
    let mut output = vec![0u32; 2 * 8];
    assert!(matches!(conv.convert(&[0u32; 3 * 8 + 1], &mut output), Err(MathError::LengthMismatch { got: 25, .. })));
    assert!(matches!(
        conv.convert(&[0u32; 3 * 8], &mut [0u32; 2 * 8 + 2]),
        Err(MathError::LengthMismatch { expected: 16, got: 18, .. })
    ));
    assert!(matches!(
        conv.convert(&[0u32; 3 * 7], &mut output),
        Err(MathError::LengthMismatch { expected: 14, got: 16, .. })
    ));
    assert_eq!(conv.convert(&[], &mut []), Ok(()));
    assert_eq!(conv.convert(&[1u32; 3 * 8], &mut output), Ok(()));
    // One target at a time: the target limb must exist, the scaled input fit the output.
    let mut limb = vec![0u32; 8];
    assert!(matches!(
        conv.accumulate_on(Isa::Scalar, 2, &[0u32; 3 * 8], &mut limb),
        Err(MathError::LengthMismatch { expected: 2, got: 2, .. })
    ));
    assert!(matches!(
        conv.accumulate_on(Isa::Scalar, 1, &[0u32; 3 * 8 - 1], &mut limb),
        Err(MathError::LengthMismatch { expected: 24, got: 23, .. })
    ));
    assert_eq!(conv.accumulate_on(Isa::Scalar, 1, &[0u32; 3 * 8], &mut limb), Ok(()));
    assert!(matches!(
        conv.scale_on(Isa::Scalar, 3, &mut limb),
        Err(MathError::LengthMismatch { expected: 3, got: 3, .. })
    ));
}
