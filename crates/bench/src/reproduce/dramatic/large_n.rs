//! Section 7.2's rows beyond what every row gets: their batch priced pass by pass, as it must
//! stream through the DPUs one prime at a time, and their NTT at N = 2^16 checked bit for bit
//! against the CPU backend on emulated DPUs.
//!
//! The subset emulation ([`crate::measure::kernels::pim::run_subset`]) prices a row's copies as
//! one upload and one download of every prime's bytes. Section 7.2's 4096 polynomials of 42
//! primes at N = 2^16 are 42 GiB, more than 256 or 509 DPUs' MRAM holds, so each prime's pass
//! copies its own sub-polynomials in and out: 42 copies each way, each with its own latency.
//! [`price_per_pass`] prices them so.

use std::sync::Arc;

use pimhe_exec::{Backend, CpuBackend};
use pimhe_math::Sampler;
use pimhe_pim::runtime::placement::{Mode, Plan};
use pimhe_pim::runtime::subset::{pull_bytes_per_dpu, push_bytes_per_dpu};
use pimhe_pim::runtime::PimBackend;
use pimhe_ring::{Representation, RingBasis};

use crate::error::{BenchError, Result};
use crate::measure::inputs::random_batch;
use crate::measure::kernels::pim::{operand_polys, Kernel};
use crate::measure::kernels::Workload;
use crate::target::upmem::{PimOutcome, PimSettings};

/// Polynomials of each checked prime that [`check_against_cpu`] transforms.
const CHECKED_POLYNOMIALS: usize = 2;

/// `outcome` (a sequential row's subset emulation) with its copies priced one prime's pass at
/// a time: an upload and a download of that prime's sub-polynomials per pass, the total and
/// energy following; the emulation note says by how much that differs from one copy each way.
pub(super) fn price_per_pass(
    mut outcome: PimOutcome,
    workload: &Workload,
    settings: &PimSettings,
) -> Result<PimOutcome> {
    let primes = workload.primes();
    let plan = Plan::new(settings.mode, settings.dpus, primes).map_err(BenchError::usage)?;
    let count = operand_polys(Kernel::of(workload.op)?, workload.batch);
    let model = settings.config(settings.dpus, settings.mode).model;
    let n = workload.n();
    let (mut transfer_s, mut retrieve_s) = (0.0, 0.0);
    for slot in 0..primes {
        transfer_s += model.transfer_seconds(&push_bytes_per_dpu(&plan, &[slot], count, n));
        retrieve_s += model.retrieve_seconds(&pull_bytes_per_dpu(&plan, &[slot], count, n));
    }
    let extra_s = transfer_s + retrieve_s - outcome.transfer_s - outcome.retrieve_s;
    outcome.transfer_s = transfer_s;
    outcome.retrieve_s = retrieve_s;
    outcome.total_s = transfer_s + outcome.compute_s + retrieve_s;
    outcome.energy_j = model.energy_joules(outcome.total_s, settings.ranks());
    outcome.sources.transfer_s =
        format!("model, per prime's pass: {primes} uploads and {primes} downloads of one prime's sub-polynomials");
    outcome.emulation.push_str(&format!(
        "; copies priced per prime's pass ({primes} each way, {:.1} ms more than one copy each way)",
        extra_s * 1e3
    ));
    Ok(outcome)
}

/// Transforms [`CHECKED_POLYNOMIALS`] random polynomials at the first and the last of
/// `workload`'s primes on two emulated DPUs with `settings`' kernel, and compares them with the
/// CPU backend's NTT; an error if any coefficient differs. Returns the note the row prints.
pub(super) fn check_against_cpu(workload: &Workload, settings: &PimSettings) -> Result<String> {
    let primes = workload.basis.primes();
    let checked = [primes[0], primes[primes.len() - 1]];
    let basis: Arc<RingBasis> = RingBasis::new(workload.n(), &checked)?;
    let mut sampler = Sampler::from_seed_u64(workload.seed);
    let input = random_batch(&basis, CHECKED_POLYNOMIALS, Representation::Coefficient, &mut sampler)?;
    let mut expected = input.clone();
    CpuBackend::new(Some(1))?.ntt(&mut expected)?;
    let pim = PimBackend::new(settings.config(checked.len(), Mode::Parallel), workload.n(), &checked)?;
    let mut buffer = pim.upload(input)?;
    pim.ntt(&mut buffer)?;
    if pim.download(&buffer)? != expected {
        return Err(BenchError::Failed(format!(
            "the emulated NTT at N = {} (primes {checked:?}) differs from the CPU backend's",
            workload.n()
        )));
    }
    Ok(format!(
        "; NTT checked: {CHECKED_POLYNOMIALS} polynomials at primes {} and {} on emulated DPUs bit-identical to the \
         CPU backend's",
        checked[0], checked[1]
    ))
}
