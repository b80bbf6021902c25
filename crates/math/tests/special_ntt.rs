//! NTT parameters for the special moduli (section 3.6) — errors where no negacyclic NTT exists,
//! roots where one does — and the wide NTT against a num-bigint schoolbook product; the exact
//! negacyclic product modulo special moduli through NTT-friendly primes.

mod special_common;

use num_bigint::BigUint;
use num_traits::Zero;
use pimhe_math::special::{
    negacyclic_mul, ntt_primes_above, prime_ntt_params, special_ntt_params, BarrettModulus, NegacyclicMultiplier,
    SpecialBase, SpecialForm, Wide, WideArith, WideNtt,
};
use pimhe_math::MathError;
use special_common::*;

fn schoolbook(a: &[BigUint], b: &[BigUint], m: &BigUint) -> Vec<BigUint> {
    let n = a.len();
    let mut pos = vec![BigUint::zero(); n];
    let mut neg = vec![BigUint::zero(); n];
    for i in 0..n {
        for j in 0..n {
            let p = &a[i] * &b[j];
            if i + j < n {
                pos[i + j] += p;
            } else {
                neg[i + j - n] += p;
            }
        }
    }
    pos.into_iter().zip(neg).map(|(p, q)| ((p % m) + m - (q % m)) % m).collect()
}

fn random_poly(r: &mut rand_chacha::ChaCha20Rng, n: usize, m: &BigUint) -> Vec<BigUint> {
    (0..n).map(|_| random_below(r, m)).collect()
}

const PAPER_N: usize = 1 << 14;

#[test]
fn the_paper_moduli_have_no_negacyclic_ntt_at_n_2_14_and_the_errors_say_why() {
    let s1 = SpecialBase::balanced(146).unwrap();
    let s2 = SpecialBase::fermat_chain(110, 1).unwrap();
    for q in s1.moduli().iter().chain(s2.moduli()) {
        let err = special_ntt_params(q, PAPER_N).unwrap_err();
        assert!(matches!(err, MathError::NotNttFriendlyWide { .. }), "{q}: {err}");
        let text = err.to_string();
        assert!(text.contains(&q.to_string()) && text.contains("N = 16384"), "{text}");
        let m = to_big(q.value());
        match q.form() {
            SpecialForm::PowerOfTwo => assert!(text.contains("is even") && text.contains("not a field"), "{text}"),
            SpecialForm::Mersenne => {
                assert!(text.contains("3 mod 4") && text.contains("p = 3"), "{text}");
                assert_eq!(&m % 4u32, BigUint::from(3u32));
                assert!((&m % 3u32).is_zero(), "g even: 3 divides 2^g - 1");
            }
            SpecialForm::FermatLike => {
                // The witness: a small prime factor p with 2N not dividing p - 1.
                let p: u32 = if q.g() == 220 { 17 } else { 5 };
                assert!((&m % p).is_zero(), "{p} divides {q}");
                assert_ne!((p - 1) % (2 * PAPER_N as u32), 0);
                assert!(text.contains(&format!("{p} divides {q}")), "{text}");
                assert!(text.contains("N | g"), "says what is allowed: {text}");
            }
        }
    }
}

#[test]
fn mersenne_moduli_never_have_a_negacyclic_ntt_even_when_prime() {
    for g in [61u32, 127] {
        let q = special(SpecialForm::Mersenne, g);
        for n in [2, 4, 64] {
            let text = special_ntt_params(&q, n).unwrap_err().to_string();
            assert!(text.contains("3 mod 4"), "{text}");
        }
    }
}

#[test]
fn fermat_like_moduli_have_shift_roots_when_n_divides_g_or_2g() {
    // N | g: psi = 2^(g/N).
    let p = special_ntt_params(&special(SpecialForm::FermatLike, 64), 64).unwrap();
    assert_eq!((p.psi_log2, p.psi), (Some(1), Wide::from_u64(2)));
    let p = special_ntt_params(&special(SpecialForm::FermatLike, 146), 2).unwrap();
    assert_eq!(p.psi_log2, Some(73));
    // N | 2g with 4 | g: psi from sqrt(2) = 2^(3g/4) - 2^(g/4).
    for (g, n) in [(32u32, 64usize), (64, 128), (220, 8)] {
        let q = special(SpecialForm::FermatLike, g);
        let p = special_ntt_params(&q, n).unwrap();
        let m = to_big(q.value());
        let psi = to_big(&p.psi);
        assert_eq!(psi.modpow(&BigUint::from(n), &m), &m - 1u32, "psi^N = -1 for 2^{g} + 1, N = {n}");
    }
    // Fermat prime 2^16 + 1: a generic root for N up to 2^15, far beyond 2g.
    let p = special_ntt_params(&special(SpecialForm::FermatLike, 16), PAPER_N).unwrap();
    let m = BigUint::from(65537u32);
    assert_eq!(to_big(&p.psi).modpow(&BigUint::from(PAPER_N), &m), &m - 1u32);
    // Not otherwise: 2^8 + 1 = 257 with N = 256 (2N = 512 does not divide 256).
    let text = special_ntt_params(&special(SpecialForm::FermatLike, 8), 256).unwrap_err().to_string();
    assert!(text.contains("257 divides 2^8 + 1"), "{text}");
    assert!(special_ntt_params(&special(SpecialForm::FermatLike, 8), 3).is_err(), "N must be a power of two");
}

#[test]
fn prime_roots_are_primitive_2n_th_roots() {
    let primes = ntt_primes_above(146, PAPER_N, 2, &[]).unwrap();
    for p in primes {
        let bm = BarrettModulus::new(p).unwrap();
        let params = prime_ntt_params(&bm, PAPER_N, 3).unwrap();
        let (pb, psi) = (to_big(&p), to_big(&params.psi));
        assert_eq!(psi.modpow(&BigUint::from(PAPER_N), &pb), &pb - 1u32);
    }
    let composite = BarrettModulus::new(Wide::from_u64(7681 * 12289)).unwrap();
    assert!(prime_ntt_params(&composite, 8, 1).unwrap_err().to_string().contains("not prime"));
    let unfriendly = BarrettModulus::new(Wide::from_u64(1_000_003)).unwrap();
    assert!(prime_ntt_params(&unfriendly, 8, 1).unwrap_err().to_string().contains("does not divide p - 1"));
}

fn check_table<M: WideArith>(ntt: &WideNtt<M>, seed: u64) {
    let n = ntt.degree();
    let m = to_big(ntt.modulus().modulus());
    let mut r = rng(seed);
    let a = random_poly(&mut r, n, &m);
    let b = random_poly(&mut r, n, &m);
    let wa: Vec<Wide> = a.iter().map(from_big).collect();
    let wb: Vec<Wide> = b.iter().map(from_big).collect();
    let mut t = wa.clone();
    ntt.forward(&mut t);
    ntt.inverse(&mut t);
    assert_eq!(t, wa, "round trip");
    let got: Vec<BigUint> = ntt.multiply(&wa, &wb).iter().map(to_big).collect();
    assert_eq!(got, schoolbook(&a, &b, &m), "negacyclic product");
}

#[test]
fn wide_ntt_over_primes_matches_schoolbook() {
    for (g, n) in [(146u32, 16usize), (146, 64), (220, 64), (247, 32), (60, 128)] {
        let p = ntt_primes_above(g, n, 1, &[]).unwrap()[0];
        check_table(&WideNtt::for_prime(BarrettModulus::new(p).unwrap(), n, 9).unwrap(), g as u64);
    }
}

#[test]
fn fermat_number_transforms_match_schoolbook() {
    for (g, n) in [(64u32, 64usize), (32, 64), (146, 2), (220, 4), (16, 256), (8, 8)] {
        check_table(&WideNtt::for_special(special(SpecialForm::FermatLike, g), n).unwrap(), n as u64);
    }
    assert!(WideNtt::for_special(special(SpecialForm::FermatLike, 146), PAPER_N).is_err());
}

#[test]
fn exact_negacyclic_products_modulo_special_moduli_match_schoolbook() {
    let mut r = rng(21);
    for (form, g) in [
        (SpecialForm::Mersenne, 146),
        (SpecialForm::PowerOfTwo, 146),
        (SpecialForm::FermatLike, 146),
        (SpecialForm::FermatLike, 220),
        (SpecialForm::Mersenne, 110),
        (SpecialForm::Mersenne, 5),
        (SpecialForm::FermatLike, 240),
    ] {
        let q = special(form, g);
        let m = to_big(q.value());
        for n in [16usize, 64] {
            let mul = NegacyclicMultiplier::new(q.clone(), n).unwrap();
            let mut a = random_poly(&mut r, n, &m);
            let b = random_poly(&mut r, n, &m);
            let all_max = vec![&m - 1u32; n];
            let wa = |v: &[BigUint]| v.iter().map(from_big).collect::<Vec<_>>();
            for (x, y) in [(&a, &b), (&all_max, &all_max), (&a, &all_max)] {
                let got: Vec<BigUint> = mul.multiply(&wa(x), &wa(y)).iter().map(to_big).collect();
                assert_eq!(got, schoolbook(x, y, &m), "{q}, N = {n}");
            }
            a[0] = BigUint::zero();
            assert_eq!(
                negacyclic_mul(&q, &wa(&a), &wa(&b)).unwrap().iter().map(to_big).collect::<Vec<_>>(),
                schoolbook(&a, &b, &m)
            );
        }
    }
    assert!(NegacyclicMultiplier::new(special(SpecialForm::FermatLike, 246), 16).is_err());
}

#[test]
fn exact_negacyclic_product_at_n_4096() {
    let q = special(SpecialForm::FermatLike, 146);
    let m = to_big(q.value());
    let n = 1 << 12;
    let mut r = rng(4096);
    let a = random_poly(&mut r, n, &m);
    let b = random_poly(&mut r, n, &m);
    let mul = NegacyclicMultiplier::new(q, n).unwrap();
    let got: Vec<BigUint> = mul
        .multiply(&a.iter().map(from_big).collect::<Vec<_>>(), &b.iter().map(from_big).collect::<Vec<_>>())
        .iter()
        .map(to_big)
        .collect();
    assert_eq!(got, schoolbook(&a, &b, &m));
}
