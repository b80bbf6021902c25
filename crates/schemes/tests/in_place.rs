//! The in-place forms of the evaluator against the composed ones, on random ciphertexts
//! (property tests): `add_assign(a, b)` leaves in `a` exactly what `add(a, b)` returns (same
//! components, level and tag), whether a and b are at one level, a is the lower one (b is
//! brought down, a added into in place), the higher one (a replaced), or has a third
//! component; `rescale_in_place` leaves exactly what `rescale` returns (one prime per level or two), and
//! `multiply_relin_rescale` (which rescales in place) is the composed product.

use std::sync::Arc;

use num_complex::Complex64;
use pimhe_exec::{Backend, CpuBackend};
use pimhe_math::Sampler;
use pimhe_ring::PolyBatch;
use pimhe_schemes::ckks::*;
use proptest::prelude::*;

type Batch = CiphertextBatch<CpuBackend>;

/// Components, level and tag: everything a ciphertext batch is.
fn contents(backend: &CpuBackend, c: &Batch) -> (Vec<PolyBatch>, usize, CkksTag) {
    (c.parts().iter().map(|p| backend.download(p).unwrap()).collect(), c.level(), c.tag())
}

struct Setup {
    backend: CpuBackend,
    ctx: Arc<CkksContext>,
    secret: SecretKey,
    relin: RelinKey,
}

/// CKKS at N = 1024, depth 3, the builder's scale or one of `scale_bits`.
fn setup_at(scale_bits: Option<u32>) -> Setup {
    let backend = CpuBackend::new(Some(2)).unwrap();
    let builder = CkksParameters::builder(1024).depth(3).allow_insecure();
    let params = scale_bits.map_or(builder.clone(), |bits| builder.scale_bits(bits)).build().unwrap();
    let ctx = CkksContext::new(params).unwrap();
    let mut keygen = KeyGenerator::with_sampler(&backend, &ctx, Sampler::from_seed_u64(5));
    let secret = keygen.secret_key().unwrap();
    let relin = keygen.relin_key(&secret).unwrap();
    Setup { backend, ctx, secret, relin }
}

fn setup() -> Setup {
    setup_at(None)
}

/// `count` ciphertexts of random values from `seed`.
fn encrypt(s: &Setup, seed: u64, count: usize) -> Batch {
    let encoder = Encoder::new(&s.ctx);
    let plains: Vec<_> = (0..count)
        .map(|k| {
            let values: Vec<f64> = (0..16).map(|i| input(seed, (k * 16 + i) as u64)).collect();
            encoder.encode_real(&values, s.ctx.default_scale()).unwrap()
        })
        .collect();
    let mut encryptor =
        Encryptor::with_secret_key(&s.backend, &s.secret).unwrap().with_sampler(Sampler::from_seed_u64(seed));
    encryptor.encrypt(&plains).unwrap()
}

fn input(seed: u64, i: u64) -> f64 {
    ((seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(i.wrapping_mul(1_442_695_040_888_963_407)) >> 40)
        as f64
        / (1u64 << 24) as f64)
        * 2.0
        - 1.0
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(8))]

    #[test]
    fn adding_in_place_is_adding(seed in any::<u64>(), count in 1usize..=3, case in 0usize..4) {
        let s = setup();
        let evaluator = Evaluator::new(&s.backend, &s.ctx).with_relin_key(&s.relin).unwrap();
        let (x, y) = (encrypt(&s, seed, count), encrypt(&s, seed ^ 1, count));
        let lower = |c: &Batch| evaluator.rescale(&evaluator.mul_const(c, Complex64::new(0.5, 0.0)).unwrap()).unwrap();
        let (a, b) = match case {
            0 => (x, y),
            1 => (lower(&x), y),
            2 => (x, lower(&y)),
            // A three-component product and a two-component operand at its scale.
            _ => {
                let b = evaluator.relinearize(&evaluator.multiply(&y, &y).unwrap()).unwrap();
                (evaluator.multiply(&x, &y).unwrap(), b)
            }
        };
        let expected = evaluator.add(&a, &b).unwrap();
        let mut in_place = a;
        evaluator.add_assign(&mut in_place, &b).unwrap();
        prop_assert_eq!(contents(&s.backend, &in_place), contents(&s.backend, &expected));
    }

    #[test]
    fn rescaling_in_place_is_rescaling(seed in any::<u64>(), count in 1usize..=3, two_primes in any::<bool>()) {
        // A 28-bit scale takes one prime per level, a 50-bit one two (primes are below 2^30).
        let s = setup_at(Some(if two_primes { 50 } else { 28 }));
        prop_assert_eq!(s.ctx.params().primes_per_level(), if two_primes { 2 } else { 1 });
        let evaluator = Evaluator::new(&s.backend, &s.ctx).with_relin_key(&s.relin).unwrap();
        let (x, y) = (encrypt(&s, seed, count), encrypt(&s, seed ^ 1, count));
        let product = || evaluator.relinearize(&evaluator.multiply(&x, &y).unwrap()).unwrap();
        let expected = evaluator.rescale(&product()).unwrap();
        let mut in_place = product();
        evaluator.rescale_in_place(&mut in_place).unwrap();
        prop_assert_eq!(contents(&s.backend, &in_place), contents(&s.backend, &expected));
        let fused = evaluator.multiply_relin_rescale(&x, &y).unwrap();
        prop_assert_eq!(contents(&s.backend, &fused), contents(&s.backend, &expected));
    }
}

#[test]
fn a_refused_addition_or_rescaling_leaves_the_operand_as_it_was() {
    let s = setup();
    let evaluator = Evaluator::new(&s.backend, &s.ctx);
    let mut a = encrypt(&s, 1, 1);
    let before = contents(&s.backend, &a);
    // Batches of different sizes do not add; a fresh ciphertext's scale cannot be divided.
    assert!(evaluator.add_assign(&mut a, &encrypt(&s, 2, 2)).is_err());
    assert!(evaluator.rescale_in_place(&mut a).is_err());
    assert_eq!(contents(&s.backend, &a), before);
}
