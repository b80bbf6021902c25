//! The secret key never reaches the buffer pool ([`pimhe_ring::recycle`]) unwiped: a whole
//! CKKS session on the CPU backend (keys of every kind, encryption with either key, a product,
//! a rotation, decryption) leaves no pooled buffer holding s or s^2, the secrets key
//! generation works on.

use num_complex::Complex64;
use pimhe_exec::CpuBackend;
use pimhe_math::Sampler;
use pimhe_ring::recycle;

use crate::ckks::{CkksContext, CkksParameters, Decryptor, Encoder, Encryptor, Evaluator, KeyGenerator};

/// Whether `buffer` holds `poly` (N residues) at any offset that is a multiple of N: where a
/// batch of the pool's limb-major layout would keep one polynomial's limb.
fn holds(buffer: &[u32], poly: &[u32]) -> bool {
    buffer.chunks_exact(poly.len()).any(|chunk| chunk == poly)
}

#[test]
fn no_secret_reaches_the_pool_unwiped() {
    let backend = CpuBackend::new(Some(2)).unwrap();
    // N = 16384: the secret over its 16 primes is 2^18 residues, a size the pool keeps.
    let ctx = CkksContext::new(CkksParameters::preset(16384).unwrap()).unwrap();
    let mut keygen = KeyGenerator::with_sampler(&backend, &ctx, Sampler::from_seed_u64(11));
    let secret = keygen.secret_key().unwrap();
    assert!(secret.s.data().len() >= recycle::MIN_POOLED_WORDS, "the secret is too small to be pooled");
    // Limb 0 of s and of s^2 (s is in NTT form, so s^2 is the residues squared).
    let q0 = *secret.s.basis().modulus(0);
    let s0: Vec<u32> = secret.s.poly_limb(0, 0).to_vec();
    let s0_squared: Vec<u32> = s0.iter().map(|&x| q0.mul(x, x)).collect();
    {
        let public = keygen.public_key(&secret).unwrap();
        let relin = keygen.relin_key(&secret).unwrap();
        let galois = keygen.galois_keys(&secret, &ctx.galois_elements(&[1, 2], true)).unwrap();
        let encoder = Encoder::new(&ctx);
        let scale = ctx.default_scale();
        let plain = encoder.encode_real(&[1.5, -2.0, 0.25], scale).unwrap();
        let x = Encryptor::with_public_key(&backend, &public).unwrap().encrypt(&[plain.clone()]).unwrap();
        let y = Encryptor::with_secret_key(&backend, &secret).unwrap().encrypt(&[plain]).unwrap();
        let evaluator =
            Evaluator::new(&backend, &ctx).with_relin_key(&relin).unwrap().with_galois_keys(&galois).unwrap();
        let rotated = evaluator.rotate(&evaluator.multiply_relin_rescale(&x, &y).unwrap(), 1).unwrap();
        let decrypted = Decryptor::new(&backend, &secret).unwrap().decrypt(&rotated).unwrap();
        let slots = encoder.decode(&decrypted[0]).unwrap();
        // The session really ran: [2.25, 4, 0.0625] rotated by one slot.
        assert!((slots[0] - Complex64::new(4.0, 0.0)).norm() < 1e-4, "slot 0 decrypted to {}", slots[0]);
    }
    drop(secret);
    assert!(recycle::held_bytes() > 0, "nothing reached the pool: the check would be vacuous");
    assert!(!recycle::any_pooled(|buffer| holds(buffer, &s0)), "a pooled buffer holds the secret s");
    assert!(!recycle::any_pooled(|buffer| holds(buffer, &s0_squared)), "a pooled buffer holds s^2");
}
