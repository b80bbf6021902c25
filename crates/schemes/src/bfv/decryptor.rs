//! BFV decryption (BEHZ Algorithm 1, with the gamma correction) and noise-budget measurement.

use pimhe_exec::Backend;
use pimhe_math::RnsBase;

use crate::bfv::context::BfvContext;
use crate::encoder::{PlainContext, Plaintext};
use crate::error::{Result, SchemeError};
use crate::rlwe::phase::noise_budgets;
use crate::rlwe::{CiphertextBatch, Decryptor};

/// Decrypts every ciphertext of the batch by BEHZ's Algorithm 1, RNS and integers only: the
/// gamma correction that yields the message also measures the invariant noise [t v]_q to 30
/// bits, and a ciphertext with less than one bit of budget left is refused with
/// [`SchemeError::NoiseBudgetExhausted`] instead of decrypting to a wrong message.
pub(crate) fn decrypt<B: Backend>(
    decryptor: &Decryptor<'_, B, BfvContext>,
    batch: &CiphertextBatch<B, BfvContext>,
) -> Result<Vec<Plaintext>> {
    let behz = decryptor.context().behz();
    let scaled = behz.scale_to_plain(decryptor.backend, &*decryptor.phase(batch)?)?;
    if let Some(index) = scaled.iter().position(|s| behz.exhausted(s)) {
        return Err(SchemeError::NoiseBudgetExhausted { index });
    }
    Ok(scaled.into_iter().map(|s| Plaintext::from_coefficients(s.message)).collect())
}

/// The remaining noise budget of each ciphertext in bits (0 when exhausted): how many more bits
/// the invariant noise [t v]_q may grow before decryption fails, measured exactly over q (`rns`).
pub(crate) fn noise_budget<B: Backend>(
    decryptor: &Decryptor<'_, B, BfvContext>,
    batch: &CiphertextBatch<B, BfvContext>,
    rns: &RnsBase,
) -> Result<Vec<u32>> {
    let v = decryptor.phase_on_host(batch)?;
    noise_budgets(&v, rns, decryptor.context().plain_space().modulus().value())
}
