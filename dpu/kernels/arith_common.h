/*
 * arith_common.h: the DPU's wide multiplies, built from 16x16 products (DRAMatic 3.1.1).
 *
 * Each routine has two bodies with identical results:
 *  - the composition from 16-bit halves (the *_parts functions), which is how a DPU computes
 *    it: every 16x16 product is four native 8x8 multiplies (cost.h). On hardware the combining
 *    is hand-written assembly in DRAMatic; the C here is its reference;
 *  - in the emulator, the host's native multiply, charged the documented cost. The emulator's
 *    self-test (dpu/emulator/selftest.c) checks that both bodies agree.
 */
#ifndef PIMHE_ARITH_COMMON_H
#define PIMHE_ARITH_COMMON_H

#include <stdint.h>

#include "cost.h"

/* ---- reference compositions from 16-bit halves (hardware algorithm) ---- */

/* DRAMatic Listing 1: a b = hi 2^32 + (m1 + m2) 2^16 + lo, from four 16x16 products. */
static inline uint64_t pimhe_mul32_64_parts(uint32_t a, uint32_t b) {
    const uint32_t a0 = a & 0xffffu, a1 = a >> 16, b0 = b & 0xffffu, b1 = b >> 16;
    const uint32_t lo = a0 * b0, m1 = a0 * b1, m2 = a1 * b0, hi = a1 * b1;
    const uint64_t mid = (uint64_t)m1 + m2;
    return ((uint64_t)hi << 32) + (mid << 16) + lo;
}

/* 32x32 -> 32: Listing 1 without hi; only the low halves of m1 and m2 matter. */
static inline uint32_t pimhe_mul32_32_parts(uint32_t a, uint32_t b) {
    const uint32_t a0 = a & 0xffffu, a1 = a >> 16, b0 = b & 0xffffu, b1 = b >> 16;
    return a0 * b0 + ((a0 * b1 + a1 * b0) << 16);
}

/* floor(a b / 2^32) minus 0, 1 or 2: a1 b1 + floor(a1 b0 / 2^16) + floor(a0 b1 / 2^16).
 * The dropped part is floor((a1 b0 mod 2^16 + a0 b1 mod 2^16 + a0 b0 / 2^16) / 2^16) <= 2. */
static inline uint32_t pimhe_mulhi_trunc_parts(uint32_t a0, uint32_t a1, uint32_t b0, uint32_t b1) {
    return a1 * b1 + ((a1 * b0) >> 16) + ((a0 * b1) >> 16);
}

/* ---- the routines the kernel calls ---- */

/* Custom 32x32 -> 64 (COST_MUL32_64). */
static inline uint64_t mul32_64(uint32_t a, uint32_t b) {
    COST_MUL(64, COST_MUL32_64);
#ifdef PIMHE_EMULATOR
    return (uint64_t)a * b;
#else
    return pimhe_mul32_64_parts(a, b);
#endif
}

/* Custom 32x32 -> 32 (COST_MUL32_32). */
static inline uint32_t mul32_32(uint32_t a, uint32_t b) {
    COST_MUL(32, COST_MUL32_32);
#ifdef PIMHE_EMULATOR
    return a * b;
#else
    return pimhe_mul32_32_parts(a, b);
#endif
}

/* 32x32 -> 32 with both high halves given (COST_MUL32_LO_SPLIT): a_hi = a >> 16, b_hi = b >> 16. */
static inline uint32_t mul32_lo_split(uint32_t a, uint32_t a_hi, uint32_t b, uint32_t b_hi) {
    COST_MUL(32, COST_MUL32_LO_SPLIT);
#ifdef PIMHE_EMULATOR
    (void)a_hi;
    (void)b_hi;
    return a * b;
#else
    const uint32_t a0 = a & 0xffffu, b0 = b & 0xffffu;
    return a0 * b0 + ((a0 * b_hi + a_hi * b0) << 16);
#endif
}

/* Truncated high word (COST_MULHI_TRUNC): floor(a b / 2^32) - e, e in {0, 1, 2}. */
static inline uint32_t mulhi_trunc(uint32_t a, uint32_t a_hi, uint32_t b, uint32_t b_hi) {
    COST_MUL(64, COST_MULHI_TRUNC);
    return pimhe_mulhi_trunc_parts(a & 0xffffu, a_hi, b & 0xffffu, b_hi);
}

/* Truncated high word from 11 byte products (COST_MULHI11): floor(a b / 2^32) - e with
 * 0 <= a b / 2^32 - result < 2.9922 (cost.h). a_hi = a >> 16, b_hi = b >> 16. Computed from the
 * byte products themselves (the DPU's mul_ul_ul .. mul_uh_uh select bytes 0/1 of a register). */
static inline uint32_t pimhe_mulhi11_parts(uint32_t a, uint32_t a_hi, uint32_t b, uint32_t b_hi) {
    const uint32_t a0 = a & 0xffu, a1 = (a >> 8) & 0xffu, a2 = a_hi & 0xffu, a3 = a_hi >> 8;
    const uint32_t b0 = b & 0xffu, b1 = (b >> 8) & 0xffu, b2 = b_hi & 0xffu, b3 = b_hi >> 8;
    const uint32_t hh = a2 * b2 + ((a2 * b3 + a3 * b2) << 8) + ((a3 * b3) << 16); /* a_hi b_hi */
    const uint32_t mid = ((a0 * b3 + a1 * b2 + a2 * b1 + a3 * b0) << 8) + a2 * b0;
    return hh + a1 * b3 + a3 * b1 + (mid >> 16);
}

static inline uint32_t mulhi11(uint32_t a, uint32_t a_hi, uint32_t b, uint32_t b_hi) {
    COST_MUL(64, COST_MULHI11);
    return pimhe_mulhi11_parts(a, a_hi, b, b_hi);
}

/* Conditional subtraction (COST_CSUB): x - m if x >= m. */
static inline uint32_t csub(uint32_t x, uint32_t m) {
    COST(COST_CSUB);
    return x >= m ? x - m : x;
}

#endif /* PIMHE_ARITH_COMMON_H */
