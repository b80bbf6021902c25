//! CoeffToSlot and SlotToCoeff: the encoder's special DFT and its inverse as homomorphic linear
//! transforms, and the exact multiplications by +-i that separate and recombine real and
//! imaginary parts.
//!
//! With n = N/2 slots, a plaintext polynomial with coefficients c_0 .. c_(N-1) has the slots
//! z = V u, u_k = c_k + i c_(k+n) (the encoder's decoding map, in pimhe's slot order). So
//! CoeffToSlot is the matrix V^-1 (slot k then holds u_k) and SlotToCoeff is V. Both matrices
//! are read column by column off the encoder's own maps
//! ([`CkksEncoder::slots_of_coefficients`], [`CkksEncoder::coefficients_of_slots`]) applied to
//! unit vectors, so they are right by construction, slot order included.
//!
//! This first version applies them as dense n x n transforms (n diagonals, BSGS with hoisted
//! baby steps: about 2 sqrt(n) rotations, one or two levels). The next step is the
//! level-budgeted factorization of V into log2(n) sparse butterfly stages merged into a few
//! levels (Lattigo's and OpenFHE's fftIter / levelBudget), each stage with 2-3 diagonals, and
//! double hoisting of the BSGS: fewer plaintext products and rotations, at the price of a few
//! more levels.

use std::sync::Arc;

use num_complex::Complex64;
use pimhe_exec::Backend;

use crate::ckks::context::CkksContext;
use crate::ckks::encoder::CkksEncoder;
use crate::ckks::linear::LinearTransform;
use crate::ckks::plaintext::{from_coefficients, upload_plaintexts};
use crate::error::Result;
use crate::rlwe::{CiphertextBatch, Evaluator};

/// The n x n matrix of `map` (a linear map on n complex values), `factor` times, column k
/// being the image of the k-th unit vector.
fn matrix_of(n: usize, factor: f64, map: impl Fn(&mut [Complex64])) -> Vec<Vec<Complex64>> {
    let mut matrix = vec![vec![Complex64::new(0.0, 0.0); n]; n];
    for k in 0..n {
        let mut column = vec![Complex64::new(0.0, 0.0); n];
        column[k] = Complex64::new(1.0, 0.0);
        map(&mut column);
        for (row, value) in column.into_iter().enumerate() {
            matrix[row][k] = value * factor;
        }
    }
    matrix
}

/// CoeffToSlot for `slots` slots: `factor` V^-1 (slot k gets factor u_k).
pub(crate) fn coeff_to_slot(encoder: &CkksEncoder, slots: usize, factor: f64) -> Result<LinearTransform> {
    LinearTransform::from_matrix(&matrix_of(slots, factor, |v| encoder.coefficients_of_slots(v)))
}

/// SlotToCoeff for `slots` slots: `factor` V (slot j gets factor sum_k V_jk u_k).
pub(crate) fn slot_to_coeff(encoder: &CkksEncoder, slots: usize, factor: f64) -> Result<LinearTransform> {
    LinearTransform::from_matrix(&matrix_of(slots, factor, |v| encoder.slots_of_coefficients(v)))
}

/// `a` times +i (`sign` = 1) or -i (`sign` = -1) in every slot, exactly and without a level:
/// the monomial X^(N/2) evaluates to i at every slot's root (zeta^(5^j N/2) = i^(5^j) = i, as
/// 5^j = 1 mod 4), so the product is a signed negacyclic shift of the coefficients; the scale
/// does not change.
pub(crate) fn times_i<B: Backend>(
    evaluator: &Evaluator<'_, B, CkksContext>,
    a: &CiphertextBatch<B, CkksContext>,
    sign: i128,
) -> Result<CiphertextBatch<B, CkksContext>> {
    let ctx: &Arc<CkksContext> = evaluator.context();
    let n = ctx.degree();
    let mut coefficients = vec![0i128; n];
    coefficients[n / 2] = sign;
    let monomial = from_coefficients(coefficients, 1.0, a.tag().slots);
    let backend = evaluator.backend();
    let buffer = upload_plaintexts(backend, ctx, &[monomial], ctx.level_basis(a.level())?)?;
    let parts = a.parts().iter().map(|p| backend.mul(p, &buffer)).collect::<pimhe_exec::Result<Vec<_>>>()?;
    Ok(a.derive(parts, a.level(), a.tag()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The matrices applied in the clear invert each other and match the encoder's decoding of
    /// a real polynomial: V (c_k + i c_(k+n)) is the decoded slot vector.
    #[test]
    fn the_matrices_are_the_encoders_maps() {
        let encoder = CkksEncoder::new(64).unwrap();
        let n = 32;
        let coefficients: Vec<f64> = (0..64).map(|i| ((i * 37 % 11) as f64 - 5.0) / 7.0).collect();
        let u: Vec<Complex64> = (0..n).map(|k| Complex64::new(coefficients[k], coefficients[k + n])).collect();
        let slots = slot_to_coeff(&encoder, n, 1.0).unwrap().apply_plain(&u);
        let decoded = encoder.decode(&coefficients, n, 1.0).unwrap();
        for (a, b) in slots.iter().zip(&decoded) {
            assert!((a - b).norm() < 1e-12, "{a} vs {b}");
        }
        let back = coeff_to_slot(&encoder, n, 1.0).unwrap().apply_plain(&slots);
        for (a, b) in back.iter().zip(&u) {
            assert!((a - b).norm() < 1e-12, "{a} vs {b}");
        }
    }
}
