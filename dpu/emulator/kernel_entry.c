/* kernel_entry.c: builds dpu/kernels/main.c for the emulator, its main() renamed to the entry
 * point the shim calls for every tasklet (one archive with the shim, so the two can refer to
 * each other). */
#define main pimhe_kernel_main
#include "main.c" /* dpu/kernels/main.c, found through -Idpu/kernels */

/* The MRAM contract's limits and table sizes as the kernel is compiled with them, for the Rust
 * mirrors' cross-check (crates/pim/src/layout.rs): PIMHE_MAGIC, PIMHE_N_MIN, PIMHE_N_MAX,
 * PIMHE_LOG_N_MIN, PIMHE_LOG_N_MAX and PIMHE_Q_LIMIT (pimhe_dpu.h), then TABLE_MIN_N,
 * TABLE_COUNT, TABLE_WORDS and TABLE_BYTES (context.h). Here rather than in shim.c because the
 * table sizes are private to the kernel's translation unit, which this file is. */
uint32_t pimhe_emu_limits(uint32_t *values, uint32_t capacity) {
    const uint32_t o[] = {
        PIMHE_MAGIC,     PIMHE_N_MIN, PIMHE_N_MAX, PIMHE_LOG_N_MIN, PIMHE_LOG_N_MAX,
        PIMHE_Q_LIMIT,   TABLE_MIN_N, TABLE_COUNT, TABLE_WORDS,     TABLE_BYTES,
    };
    const uint32_t count = (uint32_t)(sizeof o / sizeof o[0]);
    for (uint32_t i = 0; i < count && i < capacity; i++) {
        values[i] = o[i];
    }
    return count;
}
