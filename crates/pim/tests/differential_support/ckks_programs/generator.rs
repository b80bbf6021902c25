//! The generator of CKKS programs: it tracks each register's level, scale, size and magnitude
//! by the evaluator's rules, so that most steps are built to succeed and the others to be
//! refused on purpose.

use std::sync::Arc;

use pimhe_schemes::ckks::{CkksContext, CkksParameters};

use super::super::Draws;
use super::{
    dropped, transform, unit, CkksFixture, CkksOp, CkksProgram, CkksStep, Constant, REGISTERS, ROTATION_STEPS, SETS,
    SPARSE_SLOTS, STEPS_WITHOUT_KEY,
};

/// What the generator tracks of a register: enough to build valid (or refused) steps and to
/// keep most messages within their modulus.
#[derive(Debug, Clone)]
struct Cipher {
    level: usize,
    /// The scale, computed as the evaluator computes it (so that scale comparisons agree).
    scale: f64,
    size: usize,
    count: usize,
    slots: usize,
    /// A bound on |value|.
    magnitude: f64,
}

/// Two scales the evaluator takes for the same (its tolerance).
fn same_scale(a: f64, b: f64) -> bool {
    (a / b - 1.0).abs() <= 1e-9
}

/// Whether a ciphertext at `level` may carry `scale`, by the evaluator's rule: at least
/// [`CkksParameters::MIN_SCALE`], below half the level's modulus.
fn holds(ctx: &CkksContext, scale: f64, level: usize) -> bool {
    let log_q = ctx.level_basis(level).expect("a level of the chain").log_modulus();
    scale >= CkksParameters::MIN_SCALE && scale.log2() < log_q - 1.0
}

/// The level and scale of `x + y`, or `None` where the evaluator refuses to align them: two
/// counts or slot counts, two scales at one level, or two levels whose scales differ with no
/// rescaling between them to reconcile them, or whose rescaling's integer factor (low scale /
/// high scale x the primes it drops) would be below low scale / 2^10 (a product awaiting its
/// own rescaling).
fn aligned(ctx: &CkksContext, x: &Cipher, y: &Cipher) -> Option<(usize, f64)> {
    if x.count != y.count || x.slots != y.slots {
        return None;
    }
    if x.level == y.level {
        return same_scale(x.scale, y.scale).then_some((x.level, x.scale));
    }
    let (low, high) = if x.level < y.level { (x, y) } else { (y, x) };
    let reconcilable = same_scale(high.scale, low.scale)
        || (ctx.depth_left(high.level) > ctx.depth_left(low.level)
            && low.scale / high.scale * dropped(ctx, high.level) >= low.scale / 1024.0);
    reconcilable.then_some((low.level, low.scale))
}

/// The level and scale of `x * y` (the levels meet at the lower one), or `None` where refused.
fn multiplied(ctx: &CkksContext, x: &Cipher, y: &Cipher) -> Option<(usize, f64)> {
    let (level, scale) = (x.level.min(y.level), x.scale * y.scale);
    let fits = x.size == 2 && y.size == 2 && x.count == y.count && x.slots == y.slots && holds(ctx, scale, level);
    fits.then_some((level, scale))
}

impl CkksProgram {
    /// The program of `seed` for the fixture of its set ([`Self::set_of`] says which).
    pub fn generate(seed: u64, fixture: &CkksFixture) -> Self {
        let mut rng = Draws::new(seed);
        let (set, count, slots) = Self::draw(&mut rng, fixture.ctx().max_slots());
        assert_eq!(SETS[set], fixture.set, "the fixture of another set");
        let ctx = fixture.ctx().clone();
        let elements: Vec<usize> = ROTATION_STEPS.iter().map(|&s| ctx.rotation_element(s)).collect();
        let mut generator =
            CkksGenerator { rng, ctx, elements, count, slots, registers: vec![None; REGISTERS], steps: Vec::new() };
        let length = 3 + generator.rng.below(16);
        while generator.steps.len() < length {
            generator.step();
        }
        Self { set, count, slots, steps: generator.steps }
    }

    /// The parameter set of the program of `seed` (drawn first, so a caller knows which
    /// fixture to pass to [`Self::generate`]).
    pub fn set_of(seed: u64) -> usize {
        Draws::new(seed).below(SETS.len())
    }

    fn draw(rng: &mut Draws, max_slots: usize) -> (usize, usize, usize) {
        let set = rng.below(SETS.len());
        let count = 1 + rng.below(3);
        let slots = if rng.chance(40) { max_slots } else { rng.pick(&SPARSE_SLOTS) };
        (set, count, slots)
    }
}

struct CkksGenerator {
    rng: Draws,
    ctx: Arc<CkksContext>,
    /// The Galois elements of the rotations with keys.
    elements: Vec<usize>,
    count: usize,
    slots: usize,
    registers: Vec<Option<Cipher>>,
    steps: Vec<CkksStep>,
}

impl CkksGenerator {
    fn live(&self, accept: impl Fn(&Cipher) -> bool) -> Vec<usize> {
        (0..REGISTERS).filter(|&r| self.registers[r].as_ref().is_some_and(&accept)).collect()
    }

    fn cipher(&self, register: usize) -> Cipher {
        self.registers[register].clone().expect("operands are live")
    }

    /// Whether a register's message fits its level comfortably, its values are small and its
    /// scale leaves them precision: the operands the generator prefers, so that most
    /// decryptions can be checked.
    fn healthy(&self, c: &Cipher) -> bool {
        let log_q = self.ctx.level_basis(c.level).expect("a level of the chain").log_modulus();
        c.magnitude <= 8.0
            && c.scale.log2() + c.magnitude.log2().max(0.0) + 6.0 < log_q
            && c.scale > self.ctx.default_scale() / 256.0
    }

    /// A predicate of the registers whose scale is about the default one (not a product
    /// waiting for its rescaling).
    fn near_default(&self) -> impl Fn(&Cipher) -> bool {
        let default = self.ctx.default_scale();
        move |c| c.scale < 1.5 * default
    }

    /// Whether a rotation by `steps` has what it needs: a key, or none when it moves nothing
    /// (element 1, a copy).
    fn has_key(&self, steps: i64) -> bool {
        let element = self.ctx.rotation_element(steps);
        element == 1 || self.elements.contains(&element)
    }

    /// A valid CKKS level (the base primes, then whole rescaling levels) not above the top.
    fn is_level(&self, level: usize) -> bool {
        let (min, per) = (self.ctx.min_level(), self.ctx.params().primes_per_level());
        level >= min && level <= self.ctx.max_level() && (level - min).is_multiple_of(per)
    }

    /// Encrypts into a register other than `keep` (with the program's slot count, or now and
    /// then another) and returns it.
    fn encrypt(&mut self, keep: &[usize]) -> usize {
        let free: Vec<usize> = (0..REGISTERS).filter(|r| !keep.contains(r)).collect();
        let dst = self.rng.pick(&free);
        let slots = if self.rng.chance(6) { self.rng.pick(&SPARSE_SLOTS) } else { self.slots };
        let (values, symmetric, sampler) = (self.rng.word(), self.rng.chance(30), self.rng.word());
        self.steps.push(CkksStep { op: CkksOp::Encrypt { dst, values, slots, symmetric, sampler }, valid: true });
        let (level, scale) = (self.ctx.max_level(), self.ctx.default_scale());
        let cipher = Cipher { level, scale, size: 2, count: self.count, slots, magnitude: 2f64.sqrt() };
        self.registers[dst] = Some(cipher);
        dst
    }

    /// A register passing `accept` (mostly a healthy one), or a fresh encryption.
    fn operand(&mut self, keep: &[usize], accept: impl Fn(&Cipher) -> bool) -> usize {
        let healthy = self.live(|c| accept(c) && self.healthy(c));
        let found = if healthy.is_empty() || self.rng.chance(10) { self.live(&accept) } else { healthy };
        let found: Vec<usize> = found.into_iter().filter(|r| !keep.contains(r)).collect();
        if !found.is_empty() && self.rng.chance(85) {
            self.rng.pick(&found)
        } else {
            self.encrypt(keep)
        }
    }

    fn output(&mut self, op: CkksOp, valid: bool, dst: usize, cipher: Cipher) {
        self.steps.push(CkksStep { op, valid });
        if valid {
            self.registers[dst] = Some(cipher);
        }
    }

    /// A register of 3 components: mostly one there is, or a new square (of an operand whose
    /// square fits its level: a fresh encryption's always does).
    fn product(&mut self) -> usize {
        let products = self.live(|c| c.size == 3);
        if !products.is_empty() && self.rng.chance(85) {
            return self.rng.pick(&products);
        }
        let (near_default, ctx) = (self.near_default(), self.ctx.clone());
        let a = self.operand(&[], |c| near_default(c) && multiplied(&ctx, c, c).is_some());
        let x = self.cipher(a);
        let dst = self.rng.below(REGISTERS);
        let out = Cipher { scale: x.scale * x.scale, size: 3, magnitude: x.magnitude * x.magnitude, ..x };
        self.output(CkksOp::Square { dst, a }, true, dst, out);
        dst
    }

    /// One plaintext operand for all, one each, or (to be refused) one too many; of the
    /// ciphertexts' slot count, or (to be refused) another.
    fn plain_operands(&mut self, x: &Cipher) -> (usize, usize) {
        let plains = match self.rng.below(12) {
            0 => x.count + 1,
            1..=5 => 1,
            _ => x.count,
        };
        let slots = if self.rng.chance(5) { self.rng.pick(&SPARSE_SLOTS) } else { x.slots };
        (plains, slots)
    }

    fn step(&mut self) {
        let dst = self.rng.below(REGISTERS);
        let ctx = self.ctx.clone();
        let per = ctx.params().primes_per_level();
        let near_default = self.near_default();
        let sqrt2 = 2f64.sqrt();
        match self.rng.below(25) {
            0 => {
                self.encrypt(&[]);
            }
            1 | 2 => {
                // Operands that align (mostly), or do not.
                let a = self.operand(&[], |_| true);
                let x = self.cipher(a);
                let want = !self.rng.chance(10);
                let b = self.operand(&[a], |c| aligned(&ctx, &x, c).is_some() == want);
                let y = self.cipher(b);
                let sum = aligned(&ctx, &x, &y);
                let (level, scale) = sum.unwrap_or((x.level, x.scale));
                let size = x.size.max(y.size);
                let out = Cipher { level, scale, size, magnitude: x.magnitude + y.magnitude, ..x };
                let op = if self.rng.chance(50) { CkksOp::Add { dst, a, b } } else { CkksOp::Sub { dst, a, b } };
                self.output(op, sum.is_some(), dst, out);
            }
            3 => {
                let a = self.operand(&[], |_| true);
                let x = self.cipher(a);
                self.output(CkksOp::Negate { dst, a }, true, dst, x);
            }
            4 => {
                let a = self.operand(&[], |_| true);
                let x = self.cipher(a);
                let magnitude = x.magnitude * x.count as f64;
                self.output(CkksOp::Sum { dst, a }, true, dst, Cipher { count: 1, magnitude, ..x });
            }
            5 => {
                let a = self.operand(&[], |_| true);
                let x = self.cipher(a);
                let c = Constant::Complex(unit(&mut self.rng), unit(&mut self.rng));
                let magnitude = x.magnitude + sqrt2;
                self.output(CkksOp::AddConst { dst, a, c }, true, dst, Cipher { magnitude, ..x });
            }
            6 => {
                let a = self.operand(&[], &near_default);
                let x = self.cipher(a);
                let c = match self.rng.below(3) {
                    0 => Constant::Integer(self.rng.below(7) as i64 - 3),
                    1 => Constant::Real(2.0 * unit(&mut self.rng)),
                    _ => Constant::Complex(unit(&mut self.rng), unit(&mut self.rng)),
                };
                let magnitude = x.magnitude * c.value().norm();
                // Another constant is encoded at the scale of the primes the next rescaling
                // drops: refused at the last level, and where the product's scale would not fit.
                let valid = c.is_integer()
                    || ctx.depth_left(x.level) > 0 && holds(&ctx, x.scale * dropped(&ctx, x.level), x.level);
                let scale = if c.is_integer() || !valid { x.scale } else { x.scale * dropped(&ctx, x.level) };
                self.output(CkksOp::MulConst { dst, a, c }, valid, dst, Cipher { scale, magnitude, ..x });
            }
            7 => {
                let a = self.operand(&[], |c| c.scale < 2f64.powi(90));
                let x = self.cipher(a);
                // At the ciphertexts' scale, or the default one (refused unless it is theirs).
                let (plains, slots) = self.plain_operands(&x);
                let at_default_scale = self.rng.chance(10);
                let valid = (plains == 1 || plains == x.count)
                    && slots == x.slots
                    && (!at_default_scale || same_scale(x.scale, ctx.default_scale()));
                let values = self.rng.word();
                let op = CkksOp::AddPlain { dst, a, values, plains, slots, at_default_scale };
                self.output(op, valid, dst, Cipher { magnitude: x.magnitude + sqrt2, ..x });
            }
            8 => {
                let a = self.operand(&[], &near_default);
                let x = self.cipher(a);
                let (plains, slots) = self.plain_operands(&x);
                let (scale, magnitude) = (x.scale * ctx.default_scale(), x.magnitude * sqrt2);
                let valid = (plains == 1 || plains == x.count) && slots == x.slots && holds(&ctx, scale, x.level);
                let values = self.rng.word();
                let op = CkksOp::MulPlain { dst, a, values, plains, slots };
                self.output(op, valid, dst, Cipher { scale, magnitude, ..x });
            }
            9 | 10 => {
                // Size-2 operands of one count and slot count near the default scale (a size-3
                // one, or mismatched ones, to be refused).
                let want = !self.rng.chance(8);
                let a = self.operand(&[], |c| (c.size == 2) == want && near_default(c));
                let x = self.cipher(a);
                let square = self.rng.chance(30);
                let b = if square {
                    a
                } else {
                    self.operand(&[a], |c| multiplied(&ctx, &x, c).is_some() && near_default(c))
                };
                let y = self.cipher(b);
                let product = multiplied(&ctx, &x, &y);
                let (level, scale) = product.unwrap_or((x.level, x.scale));
                let out = Cipher { level, scale, size: 3, magnitude: x.magnitude * y.magnitude, ..x };
                let op = if square { CkksOp::Square { dst, a } } else { CkksOp::Multiply { dst, a, b } };
                self.output(op, product.is_some(), dst, out);
            }
            11 => {
                // Size 3 (size 2 to be refused).
                let a = if self.rng.chance(8) { self.operand(&[], |c| c.size == 2) } else { self.product() };
                let x = self.cipher(a);
                self.output(CkksOp::Relinearize { dst, a }, x.size == 3, dst, Cipher { size: 2, ..x });
            }
            12 | 13 => {
                // Mostly a product waiting for its rescaling (another one, whose scale would fall
                // below the floor, is refused); at the last level, refused.
                let waiting = self.live(|c| !near_default(c) && ctx.depth_left(c.level) > 0);
                let last = self.live(|c| ctx.depth_left(c.level) == 0);
                let a = if !waiting.is_empty() && self.rng.chance(85) {
                    self.rng.pick(&waiting)
                } else if !last.is_empty() && self.rng.chance(50) {
                    self.rng.pick(&last)
                } else {
                    self.operand(&[], |_| true)
                };
                let x = self.cipher(a);
                let valid = ctx.depth_left(x.level) > 0 && holds(&ctx, x.scale / dropped(&ctx, x.level), x.level - per);
                let out = if valid {
                    Cipher { level: x.level - per, scale: x.scale / dropped(&ctx, x.level), ..x }
                } else {
                    x
                };
                self.output(CkksOp::Rescale { dst, a }, valid, dst, out);
            }
            14 => {
                let want = !self.rng.chance(8);
                let a = self.operand(&[], |c| (c.size == 2 && ctx.depth_left(c.level) > 0) == want && near_default(c));
                let x = self.cipher(a);
                let b = self.operand(&[a], |c| multiplied(&ctx, &x, c).is_some() && near_default(c));
                let y = self.cipher(b);
                let product = multiplied(&ctx, &x, &y).filter(|&(level, scale)| {
                    ctx.depth_left(level) > 0 && holds(&ctx, scale / dropped(&ctx, level), level - per)
                });
                let out = match product {
                    Some((level, scale)) => Cipher {
                        level: level - per,
                        scale: scale / dropped(&ctx, level),
                        size: 2,
                        magnitude: x.magnitude * y.magnitude,
                        ..x
                    },
                    None => x,
                };
                self.output(CkksOp::MultiplyRelinRescale { dst, a, b }, product.is_some(), dst, out);
            }
            15 => {
                // Any level of the primes: above the ciphertext's, or not one of the chain's, or
                // one whose modulus cannot hold the scale, is refused.
                let a = self.operand(&[], |_| true);
                let x = self.cipher(a);
                let level = self.rng.below(ctx.max_level() + 1);
                let valid = self.is_level(level) && level <= x.level && holds(&ctx, x.scale, level);
                self.output(CkksOp::DropToLevel { dst, a, level }, valid, dst, Cipher { level, ..x });
            }
            16 | 17 => {
                // A key mostly; size 3, or no key, to be refused.
                let want = !self.rng.chance(5);
                let a = self.operand(&[], |c| (c.size == 2) == want);
                let x = self.cipher(a);
                let steps = if self.rng.chance(10) {
                    self.rng.pick(&STEPS_WITHOUT_KEY)
                } else {
                    self.rng.pick(&ROTATION_STEPS)
                };
                let valid = x.size == 2 && self.has_key(steps);
                self.output(CkksOp::Rotate { dst, a, steps }, valid, dst, x);
            }
            18 => {
                let a = self.operand(&[], |c| c.size == 2);
                let x = self.cipher(a);
                let mut dsts: Vec<usize> = (0..REGISTERS).collect();
                self.rng.shuffle(&mut dsts);
                dsts.truncate(1 + self.rng.below(3));
                let mut steps: Vec<i64> = dsts.iter().map(|_| self.rng.pick(&ROTATION_STEPS)).collect();
                if self.rng.chance(10) {
                    steps[0] = self.rng.pick(&STEPS_WITHOUT_KEY);
                }
                let valid = x.size == 2 && steps.iter().all(|&s| self.has_key(s));
                self.steps.push(CkksStep { op: CkksOp::RotateHoisted { dsts: dsts.clone(), a, steps }, valid });
                if valid {
                    for dst in dsts {
                        self.registers[dst] = Some(x.clone());
                    }
                }
            }
            19 => {
                let a = self.operand(&[], |c| c.size == 2);
                let x = self.cipher(a);
                self.output(CkksOp::Conjugate { dst, a }, x.size == 2, dst, x);
            }
            20 => {
                // Sparse slots have every key the sum needs; a full packing lacks some (refused).
                let a = self.operand(&[], |c| c.size == 2 && c.slots <= 16);
                let x = self.cipher(a);
                let valid = x.size == 2 && (0..x.slots.trailing_zeros()).all(|k| self.has_key(1 << k));
                let magnitude = x.magnitude * x.slots as f64;
                self.output(CkksOp::SumSlots { dst, a }, valid, dst, Cipher { magnitude, ..x });
            }
            21 => {
                let a = self.operand(&[], |c| c.size == 2 && near_default(c));
                let x = self.cipher(a);
                // A few of the first diagonals (their rotations mostly have keys); now and then
                // a transform of another size, to be refused.
                let slots = if self.rng.chance(5) { self.rng.pick(&SPARSE_SLOTS) } else { x.slots };
                let mut diagonals: Vec<usize> = (0..slots.min(8)).collect();
                self.rng.shuffle(&mut diagonals);
                diagonals.truncate(1 + self.rng.below(4));
                diagonals.sort_unstable();
                let values = self.rng.word();
                let rotations = transform(slots, &diagonals, values).rotations();
                let valid = x.size == 2
                    && slots == x.slots
                    && ctx.depth_left(x.level) > 0
                    && holds(&ctx, x.scale * dropped(&ctx, x.level), x.level)
                    && rotations.iter().all(|&s| self.has_key(s));
                let out = if valid {
                    // (scale x P) / P, as the evaluator computes it.
                    let p = dropped(&ctx, x.level);
                    Cipher { level: x.level - per, scale: x.scale * p / p, magnitude: x.magnitude * sqrt2, ..x }
                } else {
                    x
                };
                self.output(CkksOp::LinearTransform { dst, a, slots, diagonals, values }, valid, dst, out);
            }
            22 => {
                let a = self.operand(&[], |_| true);
                self.steps.push(CkksStep { op: CkksOp::Download { a }, valid: true });
            }
            _ => {
                let a = self.operand(&[], |_| true);
                self.steps.push(CkksStep { op: CkksOp::Decrypt { a }, valid: true });
            }
        }
    }
}
