//! The S1/S2 CRT constants (Lemma 1, Theorems 1-2, Lemma 2, Lemmas 3-4) and FastBConv: generic
//! == special == the num-bigint formula sum_i |x_i (q/q_i)^-1|_{q_i} (q/q_i) mod b, which is
//! x + alpha q with 0 <= alpha < |Q|.

mod special_common;

use num_bigint::{BigInt, BigUint};
use num_integer::Integer;
use num_traits::{One, Zero};
use pimhe_math::special::{
    ExtendedBase, FastBConv, InverseForm, SpecialBase, SpecialForm, SpecialModulus, Wide, WideArith,
};
use special_common::*;

fn big_inverse(a: &BigUint, m: &BigUint) -> BigUint {
    let (a, m) = (BigInt::from(a.clone()), BigInt::from(m.clone()));
    let e = a.extended_gcd(&m);
    assert!(e.gcd.is_one());
    e.x.mod_floor(&m).to_biguint().unwrap()
}

fn moduli_big(base: &SpecialBase) -> Vec<BigUint> {
    base.moduli().iter().map(|q| to_big(q.value())).collect()
}

fn q_of(moduli: &[BigUint]) -> BigUint {
    moduli.iter().product()
}

fn check_constants(base: &SpecialBase) {
    let ms = moduli_big(base);
    let q = q_of(&ms);
    for (i, m) in ms.iter().enumerate() {
        let want = big_inverse(&((&q / m) % m), m);
        assert_eq!(to_big(&base.q_hat_inv()[i]), want, "|(q/q_{i})^-1|");
    }
}

#[test]
fn lemma_1_and_theorems_1_2_lemma_2_give_the_s1_forms() {
    for g in WIDTHS {
        let s1 = SpecialBase::balanced(g).unwrap();
        check_constants(&s1);
        // Lemma 1: 2^(g-1), 2^g - 1, 2^(g-1) + 1.
        let want = [pow2(g - 1), pow2(g) - 1u32, pow2(g - 1) + 1u32];
        for (c, w) in s1.q_hat_inv().iter().zip(&want) {
            assert_eq!(&to_big(c), w, "g = {g}");
        }
        assert_eq!(s1.inverse_forms(), &[InverseForm::Halve, InverseForm::Negate, InverseForm::Halve]);
    }
}

#[test]
fn lemmas_3_and_4_give_the_s2_shifts() {
    for (m, f) in [(110u32, 1u32), (3, 2), (5, 3), (8, 2), (16, 2), (20, 3), (61, 1), (27, 3)] {
        let s2 = SpecialBase::fermat_chain(m, f).unwrap();
        check_constants(&s2);
        let ms = moduli_big(&s2);
        assert_eq!(q_of(&ms), pow2(m << (f + 1)) - 1u32, "q = 2^(2^(f+1) m) - 1");
        // Lemma 3: |q0/q|_{q0} = 2^(m - (f + 1)); Lemma 4 (q_i = 2^(2^(i-1) m) + 1):
        // 2^(2^(i-1) m - (f - i + 2)).
        let mut want = vec![m - (f + 1)];
        want.extend((1..=f + 1).map(|i| (m << (i - 1)) - (f + 2 - i)));
        for (i, e) in want.iter().enumerate() {
            assert_eq!(to_big(&s2.q_hat_inv()[i]), pow2(*e), "m = {m}, f = {f}, i = {i}");
        }
        for (i, form) in s2.inverse_forms().iter().enumerate() {
            match form {
                InverseForm::Shift(e) => assert_eq!(*e, want[i]),
                // 2^(g-1) for 2^g - 1 is Theorem 1's halving.
                InverseForm::Halve => assert_eq!(want[i], s2.moduli()[i].g() - 1),
                other => panic!("unexpected form {other:?}"),
            }
        }
    }
}

#[test]
fn custom_bases_check_coprimality() {
    let a = SpecialModulus::fermat_like(6).unwrap(); // 65 = 5 * 13
    let b = SpecialModulus::fermat_like(2).unwrap(); // 5
    let err = SpecialBase::new(vec![a, b]).unwrap_err().to_string();
    assert!(err.contains("share a factor"), "{err}");
    let err = SpecialBase::fermat_chain(110, 7).unwrap_err().to_string();
    assert!(err.contains("2^f m <= 247"), "{err}");
    let base =
        SpecialBase::new(vec![SpecialModulus::mersenne(7).unwrap(), SpecialModulus::power_of_two(9).unwrap()]).unwrap();
    check_constants(&base);
}

fn oracle(x_res: &[BigUint], ms: &[BigUint], b: &BigUint) -> BigUint {
    let q = q_of(ms);
    let mut acc = BigUint::zero();
    for (xi, m) in x_res.iter().zip(ms) {
        let q_hat = &q / m;
        let y = (xi * big_inverse(&(&q_hat % m), m)) % m;
        acc += y * q_hat;
    }
    acc % b
}

fn check_conversion(base: &SpecialBase, targets: &[BigUint], values: &[BigUint]) {
    let ms = moduli_big(base);
    let q = q_of(&ms);
    let to: Vec<Wide> = targets.iter().map(from_big).collect();
    let conv = FastBConv::from_special(base, &to).unwrap();
    let generic = FastBConv::new(&ms.iter().map(from_big).collect::<Vec<_>>(), &to).unwrap();
    for x in values {
        let res: Vec<BigUint> = ms.iter().map(|m| x % m).collect();
        let wres: Vec<Wide> = res.iter().map(from_big).collect();
        let special = conv.convert_special(&wres);
        assert_eq!(special, conv.convert_generic(&wres), "special == generic, x = {x}");
        assert_eq!(special, generic.convert_generic(&wres), "constants built generically agree, x = {x}");
        for (j, b) in targets.iter().enumerate() {
            let got = to_big(&special[j]);
            assert_eq!(got, oracle(&res, &ms, b), "FastBConv formula, x = {x}, b = {b}");
            assert!(
                (0..ms.len() as u32).any(|alpha| (x + &q * alpha) % b == got),
                "x + alpha q for some alpha < |Q|, x = {x}"
            );
        }
    }
}

fn values_for(ms: &[BigUint], seed: u64) -> Vec<BigUint> {
    let q = q_of(ms);
    let mut r = rng(seed);
    let mut v = vec![BigUint::zero(), BigUint::one(), &q - 1u32, &q / 2u32, &q / 2u32 + 1u32];
    for m in ms {
        v.extend([m - 1u32, m.clone(), m + 1u32]);
    }
    v.extend((0..40).map(|_| random_below(&mut r, &q)));
    v.retain(|x| x < &q);
    v
}

#[test]
fn fastbconv_s1_generic_special_and_num_bigint_agree() {
    for g in WIDTHS {
        let base = SpecialBase::balanced(g).unwrap();
        let ms = moduli_big(&base);
        let mut targets = vec![BigUint::from(65537u32), BigUint::from(2u32), BigUint::from(3u32)];
        if g >= 20 {
            targets.extend(ExtendedBase::new(&base, 1 << 10, 65537).unwrap().bsk_m_tilde().iter().map(to_big));
        }
        check_conversion(&base, &targets, &values_for(&ms, g as u64));
    }
}

#[test]
fn fastbconv_s2_generic_special_and_num_bigint_agree() {
    for (m, f) in [(110u32, 1u32), (5, 3), (16, 2), (61, 1)] {
        let base = SpecialBase::fermat_chain(m, f).unwrap();
        let ms = moduli_big(&base);
        let mut targets = vec![BigUint::from(65537u32), BigUint::from(1_000_003u32)];
        if m >= 16 {
            targets.extend(ExtendedBase::new(&base, 1 << 8, 17).unwrap().bsk_m_tilde().iter().map(to_big));
        }
        check_conversion(&base, &targets, &values_for(&ms, m as u64));
    }
}

#[test]
fn fastbconv_back_from_the_extended_base_to_q() {
    let q = SpecialBase::balanced(146).unwrap();
    let ext = ExtendedBase::new(&q, 1 << 12, 65537).unwrap();
    let bs: Vec<BigUint> = ext.b().iter().map(to_big).collect();
    let targets = moduli_big(&q);
    let conv = FastBConv::new(ext.b(), &targets.iter().map(from_big).collect::<Vec<_>>()).unwrap();
    let mut r = rng(77);
    let mb = q_of(&bs);
    for _ in 0..30 {
        let x = random_below(&mut r, &mb);
        let res: Vec<BigUint> = bs.iter().map(|b| &x % b).collect();
        let out = conv.convert_generic(&res.iter().map(from_big).collect::<Vec<_>>());
        for (j, t) in targets.iter().enumerate() {
            assert_eq!(to_big(&out[j]), oracle(&res, &bs, t));
        }
    }
}

#[test]
fn fastbconv_on_polynomials_is_coefficientwise() {
    let base = SpecialBase::fermat_chain(110, 1).unwrap();
    let conv = FastBConv::from_special(&base, &[Wide::from_u64(65537), Wide::from_u64(97)]).unwrap();
    let mut r = rng(5);
    let ms = moduli_big(&base);
    let q = q_of(&ms);
    let xs: Vec<BigUint> = (0..16).map(|_| random_below(&mut r, &q)).collect();
    let limbs: Vec<Vec<Wide>> = ms.iter().map(|m| xs.iter().map(|x| from_big(&(x % m))).collect()).collect();
    let out = conv.convert_poly(&limbs).unwrap();
    for (c, x) in xs.iter().enumerate() {
        let column: Vec<Wide> = ms.iter().map(|m| from_big(&(x % m))).collect();
        let single = conv.convert_special(&column);
        assert_eq!(out[0][c], single[0]);
        assert_eq!(out[1][c], single[1]);
    }
    assert!(conv.convert_poly(&limbs[..2]).is_err());
}

#[test]
fn extended_base_primes_are_prime_ntt_friendly_and_as_wide_as_q() {
    for (base, n, t) in [
        (SpecialBase::balanced(146).unwrap(), 1usize << 14, 65537u64),
        (SpecialBase::fermat_chain(110, 1).unwrap(), 1 << 14, 65537),
        (SpecialBase::balanced(61).unwrap(), 1 << 12, 2),
    ] {
        let ext = ExtendedBase::new(&base, n, t).unwrap();
        let largest = base.moduli().iter().map(|m| to_big(m.value())).max().unwrap();
        let bits = largest.bits();
        let all = ext.bsk_m_tilde();
        let q = q_of(&moduli_big(&base));
        for p in &all {
            let p = to_big(p);
            assert!(big_is_prime(&p), "{p} prime");
            assert_eq!(&p % (2 * n as u64), BigUint::one(), "{p} = 1 mod 2N");
            assert_eq!(p.bits(), bits, "same bit length as the largest modulus of Q");
            assert!(base.moduli().iter().all(|m| to_big(m.value()) != p));
            // The |c| < g contradiction: c = p - 2^(bits-1) is 1 mod 2N and far above g.
            let c = &p - pow2(bits as u32 - 1);
            assert_eq!(&c % (2 * n as u64), BigUint::one());
            assert!(c > BigUint::from(bits), "c = {c} is not below g");
        }
        let mut distinct = all.clone();
        distinct.sort();
        distinct.dedup();
        assert_eq!(distinct.len(), all.len());
        let mb: BigUint = ext.b().iter().map(to_big).product();
        assert!(mb.bits() as f64 >= (q.bits() as f64) + (t as f64).log2() + (n as f64).log2() + 5.0);
    }
}

#[test]
fn powers_of_two_are_excluded_from_fermat_halving() {
    let q = SpecialModulus::power_of_two(8).unwrap();
    assert_eq!(q.form(), SpecialForm::PowerOfTwo);
    assert!(std::panic::catch_unwind(|| q.halve(&Wide::ONE)).is_err());
    assert_eq!(q.mul(&Wide::from_u64(255), &Wide::from_u64(255)), Wide::ONE);
}

/// Algorithm 1 on special bases: [round(t x / q)]_t for x = Delta m + e with noise up to a
/// quarter of Delta, against num-bigint.
#[test]
fn decryption_scaling_recovers_the_message() {
    use pimhe_math::special::DecryptScaler;
    for (base, t, gamma) in [
        (SpecialBase::balanced(146).unwrap(), 65537u64, (1u64 << 61) - 1),
        (SpecialBase::fermat_chain(110, 1).unwrap(), 65537, (1 << 61) - 1),
        (SpecialBase::balanced(8).unwrap(), 7, (1 << 61) - 1),
        // 2^61 - 1 is in this Q; 2^31 - 1 is coprime to it.
        (SpecialBase::balanced(61).unwrap(), 5, (1 << 31) - 1),
    ] {
        let dec = DecryptScaler::new(&base, t, gamma).unwrap();
        let ms = moduli_big(&base);
        let q = q_of(&ms);
        let delta = &q / t;
        let mut r = rng(t);
        let noise_bound = &delta / 4u32;
        for k in 0..200u64 {
            let m = BigUint::from(k % t);
            let e = random_below(&mut r, &noise_bound);
            // Both signs of noise.
            let x = if k % 2 == 0 { (&delta * &m + &e) % &q } else { (&delta * &m + &q - &e) % &q };
            let res: Vec<Wide> = ms.iter().map(|qi| from_big(&(&x % qi))).collect();
            // Oracle: round(t x / q) mod t.
            let want = ((&x * t * 2u32 + &q) / (&q * 2u32)) % t;
            assert_eq!(BigUint::from(dec.scale(&res)), want, "t = {t}, k = {k}");
            assert_eq!(want, m);
        }
    }
    assert!(DecryptScaler::new(&SpecialBase::balanced(8).unwrap(), 1, 97).is_err());
    let err = DecryptScaler::new(&SpecialBase::balanced(8).unwrap(), 17, 97).unwrap_err().to_string();
    assert!(err.contains("coprime"), "17 divides 255: {err}");
    assert!(DecryptScaler::new(&SpecialBase::balanced(8).unwrap(), 7, 257).is_err(), "gamma in Q");
}

mod props {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// Random x below q for the paper's two sets: special == generic == num-bigint.
        #[test]
        fn fastbconv_agrees_for_random_values(words in proptest::collection::vec(any::<u32>(), 16)) {
            for base in [SpecialBase::balanced(146).unwrap(), SpecialBase::fermat_chain(110, 1).unwrap()] {
                let ms = moduli_big(&base);
                let x = BigUint::from_slice(&words) % q_of(&ms);
                let targets = [BigUint::from(65537u32), (BigUint::one() << 147u32) + 32769u32];
                let conv = FastBConv::from_special(&base, &targets.iter().map(from_big).collect::<Vec<_>>()).unwrap();
                let res: Vec<BigUint> = ms.iter().map(|m| &x % m).collect();
                let wres: Vec<Wide> = res.iter().map(from_big).collect();
                let special = conv.convert_special(&wres);
                prop_assert_eq!(&special, &conv.convert_generic(&wres));
                for (j, b) in targets.iter().enumerate() {
                    prop_assert_eq!(to_big(&special[j]), oracle(&res, &ms, b));
                }
            }
        }
    }
}
