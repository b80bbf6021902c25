//! The sigmoid, exact or as the low-degree polynomial that CKKS evaluates.
//!
//! CKKS computes only additions and multiplications, so HELR replaces the sigmoid
//! `1 / (1 + e^-x)` by the polynomial of degree 3 closest to it in least squares over an
//! interval `[-B, B]`: Kim, Song, Kim, Lee and Cheon ("Secure logistic regression based on
//! homomorphic encryption", JMIR Med. Inform. 2018) publish
//! `0.5 + 1.20096 (x/8) - 0.81562 (x/8)^3` for `B = 8`, and Han et al. (AAAI 2019) train with
//! this degree-3 approximation. [`SigmoidPoly::least_squares`] computes the fit rather than
//! copying it, so the interval can change; for `B = 8` it agrees with the published
//! coefficients within 1e-4 of each (1.20092 and -0.81553 here: the published fit was
//! presumably made on sampled points rather than by integration; the tests check
//! both). Outside the interval the cubic term
//! takes over and the polynomial runs off to -inf / +inf (at x = 12 it is already -0.45): the
//! trainer counts the inner products that fall outside.

use serde::Serialize;

/// The interval of Kim et al. and Han et al.: inner products of HELR stay mostly within it.
pub const HELR_INTERVAL: f64 = 8.0;

/// Intervals of quadrature for the least-squares fit: Simpson's rule on 4096 pieces of
/// `[-1, 1]` integrates the smooth integrands here to about 1e-14.
const QUADRATURE_PIECES: usize = 4096;

/// A polynomial approximation of the sigmoid on `[-interval, interval]`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SigmoidPoly {
    /// Half-width `B` of the interval the fit is made on.
    pub interval: f64,
    /// `c[k]` multiplies `x^k`, k = 0..=3.
    pub coefficients: [f64; 4],
}

/// Which sigmoid the trainer uses.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Sigmoid {
    /// `1 / (1 + e^-x)`, for comparison: what an unencrypted trainer would use.
    Exact,
    /// The polynomial the encrypted trainer evaluates.
    Polynomial(SigmoidPoly),
}

impl Sigmoid {
    /// The degree-3 least-squares polynomial on `[-8, 8]`, HELR's sigmoid.
    pub fn helr() -> Self {
        Sigmoid::Polynomial(SigmoidPoly::least_squares(HELR_INTERVAL))
    }

    /// The sigmoid at `x`.
    pub fn eval(&self, x: f64) -> f64 {
        match self {
            Sigmoid::Exact => exact(x),
            Sigmoid::Polynomial(p) => p.eval(x),
        }
    }

    /// The interval the inner products should stay within (none for the exact sigmoid).
    pub fn interval(&self) -> Option<f64> {
        match self {
            Sigmoid::Exact => None,
            Sigmoid::Polynomial(p) => Some(p.interval),
        }
    }
}

/// `1 / (1 + e^-x)`, without overflow for large |x|.
pub fn exact(x: f64) -> f64 {
    if x >= 0.0 {
        1.0 / (1.0 + (-x).exp())
    } else {
        let e = x.exp();
        e / (1.0 + e)
    }
}

impl SigmoidPoly {
    /// The degree-3 polynomial `p` minimizing `integral over [-B, B] of (sigmoid(x) - p(x))^2 dx`
    /// (uniform weight, as Kim et al.), for `B = interval` (finite, positive). It is fitted in
    /// `t = x / B` on `[-1, 1]`, where the normal equations are well conditioned, and the
    /// coefficients are then scaled back by `B^-k`.
    ///
    /// ```
    /// use pimhe_workloads::helr::SigmoidPoly;
    /// let p = SigmoidPoly::least_squares(8.0);
    /// // Kim et al.'s published fit: 0.5 + 1.20096 (x/8) - 0.81562 (x/8)^3.
    /// assert!((p.coefficients[1] * 8.0 - 1.20096).abs() < 1e-4);
    /// assert!((p.coefficients[3] * 512.0 + 0.81562).abs() < 1e-4);
    /// assert!((p.eval(0.0) - 0.5).abs() < 1e-12);
    /// ```
    pub fn least_squares(interval: f64) -> Self {
        // Gram matrix G[j][k] = integral t^(j+k), right side r[j] = integral t^j sigmoid(B t),
        // both over [-1, 1] by Simpson's rule.
        let mut gram = [[0.0f64; 4]; 4];
        let mut rhs = [0.0f64; 4];
        let h = 2.0 / QUADRATURE_PIECES as f64;
        for i in 0..=QUADRATURE_PIECES {
            let t = -1.0 + i as f64 * h;
            let weight = h / 3.0
                * if i == 0 || i == QUADRATURE_PIECES {
                    1.0
                } else if i % 2 == 1 {
                    4.0
                } else {
                    2.0
                };
            let powers = [1.0, t, t * t, t * t * t];
            let s = exact(interval * t);
            for j in 0..4 {
                rhs[j] += weight * powers[j] * s;
                for k in 0..4 {
                    gram[j][k] += weight * powers[j] * powers[k];
                }
            }
        }
        let a = solve4(gram, rhs);
        let mut coefficients = [0.0; 4];
        for (k, c) in coefficients.iter_mut().enumerate() {
            *c = a[k] / interval.powi(k as i32);
        }
        Self { interval, coefficients }
    }

    /// `p(x)`, by Horner's rule.
    pub fn eval(&self, x: f64) -> f64 {
        self.coefficients.iter().rev().fold(0.0, |acc, &c| acc * x + c)
    }
}

/// The solution of the 4x4 system `a x = b` (Gaussian elimination with partial pivoting; `a` is
/// a Gram matrix of independent monomials, so it is nonsingular).
fn solve4(mut a: [[f64; 4]; 4], mut b: [f64; 4]) -> [f64; 4] {
    for col in 0..4 {
        let pivot = (col..4).max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs())).unwrap_or(col);
        a.swap(col, pivot);
        b.swap(col, pivot);
        for row in col + 1..4 {
            let factor = a[row][col] / a[col][col];
            let pivot_row = a[col];
            for (x, p) in a[row].iter_mut().zip(pivot_row).skip(col) {
                *x -= factor * p;
            }
            b[row] -= factor * b[col];
        }
    }
    let mut x = [0.0; 4];
    for row in (0..4).rev() {
        let tail: f64 = (row + 1..4).map(|k| a[row][k] * x[k]).sum();
        x[row] = (b[row] - tail) / a[row][row];
    }
    x
}
