//! Random programs of CKKS operations on ciphertext batches.
//!
//! A program draws one of a few small parameter sets ([`SETS`]: N = 2048 or 4096, one prime per
//! level or two, 1 to 3 key-switching digits; insecure, for speed), a batch size (1 to 3
//! ciphertexts) and a slot count (a full packing or a sparse one of 4 to 16 slots), then steps
//! over a register file of ciphertext batches: seeded encryption (public or secret key), add,
//! sub, negate, sum, add_const, mul_const (integer, real, complex), add_plain, mul_plain,
//! multiply (and squares), relinearize, rescale, multiply_relin_rescale, drop_to_level,
//! rotations (with a key, or now and then without one), hoisted rotations, conjugation, the sum
//! over slots and a small linear transform; and reads (every component, bit for bit, and the
//! decryption). Keys (relinearization, Galois keys of [`ROTATION_STEPS`] and conjugation) are
//! made once per parameter set, on the CPU, with a seeded sampler, and used by every backend.
//! Some steps are built to be refused (rescaling at the last level, scales or slot counts that
//! do not match, a missing Galois key, a level that is not one of the chain's, a scale its level
//! cannot hold: below [`CkksParameters::MIN_SCALE`] after a rescaling of what was not
//! multiplied, or reaching half the level's modulus after a product), and every backend must
//! refuse them with the same words.
//!
//! Besides the traces, a run decrypts against a plaintext shadow: the same operations on the
//! complex slot values, with a rough estimate of the error each register carries (fresh noise,
//! key switching and rescaling rounding, scaled by what later operations multiply it by).
//! Every decryption whose message still fits its modulus must lie within that estimate
//! ([`CkksCheck`]); the others (scale times values too large for the level: a product left
//! unrescaled at the last levels) still compare bit for bit across backends.

use std::collections::BTreeMap;
use std::sync::Arc;

use num_complex::Complex64;
use pimhe_exec::{Backend, CpuBackend};
use pimhe_math::Sampler;
use pimhe_schemes::ckks::linear::LinearTransform;
use pimhe_schemes::ckks::{CiphertextBatch, CkksContext, CkksParameters, Decryptor, Encoder, Evaluator, GaloisKeys};
use pimhe_schemes::rlwe::KeyGenerator;
use pimhe_schemes::Result;

use super::scheme_programs::{encrypt, Keys};
use super::{trace, Draws, Event, Outcome, Seen};

/// Ciphertext batches a program can hold at once.
const REGISTERS: usize = 5;

/// A parameter set of the programs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CkksSet {
    pub degree: usize,
    pub depth: usize,
    pub scale_bits: u32,
    pub first_prime_bits: u32,
    /// Key-switching digits (`None`: the builder's choice).
    pub dnum: Option<usize>,
}

/// The parameter sets: one prime per level (scales of 25 and 29 bits; one base prime or two)
/// and two (36 and 40 bits), with one to three key-switching digits.
pub const SETS: [CkksSet; 4] = [
    CkksSet { degree: 2048, depth: 3, scale_bits: 25, first_prime_bits: 30, dnum: None },
    CkksSet { degree: 4096, depth: 4, scale_bits: 29, first_prime_bits: 45, dnum: Some(2) },
    CkksSet { degree: 2048, depth: 3, scale_bits: 40, first_prime_bits: 60, dnum: Some(3) },
    CkksSet { degree: 4096, depth: 3, scale_bits: 36, first_prime_bits: 50, dnum: None },
];

impl CkksSet {
    pub fn parameters(&self) -> Result<CkksParameters> {
        let builder = CkksParameters::builder(self.degree)
            .depth(self.depth)
            .scale_bits(self.scale_bits)
            .first_prime_bits(self.first_prime_bits)
            .allow_insecure();
        match self.dnum {
            Some(dnum) => builder.dnum(dnum).build(),
            None => builder.build(),
        }
    }
}

/// The rotation steps with Galois keys (besides conjugation): the powers of two the sum over up
/// to 16 slots needs, and a few others in both directions.
pub const ROTATION_STEPS: [i64; 7] = [1, 2, 4, 8, -1, 3, -5];

/// Rotation steps without a key (none is congruent to a step with one modulo any slot count
/// the parameter sets have, nor to 0, a rotation that moves nothing and needs no key).
const STEPS_WITHOUT_KEY: [i64; 4] = [10, 6, -2, 9];

/// Sparse slot counts (besides the full packing N/2).
const SPARSE_SLOTS: [usize; 3] = [4, 8, 16];

/// A constant operand.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Constant {
    /// An integer: multiplied without consuming a level.
    Integer(i64),
    Real(f64),
    Complex(f64, f64),
}

impl Constant {
    fn value(self) -> Complex64 {
        match self {
            Constant::Integer(c) => Complex64::new(c as f64, 0.0),
            Constant::Real(re) => Complex64::new(re, 0.0),
            Constant::Complex(re, im) => Complex64::new(re, im),
        }
    }

    /// Whether `mul_const` takes it as an integer (the evaluator's own rule).
    fn is_integer(self) -> bool {
        let c = self.value();
        c.im == 0.0 && c.re.fract() == 0.0 && c.re.abs() < 2f64.powi(53)
    }
}

/// One operation; registers are indices below 5. Values and samplers are given by seed.
#[derive(Debug, Clone)]
pub enum CkksOp {
    /// `count` vectors of `slots` values at the default scale.
    Encrypt {
        dst: usize,
        values: u64,
        slots: usize,
        symmetric: bool,
        sampler: u64,
    },
    Add {
        dst: usize,
        a: usize,
        b: usize,
    },
    Sub {
        dst: usize,
        a: usize,
        b: usize,
    },
    Negate {
        dst: usize,
        a: usize,
    },
    Sum {
        dst: usize,
        a: usize,
    },
    AddConst {
        dst: usize,
        a: usize,
        c: Constant,
    },
    MulConst {
        dst: usize,
        a: usize,
        c: Constant,
    },
    /// `plains` plaintexts of `slots` slots (one for all, one each, or a number refused),
    /// encoded at the ciphertexts' scale or (`at_default_scale`) the default one.
    AddPlain {
        dst: usize,
        a: usize,
        values: u64,
        plains: usize,
        slots: usize,
        at_default_scale: bool,
    },
    /// Plaintexts at the default scale.
    MulPlain {
        dst: usize,
        a: usize,
        values: u64,
        plains: usize,
        slots: usize,
    },
    Multiply {
        dst: usize,
        a: usize,
        b: usize,
    },
    Square {
        dst: usize,
        a: usize,
    },
    Relinearize {
        dst: usize,
        a: usize,
    },
    Rescale {
        dst: usize,
        a: usize,
    },
    MultiplyRelinRescale {
        dst: usize,
        a: usize,
        b: usize,
    },
    DropToLevel {
        dst: usize,
        a: usize,
        level: usize,
    },
    Rotate {
        dst: usize,
        a: usize,
        steps: i64,
    },
    /// Hoisted rotations by each of `steps` into the matching register of `dsts`.
    RotateHoisted {
        dsts: Vec<usize>,
        a: usize,
        steps: Vec<i64>,
    },
    Conjugate {
        dst: usize,
        a: usize,
    },
    SumSlots {
        dst: usize,
        a: usize,
    },
    /// The `slots` x `slots` matrix with the given non-zero diagonals, entries from `values`.
    LinearTransform {
        dst: usize,
        a: usize,
        slots: usize,
        diagonals: Vec<usize>,
        values: u64,
    },
    /// Every component, downloaded, and the batch's level, size, count, slots and scale.
    Download {
        a: usize,
    },
    /// The decrypted coefficients and decoded slots of every ciphertext.
    Decrypt {
        a: usize,
    },
}

/// An operation and whether the generator built it to succeed.
#[derive(Debug, Clone)]
pub struct CkksStep {
    pub op: CkksOp,
    pub valid: bool,
}

/// A program: its parameter set (an index into [`SETS`]), batch size, slot count and steps.
#[derive(Debug, Clone)]
pub struct CkksProgram {
    pub set: usize,
    pub count: usize,
    pub slots: usize,
    pub steps: Vec<CkksStep>,
}

impl std::fmt::Display for CkksProgram {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "CKKS program: {:?}, {} ciphertexts per batch, {} slots", SETS[self.set], self.count, self.slots)?;
        for (index, step) in self.steps.iter().enumerate() {
            writeln!(f, "  {index:3}: {:?}{}", step.op, if step.valid { "" } else { "  (to be refused)" })?;
        }
        Ok(())
    }
}

/// The keys of one parameter set, made once on the CPU.
pub struct CkksFixture {
    pub set: CkksSet,
    pub keys: Keys<CkksContext>,
    pub galois: GaloisKeys,
    pub encoder: Encoder,
}

impl CkksFixture {
    /// Set `set` of [`SETS`] with keys from `seed`.
    pub fn new(set: usize, seed: u64) -> Self {
        let set = SETS[set];
        let ctx = CkksContext::new(set.parameters().expect("the sets are valid")).expect("the sets are valid");
        let keys = Keys::new(&ctx, seed).expect("key generation on the CPU");
        let cpu = CpuBackend::new(Some(1)).expect("a CPU backend");
        let mut generator = KeyGenerator::with_sampler(&cpu, &ctx, Sampler::from_seed_u64(seed ^ 0x6761_6c6f_6973));
        let galois = generator
            .galois_keys(&keys.secret, &ctx.galois_elements(&ROTATION_STEPS, true))
            .expect("Galois keys on the CPU");
        Self { set, encoder: Encoder::new(&ctx), keys, galois }
    }

    pub fn ctx(&self) -> &Arc<CkksContext> {
        &self.keys.ctx
    }

    /// How many polynomials of one prime the evaluation keys take on a device that holds them
    /// all (one DPU): a pair per digit of every switching key, over the data and special primes.
    pub fn key_polynomials(&self) -> usize {
        let rlwe = self.ctx().params().rlwe();
        (1 + self.galois.elements().count()) * rlwe.dnum() * 2 * rlwe.primes().len()
    }
}

/// The plaintext check of a run: decryptions compared with the shadow computation.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct CkksCheck {
    /// Ciphertexts that decrypted to the shadow's values within the estimated error.
    pub agreed: usize,
    /// Ciphertexts whose message (scale x values) no longer fits the modulus of their level, or
    /// whose error estimate leaves it no precision: not comparable.
    pub out_of_depth: usize,
    /// The largest ratio of an error seen to its estimate (below 1 where all agreed).
    pub worst: f64,
    /// Ciphertexts that decrypted to something else, described.
    pub wrong: Vec<String>,
}

impl CkksCheck {
    /// Adds the counts of `other`.
    pub fn absorb(&mut self, other: CkksCheck) {
        self.agreed += other.agreed;
        self.out_of_depth += other.out_of_depth;
        self.worst = self.worst.max(other.worst);
        self.wrong.extend(other.wrong);
    }
}

/// A run's trace and plaintext check.
pub struct CkksRun {
    pub events: Vec<Event>,
    pub plain: CkksCheck,
}

/// The relative error estimate beyond which a decryption is not compared with the shadow (the
/// scale left no precision): the estimates of healthy registers are far below it.
const PRECISION: f64 = 0.05;

/// Uniform in [-1, 1).
fn unit(draws: &mut Draws) -> f64 {
    (draws.word() >> 11) as f64 / (1u64 << 52) as f64 - 1.0
}

/// The values of `seed`: `count` vectors of `slots` complex numbers with parts in [-1, 1).
fn values(seed: u64, count: usize, slots: usize) -> Vec<Vec<Complex64>> {
    let mut draws = Draws::new(seed);
    (0..count).map(|_| (0..slots).map(|_| Complex64::new(unit(&mut draws), unit(&mut draws))).collect()).collect()
}

/// The transform of `slots` slots with `diagonals` whose entries come from `seed`, parts in
/// [-1, 1) divided by the number of diagonals (so the result is no larger than the input's
/// largest slot times sqrt 2).
fn transform(slots: usize, diagonals: &[usize], seed: u64) -> LinearTransform {
    let mut draws = Draws::new(seed);
    let weight = 1.0 / diagonals.len() as f64;
    let diagonals: BTreeMap<usize, Vec<Complex64>> = diagonals
        .iter()
        .map(|&k| {
            let d = (0..slots).map(|_| Complex64::new(unit(&mut draws), unit(&mut draws)) * weight).collect();
            (k, d)
        })
        .collect();
    LinearTransform::from_diagonals(slots, diagonals).expect("diagonals below the slot count")
}

/// slot i gets v[(i + steps) mod n].
fn rotated(v: &[Complex64], steps: i64) -> Vec<Complex64> {
    let n = v.len() as i64;
    (0..n).map(|i| v[(i + steps).rem_euclid(n) as usize]).collect()
}

/// Runs `program` on `backend` with `fixture`'s keys.
pub fn run<B: Backend>(backend: &B, fixture: &CkksFixture, program: &CkksProgram) -> CkksRun {
    assert_eq!(fixture.set, SETS[program.set], "a program run with another set's fixture");
    let mut plain = CkksCheck::default();
    let keys = &fixture.keys;
    let relin = keys.relin.as_ref().expect("CKKS sets have special primes");
    let setup = Evaluator::new(backend, &keys.ctx)
        .with_relin_key(relin)
        .and_then(|e| e.with_galois_keys(&fixture.galois))
        .and_then(|e| Ok((e, Decryptor::new(backend, &keys.secret)?)));
    let (evaluator, decryptor) = match setup {
        Ok(pair) => pair,
        Err(e) => {
            let events = vec![Event { step: 0, valid: true, outcome: Err(format!("setup: {e}")) }];
            return CkksRun { events, plain };
        }
    };
    let mut machine = CkksMachine {
        backend,
        fixture,
        noise: Noise::of(fixture.ctx()),
        evaluator,
        decryptor,
        registers: (0..REGISTERS).map(|_| None).collect(),
        shadow: vec![None; REGISTERS],
    };
    let events = trace(
        &mut machine,
        program.steps.iter().map(|s| (&s.op, s.valid)),
        |machine, op| machine.execute(op, program.count, &mut plain),
        |machine| (0..REGISTERS).filter(|&r| machine.registers[r].is_some()).collect(),
        |a| [CkksOp::Download { a }, CkksOp::Decrypt { a }],
    );
    CkksRun { events, plain }
}

/// What a register's ciphertexts should decrypt to, and the error they are expected to carry.
#[derive(Debug, Clone)]
struct Shadow {
    values: Vec<Vec<Complex64>>,
    /// Estimated bound on the error of any slot (absolute, in slot units).
    error: f64,
}

impl Shadow {
    /// The largest |value|.
    fn magnitude(&self) -> f64 {
        self.values.iter().flatten().map(|z| z.norm()).fold(0.0, f64::max)
    }

    /// Slot-wise `f` of two shadows (the second broadcast when it has one vector).
    fn zip(&self, other: &[Vec<Complex64>], f: impl Fn(Complex64, Complex64) -> Complex64) -> Vec<Vec<Complex64>> {
        self.values
            .iter()
            .enumerate()
            .map(|(i, u)| u.iter().zip(&other[i.min(other.len() - 1)]).map(|(&a, &b)| f(a, b)).collect())
            .collect()
    }

    fn map(&self, f: impl Fn(&[Complex64]) -> Vec<Complex64>) -> Vec<Vec<Complex64>> {
        self.values.iter().map(|v| f(v)).collect()
    }
}

/// Rough error terms of one parameter set, each in coefficient units: divided by a scale, an
/// estimated bound on the largest slot error a step adds. Each is a few times what the sets
/// show (measured over the slots of a few encryptions: fresh public-key noise up to about 21 N,
/// a rescaling's rounding up to about 45 N, a key switch up to about 190 N with eight special
/// primes), so that the check never fails on noise; what it must catch, a wrong rotation or a
/// scale read wrong, is an error of the order of the values.
struct Noise {
    /// Fresh encryption noise.
    fresh: f64,
    /// The rounding of a rescaling (of a 2-component ciphertext) and of an encoding.
    round: f64,
    /// The factor a rescaling's rounding grows by on a 3-component ciphertext (its rounding
    /// error is multiplied by s^2, whose slots reach a few sqrt N).
    round_s2: f64,
    /// One key switch (relinearization, rotation, conjugation): the rounding of the ModDown
    /// by the alpha special primes P (which grows with alpha: its offset is not centred), and
    /// the digits' noise, which P divides by as much as P exceeds a digit.
    key_switch: f64,
}

impl Noise {
    fn of(ctx: &CkksContext) -> Self {
        let n = ctx.degree() as f64;
        let rlwe = ctx.params().rlwe();
        let alpha = rlwe.special_primes().len();
        let bits = |primes: &[u32]| primes.iter().map(|&q| f64::from(q).log2()).sum::<f64>();
        // The largest alpha data primes bound any digit.
        let mut data = rlwe.data_primes().to_vec();
        data.sort_unstable();
        let digit = bits(&data[data.len().saturating_sub(alpha)..]);
        let digits = 2f64.powf(digit - bits(rlwe.special_primes())) * rlwe.dnum() as f64 * 8.0 * n.sqrt();
        let key_switch = n * (4.0 * (alpha * alpha) as f64 + digits);
        Self { fresh: 100.0 * n, round: 150.0 * n, round_s2: 2.0 * n.sqrt(), key_switch }
    }

    /// The rounding of rescaling a ciphertext of `size` components.
    fn rescaling(&self, size: usize) -> f64 {
        if size == 3 {
            self.round * self.round_s2
        } else {
            self.round
        }
    }
}

/// A backend running a CKKS program: ciphertext registers and their plaintext shadows.
struct CkksMachine<'a, B: Backend + 'a> {
    backend: &'a B,
    fixture: &'a CkksFixture,
    noise: Noise,
    evaluator: Evaluator<'a, B>,
    decryptor: Decryptor<'a, B>,
    registers: Vec<Option<CiphertextBatch<B>>>,
    shadow: Vec<Option<Shadow>>,
}

impl<'a, B: Backend> CkksMachine<'a, B> {
    fn get(&self, register: usize) -> std::result::Result<&CiphertextBatch<B>, String> {
        self.registers[register].as_ref().ok_or_else(|| format!("register {register} is empty"))
    }

    fn shadow(&self, register: usize) -> std::result::Result<&Shadow, String> {
        self.shadow[register].as_ref().ok_or_else(|| format!("register {register} is empty"))
    }

    fn ctx(&self) -> &Arc<CkksContext> {
        self.fixture.ctx()
    }

    /// The product of the primes a rescaling from `level` drops (1 where none is left).
    fn dropped(&self, level: usize) -> f64 {
        if self.ctx().depth_left(level) == 0 {
            return 1.0;
        }
        dropped(self.ctx(), level)
    }

    /// The error an addition of `x` and `y` carries, with that of bringing the higher operand
    /// to the lower one's level and scale when they differ: a rescaling after multiplying by
    /// the integer round(low scale / high scale x P), P the primes it drops, whose rounding is a
    /// relative error of up to 1 / (2 x that integer). The integer is about P where the high
    /// operand is at about the low one's scale; where it would be small (a product waiting for
    /// its rescaling) the evaluator refuses the sum, on both backends alike.
    fn sum_error(&self, x: &CiphertextBatch<B>, y: &CiphertextBatch<B>, ex: &Shadow, ey: &Shadow) -> f64 {
        let mut error = ex.error + ey.error;
        let (low, high, high_shadow) = if x.level() < y.level() { (x, y, ey) } else { (y, x, ex) };
        let (low_scale, high_scale) = (low.tag().scale, high.tag().scale);
        if x.level() != y.level() && (high_scale / low_scale - 1.0).abs() > 1e-9 {
            let factor = (low_scale / high_scale * self.dropped(high.level())).round();
            error += self.noise.rescaling(high.size()) / low_scale + high_shadow.magnitude() / (2.0 * factor);
        }
        error
    }

    fn execute(&mut self, op: &CkksOp, count: usize, plain: &mut CkksCheck) -> Outcome {
        let text = |e: pimhe_schemes::SchemeError| e.to_string();
        let noise = &self.noise;
        let ev = &self.evaluator;
        let (dst, result, shadow): (usize, Result<CiphertextBatch<B>>, Shadow) = match *op {
            CkksOp::Encrypt { dst, values: seed, slots, symmetric, sampler } => {
                let values = values(seed, count, slots);
                let scale = self.ctx().default_scale();
                let encoded = values
                    .iter()
                    .map(|v| self.fixture.encoder.encode_sparse(v, slots, scale))
                    .collect::<Result<Vec<_>>>()
                    .map_err(text)?;
                let error = (noise.fresh + noise.round) / scale;
                let result = encrypt(self.backend, &self.fixture.keys, &encoded, symmetric, sampler);
                (dst, result, Shadow { values, error })
            }
            CkksOp::Add { dst, a, b } | CkksOp::Sub { dst, a, b } => {
                let (x, y, sx, sy) = (self.get(a)?, self.get(b)?, self.shadow(a)?, self.shadow(b)?);
                let error = self.sum_error(x, y, sx, sy);
                if matches!(op, CkksOp::Add { .. }) {
                    (dst, ev.add(x, y), Shadow { values: sx.zip(&sy.values, |p, q| p + q), error })
                } else {
                    (dst, ev.sub(x, y), Shadow { values: sx.zip(&sy.values, |p, q| p - q), error })
                }
            }
            CkksOp::Negate { dst, a } => {
                let s = self.shadow(a)?;
                (
                    dst,
                    ev.negate(self.get(a)?),
                    Shadow { values: s.map(|v| v.iter().map(|z| -z).collect()), ..s.clone() },
                )
            }
            CkksOp::Sum { dst, a } => {
                let s = self.shadow(a)?;
                let total = s.values[1..]
                    .iter()
                    .fold(s.values[0].clone(), |acc, v| acc.iter().zip(v).map(|(p, q)| p + q).collect());
                let error = s.error * s.values.len() as f64;
                (dst, ev.sum(self.get(a)?), Shadow { values: vec![total], error })
            }
            CkksOp::AddConst { dst, a, c } => {
                let (x, s) = (self.get(a)?, self.shadow(a)?);
                let error = s.error + noise.round / x.tag().scale;
                let values = s.map(|v| v.iter().map(|z| z + c.value()).collect());
                (dst, ev.add_const(x, c.value()), Shadow { values, error })
            }
            CkksOp::MulConst { dst, a, c } => {
                let (x, s) = (self.get(a)?, self.shadow(a)?);
                // The constant is rounded at the scale of the dropped primes, which the
                // rescaling that should follow divides out (with its own rounding).
                let rounding = if c.is_integer() { 0.0 } else { 2.0 * s.magnitude() / self.dropped(x.level()) };
                let error = s.error * c.value().norm() + rounding;
                let values = s.map(|v| v.iter().map(|z| z * c.value()).collect());
                (dst, ev.mul_const(x, c.value()), Shadow { values, error })
            }
            CkksOp::AddPlain { dst, a, values: seed, plains, slots, at_default_scale } => {
                let (x, s) = (self.get(a)?, self.shadow(a)?);
                let scale = if at_default_scale { self.ctx().default_scale() } else { x.tag().scale };
                let values = values(seed, plains, slots);
                let encoded = values
                    .iter()
                    .map(|v| self.fixture.encoder.encode_sparse(v, slots, scale))
                    .collect::<Result<Vec<_>>>()
                    .map_err(text)?;
                let error = s.error + noise.round / scale;
                let sum = if slots == x.tag().slots { s.zip(&values, |p, q| p + q) } else { Vec::new() };
                (dst, ev.add_plain(x, &encoded), Shadow { values: sum, error })
            }
            CkksOp::MulPlain { dst, a, values: seed, plains, slots } => {
                let (x, s) = (self.get(a)?, self.shadow(a)?);
                let scale = self.ctx().default_scale();
                let values = values(seed, plains, slots);
                let encoded = values
                    .iter()
                    .map(|v| self.fixture.encoder.encode_sparse(v, slots, scale))
                    .collect::<Result<Vec<_>>>()
                    .map_err(text)?;
                // |m| <= sqrt 2, itself rounded at the plaintext's scale.
                let error = s.error * 2f64.sqrt() + s.magnitude() * noise.round / scale;
                let product = if slots == x.tag().slots { s.zip(&values, |p, q| p * q) } else { Vec::new() };
                (dst, ev.mul_plain(x, &encoded), Shadow { values: product, error })
            }
            CkksOp::Multiply { dst, a, b } => {
                let (x, y) = (self.get(a)?, self.get(b)?);
                let shadow = self.product(a, b)?;
                (dst, ev.multiply(x, y), shadow)
            }
            CkksOp::Square { dst, a } => {
                let x = self.get(a)?;
                let shadow = self.product(a, a)?;
                (dst, ev.multiply(x, x), shadow)
            }
            CkksOp::Relinearize { dst, a } => {
                let (x, s) = (self.get(a)?, self.shadow(a)?);
                let error = s.error + noise.key_switch / x.tag().scale;
                (dst, ev.relinearize(x), Shadow { error, ..s.clone() })
            }
            CkksOp::Rescale { dst, a } => {
                let (x, s) = (self.get(a)?, self.shadow(a)?);
                let error = s.error + noise.rescaling(x.size()) * self.dropped(x.level()) / x.tag().scale;
                (dst, ev.rescale(x), Shadow { error, ..s.clone() })
            }
            CkksOp::MultiplyRelinRescale { dst, a, b } => {
                let (x, y) = (self.get(a)?, self.get(b)?);
                let mut shadow = self.product(a, b)?;
                let (level, scale) = (x.level().min(y.level()), x.tag().scale * y.tag().scale);
                shadow.error += (noise.key_switch + noise.round * self.dropped(level)) / scale;
                (dst, ev.multiply_relin_rescale(x, y), shadow)
            }
            CkksOp::DropToLevel { dst, a, level } => {
                (dst, ev.drop_to_level(self.get(a)?, level), self.shadow(a)?.clone())
            }
            CkksOp::Rotate { dst, a, steps } => {
                let (x, s) = (self.get(a)?, self.shadow(a)?);
                let error = s.error + noise.key_switch / x.tag().scale;
                let values = s.map(|v| rotated(v, steps));
                (dst, ev.rotate(x, steps), Shadow { values, error })
            }
            CkksOp::RotateHoisted { ref dsts, a, ref steps } => {
                let (x, s) = (self.get(a)?, self.shadow(a)?);
                let error = s.error + noise.key_switch / x.tag().scale;
                let results = ev.rotate_hoisted(x, steps).map_err(text)?;
                let shadows: Vec<Shadow> =
                    steps.iter().map(|&r| Shadow { values: s.map(|v| rotated(v, r)), error }).collect();
                for ((&dst, result), shadow) in dsts.iter().zip(results).zip(shadows) {
                    self.registers[dst] = Some(result);
                    self.shadow[dst] = Some(shadow);
                }
                return Ok(Vec::new());
            }
            CkksOp::Conjugate { dst, a } => {
                let (x, s) = (self.get(a)?, self.shadow(a)?);
                let error = s.error + noise.key_switch / x.tag().scale;
                let values = s.map(|v| v.iter().map(|z| z.conj()).collect());
                (dst, ev.conjugate(x), Shadow { values, error })
            }
            CkksOp::SumSlots { dst, a } => {
                let (x, s) = (self.get(a)?, self.shadow(a)?);
                let slots = x.tag().slots as f64;
                let error = slots * (s.error + noise.key_switch / x.tag().scale);
                let values = s.map(|v| vec![v.iter().sum::<Complex64>(); v.len()]);
                (dst, ev.sum_slots(x), Shadow { values, error })
            }
            CkksOp::LinearTransform { dst, a, slots, ref diagonals, values: seed } => {
                let (x, s) = (self.get(a)?, self.shadow(a)?);
                let transform = transform(slots, diagonals, seed);
                // Every product adds the rotated input's error times an entry (at most sqrt 2
                // over the number of diagonals), then one rescaling.
                let error = 2f64.sqrt() * (s.error + noise.key_switch / x.tag().scale)
                    + (noise.round + 2.0 * noise.key_switch) / x.tag().scale;
                let values = if slots == x.tag().slots { s.map(|v| transform.apply_plain(v)) } else { Vec::new() };
                (dst, ev.linear_transform(x, &transform), Shadow { values, error })
            }
            CkksOp::Download { a } => {
                let x = self.get(a)?;
                let tag = x.tag();
                let shape =
                    vec![x.level() as u64, x.size() as u64, x.count() as u64, tag.slots as u64, tag.scale.to_bits()];
                let mut seen = vec![Seen::Slots(shape)];
                for part in x.parts() {
                    seen.push(Seen::Batch(self.backend.download(part).map_err(|e| e.to_string())?));
                }
                return Ok(seen);
            }
            CkksOp::Decrypt { a } => return self.decrypt(a, plain),
        };
        self.registers[dst] = Some(result.map_err(text)?);
        self.shadow[dst] = Some(shadow);
        Ok(Vec::new())
    }

    /// The shadow of `a * b`: the products of the values, and the error of each operand times
    /// the other's values (plus the product of the errors).
    fn product(&self, a: usize, b: usize) -> std::result::Result<Shadow, String> {
        let (sa, sb) = (self.shadow(a)?, self.shadow(b)?);
        let (ma, mb) = (sa.magnitude(), sb.magnitude());
        let error = sa.error * mb + sb.error * ma + sa.error * sb.error;
        Ok(Shadow { values: sa.zip(&sb.values, |p, q| p * q), error })
    }

    /// The decrypted coefficients and decoded slots of register `a`, checked against its shadow.
    fn decrypt(&self, a: usize, check: &mut CkksCheck) -> Outcome {
        let text = |e: pimhe_schemes::SchemeError| e.to_string();
        let (x, shadow) = (self.get(a)?, self.shadow(a)?);
        let plaintexts = self.decryptor.decrypt(x).map_err(text)?;
        let log_q = self.ctx().level_basis(x.level()).map_err(text)?.log_modulus();
        let magnitude = shadow.magnitude();
        // The message (scale x values, and its error) must stay well inside (-Q/2, Q/2), and
        // the scale must leave it precision.
        let fits = x.tag().scale.log2() + (magnitude + shadow.error + 1.0).log2() + 3.0 < log_q
            && shadow.error < PRECISION * (1.0 + magnitude);
        let mut seen = Vec::new();
        for (index, (plaintext, expected)) in plaintexts.iter().zip(&shadow.values).enumerate() {
            let coefficients = plaintext.coefficients().iter().flat_map(|&c| [c as u64, (c >> 64) as u64]).collect();
            seen.push(Seen::Slots(coefficients));
            let slots = self.fixture.encoder.decode(plaintext).map_err(text)?;
            seen.push(Seen::Slots(slots.iter().flat_map(|z| [z.re.to_bits(), z.im.to_bits()]).collect()));
            if !fits {
                check.out_of_depth += 1;
                continue;
            }
            let (slot, error) = slots
                .iter()
                .zip(expected)
                .map(|(got, want)| (got - want).norm())
                .enumerate()
                .fold((0, 0.0), |worst, (i, e)| if e > worst.1 { (i, e) } else { worst });
            check.worst = check.worst.max(error / shadow.error);
            if error <= shadow.error {
                check.agreed += 1;
            } else {
                check.wrong.push(format!(
                    "register {a}, ciphertext {index} (level {}, scale 2^{:.3}): slot {slot} is {} where the \
                     plaintexts give {} (error {error:.3e}, estimated at most {:.3e})",
                    x.level(),
                    x.tag().scale.log2(),
                    slots[slot],
                    expected[slot],
                    shadow.error
                ));
            }
        }
        Ok(seen)
    }
}

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

/// The product of the primes a rescaling from `level` drops, as the evaluator computes it.
fn dropped(ctx: &CkksContext, level: usize) -> f64 {
    let primes = ctx.level_basis(level).expect("a level of the chain").primes();
    primes[primes.len() - ctx.params().primes_per_level()..].iter().map(|&q| f64::from(q)).product()
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

    /// A register of 3 components: mostly one there is, or a new square.
    fn product(&mut self) -> usize {
        let products = self.live(|c| c.size == 3);
        if !products.is_empty() && self.rng.chance(85) {
            return self.rng.pick(&products);
        }
        let near_default = self.near_default();
        let a = self.operand(&[], |c| c.size == 2 && near_default(c));
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
