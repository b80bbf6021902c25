//! The generator of backend programs: it keeps the shape every register will hold, so that
//! most steps are built to succeed and the others to be refused on purpose.

use pimhe_ring::Representation;
use pimhe_testkit::inputs::distinct_primes;

use super::super::Draws;
use super::{BackendProgram, Basis, Batch, Fill, Op, Step, PLAIN_MODULI, REGISTERS};

impl BackendProgram {
    /// The program of `seed`.
    pub fn generate(seed: u64) -> Self {
        let mut rng = Draws::new(seed);
        let n = [64, 64, 128, 256, 512, 1024][rng.below(6)];
        let bits: Vec<u32> = (0..3 + rng.below(5)).map(|_| 17 + rng.below(14) as u32).collect();
        let primes = distinct_primes(n, &bits);
        let length = 4 + rng.below(28);
        let mut generator =
            Generator { rng, n, primes: primes.len(), registers: vec![None; REGISTERS], steps: Vec::new() };
        while generator.steps.len() < length {
            generator.step();
        }
        Self { n, primes, steps: generator.steps }
    }
}

/// The shape the generator expects a register to hold.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Model {
    basis: Basis,
    count: usize,
    representation: Representation,
}

fn flip(representation: Representation) -> Representation {
    match representation {
        Representation::Coefficient => Representation::Ntt,
        Representation::Ntt => Representation::Coefficient,
    }
}

/// Builds a program step by step, tracking the shape of every register.
struct Generator {
    rng: Draws,
    n: usize,
    /// How many primes the program has.
    primes: usize,
    registers: Vec<Option<Model>>,
    steps: Vec<Step>,
}

impl Generator {
    fn representation(&mut self) -> Representation {
        self.rng.pick(&[Representation::Coefficient, Representation::Ntt])
    }

    /// 0 now and then, one often (broadcasts), up to 13 (not a multiple of most DPU counts).
    fn count(&mut self) -> usize {
        match self.rng.below(20) {
            0 => 0,
            1..=5 => 1,
            _ => 2 + self.rng.below(12),
        }
    }

    fn plain_modulus(&mut self) -> Option<u32> {
        if self.rng.chance(50) {
            Some(self.rng.pick(&PLAIN_MODULI))
        } else {
            None
        }
    }

    /// `size` distinct primes in random order, at degree `n`.
    fn basis(&mut self, n: usize, size: usize) -> Basis {
        let mut all: Vec<usize> = (0..self.primes).collect();
        self.rng.shuffle(&mut all);
        all.truncate(size);
        Basis { n, limbs: all }
    }

    /// A basis of degree `n` holding `within`'s primes (any order) and maybe more.
    fn superset(&mut self, within: &Basis) -> Basis {
        let mut limbs = within.limbs.clone();
        let others: Vec<usize> = (0..self.primes).filter(|l| !limbs.contains(l)).collect();
        for other in others {
            if self.rng.chance(30) {
                limbs.push(other);
            }
        }
        self.rng.shuffle(&mut limbs);
        Basis { n: within.n, limbs }
    }

    /// A basis missing one of `basis`'s primes (another prime instead when it has only one).
    fn lacking(&mut self, basis: &Basis) -> Basis {
        let mut limbs = basis.limbs.clone();
        limbs.remove(self.rng.below(limbs.len()));
        if limbs.is_empty() {
            let others: Vec<usize> = (0..self.primes).filter(|l| !basis.limbs.contains(l)).collect();
            limbs.push(self.rng.pick(&others));
        }
        Basis { n: basis.n, limbs }
    }

    /// A random shape; one in twenty at half the degree (kept on the host by a PIM backend).
    fn model(&mut self) -> Model {
        let n = if self.rng.chance(5) { self.n / 2 } else { self.n };
        let size = 1 + self.rng.below(self.primes.min(5));
        let basis = self.basis(n, size);
        Model { basis, count: self.count(), representation: self.representation() }
    }

    fn fill(&mut self) -> Fill {
        match self.rng.below(12) {
            0 => Fill::Zero,
            1 => Fill::Max,
            _ => Fill::Random(self.rng.word()),
        }
    }

    fn batch(&mut self, model: &Model) -> Batch {
        Batch {
            basis: model.basis.clone(),
            count: model.count,
            representation: model.representation,
            fill: self.fill(),
        }
    }

    fn push(&mut self, op: Op, valid: bool) {
        self.steps.push(Step { op, valid });
    }

    /// A register other than `keep`, preferably an empty one.
    fn destination(&mut self, keep: &[usize]) -> usize {
        let free: Vec<usize> = (0..REGISTERS).filter(|r| self.registers[*r].is_none() && !keep.contains(r)).collect();
        if !free.is_empty() && self.rng.chance(60) {
            return self.rng.pick(&free);
        }
        let any: Vec<usize> = (0..REGISTERS).filter(|r| !keep.contains(r)).collect();
        self.rng.pick(&any)
    }

    /// Uploads a batch of shape `model` into a register other than `keep`, and returns it.
    fn upload(&mut self, model: Model, keep: &[usize]) -> usize {
        let dst = self.destination(keep);
        let batch = self.batch(&model);
        self.push(Op::Upload { dst, batch }, true);
        self.registers[dst] = Some(model);
        dst
    }

    /// A register other than `keep` whose shape passes `accept`: mostly one already there,
    /// otherwise a fresh upload of shape `make`.
    fn operand(
        &mut self,
        keep: &[usize],
        accept: impl Fn(&Model) -> bool,
        make: impl FnOnce(&mut Self) -> Model,
    ) -> usize {
        let found: Vec<usize> =
            (0..REGISTERS).filter(|r| !keep.contains(r) && self.registers[*r].as_ref().is_some_and(&accept)).collect();
        if !found.is_empty() && self.rng.chance(80) {
            return self.rng.pick(&found);
        }
        let model = make(self);
        self.upload(model, keep)
    }

    fn any(&mut self, keep: &[usize]) -> usize {
        self.operand(keep, |_| true, Self::model)
    }

    /// A register in `representation` other than `keep`.
    fn in_form(&mut self, representation: Representation, keep: &[usize]) -> usize {
        self.operand(keep, |m| m.representation == representation, |g| Model { representation, ..g.model() })
    }

    fn shape(&self, register: usize) -> Model {
        self.registers[register].clone().expect("operands are live")
    }

    /// Records a step and, when it is to succeed, the shape its output register takes.
    fn output(&mut self, op: Op, valid: bool, dst: usize, model: Model) {
        self.push(op, valid);
        if valid {
            self.registers[dst] = Some(model);
        }
    }

    fn step(&mut self) {
        // One step in ten (of those that can be) is built to be refused.
        let valid = !self.rng.chance(10);
        match self.rng.below(23) {
            0 | 1 => {
                let model = self.model();
                self.upload(model, &[]);
            }
            2 => {
                let a = self.any(&[]);
                self.push(Op::Download { a }, true);
            }
            3 => {
                let a = self.any(&[]);
                let dst = self.destination(&[]);
                let model = self.shape(a);
                self.output(Op::Copy { dst, a }, true, dst, model);
            }
            4 => {
                let a = self.any(&[]);
                self.push(Op::Zeroize { a }, true);
            }
            5 | 6 => self.elementwise(valid, false, false),
            7 => self.elementwise(valid, true, false),
            8 => self.elementwise(valid, false, true),
            9 => self.elementwise(valid, true, true),
            10 => self.scale(valid),
            11 => self.tensor(valid),
            12 => {
                let a = self.any(&[]);
                let dst = self.destination(&[]);
                let model = Model { count: 1, ..self.shape(a) };
                self.output(Op::Sum { dst, a }, true, dst, model);
            }
            13 | 14 => self.transform(valid),
            15 => self.restrict(valid),
            16 => self.base_convert(valid),
            17 => self.base_convert_ntt(valid),
            18 | 19 => self.mod_down(valid),
            20 => self.automorphism(valid),
            _ => self.key_switch(valid),
        }
    }

    /// add, sub, mul (`product`) and their in-place forms add_assign, mac (`in_place`); to be
    /// refused, the second operand breaks one rule: its representation, count, primes or degree.
    fn elementwise(&mut self, valid: bool, product: bool, in_place: bool) {
        let a = if product && valid { self.in_form(Representation::Ntt, &[]) } else { self.any(&[]) };
        let model = self.shape(a);
        // Uploads keep a. An accumulator is taken out of the register file while its step runs,
        // so b is another register then; otherwise b is now and then a itself.
        let b = if valid && !in_place && self.rng.chance(10) {
            a
        } else if valid {
            let form = if product { Representation::Ntt } else { model.representation };
            let want = model.clone();
            self.operand(
                &[a],
                |m| {
                    m.representation == form
                        && (m.count == want.count || m.count == 1)
                        && m.basis.n == want.basis.n
                        && want.basis.limbs.iter().all(|l| m.basis.limbs.contains(l))
                },
                |g| {
                    let count = if g.rng.chance(50) { 1 } else { want.count };
                    Model { basis: g.superset(&want.basis), count, representation: form }
                },
            )
        } else {
            let broken = match self.rng.below(4) {
                0 if product => Model { representation: Representation::Coefficient, ..model.clone() },
                0 => Model { representation: flip(model.representation), ..model.clone() },
                1 => Model { count: model.count + 2, ..model.clone() },
                2 => Model { basis: self.lacking(&model.basis), ..model.clone() },
                _ => Model { basis: Basis { n: model.basis.n / 2, ..model.basis.clone() }, ..model.clone() },
            };
            self.upload(broken, &[a])
        };
        match (in_place, product) {
            (false, _) => {
                let dst = self.destination(&[]);
                let op = match (product, self.rng.chance(50)) {
                    (true, _) => Op::Mul { dst, a, b },
                    (false, true) => Op::Add { dst, a, b },
                    (false, false) => Op::Sub { dst, a, b },
                };
                self.output(op, valid, dst, model);
            }
            (true, false) => self.output(Op::AddAssign { acc: a, b }, valid, a, model),
            (true, true) => {
                // mac accumulates into a third register of a's exact shape (or, to be refused
                // when b is fine, of another count).
                let keep = [a, b];
                let acc = if valid || self.rng.chance(50) {
                    let want = model.clone();
                    self.operand(&keep, |m| *m == want, |_| want.clone())
                } else {
                    self.upload(Model { count: model.count + 2, ..model.clone() }, &keep)
                };
                self.output(Op::Mac { acc, a, b }, valid, acc, model);
            }
        }
    }

    /// neg, mul_scalar and mul_limb_constants (the last refused with a constant too many or few).
    fn scale(&mut self, valid: bool) {
        let a = self.any(&[]);
        let dst = self.destination(&[]);
        let model = self.shape(a);
        let (op, valid) = match self.rng.below(3) {
            0 => (Op::Neg { dst, a }, true),
            1 => {
                let c = match self.rng.below(4) {
                    0 => self.rng.pick(&[0, 1, u64::MAX]),
                    _ => self.rng.word(),
                };
                (Op::MulScalar { dst, a, c }, true)
            }
            _ => {
                // One constant per prime, or (to be refused) one too many or too few.
                let limbs = model.basis.limbs.len();
                let len = if valid {
                    limbs
                } else if self.rng.chance(50) {
                    limbs + 1
                } else {
                    limbs - 1
                };
                let constants = (0..len).map(|_| self.rng.word()).collect();
                (Op::MulLimbConstants { dst, a, constants }, valid)
            }
        };
        self.output(op, valid, dst, model);
    }

    /// tensor of four operands of one shape in NTT form, or (to be refused) with one of another
    /// count.
    fn tensor(&mut self, valid: bool) {
        let a0 = if valid { self.in_form(Representation::Ntt, &[]) } else { self.any(&[]) };
        let model = self.shape(a0);
        let mut operands = vec![a0];
        for _ in 0..3 {
            // Operands may repeat, but an upload must not replace an earlier one.
            let want = model.clone();
            let found = self.operand(&operands, |m| *m == want, |_| want.clone());
            let next = if self.rng.chance(20) { self.rng.pick(&operands) } else { found };
            operands.push(next);
        }
        if !valid {
            let which = 1 + self.rng.below(3);
            operands[which] = self.upload(Model { count: model.count + 2, ..model.clone() }, &operands);
        }
        let mut dst = [0; 3];
        for i in 0..3 {
            dst[i] = self.destination(&dst[..i]);
        }
        self.push(Op::Tensor { dst, a0: operands[0], a1: operands[1], b0: operands[2], b1: operands[3] }, valid);
        if valid {
            for d in dst {
                self.registers[d] = Some(model.clone());
            }
        }
    }

    /// ntt of a coefficient-form register or intt of an NTT-form one (the other way round to be
    /// refused).
    fn transform(&mut self, valid: bool) {
        let a = self.any(&[]);
        let model = self.shape(a);
        let forward = (model.representation == Representation::Coefficient) == valid;
        let op = if forward { Op::Ntt { a } } else { Op::Intt { a } };
        self.output(op, valid, a, Model { representation: flip(model.representation), ..model });
    }

    /// restrict to a subset of the primes, or (to be refused) to a basis with a prime more or at
    /// half the degree.
    fn restrict(&mut self, valid: bool) {
        let a = self.any(&[]);
        let model = self.shape(a);
        let mut limbs = model.basis.limbs.clone();
        self.rng.shuffle(&mut limbs);
        limbs.truncate(1 + self.rng.below(limbs.len()));
        let outside: Vec<usize> = (0..self.primes).filter(|l| !model.basis.limbs.contains(l)).collect();
        let n = model.basis.n;
        let target = if valid {
            Basis { n, limbs }
        } else if outside.is_empty() || self.rng.chance(50) {
            Basis { n: n / 2, limbs }
        } else {
            limbs.insert(self.rng.below(limbs.len() + 1), self.rng.pick(&outside));
            Basis { n, limbs }
        };
        let dst = self.destination(&[]);
        self.output(Op::Restrict { dst, a, target: target.clone() }, valid, dst, Model { basis: target, ..model });
    }

    /// A conversion target at degree `n`: any primes, shared with the source or not.
    fn target(&mut self, n: usize) -> Basis {
        let size = 1 + self.rng.below(self.primes);
        self.basis(n, size)
    }

    fn base_convert(&mut self, valid: bool) {
        let a = if valid { self.in_form(Representation::Coefficient, &[]) } else { self.any(&[]) };
        let model = self.shape(a);
        let n = if !valid && self.rng.chance(50) { model.basis.n / 2 } else { model.basis.n };
        let target = self.target(n);
        let valid = model.representation == Representation::Coefficient && n == model.basis.n;
        let dst = self.destination(&[]);
        let out = Model { basis: target.clone(), count: model.count, representation: Representation::Coefficient };
        self.output(Op::BaseConvert { dst, a, target }, valid, dst, out);
    }

    fn base_convert_ntt(&mut self, valid: bool) {
        let a = self.in_form(Representation::Coefficient, &[]);
        let model = self.shape(a);
        let want = Model { representation: Representation::Ntt, ..model.clone() };
        let a_ntt = if valid {
            self.operand(&[a], |m| *m == want, |_| want.clone())
        } else {
            // The NTT-form operand of other primes, another count, or in coefficient form.
            let broken = match self.rng.below(3) {
                0 => Model { basis: self.lacking(&want.basis), ..want },
                1 => Model { count: want.count + 2, ..want },
                _ => model.clone(),
            };
            self.upload(broken, &[a])
        };
        let target = self.target(model.basis.n);
        let dst = self.destination(&[]);
        let out = Model { basis: target.clone(), count: model.count, representation: Representation::Ntt };
        self.output(Op::BaseConvertNtt { dst, a, a_ntt, target }, valid, dst, out);
    }

    /// automorphism of any register by an odd Galois element: the identity, rotations 5^r,
    /// conjugation, elements above 2N and a huge one (all taken modulo 2N); an even one to be
    /// refused.
    fn automorphism(&mut self, valid: bool) {
        let a = self.any(&[]);
        let model = self.shape(a);
        let two_n = 2 * model.basis.n;
        let k = match self.rng.below(5) {
            0 => self.rng.pick(&[1, two_n - 1, usize::MAX]),
            1 => two_n * (1 + self.rng.below(4)) + 2 * self.rng.below(two_n / 2) + 1,
            _ => {
                // 5^r mod 2N
                let r = self.rng.below(two_n);
                (0..r).fold(1, |x, _| x * 5 % two_n)
            }
        };
        let k = if valid { k } else { k ^ 1 };
        let dst = self.destination(&[]);
        self.output(Op::Automorphism { dst, a, k }, valid, dst, model);
    }

    /// mod_down_last and mod_down (refused with nothing left to divide into).
    fn mod_down(&mut self, valid: bool) {
        let a = if valid {
            self.operand(
                &[],
                |m| m.basis.limbs.len() >= 2,
                |g| {
                    let size = 2 + g.rng.below(g.primes - 1);
                    Model { basis: g.basis(g.n, size), ..g.model() }
                },
            )
        } else {
            self.any(&[])
        };
        let model = self.shape(a);
        let limbs = model.basis.limbs.len();
        let t = self.plain_modulus();
        let dst = self.destination(&[]);
        let (op, dropped) = if self.rng.chance(50) {
            (Op::ModDownLast { dst, a, t }, 1)
        } else {
            let count = if valid { 1 + self.rng.below(limbs - 1) } else { self.rng.pick(&[0, limbs]) };
            (Op::ModDown { dst, a, count, t }, count)
        };
        let valid = dropped >= 1 && dropped < limbs;
        let kept = Basis { n: model.basis.n, limbs: model.basis.limbs[..limbs - dropped.min(limbs)].to_vec() };
        self.output(op, valid, dst, Model { basis: kept, ..model });
    }

    /// key_switch of a register in NTT form with fresh random keys: digits of random sizes, one
    /// or two special primes, keys broadcast or not, sometimes a spare key pair; half the time
    /// as mod_up and key_switch_decomposed, with no automorphism, the identity, a rotation or
    /// conjugation (or an element above 2N). To be refused:
    /// no special prime, digits that leave a prime out, a key pair too few, a key without a
    /// special prime, or a key in coefficient form.
    fn key_switch(&mut self, valid: bool) {
        // The input leaves room for at least one special prime.
        let primes = self.primes;
        let c = self.operand(
            &[],
            |m| m.representation == Representation::Ntt && m.basis.limbs.len() < primes,
            |g| {
                let size = 1 + g.rng.below(primes - 1);
                Model { basis: g.basis(g.n, size), representation: Representation::Ntt, ..g.model() }
            },
        );
        let model = self.shape(c);
        let (n, level) = (model.basis.n, model.basis.limbs.clone());
        let mut specials: Vec<usize> = (0..primes).filter(|l| !level.contains(l)).collect();
        self.rng.shuffle(&mut specials);
        specials.truncate(1 + self.rng.below(specials.len().min(2)));
        let mut extended = Basis { n, limbs: level.iter().chain(&specials).copied().collect() };
        let mut digits = Vec::new();
        let mut start = 0;
        while start < level.len() {
            let end = start + 1 + self.rng.below(level.len() - start);
            digits.push(Basis { n, limbs: level[start..end].to_vec() });
            start = end;
        }
        let pairs = digits.len() + usize::from(self.rng.chance(30));
        let mut keys = Vec::with_capacity(pairs);
        for _ in 0..pairs {
            let mut key = || {
                let count = if self.rng.chance(50) { 1 } else { model.count };
                let basis = self.superset(&extended);
                self.batch(&Model { basis, count, representation: Representation::Ntt })
            };
            keys.push((key(), key()));
        }
        if !valid {
            match self.rng.below(5) {
                0 => extended.limbs.truncate(level.len()),
                1 => {
                    digits.pop();
                }
                2 => keys.truncate(digits.len() - 1),
                3 => keys[0].1.basis.limbs.retain(|l| *l != specials[0]),
                _ => keys[0].0.representation = Representation::Coefficient,
            }
        }
        let t = self.plain_modulus();
        let hoisted =
            self.rng.chance(50).then(|| self.rng.pick(&[None, Some(1), Some(5), Some(2 * n - 1), Some(2 * n + 3)]));
        let d0 = self.destination(&[]);
        let d1 = self.destination(&[d0]);
        self.push(Op::KeySwitch { dst: [d0, d1], c, keys, digits, extended, t, hoisted }, valid);
        if valid {
            self.registers[d0] = Some(model.clone());
            self.registers[d1] = Some(model);
        }
    }
}
