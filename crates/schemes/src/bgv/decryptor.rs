//! Decryption and noise-budget measurement.

use std::sync::Arc;

use num_bigint::BigInt;
use num_traits::{Signed, ToPrimitive, Zero};
use pimhe_exec::Backend;
use pimhe_math::RnsBase;
use pimhe_ring::PolyBatch;

use crate::bgv::ciphertext::CiphertextBatch;
use crate::bgv::context::BgvContext;
use crate::bgv::keys::SecretKey;
use crate::encoder::Plaintext;
use crate::error::{Result, SchemeError};

/// What decrypting one ciphertext reveals: the message polynomial and how much room was left.
struct Phase {
    /// [v]_t for v = c0 + c1 s + ... centred mod Q.
    message: Vec<u32>,
    /// log2(Q/2) - log2(max |v|): bits the noise can still grow before decryption fails.
    budget_bits: f64,
}

/// Decrypts batches and measures their noise budget. Holds the secret key (and its square) on
/// the device; both are wiped when the decryptor is dropped.
pub struct Decryptor<'a, B: Backend> {
    backend: &'a B,
    ctx: Arc<BgvContext>,
    s: B::Buffer,
    s_squared: B::Buffer,
    level_bases: Vec<RnsBase>,
}

impl<'a, B: Backend> Decryptor<'a, B> {
    /// A decryptor for `key`.
    pub fn new(backend: &'a B, key: &SecretKey) -> Result<Self> {
        let ctx = key.ctx.clone();
        let s = backend.upload(key.s.clone())?;
        let s_squared = backend.mul(&s, &s)?;
        let level_bases = (0..=ctx.max_level())
            .map(|level| Ok(RnsBase::new(&ctx.level_basis(level)?.moduli())?))
            .collect::<Result<Vec<_>>>()?;
        Ok(Self { backend, ctx, s, s_squared, level_bases })
    }

    /// Decrypts every ciphertext of the batch. Fails with
    /// [`SchemeError::NoiseBudgetExhausted`] rather than return a wrong message.
    pub fn decrypt(&self, batch: &CiphertextBatch<B>) -> Result<Vec<Plaintext>> {
        let t = self.ctx.plain_modulus();
        let correction_inverse = t.inv(batch.correction)?;
        self.phases(batch)?
            .into_iter()
            .enumerate()
            .map(|(index, phase)| {
                // Less than one bit left means |v| > Q/4: too close to wrapping to trust.
                if phase.budget_bits < 1.0 {
                    return Err(SchemeError::NoiseBudgetExhausted { index });
                }
                let message = phase.message.iter().map(|&m| t.mul(m, correction_inverse)).collect();
                Ok(Plaintext::from_coefficients(message))
            })
            .collect()
    }

    /// The remaining noise budget of each ciphertext in bits (0 when exhausted): how many more
    /// bits the noise may grow before decryption fails.
    pub fn noise_budget(&self, batch: &CiphertextBatch<B>) -> Result<Vec<u32>> {
        Ok(self.phases(batch)?.into_iter().map(|p| p.budget_bits.max(0.0).floor() as u32).collect())
    }

    /// v = c0 + c1 s (+ c2 s^2) for every ciphertext, reconstructed exactly (CRT) and centred.
    fn phases(&self, batch: &CiphertextBatch<B>) -> Result<Vec<Phase>> {
        self.ctx.expect_same(&batch.ctx, "the ciphertext batch")?;
        if !(2..=3).contains(&batch.size()) {
            return Err(SchemeError::WrongSize { operation: "decrypt", expected: 2, found: batch.size() });
        }
        let backend = self.backend;
        let mut v = backend.copy(&batch.parts[0])?;
        backend.mac(&mut v, &batch.parts[1], &self.s)?;
        if let Some(c2) = batch.parts.get(2) {
            backend.mac(&mut v, c2, &self.s_squared)?;
        }
        backend.intt(&mut v)?;
        let v = backend.download(&v)?;
        let rns = &self.level_bases[batch.level];
        let log_half_q = batch.ctx.level_basis(batch.level)?.log_modulus() - 1.0;
        (0..batch.count).map(|k| self.phase(&v, k, rns, log_half_q)).collect()
    }

    fn phase(&self, v: &PolyBatch, index: usize, rns: &RnsBase, log_half_q: f64) -> Result<Phase> {
        let t = self.ctx.plain_modulus();
        let t_big = BigInt::from(t.value());
        let limbs = v.basis().len();
        let mut residues = vec![0u32; limbs];
        let mut largest = BigInt::zero();
        let mut message = Vec::with_capacity(v.degree());
        for c in 0..v.degree() {
            for (limb, r) in residues.iter_mut().enumerate() {
                *r = v.poly_limb(limb, index)[c];
            }
            let value = rns.compose_centered(&residues)?;
            let reduced = ((&value % &t_big) + &t_big) % &t_big;
            message.push(reduced.to_u32().expect("reduced below t"));
            let magnitude = value.abs();
            if magnitude > largest {
                largest = magnitude;
            }
        }
        let budget_bits = if largest.is_zero() {
            log_half_q
        } else {
            // Values stay below Q < 2^900, well inside f64's range.
            log_half_q - largest.to_f64().map_or(f64::INFINITY, f64::log2)
        };
        Ok(Phase { message, budget_bits })
    }
}

impl<B: Backend> Drop for Decryptor<'_, B> {
    fn drop(&mut self) {
        self.backend.zeroize(&mut self.s);
        self.backend.zeroize(&mut self.s_squared);
    }
}
