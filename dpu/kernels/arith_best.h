/*
 * arith_best.h: pimhe's own DPU arithmetic ("best" variant).
 *
 * - Multiplication by a constant (twiddles, N^-1, MULC scalars) uses Shoup's precomputed
 *   quotient w' = floor(w 2^32 / q), which the host writes after each twiddle table. The
 *   quotient estimate floor(a w' / 2^32) is taken from 11 byte products (mulhi11: low by less
 *   than 2.9922), the remainder a w - Q q only needs low words: a w from the pre-split w
 *   (COST_MUL32_LO_SPLIT) and Q q from Q's three low bytes and shifts when q has the form
 *   2^b + 1 - k 2^s (k < 2^8, s >= 8; COST_QQ_FORM), else a split product (COST_QQ_GENERIC).
 *   For any a < 2^32 the exact Shoup remainder lies in [0, 2q); the estimate adds less than
 *   2.9922 q - q, so the raw remainder is in [0, 3.9922 q) (< 2^32 as q < 2^30) and one
 *   conditional subtraction of 2q returns it to [0, 2q).
 *   Cost: 1 + 21 + 19 + 11 + 2 = 54 instructions (64 for a prime of no known form), against
 *   35 + 3 + 35 + 3 + 21 + 1 + 4 = 102 for a Barrett multiplication.
 * - The stages of an NTT with few distinct twiddles (the first three forward, the last three
 *   inverse, N >= 2048) multiply through shared WRAM tables R_i[x] = x w 2^(8i) mod q
 *   (COST_TMUL_*), and the inverse's N^-1 = 2^-log N is a shift-and-add (COST_MUL_POW2INV).
 * - Values stay lazily reduced (Harvey): [0, 4q) in forward butterflies, [0, 2q) in inverse
 *   ones; one final pass brings them to [0, q).
 * - MUL, MAC and TENSOR reduce with a Barrett quotient estimated by mulhi11 (best_reduce_sq):
 *   their 64-bit values are below q^2 (a product of residues, or one plus a residue). TENSOR
 *   is Karatsuba (a0 b1 + a1 b0 = (a0 + a1)(b0 + b1) - a0 b0 - a1 b1, three 32x32->64
 *   products). best_reduce, the plain Barrett reduction, takes up to 2^(2k+1) (raw_poly.h).
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
    uint32_t mu2, mu2_hi; /* floor(2^(31+k) / q) < 2^32 and its >> 16 (best_reduce_sq) */
    uint32_t fa;          /* q = 2^fb + 1 - fk 2^fs with fk < 2^8, 8 <= fs < fb (COST_QQ_FORM) */
    uint32_t fk, fs, fb;
    uint32_t l, lmask;    /* log N and 2^log N - 1 (best_mul_pow2inv) */
    uint32_t tl;          /* (q - 1) >> log N */
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

/* x - Q q (mod 2^32): COST_QQ_FORM when q = 2^fb + 1 - fk 2^fs, else COST_QQ_GENERIC. The
 * form is fixed per launch; the span loops are specialized on it (one branch per span, charged
 * there), so the test here is not an instruction of the loop. */
static inline uint32_t best_sub_qq(uint32_t x, uint32_t quot, const best_ctx_t *m) {
    if (m->fa) {
        COST(COST_QQ_FORM);
        const uint32_t qh = quot >> 16;
        const uint32_t k = m->fk;
        const uint32_t qk = (quot & 0xffu) * k + ((((quot >> 8) & 0xffu) * k) << 8) + (((qh & 0xffu) * k) << 16);
        return x + (qk << m->fs) - (quot + (quot << m->fb));
    }
    COST(2 * COST_ALU); /* Q >> 16 and the subtraction; the product charges itself */
    return x - mul32_lo_split(quot, quot >> 16, m->q, m->q_hi);
}

/* a w mod q, lazily in [0, 2q), for any a < 2^32. */
static inline uint32_t best_mulmod_lazy(uint32_t a, const best_tw_t *t, const best_ctx_t *m) {
    COST(COST_ALU); /* a >> 16 */
    const uint32_t a_hi = a >> 16;
    const uint32_t quot = mulhi11(a, a_hi, t->ws, t->ws_hi);
    const uint32_t r = best_sub_qq(mul32_lo_split(a, a_hi, t->w, t->w_hi), quot, m);
    return csub(r, m->q2); /* r < 3.9922 q -> [0, 2q) */
}

/* a w mod q through the WRAM tables R (R_i = R + 256 i), a's bytes read from WRAM (lbu):
 * a sum in [0, 4q). COST_TMUL_WRAM. */
static inline uint32_t best_tmul_wram(const uint32_t *a, const uint32_t *R) {
    COST(COST_TMUL_WRAM);
    const uint8_t *b = (const uint8_t *)a; /* little-endian, as on the DPU */
    return R[b[0]] + R[256u + b[1]] + R[512u + b[2]] + R[768u + b[3]];
}

/* The same for a in a register: COST_TMUL_REG. */
static inline uint32_t best_tmul_reg(uint32_t a, const uint32_t *R) {
    COST(COST_TMUL_REG);
    return R[a & 0xffu] + R[256u + ((a >> 8) & 0xffu)] + R[512u + ((a >> 16) & 0xffu)] + R[768u + (a >> 24)];
}

/* x 2^-l mod q in [0, 2q) for x < 4q, q = 1 mod 2^(l+1) (COST_MUL_POW2INV, cost.h). */
static inline uint32_t best_mul_pow2inv(uint32_t x, const best_ctx_t *m) {
    COST(COST_MUL_POW2INV);
    const uint32_t mm = (0u - x) & m->lmask;
    return ((x + mm) >> m->l) + mm * m->tl; /* mm < 2^l, tl < 2^(30-l): 2 x 3 byte products */
}

/* t mod q for t < q^2 (a product of two residues). th = floor(t / 2^(k-1)) < 2^(k+1), and
 * Q = mulhi11(th, mu2) with mu2 = floor(2^(31+k) / q) satisfies
 *   t/q - Q < 2^(k-1)/q + th/2^32 + 2.9922 < 1 + 0.5 + 2.9922,
 * and t - Q q < 2^29 + 2^29 + 2.9922 * 2^30 < 2^32: three conditional subtractions (2q, 2q, q)
 * reduce it. */
static inline uint32_t best_reduce_sq(uint64_t t, const best_ctx_t *m) {
    COST(COST_SHIFT64 + COST_ALU); /* t >> (k - 1), th >> 16 */
    const uint32_t th = (uint32_t)(t >> m->s_lo);
    const uint32_t quot = mulhi11(th, th >> 16, m->mu2, m->mu2_hi);
    uint32_t r = best_sub_qq((uint32_t)t, quot, m);
    r = csub(r, m->q2);
    r = csub(r, m->q2);
    return csub(r, m->q);
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
