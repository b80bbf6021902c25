//! Hybrid key switching as one backend operation ([`crate::Backend::key_switch`]): what it
//! takes ([`KeySwitchPlan`]), the checks every backend makes of its operands, and the
//! composition of element-wise operations that backends without a fused implementation run
//! ([`composed`]).
//!
//! The switch turns a component `c` over q_0..q_l (NTT form) into `(c0', c1')` over the same
//! primes with `c0' + c1' s ~ c s'`, given one key pair per digit over the extended basis
//! q_0..q_l, p_0..p_{k-1} (Han and Ki's hybrid method, as in SEAL, OpenFHE and Lattigo):
//!
//! 1. ModUp: each digit `[c]_{Q_j}` is extended to every prime of the level and of P by FastBConv
//!    (the `u Q_j` it adds vanishes against the key's `g_j`);
//! 2. the inner product with the key, `sum_j digit_j * (b_j, a_j)`;
//! 3. ModDown: division by P, which drops the digits' noise ([`crate::Backend::mod_down`]).

use std::ops::Range;
use std::sync::Arc;

use pimhe_math::Modulus;
use pimhe_ring::{Representation, RingBasis};

use crate::backend::{Backend, Shape};
use crate::error::{ExecError, Result};
use crate::operands::{broadcast, require, Broadcast};

/// The bases of one key switch at the level of its input.
#[derive(Debug, Clone)]
pub struct KeySwitchPlan<'a> {
    /// The digits' primes, in order: together exactly the input's primes q_0..q_l (a digit of
    /// the key whose primes are all above the level is left out).
    pub digits: &'a [Arc<RingBasis>],
    /// The input's primes followed by the special primes of P (at least one).
    pub extended: &'a Arc<RingBasis>,
    /// `Some(t)` (BGV): ModDown keeps the result congruent to `c s'` modulo t, so the switch
    /// adds `t e` only. `None` (BFV, CKKS): plain ModDown.
    pub plain_modulus: Option<Modulus>,
}

/// How the operands of a key switch line up, as checked by [`check`].
#[derive(Debug)]
pub(crate) struct KeySwitchLayout {
    /// The input's limbs of each digit.
    pub digits: Vec<Range<usize>>,
    /// For each digit, how its key pair `(b, a)` lines up with the extended basis.
    pub keys: Vec<(Broadcast, Broadcast)>,
    /// Number of special primes (the extended basis's primes beyond the input's).
    pub special: usize,
}

fn shape_error(detail: String) -> ExecError {
    ExecError::Shape { operation: "key_switch", detail }
}

/// Checks `c` (its shape), the key pairs (their shapes) and `plan` against each other.
pub(crate) fn check(c: &Shape, keys: &[(Shape, Shape)], plan: &KeySwitchPlan) -> Result<KeySwitchLayout> {
    require("key_switch", c, Representation::Ntt)?;
    let primes = c.basis.primes();
    let extended = plan.extended.primes();
    if plan.extended.degree() != c.basis.degree()
        || extended.len() <= primes.len()
        || extended[..primes.len()] != primes[..]
    {
        return Err(shape_error(format!(
            "the extended basis must be the input's primes {primes:?} followed by at least one special prime, \
             at the input's degree {}; got {extended:?} at degree {}",
            c.basis.degree(),
            plan.extended.degree()
        )));
    }
    let mut digits = Vec::with_capacity(plan.digits.len());
    let mut start = 0;
    for digit in plan.digits {
        let end = start + digit.len();
        if digit.is_empty() || end > primes.len() || digit.primes()[..] != primes[start..end] {
            return Err(shape_error(format!(
                "the digits must split the input's primes {primes:?} into consecutive non-empty groups; digit {} is {:?}",
                digits.len(),
                digit.primes()
            )));
        }
        digits.push(start..end);
        start = end;
    }
    if start != primes.len() {
        return Err(shape_error(format!(
            "the digits cover {start} of the input's {} primes; they must cover all",
            primes.len()
        )));
    }
    if keys.len() < digits.len() {
        return Err(shape_error(format!("{} digits need as many key pairs; got {}", digits.len(), keys.len())));
    }
    let extended_shape = Shape { basis: plan.extended.clone(), count: c.count, representation: Representation::Ntt };
    let keys = keys[..digits.len()]
        .iter()
        .map(|(b, a)| {
            Ok((broadcast("key_switch", &extended_shape, b, true)?, broadcast("key_switch", &extended_shape, a, true)?))
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(KeySwitchLayout { digits, keys, special: extended.len() - primes.len() })
}

/// [`crate::Backend::key_switch`] composed of the backend's element-wise operations, one
/// batch-wide call per step: the default of every backend without a fused implementation (and
/// the reference a fused one is tested against).
pub fn composed<B: Backend + ?Sized>(
    backend: &B,
    c: &B::Buffer,
    keys: &[(B::Buffer, B::Buffer)],
    plan: &KeySwitchPlan,
) -> Result<(B::Buffer, B::Buffer)> {
    let key_shapes: Vec<(Shape, Shape)> = keys.iter().map(|(b, a)| (backend.shape(b), backend.shape(a))).collect();
    let layout = check(&backend.shape(c), &key_shapes, plan)?;
    let mut coefficients = backend.copy(c)?;
    backend.intt(&mut coefficients)?;
    let mut accumulators: Option<(B::Buffer, B::Buffer)> = None;
    for (digit_basis, (key_b, key_a)) in plan.digits.iter().zip(keys) {
        // The digit's own limbs are c's, already in NTT form.
        let digit = backend.base_convert_ntt(
            &backend.restrict(&coefficients, digit_basis)?,
            &backend.restrict(c, digit_basis)?,
            plan.extended,
        )?;
        match &mut accumulators {
            None => accumulators = Some((backend.mul(&digit, key_b)?, backend.mul(&digit, key_a)?)),
            Some((acc0, acc1)) => {
                backend.mac(acc0, &digit, key_b)?;
                backend.mac(acc1, &digit, key_a)?;
            }
        }
    }
    let (acc0, acc1) = accumulators.expect("check() found at least one digit (the input has a prime)");
    Ok((
        backend.mod_down(&acc0, layout.special, plan.plain_modulus)?,
        backend.mod_down(&acc1, layout.special, plan.plain_modulus)?,
    ))
}
