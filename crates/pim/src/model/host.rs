//! The host CPU of a PIM system, as far as the runtime's CPU fallbacks need it: what the work
//! the DPUs leave to the host (base conversions, ModDown, the division by the last prime in
//! parallel mode) would take on the server the DPUs sit in.
//!
//! The fallbacks' measured wall time on the machine running the emulator says little about
//! that server and changes from run to run; the planner ([`crate::runtime`]'s `--mode auto`
//! in the bench crate) needs a price that is the same every time. `seal-host@1` prices host
//! work in NTT butterflies: a limb's NTT is `N/2 log2 N` of them, and a coefficient product
//! of a conversion counts as one (a butterfly is one modular product with an addition and a
//! subtraction). One butterfly costs what SEAL's NTT throughput on DRAMatic's comparison
//! machine gives: DRAMatic Table 3, SEAL 4.1.2 on a Xeon Gold 5415+ with 16 threads, the NTT
//! of 32768 ciphertexts (2 polynomials each) at N = 8192 with 174-bit coefficients (SEAL's
//! 4 primes) in 2.654 s: 2.654 s / (32768 x 2 x 4 x 4096 x 13) = 1.90e-10 s. The same table's
//! rows at N = 16384 (8 primes, 4096 ciphertexts, 1.397 s) and 32768 (15 primes, 5.488 s)
//! give 1.86e-10 and 1.82e-10 s, so the N log N rule holds within 5% over that range.
//!
//! ```
//! use pimhe_pim::model::host::{HostModel, HostWork};
//!
//! let host = HostModel::seal_host();
//! // 32768 ciphertexts x 2 polynomials x 4 limbs transformed at N = 8192: Table 3's 2.654 s.
//! let work = HostWork { transforms: 32768 * 2 * 4, products: 0 };
//! assert!((host.seconds(&work, 8192) - 2.654).abs() < 0.01);
//! assert_eq!(host.label(), "seal-host@1 (modeled)");
//! ```

use serde::Serialize;

/// Work a CPU fallback does, in limb-polynomial transforms and coefficient products.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct HostWork {
    /// Forward or inverse NTTs of one limb of one polynomial.
    pub transforms: u64,
    /// Coefficient products (one modular multiplication each, with its additions).
    pub products: u64,
}

impl HostWork {
    /// The sum of two amounts of work.
    pub fn plus(self, other: HostWork) -> HostWork {
        HostWork { transforms: self.transforms + other.transforms, products: self.products + other.products }
    }
}

/// A host CPU's price for [`HostWork`] (see the module documentation).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HostModel {
    /// Model name.
    pub name: &'static str,
    /// Version of the constants.
    pub version: &'static str,
    /// Seconds per NTT butterfly (and per coefficient product) at the machine's throughput.
    pub butterfly_s: f64,
}

impl HostModel {
    /// `seal-host@1`: SEAL on DRAMatic's 16-thread comparison machine (DRAMatic Table 3).
    pub fn seal_host() -> Self {
        // 2.654 s for 32768 x 2 x 4 NTTs of 4096 x 13 butterflies (DRAMatic Table 3, SEAL, N = 8192).
        let butterflies = 32768.0 * 2.0 * 4.0 * 4096.0 * 13.0;
        Self { name: "seal-host", version: "1", butterfly_s: 2.654 / butterflies }
    }

    /// `name@version (modeled)`.
    pub fn label(&self) -> String {
        format!("{}@{} (modeled)", self.name, self.version)
    }

    /// Modeled seconds of `work` on polynomials of degree `n`.
    pub fn seconds(&self, work: &HostWork, n: usize) -> f64 {
        let per_transform = (n / 2) as f64 * n.trailing_zeros() as f64;
        (work.transforms as f64 * per_transform + work.products as f64) * self.butterfly_s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_3s_larger_rows_are_priced_within_five_percent() {
        let host = HostModel::seal_host();
        // (N, SEAL primes, ciphertexts, published seconds): DRAMatic Table 3, SEAL NTT.
        for (n, primes, ciphertexts, published) in [(16384usize, 8u64, 4096u64, 1.397), (32768, 15, 4096, 5.488)] {
            let work = HostWork { transforms: ciphertexts * 2 * primes, products: 0 };
            let modeled = host.seconds(&work, n);
            assert!((modeled / published - 1.0).abs() < 0.05, "N = {n}: {modeled} s against {published} s");
        }
    }
}
