//! ModDown's division by P = p_0 .. p_{count-1}, the last `count` primes of a basis, as steps on
//! single limbs: [`crate::Backend::mod_down`] runs them batch-wide (`CpuBackend::divide_in_place`)
//! and the fused key switch (`cpu/key_switch.rs`) runs them on its sums' limbs as it makes them,
//! while they are in cache. Both go through this one implementation, so their residues agree.
//!
//! Per polynomial: [`Division::scale`] turns each dropped limb into FastBConv's scaled residues
//! (BGV: of `a t^{-1}`), and [`Division::divide`] makes each kept limb's quotient
//! `a P^{-1} - delta' (t P^{-1})` from them.

use std::sync::Arc;

use pimhe_math::simd::elementwise as kernels;
use pimhe_math::{BaseConverter, Isa, Modulus};
use pimhe_ring::{Representation, RingBasis};

use super::CpuBackend;
use crate::error::{ExecError, Result};

/// The constants of one division, for a basis, a number of dropped primes and a plain modulus.
pub(super) struct Division {
    /// The kept primes, the quotient's basis.
    pub target: Arc<RingBasis>,
    /// The dropped primes, those of P.
    dropped: Arc<RingBasis>,
    /// FastBConv from `dropped` to `target`.
    converter: Arc<BaseConverter>,
    /// BGV: t^{-1} modulo each dropped prime.
    t_inverses: Option<Vec<u32>>,
    /// Per kept limb q: P^{-1} and (BGV) t, modulo q.
    constants: Vec<(u32, Option<u32>)>,
    /// Whether the limbs are in NTT form (transformed on the way in and out).
    is_ntt: bool,
    isa: Isa,
}

impl Division {
    /// The division of a batch over `basis` in `representation` by its last `count` primes;
    /// refuses a `count` that drops none or all of them.
    pub fn new(
        backend: &CpuBackend,
        basis: &RingBasis,
        count: usize,
        plain_modulus: Option<Modulus>,
        representation: Representation,
    ) -> Result<Self> {
        let limbs = basis.len();
        if count == 0 || count >= limbs {
            return Err(ExecError::Shape {
                operation: "mod_down",
                detail: format!(
                    "cannot drop {count} of the input's {limbs} primes; allowed 1..={}",
                    limbs.saturating_sub(1)
                ),
            });
        }
        let kept = limbs - count;
        let target = basis.prefix(kept)?;
        let dropped = basis.select(&(kept..limbs).collect::<Vec<_>>())?;
        let converter = backend.converter(&dropped, &target)?;
        let t_inverses = plain_modulus
            .map(|t| {
                (0..count)
                    .map(|k| {
                        let p = dropped.modulus(k);
                        Ok(p.inv(p.reduce_u64(t.value().into()))?)
                    })
                    .collect::<Result<Vec<_>>>()
            })
            .transpose()?;
        let constants = (0..kept)
            .map(|limb| {
                let q = target.modulus(limb);
                let p_mod_q = (0..count).fold(1, |acc, i| q.mul(acc, q.reduce_u64(dropped.modulus(i).value().into())));
                Ok((q.inv(p_mod_q)?, plain_modulus.map(|t| q.reduce_u64(t.value().into()))))
            })
            .collect::<Result<Vec<_>>>()?;
        let is_ntt = representation == Representation::Ntt;
        Ok(Self { target, dropped, converter, t_inverses, constants, is_ntt, isa: Isa::active() })
    }

    /// Number of kept primes.
    pub fn kept(&self) -> usize {
        self.target.len()
    }

    /// Number of dropped primes.
    pub fn count(&self) -> usize {
        self.dropped.len()
    }

    /// FastBConv's first half on dropped limb `k` of one polynomial, in place: `chunk` holds
    /// the input's residues there and ends as [a]_{p_k} (BGV: [a t^{-1}]_{p_k}) in coefficient
    /// form, scaled by (P/p_k)^{-1}.
    pub fn scale(&self, k: usize, chunk: &mut [u32]) -> Result<()> {
        if self.is_ntt {
            self.dropped.table(k).inverse(chunk);
        }
        if let Some(t_inverses) = &self.t_inverses {
            kernels::mul_scalar(self.isa, self.dropped.modulus(k), chunk, t_inverses[k]);
        }
        Ok(self.converter.scale_on(self.isa, k, chunk)?)
    }

    /// Kept limb `limb` of one polynomial, in place: `chunk` holds the input's residues there
    /// and ends as the quotient's, from the polynomial's [`Division::scale`]d dropped limbs
    /// (`scaled`, limb after limb); `delta` is scratch of one limb.
    pub fn divide(&self, limb: usize, chunk: &mut [u32], scaled: &[u32], delta: &mut [u32]) -> Result<()> {
        // Y = (a - t delta') P^{-1} with delta' = FastBConv of the centred scaled
        // residues, so delta' is a centred representative of [a]_P (off by a multiple of P of
        // mean zero) and the division rounds to nearest: from [0, p_k) residues every
        // coefficient of the result would be low by about count / 2 on average, an offset
        // common to all coefficients that CKKS decodes as a large error in the slots near the
        // real axis.
        self.converter.accumulate_centred_on(self.isa, limb, scaled, delta)?;
        let q = self.target.modulus(limb);
        let (p_inv, t) = self.constants[limb];
        if let Some(t) = t {
            kernels::mul_scalar(self.isa, q, delta, t);
        }
        if self.is_ntt {
            self.target.table(limb).forward(delta);
        }
        kernels::sub_mul_scalar_assign(self.isa, q, chunk, delta, p_inv);
        Ok(())
    }
}
