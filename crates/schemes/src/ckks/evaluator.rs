//! CKKS's own homomorphic operations on the shared [`Evaluator`]: constant operands, rescaling,
//! level and scale management, slot rotations (plain and hoisted), conjugation and the sum over
//! slots; and how CKKS multiplies, aligns operands and makes plaintext operands.

use num_complex::Complex64;
use pimhe_exec::Backend;

use crate::ckks::context::{CkksContext, CkksTag};
use crate::ckks::plaintext::{from_coefficients, upload_plaintexts, CkksPlaintext};
use crate::error::{Result, SchemeError};
use crate::rlwe::{Aligned, CiphertextBatch, Evaluator, Parts, PlainOperation};

/// A CKKS ciphertext batch.
type Batch<B> = CiphertextBatch<B, CkksContext>;

/// Two scales are the same when they differ by less than this, relative: far below the
/// precision of any CKKS result (the scales of two paths to one level agree to about 2^-50).
const SCALE_TOLERANCE: f64 = 1e-9;

/// How coarse the integer factor of [`Evaluator::match_scale`] may be, in steps of the target
/// scale's resolution: a factor at least scale / 2^10 errs by at most 2^9 / scale relative,
/// below the noise a fresh encryption already carries (about sqrt(N) x 3.2 > 2^9 units of the
/// scale at N >= 2^13).
const MAX_FACTOR_ROUNDING_STEPS: f64 = 1024.0;

/// The tensor product of two batches with the same slot count; the scales multiply. Operands at
/// different levels meet at the lower one (dropping primes leaves a CKKS ciphertext valid).
pub(crate) fn multiply<B: Backend>(
    evaluator: &Evaluator<'_, B, CkksContext>,
    a: &Batch<B>,
    b: &Batch<B>,
) -> Result<Batch<B>> {
    check_slots(a, b)?;
    let level = a.level.min(b.level);
    let scale = a.tag.scale * b.tag.scale;
    evaluator.ctx.check_scale(scale, level, "the product")?;
    let (a_parts, b_parts) = (at_level(evaluator, a, level)?, at_level(evaluator, b, level)?);
    let [d0, d1, d2] = if std::ptr::eq(a, b) {
        evaluator.backend.tensor_square(&a_parts[0], &a_parts[1])?
    } else {
        evaluator.backend.tensor(&a_parts[0], &a_parts[1], &b_parts[0], &b_parts[1])?
    };
    Ok(a.derive(vec![d0, d1, d2], level, CkksTag { scale, ..a.tag }))
}

/// Brings two operands of an addition to one level and scale. At one level the scales must
/// agree; across levels the higher operand is brought down by one exact rescaling whose
/// constant also moves its scale onto the lower one's (as OpenFHE's FLEXIBLEAUTO does), then
/// its remaining extra primes are dropped.
pub(crate) fn align<'x, B: Backend>(
    evaluator: &Evaluator<'_, B, CkksContext>,
    a: &'x Batch<B>,
    b: &'x Batch<B>,
) -> Result<Aligned<'x, B, CkksContext>> {
    check_slots(a, b)?;
    if a.level == b.level {
        check_scales(a.tag.scale, b.tag.scale)?;
        return Ok(Aligned { a: Parts::Borrowed(&a.parts), b: Parts::Borrowed(&b.parts), level: a.level, tag: a.tag });
    }
    let (low, high) = if a.level < b.level { (a, b) } else { (b, a) };
    let moved = if (high.tag.scale / low.tag.scale - 1.0).abs() <= SCALE_TOLERANCE {
        evaluator.drop_to_level(high, low.level)?.parts
    } else {
        evaluator.match_scale(high, low.level, low.tag.scale)?.parts
    };
    let (a_parts, b_parts) = if a.level < b.level {
        (Parts::Borrowed(&a.parts), Parts::Owned(moved))
    } else {
        (Parts::Owned(moved), Parts::Borrowed(&b.parts))
    };
    Ok(Aligned { a: a_parts, b: b_parts, level: low.level, tag: low.tag })
}

fn check_slots<B: Backend>(a: &Batch<B>, b: &Batch<B>) -> Result<()> {
    if a.tag.slots != b.tag.slots {
        return Err(SchemeError::InvalidParameters(format!(
            "the operands pack {} and {} slots; combine ciphertexts of one slot count",
            a.tag.slots, b.tag.slots
        )));
    }
    Ok(())
}

fn check_scales(a: f64, b: f64) -> Result<()> {
    if (a / b - 1.0).abs() > SCALE_TOLERANCE {
        return Err(SchemeError::InvalidParameters(format!(
            "scale mismatch at one level: 2^{:.4} vs 2^{:.4}; rescale both operands alike, or encode the plaintext \
             at the ciphertext's scale",
            a.log2(),
            b.log2()
        )));
    }
    Ok(())
}

/// The components of `a` over the primes of `level` (at most a's): dropping primes.
pub(crate) fn at_level<'x, B: Backend>(
    evaluator: &Evaluator<'_, B, CkksContext>,
    a: &'x Batch<B>,
    level: usize,
) -> Result<Parts<'x, B>> {
    if level == a.level {
        return Ok(Parts::Borrowed(&a.parts));
    }
    let basis = evaluator.ctx.level_basis(level)?;
    Ok(Parts::Owned(
        a.parts.iter().map(|p| evaluator.backend.restrict(p, basis)).collect::<pimhe_exec::Result<Vec<_>>>()?,
    ))
}

/// The plaintexts (one, or one per ciphertext) over a's level in NTT form on the device, after
/// checking they pack a's slot count and, for an addition, are at a's scale (the sum keeps a's
/// tag); for a product, that all share one scale, which a loaded plaintext may not respect (the
/// encoder did not check it), and that the product's scale still fits a's level.
pub(crate) fn plain_operand<B: Backend>(
    ctx: &CkksContext,
    backend: &B,
    a: &Batch<B>,
    plains: &[CkksPlaintext],
    operation: PlainOperation,
) -> Result<(B::Buffer, CkksTag)> {
    if let Some(index) = plains.iter().position(|p| p.slots() != a.tag.slots) {
        return Err(SchemeError::InvalidParameters(format!(
            "plaintext {index} packs {} slots, the ciphertexts {}; encode with the ciphertexts' slot count",
            plains[index].slots(),
            a.tag.slots
        )));
    }
    let tag = match operation {
        PlainOperation::Add => {
            for plain in plains {
                check_scales(a.tag.scale, plain.scale())?;
            }
            a.tag
        }
        PlainOperation::Multiply => {
            let scale = plains[0].scale();
            if let Some(index) = plains.iter().position(|p| p.scale() != scale) {
                return Err(SchemeError::InvalidParameters(format!(
                    "plaintext {index} has another scale than plaintext 0; multiply by plaintexts of one scale"
                )));
            }
            ctx.params().check_min_scale(scale, "the plaintext")?;
            ctx.check_scale(a.tag.scale * scale, a.level, "the product")?;
            CkksTag { scale: a.tag.scale * scale, ..a.tag }
        }
    };
    Ok((upload_plaintexts(backend, ctx, plains, ctx.level_basis(a.level)?)?, tag))
}

/// `value` (an integer given as i128) modulo each prime of a basis of `primes`.
fn residues(value: i128, primes: &[u32]) -> Vec<u64> {
    primes.iter().map(|&q| value.rem_euclid(i128::from(q)) as u64).collect()
}

impl<B: Backend> Evaluator<'_, B, CkksContext> {
    /// Adds the constant `c` to every slot (no level consumed): round(c Delta) is the constant
    /// term for the real part and the coefficient of X^(N/2) for the imaginary part, since
    /// X^(N/2) evaluates to i at every slot's root.
    pub fn add_const(&self, a: &Batch<B>, c: Complex64) -> Result<Batch<B>> {
        self.check_batch(a)?;
        check_finite(c)?;
        let (real, imaginary) = (scaled(c.re, a.tag.scale)?, scaled(c.im, a.tag.scale)?);
        if imaginary == 0 {
            // A constant polynomial: one residue per prime, added to every residue of c_0 (NTT
            // form) in one pass, where encoding it as a plaintext would transform every limb.
            let primes = self.ctx.level_basis(a.level)?.primes();
            let ones = vec![1; primes.len()];
            let offset = residues(real, &primes);
            let mut parts = vec![self.backend.constant_accumulate(&[(&a.parts[0], &ones)], Some(&offset))?];
            for part in &a.parts[1..] {
                parts.push(self.backend.copy(part)?);
            }
            return Ok(a.derive(parts, a.level, a.tag));
        }
        let n = self.ctx.degree();
        let mut coefficients = vec![0i128; n];
        coefficients[0] = real;
        coefficients[n / 2] = imaginary;
        let plain = from_coefficients(coefficients, a.tag.scale, a.tag.slots);
        let buffer = upload_plaintexts(self.backend, &self.ctx, &[plain], self.ctx.level_basis(a.level)?)?;
        let mut parts = self.copy_parts(a)?;
        self.backend.add_assign(&mut parts[0], &buffer)?;
        Ok(a.derive(parts, a.level, a.tag))
    }

    /// Multiplies every slot by the constant `c`. An integer (|c| < 2^53) costs no level: the
    /// ciphertext is multiplied by it and the scale stays. Any other constant is encoded at the
    /// scale of the primes the next [`Evaluator::rescale`] drops, so that rescaling brings the
    /// scale back to a's (call it next); the result's scale is a's times that, refused where it
    /// would reach half the modulus of a's level (a product still waiting for its rescaling).
    pub fn mul_const(&self, a: &Batch<B>, c: Complex64) -> Result<Batch<B>> {
        self.check_batch(a)?;
        check_finite(c)?;
        let primes = self.ctx.level_basis(a.level)?.primes();
        if c.im == 0.0 && c.re.fract() == 0.0 && c.re.abs() < 2f64.powi(53) {
            let constants = residues(c.re as i128, &primes);
            let parts = a
                .parts
                .iter()
                .map(|p| self.backend.mul_limb_constants(p, &constants))
                .collect::<pimhe_exec::Result<Vec<_>>>()?;
            return Ok(a.derive(parts, a.level, a.tag));
        }
        let dropped = self.dropped_primes(a.level)?;
        let scale: f64 = dropped.iter().map(|&q| f64::from(q)).product();
        self.ctx.check_scale(a.tag.scale * scale, a.level, "the product")?;
        let parts = if c.im == 0.0 {
            let constants = residues(scaled(c.re, scale)?, &primes);
            a.parts
                .iter()
                .map(|p| self.backend.mul_limb_constants(p, &constants))
                .collect::<pimhe_exec::Result<Vec<_>>>()?
        } else {
            let n = self.ctx.degree();
            let mut coefficients = vec![0i128; n];
            coefficients[0] = scaled(c.re, scale)?;
            coefficients[n / 2] = scaled(c.im, scale)?;
            let plain = from_coefficients(coefficients, scale, a.tag.slots);
            let buffer = upload_plaintexts(self.backend, &self.ctx, &[plain], self.ctx.level_basis(a.level)?)?;
            a.parts.iter().map(|p| self.backend.mul(p, &buffer)).collect::<pimhe_exec::Result<Vec<_>>>()?
        };
        Ok(a.derive(parts, a.level, CkksTag { scale: a.tag.scale * scale, ..a.tag }))
    }

    /// Divides by the primes of the current level (one or two, [`crate::ckks::CkksParameters::primes_per_level`])
    /// and drops them: the scale is divided by their product. Fails when only the base primes
    /// are left, and where the scale would fall below [`crate::ckks::CkksParameters::MIN_SCALE`]
    /// (a ciphertext that was not multiplied since its last rescaling).
    ///
    /// ```
    /// # use pimhe_exec::CpuBackend;
    /// # use pimhe_schemes::ckks::*;
    /// # use num_complex::Complex64;
    /// # let backend = CpuBackend::new(Some(1)).unwrap();
    /// # let ctx = CkksContext::new(CkksParameters::builder(2048).depth(2).allow_insecure().build().unwrap()).unwrap();
    /// # let mut keygen = KeyGenerator::new(&backend, &ctx).unwrap();
    /// # let secret = keygen.secret_key().unwrap();
    /// # let plain = Encoder::new(&ctx).encode_real(&[1.0, 2.0, 3.0], ctx.default_scale()).unwrap();
    /// # let x = Encryptor::with_secret_key(&backend, &secret).unwrap().encrypt(&[plain]).unwrap();
    /// let evaluator = Evaluator::new(&backend, &ctx);
    /// // A product rescaled: back to about the scale 2^40.
    /// let scaled = evaluator.rescale(&evaluator.mul_const(&x, Complex64::new(0.5, 0.0)).unwrap()).unwrap();
    /// assert!((scaled.tag().scale.log2() - 40.0).abs() < 0.1);
    /// // An integer constant keeps the scale: rescaling after it would leave 2^0, refused.
    /// let doubled = evaluator.mul_const(&x, Complex64::new(2.0, 0.0)).unwrap();
    /// assert!(evaluator.rescale(&doubled).unwrap_err().to_string().contains("too small"));
    /// ```
    pub fn rescale(&self, a: &Batch<B>) -> Result<Batch<B>> {
        let (dropped, level, tag) = self.rescaled(a)?;
        let parts = a
            .parts
            .iter()
            .map(|p| match dropped {
                1 => self.backend.mod_down_last(p, None),
                count => self.backend.mod_down(p, count, None),
            })
            .collect::<pimhe_exec::Result<Vec<_>>>()?;
        Ok(a.derive(parts, level, tag))
    }

    /// [`Evaluator::rescale`] of `a` into `a` itself, bit for bit the same result: each
    /// component is divided in place ([`Backend::mod_down_last_in_place`] where one prime is
    /// dropped, [`Backend::mod_down_in_place`] where a level has several), without a second
    /// batch. `a` is unchanged when it is refused.
    ///
    /// ```
    /// use num_complex::Complex64;
    /// use pimhe_exec::CpuBackend;
    /// use pimhe_schemes::ckks::*;
    /// let backend = CpuBackend::new(Some(1)).unwrap();
    /// let ctx = CkksContext::new(CkksParameters::builder(1024).depth(2).allow_insecure().build().unwrap()).unwrap();
    /// let secret = KeyGenerator::new(&backend, &ctx).unwrap().secret_key().unwrap();
    /// let plain = Encoder::new(&ctx).encode_real(&[1.0, 2.0], ctx.default_scale()).unwrap();
    /// let x = Encryptor::with_secret_key(&backend, &secret).unwrap().encrypt(&[plain]).unwrap();
    /// let evaluator = Evaluator::new(&backend, &ctx);
    /// let mut halved = evaluator.mul_const(&x, Complex64::new(0.5, 0.0)).unwrap();
    /// let expected = evaluator.rescale(&halved).unwrap();
    /// evaluator.rescale_in_place(&mut halved).unwrap();
    /// assert_eq!(halved.level(), expected.level());
    /// ```
    pub fn rescale_in_place(&self, a: &mut Batch<B>) -> Result<()> {
        let (dropped, level, tag) = self.rescaled(a)?;
        if dropped == 1 {
            for part in &mut a.parts {
                self.backend.mod_down_last_in_place(part, None)?;
            }
        } else {
            for part in &mut a.parts {
                self.backend.mod_down_in_place(part, dropped, None)?;
            }
        }
        (a.level, a.tag) = (level, tag);
        Ok(())
    }

    /// What rescaling `a` does, once checked: the primes it drops, the level and tag after.
    fn rescaled(&self, a: &Batch<B>) -> Result<(usize, usize, CkksTag)> {
        self.check_batch(a)?;
        let dropped = self.dropped_primes(a.level)?;
        let product: f64 = dropped.iter().map(|&q| f64::from(q)).product();
        let (level, scale) = (a.level - dropped.len(), a.tag.scale / product);
        self.ctx.check_scale(scale, level, "the rescaled ciphertext")?;
        Ok((dropped.len(), level, CkksTag { scale, ..a.tag }))
    }

    /// `a * b`, relinearized and rescaled: the usual product (rescaled in place: the
    /// relinearized product is an intermediate).
    pub fn multiply_relin_rescale(&self, a: &Batch<B>, b: &Batch<B>) -> Result<Batch<B>> {
        let mut product = self.relinearize(&self.multiply(a, b)?)?;
        self.rescale_in_place(&mut product)?;
        Ok(product)
    }

    /// The same ciphertexts read as packing `slots` slots (a power of two up to N/2): a copy
    /// with another slot count on its tag, no residue changed. Reading n slots as more is
    /// always sound (an n-slot packing repeats its slots with period n over all N/2); reading
    /// N/2 slots as n is sound only where the slots do repeat with period n, which the caller
    /// knows from its layout (a vector replicated across the slots, as HELR's weights are) and
    /// the evaluator cannot check: sparse bootstrapping then keeps one copy of the period (the
    /// mean of the copies).
    ///
    /// ```
    /// use pimhe_exec::CpuBackend;
    /// use pimhe_schemes::ckks::*;
    /// let backend = CpuBackend::new(Some(1)).unwrap();
    /// let ctx = CkksContext::new(CkksParameters::builder(1024).depth(1).allow_insecure().build().unwrap()).unwrap();
    /// let secret = KeyGenerator::new(&backend, &ctx).unwrap().secret_key().unwrap();
    /// let encoder = Encoder::new(&ctx);
    /// // [1, 2, 1, 2, ...] over all 512 slots is the 2-slot packing of [1, 2].
    /// let values: Vec<f64> = (0..512).map(|i| (i % 2 + 1) as f64).collect();
    /// let ct = Encryptor::with_secret_key(&backend, &secret).unwrap()
    ///     .encrypt(&[encoder.encode_real(&values, ctx.default_scale()).unwrap()]).unwrap();
    /// let two = Evaluator::new(&backend, &ctx).with_slot_count(&ct, 2).unwrap();
    /// let plain = Decryptor::new(&backend, &secret).unwrap().decrypt(&two).unwrap();
    /// let decoded = encoder.decode_real(&plain[0]).unwrap();
    /// assert!((decoded[0] - 1.0).abs() < 1e-6 && (decoded[1] - 2.0).abs() < 1e-6);
    /// ```
    pub fn with_slot_count(&self, a: &Batch<B>, slots: usize) -> Result<Batch<B>> {
        self.check_batch(a)?;
        if !slots.is_power_of_two() || slots > self.ctx.max_slots() {
            return Err(SchemeError::InvalidParameters(format!(
                "a CKKS packing has a power-of-two slot count up to N/2 = {}; got {slots}",
                self.ctx.max_slots()
            )));
        }
        Ok(a.derive(self.copy_parts(a)?, a.level, CkksTag { slots, ..a.tag }))
    }

    /// The same ciphertexts over the primes of a lower `level` (a level a rescaling reaches
    /// from the top): the scale is unchanged, the extra primes are dropped. Refused where the
    /// scale would reach half the lower level's modulus (a product waiting for its rescaling).
    pub fn drop_to_level(&self, a: &Batch<B>, level: usize) -> Result<Batch<B>> {
        self.check_batch(a)?;
        self.check_level(level)?;
        if level > a.level {
            return Err(SchemeError::LevelMismatch { left: a.level, right: level });
        }
        self.ctx.check_scale(a.tag.scale, level, "the dropped ciphertext")?;
        let parts = at_level(self, a, level)?;
        let parts = match parts {
            Parts::Borrowed(_) => self.copy_parts(a)?,
            Parts::Owned(parts) => parts,
        };
        Ok(a.derive(parts, level, a.tag))
    }

    /// Brings `a` down to `level` with its scale moved to `scale`: one rescaling by the primes
    /// of a's level after multiplying by round(scale / a.scale x their product), then dropping
    /// what is left above `level`. Needs a at least one rescaling above `level`, and a scale
    /// that rescaling brings near `scale` (not a product still waiting for its own rescaling:
    /// the integer factor would round to about 1 and lose the message; rescale it first).
    pub fn match_scale(&self, a: &Batch<B>, level: usize, scale: f64) -> Result<Batch<B>> {
        self.check_batch(a)?;
        self.check_level(level)?;
        if self.ctx.depth_left(a.level) <= self.ctx.depth_left(level) {
            return Err(SchemeError::InvalidParameters(format!(
                "the scales 2^{:.4} (level {}) and 2^{:.4} (level {level}) differ and no rescaling is left between the \
                 levels to reconcile them; rescale both operands alike",
                a.tag.scale.log2(),
                a.level,
                scale.log2()
            )));
        }
        let dropped = self.dropped_primes(a.level)?;
        let product: f64 = dropped.iter().map(|&q| f64::from(q)).product();
        let exact_factor = scale / a.tag.scale * product;
        if exact_factor < scale / MAX_FACTOR_ROUNDING_STEPS {
            // Rounding the factor to an integer would err by up to 1/(2 x factor), relative:
            // more than the scale's own resolution allows (a product waiting for its rescaling
            // has a factor about 1, so its sum would keep no precision at all).
            return Err(SchemeError::InvalidParameters(format!(
                "cannot bring the scale 2^{:.4} (level {}) to 2^{:.4} at level {level} in one rescaling without \
                 losing precision (the scales differ by 2^{:.1}); rescale that operand first",
                a.tag.scale.log2(),
                a.level,
                scale.log2(),
                (a.tag.scale / scale).log2()
            )));
        }
        let factor = scaled(scale / a.tag.scale, product)?;
        let constants = residues(factor, &self.ctx.level_basis(a.level)?.primes());
        let parts = a
            .parts
            .iter()
            .map(|p| self.backend.mul_limb_constants(p, &constants))
            .collect::<pimhe_exec::Result<Vec<_>>>()?;
        let scaled = a.derive(parts, a.level, CkksTag { scale: a.tag.scale * factor as f64, ..a.tag });
        let rescaled = self.rescale(&scaled)?;
        self.drop_to_level(&rescaled, level)
    }

    /// Rotates the slots left by `steps` (right when negative): slot j gets slot j + steps
    /// (modulo the slot count). Needs the Galois key of `ctx.rotation_element(steps)`.
    pub fn rotate(&self, a: &Batch<B>, steps: i64) -> Result<Batch<B>> {
        self.automorphism(a, self.ctx.rotation_element(steps))
    }

    /// Rotations of one batch by each of `steps`, hoisted: one decomposition (ModUp) shared by
    /// all of them. Results in the order of `steps`.
    pub fn rotate_hoisted(&self, a: &Batch<B>, steps: &[i64]) -> Result<Vec<Batch<B>>> {
        let elements: Vec<usize> = steps.iter().map(|&s| self.ctx.rotation_element(s)).collect();
        self.automorphisms(a, &elements)
    }

    /// The complex conjugate of every slot. Needs the Galois key of `ctx.conjugation_element()`.
    pub fn conjugate(&self, a: &Batch<B>) -> Result<Batch<B>> {
        self.automorphism(a, self.ctx.conjugation_element())
    }

    /// The sum over the slots, in every slot: log2(slots) rotations by 1, 2, 4, ... and
    /// additions. Needs the Galois keys of those rotations.
    pub fn sum_slots(&self, a: &Batch<B>) -> Result<Batch<B>> {
        let mut sum = self.drop_to_level(a, a.level)?;
        let mut step = 1;
        while step < a.tag.slots {
            sum = self.add(&sum, &self.rotate(&sum, step as i64)?)?;
            step *= 2;
        }
        Ok(sum)
    }

    /// The primes the next rescaling from `level` drops (the last one or two of the level).
    pub(crate) fn dropped_primes(&self, level: usize) -> Result<Vec<u32>> {
        if self.ctx.depth_left(level) == 0 {
            return Err(SchemeError::LevelExhausted);
        }
        let count = self.ctx.params().primes_per_level();
        let primes = self.ctx.level_basis(level)?.primes();
        Ok(primes[primes.len() - count..].to_vec())
    }

    fn check_level(&self, level: usize) -> Result<()> {
        let (min, per) = (self.ctx.min_level(), self.ctx.params().primes_per_level());
        if level < min || level > self.ctx.max_level() || !(level - min).is_multiple_of(per) {
            return Err(SchemeError::InvalidParameters(format!(
                "level {level} is not a CKKS level of these parameters: the levels are {min}, {}, ... {} (base primes, \
                 then {per} prime{} per rescaling)",
                min + per,
                self.ctx.max_level(),
                if per == 1 { "" } else { "s" }
            )));
        }
        Ok(())
    }
}

fn check_finite(c: Complex64) -> Result<()> {
    if !c.re.is_finite() || !c.im.is_finite() {
        return Err(SchemeError::InvalidParameters(format!(
            "the constant {c} is not finite; NaN and infinities cannot be encoded"
        )));
    }
    Ok(())
}

/// round(x scale) as an integer, refused where it reaches 2^100 (far beyond any modulus a
/// constant can be reduced into usefully).
fn scaled(x: f64, scale: f64) -> Result<i128> {
    let value = (x * scale).round();
    if !value.is_finite() || value.abs() >= 2f64.powi(100) {
        return Err(SchemeError::InvalidParameters(format!(
            "scale overflow: {x} at scale 2^{:.2} is 2^{:.1}, beyond the 2^100 a constant may reach",
            scale.log2(),
            value.abs().log2()
        )));
    }
    Ok(value as i128)
}
