/* kernel_entry.c: builds dpu/kernels/main.c for the emulator, its main() renamed to the entry
 * point the shim calls for every tasklet (one archive with the shim, so the two can refer to
 * each other). */
#define main pimhe_kernel_main
#include "main.c" /* dpu/kernels/main.c, found through -Idpu/kernels */
