//! The CPU backend's request to the C allocator: keep freed batches in the process.
//!
//! A batch is count x primes x N words, 0.1 to 30 MB, above glibc's default mmap threshold. So
//! by default each new batch is mapped fresh and unmapped when dropped, and every operation's
//! output is faulted in, and zeroed by the kernel, one 4 KiB page at a time. Measured with
//! `pimhe bench scheme --n 16384 --batch 8 --threads 2`, with and without
//! `PIMHE_KEEP_FREED_MEMORY=0` (best per ciphertext, three runs each), that was 10-35% of
//! multiply, relinearize, encryption and decryption. Like SEAL's memory pool, the backend keeps
//! the memory instead: blocks up to 32 MiB (glibc's largest mmap threshold) come from the heap,
//! and the heap is trimmed only above 1 GiB of free space at its top. This is process-wide and done once, by the first
//! [`super::CpuBackend::new`]; the cost is that the process keeps its peak memory until it exits.
//! `PIMHE_KEEP_FREED_MEMORY=0` in the environment leaves glibc's defaults (for a process that
//! must give memory back, or to measure the difference). Other C libraries and platforms are
//! left as they are.

use std::sync::Once;

/// Asks glibc to serve batches from the heap and keep freed ones; see the module documentation.
pub(super) fn retain_freed_memory() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        if std::env::var_os("PIMHE_KEEP_FREED_MEMORY").is_some_and(|value| value == "0") {
            return;
        }
        #[cfg(all(target_os = "linux", target_env = "gnu"))]
        // SAFETY: mallopt only changes allocator parameters; glibc takes its own lock and
        // allocations made under the old parameters are freed correctly under the new ones.
        unsafe {
            libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
            libc::mallopt(libc::M_TRIM_THRESHOLD, 1 << 30);
        }
    });
}
