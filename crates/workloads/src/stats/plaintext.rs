//! The same statistics computed in `f64` straight from the values, independently of the
//! aggregates: the check reported beside each encrypted result.
//!
//! The encrypted result is the answer (exact, [`super::exact`]); this column is a second,
//! independent computation, so it never refuses data the exact computation accepts. Its least
//! squares use QR rather than the normal equations, so its error grows with the condition
//! number of X and not its square, and it does not depend on the data's units; a column it
//! cannot tell apart from a combination of the previous ones (at `f64` precision) gets the
//! coefficient 0, the basic solution, instead of failing: a disagreement then shows in the
//! report's error column. Every pass streams over the rows; none copies them.

use super::{Dataset, Statistic};

/// The estimates of `statistic` over `data`, in the order of [`super::exact::estimates`].
pub(super) fn estimates(statistic: Statistic, data: &Dataset) -> Vec<f64> {
    match statistic {
        Statistic::Mean => means(data),
        Statistic::Variance => variances(data),
        Statistic::Linreg => least_squares(data),
    }
}

/// Per column, the sum of the values over the number of users.
fn means(data: &Dataset) -> Vec<f64> {
    let scale = data.scale();
    let mut sums = vec![0.0; data.columns().len()];
    for row in data.rows() {
        for (sum, &v) in sums.iter_mut().zip(row) {
            *sum += v as f64 / scale;
        }
    }
    let users = data.users() as f64;
    sums.into_iter().map(|s| s / users).collect()
}

/// Per column, the two-pass formula: the mean square deviation from the mean.
fn variances(data: &Dataset) -> Vec<f64> {
    let (scale, users) = (data.scale(), data.users() as f64);
    let mut squares = vec![0.0; data.columns().len()];
    let means = means(data);
    for row in data.rows() {
        for ((square, &v), mean) in squares.iter_mut().zip(row).zip(&means) {
            *square += (v as f64 / scale - mean).powi(2);
        }
    }
    squares.into_iter().map(|s| s / users).collect()
}

/// Least squares of the last column on the others with an intercept: the coefficients
/// (intercept first), then R^2 from the residuals (NaN for a constant response).
///
/// Each row `(1, x_1, .., x_k | y)` is rotated into an upper-triangular `R` by Givens
/// rotations, so that at the end `R = Q^T X` and its last column holds `Q^T y`, without forming
/// X^T X. Rotations commute with scaling a column, so the units of a column do not matter; the
/// rank test compares each diagonal entry with the norm of its own column.
fn least_squares(data: &Dataset) -> Vec<f64> {
    let scale = data.scale();
    let unknowns = data.columns().len(); // the intercept and the features
    let width = unknowns + 1; // and the response
    let mut r = vec![vec![0.0f64; width]; width];
    let mut w = vec![0.0f64; width];
    for row in data.rows() {
        w[0] = 1.0;
        for (wi, &v) in w[1..].iter_mut().zip(row) {
            *wi = v as f64 / scale;
        }
        // Row i of R takes the component of w in its column i; the last row accumulates the
        // part of y no column explains.
        for i in 0..width {
            if w[i] == 0.0 {
                continue;
            }
            let h = r[i][i].hypot(w[i]);
            let (c, s) = (r[i][i] / h, w[i] / h);
            for (rij, wj) in r[i][i..].iter_mut().zip(&mut w[i..]) {
                (*rij, *wj) = (c * *rij + s * *wj, c * *wj - s * *rij);
            }
        }
    }
    // Rounding leaves |R_jj| of a dependent column near eps times its norm (sqrt(users) terms).
    let tolerance = unknowns as f64 * f64::EPSILON * (data.users() as f64).sqrt();
    let mut beta = vec![0.0; unknowns];
    for i in (0..unknowns).rev() {
        let norm = r[..=i].iter().fold(0.0f64, |n, row| n.hypot(row[i]));
        if r[i][i].abs() > tolerance * norm {
            let rest: f64 = (i + 1..unknowns).map(|j| r[i][j] * beta[j]).sum();
            beta[i] = (r[i][unknowns] - rest) / r[i][i];
        }
    }
    let y = |row: &[i64]| row[unknowns - 1] as f64 / scale;
    let first = data.rows()[0][unknowns - 1];
    let r2 = if data.rows().iter().all(|row| row[unknowns - 1] == first) {
        f64::NAN
    } else {
        let mean = data.rows().iter().map(|row| y(row)).sum::<f64>() / data.users() as f64;
        let (mut residual, mut total) = (0.0, 0.0);
        for row in data.rows() {
            let predicted: f64 = beta[0] + beta[1..].iter().zip(row).map(|(b, &v)| b * (v as f64 / scale)).sum::<f64>();
            residual += (y(row) - predicted).powi(2);
            total += (y(row) - mean).powi(2);
        }
        1.0 - residual / total
    };
    beta.push(r2);
    beta
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(columns: &[&str], rows: &[&[&str]]) -> Dataset {
        let text: String =
            std::iter::once(columns.join(",")).chain(rows.iter().map(|r| r.join(","))).collect::<Vec<_>>().join("\n");
        Dataset::from_csv(text.as_bytes(), columns, None).unwrap()
    }

    #[test]
    fn least_squares_do_not_depend_on_the_units() {
        // y = 2 - 3x exactly, at every scale of x.
        for (x, slope) in [(["1", "2", "4"], -3.0), (["1000000000000", "2000000000000", "4000000000000"], -3e-12)] {
            let fit = least_squares(&data(&["x", "y"], &[&[x[0], "-1"], &[x[1], "-4"], &[x[2], "-10"]]));
            assert!((fit[0] - 2.0).abs() < 1e-12 && (fit[1] / slope - 1.0).abs() < 1e-12, "{fit:?}");
            assert!((fit[2] - 1.0).abs() < 1e-12, "{fit:?}");
        }
        let tiny = least_squares(&data(&["x", "y"], &[&["0.0000001", "1"], &["0.0000003", "2"], &["0.0000002", "2"]]));
        assert!((tiny[1] / 5e6 - 1.0).abs() < 1e-9, "{tiny:?}");
    }

    #[test]
    fn dependent_columns_get_a_best_value_instead_of_failing() {
        // x2 = 2 x1: the basic solution puts the whole slope on x1.
        let fit = least_squares(&data(&["a", "b", "y"], &[&["1", "2", "3"], &["2", "4", "5"], &["3", "6", "7"]]));
        assert!(fit.iter().all(|v| v.is_finite()), "{fit:?}");
        assert!((fit[0] - 1.0).abs() < 1e-9 && (fit[1] - 2.0).abs() < 1e-9 && fit[2] == 0.0, "{fit:?}");
        let constant = least_squares(&data(&["x", "y"], &[&["1", "5"], &["2", "5"]]));
        assert!(constant[2].is_nan() && constant[1].abs() < 1e-12, "{constant:?}");
    }
}
