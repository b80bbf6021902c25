/*
 * ntt_best.h: the best variant's NTT and inverse NTT (arith_best.h): Shoup twiddles with a
 * truncated quotient, lazy reduction, radix-4 (two stages per pass over MRAM) and, once a
 * stage's butterflies fit in a WRAM block, all remaining stages on the block; from N = 2048 (up
 * to 16 tasklets) the three stages with the fewest twiddles multiply through shared WRAM tables
 * (TABLE_*, context.h).
 *
 * Work items: a pass over MRAM is a list of items (a span of `len` butterflies of one group,
 * read, transformed, written back), and the WRAM phase a list of blocks. A tasklet transforming
 * a sub-polynomial alone takes every item in order (ctx deal_first = 0, deal_step = 1); for a
 * command of fewer sub-polynomials than tasklets, all tasklets transform each one together,
 * tasklet t taking items t, t + T, ... with a barrier after every pass (ntt.h), so a DPU holding
 * one polynomial per limb still keeps every tasklet busy.
 *
 * Not a standalone header: main.c includes it after BARRIER_INIT (load_tables and pass_done
 * wait on pimhe_barrier); ntt.h deals the sub-polynomials of a command to the tasklets and
 * calls best_ntt / best_intt.
 */
#ifndef PIMHE_NTT_BEST_H
#define PIMHE_NTT_BEST_H

#include <stdint.h>

#include <barrier.h>

#include "arith_best.h"
#include "context.h"
#include "cost.h"
#include "dma.h"

/* ------------------------------------------------------------------------------------------ */
/* best variant: lazy Shoup butterflies, radix-4, WRAM-resident blocks                          */

/* Radix-2 Cooley-Tukey on x[j], y[j], inputs in [0, 4q), outputs in [0, 4q) (or [0, q) when
 * final). Pairs of words move with one 64-bit ld/sd, so a butterfly costs one load and one
 * store; the loop runs once per two butterflies. */
static void best_ct2_span(uint32_t *x, uint32_t *y, uint32_t len, const best_tw_t *t, const best_ctx_t *m,
                          int final) {
    const uint32_t q2 = m->q2, q = m->q;
    COST(COST_BRANCH + COST_LOOP * ((len + 1u) / 2u) + len * (COST_LOAD + COST_STORE + 3 * COST_ALU));
    for (uint32_t j = 0; j < len; j++) {
        const uint32_t u = csub(x[j], q2);
        const uint32_t v = best_mulmod_lazy(y[j], t, m);
        uint32_t a = u + v, b = u + q2 - v;
        if (final) {
            a = csub(csub(a, q2), q);
            b = csub(csub(b, q2), q);
        }
        x[j] = a;
        y[j] = b;
    }
}

/* Radix-4 Cooley-Tukey: stage 1 pairs (a, c) and (b, d) with t1, stage 2 pairs (a, b) with t2
 * and (c, d) with t3. Four butterflies per unit: two ld and two sd (a/b and c/d words are
 * pairwise adjacent or the unit loop runs over pairs of j). */
static void best_ct4_span(uint32_t *a, uint32_t *b, uint32_t *cc, uint32_t *d, uint32_t len, const best_tw_t *t1,
                          const best_tw_t *t2, const best_tw_t *t3, const best_ctx_t *m, int final) {
    const uint32_t q2 = m->q2, q = m->q;
    COST(COST_BRANCH + COST_LOOP * ((len + 1u) / 2u) + len * (2 * COST_LOAD + 2 * COST_STORE + 12 * COST_ALU));
    for (uint32_t j = 0; j < len; j++) {
        const uint32_t A = csub(a[j], q2), B = csub(b[j], q2);
        const uint32_t vc = best_mulmod_lazy(cc[j], t1, m), vd = best_mulmod_lazy(d[j], t1, m);
        const uint32_t A1 = csub(A + vc, q2), C1 = csub(A + q2 - vc, q2);
        const uint32_t B1 = B + vd, D1 = B + q2 - vd;
        const uint32_t vb = best_mulmod_lazy(B1, t2, m), vd2 = best_mulmod_lazy(D1, t3, m);
        uint32_t A2 = A1 + vb, B2 = A1 + q2 - vb, C2 = C1 + vd2, D2 = C1 + q2 - vd2;
        if (final) {
            A2 = csub(csub(A2, q2), q);
            B2 = csub(csub(B2, q2), q);
            C2 = csub(csub(C2, q2), q);
            D2 = csub(csub(D2, q2), q);
        }
        a[j] = A2;
        b[j] = B2;
        cc[j] = C2;
        d[j] = D2;
    }
}

/* Radix-2 Gentleman-Sande, values in [0, 2q). last: the final stage, x' = (u + v) N^-1,
 * y' = (u - v) w N^-1, both reduced to [0, q). */
static void best_gs2_span(uint32_t *x, uint32_t *y, uint32_t len, const best_tw_t *t, const ctx_t *c, int last) {
    const best_ctx_t *m = &c->best;
    const uint32_t q2 = m->q2, q = m->q;
    COST(COST_BRANCH + COST_LOOP * ((len + 1u) / 2u) + len * (COST_LOAD + COST_STORE + 3 * COST_ALU));
    for (uint32_t j = 0; j < len; j++) {
        const uint32_t u = x[j], v = y[j];
        if (!last) {
            x[j] = csub(u + v, q2);
            y[j] = best_mulmod_lazy(u + q2 - v, t, m);
        } else {
            x[j] = csub(best_mulmod_lazy(u + v, &c->best_n_inv, m), q);
            y[j] = csub(best_mulmod_lazy(u + q2 - v, &c->best_last, m), q);
        }
    }
}

/* Radix-4 Gentleman-Sande: stage 1 pairs (a, b) with ta and (c, d) with tc, stage 2 pairs
 * (a, c) and (b, d) with t2 (or, when last, N^-1 and the scaled last twiddle). */
static void best_gs4_span(uint32_t *a, uint32_t *b, uint32_t *cc, uint32_t *d, uint32_t len, const best_tw_t *ta,
                          const best_tw_t *tc, const best_tw_t *t2, const ctx_t *c, int last) {
    const best_ctx_t *m = &c->best;
    const uint32_t q2 = m->q2, q = m->q;
    COST(COST_BRANCH + COST_LOOP * ((len + 1u) / 2u) + len * (2 * COST_LOAD + 2 * COST_STORE + 12 * COST_ALU));
    for (uint32_t j = 0; j < len; j++) {
        const uint32_t A = a[j], B = b[j], C = cc[j], D = d[j];
        const uint32_t A1 = csub(A + B, q2), B1 = best_mulmod_lazy(A + q2 - B, ta, m);
        const uint32_t C1 = csub(C + D, q2), D1 = best_mulmod_lazy(C + q2 - D, tc, m);
        if (!last) {
            a[j] = csub(A1 + C1, q2);
            cc[j] = best_mulmod_lazy(A1 + q2 - C1, t2, m);
            b[j] = csub(B1 + D1, q2);
            d[j] = best_mulmod_lazy(B1 + q2 - D1, t2, m);
        } else {
            a[j] = csub(best_mulmod_lazy(A1 + C1, &c->best_n_inv, m), q);
            cc[j] = csub(best_mulmod_lazy(A1 + q2 - C1, &c->best_last, m), q);
            b[j] = csub(best_mulmod_lazy(B1 + D1, &c->best_n_inv, m), q);
            d[j] = csub(best_mulmod_lazy(B1 + q2 - D1, &c->best_last, m), q);
        }
    }
}

/* Twiddle buffers in aux for one batch of tb groups: two small arrays (tb + 2 words) and two
 * large ones (2 tb + 2 words), all 8-aligned. */
typedef struct {
    uint32_t *small_w, *small_s, *large_w, *large_s;
} tw_bufs_t;

static tw_bufs_t tw_bufs(const ctx_t *c) {
    tw_bufs_t t;
    t.small_w = c->aux;
    t.small_s = c->aux + (c->tb + 2u);
    t.large_w = c->aux + 2u * (c->tb + 2u);
    t.large_s = t.large_w + (2u * c->tb + 2u);
    return t;
}

/* The end of a pass over MRAM: when the tasklets share a sub-polynomial, the next pass reads
 * what the others wrote. */
static void pass_done(const ctx_t *c) {
    if (c->deal_step > 1u) {
        barrier_wait(&pimhe_barrier);
    }
}

/* Item k of a pass of `per` items per group: its group and its first butterfly. Splitting
 * the index (a shift and a mask: per is a power of two) is charged only when tasklets share
 * the pass; alone, a tasklet walks groups and spans in two nested loops. */
static inline uint32_t item_group(const ctx_t *c, uint32_t k, uint32_t per) {
    if (c->deal_step > 1u) {
        COST(2 * COST_ALU);
    }
    return k / per;
}

/* The spans of one item (two for radix 2, four for radix 4), between MRAM offsets at[] and the
 * block's consecutive len-word buffers (a loop the compiler unrolls: one DMA per span). */
static void spans_read(const uint32_t *at, uint32_t spans, uint32_t *buf, uint32_t len) {
    for (uint32_t k = 0; k < spans; k++) {
        dma_read(at[k], buf + k * len, 4u * len);
    }
}

static void spans_write(const uint32_t *at, uint32_t spans, const uint32_t *buf, uint32_t len) {
    for (uint32_t k = 0; k < spans; k++) {
        dma_write(buf + k * len, at[k], 4u * len);
    }
}

/* Loads twiddle word `index` of a table and its Shoup constant (table + 4N), split. */
static best_tw_t best_fetch_one(const ctx_t *c, uint32_t table, uint32_t index) {
    COST(2 * COST_LOAD);
    const uint32_t w = *fetch_words(table, index, 1u, c->aux);
    const uint32_t s = *fetch_words(table + 4u * c->n, index, 1u, c->aux + 2);
    return best_tw(w, s);
}

/* Forward radix-2 stage (groups, gap >= block) streamed from MRAM, half a block per half. */
static void best_ct2_stream(ctx_t *c, uint32_t poly, uint32_t groups, uint32_t gap) {
    const uint32_t len = c->block_elems / 2u, per = gap / len;
    uint32_t *x = c->blk, *y = c->blk + len;
    uint32_t current = groups;
    best_tw_t t = best_tw(0, 0);
    for (uint32_t k = c->deal_first; k < groups * per; k += c->deal_step) {
        const uint32_t i = item_group(c, k, per), j0 = (k % per) * len;
        if (i != current) {
            COST(COST_LOOP + 2 * COST_ALU);
            t = best_fetch_one(c, c->tw, groups + i);
            current = i;
        }
        COST(COST_LOOP + 2 * COST_ALU);
        const uint32_t xo = poly + 8u * i * gap + 4u * j0;
        const uint32_t at[2] = {xo, xo + 4u * gap};
        spans_read(at, 2u, x, len);
        best_ct2_span(x, y, len, &t, &c->best, 0);
        spans_write(at, 2u, x, len);
    }
    pass_done(c);
}

/* Forward radix-4 pass over stages (groups, gap) and (2 groups, gap / 2), gap / 2 >= block,
 * streamed from MRAM: four quarter-streams of a quarter block each. */
static void best_ct4_stream(ctx_t *c, uint32_t poly, uint32_t groups, uint32_t gap) {
    const uint32_t len = c->block_elems / 4u, quarter = gap / 2u, per = quarter / len;
    uint32_t *a = c->blk, *b = a + len, *cc = b + len, *d = cc + len;
    uint32_t current = groups;
    best_tw_t t1 = best_tw(0, 0), t2 = t1, t3 = t1;
    for (uint32_t k = c->deal_first; k < groups * per; k += c->deal_step) {
        const uint32_t i = item_group(c, k, per), j0 = (k % per) * len;
        if (i != current) {
            COST(COST_LOOP + 2 * COST_ALU);
            t1 = best_fetch_one(c, c->tw, groups + i);
            t2 = best_fetch_one(c, c->tw, 2u * (groups + i));
            t3 = best_fetch_one(c, c->tw, 2u * (groups + i) + 1u);
            current = i;
        }
        COST(COST_LOOP + 4 * COST_ALU);
        const uint32_t oa = poly + 8u * i * gap + 4u * j0, oc = oa + 4u * gap;
        const uint32_t at[4] = {oa, oa + 4u * quarter, oc, oc + 4u * quarter};
        spans_read(at, 4u, a, len);
        best_ct4_span(a, b, cc, d, len, &t1, &t2, &t3, &c->best, 0);
        spans_write(at, 4u, a, len);
    }
    pass_done(c);
}

/* Forward radix-2 stage inside a WRAM block x (block index blk of size e). */
static void best_ct2_block(ctx_t *c, uint32_t *x, uint32_t blk, uint32_t e, uint32_t groups, uint32_t gap,
                           int final) {
    const uint32_t nb = e / (2u * gap), first = blk * nb;
    const tw_bufs_t tb = tw_bufs(c);
    for (uint32_t g0 = 0; g0 < nb; g0 += c->tb) {
        COST(COST_LOOP + 3 * COST_ALU);
        const uint32_t cnt = nb - g0 < c->tb ? nb - g0 : c->tb;
        const uint32_t *w = fetch_words(c->tw, groups + first + g0, cnt, tb.small_w);
        const uint32_t *s = fetch_words(c->tws, groups + first + g0, cnt, tb.small_s);
        for (uint32_t g = 0; g < cnt; g++) {
            COST(COST_LOOP + 2 * COST_LOAD + COST_ALU);
            const best_tw_t t = best_tw(w[g], s[g]);
            uint32_t *xs = x + 2u * (g0 + g) * gap;
            best_ct2_span(xs, xs + gap, gap, &t, &c->best, final);
        }
    }
}

/* Forward radix-4 pass (groups, gap), (2 groups, gap / 2) inside a WRAM block. */
static void best_ct4_block(ctx_t *c, uint32_t *x, uint32_t blk, uint32_t e, uint32_t groups, uint32_t gap,
                           int final) {
    const uint32_t nb = e / (2u * gap), first = blk * nb, quarter = gap / 2u;
    const tw_bufs_t tb = tw_bufs(c);
    for (uint32_t g0 = 0; g0 < nb; g0 += c->tb) {
        COST(COST_LOOP + 3 * COST_ALU);
        const uint32_t cnt = nb - g0 < c->tb ? nb - g0 : c->tb;
        const uint32_t *w1 = fetch_words(c->tw, groups + first + g0, cnt, tb.small_w);
        const uint32_t *s1 = fetch_words(c->tws, groups + first + g0, cnt, tb.small_s);
        const uint32_t *w23 = fetch_words(c->tw, 2u * (groups + first + g0), 2u * cnt, tb.large_w);
        const uint32_t *s23 = fetch_words(c->tws, 2u * (groups + first + g0), 2u * cnt, tb.large_s);
        for (uint32_t g = 0; g < cnt; g++) {
            /* w1, s1: one lw each; (w2, w3) and (s2, s3): one ld each. */
            COST(COST_LOOP + 4 * COST_LOAD + COST_ALU);
            const best_tw_t t1 = best_tw(w1[g], s1[g]);
            const best_tw_t t2 = best_tw(w23[2u * g], s23[2u * g]);
            const best_tw_t t3 = best_tw(w23[2u * g + 1u], s23[2u * g + 1u]);
            uint32_t *xs = x + 2u * (g0 + g) * gap;
            best_ct4_span(xs, xs + quarter, xs + gap, xs + gap + quarter, quarter, &t1, &t2, &t3, &c->best, final);
        }
    }
}

/* Loads table set `which` (1 forward, 2 inverse) into the shared WRAM region: 2048-byte DMAs
 * dealt round-robin to the tasklets, then a barrier. Every tasklet calls it at the same point
 * with the same arguments (the command loop's barrier separates it from the previous user). */
static void load_tables(ctx_t *c, uint32_t which) {
    COST(2 * COST_ALU + COST_BRANCH);
    if (c->loaded == which) {
        return;
    }
    const uint32_t src = (which == 1u ? c->tw : c->itw) + 8u * c->n;
    for (uint32_t k = c->me; k < TABLE_BYTES / DMA_MAX_BYTES; k += c->nt) {
        COST(COST_LOOP + 2 * COST_ALU);
        dma_read(src + k * DMA_MAX_BYTES, (uint8_t *)c->tables + k * DMA_MAX_BYTES, DMA_MAX_BYTES);
    }
    barrier_wait(&pimhe_barrier);
    c->loaded = which;
}

/* Forward radix-2 stage (groups <= 4, gap >= block) streamed from MRAM, multiplying through the
 * WRAM tables of twiddle groups + i (table groups - 1 + i). Inputs [0, 4q), outputs [0, 4q). */
static void best_ct2_table_stream(ctx_t *c, uint32_t poly, uint32_t groups, uint32_t gap) {
    const uint32_t len = c->block_elems / 2u, per = gap / len;
    const uint32_t q2 = c->best.q2;
    uint32_t *x = c->blk, *y = c->blk + len;
    uint32_t current = groups;
    const uint32_t *R = c->tables;
    for (uint32_t k = c->deal_first; k < groups * per; k += c->deal_step) {
        const uint32_t i = item_group(c, k, per), j0 = (k % per) * len;
        if (i != current) {
            COST(COST_LOOP + 3 * COST_ALU);
            R = c->tables + (groups - 1u + i) * TABLE_WORDS;
            current = i;
        }
        COST(COST_LOOP + 2 * COST_ALU);
        const uint32_t xo = poly + 8u * i * gap + 4u * j0;
        const uint32_t at[2] = {xo, xo + 4u * gap};
        spans_read(at, 2u, x, len);
        /* per pair of butterflies: a loop step, ld (x[j], x[j+1]), sd of both pairs; per
         * butterfly: u + v, u + 2q - v */
        COST((len / 2u) * (COST_LOOP + COST_LOAD + 2 * COST_STORE) + len * (3 * COST_ALU));
        for (uint32_t j = 0; j < len; j++) {
            const uint32_t u = csub(x[j], q2);
            const uint32_t v = csub(best_tmul_wram(&y[j], R), q2);
            x[j] = u + v;
            y[j] = u + q2 - v;
        }
        spans_write(at, 2u, x, len);
    }
    pass_done(c);
}

/* Inverse radix-2 stage (groups <= 4, gap >= block) through the WRAM tables of consumption slots
 * N - 2 groups + 1 + i (table 8 - 2 groups + i; the last one holds w N^-1). Values [0, 2q); the
 * last stage scales x' by N^-1 = 2^-log N (best_mul_pow2inv) and reduces both to [0, q). */
static void best_gs2_table_stream(ctx_t *c, uint32_t poly, uint32_t groups, uint32_t gap) {
    const uint32_t len = c->block_elems / 2u, per = gap / len;
    const uint32_t q2 = c->best.q2, q = c->best.q;
    const int last = groups == 1u;
    uint32_t *x = c->blk, *y = c->blk + len;
    uint32_t current = groups;
    const uint32_t *R = c->tables;
    for (uint32_t k = c->deal_first; k < groups * per; k += c->deal_step) {
        const uint32_t i = item_group(c, k, per), j0 = (k % per) * len;
        if (i != current) {
            COST(COST_LOOP + 3 * COST_ALU);
            R = c->tables + (8u - 2u * groups + i) * TABLE_WORDS;
            current = i;
        }
        COST(COST_LOOP + 2 * COST_ALU + COST_BRANCH);
        const uint32_t xo = poly + 8u * i * gap + 4u * j0;
        const uint32_t at[2] = {xo, xo + 4u * gap};
        spans_read(at, 2u, x, len);
        /* per pair: a loop step, ld of both pairs, sd of both pairs; per butterfly: u + v,
         * u + 2q - v */
        COST((len / 2u) * (COST_LOOP + 2 * COST_LOAD + 2 * COST_STORE) + len * (3 * COST_ALU));
        for (uint32_t j = 0; j < len; j++) {
            const uint32_t u = x[j], v = y[j];
            if (!last) {
                x[j] = csub(u + v, q2);
                y[j] = csub(best_tmul_reg(u + q2 - v, R), q2);
            } else {
                x[j] = csub(best_mul_pow2inv(u + v, &c->best), q);
                y[j] = csub(csub(best_tmul_reg(u + q2 - v, R), q2), q);
            }
        }
        spans_write(at, 2u, x, len);
    }
    pass_done(c);
}

static void best_ntt(ctx_t *c, uint32_t poly) {
    const uint32_t n = c->n;
    const uint32_t e = n < c->block_elems ? n : c->block_elems;
    uint32_t groups = 1, gap = n / 2u;
    if (c->use_tables) {
        for (uint32_t s = 0; s < TABLE_STAGES; s++) {
            COST(COST_LOOP + 2 * COST_ALU);
            best_ct2_table_stream(c, poly, groups, gap);
            groups <<= 1;
            gap >>= 1;
        }
    }
    /* Stages whose butterflies span more than a block: radix-4 passes over MRAM, then one
     * radix-2 pass if their number is odd. */
    while (gap >= e) {
        COST(COST_LOOP + 2 * COST_ALU);
        if (gap / 2u >= e) {
            best_ct4_stream(c, poly, groups, gap);
            groups <<= 2;
            gap >>= 2;
        } else {
            best_ct2_stream(c, poly, groups, gap);
            groups <<= 1;
            gap >>= 1;
        }
    }
    /* The rest, block by block in WRAM: a radix-2 stage first if their number is odd, then
     * radix-4 passes; the last pass also reduces to [0, q). */
    uint32_t stages = 0;
    for (uint32_t g = gap; g >= 1u; g >>= 1) {
        stages++;
    }
    COST(stages * COST_LOOP);
    for (uint32_t b = c->deal_first; b < n / e; b += c->deal_step) {
        COST(COST_LOOP + 4 * COST_ALU);
        const uint32_t off = poly + 4u * b * e;
        dma_read(off, c->blk, 4u * e);
        uint32_t gr = groups, gp = gap, left = stages;
        if (left & 1u) {
            best_ct2_block(c, c->blk, b, e, gr, gp, left == 1u);
            gr <<= 1;
            gp >>= 1;
            left--;
        }
        while (left >= 2u) {
            COST(COST_LOOP);
            best_ct4_block(c, c->blk, b, e, gr, gp, left == 2u);
            gr <<= 2;
            gp >>= 2;
            left -= 2u;
        }
        dma_write(c->blk, off, 4u * e);
    }
}

/* Inverse radix-2 stage (groups, gap >= block) streamed from MRAM. */
static void best_gs2_stream(ctx_t *c, uint32_t poly, uint32_t groups, uint32_t gap) {
    const uint32_t len = c->block_elems / 2u, per = gap / len;
    const uint32_t next = c->n - 2u * groups + 1u;
    const int last = groups == 1u;
    uint32_t *x = c->blk, *y = c->blk + len;
    uint32_t current = groups;
    best_tw_t t = best_tw(0, 0);
    for (uint32_t k = c->deal_first; k < groups * per; k += c->deal_step) {
        const uint32_t i = item_group(c, k, per), j0 = (k % per) * len;
        if (i != current) {
            COST(COST_LOOP + 2 * COST_ALU);
            t = best_fetch_one(c, c->itw, next + i);
            current = i;
        }
        COST(COST_LOOP + 2 * COST_ALU);
        const uint32_t xo = poly + 8u * i * gap + 4u * j0;
        const uint32_t at[2] = {xo, xo + 4u * gap};
        spans_read(at, 2u, x, len);
        best_gs2_span(x, y, len, &t, c, last);
        spans_write(at, 2u, x, len);
    }
    pass_done(c);
}

/* Inverse radix-4 pass over stages (groups, gap) and (groups / 2, 2 gap), gap >= block. */
static void best_gs4_stream(ctx_t *c, uint32_t poly, uint32_t groups, uint32_t gap) {
    const uint32_t len = c->block_elems / 4u, per = gap / len;
    const uint32_t next1 = c->n - 2u * groups + 1u, next2 = c->n - groups + 1u;
    const int last = groups == 2u;
    uint32_t *a = c->blk, *b = a + len, *cc = b + len, *d = cc + len;
    uint32_t current = groups;
    best_tw_t ta = best_tw(0, 0), tc = ta, t2 = ta;
    for (uint32_t k = c->deal_first; k < (groups / 2u) * per; k += c->deal_step) {
        const uint32_t i = item_group(c, k, per), j0 = (k % per) * len;
        if (i != current) {
            COST(COST_LOOP + 2 * COST_ALU);
            ta = best_fetch_one(c, c->itw, next1 + 2u * i);
            tc = best_fetch_one(c, c->itw, next1 + 2u * i + 1u);
            t2 = ta;
            if (!last) {
                t2 = best_fetch_one(c, c->itw, next2 + i);
            }
            current = i;
        }
        COST(COST_LOOP + 4 * COST_ALU);
        const uint32_t oa = poly + 16u * i * gap + 4u * j0;
        const uint32_t at[4] = {oa, oa + 4u * gap, oa + 8u * gap, oa + 12u * gap};
        spans_read(at, 4u, a, len);
        best_gs4_span(a, b, cc, d, len, &ta, &tc, &t2, c, last);
        spans_write(at, 4u, a, len);
    }
    pass_done(c);
}

/* Inverse radix-2 stage inside a WRAM block. */
static void best_gs2_block(ctx_t *c, uint32_t *x, uint32_t blk, uint32_t e, uint32_t groups, uint32_t gap) {
    const uint32_t nb = e / (2u * gap), first = blk * nb;
    const uint32_t next = c->n - 2u * groups + 1u;
    const int last = groups == 1u;
    const tw_bufs_t tb = tw_bufs(c);
    for (uint32_t g0 = 0; g0 < nb; g0 += c->tb) {
        COST(COST_LOOP + 3 * COST_ALU);
        const uint32_t cnt = nb - g0 < c->tb ? nb - g0 : c->tb;
        const uint32_t *w = fetch_words(c->itw, next + first + g0, cnt, tb.small_w);
        const uint32_t *s = fetch_words(c->itws, next + first + g0, cnt, tb.small_s);
        for (uint32_t g = 0; g < cnt; g++) {
            COST(COST_LOOP + 2 * COST_LOAD + COST_ALU);
            const best_tw_t t = best_tw(w[g], s[g]);
            uint32_t *xs = x + 2u * (g0 + g) * gap;
            best_gs2_span(xs, xs + gap, gap, &t, c, last);
        }
    }
}

/* Inverse radix-4 pass (groups, gap), (groups / 2, 2 gap) inside a WRAM block. */
static void best_gs4_block(ctx_t *c, uint32_t *x, uint32_t blk, uint32_t e, uint32_t groups, uint32_t gap) {
    const uint32_t nb = e / (4u * gap), first = blk * nb; /* groups of the second stage */
    const uint32_t next1 = c->n - 2u * groups + 1u, next2 = c->n - groups + 1u;
    const int last = groups == 2u;
    const tw_bufs_t tb = tw_bufs(c);
    for (uint32_t g0 = 0; g0 < nb; g0 += c->tb) {
        COST(COST_LOOP + 3 * COST_ALU);
        const uint32_t cnt = nb - g0 < c->tb ? nb - g0 : c->tb;
        const uint32_t *w1 = fetch_words(c->itw, next1 + 2u * (first + g0), 2u * cnt, tb.large_w);
        const uint32_t *s1 = fetch_words(c->itws, next1 + 2u * (first + g0), 2u * cnt, tb.large_s);
        const uint32_t *w2 = w1, *s2 = s1;
        if (!last) {
            w2 = fetch_words(c->itw, next2 + first + g0, cnt, tb.small_w);
            s2 = fetch_words(c->itws, next2 + first + g0, cnt, tb.small_s);
        }
        for (uint32_t g = 0; g < cnt; g++) {
            COST(COST_LOOP + 4 * COST_LOAD + COST_ALU);
            const best_tw_t ta = best_tw(w1[2u * g], s1[2u * g]);
            const best_tw_t tc = best_tw(w1[2u * g + 1u], s1[2u * g + 1u]);
            const best_tw_t t2 = last ? ta : best_tw(w2[g], s2[g]);
            uint32_t *xs = x + 4u * (g0 + g) * gap;
            best_gs4_span(xs, xs + gap, xs + 2u * gap, xs + 3u * gap, gap, &ta, &tc, &t2, c, last);
        }
    }
}

static void best_intt(ctx_t *c, uint32_t poly) {
    const uint32_t n = c->n;
    const uint32_t e = n < c->block_elems ? n : c->block_elems;
    uint32_t stages = 0;
    for (uint32_t g = e / 2u; g >= 1u; g >>= 1) {
        stages++;
    }
    COST(stages * COST_LOOP);
    /* Stages whose butterflies fit a block, block by block: radix-4 passes, then one radix-2
     * stage if their number is odd. */
    for (uint32_t b = c->deal_first; b < n / e; b += c->deal_step) {
        COST(COST_LOOP + 4 * COST_ALU);
        const uint32_t off = poly + 4u * b * e;
        dma_read(off, c->blk, 4u * e);
        uint32_t gr = n / 2u, gp = 1, left = stages;
        while (left >= 2u) {
            COST(COST_LOOP);
            best_gs4_block(c, c->blk, b, e, gr, gp);
            gr >>= 2;
            gp <<= 2;
            left -= 2u;
        }
        if (left == 1u) {
            best_gs2_block(c, c->blk, b, e, gr, gp);
        }
        dma_write(c->blk, off, 4u * e);
    }
    pass_done(c);
    /* The remaining stages over MRAM; with tables, the last three (groups 4, 2, 1) through them. */
    const uint32_t stop = c->use_tables ? 1u << (TABLE_STAGES - 1u) : 0u;
    uint32_t groups = n / (2u * e), gap = e;
    while (groups > stop && gap < n) {
        COST(COST_LOOP + 2 * COST_ALU);
        if (groups >= 2u && groups / 4u >= stop) {
            best_gs4_stream(c, poly, groups, gap);
            groups >>= 2;
            gap <<= 2;
        } else {
            best_gs2_stream(c, poly, groups, gap);
            groups >>= 1;
            gap <<= 1;
        }
    }
    while (c->use_tables && groups >= 1u) {
        COST(COST_LOOP + 2 * COST_ALU);
        best_gs2_table_stream(c, poly, groups, gap);
        groups >>= 1;
        gap <<= 1;
    }
}

#endif /* PIMHE_NTT_BEST_H */
