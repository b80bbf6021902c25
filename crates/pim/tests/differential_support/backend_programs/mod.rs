//! Random programs of [`Backend`] operations over a register file of buffers.
//!
//! A program draws a ring degree (64 ..= 1024) and 3 to 7 distinct NTT-friendly primes of 17 to
//! 30 bits, then a sequence of steps using every operation of the trait on buffers of random
//! bases (subsets of the primes in any order, and now and then half the degree), polynomial
//! counts (0 to 13, one for broadcasting) and representations. The generator keeps the shape
//! of every register, so it builds most steps to succeed and some, on purpose, to be refused
//! (wrong representation, counts or bases that do not line up, a prime too few): each step
//! records which, and the reference's trace is checked against it ([`super::unexpected`]).

mod generator;

use std::sync::Arc;

use pimhe_exec::{Backend, KeySwitchPlan};
use pimhe_math::Modulus;
use pimhe_ring::{PolyBatch, Representation, RingBasis};
use pimhe_testkit::inputs::{random_batch, rng};

use super::{Event, Outcome, Seen};

/// Buffers a program can hold at once.
pub const REGISTERS: usize = 8;

/// Plaintext moduli of the BGV-corrected divisions (`mod_down_last`, `mod_down`).
const PLAIN_MODULI: [u32; 4] = [3, 257, 12289, 65537];

/// A basis as a program names it: a ring degree and positions in the program's primes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Basis {
    pub n: usize,
    pub limbs: Vec<usize>,
}

/// The residues of an uploaded batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fill {
    /// Uniform residues from the generator seeded so.
    Random(u64),
    Zero,
    /// q - 1 everywhere: the largest residue of every prime.
    Max,
}

/// A host batch to upload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Batch {
    pub basis: Basis,
    pub count: usize,
    pub representation: Representation,
    pub fill: Fill,
}

/// One operation; registers are indices below [`REGISTERS`], `t` a BGV plaintext modulus.
#[derive(Debug, Clone)]
pub enum Op {
    Upload {
        dst: usize,
        batch: Batch,
    },
    Download {
        a: usize,
    },
    Copy {
        dst: usize,
        a: usize,
    },
    Zeroize {
        a: usize,
    },
    Add {
        dst: usize,
        a: usize,
        b: usize,
    },
    AddAssign {
        acc: usize,
        b: usize,
    },
    Sub {
        dst: usize,
        a: usize,
        b: usize,
    },
    Neg {
        dst: usize,
        a: usize,
    },
    Mul {
        dst: usize,
        a: usize,
        b: usize,
    },
    Mac {
        acc: usize,
        a: usize,
        b: usize,
    },
    MulScalar {
        dst: usize,
        a: usize,
        c: u64,
    },
    MulLimbConstants {
        dst: usize,
        a: usize,
        constants: Vec<u64>,
    },
    Tensor {
        dst: [usize; 3],
        a0: usize,
        a1: usize,
        b0: usize,
        b1: usize,
    },
    Sum {
        dst: usize,
        a: usize,
    },
    Ntt {
        a: usize,
    },
    Intt {
        a: usize,
    },
    Restrict {
        dst: usize,
        a: usize,
        target: Basis,
    },
    BaseConvert {
        dst: usize,
        a: usize,
        target: Basis,
    },
    BaseConvertNtt {
        dst: usize,
        a: usize,
        a_ntt: usize,
        target: Basis,
    },
    ModDownLast {
        dst: usize,
        a: usize,
        t: Option<u32>,
    },
    ModDown {
        dst: usize,
        a: usize,
        count: usize,
        t: Option<u32>,
    },
    Automorphism {
        dst: usize,
        a: usize,
        k: usize,
    },
    /// The key pairs are uploaded by the step itself (fresh random keys). `hoisted:
    /// Some(element)` runs the switch in its two hoisting halves, mod_up and then
    /// key_switch_decomposed with that Galois element (none: no automorphism).
    KeySwitch {
        dst: [usize; 2],
        c: usize,
        keys: Vec<(Batch, Batch)>,
        digits: Vec<Basis>,
        extended: Basis,
        t: Option<u32>,
        hoisted: Option<Option<usize>>,
    },
}

/// An operation and whether the generator built it to succeed.
#[derive(Debug, Clone)]
pub struct Step {
    pub op: Op,
    pub valid: bool,
}

/// A program: its ring degree, its primes and its steps.
#[derive(Debug, Clone)]
pub struct BackendProgram {
    pub n: usize,
    pub primes: Vec<u32>,
    pub steps: Vec<Step>,
}

impl std::fmt::Display for BackendProgram {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "backend program: N = {}, primes {:?}", self.n, self.primes)?;
        for (index, step) in self.steps.iter().enumerate() {
            writeln!(f, "  {index:3}: {:?}{}", step.op, if step.valid { "" } else { "  (to be refused)" })?;
        }
        Ok(())
    }
}

impl BackendProgram {
    fn ring(&self, basis: &Basis) -> Result<Arc<RingBasis>, String> {
        let primes: Vec<u32> = basis.limbs.iter().map(|&l| self.primes[l]).collect();
        RingBasis::new(basis.n, &primes).map_err(|e| e.to_string())
    }

    fn host_batch(&self, batch: &Batch) -> Result<PolyBatch, String> {
        let basis = self.ring(&batch.basis)?;
        let (count, representation) = (batch.count, batch.representation);
        Ok(match batch.fill {
            Fill::Random(seed) => random_batch(&mut rng(seed), &basis, count, representation),
            Fill::Zero => PolyBatch::zeros(&basis, count, representation),
            Fill::Max => {
                let data = basis.primes().iter().flat_map(|&q| vec![q - 1; count * basis.degree()]).collect();
                PolyBatch::from_data(&basis, count, representation, data).map_err(|e| e.to_string())?
            }
        })
    }
}

/// Runs `program` on `backend`: one event per step, then one reading back every register.
pub fn run<B: Backend>(backend: &B, program: &BackendProgram) -> Vec<Event> {
    let mut machine = Machine { backend, program, registers: (0..REGISTERS).map(|_| None).collect() };
    let mut events: Vec<Event> = program
        .steps
        .iter()
        .enumerate()
        .map(|(step, s)| Event { step, valid: s.valid, outcome: machine.execute(&s.op) })
        .collect();
    let outcome = machine.registers.iter().flatten().map(|b| text(backend.download(b)).map(Seen::Batch)).collect();
    events.push(Event { step: program.steps.len(), valid: true, outcome });
    events
}

/// A backend running a program: the register file of device buffers.
struct Machine<'a, B: Backend> {
    backend: &'a B,
    program: &'a BackendProgram,
    registers: Vec<Option<B::Buffer>>,
}

fn text<T>(result: pimhe_exec::Result<T>) -> Result<T, String> {
    result.map_err(|e| e.to_string())
}

fn modulus(t: &Option<u32>) -> Option<Modulus> {
    t.map(|t| Modulus::new(t as u64).expect("plain moduli are valid"))
}

impl<B: Backend> Machine<'_, B> {
    fn get(&self, register: usize) -> Result<&B::Buffer, String> {
        self.registers[register].as_ref().ok_or_else(|| format!("register {register} is empty"))
    }

    fn set(&mut self, dst: usize, result: pimhe_exec::Result<B::Buffer>) -> Outcome {
        self.registers[dst] = Some(text(result)?);
        Ok(Vec::new())
    }

    /// Runs an in-place operation on register `acc`, taken out of the file meanwhile (the
    /// generator never names it as another operand of the same step).
    fn in_place(&mut self, acc: usize, op: impl FnOnce(&Self, &mut B::Buffer) -> Result<(), String>) -> Outcome {
        let mut buffer = self.registers[acc].take().ok_or_else(|| format!("register {acc} is empty"))?;
        let result = op(self, &mut buffer);
        self.registers[acc] = Some(buffer);
        result.map(|()| Vec::new())
    }

    fn execute(&mut self, op: &Op) -> Outcome {
        let (backend, program) = (self.backend, self.program);
        match op {
            Op::Upload { dst, batch } => {
                let batch = program.host_batch(batch)?;
                self.set(*dst, backend.upload(batch))
            }
            Op::Download { a } => Ok(vec![Seen::Batch(text(backend.download(self.get(*a)?))?)]),
            Op::Copy { dst, a } => self.set(*dst, backend.copy(self.get(*a)?)),
            Op::Zeroize { a } => self.in_place(*a, |_, a| {
                backend.zeroize(a);
                Ok(())
            }),
            Op::Add { dst, a, b } => self.set(*dst, backend.add(self.get(*a)?, self.get(*b)?)),
            Op::AddAssign { acc, b } => self.in_place(*acc, |m, acc| text(backend.add_assign(acc, m.get(*b)?))),
            Op::Sub { dst, a, b } => self.set(*dst, backend.sub(self.get(*a)?, self.get(*b)?)),
            Op::Neg { dst, a } => self.set(*dst, backend.neg(self.get(*a)?)),
            Op::Mul { dst, a, b } => self.set(*dst, backend.mul(self.get(*a)?, self.get(*b)?)),
            Op::Mac { acc, a, b } => self.in_place(*acc, |m, acc| text(backend.mac(acc, m.get(*a)?, m.get(*b)?))),
            Op::MulScalar { dst, a, c } => self.set(*dst, backend.mul_scalar(self.get(*a)?, *c)),
            Op::MulLimbConstants { dst, a, constants } => {
                self.set(*dst, backend.mul_limb_constants(self.get(*a)?, constants))
            }
            Op::Tensor { dst, a0, a1, b0, b1 } => {
                let outputs = text(backend.tensor(self.get(*a0)?, self.get(*a1)?, self.get(*b0)?, self.get(*b1)?))?;
                for (&d, output) in dst.iter().zip(outputs) {
                    self.registers[d] = Some(output);
                }
                Ok(Vec::new())
            }
            Op::Sum { dst, a } => self.set(*dst, backend.sum(self.get(*a)?)),
            Op::Ntt { a } => self.in_place(*a, |_, a| text(backend.ntt(a))),
            Op::Intt { a } => self.in_place(*a, |_, a| text(backend.intt(a))),
            Op::Restrict { dst, a, target } => self.set(*dst, backend.restrict(self.get(*a)?, &program.ring(target)?)),
            Op::BaseConvert { dst, a, target } => {
                self.set(*dst, backend.base_convert(self.get(*a)?, &program.ring(target)?))
            }
            Op::BaseConvertNtt { dst, a, a_ntt, target } => {
                let target = program.ring(target)?;
                self.set(*dst, backend.base_convert_ntt(self.get(*a)?, self.get(*a_ntt)?, &target))
            }
            Op::ModDownLast { dst, a, t } => self.set(*dst, backend.mod_down_last(self.get(*a)?, modulus(t))),
            Op::ModDown { dst, a, count, t } => self.set(*dst, backend.mod_down(self.get(*a)?, *count, modulus(t))),
            Op::Automorphism { dst, a, k } => self.set(*dst, backend.automorphism(self.get(*a)?, *k)),
            Op::KeySwitch { dst, c, keys, digits, extended, t, hoisted } => {
                let keys = keys
                    .iter()
                    .map(|(b, a)| {
                        let upload = |k: &Batch| text(backend.upload(program.host_batch(k)?));
                        Ok((upload(b)?, upload(a)?))
                    })
                    .collect::<Result<Vec<_>, String>>()?;
                let digits = digits.iter().map(|d| program.ring(d)).collect::<Result<Vec<_>, String>>()?;
                let extended = program.ring(extended)?;
                let plan = KeySwitchPlan { digits: &digits, extended: &extended, plain_modulus: modulus(t) };
                let c = self.get(*c)?;
                let (c0, c1) = match hoisted {
                    None => text(backend.key_switch(c, &keys, &plan))?,
                    Some(element) => {
                        let decomposed = text(backend.mod_up(c, &plan))?;
                        text(backend.key_switch_decomposed(&decomposed, &keys, *element, &plan))?
                    }
                };
                self.registers[dst[0]] = Some(c0);
                self.registers[dst[1]] = Some(c1);
                Ok(Vec::new())
            }
        }
    }
}
