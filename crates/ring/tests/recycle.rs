//! The buffer pool ([`pimhe_ring::recycle`]): a buffer is never handed to two holders at once,
//! a taken buffer is empty with room for the request, zeros are zeros even in reused memory,
//! and batches give their storage back when dropped.

use std::sync::Arc;

use pimhe_ring::recycle::{self, MIN_POOLED_WORDS};
use pimhe_ring::{PolyBatch, Representation, RingBasis};
use pimhe_testkit::inputs::distinct_primes;

/// Threads take, fill, hold, check and give back buffers of a few sizes many times. If the
/// pool ever handed out a buffer another thread still held, that thread's pattern would be
/// overwritten before its check.
#[test]
fn a_buffer_is_never_held_twice() {
    let sizes = [MIN_POOLED_WORDS, MIN_POOLED_WORDS + 4096, 2 * MIN_POOLED_WORDS];
    std::thread::scope(|scope| {
        for thread in 0..4u32 {
            scope.spawn(move || {
                for round in 0..40u32 {
                    let len = sizes[(thread + round) as usize % sizes.len()];
                    let mut held = recycle::take(len);
                    assert!(held.is_empty() && held.capacity() >= len);
                    let tag = thread << 16 | round;
                    held.resize(len, tag);
                    std::thread::yield_now();
                    let second = recycle::take(len);
                    assert_ne!(second.as_ptr(), held.as_ptr(), "the pool handed out a buffer in use");
                    assert!(held.iter().all(|&x| x == tag), "thread {thread} round {round}: a held buffer changed");
                    recycle::give(second);
                    recycle::give(held);
                }
            });
        }
    });
}

#[test]
fn zeros_from_reused_memory_are_zero_and_requests_get_their_room() {
    let len = MIN_POOLED_WORDS + 123;
    let mut dirty = recycle::take(len);
    dirty.resize(len, u32::MAX);
    recycle::give(dirty);
    let zeros = recycle::take_zeroed(len);
    assert_eq!(zeros.len(), len);
    assert!(zeros.iter().all(|&x| x == 0));
    recycle::give(zeros);
    // Below the pooled size and far above any pooled buffer: plain allocations of the room asked.
    assert!(recycle::take(100).capacity() >= 100);
    assert!(recycle::take(8 * MIN_POOLED_WORDS).capacity() >= 8 * MIN_POOLED_WORDS);
}

#[test]
fn batches_round_trip_through_the_pool_with_their_values() {
    let basis: Arc<RingBasis> = RingBasis::new(1 << 12, &distinct_primes(1 << 12, &[30; 8])).unwrap();
    let count = 8; // 8 primes x 8 polynomials x 4096 = 2^18 residues: pooled
    for round in 0..3u32 {
        let mut batch = PolyBatch::zeros(&basis, count, Representation::Coefficient);
        assert!(batch.data().iter().all(|&x| x == 0), "round {round}: zeros from the pool are not zero");
        for (i, x) in batch.data_mut().iter_mut().enumerate() {
            *x = (i as u32 + round) % 97;
        }
        let copy = batch.clone();
        assert_eq!(copy, batch);
        drop(batch);
        assert!(copy.data().iter().enumerate().all(|(i, &x)| x == (i as u32 + round) % 97));
    }
}
