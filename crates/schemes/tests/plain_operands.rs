//! Plaintext operands, written once in the RLWE evaluator over each scheme's
//! `RlweScheme::plain_operand`, checked against the same computation on the plaintext values:
//! BGV after a modulus switch (the addend must be scaled by a correction factor other than 1),
//! BFV (round(q m / t) for a sum, the centred lift for a product), and CKKS below its top level
//! (the operand over the lower level's primes, the product's scale the two scales multiplied).
//! Each with one plaintext per ciphertext and one for the whole batch.

use num_complex::Complex64;
use pimhe_exec::CpuBackend;
use pimhe_math::Sampler;
use pimhe_schemes::bfv::BfvContext;
use pimhe_schemes::bgv::BgvContext;
use pimhe_schemes::ckks::{CkksContext, CkksParameters, Encoder};
use pimhe_schemes::encoder::{BatchEncoder, ExactScheme};
use pimhe_schemes::rlwe::{CiphertextBatch, Decryptor, Encryptor, Evaluator, KeyGenerator, RlweScheme};

type Batch<S> = CiphertextBatch<CpuBackend, S>;

/// `values[k] op plains[k]` slot by slot, the plaintexts broadcast when there is one.
fn slotwise<T: Copy>(values: &[Vec<T>], plains: &[Vec<T>], op: impl Fn(T, T) -> T) -> Vec<Vec<T>> {
    let plain = |k: usize| &plains[k.min(plains.len() - 1)];
    values.iter().enumerate().map(|(k, v)| v.iter().zip(plain(k)).map(|(&x, &m)| op(x, m)).collect()).collect()
}

/// add_plain and mul_plain of an exact scheme on the preset of `n`, on a fresh batch of three
/// that `lower` has taken through the scheme's own level management; returns the lowered
/// batch's tag, for the caller to check it is one the operands had to respect.
fn exact_scheme<S: ExactScheme>(
    n: usize,
    lower: impl Fn(&Evaluator<'_, CpuBackend, S>, Batch<S>) -> Batch<S>,
) -> S::Tag {
    let backend = CpuBackend::new(Some(2)).unwrap();
    let ctx = S::preset(n).unwrap();
    let secret = KeyGenerator::with_sampler(&backend, &ctx, Sampler::from_seed_u64(1)).secret_key().unwrap();
    let encoder = BatchEncoder::new(&ctx);
    let t = *ctx.plain_space().modulus();
    let mut sampler = Sampler::from_seed_u64(2);
    let mut vectors = |count: usize| -> Vec<Vec<u64>> {
        (0..count).map(|_| sampler.uniform_vec(&t, n).into_iter().map(u64::from).collect()).collect()
    };
    let (values, ms) = (vectors(3), vectors(3));
    let encode = |vs: &[Vec<u64>]| vs.iter().map(|v| encoder.encode(v).unwrap()).collect::<Vec<_>>();
    let evaluator = Evaluator::new(&backend, &ctx);
    let fresh = Encryptor::with_secret_key(&backend, &secret).unwrap().encrypt(&encode(&values)).unwrap();
    let a = lower(&evaluator, fresh);
    let decryptor = Decryptor::new(&backend, &secret).unwrap();
    let decrypt = |batch: &Batch<S>| -> Vec<Vec<u64>> {
        assert_eq!((batch.level(), batch.tag()), (a.level(), a.tag()), "{}: a's level and tag stay", S::NAME);
        decryptor.decrypt(batch).unwrap().iter().map(|p| encoder.decode(p).unwrap()).collect()
    };
    let t = u64::from(t.value());
    for plains in [&ms[..], &ms[..1]] {
        let sum = evaluator.add_plain(&a, &encode(plains)).unwrap();
        assert_eq!(decrypt(&sum), slotwise(&values, plains, |x, m| (x + m) % t), "{} add_plain", S::NAME);
        let product = evaluator.mul_plain(&a, &encode(plains)).unwrap();
        assert_eq!(decrypt(&product), slotwise(&values, plains, |x, m| x * m % t), "{} mul_plain", S::NAME);
    }
    a.tag()
}

#[test]
fn bgv_plain_operands_after_a_modulus_switch() {
    let correction = exact_scheme::<BgvContext>(8192, |evaluator, fresh| {
        let switched = evaluator.mod_switch_to_next(&fresh).unwrap();
        assert_eq!(switched.level(), fresh.level() - 1);
        switched
    });
    assert_ne!(correction, 1, "the addend had to be scaled by the correction factor");
}

#[test]
fn bfv_plain_operands() {
    exact_scheme::<BfvContext>(4096, |_, fresh| fresh);
}

#[test]
fn ckks_plain_operands_below_the_top_level() {
    let backend = CpuBackend::new(Some(2)).unwrap();
    // N = 4096, depth 3, scale 2^40 in two primes per level (insecure: a test size).
    let params = CkksParameters::builder(4096).depth(3).scale_bits(40).allow_insecure().build().unwrap();
    let ctx = CkksContext::new(params).unwrap();
    let secret = KeyGenerator::with_sampler(&backend, &ctx, Sampler::from_seed_u64(3)).secret_key().unwrap();
    let encoder = Encoder::new(&ctx);
    let slots = ctx.max_slots();
    let mut sampler = Sampler::from_seed_u64(4);
    let mut vectors = |count: usize| -> Vec<Vec<Complex64>> {
        let mut unit = || f64::from(sampler.next_u32()) / f64::from(u32::MAX) * 2.0 - 1.0;
        (0..count).map(|_| (0..slots).map(|_| Complex64::new(unit(), unit())).collect()).collect()
    };
    let (values, ms) = (vectors(3), vectors(3));
    let top = ctx.default_scale();
    let plains = encoder_at(&encoder, &values, top);
    let evaluator = Evaluator::new(&backend, &ctx);
    let fresh = Encryptor::with_secret_key(&backend, &secret).unwrap().encrypt(&plains).unwrap();
    // A rescaled product (by 1/2 in every slot): one level down, at a scale near but not
    // exactly the default, so an addend at the default scale is refused.
    let half = vec![vec![Complex64::new(0.5, 0.0); slots]];
    let a = evaluator.rescale(&evaluator.mul_plain(&fresh, &encoder_at(&encoder, &half, top)).unwrap()).unwrap();
    assert!(a.level() < fresh.level() && a.tag().scale != top);
    let halves = slotwise(&values, &half, |x, m| x * m);
    let decryptor = Decryptor::new(&backend, &secret).unwrap();
    let error = |batch: &Batch<CkksContext>, expected: &[Vec<Complex64>]| -> f64 {
        let got = decryptor.decrypt(batch).unwrap();
        let got = got.iter().map(|p| encoder.decode(p).unwrap());
        got.zip(expected)
            .flat_map(|(g, e)| g.into_iter().zip(e).map(|(x, y)| (x - y).norm()).collect::<Vec<_>>())
            .fold(0.0, f64::max)
    };
    for ms in [&ms[..], &ms[..1]] {
        // An addend at a's scale keeps a's tag.
        let sum = evaluator.add_plain(&a, &encoder_at(&encoder, ms, a.tag().scale)).unwrap();
        assert_eq!((sum.level(), sum.tag()), (a.level(), a.tag()));
        let bound = error(&sum, &slotwise(&halves, ms, |x, m| x + m));
        assert!(bound < 1e-6, "add_plain below the top level: error {bound:e}");
        // A factor at the default scale: the scales multiply, and one rescaling brings it down.
        let product = evaluator.mul_plain(&a, &encoder_at(&encoder, ms, top)).unwrap();
        assert_eq!((product.level(), product.tag().scale), (a.level(), a.tag().scale * top));
        let product = evaluator.rescale(&product).unwrap();
        let bound = error(&product, &slotwise(&halves, ms, |x, m| x * m));
        assert!(bound < 1e-5, "mul_plain below the top level: error {bound:e}");
    }
    // The checks of the hook stay: an addend at another scale is refused, naming both.
    let message = evaluator.add_plain(&a, &encoder_at(&encoder, &ms[..1], top)).unwrap_err().to_string();
    assert!(message.contains("scale mismatch at one level"), "{message}");
}

fn encoder_at(encoder: &Encoder, values: &[Vec<Complex64>], scale: f64) -> Vec<pimhe_schemes::ckks::CkksPlaintext> {
    values.iter().map(|v| encoder.encode(v, scale).unwrap()).collect()
}

/// The trait's generic entry points agree with the schemes' own constructors.
#[test]
fn presets_and_backend_primes_through_the_trait() {
    let bgv = BgvContext::preset(4096).unwrap();
    assert_eq!(bgv.params(), &pimhe_schemes::bgv::BgvParameters::preset(4096).unwrap());
    assert_eq!(bgv.backend_primes(), bgv.rlwe().params().primes());
    let bfv =
        <BfvContext as RlweScheme>::from_params(pimhe_schemes::bfv::BfvParameters::preset(4096).unwrap()).unwrap();
    let primes = bfv.backend_primes();
    // q and P first, then BEHZ's auxiliary primes, t last; all distinct.
    assert_eq!(primes[..4], bgv.backend_primes()[..]);
    assert_eq!(primes.last(), Some(&bfv.plain_modulus().value()));
    assert!(primes.len() > 5 && primes.iter().collect::<std::collections::BTreeSet<_>>().len() == primes.len());
    let ckks = CkksContext::preset(8192).unwrap();
    assert_eq!(ckks.backend_primes(), ckks.params().rlwe().primes());
    assert!(BgvContext::preset(1000).unwrap_err().to_string().contains("ring degree 1000 is not supported"));
}
