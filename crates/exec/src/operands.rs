//! Checks of operand shapes shared by every backend, so each reports misuse the same way.

use pimhe_ring::{PolyBatch, Representation, RingError};

use crate::backend::{Backend, Shape};
use crate::error::{ExecError, Result};

/// How the second operand of an element-wise operation lines up with the first.
#[derive(Debug, Clone)]
pub struct Broadcast {
    /// For each limb of the first operand, the limb of the second holding the same prime.
    pub limbs: Vec<usize>,
    /// True when the second operand is one polynomial applied to every polynomial of the first.
    pub single: bool,
}

impl Broadcast {
    /// Index of the (limb, poly) chunk of the second operand matching chunk (limb, poly) of the
    /// first, in limb-major order with `count` polynomials per limb on the second operand.
    #[inline]
    pub fn chunk(&self, limb: usize, poly: usize, count: usize) -> usize {
        self.limbs[limb] * count + if self.single { 0 } else { poly }
    }
}

/// Checks that `a` is in `representation` (when given) and names the operation otherwise.
pub fn require(operation: &'static str, a: &Shape, representation: Representation) -> Result<()> {
    if a.representation == representation {
        Ok(())
    } else {
        Err(RingError::WrongRepresentation { operation, expected: representation, found: a.representation }.into())
    }
}

/// Validates `b` against `a` under the broadcast rules of [`crate::Backend`].
pub fn broadcast(operation: &'static str, a: &Shape, b: &Shape, product: bool) -> Result<Broadcast> {
    if product {
        require(operation, a, Representation::Ntt)?;
        require(operation, b, Representation::Ntt)?;
    } else if a.representation != b.representation {
        return Err(ExecError::Shape {
            operation,
            detail: format!(
                "operands are in different representations ({} and {})",
                a.representation, b.representation
            ),
        });
    }
    if b.count != a.count && b.count != 1 {
        return Err(ExecError::Shape {
            operation,
            detail: format!(
                "second operand holds {} polynomials; it must hold {} (one per polynomial) or 1 (broadcast)",
                b.count, a.count
            ),
        });
    }
    let limbs = a.basis.limb_positions_in(&b.basis).map_err(|e| ExecError::Shape {
        operation,
        detail: format!("the second operand's basis must contain the first's primes: {e}"),
    })?;
    Ok(Broadcast { limbs, single: b.count == 1 && a.count != 1 })
}

/// Checks that `acc` and `a` have exactly the same shape (accumulating operations).
pub fn same_shape(operation: &'static str, acc: &Shape, a: &Shape) -> Result<()> {
    if acc == a {
        Ok(())
    } else {
        Err(ExecError::Shape {
            operation,
            detail: format!(
                "accumulator is {} x {} ({}), operand is {} x {} ({})",
                acc.count, acc.basis, acc.representation, a.count, a.basis, a.representation
            ),
        })
    }
}

/// Checks that [`crate::Backend::mul_limb_constants`] got exactly one constant per limb of `a`.
pub fn check_limb_constants(a: &Shape, constants: &[u64]) -> Result<()> {
    check_constants("mul_limb_constants", a, constants)
}

/// Checks that `operation` got exactly one constant per limb of `a`.
pub fn check_constants(operation: &'static str, a: &Shape, constants: &[u64]) -> Result<()> {
    if constants.len() == a.basis.len() {
        Ok(())
    } else {
        Err(ExecError::Shape {
            operation,
            detail: format!(
                "{} constants given for {} primes; give exactly one per prime",
                constants.len(),
                a.basis.len()
            ),
        })
    }
}

/// Checks the operands of [`crate::Backend::constant_accumulate`] (at least one term, every
/// term of the first's shape, one constant per limb for each term and the offset) and returns
/// the shape of the result.
pub fn check_constant_terms<B: Backend + ?Sized>(
    backend: &B,
    terms: &[(&B::Buffer, &[u64])],
    offset: Option<&[u64]>,
) -> Result<Shape> {
    const OPERATION: &str = "constant_accumulate";
    let Some(&(first, _)) = terms.first() else {
        return Err(ExecError::Shape { operation: OPERATION, detail: "no terms given; give at least one".into() });
    };
    let shape = backend.shape(first);
    for &(a, constants) in terms {
        same_shape(OPERATION, &shape, &backend.shape(a))?;
        check_constants(OPERATION, &shape, constants)?;
    }
    if let Some(offset) = offset {
        check_constants(OPERATION, &shape, offset)?;
    }
    Ok(shape)
}

/// The constant polynomial with `constants[i]` (reduced) on limb i, as one polynomial in
/// `shape`'s basis and representation: every residue in NTT form, the constant coefficient
/// in coefficient form.
pub fn constant_polynomial(shape: &Shape, constants: &[u64]) -> PolyBatch {
    let basis = &shape.basis;
    let mut batch = PolyBatch::zeros(basis, 1, shape.representation);
    for (limb, &c) in constants.iter().enumerate() {
        let c = basis.modulus(limb).reduce_u64(c);
        match shape.representation {
            Representation::Ntt => batch.poly_limb_mut(limb, 0).fill(c),
            Representation::Coefficient => batch.poly_limb_mut(limb, 0)[0] = c,
        }
    }
    batch
}

/// The Galois element `k` of [`crate::Backend::automorphism`] on `a`, reduced modulo 2N. An even
/// k is refused: X -> X^k is an automorphism of the ring Z_Q\[X\]/(X^N + 1) only for k odd.
pub fn galois_element(a: &Shape, k: usize) -> Result<usize> {
    let n = a.basis.degree();
    if k.is_multiple_of(2) {
        Err(RingError::InvalidGaloisElement { k, n }.into())
    } else {
        Ok(k % (2 * n))
    }
}
