/* defs.h (emulator shim of the UPMEM runtime header): tasklet identity and attributes. */
#ifndef PIMHE_EMU_DEFS_H
#define PIMHE_EMU_DEFS_H

#include <stdint.h>

#include "pimhe_emu.h"

typedef uint32_t sysname_t;

/* The calling tasklet's id, 0 .. NR_TASKLETS - 1. */
static inline sysname_t me(void) {
    return pimhe_emu_me();
}

/* The tasklet count is the launch's (EmulatorConfig::tasklets), not a compile-time constant:
 * kernels may use NR_TASKLETS in expressions, not in array bounds or static initializers. */
#ifdef NR_TASKLETS
#error "the emulator takes the tasklet count at run time: do not define NR_TASKLETS"
#endif
#define NR_TASKLETS (pimhe_emu_nr_tasklets())

#define __host
#define __mram_ptr
#define __dma_aligned __attribute__((aligned(8)))
#define __noinline __attribute__((noinline))
/* MRAM variables would be one host object shared by every emulated DPU: not supported. Use
 * DPU_MRAM_HEAP_POINTER and offsets, as pimhe's kernel does. */
#define __mram_noinit PIMHE_EMU_ERROR_mram_variables_are_not_supported_use_DPU_MRAM_HEAP_POINTER
#define __mram PIMHE_EMU_ERROR_mram_variables_are_not_supported_use_DPU_MRAM_HEAP_POINTER

#endif /* PIMHE_EMU_DEFS_H */
