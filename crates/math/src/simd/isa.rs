//! Which instruction set the kernels run on: detected once, optionally capped by the
//! `PIMHE_ISA` environment variable, and pinnable at run time (benchmarks, tests, CI).

use std::fmt;
use std::str::FromStr;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::OnceLock;

/// An instruction set the kernels can run on, from least to most capable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Isa {
    /// Portable scalar code: the reference every vector kernel must match bit for bit.
    Scalar = 1,
    /// 8 residues per 256-bit register.
    Avx2 = 2,
    /// 16 residues per 512-bit register (AVX-512F; the transforms' last stages use AVX2).
    Avx512 = 3,
}

/// The instruction set in use; 0 until first asked for.
static ACTIVE: AtomicU8 = AtomicU8::new(0);

impl Isa {
    /// Every instruction set, least capable first.
    pub const ALL: [Isa; 3] = [Isa::Scalar, Isa::Avx2, Isa::Avx512];

    /// Whether this CPU can run kernels on `self`.
    pub fn available(self) -> bool {
        match self {
            Isa::Scalar => true,
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 => std::arch::is_x86_feature_detected!("avx2"),
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512 => {
                std::arch::is_x86_feature_detected!("avx512f") && std::arch::is_x86_feature_detected!("avx2")
            }
            #[cfg(not(target_arch = "x86_64"))]
            _ => false,
        }
    }

    /// The best available instruction set, at most `PIMHE_ISA` (`scalar`, `avx2`, `avx512`)
    /// when that variable is set. Computed once per process.
    pub fn detected() -> Isa {
        static DETECTED: OnceLock<Isa> = OnceLock::new();
        *DETECTED.get_or_init(|| {
            let cap = match std::env::var("PIMHE_ISA") {
                Ok(value) => value.parse().unwrap_or_else(|e| {
                    eprintln!("pimhe: ignoring PIMHE_ISA: {e}");
                    Isa::Avx512
                }),
                Err(_) => Isa::Avx512,
            };
            Isa::ALL.into_iter().rev().find(|isa| *isa <= cap && isa.available()).unwrap_or(Isa::Scalar)
        })
    }

    /// The instruction set the kernels use now: [`Isa::detected`] unless [`Isa::pin`] chose
    /// another.
    pub fn active() -> Isa {
        match ACTIVE.load(Ordering::Relaxed) {
            1 => Isa::Scalar,
            2 => Isa::Avx2,
            3 => Isa::Avx512,
            _ => {
                let isa = Isa::detected();
                ACTIVE.store(isa as u8, Ordering::Relaxed);
                isa
            }
        }
    }

    /// Makes every later kernel call in this process run on `isa` (process-wide; meant for
    /// benchmarks and tests that compare paths). Fails, changing nothing, when the CPU lacks it.
    pub fn pin(isa: Isa) -> Result<(), UnavailableIsa> {
        if !isa.available() {
            return Err(UnavailableIsa(isa));
        }
        ACTIVE.store(isa as u8, Ordering::Relaxed);
        Ok(())
    }

    /// The lower-case name used by `PIMHE_ISA` and in benchmark ids.
    pub fn name(self) -> &'static str {
        match self {
            Isa::Scalar => "scalar",
            Isa::Avx2 => "avx2",
            Isa::Avx512 => "avx512",
        }
    }
}

impl fmt::Display for Isa {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Isa {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Isa::ALL
            .into_iter()
            .find(|isa| isa.name() == s.trim().to_ascii_lowercase())
            .ok_or_else(|| format!("unknown instruction set {s:?}; expected scalar, avx2 or avx512"))
    }
}

/// [`Isa::pin`] was asked for an instruction set this CPU does not have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnavailableIsa(pub Isa);

impl fmt::Display for UnavailableIsa {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "this CPU cannot run {} kernels", self.0)
    }
}

impl std::error::Error for UnavailableIsa {}
