//! Homomorphic operations every RLWE scheme shares, each a few backend calls for a whole batch:
//! addition, subtraction, negation, the sum over a batch, plaintext operands (through the
//! scheme's [`RlweScheme::plain_operand`]), relinearization and automorphisms (plain and
//! hoisted). The schemes add their own (modulus switching, rescaling, constants, rotations by
//! slot) on the same type.

use std::collections::BTreeMap;
use std::sync::Arc;

use pimhe_exec::Backend;

use crate::error::{Result, SchemeError};
use crate::rlwe::ciphertext::CiphertextBatch;
use crate::rlwe::components::{add_or_sub, check_plain_count};
use crate::rlwe::expect_same_context;
use crate::rlwe::keys::{GaloisKeys, RelinKey};
use crate::rlwe::keyswitch::{DeviceSwitchingKey, KeySwitchBasis};
use crate::rlwe::scheme::{Parts, PlainOperation, RlweScheme};

/// Evaluates on ciphertext batches with only public material (the server side): the
/// relinearization key and Galois keys it was given, resident on its backend.
///
/// Two-operand operations need batches of the same size; plaintext operands come one per
/// ciphertext or as a single plaintext applied to all.
pub struct Evaluator<'a, B: Backend, S: RlweScheme> {
    pub(crate) backend: &'a B,
    pub(crate) ctx: Arc<S>,
    relin: Option<DeviceSwitchingKey<B>>,
    galois: BTreeMap<usize, DeviceSwitchingKey<B>>,
}

impl<'a, B: Backend, S: RlweScheme> Evaluator<'a, B, S> {
    /// An evaluator without evaluation keys (everything but relinearization and automorphisms).
    pub fn new(backend: &'a B, ctx: &Arc<S>) -> Self {
        Self { backend, ctx: ctx.clone(), relin: None, galois: BTreeMap::new() }
    }

    /// Uploads the relinearization key to the backend for [`Evaluator::relinearize`].
    pub fn with_relin_key(mut self, key: &RelinKey<S>) -> Result<Self> {
        expect_same_context(&self.ctx, &key.ctx, "the relinearization key")?;
        self.relin = Some(key.key.upload(self.backend)?);
        Ok(self)
    }

    /// Uploads Galois keys to the backend for [`Evaluator::automorphism`] (and the scheme's
    /// rotations); keys for elements already held are replaced.
    pub fn with_galois_keys(mut self, keys: &GaloisKeys<S>) -> Result<Self> {
        expect_same_context(&self.ctx, &keys.ctx, "the Galois keys")?;
        for (&k, key) in &keys.keys {
            self.galois.insert(k, key.upload(self.backend)?);
        }
        Ok(self)
    }

    /// The backend this evaluator runs on.
    pub fn backend(&self) -> &B {
        self.backend
    }

    /// The parameters.
    pub fn context(&self) -> &Arc<S> {
        &self.ctx
    }

    /// Whether the evaluator holds a Galois key for element `k` (modulo 2N).
    pub fn has_galois_key(&self, k: usize) -> bool {
        self.galois.contains_key(&(k % (2 * self.ctx.rlwe().degree())))
    }

    /// Slot-wise `a + b`.
    pub fn add(&self, a: &CiphertextBatch<B, S>, b: &CiphertextBatch<B, S>) -> Result<CiphertextBatch<B, S>> {
        self.combine(a, b, false)
    }

    /// Slot-wise `a += b`: [`Evaluator::add`] into `a`'s own components, bit for bit the same
    /// result, where `a` needs no alignment to `b` (the scheme's [`RlweScheme::align`] leaves
    /// `a`'s components as they are: the same level and scale, the usual case); otherwise `a`
    /// becomes `add(a, b)`. `a` is unchanged when the addition is refused.
    ///
    /// ```
    /// use pimhe_exec::CpuBackend;
    /// use pimhe_schemes::bgv::*;
    /// let backend = CpuBackend::new(Some(1)).unwrap();
    /// let ctx = BgvContext::new(BgvParameters::preset(4096).unwrap()).unwrap();
    /// let secret = KeyGenerator::new(&backend, &ctx).unwrap().secret_key().unwrap();
    /// let encoder = BatchEncoder::new(&ctx);
    /// let mut encryptor = Encryptor::with_secret_key(&backend, &secret).unwrap();
    /// let mut x = encryptor.encrypt(&[encoder.encode(&[3, 4]).unwrap()]).unwrap();
    /// let y = encryptor.encrypt(&[encoder.encode(&[10, 20]).unwrap()]).unwrap();
    /// Evaluator::new(&backend, &ctx).add_assign(&mut x, &y).unwrap();
    /// let decryptor = Decryptor::new(&backend, &secret).unwrap();
    /// assert_eq!(&encoder.decode(&decryptor.decrypt(&x).unwrap()[0]).unwrap()[..2], &[13, 24]);
    /// ```
    pub fn add_assign(&self, a: &mut CiphertextBatch<B, S>, b: &CiphertextBatch<B, S>) -> Result<()> {
        self.check_pair(a, b)?;
        let (in_place, moved_b, level, tag) = {
            let aligned = S::align(self, a, b)?;
            let moved_b = match aligned.b {
                Parts::Owned(parts) => Some(parts),
                Parts::Borrowed(_) => None,
            };
            (matches!(aligned.a, Parts::Borrowed(_)), moved_b, aligned.level, aligned.tag)
        };
        if !in_place {
            *a = self.add(a, b)?;
            return Ok(());
        }
        let b_parts = moved_b.as_deref().unwrap_or(&b.parts);
        for (j, y) in b_parts.iter().enumerate() {
            match a.parts.get_mut(j) {
                Some(x) => self.backend.add_assign(x, y)?,
                None => a.parts.push(self.backend.copy(y)?),
            }
        }
        (a.level, a.tag) = (level, tag);
        Ok(())
    }

    /// Slot-wise `a - b`.
    pub fn sub(&self, a: &CiphertextBatch<B, S>, b: &CiphertextBatch<B, S>) -> Result<CiphertextBatch<B, S>> {
        self.combine(a, b, true)
    }

    /// Slot-wise `-a`.
    pub fn negate(&self, a: &CiphertextBatch<B, S>) -> Result<CiphertextBatch<B, S>> {
        self.check_batch(a)?;
        let parts = a.parts.iter().map(|p| self.backend.neg(p)).collect::<pimhe_exec::Result<Vec<_>>>()?;
        Ok(a.derive(parts, a.level, a.tag))
    }

    /// The slot-wise sum of all ciphertexts of the batch, as a batch of one: an encrypted
    /// aggregate, e.g. over users who each sent one ciphertext of the batch. Noise grows by
    /// log2(count) bits at most.
    pub fn sum(&self, a: &CiphertextBatch<B, S>) -> Result<CiphertextBatch<B, S>> {
        self.check_batch(a)?;
        let parts = a.parts.iter().map(|p| self.backend.sum(p)).collect::<pimhe_exec::Result<Vec<_>>>()?;
        Ok(CiphertextBatch { count: 1, ..a.derive(parts, a.level, a.tag) })
    }

    /// Slot-wise `a + m` for plaintexts `plains`, one per ciphertext or a single one for the
    /// whole batch: the scheme's operand ([`RlweScheme::plain_operand`]: BGV's m times a's
    /// correction factor, BFV's round(q m / t), CKKS's encoding checked against a's scale and
    /// slots) added to the first component, at a's level.
    ///
    /// ```
    /// use pimhe_exec::CpuBackend;
    /// use pimhe_schemes::bgv::*;
    /// let backend = CpuBackend::new(Some(1)).unwrap();
    /// let ctx = BgvContext::new(BgvParameters::preset(4096).unwrap()).unwrap();
    /// let secret = KeyGenerator::new(&backend, &ctx).unwrap().secret_key().unwrap();
    /// let encoder = BatchEncoder::new(&ctx);
    /// let x = Encryptor::with_secret_key(&backend, &secret).unwrap().encrypt(&[encoder.encode(&[3, 4]).unwrap()]);
    /// let evaluator = Evaluator::new(&backend, &ctx);
    /// // After a modulus switch the ciphertext holds its message times a correction factor.
    /// let x = evaluator.mod_switch_to_next(&x.unwrap()).unwrap();
    /// let sum = evaluator.add_plain(&x, &[encoder.encode(&[10, 20]).unwrap()]).unwrap();
    /// let product = evaluator.mul_plain(&sum, &[encoder.encode(&[2, 3]).unwrap()]).unwrap();
    /// let decryptor = Decryptor::new(&backend, &secret).unwrap();
    /// assert_eq!(&encoder.decode(&decryptor.decrypt(&product).unwrap()[0]).unwrap()[..2], &[26, 72]);
    /// ```
    pub fn add_plain(&self, a: &CiphertextBatch<B, S>, plains: &[S::Plaintext]) -> Result<CiphertextBatch<B, S>> {
        self.check_batch(a)?;
        check_plain_count(a.count, plains.len())?;
        let (plain, tag) = self.ctx.plain_operand(self.backend, a, plains, PlainOperation::Add)?;
        let mut parts = self.copy_parts(a)?;
        self.backend.add_assign(&mut parts[0], &plain)?;
        Ok(a.derive(parts, a.level, tag))
    }

    /// Slot-wise `a * m` for plaintexts `plains`, one per ciphertext or a single one for the
    /// whole batch: every component times the scheme's operand ([`RlweScheme::plain_operand`]:
    /// m lifted to (-t/2, t/2] for BGV and BFV, the noise growing by about N t / 2; CKKS's
    /// encoding, the scales multiplying, so rescale afterwards), at a's level.
    pub fn mul_plain(&self, a: &CiphertextBatch<B, S>, plains: &[S::Plaintext]) -> Result<CiphertextBatch<B, S>> {
        self.check_batch(a)?;
        check_plain_count(a.count, plains.len())?;
        let (plain, tag) = self.ctx.plain_operand(self.backend, a, plains, PlainOperation::Multiply)?;
        let parts = a.parts.iter().map(|p| self.backend.mul(p, &plain)).collect::<pimhe_exec::Result<Vec<_>>>()?;
        Ok(a.derive(parts, a.level, tag))
    }

    /// Slot-wise `a * b`: a batch of 3-component ciphertexts (the scheme's product:
    /// [`RlweScheme::multiply`]); [`Evaluator::relinearize`] brings it back to 2.
    pub fn multiply(&self, a: &CiphertextBatch<B, S>, b: &CiphertextBatch<B, S>) -> Result<CiphertextBatch<B, S>> {
        self.check_pair(a, b)?;
        for x in [a, b] {
            if x.size() != 2 {
                return Err(SchemeError::WrongSize { operation: "multiply", expected: 2, found: x.size() });
            }
        }
        S::multiply(self, a, b)
    }

    /// Back from 3 components to 2 by key switching the s^2 component.
    pub fn relinearize(&self, a: &CiphertextBatch<B, S>) -> Result<CiphertextBatch<B, S>> {
        self.check_batch(a)?;
        if a.size() != 3 {
            return Err(SchemeError::WrongSize { operation: "relinearize", expected: 3, found: a.size() });
        }
        let key = self.relin.as_ref().ok_or_else(|| {
            SchemeError::KeySwitchingUnavailable("the evaluator has no relinearization key (use with_relin_key)".into())
        })?;
        let backend = self.backend;
        // BGV's Some(t): the switched pair decrypts to c2 s^2 mod t exactly, so its tag stays.
        let (mut c0, mut c1) =
            key.switch(backend, self.key_switch_basis()?, &a.parts[2], self.ctx.key_switch_modulus())?;
        backend.add_assign(&mut c0, &a.parts[0])?;
        backend.add_assign(&mut c1, &a.parts[1])?;
        Ok(a.derive(vec![c0, c1], a.level, a.tag))
    }

    /// The automorphism X -> X^k of every ciphertext, brought back under s by the Galois key of
    /// k: the message polynomial m(X) becomes m(X^k) (a slot rotation or conjugation). k = 1 is
    /// the identity (a rotation by 0, or by a multiple of the slot count): a copy, no key needed,
    /// so that code rotating by computed amounts needs no special case.
    pub fn automorphism(&self, a: &CiphertextBatch<B, S>, k: usize) -> Result<CiphertextBatch<B, S>> {
        self.check_batch(a)?;
        if a.size() != 2 {
            return Err(SchemeError::WrongSize { operation: "automorphism", expected: 2, found: a.size() });
        }
        if k == 1 {
            return Ok(a.derive(self.copy_parts(a)?, a.level, a.tag));
        }
        let key = self.galois_key(k)?;
        let backend = self.backend;
        // One element: the backend's fused key switch of sigma_k(c1) (hoisting pays off from two).
        let rotated = backend.automorphism(&a.parts[1], k)?;
        let (mut c0, c1) = key.switch(backend, self.key_switch_basis()?, &rotated, self.ctx.key_switch_modulus())?;
        backend.add_assign(&mut c0, &backend.automorphism(&a.parts[0], k)?)?;
        Ok(a.derive(vec![c0, c1], a.level, a.tag))
    }

    /// [`Evaluator::automorphism`] for each element of `elements`, hoisted: the decomposition
    /// (ModUp) of the ciphertexts' second component is made once and shared by every element,
    /// so each further element costs the inner product of the digits, mapped by X -> X^k, with
    /// its key and the ModDown, one backend call ([`Backend::key_switch_decomposed`]; Halevi and
    /// Shoup). Results in the order of `elements`; an element 1 gives a copy, as in
    /// [`Evaluator::automorphism`], and nothing is decomposed when every element is 1.
    pub fn automorphisms(&self, a: &CiphertextBatch<B, S>, elements: &[usize]) -> Result<Vec<CiphertextBatch<B, S>>> {
        self.check_batch(a)?;
        if a.size() != 2 {
            return Err(SchemeError::WrongSize { operation: "automorphism", expected: 2, found: a.size() });
        }
        let keys = elements.iter().filter(|&&k| k != 1).map(|&k| self.galois_key(k)).collect::<Result<Vec<_>>>()?;
        let backend = self.backend;
        let plain_modulus = self.ctx.key_switch_modulus();
        let decomposition = match keys.is_empty() {
            true => None,
            false => {
                let basis = self.key_switch_basis()?;
                Some((basis, basis.decompose(backend, &a.parts[1])?))
            }
        };
        let mut keys = keys.into_iter();
        elements
            .iter()
            .map(|&k| match (k, &decomposition) {
                (1, _) | (_, None) => Ok(a.derive(self.copy_parts(a)?, a.level, a.tag)),
                (k, Some((basis, decomposition))) => {
                    let key = keys.next().expect("one key per element other than 1");
                    // The digits are mapped by X -> X^k inside the backend's inner product.
                    let (mut c0, c1) = key.switch_decomposed(backend, basis, decomposition, Some(k), plain_modulus)?;
                    backend.add_assign(&mut c0, &backend.automorphism(&a.parts[0], k)?)?;
                    debug_assert_eq!(decomposition.level, a.level);
                    Ok(a.derive(vec![c0, c1], a.level, a.tag))
                }
            })
            .collect()
    }

    /// The Galois key of element `k`, or the error that says how to make it.
    pub(crate) fn galois_key(&self, k: usize) -> Result<&DeviceSwitchingKey<B>> {
        let two_n = 2 * self.ctx.rlwe().degree();
        self.galois.get(&(k % two_n)).ok_or_else(|| {
            SchemeError::KeySwitchingUnavailable(format!(
                "the evaluator has no Galois key for the automorphism X -> X^{k} (Galois element {}); \
                 make it with KeyGenerator::galois_keys and add it with with_galois_keys",
                k % two_n
            ))
        })
    }

    /// Copies of a batch's components.
    pub(crate) fn copy_parts(&self, a: &CiphertextBatch<B, S>) -> Result<Vec<B::Buffer>> {
        Ok(a.parts.iter().map(|p| self.backend.copy(p)).collect::<pimhe_exec::Result<Vec<_>>>()?)
    }

    /// Errors unless `a` belongs to the evaluator's parameters.
    pub(crate) fn check_batch(&self, a: &CiphertextBatch<B, S>) -> Result<()> {
        expect_same_context(&self.ctx, &a.ctx, "the ciphertext batch")
    }

    /// Both batches belong to the evaluator's parameters and have the same count.
    pub(crate) fn check_pair(&self, a: &CiphertextBatch<B, S>, b: &CiphertextBatch<B, S>) -> Result<()> {
        self.check_batch(a)?;
        self.check_batch(b)?;
        if a.count != b.count {
            return Err(SchemeError::CountMismatch { left: a.count, right: b.count });
        }
        Ok(())
    }

    fn combine(
        &self,
        a: &CiphertextBatch<B, S>,
        b: &CiphertextBatch<B, S>,
        subtract: bool,
    ) -> Result<CiphertextBatch<B, S>> {
        self.check_pair(a, b)?;
        let aligned = S::align(self, a, b)?;
        let parts = add_or_sub(self.backend, &aligned.a, &aligned.b, subtract)?;
        Ok(a.derive(parts, aligned.level, aligned.tag))
    }

    pub(crate) fn key_switch_basis(&self) -> Result<&KeySwitchBasis> {
        self.ctx.rlwe().key_switch_basis().ok_or_else(|| {
            SchemeError::KeySwitchingUnavailable(format!(
                "parameters [{}] have no special primes, so no key switching",
                self.ctx.params()
            ))
        })
    }
}

/// Errors unless two batches are at the same level (the schemes whose addition needs it).
pub(crate) fn expect_same_level<B: Backend, S: RlweScheme>(
    a: &CiphertextBatch<B, S>,
    b: &CiphertextBatch<B, S>,
) -> Result<()> {
    if a.level != b.level {
        return Err(SchemeError::LevelMismatch { left: a.level, right: b.level });
    }
    Ok(())
}
