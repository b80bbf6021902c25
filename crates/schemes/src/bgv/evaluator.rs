//! Homomorphic operations on ciphertext batches, each a few backend calls for the whole batch.

use std::sync::Arc;

use pimhe_exec::Backend;
use pimhe_ring::PolyBatch;

use crate::bgv::ciphertext::CiphertextBatch;
use crate::bgv::context::BgvContext;
use crate::bgv::keys::RelinKey;
use crate::components::{add_or_sub, check_plain_count};
use crate::encoder::{PlainContext, Plaintext};
use crate::error::{Result, SchemeError};
use crate::keyswitch::DeviceSwitchingKey;

/// Evaluates on ciphertext batches with only public material (the server side).
///
/// Two-operand operations need both batches at the same level and of the same size; plaintext
/// operands come one per ciphertext or as a single plaintext applied to all.
///
/// ```
/// use pimhe_exec::CpuBackend;
/// use pimhe_schemes::bgv::*;
/// let backend = CpuBackend::new(Some(2)).unwrap();
/// let ctx = BgvContext::new(BgvParameters::preset(4096).unwrap()).unwrap();
/// let mut keygen = KeyGenerator::new(&backend, &ctx).unwrap();
/// let secret = keygen.secret_key().unwrap();
/// let public = keygen.public_key(&secret).unwrap();
/// let relin = keygen.relin_key(&secret).unwrap();
/// let encoder = BatchEncoder::new(&ctx);
/// let mut encryptor = Encryptor::with_public_key(&backend, &public).unwrap();
/// let x = encryptor.encrypt(&[encoder.encode(&[3, 4]).unwrap()]).unwrap();
/// let y = encryptor.encrypt(&[encoder.encode(&[5, 6]).unwrap()]).unwrap();
///
/// let evaluator = Evaluator::new(&backend, &ctx).with_relin_key(&relin).unwrap();
/// let product = evaluator.multiply(&x, &y).unwrap();          // 3 components
/// let product = evaluator.relinearize(&product).unwrap();     // back to 2
/// let product = evaluator.mod_switch_to_next(&product).unwrap();
///
/// let decryptor = Decryptor::new(&backend, &secret).unwrap();
/// let slots = encoder.decode(&decryptor.decrypt(&product).unwrap()[0]).unwrap();
/// assert_eq!(&slots[..2], &[15, 24]);
/// ```
pub struct Evaluator<'a, B: Backend> {
    backend: &'a B,
    ctx: Arc<BgvContext>,
    relin: Option<DeviceSwitchingKey<B>>,
}

impl<'a, B: Backend> Evaluator<'a, B> {
    /// An evaluator without evaluation keys (everything but relinearization).
    pub fn new(backend: &'a B, ctx: &Arc<BgvContext>) -> Self {
        Self { backend, ctx: ctx.clone(), relin: None }
    }

    /// Uploads the relinearization key to the backend for [`Evaluator::relinearize`].
    pub fn with_relin_key(mut self, key: &RelinKey) -> Result<Self> {
        self.ctx.expect_same(&key.ctx, "the relinearization key")?;
        self.relin = Some(key.key.upload(self.backend)?);
        Ok(self)
    }

    /// The backend this evaluator runs on.
    pub fn backend(&self) -> &B {
        self.backend
    }

    /// Slot-wise `a + b`.
    pub fn add(&self, a: &CiphertextBatch<B>, b: &CiphertextBatch<B>) -> Result<CiphertextBatch<B>> {
        self.combine(a, b, false)
    }

    /// Slot-wise `a - b`.
    pub fn sub(&self, a: &CiphertextBatch<B>, b: &CiphertextBatch<B>) -> Result<CiphertextBatch<B>> {
        self.combine(a, b, true)
    }

    /// Slot-wise `-a`.
    pub fn negate(&self, a: &CiphertextBatch<B>) -> Result<CiphertextBatch<B>> {
        self.check_batch(a)?;
        let parts = a.parts.iter().map(|p| self.backend.neg(p)).collect::<pimhe_exec::Result<Vec<_>>>()?;
        Ok(self.derive(a, parts, a.level, a.correction))
    }

    /// The slot-wise sum of all ciphertexts of the batch, as a batch of one: an encrypted
    /// aggregate, e.g. over users who each sent one ciphertext of the batch. Noise grows by
    /// log2(count) bits at most.
    pub fn sum(&self, a: &CiphertextBatch<B>) -> Result<CiphertextBatch<B>> {
        self.check_batch(a)?;
        let parts = a.parts.iter().map(|p| self.backend.sum(p)).collect::<pimhe_exec::Result<Vec<_>>>()?;
        Ok(CiphertextBatch { count: 1, ..self.derive(a, parts, a.level, a.correction) })
    }

    /// Slot-wise `a + m`.
    pub fn add_plain(&self, a: &CiphertextBatch<B>, plains: &[Plaintext]) -> Result<CiphertextBatch<B>> {
        self.check_batch(a)?;
        // The ciphertext holds correction * m, so the plaintext is scaled to match.
        let plain = self.upload_plain(a, plains, a.correction)?;
        let mut parts = self.copy_parts(a)?;
        self.backend.add_assign(&mut parts[0], &plain)?;
        Ok(self.derive(a, parts, a.level, a.correction))
    }

    /// Slot-wise `a * m`.
    pub fn mul_plain(&self, a: &CiphertextBatch<B>, plains: &[Plaintext]) -> Result<CiphertextBatch<B>> {
        self.check_batch(a)?;
        let plain = self.upload_plain(a, plains, 1)?;
        let parts = a.parts.iter().map(|p| self.backend.mul(p, &plain)).collect::<pimhe_exec::Result<Vec<_>>>()?;
        Ok(self.derive(a, parts, a.level, a.correction))
    }

    /// Slot-wise `a * b`: the tensor product, a batch of 3-component ciphertexts.
    pub fn multiply(&self, a: &CiphertextBatch<B>, b: &CiphertextBatch<B>) -> Result<CiphertextBatch<B>> {
        self.check_pair(a, b)?;
        for x in [a, b] {
            if x.size() != 2 {
                return Err(SchemeError::WrongSize { operation: "multiply", expected: 2, found: x.size() });
            }
        }
        let [d0, d1, d2] = self.backend.tensor(&a.parts[0], &a.parts[1], &b.parts[0], &b.parts[1])?;
        let t = self.ctx.plain_modulus();
        Ok(self.derive(a, vec![d0, d1, d2], a.level, t.mul(a.correction, b.correction)))
    }

    /// Back from 3 components to 2 by key switching the s^2 component.
    pub fn relinearize(&self, a: &CiphertextBatch<B>) -> Result<CiphertextBatch<B>> {
        self.check_batch(a)?;
        if a.size() != 3 {
            return Err(SchemeError::WrongSize { operation: "relinearize", expected: 3, found: a.size() });
        }
        let key = self.relin.as_ref().ok_or_else(|| {
            SchemeError::KeySwitchingUnavailable("the evaluator has no relinearization key (use with_relin_key)".into())
        })?;
        let basis = self.ctx.key_switch_basis().expect("a relinearization key implies special primes");
        let backend = self.backend;
        // Some(t): the switched pair decrypts to c2 s^2 mod t exactly, so the correction stays.
        let (mut c0, mut c1) = key.switch(backend, basis, &a.parts[2], Some(*self.ctx.plain_modulus()))?;
        backend.add_assign(&mut c0, &a.parts[0])?;
        backend.add_assign(&mut c1, &a.parts[1])?;
        Ok(self.derive(a, vec![c0, c1], a.level, a.correction))
    }

    /// Drops the last prime: divides the ciphertexts by it (with the BGV correction), which
    /// shrinks the noise by the same factor. Fails at level 0.
    pub fn mod_switch_to_next(&self, a: &CiphertextBatch<B>) -> Result<CiphertextBatch<B>> {
        self.check_batch(a)?;
        if a.level == 0 {
            return Err(SchemeError::LevelExhausted);
        }
        let t = *self.ctx.plain_modulus();
        let dropped = self.ctx.level_basis(a.level)?.modulus(a.level).value();
        let parts =
            a.parts.iter().map(|p| self.backend.mod_down_last(p, Some(t))).collect::<pimhe_exec::Result<Vec<_>>>()?;
        // The message is now multiplied by q^{-1} mod t; track it instead of paying noise for it.
        let correction = t.mul(a.correction, t.inv(dropped % t.value())?);
        Ok(self.derive(a, parts, a.level - 1, correction))
    }

    /// Switches down to `level` (no-op when already there).
    pub fn mod_switch_to(&self, a: &CiphertextBatch<B>, level: usize) -> Result<CiphertextBatch<B>> {
        if level > a.level {
            return Err(SchemeError::LevelMismatch { left: a.level, right: level });
        }
        let mut current = self.derive(a, self.copy_parts(a)?, a.level, a.correction);
        while current.level > level {
            current = self.mod_switch_to_next(&current)?;
        }
        Ok(current)
    }

    fn combine(&self, a: &CiphertextBatch<B>, b: &CiphertextBatch<B>, subtract: bool) -> Result<CiphertextBatch<B>> {
        self.check_pair(a, b)?;
        let backend = self.backend;
        let t = self.ctx.plain_modulus();
        // Different correction factors: bring b's to a's with one constant multiplication.
        let rescaled;
        let b_parts = if a.correction == b.correction {
            &b.parts
        } else {
            let factor = t.mul(a.correction, t.inv(b.correction)?);
            rescaled =
                b.parts.iter().map(|p| backend.mul_scalar(p, factor as u64)).collect::<pimhe_exec::Result<Vec<_>>>()?;
            &rescaled
        };
        let parts = add_or_sub(backend, &a.parts, b_parts, subtract)?;
        Ok(self.derive(a, parts, a.level, a.correction))
    }

    /// The plaintexts (one, or one per ciphertext) times `scale` mod t, lifted to the batch's
    /// level, in NTT form on the device.
    fn upload_plain(&self, a: &CiphertextBatch<B>, plains: &[Plaintext], scale: u32) -> Result<B::Buffer> {
        check_plain_count(a.count, plains)?;
        let t = self.ctx.plain_modulus();
        let lifted = plains
            .iter()
            .map(|plain| {
                plain.check(self.ctx.plain_space())?;
                Ok(plain.coefficients().iter().map(|&m| t.center(t.mul(m, scale))).collect::<Vec<i64>>())
            })
            .collect::<Result<Vec<_>>>()?;
        let refs: Vec<&[i64]> = lifted.iter().map(|p| p.as_slice()).collect();
        let batch = PolyBatch::from_signed(self.ctx.level_basis(a.level)?, &refs)?;
        let mut buffer = self.backend.upload(batch)?;
        self.backend.ntt(&mut buffer)?;
        Ok(buffer)
    }

    fn copy_parts(&self, a: &CiphertextBatch<B>) -> Result<Vec<B::Buffer>> {
        Ok(a.parts.iter().map(|p| self.backend.copy(p)).collect::<pimhe_exec::Result<Vec<_>>>()?)
    }

    fn derive(
        &self,
        a: &CiphertextBatch<B>,
        parts: Vec<B::Buffer>,
        level: usize,
        correction: u32,
    ) -> CiphertextBatch<B> {
        CiphertextBatch { ctx: a.ctx.clone(), parts, level, count: a.count, correction }
    }

    fn check_batch(&self, a: &CiphertextBatch<B>) -> Result<()> {
        self.ctx.expect_same(&a.ctx, "the ciphertext batch")
    }

    fn check_pair(&self, a: &CiphertextBatch<B>, b: &CiphertextBatch<B>) -> Result<()> {
        self.check_batch(a)?;
        self.check_batch(b)?;
        if a.level != b.level {
            return Err(SchemeError::LevelMismatch { left: a.level, right: b.level });
        }
        if a.count != b.count {
            return Err(SchemeError::CountMismatch { left: a.count, right: b.count });
        }
        Ok(())
    }
}
