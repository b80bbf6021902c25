//! The ring automorphisms X -> X^k (k odd), the Galois maps behind slot rotations.

use pimhe_math::simd::gather::BlockLocalIndices;
use pimhe_math::{bit_reverse, Isa, Modulus};

use crate::batch::PolyBatch;
use crate::error::{Result, RingError};
use crate::representation::Representation;

/// Marks an entry of [`GaloisPermutation`] whose value is negated (degrees stay far below 2^31).
const NEGATE: u32 = 1 << 31;

/// X -> X^k on the residues of one polynomial of degree N in one representation: for each output
/// position, where its value comes from and whether it is negated.
///
/// - Coefficient form: X^i maps to X^(ik mod 2N), and X^N = -1 folds the upper half back
///   negated, so the map is a permutation with negations.
/// - NTT form: slot j holds a(psi^(2 bitrev(j) + 1)); sigma_k(a) there equals a at the k-th power
///   of that root, which is another slot. A pure permutation, no negations.
///
/// It depends only on (N, k mod 2N, representation), so a caller applying many automorphisms can
/// build each once and keep it (the CPU backend of `pimhe-exec` does).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GaloisPermutation {
    /// Per output position: the source position, with [`NEGATE`] set when it is negated. Empty
    /// when `local` holds them.
    entries: Vec<u32>,
    /// Whether any entry negates (coefficient form).
    negates: bool,
    /// NTT form from N = 16 up: the entries as block-local gather indices, for the vector gather
    /// (bit reversal makes every aligned block of slots come from one aligned block).
    /// [`BlockLocalIndices::new`] checks that rather than trusting it.
    local: Option<BlockLocalIndices>,
}

impl GaloisPermutation {
    /// The permutation of X -> X^k at degree `n` (a power of two; it panics otherwise) in
    /// `representation`. An even k is refused; k is taken modulo 2N.
    pub fn new(n: usize, k: usize, representation: Representation) -> Result<Self> {
        assert!(n.is_power_of_two(), "ring degrees are powers of two, not {n}");
        if k.is_multiple_of(2) {
            return Err(RingError::InvalidGaloisElement { k, n });
        }
        // Products modulo 2N by masking (wrapping is harmless: 2N divides 2^64).
        let mask = 2 * n - 1;
        let k = k & mask;
        let mut entries = vec![0u32; n];
        match representation {
            Representation::Coefficient => {
                for i in 0..n {
                    let target = i.wrapping_mul(k) & mask;
                    let (position, flip) = if target >= n { (target - n, NEGATE) } else { (target, 0) };
                    entries[position] = i as u32 | flip;
                }
            }
            Representation::Ntt => {
                let log_n = n.trailing_zeros();
                for (j, entry) in entries.iter_mut().enumerate() {
                    let exponent = (2 * bit_reverse(j, log_n) + 1).wrapping_mul(k) & mask;
                    *entry = bit_reverse((exponent - 1) / 2, log_n) as u32;
                }
            }
        }
        let negates = representation == Representation::Coefficient;
        let local = if negates { None } else { BlockLocalIndices::new(&entries) };
        let entries = if local.is_some() { Vec::new() } else { entries };
        Ok(Self { entries, negates, local })
    }

    /// The ring degree N.
    pub fn degree(&self) -> usize {
        self.entries().len()
    }

    /// Per output position: the source position (and the negation flag).
    fn entries(&self) -> &[u32] {
        self.local.as_ref().map_or(&self.entries, BlockLocalIndices::as_slice)
    }

    /// `output := sigma_k(input)` for one polynomial's residues modulo `q`. Both slices hold N
    /// residues (it panics otherwise).
    pub fn apply(&self, q: &Modulus, output: &mut [u32], input: &[u32]) {
        let n = self.degree();
        assert!(input.len() == n && output.len() == n, "an automorphism of degree {n} needs N residues in and out");
        if self.negates {
            for (dst, &entry) in output.iter_mut().zip(&self.entries) {
                let value = input[(entry & !NEGATE) as usize];
                // Select the negation by mask: the permutation is public, but this keeps the
                // loop free of data-dependent branches.
                let flip = (entry >> 31).wrapping_neg();
                *dst = (q.neg(value) & flip) | (value & !flip);
            }
        } else if let Some(local) = &self.local {
            local.gather(Isa::active(), output, input);
        } else {
            for (dst, &entry) in output.iter_mut().zip(&self.entries) {
                *dst = input[entry as usize];
            }
        }
    }
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
        let permutation = GaloisPermutation::new(self.degree(), k, self.representation())?;
        let mut out = PolyBatch::zeros(self.basis(), self.count(), self.representation());
        for limb in 0..self.basis().len() {
            let q = *self.basis().modulus(limb);
            for poly in 0..self.count() {
                permutation.apply(&q, out.poly_limb_mut(limb, poly), self.poly_limb(limb, poly));
            }
        }
        Ok(out)
    }
}
