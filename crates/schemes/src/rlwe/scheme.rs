//! What differs between BGV, BFV and CKKS, as the one trait the shared RLWE core is generic over.

use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

use pimhe_exec::Backend;
use pimhe_math::Modulus;

use crate::error::Result;
use crate::rlwe::ciphertext::CiphertextBatch;
use crate::rlwe::context::RlweContext;
use crate::rlwe::decryptor::Decryptor;
use crate::rlwe::evaluator::Evaluator;

/// A scheme's context (BGV's, BFV's, CKKS's): its parameters over the shared [`RlweContext`],
/// what code generic over schemes needs of them (a context from parameters or from the preset
/// of a ring degree, the primes a backend must hold), and the few steps where the schemes really
/// differ: how a message enters an encryption, how a phase becomes a message (and how much noise
/// it may still take), how two ciphertexts multiply, how two ciphertexts are brought to a common
/// level and tag before adding, and how plaintexts become the operand of a ciphertext.
///
/// Keys ([`crate::rlwe::KeyGenerator`]), encryption ([`crate::rlwe::Encryptor`]), decryption
/// ([`Decryptor`]), the ciphertext batch and evaluation ([`Evaluator`], plaintext operands
/// included) are written once against this trait; `bgv`, `bfv` and `ckks` name them for their
/// context (`bgv::Encryptor<'a, B>` is `rlwe::Encryptor<'a, B, BgvContext>`) and add their own
/// operations. Code generic over schemes (the workloads, the benchmarks, the Python bindings)
/// uses it as it is. The hooks are called by those types; a user calls `Encryptor::encrypt`,
/// `Decryptor::decrypt`, `Evaluator::multiply` and `Evaluator::add_plain`.
///
/// ```
/// use pimhe_schemes::bfv::BfvContext;
/// use pimhe_schemes::bgv::BgvContext;
/// use pimhe_schemes::ckks::CkksContext;
/// use pimhe_schemes::rlwe::RlweScheme;
///
/// /// Written once for every scheme: how many primes a PIM backend serving the preset of `n`
/// /// must hold resident.
/// fn resident_primes<S: RlweScheme>(n: usize) -> usize {
///     S::preset(n).unwrap().backend_primes().len()
/// }
/// assert_eq!(resident_primes::<BgvContext>(4096), 3 + 1); // 3 data primes, 1 special prime
/// // BFV adds BEHZ's m~, m_sk, gamma and the 4 primes of B, and t.
/// assert_eq!(resident_primes::<BfvContext>(4096), 3 + 1 + 7 + 1);
/// assert_eq!(resident_primes::<CkksContext>(8192), CkksContext::preset(8192).unwrap().rlwe().params().primes().len());
/// assert!(BgvContext::preset(1000).is_err()); // no preset of that degree
/// ```
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

    /// Validates `params` (the 128-bit check included, unless they allow insecure sets) and
    /// precomputes: the context every object made under these parameters shares. The scheme
    /// context's own `new`, for code generic over schemes.
    fn from_params(params: Self::Params) -> Result<Arc<Self>>;

    /// The context of the library's 128-bit preset of ring degree `n` (the scheme's
    /// `XParameters::preset`); an error names the degrees that have one.
    fn preset(n: usize) -> Result<Arc<Self>>;

    /// The shared bases and key-switching structure.
    fn rlwe(&self) -> &RlweContext;

    /// The parameters.
    fn params(&self) -> &Self::Params;

    /// Every prime a backend must hold for the scheme's operations under these parameters, so
    /// that a PIM backend can be built with all of them resident: the data and special primes
    /// (BGV, CKKS); BFV adds BEHZ's auxiliary primes and t, since its base conversions run on
    /// the backend.
    fn backend_primes(&self) -> Vec<u32> {
        self.rlwe().params().primes()
    }

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

    /// The remaining noise budget of each ciphertext in bits (0 when exhausted), measured
    /// exactly, for [`Decryptor::noise_budget`]; an error for an approximate scheme (CKKS),
    /// whose results carry their error in the message and have no such budget.
    fn noise_budget<B: Backend>(
        decryptor: &Decryptor<'_, B, Self>,
        batch: &CiphertextBatch<B, Self>,
    ) -> Result<Vec<u32>>;

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

    /// The device operand of `plains` (one plaintext for the whole batch, or one per ciphertext:
    /// the caller has counted them) for `operation` with the batch `a`, over a's level in NTT
    /// form, each plaintext checked against the context and the batch, and the tag of the
    /// result. An addition adds the operand to a's first component, a multiplication multiplies
    /// every component by it ([`Evaluator::add_plain`], [`Evaluator::mul_plain`]): BGV scales
    /// an addend by a's correction factor, BFV adds round(q m / t) and multiplies by m lifted
    /// to (-t/2, t/2], CKKS checks the scale and slot count and multiplies the scales.
    fn plain_operand<B: Backend>(
        &self,
        backend: &B,
        a: &CiphertextBatch<B, Self>,
        plains: &[Self::Plaintext],
        operation: PlainOperation,
    ) -> Result<(B::Buffer, Self::Tag)>;
}

/// What a plaintext operand is for ([`RlweScheme::plain_operand`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlainOperation {
    /// `a + m`: added to the first component.
    Add,
    /// `a * m`: every component multiplied by it.
    Multiply,
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
