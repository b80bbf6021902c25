//! What differs between BGV, BFV and CKKS, as the one trait the shared RLWE core is generic over.

use std::fmt;
use std::ops::Deref;

use pimhe_exec::Backend;
use pimhe_math::Modulus;

use crate::error::Result;
use crate::rlwe::ciphertext::CiphertextBatch;
use crate::rlwe::context::RlweContext;
use crate::rlwe::decryptor::Decryptor;
use crate::rlwe::evaluator::Evaluator;

/// A scheme's context (BGV's, BFV's, CKKS's): its parameters over the shared [`RlweContext`],
/// and the few steps where the schemes really differ: how a message enters an encryption, how a
/// phase becomes a message, how two ciphertexts multiply, and how two ciphertexts are brought to
/// a common level and tag before adding.
///
/// Keys ([`crate::rlwe::KeyGenerator`]), encryption ([`crate::rlwe::Encryptor`]), decryption
/// ([`Decryptor`]), the ciphertext batch and evaluation ([`Evaluator`]) are written once against
/// this trait; `bgv`, `bfv` and `ckks` name them for their context (`bgv::Encryptor<'a, B>` is
/// `rlwe::Encryptor<'a, B, BgvContext>`) and add their own operations. Code generic over schemes
/// (the workloads, the benchmarks) is written against it too. The hooks are called by those
/// types; a user calls `Encryptor::encrypt`, `Decryptor::decrypt` and `Evaluator::multiply`.
pub trait RlweScheme: Sized + Send + Sync + 'static {
    /// Name as the CLI spells it (`bgv`, `bfv`, `ckks`).
    const NAME: &'static str;
    /// The scheme's parameter set.
    type Params: Clone + PartialEq + fmt::Debug + fmt::Display + Send + Sync;
    /// What a ciphertext batch carries besides its level: BGV's correction factor, CKKS's
    /// scale, nothing for BFV.
    type Tag: Copy + PartialEq + fmt::Debug + Send + Sync;
    /// What is encrypted and what decryption gives back.
    type Plaintext;

    /// The shared bases and key-switching structure.
    fn rlwe(&self) -> &RlweContext;

    /// The parameters.
    fn params(&self) -> &Self::Params;

    /// The factor of every key and encryption error: t for BGV (errors must vanish modulo t),
    /// 1 for BFV and CKKS.
    fn error_scale(&self) -> u32;

    /// `Some(t)` where key switching must stay exact modulo t (BGV); `None` otherwise.
    fn key_switch_modulus(&self) -> Option<Modulus> {
        None
    }

    /// The message part of fresh encryptions of `plains` over the top basis, each plaintext
    /// checked, and the tag of the fresh batch. [`crate::rlwe::Encryptor`] adds the
    /// key-independent error `error_scale * e0` and the key's part.
    fn message_terms<B: Backend>(
        &self,
        backend: &B,
        plains: &[Self::Plaintext],
    ) -> Result<(MessageTerms<B>, Self::Tag)>;

    /// Decrypts every ciphertext of the batch (the decryptor holds the secret on its backend).
    fn decrypt<B: Backend>(
        decryptor: &Decryptor<'_, B, Self>,
        batch: &CiphertextBatch<B, Self>,
    ) -> Result<Vec<Self::Plaintext>>;

    /// The slot-wise product of two batches of 2-component ciphertexts: 3 components.
    fn multiply<B: Backend>(
        evaluator: &Evaluator<'_, B, Self>,
        a: &CiphertextBatch<B, Self>,
        b: &CiphertextBatch<B, Self>,
    ) -> Result<CiphertextBatch<B, Self>>;

    /// Brings `a` and `b` (same context and count, checked) to a common level and tag for an
    /// addition or subtraction, or refuses with an error that says why: BGV multiplies b by the
    /// ratio of the correction factors, CKKS drops the higher operand to the lower level and
    /// checks the scales.
    fn align<'x, B: Backend>(
        evaluator: &Evaluator<'_, B, Self>,
        a: &'x CiphertextBatch<B, Self>,
        b: &'x CiphertextBatch<B, Self>,
    ) -> Result<Aligned<'x, B, Self>>;
}

/// The message part of a fresh encryption, as [`RlweScheme::message_terms`] gives it.
pub enum MessageTerms<B: Backend> {
    /// One small signed polynomial per plaintext in coefficient form (BGV's centred m): the
    /// error is added on the host and the sum uploaded once.
    Signed(Vec<Vec<i64>>),
    /// The terms already on the device over the top basis in NTT form (BFV's round(q m / t),
    /// CKKS's scaled encoding): the error is uploaded and added there.
    Device(B::Buffer),
}

/// Component buffers either borrowed from a batch or computed for the occasion.
pub enum Parts<'x, B: Backend> {
    /// A batch's own components.
    Borrowed(&'x [B::Buffer]),
    /// New components (rescaled, dropped to a lower level).
    Owned(Vec<B::Buffer>),
}

impl<B: Backend> Deref for Parts<'_, B> {
    type Target = [B::Buffer];

    fn deref(&self) -> &[B::Buffer] {
        match self {
            Parts::Borrowed(parts) => parts,
            Parts::Owned(parts) => parts,
        }
    }
}

/// Two operands ready to add: their components at one level, and the tag of the sum.
pub struct Aligned<'x, B: Backend, S: RlweScheme> {
    /// The first operand's components.
    pub a: Parts<'x, B>,
    /// The second operand's components.
    pub b: Parts<'x, B>,
    /// The level of both, and of the result.
    pub level: usize,
    /// The tag of the result.
    pub tag: S::Tag,
}
