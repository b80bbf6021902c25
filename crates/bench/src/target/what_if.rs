//! Hardware what-ifs of an emulated UPMEM run (DRAMatic, section 5): `--what-if` values,
//! parsed and applied to the run's [`UpmemModel`].
//!
//! - `mul-cycles=N` (N >= 1): the 32x32 multiply routines cost N cycles for a 32-bit result and
//!   2N for a 64-bit one (or a high word): a 32-bit multiplier yields the two words of a 64-bit
//!   product in two issues (as RISC-V's `mul` + `mulhu`), and DRAMatic 5.1's dummies have this
//!   ratio (`mul-cycles=2` is its 2/4-cycle dummy, [`MultiplierCycles::DRAMATIC_DUMMY`]).
//! - `mul-cycles=N/M` (N, M >= 1): N cycles for a 32-bit result, M for a 64-bit one
//!   (`mul-cycles=1/1` is DRAMatic 5.1's single-cycle routines, [`MultiplierCycles::SINGLE_CYCLE`]).
//!   The form is the one the model's label prints (`upmem-v1b@1+mul=2/4`).
//! - `zero-copy`: the CPU works in PIM memory (DRAMatic 5.2's hybrid system), so host <-> DPU
//!   transfers and retrievals cost nothing.
//!
//! The flag is repeatable and each value may also list what-ifs separated by commas:
//! `--what-if mul-cycles=2 --what-if zero-copy` = `--what-if mul-cycles=2,zero-copy`.
//!
//! The multiplier what-if re-costs the multiplies the emulator tallies (`COST_MUL` in
//! `dpu/kernels/arith_common.h`: 32x32->64, 32x32->32, the split low products and the truncated
//! high words). The best kernel's WRAM table multiplies (`COST_TMUL_*`) and the byte products
//! inside `COST_QQ_FORM` and `COST_MUL_POW2INV` are not tallied, so they keep their counted cost
//! ([`TABLE_CAVEAT`]).

use pimhe_pim::model::{MultiplierCycles, UpmemModel};
use serde::Serialize;

use crate::error::{BenchError, Result};

/// The allowed forms, for usage errors.
const FORMS: &str = "mul-cycles=N (N >= 1: N cycles per 32x32->32 multiply, 2N per 32x32->64), mul-cycles=N/M \
                     (N, M >= 1), or zero-copy; repeat --what-if or separate values with commas";

/// What the multiplier what-if cannot re-cost in the best kernel (printed beside its results).
pub const TABLE_CAVEAT: &str = "the best kernel's WRAM table multiplies (COST_TMUL_*) and the byte products in its \
                                special-prime reduction (COST_QQ_FORM) and N^-1 scaling (COST_MUL_POW2INV) are not \
                                tallied as multiplies by the emulator, so mul-cycles leaves their counted cost in place";

/// The hardware what-ifs of a run; the default is the hardware as it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct WhatIf {
    /// The multiply routines' cycles (DRAMatic 5.1), or `None` for the counted routines.
    pub multiplier: Option<MultiplierCycles>,
    /// No host <-> DPU transfer (DRAMatic 5.2).
    pub zero_copy: bool,
}

impl WhatIf {
    /// The hardware as it is.
    pub const NONE: Self = Self { multiplier: None, zero_copy: false };

    /// Parses the `--what-if` values (each may hold several, comma-separated). Giving the same
    /// what-if twice with different values is a usage error.
    ///
    /// ```
    /// use pimhe_bench::target::what_if::WhatIf;
    /// use pimhe_pim::model::MultiplierCycles;
    /// let w = WhatIf::parse(&["mul-cycles=2".into(), "zero-copy".into()]).unwrap();
    /// assert_eq!(w.multiplier, Some(MultiplierCycles::DRAMATIC_DUMMY));
    /// assert!(w.zero_copy);
    /// assert_eq!(WhatIf::parse(&["mul-cycles=1/1".into()]).unwrap().multiplier, Some(MultiplierCycles::SINGLE_CYCLE));
    /// assert!(WhatIf::parse(&["mul-cycles=0".into()]).is_err());
    /// ```
    pub fn parse(values: &[String]) -> Result<Self> {
        let mut what_if = Self::NONE;
        for value in values.iter().flat_map(|v| v.split(',')).map(str::trim) {
            if value == "zero-copy" {
                what_if.zero_copy = true;
            } else if let Some(cycles) = value.strip_prefix("mul-cycles=") {
                let m = parse_cycles(value, cycles)?;
                if what_if.multiplier.is_some_and(|old| old != m) {
                    return Err(BenchError::usage(format!(
                        "--what-if {value} conflicts with an earlier mul-cycles: give the multiplier once"
                    )));
                }
                what_if.multiplier = Some(m);
            } else {
                return Err(BenchError::usage(format!("--what-if {value:?} is not allowed: choose {FORMS}")));
            }
        }
        Ok(what_if)
    }

    /// Whether any what-if is active.
    pub fn is_active(&self) -> bool {
        *self != Self::NONE
    }

    /// Sets this what-if on `model` (an active field overrides the model's; an inactive one
    /// leaves it as it is).
    pub fn apply(&self, model: &mut UpmemModel) {
        if let Some(m) = self.multiplier {
            model.multiplier_cycles = Some(m);
        }
        if self.zero_copy {
            model.zero_copy = true;
        }
    }

    /// `self` with `other`'s active fields on top.
    pub fn and(self, other: WhatIf) -> Self {
        Self { multiplier: other.multiplier.or(self.multiplier), zero_copy: self.zero_copy || other.zero_copy }
    }

    /// The `--what-if` values that give this what-if, comma-separated (`none` for none).
    ///
    /// ```
    /// let w = pimhe_bench::target::what_if::WhatIf::parse(&["zero-copy,mul-cycles=3".into()]).unwrap();
    /// assert_eq!(w.describe(), "mul-cycles=3/6,zero-copy");
    /// ```
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(m) = self.multiplier {
            parts.push(format!("mul-cycles={}/{}", m.mul32, m.mul64));
        }
        if self.zero_copy {
            parts.push("zero-copy".to_string());
        }
        if parts.is_empty() {
            "none".to_string()
        } else {
            parts.join(",")
        }
    }
}

/// The `N` or `N/M` of `mul-cycles=`.
fn parse_cycles(value: &str, cycles: &str) -> Result<MultiplierCycles> {
    let number = |s: &str| s.trim().parse::<u32>().ok().filter(|&n| n >= 1);
    let parsed = match cycles.split_once('/') {
        None => number(cycles).and_then(|n| n.checked_mul(2).map(|m| MultiplierCycles { mul32: n, mul64: m })),
        Some((a, b)) => number(a).zip(number(b)).map(|(mul32, mul64)| MultiplierCycles { mul32, mul64 }),
    };
    parsed.ok_or_else(|| {
        BenchError::usage(format!(
            "--what-if {value} is not allowed: cycles must be whole numbers >= 1; choose {FORMS}"
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(values: &[&str]) -> Result<WhatIf> {
        WhatIf::parse(&values.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn values_parse_and_combine() {
        assert_eq!(parse(&[]).unwrap(), WhatIf::NONE);
        assert!(!parse(&[]).unwrap().is_active());
        let m = parse(&["mul-cycles=1"]).unwrap().multiplier.unwrap();
        assert_eq!((m.mul32, m.mul64), (1, 2));
        assert_eq!(parse(&["mul-cycles=2"]).unwrap().multiplier, Some(MultiplierCycles::DRAMATIC_DUMMY));
        assert_eq!(parse(&["mul-cycles=1/1"]).unwrap().multiplier, Some(MultiplierCycles::SINGLE_CYCLE));
        let both = parse(&["mul-cycles=2", "zero-copy"]).unwrap();
        assert_eq!(both, parse(&["zero-copy, mul-cycles=2"]).unwrap());
        assert!(both.zero_copy && both.is_active());
        assert_eq!(parse(&["mul-cycles=2", "mul-cycles=2/4"]).unwrap(), parse(&["mul-cycles=2"]).unwrap());
        let mut model = UpmemModel::v1b();
        both.apply(&mut model);
        assert_eq!(model.label(), "upmem-v1b@1+mul=2/4+zero-copy (modeled)");
        assert_eq!(WhatIf::NONE.and(both), both);
        assert_eq!(both.describe(), "mul-cycles=2/4,zero-copy");
    }

    #[test]
    fn bad_values_name_the_flag_and_the_forms() {
        for bad in ["mul-cycles=0", "mul-cycles=x", "mul-cycles=", "mul-cycles=2/0", "mul-cycles=-1", "fast", ""] {
            let e = parse(&[bad]).unwrap_err().to_string();
            assert!(e.contains("--what-if") && e.contains("mul-cycles=N") && e.contains("zero-copy"), "{bad}: {e}");
        }
        let e = parse(&["mul-cycles=1", "mul-cycles=2"]).unwrap_err().to_string();
        assert!(e.contains("conflicts"), "{e}");
    }
}
