//! EvalMod: the reduction x -> x mod 1 on slots that hold x = m / q0 + I (I an integer with
//! |x| <= K), approximated by (1 / 2 pi) sin(2 pi x), which equals x - I up to
//! (2 pi)^2 / 6 (x - I)^3: small because m / q0 is small (at most Delta / q0, 2^-10 for the
//! test presets, and its coefficients are much smaller for spread-out slot values).
//!
//! sin(2 pi x) = cos(2 pi (x - 1/4)). The slots arrive divided by K (CoeffToSlot folds 1 / K in,
//! so y = x / K lies in [-1, 1] and the series needs no change of variable, saving a level).
//! A Chebyshev interpolant of the scaled cosine
//!
//! ```text
//! g(y) = cos(2 pi (K y - 1/4) / 2^r)
//! ```
//!
//! on [-1, 1] is evaluated, then r double-angle steps cos 2t = 2 cos^2 t - 1 bring the angle
//! back to 2 pi (x - 1/4). The division by 2^r makes g slowly varying, so a modest degree
//! reaches double precision; each double-angle step at most quadruples an error (the
//! derivative of 2c^2 - 1 is 4c), which the approximation target leaves room for.
//!
//! Depth: ceil(log2(d + 1)) for the series (degree d) plus r. The constant 1 / (2 pi) and
//! q0 / Delta are folded into SlotToCoeff's matrix, so they cost nothing here.

use std::f64::consts::PI;

use num_complex::Complex64;
use pimhe_exec::Backend;

use crate::ckks::context::CkksContext;
use crate::ckks::polynomial::ChebyshevSeries;
use crate::error::{Result, SchemeError};
use crate::rlwe::{CiphertextBatch, Evaluator};

/// The largest series degree tried: 2^7 - 1 (depth 7). The test presets need 31.
const MAX_SERIES_DEGREE: usize = 127;

/// The EvalMod polynomial: a series for the scaled cosine and the number of double angles.
#[derive(Debug, Clone)]
pub struct EvalMod {
    range: f64,
    double_angles: u32,
    series: ChebyshevSeries,
    /// The series' largest error on [-1, 1], measured at setup.
    series_error: f64,
}

impl EvalMod {
    /// The series for range K = `range` and r = `double_angles`: the smallest degree of the
    /// form 2^k - 1 (each depth used in full) whose interpolant errs by at most `target` on
    /// [-1, 1] (measured on 4096 points), then trimmed to the smallest degree of that depth
    /// still within `target`.
    pub fn new(range: f64, double_angles: u32, target: f64) -> Result<Self> {
        if !range.is_finite() || range <= 0.0 || double_angles > 10 || target.is_nan() || target <= 0.0 {
            return Err(SchemeError::InvalidParameters(format!(
                "EvalMod needs a finite range K > 0 (got {range}), at most 10 double angles (got {double_angles}) and a \
                 positive error target (got {target})"
            )));
        }
        let scale = f64::from(1u32 << double_angles);
        let g = move |y: f64| (2.0 * PI * (range * y - 0.25) / scale).cos();
        let fit = |degree: usize| -> Result<(ChebyshevSeries, f64)> {
            let series = ChebyshevSeries::approximate(g, (-1.0, 1.0), degree)?;
            let error = series.max_error_on(g, 4096);
            Ok((series, error))
        };
        let mut depth_degree = 3;
        let (mut series, mut error) = fit(depth_degree)?;
        while error > target {
            if depth_degree >= MAX_SERIES_DEGREE {
                return Err(SchemeError::InvalidParameters(format!(
                    "no Chebyshev series of degree up to {MAX_SERIES_DEGREE} approximates the EvalMod cosine for K = \
                     {range} with {double_angles} double angles within {target:e} (best {error:e}); use more double \
                     angles or a sparser secret"
                )));
            }
            depth_degree = 2 * depth_degree + 1;
            (series, error) = fit(depth_degree)?;
        }
        // The same depth holds every degree above (depth_degree - 1) / 2: take the smallest that
        // still meets the target (fewer products).
        let mut low = (depth_degree - 1) / 2 + 1;
        while low < depth_degree {
            let (candidate, candidate_error) = fit(low)?;
            if candidate_error <= target {
                (series, error) = (candidate, candidate_error);
                break;
            }
            low += 1;
        }
        Ok(Self { range, double_angles, series, series_error: error })
    }

    /// The range K: inputs are x / K with |x| <= K.
    pub fn range(&self) -> f64 {
        self.range
    }

    /// The number r of double-angle steps.
    pub fn double_angles(&self) -> u32 {
        self.double_angles
    }

    /// The Chebyshev series of the scaled cosine on [-1, 1].
    pub fn series(&self) -> &ChebyshevSeries {
        &self.series
    }

    /// The series' largest measured error on [-1, 1].
    pub fn series_error(&self) -> f64 {
        self.series_error
    }

    /// Levels consumed: the series' depth plus one per double angle.
    pub fn depth(&self) -> usize {
        self.series.depth() + self.double_angles as usize
    }

    /// sin(2 pi x) for slots holding y = x / K, in the clear: the reference the encrypted
    /// evaluation follows step by step (the series, then the double angles).
    pub fn evaluate_plain(&self, y: f64) -> f64 {
        let mut c = self.series.evaluate_plain(y);
        for _ in 0..self.double_angles {
            c = 2.0 * c * c - 1.0;
        }
        c
    }

    /// sin(2 pi x) on encrypted slots holding y = x / K: the series, then r double angles, each
    /// a squaring (relinearized, rescaled), an exact doubling (an integer constant) and the
    /// constant -1. Consumes [`EvalMod::depth`] levels.
    pub fn evaluate<B: Backend>(
        &self,
        evaluator: &Evaluator<'_, B, CkksContext>,
        a: &CiphertextBatch<B, CkksContext>,
    ) -> Result<CiphertextBatch<B, CkksContext>> {
        let mut c = evaluator.evaluate_polynomial(a, &self.series)?;
        for _ in 0..self.double_angles {
            let square = evaluator.multiply_relin_rescale(&c, &c)?;
            let doubled = evaluator.mul_const(&square, Complex64::new(2.0, 0.0))?;
            c = evaluator.add_const(&doubled, Complex64::new(-1.0, 0.0))?;
        }
        Ok(c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plain_evalmod_reduces_modulo_one() {
        let eval_mod = EvalMod::new(8.5, 3, 2f64.powi(-40)).unwrap();
        assert!(eval_mod.series().degree() <= 31, "degree {}", eval_mod.series().degree());
        for i in -8..=8 {
            for small in [0.0, 1e-4, -3e-4] {
                let x = f64::from(i) + small;
                let got = eval_mod.evaluate_plain(x / 8.5) / (2.0 * PI);
                // sin(2 pi x) / 2 pi = small - (2 pi)^2 small^3 / 6 + ...
                assert!((got - small).abs() < 1e-9, "x = {x}: {got}");
            }
        }
        assert!(EvalMod::new(100.0, 0, 1e-12).is_err(), "K = 100 without double angles needs a huge degree");
        assert!(EvalMod::new(-1.0, 3, 1e-12).is_err());
    }
}
