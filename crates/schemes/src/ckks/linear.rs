//! Linear transforms of the slot vector: y = M x for an n x n complex matrix M on ciphertexts
//! packing n slots, by the diagonal method (Halevi and Shoup) in baby-step giant-step form with
//! hoisted baby steps, as Lattigo and OpenFHE evaluate them.
//!
//! With diag_k[i] = M[i][(i + k) mod n], y = sum_k diag_k (.) rot(x, k). Writing k = n1 j + i
//! (baby step i < n1, giant step j),
//!
//! y = sum_j rot( sum_i rot(diag_{n1 j + i}, -n1 j) (.) rot(x, i), n1 j ),
//!
//! so the n1 - 1 baby rotations of x share one decomposition (hoisting), the pre-rotated
//! diagonals are plaintexts, and only the giant steps rotate sums: about 2 sqrt(d) rotations
//! for d non-zero diagonals instead of d. The rotations are also double hoisted
//! ([`crate::rlwe::lazy`]): the baby steps' key switches stay over the extended basis (the
//! diagonals are encoded over it too), each giant step divides only its sum's c1 by P before
//! rotating it, and the transform ends with one division per component: g + 2 ModDowns for g
//! giant steps instead of two per rotation. The diagonals are encoded at the scale of the primes
//! the following rescaling drops, so the result comes back at x's scale, one level lower.

use std::collections::BTreeMap;

use num_complex::Complex64;
use pimhe_exec::Backend;

use crate::ckks::context::{CkksContext, CkksTag};
use crate::ckks::plaintext::{from_coefficients, upload_plaintexts};
use crate::error::{Result, SchemeError};
use crate::rlwe::lazy::{LazyCiphertext, LazyView};
use crate::rlwe::{CiphertextBatch, Evaluator};

/// An n x n complex matrix given by its non-zero diagonals, n a power of two (the slot count of
/// the ciphertexts it applies to).
///
/// ```
/// use num_complex::Complex64;
/// use pimhe_schemes::ckks::linear::LinearTransform;
/// // The cyclic shift y_i = x_{i+1}: one diagonal.
/// let n = 4;
/// let mut m = vec![vec![Complex64::new(0.0, 0.0); n]; n];
/// (0..n).for_each(|i| m[i][(i + 1) % n] = Complex64::new(1.0, 0.0));
/// let shift = LinearTransform::from_matrix(&m).unwrap();
/// assert_eq!(shift.diagonal_count(), 1);
/// let x: Vec<Complex64> = (0..4).map(|i| Complex64::new(i as f64, 0.0)).collect();
/// assert_eq!(shift.apply_plain(&x)[0], Complex64::new(1.0, 0.0));
/// ```
#[derive(Debug, Clone)]
pub struct LinearTransform {
    slots: usize,
    diagonals: BTreeMap<usize, Vec<Complex64>>,
    baby_steps: usize,
}

impl LinearTransform {
    /// The transform of a square matrix (rows of equal length n, a power of two); all-zero
    /// diagonals are left out.
    pub fn from_matrix(matrix: &[Vec<Complex64>]) -> Result<Self> {
        let n = matrix.len();
        if let Some(row) = matrix.iter().position(|r| r.len() != n) {
            return Err(SchemeError::InvalidParameters(format!(
                "row {row} of the matrix has {} entries; a linear transform needs a square {n} x {n} matrix",
                matrix[row].len()
            )));
        }
        let diagonals = (0..n)
            .map(|k| (k, (0..n).map(|i| matrix[i][(i + k) % n]).collect::<Vec<_>>()))
            .filter(|(_, d)| d.iter().any(|z| z.norm_sqr() != 0.0))
            .collect();
        Self::from_diagonals(n, diagonals)
    }

    /// The transform given by its diagonals: `diagonals[k][i]` = M[i][(i + k) mod n] for the
    /// non-zero diagonals k < n.
    pub fn from_diagonals(slots: usize, diagonals: BTreeMap<usize, Vec<Complex64>>) -> Result<Self> {
        if !slots.is_power_of_two() {
            return Err(SchemeError::InvalidParameters(format!(
                "a linear transform acts on a power-of-two slot count; got {slots}"
            )));
        }
        for (&k, diagonal) in &diagonals {
            if k >= slots || diagonal.len() != slots {
                return Err(SchemeError::InvalidParameters(format!(
                    "diagonal {k} has {} entries; diagonals are indexed 0..{slots} and hold {slots} entries",
                    diagonal.len()
                )));
            }
            if let Some(i) = diagonal.iter().position(|z| !z.re.is_finite() || !z.im.is_finite()) {
                return Err(SchemeError::InvalidParameters(format!("diagonal {k} entry {i} is not finite")));
            }
        }
        let baby_steps = fewest_rotations(slots, diagonals.keys().copied());
        Ok(Self { slots, diagonals, baby_steps })
    }

    /// The slot count n.
    pub fn slots(&self) -> usize {
        self.slots
    }

    /// The non-zero diagonals by index: `diagonals()[&k][i]` = M[i][(i + k) mod n].
    pub(crate) fn diagonals(&self) -> &BTreeMap<usize, Vec<Complex64>> {
        &self.diagonals
    }

    /// Number of non-zero diagonals.
    pub fn diagonal_count(&self) -> usize {
        self.diagonals.len()
    }

    /// The rotation steps whose Galois keys the evaluation needs: the baby steps 1..n1 and the
    /// giant steps n1 j that occur.
    pub fn rotations(&self) -> Vec<i64> {
        let n1 = self.baby_steps;
        let mut steps: Vec<i64> = Vec::new();
        for &k in self.diagonals.keys() {
            for step in [k % n1, k - k % n1] {
                if step != 0 && !steps.contains(&(step as i64)) {
                    steps.push(step as i64);
                }
            }
        }
        steps.sort_unstable();
        steps
    }

    /// y = M x on plaintext values: the reference the encrypted evaluation is tested against.
    pub fn apply_plain(&self, x: &[Complex64]) -> Vec<Complex64> {
        let n = self.slots;
        (0..n)
            .map(|i| self.diagonals.iter().map(|(&k, d)| d[i] * x.get((i + k) % n).copied().unwrap_or_default()).sum())
            .collect()
    }
}

/// The baby-step count n1 (a power of two up to n) that needs the fewest rotations for these
/// diagonals: diagonal k is baby step k mod n1 of giant step k - k mod n1, and each distinct
/// non-zero baby and giant step is one rotation. For the n diagonals of a dense matrix that is
/// n1 about sqrt(n); for the strided diagonals of a factorized DFT stage group (multiples of s
/// from -m s to m s, wrapped modulo n) about s sqrt(m), where a rule based on the largest index
/// would pick about sqrt(n) and rotate by every step.
fn fewest_rotations(slots: usize, diagonals: impl Iterator<Item = usize> + Clone) -> usize {
    let rotations = |n1: usize| {
        let baby: std::collections::BTreeSet<usize> = diagonals.clone().map(|k| k % n1).filter(|&i| i != 0).collect();
        let giant: std::collections::BTreeSet<usize> =
            diagonals.clone().map(|k| k - k % n1).filter(|&j| j != 0).collect();
        baby.len() + giant.len()
    };
    // Ties go to the larger n1: fewer giant steps, each of which costs a full rotation while
    // the baby steps share one hoisted decomposition.
    (0..=slots.trailing_zeros()).map(|b| 1usize << b).rev().min_by_key(|&n1| rotations(n1)).unwrap_or(1)
}

/// A linear transform's pre-rotated diagonals, encoded and resident on a backend for one level:
/// made once, applied to many ciphertexts ([`Evaluator::apply_linear_transform`]).
pub struct PreparedLinearTransform<B: Backend> {
    level: usize,
    slots: usize,
    baby_steps: usize,
    /// The scale the diagonals are encoded at: the product of the primes the rescaling drops.
    scale: f64,
    /// Giant step j -> the (baby step i, plaintext diagonal) pairs of its inner sum; the
    /// diagonals over the level's primes and the special primes when the transform rotates
    /// (they multiply the lazy key switches' sums), over the level's alone otherwise.
    giant: BTreeMap<usize, Vec<(usize, B::Buffer)>>,
}

impl<B: Backend> PreparedLinearTransform<B> {
    /// The slot count n it acts on.
    pub fn slots(&self) -> usize {
        self.slots
    }
}

/// rot(v, r): slot i gets v[(i + r) mod n].
fn rotate_values(v: &[Complex64], r: usize) -> Vec<Complex64> {
    let n = v.len();
    (0..n).map(|i| v[(i + r) % n]).collect()
}

impl<B: Backend> Evaluator<'_, B, CkksContext> {
    /// Encodes the transform's diagonals for ciphertexts at `level`, on this evaluator's backend,
    /// at the scale of the primes the following rescaling drops.
    pub fn prepare_linear_transform(
        &self,
        transform: &LinearTransform,
        level: usize,
    ) -> Result<PreparedLinearTransform<B>> {
        let scale = self.dropped_primes(level)?.iter().map(|&q| f64::from(q)).product::<f64>();
        let level_basis = self.ctx.level_basis(level)?;
        let basis = match transform.rotations().is_empty() {
            true => level_basis,
            false => self.key_switch_basis()?.extended(level_basis)?,
        };
        let (n, n1) = (transform.slots, transform.baby_steps);
        let encoder = self.ctx.encoder();
        let mut giant: BTreeMap<usize, Vec<(usize, B::Buffer)>> = BTreeMap::new();
        for (&k, diagonal) in &transform.diagonals {
            let (i, j) = (k % n1, k / n1);
            // rot(diag_k, -n1 j), so that the giant rotation by n1 j puts it back.
            let rotated = rotate_values(diagonal, (n - (n1 * j) % n) % n);
            let coefficients = encoder.encode(&rotated, n, scale)?;
            let plain = from_coefficients(coefficients, scale, n);
            let buffer = upload_plaintexts(self.backend, &self.ctx, &[plain], basis)?;
            giant.entry(j).or_default().push((i, buffer));
        }
        Ok(PreparedLinearTransform { level, slots: n, baby_steps: n1, scale, giant })
    }

    /// y = M x for every ciphertext of the batch, one level consumed: the baby-step rotations
    /// double hoisted, the products and sums of each giant step accumulated in place over the
    /// extended basis, one rotation per giant step, one ModDown per component and the
    /// rescaling at the end.
    pub fn apply_linear_transform(
        &self,
        a: &CiphertextBatch<B, CkksContext>,
        transform: &PreparedLinearTransform<B>,
    ) -> Result<CiphertextBatch<B, CkksContext>> {
        self.check_batch(a)?;
        if a.level != transform.level || a.tag.slots != transform.slots {
            return Err(SchemeError::InvalidParameters(format!(
                "the transform was prepared for level {} and {} slots; the ciphertexts are at level {} with {} slots",
                transform.level, transform.slots, a.level, a.tag.slots
            )));
        }
        if a.size() != 2 {
            return Err(SchemeError::WrongSize { operation: "linear transform", expected: 2, found: a.size() });
        }
        let tag = CkksTag { scale: a.tag.scale * transform.scale, ..a.tag };
        self.ctx.check_scale(tag.scale, a.level, "the transform's products")?;
        let baby_needed: Vec<usize> = (1..transform.baby_steps)
            .filter(|&i| transform.giant.values().any(|terms| terms.iter().any(|&(b, _)| b == i)))
            .collect();
        let elements: Vec<usize> = baby_needed.iter().map(|&i| self.ctx.rotation_element(i as i64)).collect();
        let rotated = self.automorphisms_lazy(a, &elements)?;
        let baby = |i: usize| match i {
            0 => LazyView::of(a),
            _ => {
                rotated[baby_needed.iter().position(|&b| b == i).expect("every baby step of a term was rotated")].view()
            }
        };
        if transform.giant.is_empty() {
            return Err(SchemeError::InvalidParameters(
                "the transform has no non-zero diagonal (the zero matrix)".into(),
            ));
        }
        let mut sum = LazyCiphertext::zero();
        for (&j, terms) in &transform.giant {
            let mut inner = LazyCiphertext::zero();
            for (i, diagonal) in terms {
                self.mac_lazy(&mut inner, &baby(*i), diagonal)?;
            }
            match j {
                0 => self.add_lazy(&mut sum, inner)?,
                _ => self.automorphism_lazy_into(
                    &mut sum,
                    inner,
                    self.ctx.rotation_element((transform.baby_steps * j) as i64),
                )?,
            }
        }
        let result = a.derive(self.finish_lazy(sum)?, a.level, tag);
        self.rescale(&result)
    }

    /// [`Evaluator::prepare_linear_transform`] and [`Evaluator::apply_linear_transform`] in one.
    pub fn linear_transform(
        &self,
        a: &CiphertextBatch<B, CkksContext>,
        transform: &LinearTransform,
    ) -> Result<CiphertextBatch<B, CkksContext>> {
        self.apply_linear_transform(a, &self.prepare_linear_transform(transform, a.level)?)
    }
}
