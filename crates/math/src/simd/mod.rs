//! SIMD kernels for 32-bit residues, chosen at run time.
//!
//! Residues are `u32` below 2^30, so one AVX2 register holds 8 of them and one AVX-512 register
//! 16 — SEAL and OpenFHE compute on 64-bit words and get 4 (or 8) per register at best. Every
//! kernel here is written once, generically over `Lanes` (a vector width and its
//! instructions), next to its scalar formula; `dispatch` runs it on the best instruction set
//! the CPU has ([`Isa::active`]). The scalar path stays the reference: every vector kernel
//! returns bit-identical results (values fully reduced to [0, q)), which the tests check.
//!
//! Soundness: a vector can only be made through a token (`Avx2`, `Avx512`) whose
//! constructor checked the CPU, so the safe methods of `Lanes` never run an instruction the
//! CPU lacks. The kernels are inlined into one `#[target_feature]` function per instruction set
//! (`dispatch`), so the compiler emits those instructions throughout the loop.

mod isa;
pub(crate) mod lanes;

pub mod elementwise;
pub mod gather;

pub use isa::Isa;
pub(crate) use lanes::Lanes;
#[cfg(target_arch = "x86_64")]
pub(crate) use lanes::{Avx2, Avx512};

/// A computation with a scalar path and a vector path that give the same result.
pub(crate) trait Kernel {
    /// The reference path, used where no vector instruction set is available.
    fn scalar(self);
    /// The vector path on lanes of type `L`; it runs inside a function compiled for `L`'s
    /// instruction set, so everything it calls must be `#[inline(always)]`.
    fn lanes<L: Lanes>(self, lanes: L);
}

/// Runs `kernel` on `isa` (or the best available instruction set below it).
#[inline]
pub(crate) fn dispatch<K: Kernel>(isa: Isa, kernel: K) {
    #[cfg(target_arch = "x86_64")]
    {
        if isa >= Isa::Avx512 {
            if let Some(token) = Avx512::new() {
                // SAFETY: the token exists, so the CPU has AVX-512F and AVX2.
                return unsafe { run_avx512(kernel, token) };
            }
        }
        if isa >= Isa::Avx2 {
            if let Some(token) = Avx2::new() {
                // SAFETY: the token exists, so the CPU has AVX2.
                return unsafe { run_avx2(kernel, token) };
            }
        }
    }
    let _ = isa;
    kernel.scalar()
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn run_avx2<K: Kernel>(kernel: K, token: Avx2) {
    kernel.lanes(token)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx2")]
fn run_avx512<K: Kernel>(kernel: K, token: Avx512) {
    kernel.lanes(token)
}
