//! Text and JSON forms of the reports: seconds and SI-prefixed numbers, the [`Render`] trait
//! every report implements, one-line JSON.

use serde::Serialize;

use crate::error::{BenchError, Result};

/// How a run whose keys come from a seed is labelled, in text and JSON: anyone with the seed
/// can make the same secret key.
pub const FIXED_SEED_KEYS: &str = "insecure: keys from a fixed seed";

/// A report with a text form (the CLI's table; `--json` prints the [`Serialize`] form).
pub trait Render: Serialize {
    /// The text form, without a trailing newline.
    fn render(&self) -> String;
}

/// One JSON object on one line.
pub fn to_json<T: Serialize + ?Sized>(value: &T) -> Result<String> {
    serde_json::to_string(value).map_err(|e| BenchError::Failed(format!("cannot write the JSON report: {e}")))
}

/// Seconds with a unit that keeps three significant decimals readable (`1.234 s`, `5.000 ms`,
/// `12.000 us`).
pub fn format_seconds(s: f64) -> String {
    if s >= 1.0 {
        format!("{s:.3} s")
    } else if s >= 1e-3 {
        format!("{:.3} ms", s * 1e3)
    } else {
        format!("{:.3} us", s * 1e6)
    }
}

/// A number with an SI prefix (`12.34 M`, `821.83`).
pub fn format_si(x: f64) -> String {
    const PREFIXES: [(f64, &str); 4] = [(1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")];
    match PREFIXES.iter().find(|(scale, _)| x >= *scale) {
        Some((scale, prefix)) => format!("{:.2} {prefix}", x / scale),
        None => format!("{x:.2}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_and_prefixes() {
        assert_eq!(format_seconds(2.0), "2.000 s");
        assert_eq!(format_seconds(0.005), "5.000 ms");
        assert_eq!(format_seconds(12e-6), "12.000 us");
        assert_eq!(format_si(12_340_000.0), "12.34 M");
        assert_eq!(format_si(821.834), "821.83");
        assert_eq!(to_json(&[1, 2]).unwrap(), "[1,2]");
    }
}
