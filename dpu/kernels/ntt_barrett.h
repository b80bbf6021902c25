/*
 * ntt_barrett.h: the barrett variant's NTT and inverse NTT (DRAMatic's method, arith_barrett.h):
 * radix-2 stages, one pass over MRAM per stage, every value fully reduced.
 *
 * Included by main.c (one translation unit, as UPMEM's build compiles it); ntt.h deals the
 * sub-polynomials of a command to the tasklets and calls bar_ntt / bar_intt.
 */
#ifndef PIMHE_NTT_BARRETT_H
#define PIMHE_NTT_BARRETT_H

#include <stdint.h>

#include "arith_barrett.h"
#include "context.h"
#include "cost.h"
#include "dma.h"

/* ------------------------------------------------------------------------------------------ */
/* barrett variant: DRAMatic's NTT                                                              */

/* Cooley-Tukey butterflies x[j], y[j] (j < len) with twiddle w; values < q. */
static void bar_ct_span(uint32_t *x, uint32_t *y, uint32_t len, uint32_t w, const bar_ctx_t *m) {
    const uint32_t q = m->q;
    for (uint32_t j = 0; j < len; j++) {
        COST(COST_LOOP + 2 * COST_LOAD + 2 * COST_STORE);
        const uint32_t u = x[j];
        const uint32_t v = bar_mulmod(y[j], w, m);
        x[j] = bar_addmod(u, v, q);
        y[j] = bar_submod(u, v, q);
    }
}

/* Gentleman-Sande butterflies; the last stage (last != 0) folds in N^-1: x' = (u + v) N^-1,
 * y' = (u - v) w N^-1 with w_last = w N^-1 precomputed. */
static void bar_gs_span(uint32_t *x, uint32_t *y, uint32_t len, uint32_t w, const ctx_t *c, int last) {
    const bar_ctx_t *m = &c->bar;
    const uint32_t q = m->q;
    if (!last) {
        for (uint32_t j = 0; j < len; j++) {
            COST(COST_LOOP + 2 * COST_LOAD + 2 * COST_STORE);
            const uint32_t u = x[j], v = y[j];
            x[j] = bar_addmod(u, v, q);
            y[j] = bar_mulmod(bar_submod(u, v, q), w, m);
        }
    } else {
        for (uint32_t j = 0; j < len; j++) {
            COST(COST_LOOP + 2 * COST_LOAD + 2 * COST_STORE);
            const uint32_t u = x[j], v = y[j];
            x[j] = bar_mulmod(bar_addmod(u, v, q), c->bar_n_inv, m);
            y[j] = bar_mulmod(bar_submod(u, v, q), c->bar_last, m);
        }
    }
}

/* One radix-2 stage (groups, gap) over the polynomial at MRAM offset poly, streamed through the
 * block: either the x and y halves of one group, half a block each ("split"), or whole groups,
 * a block at a time ("block"). inverse selects GS butterflies and the inverse table. */
static void bar_stage(ctx_t *c, uint32_t poly, uint32_t groups, uint32_t gap, uint32_t tw_first, int inverse) {
    const uint32_t n = c->n;
    const uint32_t chunk = n < c->block_elems ? n : c->block_elems;
    const uint32_t half = chunk / 2u;
    const uint32_t table = inverse ? c->itw : c->tw;
    const int last = inverse && groups == 1u;
    uint32_t *x = c->blk;
    COST(6 * COST_ALU);
    if (gap >= half) {
        for (uint32_t i = 0; i < groups; i++) {
            COST(COST_LOOP + COST_LOAD + 2 * COST_ALU);
            const uint32_t w = *fetch_words(table, tw_first + i, 1u, c->aux);
            const uint32_t base = poly + 8u * i * gap;
            for (uint32_t j0 = 0; j0 < gap; j0 += half) {
                COST(COST_LOOP + 2 * COST_ALU);
                const uint32_t xo = base + 4u * j0, yo = xo + 4u * gap;
                dma_read(xo, x, 4u * half);
                dma_read(yo, x + half, 4u * half);
                if (inverse) {
                    bar_gs_span(x, x + half, half, w, c, last);
                } else {
                    bar_ct_span(x, x + half, half, w, &c->bar);
                }
                dma_write(x, xo, 4u * half);
                dma_write(x + half, yo, 4u * half);
            }
        }
    } else {
        const uint32_t per_chunk = chunk / (2u * gap);
        for (uint32_t b = 0; b < n / chunk; b++) {
            COST(COST_LOOP + 2 * COST_ALU);
            const uint32_t off = poly + 4u * b * chunk;
            dma_read(off, x, 4u * chunk);
            const uint32_t *tw = fetch_words(table, tw_first + b * per_chunk, per_chunk, c->aux);
            for (uint32_t g = 0; g < per_chunk; g++) {
                COST(COST_LOOP + COST_LOAD + COST_ALU);
                uint32_t *xs = x + 2u * g * gap;
                if (inverse) {
                    bar_gs_span(xs, xs + gap, gap, tw[g], c, last);
                } else {
                    bar_ct_span(xs, xs + gap, gap, tw[g], &c->bar);
                }
            }
            dma_write(x, off, 4u * chunk);
        }
    }
}

static void bar_ntt(ctx_t *c, uint32_t poly) {
    for (uint32_t groups = 1, gap = c->n / 2u; groups < c->n; groups <<= 1, gap >>= 1) {
        COST(COST_LOOP + COST_ALU);
        bar_stage(c, poly, groups, gap, groups, 0);
    }
}

static void bar_intt(ctx_t *c, uint32_t poly) {
    uint32_t next = 1;
    for (uint32_t groups = c->n / 2u, gap = 1; groups >= 1u; groups >>= 1, gap <<= 1) {
        COST(COST_LOOP + 2 * COST_ALU);
        bar_stage(c, poly, groups, gap, next, 1);
        next += groups;
    }
}

#endif /* PIMHE_NTT_BARRETT_H */
