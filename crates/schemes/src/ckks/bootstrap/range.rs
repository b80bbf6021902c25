//! The range [-K, K] EvalMod must cover, derived from the secret's Hamming weight.
//!
//! After ModRaise a ciphertext (c0, c1), both centred modulo q0 (|c0_i|, |c1_i| <= q0/2),
//! decrypts over the full chain to t = c0 + c1 s = m + q0 I, an integer polynomial, and
//! CoeffToSlot puts x_i = t_i / q0 = m_i / q0 + I_i into the slots. EvalMod must be exact
//! (to its approximation error) on every x_i, so K bounds |x_i|:
//!
//! - **Worst case.** s has h non-zero coefficients in {-1, 1}, so each coefficient of c1 s is a
//!   signed sum of h coefficients of c1: |t_i| <= q0/2 + h q0/2, hence |x_i| <= (h + 1) / 2 for
//!   every ciphertext whatever its origin. No failure probability.
//! - **Probabilistic.** For ciphertexts whose components are uniform modulo q0 (every fresh
//!   encryption, and any ciphertext after a key switch or product), x_i is a sum of h + 1
//!   independent values uniform in [-1/2, 1/2): variance (h + 1) / 12. K = 8 standard
//!   deviations fails on one coefficient with probability about 1.2e-15 (about 2^-50), so about
//!   2^-40 per bootstrapping at N = 2^10 (a union over N coefficients).
//!
//! The default K is the smaller of the two (the worst case for small h, where it is no larger).
//! A chosen K below both cannot hold the range and is refused: its failure is not rare but
//! expected, and shows up only as a wrong result.

use crate::error::{Result, SchemeError};
use crate::rlwe::SecretDistribution;

/// Standard deviations of the probabilistic bound: 8 (failure about 2^-50 per coefficient).
pub const RANGE_SIGMAS: f64 = 8.0;

/// The largest K accepted: the Chebyshev degree EvalMod needs grows linearly with K / 2^r, and
/// beyond this a sparse secret (small h) is the answer rather than a huge polynomial.
pub const MAX_RANGE: f64 = 256.0;

/// K = (h + 1) / 2: holds for every ciphertext (see the module documentation).
pub fn worst_case_range(hamming_weight: usize) -> f64 {
    (hamming_weight as f64 + 1.0) / 2.0
}

/// K = 8 sqrt((h + 1) / 12): holds for ciphertexts with uniform components except with
/// probability about 2^-50 per coefficient.
pub fn probabilistic_range(hamming_weight: usize) -> f64 {
    RANGE_SIGMAS * ((hamming_weight as f64 + 1.0) / 12.0).sqrt()
}

/// The smallest K that holds the range for a secret of Hamming weight `hamming_weight`: the
/// smaller of the worst-case and the probabilistic bound.
///
/// ```
/// use pimhe_schemes::ckks::bootstrap::minimum_range;
/// assert_eq!(minimum_range(16), 8.5); // (16 + 1) / 2, below 8 sqrt(17 / 12) = 9.5
/// assert!((minimum_range(192) - 32.08).abs() < 0.01); // 8 sqrt(193 / 12), below 96.5
/// ```
pub fn minimum_range(hamming_weight: usize) -> f64 {
    worst_case_range(hamming_weight).min(probabilistic_range(hamming_weight))
}

/// The Hamming weight of a sparse ternary secret, or the error that bootstrapping needs one: a
/// uniform ternary secret has h about 2N/3, a range K in the tens or hundreds and an EvalMod
/// polynomial of impractical degree.
pub(crate) fn hamming_weight(secret: SecretDistribution) -> Result<usize> {
    match secret {
        SecretDistribution::SparseTernary { hamming_weight } => Ok(hamming_weight),
        SecretDistribution::Ternary => Err(SchemeError::InvalidParameters(
            "bootstrapping needs a sparse ternary secret (CkksParametersBuilder::secret with \
             SecretDistribution::SparseTernary): the EvalMod range K grows with the secret's Hamming weight, and a \
             uniform ternary secret (h about 2N/3) makes it impractically large"
                .into(),
        )),
    }
}

/// The range to use: `chosen` if given (checked), else [`minimum_range`] of the secret.
pub(crate) fn resolve_range(hamming_weight: usize, chosen: Option<f64>) -> Result<f64> {
    let minimum = minimum_range(hamming_weight);
    let k = chosen.unwrap_or(minimum);
    if !k.is_finite() || k < minimum {
        return Err(SchemeError::InvalidParameters(format!(
            "EvalMod range K = {k} cannot hold the values after CoeffToSlot for a secret of Hamming weight \
             {hamming_weight}: they reach (h + 1) / 2 = {} in the worst case and {} (8 standard deviations) with \
             overwhelming probability; allowed K >= {minimum}",
            worst_case_range(hamming_weight),
            probabilistic_range(hamming_weight)
        )));
    }
    if k > MAX_RANGE {
        return Err(SchemeError::InvalidParameters(format!(
            "EvalMod range K = {k} (Hamming weight {hamming_weight}) is beyond the supported {MAX_RANGE}: use a \
             sparser secret"
        )));
    }
    Ok(k)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_ranges_are_refused_and_the_default_is_the_minimum() {
        assert_eq!(resolve_range(16, None).unwrap(), 8.5);
        assert_eq!(resolve_range(16, Some(10.0)).unwrap(), 10.0);
        assert!(resolve_range(16, Some(4.0)).unwrap_err().to_string().contains("cannot hold"));
        assert!(resolve_range(16, Some(f64::NAN)).is_err());
        assert!(resolve_range(16, Some(1000.0)).unwrap_err().to_string().contains("sparser"));
        assert!(hamming_weight(SecretDistribution::Ternary).is_err());
    }
}
