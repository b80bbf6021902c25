//! The client's arithmetic after decryption ([`exact::estimates`]) against an independent
//! oracle: exact rationals from the definitions (the mean, the mean square deviation, least
//! squares by rational Gauss-Jordan elimination and R^2 from the residuals), on data whose
//! aggregates reach the range of i128 and whose user counts reach 2^40. Every estimate must be
//! the `f64` nearest the exact value, and a regression refused exactly when X^T X is singular.

use num_bigint::BigInt;
use num_integer::Integer;
use num_traits::{One, Signed, Zero};
use pimhe_workloads::stats::{exact, Statistic, StatsError};
use proptest::prelude::*;

/// An exact rational, denominator positive and coprime to the numerator.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Q {
    num: BigInt,
    den: BigInt,
}

impl Q {
    fn new(num: BigInt, den: BigInt) -> Self {
        assert!(!den.is_zero());
        let g = num.gcd(&den);
        let sign = if den.is_negative() { -BigInt::one() } else { BigInt::one() };
        Q { num: sign.clone() * &num / &g, den: sign * &den / &g }
    }
    fn int(v: impl Into<BigInt>) -> Self {
        Q::new(v.into(), BigInt::one())
    }
    fn zero() -> Self {
        Q::int(0)
    }
    fn add(&self, o: &Q) -> Q {
        Q::new(&self.num * &o.den + &o.num * &self.den, &self.den * &o.den)
    }
    fn sub(&self, o: &Q) -> Q {
        Q::new(&self.num * &o.den - &o.num * &self.den, &self.den * &o.den)
    }
    fn mul(&self, o: &Q) -> Q {
        Q::new(&self.num * &o.num, &self.den * &o.den)
    }
    fn div(&self, o: &Q) -> Q {
        Q::new(&self.num * &o.den, &self.den * &o.num)
    }
    fn abs(&self) -> Q {
        Q::new(self.num.abs(), self.den.clone())
    }
    fn is_zero(&self) -> bool {
        self.num.is_zero()
    }
    /// A finite double, exactly.
    fn of_f64(v: f64) -> Q {
        assert!(v.is_finite(), "{v}");
        let bits = v.to_bits();
        let exponent = ((bits >> 52) & 0x7ff) as i64;
        let fraction = bits & ((1 << 52) - 1);
        let (mantissa, e) = if exponent == 0 { (fraction, -1074) } else { (fraction | 1 << 52, exponent - 1075) };
        let m = BigInt::from(mantissa) * if bits >> 63 == 1 { -1 } else { 1 };
        if e >= 0 {
            Q::int(m << e as usize)
        } else {
            Q::new(m, BigInt::one() << (-e) as usize)
        }
    }
}

impl PartialOrd for Q {
    fn partial_cmp(&self, o: &Q) -> Option<std::cmp::Ordering> {
        (&self.num * &o.den).partial_cmp(&(&o.num * &self.den))
    }
}

/// `v` is a double nearest to `q`: no neighbour of `v` is closer.
fn assert_nearest(v: f64, q: &Q, what: &str) {
    let distance = |x: f64| Q::of_f64(x).sub(q).abs();
    let d = distance(v);
    for neighbour in [v.next_up(), v.next_down()] {
        assert!(d <= distance(neighbour), "{what}: {v} is not the double nearest to {}/{}", q.num, q.den);
    }
}

/// Users as distinct rows of fixed-point values (scale 10^decimals) with multiplicities.
#[derive(Debug, Clone)]
struct Data {
    decimals: u32,
    rows: Vec<(Vec<i64>, u64)>,
}

impl Data {
    fn users(&self) -> u64 {
        self.rows.iter().map(|(_, m)| m).sum()
    }

    fn scale(&self) -> BigInt {
        BigInt::from(10u32).pow(self.decimals)
    }

    /// The real value of column `c` of a row.
    fn value(&self, row: &[i64], c: usize) -> Q {
        Q::new(BigInt::from(row[c]), self.scale())
    }

    /// Sum over users of `f(row)`.
    fn sum(&self, f: impl Fn(&[i64]) -> Q) -> Q {
        self.rows.iter().fold(Q::zero(), |total, (row, m)| total.add(&f(row).mul(&Q::int(*m))))
    }

    /// The aggregates the server would compute, in the layout [`exact::estimates`] documents.
    fn totals(&self, statistic: Statistic) -> Vec<Vec<i128>> {
        let columns = self.rows[0].0.len();
        let total = |f: &dyn Fn(&[i64]) -> BigInt| -> i128 {
            let t: BigInt = self.rows.iter().map(|(row, m)| f(row) * BigInt::from(*m)).sum();
            i128::try_from(t).expect("the generated totals fit i128")
        };
        let x = |row: &[i64], c: usize| BigInt::from(row[c]);
        match statistic {
            Statistic::Mean => vec![(0..columns).map(|c| total(&|r| x(r, c))).collect()],
            Statistic::Variance => vec![
                (0..columns).map(|c| total(&|r| x(r, c))).collect(),
                (0..columns).map(|c| total(&|r| x(r, c) * x(r, c))).collect(),
            ],
            Statistic::Linreg => {
                let z = |row: &[i64], i: usize| if i == 0 { self.scale() } else { x(row, i - 1) };
                let pairs = (0..=columns).flat_map(|i| (i..=columns).map(move |j| (i, j)));
                vec![pairs.map(|(i, j)| total(&|r| z(r, i) * z(r, j))).collect()]
            }
        }
    }

    fn means(&self) -> Vec<Q> {
        let n = Q::int(self.users());
        (0..self.rows[0].0.len()).map(|c| self.sum(|r| self.value(r, c)).div(&n)).collect()
    }

    /// The mean square deviation from the mean.
    fn variances(&self) -> Vec<Q> {
        let n = Q::int(self.users());
        let means = self.means();
        (0..means.len())
            .map(|c| {
                self.sum(|r| {
                    let d = self.value(r, c).sub(&means[c]);
                    d.mul(&d)
                })
                .div(&n)
            })
            .collect()
    }

    /// Least squares of the last column on the others with an intercept, then R^2 (`None` for
    /// R^2 when y is constant); `None` when X^T X is singular.
    fn least_squares(&self) -> Option<(Vec<Q>, Option<Q>)> {
        let unknowns = self.rows[0].0.len();
        let x = |r: &[i64], i: usize| if i == 0 { Q::int(1) } else { self.value(r, i - 1) };
        let y = |r: &[i64]| self.value(r, unknowns - 1);
        // [X^T X | X^T y], reduced by Gauss-Jordan elimination over the rationals.
        let mut a: Vec<Vec<Q>> = (0..unknowns)
            .map(|i| {
                (0..unknowns)
                    .map(|j| self.sum(|r| x(r, i).mul(&x(r, j))))
                    .chain([self.sum(|r| x(r, i).mul(&y(r)))])
                    .collect()
            })
            .collect();
        for k in 0..unknowns {
            let p = (k..unknowns).find(|&i| !a[i][k].is_zero())?;
            a.swap(k, p);
            let pivot = a[k][k].clone();
            a[k] = a[k].iter().map(|v| v.div(&pivot)).collect();
            for i in (0..unknowns).filter(|&i| i != k) {
                let factor = a[i][k].clone();
                a[i] = a[i].iter().zip(&a[k]).map(|(v, w)| v.sub(&factor.mul(w))).collect();
            }
        }
        let beta: Vec<Q> = a.iter().map(|row| row[unknowns].clone()).collect();
        let n = Q::int(self.users());
        let mean_y = self.sum(y).div(&n);
        let square = |q: Q| q.mul(&q);
        let total = self.sum(|r| square(y(r).sub(&mean_y)));
        let residual = self.sum(|r| {
            let predicted = (0..unknowns).fold(Q::zero(), |p, i| p.add(&beta[i].mul(&x(r, i))));
            square(y(r).sub(&predicted))
        });
        let r2 = (!total.is_zero()).then(|| Q::int(1).sub(&residual.div(&total)));
        Some((beta, r2))
    }
}

/// Data of `columns` columns whose aggregates (sums of products of two values, or of a value
/// and 10^decimals) reach up to 2^126: values of up to 61 bits, user counts of up to 2^40.
fn data(columns: std::ops::RangeInclusive<usize>) -> impl Strategy<Value = Data> {
    (columns, 0u32..=9, 0u32..=61, 1usize..=8).prop_flat_map(|(columns, decimals, value_bits, distinct)| {
        // log2 of 10^decimals, the intercept's encoding, rounded up.
        let one_bits = (decimals * 10).div_ceil(3);
        // A total is below 8 rows x 2^count_bits x 2^(2 x value bits) <= 2^126.
        let count_bits = (126 - 3 - 2 * value_bits.max(one_bits)).min(40);
        let bound = (1i64 << value_bits) - 1;
        let row = (proptest::collection::vec(-bound..=bound, columns), 1u64..=(1u64 << count_bits));
        proptest::collection::vec(row, distinct).prop_map(move |rows| Data { decimals, rows })
    })
}

fn estimates(statistic: Statistic, data: &Data) -> Result<Vec<f64>, StatsError> {
    let users = usize::try_from(data.users()).unwrap();
    exact::estimates(statistic, users, data.rows[0].0.len(), data.decimals, &data.totals(statistic))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn means_and_variances_are_the_nearest_doubles(data in data(1..=3)) {
        for (got, want) in estimates(Statistic::Mean, &data).unwrap().iter().zip(data.means()) {
            assert_nearest(*got, &want, "mean");
        }
        for (got, want) in estimates(Statistic::Variance, &data).unwrap().iter().zip(data.variances()) {
            assert_nearest(*got, &want, "variance");
        }
    }

    #[test]
    fn regressions_are_the_nearest_doubles_and_refused_only_when_singular(data in data(2..=5)) {
        let got = estimates(Statistic::Linreg, &data);
        match data.least_squares() {
            None => prop_assert!(matches!(got, Err(StatsError::Input(m)) if m.contains("singular"))),
            Some((beta, r2)) => {
                let got = got.unwrap();
                prop_assert_eq!(got.len(), beta.len() + 1);
                for (g, b) in got.iter().zip(&beta) {
                    assert_nearest(*g, b, "coefficient");
                }
                match r2 {
                    Some(r2) => assert_nearest(got[beta.len()], &r2, "r2"),
                    None => prop_assert!(got[beta.len()].is_nan()),
                }
            }
        }
    }
}

/// Issue 16: 70,000 users, half at 1.9e14 and half at -1.9e14. `n sum(x^2)` is past 2^127, and
/// computed in i128 it wrapped to a variance of -3.3e28.
#[test]
fn a_variance_whose_numerator_passes_2_to_127_is_exact() {
    let data =
        Data { decimals: 0, rows: vec![(vec![190_000_000_000_000], 35_000), (vec![-190_000_000_000_000], 35_000)] };
    assert_eq!(estimates(Statistic::Variance, &data).unwrap(), [3.61e28]);
    assert_eq!(estimates(Statistic::Mean, &data).unwrap(), [0.0]);
    // And at the largest values a dataset holds: n sum(x^2) is near 2^128.
    let extreme = Data { decimals: 9, rows: vec![(vec![i64::MAX], 1), (vec![i64::MIN + 1], 1)] };
    assert_nearest(estimates(Statistic::Variance, &extreme).unwrap()[0], &extreme.variances()[0], "variance");
}

/// Issue 16: well-posed regressions that an f64 pivot test refused, its threshold depending
/// on the units of the data.
#[test]
fn regressions_in_any_units_are_solved() {
    let cases = [
        Data {
            decimals: 0,
            rows: vec![(vec![1_000_000_000_000, 3], 1), (vec![-2_000_000_000_000, 5], 1), (vec![7, 1], 1)],
        },
        Data { decimals: 7, rows: vec![(vec![1, 10_000_000], 1), (vec![3, 20_000_000], 1), (vec![2, 20_000_000], 1)] },
    ];
    for data in cases {
        let (beta, r2) = data.least_squares().expect("well posed");
        let got = estimates(Statistic::Linreg, &data).unwrap();
        for (g, b) in got.iter().zip(&beta) {
            assert_nearest(*g, b, "coefficient");
        }
        assert_nearest(got[2], &r2.unwrap(), "r2");
    }
}

#[test]
fn totals_of_another_layout_or_no_users_are_refused() {
    let wrong = exact::estimates(Statistic::Variance, 3, 2, 0, &[vec![1, 2]]).unwrap_err().to_string();
    assert!(wrong.contains("needs 2 aggregates of 2 slots; [2] slots given"), "{wrong}");
    let linreg = exact::estimates(Statistic::Linreg, 3, 2, 0, &[vec![1; 5]]).unwrap_err().to_string();
    assert!(linreg.contains("6 slots"), "{linreg}");
    assert!(exact::estimates(Statistic::Mean, 0, 1, 0, &[vec![0]]).is_err());
    let no_feature = exact::estimates(Statistic::Linreg, 3, 1, 0, &[vec![3, 6, 14]]).unwrap_err().to_string();
    assert!(no_feature.contains("a feature column and the response"), "{no_feature}");
}
