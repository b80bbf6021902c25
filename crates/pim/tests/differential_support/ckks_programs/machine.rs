//! A CKKS program run on a backend: the register file of ciphertext batches, each step's
//! trace, and the plaintext shadow with its error estimate that every decryption is checked against.

use std::sync::Arc;

use num_complex::Complex64;
use pimhe_exec::Backend;
use pimhe_schemes::ckks::{CiphertextBatch, CkksContext, Decryptor, Evaluator};
use pimhe_schemes::Result;

use super::super::scheme_programs::encrypt;
use super::super::{trace, Event, Outcome, Seen};
use super::{
    dropped, rotated, transform, values, CkksCheck, CkksFixture, CkksOp, CkksProgram, CkksRun, PRECISION, REGISTERS,
    SETS,
};

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
