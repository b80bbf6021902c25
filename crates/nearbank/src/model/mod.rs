//! What a program costs on the GPU + near-bank PIM systems of Anaheim's Table III.
//!
//! The one model here is `anaheim-nb` ([`MODEL_NAME`], [`MODEL_VERSION`]): named, versioned
//! constants with their sources in doc comments, and pure functions.
//!
//! - [`system`]: the three configurations of Table III ([`System::all`]) and the energy
//!   constants;
//! - [`timing`]: DRAM timing per memory standard (HBM2E, GDDR6X);
//! - [`layout`]: column partitioning, row / column groups and PolyGroups (section VI-B);
//! - [`pim`]: the DRAM-command schedule of every PIM instruction (Alg. 1 generalised) -> time,
//!   commands per bank, energy;
//! - [`gpu`]: a roofline per GPU kernel;
//! - here: [`Model`] (a system, a buffer size B, a layout), [`Model::price`] for a whole
//!   [`Program`](crate::isa::Program) against its all-GPU baseline, and [`microbenchmark`]
//!   (Fig. 9).
//!
//! Every modeled number must be shown with [`Model::label`], e.g.
//! `anaheim-nb@1 a100-nearbank B=16 (modeled)`.
//!
//! ```
//! use pimhe_nearbank::isa::{GpuKernel, GpuOp, Kernel, Opcode, PimInstruction};
//! use pimhe_nearbank::model::{Model, System};
//!
//! let model = Model::new(System::named("a100-nearbank")?, None)?; // Table III's B = 16
//! assert_eq!(model.label(), "anaheim-nb@1 a100-nearbank B=16 (modeled)");
//!
//! // KeyMult of one ciphertext: PAccum(4) on 40 limbs of N = 2^16, between two INTTs.
//! let n = 1 << 16;
//! let keymult = PimInstruction { opcode: Opcode::PAccum(4), degree: n, limbs: 40, instances: 1 };
//! let pim = model.pim(&keymult)?;
//! assert_eq!(pim.chunk_granularity, 16 / 6);
//!
//! let intt = GpuKernel { op: GpuOp::Intt, degree: n, limbs: 40, polys: 2 };
//! let program = vec![Kernel::Gpu(intt), Kernel::Pim(keymult), Kernel::Gpu(intt)];
//! let cost = model.price(&program);
//! assert_eq!((cost.pim_instructions, cost.gpu_kernels, cost.gpu_fallbacks), (1, 2, 0));
//! assert!(cost.speedup() > 1.0 && cost.energy_ratio() > 1.0);
//! // Tensor needs 5 buffer entries per chunk position: unsupported at B = 4.
//! let small = Model::new(System::named("a100-nearbank")?, Some(4))?;
//! let tensor = PimInstruction { opcode: Opcode::Tensor, ..keymult };
//! assert!(small.pim(&tensor).is_err());
//! # Ok::<(), pimhe_nearbank::model::ModelError>(())
//! ```

pub mod gpu;
pub mod layout;
pub mod pim;
pub mod system;
pub mod timing;

use serde::{Deserialize, Serialize};

pub use gpu::GpuCost;
pub use layout::DataLayout;
pub use pim::{CommandCounts, PimCost};
pub use system::System;

use crate::isa::{without_pim, GpuKernel, GpuOp, Kernel, Opcode, PimInstruction};

/// Name of the Anaheim GPU + near-bank PIM cost model.
pub const MODEL_NAME: &str = "anaheim-nb";

/// Version of [`MODEL_NAME`]'s constants and formulas; bumped whenever any of them changes.
///
/// - `1`: Table III systems; HBM2E / GDDR6X timings from DRAMsim3 / Ramulator 2.0 presets;
///   generalised Alg. 1 schedule; roofline GPU.
pub const MODEL_VERSION: &str = "1";

/// Largest data buffer the model accepts (entries of 224 bits; Fig. 9 sweeps 4..64).
pub const MAX_BUFFER_ENTRIES: usize = 1024;

/// What went wrong.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    /// No system of that name.
    #[error("unknown system `{name}`; allowed: {allowed}")]
    UnknownSystem {
        /// The name given.
        name: String,
        /// The allowed names.
        allowed: String,
    },
    /// Buffer size out of range.
    #[error("buffer_entries = {given} is out of range; allowed: 1..={max}")]
    BufferEntries {
        /// The size given.
        given: usize,
        /// The largest allowed.
        max: usize,
    },
    /// The data buffer is too small for the instruction's chunk granularity G >= 1.
    #[error("{opcode} is unsupported with B = {buffer_entries} buffer entries: it needs at least {needed} (G = floor(B / {needed}) must be >= 1)")]
    Unsupported {
        /// The instruction's name (Table II).
        opcode: String,
        /// B of the model.
        buffer_entries: usize,
        /// Entries per chunk position the instruction needs.
        needed: usize,
    },
    /// A shape the model cannot place.
    #[error("invalid shape: {0}")]
    InvalidShape(String),
}

/// A system with a buffer size and a data layout.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Model {
    /// The configuration.
    pub system: System,
    /// Data buffer entries B.
    pub buffer_entries: usize,
    /// Data layout (column partitioning unless changed).
    pub layout: DataLayout,
}

/// Time and energy of one kind of kernel over a program.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KindCost {
    /// Opcode name (Table II) or GPU op name.
    pub kind: String,
    /// Kernels of this kind.
    pub count: usize,
    /// Seconds with PIM (a PIM instruction's PIM time, or its GPU fallback's time).
    pub seconds: f64,
    /// Seconds in the all-GPU baseline.
    pub without_pim_seconds: f64,
}

/// Cost of a program with PIM, and of the same program all on the GPU.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProgramCost {
    /// GPU kernel time (fallbacks included, launch overheads included).
    pub gpu_s: f64,
    /// PIM instruction time.
    pub pim_s: f64,
    /// GPU <-> PIM transition time ([`gpu::GPU_LAUNCH_S`] per switch, the first PIM kernel of a
    /// program included: PIM kernels are issued from the GPU's stream).
    pub transition_s: f64,
    /// Always 0: Anaheim never overlaps GPU and PIM kernels (section V-C).
    pub overlap_s: f64,
    /// `gpu_s + pim_s + transition_s - overlap_s`.
    pub total_s: f64,
    /// Energy with PIM.
    pub energy_j: f64,
    /// `energy_j x total_s`.
    pub edp_js: f64,
    /// Time of [`without_pim`]'s program.
    pub without_pim_s: f64,
    /// Its energy.
    pub without_pim_energy_j: f64,
    /// Its energy-delay product.
    pub without_pim_edp_js: f64,
    /// PIM instructions run on PIM.
    pub pim_instructions: usize,
    /// GPU kernels run (fallbacks included).
    pub gpu_kernels: usize,
    /// PIM instructions unsupported at this B, run as GPU element-wise kernels.
    pub gpu_fallbacks: usize,
    /// GPU <-> PIM switches.
    pub transitions: usize,
    /// Per kind, in first-seen order.
    pub kinds: Vec<KindCost>,
}

impl ProgramCost {
    /// Adds `other`'s times, energies and counts to these (programs run one after the other, or
    /// on separate systems whose work is summed); the kinds merge by name, in first-seen order,
    /// and each energy-delay product is recomputed from the summed energy and time.
    pub fn accumulate(&mut self, other: &ProgramCost) {
        self.gpu_s += other.gpu_s;
        self.pim_s += other.pim_s;
        self.transition_s += other.transition_s;
        self.overlap_s += other.overlap_s;
        self.total_s += other.total_s;
        self.energy_j += other.energy_j;
        self.edp_js = self.energy_j * self.total_s;
        self.without_pim_s += other.without_pim_s;
        self.without_pim_energy_j += other.without_pim_energy_j;
        self.without_pim_edp_js = self.without_pim_energy_j * self.without_pim_s;
        self.pim_instructions += other.pim_instructions;
        self.gpu_kernels += other.gpu_kernels;
        self.gpu_fallbacks += other.gpu_fallbacks;
        self.transitions += other.transitions;
        for kind in &other.kinds {
            match self.kinds.iter_mut().find(|k| k.kind == kind.kind) {
                Some(k) => {
                    k.count += kind.count;
                    k.seconds += kind.seconds;
                    k.without_pim_seconds += kind.without_pim_seconds;
                }
                None => self.kinds.push(kind.clone()),
            }
        }
    }

    /// Baseline time over time with PIM.
    pub fn speedup(&self) -> f64 {
        self.without_pim_s / self.total_s
    }
    /// Baseline energy over energy with PIM.
    pub fn energy_ratio(&self) -> f64 {
        self.without_pim_energy_j / self.energy_j
    }
    /// Baseline EDP over EDP with PIM.
    pub fn edp_ratio(&self) -> f64 {
        self.without_pim_edp_js / self.edp_js
    }
}

/// Name of a GPU op for reports.
pub fn gpu_op_name(op: GpuOp) -> String {
    match op {
        GpuOp::Ntt => "NTT".into(),
        GpuOp::Intt => "INTT".into(),
        GpuOp::BaseConvert { from } => format!("BaseConvert(from={from})"),
        GpuOp::Automorphism => "Automorphism".into(),
        GpuOp::Elementwise(op) => format!("GPU {}", op.name()),
    }
}

impl Model {
    /// `system` with `buffer_entries` (Table III's B when `None`), column partitioned.
    pub fn new(system: System, buffer_entries: Option<usize>) -> Result<Model, ModelError> {
        let b = buffer_entries.unwrap_or(system.buffer_entries);
        if b == 0 || b > MAX_BUFFER_ENTRIES {
            return Err(ModelError::BufferEntries { given: b, max: MAX_BUFFER_ENTRIES });
        }
        Ok(Model { system, buffer_entries: b, layout: DataLayout::ColumnPartitioned })
    }

    /// The same model with another layout.
    pub fn with_layout(mut self, layout: DataLayout) -> Model {
        self.layout = layout;
        self
    }

    /// `anaheim-nb@1 a100-nearbank B=16 (modeled)`; the contiguous layout adds ` w/o CP`.
    pub fn label(&self) -> String {
        let layout = match self.layout {
            DataLayout::ColumnPartitioned => "",
            DataLayout::Contiguous => " w/o CP",
        };
        format!("{MODEL_NAME}@{MODEL_VERSION} {} B={}{layout} (modeled)", self.system.name, self.buffer_entries)
    }

    /// Chunk granularity G of `opcode` at this B (0: unsupported).
    pub fn chunk_granularity(&self, opcode: Opcode) -> usize {
        pim::BufferPlan::of(opcode).chunk_granularity(self.buffer_entries)
    }

    /// Cost of a PIM instruction; [`ModelError::Unsupported`] when B is too small for it.
    pub fn pim(&self, instruction: &PimInstruction) -> Result<PimCost, ModelError> {
        if instruction.degree == 0 || instruction.limbs == 0 || instruction.instances == 0 {
            return Err(ModelError::InvalidShape(format!(
                "degree, limbs and instances must be >= 1 (got {}, {}, {})",
                instruction.degree, instruction.limbs, instruction.instances
            )));
        }
        if let Opcode::PAccum(0) | Opcode::CAccum(0) = instruction.opcode {
            return Err(ModelError::InvalidShape(format!("{} has no terms", instruction.opcode.name())));
        }
        let plan = pim::BufferPlan::of(instruction.opcode);
        let g = plan.chunk_granularity(self.buffer_entries);
        if g == 0 {
            return Err(ModelError::Unsupported {
                opcode: instruction.opcode.name(),
                buffer_entries: self.buffer_entries,
                needed: plan.slots(),
            });
        }
        Ok(pim::cost(&self.system, instruction, g, self.layout))
    }

    /// Cost of a GPU kernel.
    pub fn gpu(&self, kernel: &GpuKernel) -> GpuCost {
        gpu::cost(&self.system, kernel)
    }

    /// Cost of `program` with PIM and all on the GPU.
    pub fn price(&self, program: &[Kernel]) -> ProgramCost {
        let mut kinds: Vec<KindCost> = Vec::new();
        let mut add_kind = |kind: String, seconds: f64, baseline: f64| {
            if let Some(k) = kinds.iter_mut().find(|k| k.kind == kind) {
                k.count += 1;
                k.seconds += seconds;
                k.without_pim_seconds += baseline;
            } else {
                kinds.push(KindCost { kind, count: 1, seconds, without_pim_seconds: baseline });
            }
        };
        let (mut gpu_s, mut pim_s, mut energy) = (0.0, 0.0, 0.0);
        let (mut pim_n, mut gpu_n, mut fallbacks, mut transitions) = (0, 0, 0, 0);
        // Work reaches the PIM units through the GPU's stream (section V-C): a program starting
        // with a PIM kernel pays one switch too.
        let mut on_pim_before = false;
        let baseline_program = without_pim(program);
        let (mut without_pim_s, mut baseline_e) = (0.0, 0.0);
        for (kernel, base) in program.iter().zip(&baseline_program) {
            let Kernel::Gpu(base) = base else { unreachable!("without_pim leaves no PIM kernel") };
            let b = self.gpu(base);
            without_pim_s += b.seconds;
            baseline_e += b.joules;
            let on_pim = match kernel {
                Kernel::Gpu(k) => {
                    let c = self.gpu(k);
                    gpu_s += c.seconds;
                    energy += c.joules;
                    gpu_n += 1;
                    add_kind(gpu_op_name(k.op), c.seconds, b.seconds);
                    false
                }
                Kernel::Pim(p) => match self.pim(p) {
                    Ok(c) => {
                        pim_s += c.seconds;
                        energy += c.joules;
                        pim_n += 1;
                        add_kind(p.opcode.name(), c.seconds, b.seconds);
                        true
                    }
                    Err(_) => {
                        gpu_s += b.seconds;
                        energy += b.joules;
                        gpu_n += 1;
                        fallbacks += 1;
                        add_kind(p.opcode.name(), b.seconds, b.seconds);
                        false
                    }
                },
            };
            if on_pim != on_pim_before {
                transitions += 1;
            }
            on_pim_before = on_pim;
        }
        let transition_s = transitions as f64 * gpu::GPU_LAUNCH_S;
        energy += transition_s * self.system.energy.gpu_idle_w;
        let overlap_s = 0.0;
        let total_s = gpu_s + pim_s + transition_s - overlap_s;
        ProgramCost {
            gpu_s,
            pim_s,
            transition_s,
            overlap_s,
            total_s,
            energy_j: energy,
            edp_js: energy * total_s,
            without_pim_s,
            without_pim_energy_j: baseline_e,
            without_pim_edp_js: baseline_e * without_pim_s,
            pim_instructions: pim_n,
            gpu_kernels: gpu_n,
            gpu_fallbacks: fallbacks,
            transitions,
            kinds,
        }
    }
}

/// One cell of the Fig. 9 microbenchmark.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MicroRow {
    /// The instruction.
    pub opcode: Opcode,
    /// B.
    pub buffer_entries: usize,
    /// PIM time of one instance (None: unsupported at this B).
    pub pim_s: Option<f64>,
    /// GPU element-wise kernel time (roofline, launch excluded).
    pub gpu_s: f64,
    /// `gpu_s / pim_s`.
    pub speedup: Option<f64>,
    /// GPU energy over PIM energy.
    pub energy_efficiency: Option<f64>,
    /// G used.
    pub chunk_granularity: Option<usize>,
}

/// Fig. 9: every opcode of [`Opcode::all`]`(k)` at every B, one instance of `limbs` limbs of
/// degree `degree`. Speedup and energy efficiency compare kernel execution only: the GPU's
/// roofline time (no launch overhead) at board power against the PIM schedule (no transition)
/// with its DRAM + MMAC energy and the GPU's idle power.
pub fn microbenchmark(
    system: &System,
    buffer_entries: &[usize],
    degree: usize,
    limbs: usize,
    k: usize,
) -> Vec<MicroRow> {
    microbenchmark_ops(system, buffer_entries, degree, limbs, &Opcode::all(k))
}

/// [`microbenchmark`] over any list of opcodes (e.g. PAccum(4) and CAccum(8) together).
pub fn microbenchmark_ops(
    system: &System,
    buffer_entries: &[usize],
    degree: usize,
    limbs: usize,
    opcodes: &[Opcode],
) -> Vec<MicroRow> {
    let mut rows = Vec::new();
    for &opcode in opcodes {
        for &b in buffer_entries {
            let gpu_kernel = GpuKernel { op: GpuOp::Elementwise(opcode), degree, limbs, polys: 1 };
            let g = gpu::cost(system, &gpu_kernel);
            let gpu_j = g.busy_s * system.energy.gpu_active_w;
            let pim = Model::new(system.clone(), Some(b))
                .and_then(|m| m.pim(&PimInstruction { opcode, degree, limbs, instances: 1 }))
                .ok();
            rows.push(MicroRow {
                opcode,
                buffer_entries: b,
                pim_s: pim.as_ref().map(|p| p.seconds),
                gpu_s: g.busy_s,
                speedup: pim.as_ref().map(|p| g.busy_s / p.seconds),
                energy_efficiency: pim.as_ref().map(|p| gpu_j / p.joules),
                chunk_granularity: pim.as_ref().map(|p| p.chunk_granularity),
            });
        }
    }
    rows
}
