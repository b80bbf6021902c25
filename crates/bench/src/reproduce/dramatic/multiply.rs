//! DRAMatic's Fig. 3 (section 3.1.1): the cycles of its custom 32x32 multiplies beside the
//! DPU's native ones, by the bits of the factors, and what the section states of them.
//!
//! The DPU's multiplier is 8x8 -> 16 bits (DRAMatic 2.1); the UPMEM compiler calls a runtime
//! routine for anything wider (UPMEM SDK `syslib`, Copyright 2020 UPMEM, as vendored in
//! github.com/VIA-Research/uPIMulator, `golang/uPIMulator/sdk/syslib/`):
//!
//! - **32x32 -> 32, `__mulsi3`** (`mul32.c`): `jgtu` orders the factors so that the smaller one
//!   is the multiplier, two `move`s on either path, `move r1, zero`, then an unrolled run of
//!   `mul_step` instructions, each adding the multiplicand shifted by its step if the
//!   multiplier's low bit is set, shifting the multiplier right, and leaving for
//!   `__mulsi3_exit` once it is zero (the `z` condition on the shifted multiplier: uPIMulator's
//!   `ExecuteMulStepDrdici`, `golang/uPIMulator/src/simulator/dpu/logic/logic.go`); the exit
//!   moves the result. So the body takes `5 + max(1, bits(min(a, b)))` instructions
//!   ([`native_mul32_cycles`]): the "depends on the highest set bit in its inputs" of the text.
//! - **64-bit products, `__muldi3`** (`mul64.c`): 36 byte products of the 8x8 multiplier
//!   summed into eight partial words, whatever the inputs; its own comment puts it "in the
//!   magnitude of 150 instructions" ([`NATIVE_MUL64_CYCLES`]). At least its 36 products and the
//!   28 additions that sum them: 64.
//!
//! The custom routines are DRAMatic's measured 21 and 35 cycles, which `dpu/kernels/cost.h`
//! charges as they are (`COST_MUL32_32`, `COST_MUL32_64`): printed beside the native ones, not
//! an independent check of them. Both sides are routine bodies: a call and a return
//! ([`super::CALL_CYCLES`]) add the same 2 cycles to either.

use serde::Serialize;

use super::statements::SINGLE_FIGURE_TOLERANCE;
use crate::format::Render;
use crate::reproduce::{Basis, Comparison};

/// DRAMatic's custom 32x32 -> 32 multiply, cycles (3.1.1; `COST_MUL32_32` of cost.h).
pub const CUSTOM_MUL32_CYCLES: u32 = 21;

/// DRAMatic's custom 32x32 -> 64 multiply, cycles (3.1.1, Listing 1; `COST_MUL32_64` of cost.h).
pub const CUSTOM_MUL64_CYCLES: u32 = 35;

/// `__mulsi3`'s instructions besides its `mul_step`s: `jgtu`, two `move`s, clearing the
/// product, moving it out (UPMEM SDK `mul32.c`).
pub const NATIVE_MUL32_FIXED: u32 = 5;

/// `__muldi3`'s instructions: "in the magnitude of 150" (UPMEM SDK `mul64.c`).
pub const NATIVE_MUL64_CYCLES: u32 = 150;

/// Instructions of the body of UPMEM's `__mulsi3` for factors `a` and `b`: one `mul_step` per
/// bit of the smaller factor (at least one), plus [`NATIVE_MUL32_FIXED`].
///
/// ```
/// use pimhe_bench::reproduce::dramatic::native_mul32_cycles;
/// assert_eq!(native_mul32_cycles(0xffff, 0xffff_ffff), 5 + 16);
/// assert_eq!(native_mul32_cycles(1, 0), 5 + 1);
/// ```
pub fn native_mul32_cycles(a: u32, b: u32) -> u32 {
    let smaller = a.min(b);
    NATIVE_MUL32_FIXED + (u32::BITS - smaller.leading_zeros()).max(1)
}

/// The body cycles of a 32x32 -> 32 multiply whose factors both have `bits` bits (the highest
/// set), native and custom.
#[derive(Debug, Clone, Serialize)]
pub struct WidthRow {
    /// Bits of each factor.
    pub bits: u32,
    /// UPMEM's `__mulsi3`.
    pub native: u32,
    /// DRAMatic's custom routine.
    pub custom: u32,
}

/// Fig. 3 and section 3.1.1's figures.
#[derive(Debug, Clone, Serialize)]
pub struct MultiplyReport {
    /// 32x32 -> 32 by the factors' width, 1 ..= 32 bits.
    pub widths: Vec<WidthRow>,
    /// The widest factors for which the native routine is not slower than the custom one.
    pub crossover_bits: u32,
    /// Native 64-bit product (`__muldi3`), cycles.
    pub native_mul64: u32,
    /// Custom 32x32 -> 64, cycles.
    pub custom_mul64: u32,
    /// Share of the native 64-bit product's time the custom 32x32 -> 64 saves.
    pub mul64_time_saved: f64,
    /// Where the native costs come from.
    pub model: &'static str,
}

/// The label of [`MultiplyReport`]'s figures.
const MODEL: &str = "UPMEM SDK __mulsi3/__muldi3 instruction counts (modeled)";

impl MultiplyReport {
    /// The report: every width from 1 to 32 bits.
    ///
    /// ```
    /// use pimhe_bench::reproduce::dramatic::MultiplyReport;
    /// let fig3 = MultiplyReport::new();
    /// assert_eq!(fig3.crossover_bits, 16);
    /// let stated = fig3.comparison();
    /// assert_eq!((stated[0].id.as_str(), stated[0].within()), ("fig3/crossover", Some(true)));
    /// ```
    pub fn new() -> Self {
        let widths: Vec<WidthRow> = (1..=u32::BITS)
            .map(|bits| {
                let factor = u32::MAX >> (u32::BITS - bits);
                WidthRow { bits, native: native_mul32_cycles(factor, factor), custom: CUSTOM_MUL32_CYCLES }
            })
            .collect();
        let crossover_bits = widths.iter().filter(|w| w.native <= w.custom).map(|w| w.bits).max().unwrap_or(0);
        Self {
            widths,
            crossover_bits,
            native_mul64: NATIVE_MUL64_CYCLES,
            custom_mul64: CUSTOM_MUL64_CYCLES,
            mul64_time_saved: 1.0 - CUSTOM_MUL64_CYCLES as f64 / NATIVE_MUL64_CYCLES as f64,
            model: MODEL,
        }
    }

    /// What section 3.1.1 states beside ours.
    pub fn comparison(&self) -> Vec<Comparison> {
        let basis = Basis::Modeled { model: MODEL.to_string() };
        let row = |key: &str, quantity: &str, unit: &str, quote: &str, published: f64, ours: Option<f64>| {
            let source = format!("DRAMatic 3.1.1: \"{quote}\"");
            Comparison::new(format!("fig3/{key}"), quantity, unit, source, Some(published), ours, basis.clone())
        };
        let copied = "pimhe's cost.h charges DRAMatic's measured figure as it is: not an independent check";
        vec![
            row(
                "crossover",
                "widest factors (bits) at which the native 32x32->32 multiply is not slower",
                "bits",
                "our implementation is faster when both factors are longer than 16 bits, but is otherwise slower than \
                 the native implementation",
                16.0,
                Some(self.crossover_bits as f64),
            )
            .judged(SINGLE_FIGURE_TOLERANCE, None),
            row(
                "mul64-time-saved",
                "share of the native 64-bit product's time (__muldi3, ~150 instructions) the custom 32x32->64 saves",
                "x",
                "This straightforward routine takes 35 cycles and is about 70% faster than the native full 64-bit \
                 multiplication",
                0.70,
                Some(self.mul64_time_saved),
            )
            .judged(
                SINGLE_FIGURE_TOLERANCE,
                Some("UPMEM states __muldi3's cost only as a magnitude (about 150 instructions)".to_string()),
            ),
            row(
                "custom-mul64",
                "custom 32x32->64 multiply",
                "cycles",
                "This straightforward routine takes 35 cycles",
                35.0,
                Some(self.custom_mul64 as f64),
            )
            .unjudged(copied),
            row(
                "custom-mul32",
                "custom 32x32->32 multiply",
                "cycles",
                "which reduces the runtime to 21 cycles",
                21.0,
                Some(CUSTOM_MUL32_CYCLES as f64),
            )
            .unjudged(copied),
            row(
                "karatsuba-mul64",
                "Karatsuba 32x32->64 multiply (35 + 4)",
                "cycles",
                "We also tested a Karatsuba implementation [...] but this is actually 4 cycles slower",
                39.0,
                None,
            )
            .unjudged("pimhe has no Karatsuba 32x32->64 routine"),
        ]
    }
}

impl Default for MultiplyReport {
    fn default() -> Self {
        Self::new()
    }
}

impl Render for MultiplyReport {
    /// Fig. 3 as a table every 2 bits, the crossover and the 64-bit product.
    fn render(&self) -> String {
        let mut lines = vec![
            "Fig. 3 (DRAMatic 3.1.1): cycles of one 32x32->32 multiply by the bits of both factors, routine bodies \
             (a call and return add 2 to each)"
                .to_string(),
            format!("  native: UPMEM's __mulsi3, 5 + one mul_step per bit of the smaller factor; custom: DRAMatic's ({MODEL})"),
            format!("  {:>4} | {:>6} | {:>6} | faster", "bits", "native", "custom"),
        ];
        for w in self.widths.iter().filter(|w| w.bits % 2 == 0 || w.bits == self.crossover_bits + 1) {
            let faster = match w.native.cmp(&w.custom) {
                std::cmp::Ordering::Less => "native",
                std::cmp::Ordering::Equal => "equal",
                std::cmp::Ordering::Greater => "custom",
            };
            lines.push(format!("  {:>4} | {:>6} | {:>6} | {faster}", w.bits, w.native, w.custom));
        }
        lines.push(format!(
            "  crossover: native not slower up to {} bits, custom faster from {} (stated: custom faster when both \
             factors are longer than 16 bits)",
            self.crossover_bits,
            self.crossover_bits + 1
        ));
        lines.push(format!(
            "  32x32->64: custom {} cycles vs native __muldi3 ~{} (UPMEM's magnitude): {:.0}% less time (stated: \
             \"about 70% faster\")",
            self.custom_mul64,
            self.native_mul64,
            100.0 * self.mul64_time_saved
        ));
        lines.join("\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The constant of cost.h named `name`, as the kernel's header defines it.
    fn cost_h(name: &str) -> u32 {
        let header = include_str!("../../../../../dpu/kernels/cost.h");
        let line = header.lines().find(|l| l.starts_with(&format!("#define {name} "))).unwrap();
        line.split_whitespace().nth(2).unwrap().parse().unwrap()
    }

    #[test]
    fn the_custom_costs_are_the_kernels() {
        assert_eq!(cost_h("COST_MUL32_32"), CUSTOM_MUL32_CYCLES);
        assert_eq!(cost_h("COST_MUL32_64"), CUSTOM_MUL64_CYCLES);
    }

    #[test]
    fn native_mulsi3_is_counted_instruction_by_instruction() {
        // Hand count of mul32.c's path: jgtu, move, move (or the swapped pair), move r1 zero,
        // one mul_step per step until the shifted multiplier is 0, the exit's move.
        let steps = |mut m: u32| {
            let mut n = 0;
            loop {
                n += 1;
                m >>= 1;
                if m == 0 {
                    return n;
                }
            }
        };
        for (a, b) in [(0, 0), (1, 7), (0xff, 0x1234_5678), (0x8000_0000, 0xffff_ffff), (12345, 678)] {
            assert_eq!(native_mul32_cycles(a, b), 1 + 2 + 1 + steps(a.min(b)) + 1, "{a} x {b}");
        }
        assert_eq!(native_mul32_cycles(0xffff, 0xffff), 21);
        assert_eq!(native_mul32_cycles(0x1_ffff, 0x1_ffff), 22);
        let report = MultiplyReport::new();
        assert_eq!(report.crossover_bits, 16);
        assert_eq!((report.widths.len(), report.widths[31].native), (32, 37));
    }
}
