//! The recorded dataflow of a program: every [`pimhe_exec::Backend`] operation the
//! [`crate::NearbankBackend`] ran, as a [`Step`] reading and writing buffer versions.
//!
//! Each buffer version has its own [`BufferId`]: an in-place operation (`add_assign`, `mac`,
//! `ntt`) reads the old version and writes a new one, so the trace is in single-assignment
//! form and the [`crate::planner`] can ask of any intermediate result who else reads it.

use serde::Serialize;

/// A buffer version.
pub type BufferId = u64;

/// What a step does, in the vocabulary of the backend's operations.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum StepOp {
    /// Host to device (outside the model: Anaheim's workloads start resident).
    Upload,
    /// Device to host (outside the model, as uploads).
    Download,
    /// A copy.
    Copy,
    /// `a + b` (also `acc += b`).
    Add,
    /// `a - b`.
    Sub,
    /// `-a`.
    Neg,
    /// `a * b`.
    Mul,
    /// `acc + a * b`: inputs (acc, a, b).
    Mac,
    /// `a * c` by one constant per limb (`mul_scalar`, `mul_limb_constants`); the constants
    /// are kept so that the planner can pair the two parts of a ciphertext.
    MulConstant(Vec<u64>),
    /// The tensor of two ciphertext pairs: inputs (a0, a1, b0, b1), three outputs.
    Tensor,
    /// The tensor of a pair with itself: inputs (a0, a1), three outputs.
    TensorSquare,
    /// `offset + sum c_j a_j` over the inputs: the constants per term, and whether there is
    /// an offset.
    ConstantAccumulate {
        /// The constants of every term.
        constants: Vec<Vec<u64>>,
        /// Whether a constant polynomial is added.
        offset: bool,
    },
    /// `(a - b) c`.
    ModDownEpilogue,
    /// The sum of a batch's polynomials (one output polynomial; the step's shape is the
    /// input's).
    Sum,
    /// Forward NTT.
    Ntt,
    /// Inverse NTT.
    Intt,
    /// FastBConv from `from` limbs to the step's limbs.
    BaseConvert {
        /// Input limbs.
        from: usize,
    },
    /// X -> X^k.
    Automorphism,
    /// Some of a buffer's limbs: a view of the same data, no work.
    Restrict,
}

/// One recorded operation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Step {
    /// What it does.
    pub op: StepOp,
    /// Buffer versions read, in the operation's argument order.
    pub inputs: Vec<BufferId>,
    /// Buffer versions written.
    pub outputs: Vec<BufferId>,
    /// Ring degree N.
    pub degree: usize,
    /// Limbs of the outputs (the work's extent per polynomial).
    pub limbs: usize,
    /// Polynomials of each output.
    pub polys: usize,
}

/// A recorded program, in execution order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Trace {
    /// The steps.
    pub steps: Vec<Step>,
}

impl Trace {
    /// How many steps read each buffer version (a version read twice by one step counts twice).
    pub fn readers(&self) -> std::collections::HashMap<BufferId, usize> {
        let mut readers = std::collections::HashMap::new();
        for step in &self.steps {
            for &id in &step.inputs {
                *readers.entry(id).or_insert(0) += 1;
            }
        }
        readers
    }
}
