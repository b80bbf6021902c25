//! The ring automorphisms X -> X^k (k odd), the Galois maps behind slot rotations.

use pimhe_math::bit_reverse;

use crate::batch::PolyBatch;
use crate::error::{Result, RingError};
use crate::representation::Representation;

/// For each output position, where its value comes from and whether it is negated.
struct Permutation {
    source: Vec<usize>,
    negate: Vec<bool>,
}

fn check_element(k: usize, n: usize) -> Result<()> {
    if k % 2 == 1 {
        Ok(())
    } else {
        Err(RingError::InvalidGaloisElement { k, n })
    }
}

/// Coefficient form: X^i maps to X^(ik mod 2N), and X^N = -1 folds the upper half back negated.
fn coefficient_permutation(k: usize, n: usize) -> Permutation {
    let mut source = vec![0; n];
    let mut negate = vec![false; n];
    for i in 0..n {
        let target = i * k % (2 * n);
        let (position, flip) = if target >= n { (target - n, true) } else { (target, false) };
        source[position] = i;
        negate[position] = flip;
    }
    Permutation { source, negate }
}

/// NTT form: slot j holds a(psi^(2 bitrev(j) + 1)); sigma_k(a) there equals a at the k-th
/// power of that root, which is another slot. A pure permutation, no negations.
fn ntt_permutation(k: usize, n: usize) -> Permutation {
    let log_n = n.trailing_zeros();
    let source = (0..n)
        .map(|j| {
            let exponent = (2 * bit_reverse(j, log_n) + 1) * k % (2 * n);
            bit_reverse((exponent - 1) / 2, log_n)
        })
        .collect();
    Permutation { source, negate: vec![false; n] }
}

impl PolyBatch {
    /// Applies X -> X^k to every polynomial, in whichever representation the batch is in.
    ///
    /// ```
    /// use pimhe_ring::{PolyBatch, RingBasis};
    /// let basis = RingBasis::new(8, &[17]).unwrap();
    /// let x = [0, 1, 0, 0, 0, 0, 0, 0]; // X
    /// let image = PolyBatch::from_signed(&basis, &[&x]).unwrap().automorphism(5).unwrap();
    /// assert_eq!(image.poly_limb(0, 0), &[0, 0, 0, 0, 0, 1, 0, 0]); // X^5
    /// let cubed = PolyBatch::from_signed(&basis, &[&x]).unwrap().automorphism(11).unwrap();
    /// assert_eq!(cubed.poly_limb(0, 0)[3], 16); // X^11 = -X^3
    /// ```
    pub fn automorphism(&self, k: usize) -> Result<PolyBatch> {
        let n = self.degree();
        check_element(k, n)?;
        let k = k % (2 * n);
        let permutation = match self.representation() {
            Representation::Coefficient => coefficient_permutation(k, n),
            Representation::Ntt => ntt_permutation(k, n),
        };
        let mut out = PolyBatch::zeros(self.basis(), self.count(), self.representation());
        for limb in 0..self.basis().len() {
            let q = *self.basis().modulus(limb);
            for poly in 0..self.count() {
                let input = self.poly_limb(limb, poly);
                let output = out.poly_limb_mut(limb, poly);
                for (position, dst) in output.iter_mut().enumerate() {
                    let value = input[permutation.source[position]];
                    // Select the negation by mask: the permutation is public, but this keeps
                    // the loop free of data-dependent branches.
                    let flip = (permutation.negate[position] as u32).wrapping_neg();
                    *dst = (q.neg(value) & flip) | (value & !flip);
                }
            }
        }
        Ok(out)
    }
}
