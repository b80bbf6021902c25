//! The bootstrapping pipeline: a plan made from a context (ranges, series, matrices, levels, the
//! Galois elements it needs), the prepared transforms on a backend, and the refresh itself.

use std::f64::consts::PI;
use std::sync::Arc;

use pimhe_exec::Backend;

use crate::ckks::bootstrap::dft::{coeff_to_slot, slot_to_coeff, times_i};
use crate::ckks::bootstrap::encapsulation::{DeviceEncapsulation, EncapsulationKeys};
use crate::ckks::bootstrap::eval_mod::EvalMod;
use crate::ckks::bootstrap::mod_raise::mod_raise;
use crate::ckks::bootstrap::range::{hamming_weight, resolve_range};
use crate::ckks::context::{CkksContext, CkksTag};
use crate::ckks::linear::{LinearTransform, PreparedLinearTransform};
use crate::error::{Result, SchemeError};
use crate::rlwe::{expect_same_context, CiphertextBatch, Decryptor, Evaluator};

/// A CKKS ciphertext batch.
type Batch<B> = CiphertextBatch<B, CkksContext>;

/// The smallest q0 / Delta accepted, 2^5: EvalMod's sine errs by about (2 pi)^2 / 6 (Delta /
/// q0)^2 relative to a coefficient of magnitude Delta, 2^-7 at this ratio (and less for slot
/// values spread over many coefficients); a larger Delta leaves no precision at all.
pub const MIN_MESSAGE_RATIO_BITS: u32 = 5;

/// The choices of a bootstrapping setup; [`Default`] gives the tested ones.
#[derive(Debug, Clone, PartialEq)]
pub struct BootstrapConfig {
    /// The EvalMod range K (inputs x = m/q0 + I with |x| <= K). `None`: the smallest K that
    /// holds for the secret's Hamming weight ([`super::minimum_range`]); a smaller K is refused.
    pub range: Option<f64>,
    /// Double-angle steps r after the cosine series (default 3).
    pub double_angles: u32,
    /// The largest error allowed to the cosine series on [-1, 1] (default 2^-40; the double
    /// angles multiply it by up to 4^r).
    pub series_error: f64,
    /// CoeffToSlot's level budget (default 3): its log2(N/2) butterfly stages merged into
    /// this many sparse transforms, one level each. Fewer levels cost more rotations and
    /// plaintext products (one level is the dense matrix: N/2 diagonals).
    pub coeff_to_slot_levels: usize,
    /// SlotToCoeff's level budget (default 3), as [`Self::coeff_to_slot_levels`].
    pub slot_to_coeff_levels: usize,
    /// Sparse-secret encapsulation through an ephemeral secret of this Hamming weight
    /// ([`super::encapsulation`]; usually [`super::EPHEMERAL_HAMMING_WEIGHT`]), for parameters
    /// whose own secret is dense. `None` (the default): the parameters' secret must be sparse
    /// ternary, and its weight sets the range.
    pub encapsulation: Option<usize>,
    /// The slot count n of the ciphertexts to bootstrap: `None` (the default) for full packing
    /// (N/2), or a power of two below N/2 for sparse packing, which adds log2(N / 2n) rotations
    /// (the trace to the subring the slots live in) and evaluates EvalMod once instead of twice.
    pub slots: Option<usize>,
}

impl BootstrapConfig {
    /// The default configuration suited to `params`: as is for a sparse ternary secret, with
    /// sparse-secret encapsulation through an ephemeral secret of weight
    /// [`super::EPHEMERAL_HAMMING_WEIGHT`] for a dense one (what an OpenFHE user's
    /// `EvalBootstrapSetup` gives: whatever the secret, a plan that can bootstrap it).
    pub fn for_parameters(params: &crate::ckks::CkksParameters) -> Self {
        let encapsulation = match params.rlwe().secret() {
            crate::rlwe::SecretDistribution::SparseTernary { .. } => None,
            crate::rlwe::SecretDistribution::Ternary => Some(super::EPHEMERAL_HAMMING_WEIGHT),
        };
        Self { encapsulation, ..Self::default() }
    }

    /// Levels a bootstrapping with this configuration consumes for a (possibly ephemeral)
    /// secret of Hamming weight `hamming_weight`: the two level budgets and the depth of the
    /// EvalMod the range needs. What a parameter set's depth must cover, plus the levels a
    /// program wants after each bootstrapping.
    pub fn levels_consumed(&self, hamming_weight: usize) -> Result<usize> {
        let eval_mod = self.eval_mod(hamming_weight)?;
        Ok(self.levels_with(&eval_mod))
    }

    fn levels_with(&self, eval_mod: &EvalMod) -> usize {
        self.coeff_to_slot_levels + eval_mod.depth() + self.slot_to_coeff_levels
    }

    fn eval_mod(&self, hamming_weight: usize) -> Result<EvalMod> {
        EvalMod::new(resolve_range(hamming_weight, self.range)?, self.double_angles, self.series_error)
    }
}

impl Default for BootstrapConfig {
    fn default() -> Self {
        Self {
            range: None,
            double_angles: 3,
            series_error: 2f64.powi(-40),
            coeff_to_slot_levels: 3,
            slot_to_coeff_levels: 3,
            encapsulation: None,
            slots: None,
        }
    }
}

/// What a bootstrapping needs, derived from a context and a [`BootstrapConfig`] before any key
/// exists: the EvalMod series, the CoeffToSlot and SlotToCoeff matrices, the levels they use
/// and the level of the result, and the Galois elements whose keys the evaluation uses (only
/// those of the transforms' rotations, and conjugation).
#[derive(Debug, Clone)]
pub struct BootstrapPlan {
    ctx: Arc<CkksContext>,
    hamming_weight: usize,
    encapsulation: bool,
    /// The slot count n the plan bootstraps.
    slots: usize,
    eval_mod: EvalMod,
    /// The CoeffToSlot transforms in the order they are applied, one level each.
    coeff_to_slot: Vec<LinearTransform>,
    /// The SlotToCoeff transforms in the order they are applied, one level each.
    slot_to_coeff: Vec<LinearTransform>,
    /// q0, the product of the base primes.
    q0: f64,
    /// The scale EvalMod's output has when its input has the default scale: the series lands
    /// on its input's scale, each double angle squares and rescales. Known in advance because
    /// scales are tracked exactly, so SlotToCoeff can land on the input's scale exactly.
    eval_mod_scale: f64,
    output_level: usize,
}

impl BootstrapPlan {
    /// The plan for `config.slots` slots (full packing by default) under `ctx`. Fails when the
    /// slot count is not a power of two up to N/2, the secret is not sparse ternary and no
    /// encapsulation is asked for, the range is too small for the (ephemeral) secret's Hamming
    /// weight, the default scale leaves q0 / Delta below 2^5, or the chain has fewer levels
    /// than the pipeline consumes.
    pub fn new(ctx: &Arc<CkksContext>, config: &BootstrapConfig) -> Result<Self> {
        let h = match config.encapsulation {
            Some(weight) if weight == 0 || weight > ctx.degree() => {
                return Err(SchemeError::InvalidParameters(format!(
                    "the ephemeral secret's Hamming weight must be 1 to N = {}; got {weight}",
                    ctx.degree()
                )))
            }
            Some(weight) => weight,
            None => hamming_weight(ctx.params().rlwe().secret())?,
        };
        let slots = config.slots.unwrap_or(ctx.max_slots());
        if !slots.is_power_of_two() || slots > ctx.max_slots() {
            return Err(SchemeError::InvalidParameters(format!(
                "bootstrapping handles a power-of-two slot count up to N/2 = {}; got {slots}",
                ctx.max_slots()
            )));
        }
        let eval_mod = config.eval_mod(h)?;
        let range = eval_mod.range();
        let base = ctx.level_basis(ctx.min_level())?.primes();
        let q0: f64 = base.iter().map(|&q| f64::from(q)).product();
        let scale = ctx.default_scale();
        check_message_ratio(scale, q0, "the parameters' default scale")?;
        let per_level = ctx.params().primes_per_level();
        let consumed = config.levels_with(&eval_mod);
        let available = ctx.depth_left(ctx.max_level());
        if consumed > available {
            return Err(SchemeError::InvalidParameters(format!(
                "bootstrapping consumes {consumed} levels ({} CoeffToSlot, {} EvalMod: a degree-{} series and {} double \
                 angles, {} SlotToCoeff) but the chain has {available}; build the parameters with a larger depth",
                config.coeff_to_slot_levels,
                eval_mod.depth(),
                eval_mod.series().degree(),
                eval_mod.double_angles(),
                config.slot_to_coeff_levels
            )));
        }
        let mut eval_mod_scale = scale;
        let mut level = ctx.max_level() - (config.coeff_to_slot_levels + eval_mod.series().depth()) * per_level;
        for _ in 0..eval_mod.double_angles() {
            // As Evaluator::multiply then Evaluator::rescale compute it.
            let primes = ctx.level_basis(level)?.primes();
            let dropped: f64 = primes[primes.len() - per_level..].iter().map(|&q| f64::from(q)).product();
            eval_mod_scale = eval_mod_scale * eval_mod_scale / dropped;
            level -= per_level;
        }
        let encoder = ctx.encoder();
        let packed = slots < ctx.max_slots();
        // The trace to the subring multiplies the phase by its degree N / 2n (sparse packing).
        let trace_factor = (ctx.max_slots() / slots) as f64;
        // CoeffToSlot folds in Delta / q0 (slots become x = t / q0, the ModRaised phase being
        // read at the default scale), 1 / K (EvalMod's input in [-1, 1]) and the 1/2 of
        // Re = (z + conj z) / 2: so real and imaginary parts come out of one addition each.
        let coeff_to_slot = coeff_to_slot(
            encoder,
            slots,
            scale / (2.0 * range * q0 * trace_factor),
            config.coeff_to_slot_levels,
            packed,
        )?;
        // SlotToCoeff folds in 1 / (2 pi) (sin(2 pi x) / 2 pi = m / q0) and q0 over EvalMod's
        // output scale: its output's phase is then exactly the input's scale times the slots.
        let slot_to_coeff =
            slot_to_coeff(encoder, slots, q0 / (2.0 * PI * eval_mod_scale), config.slot_to_coeff_levels, packed)?;
        Ok(Self {
            ctx: ctx.clone(),
            hamming_weight: h,
            encapsulation: config.encapsulation.is_some(),
            slots,
            eval_mod,
            coeff_to_slot,
            slot_to_coeff,
            q0,
            eval_mod_scale,
            output_level: ctx.max_level() - consumed * per_level,
        })
    }

    /// The level of a bootstrapped ciphertext.
    pub fn output_level(&self) -> usize {
        self.output_level
    }

    /// The level SlotToCoeff starts from: EvalMod's output level.
    pub fn slot_to_coeff_level(&self) -> usize {
        self.output_level + self.slot_to_coeff.len() * self.ctx.params().primes_per_level()
    }

    /// Rescalings left to a bootstrapped ciphertext.
    pub fn depth_after(&self) -> usize {
        self.ctx.depth_left(self.output_level)
    }

    /// The EvalMod polynomial.
    pub fn eval_mod(&self) -> &EvalMod {
        &self.eval_mod
    }

    /// The secret's Hamming weight the range was derived from (the ephemeral secret's under
    /// encapsulation).
    pub fn hamming_weight(&self) -> usize {
        self.hamming_weight
    }

    /// Whether the bootstrapping passes through an ephemeral sparse secret, whose keys
    /// ([`crate::ckks::KeyGenerator::encapsulation_keys`] with [`Self::hamming_weight`]) it
    /// then needs ([`Bootstrapper::with_encapsulation`]).
    pub fn uses_encapsulation(&self) -> bool {
        self.encapsulation
    }

    /// The slot count n of the ciphertexts it bootstraps (N/2: full packing).
    pub fn slots(&self) -> usize {
        self.slots
    }

    /// The client's check of what a server cannot see: that every ciphertext of `batch` has
    /// message coefficients within EvalMod's range, |m_i| <= q0 / 2^[`MIN_MESSAGE_RATIO_BITS`]
    /// (slot values of magnitude at most q0 / 2^5 / Delta; the scale rule of
    /// [`Bootstrapper::bootstrap`] assumes values of magnitude at most 1). Beyond it the sine no
    /// longer follows x mod q0 and bootstrapping returns wrong values with no sign of it:
    /// telling takes the secret key, so bootstrapping itself cannot refuse such a ciphertext,
    /// and a client runs this on what it sends to be bootstrapped (HELR's client does, on the
    /// weights it decrypts after every iteration).
    pub fn check_message_range<B: Backend>(
        &self,
        decryptor: &Decryptor<'_, B, CkksContext>,
        batch: &Batch<B>,
    ) -> Result<()> {
        let limit = self.q0 / f64::from(1u32 << MIN_MESSAGE_RATIO_BITS);
        for (i, plain) in decryptor.decrypt(batch)?.iter().enumerate() {
            let largest = plain.coefficients().iter().map(|c| c.unsigned_abs() as f64).fold(0.0, f64::max);
            if largest > limit {
                return Err(SchemeError::InvalidParameters(format!(
                    "ciphertext {i} of the batch is outside bootstrapping's range: its message coefficients reach \
                     2^{:.1}, beyond q0 / 2^{MIN_MESSAGE_RATIO_BITS} = 2^{:.1} (at scale 2^{:.1}, values of magnitude \
                     up to 2^{:.1} always fit); bootstrapping it would return wrong values: scale the values down by \
                     2^{:.1} or more first (more keeps more precision: the sine's error grows as the square of the \
                     coefficients)",
                    largest.log2(),
                    limit.log2(),
                    plain.scale().log2(),
                    (limit / plain.scale()).log2(),
                    (largest / limit).log2()
                )));
            }
        }
        Ok(())
    }

    /// The rotations of the trace to the slots' subring, sparse packing only: by n, 2n, ..,
    /// N/4 slots (each doubling the sum over the automorphisms that fix X^(N/2n)).
    fn trace_rotations(&self) -> Vec<i64> {
        let full = self.ctx.max_slots();
        std::iter::successors(Some(self.slots), |&s| Some(2 * s)).take_while(|&s| s < full).map(|s| s as i64).collect()
    }

    /// The rotation steps the transforms use (baby and giant steps of every group, and the
    /// trace's under sparse packing), sorted.
    pub fn rotations(&self) -> Vec<i64> {
        let mut steps: Vec<i64> = self
            .coeff_to_slot
            .iter()
            .chain(&self.slot_to_coeff)
            .flat_map(LinearTransform::rotations)
            .chain(self.trace_rotations())
            .collect();
        steps.sort_unstable();
        steps.dedup();
        steps
    }

    /// The Galois elements to make keys for ([`crate::rlwe::KeyGenerator::galois_keys`]): the
    /// rotations and conjugation.
    pub fn galois_elements(&self) -> Vec<usize> {
        self.ctx.galois_elements(&self.rotations(), true)
    }

    /// Bytes of the Galois keys [`BootstrapPlan::galois_elements`] asks for: per key, one pair
    /// of polynomials over the data and special primes per key-switching digit.
    pub fn galois_key_bytes(&self) -> usize {
        let rlwe = self.ctx.params().rlwe();
        let primes = rlwe.data_primes().len() + rlwe.special_primes().len();
        self.galois_elements().len() * rlwe.dnum() * 2 * primes * self.ctx.degree() * 4
    }
}

/// Refuses a scale whose messages q0 cannot hold with the sine's precision.
fn check_message_ratio(scale: f64, q0: f64, what: &str) -> Result<()> {
    if !(scale.is_finite() && scale > 0.0) || (q0 / scale).log2() < f64::from(MIN_MESSAGE_RATIO_BITS) {
        return Err(SchemeError::InvalidParameters(format!(
            "{what} is 2^{:.2} but q0 is 2^{:.2}: bootstrapping needs q0 / Delta >= 2^{MIN_MESSAGE_RATIO_BITS} (EvalMod's \
             sine is close to x mod q0 only for |x| much smaller than q0); encode at a smaller scale or use a larger \
             base (first_prime_bits)",
            scale.log2(),
            q0.log2()
        )));
    }
    Ok(())
}

/// A [`BootstrapPlan`] with its transforms prepared on a backend: refreshes ciphertexts of the
/// lowest level to [`BootstrapPlan::output_level`].
///
/// The steps are public so that each can be inspected (and, in tests, left out):
/// [`Bootstrapper::mod_raise`], [`Bootstrapper::coeff_to_slot`], [`Bootstrapper::eval_mod`],
/// [`Bootstrapper::slot_to_coeff`]; [`Bootstrapper::bootstrap`] runs them in order.
pub struct Bootstrapper<B: Backend> {
    plan: BootstrapPlan,
    encapsulation: Option<DeviceEncapsulation<B>>,
    coeff_to_slot: Vec<PreparedLinearTransform<B>>,
    slot_to_coeff: Vec<PreparedLinearTransform<B>>,
}

impl<B: Backend> Bootstrapper<B> {
    /// Prepares the plan's transforms on the evaluator's backend, after checking the evaluator
    /// is for the plan's context and holds a Galois key for every element the plan needs. A
    /// plan with encapsulation is refused: it needs [`Bootstrapper::with_encapsulation`].
    pub fn new(evaluator: &Evaluator<'_, B, CkksContext>, plan: BootstrapPlan) -> Result<Self> {
        if plan.encapsulation {
            return Err(SchemeError::KeySwitchingUnavailable(
                "this bootstrapping plan uses sparse-secret encapsulation: make its keys with \
                 KeyGenerator::encapsulation_keys and use Bootstrapper::with_encapsulation"
                    .into(),
            ));
        }
        Self::prepare(evaluator, plan, None)
    }

    /// [`Bootstrapper::new`] for a plan with sparse-secret encapsulation, with its keys (made
    /// for the same context, with the plan's ephemeral Hamming weight).
    pub fn with_encapsulation(
        evaluator: &Evaluator<'_, B, CkksContext>,
        plan: BootstrapPlan,
        keys: &EncapsulationKeys,
    ) -> Result<Self> {
        if !plan.encapsulation || keys.hamming_weight() != plan.hamming_weight {
            return Err(SchemeError::InvalidParameters(format!(
                "the encapsulation keys have an ephemeral secret of Hamming weight {}; the plan {}",
                keys.hamming_weight(),
                if plan.encapsulation {
                    format!("was made for weight {}", plan.hamming_weight)
                } else {
                    "uses no encapsulation (BootstrapConfig::encapsulation is None)".to_string()
                }
            )));
        }
        let device = DeviceEncapsulation::new(evaluator, keys)?;
        Self::prepare(evaluator, plan, Some(device))
    }

    fn prepare(
        evaluator: &Evaluator<'_, B, CkksContext>,
        plan: BootstrapPlan,
        encapsulation: Option<DeviceEncapsulation<B>>,
    ) -> Result<Self> {
        expect_same_context(&plan.ctx, evaluator.context(), "the evaluator")?;
        let missing: Vec<usize> =
            plan.galois_elements().into_iter().filter(|&k| !evaluator.has_galois_key(k)).collect();
        if !missing.is_empty() {
            return Err(SchemeError::KeySwitchingUnavailable(format!(
                "bootstrapping needs Galois keys for {} elements (BootstrapPlan::galois_elements); the evaluator lacks \
                 {} of them: {missing:?}",
                plan.galois_elements().len(),
                missing.len()
            )));
        }
        let per_level = plan.ctx.params().primes_per_level();
        // Each transform one level below the previous one.
        let prepare = |transforms: &[LinearTransform], first_level: usize| {
            transforms
                .iter()
                .enumerate()
                .map(|(g, t)| evaluator.prepare_linear_transform(t, first_level - g * per_level))
                .collect::<Result<Vec<_>>>()
        };
        let coeff_to_slot = prepare(&plan.coeff_to_slot, plan.ctx.max_level())?;
        let slot_to_coeff = prepare(&plan.slot_to_coeff, plan.slot_to_coeff_level())?;
        Ok(Self { plan, encapsulation, coeff_to_slot, slot_to_coeff })
    }

    /// The plan.
    pub fn plan(&self) -> &BootstrapPlan {
        &self.plan
    }

    /// A fresh ciphertext at [`BootstrapPlan::output_level`] with the slots of `a` (up to the
    /// bootstrapping error) at a's scale (up to the f64 rounding of the scale bookkeeping). `a`
    /// may be at any level (it is brought to the lowest first), must be relinearized, pack the
    /// plan's slot count ([`BootstrapPlan::slots`]) and have a scale at most q0 / 2^5.
    pub fn bootstrap(&self, evaluator: &Evaluator<'_, B, CkksContext>, a: &Batch<B>) -> Result<Batch<B>> {
        let raised = self.mod_raise(evaluator, a)?;
        let coefficients = self.coeff_to_slot(evaluator, &raised)?;
        let reduced = self.eval_mod(evaluator, &coefficients)?;
        self.slot_to_coeff(evaluator, &reduced, a.tag().scale)
    }

    /// Step 1: the checks, then ModRaise (under encapsulation: switched to the ephemeral sparse
    /// secret first, and back to the secret after). The result is at the top level with the
    /// default scale on its tag: its phase t = m + q0 I is read as t / Delta_default.
    pub fn mod_raise(&self, evaluator: &Evaluator<'_, B, CkksContext>, a: &Batch<B>) -> Result<Batch<B>> {
        expect_same_context(&self.plan.ctx, a.context(), "the ciphertext")?;
        let ctx = &self.plan.ctx;
        if a.tag().slots != self.plan.slots {
            return Err(SchemeError::InvalidParameters(format!(
                "the ciphertexts pack {} slots; this bootstrapping plan is for {} (plan another with \
                 BootstrapConfig::slots = {})",
                a.tag().slots,
                self.plan.slots,
                a.tag().slots
            )));
        }
        check_message_ratio(a.tag().scale, self.plan.q0, "the ciphertext's scale")?;
        match &self.encapsulation {
            None => mod_raise(evaluator, a, ctx.default_scale()),
            Some(keys) => {
                let sparse = keys.to_sparse(evaluator, &evaluator.drop_to_level(a, ctx.min_level())?)?;
                keys.to_dense(evaluator, &mod_raise(evaluator, &sparse, ctx.default_scale())?)
            }
        }
    }

    /// Step 2: under sparse packing the trace to the slots' subring (t's coefficients off the
    /// n-slot grid cancel, those on it are multiplied by N / 2n, which CoeffToSlot divides out),
    /// then CoeffToSlot and the separation of real and imaginary parts, re = z + conj(z) and
    /// im = -i (z - conj(z)) of the transforms' output z: the slot k of re holds x_j / K and of
    /// im x_(j+N/2) / K, j = br(k) the bit reversal of k on the slots' grid and x = t / q0 the
    /// raised phase's coefficients.
    pub fn coeff_to_slot(
        &self,
        evaluator: &Evaluator<'_, B, CkksContext>,
        raised: &Batch<B>,
    ) -> Result<Coefficients<B>> {
        let mut traced: Option<Batch<B>> = None;
        for step in self.plan.trace_rotations() {
            let x = traced.as_ref().unwrap_or(raised);
            traced = Some(evaluator.add(x, &evaluator.rotate(x, step)?)?);
        }
        let z = apply_all(evaluator, traced.as_ref().unwrap_or(raised), &self.coeff_to_slot)?;
        let conjugate = evaluator.conjugate(&z)?;
        let re = evaluator.add(&z, &conjugate)?;
        if self.plan.slots < self.plan.ctx.max_slots() {
            // The last transform put -i z beside z: one sum holds both parts.
            return Ok(Coefficients::Packed(re));
        }
        let im = times_i(evaluator, &evaluator.sub(&z, &conjugate)?, -1)?;
        Ok(Coefficients::Split { re, im })
    }

    /// Step 3: EvalMod on every part: sin(2 pi x) in every slot.
    pub fn eval_mod(
        &self,
        evaluator: &Evaluator<'_, B, CkksContext>,
        coefficients: &Coefficients<B>,
    ) -> Result<Coefficients<B>> {
        coefficients.try_map(|x| self.plan.eval_mod.evaluate(evaluator, x))
    }

    /// Step 4: recombine w = re + i im (full packing; under sparse packing SlotToCoeff's first
    /// transform does it) and apply SlotToCoeff, whose matrix carries q0 / (2 pi S), S the
    /// planned EvalMod output scale. With w = 2 pi m / q0 at scale S' (S' = S after the real
    /// EvalMod) the phase is S' / S x (input scale) x z, so the tag is set to input scale x S'
    /// / S: exactly the input scale after the full pipeline. A relabelling: no residue changes,
    /// only what the phase is read as.
    pub fn slot_to_coeff(
        &self,
        evaluator: &Evaluator<'_, B, CkksContext>,
        coefficients: &Coefficients<B>,
        input_scale: f64,
    ) -> Result<Batch<B>> {
        let combined;
        let w = match coefficients {
            Coefficients::Split { re, im } => {
                combined = evaluator.add(re, &times_i(evaluator, im, 1)?)?;
                &combined
            }
            Coefficients::Packed(x) => x,
        };
        let mut out = apply_all(evaluator, w, &self.slot_to_coeff)?;
        let scale = input_scale * (w.tag().scale / self.plan.eval_mod_scale);
        self.plan.ctx.check_scale(scale, out.level(), "the bootstrapped ciphertext")?;
        out.tag = CkksTag { scale, slots: self.plan.slots };
        Ok(out)
    }
}

/// The raised phase's coefficients in slots, real, between CoeffToSlot and SlotToCoeff.
pub enum Coefficients<B: Backend> {
    /// Full packing: the first N/2 coefficients in one ciphertext, the last N/2 in another.
    Split {
        /// The coefficients 0..N/2 (the real parts of u).
        re: Batch<B>,
        /// The coefficients N/2..N (the imaginary parts of u).
        im: Batch<B>,
    },
    /// Sparse packing of n slots: one ciphertext of 2n slots, the real parts of u in the first
    /// n, the imaginary parts in the next n.
    Packed(Batch<B>),
}

impl<B: Backend> std::fmt::Debug for Coefficients<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Split { re, im } => f.debug_struct("Split").field("re", re).field("im", im).finish(),
            Self::Packed(x) => f.debug_tuple("Packed").field(x).finish(),
        }
    }
}

impl<B: Backend> Coefficients<B> {
    /// `f` applied to every ciphertext.
    pub fn try_map(&self, f: impl Fn(&Batch<B>) -> Result<Batch<B>>) -> Result<Self> {
        Ok(match self {
            Self::Split { re, im } => Self::Split { re: f(re)?, im: f(im)? },
            Self::Packed(x) => Self::Packed(f(x)?),
        })
    }
}

/// The transforms applied in order, each one level. A transform lifted to twice the slots
/// (sparse packing) gets its input read as that many slots, and the transform after it its
/// output read as half: relabellings only, as the plan makes every such vector periodic.
fn apply_all<B: Backend>(
    evaluator: &Evaluator<'_, B, CkksContext>,
    a: &Batch<B>,
    transforms: &[PreparedLinearTransform<B>],
) -> Result<Batch<B>> {
    let mut x: Option<Batch<B>> = None;
    for t in transforms {
        let input = x.as_ref().unwrap_or(a);
        let next = if input.tag().slots == t.slots() {
            evaluator.apply_linear_transform(input, t)?
        } else {
            // An intermediate result is relabelled in place; the caller's input is copied.
            let mut relabelled = match x.take() {
                Some(owned) => owned,
                None => evaluator.drop_to_level(a, a.level())?,
            };
            relabelled.tag = CkksTag { slots: t.slots(), ..relabelled.tag() };
            evaluator.apply_linear_transform(&relabelled, t)?
        };
        x = Some(next);
    }
    x.ok_or_else(|| SchemeError::InvalidParameters("a level budget is at least 1".into()))
}
