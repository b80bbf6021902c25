/*
 * arith_barrett.h: DRAMatic's modular arithmetic (DRAMatic 3.1.1 and 3.1.2), reproduced as
 * published: every product is a custom 32x32->64 multiply (Listing 1), every reduction is a
 * Barrett reduction with a precomputed reciprocal, values are always fully reduced (< q).
 *
 * Barrett reduction (DRAMatic 3.1.2, "R = floor(2^n / m)"), in its classic form
 * (Menezes et al., HAC 14.42) with k = bit length of q and n = 2k:
 *     mu = floor(2^2k / q)                      (derived once from header.barrett = floor(2^64/q):
 *                                                floor(floor(2^64/q) / 2^(64-2k)) = floor(2^2k/q))
 *     q1 = floor(t / 2^(k-1))                    bit shift
 *     q3 = floor(q1 mu / 2^(k+1))                custom 32x32->64 + shift
 *     r  = t - q3 q  (mod 2^32)                  custom 32x32->32
 *     r -= q while r >= q                        at most twice: for t < 2^2k, q3 >= floor(t/q) - 2
 * i.e. "two multiplications, a bit shift and a conditional subtraction" per reduction, plus the
 * product itself.
 */
#ifndef PIMHE_ARITH_BARRETT_H
#define PIMHE_ARITH_BARRETT_H

#include <stdint.h>

#include "arith_common.h"
#include "cost.h"

typedef struct {
    uint32_t q;    /* the prime, < 2^30 */
    uint32_t mu;   /* floor(2^2k / q) < 2^(k+1) */
    uint32_t s_lo; /* k - 1 */
    uint32_t s_hi; /* k + 1 */
} bar_ctx_t;

/* t mod q for t < 2^2k (any product of two residues). */
static inline uint32_t bar_reduce(uint64_t t, const bar_ctx_t *m) {
    COST(2 * COST_SHIFT64 + COST_ALU);
    const uint32_t q1 = (uint32_t)(t >> m->s_lo);
    const uint32_t q3 = (uint32_t)(mul32_64(q1, m->mu) >> m->s_hi);
    uint32_t r = (uint32_t)t - mul32_32(q3, m->q);
    r = csub(r, m->q);
    r = csub(r, m->q);
    return r;
}

/* a b mod q for a, b < q. */
static inline uint32_t bar_mulmod(uint32_t a, uint32_t b, const bar_ctx_t *m) {
    return bar_reduce(mul32_64(a, b), m);
}

/* (a + b) mod q for a, b < q. */
static inline uint32_t bar_addmod(uint32_t a, uint32_t b, uint32_t q) {
    COST(COST_ADDMOD);
    const uint32_t s = a + b;
    return s >= q ? s - q : s;
}

/* (a - b) mod q for a, b < q. */
static inline uint32_t bar_submod(uint32_t a, uint32_t b, uint32_t q) {
    COST(COST_SUBMOD);
    return a >= b ? a - b : a + q - b;
}

#endif /* PIMHE_ARITH_BARRETT_H */
