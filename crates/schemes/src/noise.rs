//! The randomness of keys and encryptions, shared by every scheme: ternary secrets, Gaussian
//! errors, uniform polynomials, and the upload of signed polynomials that wipes the host copy.

use std::sync::Arc;

use pimhe_exec::Backend;
use pimhe_math::{GaussianTable, Sampler};
use pimhe_ring::{PolyBatch, Representation, RingBasis};
use zeroize::Zeroize;

use crate::error::Result;

/// Randomness for one encryption or key: ternary secrets and Gaussian errors.
pub(crate) struct Noise {
    pub(crate) sampler: Sampler,
    gaussian: GaussianTable,
}

impl Noise {
    pub(crate) fn new(sampler: Sampler) -> Self {
        Self { sampler, gaussian: GaussianTable::default() }
    }

    pub(crate) fn ternary(&mut self, n: usize) -> Vec<i64> {
        self.sampler.ternary(n)
    }

    /// `scale * e` for a fresh Gaussian e (t for BGV, 1 for BFV).
    pub(crate) fn scaled_error(&mut self, n: usize, scale: u32) -> Vec<i64> {
        let mut e = self.sampler.gaussian(&self.gaussian, n);
        e.iter_mut().for_each(|x| *x *= scale as i64);
        e
    }

    /// `count` uniform polynomials over `basis`; uniform in NTT form is uniform, so they are
    /// sampled there directly.
    pub(crate) fn uniform_ntt(&mut self, basis: &Arc<RingBasis>, count: usize) -> Result<PolyBatch> {
        let per_limb = count * basis.degree();
        let mut data = Vec::with_capacity(basis.len() * per_limb);
        for q in basis.moduli() {
            data.extend(self.sampler.uniform_vec(&q, per_limb));
        }
        Ok(PolyBatch::from_data(basis, count, Representation::Ntt, data)?)
    }
}

/// Uploads signed polynomials over `basis` and transforms them to NTT form on the device, then
/// wipes the host copies (they are secrets or encryption randomness).
pub(crate) fn upload_signed<B: Backend>(
    backend: &B,
    basis: &Arc<RingBasis>,
    polys: &mut [Vec<i64>],
) -> Result<B::Buffer> {
    let refs: Vec<&[i64]> = polys.iter().map(|p| p.as_slice()).collect();
    let batch = PolyBatch::from_signed(basis, &refs);
    polys.iter_mut().for_each(|p| p.zeroize());
    let mut buffer = backend.upload(batch?)?;
    backend.ntt(&mut buffer)?;
    Ok(buffer)
}
