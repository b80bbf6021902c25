//! Batches larger than MRAM: operations stream them through the DPUs in rounds.
//!
//! A batch that does not fit in the DPUs' MRAM even with every other buffer evicted
//! ([`super::residency`]) stays on the host (`Storage::Streamed`). Each operation on it takes the
//! largest number of polynomials whose operands and outputs fit at once (evicting what is in the
//! way), and for each round pushes those polynomials of every operand, runs the kernels,
//! and pulls the outputs back: one push, one launch and one retrieval per round, all counted in
//! the [`super::OffloadReport`]. Operands of one polynomial (a key, a plaintext) are broadcast
//! and pushed whole with every round.
//!
//! Data then crosses the bus around every operation, as the per-operation offload of seed 001
//! does, so a caller with a pipeline over a huge batch does better to split the batch itself:
//! each piece then stays resident through the whole pipeline.

use pimhe_exec::{ExecError, Shape};
use pimhe_ring::PolyBatch;

use super::buffer::{PimBuffer, Storage};
use super::PimBackend;

impl PimBackend {
    /// Runs `op` over `operands` in rounds and returns its outputs, each round's parts joined
    /// in order (as many polynomials as `operands[0]` for an element-wise operation). `op`
    /// receives one round's operands, resident, in the same order, and returns that round's
    /// outputs; `outputs` says how many new buffers it allocates (an in-place operation returns
    /// its first operand and allocates none).
    pub(super) fn in_rounds(
        &self,
        operands: &[&PimBuffer],
        outputs: usize,
        mut op: impl FnMut(Vec<PimBuffer>) -> pimhe_exec::Result<Vec<PimBuffer>>,
    ) -> pimhe_exec::Result<Vec<PolyBatch>> {
        let count = operands[0].shape.count;
        let per_round = self.round_size(operands, outputs)?;
        let hosts = {
            let mut state = self.lock();
            operands.iter().map(|b| self.pull(&mut state, b)).collect::<pimhe_exec::Result<Vec<_>>>()?
        };
        let mut parts: Vec<Vec<PolyBatch>> = Vec::new();
        // A batch of no polynomials (round size 0) runs one empty round, so its outputs exist.
        let starts: Vec<usize> = if count == 0 { vec![0] } else { (0..count).step_by(per_round).collect() };
        for first in starts {
            let len = per_round.min(count - first);
            let round = hosts
                .iter()
                .map(|host| {
                    let part = if cut(host.count(), count) { polynomials(host, first, len)? } else { host.clone() };
                    self.upload_resident(part)
                })
                .collect::<pimhe_exec::Result<Vec<_>>>()?;
            // The round's parts stay in MRAM while `op` allocates its outputs.
            let _parts = self.pin(&round);
            let results = op(round)?;
            let mut state = self.lock();
            parts.resize_with(results.len(), Vec::new);
            for (index, result) in results.iter().enumerate() {
                parts[index].push(self.pull(&mut state, result)?);
            }
            state.report.rounds += 1;
        }
        Ok(parts.iter().map(|p| PolyBatch::concat(p)).collect::<Result<Vec<_>, _>>()?)
    }

    /// [`PimBackend::in_rounds`] for an operation with one new output, which `op` returns or
    /// reports as not fitting (`None`).
    pub(super) fn single_in_rounds(
        &self,
        operands: &[&PimBuffer],
        op: impl Fn(&[PimBuffer]) -> pimhe_exec::Result<Option<PimBuffer>>,
    ) -> pimhe_exec::Result<PimBuffer> {
        let mut outputs = self.in_rounds(operands, 1, |round| {
            let out = op(&round)?.ok_or_else(|| internal("a round's output did not fit after all"))?;
            Ok(vec![out])
        })?;
        Ok(self.on_host(outputs.remove(0), Storage::Streamed))
    }

    /// The most polynomials per round such that every operand's part and `outputs` new buffers
    /// of `operands[0]`'s shape fit in the free MRAM at once, after evicting the least recently
    /// used buffers until a round of the fewest polynomials fits.
    fn round_size(&self, operands: &[&PimBuffer], outputs: usize) -> pimhe_exec::Result<usize> {
        let count = operands[0].shape.count;
        let round = |polys: usize| {
            let mut shapes: Vec<Shape> = operands
                .iter()
                .map(|b| Shape {
                    count: if cut(b.shape.count, count) { polys } else { b.shape.count },
                    ..b.shape.clone()
                })
                .collect();
            shapes.extend((0..outputs).map(|_| Shape { count: polys, ..operands[0].shape.clone() }));
            shapes
        };
        let fits = |polys: usize| self.fits(&mut self.lock(), &round(polys).iter().collect::<Vec<_>>());
        let make_room = |polys: usize| self.make_room(&mut self.lock(), &round(polys).iter().collect::<Vec<_>>());
        // One polynomial is replicated on every DPU of its group (see `placement::split`), so
        // rounds of one may cost more MRAM than rounds of two (not on groups of one DPU); from
        // two on, larger rounds need more.
        let smallest = count.min(2);
        if !make_room(smallest)? {
            if smallest == 2 && make_room(1)? {
                return Ok(1);
            }
            let shape = &operands[0].shape;
            return Err(ExecError::Capacity(format!(
                "upmem rounds: not even one polynomial of N={} over {} primes fits in MRAM with the {} other \
                 operands of this operation, even with every other buffer evicted; use more DPUs or more MRAM",
                shape.basis.degree(),
                shape.basis.len(),
                operands.len() - 1 + outputs
            )));
        }
        // Largest fitting count by bisection: fits(low) holds, fits(high + 1) does not.
        let (mut low, mut high) = (smallest, count);
        while low < high {
            let middle = low + (high - low).div_ceil(2);
            if fits(middle) {
                low = middle;
            } else {
                high = middle - 1;
            }
        }
        Ok(low)
    }

    /// Pushes a round's part, which [`PimBackend::round_size`] made sure fits.
    fn upload_resident(&self, part: PolyBatch) -> pimhe_exec::Result<PimBuffer> {
        let buffer = self.push(&mut self.lock(), part)?;
        match buffer.storage {
            Storage::Device(_) => Ok(buffer),
            Storage::Host(_) | Storage::Streamed(_) => Err(internal("a round's part did not fit after all")),
        }
    }
}

/// Whether an operand of `polys` polynomials is cut into the rounds of a batch of `count`: one of
/// the batch's count is; a broadcast one (a single polynomial) goes whole with every round,
/// except into the one empty round of an empty batch, whose kernels read none of it.
fn cut(polys: usize, count: usize) -> bool {
    polys == count || count == 0
}

/// Polynomials `first .. first + len` of `batch`.
fn polynomials(batch: &PolyBatch, first: usize, len: usize) -> pimhe_exec::Result<PolyBatch> {
    Ok(batch.select(&(first..first + len).collect::<Vec<_>>())?)
}

fn internal(message: &str) -> ExecError {
    ExecError::Setup(format!("internal: {message}"))
}
