//! Checks of operand shapes shared by every backend, so each reports misuse the same way.

use pimhe_ring::{Representation, RingError};

use crate::backend::Shape;
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
    if constants.len() == a.basis.len() {
        Ok(())
    } else {
        Err(ExecError::Shape {
            operation: "mul_limb_constants",
            detail: format!(
                "{} constants given for {} primes; give exactly one per prime",
                constants.len(),
                a.basis.len()
            ),
        })
    }
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
