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
 *    A sub-polynomial of up to 32768 words does not fit WRAM, so each transform streams through
 *    a per-tasklet WRAM block with DMAs of at most 2048 bytes.
 *  - Element-wise operations are fine-grained: every operand is cut into chunks of at most
 *    2048 bytes and the chunks are dealt round-robin to all tasklets.
 *    The fused element-wise kernels (TENSOR_SQ, CMAC, CADD, SUB_MULC: Anaheim's TensorSq,
 *    CAccum and ModDownEp) are in ew_fused.h and go the same way.
 *  - AUTOMORPHISM is fine-grained too: the output blocks of all sub-polynomials are dealt
 *    round-robin; each block is one gathered read in NTT form, one read per word in coefficient
 *    form (see "automorphism" below for why).
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

#define DMA_MAX_BYTES 2048u
#define BLOCK_BYTES_LARGE 2048u
#define BLOCK_BYTES_SMALL 1024u
#define LARGE_BLOCK_MAX_TASKLETS 16u
/* best, table stages: the first three forward and last three inverse stages (7 distinct
 * twiddles each) multiply through shared WRAM tables of 4 x 256 words per twiddle (28 KiB),
 * which the host writes after each twiddle table's Shoup constants (twiddle_offset + 8N,
 * inv_twiddle_offset + 8N). The per-tasklet block shrinks to 1 KiB to make room; the three
 * table stages must stream from MRAM (N / 8 >= block), hence N >= 2048. */
#define TABLE_STAGES 3u
#define TABLE_COUNT 7u
#define TABLE_WORDS 1024u
#define TABLE_BYTES (TABLE_COUNT * TABLE_WORDS * 4u)
#define TABLE_MIN_N 2048u
#define TABLE_BLOCK_BYTES 1024u

typedef struct {
    uint32_t me, nt;
    pimhe_header_t *hdr;
    pimhe_command_t *cmd;
    uint32_t *area;       /* block_elems + aux_words words */
    uint32_t *blk;        /* = area: the data block */
    uint32_t *aux;        /* = area + block_elems: twiddle buffers */
    uint32_t block_elems; /* BLOCK / 4 */
    uint32_t aux_words;   /* block_elems / 2 + 4 */
    uint32_t area_bytes;
    uint32_t tb;          /* best: groups per twiddle batch (block_elems / 16) */
    uint32_t n, log_n, q, variant;
    uint32_t tw, tws, itw, itws; /* MRAM offsets of the four tables */
    bar_ctx_t bar;
    best_ctx_t best;
    uint32_t use_tables;  /* best, N >= TABLE_MIN_N, <= 16 tasklets: table stages (arith_best.h) */
    uint32_t loaded;      /* which table set is in WRAM: 0 none, 1 forward, 2 inverse */
    uint32_t *tables;     /* the shared WRAM table region (TABLE_BYTES), all tasklets */
    uint32_t last_ready;  /* the INTT's scaled last twiddle has been derived */
    uint32_t rotation;    /* sub-polynomials dealt so far by NTT/INTT commands, mod nt: each
                           * command continues the round-robin where the last one stopped, so
                           * a list of commands is as balanced as one long command */
    uint32_t bar_n_inv, bar_last;
    best_tw_t best_n_inv, best_last;
    uint32_t bitrev_ready; /* AUTOMORPHISM's bit-reversal table is in the work area (any other
                            * command overwrites it) */
} ctx_t;

/* ------------------------------------------------------------------------------------------ */
/* MRAM access                                                                                 */

static inline __mram_ptr void *mram_at(uint32_t offset) {
    return (__mram_ptr void *)((uintptr_t)DPU_MRAM_HEAP_POINTER + offset);
}

static inline void dma_read(uint32_t offset, void *wram, uint32_t bytes) {
    mram_read(mram_at(offset), wram, bytes);
}

static inline void dma_write(const void *wram, uint32_t offset, uint32_t bytes) {
    mram_write(wram, mram_at(offset), bytes);
}

/* Reads words [first, first + count) of the table at MRAM offset `table` into buf and returns
 * a pointer to word `first`. DMAs need 8-byte granularity, so the read is widened to even word
 * bounds: buf needs count + 2 words. */
static const uint32_t *fetch_words(uint32_t table, uint32_t first, uint32_t count, uint32_t *buf) {
    COST(4 * COST_ALU);
    const uint32_t lo = first & ~1u;
    const uint32_t hi = (first + count + 1u) & ~1u;
    const uint32_t bytes = (hi - lo) * 4u;
    for (uint32_t done = 0; done < bytes; done += DMA_MAX_BYTES) {
        COST(COST_LOOP + COST_ALU);
        const uint32_t len = bytes - done < DMA_MAX_BYTES ? bytes - done : DMA_MAX_BYTES;
        dma_read(table + lo * 4u + done, (uint8_t *)buf + done, len);
    }
    return buf + (first - lo);
}

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

/* Loads twiddle word `index` of a table and its Shoup constant (table + 4N), split. */
static best_tw_t best_fetch_one(const ctx_t *c, uint32_t table, uint32_t index) {
    COST(2 * COST_LOAD);
    const uint32_t w = *fetch_words(table, index, 1u, c->aux);
    const uint32_t s = *fetch_words(table + 4u * c->n, index, 1u, c->aux + 2);
    return best_tw(w, s);
}

/* Forward radix-2 stage (groups, gap >= block) streamed from MRAM, half a block per half. */
static void best_ct2_stream(ctx_t *c, uint32_t poly, uint32_t groups, uint32_t gap) {
    const uint32_t len = c->block_elems / 2u;
    uint32_t *x = c->blk, *y = c->blk + len;
    for (uint32_t i = 0; i < groups; i++) {
        COST(COST_LOOP + 2 * COST_ALU);
        const best_tw_t t = best_fetch_one(c, c->tw, groups + i);
        const uint32_t base = poly + 8u * i * gap;
        for (uint32_t j0 = 0; j0 < gap; j0 += len) {
            COST(COST_LOOP + 2 * COST_ALU);
            const uint32_t xo = base + 4u * j0, yo = xo + 4u * gap;
            dma_read(xo, x, 4u * len);
            dma_read(yo, y, 4u * len);
            best_ct2_span(x, y, len, &t, &c->best, 0);
            dma_write(x, xo, 4u * len);
            dma_write(y, yo, 4u * len);
        }
    }
}

/* Forward radix-4 pass over stages (groups, gap) and (2 groups, gap / 2), gap / 2 >= block,
 * streamed from MRAM: four quarter-streams of a quarter block each. */
static void best_ct4_stream(ctx_t *c, uint32_t poly, uint32_t groups, uint32_t gap) {
    const uint32_t len = c->block_elems / 4u, quarter = gap / 2u;
    uint32_t *a = c->blk, *b = a + len, *cc = b + len, *d = cc + len;
    for (uint32_t i = 0; i < groups; i++) {
        COST(COST_LOOP + 2 * COST_ALU);
        const best_tw_t t1 = best_fetch_one(c, c->tw, groups + i);
        const best_tw_t t2 = best_fetch_one(c, c->tw, 2u * (groups + i));
        const best_tw_t t3 = best_fetch_one(c, c->tw, 2u * (groups + i) + 1u);
        const uint32_t base = poly + 8u * i * gap;
        for (uint32_t j0 = 0; j0 < quarter; j0 += len) {
            COST(COST_LOOP + 4 * COST_ALU);
            const uint32_t oa = base + 4u * j0, ob = oa + 4u * quarter, oc = oa + 4u * gap, od = oc + 4u * quarter;
            dma_read(oa, a, 4u * len);
            dma_read(ob, b, 4u * len);
            dma_read(oc, cc, 4u * len);
            dma_read(od, d, 4u * len);
            best_ct4_span(a, b, cc, d, len, &t1, &t2, &t3, &c->best, 0);
            dma_write(a, oa, 4u * len);
            dma_write(b, ob, 4u * len);
            dma_write(cc, oc, 4u * len);
            dma_write(d, od, 4u * len);
        }
    }
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
    const uint32_t len = c->block_elems / 2u;
    const uint32_t q2 = c->best.q2;
    uint32_t *x = c->blk, *y = c->blk + len;
    for (uint32_t i = 0; i < groups; i++) {
        COST(COST_LOOP + 3 * COST_ALU);
        const uint32_t *R = c->tables + (groups - 1u + i) * TABLE_WORDS;
        const uint32_t base = poly + 8u * i * gap;
        for (uint32_t j0 = 0; j0 < gap; j0 += len) {
            COST(COST_LOOP + 2 * COST_ALU);
            const uint32_t xo = base + 4u * j0, yo = xo + 4u * gap;
            dma_read(xo, x, 4u * len);
            dma_read(yo, y, 4u * len);
            /* per pair of butterflies: a loop step, ld (x[j], x[j+1]), sd of both pairs; per
             * butterfly: u + v, u + 2q - v */
            COST((len / 2u) * (COST_LOOP + COST_LOAD + 2 * COST_STORE) + len * (3 * COST_ALU));
            for (uint32_t j = 0; j < len; j++) {
                const uint32_t u = csub(x[j], q2);
                const uint32_t v = csub(best_tmul_wram(&y[j], R), q2);
                x[j] = u + v;
                y[j] = u + q2 - v;
            }
            dma_write(x, xo, 4u * len);
            dma_write(y, yo, 4u * len);
        }
    }
}

/* Inverse radix-2 stage (groups <= 4, gap >= block) through the WRAM tables of consumption slots
 * N - 2 groups + 1 + i (table 8 - 2 groups + i; the last one holds w N^-1). Values [0, 2q); the
 * last stage scales x' by N^-1 = 2^-log N (best_mul_pow2inv) and reduces both to [0, q). */
static void best_gs2_table_stream(ctx_t *c, uint32_t poly, uint32_t groups, uint32_t gap) {
    const uint32_t len = c->block_elems / 2u;
    const uint32_t q2 = c->best.q2, q = c->best.q;
    const int last = groups == 1u;
    uint32_t *x = c->blk, *y = c->blk + len;
    for (uint32_t i = 0; i < groups; i++) {
        COST(COST_LOOP + 3 * COST_ALU);
        const uint32_t *R = c->tables + (8u - 2u * groups + i) * TABLE_WORDS;
        const uint32_t base = poly + 8u * i * gap;
        for (uint32_t j0 = 0; j0 < gap; j0 += len) {
            COST(COST_LOOP + 2 * COST_ALU + COST_BRANCH);
            const uint32_t xo = base + 4u * j0, yo = xo + 4u * gap;
            dma_read(xo, x, 4u * len);
            dma_read(yo, y, 4u * len);
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
            dma_write(x, xo, 4u * len);
            dma_write(y, yo, 4u * len);
        }
    }
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
    for (uint32_t b = 0; b < n / e; b++) {
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
    const uint32_t len = c->block_elems / 2u;
    const uint32_t next = c->n - 2u * groups + 1u;
    const int last = groups == 1u;
    uint32_t *x = c->blk, *y = c->blk + len;
    for (uint32_t i = 0; i < groups; i++) {
        COST(COST_LOOP + 2 * COST_ALU);
        const best_tw_t t = best_fetch_one(c, c->itw, next + i);
        const uint32_t base = poly + 8u * i * gap;
        for (uint32_t j0 = 0; j0 < gap; j0 += len) {
            COST(COST_LOOP + 2 * COST_ALU);
            const uint32_t xo = base + 4u * j0, yo = xo + 4u * gap;
            dma_read(xo, x, 4u * len);
            dma_read(yo, y, 4u * len);
            best_gs2_span(x, y, len, &t, c, last);
            dma_write(x, xo, 4u * len);
            dma_write(y, yo, 4u * len);
        }
    }
}

/* Inverse radix-4 pass over stages (groups, gap) and (groups / 2, 2 gap), gap >= block. */
static void best_gs4_stream(ctx_t *c, uint32_t poly, uint32_t groups, uint32_t gap) {
    const uint32_t len = c->block_elems / 4u;
    const uint32_t next1 = c->n - 2u * groups + 1u, next2 = c->n - groups + 1u;
    const int last = groups == 2u;
    uint32_t *a = c->blk, *b = a + len, *cc = b + len, *d = cc + len;
    for (uint32_t i = 0; i < groups / 2u; i++) {
        COST(COST_LOOP + 2 * COST_ALU);
        const best_tw_t ta = best_fetch_one(c, c->itw, next1 + 2u * i);
        const best_tw_t tc = best_fetch_one(c, c->itw, next1 + 2u * i + 1u);
        best_tw_t t2 = ta;
        if (!last) {
            t2 = best_fetch_one(c, c->itw, next2 + i);
        }
        const uint32_t base = poly + 16u * i * gap;
        for (uint32_t j0 = 0; j0 < gap; j0 += len) {
            COST(COST_LOOP + 4 * COST_ALU);
            const uint32_t oa = base + 4u * j0, ob = oa + 4u * gap, oc = ob + 4u * gap, od = oc + 4u * gap;
            dma_read(oa, a, 4u * len);
            dma_read(ob, b, 4u * len);
            dma_read(oc, cc, 4u * len);
            dma_read(od, d, 4u * len);
            best_gs4_span(a, b, cc, d, len, &ta, &tc, &t2, c, last);
            dma_write(a, oa, 4u * len);
            dma_write(b, ob, 4u * len);
            dma_write(cc, oc, 4u * len);
            dma_write(d, od, 4u * len);
        }
    }
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
    for (uint32_t b = 0; b < n / e; b++) {
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
        COST(EW_COST(len, 2u, 1u, best));
        for (uint32_t j = 0; j < len; j++) {
            buf0[j] = best ? best_reduce(mul32_64(buf0[j], buf1[j]), m) : bar_mulmod(buf0[j], buf1[j], bm);
        }
        break;
    case PIMHE_OP_MAC:
        COST(EW_COST(len, 3u, 1u, best));
        for (uint32_t j = 0; j < len; j++) {
            if (best) {
                COST(COST_ADD64);
                buf2[j] = best_reduce(mul32_64(buf0[j], buf1[j]) + buf2[j], m);
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

#include "ew_fused.h" /* TENSOR_SQ, CMAC, CADD, SUB_MULC: uses the definitions above */

static void ew_command(ctx_t *c, uint32_t op) {
    const pimhe_command_t *cmd = c->cmd;
    const uint32_t total = cmd->count * c->n;
    const int fused = ew_fused_op(op);
    const uint32_t nbuf = fused                   ? ew_fused_buffers(op)
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
            dma_read(cmd->src[0] + at, buf[0], bytes);
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
        } else {
            ew_chunk(c, op, buf[0], buf[1], buf[2], buf[3], len);
        }
        switch (op) {
        case PIMHE_OP_MAC:
            dma_write(buf[2], cmd->dst[0] + at, bytes);
            break;
        case PIMHE_OP_CMAC:
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

/* ------------------------------------------------------------------------------------------ */
/* automorphism X -> X^k (fine-grained over output blocks)                                     */
/*
 * A DPU holds whole sub-polynomials, so each image is computed where its input lies. The output
 * is produced in blocks of B = 2^t words (B <= 256, B <= N, two blocks and a B-byte table fit
 * the tasklet's work area: 256 words, or 128 with the NTT's shared tables or above 16
 * tasklets); the blocks of all sub-polynomials are dealt round-robin to the tasklets. With
 * N = 2^L:
 *
 * NTT form (slot j holds a(psi^(2 bitrev(j) + 1))): slot j of the image is slot
 * s(j) = bitrev(u) of the input, u = (bitrev(j) k + (k - 1) / 2) mod N. For j = m B + r,
 * bitrev_L(j) = bitrev_{L-t}(m) + bitrev_t(r) N / B, so with u0 = u(m B) = hi N / B + lo
 * (lo < N / B),  u = ((hi + bitrev_t(r) k) mod B) N / B + lo  and
 *     s(j) = bitrev_{L-t}(lo) B + bitrev_t((hi + bitrev_t(r) k) mod B):
 * output block m is a permutation of the single input block bitrev_{L-t}(lo). So a block costs
 * one DMA read of B words, a permutation inside WRAM through a table of bitrev_t (B bytes, kept
 * while consecutive commands are automorphisms) and one DMA write: 2N words of DMA per
 * sub-polynomial, as ADD, and about 13 instructions per word.
 *
 * Coefficient form: out[p] = a[i] for i = p k^-1 mod 2N below N, else -a[i - N] (X^N = -1).
 * Multiplication by k^-1 spreads every output block over the whole input (consecutive outputs
 * read k^-1 apart), the limb (up to 128 KiB) does not fit the 64 KiB WRAM, and re-reading it for
 * every output block costs N / B passes over MRAM. So each word is gathered with one 8-byte DMA
 * (the aligned pair holding it, the smallest DMA) into the output block, written back per
 * block: N reads of 8 bytes, about N (alpha + 4) = 81 N DMA cycles per sub-polynomial, 18 times
 * the NTT form's DMA and 6 times its modeled time (about 13 cycles a word, issue-bound).
 * Rotations should therefore run on NTT-form data (as the schemes keep it).
 *
 * B and N are powers of two, so block indices and offsets are shifts and masks: the DPU
 * multiplies and divides in software.
 */

/* The low `bits` bits of x in reverse order. */
static uint32_t bit_reverse(uint32_t x, uint32_t bits) {
    COST(COST_ALU + bits * (COST_LOOP + 4 * COST_ALU));
    uint32_t r = 0;
    for (uint32_t b = 0; b < bits; b++) {
        r = (r << 1) | (x & 1u);
        x >>= 1;
    }
    return r;
}

/* rev[i] = bitrev_t(i) for i < B = 2^t: bitrev(2i) = bitrev(i) / 2 and bitrev(2i + 1) =
 * bitrev(2i) + B / 2, filled in increasing i (entry i is written at step i / 2). */
static void bitrev_table(uint8_t *rev, uint32_t block) {
    COST(COST_STORE + (block / 2u) * (COST_LOOP + COST_LOAD + 3 * COST_ALU + 2 * COST_STORE));
    rev[0] = 0;
    for (uint32_t i = 0; i < block / 2u; i++) {
        const uint32_t even = (uint32_t)rev[i] >> 1;
        rev[2u * i] = (uint8_t)even;
        rev[2u * i + 1u] = (uint8_t)(even | block / 2u);
    }
}

/* k^-1 mod 2^32 for odd k: k k = 1 mod 8, and each Newton step x (2 - k x) doubles the correct
 * low bits: 3, 6, 12, 24 bits, enough for any 2N <= 2^16. */
static uint32_t inverse_mod_pow2(uint32_t k) {
    uint32_t x = k;
    for (uint32_t step = 0; step < 3u; step++) {
        COST(COST_LOOP + COST_ALU);
        x = mul32_32(x, 2u - mul32_32(k, x));
    }
    return x;
}

/* NTT form: output block m (B = 2^t words) of the sub-polynomial at src into the one at dst. */
static void automorphism_ntt_block(ctx_t *c, uint32_t src, uint32_t dst, uint32_t m, uint32_t t) {
    const uint32_t k = c->cmd->scalar, high_bits = c->log_n - t, block = 1u << t;
    uint32_t *out = c->area, *in = c->area + block;
    const uint8_t *rev = (const uint8_t *)(c->area + 2u * block);
    /* high_bits, B, (k - 1) / 2, the add and mask of u0, hi, lo's mask and and, both offsets */
    COST(12 * COST_ALU);
    const uint32_t u0 = (mul32_32(bit_reverse(m, high_bits), k) + (k >> 1)) & (c->n - 1u);
    const uint32_t hi = u0 >> high_bits, lo = u0 & ((1u << high_bits) - 1u);
    dma_read(src + (bit_reverse(lo, high_bits) << (t + 2u)), in, 4u * block);
    /* per word: a loop step, x's add and mask, two table loads with their address adds, the
     * source load and the destination store with their lsl_add */
    COST(block * (COST_LOOP + 6 * COST_ALU + 3 * COST_LOAD + COST_STORE));
    uint32_t x = hi;
    for (uint32_t rho = 0; rho < block; rho++) {
        out[rev[rho]] = in[rev[x]];
        x = (x + k) & (block - 1u);
    }
    dma_write(out, dst + (m << (t + 2u)), 4u * block);
}

/* Coefficient form: output block m (B = 2^t words from p = m B) gathered word by word. */
static void automorphism_coefficient_block(ctx_t *c, uint32_t src, uint32_t dst, uint32_t m, uint32_t t,
                                           uint32_t k_inv) {
    const uint32_t n = c->n, q = c->q, two_n_mask = 2u * c->n - 1u, block = 1u << t;
    uint32_t *out = c->area, *pair = c->area + block;
    /* the masks, B, m B, i's mask, the output's offset */
    COST(7 * COST_ALU);
    uint32_t i = mul32_32(m << t, k_inv) & two_n_mask;
    /* per word: a loop step, the sign mask (lsr, sub), the fold (and), the pair's offset (and;
     * the DMA call charges the rest), the word's address (and, lsl_add) and load, q - v (csub
     * charges its own), the select (and, andn, or), the store, i's add and mask */
    COST(block * (COST_LOOP + 11 * COST_ALU + COST_LOAD + COST_STORE));
    for (uint32_t r = 0; r < block; r++) {
        const uint32_t flip = 0u - (i >> c->log_n); /* all ones when i >= N */
        const uint32_t f = i & (n - 1u);
        dma_read(src + 4u * (f & ~1u), pair, 8u);
        const uint32_t v = pair[f & 1u];
        out[r] = (csub(q - v, q) & flip) | (v & ~flip);
        i = (i + k_inv) & two_n_mask;
    }
    dma_write(out, dst + (m << (t + 2u)), 4u * block);
}

static void automorphism_command(ctx_t *c) {
    const pimhe_command_t *cmd = c->cmd;
    const int ntt_form = (cmd->flags & PIMHE_FLAG_NTT_FORM) != 0u;
    /* Blocks of B = 2^t words: at most 256 (byte-sized table entries) and N, and two blocks and
     * the B-byte table within the work area. */
    uint32_t t = 8u;
    COST(8 * COST_ALU);
    while ((1u << t) > c->n || (9u << t) > c->area_bytes) {
        COST(COST_LOOP + 3 * COST_ALU);
        t--;
    }
    const uint32_t blocks_per_poly_bits = c->log_n - t, blocks = cmd->count << blocks_per_poly_bits;
    uint32_t k_inv = 0;
    if (ntt_form) {
        if (!c->bitrev_ready && c->me < blocks) {
            bitrev_table((uint8_t *)(c->area + (2u << t)), 1u << t);
            c->bitrev_ready = 1;
        }
    } else {
        k_inv = inverse_mod_pow2(cmd->scalar);
    }
    for (uint32_t b = c->me; b < blocks; b += c->nt) {
        COST(COST_LOOP + 6 * COST_ALU);
        const uint32_t poly = b >> blocks_per_poly_bits, m = b & ((1u << blocks_per_poly_bits) - 1u);
        const uint32_t src = cmd->src[0] + (poly << (c->log_n + 2u)), dst = cmd->dst[0] + (poly << (c->log_n + 2u));
        if (ntt_form) {
            automorphism_ntt_block(c, src, dst, m, t);
        } else {
            automorphism_coefficient_block(c, src, dst, m, t, k_inv);
        }
    }
}

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

/* Checks the header and derives the per-launch constants. Every tasklet does this on its own
 * copy, so all reach the same verdict. */
static uint32_t setup(ctx_t *c) {
    const pimhe_header_t *h = c->hdr;
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

/* The INTT's last stage uses psi^-bitrev(1) N^-1 (consumption-order slot N - 1 times N^-1);
 * derived on the first INTT of a launch. */
static void prepare_last_twiddle(ctx_t *c) {
    if (c->last_ready) {
        return;
    }
    COST(COST_ALU + COST_BRANCH);
    const uint32_t w = *fetch_words(c->itw, c->n - 1u, 1u, c->aux);
    if (c->variant != PIMHE_VARIANT_BEST) {
        c->bar_last = bar_mulmod(w, c->bar_n_inv, &c->bar);
    } else {
        const uint32_t ws = csub(best_mulmod_lazy(w, &c->best_n_inv, &c->best), c->q);
        COST(COST_DIV64);
        c->best_last = best_tw(ws, (uint32_t)(((uint64_t)ws << 32) / c->q));
    }
    c->last_ready = 1;
}

/* Coarse-grained dealing: sub-polynomial i of an NTT/INTT command goes to tasklet
 * (i + rotation) mod nt, so this tasklet's first one is (me - rotation) mod nt. */
static uint32_t first_of_mine(const ctx_t *c) {
    COST(3 * COST_ALU);
    return (c->me + c->nt - c->rotation) % c->nt;
}

static void advance_rotation(ctx_t *c, uint32_t count) {
    COST(3 * COST_ALU);
    c->rotation = (c->rotation + count % c->nt) % c->nt;
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

/* An NTT (inverse = 0) or INTT command: coarse-grained, each tasklet transforms whole
 * sub-polynomials in place, dealt round-robin continuing from the previous transform command. */
static void transform_command(ctx_t *c, const pimhe_command_t *cmd, int inverse, int best) {
    if (c->use_tables && cmd->count > 0u) {
        load_tables(c, inverse ? 2u : 1u);
    }
    const uint32_t first = first_of_mine(c);
    if (inverse && first < cmd->count) {
        prepare_last_twiddle(c);
    }
    for (uint32_t i = first; i < cmd->count; i += c->nt) {
        COST(COST_LOOP + 2 * COST_ALU);
        const uint32_t poly = cmd->src[0] + 4u * i * c->n;
        if (best) {
            inverse ? best_intt(c, poly) : best_ntt(c, poly);
        } else {
            inverse ? bar_intt(c, poly) : bar_ntt(c, poly);
        }
    }
    advance_rotation(c, cmd->count);
}

static uint32_t run_command(ctx_t *c) {
    const pimhe_command_t *cmd = c->cmd;
    const uint32_t op = cmd->opcode;
    COST(4 * COST_ALU + COST_BRANCH);
    if (op < PIMHE_OP_FIRST || op > PIMHE_OP_LAST) {
        return PIMHE_ERR_OPCODE;
    }
    const uint32_t srcs = op == PIMHE_OP_TENSOR ? 4u
                          : (op == PIMHE_OP_NTT || op == PIMHE_OP_INTT || op == PIMHE_OP_MULC ||
                             op == PIMHE_OP_AUTOMORPHISM || op == PIMHE_OP_CMAC || op == PIMHE_OP_CADD)
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
    if (op == PIMHE_OP_MULC || op == PIMHE_OP_CMAC || op == PIMHE_OP_CADD || op == PIMHE_OP_SUB_MULC) {
        COST(COST_DIV64);
        if (cmd->scalar >= c->q || cmd->scalar_shoup != (uint32_t)(((uint64_t)cmd->scalar << 32) / c->q)) {
            return PIMHE_ERR_SCALAR;
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
    uint32_t status = setup(c);
    c->use_tables = 0;
    c->loaded = 0;
    c->tables = NULL;
    c->rotation = 0;
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
