/*
 * multiword_arith.h: word arithmetic on Gupta et al.'s multi-word coefficients (multiword.h says
 * what they are): a coefficient modulo one q of up to 128 bits in w = 1, 2 or 4 little-endian
 * 32-bit words. Additions and subtractions with carries over the words, the schoolbook and
 * (subtractive) Karatsuba products, Barrett's reduction with the host's mu (HAC 14.42), and the
 * modular add, subtract and multiply built from them. Used by MW_ADD and MW_MUL (multiword.h)
 * and MW_CONV's folds (multiword_conv.h).
 *
 * Every 32x32->64 product is mul32_64 (cost.h: COST_MUL32_64, DRAMatic's 35-instruction custom
 * multiply from the 8x8 multiplier). A word step of an add, subtract or product column is
 * charged its loads, its add/addc or sub/subc, its store and its loop iteration. The counts do
 * not depend on the values: a Karatsuba half-difference and a trial subtraction compute both
 * outcomes and select a pointer.
 *
 * WRAM: a coefficient's product and temporaries on the stack: at the deepest, the chunk's 12
 * words and two Karatsuba levels of 17 (46 words, 184 bytes, besides the frames) of the
 * 512-byte STACK_SIZE_DEFAULT.
 */
#ifndef PIMHE_MULTIWORD_ARITH_H
#define PIMHE_MULTIWORD_ARITH_H

#include <stdint.h>

#include "arith_common.h"
#include "cost.h"

/* Widest coefficient, in words (128 bits). */
#define MW_MAX_WORDS 4u
/* Words of the modulus record: q (w), a zero word, mu (w + 1); 2w + 2, always even. */
#define MW_RECORD_WORDS(w) (2u * (w) + 2u)
/* Work-area words reserved for the record ahead of the chunks (an even count: 8-aligned). */
#define MW_RECORD_RESERVE (MW_RECORD_WORDS(MW_MAX_WORDS) + 2u)

/* r := a + b over n words; the carry out. r may be a or b. */
static uint32_t mw_add(uint32_t *r, const uint32_t *a, const uint32_t *b, uint32_t n) {
    COST(n * COST_MW_WORD);
    uint32_t carry = 0;
    for (uint32_t i = 0; i < n; i++) {
        const uint64_t s = (uint64_t)a[i] + b[i] + carry;
        r[i] = (uint32_t)s;
        carry = (uint32_t)(s >> 32);
    }
    return carry;
}

/* r := a - b over n words (mod 2^(32 n)); the borrow out. r may be a or b. */
static uint32_t mw_sub(uint32_t *r, const uint32_t *a, const uint32_t *b, uint32_t n) {
    COST(n * COST_MW_WORD);
    uint32_t borrow = 0;
    for (uint32_t i = 0; i < n; i++) {
        const uint64_t d = (uint64_t)a[i] - b[i] - borrow;
        r[i] = (uint32_t)d;
        borrow = (uint32_t)(d >> 32) & 1u;
    }
    return borrow;
}

/* x := (a b) mod 2^(32 nout), schoolbook over the products a_i b_j with i + j < nout
 * (nout <= na + nb); x must not overlap a or b. */
static void mw_mul_school(uint32_t *x, const uint32_t *a, uint32_t na, const uint32_t *b, uint32_t nb,
                          uint32_t nout) {
    COST(nout * (COST_STORE + COST_LOOP));
    for (uint32_t k = 0; k < nout; k++) {
        x[k] = 0;
    }
    for (uint32_t i = 0; i < na && i < nout; i++) {
        const uint32_t cols = nb < nout - i ? nb : nout - i;
        COST(COST_LOOP + 3 * COST_ALU + COST_BRANCH);
        uint32_t carry = 0;
        for (uint32_t j = 0; j < cols; j++) {
            COST(COST_MW_PRODUCT);
            /* (2^32 - 1)^2 + 2 (2^32 - 1) = 2^64 - 1: the sum never overflows. */
            const uint64_t t = mul32_64(a[i], b[j]) + x[i + j] + carry;
            x[i + j] = (uint32_t)t;
            carry = (uint32_t)(t >> 32);
        }
        if (i + cols < nout) {
            COST(COST_STORE);
            x[i + cols] = carry; /* still zero: row i - 1 reached word i - 1 + nb only */
        }
    }
}

/* x (2n words) := a b (n words each; n = 1, 2 or 4), subtractive Karatsuba on halves of
 * h = n / 2 words, B = 2^(32 h):
 *   a b = z2 B^2 + (z0 + z2 + (a0 - a1)(b1 - b0)) B + z0,  z0 = a0 b0, z2 = a1 b1,
 * the middle product taken as |a0 - a1| |b1 - b0| (h words each) and added or subtracted by
 * the signs. 3^log2(n) products of 32x32 words. */
static void mw_karatsuba(uint32_t *x, const uint32_t *a, const uint32_t *b, uint32_t n) {
    COST(COST_BRANCH);
    if (n == 1u) {
        COST(2 * COST_LOAD + 2 * COST_STORE);
        const uint64_t p = mul32_64(a[0], b[0]);
        x[0] = (uint32_t)p;
        x[1] = (uint32_t)(p >> 32);
        return;
    }
    const uint32_t h = n / 2u;
    uint32_t da[2][MW_MAX_WORDS / 2u], db[2][MW_MAX_WORDS / 2u], p[MW_MAX_WORDS], mid[MW_MAX_WORDS + 1u];
    mw_karatsuba(x, a, b, h);
    mw_karatsuba(x + n, a + h, b + h, h);
    /* Both differences of each half pair: the one that does not borrow is the magnitude. */
    const uint32_t sa = mw_sub(da[0], a, a + h, h); /* a0 - a1; borrow: a0 < a1 */
    (void)mw_sub(da[1], a + h, a, h);
    const uint32_t sb = mw_sub(db[0], b + h, b, h); /* b1 - b0; borrow: b1 < b0 */
    (void)mw_sub(db[1], b, b + h, h);
    COST(4 * COST_ALU); /* h, the two pointer selects, the sign compare */
    mw_karatsuba(p, da[sa], db[sb], h);
    mid[n] = mw_add(mid, x, x + n, n); /* z0 + z2: n + 1 words */
    /* add or subtract |a0 - a1| |b1 - b0| (same cost either way), into the top word */
    COST(2 * COST_STORE + COST_BRANCH + COST_LOAD + COST_ALU);
    if (sa == sb) {
        mid[n] += mw_add(mid, mid, p, n);
    } else {
        mid[n] -= mw_sub(mid, mid, p, n);
    }
    /* x += mid B: n + 1 words, then the carry through the h - 1 words above them */
    uint32_t carry = mw_add(x + h, x + h, mid, n + 1u);
    COST((h - 1u) * (COST_LOAD + COST_ALU + COST_STORE + COST_LOOP));
    for (uint32_t i = h + n + 1u; i < 2u * n; i++) {
        const uint64_t s = (uint64_t)x[i] + carry;
        x[i] = (uint32_t)s;
        carry = (uint32_t)(s >> 32);
    }
}

/* out (w words) := x mod q for any x of 2w words (x < b^(2k)), HAC 14.42 with b = 2^32, k = w:
 *   q3 = floor(floor(x / b^(k-1)) mu / b^(k+1)),  r = (x - q3 q) mod b^(k+1),
 * then r < 3q and two trial subtractions of q leave r < q. `record` is the modulus record:
 * q and its zero word (q as k + 1 words), then mu. */
static void mw_barrett(uint32_t *out, const uint32_t *x, const uint32_t *record, uint32_t w) {
    const uint32_t *q = record, *mu = record + w + 1u;
    uint32_t q2[2u * MW_MAX_WORDS + 2u], r2[MW_MAX_WORDS + 1u], r[2][MW_MAX_WORDS + 1u];
    mw_mul_school(q2, x + w - 1u, w + 1u, mu, w + 1u, 2u * w + 2u);
    mw_mul_school(r2, q2 + w + 1u, w + 1u, q, w, w + 1u);
    (void)mw_sub(r[0], x, r2, w + 1u);
    uint32_t cur = 0;
    for (uint32_t s = 0; s < 2u; s++) {
        COST(COST_LOOP + 2 * COST_ALU);
        const uint32_t borrow = mw_sub(r[cur ^ 1u], r[cur], q, w + 1u);
        cur ^= borrow ^ 1u; /* keep the difference unless it borrowed */
    }
    COST(w * (COST_LOAD + COST_STORE + COST_LOOP));
    for (uint32_t i = 0; i < w; i++) {
        out[i] = r[cur][i];
    }
}

/* r := a + b mod q (w words, a and b below q; q is the record's first w words): the sum, a trial
 * difference, the one that is below q selected (a pointer, so the counts do not depend on the
 * values). r may be a or b. */
static void mw_add_mod(uint32_t *r, const uint32_t *a, const uint32_t *b, const uint32_t *q, uint32_t w) {
    uint32_t x[MW_MAX_WORDS], t[MW_MAX_WORDS];
    const uint32_t carry = mw_add(x, a, b, w);
    const uint32_t borrow = mw_sub(t, x, q, w);
    COST(3 * COST_ALU + w * (COST_LOAD + COST_STORE + COST_LOOP));
    const uint32_t *s = (carry | (borrow ^ 1u)) ? t : x; /* a + b >= q: the difference */
    for (uint32_t i = 0; i < w; i++) {
        r[i] = s[i];
    }
}

/* r := a - b mod q, as mw_add_mod: the difference and the difference plus q, the latter kept
 * when the former borrowed. */
static void mw_sub_mod(uint32_t *r, const uint32_t *a, const uint32_t *b, const uint32_t *q, uint32_t w) {
    uint32_t x[MW_MAX_WORDS], t[MW_MAX_WORDS];
    const uint32_t borrow = mw_sub(x, a, b, w);
    (void)mw_add(t, x, q, w);
    COST(2 * COST_ALU + w * (COST_LOAD + COST_STORE + COST_LOOP));
    const uint32_t *s = borrow ? t : x;
    for (uint32_t i = 0; i < w; i++) {
        r[i] = s[i];
    }
}

/* x (2w words) := a b (w words each): Karatsuba (best) or schoolbook. */
static void mw_product(uint32_t *x, const uint32_t *a, const uint32_t *b, uint32_t w, int best) {
    if (best) {
        mw_karatsuba(x, a, b, w);
    } else {
        mw_mul_school(x, a, w, b, w, 2u * w);
    }
}

/* r := a b mod q (w words each): the 2w-word product reduced by Barrett with the record's mu.
 * r may be a or b. */
static void mw_mul_mod(uint32_t *r, const uint32_t *a, const uint32_t *b, const uint32_t *record, uint32_t w,
                       int best) {
    uint32_t x[2u * MW_MAX_WORDS];
    mw_product(x, a, b, w, best);
    mw_barrett(r, x, record, w);
}

#endif /* PIMHE_MULTIWORD_ARITH_H */
