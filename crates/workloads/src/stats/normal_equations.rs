//! The client's side of linear regression: the normal equations X^T X b = X^T y, solved from
//! the decrypted sufficient statistics, beside the same fit made on the plaintext rows.

use super::{upper_pairs, Dataset, Estimate, StatsError};

/// Coefficients (intercept first) and R^2 from `totals`, the slot-wise sums of z_i z_j (i <= j)
/// over users, z = (1, x_1, .., x_k, y) in fixed point.
pub(super) fn regression(data: &Dataset, totals: &[i128]) -> Result<Vec<Estimate>, StatsError> {
    let columns = data.columns();
    let size = columns.len() + 1; // z: intercept, features, response
    let features = size - 1; // intercept and x: the unknowns
    let scale_squared = data.scale() * data.scale();
    let mut moments = vec![vec![0.0; size]; size];
    for (&(i, j), &total) in upper_pairs(size).iter().zip(totals) {
        moments[i][j] = total as f64 / scale_squared;
        moments[j][i] = moments[i][j];
    }
    let (xtx, xty, yy) = split_moments(&moments, features);
    let encrypted = solve(xtx.clone(), xty.clone())?;
    let n = moments[0][0];
    let y_sum = moments[0][features];
    let fitted: f64 = (0..features)
        .map(|i| encrypted[i] * (2.0 * xty[i] - (0..features).map(|j| xtx[i][j] * encrypted[j]).sum::<f64>()))
        .sum();
    let encrypted_r2 = 1.0 - (yy - fitted) / (yy - y_sum * y_sum / n);

    let (plaintext, plaintext_r2) = plaintext_fit(data)?;
    let names = std::iter::once("intercept".to_string())
        .chain(columns[..columns.len() - 1].iter().map(|c| format!("coef({c})")))
        .chain(["r2".to_string()]);
    let pairs = encrypted.into_iter().chain([encrypted_r2]).zip(plaintext.into_iter().chain([plaintext_r2]));
    Ok(names
        .zip(pairs)
        .map(|(name, (encrypted, plaintext))| Estimate {
            name,
            encrypted,
            plaintext,
            abs_error: (encrypted - plaintext).abs(),
        })
        .collect())
}

/// (X^T X, X^T y, y^T y) from the moment matrix of z.
fn split_moments(moments: &[Vec<f64>], features: usize) -> (Vec<Vec<f64>>, Vec<f64>, f64) {
    let xtx = moments[..features].iter().map(|row| row[..features].to_vec()).collect();
    let xty = moments[..features].iter().map(|row| row[features]).collect();
    (xtx, xty, moments[features][features])
}

/// The least-squares fit on the plaintext rows: X^T X and X^T y accumulated in f64 from the
/// values, R^2 from the residuals.
fn plaintext_fit(data: &Dataset) -> Result<(Vec<f64>, f64), StatsError> {
    let scale = data.scale();
    let rows: Vec<Vec<f64>> = data.rows().iter().map(|r| r.iter().map(|&v| v as f64 / scale).collect()).collect();
    let features = data.columns().len();
    let x = |row: &Vec<f64>, i: usize| if i == 0 { 1.0 } else { row[i - 1] };
    let mut xtx = vec![vec![0.0; features]; features];
    let mut xty = vec![0.0; features];
    for row in &rows {
        let y = row[features - 1];
        for (i, (xtx_row, xty_i)) in xtx.iter_mut().zip(&mut xty).enumerate() {
            *xty_i += x(row, i) * y;
            for (j, entry) in xtx_row.iter_mut().enumerate() {
                *entry += x(row, i) * x(row, j);
            }
        }
    }
    let beta = solve(xtx, xty)?;
    let mean_y = rows.iter().map(|r| r[features - 1]).sum::<f64>() / rows.len() as f64;
    let (mut residual, mut total) = (0.0, 0.0);
    for row in &rows {
        let y = row[features - 1];
        let predicted: f64 = (0..features).map(|i| beta[i] * x(row, i)).sum();
        residual += (y - predicted).powi(2);
        total += (y - mean_y).powi(2);
    }
    Ok((beta, 1.0 - residual / total))
}

/// Solves `a x = b` by Gaussian elimination with partial pivoting.
fn solve(mut a: Vec<Vec<f64>>, mut b: Vec<f64>) -> Result<Vec<f64>, StatsError> {
    let size = b.len();
    let largest = a.iter().flatten().fold(0.0f64, |m, v| m.max(v.abs()));
    for column in 0..size {
        let pivot = (column..size)
            .max_by(|&i, &j| a[i][column].abs().total_cmp(&a[j][column].abs()))
            .expect("a non-empty range");
        if a[pivot][column].abs() <= 1e-12 * largest.max(f64::MIN_POSITIVE) {
            return Err(StatsError::Input(
                "X^T X is singular: a feature is constant or a combination of others (or there are fewer users \
                 than coefficients); drop a column"
                    .into(),
            ));
        }
        a.swap(column, pivot);
        b.swap(column, pivot);
        let (upper, lower) = a.split_at_mut(column + 1);
        let pivot_row = &upper[column];
        for (offset, row) in lower.iter_mut().enumerate() {
            let factor = row[column] / pivot_row[column];
            for (entry, &above) in row[column..].iter_mut().zip(&pivot_row[column..]) {
                *entry -= factor * above;
            }
            b[column + 1 + offset] -= factor * b[column];
        }
    }
    let mut x = vec![0.0; size];
    for row in (0..size).rev() {
        let rest: f64 = (row + 1..size).map(|k| a[row][k] * x[k]).sum();
        x[row] = (b[row] - rest) / a[row][row];
    }
    Ok(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn solve_recovers_a_known_solution_and_refuses_singular_systems() {
        let a = vec![vec![4.0, 1.0, 2.0], vec![1.0, 5.0, 1.0], vec![2.0, 1.0, 6.0]];
        let x = [1.5, -2.0, 0.25];
        let b: Vec<f64> = a.iter().map(|row| row.iter().zip(&x).map(|(p, q)| p * q).sum()).collect();
        for (got, want) in solve(a, b).unwrap().iter().zip(x) {
            assert!((got - want).abs() < 1e-12, "{got} vs {want}");
        }
        assert!(solve(vec![vec![1.0, 2.0], vec![2.0, 4.0]], vec![1.0, 2.0]).is_err());
    }
}
