//! BGV's own homomorphic operations on the shared [`Evaluator`]: the tensor product, modulus
//! switching; how BGV aligns operands before adding (the correction factors), and its
//! plaintext operands.

use pimhe_exec::Backend;
use pimhe_ring::PolyBatch;

use crate::bgv::context::BgvContext;
use crate::encoder::{PlainContext, Plaintext};
use crate::error::{Result, SchemeError};
use crate::rlwe::{expect_same_level, Aligned, CiphertextBatch, Evaluator, Parts, PlainOperation};

/// The BGV tensor product `(a0 b0, a0 b1 + a1 b0, a1 b1)`; the message factors multiply.
pub(crate) fn multiply<B: Backend>(
    evaluator: &Evaluator<'_, B, BgvContext>,
    a: &CiphertextBatch<B, BgvContext>,
    b: &CiphertextBatch<B, BgvContext>,
) -> Result<CiphertextBatch<B, BgvContext>> {
    expect_same_level(a, b)?;
    let [d0, d1, d2] = if std::ptr::eq(a, b) {
        evaluator.backend.tensor_square(&a.parts[0], &a.parts[1])?
    } else {
        evaluator.backend.tensor(&a.parts[0], &a.parts[1], &b.parts[0], &b.parts[1])?
    };
    let t = evaluator.ctx.plain_modulus();
    Ok(a.derive(vec![d0, d1, d2], a.level, t.mul(a.tag, b.tag)))
}

/// Same level required; different correction factors: b's is brought to a's with one constant
/// multiplication.
pub(crate) fn align<'x, B: Backend>(
    evaluator: &Evaluator<'_, B, BgvContext>,
    a: &'x CiphertextBatch<B, BgvContext>,
    b: &'x CiphertextBatch<B, BgvContext>,
) -> Result<Aligned<'x, B, BgvContext>> {
    expect_same_level(a, b)?;
    let t = evaluator.ctx.plain_modulus();
    let b_parts = if a.tag == b.tag {
        Parts::Borrowed(&b.parts)
    } else {
        let factor = t.mul(a.tag, t.inv(b.tag)?);
        Parts::Owned(
            b.parts
                .iter()
                .map(|p| evaluator.backend.mul_scalar(p, factor as u64))
                .collect::<pimhe_exec::Result<Vec<_>>>()?,
        )
    };
    Ok(Aligned { a: Parts::Borrowed(&a.parts), b: b_parts, level: a.level, tag: a.tag })
}

/// The plaintexts (one, or one per ciphertext, each checked) lifted to a's level in NTT form on
/// the device, centred mod t: as they are for a product, which keeps a's correction factor; an
/// addend times a's correction factor mod t, since the ciphertext holds correction * m.
pub(crate) fn plain_operand<B: Backend>(
    ctx: &BgvContext,
    backend: &B,
    a: &CiphertextBatch<B, BgvContext>,
    plains: &[Plaintext],
    operation: PlainOperation,
) -> Result<(B::Buffer, u32)> {
    let scale = match operation {
        PlainOperation::Add => a.tag,
        PlainOperation::Multiply => 1,
    };
    let t = ctx.plain_modulus();
    let lifted = plains
        .iter()
        .map(|plain| {
            plain.check(ctx.plain_space())?;
            Ok(plain.coefficients().iter().map(|&m| t.center(t.mul(m, scale))).collect::<Vec<i64>>())
        })
        .collect::<Result<Vec<_>>>()?;
    let refs: Vec<&[i64]> = lifted.iter().map(|p| p.as_slice()).collect();
    let mut buffer = backend.upload(PolyBatch::from_signed(ctx.level_basis(a.level)?, &refs)?)?;
    backend.ntt(&mut buffer)?;
    Ok((buffer, a.tag))
}

impl<B: Backend> Evaluator<'_, B, BgvContext> {
    /// Drops the last prime: divides the ciphertexts by it (with the BGV correction), which
    /// shrinks the noise by the same factor. Fails at level 0.
    pub fn mod_switch_to_next(&self, a: &CiphertextBatch<B, BgvContext>) -> Result<CiphertextBatch<B, BgvContext>> {
        self.check_batch(a)?;
        if a.level == 0 {
            return Err(SchemeError::LevelExhausted);
        }
        let t = *self.ctx.plain_modulus();
        let dropped = self.ctx.level_basis(a.level)?.modulus(a.level).value();
        let parts =
            a.parts.iter().map(|p| self.backend.mod_down_last(p, Some(t))).collect::<pimhe_exec::Result<Vec<_>>>()?;
        // The message is now multiplied by q^{-1} mod t; track it instead of paying noise for it.
        let correction = t.mul(a.tag, t.inv(dropped % t.value())?);
        Ok(a.derive(parts, a.level - 1, correction))
    }

    /// Switches down to `level` (no-op when already there).
    pub fn mod_switch_to(
        &self,
        a: &CiphertextBatch<B, BgvContext>,
        level: usize,
    ) -> Result<CiphertextBatch<B, BgvContext>> {
        if level > a.level {
            return Err(SchemeError::LevelMismatch { left: a.level, right: level });
        }
        let mut current = a.derive(self.copy_parts(a)?, a.level, a.tag);
        while current.level > level {
            current = self.mod_switch_to_next(&current)?;
        }
        Ok(current)
    }
}
