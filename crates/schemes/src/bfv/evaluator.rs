//! BFV's own homomorphic operations on the shared [`Evaluator`]: plaintext operands and BEHZ's
//! product; and round(q m / t), the message term of encryptions and plaintext additions.

use pimhe_exec::Backend;
use pimhe_ring::PolyBatch;

use crate::bfv::context::BfvContext;
use crate::encoder::{PlainContext, Plaintext};
use crate::error::Result;
use crate::rlwe::components::check_plain_count;
use crate::rlwe::{CiphertextBatch, Evaluator};

/// Slot-wise `a * b` by BEHZ's Algorithm 2: both operands extended to Bsk, the tensor product in
/// q and in Bsk, scaled by t/q (fast floor) and brought back to q (Shenoy-Kumaresan).
pub(crate) fn multiply<B: Backend>(
    evaluator: &Evaluator<'_, B, BfvContext>,
    a: &CiphertextBatch<B, BfvContext>,
    b: &CiphertextBatch<B, BfvContext>,
) -> Result<CiphertextBatch<B, BfvContext>> {
    let backend = evaluator.backend;
    let behz = evaluator.ctx.behz();
    let (a0, a1) = (behz.extend(backend, &a.parts[0])?, behz.extend(backend, &a.parts[1])?);
    // A square (the same batch twice) extends its operand once and takes three products.
    let (in_bsk, in_q) = if std::ptr::eq(a, b) {
        (backend.tensor_square(&a0, &a1)?, backend.tensor_square(&a.parts[0], &a.parts[1])?)
    } else {
        let (b0, b1) = (behz.extend(backend, &b.parts[0])?, behz.extend(backend, &b.parts[1])?);
        (backend.tensor(&a0, &a1, &b0, &b1)?, backend.tensor(&a.parts[0], &a.parts[1], &b.parts[0], &b.parts[1])?)
    };
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
    Ok(a.derive(parts, a.level, ()))
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

impl<B: Backend> Evaluator<'_, B, BfvContext> {
    /// Slot-wise `a + m`: round(q m / t) is added to component 0.
    pub fn add_plain(
        &self,
        a: &CiphertextBatch<B, BfvContext>,
        plains: &[Plaintext],
    ) -> Result<CiphertextBatch<B, BfvContext>> {
        self.check_batch(a)?;
        check_plain_count(a.count, plains.len())?;
        let plain = upload_scaled(self.backend, &self.ctx, plains)?;
        let mut parts = self.copy_parts(a)?;
        self.backend.add_assign(&mut parts[0], &plain)?;
        Ok(a.derive(parts, a.level, ()))
    }

    /// Slot-wise `a * m`: every component times m lifted to (-t/2, t/2] (the noise grows by
    /// about N t / 2).
    pub fn mul_plain(
        &self,
        a: &CiphertextBatch<B, BfvContext>,
        plains: &[Plaintext],
    ) -> Result<CiphertextBatch<B, BfvContext>> {
        self.check_batch(a)?;
        check_plain_count(a.count, plains.len())?;
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
        Ok(a.derive(parts, a.level, ()))
    }
}
