//! Whether a polynomial holds coefficients or NTT evaluations.

use std::fmt;

/// The representation of a polynomial's residues.
///
/// Addition works in either; multiplication needs [`Representation::Ntt`]; rounding,
/// decomposition and decoding need [`Representation::Coefficient`]. Every batch carries its
/// representation, and operations refuse the wrong one with an error instead of producing
/// garbage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Representation {
    /// Coefficients c_0 .. c_{N-1} of sum c_i X^i.
    Coefficient,
    /// Evaluations at the odd powers of a 2N-th root of unity, in bit-reversed order.
    Ntt,
}

impl fmt::Display for Representation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Representation::Coefficient => "coefficient",
            Representation::Ntt => "NTT",
        })
    }
}
