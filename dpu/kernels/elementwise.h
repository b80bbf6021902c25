/*
 * elementwise.h: the element-wise commands ADD, SUB, MUL, MAC, MULC, TENSOR and, through
 * ew_fused.h, TENSOR_SQ, CMAC, CADD, SUB_MULC, and through conversion.h, BCONV and
 * DIVIDE_LAST. Fine-grained: every operand is cut into chunks
 * of at most 2048 bytes and the chunks are dealt round-robin to all tasklets. Both variants;
 * results fully reduced.
 *
 * Included by main.c (one translation unit, as UPMEM's build compiles it); run_command (main.c)
 * calls ew_command.
 */
#ifndef PIMHE_ELEMENTWISE_H
#define PIMHE_ELEMENTWISE_H

#include <stdint.h>

#include "arith_barrett.h"
#include "arith_best.h"
#include "context.h"
#include "cost.h"
#include "dma.h"
#include "pimhe_dpu.h"

/* ------------------------------------------------------------------------------------------ */
/* element-wise commands (fine-grained)                                                        */

/* Loads, stores and loop overhead of `len` elements (len is even): barrett does lw/sw per word
 * and one loop iteration per element; best moves pairs of words with ld/sd and iterates once
 * per pair. */
#define EW_COST(len, words_in, words_out, best)                                                        \
    ((best) ? ((len) / 2u) * ((words_in) * COST_LOAD + (words_out) * COST_STORE + COST_LOOP)           \
            : (len) * ((words_in) * COST_LOAD + (words_out) * COST_STORE + COST_LOOP))

static void ew_chunk(ctx_t *c, uint32_t op, uint32_t *buf0, uint32_t *buf1, uint32_t *buf2, uint32_t *buf3,
                     uint32_t len) {
    const uint32_t q = c->q;
    const int best = c->variant == PIMHE_VARIANT_BEST;
    const bar_ctx_t *bm = &c->bar;
    const best_ctx_t *m = &c->best;
    switch (op) {
    case PIMHE_OP_ADD:
        COST(EW_COST(len, 2u, 1u, best));
        for (uint32_t j = 0; j < len; j++) {
            buf0[j] = bar_addmod(buf0[j], buf1[j], q);
        }
        break;
    case PIMHE_OP_SUB:
        COST(EW_COST(len, 2u, 1u, best));
        for (uint32_t j = 0; j < len; j++) {
            buf0[j] = bar_submod(buf0[j], buf1[j], q);
        }
        break;
    case PIMHE_OP_MUL:
        /* Operands are residues (< q), so the product is below q^2: best_reduce_sq, its loop
         * specialized on the prime's form as TENSOR's. */
        COST(EW_COST(len, 2u, 1u, best) + (best ? COST_BRANCH : 0));
        for (uint32_t j = 0; j < len; j++) {
            buf0[j] = best ? best_reduce_sq(mul32_64(buf0[j], buf1[j]), m) : bar_mulmod(buf0[j], buf1[j], bm);
        }
        break;
    case PIMHE_OP_MAC:
        COST(EW_COST(len, 3u, 1u, best) + (best ? COST_BRANCH : 0));
        for (uint32_t j = 0; j < len; j++) {
            if (best) {
                /* a b + acc <= (q - 1)^2 + q - 1 < q^2: best_reduce_sq, as MUL. */
                COST(COST_ADD64);
                buf2[j] = best_reduce_sq(mul32_64(buf0[j], buf1[j]) + buf2[j], m);
            } else {
                buf2[j] = bar_addmod(buf2[j], bar_mulmod(buf0[j], buf1[j], bm), q);
            }
        }
        break;
    case PIMHE_OP_MULC: {
        COST(EW_COST(len, 1u, 1u, best));
        const uint32_t scalar = c->cmd->scalar;
        if (best) {
            COST(COST_BRANCH); /* the loop specialized on the prime's form */
        const best_tw_t s = best_tw(scalar, c->cmd->scalar_shoup);
            for (uint32_t j = 0; j < len; j++) {
                buf0[j] = csub(best_mulmod_lazy(buf0[j], &s, m), q);
            }
        } else {
            for (uint32_t j = 0; j < len; j++) {
                buf0[j] = bar_mulmod(buf0[j], scalar, bm);
            }
        }
        break;
    }
    case PIMHE_OP_TENSOR:
        COST(EW_COST(len, 4u, 3u, best) + (best ? COST_BRANCH : 0));
        for (uint32_t j = 0; j < len; j++) {
            const uint32_t a0 = buf0[j], a1 = buf1[j], b0 = buf2[j], b1 = buf3[j];
            if (best) {
                /* Karatsuba: a0 b1 + a1 b0 = (a0 + a1)(b0 + b1) - a0 b0 - a1 b1 (mod q), the
                 * sums reduced to [0, q) so that every product is < q^2 (best_reduce_sq). */
                COST(2 * COST_ALU);
                const uint32_t sa = csub(a0 + a1, q), sb = csub(b0 + b1, q);
                const uint32_t d0 = best_reduce_sq(mul32_64(a0, b0), m);
                const uint32_t d2 = best_reduce_sq(mul32_64(a1, b1), m);
                const uint32_t e = best_reduce_sq(mul32_64(sa, sb), m);
                buf0[j] = d0;
                buf1[j] = bar_submod(bar_submod(e, d0, q), d2, q);
                buf2[j] = d2;
            } else {
                buf0[j] = bar_mulmod(a0, b0, bm);
                buf1[j] = bar_addmod(bar_mulmod(a0, b1, bm), bar_mulmod(a1, b0, bm), q);
                buf2[j] = bar_mulmod(a1, b1, bm);
            }
        }
        break;
    default:
        break;
    }
}

#include "ew_fused.h"   /* TENSOR_SQ, CMAC, CADD, SUB_MULC: uses the definitions above */
#include "conversion.h" /* BCONV, DIVIDE_LAST: likewise */

/* Runs element-wise `op` over `total` words of each operand (raw_poly.h's RAW_ADD and RAW_MUL
 * run ADD and MUL over a coefficient range this way). With `spread`, chunks are halved (down
 * to 2 words) until every tasklet gets one: a short range then still keeps all tasklets busy. */
static void ew_words(ctx_t *c, uint32_t op, uint32_t total, int spread) {
    const pimhe_command_t *cmd = c->cmd;
    const int fused = ew_fused_op(op), conversion = conversion_op(op);
    const uint32_t nbuf = fused                   ? ew_fused_buffers(op)
                          : conversion            ? conversion_buffers(op)
                          : op == PIMHE_OP_MULC   ? 1u
                          : op == PIMHE_OP_MAC    ? 3u
                          : op == PIMHE_OP_TENSOR ? 4u
                                                  : 2u;
    uint32_t chunk = DMA_MAX_BYTES / 4u;
    while (chunk * 4u * nbuf > c->area_bytes) {
        chunk >>= 1;
    }
    /* A broadcast second operand is read at the same position of its single sub-polynomial
     * for every sub-polynomial; chunks must then not cross a sub-polynomial boundary (both are
     * powers of two, so capping the chunk at N suffices). */
    const uint32_t broadcast = cmd->flags & PIMHE_FLAG_BROADCAST_SRC1;
    if (broadcast && chunk > c->n) {
        chunk = c->n;
    }
    while (spread && chunk > 2u && (total + chunk - 1u) / chunk < c->nt) {
        COST(COST_LOOP + 3 * COST_ALU);
        chunk >>= 1;
    }
    COST(10 * COST_ALU);
    uint32_t *buf[4];
    for (uint32_t k = 0; k < 4u; k++) {
        buf[k] = c->area + (k < nbuf ? k : 0u) * chunk;
    }
    const uint32_t chunks = (total + chunk - 1u) / chunk;
    for (uint32_t k = c->me; k < chunks; k += c->nt) {
        COST(COST_LOOP + 4 * COST_ALU);
        const uint32_t first = k * chunk;
        const uint32_t len = total - first < chunk ? total - first : chunk;
        const uint32_t bytes = 4u * len, at = 4u * first;
        const uint32_t at1 = broadcast ? 4u * (first & (c->n - 1u)) : at;
        COST(2 * COST_ALU);
        switch (op) {
        case PIMHE_OP_MULC:
        case PIMHE_OP_CADD:
        case PIMHE_OP_DIVIDE_LAST:
            dma_read(cmd->src[0] + at, buf[0], bytes);
            break;
        case PIMHE_OP_BCONV:
            dma_read(cmd->src[0] + at, buf[0], bytes);
            if (cmd->flags & PIMHE_FLAG_ACCUMULATE) {
                dma_read(cmd->dst[0] + at, buf[1], bytes);
            }
            break;
        case PIMHE_OP_TENSOR_SQ:
            dma_read(cmd->src[0] + at, buf[0], bytes);
            dma_read(cmd->src[1] + at, buf[1], bytes);
            break;
        case PIMHE_OP_CMAC:
            dma_read(cmd->src[0] + at, buf[0], bytes);
            dma_read(cmd->dst[0] + at, buf[1], bytes);
            break;
        case PIMHE_OP_MAC:
            dma_read(cmd->src[0] + at, buf[0], bytes);
            dma_read(cmd->src[1] + at1, buf[1], bytes);
            dma_read(cmd->dst[0] + at, buf[2], bytes);
            break;
        case PIMHE_OP_TENSOR:
            for (uint32_t s = 0; s < 4u; s++) {
                dma_read(cmd->src[s] + at, buf[s], bytes);
            }
            break;
        default:
            dma_read(cmd->src[0] + at, buf[0], bytes);
            dma_read(cmd->src[1] + at1, buf[1], bytes);
            break;
        }
        if (fused) {
            ew_fused_chunk(c, op, buf[0], buf[1], buf[2], len, first);
        } else if (conversion) {
            conversion_chunk(c, op, buf[0], buf[1], len);
        } else {
            ew_chunk(c, op, buf[0], buf[1], buf[2], buf[3], len);
        }
        switch (op) {
        case PIMHE_OP_MAC:
            dma_write(buf[2], cmd->dst[0] + at, bytes);
            break;
        case PIMHE_OP_CMAC:
        case PIMHE_OP_BCONV:
            dma_write(buf[1], cmd->dst[0] + at, bytes);
            break;
        case PIMHE_OP_TENSOR:
        case PIMHE_OP_TENSOR_SQ:
            for (uint32_t s = 0; s < 3u; s++) {
                dma_write(buf[s], cmd->dst[s] + at, bytes);
            }
            break;
        default:
            dma_write(buf[0], cmd->dst[0] + at, bytes);
            break;
        }
    }
}

/* Runs element-wise `op` over the command's `count` sub-polynomials of N words. */
static void ew_command(ctx_t *c, uint32_t op) {
    ew_words(c, op, c->cmd->count * c->n, 0);
}

#endif /* PIMHE_ELEMENTWISE_H */
