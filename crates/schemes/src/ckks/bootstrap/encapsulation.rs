//! Sparse-secret encapsulation (Bossuat, Troncoso-Pastoriza and Hubaux, ACNS 2022; the
//! bootstrapping of Anaheim's Boot and of Lattigo): the secret s stays dense (uniform ternary,
//! the distribution of the 128-bit tables), and bootstrapping passes through an ephemeral
//! sparse secret s' of small Hamming weight h', so that ModRaise's multiple I of q0 stays as
//! small as h' allows (the EvalMod range K grows with the weight; [`super::minimum_range`]).
//!
//! 1. At the lowest level the ciphertext is switched from s to s' over q0 and as many special
//!    primes as q0 has primes. That key is an RLWE sample under the sparse s' only at this
//!    small modulus (about 120 bits), where a sparse secret keeps its security at every ring
//!    degree that bootstraps; the key never exists at a larger modulus.
//! 2. ModRaise, under s'.
//! 3. At the top level the raised ciphertext is switched back from s' to s with a key over the
//!    whole chain: an RLWE sample under the dense s, as secure as every other key.
//!
//! s' is drawn by the key generator, used for the two keys and wiped: it is never stored.

use std::sync::Arc;

use pimhe_exec::Backend;

use crate::ckks::context::CkksContext;
use crate::error::{Result, SchemeError};
use crate::rlwe::keyswitch::{DeviceSwitchingKey, KeySwitchBasis, SwitchingKey};
use crate::rlwe::noise::{secret_key, WipeOnDrop};
use crate::rlwe::{
    expect_same_context, CiphertextBatch, Evaluator, KeyGenerator, RlweScheme, SecretDistribution, SecretKey,
};

/// The ephemeral secret's Hamming weight by default, Lattigo's and Bossuat et al.'s h' = 32.
pub const EPHEMERAL_HAMMING_WEIGHT: usize = 32;

/// The two switching keys of sparse-secret encapsulation: s to s' over q0 and the first special
/// primes, s' to s over every prime. Public material, like Galois keys.
#[derive(Clone)]
pub struct EncapsulationKeys {
    pub(crate) ctx: Arc<CkksContext>,
    pub(crate) hamming_weight: usize,
    pub(crate) to_sparse: SwitchingKey,
    pub(crate) to_dense: SwitchingKey,
}

impl EncapsulationKeys {
    /// The ephemeral secret's Hamming weight h'.
    pub fn hamming_weight(&self) -> usize {
        self.hamming_weight
    }

    /// Size in bytes of both keys.
    pub fn size_bytes(&self) -> usize {
        self.to_sparse.size_bytes() + self.to_dense.size_bytes()
    }

    /// The context the keys belong to.
    pub fn context(&self) -> &Arc<CkksContext> {
        &self.ctx
    }
}

/// The key-switching structure of step 1: q0's primes as the data primes, one digit, and the
/// same number of the context's special primes (so P is about q0, enough for one digit).
pub(crate) fn small_basis(ctx: &CkksContext) -> Result<KeySwitchBasis> {
    let rlwe = ctx.params().rlwe();
    let (data, base) = (rlwe.data_primes().len(), ctx.level_basis(ctx.min_level())?.len());
    if rlwe.special_primes().len() < base {
        return Err(SchemeError::KeySwitchingUnavailable(format!(
            "sparse-secret encapsulation switches q0's {base} primes with as many special primes; the parameters \
             have {}",
            rlwe.special_primes().len()
        )));
    }
    let limbs: Vec<usize> = (0..base).chain(data..data + base).collect();
    KeySwitchBasis::new(&ctx.rlwe().key_basis().select(&limbs)?, base, 1)
}

impl<B: Backend> KeyGenerator<'_, B, CkksContext> {
    /// The encapsulation keys of `secret` through a fresh sparse secret of Hamming weight
    /// `hamming_weight` (1 to N; [`EPHEMERAL_HAMMING_WEIGHT`] is the usual choice), which is
    /// wiped once both keys are made.
    pub fn encapsulation_keys(
        &mut self,
        secret: &SecretKey<CkksContext>,
        hamming_weight: usize,
    ) -> Result<EncapsulationKeys> {
        let ctx = secret.context().clone();
        let degree = ctx.degree();
        if hamming_weight == 0 || hamming_weight > degree {
            return Err(SchemeError::InvalidParameters(format!(
                "the ephemeral secret's Hamming weight must be 1 to N = {degree}; got {hamming_weight}"
            )));
        }
        let small = small_basis(&ctx)?;
        let main = crate::rlwe::key_switch_basis(&*ctx)?;
        let key_basis = ctx.rlwe().key_basis().clone();
        let (backend, noise) = self.backend_and_noise();
        let mut sparse = secret_key(backend, noise, &key_basis, SecretDistribution::SparseTernary { hamming_weight })?;
        let keys = (|| -> Result<(SwitchingKey, SwitchingKey)> {
            let upload = |s: &pimhe_ring::PolyBatch, basis| -> Result<WipeOnDrop<'_, B>> {
                Ok(WipeOnDrop::new(backend, backend.upload(s.restrict(basis)?)?))
            };
            let (dense_small, sparse_small) =
                (upload(&secret.s, small.key_basis())?, upload(&sparse, small.key_basis())?);
            let to_sparse = SwitchingKey::generate(backend, &small, noise, &sparse_small, &dense_small, 1)?;
            let (dense, sparse_all) = (upload(&secret.s, &key_basis)?, upload(&sparse, &key_basis)?);
            let to_dense = SwitchingKey::generate(backend, main, noise, &dense, &sparse_all, 1)?;
            Ok((to_sparse, to_dense))
        })();
        sparse.zeroize();
        let (to_sparse, to_dense) = keys?;
        Ok(EncapsulationKeys { ctx, hamming_weight, to_sparse, to_dense })
    }
}

/// [`EncapsulationKeys`] resident on a backend.
pub(crate) struct DeviceEncapsulation<B: Backend> {
    small: KeySwitchBasis,
    to_sparse: DeviceSwitchingKey<B>,
    to_dense: DeviceSwitchingKey<B>,
}

impl<B: Backend> DeviceEncapsulation<B> {
    /// The keys on the evaluator's backend, after checking they are for its context.
    pub(crate) fn new(evaluator: &Evaluator<'_, B, CkksContext>, keys: &EncapsulationKeys) -> Result<Self> {
        expect_same_context(&keys.ctx, evaluator.context(), "the evaluator")?;
        let backend = evaluator.backend();
        Ok(Self {
            small: small_basis(&keys.ctx)?,
            to_sparse: keys.to_sparse.upload(backend)?,
            to_dense: keys.to_dense.upload(backend)?,
        })
    }

    /// Step 1: `low` (at the lowest level, under s) switched to s'.
    pub(crate) fn to_sparse(
        &self,
        evaluator: &Evaluator<'_, B, CkksContext>,
        low: &CiphertextBatch<B, CkksContext>,
    ) -> Result<CiphertextBatch<B, CkksContext>> {
        self.switch(evaluator, low, &self.to_sparse, &self.small)
    }

    /// Step 3: `raised` (at the top level, under s') switched back to s.
    pub(crate) fn to_dense(
        &self,
        evaluator: &Evaluator<'_, B, CkksContext>,
        raised: &CiphertextBatch<B, CkksContext>,
    ) -> Result<CiphertextBatch<B, CkksContext>> {
        let main = crate::rlwe::key_switch_basis(&**evaluator.context())?;
        self.switch(evaluator, raised, &self.to_dense, main)
    }

    /// (c0, c1) -> (c0 + c0', c1') with c0' + c1' s_to = c1 s_from.
    fn switch(
        &self,
        evaluator: &Evaluator<'_, B, CkksContext>,
        a: &CiphertextBatch<B, CkksContext>,
        key: &DeviceSwitchingKey<B>,
        basis: &KeySwitchBasis,
    ) -> Result<CiphertextBatch<B, CkksContext>> {
        let backend = evaluator.backend();
        let [c0, c1] = a.parts() else {
            return Err(SchemeError::WrongSize {
                operation: "sparse-secret encapsulation",
                expected: 2,
                found: a.size(),
            });
        };
        let (d0, d1) = key.switch(backend, basis, c1, None)?;
        let c0 = backend.add(c0, &d0)?;
        Ok(a.derive(vec![c0, d1], a.level(), a.tag()))
    }
}
