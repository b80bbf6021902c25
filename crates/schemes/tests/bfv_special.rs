//! BFV on special moduli (issue 15 part 2) against the plaintext computation modulo t, against
//! the 30-bit-prime BFV, and between its optimized and generic paths.

use std::sync::Arc;

use pimhe_exec::CpuBackend;
use pimhe_math::special::SpecialBase;
use pimhe_math::Sampler;
use pimhe_schemes::bfv::special::*;
use pimhe_schemes::bfv::{self, BfvContext, BfvParameters};
use pimhe_schemes::encoder::BatchEncoder;
use pimhe_schemes::error::SchemeError;

const T: u32 = 65537;

/// The paper's bases at a small, insecure degree (the arithmetic is the same at any N).
fn context(case: SpecialCase, n: usize) -> Arc<SpecialBfvContext> {
    let params = SpecialBfvParameters::new(n, T, case.base().unwrap(), case.optimized()).unwrap().allow_insecure();
    SpecialBfvContext::new(params).unwrap()
}

fn random_slots(sampler: &mut Sampler, n: usize) -> Vec<u64> {
    (0..n).map(|_| sampler.next_u64() % T as u64).collect()
}

struct Keys {
    secret: SecretKey,
    public: PublicKey,
    relin: RelinKey,
}

fn keys(ctx: &Arc<SpecialBfvContext>, seed: u64) -> Keys {
    let mut sampler = Sampler::from_seed_u64(seed);
    let secret = SecretKey::generate(ctx, &mut sampler);
    let public = secret.public_key(&mut sampler);
    let relin = secret.relin_key(&mut sampler);
    Keys { secret, public, relin }
}

#[test]
fn every_operation_of_every_case_matches_the_plaintext_computation() {
    let n = 256;
    let t = T as u64;
    for case in SpecialCase::ALL {
        let ctx = context(case, n);
        let k = keys(&ctx, 1);
        let encoder = BatchEncoder::new(&ctx);
        let mut sampler = Sampler::from_seed_u64(2);
        let (x, y) = (random_slots(&mut sampler, n), random_slots(&mut sampler, n));
        let cx = encrypt(&k.public, &encoder.encode(&x).unwrap(), &mut sampler).unwrap();
        let cy = encrypt(&k.public, &encoder.encode(&y).unwrap(), &mut sampler).unwrap();
        let open = |ct: &Ciphertext| encoder.decode(&decrypt(&k.secret, ct).unwrap()).unwrap();
        assert_eq!(open(&cx), x, "{case}: encrypt/decrypt");
        let expect = |f: fn(u64, u64, u64) -> u64| x.iter().zip(&y).map(|(&a, &b)| f(a, b, t)).collect::<Vec<_>>();
        assert_eq!(open(&add(&cx, &cy).unwrap()), expect(|a, b, t| (a + b) % t), "{case}: add");
        assert_eq!(open(&sub(&cx, &cy).unwrap()), expect(|a, b, t| (a + t - b) % t), "{case}: sub");
        let product = multiply(&cx, &cy).unwrap();
        assert_eq!(product.size(), 3);
        assert_eq!(open(&product), expect(|a, b, t| a * b % t), "{case}: multiply (3 components)");
        let relinearized = relinearize(&product, &k.relin).unwrap();
        assert_eq!(relinearized.size(), 2);
        assert_eq!(open(&relinearized), expect(|a, b, t| a * b % t), "{case}: multiply + relinearize");
    }
}

#[test]
fn a_multiplication_chain_decrypts_right_to_its_depth_then_reports_the_exhausted_budget() {
    let n = 256;
    let t = T as u64;
    let ctx = context(SpecialCase::B, n);
    let k = keys(&ctx, 3);
    let encoder = BatchEncoder::new(&ctx);
    let mut sampler = Sampler::from_seed_u64(4);
    let x = random_slots(&mut sampler, n);
    let cx = encrypt(&k.public, &encoder.encode(&x).unwrap(), &mut sampler).unwrap();
    let (mut acc, mut expected) = (cx.clone(), x.clone());
    let mut depth = 0;
    loop {
        let next = relinearize(&multiply(&acc, &cx).unwrap(), &k.relin).unwrap();
        expected = expected.iter().zip(&x).map(|(a, b)| a * b % t).collect();
        match decrypt(&k.secret, &next) {
            Ok(plain) => assert_eq!(encoder.decode(&plain).unwrap(), expected, "depth {}", depth + 1),
            Err(SchemeError::NoiseBudgetExhausted { .. }) => break,
            Err(e) => panic!("unexpected error {e}"),
        }
        acc = next;
        depth += 1;
        assert!(depth < 40, "the noise never ran out");
    }
    // q/t is about 2^421 and a multiplication at N = 256 costs about 30 bits of it.
    assert!(depth >= 10, "only {depth} multiplications before the budget ran out");
}

#[test]
fn optimized_and_generic_paths_compute_the_same_bits() {
    let n = 64;
    let base = SpecialBase::balanced(146).unwrap();
    let ctx_of = |optimized| {
        SpecialBfvContext::new(SpecialBfvParameters::new(n, T, base.clone(), optimized).unwrap().allow_insecure())
            .unwrap()
    };
    let (a, b) = (ctx_of(false), ctx_of(true));
    let run = |ctx: &Arc<SpecialBfvContext>| {
        let k = keys(ctx, 5);
        let encoder = BatchEncoder::new(ctx);
        let mut sampler = Sampler::from_seed_u64(6);
        let x = encrypt(&k.public, &encoder.encode(&random_slots(&mut sampler, n)).unwrap(), &mut sampler).unwrap();
        let y = encrypt(&k.public, &encoder.encode(&random_slots(&mut sampler, n)).unwrap(), &mut sampler).unwrap();
        let product = relinearize(&multiply(&x, &y).unwrap(), &k.relin).unwrap();
        (product.components().to_vec(), decrypt(&k.secret, &product).unwrap())
    };
    assert_eq!(run(&a), run(&b));
}

#[test]
fn the_same_plaintexts_decrypt_to_the_same_slots_as_under_the_30_bit_prime_bfv() {
    let n = 4096;
    let mut sampler = Sampler::from_seed_u64(7);
    let (x, y, z) = (random_slots(&mut sampler, n), random_slots(&mut sampler, n), random_slots(&mut sampler, n));

    let special = context(SpecialCase::B, n);
    let k = keys(&special, 8);
    let encoder = BatchEncoder::new(&special);
    let enc = |v: &[u64], s: &mut Sampler| encrypt(&k.public, &encoder.encode(v).unwrap(), s).unwrap();
    let (sx, sy, sz) = (enc(&x, &mut sampler), enc(&y, &mut sampler), enc(&z, &mut sampler));
    let s_result = sub(&relinearize(&multiply(&sx, &sy).unwrap(), &k.relin).unwrap(), &sz).unwrap();
    let from_special = encoder.decode(&decrypt(&k.secret, &s_result).unwrap()).unwrap();

    let backend = CpuBackend::new(Some(2)).unwrap();
    let ctx = BfvContext::new(BfvParameters::preset(n).unwrap()).unwrap();
    let mut keygen = bfv::KeyGenerator::new(&backend, &ctx).unwrap();
    let secret = keygen.secret_key().unwrap();
    let public = keygen.public_key(&secret).unwrap();
    let relin = keygen.relin_key(&secret).unwrap();
    let encoder30 = BatchEncoder::new(&ctx);
    let mut encryptor = bfv::Encryptor::with_public_key(&backend, &public).unwrap();
    let mut enc30 = |v: &[u64]| encryptor.encrypt(&[encoder30.encode(v).unwrap()]).unwrap();
    let (bx, by, bz) = (enc30(&x), enc30(&y), enc30(&z));
    let evaluator = bfv::Evaluator::new(&backend, &ctx).with_relin_key(&relin).unwrap();
    let product = evaluator.relinearize(&evaluator.multiply(&bx, &by).unwrap()).unwrap();
    let b_result = evaluator.sub(&product, &bz).unwrap();
    let decryptor = bfv::Decryptor::new(&backend, &secret).unwrap();
    let from_30_bit = encoder30.decode(&decryptor.decrypt(&b_result).unwrap()[0]).unwrap();

    let t = T as u64;
    let plain: Vec<u64> = (0..n).map(|i| (x[i] * y[i] % t + t - z[i]) % t).collect();
    assert_eq!(from_special, plain);
    assert_eq!(from_30_bit, plain);
}

#[test]
fn bad_parameters_and_operands_get_clear_errors() {
    // Case C's q = 2^440 - 1 is above the 438-bit 128-bit limit at N = 2^14.
    let err = SpecialBfvParameters::case(SpecialCase::C).unwrap_err();
    assert!(matches!(err, SchemeError::Insecure { n: 16384, log_q: 440, max_log_q: 438 }), "{err}");
    let b = SpecialBfvParameters::case(SpecialCase::B).unwrap();
    assert_eq!(b.log_q(), 438);
    // The paper's NTT modulo q_i does not exist at N = 2^14 (2^146 is even, for one).
    let err = b.clone().with_products(ProductMethod::NttModuloQ).unwrap_err().to_string();
    assert!(err.contains("no NTT modulo") && err.contains("ExactThroughPrimes"), "{err}");
    // t must be a prime = 1 mod 2N, and coprime to q.
    let base = SpecialBase::balanced(146).unwrap();
    assert!(SpecialBfvParameters::new(16384, 65539, base.clone(), true).is_err());
    assert!(SpecialBfvParameters::new(1000, T, base.clone(), true).is_err());
    let fermat = SpecialBase::fermat_chain(8, 1).unwrap(); // {255, 257, 65537}
    let err = SpecialBfvParameters::new(16, 65537, fermat, true).unwrap_err().to_string();
    assert!(err.contains("coprime"), "{err}");

    // Objects of different contexts and ciphertexts of the wrong size.
    let (one, other) = (context(SpecialCase::B, 64), context(SpecialCase::C, 64));
    let (k1, k2) = (keys(&one, 9), keys(&other, 10));
    let mut sampler = Sampler::from_seed_u64(11);
    let plain = BatchEncoder::new(&one).encode(&[1, 2, 3]).unwrap();
    let a = encrypt(&k1.public, &plain, &mut sampler).unwrap();
    let b = encrypt(&k2.public, &BatchEncoder::new(&other).encode(&[1]).unwrap(), &mut sampler).unwrap();
    assert!(matches!(add(&a, &b), Err(SchemeError::ParameterMismatch(_))));
    assert!(matches!(decrypt(&k2.secret, &a), Err(SchemeError::ParameterMismatch(_))));
    assert!(matches!(relinearize(&a, &k1.relin), Err(SchemeError::WrongSize { expected: 3, found: 2, .. })));
    let product = multiply(&a, &a).unwrap();
    assert!(matches!(multiply(&product, &a), Err(SchemeError::WrongSize { expected: 2, found: 3, .. })));
    assert!(matches!(relinearize(&product, &k2.relin), Err(SchemeError::ParameterMismatch(_))));
}

#[test]
fn the_papers_case_b_at_n_16384_multiplies_and_decrypts_exactly() {
    let ctx = SpecialBfvContext::new(SpecialBfvParameters::case(SpecialCase::B).unwrap()).unwrap();
    let n = ctx.params().degree();
    let k = keys(&ctx, 12);
    let encoder = BatchEncoder::new(&ctx);
    let mut sampler = Sampler::from_seed_u64(13);
    let (x, y) = (random_slots(&mut sampler, n), random_slots(&mut sampler, n));
    let cx = encrypt(&k.public, &encoder.encode(&x).unwrap(), &mut sampler).unwrap();
    let cy = encrypt(&k.public, &encoder.encode(&y).unwrap(), &mut sampler).unwrap();
    let product = relinearize(&multiply(&cx, &cy).unwrap(), &k.relin).unwrap();
    let got = encoder.decode(&decrypt(&k.secret, &product).unwrap()).unwrap();
    let want: Vec<u64> = x.iter().zip(&y).map(|(a, b)| a * b % T as u64).collect();
    assert_eq!(got, want);
}
