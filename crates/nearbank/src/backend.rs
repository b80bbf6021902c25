//! [`NearbankBackend`]: a [`Backend`] that computes on the host CPU and records, as a
//! [`Trace`], what a GPU + near-bank PIM system would run.
//!
//! Every result comes from the [`CpuBackend`]'s own operation, so ciphertexts are the CPU's bit
//! for bit. The composite operations of key switching (`key_switch`, `mod_up`,
//! `key_switch_decomposed`) are left to the trait's composed defaults, so they reach this
//! backend as the element-wise steps they consist of, and the [`crate::planner`] fuses those
//! as Anaheim does (section V). The steps the GPU keeps whole (base conversion, ModDown's
//! transforms) are recorded as the kernels they are: ModDown as iNTT, FastBConv and NTT on the
//! GPU, then the subtraction and scaling the planner turns into ModDownEp.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use pimhe_exec::{Backend, CpuBackend, Result, Shape};
use pimhe_math::Modulus;
use pimhe_ring::{PolyBatch, Representation, RingBasis};

use crate::trace::{BufferId, Step, StepOp, Trace};

/// A batch resident on the modeled GPU's DRAM: the host copy the CPU computes on, and the
/// version id the trace knows it by.
pub struct NearbankBuffer {
    batch: PolyBatch,
    id: BufferId,
}

/// Computes on the host, records the GPU + PIM program (see the module documentation).
///
/// ```
/// use pimhe_exec::Backend;
/// use pimhe_nearbank::NearbankBackend;
/// use pimhe_ring::{PolyBatch, Representation, RingBasis};
///
/// let backend = NearbankBackend::new(Some(1)).unwrap();
/// let basis = RingBasis::new(16, &[97, 193]).unwrap();
/// let a = backend.upload(PolyBatch::zeros(&basis, 2, Representation::Ntt)).unwrap();
/// let [_x, _y, _z] = backend.tensor_square(&a, &a).unwrap();
/// let trace = backend.take_trace();
/// assert_eq!(trace.steps.len(), 2); // the upload and the TensorSq
/// ```
pub struct NearbankBackend {
    cpu: CpuBackend,
    trace: Mutex<Trace>,
    next_id: AtomicU64,
}

impl NearbankBackend {
    /// A backend computing with a CPU backend of `threads` workers (all cores for `None`).
    pub fn new(threads: Option<usize>) -> Result<Self> {
        Ok(Self { cpu: CpuBackend::new(threads)?, trace: Mutex::new(Trace::default()), next_id: AtomicU64::new(0) })
    }

    /// The steps recorded since the last call (or since creation), leaving the record empty.
    pub fn take_trace(&self) -> Trace {
        std::mem::take(&mut *self.lock())
    }

    /// A copy of the steps recorded since the last [`NearbankBackend::take_trace`], which keeps
    /// recording.
    pub fn trace(&self) -> Trace {
        self.lock().clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Trace> {
        // A panic while recording leaves a shorter trace, never an inconsistent one.
        self.trace.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn fresh(&self) -> BufferId {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    /// Records `op` reading `inputs` and writing `outputs` fresh versions shaped as `shape`;
    /// returns their ids.
    fn record(&self, op: StepOp, inputs: &[BufferId], outputs: usize, shape: &Shape) -> Vec<BufferId> {
        let outputs: Vec<BufferId> = (0..outputs).map(|_| self.fresh()).collect();
        self.lock().steps.push(Step {
            op,
            inputs: inputs.to_vec(),
            outputs: outputs.clone(),
            degree: shape.basis.degree(),
            limbs: shape.basis.len(),
            polys: shape.count,
        });
        outputs
    }

    /// Wraps a CPU result as the one output of `op` on `inputs`.
    fn output(&self, op: StepOp, inputs: &[&NearbankBuffer], batch: PolyBatch) -> NearbankBuffer {
        let ids: Vec<BufferId> = inputs.iter().map(|b| b.id).collect();
        let id = self.record(op, &ids, 1, &Shape::of(&batch))[0];
        NearbankBuffer { batch, id }
    }

    /// Records an in-place `op` on `acc` (reading its old version and `inputs`) and gives it
    /// the new version's id.
    fn update(&self, op: StepOp, acc: &mut NearbankBuffer, inputs: &[&NearbankBuffer]) {
        let ids: Vec<BufferId> = std::iter::once(acc.id).chain(inputs.iter().map(|b| b.id)).collect();
        acc.id = self.record(op, &ids, 1, &Shape::of(&acc.batch))[0];
    }

    /// Records a division by the last `count` primes of `a` (ModDown, or the division by the
    /// last prime) as the GPU and element-wise steps it consists of: the dropped limbs to
    /// coefficient form, BGV's scaling by t^-1 there, FastBConv to the kept primes and back to
    /// `a`'s form, BGV's scaling of the converted residue by t, then `(a - delta) P^-1`.
    /// Returns the result's id.
    fn record_mod_down(
        &self,
        a: &NearbankBuffer,
        count: usize,
        plain_modulus: Option<Modulus>,
        out: &PolyBatch,
    ) -> BufferId {
        let input = Shape::of(&a.batch);
        let kept = Shape::of(out);
        let ntt = input.representation == Representation::Ntt;
        let dropped_basis = input.basis.select(&(kept.basis.len()..input.basis.len()).collect::<Vec<_>>());
        let dropped = Shape { basis: dropped_basis.expect("the dropped primes are a's"), ..input.clone() };
        let mut p_part = self.record(StepOp::Restrict, &[a.id], 1, &dropped)[0];
        if ntt {
            p_part = self.record(StepOp::Intt, &[p_part], 1, &dropped)[0];
        }
        let t_constants = |shape: &Shape| vec![plain_modulus.map_or(1, |t| u64::from(t.value())); shape.basis.len()];
        if plain_modulus.is_some() {
            p_part = self.record(StepOp::MulConstant(t_constants(&dropped)), &[p_part], 1, &dropped)[0];
        }
        let mut delta = self.record(StepOp::BaseConvert { from: count }, &[p_part], 1, &kept)[0];
        if ntt {
            delta = self.record(StepOp::Ntt, &[delta], 1, &kept)[0];
        }
        if plain_modulus.is_some() {
            delta = self.record(StepOp::MulConstant(t_constants(&kept)), &[delta], 1, &kept)[0];
        }
        let a_kept = self.record(StepOp::Restrict, &[a.id], 1, &kept)[0];
        let difference = self.record(StepOp::Sub, &[a_kept, delta], 1, &kept)[0];
        // The constants of P^-1 do not matter to the model; one placeholder per limb.
        self.record(StepOp::MulConstant(vec![0; kept.basis.len()]), &[difference], 1, &kept)[0]
    }
}

impl Backend for NearbankBackend {
    type Buffer = NearbankBuffer;

    fn name(&self) -> &str {
        "nearbank"
    }

    fn threads(&self) -> usize {
        self.cpu.threads()
    }

    fn upload(&self, batch: PolyBatch) -> Result<NearbankBuffer> {
        let batch = self.cpu.upload(batch)?;
        Ok(self.output(StepOp::Upload, &[], batch))
    }

    fn download(&self, buffer: &NearbankBuffer) -> Result<PolyBatch> {
        self.record(StepOp::Download, &[buffer.id], 0, &Shape::of(&buffer.batch));
        self.cpu.download(&buffer.batch)
    }

    fn shape(&self, buffer: &NearbankBuffer) -> Shape {
        Shape::of(&buffer.batch)
    }

    fn copy(&self, buffer: &NearbankBuffer) -> Result<NearbankBuffer> {
        Ok(self.output(StepOp::Copy, &[buffer], self.cpu.copy(&buffer.batch)?))
    }

    fn zeroize(&self, buffer: &mut NearbankBuffer) {
        self.cpu.zeroize(&mut buffer.batch);
    }

    fn add(&self, a: &NearbankBuffer, b: &NearbankBuffer) -> Result<NearbankBuffer> {
        Ok(self.output(StepOp::Add, &[a, b], self.cpu.add(&a.batch, &b.batch)?))
    }

    fn add_assign(&self, acc: &mut NearbankBuffer, b: &NearbankBuffer) -> Result<()> {
        self.cpu.add_assign(&mut acc.batch, &b.batch)?;
        self.update(StepOp::Add, acc, &[b]);
        Ok(())
    }

    fn sub(&self, a: &NearbankBuffer, b: &NearbankBuffer) -> Result<NearbankBuffer> {
        Ok(self.output(StepOp::Sub, &[a, b], self.cpu.sub(&a.batch, &b.batch)?))
    }

    fn neg(&self, a: &NearbankBuffer) -> Result<NearbankBuffer> {
        Ok(self.output(StepOp::Neg, &[a], self.cpu.neg(&a.batch)?))
    }

    fn mul(&self, a: &NearbankBuffer, b: &NearbankBuffer) -> Result<NearbankBuffer> {
        Ok(self.output(StepOp::Mul, &[a, b], self.cpu.mul(&a.batch, &b.batch)?))
    }

    fn mac(&self, acc: &mut NearbankBuffer, a: &NearbankBuffer, b: &NearbankBuffer) -> Result<()> {
        self.cpu.mac(&mut acc.batch, &a.batch, &b.batch)?;
        self.update(StepOp::Mac, acc, &[a, b]);
        Ok(())
    }

    fn mul_scalar(&self, a: &NearbankBuffer, c: u64) -> Result<NearbankBuffer> {
        let constants = vec![c; a.batch.basis().len()];
        Ok(self.output(StepOp::MulConstant(constants), &[a], self.cpu.mul_scalar(&a.batch, c)?))
    }

    fn mul_limb_constants(&self, a: &NearbankBuffer, constants: &[u64]) -> Result<NearbankBuffer> {
        let out = self.cpu.mul_limb_constants(&a.batch, constants)?;
        Ok(self.output(StepOp::MulConstant(constants.to_vec()), &[a], out))
    }

    fn tensor(
        &self,
        a0: &NearbankBuffer,
        a1: &NearbankBuffer,
        b0: &NearbankBuffer,
        b1: &NearbankBuffer,
    ) -> Result<[NearbankBuffer; 3]> {
        let outputs = self.cpu.tensor(&a0.batch, &a1.batch, &b0.batch, &b1.batch)?;
        Ok(self.three(StepOp::Tensor, &[a0.id, a1.id, b0.id, b1.id], outputs))
    }

    fn tensor_square(&self, a0: &NearbankBuffer, a1: &NearbankBuffer) -> Result<[NearbankBuffer; 3]> {
        let outputs = self.cpu.tensor_square(&a0.batch, &a1.batch)?;
        Ok(self.three(StepOp::TensorSquare, &[a0.id, a1.id], outputs))
    }

    fn constant_accumulate(
        &self,
        terms: &[(&NearbankBuffer, &[u64])],
        offset: Option<&[u64]>,
    ) -> Result<NearbankBuffer> {
        let host: Vec<(&PolyBatch, &[u64])> = terms.iter().map(|&(b, c)| (&b.batch, c)).collect();
        let out = self.cpu.constant_accumulate(&host, offset)?;
        let op = StepOp::ConstantAccumulate {
            constants: terms.iter().map(|&(_, c)| c.to_vec()).collect(),
            offset: offset.is_some(),
        };
        let inputs: Vec<&NearbankBuffer> = terms.iter().map(|&(b, _)| b).collect();
        Ok(self.output(op, &inputs, out))
    }

    fn mod_down_epilogue(&self, a: &NearbankBuffer, b: &NearbankBuffer, constants: &[u64]) -> Result<NearbankBuffer> {
        let out = self.cpu.mod_down_epilogue(&a.batch, &b.batch, constants)?;
        Ok(self.output(StepOp::ModDownEpilogue, &[a, b], out))
    }

    fn sum(&self, a: &NearbankBuffer) -> Result<NearbankBuffer> {
        let batch = self.cpu.sum(&a.batch)?;
        // Recorded on the input's shape: count - 1 additions of one polynomial.
        let id = self.record(StepOp::Sum, &[a.id], 1, &Shape::of(&a.batch))[0];
        Ok(NearbankBuffer { batch, id })
    }

    fn ntt(&self, a: &mut NearbankBuffer) -> Result<()> {
        self.cpu.ntt(&mut a.batch)?;
        self.update(StepOp::Ntt, a, &[]);
        Ok(())
    }

    fn intt(&self, a: &mut NearbankBuffer) -> Result<()> {
        self.cpu.intt(&mut a.batch)?;
        self.update(StepOp::Intt, a, &[]);
        Ok(())
    }

    fn restrict(&self, a: &NearbankBuffer, target: &Arc<RingBasis>) -> Result<NearbankBuffer> {
        Ok(self.output(StepOp::Restrict, &[a], self.cpu.restrict(&a.batch, target)?))
    }

    fn base_convert(&self, a: &NearbankBuffer, target: &Arc<RingBasis>) -> Result<NearbankBuffer> {
        let out = self.cpu.base_convert(&a.batch, target)?;
        Ok(self.output(StepOp::BaseConvert { from: a.batch.basis().len() }, &[a], out))
    }

    fn base_convert_ntt(
        &self,
        a: &NearbankBuffer,
        a_ntt: &NearbankBuffer,
        target: &Arc<RingBasis>,
    ) -> Result<NearbankBuffer> {
        let batch = self.cpu.base_convert_ntt(&a.batch, &a_ntt.batch, target)?;
        // Only the primes a lacks are converted and transformed; a's own limbs are a_ntt's.
        let new_primes: Vec<usize> =
            (0..target.len()).filter(|&i| !a.batch.basis().primes().contains(&target.primes()[i])).collect();
        let mut id = a_ntt.id;
        if !new_primes.is_empty() {
            let shape = Shape { basis: target.select(&new_primes)?, ..Shape::of(&batch) };
            let converted = self.record(StepOp::BaseConvert { from: a.batch.basis().len() }, &[a.id], 1, &shape)[0];
            let transformed = self.record(StepOp::Ntt, &[converted], 1, &shape)[0];
            // The extended digit: a_ntt's limbs beside the new ones, a view of both.
            id = self.record(StepOp::Restrict, &[a_ntt.id, transformed], 1, &Shape::of(&batch))[0];
        }
        Ok(NearbankBuffer { batch, id })
    }

    fn mod_down_last(&self, a: &NearbankBuffer, plain_modulus: Option<Modulus>) -> Result<NearbankBuffer> {
        let batch = self.cpu.mod_down_last(&a.batch, plain_modulus)?;
        let id = self.record_mod_down(a, 1, plain_modulus, &batch);
        Ok(NearbankBuffer { batch, id })
    }

    fn mod_down(&self, a: &NearbankBuffer, count: usize, plain_modulus: Option<Modulus>) -> Result<NearbankBuffer> {
        let batch = self.cpu.mod_down(&a.batch, count, plain_modulus)?;
        let id = self.record_mod_down(a, count, plain_modulus, &batch);
        Ok(NearbankBuffer { batch, id })
    }

    fn automorphism(&self, a: &NearbankBuffer, galois_element: usize) -> Result<NearbankBuffer> {
        Ok(self.output(StepOp::Automorphism, &[a], self.cpu.automorphism(&a.batch, galois_element)?))
    }
}

impl NearbankBackend {
    fn three(&self, op: StepOp, inputs: &[BufferId], [x, y, z]: [PolyBatch; 3]) -> [NearbankBuffer; 3] {
        let ids = self.record(op, inputs, 3, &Shape::of(&x));
        [
            NearbankBuffer { batch: x, id: ids[0] },
            NearbankBuffer { batch: y, id: ids[1] },
            NearbankBuffer { batch: z, id: ids[2] },
        ]
    }
}
