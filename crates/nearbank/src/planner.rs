//! The fusion planner: a recorded [`Trace`] becomes the [`Program`] Anaheim runs (section V).
//!
//! The GPU keeps the NTT, the base conversion and the automorphism; every element-wise step
//! becomes a PIM instruction of Table II, and sequences of them become one compound
//! instruction where the intermediate results are read by nothing else:
//!
//! | recorded steps | instruction |
//! | --- | --- |
//! | two product chains `x = a_1 p_1 (+ a_2 p_2 ...)`, `y = b_1 p_1 (+ ...)` sharing every `p_i` | PAccum(K) (K = 1: PMult) |
//! | two lone `acc += a p` sharing `p` | PMAC |
//! | `(a - b)`, then scaled by a constant per limb | ModDownEp |
//! | a constant product, then added | CMAC |
//! | `constant_accumulate` of K terms | CAccum(K), two polynomials per instruction |
//! | `tensor`, `tensor_square` | Tensor, TensorSq |
//! | a copy read only by an (inverse) NTT | nothing: the GPU transforms out of place |
//!
//! KeyMult of every key switch (the digits times the key's two halves) is the first row, as
//! are the plaintext products of a linear transform (`c0 = sum x0_i d_i`, `c1 = sum x1_i d_i`);
//! ModDown's tail is the third. The schemes need not know: the patterns are found in the
//! dataflow, once, for every program.

use std::collections::{HashMap, HashSet};

use crate::isa::{GpuKernel, GpuOp, Kernel, Opcode, PimInstruction, Program};
use crate::trace::{BufferId, Step, StepOp, Trace};

/// Plans `trace`: the GPU kernels and PIM instructions in execution order (each fused
/// instruction where its last step was).
///
/// ```
/// use pimhe_nearbank::isa::{Kernel, Opcode};
/// use pimhe_nearbank::planner::plan;
/// use pimhe_nearbank::trace::{Step, StepOp, Trace};
///
/// let step = |op, inputs: &[u64], output| Step { op, inputs: inputs.to_vec(), outputs: vec![output], degree: 16, limbs: 3, polys: 1 };
/// // x = a1 p1 + a2 p2 and y = b1 p1 + b2 p2 (ids: a1 = 0, b1 = 1, p1 = 2, a2 = 3, b2 = 4, p2 = 5).
/// let trace = Trace { steps: vec![
///     step(StepOp::Mul, &[2, 0], 10),
///     step(StepOp::Mul, &[2, 1], 11),
///     step(StepOp::Mac, &[10, 5, 3], 12),
///     step(StepOp::Mac, &[11, 5, 4], 13),
/// ]};
/// let program = plan(&trace);
/// assert_eq!(program.len(), 1);
/// assert!(matches!(program[0], Kernel::Pim(p) if p.opcode == Opcode::PAccum(2)));
/// ```
pub fn plan(trace: &Trace) -> Program {
    Planner::new(trace).run()
}

struct Planner<'t> {
    steps: &'t [Step],
    /// How many steps read each buffer version.
    readers: HashMap<BufferId, usize>,
    /// Steps already part of a fused instruction.
    absorbed: HashSet<usize>,
    /// The instruction each fused group emits, at its last step.
    emit_at: HashMap<usize, Kernel>,
}

impl<'t> Planner<'t> {
    fn new(trace: &'t Trace) -> Self {
        Self { steps: &trace.steps, readers: trace.readers(), absorbed: HashSet::new(), emit_at: HashMap::new() }
    }

    fn run(mut self) -> Program {
        for index in 0..self.steps.len() {
            if !self.absorbed.contains(&index) {
                self.fuse_from(index);
            }
        }
        let mut program = Program::new();
        for index in 0..self.steps.len() {
            if let Some(kernel) = self.emit_at.remove(&index) {
                program.push(kernel);
            } else if !self.absorbed.contains(&index) {
                program.extend(self.single(&self.steps[index]));
            }
        }
        program
    }

    /// Looks for a fused group starting at `index`; records it when found.
    fn fuse_from(&mut self, index: usize) {
        let step = &self.steps[index];
        match &step.op {
            StepOp::Mul => self.fuse_products(index),
            StepOp::Mac => self.fuse_lone_macs(index),
            StepOp::Sub => self.fuse_followed_by(index, |op| matches!(op, StepOp::MulConstant(_)), Opcode::ModDownEp),
            StepOp::MulConstant(_) => self.fuse_followed_by(index, |op| *op == StepOp::Add, Opcode::CMac),
            StepOp::Copy => self.fold_copy_into_transform(index),
            _ => {}
        }
    }

    /// A copy read only by an NTT or inverse NTT is no kernel: the GPU transforms out of place
    /// (key switching copies its input to take it to coefficient form).
    fn fold_copy_into_transform(&mut self, index: usize) {
        if let Some(next) = self.sole_reader(index) {
            if matches!(self.steps[next].op, StepOp::Ntt | StepOp::Intt) {
                self.absorbed.insert(index);
            }
        }
    }

    /// The only reader of `step`'s single output, if it has exactly one.
    fn sole_reader(&self, index: usize) -> Option<usize> {
        let step = &self.steps[index];
        let [output] = step.outputs[..] else { return None };
        if self.readers.get(&output) != Some(&1) {
            return None;
        }
        (index + 1..self.steps.len()).find(|&j| self.steps[j].inputs.contains(&output))
    }

    /// `index` and its sole reader (an `accepts` step on the same shape) as one `opcode`.
    fn fuse_followed_by(&mut self, index: usize, accepts: impl Fn(&StepOp) -> bool, opcode: Opcode) {
        let Some(next) = self.sole_reader(index) else { return };
        let (step, reader) = (&self.steps[index], &self.steps[next]);
        if accepts(&reader.op) && !self.absorbed.contains(&next) && same_extent(step, reader) {
            self.group(&[index, next], pim(opcode, reader, reader.polys));
        }
    }

    /// A product chain from the `Mul` at `index`: the `Mac`s accumulating onto it, each the
    /// sole reader of the previous sum.
    fn chain(&self, index: usize) -> Vec<usize> {
        let mut chain = vec![index];
        while let Some(next) = self.sole_reader(*chain.last().expect("a chain has its start")) {
            let step = &self.steps[next];
            let previous = self.steps[*chain.last().expect("non-empty")].outputs[0];
            if step.op != StepOp::Mac || step.inputs[0] != previous || self.absorbed.contains(&next) {
                break;
            }
            chain.push(next);
        }
        chain
    }

    /// The factors of a product step: both operands of a `Mul`, the last two of a `Mac`.
    fn factors(&self, index: usize) -> [BufferId; 2] {
        let inputs = &self.steps[index].inputs;
        [inputs[inputs.len() - 2], inputs[inputs.len() - 1]]
    }

    /// Two product chains sharing a factor at every position, as PAccum(K) (PMult for K = 1);
    /// a chain without a partner stays Mult and MACs.
    fn fuse_products(&mut self, index: usize) {
        let chain = self.chain(index);
        let partner = (index + 1..self.steps.len())
            .filter(|&j| self.steps[j].op == StepOp::Mul && !self.absorbed.contains(&j))
            .map(|j| self.chain(j))
            .find(|other| {
                other.len() == chain.len()
                    && chain.iter().zip(other).all(|(&a, &b)| {
                        let (x, y) = (self.factors(a), self.factors(b));
                        same_extent(&self.steps[a], &self.steps[b]) && x.iter().any(|f| y.contains(f))
                    })
            });
        let Some(partner) = partner else { return };
        let last = *chain.iter().chain(&partner).max().expect("non-empty chains");
        let step = &self.steps[last];
        let opcode = if chain.len() == 1 { Opcode::PMult } else { Opcode::PAccum(chain.len()) };
        let members: Vec<usize> = chain.iter().chain(&partner).copied().collect();
        self.group(&members, pim(opcode, step, step.polys));
    }

    /// A `Mac` onto an accumulator that no product chain started: paired with the next such
    /// `Mac` sharing a factor as PMAC.
    fn fuse_lone_macs(&mut self, index: usize) {
        let factors = self.factors(index);
        let partner = (index + 1..self.steps.len()).find(|&j| {
            let other = &self.steps[j];
            other.op == StepOp::Mac
                && !self.absorbed.contains(&j)
                && same_extent(&self.steps[index], other)
                && self.factors(j).iter().any(|f| factors.contains(f))
                && !other.inputs.contains(&self.steps[index].outputs[0])
        });
        if let Some(partner) = partner {
            let step = &self.steps[partner];
            self.group(&[index, partner], pim(Opcode::PMac, step, step.polys));
        }
    }

    fn group(&mut self, members: &[usize], kernel: Kernel) {
        let last = *members.iter().max().expect("a group has members");
        self.absorbed.extend(members.iter().copied());
        self.emit_at.insert(last, kernel);
    }

    /// The kernel of a step no fusion took.
    fn single(&self, step: &Step) -> Option<Kernel> {
        let gpu = |op| Some(Kernel::Gpu(GpuKernel { op, degree: step.degree, limbs: step.limbs, polys: step.polys }));
        let on_pim = |opcode| Some(pim(opcode, step, step.polys));
        match &step.op {
            StepOp::Upload | StepOp::Download | StepOp::Restrict => None,
            StepOp::Ntt => gpu(GpuOp::Ntt),
            StepOp::Intt => gpu(GpuOp::Intt),
            StepOp::BaseConvert { from } => gpu(GpuOp::BaseConvert { from: *from }),
            StepOp::Automorphism => gpu(GpuOp::Automorphism),
            StepOp::Copy => on_pim(Opcode::Move),
            StepOp::Add => on_pim(Opcode::Add),
            StepOp::Sub => on_pim(Opcode::Sub),
            StepOp::Neg => on_pim(Opcode::Neg),
            StepOp::Mul => on_pim(Opcode::Mult),
            StepOp::Mac => on_pim(Opcode::Mac),
            StepOp::MulConstant(_) => on_pim(Opcode::CMult),
            StepOp::Tensor => on_pim(Opcode::Tensor),
            StepOp::TensorSquare => on_pim(Opcode::TensorSq),
            StepOp::ModDownEpilogue => on_pim(Opcode::ModDownEp),
            // CAccum writes two polynomials sharing the constants: a batch's polynomials pair up.
            StepOp::ConstantAccumulate { constants, .. } => {
                Some(pim(Opcode::CAccum(constants.len()), step, step.polys.div_ceil(2)))
            }
            // count - 1 additions of one polynomial each.
            StepOp::Sum => (step.polys > 1).then(|| pim(Opcode::Add, step, step.polys - 1)),
        }
    }
}

fn pim(opcode: Opcode, step: &Step, instances: usize) -> Kernel {
    Kernel::Pim(PimInstruction { opcode, degree: step.degree, limbs: step.limbs, instances })
}

/// Steps that can be one instruction: the same degree, limbs and polynomial count.
fn same_extent(a: &Step, b: &Step) -> bool {
    (a.degree, a.limbs, a.polys) == (b.degree, b.limbs, b.polys)
}
