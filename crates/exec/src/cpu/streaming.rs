//! When an element-wise output is written with streaming stores
//! (`pimhe_math::simd::elementwise::add_streamed` and its siblings).
//!
//! An ordinary store first reads the line it writes into the caches (write-allocate), so an add
//! of two batches far larger than the caches moves four batches of bytes where three are needed,
//! and leaves the output where it evicts what the next operation reads. A streaming store
//! sends the line to memory without reading it. CKKS add at N = 2^16, batch 8 (two outputs of
//! 119 MB), per ciphertext, on the 2-core development host: 5.2 ms without streaming, 2.5 ms
//! with, 53% and 87% of the bandwidth probe's figure (`pimhe bench scheme --scheme ckks --n
//! 65536 --batch 8 --repeat 3 --threads 2`, with and without `PIMHE_STREAMING_STORES=0`).
//!
//! The cost is the next reader's: a streamed output is in memory, not in the cache, so a batch
//! that would have stayed in cache for the next operation is streamed only at a loss. The
//! threshold is glibc's for its own copies (`memcpy` uses non-temporal stores above a quarter
//! of the last-level cache since glibc 2.38, sysdeps/x86/dl-cacheinfo.h): outputs above a
//! quarter of the last-level cache are streamed. `PIMHE_STREAMING_STORES=0` in the environment
//! turns streaming off (to measure the difference).

/// Bytes above which an output is streamed: a quarter of the last-level cache, or of
/// [`ASSUMED_LAST_LEVEL_CACHE`] where the OS does not say; `usize::MAX` (never) when
/// `PIMHE_STREAMING_STORES=0`.
pub(super) fn threshold() -> usize {
    if std::env::var_os("PIMHE_STREAMING_STORES").is_some_and(|value| value == "0") {
        return usize::MAX;
    }
    last_level_cache().unwrap_or(ASSUMED_LAST_LEVEL_CACHE) / 4
}

/// The last-level cache assumed where the OS does not report one: 32 MiB, a server L3's order.
const ASSUMED_LAST_LEVEL_CACHE: usize = 32 << 20;

/// Size in bytes of the highest-level cache of CPU 0, from Linux's sysfs
/// (`/sys/devices/system/cpu/cpu0/cache/index*/{level,size}`).
fn last_level_cache() -> Option<usize> {
    let caches = std::fs::read_dir("/sys/devices/system/cpu/cpu0/cache").ok()?;
    caches
        .filter_map(|entry| {
            let path = entry.ok()?.path();
            let level: u32 = std::fs::read_to_string(path.join("level")).ok()?.trim().parse().ok()?;
            Some((level, parse_size(&std::fs::read_to_string(path.join("size")).ok()?)?))
        })
        .max()
        .map(|(_, size)| size)
}

/// A sysfs cache size ("48K", "2048K", "260M") in bytes.
fn parse_size(text: &str) -> Option<usize> {
    let text = text.trim();
    let (digits, unit) = match text.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((at, _)) => text.split_at(at),
        None => (text, ""),
    };
    let shift = match unit {
        "" => 0,
        "K" => 10,
        "M" => 20,
        "G" => 30,
        _ => return None,
    };
    digits.parse::<usize>().ok()?.checked_mul(1 << shift)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sysfs_sizes_parse_with_their_units() {
        assert_eq!(parse_size("48K\n"), Some(48 << 10));
        assert_eq!(parse_size("266240K"), Some(266240 << 10));
        assert_eq!(parse_size("2M"), Some(2 << 20));
        assert_eq!(parse_size("512"), Some(512));
        assert_eq!(parse_size("12Q"), None);
        assert_eq!(parse_size(""), None);
    }
}
