//! What a statistic asks of every user and of the server, whoever holds the data: the vectors a
//! user's row is encoded into, the aggregates the server computes from them, and the names of
//! the estimates. Shared by the in-process [`super::StatsPlan`] and the file-based
//! [`super::study::Study`], so that both encode and aggregate in exactly one way.

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
        if slots > n {
            return Err(StatsError::Input(format!("{slots} slots needed; N = {n} has {n}")));
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

    /// Slots of each encoded vector (and of each aggregate).
    pub(crate) fn slots(&self) -> usize {
        self.slots
    }

    /// User `row`'s vector of `encoding`.
    pub(crate) fn encode(&self, encoding: Encoding, row: &[i64]) -> Vec<i64> {
        let one = 10i64.pow(self.decimals);
        let z = |i: usize| if i == 0 { one } else { row[i - 1] };
        match encoding {
            Encoding::Values => row.to_vec(),
            Encoding::PairFirst => self.pairs.iter().map(|&(i, _)| z(i)).collect(),
            Encoding::PairSecond => self.pairs.iter().map(|&(_, j)| z(j)).collect(),
        }
    }

    /// [`Layout::encode`] reduced modulo the plaintext modulus `t`: what the user encrypts.
    pub(crate) fn encode_mod(&self, encoding: Encoding, row: &[i64], t: u32) -> Vec<u64> {
        self.encode(encoding, row).into_iter().map(|v| v.rem_euclid(i64::from(t)) as u64).collect()
    }

    /// User `row`'s term of every aggregate slot (per aggregate, per slot), exactly: what the
    /// server adds up, in plaintext.
    pub(crate) fn terms(&self, row: &[i64]) -> Vec<Vec<i128>> {
        let encoded: Vec<Vec<i64>> = self.encodings.iter().map(|&e| self.encode(e, row)).collect();
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
        // Linreg's z carries the constant 10^decimals beside the values.
        let largest = match self.statistic {
            Statistic::Linreg => max_value.max(10u128.pow(self.decimals)),
            Statistic::Mean | Statistic::Variance => max_value,
        };
        self.aggregates.iter().try_fold(0u128, |bound, aggregate| {
            let term = match aggregate {
                Aggregate::Sum(_) => Some(largest),
                Aggregate::Product(_, _) => largest.checked_mul(largest),
            }?;
            Some(bound.max(term))
        })
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
        // z = (1, 3, 5): pairs (0,0) (0,1) (0,2) (1,1) (1,2) (2,2).
        assert_eq!(products, [1, 3, 5, 9, 15, 25]);
    }
}
