//! What a statistic asks of every user and of the server, whoever holds the data: the vectors a
//! user's row is encoded into, the aggregates the server computes from them, and the names of
//! the estimates. Shared by the in-process [`super::StatsPlan`] and the file-based
//! [`super::study::Study`], so that both encode and aggregate in exactly one way.
//!
//! Every encoded vector carries a 1 in the slot after the data ([`Layout::count_slot`]), so
//! every aggregate counts its users homomorphically: a study checks the count it decrypts
//! against the one the server states ([`Layout::check_totals`]).

use num_bigint::BigInt;
use pimhe_schemes::SchemeError;

use super::{Aggregator, Statistic, StatsError, MAX_FEATURES};

/// One aggregate the server computes: the slot-wise sum over users of one encoded vector, or of
/// the product of two (indices into the layout's encodings).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Aggregate {
    Sum(usize),
    Product(usize, usize),
}

/// How a user's row becomes one encoded vector (exact integers, one per slot).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Encoding {
    /// The row itself.
    Values,
    /// Per pair (i, j) of [`upper_pairs`], z_i, with z = (10^decimals, row).
    PairFirst,
    /// Per pair (i, j), z_j.
    PairSecond,
}

/// The encodings and aggregates of a statistic over some columns at a fixed-point scale.
#[derive(Debug, Clone)]
pub(crate) struct Layout {
    statistic: Statistic,
    columns: Vec<String>,
    decimals: u32,
    /// The encoded vectors each user encrypts.
    encodings: Vec<Encoding>,
    /// Slots of each encoded vector.
    slots: usize,
    /// Linreg: the pairs (i, j) the slots hold.
    pairs: Vec<(usize, usize)>,
    aggregates: Vec<Aggregate>,
}

impl Layout {
    /// The layout of `statistic` over `columns` (values scaled by 10^`decimals`) for ring
    /// degree `n`, or why the statistic cannot be computed on them.
    pub(crate) fn new(statistic: Statistic, columns: &[String], decimals: u32, n: usize) -> Result<Self, StatsError> {
        let count = columns.len();
        let (encodings, aggregates, pairs) = match statistic {
            Statistic::Mean => (vec![Encoding::Values], vec![Aggregate::Sum(0)], vec![]),
            Statistic::Variance => (vec![Encoding::Values], vec![Aggregate::Sum(0), Aggregate::Product(0, 0)], vec![]),
            Statistic::Linreg => {
                if !(2..=MAX_FEATURES + 1).contains(&count) {
                    return Err(StatsError::Input(format!(
                        "linreg needs 1 ..= {MAX_FEATURES} feature columns and the response last; {count} given"
                    )));
                }
                let pairs = upper_pairs(count + 1);
                (vec![Encoding::PairFirst, Encoding::PairSecond], vec![Aggregate::Product(0, 1)], pairs)
            }
        };
        let slots = if pairs.is_empty() { count } else { pairs.len() };
        if slots >= n {
            return Err(StatsError::Input(format!(
                "{slots} slots needed, and one more that counts the users; N = {n} has {n}"
            )));
        }
        Ok(Self { statistic, columns: columns.to_vec(), decimals, encodings, slots, pairs, aggregates })
    }

    /// The statistic.
    pub(crate) fn statistic(&self) -> Statistic {
        self.statistic
    }

    /// The vectors each user encrypts.
    pub(crate) fn encodings(&self) -> &[Encoding] {
        &self.encodings
    }

    /// The aggregates the server computes.
    pub(crate) fn aggregates(&self) -> &[Aggregate] {
        &self.aggregates
    }

    /// Data slots of each encoded vector (and of each aggregate).
    pub(crate) fn slots(&self) -> usize {
        self.slots
    }

    /// The slot after the data, which holds 1 in every encoded vector: in an aggregate it is
    /// the number of users added up (a sum of ones, or of products of ones).
    pub(crate) fn count_slot(&self) -> usize {
        self.slots
    }

    /// User `row`'s vector of `encoding`: its data slots, then the count slot's 1.
    pub(crate) fn encode(&self, encoding: Encoding, row: &[i64]) -> Vec<i64> {
        let one = 10i64.pow(self.decimals);
        let z = |i: usize| if i == 0 { one } else { row[i - 1] };
        let mut vector: Vec<i64> = match encoding {
            Encoding::Values => row.to_vec(),
            Encoding::PairFirst => self.pairs.iter().map(|&(i, _)| z(i)).collect(),
            Encoding::PairSecond => self.pairs.iter().map(|&(_, j)| z(j)).collect(),
        };
        vector.push(1);
        vector
    }

    /// [`Layout::encode`] reduced modulo the plaintext modulus `t`: what the user encrypts.
    pub(crate) fn encode_mod(&self, encoding: Encoding, row: &[i64], t: u32) -> Vec<u64> {
        self.encode(encoding, row).into_iter().map(|v| v.rem_euclid(i64::from(t)) as u64).collect()
    }

    /// User `row`'s term of every aggregate data slot (per aggregate, per slot), exactly: what
    /// the server adds up, in plaintext.
    pub(crate) fn terms(&self, row: &[i64]) -> Vec<Vec<i128>> {
        let encoded: Vec<Vec<i64>> =
            self.encodings.iter().map(|&e| self.encode(e, row)[..self.slots].to_vec()).collect();
        self.aggregates
            .iter()
            .map(|aggregate| match *aggregate {
                Aggregate::Sum(e) => encoded[e].iter().map(|&v| i128::from(v)).collect(),
                Aggregate::Product(e, f) => {
                    encoded[e].iter().zip(&encoded[f]).map(|(&a, &b)| i128::from(a) * i128::from(b)).collect()
                }
            })
            .collect()
    }

    /// The server's work on one round of users: `ciphertexts[e]` holds every user's encoding
    /// `e`; each aggregate of the round is added to the `running` one (the previous rounds').
    pub(crate) fn aggregate<A: Aggregator + ?Sized>(
        &self,
        server: &A,
        ciphertexts: &[A::Ciphertexts],
        running: Option<Vec<A::Ciphertexts>>,
    ) -> Result<Vec<A::Ciphertexts>, SchemeError> {
        let round = self
            .aggregates
            .iter()
            .map(|&aggregate| match aggregate {
                Aggregate::Sum(e) => server.sum(&ciphertexts[e]),
                Aggregate::Product(e, f) => server.sum_of_products(&ciphertexts[e], &ciphertexts[f]),
            })
            .collect::<Result<Vec<_>, _>>()?;
        match running {
            None => Ok(round),
            Some(running) => running.iter().zip(&round).map(|(a, b)| server.add(a, b)).collect(),
        }
    }

    /// The largest magnitude one user's term of any aggregate slot can have when every value
    /// is at most `max_value` in magnitude (fixed point): the bound a study declares before any
    /// data exists. `None` past the range of u128.
    pub(crate) fn term_bound(&self, max_value: u128) -> Option<u128> {
        // The count slot's term is 1.
        self.aggregate_term_bounds(max_value)?.into_iter().try_fold(1u128, |bound, term| Some(bound.max(term)))
    }

    /// Per aggregate, the largest magnitude one user's term of a data slot can have when every
    /// value is at most `max_value` in magnitude. `None` past the range of u128.
    fn aggregate_term_bounds(&self, max_value: u128) -> Option<Vec<u128>> {
        // Linreg's z carries the constant 10^decimals beside the values.
        let largest = match self.statistic {
            Statistic::Linreg => max_value.max(10u128.pow(self.decimals)),
            Statistic::Mean | Statistic::Variance => max_value,
        };
        self.aggregates
            .iter()
            .map(|aggregate| match aggregate {
                Aggregate::Sum(_) => Some(largest),
                Aggregate::Product(_, _) => largest.checked_mul(largest),
            })
            .collect()
    }

    /// Checks what decryption can check of exact totals (`totals[aggregate]`: the data slots,
    /// then the count slot) said to be the aggregate of `users` users of values at most
    /// `max_value`: every count slot holds `users`, every total is within `users` times its
    /// term's bound, and the sums of squares are consistent with the sums they go with
    /// (Cauchy-Schwarz: (sum u w)^2 <= (sum u^2)(sum w^2) over users, so a variance is never
    /// negative). A rewritten user count, an altered aggregate, or values past the declared
    /// bound fail one of these unless their totals stay within the bounds; a client that wraps
    /// its values around the plaintext modulus on purpose can land its totals there, which is
    /// why the clients must be honest (the study's threat model). The message says what failed.
    pub(crate) fn check_totals(&self, users: usize, max_value: u64, totals: &[Vec<i128>]) -> Result<(), String> {
        let users_big = BigInt::from(users);
        for (a, total) in totals.iter().enumerate() {
            let count = total[self.count_slot()];
            if count != users as i128 {
                return Err(format!(
                    "aggregate {a} counts {count} users (decrypted), where the aggregates' file states {users}"
                ));
            }
        }
        let bounds = self.aggregate_term_bounds(u128::from(max_value)).unwrap_or_else(|| vec![u128::MAX; totals.len()]);
        for ((a, total), &bound) in totals.iter().enumerate().zip(&bounds) {
            let limit = BigInt::from(bound) * &users_big;
            if let Some(slot) =
                total[..self.slots].iter().position(|&t| BigInt::from(t).magnitude() > limit.magnitude())
            {
                return Err(format!(
                    "aggregate {a}, slot {slot} is {}, beyond {limit}, the most {users} users of values up to {max_value} \
                     can sum to",
                    total[slot]
                ));
            }
        }
        let big = |t: i128| BigInt::from(t);
        match self.statistic {
            Statistic::Mean => Ok(()),
            Statistic::Variance => (0..self.slots).try_for_each(|c| {
                let (sum, squares) = (big(totals[0][c]), big(totals[1][c]));
                cauchy_schwarz(&sum, &squares, &users_big).then_some(()).ok_or_else(|| {
                    format!(
                        "column {c}: sum {sum} and sum of squares {squares} of {users} users \
                                            would make a negative variance"
                    )
                })
            }),
            Statistic::Linreg => {
                let at = |i: usize, j: usize| {
                    let slot =
                        self.pairs.iter().position(|&p| p == (i.min(j), i.max(j))).expect("every pair has a slot");
                    big(totals[0][slot])
                };
                let one = BigInt::from(10u64.pow(self.decimals));
                if at(0, 0) != &users_big * &one * &one {
                    return Err(format!(
                        "the regression's constant term sums to {}, not {users} users x 10^{}",
                        at(0, 0),
                        2 * self.decimals
                    ));
                }
                self.pairs.iter().try_for_each(|&(i, j)| {
                    cauchy_schwarz(&at(i, j), &at(i, i), &at(j, j)).then_some(()).ok_or_else(|| {
                        format!("the products of z_{i} and z_{j} are inconsistent with their squares (Cauchy-Schwarz)")
                    })
                })
            }
        }
    }

    /// The names of the estimates, in the order of [`super::exact::estimates`].
    pub(crate) fn estimate_names(&self) -> Vec<String> {
        let columns = &self.columns;
        match self.statistic {
            Statistic::Mean => columns.iter().map(|c| format!("mean({c})")).collect(),
            Statistic::Variance => columns.iter().map(|c| format!("variance({c})")).collect(),
            Statistic::Linreg => std::iter::once("intercept".to_string())
                .chain(columns[..columns.len() - 1].iter().map(|c| format!("coef({c})")))
                .chain(["r2".to_string()])
                .collect(),
        }
    }

    /// The statistic from exact aggregates of this layout over `users` users
    /// ([`super::exact::estimates`]).
    pub(crate) fn estimates(&self, users: usize, totals: &[Vec<i128>]) -> Result<Vec<f64>, StatsError> {
        super::exact::estimates(self.statistic, users, self.columns.len(), self.decimals, totals)
    }
}

/// Whether `cross`, `u2` and `w2` can be sum(u w), sum(u^2) and sum(w^2) over the same users:
/// both squares non-negative and cross^2 <= u2 w2.
fn cauchy_schwarz(cross: &BigInt, u2: &BigInt, w2: &BigInt) -> bool {
    u2.sign() != num_bigint::Sign::Minus && w2.sign() != num_bigint::Sign::Minus && cross * cross <= u2 * w2
}

/// Index pairs (i, j), i <= j < size, in row order: the slots of the regression encoding.
pub(crate) fn upper_pairs(size: usize) -> Vec<(usize, usize)> {
    (0..size).flat_map(|i| (i..size).map(move |j| (i, j))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(columns: &[&str]) -> Vec<String> {
        columns.iter().map(|c| c.to_string()).collect()
    }

    #[test]
    fn term_bounds_follow_the_aggregates() {
        let mean = Layout::new(Statistic::Mean, &names(&["a", "b"]), 2, 8192).unwrap();
        assert_eq!(mean.term_bound(500), Some(500));
        let variance = Layout::new(Statistic::Variance, &names(&["a"]), 2, 8192).unwrap();
        assert_eq!(variance.term_bound(500), Some(250_000));
        // The regression's constant 10^2 = 100 dominates small values.
        let linreg = Layout::new(Statistic::Linreg, &names(&["x", "y"]), 2, 8192).unwrap();
        assert_eq!(linreg.term_bound(7), Some(10_000));
        assert_eq!(linreg.term_bound(u128::MAX), None);
    }

    #[test]
    fn regression_encodings_multiply_into_every_pair() {
        let layout = Layout::new(Statistic::Linreg, &names(&["x", "y"]), 0, 8192).unwrap();
        let row = [3, 5];
        let first = layout.encode(Encoding::PairFirst, &row);
        let second = layout.encode(Encoding::PairSecond, &row);
        let products: Vec<i64> = first.iter().zip(&second).map(|(a, b)| a * b).collect();
        // z = (1, 3, 5): pairs (0,0) (0,1) (0,2) (1,1) (1,2) (2,2), then the count slot.
        assert_eq!(products, [1, 3, 5, 9, 15, 25, 1]);
    }

    /// The exact totals of `rows` (data slots, then the count slot), as decryption yields them.
    fn totals(layout: &Layout, rows: &[&[i64]]) -> Vec<Vec<i128>> {
        let mut totals = vec![vec![0i128; layout.slots() + 1]; layout.aggregates().len()];
        for row in rows {
            for (total, terms) in totals.iter_mut().zip(layout.terms(row)) {
                total.iter_mut().zip(terms.iter().chain([&1])).for_each(|(t, term)| *t += term);
            }
        }
        totals
    }

    #[test]
    fn honest_totals_pass_the_checks() {
        let rows: [&[i64]; 3] = [&[3, -7], &[10, 2], &[-10, 0]];
        for statistic in [Statistic::Mean, Statistic::Variance, Statistic::Linreg] {
            let layout = Layout::new(statistic, &names(&["x", "y"]), 0, 8192).unwrap();
            assert_eq!(layout.check_totals(3, 10, &totals(&layout, &rows)), Ok(()), "{statistic:?}");
        }
    }

    #[test]
    fn a_rewritten_count_wrapped_values_and_inconsistent_squares_are_caught() {
        let rows: [&[i64]; 3] = [&[3, -7], &[10, 2], &[-10, 0]];
        let variance = Layout::new(Statistic::Variance, &names(&["x", "y"]), 0, 8192).unwrap();
        let honest = totals(&variance, &rows);
        // The server states 4 users where 3 were added up.
        assert!(variance.check_totals(4, 10, &honest).unwrap_err().contains("counts 3 users"));
        // A value past the bound (10): 1000 instead of 10.
        let wrapped = totals(&variance, &[&[3, -7], &[1000, 2], &[-10, 0]]);
        assert!(variance.check_totals(3, 10, &wrapped).unwrap_err().contains("beyond"));
        // A sum of squares too small for its sum: a negative variance.
        let mut negative = honest.clone();
        negative[1][0] = 1;
        assert!(variance.check_totals(3, 10, &negative).unwrap_err().contains("negative variance"));
        let linreg = Layout::new(Statistic::Linreg, &names(&["x", "y"]), 1, 8192).unwrap();
        let mut altered = totals(&linreg, &rows);
        // The sum of x y: within its bound (3 x 10^2) but past sqrt(209 x 53) ~ 105.
        altered[0][4] = 200;
        assert!(linreg.check_totals(3, 10, &altered).unwrap_err().contains("Cauchy-Schwarz"));
        let mut constant = totals(&linreg, &rows);
        constant[0][0] -= 1;
        assert!(linreg.check_totals(3, 10, &constant).unwrap_err().contains("constant term"));
    }
}
