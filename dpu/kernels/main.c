/*
 * main.c: pimhe's one DPU program (docs/PIM.md).
 *
 * The host writes a header, twiddle tables and a command list into MRAM (layout in
 * pimhe_dpu.h); every tasklet reads them and runs the commands in order, with a barrier after
 * each command so that one command's results are visible to the next. At the end tasklet 0
 * writes header.status.
 *
 * Work split (DRAMatic 3.4):
 *  - NTT / INTT are coarse-grained: tasklet t transforms sub-polynomials t, t + T, t + 2T, ...
 *    A sub-polynomial (up to 2^20 words, 4 MiB) does not fit WRAM, so each transform streams
 *    through a per-tasklet WRAM block with DMAs of at most 2048 bytes, and reads its twiddles
 *    from MRAM in tiles of at most a block's group count (a whole twiddle table, up to 8 MiB
 *    with its Shoup constants, stays in MRAM): nothing in WRAM grows with N.
 *  - Element-wise operations are fine-grained: every operand is cut into chunks of at most
 *    2048 bytes and the chunks are dealt round-robin to all tasklets.
 *    The fused element-wise kernels (TENSOR_SQ, CMAC, CADD, SUB_MULC: Anaheim's TensorSq,
 *    CAccum and ModDownEp) are in ew_fused.h and go the same way.
 *  - AUTOMORPHISM is fine-grained too: the output blocks of all sub-polynomials are dealt
 *    round-robin; each block is one gathered read in NTT form, one read per word in coefficient
 *    form (automorphism.h says why).
 *
 * Two arithmetic variants, chosen at run time by header.variant:
 *  - barrett (arith_barrett.h): DRAMatic's method. Radix-2 stages, one pass over MRAM per
 *    stage, every value fully reduced, Barrett multiplication everywhere.
 *  - best (arith_best.h): Shoup twiddles with a truncated quotient, lazy reduction, radix-4
 *    (two stages per pass) and, once a stage's butterflies fit in a WRAM block, all remaining
 *    stages done on the block without going back to MRAM. From N = 2048 (up to 16 tasklets)
 *    the three stages with the fewest twiddles of each transform multiply through shared WRAM
 *    tables (TABLE_*), and TENSOR is Karatsuba.
 *
 * WRAM per tasklet (mem_alloc; the kernel has no mutable globals, so the emulator can run
 * DPUs concurrently): a context (~100 B), the header (64 B), one command (48 B) and a work
 * area of BLOCK bytes + BLOCK / 2 + 16 bytes. BLOCK is 2048 for up to 16 tasklets and 1024
 * for more (24 tasklets on v1A). With the best variant's tables (N >= 2048, <= 16 tasklets):
 * one shared 28 KiB table region, and per tasklet BLOCK = 1024 plus 6 tb + 8 words of
 * twiddle buffers (tb = 8).
 *
 * Files: UPMEM's build compiles one translation unit (this file), so every kernel family is a
 * header of static functions included below, after BARRIER_INIT:
 *   context.h       ctx_t (the per-tasklet context) and the WRAM block and table sizes;
 *   dma.h           MRAM access: DMA helpers, twiddle word fetches;
 *   ntt_barrett.h   barrett NTT and INTT;
 *   ntt_best.h      best NTT and INTT (radix-4, WRAM blocks, table stages);
 *   ntt.h           the NTT / INTT commands: dealing sub-polynomials, the INTT's last twiddle;
 *   elementwise.h   ADD, SUB, MUL, MAC, MULC, TENSOR, ew_fused.h's TENSOR_SQ, CMAC, CADD,
 *                   SUB_MULC and conversion.h's BCONV, DIVIDE_LAST (across primes);
 *   automorphism.h  AUTOMORPHISM;
 *   raw_poly.h      RAW_ADD, RAW_MUL, RAW_CONV (one polynomial over coefficient ranges, MHY+);
 *   ntt_stage.h     NTT_STAGE (one Cooley-Tukey stage over a butterfly range, MHY+'s offload).
 *   multiword.h     MW_ADD, MW_MUL and the dispatch of MW_CONV (multi-word non-RNS
 *                   coefficients, Gupta et al.; multiword_arith.h, multiword_conv.h).
 * This file keeps the header checks (setup), SET_PRIME (set_prime), the command checks and
 * dispatch (run_command) and the command loop (main).
 *
 * Allowed includes: <stdint.h>, <stddef.h>, the UPMEM runtime headers and pimhe's own.
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
#include "pimhe_dpu.h"

BARRIER_INIT(pimhe_barrier, NR_TASKLETS);

#include "context.h"      /* ctx_t, WRAM block sizes */
#include "dma.h"          /* MRAM access */
#include "ntt.h"          /* NTT, INTT: ntt_barrett.h, ntt_best.h */
#include "elementwise.h"  /* ADD .. TENSOR, and the fused kernels of ew_fused.h */
#include "automorphism.h" /* AUTOMORPHISM */
#include "raw_poly.h"     /* RAW_ADD, RAW_MUL, RAW_CONV */
#include "ntt_stage.h"    /* NTT_STAGE */
#include "multiword.h"    /* MW_ADD, MW_MUL, MW_CONV */

/* ------------------------------------------------------------------------------------------ */
/* setup, validation and the command loop                                                       */

static uint32_t bit_length(uint32_t x) {
    COST(COST_ALU); /* clz */
    uint32_t k = 0;
    while (x) {
        k++;
        x >>= 1;
    }
    return k;
}

/* Checks a header (the launch's, or a SET_PRIME record) and derives the prime's constants.
 * Every tasklet does this on its own copy, so all reach the same verdict. */
static uint32_t setup(ctx_t *c, const pimhe_header_t *h) {
    COST(16 * COST_ALU);
    if (h->magic != PIMHE_MAGIC) {
        return PIMHE_ERR_MAGIC;
    }
    const uint32_t n = h->n;
    if (n < PIMHE_N_MIN || n > PIMHE_N_MAX || (n & (n - 1u)) != 0u || h->log_n > PIMHE_LOG_N_MAX ||
        (1u << h->log_n) != n) {
        return PIMHE_ERR_DEGREE;
    }
    const uint32_t q = h->q;
    if (q >= PIMHE_Q_LIMIT || q <= 2u * n || (q & (2u * n - 1u)) != 1u) {
        return PIMHE_ERR_MODULUS;
    }
    if (h->variant > PIMHE_VARIANT_BEST) {
        return PIMHE_ERR_VARIANT;
    }
    COST(3 * COST_DIV64);
    const uint64_t barrett = ((uint64_t)h->barrett_hi << 32) | h->barrett_lo;
    if (barrett != UINT64_MAX / q) { /* q odd: floor((2^64 - 1)/q) = floor(2^64/q) */
        return PIMHE_ERR_BARRETT;
    }
    if (h->n_inv >= q || ((uint64_t)n * h->n_inv) % q != 1u || h->n_inv_shoup != (uint32_t)(((uint64_t)h->n_inv << 32) / q)) {
        return PIMHE_ERR_N_INV;
    }
    c->n = n;
    c->log_n = h->log_n;
    c->q = q;
    c->variant = h->variant;
    const uint32_t k = bit_length(q);
    COST(COST_SHIFT64 + 8 * COST_ALU);
    const uint32_t mu = (uint32_t)(barrett >> (64u - 2u * k));
    c->bar.q = q;
    c->bar.mu = mu;
    c->bar.s_lo = k - 1u;
    c->bar.s_hi = k + 1u;
    c->best.q = q;
    c->best.q_hi = q >> 16;
    c->best.q2 = 2u * q;
    c->best.mu = mu;
    c->best.s_lo = k - 1u;
    c->best.s_hi = k + 1u;
    c->tw = h->twiddle_offset;
    c->tws = h->twiddle_offset + 4u * n;
    c->itw = h->inv_twiddle_offset;
    c->itws = h->inv_twiddle_offset + 4u * n;
    c->bar_n_inv = h->n_inv;
    c->best_n_inv = best_tw(h->n_inv, h->n_inv_shoup);
    c->last_ready = 0;
    c->loaded = 0; /* WRAM tables, if any, are another prime's */
    if (c->variant != PIMHE_VARIANT_BEST) {
        return PIMHE_STATUS_OK;
    }
    /* best_reduce_sq's mu2 = floor(2^(31+k) / q) (one division), the prime's form
     * q = 2^b + 1 - k' 2^s (clz/ctz and shifts), and the pow2inv constants. */
    COST(COST_DIV64 + 16 * COST_ALU);
    c->best.mu2 = (uint32_t)((1ull << (31u + k)) / q);
    c->best.mu2_hi = c->best.mu2 >> 16;
    {
        const uint32_t kk = (uint32_t)((1ull << k) + 1u - q); /* > 0: q < 2^k */
        uint32_t sh = 0;
        while (((kk >> sh) & 1u) == 0u) {
            sh++;
        }
        c->best.fk = kk >> sh;
        c->best.fs = sh;
        c->best.fb = k;
        c->best.fa = c->best.fk < 256u && sh >= 8u && sh < k;
    }
    c->best.l = h->log_n;
    c->best.lmask = n - 1u;
    c->best.tl = (q - 1u) >> h->log_n;
    return PIMHE_STATUS_OK;
}

/* Whether [a, a + count N 4) and [b, b + count N 4) share a byte. */
static int operands_overlap(uint32_t a, uint32_t b, uint32_t count, uint32_t n) {
    COST(6 * COST_ALU);
    const uint64_t bytes = (uint64_t)count * n * 4u;
    return bytes != 0u && (uint64_t)a < b + bytes && (uint64_t)b < a + bytes;
}

/* 0 when [offset, offset + count N 4) fits the 32-bit MRAM address space. */
static int operand_overflows(uint32_t offset, uint32_t count, uint32_t n) {
    COST(4 * COST_ALU);
    return (uint64_t)offset + (uint64_t)count * n * 4u > 0xffffffffull;
}

/* SET_PRIME: the prime record at src[0] becomes the launch's prime (pimhe_dpu.h). */
static uint32_t set_prime(ctx_t *c) {
    const uint32_t at = c->cmd->src[0];
    COST(4 * COST_ALU + COST_BRANCH);
    if ((at & 7u) != 0u || (uint64_t)at + sizeof(pimhe_header_t) > 0xffffffffull) {
        return PIMHE_ERR_OPERAND;
    }
    /* The record goes to the work area, free between commands (setup copies what it needs). */
    const pimhe_header_t *record = (const pimhe_header_t *)c->area;
    COST(COST_STORE);
    c->bitrev_ready = 0;
    dma_read(at, c->area, sizeof(pimhe_header_t));
    if (record->magic == PIMHE_MAGIC && record->n != c->n) {
        return PIMHE_ERR_DEGREE;
    }
    if (record->variant != c->variant) {
        return PIMHE_ERR_VARIANT;
    }
    return setup(c, record);
}

static uint32_t run_command(ctx_t *c) {
    const pimhe_command_t *cmd = c->cmd;
    const uint32_t op = cmd->opcode;
    COST(4 * COST_ALU + COST_BRANCH);
    if (op < PIMHE_OP_FIRST || op > PIMHE_OP_LAST) {
        return PIMHE_ERR_OPCODE;
    }
    if (op == PIMHE_OP_SET_PRIME) {
        KERNEL_PHASE("set_prime");
        return set_prime(c);
    }
    /* The families past the RNS operations (raw polynomials, the NTT stage, multi-word
     * coefficients) in one range check, so the RNS commands pay one test for all of them. */
    COST(2 * COST_ALU);
    if (op >= PIMHE_OP_RAW_ADD) {
        COST(COST_STORE);
        c->bitrev_ready = 0; /* the command overwrites the work area */
        return op <= PIMHE_OP_RAW_CONV        ? raw_poly_command(c)
               : op == PIMHE_OP_NTT_STAGE     ? ntt_stage_command(c)
                                              : multiword_command(c);
    }
    const uint32_t srcs = op == PIMHE_OP_TENSOR ? 4u
                          : (op == PIMHE_OP_NTT || op == PIMHE_OP_INTT || op == PIMHE_OP_MULC ||
                             op == PIMHE_OP_AUTOMORPHISM || op == PIMHE_OP_CMAC || op == PIMHE_OP_CADD ||
                             conversion_op(op))
                              ? 1u
                              : 2u;
    const uint32_t dsts = (op == PIMHE_OP_TENSOR || op == PIMHE_OP_TENSOR_SQ) ? 3u
                          : (op == PIMHE_OP_NTT || op == PIMHE_OP_INTT)      ? 0u
                                                                             : 1u;
    for (uint32_t s = 0; s < srcs; s++) {
        if (operand_overflows(cmd->src[s], cmd->count, c->n)) {
            return PIMHE_ERR_OPERAND;
        }
    }
    for (uint32_t d = 0; d < dsts; d++) {
        if (operand_overflows(cmd->dst[d], cmd->count, c->n)) {
            return PIMHE_ERR_OPERAND;
        }
    }
    if (op == PIMHE_OP_MULC || op == PIMHE_OP_CMAC || op == PIMHE_OP_CADD || op == PIMHE_OP_SUB_MULC ||
        conversion_op(op)) {
        COST(COST_DIV64);
        if (cmd->scalar >= c->q || cmd->scalar_shoup != (uint32_t)(((uint64_t)cmd->scalar << 32) / c->q)) {
            return PIMHE_ERR_SCALAR;
        }
    }
    if (conversion_op(op)) {
        const uint32_t status = conversion_check(c);
        if (status != PIMHE_STATUS_OK) {
            return status;
        }
    }
    if (op == PIMHE_OP_AUTOMORPHISM) {
        COST(4 * COST_ALU);
        if ((cmd->scalar & 1u) == 0u || cmd->scalar >= 2u * c->n) {
            return PIMHE_ERR_GALOIS;
        }
        if (operands_overlap(cmd->src[0], cmd->dst[0], cmd->count, c->n)) {
            return PIMHE_ERR_ALIAS;
        }
    } else {
        COST(COST_STORE);
        c->bitrev_ready = 0; /* the command overwrites the work area */
    }
    const int best = c->variant == PIMHE_VARIANT_BEST;
    switch (op) {
    case PIMHE_OP_NTT:
        KERNEL_PHASE("ntt");
        transform_command(c, cmd, 0, best);
        break;
    case PIMHE_OP_INTT:
        KERNEL_PHASE("intt");
        transform_command(c, cmd, 1, best);
        break;
    case PIMHE_OP_AUTOMORPHISM:
        KERNEL_PHASE("automorphism");
        automorphism_command(c);
        break;
    case PIMHE_OP_TENSOR_SQ:
        KERNEL_PHASE("tensor_sq");
        ew_command(c, op);
        break;
    case PIMHE_OP_CMAC:
        KERNEL_PHASE("cmac");
        ew_command(c, op);
        break;
    case PIMHE_OP_CADD:
        KERNEL_PHASE("cadd");
        COST(COST_ALU + COST_BRANCH);
        if (!(cmd->flags & PIMHE_FLAG_NTT_FORM) && cmd->dst[0] == cmd->src[0]) {
            cadd_coefficient_in_place(c);
        } else {
            ew_command(c, op);
        }
        break;
    case PIMHE_OP_SUB_MULC:
        KERNEL_PHASE("sub_mulc");
        ew_command(c, op);
        break;
    case PIMHE_OP_BCONV:
        KERNEL_PHASE("bconv");
        ew_command(c, op);
        break;
    case PIMHE_OP_DIVIDE_LAST:
        KERNEL_PHASE("divide_last");
        ew_command(c, op);
        break;
    default:
        KERNEL_PHASE(op == PIMHE_OP_ADD    ? "add"
                     : op == PIMHE_OP_SUB  ? "sub"
                     : op == PIMHE_OP_MUL  ? "mul"
                     : op == PIMHE_OP_MAC  ? "mac"
                     : op == PIMHE_OP_MULC ? "mulc"
                                           : "tensor");
        ew_command(c, op);
        break;
    }
    return PIMHE_STATUS_OK;
}

int main(void) {
    const uint32_t t = me();
    if (t == 0u) {
        mem_reset();
    }
    barrier_wait(&pimhe_barrier);
    KERNEL_PHASE("setup");
    ctx_t *c = (ctx_t *)mem_alloc(sizeof(ctx_t));
    c->me = t;
    c->nt = NR_TASKLETS;
    c->hdr = (pimhe_header_t *)mem_alloc(sizeof(pimhe_header_t));
    c->cmd = (pimhe_command_t *)mem_alloc(sizeof(pimhe_command_t));
    COST(12 * COST_ALU + 6 * COST_STORE);

    dma_read(0, c->hdr, sizeof(pimhe_header_t));
    uint32_t status = setup(c, c->hdr);
    c->use_tables = 0;
    c->loaded = 0;
    c->tables = NULL;
    c->rotation = 0;
    c->deal_first = 0;
    c->deal_step = 1;
    c->bitrev_ready = 0;
    if (status == PIMHE_STATUS_OK && c->variant == PIMHE_VARIANT_BEST) {
        COST(3 * COST_ALU);
        c->use_tables = c->nt <= LARGE_BLOCK_MAX_TASKLETS && c->n >= TABLE_MIN_N;
    }
    const uint32_t block = c->use_tables                         ? TABLE_BLOCK_BYTES
                           : c->nt <= LARGE_BLOCK_MAX_TASKLETS ? BLOCK_BYTES_LARGE
                                                                : BLOCK_BYTES_SMALL;
    c->block_elems = block / 4u;
    if (c->use_tables) {
        /* twiddle batches of tb groups need 6 tb + 8 words (tw_bufs) */
        c->tb = c->block_elems / 32u;
        c->aux_words = 6u * c->tb + 8u;
    } else {
        c->tb = c->block_elems / 16u;
        c->aux_words = c->block_elems / 2u + 4u;
    }
    c->area_bytes = 4u * (c->block_elems + c->aux_words);
    if (c->use_tables) {
        /* The shared table region: tasklet 0 allocates it, then the tasklets allocate their
         * areas one after the other (one barrier per turn), so tasklet k's area lies at
         * tables + TABLE_BYTES + k * area_bytes and every tasklet finds the region from its
         * own area without any shared variable. The first barrier ends the allocations
         * above (contexts, headers, commands) on every tasklet. */
        barrier_wait(&pimhe_barrier);
        for (uint32_t k = 0; k < c->nt; k++) {
            COST(COST_LOOP);
            if (k == t) {
                if (t == 0u) {
                    (void)mem_alloc(TABLE_BYTES);
                }
                c->area = (uint32_t *)mem_alloc(c->area_bytes);
            }
            barrier_wait(&pimhe_barrier);
        }
        COST(2 * COST_ALU);
        c->tables = (uint32_t *)((uint8_t *)c->area - (size_t)t * c->area_bytes - TABLE_BYTES);
    } else {
        c->area = (uint32_t *)mem_alloc(c->area_bytes);
    }
    c->blk = c->area;
    c->aux = c->area + c->block_elems;

    if (status == PIMHE_STATUS_OK) {
        const uint32_t count = c->hdr->command_count, at = c->hdr->command_offset;
        for (uint32_t i = 0; i < count; i++) {
            COST(COST_LOOP + COST_ALU);
            KERNEL_PHASE("command");
            dma_read(at + i * (uint32_t)sizeof(pimhe_command_t), c->cmd, sizeof(pimhe_command_t));
            status = run_command(c);
            barrier_wait(&pimhe_barrier);
            if (status != PIMHE_STATUS_OK) {
                break;
            }
        }
    }
    if (t == 0u) {
        KERNEL_PHASE("status");
        c->hdr->status = status;
        /* command_count and status: one aligned 8-byte DMA at header offset 48. */
        dma_write(&c->hdr->command_count, (uint32_t)offsetof(pimhe_header_t, command_count), 8u);
    }
    return 0;
}
