/*
 * dma.h: the kernel's MRAM access: offsets into the MRAM heap (where the host writes the header,
 * twiddle tables, command list and operands; pimhe_dpu.h), DMAs between MRAM and WRAM, and
 * reads of a few words of a twiddle table. A DMA moves 8..2048 bytes, a multiple of 8, between
 * 8-aligned addresses (the emulator checks every one).
 *
 * Included by main.c (one translation unit, as UPMEM's build compiles it).
 */
#ifndef PIMHE_DMA_H
#define PIMHE_DMA_H

#include <stdint.h>

#include <defs.h>
#include <mram.h>

#include "cost.h"

#define DMA_MAX_BYTES 2048u

/* MRAM access                                                                                 */

static inline __mram_ptr void *mram_at(uint32_t offset) {
    return (__mram_ptr void *)((uintptr_t)DPU_MRAM_HEAP_POINTER + offset);
}

static inline void dma_read(uint32_t offset, void *wram, uint32_t bytes) {
    mram_read(mram_at(offset), wram, bytes);
}

static inline void dma_write(const void *wram, uint32_t offset, uint32_t bytes) {
    mram_write(wram, mram_at(offset), bytes);
}

/* Reads words [first, first + count) of the table at MRAM offset `table` into buf and returns
 * a pointer to word `first`. DMAs need 8-byte granularity, so the read is widened to even word
 * bounds: buf needs count + 2 words. */
static const uint32_t *fetch_words(uint32_t table, uint32_t first, uint32_t count, uint32_t *buf) {
    COST(4 * COST_ALU);
    const uint32_t lo = first & ~1u;
    const uint32_t hi = (first + count + 1u) & ~1u;
    const uint32_t bytes = (hi - lo) * 4u;
    for (uint32_t done = 0; done < bytes; done += DMA_MAX_BYTES) {
        COST(COST_LOOP + COST_ALU);
        const uint32_t len = bytes - done < DMA_MAX_BYTES ? bytes - done : DMA_MAX_BYTES;
        dma_read(table + lo * 4u + done, (uint8_t *)buf + done, len);
    }
    return buf + (first - lo);
}

#endif /* PIMHE_DMA_H */
