//! The hybrid mode's step across primes ([`super::placement::Mode::Hybrid`]): the limbs stay
//! on their primes' DPU groups as in parallel mode, where the transforms and element-wise
//! kernels use every group at once, and FastBConv's sums or DIVIDE_LAST's terms
//! ([`super::conversion`]'s `Across`) run on coefficient slices spread over every DPU.
//!
//! What a conversion combines is the same coefficient of every limb. Cutting each degree-N
//! polynomial into N/s slices of s coefficients, and calling each slice a polynomial of degree
//! s, turns a batch of C polynomials into one of C N/s polynomials of degree s with the same
//! words in the same order (limb after limb, polynomial after polynomial), and the
//! coefficient-wise step on the sliced batch is the step on the batch. A second backend of
//! degree s in the ciphertext-major placement over the same DPUs runs it: each DPU converts
//! whole slices with every limb at hand, in one launch. The sources are pulled from their
//! groups, pushed as slices, converted, pulled back and written to the target limbs' groups:
//! two re-slicings through the host, each priced as the pull and the push it is, beside the
//! launch; the slicing backend's costs are added to this backend's report.
//!
//! The slicing backend is a separate emulated DPU set: the hardware would use the same DPUs,
//! whose MRAM would then also hold the slices. [`PimBackend::across_fits`] asks that the
//! slices fit the MRAM the groups leave free, so the model never assumes memory the DPUs lack.

use pimhe_exec::Shape;
use pimhe_ring::{PolyBatch, Representation, RingBasis};

use super::buffer::{LimbPlacement, PimBuffer};
use super::conversion::Across;
use super::placement::{split, Mode};
use super::{setup, OffloadReport, PimBackend, PimConfig, State};
use crate::layout;

/// Coefficients per slice for degree `n` over `dpus` DPUs: `n / S`, with S the power of two at
/// or above the DPU count (so a single polynomial already reaches every DPU), at most
/// `n / N_MIN` slices (the kernels' smallest degree).
///
/// ```
/// use pimhe_pim::runtime::slice_degree;
///
/// assert_eq!(slice_degree(8192, 64), 128);
/// assert_eq!(slice_degree(8192, 63), 128);
/// assert_eq!(slice_degree(1024, 128), 16);
/// ```
pub fn slice_degree(n: usize, dpus: usize) -> usize {
    let slices = dpus.next_power_of_two().min(n / layout::N_MIN).max(1);
    n / slices
}

/// The words of `batch` (degree N, limb-major) read as polynomials of degree `degree`: the same
/// words in the same order, each polynomial's slices consecutive, so the storage is handed over
/// as it is.
fn reslice(batch: PolyBatch, degree: usize) -> pimhe_exec::Result<PolyBatch> {
    let resliced = RingBasis::new(degree, &batch.basis().primes())?;
    let polys = batch.degree() * batch.count() / degree;
    Ok(PolyBatch::from_data(&resliced, polys, Representation::Coefficient, batch.into_data())?)
}

impl PimBackend {
    /// The slicing backend of a hybrid-mode backend over `used` DPUs: degree
    /// [`slice_degree`], ciphertext-major, the same primes, kernels, emulator and model.
    pub(super) fn slicer(config: &PimConfig, used: usize, n: usize, primes: &[u32]) -> pimhe_exec::Result<Box<Self>> {
        let config = PimConfig { dpus: used, mode: Mode::CiphertextMajor, ..config.clone() };
        Ok(Box::new(Self::new(config, slice_degree(n, used), primes)?))
    }

    /// Whether the step across primes from `sources` to `targets` can run where this backend
    /// runs it: always in the ciphertext-major mode; in the hybrid mode when the slices of
    /// both fit the MRAM every DPU has free (the slices share the DPUs with the groups).
    pub(super) fn across_fits(&self, sources: &Shape, targets: &Shape) -> bool {
        let Some(slicer) = self.slices.as_deref() else { return true };
        let slices = self.n / slicer.n;
        let per_dpu = split(sources.count * slices, 0..slicer.plan.used_dpus()).iter().map(|s| s.len).max();
        let bytes = per_dpu.unwrap_or(0) * slicer.n * 4 * (sources.basis.len() + targets.basis.len());
        bytes <= self.mram_free_bytes().min(slicer.mram_free_bytes())
    }

    /// [`Across`] from `sources` into `dst` on coefficient slices over every DPU (see the
    /// module documentation). Runs the pending commands first (the sources are pulled).
    pub(super) fn across_on_slices(
        &self,
        state: &mut State,
        sources: &PimBuffer,
        dst: &[&LimbPlacement],
        across: &Across,
    ) -> pimhe_exec::Result<()> {
        let slicer = self.slices.as_deref().ok_or_else(|| setup("internal: no slicing backend".into()))?;
        let sliced = reslice(self.pull(state, sources)?, slicer.n)?;
        let targets: Vec<u32> = dst.iter().map(|limb| self.primes[limb.slot].value()).collect();
        let mut slices = slicer.lock();
        // The slicing backend's buffers live out here, dropped once its lock is released (a
        // dropped buffer takes the lock to free its MRAM), on success or failure.
        let (mut sliced_buffer, mut converted_buffer) = (None, None);
        let result = (|| {
            let sliced: &PimBuffer = sliced_buffer.insert(slicer.push(&mut slices, sliced)?);
            let source_limbs =
                sliced.placement_in(&slices).map_err(|_| setup("internal: the slices did not fit the DPUs".into()))?;
            // Kept in MRAM while the converted slices are allocated beside them.
            let _pinned = slices.residency.pin_buffers(&[sliced]);
            let shape = Shape {
                basis: RingBasis::new(slicer.n, &targets)?,
                count: sliced.shape.count,
                representation: Representation::Coefficient,
            };
            let out = slicer
                .allocate_output(&mut slices, &shape)?
                .ok_or_else(|| setup("internal: the converted slices did not fit the DPUs".into()))?;
            let out: &PimBuffer = converted_buffer.insert(slicer.register(&mut slices, shape, out));
            for (j, limb) in out.placement_in(&slices)?.iter().enumerate() {
                slicer.queue_across(&mut slices, limb, j, &source_limbs, across)?;
            }
            slicer.pull(&mut slices, out)
        })();
        // The slicing backend's costs are this backend's, whether or not the step succeeded. Its
        // transfer log is of its own placement, which this backend's cannot price again
        // (`subset::price_transfers`): a hybrid run is emulated in full.
        let spent = OffloadReport { transfers: Vec::new(), ..std::mem::take(&mut slices.report) };
        drop(slices);
        drop((sliced_buffer, converted_buffer));
        state.report.accumulate(&spent);
        state.report.energy_j = self.config.model.energy_joules(state.report.total_s(), self.ranks());
        let whole = reslice(result?, self.n)?;
        self.write_limbs(state, &whole, dst)
    }
}
