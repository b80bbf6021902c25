//! BFV's own steps on the shared [`Evaluator`]: BEHZ's product and the plaintext operands; and
//! round(q m / t), the message term of encryptions and plaintext additions.

use pimhe_exec::Backend;
use pimhe_ring::PolyBatch;

use crate::bfv::context::BfvContext;
use crate::encoder::{PlainContext, Plaintext};
use crate::error::Result;
use crate::rlwe::{CiphertextBatch, Evaluator, PlainOperation};

/// Slot-wise `a * b` by BEHZ's Algorithm 2 ([`Backend::behz_multiply`]): both operands extended
/// to Bsk, the tensor product in q and in Bsk, scaled by t/q (fast floor) and brought back to q
/// (Shenoy-Kumaresan). A square (the same batch twice) extends its operand once and takes three
/// products per tensor ([`Backend::behz_square`]).
pub(crate) fn multiply<B: Backend>(
    evaluator: &Evaluator<'_, B, BfvContext>,
    a: &CiphertextBatch<B, BfvContext>,
    b: &CiphertextBatch<B, BfvContext>,
) -> Result<CiphertextBatch<B, BfvContext>> {
    let (backend, plan) = (evaluator.backend, evaluator.ctx.behz().plan());
    let a_parts = [&a.parts[0], &a.parts[1]];
    let parts = if std::ptr::eq(a, b) {
        backend.behz_square(plan, a_parts)?
    } else {
        backend.behz_multiply(plan, a_parts, [&b.parts[0], &b.parts[1]])?
    };
    Ok(a.derive(parts.into(), a.level, ()))
}

/// round(q m / t) for each plaintext, over q in NTT form, after checking each plaintext
/// belongs to `ctx`.
pub(crate) fn upload_scaled<B: Backend>(backend: &B, ctx: &BfvContext, plains: &[Plaintext]) -> Result<B::Buffer> {
    for plain in plains {
        plain.check(ctx.plain_space())?;
    }
    let coefficients: Vec<&[u32]> = plains.iter().map(|p| p.coefficients()).collect();
    ctx.behz().upload_scaled(backend, &coefficients)
}

/// The plaintexts (one, or one per ciphertext, each checked) over q in NTT form on the device:
/// round(q m / t) for an addition, where the message sits in the top bits of q; m lifted to
/// (-t/2, t/2] for a product, which then holds floor(q/t) m m' plus the noise times m' (about
/// N t / 2 larger). Without a modulus chain every BFV ciphertext is at the top level.
pub(crate) fn plain_operand<B: Backend>(
    ctx: &BfvContext,
    backend: &B,
    plains: &[Plaintext],
    operation: PlainOperation,
) -> Result<(B::Buffer, ())> {
    let buffer = match operation {
        PlainOperation::Add => upload_scaled(backend, ctx, plains)?,
        PlainOperation::Multiply => {
            let space = ctx.plain_space();
            let lifted = plains
                .iter()
                .map(|plain| {
                    plain.check(space)?;
                    Ok(plain.centered(space))
                })
                .collect::<Result<Vec<_>>>()?;
            let refs: Vec<&[i64]> = lifted.iter().map(|p| p.as_slice()).collect();
            let mut buffer = backend.upload(PolyBatch::from_signed(ctx.ciphertext_basis(), &refs)?)?;
            backend.ntt(&mut buffer)?;
            buffer
        }
    };
    Ok((buffer, ()))
}
