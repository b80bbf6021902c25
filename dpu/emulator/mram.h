/* mram.h (emulator shim): DMA between MRAM and WRAM, with the hardware's limits enforced:
 * size 8 ..= 2048 bytes and a multiple of 8, both addresses 8-byte aligned, the MRAM range
 * inside the DPU's MRAM, the WRAM buffer inside the mem_alloc heap. Each transfer is counted
 * for the calling tasklet. */
#ifndef PIMHE_EMU_MRAM_H
#define PIMHE_EMU_MRAM_H

#include <stdint.h>

#include "defs.h"

/* Start of the MRAM heap; the emulated program has no MRAM variables, so it is MRAM's start. */
#define DPU_MRAM_HEAP_POINTER ((__mram_ptr void *)(uintptr_t)PIMHE_EMU_MRAM_BASE)

void mram_read(const __mram_ptr void *from, void *to, unsigned int nb_of_bytes);
void mram_write(const void *from, __mram_ptr void *to, unsigned int nb_of_bytes);

#endif /* PIMHE_EMU_MRAM_H */
