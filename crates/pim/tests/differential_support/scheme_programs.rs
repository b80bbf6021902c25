//! Random programs of BGV and BFV operations on ciphertext batches.
//!
//! A program draws a scheme, a preset (N = 1024, 2048 or 4096; only 4096 has a relinearization
//! key) and a batch size (1 to 3 ciphertexts), then steps over a register file of ciphertext
//! batches: seeded encryption (public or secret key), add, sub, negate, sum, add_plain,
//! mul_plain, multiply (and squares: the same batch twice), relinearize, BGV's modulus switches,
//! and reads (every component, bit for bit, and the decryption with its noise budget). Keys are
//! made once per preset, on the CPU, with a seeded sampler, and used by every backend.
//!
//! Besides the traces, a run decrypts against a plaintext shadow: the same operations on the
//! slot values modulo t. Every decryption whose noise budget is at least one bit must equal it
//! ([`PlainCheck`]). The generator estimates the budget roughly and mostly avoids operations
//! that would exhaust it, so most decryptions are checked; the others still compare bit for
//! bit across backends.
//!
//! The interpreter is generic over the scheme's context: the preset, the primes a device
//! serves, keys, encryption, every evaluation (plaintext operands included) and decryption are
//! the scheme traits' and the RLWE core's types for both; [`ProgramScheme`] holds only the
//! modulus chain, which BGV has and BFV does not (the levels, the modulus switches).

use std::sync::Arc;

use pimhe_exec::{Backend, CpuBackend};
use pimhe_math::Sampler;
use pimhe_schemes::bfv::BfvContext;
use pimhe_schemes::bgv::BgvContext;
use pimhe_schemes::encoder::{BatchEncoder, ExactScheme, Plaintext};
use pimhe_schemes::rlwe::{
    CiphertextBatch, Decryptor, Encryptor, Evaluator, KeyGenerator, PublicKey, RelinKey, RlweScheme, SecretKey,
};
use pimhe_schemes::Result;

use super::{trace, Draws, Event, Outcome, Seen};

/// Ciphertext batches a program can hold at once.
const REGISTERS: usize = 5;

/// The two schemes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SchemeKind {
    Bgv,
    Bfv,
}

impl SchemeKind {
    /// The scheme's name, as its context's `RlweScheme::NAME` spells it.
    pub fn name(self) -> &'static str {
        match self {
            SchemeKind::Bgv => BgvContext::NAME,
            SchemeKind::Bfv => BfvContext::NAME,
        }
    }
}

/// One operation; registers are indices below 5. Values and samplers are given by seed.
#[derive(Debug, Clone)]
pub enum SchemeOp {
    Encrypt {
        dst: usize,
        values: u64,
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
    /// `plains` plaintexts: one for every ciphertext, or one each (as many as the batch holds);
    /// any other number is refused.
    AddPlain {
        dst: usize,
        a: usize,
        values: u64,
        plains: usize,
    },
    MulPlain {
        dst: usize,
        a: usize,
        values: u64,
        plains: usize,
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
    ModSwitchToNext {
        dst: usize,
        a: usize,
    },
    ModSwitchTo {
        dst: usize,
        a: usize,
        level: usize,
    },
    /// Every component, downloaded.
    Download {
        a: usize,
    },
    /// The decoded slots of every ciphertext and their noise budgets.
    Decrypt {
        a: usize,
    },
}

/// An operation and whether the generator built it to succeed.
#[derive(Debug, Clone)]
pub struct SchemeStep {
    pub op: SchemeOp,
    pub valid: bool,
}

/// A program: its scheme, preset, batch size and steps.
#[derive(Debug, Clone)]
pub struct SchemeProgram {
    pub scheme: SchemeKind,
    pub degree: usize,
    pub count: usize,
    pub steps: Vec<SchemeStep>,
}

impl std::fmt::Display for SchemeProgram {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "{:?} program: preset N = {}, {} ciphertexts per batch", self.scheme, self.degree, self.count)?;
        for (index, step) in self.steps.iter().enumerate() {
            writeln!(f, "  {index:3}: {:?}{}", step.op, if step.valid { "" } else { "  (to be refused)" })?;
        }
        Ok(())
    }
}

/// What the generator knows of a preset.
#[derive(Debug, Clone)]
pub struct Preset {
    pub degree: usize,
    pub plain_modulus: u64,
    /// log2 of the ciphertext modulus at each level (one level for BFV).
    pub level_bits: Vec<f64>,
    pub relinearization: bool,
}

/// What the interpreter needs beyond the scheme traits (keys, encryption, every evaluation with
/// ciphertext and plaintext operands, decryption and the noise budget are the RLWE core's,
/// generic over the context): the modulus chain, which BGV has and BFV does not.
pub trait ProgramScheme: ExactScheme {
    /// log2 of the ciphertext modulus at each level the generator may use (one for BFV, whose
    /// ciphertexts have no modulus chain).
    fn level_bits(&self) -> Result<Vec<f64>>;

    /// BGV's modulus switch: to the next level (`None`) or down to `level`. Only drawn where the
    /// preset has more than one level.
    fn mod_switch<B: Backend>(
        evaluator: &Evaluator<'_, B, Self>,
        a: &CiphertextBatch<B, Self>,
        level: Option<usize>,
    ) -> Result<CiphertextBatch<B, Self>>;
}

impl ProgramScheme for BgvContext {
    fn level_bits(&self) -> Result<Vec<f64>> {
        (0..=self.max_level()).map(|l| Ok(self.level_basis(l)?.log_modulus())).collect()
    }

    fn mod_switch<B: Backend>(
        evaluator: &Evaluator<'_, B, Self>,
        a: &CiphertextBatch<B, Self>,
        level: Option<usize>,
    ) -> Result<CiphertextBatch<B, Self>> {
        match level {
            None => evaluator.mod_switch_to_next(a),
            Some(level) => evaluator.mod_switch_to(a, level),
        }
    }
}

impl ProgramScheme for BfvContext {
    fn level_bits(&self) -> Result<Vec<f64>> {
        Ok(vec![self.ciphertext_basis().log_modulus()])
    }

    fn mod_switch<B: Backend>(
        _evaluator: &Evaluator<'_, B, Self>,
        _a: &CiphertextBatch<B, Self>,
        _level: Option<usize>,
    ) -> Result<CiphertextBatch<B, Self>> {
        unreachable!("BFV has no modulus chain: the generator draws no modulus switch for it")
    }
}

/// The keys of one preset, made on the CPU.
pub struct Keys<S: RlweScheme> {
    pub ctx: Arc<S>,
    pub secret: SecretKey<S>,
    pub public: PublicKey<S>,
    pub relin: Option<RelinKey<S>>,
}

impl<S: RlweScheme> Keys<S> {
    /// Keys of `ctx` from `seed`, with a relinearization key where the parameters allow one.
    pub fn new(ctx: &Arc<S>, seed: u64) -> Result<Self> {
        let cpu = CpuBackend::new(Some(1))?;
        let mut generator = KeyGenerator::with_sampler(&cpu, ctx, Sampler::from_seed_u64(seed));
        let secret = generator.secret_key()?;
        let public = generator.public_key(&secret)?;
        let relin = if has_special_primes(&**ctx) { Some(generator.relin_key(&secret)?) } else { None };
        Ok(Self { ctx: ctx.clone(), secret, public, relin })
    }
}

/// Whether the parameters of `ctx` allow key switching (relinearization, automorphisms).
pub fn has_special_primes<S: RlweScheme>(ctx: &S) -> bool {
    !ctx.rlwe().params().special_primes().is_empty()
}

/// The keys and what the generator needs of a preset, made once.
pub struct Fixture<S: ProgramScheme> {
    pub keys: Keys<S>,
    pub preset: Preset,
    pub encoder: BatchEncoder,
}

impl<S: ProgramScheme> Fixture<S> {
    /// The preset of degree `degree` with keys from `seed`.
    pub fn new(degree: usize, seed: u64) -> Self {
        let ctx = S::preset(degree).expect("presets are valid");
        let preset = Preset {
            degree: ctx.rlwe().degree(),
            plain_modulus: ctx.plain_space().modulus().value() as u64,
            level_bits: ctx.level_bits().expect("presets are valid"),
            relinearization: has_special_primes(&*ctx),
        };
        let keys = Keys::new(&ctx, seed).expect("key generation on the CPU");
        Self { encoder: BatchEncoder::new(&keys.ctx), keys, preset }
    }
}

/// An encryption of `plains` on `backend` with the public key or (`symmetric`) the secret key,
/// randomness from `seed`.
pub fn encrypt<B: Backend, S: RlweScheme>(
    backend: &B,
    keys: &Keys<S>,
    plains: &[S::Plaintext],
    symmetric: bool,
    seed: u64,
) -> Result<CiphertextBatch<B, S>> {
    let encryptor = if symmetric {
        Encryptor::with_secret_key(backend, &keys.secret)?
    } else {
        Encryptor::with_public_key(backend, &keys.public)?
    };
    encryptor.with_sampler(Sampler::from_seed_u64(seed)).encrypt(plains)
}

/// The plaintext check of a run: decryptions compared with the shadow computation.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct PlainCheck {
    /// Ciphertexts that decrypted to the shadow's slots.
    pub agreed: usize,
    /// Ciphertexts with no noise budget left (not comparable with the shadow).
    pub exhausted: usize,
    /// Ciphertexts with budget that decrypted to something else, described.
    pub wrong: Vec<String>,
}

/// A run's trace and plaintext check.
pub struct SchemeRun {
    pub events: Vec<Event>,
    pub plain: PlainCheck,
}

/// The slot values of `seed`: `count` vectors of `slots` values below `t`.
fn values(seed: u64, count: usize, slots: usize, t: u64) -> Vec<Vec<u64>> {
    let mut draws = Draws::new(seed);
    (0..count).map(|_| (0..slots).map(|_| draws.word() % t).collect()).collect()
}

/// Runs `program` on `backend` with `fixture`'s keys.
pub fn run<S: ProgramScheme, B: Backend>(backend: &B, fixture: &Fixture<S>, program: &SchemeProgram) -> SchemeRun {
    assert_eq!(program.scheme.name(), S::NAME, "a {:?} program run with a {} fixture", program.scheme, S::NAME);
    let mut plain = PlainCheck::default();
    let keys = &fixture.keys;
    let evaluator = Evaluator::new(backend, &keys.ctx);
    let evaluator = match &keys.relin {
        Some(key) => evaluator.with_relin_key(key),
        None => Ok(evaluator),
    };
    let setup = evaluator.and_then(|e| Ok((e, Decryptor::new(backend, &keys.secret)?)));
    let (evaluator, decryptor) = match setup {
        Ok(pair) => pair,
        Err(e) => {
            let events = vec![Event { step: 0, valid: true, outcome: Err(format!("setup: {e}")) }];
            return SchemeRun { events, plain };
        }
    };
    let mut machine = SchemeMachine::<S, B> {
        backend,
        fixture,
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
        |a| [SchemeOp::Download { a }, SchemeOp::Decrypt { a }],
    );
    SchemeRun { events, plain }
}

/// A backend running a scheme program: ciphertext registers and their plaintext shadows.
struct SchemeMachine<'a, S: ProgramScheme, B: Backend + 'a> {
    backend: &'a B,
    fixture: &'a Fixture<S>,
    evaluator: Evaluator<'a, B, S>,
    decryptor: Decryptor<'a, B, S>,
    registers: Vec<Option<CiphertextBatch<B, S>>>,
    /// The slots each register's ciphertexts decrypt to.
    shadow: Vec<Option<Vec<Vec<u64>>>>,
}

impl<'a, S: ProgramScheme, B: Backend> SchemeMachine<'a, S, B> {
    fn get(&self, register: usize) -> std::result::Result<&CiphertextBatch<B, S>, String> {
        self.registers[register].as_ref().ok_or_else(|| format!("register {register} is empty"))
    }

    fn shadow(&self, register: usize) -> std::result::Result<&[Vec<u64>], String> {
        self.shadow[register].as_deref().ok_or_else(|| format!("register {register} is empty"))
    }

    fn plains(&self, seed: u64, plains: usize) -> (Vec<Plaintext>, Vec<Vec<u64>>) {
        let preset = &self.fixture.preset;
        let slots = values(seed, plains, preset.degree, preset.plain_modulus);
        let encoded = slots.iter().map(|v| self.fixture.encoder.encode(v).expect("values below t")).collect();
        (encoded, slots)
    }

    fn execute(&mut self, op: &SchemeOp, count: usize, plain: &mut PlainCheck) -> Outcome {
        let t = self.fixture.preset.plain_modulus;
        // Slot-wise combination of two shadows (the second broadcast when it has one vector).
        let zip = |x: &[Vec<u64>], y: &[Vec<u64>], f: &dyn Fn(u64, u64) -> u64| -> Vec<Vec<u64>> {
            x.iter()
                .enumerate()
                .map(|(i, u)| u.iter().zip(&y[i.min(y.len() - 1)]).map(|(&a, &b)| f(a, b) % t).collect())
                .collect()
        };
        let add = |a: u64, b: u64| a + b;
        let sub = |a: u64, b: u64| a + t - b;
        let mul = |a: u64, b: u64| a * b;
        let (dst, result, shadow) = match *op {
            SchemeOp::Encrypt { dst, values, symmetric, sampler } => {
                let (plains, slots) = self.plains(values, count);
                (dst, encrypt(self.backend, &self.fixture.keys, &plains, symmetric, sampler), slots)
            }
            SchemeOp::Add { dst, a, b } => {
                let shadow = zip(self.shadow(a)?, self.shadow(b)?, &add);
                (dst, self.evaluator.add(self.get(a)?, self.get(b)?), shadow)
            }
            SchemeOp::Sub { dst, a, b } => {
                let shadow = zip(self.shadow(a)?, self.shadow(b)?, &sub);
                (dst, self.evaluator.sub(self.get(a)?, self.get(b)?), shadow)
            }
            SchemeOp::Negate { dst, a } => {
                let x = self.shadow(a)?;
                let shadow = zip(&vec![vec![0; x[0].len()]; x.len()], x, &sub);
                (dst, self.evaluator.negate(self.get(a)?), shadow)
            }
            SchemeOp::Sum { dst, a } => {
                let x = self.shadow(a)?;
                let shadow = x[1..].iter().fold(vec![x[0].clone()], |acc, y| zip(&acc, std::slice::from_ref(y), &add));
                (dst, self.evaluator.sum(self.get(a)?), shadow)
            }
            SchemeOp::AddPlain { dst, a, values, plains } | SchemeOp::MulPlain { dst, a, values, plains } => {
                let (encoded, slots) = self.plains(values, plains);
                let x = self.get(a)?;
                if matches!(op, SchemeOp::AddPlain { .. }) {
                    let shadow = zip(self.shadow(a)?, &slots, &add);
                    (dst, self.evaluator.add_plain(x, &encoded), shadow)
                } else {
                    let shadow = zip(self.shadow(a)?, &slots, &mul);
                    (dst, self.evaluator.mul_plain(x, &encoded), shadow)
                }
            }
            SchemeOp::Multiply { dst, a, b } => {
                let shadow = zip(self.shadow(a)?, self.shadow(b)?, &mul);
                (dst, self.evaluator.multiply(self.get(a)?, self.get(b)?), shadow)
            }
            SchemeOp::Square { dst, a } => {
                let shadow = zip(self.shadow(a)?, self.shadow(a)?, &mul);
                let x = self.get(a)?;
                (dst, self.evaluator.multiply(x, x), shadow)
            }
            SchemeOp::Relinearize { dst, a } => {
                (dst, self.evaluator.relinearize(self.get(a)?), self.shadow(a)?.to_vec())
            }
            SchemeOp::ModSwitchToNext { dst, a } => {
                (dst, S::mod_switch(&self.evaluator, self.get(a)?, None), self.shadow(a)?.to_vec())
            }
            SchemeOp::ModSwitchTo { dst, a, level } => {
                (dst, S::mod_switch(&self.evaluator, self.get(a)?, Some(level)), self.shadow(a)?.to_vec())
            }
            SchemeOp::Download { a } => {
                let parts = self.get(a)?.parts();
                let batches = parts.iter().map(|p| self.backend.download(p).map(Seen::Batch));
                return batches.collect::<pimhe_exec::Result<Vec<_>>>().map_err(|e| e.to_string());
            }
            SchemeOp::Decrypt { a } => return self.decrypt(a, plain),
        };
        self.registers[dst] = Some(result.map_err(|e| e.to_string())?);
        self.shadow[dst] = Some(shadow);
        Ok(Vec::new())
    }

    /// The decoded slots and noise budgets of register `a`, checked against its shadow.
    fn decrypt(&self, a: usize, plain: &mut PlainCheck) -> Outcome {
        let c = self.get(a)?;
        let text = |e: pimhe_schemes::SchemeError| e.to_string();
        let budgets = self.decryptor.noise_budget(c).map_err(text)?;
        let mut seen = vec![Seen::Slots(budgets.iter().map(|&b| b as u64).collect())];
        // BFV refuses to decrypt without budget: part of what is compared, not a failed step.
        let plaintexts = match self.decryptor.decrypt(c) {
            Ok(plaintexts) => plaintexts,
            Err(e) => {
                plain.exhausted += budgets.len();
                seen.push(Seen::Refused(e.to_string()));
                return Ok(seen);
            }
        };
        for (index, (plaintext, expected)) in plaintexts.iter().zip(self.shadow(a)?).enumerate() {
            let slots = self.fixture.encoder.decode(plaintext).map_err(text)?;
            match budgets[index] {
                0 => plain.exhausted += 1,
                _ if slots == *expected => plain.agreed += 1,
                budget => plain.wrong.push(format!(
                    "register {a}, ciphertext {index} (noise budget {budget} bits) decrypts to {:?}... \
                     where the plaintexts give {:?}...",
                    &slots[..4],
                    &expected[..4]
                )),
            }
            seen.push(Seen::Slots(slots));
        }
        Ok(seen)
    }
}

/// What the generator tracks of a register: enough to build valid steps and to keep most noise
/// budgets above zero.
#[derive(Debug, Clone)]
struct Cipher {
    level: usize,
    size: usize,
    count: usize,
    /// Rough remaining noise budget in bits.
    budget: f64,
}

/// Bits a fresh ciphertext's noise is taken to have above t: a rough allowance, so that the
/// generator mostly avoids exhausting the budget (the plaintext check counts what it skipped).
const FRESH_NOISE_BITS: f64 = 12.0;

impl SchemeProgram {
    /// The program of `seed` for a preset the caller made ([`Self::draw`] says which).
    pub fn generate(seed: u64, preset: &Preset) -> Self {
        let mut rng = Draws::new(seed);
        let (scheme, degree, count) = Self::draw(&mut rng);
        let mut generator =
            SchemeGenerator { rng, preset: preset.clone(), count, registers: vec![None; REGISTERS], steps: Vec::new() };
        let length = 3 + generator.rng.below(14);
        while generator.steps.len() < length {
            generator.step();
        }
        Self { scheme, degree, count, steps: generator.steps }
    }

    /// The scheme, preset degree and batch size of the program of `seed` (drawn first, so a
    /// caller knows which fixture to pass to [`Self::generate`]).
    pub fn kind(seed: u64) -> (SchemeKind, usize) {
        let (scheme, degree, _) = Self::draw(&mut Draws::new(seed));
        (scheme, degree)
    }

    fn draw(rng: &mut Draws) -> (SchemeKind, usize, usize) {
        let scheme = if rng.below(2) == 0 { SchemeKind::Bgv } else { SchemeKind::Bfv };
        let degree = [1024, 2048, 4096][rng.below(3)];
        (scheme, degree, 1 + rng.below(3))
    }
}

struct SchemeGenerator {
    rng: Draws,
    preset: Preset,
    count: usize,
    registers: Vec<Option<Cipher>>,
    steps: Vec<SchemeStep>,
}

impl SchemeGenerator {
    fn live(&self, accept: impl Fn(&Cipher) -> bool) -> Vec<usize> {
        (0..REGISTERS).filter(|&r| self.registers[r].as_ref().is_some_and(&accept)).collect()
    }

    fn cipher(&self, register: usize) -> Cipher {
        self.registers[register].clone().expect("operands are live")
    }

    fn log_t(&self) -> f64 {
        (self.preset.plain_modulus as f64).log2()
    }

    /// The budget of a fresh ciphertext at `level`.
    fn fresh_budget(&self, level: usize) -> f64 {
        self.preset.level_bits[level] - self.log_t() - FRESH_NOISE_BITS
    }

    /// Encrypts into a register other than `keep` and returns it.
    fn encrypt(&mut self, keep: &[usize]) -> usize {
        let free: Vec<usize> = (0..REGISTERS).filter(|r| !keep.contains(r)).collect();
        let dst = self.rng.pick(&free);
        let (values, symmetric, sampler) = (self.rng.word(), self.rng.chance(30), self.rng.word());
        self.steps.push(SchemeStep { op: SchemeOp::Encrypt { dst, values, symmetric, sampler }, valid: true });
        let level = self.preset.level_bits.len() - 1;
        self.registers[dst] = Some(Cipher { level, size: 2, count: self.count, budget: self.fresh_budget(level) });
        dst
    }

    /// A register passing `accept` (mostly one with budget left), or a fresh encryption.
    fn operand(&mut self, keep: &[usize], accept: impl Fn(&Cipher) -> bool) -> usize {
        let healthy = self.live(|c| accept(c) && c.budget > 4.0);
        let found = if healthy.is_empty() || self.rng.chance(10) { self.live(&accept) } else { healthy };
        let found: Vec<usize> = found.into_iter().filter(|r| !keep.contains(r)).collect();
        if !found.is_empty() && self.rng.chance(85) {
            self.rng.pick(&found)
        } else {
            self.encrypt(keep)
        }
    }

    fn output(&mut self, op: SchemeOp, valid: bool, dst: usize, cipher: Cipher) {
        self.steps.push(SchemeStep { op, valid });
        if valid {
            self.registers[dst] = Some(cipher);
        }
    }

    fn step(&mut self) {
        let dst = self.rng.below(REGISTERS);
        let (log_t, log_n) = (self.log_t(), (self.preset.degree as f64).log2());
        let levels = self.preset.level_bits.len();
        match self.rng.below(16) {
            0 => {
                self.encrypt(&[]);
            }
            1 | 2 => {
                // Operands at one level and of one count, or (to be refused) at two levels or
                // of two counts.
                let a = self.operand(&[], |_| true);
                let x = self.cipher(a);
                let valid = !self.rng.chance(8);
                let b = self.operand(&[a], |c| (c.level == x.level && c.count == x.count) == valid);
                let y = self.cipher(b);
                let valid = y.level == x.level && y.count == x.count;
                let out = Cipher { size: x.size.max(y.size), budget: x.budget.min(y.budget) - 1.0, ..x };
                let op = if self.rng.chance(50) { SchemeOp::Add { dst, a, b } } else { SchemeOp::Sub { dst, a, b } };
                self.output(op, valid, dst, out);
            }
            3 => {
                let a = self.operand(&[], |_| true);
                let x = self.cipher(a);
                self.output(SchemeOp::Negate { dst, a }, true, dst, x);
            }
            4 => {
                let a = self.operand(&[], |_| true);
                let x = self.cipher(a);
                let budget = x.budget - (x.count as f64).log2().ceil();
                self.output(SchemeOp::Sum { dst, a }, true, dst, Cipher { count: 1, budget, ..x });
            }
            5 | 6 => {
                let a = self.operand(&[], |_| true);
                let x = self.cipher(a);
                // One plaintext for all, one each, or (to be refused) one too many.
                let plains = match self.rng.below(10) {
                    0 => x.count + 1,
                    1..=4 => 1,
                    _ => x.count,
                };
                let valid = plains == 1 || plains == x.count;
                let values = self.rng.word();
                let (op, cost) = if self.rng.chance(50) {
                    (SchemeOp::AddPlain { dst, a, values, plains }, 1.0)
                } else {
                    (SchemeOp::MulPlain { dst, a, values, plains }, log_t + log_n / 2.0 + 2.0)
                };
                self.output(op, valid, dst, Cipher { budget: x.budget - cost, ..x });
            }
            7..=9 => {
                // Size-2 operands at one level (a size-3 one to be refused).
                let valid = !self.rng.chance(8);
                let a = self.operand(&[], |c| (c.size == 2) == valid);
                let x = self.cipher(a);
                let square = self.rng.chance(30);
                let b = if square {
                    a
                } else {
                    self.operand(&[a], |c| c.size == 2 && c.level == x.level && c.count == x.count)
                };
                let y = self.cipher(b);
                let valid = x.size == 2 && y.size == 2 && x.level == y.level && x.count == y.count;
                let budget = x.budget.min(y.budget) - log_t - log_n - 4.0;
                let op = if square { SchemeOp::Square { dst, a } } else { SchemeOp::Multiply { dst, a, b } };
                self.output(op, valid, dst, Cipher { size: 3, budget, ..x });
            }
            10 | 11 => {
                // Size 3 with a relinearization key (size 2, or no key, to be refused).
                let relinearization = self.preset.relinearization;
                let valid = !self.rng.chance(8) && relinearization;
                let a = self.operand(&[], |c| (c.size == 3) == valid || !relinearization);
                let x = self.cipher(a);
                let valid = x.size == 3 && relinearization;
                self.output(
                    SchemeOp::Relinearize { dst, a },
                    valid,
                    dst,
                    Cipher { size: 2, budget: x.budget - 1.0, ..x },
                );
            }
            12 | 13 if levels > 1 => {
                let a = self.operand(&[], |_| true);
                let x = self.cipher(a);
                if self.rng.chance(50) {
                    let valid = x.level > 0;
                    let level = x.level.saturating_sub(1);
                    let budget = x.budget.min(self.fresh_budget(level));
                    self.output(SchemeOp::ModSwitchToNext { dst, a }, valid, dst, Cipher { level, budget, ..x });
                } else {
                    // Any level of the chain: above the ciphertext's is refused.
                    let level = self.rng.below(levels);
                    let budget = x.budget.min(self.fresh_budget(level));
                    self.output(
                        SchemeOp::ModSwitchTo { dst, a, level },
                        level <= x.level,
                        dst,
                        Cipher { level, budget, ..x },
                    );
                }
            }
            14 => {
                let a = self.operand(&[], |_| true);
                self.steps.push(SchemeStep { op: SchemeOp::Download { a }, valid: true });
            }
            _ => {
                let a = self.operand(&[], |_| true);
                self.steps.push(SchemeStep { op: SchemeOp::Decrypt { a }, valid: true });
            }
        }
    }
}
