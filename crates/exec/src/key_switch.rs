//! Hybrid key switching as one backend operation ([`crate::Backend::key_switch`]), or split in
//! two for hoisting ([`crate::Backend::mod_up`], then [`crate::Backend::key_switch_decomposed`]
//! per key): what they take ([`KeySwitchPlan`]), the checks every backend makes of their
//! operands, and the compositions of element-wise operations that backends without fused
//! implementations run ([`composed`], [`composed_mod_up`], [`composed_decomposed`]).
//!
//! The switch turns a component `c` over q_0..q_l (NTT form) into `(c0', c1')` over the same
//! primes with `c0' + c1' s ~ c s'`, given one key pair per digit over the extended basis
//! q_0..q_l, p_0..p_{k-1} (Han and Ki's hybrid method, as in SEAL, OpenFHE and Lattigo):
//!
//! 1. ModUp: each digit `[c]_{Q_j}` is extended to every prime of the level and of P by FastBConv
//!    (the `u Q_j` it adds vanishes against the key's `g_j`);
//! 2. the inner product with the key, `sum_j digit_j * (b_j, a_j)`;
//! 3. ModDown: division by P, which drops the digits' noise ([`crate::Backend::mod_down`]).
//!
//! Step 1 does not depend on the key, so rotations of one ciphertext by several elements share
//! it (Halevi and Shoup's hoisting): [`crate::Backend::mod_up`] makes the digits once and
//! [`crate::Backend::key_switch_decomposed`] runs steps 2 and 3 for each key, the digits mapped
//! by the rotation's automorphism X -> X^k on the way in: the mapped digits are a ModUp of the
//! mapped input up to multiples of Q_j, which the key tolerates as in step 1.
//! [`crate::Backend::key_switch_decomposed_lazy`] stops before step 3, for callers that add up
//! several switched sums over the extended basis and divide by P once (double hoisting).

use std::ops::Range;
use std::sync::Arc;

use pimhe_math::Modulus;
use pimhe_ring::{Representation, RingBasis};

use crate::backend::{Backend, Shape};
use crate::error::{ExecError, Result};
use crate::operands::{self, broadcast, require, Broadcast};

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

fn shape_error(operation: &'static str, detail: String) -> ExecError {
    ExecError::Shape { operation, detail }
}

/// Checks `c` (its shape), the key pairs (their shapes) and `plan` against each other.
pub(crate) fn check(c: &Shape, keys: &[(Shape, Shape)], plan: &KeySwitchPlan) -> Result<KeySwitchLayout> {
    require("key_switch", c, Representation::Ntt)?;
    layout("key_switch", &c.basis.primes(), c.basis.degree(), c.count, Some(keys), plan)
}

/// The refusal [`crate::Backend::key_switch`] gives for these operands, if any: for a backend
/// that composes the switch from other calls (whose own checks name other operations and
/// come after work), to refuse as the composed default does, before any work.
pub fn check_operands(c: &Shape, keys: &[(Shape, Shape)], plan: &KeySwitchPlan) -> Result<()> {
    check(c, keys, plan).map(|_| ())
}

/// Checks the input `c` of [`crate::Backend::mod_up`] against `plan` (no keys: the layout's
/// `keys` is empty).
pub(crate) fn check_mod_up(c: &Shape, plan: &KeySwitchPlan) -> Result<KeySwitchLayout> {
    require("mod_up", c, Representation::Ntt)?;
    layout("mod_up", &c.basis.primes(), c.basis.degree(), c.count, None, plan)
}

/// Checks the digits of [`crate::Backend::key_switch_decomposed`] (their shapes), the key pairs
/// and `plan` against each other. The input they were made from is not given: its primes are
/// the digits' of the plan, and every digit must be one batch over the extended basis, NTT
/// form, as [`crate::Backend::mod_up`] makes them.
pub(crate) fn check_decomposed(
    digits: &[Shape],
    keys: &[(Shape, Shape)],
    plan: &KeySwitchPlan,
) -> Result<KeySwitchLayout> {
    const OPERATION: &str = "key_switch_decomposed";
    let count = digits.first().map_or(0, |d| d.count);
    if digits.is_empty() || digits.len() != plan.digits.len() {
        return Err(shape_error(
            OPERATION,
            format!(
                "the plan has {} digits; got {} decomposed digits (at least one is needed)",
                plan.digits.len(),
                digits.len()
            ),
        ));
    }
    let primes: Vec<u32> = plan.digits.iter().flat_map(|digit| digit.primes()).collect();
    let layout = layout(OPERATION, &primes, plan.extended.degree(), count, Some(keys), plan)?;
    let expected = Shape { basis: plan.extended.clone(), count, representation: Representation::Ntt };
    if let Some(j) = digits.iter().position(|digit| *digit != expected) {
        return Err(shape_error(
            OPERATION,
            format!(
                "decomposed digit {j} is {} x {} ({}); every digit must be {} x {} (NTT), the extended basis",
                digits[j].count, digits[j].basis, digits[j].representation, count, plan.extended
            ),
        ));
    }
    Ok(layout)
}

/// The checks of every key switching operation, on the input's primes, ring degree and
/// polynomial count; `keys` is `None` for ModUp, which takes none.
fn layout(
    operation: &'static str,
    primes: &[u32],
    degree: usize,
    count: usize,
    keys: Option<&[(Shape, Shape)]>,
    plan: &KeySwitchPlan,
) -> Result<KeySwitchLayout> {
    let extended = plan.extended.primes();
    if plan.extended.degree() != degree || extended.len() <= primes.len() || extended[..primes.len()] != primes[..] {
        return Err(shape_error(
            operation,
            format!(
                "the extended basis must be the input's primes {primes:?} followed by at least one special prime, \
                 at the input's degree {degree}; got {extended:?} at degree {}",
                plan.extended.degree()
            ),
        ));
    }
    let mut digits = Vec::with_capacity(plan.digits.len());
    let mut start = 0;
    for digit in plan.digits {
        let end = start + digit.len();
        if digit.is_empty() || end > primes.len() || digit.primes()[..] != primes[start..end] {
            return Err(shape_error(
                operation,
                format!(
                    "the digits must split the input's primes {primes:?} into consecutive non-empty groups; digit {} is {:?}",
                    digits.len(),
                    digit.primes()
                ),
            ));
        }
        digits.push(start..end);
        start = end;
    }
    if start != primes.len() {
        return Err(shape_error(
            operation,
            format!("the digits cover {start} of the input's {} primes; they must cover all", primes.len()),
        ));
    }
    let keys = match keys {
        None => Vec::new(),
        Some(keys) => {
            if keys.len() < digits.len() {
                return Err(shape_error(
                    operation,
                    format!("{} digits need as many key pairs; got {}", digits.len(), keys.len()),
                ));
            }
            let extended_shape = Shape { basis: plan.extended.clone(), count, representation: Representation::Ntt };
            keys[..digits.len()]
                .iter()
                .map(|(b, a)| {
                    Ok((
                        broadcast(operation, &extended_shape, b, true)?,
                        broadcast(operation, &extended_shape, a, true)?,
                    ))
                })
                .collect::<Result<Vec<_>>>()?
        }
    };
    Ok(KeySwitchLayout { digits, keys, special: extended.len() - primes.len() })
}

/// [`crate::Backend::key_switch`] composed of the backend's element-wise operations, one
/// batch-wide call per step: the default of every backend without a fused implementation (and
/// the reference a fused one is tested against). Each digit is extended and accumulated before
/// the next is made, so one extended digit is alive at a time.
pub fn composed<B: Backend + ?Sized>(
    backend: &B,
    c: &B::Buffer,
    keys: &[(B::Buffer, B::Buffer)],
    plan: &KeySwitchPlan,
) -> Result<(B::Buffer, B::Buffer)> {
    let key_shapes: Vec<(Shape, Shape)> = keys.iter().map(|(b, a)| (backend.shape(b), backend.shape(a))).collect();
    let layout = check(&backend.shape(c), &key_shapes, plan)?;
    let coefficients = coefficient_form(backend, c)?;
    let mut accumulators = None;
    for (digit_basis, key) in plan.digits.iter().zip(keys) {
        let digit = mod_up_digit(backend, &coefficients, c, digit_basis, plan.extended)?;
        accumulate(backend, &mut accumulators, &digit, key)?;
    }
    let sums = accumulators.expect("the checks found at least one digit (the input has a prime)");
    mod_down_pair(backend, sums, &layout, plan)
}

/// [`crate::Backend::mod_up`] composed of the backend's operations: per digit, a restriction
/// of `c` to the digit's primes (in both forms) and [`crate::Backend::base_convert_ntt`] to the
/// extended basis. The default of every backend without a fused implementation.
pub fn composed_mod_up<B: Backend + ?Sized>(
    backend: &B,
    c: &B::Buffer,
    plan: &KeySwitchPlan,
) -> Result<Vec<B::Buffer>> {
    check_mod_up(&backend.shape(c), plan)?;
    let coefficients = coefficient_form(backend, c)?;
    plan.digits.iter().map(|digit_basis| mod_up_digit(backend, &coefficients, c, digit_basis, plan.extended)).collect()
}

/// [`crate::Backend::key_switch_decomposed`] composed of the backend's operations: each digit
/// mapped by [`crate::Backend::automorphism`] (a fresh batch), multiplied and accumulated with
/// its key pair batch-wide, then [`crate::Backend::mod_down`] of both sums. The default of every
/// backend without a fused implementation (and the reference a fused one is tested against).
pub fn composed_decomposed<B: Backend + ?Sized>(
    backend: &B,
    digits: &[B::Buffer],
    keys: &[(B::Buffer, B::Buffer)],
    galois_element: Option<usize>,
    plan: &KeySwitchPlan,
) -> Result<(B::Buffer, B::Buffer)> {
    let (sums, layout) = inner_product(backend, digits, keys, galois_element, plan)?;
    mod_down_pair(backend, sums, &layout, plan)
}

/// [`crate::Backend::key_switch_decomposed_lazy`] composed of the backend's operations:
/// [`composed_decomposed`] without the ModDown. The default of every backend without a fused
/// implementation.
pub fn composed_decomposed_lazy<B: Backend + ?Sized>(
    backend: &B,
    digits: &[B::Buffer],
    keys: &[(B::Buffer, B::Buffer)],
    galois_element: Option<usize>,
    plan: &KeySwitchPlan,
) -> Result<(B::Buffer, B::Buffer)> {
    Ok(inner_product(backend, digits, keys, galois_element, plan)?.0)
}

/// The checked inner product of the digits, each mapped by [`crate::Backend::automorphism`] (a
/// fresh batch), with the key pairs, batch-wide, over the extended basis.
fn inner_product<B: Backend + ?Sized>(
    backend: &B,
    digits: &[B::Buffer],
    keys: &[(B::Buffer, B::Buffer)],
    galois_element: Option<usize>,
    plan: &KeySwitchPlan,
) -> Result<((B::Buffer, B::Buffer), KeySwitchLayout)> {
    let digit_shapes: Vec<Shape> = digits.iter().map(|digit| backend.shape(digit)).collect();
    let key_shapes: Vec<(Shape, Shape)> = keys.iter().map(|(b, a)| (backend.shape(b), backend.shape(a))).collect();
    let layout = check_decomposed(&digit_shapes, &key_shapes, plan)?;
    // Refused before any work, as the fused implementations refuse it.
    if let Some(k) = galois_element {
        operands::galois_element(&digit_shapes[0], k)?;
    }
    let mut accumulators = None;
    for (digit, key) in digits.iter().zip(keys) {
        match galois_element {
            Some(k) => accumulate(backend, &mut accumulators, &backend.automorphism(digit, k)?, key)?,
            None => accumulate(backend, &mut accumulators, digit, key)?,
        }
    }
    let sums = accumulators.expect("the checks found at least one digit (the input has a prime)");
    Ok((sums, layout))
}

/// A copy of `c` (NTT form) in coefficient form, the input of FastBConv.
fn coefficient_form<B: Backend + ?Sized>(backend: &B, c: &B::Buffer) -> Result<B::Buffer> {
    let mut coefficients = backend.copy(c)?;
    backend.intt(&mut coefficients)?;
    Ok(coefficients)
}

/// ModUp of one digit: the digit's limbs of `c` (given in both forms) extended to `extended`.
fn mod_up_digit<B: Backend + ?Sized>(
    backend: &B,
    coefficients: &B::Buffer,
    c: &B::Buffer,
    digit_basis: &Arc<RingBasis>,
    extended: &Arc<RingBasis>,
) -> Result<B::Buffer> {
    // The digit's own limbs are c's, already in NTT form.
    backend.base_convert_ntt(
        &backend.restrict(coefficients, digit_basis)?,
        &backend.restrict(c, digit_basis)?,
        extended,
    )
}

/// `accumulators += digit * (b, a)`; the first digit starts them.
fn accumulate<B: Backend + ?Sized>(
    backend: &B,
    accumulators: &mut Option<(B::Buffer, B::Buffer)>,
    digit: &B::Buffer,
    (key_b, key_a): &(B::Buffer, B::Buffer),
) -> Result<()> {
    match accumulators {
        None => *accumulators = Some((backend.mul(digit, key_b)?, backend.mul(digit, key_a)?)),
        Some((acc0, acc1)) => {
            backend.mac(acc0, digit, key_b)?;
            backend.mac(acc1, digit, key_a)?;
        }
    }
    Ok(())
}

/// ModDown of both accumulated sums.
fn mod_down_pair<B: Backend + ?Sized>(
    backend: &B,
    (acc0, acc1): (B::Buffer, B::Buffer),
    layout: &KeySwitchLayout,
    plan: &KeySwitchPlan,
) -> Result<(B::Buffer, B::Buffer)> {
    Ok((
        backend.mod_down(&acc0, layout.special, plan.plain_modulus)?,
        backend.mod_down(&acc1, layout.special, plan.plain_modulus)?,
    ))
}
