/*
 * shim.c: the emulated UPMEM runtime (see pimhe_emu.h for the model).
 *
 * One launch = one DPU: a fresh WRAM, NR_TASKLETS tasklets running the program as coroutines on
 * the calling host thread (tasklets.h), MRAM accessed through the host's callback. Limits of the hardware are checked on every runtime call and a
 * violation ends the offending tasklet with a recorded error (see pimhe_emu.h).
 */
#define _POSIX_C_SOURCE 200809L

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "barrier.h"
#include "cost.h"
#include "defs.h"
#include "mram.h"
#include "perfcounter.h"
#include "pimhe_dpu.h"
#include "pimhe_emu.h"
#include "tasklets.h"

/* The programs: main.c is compiled with -Dmain=pimhe_kernel_main; selftest.c exports the rest. */
extern int pimhe_kernel_main(void);
extern int pimhe_selftest_main(uint32_t program);

typedef struct {
    int error;
    char kernel[PIMHE_EMU_KERNEL_LEN];
    char detail[PIMHE_EMU_DETAIL_LEN];
} tasklet_error_t;

/* What a tasklet keeps while another runs: the shim's per-tasklet globals below, saved and
 * restored around every switch, and the barrier generation it waits to see pass. */
typedef struct {
    jmp_buf *jmp;
    const char *phase;
    uint64_t perf_base, instructions, mul32, mul64, mul_instructions;
    int waiting;
    uint32_t waiting_for;
} tasklet_state_t;

typedef struct {
    const pimhe_emu_launch_params_t *params;
    uint32_t nr;
    uint32_t stack_bytes;
    uint8_t *wram;
    uint32_t wram_bytes;
    uint32_t heap_base; /* offset into wram where the heap starts */
    uint32_t heap_top;  /* end of the allocated heap */
    uint32_t arrived, generation, ended_normal, ended_abort;
    int aborted;
    tasklet_error_t launch_error; /* errors not tied to one tasklet (barrier misuse) */
    uint32_t launch_error_tasklet;
    pimhe_emu_counts_t counts[PIMHE_EMU_MAX_TASKLETS];
    pimhe_emu_counts_t interval_start[PIMHE_EMU_MAX_TASKLETS]; /* counts at the last release */
    tasklet_error_t errors[PIMHE_EMU_MAX_TASKLETS];
    tasklet_state_t tasklets[PIMHE_EMU_MAX_TASKLETS];
} dpu_ctx_t;

/* The DPU this host thread is running, and the running tasklet's state (tasklet_switch_in). */
static _Thread_local dpu_ctx_t *tl_ctx;
static _Thread_local uint32_t tl_me;
static _Thread_local jmp_buf *tl_jmp;
static _Thread_local const char *tl_phase;
static _Thread_local uint64_t tl_perf_base;
_Thread_local uint64_t pimhe_emu_instructions;
_Thread_local uint64_t pimhe_emu_mul32, pimhe_emu_mul64, pimhe_emu_mul_instructions;

/* ------------------------------------------------------------------------------------------ */

static dpu_ctx_t *ctx(void) {
    if (tl_ctx == NULL) {
        fprintf(stderr, "pimhe emulator: DPU runtime call outside a launch\n");
        abort();
    }
    return tl_ctx;
}

static const char *program_name(const dpu_ctx_t *c) {
    return c->params->program == PIMHE_EMU_PROGRAM_MAIN ? "pimhe_main" : "pimhe_selftest";
}

static void kernel_name(const dpu_ctx_t *c, char *out) {
    snprintf(out, PIMHE_EMU_KERNEL_LEN, "%s/%s", program_name(c), tl_phase ? tl_phase : "main");
}

/* Ends the calling tasklet without recording anything (another tasklet failed). */
static _Noreturn void tasklet_stop(void) {
    longjmp(*tl_jmp, 2);
}

/* Records a violation for the calling tasklet and ends it. */
static _Noreturn void tasklet_fail(int kind, const char *fmt, ...) {
    dpu_ctx_t *c = ctx();
    tasklet_error_t *e = &c->errors[tl_me];
    if (e->error == PIMHE_EMU_OK) {
        e->error = kind;
        kernel_name(c, e->kernel);
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(e->detail, sizeof e->detail, fmt, ap);
        va_end(ap);
    }
    c->aborted = 1;
    longjmp(*tl_jmp, 1);
}

/* Tasklet t's counts so far. The DMA tallies live in c->counts; the instruction and multiply
 * tallies of the tasklet `running` (UINT32_MAX: none) live in the thread-locals, the others'
 * in their saved state. */
static pimhe_emu_counts_t counts_so_far(const dpu_ctx_t *c, uint32_t t, uint32_t running) {
    pimhe_emu_counts_t now = c->counts[t];
    if (t == running) {
        now.instructions = pimhe_emu_instructions;
        now.mul32 = pimhe_emu_mul32;
        now.mul64 = pimhe_emu_mul64;
        now.mul_instructions = pimhe_emu_mul_instructions;
    } else {
        now.instructions = c->tasklets[t].instructions;
        now.mul32 = c->tasklets[t].mul32;
        now.mul64 = c->tasklets[t].mul64;
        now.mul_instructions = c->tasklets[t].mul_instructions;
    }
    return now;
}

/* Hands the host every tasklet's counts since the previous interval closed (see
 * pimhe_emu_interval_fn). Every tasklet is at a barrier or ended, so nothing is half counted. */
static void close_interval(dpu_ctx_t *c, uint32_t running) {
    if (c->params->interval == NULL) {
        return;
    }
    pimhe_emu_counts_t delta[PIMHE_EMU_MAX_TASKLETS];
    for (uint32_t t = 0; t < c->nr; t++) {
        const pimhe_emu_counts_t now = counts_so_far(c, t, running);
        const pimhe_emu_counts_t *from = &c->interval_start[t];
        delta[t].instructions = now.instructions - from->instructions;
        delta[t].dma_reads = now.dma_reads - from->dma_reads;
        delta[t].dma_read_bytes = now.dma_read_bytes - from->dma_read_bytes;
        delta[t].dma_writes = now.dma_writes - from->dma_writes;
        delta[t].dma_write_bytes = now.dma_write_bytes - from->dma_write_bytes;
        delta[t].mul32 = now.mul32 - from->mul32;
        delta[t].mul64 = now.mul64 - from->mul64;
        delta[t].mul_instructions = now.mul_instructions - from->mul_instructions;
        c->interval_start[t] = now;
    }
    c->params->interval(c->params->host, delta, c->nr);
}

/* Releases a barrier once every tasklet has arrived or ended. A tasklet that returned while
 * others wait would hang real hardware: that is an error here. */
static void try_release(dpu_ctx_t *c) {
    if (c->arrived == 0u || c->arrived + c->ended_normal + c->ended_abort < c->nr) {
        return;
    }
    if (c->ended_normal > 0u && !c->aborted) {
        if (c->launch_error.error == PIMHE_EMU_OK) {
            c->launch_error.error = PIMHE_EMU_ERR_BARRIER;
            snprintf(c->launch_error.kernel, sizeof c->launch_error.kernel, "%s/%s", program_name(c),
                     tl_phase ? tl_phase : "main");
            snprintf(c->launch_error.detail, sizeof c->launch_error.detail,
                     "barrier_wait: %u tasklet(s) returned while %u wait at a barrier (a DPU would hang)",
                     c->ended_normal, c->arrived);
            c->launch_error_tasklet = tl_me;
        }
        c->aborted = 1;
    }
    if (!c->aborted) {
        close_interval(c, tl_me);
    }
    c->arrived = 0;
    c->generation++;
}

static void tasklet_end(dpu_ctx_t *c, int normal) {
    c->counts[tl_me].instructions = pimhe_emu_instructions;
    c->counts[tl_me].mul32 = pimhe_emu_mul32;
    c->counts[tl_me].mul64 = pimhe_emu_mul64;
    c->counts[tl_me].mul_instructions = pimhe_emu_mul_instructions;
    if (normal) {
        c->ended_normal++;
    } else {
        c->ended_abort++;
    }
    try_release(c);
}

static void run_program(dpu_ctx_t *c) {
    if (c->params->program == PIMHE_EMU_PROGRAM_MAIN) {
        (void)pimhe_kernel_main();
    } else {
        (void)pimhe_selftest_main(c->params->program);
    }
}

/* The scheduler's hooks (tasklets.h). */

static void tasklet_body(void *arg, uint32_t id) {
    dpu_ctx_t *c = (dpu_ctx_t *)arg;
    (void)id; /* tl_me, set by tasklet_switch_in */
    jmp_buf jb;
    tl_jmp = &jb;
    if (setjmp(jb) == 0) {
        run_program(c);
        tasklet_end(c, 1);
    } else {
        tasklet_end(c, 0);
    }
}

static int tasklet_may_resume(void *arg, uint32_t id) {
    const dpu_ctx_t *c = (const dpu_ctx_t *)arg;
    return !c->tasklets[id].waiting || c->generation != c->tasklets[id].waiting_for;
}

static void tasklet_switch_in(void *arg, uint32_t id) {
    const tasklet_state_t *s = &((const dpu_ctx_t *)arg)->tasklets[id];
    tl_me = id;
    tl_jmp = s->jmp;
    tl_phase = s->phase;
    tl_perf_base = s->perf_base;
    pimhe_emu_instructions = s->instructions;
    pimhe_emu_mul32 = s->mul32;
    pimhe_emu_mul64 = s->mul64;
    pimhe_emu_mul_instructions = s->mul_instructions;
}

static void tasklet_switch_out(void *arg, uint32_t id) {
    tasklet_state_t *s = &((dpu_ctx_t *)arg)->tasklets[id];
    s->jmp = tl_jmp;
    s->phase = tl_phase;
    s->perf_base = tl_perf_base;
    s->instructions = pimhe_emu_instructions;
    s->mul32 = pimhe_emu_mul32;
    s->mul64 = pimhe_emu_mul64;
    s->mul_instructions = pimhe_emu_mul_instructions;
}

/* ------------------------------------------------------------------------------------------ */
/* defs.h, perfcounter.h                                                                       */

uint32_t pimhe_emu_me(void) {
    (void)ctx();
    PIMHE_EMU_CHARGE(COST_RT_ME);
    return tl_me;
}

uint32_t pimhe_emu_nr_tasklets(void) {
    return ctx()->nr;
}

void pimhe_emu_kernel_phase(const char *phase) {
    tl_phase = phase;
}

perfcounter_t perfcounter_config(perfcounter_config_t config, bool reset_value) {
    (void)config;
    (void)ctx();
    const perfcounter_t now = pimhe_emu_instructions - tl_perf_base;
    if (reset_value) {
        tl_perf_base = pimhe_emu_instructions;
    }
    return now;
}

perfcounter_t perfcounter_get(void) {
    (void)ctx();
    return pimhe_emu_instructions - tl_perf_base;
}

/* ------------------------------------------------------------------------------------------ */
/* mram.h                                                                                      */

/* Checks one DMA and returns the MRAM offset; any violation ends the tasklet. */
static uint64_t check_dma(dpu_ctx_t *c, const char *what, uintptr_t mram, const void *wram, unsigned int n) {
    if (n < PIMHE_EMU_DMA_MIN || n > PIMHE_EMU_DMA_MAX || n % 8u != 0u) {
        tasklet_fail(PIMHE_EMU_ERR_DMA_SIZE, "%s: DMA size %u bytes: must be 8..=2048 and a multiple of 8", what, n);
    }
    const uintptr_t w = (uintptr_t)wram, base = (uintptr_t)c->wram;
    if (w < base || w - base >= c->wram_bytes) {
        tasklet_fail(PIMHE_EMU_ERR_WRAM_RANGE,
                     "%s: WRAM buffer %p is not in the DPU's WRAM (DMA buffers must come from mem_alloc)", what,
                     wram);
    }
    const uint64_t wo = (uint64_t)(w - base);
    if (mram < PIMHE_EMU_MRAM_BASE) {
        tasklet_fail(PIMHE_EMU_ERR_MRAM_RANGE, "%s: MRAM address 0x%llx is below MRAM (which starts at 0x%x)", what,
                     (unsigned long long)mram, PIMHE_EMU_MRAM_BASE);
    }
    const uint64_t mo = (uint64_t)(mram - PIMHE_EMU_MRAM_BASE);
    if (mo % 8u != 0u) {
        tasklet_fail(PIMHE_EMU_ERR_DMA_ALIGN, "%s: MRAM offset %llu is not 8-byte aligned", what,
                     (unsigned long long)mo);
    }
    if (wo % 8u != 0u) {
        tasklet_fail(PIMHE_EMU_ERR_DMA_ALIGN, "%s: WRAM address %llu is not 8-byte aligned", what,
                     (unsigned long long)wo);
    }
    if (mo + n > c->params->mram_bytes) {
        tasklet_fail(PIMHE_EMU_ERR_MRAM_RANGE, "%s: MRAM range [%llu, %llu) is outside the DPU's %llu bytes of MRAM",
                     what, (unsigned long long)mo, (unsigned long long)(mo + n),
                     (unsigned long long)c->params->mram_bytes);
    }
    const uint32_t top = c->heap_top;
    if (wo < c->heap_base || wo + n > top) {
        tasklet_fail(PIMHE_EMU_ERR_WRAM_RANGE, "%s: WRAM range [%llu, %llu) is outside the allocated heap [%u, %u)",
                     what, (unsigned long long)wo, (unsigned long long)(wo + n), c->heap_base, top);
    }
    return mo;
}

void mram_read(const __mram_ptr void *from, void *to, unsigned int nb_of_bytes) {
    dpu_ctx_t *c = ctx();
    PIMHE_EMU_CHARGE(COST_RT_DMA);
    const uint64_t mo = check_dma(c, "mram_read", (uintptr_t)from, to, nb_of_bytes);
    if (c->params->mram_io(c->params->host, mo, to, nb_of_bytes, 0) != 0) {
        tasklet_fail(PIMHE_EMU_ERR_HOST, "mram_read: the host could not read MRAM [%llu, %llu)",
                     (unsigned long long)mo, (unsigned long long)(mo + nb_of_bytes));
    }
    c->counts[tl_me].dma_reads++;
    c->counts[tl_me].dma_read_bytes += nb_of_bytes;
}

void mram_write(const void *from, __mram_ptr void *to, unsigned int nb_of_bytes) {
    dpu_ctx_t *c = ctx();
    PIMHE_EMU_CHARGE(COST_RT_DMA);
    const uint64_t mo = check_dma(c, "mram_write", (uintptr_t)to, from, nb_of_bytes);
    if (c->params->mram_io(c->params->host, mo, (void *)(uintptr_t)from, nb_of_bytes, 1) != 0) {
        tasklet_fail(PIMHE_EMU_ERR_HOST, "mram_write: the host could not write MRAM [%llu, %llu)",
                     (unsigned long long)mo, (unsigned long long)(mo + nb_of_bytes));
    }
    c->counts[tl_me].dma_writes++;
    c->counts[tl_me].dma_write_bytes += nb_of_bytes;
}

/* ------------------------------------------------------------------------------------------ */
/* barrier.h                                                                                   */

void barrier_wait(barrier_t *barrier) {
    dpu_ctx_t *c = ctx();
    PIMHE_EMU_CHARGE(COST_RT_BARRIER);
    if (barrier == NULL || barrier->counter == NULL) {
        tasklet_fail(PIMHE_EMU_ERR_BARRIER, "barrier_wait: not a barrier declared with BARRIER_INIT");
    }
    if (strcmp(barrier->counter, "NR_TASKLETS") != 0) {
        char *end = NULL;
        const unsigned long v = strtoul(barrier->counter, &end, 0);
        if (end == barrier->counter || *end != '\0' || v != c->nr) {
            tasklet_fail(PIMHE_EMU_ERR_BARRIER,
                         "barrier_wait: barrier counter '%s' is not NR_TASKLETS (%u); the emulator only "
                         "supports barriers of all tasklets",
                         barrier->counter, c->nr);
        }
    }
    if (c->aborted) {
        tasklet_stop();
    }
    const uint32_t generation = c->generation;
    c->arrived++;
    try_release(c);
    if (generation == c->generation) {
        tasklet_state_t *s = &c->tasklets[tl_me];
        s->waiting = 1;
        s->waiting_for = generation;
        pimhe_tasklets_yield(); /* back once the barrier's generation has passed */
        s->waiting = 0;
    }
    if (c->aborted) {
        tasklet_stop();
    }
}

/* ------------------------------------------------------------------------------------------ */
/* alloc.h                                                                                     */

void *mem_alloc(size_t size) {
    dpu_ctx_t *c = ctx();
    PIMHE_EMU_CHARGE(COST_RT_MEM_ALLOC);
    const uint32_t left = c->wram_bytes - c->heap_top;
    const size_t aligned = (size + 7u) & ~(size_t)7u;
    if (size > c->wram_bytes || aligned > left) {
        const uint32_t top = c->heap_top;
        tasklet_fail(PIMHE_EMU_ERR_WRAM_OVERFLOW,
                     "mem_alloc(%zu bytes): WRAM overflow, %u bytes left (WRAM %u bytes = %u static + %u tasklets x "
                     "%u stack + %u heap, %u of it allocated)",
                     size, left, c->wram_bytes, PIMHE_EMU_STATIC_WRAM_BYTES, c->nr, c->stack_bytes,
                     c->wram_bytes - c->heap_base, top - c->heap_base);
    }
    void *p = c->wram + c->heap_top;
    c->heap_top += (uint32_t)aligned;
    return p;
}

void mem_reset(void) {
    dpu_ctx_t *c = ctx();
    PIMHE_EMU_CHARGE(COST_RT_MEM_ALLOC);
    c->heap_top = c->heap_base;
}

/* ------------------------------------------------------------------------------------------ */
/* launch                                                                                      */

static int launch_fail(pimhe_emu_launch_result_t *r, int kind, const char *fmt, ...) {
    r->error = kind;
    r->tasklet = 0;
    snprintf(r->kernel, sizeof r->kernel, "launch");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->detail, sizeof r->detail, fmt, ap);
    va_end(ap);
    return kind;
}

int pimhe_emu_launch(const pimhe_emu_launch_params_t *p, pimhe_emu_launch_result_t *r) {
    memset(r, 0, sizeof *r);
    if (p == NULL || p->mram_io == NULL) {
        return launch_fail(r, PIMHE_EMU_ERR_HOST, "no launch parameters or MRAM callback");
    }
    if (p->program > PIMHE_EMU_PROGRAM_LAST) {
        return launch_fail(r, PIMHE_EMU_ERR_PROGRAM, "unknown program %u", p->program);
    }
    if (p->nr_tasklets == 0u || p->nr_tasklets > PIMHE_EMU_MAX_TASKLETS) {
        return launch_fail(r, PIMHE_EMU_ERR_TASKLETS, "%u tasklets: a DPU runs 1..=%u", p->nr_tasklets,
                           PIMHE_EMU_MAX_TASKLETS);
    }
    if (p->mram_bytes > PIMHE_EMU_MRAM_MAX || p->wram_bytes > PIMHE_EMU_WRAM_MAX || p->wram_bytes % 8u != 0u) {
        return launch_fail(r, PIMHE_EMU_ERR_HOST, "MRAM %llu bytes (max %u), WRAM %u bytes (max %u, multiple of 8)",
                           (unsigned long long)p->mram_bytes, PIMHE_EMU_MRAM_MAX, p->wram_bytes,
                           PIMHE_EMU_WRAM_MAX);
    }
    const uint32_t stack = p->stack_bytes ? p->stack_bytes : (uint32_t)STACK_SIZE_DEFAULT;
    const uint64_t reserved = (uint64_t)PIMHE_EMU_STATIC_WRAM_BYTES + (uint64_t)p->nr_tasklets * stack;
    if (reserved > p->wram_bytes) {
        return launch_fail(r, PIMHE_EMU_ERR_WRAM_OVERFLOW,
                           "WRAM overflow: %u static + %u tasklets x %u stack = %llu bytes exceed the %u bytes of WRAM",
                           PIMHE_EMU_STATIC_WRAM_BYTES, p->nr_tasklets, stack, (unsigned long long)reserved,
                           p->wram_bytes);
    }

    dpu_ctx_t *c = (dpu_ctx_t *)calloc(1, sizeof *c);
    const size_t wram_alloc = ((size_t)p->wram_bytes + 63u) & ~(size_t)63u;
    uint8_t *wram = (uint8_t *)aligned_alloc(64, wram_alloc ? wram_alloc : 64u);
    if (c == NULL || wram == NULL) {
        free(c);
        free(wram);
        return launch_fail(r, PIMHE_EMU_ERR_HOST, "out of host memory");
    }
    memset(wram, 0, wram_alloc ? wram_alloc : 64u);
    c->params = p;
    c->nr = p->nr_tasklets;
    c->stack_bytes = stack;
    c->wram = wram;
    c->wram_bytes = p->wram_bytes;
    c->heap_base = (uint32_t)reserved;
    c->heap_top = c->heap_base;

    const pimhe_tasklet_ops_t ops = {tasklet_body, tasklet_may_resume, tasklet_switch_in, tasklet_switch_out, c};
    tl_ctx = c;
    if (pimhe_tasklets_run(c->nr, &ops) != 0 && c->launch_error.error == PIMHE_EMU_OK) {
        c->launch_error.error = PIMHE_EMU_ERR_HOST;
        snprintf(c->launch_error.kernel, sizeof c->launch_error.kernel, "launch");
        snprintf(c->launch_error.detail, sizeof c->launch_error.detail,
                 "could not run the %u tasklets (no host memory for their stacks, or all of them paused at an "
                 "unreleased barrier)", c->nr);
    }
    tl_ctx = NULL;
    if (!c->aborted) {
        close_interval(c, UINT32_MAX); /* the last interval: from the last release to the end */
    }

    memcpy(r->counts, c->counts, sizeof r->counts);
    r->error = PIMHE_EMU_OK;
    for (uint32_t t = 0; t < c->nr; t++) {
        if (c->errors[t].error != PIMHE_EMU_OK) {
            r->error = c->errors[t].error;
            r->tasklet = t;
            memcpy(r->kernel, c->errors[t].kernel, sizeof r->kernel);
            memcpy(r->detail, c->errors[t].detail, sizeof r->detail);
            break;
        }
    }
    if (r->error == PIMHE_EMU_OK && c->launch_error.error != PIMHE_EMU_OK) {
        r->error = c->launch_error.error;
        r->tasklet = c->launch_error_tasklet;
        memcpy(r->kernel, c->launch_error.kernel, sizeof r->kernel);
        memcpy(r->detail, c->launch_error.detail, sizeof r->detail);
    }
    free(wram);
    free(c);
    return r->error;
}

/* ------------------------------------------------------------------------------------------ */
/* layout probes                                                                               */

static uint32_t copy_offsets(const uint32_t *src, uint32_t count, uint32_t *out, uint32_t capacity) {
    for (uint32_t i = 0; i < count && i < capacity; i++) {
        out[i] = src[i];
    }
    return count;
}

uint32_t pimhe_emu_header_layout(uint32_t *offsets, uint32_t capacity) {
    const uint32_t o[] = {
        offsetof(pimhe_header_t, magic),
        offsetof(pimhe_header_t, n),
        offsetof(pimhe_header_t, log_n),
        offsetof(pimhe_header_t, q),
        offsetof(pimhe_header_t, barrett_lo),
        offsetof(pimhe_header_t, barrett_hi),
        offsetof(pimhe_header_t, n_inv),
        offsetof(pimhe_header_t, n_inv_shoup),
        offsetof(pimhe_header_t, variant),
        offsetof(pimhe_header_t, twiddle_offset),
        offsetof(pimhe_header_t, inv_twiddle_offset),
        offsetof(pimhe_header_t, command_offset),
        offsetof(pimhe_header_t, command_count),
        offsetof(pimhe_header_t, status),
        offsetof(pimhe_header_t, reserved),
        sizeof(pimhe_header_t),
    };
    return copy_offsets(o, (uint32_t)(sizeof o / sizeof o[0]), offsets, capacity);
}

uint32_t pimhe_emu_command_layout(uint32_t *offsets, uint32_t capacity) {
    const uint32_t o[] = {
        offsetof(pimhe_command_t, opcode),       offsetof(pimhe_command_t, count),
        offsetof(pimhe_command_t, src),          offsetof(pimhe_command_t, dst),
        offsetof(pimhe_command_t, scalar),       offsetof(pimhe_command_t, scalar_shoup),
        offsetof(pimhe_command_t, flags),     sizeof(pimhe_command_t),
    };
    return copy_offsets(o, (uint32_t)(sizeof o / sizeof o[0]), offsets, capacity);
}

/* The opcodes NTT ..= MW_CONV in numeric order, then PIMHE_OP_FIRST, PIMHE_OP_LAST, the flags
 * BROADCAST_SRC1, NTT_FORM, ACCUMULATE and CENTRED, the variants BARRETT and BEST and the status
 * codes OK ..= CONVERSION in numeric order, for the Rust mirror's cross-check. */
uint32_t pimhe_emu_opcodes(uint32_t *values, uint32_t capacity) {
    const uint32_t o[] = {
        PIMHE_OP_NTT,       PIMHE_OP_INTT,           PIMHE_OP_ADD,        PIMHE_OP_SUB,  PIMHE_OP_MUL,
        PIMHE_OP_MAC,       PIMHE_OP_MULC,           PIMHE_OP_TENSOR,     PIMHE_OP_AUTOMORPHISM,
        PIMHE_OP_TENSOR_SQ, PIMHE_OP_CMAC,           PIMHE_OP_CADD,       PIMHE_OP_SUB_MULC,
        PIMHE_OP_BCONV,     PIMHE_OP_DIVIDE_LAST,    PIMHE_OP_SET_PRIME,   PIMHE_OP_RAW_ADD,
        PIMHE_OP_RAW_MUL,   PIMHE_OP_RAW_CONV,       PIMHE_OP_NTT_STAGE,
        PIMHE_OP_MW_ADD,    PIMHE_OP_MW_MUL,         PIMHE_OP_MW_CONV,
        PIMHE_OP_FIRST,     PIMHE_OP_LAST,           PIMHE_FLAG_BROADCAST_SRC1, PIMHE_FLAG_NTT_FORM,
        PIMHE_FLAG_ACCUMULATE, PIMHE_FLAG_CENTRED,
        PIMHE_VARIANT_BARRETT, PIMHE_VARIANT_BEST,
        PIMHE_STATUS_OK,    PIMHE_ERR_MAGIC,         PIMHE_ERR_DEGREE,    PIMHE_ERR_MODULUS, PIMHE_ERR_VARIANT,
        PIMHE_ERR_OPCODE,   PIMHE_ERR_SCALAR,        PIMHE_ERR_BARRETT,   PIMHE_ERR_N_INV,   PIMHE_ERR_OPERAND,
        PIMHE_ERR_GALOIS,   PIMHE_ERR_ALIAS,         PIMHE_ERR_CONVERSION,
    };
    return copy_offsets(o, (uint32_t)(sizeof o / sizeof o[0]), values, capacity);
}

uint32_t pimhe_emu_stack_size_default(void) {
    return (uint32_t)STACK_SIZE_DEFAULT;
}

uint32_t pimhe_emu_static_wram_bytes(void) {
    return PIMHE_EMU_STATIC_WRAM_BYTES;
}

_Noreturn void pimhe_emu_selftest_fail(const char *what, unsigned long long a, unsigned long long b) {
    tasklet_fail(PIMHE_EMU_ERR_SELFTEST, "self-test failed: %s (%llu, %llu)", what, a, b);
}
