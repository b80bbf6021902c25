//! How precise a CKKS result is, in bits, the way OpenFHE and Lattigo report it: a slot whose
//! decoded value is off by e from the expected one has -log2(e) bits of precision.
//!
//! Following Lattigo's `GetPrecisionStats`, the summary statistics are taken over the errors and
//! then turned into bits: the minimum precision is that of the largest error, the mean precision
//! that of the mean error, the median that of the median error. The mean is therefore
//! -log2(mean error), which a few bad slots pull down, rather than the mean of the per-slot bits
//! (never smaller, by Jensen's inequality), which would hide them. Exact slots count as
//! [`MAX_PRECISION_BITS`]: f64 arithmetic cannot show more.

use std::fmt;

use num_complex::Complex64;

/// The precision reported for an exact (or better than 2^-52) slot.
pub const MAX_PRECISION_BITS: f64 = 52.0;

/// Bits of precision of a set of slots (see the module documentation).
///
/// ```
/// use num_complex::Complex64;
/// use pimhe_schemes::ckks::precision::precision;
/// let expected = [Complex64::new(1.0, 0.0), Complex64::new(0.0, -2.0)];
/// let error = 2f64.powi(-20);
/// let decoded = [Complex64::new(1.0 + error, 0.0), Complex64::new(0.0, -2.0 - error)];
/// let stats = precision(&decoded, &expected);
/// assert_eq!(stats.min_bits, 20.0);
/// assert_eq!(stats.max_error, error);
/// assert_eq!(stats.to_string(), "min 20.0 bits, mean 20.0 bits, max error 9.5e-7");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct PrecisionStats {
    /// Number of slots compared.
    pub slots: usize,
    /// Precision of the worst slot: -log2 of the largest error.
    pub min_bits: f64,
    /// -log2 of the mean error.
    pub mean_bits: f64,
    /// -log2 of the median error.
    pub median_bits: f64,
    /// Precision of the best slot: -log2 of the smallest error.
    pub max_bits: f64,
    /// The largest absolute error, |decoded - expected| (infinite if a slot is NaN or infinite).
    pub max_error: f64,
    /// The mean absolute error.
    pub mean_error: f64,
}

impl fmt::Display for PrecisionStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "min {:.1} bits, mean {:.1} bits, max error {:.1e}", self.min_bits, self.mean_bits, self.max_error)
    }
}

/// -log2(error), capped at [`MAX_PRECISION_BITS`]; -infinity for an infinite error.
pub fn bits_of_precision(error: f64) -> f64 {
    if error <= 0.0 {
        MAX_PRECISION_BITS
    } else {
        (-error.log2()).min(MAX_PRECISION_BITS)
    }
}

/// The precision of complex slots: the error of slot j is |decoded[j] - expected[j]| (the
/// modulus of the complex difference).
///
/// # Panics
/// If the slices have different lengths: comparing slots that do not correspond would report
/// a meaningless precision.
pub fn precision(decoded: &[Complex64], expected: &[Complex64]) -> PrecisionStats {
    assert_eq!(decoded.len(), expected.len(), "precision compares slot by slot: the lengths must match");
    from_errors(decoded.iter().zip(expected).map(|(d, e)| (d - e).norm()).collect())
}

/// The precision of real slots: the error of slot j is |decoded[j] - expected[j]|.
///
/// # Panics
/// If the slices have different lengths.
pub fn precision_real(decoded: &[f64], expected: &[f64]) -> PrecisionStats {
    assert_eq!(decoded.len(), expected.len(), "precision compares slot by slot: the lengths must match");
    from_errors(decoded.iter().zip(expected).map(|(d, e)| (d - e).abs()).collect())
}

/// The statistics of the per-slot errors. No slots: every precision at the cap, errors 0.
fn from_errors(mut errors: Vec<f64>) -> PrecisionStats {
    // A NaN slot is as wrong as can be; without this, f64::min would ignore it and report
    // full precision.
    for e in errors.iter_mut() {
        if e.is_nan() {
            *e = f64::INFINITY;
        }
    }
    let slots = errors.len();
    if slots == 0 {
        let cap = MAX_PRECISION_BITS;
        return PrecisionStats {
            slots,
            min_bits: cap,
            mean_bits: cap,
            median_bits: cap,
            max_bits: cap,
            max_error: 0.0,
            mean_error: 0.0,
        };
    }
    errors.sort_by(f64::total_cmp);
    let max_error = errors[slots - 1];
    let min_error = errors[0];
    let mean_error = errors.iter().sum::<f64>() / slots as f64;
    let median_error =
        if slots % 2 == 1 { errors[slots / 2] } else { (errors[slots / 2 - 1] + errors[slots / 2]) / 2.0 };
    PrecisionStats {
        slots,
        min_bits: bits_of_precision(max_error),
        mean_bits: bits_of_precision(mean_error),
        median_bits: bits_of_precision(median_error),
        max_bits: bits_of_precision(min_error),
        max_error,
        mean_error,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uniform_known_error_gives_its_bits_everywhere() {
        let expected: Vec<Complex64> = (0..10).map(|i| Complex64::new(i as f64, -(i as f64) / 3.0)).collect();
        // An error of 2^-24 in a direction that varies with the slot: the modulus is what counts.
        let decoded: Vec<Complex64> =
            expected.iter().enumerate().map(|(i, z)| z + Complex64::from_polar(2f64.powi(-24), i as f64)).collect();
        let stats = precision(&decoded, &expected);
        for bits in [stats.min_bits, stats.mean_bits, stats.median_bits, stats.max_bits] {
            assert!((bits - 24.0).abs() < 1e-6, "{stats:?}");
        }
        // The sums round to the values' ulp (2^-49 at 9), far below the error itself.
        assert!((stats.max_error / 2f64.powi(-24) - 1.0).abs() < 1e-6, "{stats:?}");
        assert_eq!(stats.slots, 10);
    }

    #[test]
    fn mixed_errors_follow_lattigo_definitions() {
        let expected = [0.0f64; 4];
        let decoded = [2f64.powi(-10), -(2f64.powi(-20)), 2f64.powi(-30), 0.0];
        let stats = precision_real(&decoded, &expected);
        assert_eq!(stats.min_bits, 10.0);
        assert_eq!(stats.max_bits, MAX_PRECISION_BITS);
        assert_eq!(stats.max_error, 2f64.powi(-10));
        let mean_error = (2f64.powi(-10) + 2f64.powi(-20) + 2f64.powi(-30)) / 4.0;
        assert_eq!(stats.mean_error, mean_error);
        assert_eq!(stats.mean_bits, -mean_error.log2()); // about 12.0, not the mean of the bits
        let median_error = (2f64.powi(-30) + 2f64.powi(-20)) / 2.0;
        assert_eq!(stats.median_bits, -median_error.log2()); // about 21
        assert_eq!(stats.to_string(), "min 10.0 bits, mean 12.0 bits, max error 9.8e-4");
    }

    #[test]
    fn display_matches_the_documented_format() {
        // max error 9.1e-8 is 23.4 bits; a mean error of 2^-27.1 gives "mean 27.1 bits".
        let stats = PrecisionStats {
            slots: 2,
            min_bits: bits_of_precision(9.1e-8),
            mean_bits: 27.1,
            median_bits: 27.0,
            max_bits: 30.0,
            max_error: 9.1e-8,
            mean_error: 2f64.powf(-27.1),
        };
        assert_eq!(stats.to_string(), "min 23.4 bits, mean 27.1 bits, max error 9.1e-8");
    }

    #[test]
    fn exact_nan_and_empty_inputs() {
        let exact = precision_real(&[1.5, -2.0], &[1.5, -2.0]);
        assert_eq!((exact.min_bits, exact.max_error), (MAX_PRECISION_BITS, 0.0));
        let tiny = precision_real(&[1.0 + f64::EPSILON], &[1.0]);
        assert_eq!(tiny.min_bits, MAX_PRECISION_BITS);
        let nan = precision_real(&[1.0, f64::NAN], &[1.0, 1.0]);
        assert_eq!(nan.min_bits, f64::NEG_INFINITY);
        assert_eq!(nan.max_error, f64::INFINITY);
        let nan = precision(&[Complex64::new(0.0, f64::NAN)], &[Complex64::new(0.0, 0.0)]);
        assert_eq!(nan.min_bits, f64::NEG_INFINITY);
        let empty = precision(&[], &[]);
        assert_eq!((empty.slots, empty.min_bits, empty.max_error), (0, MAX_PRECISION_BITS, 0.0));
        // Errors above 1 give negative precision rather than being clamped.
        assert_eq!(precision_real(&[4.0], &[0.0]).min_bits, -2.0);
    }

    #[test]
    #[should_panic(expected = "lengths must match")]
    fn different_lengths_panic() {
        precision_real(&[1.0], &[1.0, 2.0]);
    }
}
