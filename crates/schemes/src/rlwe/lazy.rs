//! Double hoisting (Bossuat, Mouchet, Troncoso-Pastoriza and Hubaux, Eurocrypt 2021; Lattigo's
//! lazy key switching): sums of rotated ciphertexts whose key switches are added up over the
//! extended basis and divided by the special modulus P once, instead of once per rotation.
//!
//! A rotation's key switch ends with a ModDown (division by P, two components), the costliest
//! step after the ModUp. A linear transform adds up many rotations (its baby steps, then its
//! giant steps), and ModDown is linear up to its rounding, so the sums can be kept as
//! `q + e / P`: `q` over the ciphertexts' primes (the parts no key switch touched, such as the
//! rotated c0), `e` over those primes and P (the key switches' pairs, P times their value)
//! ([`LazyCiphertext`]). A giant step's rotation needs its input's c1 divided out (one ModDown:
//! the decomposition takes it over the ciphertexts' primes), but its own switch stays lazy; the
//! whole transform ends with one ModDown per component. Each division rounds, so the result
//! differs from the single-hoisted one by a rounding error of the same size, not by more.

use pimhe_exec::Backend;

use crate::error::{Result, SchemeError};
use crate::rlwe::ciphertext::CiphertextBatch;
use crate::rlwe::evaluator::Evaluator;
use crate::rlwe::scheme::RlweScheme;

/// A ciphertext batch's two components, each held as `q + e / P` ([`super::lazy`]): `q` over
/// the level's primes, `e` over the level's primes followed by the special primes. An absent
/// part is zero.
pub(crate) struct LazyCiphertext<B: Backend> {
    q: [Option<B::Buffer>; 2],
    e: [Option<B::Buffer>; 2],
}

/// The parts of a ciphertext in the lazy form, borrowed: what [`Evaluator::mac_lazy`] multiplies.
pub(crate) struct LazyView<'a, B: Backend> {
    q: [Option<&'a B::Buffer>; 2],
    e: [Option<&'a B::Buffer>; 2],
}

impl<B: Backend> LazyCiphertext<B> {
    /// Zero.
    pub(crate) fn zero() -> Self {
        Self { q: [None, None], e: [None, None] }
    }

    /// Its parts, borrowed.
    pub(crate) fn view(&self) -> LazyView<'_, B> {
        LazyView { q: [self.q[0].as_ref(), self.q[1].as_ref()], e: [self.e[0].as_ref(), self.e[1].as_ref()] }
    }
}

impl<'a, B: Backend> LazyView<'a, B> {
    /// A two-component ciphertext batch as it is: both components in `q`, no key switch pending.
    pub(crate) fn of<S: RlweScheme>(a: &'a CiphertextBatch<B, S>) -> Self {
        Self { q: [Some(&a.parts[0]), Some(&a.parts[1])], e: [None, None] }
    }
}

/// `acc += x`, or `acc = x` when `acc` is zero.
fn add_into<B: Backend>(backend: &B, acc: &mut Option<B::Buffer>, x: B::Buffer) -> Result<()> {
    match acc {
        Some(acc) => backend.add_assign(acc, &x)?,
        None => *acc = Some(x),
    }
    Ok(())
}

impl<B: Backend, S: RlweScheme> Evaluator<'_, B, S> {
    /// The automorphisms X -> X^k of a two-component batch for every element of `elements`
    /// (none of them 1), hoisted (one decomposition of c1) and lazy: per element, sigma_k(c0)
    /// in `q` and the key switch of sigma_k(c1) left over the extended basis in `e`.
    pub(crate) fn automorphisms_lazy(
        &self,
        a: &CiphertextBatch<B, S>,
        elements: &[usize],
    ) -> Result<Vec<LazyCiphertext<B>>> {
        self.check_batch(a)?;
        if elements.is_empty() {
            return Ok(Vec::new());
        }
        let keys = elements.iter().map(|&k| self.galois_key(k)).collect::<Result<Vec<_>>>()?;
        let basis = self.key_switch_basis()?;
        let decomposition = basis.decompose(self.backend, &a.parts[1])?;
        elements
            .iter()
            .zip(keys)
            .map(|(&k, key)| {
                let (e0, e1) = key.switch_decomposed_lazy(self.backend, basis, &decomposition, Some(k))?;
                let q0 = self.backend.automorphism(&a.parts[0], k)?;
                Ok(LazyCiphertext { q: [Some(q0), None], e: [Some(e0), Some(e1)] })
            })
            .collect()
    }

    /// `acc += x * plain` component by component, `plain` one plaintext (or one per
    /// ciphertext) over the extended basis, NTT form: it multiplies both the `q` parts (its
    /// limbs of their primes) and the `e` parts.
    pub(crate) fn mac_lazy(&self, acc: &mut LazyCiphertext<B>, x: &LazyView<'_, B>, plain: &B::Buffer) -> Result<()> {
        let backend = self.backend;
        let pairs = acc.q.iter_mut().zip(&x.q).chain(acc.e.iter_mut().zip(&x.e));
        for (sum, part) in pairs {
            let Some(part) = part else { continue };
            match sum {
                Some(sum) => backend.mac(sum, part, plain)?,
                None => *sum = Some(backend.mul(part, plain)?),
            }
        }
        Ok(())
    }

    /// `acc += x`, part by part.
    pub(crate) fn add_lazy(&self, acc: &mut LazyCiphertext<B>, x: LazyCiphertext<B>) -> Result<()> {
        let pairs = acc.q.iter_mut().zip(x.q).chain(acc.e.iter_mut().zip(x.e));
        for (sum, part) in pairs {
            if let Some(part) = part {
                add_into(self.backend, sum, part)?;
            }
        }
        Ok(())
    }

    /// `acc += sigma_k(x)`, the automorphism X -> X^k (k not 1) of a lazy ciphertext: its c1 is
    /// divided out (one ModDown of its `e` part) and decomposed, its switch left lazy; c0's
    /// parts are mapped where they are.
    pub(crate) fn automorphism_lazy_into(
        &self,
        acc: &mut LazyCiphertext<B>,
        x: LazyCiphertext<B>,
        k: usize,
    ) -> Result<()> {
        let backend = self.backend;
        let key = self.galois_key(k)?;
        let basis = self.key_switch_basis()?;
        let LazyCiphertext { q: [q0, q1], e: [e0, e1] } = x;
        let c1 = match (q1, e1) {
            (q1, Some(e1)) => {
                let mut c1 = basis.mod_down(backend, &e1, self.ctx.key_switch_modulus())?;
                if let Some(q1) = q1 {
                    backend.add_assign(&mut c1, &q1)?;
                }
                c1
            }
            (Some(q1), None) => q1,
            // c1 = 0: the switch adds nothing.
            (None, None) => {
                let mapped = LazyCiphertext {
                    q: [q0.map(|q| backend.automorphism(&q, k)).transpose()?, None],
                    e: [e0.map(|e| backend.automorphism(&e, k)).transpose()?, None],
                };
                return self.add_lazy(acc, mapped);
            }
        };
        let (s0, s1) = key.switch_decomposed_lazy(backend, basis, &basis.decompose(backend, &c1)?, Some(k))?;
        if let Some(q0) = q0 {
            add_into(backend, &mut acc.q[0], backend.automorphism(&q0, k)?)?;
        }
        if let Some(e0) = e0 {
            add_into(backend, &mut acc.e[0], backend.automorphism(&e0, k)?)?;
        }
        add_into(backend, &mut acc.e[0], s0)?;
        add_into(backend, &mut acc.e[1], s1)
    }

    /// The components `q + ModDown(e)`, the lazy form's value. A component with neither part
    /// (the empty sum) is refused: a lazy ciphertext built from a batch has both.
    pub(crate) fn finish_lazy(&self, x: LazyCiphertext<B>) -> Result<Vec<B::Buffer>> {
        let LazyCiphertext { q, e } = x;
        q.into_iter()
            .zip(e)
            .map(|(q, e)| {
                let divided = e
                    .map(|e| self.key_switch_basis()?.mod_down(self.backend, &e, self.ctx.key_switch_modulus()))
                    .transpose()?;
                match (q, divided) {
                    (Some(mut q), Some(d)) => {
                        self.backend.add_assign(&mut q, &d)?;
                        Ok(q)
                    }
                    (Some(part), None) | (None, Some(part)) => Ok(part),
                    (None, None) => Err(SchemeError::InvalidParameters(
                        "a lazy ciphertext component with no part (an empty sum)".into(),
                    )),
                }
            })
            .collect()
    }
}
