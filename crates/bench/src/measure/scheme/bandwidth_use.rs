//! How close the memory-bound rows of `bench scheme` (CKKS add and rescale, BGV's modulus
//! switch) come to this machine's measured memory bandwidth ([`crate::measure::bandwidth`]):
//! bytes that must move / time / measured bandwidth.
//!
//! The bytes that must move are counted by one rule: 4 bytes (one 32-bit residue) for every
//! residue of every operand read and of every result written, each once. So an addition of two
//! ciphertexts of `c` residues moves 3 x 4c bytes (two read, one written), and a rescaling or
//! modulus switch of a ciphertext of `c` residues at L primes to L - 1 primes moves
//! 4c + 4c (L - 1) / L bytes. Intermediates that stay in the caches (the dropped prime's limb
//! through its inverse NTT), precomputed tables and constants are not counted: the figure is
//! the least traffic any implementation has, which is what a fraction of the bandwidth is
//! judged against. A fraction above 1 means the operands did not all come from memory (a
//! batch that fits in the last-level cache).

use pimhe_exec::Backend;
use pimhe_schemes::rlwe::{CiphertextBatch, RlweScheme};
use serde::Serialize;

use crate::error::Result;
use crate::measure::bandwidth::{self, BandwidthConfig};

/// A memory-bound row's traffic and the share of the measured bandwidth it reached.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BandwidthUse {
    /// Bytes the operation must move for the whole batch (see the module documentation).
    pub bytes_moved: u64,
    /// The bandwidth it was compared with, 10^9 bytes per second (the probe's best kernel).
    pub measured_gb_per_s: f64,
    /// `bytes_moved / best_s / measured bandwidth`.
    pub best_fraction: f64,
    /// `bytes_moved / median_s / measured bandwidth`.
    pub median_fraction: f64,
}

/// Residue bytes of a ciphertext batch: 4 per residue of every component.
pub(crate) fn ciphertext_bytes<B: Backend, S: RlweScheme>(backend: &B, batch: &CiphertextBatch<B, S>) -> u64 {
    batch
        .parts()
        .iter()
        .map(|part| {
            let shape = backend.shape(part);
            4 * (shape.basis.len() * shape.basis.degree() * shape.count) as u64
        })
        .sum()
}

/// The probe the rows are compared with: three arrays of 256 MiB (above this machine's caches;
/// the figure is printed beside the rows), the best of three passes, `threads` threads (the
/// run's own).
pub(crate) fn measure_bandwidth(threads: usize) -> Result<f64> {
    Ok(bandwidth::run(&BandwidthConfig { mib: 256, repeat: 3, threads: Some(threads) })?.best_gb_per_s)
}

#[cfg(test)]
mod tests {
    use crate::measure::scheme::rounds::{attach, OpTiming};

    #[test]
    fn the_fraction_is_bytes_over_time_over_bandwidth() {
        let mut ops = vec![OpTiming::new("add", vec![0.5, 0.25, 1.0], 2), OpTiming::new("multiply", vec![1.0], 2)];
        ops[0].bytes_moved = Some(3_000_000_000);
        attach(&mut ops, 12.0);
        // 3 GB in 0.25 s is 12 GB/s: all of it; in the median 0.5 s, half.
        let used = ops[0].bandwidth.as_ref().unwrap();
        assert_eq!((used.best_fraction, used.median_fraction, used.bytes_moved), (1.0, 0.5, 3_000_000_000));
        assert!(ops[1].bandwidth.is_none(), "a row without a byte count has no fraction");
    }
}
