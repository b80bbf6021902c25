/*
 * raw_poly.h: raw polynomial operations in Z_q[x]/(x^n + 1) over one polynomial spread across
 * DPUs by coefficient ranges (MHY+, shared/seeds/001_*, section IV-A): RAW_ADD, RAW_MUL and
 * RAW_CONV (pimhe_dpu.h has their operands). Unlike the HE commands, `count` counts words, not
 * sub-polynomials of N words, and n (RAW_CONV's polynomial length) is not the header's ring
 * degree: the header only supplies q. Both variants; results fully reduced.
 *
 *  - RAW_ADD and RAW_MUL are ADD and MUL over `count` words (elementwise.h's ew_words):
 *    fine-grained, chunks of at most 2048 bytes, fewer words where that gives every tasklet
 *    one, dealt round-robin to the tasklets.
 *  - RAW_CONV, the textbook negacyclic product, output coefficients [lo, lo + count):
 *        c_k = sum_{i <= k} a_i b_{k-i} - sum_{i > k} a_i b_{n+k-i}   (mod q)
 *    n^2 products in all, `count * n` on this DPU. The output range is cut into chunks of
 *    L = `scalar` words (the host's choice: small enough that every tasklet gets a chunk,
 *    raw_poly::conv_chunk_words; even, at most A) dealt round-robin to the tasklets; for each
 *    chunk a tasklet streams a in blocks of A words (raw_conv_block: at most RAW_BLOCK and
 *    n / 2) and, per block, the window of b the block meets,
 *    b[(k0 - i0 - A + w) mod n] for w < len + A (at most one wrap, since len + A <= n).
 *    Every index in the window and every DMA is even, so each DMA is 8-aligned.
 *
 * WRAM: a block (A words), the window (len + A <= 2A words) and the chunk's sums (len <= A
 * words) in the tasklet's work area: at most 4A words.
 *
 * Included by main.c after elementwise.h; run_command calls raw_poly_command.
 */
#ifndef PIMHE_RAW_POLY_H
#define PIMHE_RAW_POLY_H

#include <stdint.h>

#include "arith_barrett.h"
#include "arith_best.h"
#include "context.h"
#include "cost.h"
#include "dma.h"
#include "pimhe_dpu.h"

/* Longest a-block of RAW_CONV, in words. */
#define RAW_BLOCK 128u

/* RAW_CONV's a-block length for polynomial length n: RAW_BLOCK, halved until a block, its
 * window (at most two blocks) and the sums (at most a block) fit the tasklet's work area
 * (24 tasklets have a smaller one, main.c), and at most n / 2 so that a window wraps at most
 * once. The host's raw_poly::conv_block_words mirrors it. */
static uint32_t raw_conv_block(const ctx_t *c, uint32_t n) {
    uint32_t block = RAW_BLOCK;
    COST(4 * COST_ALU);
    while (16u * block > c->area_bytes || block > n / 2u) {
        COST(COST_LOOP + COST_ALU);
        block >>= 1;
    }
    return block;
}

/* a b mod q, fully reduced, in the launch's variant (as MUL). */
static inline uint32_t raw_mulmod(const ctx_t *c, uint32_t a, uint32_t b, int best) {
    return best ? best_reduce(mul32_64(a, b), &c->best) : bar_mulmod(a, b, &c->bar);
}

/* Reads words [first, first + words) of the polynomial of length n at MRAM offset `poly`,
 * wrapping at n, into buf: at most two DMAs of at most DMA_MAX_BYTES each (words <= n and
 * 4 words <= DMA_MAX_BYTES; first and words even). */
static void raw_read_wrapped(uint32_t poly, uint32_t n, uint32_t first, uint32_t words, uint32_t *buf) {
    COST(4 * COST_ALU + COST_BRANCH);
    const uint32_t head = n - first < words ? n - first : words;
    dma_read(poly + 4u * first, buf, 4u * head);
    if (head < words) {
        dma_read(poly, buf + head, 4u * (words - head));
    }
}

/* One output chunk of RAW_CONV: c_k for k in [k0, k0 + len), written to dst, a streamed in
 * blocks of `block` words. WRAM: a block, the window (len + block words) and the sums (len). */
static void raw_conv_chunk(ctx_t *c, uint32_t k0, uint32_t len, uint32_t block, uint32_t at, int best) {
    const pimhe_command_t *cmd = c->cmd;
    const uint32_t n = cmd->src[3], q = c->q;
    uint32_t *a = c->area, *window = c->area + block, *sums = c->area + 2u * block + len;
    COST(8 * COST_ALU + len * (COST_STORE + COST_LOOP));
    for (uint32_t j = 0; j < len; j++) {
        sums[j] = 0;
    }
    for (uint32_t i0 = 0; i0 < n; i0 += block) {
        COST(COST_LOOP + 3 * COST_ALU);
        dma_read(cmd->src[0] + 4u * i0, a, 4u * block);
        const uint32_t first = (k0 + 2u * n - i0 - block) & (n - 1u);
        raw_read_wrapped(cmd->src[1], n, first, len + block, window);
        for (uint32_t j = 0; j < len; j++) {
            /* Terms with i <= k (positive) are i - i0 < split; the rest wrap (negative). */
            const uint32_t k = k0 + j;
            const uint32_t split = k < i0 ? 0u : (k - i0 + 1u < block ? k - i0 + 1u : block);
            const uint32_t *w = window + j + block; /* w[-(i - i0)] = b_{(k - i) mod n} */
            uint32_t sum = sums[j];
            COST(COST_LOOP + 6 * COST_ALU + COST_LOAD + COST_STORE);
            for (uint32_t i = 0; i < split; i++) {
                COST(2 * COST_LOAD + COST_LOOP);
                sum = bar_addmod(sum, raw_mulmod(c, a[i], w[-(int32_t)i], best), q);
            }
            for (uint32_t i = split; i < block; i++) {
                COST(2 * COST_LOAD + COST_LOOP);
                sum = bar_submod(sum, raw_mulmod(c, a[i], w[-(int32_t)i], best), q);
            }
            sums[j] = sum;
        }
    }
    dma_write(sums, cmd->dst[0] + at, 4u * len);
}

/* The command's operands are sound: count and (RAW_CONV) lo even, n a power of two in
 * [4, 2^30), lo + count <= n, no flags, every operand inside the 32-bit MRAM address space. */
static uint32_t raw_poly_check(const ctx_t *c) {
    const pimhe_command_t *cmd = c->cmd;
    const uint32_t op = cmd->opcode;
    COST(16 * COST_ALU);
    if ((cmd->count & 1u) != 0u || cmd->flags != 0u) {
        return PIMHE_ERR_OPERAND;
    }
    uint64_t src_words = cmd->count;
    if (op == PIMHE_OP_RAW_CONV) {
        const uint32_t n = cmd->src[3], lo = cmd->src[2];
        if (n < 4u || n >= (1u << 30) || (n & (n - 1u)) != 0u || (lo & 1u) != 0u ||
            (uint64_t)lo + cmd->count > n) {
            return PIMHE_ERR_OPERAND;
        }
        src_words = n;
    }
    const uint64_t limit = 0x100000000ull;
    if ((uint64_t)cmd->src[0] + 4u * src_words > limit || (uint64_t)cmd->src[1] + 4u * src_words > limit ||
        (uint64_t)cmd->dst[0] + 4u * (uint64_t)cmd->count > limit) {
        return PIMHE_ERR_OPERAND;
    }
    return PIMHE_STATUS_OK;
}

/* RAW_ADD, RAW_MUL or RAW_CONV: the command's status. */
static uint32_t raw_poly_command(ctx_t *c) {
    const uint32_t status = raw_poly_check(c);
    if (status != PIMHE_STATUS_OK) {
        return status;
    }
    const pimhe_command_t *cmd = c->cmd;
    const int best = c->variant == PIMHE_VARIANT_BEST;
    COST(2 * COST_ALU + 2 * COST_BRANCH);
    switch (cmd->opcode) {
    case PIMHE_OP_RAW_ADD:
        KERNEL_PHASE("raw_add");
        ew_words(c, PIMHE_OP_ADD, cmd->count, 1);
        break;
    case PIMHE_OP_RAW_MUL:
        KERNEL_PHASE("raw_mul");
        ew_words(c, PIMHE_OP_MUL, cmd->count, 1);
        break;
    default: {
        KERNEL_PHASE("raw_conv");
        const uint32_t block = raw_conv_block(c, cmd->src[3]), unit = cmd->scalar;
        if (unit < 2u || unit > block || (unit & 1u) != 0u) {
            return PIMHE_ERR_OPERAND;
        }
        for (uint32_t chunk = c->me; chunk * unit < cmd->count; chunk += c->nt) {
            COST(COST_LOOP + 4 * COST_ALU);
            const uint32_t first = chunk * unit;
            const uint32_t len = cmd->count - first < unit ? cmd->count - first : unit;
            raw_conv_chunk(c, cmd->src[2] + first, len, block, 4u * first, best);
        }
        break;
    }
    }
    return PIMHE_STATUS_OK;
}

#endif /* PIMHE_RAW_POLY_H */
