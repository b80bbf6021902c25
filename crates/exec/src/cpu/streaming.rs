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
//! that would have stayed in cache for the next operation is streamed only at a loss. Where
//! that happens was measured on the development host (L2 2 MiB per core, an L3 that sysfs gives
//! as 260 MiB but that the host's other tenants share) by `cargo bench -p pimhe-exec --bench
//! cpu_backend -- add_chain`: three adds, each reading the output of the one before, every
//! output streamed or none, 2 threads, median per chain:
//!
//! | output | streamed | ordinary stores |
//! |---|---|---|
//! | 1 MiB | 219 us | 185 us |
//! | 2 MiB | 387 us | 418 us |
//! | 4 MiB | 815 us | 808 us |
//! | 8 MiB | 1.57 ms | 1.56 ms |
//! | 16 MiB | 2.82 ms | 2.93 ms |
//! | 32 MiB | 5.66 ms | 7.12 ms |
//!
//! So the reader gains from ordinary stores only while the output fits the private caches of
//! the threads that write it: beyond them it goes to a shared cache, or to memory, before the
//! reader comes, and the writer's gain from streaming grows with the size. The threshold is
//! therefore the L2 of each worker thread summed (4 MiB here; it was a quarter of the L3, 65 MB,
//! until `pimhe bench scheme --scheme ckks --n 65536 --batch 1` showed adds of 15 MB outputs at
//! 34-59% of the bandwidth probe's figure), and never above glibc's threshold for its own
//! copies (`memcpy` uses non-temporal stores above a quarter of the last-level cache since
//! glibc 2.38, sysdeps/x86/dl-cacheinfo.h), which also serves where the OS reports no L2.
//! `PIMHE_STREAMING_STORES=0` in the environment turns streaming off (to measure the
//! difference).

/// Bytes above which an output of a backend with `threads` worker threads is streamed: the
/// smaller of `threads` L2 caches and a quarter of the last-level cache (or of
/// [`ASSUMED_LAST_LEVEL_CACHE`] where the OS does not say); `usize::MAX` (never) when
/// `PIMHE_STREAMING_STORES=0`.
pub(super) fn threshold(threads: usize) -> usize {
    if std::env::var_os("PIMHE_STREAMING_STORES").is_some_and(|value| value == "0") {
        return usize::MAX;
    }
    let caches = caches();
    // The highest level, and the largest cache there should sysfs list several.
    let last_level = caches.iter().max().map(|&(_, size)| size);
    let l2 = caches.iter().filter(|&&(level, _)| level == 2).map(|&(_, size)| size).max();
    let quarter_of_last_level = last_level.unwrap_or(ASSUMED_LAST_LEVEL_CACHE) / 4;
    quarter_of_last_level.min(l2.map_or(usize::MAX, |l2| l2.saturating_mul(threads)))
}

/// The last-level cache assumed where the OS does not report one: 32 MiB, a server L3's order.
const ASSUMED_LAST_LEVEL_CACHE: usize = 32 << 20;

/// The caches of CPU 0 as (level, size in bytes), from Linux's sysfs
/// (`/sys/devices/system/cpu/cpu0/cache/index*/{level,size}`).
fn caches() -> Vec<(u32, usize)> {
    let Ok(entries) = std::fs::read_dir("/sys/devices/system/cpu/cpu0/cache") else {
        return Vec::new();
    };
    entries
        .filter_map(|entry| {
            let path = entry.ok()?.path();
            let level: u32 = std::fs::read_to_string(path.join("level")).ok()?.trim().parse().ok()?;
            Some((level, parse_size(&std::fs::read_to_string(path.join("size")).ok()?)?))
        })
        .collect()
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
