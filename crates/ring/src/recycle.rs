//! A process-wide pool of large residue buffers: a dropped [`PolyBatch`](crate::PolyBatch)
//! gives its storage back here, and the next batch of about its size takes it, already mapped.
//!
//! Why: a batch at N = 2^16 is 0.2 to 300 MB. glibc maps every allocation above 32 MiB anew
//! and unmaps it on free, and serves smaller ones from per-thread arenas whose 64 MiB heaps are
//! unmapped as soon as they empty, so without the pool each fresh output was faulted in and
//! zeroed by the kernel one 4 KiB page at a time. Measured with `pimhe bench keygen --n 65536
//! --threads 2`, the kernel's page clearing was half of Galois key generation's time. SEAL
//! keeps a memory pool for the same reason.
//!
//! What it keeps: buffers of at least [`MIN_POOLED_WORDS`] residues, up to a budget of a
//! quarter of the memory available when the pool is first used (at most
//! [`MAX_POOL_BYTES`]); a buffer that would exceed it is freed. `PIMHE_BUFFER_POOL=0` in the
//! environment turns the pool off (every buffer freed), to measure the difference or for a
//! process that must give memory back.
//!
//! Secrets: the pool holds what its buffers held when they were dropped, as the allocator's
//! free lists would. Owners of secret material wipe it before dropping it (`SecretKey`'s drop,
//! the schemes' `WipeOnDrop`, [`PolyBatch::zeroize`](crate::PolyBatch::zeroize)); the
//! schemes' tests check with [`any_pooled`] that no secret key's residues reach the pool.
//! A buffer taken from the pool is handed out empty (its old contents only in the spare
//! capacity, unreadable from safe code); its taker writes every residue it keeps.
//!
//! ```
//! use pimhe_ring::recycle;
//! let words = recycle::MIN_POOLED_WORDS;
//! let mut buffer = recycle::take(words);
//! assert!(buffer.is_empty() && buffer.capacity() >= words);
//! buffer.resize(words, 7);
//! recycle::give(buffer);
//! let again = recycle::take(words); // most likely the same memory, handed out empty
//! assert!(again.is_empty() && again.capacity() >= words);
//! ```

use std::collections::BTreeMap;
use std::sync::{Mutex, OnceLock};

use crate::memory::available_memory;

/// Smallest buffer pooled, in residues (1 MiB): smaller ones are cheap for the allocator (its
/// heap keeps them mapped), and a batch of one polynomial at N = 4096 with 16 primes is 256 KiB.
pub const MIN_POOLED_WORDS: usize = 1 << 18;

/// The pool's budget never exceeds this, whatever the machine has.
pub const MAX_POOL_BYTES: u64 = 8 << 30;

/// A buffer larger than this many times the request is not handed out for it (it would hold
/// memory the request does not need while a better fit may come back).
const LARGEST_FIT: usize = 2;

struct Pool {
    /// Buffers waiting, by capacity in residues (a budget of gigabytes holds thousands of
    /// 1 MiB buffers, so the best fit is a range lookup, not a scan).
    buffers: BTreeMap<usize, Vec<Vec<u32>>>,
    /// Bytes of capacity held in `buffers`.
    held_bytes: u64,
    /// Bytes the pool may hold; 0 turns it off.
    budget_bytes: u64,
}

fn pool() -> &'static Mutex<Pool> {
    static POOL: OnceLock<Mutex<Pool>> = OnceLock::new();
    POOL.get_or_init(|| {
        let disabled = std::env::var_os("PIMHE_BUFFER_POOL").is_some_and(|value| value == "0");
        let budget_bytes = if disabled { 0 } else { available_memory().map_or(1 << 30, |a| a / 4).min(MAX_POOL_BYTES) };
        Mutex::new(Pool { buffers: BTreeMap::new(), held_bytes: 0, budget_bytes })
    })
}

/// An empty vector with room for at least `len` residues: a pooled buffer where one fits (the
/// smallest whose capacity is `len` to twice `len`), else a new allocation.
pub fn take(len: usize) -> Vec<u32> {
    take_pooled(len).unwrap_or_else(|| Vec::with_capacity(len))
}

/// `len` zeros, in a pooled buffer where one fits ([`take`]).
pub fn take_zeroed(len: usize) -> Vec<u32> {
    match take_pooled(len) {
        Some(mut buffer) => {
            buffer.resize(len, 0);
            buffer
        }
        // calloc: fresh pages from the kernel are zero already.
        None => vec![0; len],
    }
}

/// The pooled buffer [`take`] hands out, emptied, if one fits.
fn take_pooled(len: usize) -> Option<Vec<u32>> {
    if len < MIN_POOLED_WORDS {
        return None;
    }
    // A poisoned lock only means another thread panicked while holding it; the map of
    // buffers is still consistent (each insertion and removal is one step).
    let mut pool = pool().lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let (&capacity, _) = pool.buffers.range(len..=len.saturating_mul(LARGEST_FIT)).next()?;
    let same_capacity = pool.buffers.get_mut(&capacity).expect("the key was just found");
    let mut buffer = same_capacity.pop().expect("no empty list is kept");
    if same_capacity.is_empty() {
        pool.buffers.remove(&capacity);
    }
    pool.held_bytes -= capacity_bytes(&buffer);
    drop(pool);
    buffer.clear();
    Some(buffer)
}

/// Gives `buffer` to the pool (or frees it: too small, or the pool is full or off).
pub fn give(buffer: Vec<u32>) {
    if buffer.capacity() < MIN_POOLED_WORDS {
        return;
    }
    let mut pool = pool().lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let bytes = capacity_bytes(&buffer);
    if pool.held_bytes + bytes <= pool.budget_bytes {
        pool.held_bytes += bytes;
        pool.buffers.entry(buffer.capacity()).or_default().push(buffer);
    }
    // Else `buffer` is freed here, after the lock: a large free is an munmap.
}

/// Whether any pooled buffer's residues (those it held when given back) satisfy `predicate`:
/// for tests that secret material is wiped before it reaches the pool.
pub fn any_pooled(predicate: impl Fn(&[u32]) -> bool) -> bool {
    let pool = pool().lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    pool.buffers.values().flatten().any(|buffer| predicate(buffer))
}

/// Bytes held by the pool now.
pub fn held_bytes() -> u64 {
    pool().lock().unwrap_or_else(|poisoned| poisoned.into_inner()).held_bytes
}

fn capacity_bytes(buffer: &Vec<u32>) -> u64 {
    (buffer.capacity() * std::mem::size_of::<u32>()) as u64
}
