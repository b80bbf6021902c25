/*
 * selftest.c: small DPU programs that exercise the emulator itself, written against the same
 * runtime headers as the real kernel. Each PIMHE_EMU_PROGRAM_SELFTEST_* program either breaks
 * one hardware limit on purpose (the Rust tests check the reported error) or checks the shim.
 */
#include <stddef.h>
#include <stdint.h>

#include <alloc.h>
#include <barrier.h>
#include <defs.h>
#include <mram.h>
#include <perfcounter.h>

#include "arith_barrett.h"
#include "arith_best.h"
#include "arith_common.h"
#include "cost.h"
#include "pimhe_emu.h"

BARRIER_INIT(selftest_barrier, NR_TASKLETS);

static __mram_ptr void *at(uint64_t offset) {
    return (__mram_ptr void *)((uintptr_t)DPU_MRAM_HEAP_POINTER + (uintptr_t)offset);
}

/* xorshift64: deterministic operands for the arithmetic checks. */
static uint64_t next_random(uint64_t *s) {
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    *s = x;
    return x;
}

static void check(int ok, const char *what, uint64_t a, uint64_t b) {
    if (!ok) {
        pimhe_emu_selftest_fail(what, (unsigned long long)a, (unsigned long long)b);
    }
}

/* The 16-bit compositions agree with native products; Barrett and Shoup reductions agree with
 * %; the truncated quotient is within 2 below the exact one. Each tasklet checks its own
 * slice of operands. */
static void arith(void) {
    uint64_t s = 0x9e3779b97f4a7c15ull ^ ((uint64_t)me() << 32);
    for (uint32_t i = 0; i < 4000u; i++) {
        const uint32_t a = (uint32_t)next_random(&s), b = (uint32_t)next_random(&s);
        check(pimhe_mul32_64_parts(a, b) == (uint64_t)a * b, "mul32_64 parts", a, b);
        check(pimhe_mul32_32_parts(a, b) == a * b, "mul32_32 parts", a, b);
        const uint32_t hi = (uint32_t)(((uint64_t)a * b) >> 32);
        const uint32_t tr = pimhe_mulhi_trunc_parts(a & 0xffffu, a >> 16, b & 0xffffu, b >> 16);
        check(tr <= hi && hi - tr <= 2u, "mulhi_trunc within 2", a, b);
        check(mulhi_trunc(a, a >> 16, b, b >> 16) == tr, "mulhi_trunc", a, b);
        check(mul32_lo_split(a, a >> 16, b, b >> 16) == a * b, "mul32_lo_split", a, b);
    }
    for (uint32_t i = 0; i < 200u; i++) {
        /* a random odd modulus of 6..30 bits */
        const uint32_t k = 6u + (uint32_t)(next_random(&s) % 25u);
        const uint32_t q = (uint32_t)((next_random(&s) & ((1ull << (k - 1)) - 1u)) | (1ull << (k - 1)) | 1u);
        const uint64_t r64 = UINT64_MAX / q;
        const uint32_t mu = (uint32_t)(r64 >> (64u - 2u * k));
        const bar_ctx_t bm = {q, mu, k - 1u, k + 1u};
        /* Only the fields the generic reductions read; the special-form and table fields
         * stay zero (the self-test exercises the general path). */
        const uint32_t mu2 = (uint32_t)((1ull << (31u + k)) / q);
        const best_ctx_t m = {.q = q, .q_hi = q >> 16, .q2 = 2u * q, .mu = mu, .s_lo = k - 1u, .s_hi = k + 1u,
                              .mu2 = mu2, .mu2_hi = mu2 >> 16};
        for (uint32_t j = 0; j < 50u; j++) {
            const uint32_t a = (uint32_t)(next_random(&s) % q), b = (uint32_t)(next_random(&s) % q);
            const uint32_t c = (uint32_t)(next_random(&s) % q), d = (uint32_t)(next_random(&s) % q);
            const uint32_t want = (uint32_t)(((uint64_t)a * b) % q);
            check(bar_mulmod(a, b, &bm) == want, "barrett mulmod", a, q);
            check(best_reduce((uint64_t)a * b, &m) == want, "best reduce", a, q);
            const uint64_t sum = (uint64_t)a * b + (uint64_t)c * d;
            check(best_reduce(sum, &m) == (uint32_t)(sum % q), "best reduce of a sum", c, q);
            /* MUL's and MAC's reductions: a product of residues, and one plus a residue. */
            check(best_reduce_sq((uint64_t)a * b, &m) == want, "best reduce_sq", a, q);
            const uint64_t mac = (uint64_t)a * b + c;
            check(best_reduce_sq(mac, &m) == (uint32_t)(mac % q), "best reduce_sq of a mac", c, q);
            const uint64_t top = (uint64_t)(q - 1u) * (q - 1u) + (q - 1u);
            check(best_reduce_sq(top, &m) == (uint32_t)(top % q), "best reduce_sq at its bound", q, q);
            const best_tw_t t = best_tw(b, (uint32_t)(((uint64_t)b << 32) / q));
            const uint32_t x = (uint32_t)next_random(&s); /* any word */
            const uint32_t lazy = best_mulmod_lazy(x, &t, &m);
            check(lazy < 2u * q && lazy % q == (uint32_t)(((uint64_t)x * b) % q), "shoup lazy", x, q);
        }
    }
}

/* Known work per tasklet: the Rust test checks the DMA counts exactly and the instruction
 * counts relative to tasklet 0. */
static void counts(void) {
    const uint32_t t = me();
    uint64_t *buf = (uint64_t *)mem_alloc(256);
    perfcounter_config(COUNT_INSTRUCTIONS, true);
    COST(5);
    check(perfcounter_get() == 5u, "perfcounter", perfcounter_get(), 5);
    COST(1000u + t);
    for (uint32_t i = 0; i < 3u; i++) {
        mram_read(at(4096u * t + 64u * i), buf, 64);
    }
    for (uint32_t i = 0; i < 2u; i++) {
        mram_write(buf, at(1u << 20 | (4096u * t + 128u * i)), 128);
    }
    barrier_wait(&selftest_barrier);
}

/* Three barrier intervals of known work, for the interval records and the model priced on
 * them: only tasklet 0 works in the first (1000 charged, one 64-byte read), every tasklet in
 * the second (1000 + t), and 7 after the last barrier. The runtime calls add their COST_RT_*. */
static void intervals(void) {
    const uint32_t t = me();
    uint64_t *buf = (uint64_t *)mem_alloc(64);
    if (t == 0u) {
        COST(1000);
        mram_read(at(0), buf, 64);
    }
    barrier_wait(&selftest_barrier);
    COST(1000u + t);
    barrier_wait(&selftest_barrier);
    COST(7);
}

int pimhe_selftest_main(uint32_t program) {
    KERNEL_PHASE("selftest");
    switch (program) {
    case PIMHE_EMU_PROGRAM_SELFTEST_DMA_SIZE: {
        KERNEL_PHASE("dma_size");
        uint64_t *buf = (uint64_t *)mem_alloc(64);
        mram_read(at(0), buf, 12);
        break;
    }
    case PIMHE_EMU_PROGRAM_SELFTEST_DMA_TOO_LARGE: {
        KERNEL_PHASE("dma_too_large");
        if (me() == 0u) {
            uint64_t *buf = (uint64_t *)mem_alloc(4096);
            mram_read(at(0), buf, 4096);
        }
        break;
    }
    case PIMHE_EMU_PROGRAM_SELFTEST_MRAM_ALIGN: {
        KERNEL_PHASE("mram_align");
        uint64_t *buf = (uint64_t *)mem_alloc(64);
        mram_read(at(4), buf, 8);
        break;
    }
    case PIMHE_EMU_PROGRAM_SELFTEST_WRAM_ALIGN: {
        KERNEL_PHASE("wram_align");
        uint8_t *buf = (uint8_t *)mem_alloc(64);
        mram_read(at(0), buf + 4, 8);
        break;
    }
    case PIMHE_EMU_PROGRAM_SELFTEST_MRAM_RANGE: {
        KERNEL_PHASE("mram_range");
        uint64_t *buf = (uint64_t *)mem_alloc(64);
        mram_write(buf, at(PIMHE_EMU_MRAM_MAX - 8u), 16);
        break;
    }
    case PIMHE_EMU_PROGRAM_SELFTEST_WRAM_OVERFLOW: {
        KERNEL_PHASE("wram_overflow");
        if (me() == 0u) {
            (void)mem_alloc(PIMHE_EMU_WRAM_MAX / 2u);
            (void)mem_alloc(PIMHE_EMU_WRAM_MAX / 2u);
        }
        break;
    }
    case PIMHE_EMU_PROGRAM_SELFTEST_WRAM_RANGE: {
        KERNEL_PHASE("wram_range");
        uint64_t on_host_stack[2] = {0, 0};
        mram_read(at(0), on_host_stack, 8);
        break;
    }
    case PIMHE_EMU_PROGRAM_SELFTEST_BARRIER_ABORT: {
        KERNEL_PHASE("barrier_abort");
        uint64_t *buf = (uint64_t *)mem_alloc(64);
        barrier_wait(&selftest_barrier);
        if (me() == 1u) {
            mram_read(at(0), buf, 12);
        }
        barrier_wait(&selftest_barrier);
        barrier_wait(&selftest_barrier);
        break;
    }
    case PIMHE_EMU_PROGRAM_SELFTEST_BARRIER_EXIT:
        KERNEL_PHASE("barrier_exit");
        if (me() == 0u) {
            return 0;
        }
        barrier_wait(&selftest_barrier);
        break;
    case PIMHE_EMU_PROGRAM_SELFTEST_ARITH:
        KERNEL_PHASE("arith");
        arith();
        break;
    case PIMHE_EMU_PROGRAM_SELFTEST_COUNTS:
        KERNEL_PHASE("counts");
        counts();
        break;
    case PIMHE_EMU_PROGRAM_SELFTEST_INTERVALS:
        KERNEL_PHASE("intervals");
        intervals();
        break;
    default:
        break;
    }
    return 0;
}
