//! [`Step`] -> micro-ops: what each polynomial-level step issues, and how often.
//!
//! Rules (docs/PIM.md, "CE-RAM"):
//!
//! - A step over `polys` polynomials and some moduli runs, for every slot the moduli pack into
//!   ([`Machine::pack`]), ceil(polys / 2) *row passes* (two slots per row: "two polynomial
//!   primitives are performed simultaneously", section 4.1), or `polys` passes for a word wider
//!   than a slot; each pass repeats ceil(N / arrays) times.
//! - In a pass, ADD / SUB / MULT / shifts act on every residue of the row at once at the width
//!   of the widest (section 4.3: "the runtime of parallel operations is now dominated by the
//!   size of the largest RNS component"); reductions differ per modulus kind, so each kind
//!   present runs its own sequence ([`reduction_sequence`]), one kind after another, at the
//!   widest residue of that kind (**assumption**: the controller sequences the kinds).
//! - NTT (section 3.1, Algorithm 7): N MOVEs for the bit reversal, then per stage a WRITE of the
//!   twiddle factors and a MODMULT, a SUB and an ADD over all coefficients at once (the
//!   butterfly and core loops merged), the SUB and ADD each followed by their reduction
//!   ("aj - v (mod p)"; "we perform modular arithmetic by reducing after each operation",
//!   section 3.3). The inverse transform is the same stages and a final WRITE + MODMULT by N^-1.
//! - Schoolbook product (no NTT): N iterations, each a WRITE broadcasting one coefficient of b,
//!   a MODMULT, a modular ADD into the accumulator, a MOVE rotating a by one position through
//!   the move buffers and a SUB + SELECT negating the coefficient that wraps (negacyclic)
//!   (**assumption**: the rotation is one MOVE of every array to its neighbour).
//! - FastBConv (equation 1): phase 1 computes |x_i (q_i / q)^-1|_{q_i} in every source residue
//!   (WRITE + MODMULT; with section 3.4 the bit operations of Theorem 1, Lemma 2, Theorem 2 for
//!   {2^g - 1, 2^g, 2^g + 1}, Algorithms 5 and 6 for Mersenne / Fermat-like coprimes); phase 2,
//!   for each source residue i, MOVEs it into the target residues' positions, WRITEs the row of
//!   |q / q_i|_{b_j}, MODMULTs and (i > 0) adds it into the sum modulo each b_j.

use std::collections::BTreeMap;

use crate::isa::{reduction_sequence, Issue, MicroOp, Reduction};
use crate::machine::{CapacityError, Machine};
use crate::params::{Modulus, ModulusKind, Residues, SpecialBase};
use crate::program::Step;

/// Issues of a step with their multiplicities.
pub type Lowered = Vec<(Issue, u64)>;

/// One slot's residues in a pass, and how many passes.
struct SlotPass {
    moduli: Vec<Modulus>,
    passes: u64,
}

impl SlotPass {
    fn width(&self) -> u32 {
        self.moduli.iter().map(Modulus::width).max().unwrap_or(0)
    }

    /// Kinds present, each with its widest residue.
    fn kinds(&self) -> BTreeMap<ModulusKind, u32> {
        let mut k = BTreeMap::new();
        for m in &self.moduli {
            let e = k.entry(m.kind).or_insert(0);
            *e = (*e).max(m.width());
        }
        k
    }

    fn op(&self, op: MicroOp) -> Issue {
        Issue::new(op, self.width())
    }

    /// Each kind's reduction, one kind after another.
    fn reduce(&self) -> Vec<Issue> {
        self.kinds()
            .into_iter()
            .flat_map(|(kind, w)| reduction_sequence(kind).iter().map(move |&op| Issue::new(op, w)))
            .collect()
    }

    fn modmult(&self) -> Issue {
        let reductions = self
            .kinds()
            .into_iter()
            .filter(|(k, _)| *k != ModulusKind::Integer)
            .map(|(kind, width)| Reduction { kind, width })
            .collect();
        Issue { op: MicroOp::ModMult, width: self.width(), reductions }
    }

    fn mod_add(&self, op: MicroOp) -> Vec<Issue> {
        let mut v = vec![self.op(op)];
        v.extend(self.reduce());
        v
    }

    /// Multiplication by a power of two, per kind (Algorithms 5, 6; shift + mask for 2^g).
    fn mul_pow2(&self) -> Vec<Issue> {
        use MicroOp::*;
        let mut v = Vec::new();
        for (kind, w) in self.kinds() {
            let seq: &[MicroOp] = match kind {
                ModulusKind::PowerOfTwo => &[ShiftLeft, And],
                ModulusKind::Mersenne => &[ShiftRight, And, Sub, Sub, Add, Select],
                ModulusKind::FermatLike => &[ShiftRight, And, Or],
                ModulusKind::Integer => &[ShiftLeft],
                ModulusKind::Generic => {
                    v.push(Issue::new(Write, w));
                    v.push(Issue { op: ModMult, width: w, reductions: vec![Reduction { kind, width: w }] });
                    continue;
                }
            };
            v.extend(seq.iter().map(|&op| Issue::new(op, w)));
        }
        v
    }

    /// FastBConv's phase 1 in this slot: |x_i (q_i/q)^-1|_{q_i}.
    fn inverse_scale(&self, shape: SpecialBase) -> Vec<Issue> {
        use MicroOp::*;
        match shape {
            SpecialBase::None => vec![self.op(Write), self.modmult()],
            SpecialBase::MersenneFermat => self.mul_pow2(),
            SpecialBase::Balanced => {
                let mut v = Vec::new();
                for (kind, w) in self.kinds() {
                    let seq: &[MicroOp] = match kind {
                        // Theorem 1: (x >> 1) + ((x & 1) << (g - 1)).
                        ModulusKind::Mersenne => &[ShiftRight, And, ShiftLeft, Add],
                        // Lemma 2: ((1 << g) - x) & ((1 << g) - 1).
                        ModulusKind::PowerOfTwo => &[Sub, And],
                        // Theorem 2: ((x + 1) >> 1) + ((x & 1) << (g - 1)).
                        ModulusKind::FermatLike => &[Add, ShiftRight, And, ShiftLeft, Add],
                        _ => &[Write, ModMult],
                    };
                    for &op in seq {
                        v.push(if op == ModMult {
                            Issue { op, width: w, reductions: vec![Reduction { kind, width: w }] }
                        } else {
                            Issue::new(op, w)
                        });
                    }
                }
                v
            }
        }
    }
}

/// The slot passes of `polys` polynomials over `moduli` (each group packed into its slots).
fn slot_passes(m: &Machine, n: usize, moduli: &Residues, polys: usize) -> Result<Vec<SlotPass>, CapacityError> {
    let rep = m.repeats(n)? as u64;
    let mut out = Vec::new();
    for group in &moduli.groups {
        let widths: Vec<u32> = group.iter().map(Modulus::width).collect();
        for slot in m.pack(&widths)? {
            let base = if slot.width_in_slots == 1 { polys.div_ceil(m.slots_per_row()) } else { polys };
            out.push(SlotPass { moduli: slot.members.iter().map(|&i| group[i]).collect(), passes: base as u64 * rep });
        }
    }
    Ok(out)
}

fn push_all(out: &mut Lowered, issues: Vec<Issue>, times: u64) {
    if times == 0 {
        return;
    }
    for i in issues {
        out.push((i, times));
    }
}

/// Micro-ops of one step on a machine at ring degree N. Transfers lower to nothing.
pub fn lower(step: &Step, m: &Machine, n: usize) -> Result<Lowered, CapacityError> {
    use MicroOp::*;
    let mut out = Lowered::new();
    let log_n = n.trailing_zeros() as u64;
    let each = |moduli: &Residues, polys: usize, out: &mut Lowered, f: &dyn Fn(&SlotPass) -> Vec<Issue>| {
        for sp in slot_passes(m, n, moduli, polys)? {
            push_all(out, f(&sp), sp.passes);
        }
        Ok::<(), CapacityError>(())
    };
    match step {
        Step::PolyAdd { moduli, polys } => each(moduli, *polys, &mut out, &|sp| sp.mod_add(Add))?,
        Step::PolySub { moduli, polys } => each(moduli, *polys, &mut out, &|sp| sp.mod_add(Sub))?,
        Step::PointwiseMul { moduli, polys } => each(moduli, *polys, &mut out, &|sp| vec![sp.modmult()])?,
        Step::MulByConstant { moduli, polys } => {
            each(moduli, *polys, &mut out, &|sp| vec![sp.op(Write), sp.modmult()])?
        }
        Step::MulByPowerOfTwo { moduli, polys } => each(moduli, *polys, &mut out, &|sp| sp.mul_pow2())?,
        Step::Reduce { moduli, polys } => each(moduli, *polys, &mut out, &|sp| sp.reduce())?,
        Step::Center { moduli, polys } => {
            each(moduli, *polys, &mut out, &|sp| vec![sp.op(Sub), sp.op(Sub), sp.op(Select)])?
        }
        Step::Ntt { moduli, polys } | Step::Intt { moduli, polys } => {
            let inverse = matches!(step, Step::Intt { .. });
            for sp in slot_passes(m, n, moduli, *polys)? {
                let rows = sp.passes / m.repeats(n)? as u64;
                // Bit reversal: N MOVEs per pass.
                out.push((sp.op(Move), rows * n as u64));
                let mut stage = vec![sp.op(Write)];
                if inverse {
                    stage.extend(sp.mod_add(Add));
                    stage.extend(sp.mod_add(Sub));
                    stage.push(sp.modmult());
                } else {
                    stage.push(sp.modmult());
                    stage.extend(sp.mod_add(Sub));
                    stage.extend(sp.mod_add(Add));
                }
                push_all(&mut out, stage, sp.passes * log_n);
                if inverse {
                    push_all(&mut out, vec![sp.op(Write), sp.modmult()], sp.passes);
                }
            }
        }
        Step::SchoolbookMul { moduli, products } => {
            for sp in slot_passes(m, n, moduli, *products)? {
                let mut it = vec![sp.op(Write), sp.modmult()];
                it.extend(sp.mod_add(Add));
                it.extend([sp.op(Move), sp.op(Sub), sp.op(Select)]);
                push_all(&mut out, it, sp.passes * n as u64);
            }
        }
        Step::IntegerSchoolbookMul { operand_bits, acc_bits, products } => {
            for sp in slot_passes(m, n, &vec![Modulus::integer(*acc_bits)].into(), *products)? {
                let (o, a) = (*operand_bits, *acc_bits);
                let it = vec![
                    Issue::new(Write, o),
                    Issue::new(Mult, o),
                    Issue::new(Add, a),
                    Issue::new(Move, a),
                    Issue::new(Sub, a),
                    Issue::new(Select, a),
                ];
                push_all(&mut out, it, sp.passes * n as u64);
            }
        }
        Step::Rescale { acc_bits, t_bits, polys } => {
            for sp in slot_passes(m, n, &vec![Modulus::integer(*acc_bits)].into(), *polys)? {
                let a = *acc_bits;
                let mut it = Vec::new();
                for _ in 0..*t_bits {
                    it.push(Issue::new(ShiftLeft, a));
                    it.push(Issue::new(Add, a));
                }
                it.extend([Issue::new(Write, a), Issue::new(Add, a), Issue::new(ShiftRight, a), Issue::new(And, a)]);
                push_all(&mut out, it, sp.passes);
            }
        }
        Step::DigitDecompose { width, digits, polys } => {
            for sp in slot_passes(m, n, &vec![Modulus::integer(*width)].into(), *polys)? {
                push_all(
                    &mut out,
                    vec![Issue::new(ShiftRight, *width), Issue::new(And, *width)],
                    sp.passes * *digits as u64,
                );
            }
        }
        Step::RnsDecompose { moduli, polys, special } => {
            let shape = if *special { SpecialBase::classify(&moduli.all()) } else { SpecialBase::None };
            each(moduli, *polys, &mut out, &|sp| sp.inverse_scale(shape))?
        }
        Step::FastBConv { from, to, polys, special } => {
            let shape = if *special { SpecialBase::classify(&from.all()) } else { SpecialBase::None };
            each(from, *polys, &mut out, &|sp| sp.inverse_scale(shape))?;
            for i in 0..from.len() {
                each(to, *polys, &mut out, &|sp| {
                    let mut v = vec![sp.op(Move), sp.op(Write), sp.modmult()];
                    if i > 0 {
                        v.extend(sp.mod_add(Add));
                    }
                    v
                })?;
            }
        }
        Step::Realign { moduli, polys } => each(moduli, *polys, &mut out, &|sp| vec![sp.op(Move)])?,
        Step::Write { moduli, polys } => each(moduli, *polys, &mut out, &|sp| vec![sp.op(Write)])?,
        Step::Move { moduli, polys } => each(moduli, *polys, &mut out, &|sp| vec![sp.op(Move)])?,
        Step::Transfer { .. } => {}
    }
    Ok(out)
}

/// Micro-op counts by kind of a lowered step or program.
pub fn counts(lowered: &Lowered) -> BTreeMap<MicroOp, u64> {
    let mut c = BTreeMap::new();
    for (issue, times) in lowered {
        *c.entry(issue.op).or_insert(0) += times;
    }
    c
}
