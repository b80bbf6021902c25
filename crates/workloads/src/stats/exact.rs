//! The client's arithmetic after decryption: each statistic from its exact integer aggregates,
//! in big integers throughout, rounded to `f64` once, at the very end.
//!
//! The aggregates are exact (sums of integers, rebuilt by CRT), so everything derived from them
//! can be too: a mean, a variance and R^2 are ratios of integer polynomials in the aggregates,
//! and the regression coefficients solve an integer linear system, which fraction-free
//! elimination solves exactly. So nothing overflows or cancels, whatever the number of users
//! and the size of the values, and a regression is refused exactly when X^T X is singular (its
//! determinant is 0), whatever the data's units.
//!
//! ```
//! use pimhe_workloads::stats::{exact, Statistic};
//! // 70,000 users, half at 1.9e14 and half at -1.9e14: n * sum(x^2) is past 2^127.
//! let square = 190_000_000_000_000i128.pow(2);
//! let variance = exact::estimates(Statistic::Variance, 70_000, 1, 0, &[vec![0], vec![70_000 * square]]).unwrap();
//! assert_eq!(variance, [3.61e28]);
//! ```

use num_bigint::{BigInt, BigUint};
use num_integer::Integer;
use num_traits::{One, Signed, ToPrimitive, Zero};

use super::layout::upper_pairs;
use super::{Statistic, StatsError};

/// The estimates of `statistic` from its exact aggregates `totals`, in the order the report
/// gives them: per column its mean or variance; for a regression the intercept, one
/// coefficient per feature, then R^2.
///
/// Values are fixed point (scale 10^`decimals`) and `totals` are the sums over `users` users
/// (the slots of [`StatsPlan`](super::StatsPlan)'s aggregates):
/// - mean: `totals[0][c]` = sum of column `c`;
/// - variance: that, and `totals[1][c]` = sum of its squares;
/// - linreg (`columns` = the features then the response): `totals[0]` = the sums of
///   `z_i z_j` over the pairs `i <= j` in row order (`(0,0), (0,1), .., (1,1), ..`), with
///   `z = (10^decimals, x_1, .., x_k, y)`. The regression is the same in every unit and reads
///   the number of users from its first slot, so it does not use `users` or `decimals`.
///
/// Every ratio is rounded to the nearest `f64` once. A regression's R^2 is NaN when the
/// response is constant (nothing to explain: 0/0). Errors: totals of another layout, no
/// users, a regression without a feature, or a singular X^T X (a constant feature, a feature that is a combination of others,
/// or fewer distinct rows than coefficients).
pub fn estimates(
    statistic: Statistic,
    users: usize,
    columns: usize,
    decimals: u32,
    totals: &[Vec<i128>],
) -> Result<Vec<f64>, StatsError> {
    let slots = match statistic {
        Statistic::Mean | Statistic::Variance => columns,
        Statistic::Linreg => upper_pairs(columns + 1).len(),
    };
    let aggregates = if statistic == Statistic::Variance { 2 } else { 1 };
    if totals.len() != aggregates || totals.iter().any(|t| t.len() != slots) {
        let found: Vec<usize> = totals.iter().map(Vec::len).collect();
        return Err(StatsError::Input(format!(
            "the {} of {columns} columns needs {aggregates} aggregates of {slots} slots; {found:?} slots given",
            statistic.name()
        )));
    }
    if users == 0 {
        return Err(StatsError::Input("a statistic needs at least one user".into()));
    }
    if statistic == Statistic::Linreg && columns < 2 {
        return Err(StatsError::Input(format!("linreg needs a feature column and the response; {columns} given")));
    }
    let n = BigInt::from(users);
    let scale = BigInt::from(10u32).pow(decimals);
    let big = |slot: &i128| BigInt::from(*slot);
    Ok(match statistic {
        // sum / (n 10^d)
        Statistic::Mean => totals[0].iter().map(|sum| ratio(&big(sum), &(&n * &scale))).collect(),
        // (n sum(x^2) - sum(x)^2) / (n 10^d)^2: exact, so never negative and never wrapped.
        Statistic::Variance => totals[0]
            .iter()
            .zip(&totals[1])
            .map(|(sum, squares)| {
                let sum = big(sum);
                ratio(&(&n * big(squares) - &sum * &sum), &(&n * &n * &scale * &scale))
            })
            .collect(),
        Statistic::Linreg => regression(columns, &totals[0].iter().map(big).collect::<Vec<_>>())?,
    })
}

/// Least squares from the moment matrix of `z = (1, x, y)` (its upper triangle `moments`, in
/// fixed point): `X^T X b = X^T y` solved exactly, then R^2.
fn regression(columns: usize, moments: &[BigInt]) -> Result<Vec<f64>, StatsError> {
    // The unknowns are the intercept and one coefficient per feature: as many as `columns`.
    let unknowns = columns;
    let mut moment = vec![vec![BigInt::zero(); columns + 1]; columns + 1];
    for (&(i, j), total) in upper_pairs(columns + 1).iter().zip(moments) {
        moment[i][j] = total.clone();
        moment[j][i] = total.clone();
    }
    let xtx: Vec<Vec<BigInt>> = moment[..unknowns].iter().map(|row| row[..unknowns].to_vec()).collect();
    let xty: Vec<BigInt> = moment[..unknowns].iter().map(|row| row[unknowns].clone()).collect();
    // N = n 10^2d, the sum of (10^d)^2.
    let (n, y_sum, y_squares) = (&moment[0][0], &moment[0][unknowns], &moment[unknowns][unknowns]);
    let (determinant, numerators) = solve(xtx, xty.clone()).ok_or_else(|| {
        StatsError::Input(
            "X^T X is singular: a feature is constant or a combination of others (or there are fewer distinct \
             users than coefficients); drop a column"
                .into(),
        )
    })?;
    let mut estimates: Vec<f64> = numerators.iter().map(|b| ratio(b, &determinant)).collect();
    // With b = B / D and N = n 10^2d (all in fixed point, the scale cancels):
    // R^2 = (b.X^T y - (sum y)^2 / N) / (y.y - (sum y)^2 / N)
    //     = (N B.X^T y - D (sum y)^2) / (D (N y.y - (sum y)^2)).
    let explained: BigInt = numerators.iter().zip(&xty).map(|(b, r)| b * r).sum();
    let spread = n * y_squares - y_sum * y_sum;
    estimates.push(if spread.is_zero() {
        f64::NAN
    } else {
        ratio(&(n * explained - &determinant * y_sum * y_sum), &(&determinant * spread))
    });
    Ok(estimates)
}

/// Solves `a x = b` exactly over the integers: `Some((d, numerators))` with
/// `x_j = numerators[j] / d`, or `None` when `a` is singular.
///
/// Fraction-free (Bareiss) elimination: every entry stays an integer, a minor of `[a | b]`, so
/// each division is exact and sizes grow only linearly; the last pivot is `d = ±det a`, zero
/// exactly when `a` is singular. By Cramer's rule `d x_j` is an integer, so the back
/// substitution on the common denominator `d` divides exactly too.
fn solve(a: Vec<Vec<BigInt>>, b: Vec<BigInt>) -> Option<(BigInt, Vec<BigInt>)> {
    let size = b.len();
    let mut rows: Vec<Vec<BigInt>> = a
        .into_iter()
        .zip(b)
        .map(|(mut row, rhs)| {
            row.push(rhs);
            row
        })
        .collect();
    let mut previous = BigInt::one();
    for k in 0..size {
        // Any nonzero pivot will do: the arithmetic is exact.
        let pivot = (k..size).find(|&i| !rows[i][k].is_zero())?;
        rows.swap(k, pivot);
        let (upper, lower) = rows.split_at_mut(k + 1);
        let pivot_row = &upper[k];
        for row in lower {
            let factor = std::mem::take(&mut row[k]);
            for (entry, above) in row[k + 1..].iter_mut().zip(&pivot_row[k + 1..]) {
                *entry = (&pivot_row[k] * &*entry - &factor * above) / &previous;
            }
        }
        previous = rows[k][k].clone();
    }
    let determinant = previous;
    let mut numerators = vec![BigInt::zero(); size];
    for i in (0..size).rev() {
        let rest: BigInt = (i + 1..size).map(|j| &rows[i][j] * &numerators[j]).sum();
        numerators[i] = (&determinant * &rows[i][size] - rest) / &rows[i][i];
    }
    Some((determinant, numerators))
}

/// `numerator / denominator` rounded to the nearest `f64`, ties to even, whatever the sizes of
/// the two: the quotient is taken to the 53 bits of a double (fewer for a subnormal result) and
/// the remainder decides the rounding, so neither part is ever converted to `f64` itself.
/// `denominator` must not be 0.
fn ratio(numerator: &BigInt, denominator: &BigInt) -> f64 {
    assert!(!denominator.is_zero(), "a ratio over 0");
    if numerator.is_zero() {
        return 0.0;
    }
    let magnitude = rounded(numerator.magnitude(), denominator.magnitude());
    if numerator.is_negative() != denominator.is_negative() {
        -magnitude
    } else {
        magnitude
    }
}

/// `a / b` (both positive) rounded to the nearest `f64`, ties to even.
fn rounded(a: &BigUint, b: &BigUint) -> f64 {
    // floor(log2(a / b)) is the difference of the bit lengths, or one less.
    let difference = a.bits() as i64 - b.bits() as i64;
    let reaches =
        if difference >= 0 { *a >= b << difference.unsigned_abs() } else { a << difference.unsigned_abs() >= *b };
    let log = if reaches { difference } else { difference - 1 };
    // The result is m 2^e with 2^52 <= m < 2^53, or, below 2^-1022, m < 2^52 and e = -1074.
    let e = (log - 52).max(-1074);
    if e > 1023 - 52 {
        return f64::INFINITY;
    }
    let (scaled_a, scaled_b) =
        if e >= 0 { (a.clone(), b << e.unsigned_abs()) } else { (a << e.unsigned_abs(), b.clone()) };
    let (quotient, remainder) = scaled_a.div_rem(&scaled_b);
    let twice = remainder << 1u32;
    let up = twice > scaled_b || (twice == scaled_b && quotient.bit(0));
    let m = (quotient + u32::from(up)).to_u64().expect("a quotient of at most 2^53");
    // m <= 2^53 is exact in f64, and m 2^e is the representable result, so the product is exact
    // (2^1024 overflowing to infinity, as it should).
    m as f64 * power_of_two(e)
}

/// 2^e exactly, for -1074 <= e <= 971.
fn power_of_two(e: i64) -> f64 {
    if e >= -1022 {
        f64::from_bits(((e + 1023) as u64) << 52)
    } else {
        f64::from_bits(1 << (e + 1074))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn big(v: i128) -> BigInt {
        BigInt::from(v)
    }

    #[test]
    fn ratios_round_to_nearest_even_beyond_the_range_of_f64_parts() {
        assert_eq!(ratio(&big(1), &big(3)), 1.0 / 3.0);
        assert_eq!(ratio(&big(-22), &big(7)), -22.0 / 7.0);
        assert_eq!(ratio(&big(7), &big(-1)), -7.0);
        // 2^53 + 1 is a tie between 2^53 and 2^53 + 2: to even, 2^53.
        assert_eq!(ratio(&big((1 << 53) + 1), &big(1)), 9007199254740992.0);
        assert_eq!(ratio(&big((1 << 53) + 3), &big(1)), 9007199254740996.0);
        // Parts far beyond f64, their ratio inside it.
        let huge = BigInt::from(3u32).pow(2000);
        assert_eq!(ratio(&(&huge * 5), &(&huge * 4)), 1.25);
        // Results beyond f64 overflow to infinity and underflow through the subnormals.
        let two = BigInt::from(2u32);
        assert_eq!(ratio(&two.pow(1024), &big(1)), f64::INFINITY);
        // Halfway between f64::MAX = 2^1024 - 2^971 and 2^1024: to even, which overflows.
        assert_eq!(ratio(&(two.pow(1024) - two.pow(970)), &big(1)), f64::INFINITY);
        assert_eq!(ratio(&(two.pow(1024) - two.pow(970) - 1), &big(1)), f64::MAX);
        assert_eq!(ratio(&big(1), &two.pow(1074)), f64::from_bits(1));
        assert_eq!(ratio(&big(3), &two.pow(1075)), f64::from_bits(2));
        assert_eq!(ratio(&big(1), &two.pow(1076)), 0.0);
        assert_eq!(ratio(&big(1), &two.pow(1022)), f64::MIN_POSITIVE);
    }

    #[test]
    fn bareiss_solves_exactly_and_finds_singular_systems() {
        let a = |rows: &[&[i128]]| rows.iter().map(|r| r.iter().map(|&v| big(v)).collect()).collect();
        // A zero in the first pivot position: a row swap; x = (7/8, 3/2).
        let (d, x) = solve(a(&[&[0, 2], &[4, 1]]), vec![big(3), big(5)]).unwrap();
        assert_eq!(x.iter().map(|n| ratio(n, &d)).collect::<Vec<_>>(), [0.875, 1.5]);
        let (d, x) = solve(a(&[&[2, 1, 1], &[1, 3, 2], &[1, 0, 0]]), vec![big(4), big(5), big(6)]).unwrap();
        assert_eq!(x.iter().map(|n| ratio(n, &d)).collect::<Vec<_>>(), [6.0, 15.0, -23.0]);
        assert!(solve(a(&[&[1, 2], &[2, 4]]), vec![big(1), big(2)]).is_none());
        assert!(solve(a(&[&[0, 0], &[0, 1]]), vec![big(0), big(1)]).is_none());
    }
}
