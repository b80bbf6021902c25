/*
 * pimhe_emu.h: the emulator's own interface (not part of the UPMEM SDK).
 *
 * Used by the shim's SDK look-alike headers (defs.h, mram.h, barrier.h, alloc.h,
 * perfcounter.h), by cost.h's COST() in emulator builds, and by the Rust side
 * (crates/pim/src/emulator/ffi.rs mirrors the launch structs below).
 *
 * Model of one DPU launch:
 *  - NR_TASKLETS tasklets = NR_TASKLETS coroutines on the host thread that launches the DPU
 *    (tasklets.h), each run until its next barrier or its end, round robin. The tasklet count is
 *    a run-time parameter (EmulatorConfig::tasklets), so one compiled program serves v1A (up to
 *    24) and v1B (up to 16).
 *  - WRAM = a zeroed wram_bytes buffer per launch. Its budget is the runtime's static data
 *    (PIMHE_EMU_STATIC_WRAM_BYTES) + NR_TASKLETS x STACK_SIZE_DEFAULT stacks + the mem_alloc heap.
 *    Tasklet stacks themselves live in host memory, so DMA buffers must come from mem_alloc.
 *  - MRAM = owned by the host (Rust); every DMA goes through the launch's mram_io callback.
 *  - Kernel globals: a DPU program's globals are per-DPU WRAM on hardware but would be shared by
 *    all DPUs here, so pimhe's kernel has no mutable globals (its one barrier_t is an immutable
 *    descriptor; the barrier's state is per DPU in the shim). That is what lets the host run
 *    several DPUs' launches concurrently.
 *  - A limit violation records an error for the tasklet (kernel name, limit, details) and ends
 *    that tasklet at once, without performing the faulty access. The other tasklets run on to
 *    their next barrier_wait (or their end) and stop there; barriers count ended tasklets, so
 *    nothing deadlocks. The launch reports the violation of the lowest-numbered tasklet, which
 *    makes the reported error as deterministic as the kernel itself.
 */
#ifndef PIMHE_EMU_H
#define PIMHE_EMU_H

#include <stddef.h>
#include <stdint.h>

#define PIMHE_EMU_MAX_TASKLETS 24u
/* DPU address of the first MRAM byte; DPU_MRAM_HEAP_POINTER points here (no MRAM globals). */
#define PIMHE_EMU_MRAM_BASE 0x08000000u
#define PIMHE_EMU_MRAM_MAX (64u << 20)
#define PIMHE_EMU_WRAM_MAX (64u << 10)
#define PIMHE_EMU_DMA_MIN 8u
#define PIMHE_EMU_DMA_MAX 2048u

/* Per-tasklet stack, as dpu-upmem-dpurte-clang's -DSTACK_SIZE_DEFAULT would set it. */
#ifndef STACK_SIZE_DEFAULT
#define STACK_SIZE_DEFAULT 512
#endif

/* WRAM taken by the runtime and the program's static data (.data/.bss): the runtime's tasklet
 * contexts and heap pointer, the kernel's barrier and constants. An upper estimate. */
#define PIMHE_EMU_STATIC_WRAM_BYTES 1024u

/* Instructions charged to the calling tasklet (COST() in cost.h adds to it). */
extern _Thread_local uint64_t pimhe_emu_instructions;
#define PIMHE_EMU_CHARGE(n) ((void)(pimhe_emu_instructions += (uint64_t)(n)))
/* Multiply routines are also tallied by width (32: a 32-bit result, 64: a 64-bit or high-word
 * result) with the instructions they were charged, so a model can re-cost them for a
 * hypothetical multiplier (DRAMatic 5.1). */
extern _Thread_local uint64_t pimhe_emu_mul32, pimhe_emu_mul64, pimhe_emu_mul_instructions;
#define PIMHE_EMU_CHARGE_MUL(width, n)                                                                  \
    ((void)(pimhe_emu_instructions += (uint64_t)(n), pimhe_emu_mul_instructions += (uint64_t)(n),       \
            (width) == 64 ? pimhe_emu_mul64++ : pimhe_emu_mul32++))

uint32_t pimhe_emu_me(void);
uint32_t pimhe_emu_nr_tasklets(void);
/* Names the current kernel phase for error reports ("pimhe_main/<phase>"). */
void pimhe_emu_kernel_phase(const char *phase);

/* ---- launch interface (host side) ---- */

/* Programs the shim can run. */
#define PIMHE_EMU_PROGRAM_MAIN 0u /* dpu/kernels/main.c */
/* Self-test programs (dpu/emulator/selftest.c), each violating one limit or checking the shim. */
#define PIMHE_EMU_PROGRAM_SELFTEST_DMA_SIZE 1u       /* mram_read of 12 bytes */
#define PIMHE_EMU_PROGRAM_SELFTEST_DMA_TOO_LARGE 2u  /* mram_read of 4096 bytes */
#define PIMHE_EMU_PROGRAM_SELFTEST_MRAM_ALIGN 3u     /* MRAM address 4 */
#define PIMHE_EMU_PROGRAM_SELFTEST_WRAM_ALIGN 4u     /* WRAM buffer + 4 */
#define PIMHE_EMU_PROGRAM_SELFTEST_MRAM_RANGE 5u     /* the last 8 bytes + 8 past the end */
#define PIMHE_EMU_PROGRAM_SELFTEST_WRAM_OVERFLOW 6u  /* mem_alloc past the heap */
#define PIMHE_EMU_PROGRAM_SELFTEST_WRAM_RANGE 7u     /* DMA into a buffer that is not WRAM */
#define PIMHE_EMU_PROGRAM_SELFTEST_BARRIER_ABORT 8u  /* tasklet 1 violates while the rest wait */
#define PIMHE_EMU_PROGRAM_SELFTEST_BARRIER_EXIT 9u   /* tasklet 0 returns while the rest wait */
#define PIMHE_EMU_PROGRAM_SELFTEST_ARITH 10u         /* 16-bit compositions == native products */
#define PIMHE_EMU_PROGRAM_SELFTEST_COUNTS 11u        /* known charges and DMAs per tasklet */
#define PIMHE_EMU_PROGRAM_SELFTEST_INTERVALS 12u     /* known work per barrier interval */
#define PIMHE_EMU_PROGRAM_LAST 12u

/* Error kinds of a launch. */
#define PIMHE_EMU_OK 0
#define PIMHE_EMU_ERR_DMA_SIZE 1
#define PIMHE_EMU_ERR_DMA_ALIGN 2
#define PIMHE_EMU_ERR_MRAM_RANGE 3
#define PIMHE_EMU_ERR_WRAM_RANGE 4
#define PIMHE_EMU_ERR_WRAM_OVERFLOW 5
#define PIMHE_EMU_ERR_BARRIER 6
#define PIMHE_EMU_ERR_TASKLETS 7
#define PIMHE_EMU_ERR_HOST 8
#define PIMHE_EMU_ERR_PROGRAM 9
#define PIMHE_EMU_ERR_SELFTEST 10

#define PIMHE_EMU_KERNEL_LEN 64
#define PIMHE_EMU_DETAIL_LEN 256

/* Host MRAM access: copy len bytes at MRAM offset to (write == 0) or from (write != 0) buf.
 * Returns 0 on success. Called by the DPU's tasklets on the host thread that launched it;
 * distinct DPUs' launches may call it concurrently. */
typedef int (*pimhe_emu_mram_io_fn)(void *host, uint64_t offset, void *buf, uint32_t len, int write);

typedef struct pimhe_emu_counts pimhe_emu_counts_t;

/* One barrier interval closed: counts[t] is what tasklet t did since the previous barrier
 * release (or the launch's start), t < nr. Called at every barrier release, with every tasklet
 * waiting at the barrier or ended, and once at the launch's end for the last interval, on the
 * host thread that runs the DPU. A timing model prices the intervals one after the other: no
 * tasklet's work in one can overlap another (docs/PIM.md, upmem-v1b@2). */
typedef void (*pimhe_emu_interval_fn)(void *host, const pimhe_emu_counts_t *counts, uint32_t nr);

typedef struct {
    void *host;                  /* passed back to mram_io and interval */
    pimhe_emu_mram_io_fn mram_io;
    uint32_t program;            /* PIMHE_EMU_PROGRAM_* */
    uint32_t nr_tasklets;        /* 1 ..= PIMHE_EMU_MAX_TASKLETS */
    uint64_t mram_bytes;         /* <= PIMHE_EMU_MRAM_MAX */
    uint32_t wram_bytes;         /* <= PIMHE_EMU_WRAM_MAX */
    uint32_t stack_bytes;        /* per tasklet; 0 = STACK_SIZE_DEFAULT */
    pimhe_emu_interval_fn interval; /* NULL: the launch's totals only */
} pimhe_emu_launch_params_t;

struct pimhe_emu_counts {
    uint64_t instructions;
    uint64_t dma_reads, dma_read_bytes;
    uint64_t dma_writes, dma_write_bytes;
    uint64_t mul32, mul64, mul_instructions; /* multiply routines among the instructions */
};

typedef struct {
    int32_t error;    /* PIMHE_EMU_OK or PIMHE_EMU_ERR_* */
    uint32_t tasklet; /* the tasklet the error is reported for */
    char kernel[PIMHE_EMU_KERNEL_LEN];
    char detail[PIMHE_EMU_DETAIL_LEN];
    pimhe_emu_counts_t counts[PIMHE_EMU_MAX_TASKLETS];
} pimhe_emu_launch_result_t;

/* Runs one launch of one DPU; returns result->error. Reentrant: distinct DPUs may be launched
 * from distinct host threads at the same time. */
int pimhe_emu_launch(const pimhe_emu_launch_params_t *params, pimhe_emu_launch_result_t *result);

/* Layout probes for the Rust mirrors: fill offsets with the offsets of the struct's fields in
 * declaration order followed by its sizeof; return how many entries that is. */
uint32_t pimhe_emu_header_layout(uint32_t *offsets, uint32_t capacity);
uint32_t pimhe_emu_command_layout(uint32_t *offsets, uint32_t capacity);
/* Value probes for the same cross-check: fill values with a fixed list of the C side's
 * constants (listed where each is defined) and return how many entries that is. */
uint32_t pimhe_emu_opcodes(uint32_t *values, uint32_t capacity);
uint32_t pimhe_emu_limits(uint32_t *values, uint32_t capacity); /* in kernel_entry.c */
/* Constants the Rust side reports in errors. */
uint32_t pimhe_emu_stack_size_default(void);
uint32_t pimhe_emu_static_wram_bytes(void);

/* For self-test programs: records a failed check (PIMHE_EMU_ERR_SELFTEST) and ends the tasklet. */
_Noreturn void pimhe_emu_selftest_fail(const char *what, unsigned long long a, unsigned long long b);

#endif /* PIMHE_EMU_H */
