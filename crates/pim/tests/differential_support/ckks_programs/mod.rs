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

mod generator;
mod machine;

use std::collections::BTreeMap;
use std::sync::Arc;

use num_complex::Complex64;
use pimhe_exec::CpuBackend;
use pimhe_math::Sampler;
use pimhe_schemes::ckks::linear::LinearTransform;
use pimhe_schemes::ckks::{CkksContext, CkksParameters, Encoder, GaloisKeys};
use pimhe_schemes::rlwe::KeyGenerator;
use pimhe_schemes::Result;

use super::scheme_programs::Keys;
use super::{Draws, Event};

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

/// The product of the primes a rescaling from `level` drops, as the evaluator computes it.
fn dropped(ctx: &CkksContext, level: usize) -> f64 {
    let primes = ctx.level_basis(level).expect("a level of the chain").primes();
    primes[primes.len() - ctx.params().primes_per_level()..].iter().map(|&q| f64::from(q)).product()
}

pub use machine::run;
