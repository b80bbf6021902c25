//! Where buffers live in each DPU's MRAM: a first-fit allocator per DPU.

use std::collections::BTreeMap;

/// Free-list allocator over one DPU's MRAM data area, in bytes, 8-byte aligned (the DMA
/// alignment), so every operand region can be streamed with legal DMA transfers.
#[derive(Debug, Clone)]
pub struct MramAllocator {
    start: usize,
    end: usize,
    /// Free ranges: offset -> length, coalesced on free.
    free: BTreeMap<usize, usize>,
}

/// DMA alignment of UPMEM MRAM transfers.
pub const MRAM_ALIGNMENT: usize = 8;

impl MramAllocator {
    /// Manages `[start, end)`.
    pub fn new(start: usize, end: usize) -> Self {
        let start = start.next_multiple_of(MRAM_ALIGNMENT);
        let end = end / MRAM_ALIGNMENT * MRAM_ALIGNMENT;
        let mut free = BTreeMap::new();
        if end > start {
            free.insert(start, end - start);
        }
        Self { start, end, free }
    }

    /// An aligned region of `bytes`, or `None` when no free range is large enough.
    pub fn allocate(&mut self, bytes: usize) -> Option<usize> {
        let bytes = bytes.max(MRAM_ALIGNMENT).next_multiple_of(MRAM_ALIGNMENT);
        let (&offset, &len) = self.free.iter().find(|(_, &len)| len >= bytes)?;
        self.free.remove(&offset);
        if len > bytes {
            self.free.insert(offset + bytes, len - bytes);
        }
        Some(offset)
    }

    /// Returns a region obtained from [`MramAllocator::allocate`] with the same size.
    pub fn release(&mut self, offset: usize, bytes: usize) {
        let bytes = bytes.max(MRAM_ALIGNMENT).next_multiple_of(MRAM_ALIGNMENT);
        debug_assert!(offset >= self.start && offset + bytes <= self.end);
        let mut offset = offset;
        let mut len = bytes;
        if let Some((&next, &next_len)) = self.free.range(offset + len..).next() {
            if next == offset + len {
                self.free.remove(&next);
                len += next_len;
            }
        }
        if let Some((&previous, &previous_len)) = self.free.range(..offset).next_back() {
            if previous + previous_len == offset {
                self.free.remove(&previous);
                offset = previous;
                len += previous_len;
            }
        }
        self.free.insert(offset, len);
    }

    /// Bytes still free.
    pub fn available(&self) -> usize {
        self.free.values().sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allocations_are_aligned_disjoint_and_coalesce_on_release() {
        let mut mram = MramAllocator::new(100, 1100);
        let a = mram.allocate(10).unwrap();
        let b = mram.allocate(300).unwrap();
        let c = mram.allocate(200).unwrap();
        assert_eq!(a % 8, 0);
        assert!(a + 16 <= b && b + 304 <= c, "{a} {b} {c}");
        assert!(mram.allocate(1000).is_none());
        mram.release(b, 300);
        mram.release(a, 10);
        mram.release(c, 200);
        // Everything coalesced back into one range.
        // The managed range is [104, 1096): both ends aligned to the DMA granule.
        assert_eq!(mram.available(), 1096 - 104);
        assert_eq!(mram.allocate(1096 - 104), Some(104));
    }
}
