//! The memory budget: buffers sized from user input (a batch size, a number of users) are
//! checked against the machine's available memory before they are allocated.
//!
//! On Linux an allocation much larger than the machine usually does not fail: memory is
//! overcommitted, and the process dies later, when the pages are touched (an abort in the
//! allocator or the OOM killer). So every entry point that sizes buffers from its input
//! estimates what it needs first and refuses with [`OutOfMemory`], which says how much was
//! asked for and how much there is. Sizes are computed in `u128` with [`bytes`], so an absurd
//! count is refused as too large instead of overflowing.
//!
//! ```
//! use pimhe_ring::memory::{bytes, ensure_fits_in};
//! // 10^8 ciphertexts of 2 x 4 primes x N = 8192 words of 4 bytes: about 24 TiB.
//! let needed = bytes(&[100_000_000, 2, 4, 8192], 4);
//! let refused = ensure_fits_in("the input ciphertexts", needed, Some(16 << 30)).unwrap_err();
//! assert!(refused.to_string().contains("the input ciphertexts need about"));
//! assert!(ensure_fits_in("one ciphertext", bytes(&[2, 4, 8192], 4), Some(16 << 30)).is_ok());
//! ```

use std::fmt;

/// Share of the available memory one run may fill: the rest is left to the system and to the
/// temporaries that estimates leave out.
pub const MEMORY_SHARE: f64 = 0.75;

/// Below this, an allocation is not worth reading /proc/meminfo for.
const UNCHECKED_BYTES: u128 = 64 << 20;

/// A run refused because its buffers would not fit in memory.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{what} need about {}, more than {:.0}% of the {} of available memory",
    format_bytes(*needed),
    MEMORY_SHARE * 100.0,
    format_bytes(u128::from(*available))
)]
pub struct OutOfMemory {
    /// What would have been allocated (plural: "... need about").
    pub what: String,
    /// Bytes it would need.
    pub needed: u128,
    /// Bytes available when it was checked.
    pub available: u64,
}

/// `factors` multiplied together and by `element_bytes`, saturating at `u128::MAX` (an
/// estimate that large is refused by every check).
pub fn bytes(factors: &[usize], element_bytes: usize) -> u128 {
    factors.iter().fold(element_bytes as u128, |total, &f| total.saturating_mul(f as u128))
}

/// Refuses `needed` bytes for `what` when they exceed [`MEMORY_SHARE`] of the memory available
/// now ([`available_memory`]); allows them when that cannot be read.
pub fn ensure_fits(what: &str, needed: u128) -> Result<(), OutOfMemory> {
    if needed < UNCHECKED_BYTES {
        return Ok(());
    }
    ensure_fits_in(what, needed, available_memory())
}

/// [`ensure_fits`] against a given amount of available memory (`None`: unknown, allowed).
pub fn ensure_fits_in(what: &str, needed: u128, available: Option<u64>) -> Result<(), OutOfMemory> {
    match available {
        Some(available) if needed as f64 > MEMORY_SHARE * available as f64 => {
            Err(OutOfMemory { what: what.to_string(), needed, available })
        }
        _ => Ok(()),
    }
}

/// The memory this process can still take, in bytes: the machine's `MemAvailable`
/// (/proc/meminfo), or less where the process runs under an address-space limit (`ulimit -v`,
/// `RLIMIT_AS`: allocations past it fail however much memory the machine has); `None` where
/// neither can be read (not Linux).
pub fn available_memory() -> Option<u64> {
    let machine = std::fs::read_to_string("/proc/meminfo").ok().and_then(|m| kilobytes_field(&m, "MemAvailable:"));
    let process = match (std::fs::read_to_string("/proc/self/limits"), std::fs::read_to_string("/proc/self/status")) {
        (Ok(limits), Ok(status)) => address_space_left(&limits, &status),
        _ => None,
    };
    match (machine, process) {
        (Some(machine), Some(process)) => Some(machine.min(process)),
        (machine, process) => machine.or(process),
    }
}

/// A `Name:   123 kB` line of a /proc file, in bytes.
fn kilobytes_field(text: &str, name: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with(name))?;
    let mut fields = line[name.len()..].split_whitespace();
    let value: u64 = fields.next()?.parse().ok()?;
    let scale = match fields.next() {
        Some("kB") => 1024,
        None => 1,
        Some(_) => return None,
    };
    value.checked_mul(scale)
}

/// The soft address-space limit of /proc/self/limits less the address space the process
/// already has (`VmSize` of /proc/self/status); `None` when unlimited.
fn address_space_left(limits: &str, status: &str) -> Option<u64> {
    let line = limits.lines().find(|l| l.starts_with("Max address space"))?;
    let soft: u64 = line["Max address space".len()..].split_whitespace().next()?.parse().ok()?;
    Some(soft.saturating_sub(kilobytes_field(status, "VmSize:").unwrap_or(0)))
}

/// Bytes for people: MiB below a GiB, GiB below a TiB, then TiB.
pub fn format_bytes(bytes: u128) -> String {
    struct Human(u128);
    impl fmt::Display for Human {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            let value = self.0 as f64;
            match self.0 {
                b if b >= 1 << 40 => write!(f, "{:.1} TiB", value / (1u64 << 40) as f64),
                b if b >= 1 << 30 => write!(f, "{:.1} GiB", value / (1u64 << 30) as f64),
                _ => write!(f, "{:.1} MiB", value / (1u64 << 20) as f64),
            }
        }
    }
    Human(bytes).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_saturate_instead_of_overflowing() {
        assert_eq!(bytes(&[3, 5], 4), 60);
        assert_eq!(bytes(&[usize::MAX, usize::MAX, usize::MAX], 8), u128::MAX);
        assert!(ensure_fits_in("x", u128::MAX, Some(u64::MAX)).is_err());
    }

    #[test]
    fn the_budget_is_a_share_of_what_is_available() {
        let available = 1u64 << 30;
        let limit = (MEMORY_SHARE * available as f64) as u128;
        assert!(ensure_fits_in("x", limit, Some(available)).is_ok());
        let refused = ensure_fits_in("the buffers", limit + 1, Some(available)).unwrap_err();
        assert_eq!(refused.needed, limit + 1);
        assert_eq!(
            refused.to_string(),
            "the buffers need about 768.0 MiB, more than 75% of the 1.0 GiB of available memory"
        );
        assert!(ensure_fits_in("x", u128::MAX, None).is_ok());
        assert_eq!(format_bytes(3 << 40), "3.0 TiB");
    }

    #[test]
    fn an_address_space_limit_bounds_what_is_available() {
        let limits = "Limit                     Soft Limit           Hard Limit           Units\n\
                      Max processes             95000                95000                processes\n\
                      Max address space         8589934592           unlimited            bytes\n";
        let status = "Name:\tpimhe\nVmPeak:\t  300000 kB\nVmSize:\t  200000 kB\n";
        assert_eq!(address_space_left(limits, status), Some(8589934592 - 200000 * 1024));
        let unlimited = limits.replace("8589934592", "unlimited");
        assert_eq!(address_space_left(&unlimited, status), None);
        assert_eq!(kilobytes_field("MemAvailable:   2048 kB\n", "MemAvailable:"), Some(2 << 20));
    }

    #[test]
    fn this_machine_reports_its_memory() {
        if cfg!(target_os = "linux") {
            assert!(available_memory().is_some_and(|b| b > 0));
        }
    }
}
