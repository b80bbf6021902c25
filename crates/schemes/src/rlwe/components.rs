//! Component-wise steps that every scheme's evaluator shares: adding or subtracting
//! ciphertexts of possibly different sizes, and checking how many plaintext operands came.

use pimhe_exec::Backend;

use crate::error::{Result, SchemeError};

/// `a + b`, or `a - b` when `subtract`, component by component over the components of both
/// operands (given as their component buffers, e.g. 2 and 3): a component only one operand has
/// counts as zero in the other, so it is copied (or negated when it is b's and `subtract`).
pub(crate) fn add_or_sub<B: Backend>(
    backend: &B,
    a: &[B::Buffer],
    b: &[B::Buffer],
    subtract: bool,
) -> Result<Vec<B::Buffer>> {
    Ok((0..a.len().max(b.len()))
        .map(|j| match (a.get(j), b.get(j)) {
            (Some(x), Some(y)) if subtract => backend.sub(x, y),
            (Some(x), Some(y)) => backend.add(x, y),
            (Some(x), None) => backend.copy(x),
            (None, Some(y)) if subtract => backend.neg(y),
            (None, Some(y)) => backend.copy(y),
            (None, None) => unreachable!("j < max of both sizes"),
        })
        .collect::<pimhe_exec::Result<Vec<_>>>()?)
}

/// Plaintext operands come one per ciphertext of a batch of `count`, or as a single plaintext
/// applied to all: any other number of `plains` is a [`SchemeError::CountMismatch`].
pub(crate) fn check_plain_count(count: usize, plains: usize) -> Result<()> {
    if plains != 1 && plains != count {
        return Err(SchemeError::CountMismatch { left: count, right: plains });
    }
    Ok(())
}
