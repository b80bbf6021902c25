//! CoeffToSlot and SlotToCoeff: the encoder's special DFT and its inverse, factorized into a
//! level budget of sparse homomorphic linear transforms, and the exact multiplications by +-i
//! that separate and recombine real and imaginary parts.
//!
//! With n = N/2 slots, a plaintext polynomial with coefficients c_0 .. c_(N-1) has the slots
//! z = V u, u_k = c_k + i c_(k+n) (the encoder's decoding map, in pimhe's slot order). The
//! encoder computes V as a bit-reversal permutation followed by log2(n) radix-2 butterfly
//! stages ([`CkksEncoder::stage_twiddles`] gives each stage's roots), and V^-1 as the inverse
//! stages followed by the bit reversal. In the slots, a butterfly stage of half-width h is a
//! matrix with three diagonals (0, h and -h); a product of m consecutive stages has at most
//! 2^(m+1) - 1 diagonals, all multiples of the smallest h (the fftIter factorization of Han and
//! Ki, and Lattigo's and OpenFHE's level budget). Each group of stages is one
//! [`LinearTransform`], one level, evaluated with few rotations (BSGS over its strided
//! diagonals).
//!
//! The bit reversal itself is never evaluated: CoeffToSlot stops before it, so its slot k holds
//! u_(br(k)), EvalMod acts slot by slot, and SlotToCoeff starts after it. The permutation cancels
//! between the two transforms (as in Lattigo and OpenFHE).
//!
//! Sparse packing (n < N/2 slots, an n-slot ciphertext's slot vector repeating with period n
//! when read as N/2 slots) packs the real and imaginary parts into one ciphertext of 2n slots,
//! so that EvalMod runs once, not twice (as in Lattigo): CoeffToSlot's last transform is lifted
//! to 2n slots as [[M, 0], [0, -i M]], giving [M x, -i M x] on the periodic input [x, x], whose
//! sum with its conjugate is [2 Re M x, 2 Im M x]; SlotToCoeff's first transform is lifted as
//! [[M, i M], [M, i M]], taking [a, b] to [M (a + i b), M (a + i b)], an n-periodic vector again
//! ([`lift`]). Neither costs a level or more than the lifted transform's few extra diagonals.
//!
//! The constant factors (CoeffToSlot's Delta / (2 K q0), SlotToCoeff's q0 / (2 pi S)) are spread
//! evenly over the groups, and the inverse stages carry their 1/2 each: every group's entries
//! stay near 1, where the diagonals' encoding error (absolute, 1 / scale) matters least.

use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::Arc;

use num_complex::Complex64;
use pimhe_exec::Backend;

use crate::ckks::context::CkksContext;
use crate::ckks::encoder::CkksEncoder;
use crate::ckks::linear::LinearTransform;
use crate::ckks::plaintext::{from_coefficients, upload_plaintexts};
use crate::error::{Result, SchemeError};
use crate::rlwe::{CiphertextBatch, Evaluator};

/// A matrix by its non-zero diagonals: `d[k][i]` = M[i][(i + k) mod n].
type Diagonals = BTreeMap<usize, Vec<Complex64>>;

/// The butterfly stage of half-width `h` on n slots as diagonals. Forward (V's stages, SlotToCoeff):
/// (a, b) -> (a + w b, a - w b). Inverse (V^-1's, CoeffToSlot): (a, b) -> ((a + b) / 2,
/// (a - b) conj(w) / 2), the 1/n of V^-1 spread as 1/2 per stage. `a` sits at position j < h of
/// a block of 2h slots, `b` at j + h, w the stage's j-th root.
fn stage(encoder: &CkksEncoder, n: usize, h: usize, inverse: bool) -> Diagonals {
    let zero = Complex64::new(0.0, 0.0);
    let (mut main, mut up, mut down) = (vec![zero; n], vec![zero; n], vec![zero; n]);
    let roots = encoder.stage_twiddles(h);
    for i in 0..n {
        let j = i % (2 * h);
        if j < h {
            // Output a: reads slots i (a) and i + h (b).
            if inverse {
                (main[i], up[i]) = (Complex64::new(0.5, 0.0), Complex64::new(0.5, 0.0));
            } else {
                (main[i], up[i]) = (Complex64::new(1.0, 0.0), roots[j]);
            }
        } else {
            // Output b: reads slots i - h (a) and i (b).
            let w = roots[j - h];
            if inverse {
                (down[i], main[i]) = (w.conj() * 0.5, -w.conj() * 0.5);
            } else {
                (down[i], main[i]) = (Complex64::new(1.0, 0.0), -w);
            }
        }
    }
    let mut diagonals = Diagonals::new();
    for (k, d) in [(0, main), (h, up), (n - h, down)] {
        add_diagonal(&mut diagonals, k, &d);
    }
    diagonals
}

fn add_diagonal(diagonals: &mut Diagonals, k: usize, d: &[Complex64]) {
    let entry = diagonals.entry(k).or_insert_with(|| vec![Complex64::new(0.0, 0.0); d.len()]);
    entry.iter_mut().zip(d).for_each(|(e, v)| *e += v);
}

/// The diagonals of `then` x `first` (first applied first): diagonal p of `then` and q of
/// `first` add d_p[i] d_q[i + p] to diagonal p + q.
fn compose(first: &Diagonals, then: &Diagonals, n: usize) -> Diagonals {
    let mut product = Diagonals::new();
    for (&p, dp) in then {
        for (&q, dq) in first {
            let d: Vec<Complex64> = (0..n).map(|i| dp[i] * dq[(i + p) % n]).collect();
            add_diagonal(&mut product, (p + q) % n, &d);
        }
    }
    product.retain(|_, d| d.iter().any(|z| z.norm_sqr() != 0.0));
    product
}

/// The stages' indices 0..stages split into `levels` consecutive groups, the larger groups
/// first (their sizes differ by at most one; empty ones when there are more levels than
/// stages).
fn groups(stages: usize, levels: usize) -> Vec<Range<usize>> {
    let (size, extra) = (stages / levels, stages % levels);
    let mut start = 0;
    (0..levels)
        .map(|g| {
            let end = start + size + usize::from(g < extra);
            let range = start..end;
            start = end;
            range
        })
        .collect()
}

/// Checks a level budget: at least 1. A budget above log2(n) (a sparse packing of few slots
/// under a chain planned for more) spends its extra levels on the constant factor alone.
fn check_budget(levels: usize, what: &str) -> Result<()> {
    if levels == 0 {
        return Err(SchemeError::InvalidParameters(format!(
            "{what}'s level budget must be at least 1 (its butterfly stages merged into that many transforms, one \
             level each); got 0"
        )));
    }
    Ok(())
}

/// The stages' half-widths in the order they are applied, grouped into `levels` transforms,
/// each multiplied by factor^(1 / levels).
fn factorized(
    encoder: &CkksEncoder,
    slots: usize,
    factor: f64,
    levels: usize,
    inverse: bool,
) -> Result<Vec<LinearTransform>> {
    let stages = slots.trailing_zeros() as usize;
    // Forward: h = 1, 2, .., n/2; inverse: h = n/2, .., 1.
    let widths: Vec<usize> =
        if inverse { (0..stages).rev().map(|s| 1 << s).collect() } else { (0..stages).map(|s| 1 << s).collect() };
    let share = Complex64::new(factor.abs().powf(1.0 / levels as f64), 0.0);
    groups(stages.max(1), levels)
        .into_iter()
        .enumerate()
        .map(|(g, range)| {
            let mut matrix = Diagonals::from([(0, vec![share; slots])]);
            if g == 0 && factor < 0.0 {
                matrix.values_mut().for_each(|d| d.iter_mut().for_each(|z| *z = -*z));
            }
            for &h in widths.get(range).unwrap_or(&[]) {
                matrix = compose(&matrix, &stage(encoder, slots, h, inverse), slots);
            }
            LinearTransform::from_diagonals(slots, matrix)
        })
        .collect()
}

/// CoeffToSlot for `slots` slots over `levels` levels: transforms to apply in order, whose
/// product is `factor` V^-1 without the final bit reversal (slot k gets factor u_(br(k))).
/// `packed` (sparse packing): the last transform is lifted to 2 `slots` slots, so that slots
/// `slots..2 slots` get -i times slots `0..slots`.
pub(crate) fn coeff_to_slot(
    encoder: &CkksEncoder,
    slots: usize,
    factor: f64,
    levels: usize,
    packed: bool,
) -> Result<Vec<LinearTransform>> {
    check_budget(levels, "CoeffToSlot")?;
    let mut transforms = factorized(encoder, slots, factor, levels, true)?;
    if packed {
        let last = transforms.pop().expect("a level budget is at least 1");
        let (one, zero, minus_i) = (Complex64::new(1.0, 0.0), Complex64::new(0.0, 0.0), Complex64::new(0.0, -1.0));
        transforms.push(lift(&last, [[one, zero], [zero, minus_i]])?);
    }
    Ok(transforms)
}

/// SlotToCoeff for `slots` slots over `levels` levels: transforms to apply in order, whose
/// product is `factor` V without the initial bit reversal (it takes u in bit-reversed order,
/// as CoeffToSlot leaves it, to the slots z = V u). `packed` (sparse packing): the first
/// transform is lifted to 2 `slots` slots and takes [a, b] to a + i b before the rest.
pub(crate) fn slot_to_coeff(
    encoder: &CkksEncoder,
    slots: usize,
    factor: f64,
    levels: usize,
    packed: bool,
) -> Result<Vec<LinearTransform>> {
    check_budget(levels, "SlotToCoeff")?;
    let mut transforms = factorized(encoder, slots, factor, levels, false)?;
    if packed {
        let (one, i) = (Complex64::new(1.0, 0.0), Complex64::new(0.0, 1.0));
        transforms[0] = lift(&transforms[0], [[one, i], [one, i]])?;
    }
    Ok(transforms)
}

/// The transform on 2n slots of the block matrix [[b00 M, b01 M], [b10 M, b11 M]] for an
/// n-slot transform M. Its diagonal k at row i reads column j = (i + k) mod 2n, which lies in
/// block (i / n, j / n) and within it on M's diagonal k mod n at row i mod n.
fn lift(transform: &LinearTransform, blocks: [[Complex64; 2]; 2]) -> Result<LinearTransform> {
    let n = transform.slots();
    let mut lifted = Diagonals::new();
    for (&d, diagonal) in transform.diagonals() {
        for k in [d, d + n] {
            let entries: Vec<Complex64> =
                (0..2 * n).map(|i| blocks[i / n][((i + k) % (2 * n)) / n] * diagonal[i % n]).collect();
            add_diagonal(&mut lifted, k, &entries);
        }
    }
    lifted.retain(|_, d| d.iter().any(|z| z.norm_sqr() != 0.0));
    LinearTransform::from_diagonals(2 * n, lifted)
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
    use pimhe_math::bit_reverse;

    fn apply(transforms: &[LinearTransform], x: &[Complex64]) -> Vec<Complex64> {
        transforms.iter().fold(x.to_vec(), |v, t| t.apply_plain(&v))
    }

    fn bit_reversed(x: &[Complex64]) -> Vec<Complex64> {
        let bits = x.len().trailing_zeros();
        (0..x.len()).map(|k| x[bit_reverse(k, bits)]).collect()
    }

    /// For every level budget (7, above the 6 stages, spends one level on the factor alone),
    /// the factorized transforms applied in the clear are the encoder's maps up to the bit
    /// reversal they leave out: CoeffToSlot of the decoded slots
    /// is u in bit-reversed order, SlotToCoeff of that is the decoded slots again; the factors
    /// multiply through.
    #[test]
    fn every_level_budget_is_the_encoders_maps() {
        let encoder = CkksEncoder::new(128).unwrap();
        let n = 64;
        let coefficients: Vec<f64> = (0..128).map(|i| ((i * 37 % 11) as f64 - 5.0) / 7.0).collect();
        let u: Vec<Complex64> = (0..n).map(|k| Complex64::new(coefficients[k], coefficients[k + n])).collect();
        let slots = encoder.decode(&coefficients, n, 1.0).unwrap();
        for levels in 1..=7 {
            let to_slots = coeff_to_slot(&encoder, n, -3.0, levels, false).unwrap();
            assert_eq!(to_slots.len(), levels);
            let back = apply(&to_slots, &slots);
            for (a, b) in back.iter().zip(bit_reversed(&u)) {
                assert!((a - b * -3.0).norm() < 1e-12, "{levels} levels: {a} vs {b}");
            }
            let to_coeffs = slot_to_coeff(&encoder, n, 0.5, levels, false).unwrap();
            let again = apply(&to_coeffs, &bit_reversed(&u));
            for (a, b) in again.iter().zip(&slots) {
                assert!((a - b * 0.5).norm() < 1e-12, "{levels} levels: {a} vs {b}");
            }
        }
        assert!(slot_to_coeff(&encoder, n, 1.0, 0, false).is_err());
    }

    /// Sparse packing: on an n-slot vector read as 2n slots (repeated), CoeffToSlot puts u in
    /// bit-reversed order in the first n slots and -i times it in the next n, so that the sum
    /// with the conjugate is [2 Re, 2 Im]; SlotToCoeff takes [Re, Im] back to the slots, twice.
    #[test]
    fn the_packed_transforms_separate_and_recombine_real_and_imaginary_parts() {
        let encoder = CkksEncoder::new(256).unwrap();
        let n = 16;
        let coefficients: Vec<f64> =
            (0..256).map(|i| if i % 8 == 0 { ((i * 29 % 13) as f64 - 6.0) / 5.0 } else { 0.0 }).collect();
        let slots = encoder.decode(&coefficients, n, 1.0).unwrap();
        let u: Vec<Complex64> =
            (0..n).map(|k| Complex64::new(coefficients[8 * k], coefficients[8 * k + 128])).collect();
        let u = bit_reversed(&u);
        for levels in 1..=4 {
            let to_slots = coeff_to_slot(&encoder, n, 2.0, levels, true).unwrap();
            let (last, first) = to_slots.split_last().unwrap();
            assert_eq!((last.slots(), first.iter().all(|t| t.slots() == n)), (2 * n, true));
            let z = apply(first, &slots);
            let y = last.apply_plain(&[z.clone(), z].concat());
            for k in 0..n {
                assert!((y[k] + y[k].conj() - Complex64::new(4.0 * u[k].re, 0.0)).norm() < 1e-12, "{levels}: {k}");
                assert!((y[k + n] + y[k + n].conj() - Complex64::new(4.0 * u[k].im, 0.0)).norm() < 1e-12);
            }
            let to_coeffs = slot_to_coeff(&encoder, n, 0.5, levels, true).unwrap();
            assert_eq!(to_coeffs[0].slots(), 2 * n);
            let parts: Vec<Complex64> = u
                .iter()
                .map(|z| Complex64::new(z.re, 0.0))
                .chain(u.iter().map(|z| Complex64::new(z.im, 0.0)))
                .collect();
            let first = to_coeffs[0].apply_plain(&parts);
            assert!((0..n).all(|k| (first[k] - first[k + n]).norm() < 1e-12), "not n-periodic");
            let again = apply(&to_coeffs[1..], &first[..n]);
            for (a, b) in again.iter().zip(&slots) {
                assert!((a - b * 0.5).norm() < 1e-12, "{levels} levels: {a} vs {b}");
            }
        }
    }

    /// A group of m stages has at most 2^(m+1) - 1 diagonals: what makes the factorization
    /// cheap (a dense transform has n).
    #[test]
    fn groups_are_sparse() {
        let encoder = CkksEncoder::new(1024).unwrap();
        for t in coeff_to_slot(&encoder, 512, 1.0, 3, false).unwrap() {
            assert!(t.diagonal_count() <= 15, "{}", t.diagonal_count());
        }
        assert_eq!(groups(9, 4), vec![0..3, 3..5, 5..7, 7..9]);
    }
}
