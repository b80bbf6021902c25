//! Homomorphic operations on BFV ciphertext batches, each a few backend calls for the whole batch.

use std::sync::Arc;

use pimhe_exec::Backend;
use pimhe_ring::PolyBatch;

use crate::bfv::ciphertext::CiphertextBatch;
use crate::bfv::context::BfvContext;
use crate::bfv::encryptor::upload_scaled;
use crate::bfv::keys::RelinKey;
use crate::components::{add_or_sub, check_plain_count};
use crate::encoder::{PlainContext, Plaintext};
use crate::error::{Result, SchemeError};
use crate::keyswitch::DeviceSwitchingKey;

/// Evaluates on BFV ciphertext batches with only public material (the server side).
///
/// Two-operand operations need batches of the same size; plaintext operands come one per
/// ciphertext or as a single plaintext applied to all.
///
/// ```
/// use pimhe_exec::CpuBackend;
/// use pimhe_schemes::bfv::*;
/// let backend = CpuBackend::new(Some(2)).unwrap();
/// let ctx = BfvContext::new(BfvParameters::preset(4096).unwrap()).unwrap();
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
/// let product = evaluator.multiply(&x, &y).unwrap();          // BEHZ: 3 components
/// let product = evaluator.relinearize(&product).unwrap();     // back to 2
/// let shifted = evaluator.add_plain(&product, &[encoder.encode(&[1, 1]).unwrap()]).unwrap();
///
/// let decryptor = Decryptor::new(&backend, &secret).unwrap();
/// let slots = encoder.decode(&decryptor.decrypt(&shifted).unwrap()[0]).unwrap();
/// assert_eq!(&slots[..2], &[16, 25]);
/// ```
pub struct Evaluator<'a, B: Backend> {
    backend: &'a B,
    ctx: Arc<BfvContext>,
    relin: Option<DeviceSwitchingKey<B>>,
}

impl<'a, B: Backend> Evaluator<'a, B> {
    /// An evaluator without evaluation keys (everything but relinearization).
    pub fn new(backend: &'a B, ctx: &Arc<BfvContext>) -> Self {
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
        Ok(self.derive(a, parts))
    }

    /// The slot-wise sum of all ciphertexts of the batch, as a batch of one.
    pub fn sum(&self, a: &CiphertextBatch<B>) -> Result<CiphertextBatch<B>> {
        self.check_batch(a)?;
        let parts = a.parts.iter().map(|p| self.backend.sum(p)).collect::<pimhe_exec::Result<Vec<_>>>()?;
        Ok(CiphertextBatch { count: 1, ..self.derive(a, parts) })
    }

    /// Slot-wise `a + m`: round(q m / t) is added to component 0.
    pub fn add_plain(&self, a: &CiphertextBatch<B>, plains: &[Plaintext]) -> Result<CiphertextBatch<B>> {
        self.check_batch(a)?;
        check_plain_count(a.count, plains)?;
        let plain = upload_scaled(self.backend, &self.ctx, plains)?;
        let mut parts = a.parts.iter().map(|p| self.backend.copy(p)).collect::<pimhe_exec::Result<Vec<_>>>()?;
        self.backend.add_assign(&mut parts[0], &plain)?;
        Ok(self.derive(a, parts))
    }

    /// Slot-wise `a * m`: every component times m lifted to (-t/2, t/2] (the noise grows by
    /// about N t / 2).
    pub fn mul_plain(&self, a: &CiphertextBatch<B>, plains: &[Plaintext]) -> Result<CiphertextBatch<B>> {
        self.check_batch(a)?;
        check_plain_count(a.count, plains)?;
        let space = self.ctx.plain_space();
        let lifted = plains
            .iter()
            .map(|plain| {
                plain.check(space)?;
                Ok(plain.centered(space))
            })
            .collect::<Result<Vec<_>>>()?;
        let refs: Vec<&[i64]> = lifted.iter().map(|p| p.as_slice()).collect();
        let mut plain = self.backend.upload(PolyBatch::from_signed(self.ctx.ciphertext_basis(), &refs)?)?;
        self.backend.ntt(&mut plain)?;
        let parts = a.parts.iter().map(|p| self.backend.mul(p, &plain)).collect::<pimhe_exec::Result<Vec<_>>>()?;
        Ok(self.derive(a, parts))
    }

    /// Slot-wise `a * b` by BEHZ's Algorithm 2: both operands extended to Bsk, the tensor
    /// product in q and in Bsk, scaled by t/q (fast floor) and brought back to q
    /// (Shenoy-Kumaresan). A batch of 3-component ciphertexts; relinearize to get 2 back.
    pub fn multiply(&self, a: &CiphertextBatch<B>, b: &CiphertextBatch<B>) -> Result<CiphertextBatch<B>> {
        self.check_pair(a, b)?;
        for x in [a, b] {
            if x.size() != 2 {
                return Err(SchemeError::WrongSize { operation: "multiply", expected: 2, found: x.size() });
            }
        }
        let backend = self.backend;
        let behz = self.ctx.behz();
        let (a0, a1) = (behz.extend(backend, &a.parts[0])?, behz.extend(backend, &a.parts[1])?);
        // A square (the same batch twice) extends its operand once.
        let in_bsk = if std::ptr::eq(a, b) {
            backend.tensor(&a0, &a1, &a0, &a1)?
        } else {
            backend.tensor(&a0, &a1, &behz.extend(backend, &b.parts[0])?, &behz.extend(backend, &b.parts[1])?)?
        };
        let in_q = backend.tensor(&a.parts[0], &a.parts[1], &b.parts[0], &b.parts[1])?;
        let parts = in_q
            .into_iter()
            .zip(in_bsk)
            .map(|(mut d_q, mut d_bsk)| {
                backend.intt(&mut d_q)?;
                backend.intt(&mut d_bsk)?;
                let mut scaled = behz.to_q(backend, &behz.fast_floor(backend, &d_q, &d_bsk)?)?;
                backend.ntt(&mut scaled)?;
                Ok(scaled)
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(self.derive(a, parts))
    }

    /// Back from 3 components to 2 by key switching the s^2 component (the shared `keyswitch`;
    /// no t-correction in the division by P: BFV's errors need not vanish modulo t).
    pub fn relinearize(&self, a: &CiphertextBatch<B>) -> Result<CiphertextBatch<B>> {
        self.check_batch(a)?;
        if a.size() != 3 {
            return Err(SchemeError::WrongSize { operation: "relinearize", expected: 3, found: a.size() });
        }
        let key = self.relin.as_ref().ok_or_else(|| {
            SchemeError::KeySwitchingUnavailable("the evaluator has no relinearization key (use with_relin_key)".into())
        })?;
        let basis = self.ctx.key_switch_basis().expect("a relinearization key implies special primes");
        let (mut c0, mut c1) = key.switch(self.backend, basis, &a.parts[2], None)?;
        self.backend.add_assign(&mut c0, &a.parts[0])?;
        self.backend.add_assign(&mut c1, &a.parts[1])?;
        Ok(self.derive(a, vec![c0, c1]))
    }

    fn combine(&self, a: &CiphertextBatch<B>, b: &CiphertextBatch<B>, subtract: bool) -> Result<CiphertextBatch<B>> {
        self.check_pair(a, b)?;
        let parts = add_or_sub(self.backend, &a.parts, &b.parts, subtract)?;
        Ok(self.derive(a, parts))
    }

    fn derive(&self, a: &CiphertextBatch<B>, parts: Vec<B::Buffer>) -> CiphertextBatch<B> {
        CiphertextBatch { ctx: a.ctx.clone(), parts, count: a.count }
    }

    fn check_batch(&self, a: &CiphertextBatch<B>) -> Result<()> {
        self.ctx.expect_same(&a.ctx, "the ciphertext batch")
    }

    fn check_pair(&self, a: &CiphertextBatch<B>, b: &CiphertextBatch<B>) -> Result<()> {
        self.check_batch(a)?;
        self.check_batch(b)?;
        if a.count != b.count {
            return Err(SchemeError::CountMismatch { left: a.count, right: b.count });
        }
        Ok(())
    }
}
