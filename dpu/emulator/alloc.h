/* alloc.h (emulator shim): the runtime's incremental WRAM allocator. The heap is what is left of
 * the DPU's WRAM after static data and NR_TASKLETS x STACK_SIZE_DEFAULT stacks; allocations are
 * 8-aligned; running out is a hard error (WRAM overflow). mem_alloc is thread-safe. */
#ifndef PIMHE_EMU_ALLOC_H
#define PIMHE_EMU_ALLOC_H

#include <stddef.h>

#include "defs.h"

void *mem_alloc(size_t size);
void mem_reset(void);

#endif /* PIMHE_EMU_ALLOC_H */
