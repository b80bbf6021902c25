/*
 * arith_best.h: pimhe's own DPU arithmetic ("best" variant).
 *
 * - Multiplication by a constant (twiddles, N^-1, MULC scalars) uses Shoup's precomputed
 *   quotient w' = floor(w 2^32 / q), which the host writes after each twiddle table. The
 *   quotient estimate floor(a w' / 2^32) is taken from three 16x16 products instead of a full
 *   32x32->64 multiply (mulhi_trunc: low by at most 2), and the remainder a w - Q q only needs
 *   low words (two 32x32->32 products on pre-split operands). For any a < 2^32 the exact Shoup
 *   remainder lies in [0, 2q); the truncated quotient adds at most 2q, so the raw remainder is
 *   in [0, 4q) (< 2^32 as q < 2^30) and one conditional subtraction of 2q returns it to [0, 2q).
 *   Cost: 23 + 2 x 19 + 3 ALU + 2 = 66 instructions, against 35 + 3 + 35 + 3 + 21 + 1 + 4 = 102
 *   for a Barrett multiplication.
 * - Values stay lazily reduced (Harvey): [0, 4q) in forward butterflies, [0, 2q) in inverse
 *   ones; one final pass brings them to [0, q).
 * - General products (MUL, MAC, TENSOR) are Barrett reductions of a 64-bit accumulator, so a
 *   sum of products (MAC's d + a b, TENSOR's a0 b1 + a1 b0) is reduced once.
 */
#ifndef PIMHE_ARITH_BEST_H
#define PIMHE_ARITH_BEST_H

#include <stdint.h>

#include "arith_common.h"
#include "cost.h"

typedef struct {
    uint32_t q;    /* the prime, < 2^30 */
    uint32_t q_hi; /* q >> 16 */
    uint32_t q2;   /* 2q */
    uint32_t mu;   /* floor(2^2k / q), as for arith_barrett.h */
    uint32_t s_lo; /* k - 1 */
    uint32_t s_hi; /* k + 1 */
} best_ctx_t;

/* A constant multiplicand with its Shoup quotient, both split into 16-bit halves once. */
typedef struct {
    uint32_t w, w_hi;   /* w < q and w >> 16 */
    uint32_t ws, ws_hi; /* floor(w 2^32 / q) and its >> 16 */
} best_tw_t;

static inline best_tw_t best_tw(uint32_t w, uint32_t ws) {
    COST(2 * COST_ALU);
    best_tw_t t;
    t.w = w;
    t.w_hi = w >> 16;
    t.ws = ws;
    t.ws_hi = ws >> 16;
    return t;
}

/* a w mod q, lazily in [0, 2q), for any a < 2^32. */
static inline uint32_t best_mulmod_lazy(uint32_t a, const best_tw_t *t, const best_ctx_t *m) {
    COST(3 * COST_ALU); /* a >> 16, quot >> 16, the final subtraction */
    const uint32_t a_hi = a >> 16;
    const uint32_t quot = mulhi_trunc(a, a_hi, t->ws, t->ws_hi);
    const uint32_t r = mul32_lo_split(a, a_hi, t->w, t->w_hi) - mul32_lo_split(quot, quot >> 16, m->q, m->q_hi);
    return csub(r, m->q2); /* r < 4q -> [0, 2q) */
}

/* t mod q for t < 2^(2k+1) (a product, or a sum of two products, of residues). q3 is at most
 * 3 below floor(t/q), so r < 4q < 2^32: subtracting 2q then q reduces it. */
static inline uint32_t best_reduce(uint64_t t, const best_ctx_t *m) {
    COST(2 * COST_SHIFT64 + COST_ALU);
    const uint32_t q1 = (uint32_t)(t >> m->s_lo);
    const uint32_t q3 = (uint32_t)(mul32_64(q1, m->mu) >> m->s_hi);
    uint32_t r = (uint32_t)t - mul32_32(q3, m->q);
    r = csub(r, m->q2);
    return csub(r, m->q);
}

#endif /* PIMHE_ARITH_BEST_H */
