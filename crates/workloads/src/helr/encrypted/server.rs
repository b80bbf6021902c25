//! The server's side of encrypted HELR training: one iteration on ciphertexts (the gradient
//! of [`super::super::packing`] and the Nesterov update) and the bootstrapping of the weights.

use num_complex::Complex64;
use pimhe_exec::Backend;
use pimhe_schemes::ckks::bootstrap::Bootstrapper;
use pimhe_schemes::ckks::polynomial::ChebyshevSeries;
use pimhe_schemes::ckks::{CiphertextBatch, CkksPlaintext, Evaluator};

use crate::helr::train::Step;
use crate::helr::{HelrError, Packing, SigmoidPoly};

/// A CKKS ciphertext on backend `B`.
pub type Ciphertext<B> = CiphertextBatch<B>;

/// Levels one bootstrapping's preparation takes: the weights `v / 2 + i w / 2` packed into one
/// ciphertext with one constant product (see [`Server::bootstrap`]).
pub const COMBINE_DEPTH: usize = 1;

/// The encrypted weights between iterations: `v`, and `w` as `w_factor` times the ciphertext
/// `w` (1 after an iteration, -i after a bootstrapping, which leaves `i w` in the ciphertext).
pub struct Weights<B: Backend> {
    /// The look-ahead weights, replicated into every row.
    pub v: Ciphertext<B>,
    /// The weights, up to `w_factor`.
    pub w: Ciphertext<B>,
    /// What the ciphertext `w` is multiplied by to give the weights.
    pub w_factor: Complex64,
}

impl<B: Backend> Weights<B> {
    /// The lower of the two ciphertexts' levels.
    pub fn level(&self) -> usize {
        self.v.level().min(self.w.level())
    }
}

/// An evaluator with the training's keys, the prepared bootstrapping and the constants of the
/// iteration. Made once per backend ([`super::EncryptedTrainer::server`]); making it uploads
/// the keys and prepares the bootstrapping's transforms (setup, not training).
pub struct Server<'a, B: Backend> {
    evaluator: Evaluator<'a, B>,
    /// `None` where the iterations fit the chain without bootstrapping (no keys or transforms
    /// for it are made then).
    bootstrapper: Option<Bootstrapper<B>>,
    packing: Packing,
    /// `-1/B` in column 0 of every row: step 3's mask, which also maps the margins of
    /// `[-B, B]` onto the sigmoid series' `[-1, 1]` negated, so no level goes to a change of
    /// variable.
    mask: CkksPlaintext,
    /// `p(B y)` on `[-1, 1]` in the Chebyshev basis: the sigmoid of the negated margin
    /// `-B y`, evaluated at the least depth with exact scales.
    sigmoid: ChebyshevSeries,
}

impl<'a, B: Backend> Server<'a, B> {
    /// The server of `packing`, with `mask` encoded by the client (the ciphertexts' slot count).
    pub(super) fn new(
        evaluator: Evaluator<'a, B>,
        bootstrapper: Option<Bootstrapper<B>>,
        packing: Packing,
        mask: CkksPlaintext,
        sigmoid: &SigmoidPoly,
    ) -> Result<Self, HelrError> {
        Ok(Self { evaluator, bootstrapper, packing, mask, sigmoid: sigmoid_series(sigmoid)? })
    }

    /// Levels one iteration consumes: the product `Z V`, the mask, the sigmoid, the product
    /// with `Z` (the update's constants ride on `Z`, whose level is spare).
    pub fn iteration_depth(&self) -> usize {
        iteration_depth(&self.sigmoid)
    }

    /// The evaluator (for the client's ciphertexts' transfers and checks).
    pub fn evaluator(&self) -> &Evaluator<'a, B> {
        &self.evaluator
    }

    /// Whether `weights` must be bootstrapped before the next iteration: it would leave less
    /// than [`COMBINE_DEPTH`] for the next bootstrapping (`last`: no iteration follows, so it
    /// may use every level).
    pub fn needs_bootstrap(&self, weights: &Weights<B>, last: bool) -> bool {
        needs_bootstrap(self.evaluator.context().depth_left(weights.level()), self.iteration_depth(), last)
    }

    /// One iteration on the batch `z` (packed and tiled by the client, one ciphertext per block
    /// of [`Packing::ciphertexts`]) with the step's constants, `batch` the real number of
    /// samples `m` (the padding rows are zero):
    ///
    /// ```text
    /// S_b = p(-Z_b.v)                  steps 1-4, each block b (replicated over each row)
    /// w'  = v + sum_rows(sum_b S_b * (c Z_b))    c = gamma_k / m
    /// v'  = (1 - eta) v + eta w + sum_rows(sum_b S_b * ((1 - eta) c Z_b))
    /// ```
    ///
    /// which is `w' = v - gamma_k g`, `v' = (1 - eta) w' + eta w` with `v'` expanded so that
    /// both come out of a product with `Z` at one level: five levels per iteration, not six.
    /// The blocks' products are added before the sum over the rows, so that sum's rotations
    /// run once, not once per block. Refused: a number of blocks other than the packing's.
    pub fn iterate(
        &self,
        weights: &Weights<B>,
        z: &[Ciphertext<B>],
        step: Step,
        batch: usize,
    ) -> Result<Weights<B>, HelrError> {
        if z.len() != self.packing.ciphertexts {
            return Err(HelrError::Input(format!(
                "a batch of {} ciphertexts where the packing cuts it into {}",
                z.len(),
                self.packing.ciphertexts
            )));
        }
        let ev = &self.evaluator;
        let c = step.gamma / batch as f64;
        let accumulate = |sum: Option<Ciphertext<B>>, term: Ciphertext<B>| match sum {
            Some(partial) => ev.add(&partial, &term),
            None => Ok(term),
        };
        let (mut g_w, mut g_v) = (None, None);
        for block in z {
            let s = self.sigmoid_of_margins(&weights.v, block)?;
            // 5a. The gradient's partial sums, the update's constants carried by Z.
            let w_term = ev.multiply_relin_rescale(&s, &self.times(block, c.into())?)?;
            let v_term = ev.multiply_relin_rescale(&s, &self.times(block, ((1.0 - step.eta) * c).into())?)?;
            g_w = Some(accumulate(g_w, w_term)?);
            g_v = Some(accumulate(g_v, v_term)?);
        }
        let total = |sum: Option<Ciphertext<B>>| sum.expect("a batch has at least one block (checked above)");
        // 5b. Summed over the rows.
        let w_next = ev.add(&weights.v, &self.row_sums(total(g_w))?)?;
        let g_v = self.row_sums(total(g_v))?;
        let v_part = self.times(&weights.v, (1.0 - step.eta).into())?;
        let w_part = self.times(&weights.w, step.eta * weights.w_factor)?;
        let v_next = ev.add(&ev.add(&g_v, &v_part)?, &w_part)?;
        Ok(Weights { v: v_next, w: w_next, w_factor: Complex64::new(1.0, 0.0) })
    }

    /// Steps 1-4 on one block `z`: `p(-z_i . v)` replicated over each row `i`.
    fn sigmoid_of_margins(&self, v: &Ciphertext<B>, z: &Ciphertext<B>) -> Result<Ciphertext<B>, HelrError> {
        let ev = &self.evaluator;
        // 1-2. The margins z_i . v into column 0 of each row.
        let mut p = ev.multiply_relin_rescale(z, v)?;
        for s in self.packing.row_sum_steps() {
            p = ev.add(&p, &ev.rotate(&p, s)?)?;
        }
        // 3. Column 0 times -1/B, replicated across its row.
        let mut m = ev.rescale(&ev.mul_plain(&p, std::slice::from_ref(&self.mask))?)?;
        for s in self.packing.replicate_steps() {
            m = ev.add(&m, &ev.rotate(&m, s)?)?;
        }
        // 4. sigmoid(-margin) = p(B y), y = -margin / B.
        Ok(ev.evaluate_polynomial(&m, &self.sigmoid)?)
    }

    /// Bootstraps both weight vectors in one ciphertext: `u = v / 2 + i w / 2` (one constant
    /// product, [`COMBINE_DEPTH`]), bootstrapped, then `v = u + conj(u)` and
    /// `i w = u - conj(u)` (one conjugation, no level: `w` comes back with factor `-i`, which
    /// the next iteration folds into its constant `eta`). Both parts are real, so the real and
    /// imaginary parts of the slots carry them without interfering.
    pub fn bootstrap(&self, weights: &Weights<B>) -> Result<Weights<B>, HelrError> {
        let ev = &self.evaluator;
        let half = Complex64::new(0.5, 0.0);
        let half_i = Complex64::new(0.0, 0.5);
        let u = ev.add(&self.times(&weights.v, half)?, &self.times(&weights.w, half_i * weights.w_factor)?)?;
        let bootstrapper = self.bootstrapper.as_ref().ok_or_else(|| {
            HelrError::Encrypted("the weights ran out of levels, and no bootstrapping was prepared for them".into())
        })?;
        // The weights repeat with period W over the slots (replicated into every row), so they
        // bootstrap as a sparse packing of W slots when the plan is one (as Anaheim's HELR
        // bootstraps only its weights), and are read back over all N/2 slots after.
        let full = u.tag().slots;
        let u = ev.with_slot_count(&u, bootstrapper.plan().slots())?;
        let u = ev.with_slot_count(&bootstrapper.bootstrap(ev, &u)?, full)?;
        let conjugate = ev.conjugate(&u)?;
        Ok(Weights { v: ev.add(&u, &conjugate)?, w: ev.sub(&u, &conjugate)?, w_factor: Complex64::new(0.0, -1.0) })
    }

    /// `a` times `c`, rescaled where the product needed a scaled constant (an integer such as
    /// 1 or 0 costs no level and is not rescaled).
    fn times(&self, a: &Ciphertext<B>, c: Complex64) -> Result<Ciphertext<B>, HelrError> {
        let product = self.evaluator.mul_const(a, c)?;
        Ok(if product.tag().scale == a.tag().scale { product } else { self.evaluator.rescale(&product)? })
    }

    /// Step 5b: `g` summed over a block's rows (every row then holds the sum).
    fn row_sums(&self, mut g: Ciphertext<B>) -> Result<Ciphertext<B>, HelrError> {
        let ev = &self.evaluator;
        for step in self.packing.column_sum_steps() {
            g = ev.add(&g, &ev.rotate(&g, step)?)?;
        }
        Ok(g)
    }
}

/// Whether weights with `left` rescalings left must be bootstrapped before an iteration of
/// `depth` levels (`last`: none follows, so it may use every level; otherwise
/// [`COMBINE_DEPTH`] must stay for the next bootstrapping).
pub(super) fn needs_bootstrap(left: usize, depth: usize, last: bool) -> bool {
    left < depth + if last { 0 } else { COMBINE_DEPTH }
}

/// The levels of one iteration with `sigmoid`: `Z V`, the mask, the series, the product with
/// `Z`.
pub(super) fn iteration_depth(sigmoid: &ChebyshevSeries) -> usize {
    3 + sigmoid.depth()
}

/// `q(y) = p(B y)` on `[-1, 1]` in the Chebyshev basis, for the degree-3 `p` on `[-B, B]`:
/// with `a_k = c_k B^k`, `y^2 = (T_2 + T_0) / 2` and `y^3 = (T_3 + 3 T_1) / 4` give
/// `q = (a_0 + a_2 / 2) T_0 + (a_1 + 3 a_3 / 4) T_1 + (a_2 / 2) T_2 + (a_3 / 4) T_3`.
pub(super) fn sigmoid_series(p: &SigmoidPoly) -> Result<ChebyshevSeries, HelrError> {
    let b = p.interval;
    let a: Vec<f64> = p.coefficients.iter().enumerate().map(|(k, c)| c * b.powi(k as i32)).collect();
    let chebyshev = vec![a[0] + a[2] / 2.0, a[1] + 3.0 * a[3] / 4.0, a[2] / 2.0, a[3] / 4.0];
    Ok(ChebyshevSeries::from_coefficients(chebyshev, (-1.0, 1.0))?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::helr::Sigmoid;

    #[test]
    fn the_chebyshev_series_is_the_sigmoid_polynomial_of_the_scaled_margin() {
        let Sigmoid::Polynomial(p) = Sigmoid::helr() else { unreachable!("HELR's sigmoid is a polynomial") };
        let q = sigmoid_series(&p).unwrap();
        for i in -20..=20 {
            let y = f64::from(i) / 10.0;
            assert!((q.evaluate_plain(y) - p.eval(p.interval * y)).abs() < 1e-12, "y = {y}");
        }
        // Degree 3 on [-1, 1]: two levels, no change of variable.
        assert_eq!((q.degree(), q.depth(), iteration_depth(&q)), (3, 2, 5));
    }
}
