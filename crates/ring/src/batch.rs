//! A batch of RNS polynomials in the one limb-major layout of pimhe.

use std::sync::Arc;

use zeroize::Zeroize;

use pimhe_math::Modulus;

use crate::basis::RingBasis;
use crate::error::{Result, RingError};
use crate::recycle;
use crate::representation::Representation;

/// `count` polynomials of degree N over an RNS basis of L primes, stored limb-major: all
/// polynomials' residues modulo q_0 (polynomial 0, then 1, ...), then all modulo q_1, and so on.
/// Residue `c` of polynomial `k` at limb `l` is `data[(l * count + k) * N + c]`.
///
/// This is DRAMatic's "tuple of arrays of residues": the residues a device serving q_l needs
/// form one contiguous slice ([`PolyBatch::limb`]), so the same bytes feed a CPU loop, a DPU's
/// MRAM or a GPU without re-encoding. A single polynomial is a batch of one.
///
/// ```
/// use pimhe_ring::{PolyBatch, Representation, RingBasis};
/// let basis = RingBasis::new(16, &pimhe_math::ntt_primes(20, 16, 2, &[]).unwrap()).unwrap();
/// // Two polynomials: 1 + 2X and -X^15.
/// let mut a = vec![0i64; 16];
/// a[0] = 1;
/// a[1] = 2;
/// let mut b = vec![0i64; 16];
/// b[15] = -1;
/// let mut batch = PolyBatch::from_signed(&basis, &[&a, &b]).unwrap();
/// assert_eq!(batch.count(), 2);
/// let q0 = basis.modulus(0).value();
/// assert_eq!(batch.poly_limb(0, 1)[15], q0 - 1);
/// batch.to_ntt().unwrap();
/// assert!(batch.to_ntt().is_err()); // already in NTT form
/// batch.to_coefficient().unwrap();
/// assert_eq!(batch.poly_limb(1, 0)[1], 2);
/// ```
#[derive(PartialEq, Eq)]
pub struct PolyBatch {
    basis: Arc<RingBasis>,
    count: usize,
    representation: Representation,
    data: Vec<u32>,
}

impl std::fmt::Debug for PolyBatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PolyBatch")
            .field("basis", &self.basis)
            .field("count", &self.count)
            .field("representation", &self.representation)
            .finish_non_exhaustive()
    }
}

/// A batch's storage goes back to the [`recycle`] pool, for the next batch of its size.
impl Drop for PolyBatch {
    fn drop(&mut self) {
        recycle::give(std::mem::take(&mut self.data));
    }
}

impl Clone for PolyBatch {
    fn clone(&self) -> Self {
        let mut data = recycle::take(self.data.len());
        data.extend_from_slice(&self.data);
        Self { basis: self.basis.clone(), count: self.count, representation: self.representation, data }
    }
}

impl PolyBatch {
    /// `count` zero polynomials.
    pub fn zeros(basis: &Arc<RingBasis>, count: usize, representation: Representation) -> Self {
        let len = basis.len() * count * basis.degree();
        Self { basis: basis.clone(), count, representation, data: recycle::take_zeroed(len) }
    }

    /// Wraps limb-major residues, checking their number and that each is reduced.
    pub fn from_data(
        basis: &Arc<RingBasis>,
        count: usize,
        representation: Representation,
        data: Vec<u32>,
    ) -> Result<Self> {
        check_length(basis, count, &data)?;
        if let Some(unreduced) = first_unreduced(basis, count, &data) {
            return Err(unreduced);
        }
        Ok(Self { basis: basis.clone(), count, representation, data })
    }

    /// [`PolyBatch::from_data`] without the check that every residue is reduced (only the
    /// length is checked; debug builds check the residues too): for a backend whose modular
    /// kernels produced `data`, where the check would be a second pass over a batch just
    /// written.
    ///
    /// ```
    /// use pimhe_ring::{PolyBatch, Representation, RingBasis};
    /// let basis = RingBasis::new(16, &[97]).unwrap();
    /// let batch = PolyBatch::from_reduced_data(&basis, 1, Representation::Ntt, vec![5; 16]).unwrap();
    /// assert_eq!(batch.limb(0), &[5; 16]);
    /// assert!(PolyBatch::from_reduced_data(&basis, 2, Representation::Ntt, vec![5; 16]).is_err());
    /// ```
    pub fn from_reduced_data(
        basis: &Arc<RingBasis>,
        count: usize,
        representation: Representation,
        data: Vec<u32>,
    ) -> Result<Self> {
        check_length(basis, count, &data)?;
        debug_assert!(first_unreduced(basis, count, &data).is_none(), "from_reduced_data got an unreduced residue");
        Ok(Self { basis: basis.clone(), count, representation, data })
    }

    /// Polynomials given by signed integer coefficients (each slice of length N), reduced into
    /// every limb; the batch is in coefficient representation.
    pub fn from_signed(basis: &Arc<RingBasis>, polys: &[&[i64]]) -> Result<Self> {
        Self::reduced(basis, polys, |q, c| q.reduce_i64(c))
    }

    /// [`PolyBatch::from_signed`] for coefficients of magnitude at most `bound`, a public bound
    /// (a distribution's tail cut): when it lies below every prime, each residue is c or q + c,
    /// chosen by a mask in a loop the compiler vectorizes, instead of a 128-bit reduction per
    /// residue; otherwise this is [`PolyBatch::from_signed`]. A coefficient above `bound` is an
    /// error (checked on the largest magnitude, so the check takes the same time whatever the
    /// coefficients), never a wrong residue.
    ///
    /// ```
    /// use pimhe_ring::{PolyBatch, RingBasis};
    /// let basis = RingBasis::new(4, &[97, 193]).unwrap();
    /// let small = PolyBatch::from_bounded_signed(&basis, &[&[3, -2, 0, -20]], 20).unwrap();
    /// assert_eq!(small, PolyBatch::from_signed(&basis, &[&[3, -2, 0, -20]]).unwrap());
    /// assert!(PolyBatch::from_bounded_signed(&basis, &[&[3, -2, 0, -21]], 20).is_err());
    /// ```
    pub fn from_bounded_signed(basis: &Arc<RingBasis>, polys: &[&[i64]], bound: u64) -> Result<Self> {
        let smallest = basis.primes().into_iter().min().map_or(0, u64::from);
        if bound >= smallest {
            return Self::from_signed(basis, polys);
        }
        expect_degree(basis, polys)?;
        let largest = polys.iter().flat_map(|p| p.iter()).map(|c| c.unsigned_abs()).fold(0, u64::max);
        if largest > bound {
            return Err(RingError::AboveBound { bound });
        }
        // |c| < q: c itself, or q + c for a negative c (all ones in the mask).
        Self::reduced(basis, polys, |q, c| (c as u32).wrapping_add(q.value() & ((c >> 63) as u32)))
    }

    /// Polynomials of N signed coefficients each, every coefficient reduced into every limb by
    /// `reduce`; coefficient representation. The residues are appended in the limb-major order
    /// of the layout, so the buffer is written once (no zero-fill first).
    fn reduced(basis: &Arc<RingBasis>, polys: &[&[i64]], reduce: impl Fn(&Modulus, i64) -> u32) -> Result<Self> {
        expect_degree(basis, polys)?;
        let mut data = recycle::take(basis.len() * polys.len() * basis.degree());
        for limb in 0..basis.len() {
            let q = *basis.modulus(limb);
            for poly in polys {
                data.extend(poly.iter().map(|&c| reduce(&q, c)));
            }
        }
        Ok(Self { basis: basis.clone(), count: polys.len(), representation: Representation::Coefficient, data })
    }

    /// The RNS basis.
    pub fn basis(&self) -> &Arc<RingBasis> {
        &self.basis
    }

    /// Number of polynomials.
    pub fn count(&self) -> usize {
        self.count
    }

    /// Ring degree N.
    pub fn degree(&self) -> usize {
        self.basis.degree()
    }

    /// Current representation.
    pub fn representation(&self) -> Representation {
        self.representation
    }

    /// All residues, limb-major.
    pub fn data(&self) -> &[u32] {
        &self.data
    }

    /// All residues, limb-major, mutable. Callers keep them reduced modulo their limb's prime.
    pub fn data_mut(&mut self) -> &mut [u32] {
        &mut self.data
    }

    /// Takes the residues out.
    pub fn into_data(mut self) -> Vec<u32> {
        std::mem::take(&mut self.data)
    }

    /// The residues of every polynomial modulo prime `limb`: one contiguous slice.
    pub fn limb(&self, limb: usize) -> &[u32] {
        let len = self.count * self.degree();
        &self.data[limb * len..(limb + 1) * len]
    }

    /// Mutable [`PolyBatch::limb`].
    pub fn limb_mut(&mut self, limb: usize) -> &mut [u32] {
        let len = self.count * self.degree();
        &mut self.data[limb * len..(limb + 1) * len]
    }

    /// The N residues of polynomial `poly` modulo prime `limb`.
    pub fn poly_limb(&self, limb: usize, poly: usize) -> &[u32] {
        let n = self.degree();
        let start = (limb * self.count + poly) * n;
        &self.data[start..start + n]
    }

    /// Mutable [`PolyBatch::poly_limb`].
    pub fn poly_limb_mut(&mut self, limb: usize, poly: usize) -> &mut [u32] {
        let n = self.degree();
        let start = (limb * self.count + poly) * n;
        &mut self.data[start..start + n]
    }

    /// A batch of one holding a copy of polynomial `index`.
    pub fn poly(&self, index: usize) -> Result<PolyBatch> {
        self.select(&[index])
    }

    /// A batch of copies of the polynomials at `indices`, in that order.
    pub fn select(&self, indices: &[usize]) -> Result<PolyBatch> {
        if let Some(&bad) = indices.iter().find(|&&i| i >= self.count) {
            return Err(RingError::OutOfRange { what: "polynomial", index: bad, size: self.count });
        }
        let mut out = Self::zeros(&self.basis, indices.len(), self.representation);
        for limb in 0..self.basis.len() {
            for (dst, &src) in indices.iter().enumerate() {
                out.poly_limb_mut(limb, dst).copy_from_slice(self.poly_limb(limb, src));
            }
        }
        Ok(out)
    }

    /// Joins batches over the same basis and representation into one (polynomials in order).
    pub fn concat(parts: &[PolyBatch]) -> Result<PolyBatch> {
        let first = parts.first().ok_or(RingError::OutOfRange { what: "batch", index: 0, size: 0 })?;
        for p in parts {
            p.expect_compatible(first)?;
        }
        let count = parts.iter().map(|p| p.count).sum();
        let mut data = recycle::take(first.basis.len() * count * first.degree());
        for limb in 0..first.basis.len() {
            for p in parts {
                data.extend_from_slice(p.limb(limb));
            }
        }
        Ok(Self { basis: first.basis.clone(), count, representation: first.representation, data })
    }

    /// The same polynomials over the primes of `target`, which must all be in this basis
    /// (dropping limbs, reordering them, or both).
    pub fn restrict(&self, target: &Arc<RingBasis>) -> Result<PolyBatch> {
        let positions = target.limb_positions_in(&self.basis)?;
        let mut data = recycle::take(target.len() * self.count * self.degree());
        for &limb in &positions {
            data.extend_from_slice(self.limb(limb));
        }
        Ok(Self { basis: target.clone(), count: self.count, representation: self.representation, data })
    }

    /// Keeps the first `limbs` limbs and drops the others, in place (no copy: the data is
    /// limb-major, so the kept limbs are a prefix). Needs 1 <= `limbs` <= the basis size.
    ///
    /// ```
    /// use pimhe_ring::{PolyBatch, RingBasis};
    /// let basis = RingBasis::new(16, &[97, 193, 257]).unwrap();
    /// let ones = [1i64; 16];
    /// let mut batch = PolyBatch::from_signed(&basis, &[&ones]).unwrap();
    /// batch.truncate_limbs(2).unwrap();
    /// assert_eq!(batch.basis().primes(), vec![97, 193]);
    /// assert!(batch.truncate_limbs(3).is_err());
    /// ```
    pub fn truncate_limbs(&mut self, limbs: usize) -> Result<()> {
        if limbs == 0 || limbs > self.basis.len() {
            return Err(RingError::BasisMismatch(format!(
                "cannot keep {limbs} of {} limbs; allowed 1..={}",
                self.basis.len(),
                self.basis.len()
            )));
        }
        self.basis = self.basis.prefix(limbs)?;
        self.data.truncate(limbs * self.count * self.degree());
        Ok(())
    }

    /// Errors unless `other` has the same basis and representation.
    pub fn expect_compatible(&self, other: &PolyBatch) -> Result<()> {
        if self.basis != other.basis {
            return Err(RingError::BasisMismatch(format!("{} vs {}", self.basis, other.basis)));
        }
        self.expect(other.representation, "combining batches")
    }

    /// Errors unless the batch is in `expected` representation.
    pub fn expect(&self, expected: Representation, operation: &'static str) -> Result<()> {
        if self.representation == expected {
            Ok(())
        } else {
            Err(RingError::WrongRepresentation { operation, expected, found: self.representation })
        }
    }

    /// Forward NTT of every polynomial (single-threaded; backends parallelise).
    pub fn to_ntt(&mut self) -> Result<()> {
        self.expect(Representation::Coefficient, "forward NTT")?;
        self.for_each_poly_limb(|table, poly| table.forward(poly));
        self.representation = Representation::Ntt;
        Ok(())
    }

    /// Inverse NTT of every polynomial (single-threaded; backends parallelise).
    pub fn to_coefficient(&mut self) -> Result<()> {
        self.expect(Representation::Ntt, "inverse NTT")?;
        self.for_each_poly_limb(|table, poly| table.inverse(poly));
        self.representation = Representation::Coefficient;
        Ok(())
    }

    fn for_each_poly_limb(&mut self, f: impl Fn(&pimhe_math::NttTable, &mut [u32])) {
        let n = self.degree();
        let per_limb = self.count * n;
        if per_limb == 0 {
            return;
        }
        for (limb, residues) in self.data.chunks_mut(per_limb).enumerate() {
            let table = self.basis.table(limb);
            for poly in residues.chunks_mut(n) {
                f(table, poly);
            }
        }
    }

    /// Marks the data as being in `representation` without transforming it. For backends that
    /// transform the residues themselves (on a device or in parallel).
    pub fn set_representation(&mut self, representation: Representation) {
        self.representation = representation;
    }

    /// Overwrites every residue with zero (for secret material), and the storage past them
    /// (limbs dropped by [`PolyBatch::truncate_limbs`]), so that nothing of it reaches the
    /// [`recycle`] pool.
    pub fn zeroize(&mut self) {
        // Zero the residues in place: `Vec::zeroize` would also truncate, breaking the shape.
        self.data.as_mut_slice().zeroize();
        self.data.spare_capacity_mut().zeroize();
    }
}

/// So that a host batch of secret material can be held as `zeroize::Zeroizing<PolyBatch>` and
/// wiped on every path, as [`PolyBatch::zeroize`] wipes it.
impl Zeroize for PolyBatch {
    fn zeroize(&mut self) {
        PolyBatch::zeroize(self);
    }
}

/// Every polynomial of N coefficients, N the basis's degree.
fn expect_degree(basis: &RingBasis, polys: &[&[i64]]) -> Result<()> {
    let n = basis.degree();
    match polys.iter().find(|p| p.len() != n) {
        Some(bad) => Err(RingError::WrongDataLength { count: 1, limbs: 1, n, expected: n, got: bad.len() }),
        None => Ok(()),
    }
}

/// The error for `data` not holding `basis.len() * count * N` residues.
fn check_length(basis: &RingBasis, count: usize, data: &[u32]) -> Result<()> {
    let n = basis.degree();
    let expected = basis.len() * count * n;
    if data.len() != expected {
        return Err(RingError::WrongDataLength { count, limbs: basis.len(), n, expected, got: data.len() });
    }
    Ok(())
}

/// The error for the first residue of limb-major `data` not below its limb's modulus.
fn first_unreduced(basis: &RingBasis, count: usize, data: &[u32]) -> Option<RingError> {
    data.chunks((count * basis.degree()).max(1)).enumerate().find_map(|(limb, residues)| {
        let q = basis.modulus(limb).value();
        let index = residues.iter().position(|&x| x >= q)?;
        Some(RingError::UnreducedResidue { limb, index, value: residues[index], modulus: q })
    })
}
