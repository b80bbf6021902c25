/*
 * multiword.h: Gupta et al.'s non-RNS coefficients (shared/seeds/002_*, section 3: "To
 * represent 27-, 54-, and 109-bit coefficients, we use integers of 32, 64, and 128 bits"):
 * a coefficient modulo one q of up to 128 bits held in w = 1, 2 or 4 little-endian 32-bit
 * words, the DPU's native width, element-wise over a range of `count` coefficients as
 * RAW_ADD / RAW_MUL do (pimhe_dpu.h has the operands):
 *
 *  - MW_ADD: dst[j] := a[j] + b[j] mod q: add/addc over the words (the paper's 64- and 128-bit
 *    addition), then one trial subtraction of q, kept when it does not borrow.
 *  - MW_MUL: dst[j] := a[j] b[j] mod q: the 2w-word product, then Barrett's reduction
 *    (Handbook of Applied Cryptography, algorithm 14.42, base 2^32) with the host's
 *    mu = floor(2^(64 w) / q) of w + 1 words. The product: the barrett variant multiplies
 *    schoolbook (w^2 32x32->64 products), the best variant by Karatsuba (the paper's choice,
 *    section 3 and its ref. [86]; 3^log2(w) = 1, 3, 9 products), subtractive so that the
 *    half-differences never carry past their words.
 *    Why Barrett: the paper names no q (SEAL's are NTT primes of no special form), so the
 *    reduction must take any q; Barrett needs one precomputed constant and no change of
 *    representation (Montgomery would keep the operands in its own domain); a special
 *    q = 2^m - c would reduce by shifts and one small product instead, cheaper, but binds the
 *    comparison to a modulus the paper never used. Its two products are schoolbook in both
 *    variants: q1 mu in full ((w + 1)^2 products), q3 q truncated to its low w + 1 words.
 *
 *  - MW_CONV: the textbook negacyclic product of two polynomials of n coefficients in
 *    Z_q[x]/(x^n + 1), output coefficients [lo, lo + count) (RAW_CONV's multi-word analogue,
 *    raw_poly.h): c_k = sum_{i <= k} a_i b_{k-i} - sum_{i > k} a_i b_{n+k-i} (mod q), the paper's
 *    "polynomial multiplication and polynomial addition of the coefficients" without NTT
 *    (section 3, 4.2: "We do not incorporate NTT"). Each of the count * n coefficient products is
 *    MW_MUL's 2w-word product, added unreduced to one of two 2w-word sums of its output (the
 *    added terms', the subtracted terms'); Barrett reduces the two and folds them into one
 *    residue only every T terms (T (q - 1)^2 + q < b^(2w), so no sum overflows its words: T = 1
 *    for a q that fills its top word, 2^(2h - 1) for h leading zero bits of the top word: 512 at
 *    the paper's 27 bits, more than n at 54 and 109). Reducing every product instead, as MW_MUL
 *    does, cost 3.6 (w = 4) to 7.3 (w = 1) times the instructions a term. The output range is
 *    cut into chunks of L coefficients (MW_CONV_BLOCK halved until every tasklet gets one) dealt
 *    round-robin to the tasklets; for each chunk a tasklet streams a in blocks of A coefficients
 *    and, per block, the window of b the block meets, as RAW_CONV does (A: MW_CONV_BLOCK / w
 *    words' worth, halved to fit the work area and n / 2, so that a window wraps at most once
 *    and each of its DMAs is one).
 *
 * Every 32x32->64 product is mul32_64 (cost.h: COST_MUL32_64, DRAMatic's 35-instruction custom
 * multiply from the 8x8 multiplier). A word step of an add, subtract or product column is
 * charged its loads, its add/addc or sub/subc, its store and its loop iteration.
 *
 * The counts do not depend on the values: a Karatsuba half-difference and a trial subtraction
 * compute both outcomes and select a pointer, so the emulator's counts price any operands (as
 * raw_poly.h's do).
 *
 * WRAM: the modulus record (at most 10 words) and the a and b chunks in the tasklet's work
 * area; a coefficient's product and temporaries on the stack: at the deepest, the chunk's 12
 * words and two Karatsuba levels of 17 (46 words, 184 bytes, besides the frames) of the
 * 512-byte STACK_SIZE_DEFAULT.
 *
 * MW_CONV's WRAM: the record, an a-block (A w words), the window ((L + A) w) and the chunk's
 * two sums an output (4 w L) in the tasklet's work area: at most 7 A w + MW_RECORD_RESERVE
 * words. The results are gathered into the a-block's words before they are written out.
 *
 * Included by main.c after raw_poly.h; run_command calls multiword_command.
 */
#ifndef PIMHE_MULTIWORD_H
#define PIMHE_MULTIWORD_H

#include <stdint.h>

#include "arith_common.h"
#include "context.h"
#include "cost.h"
#include "dma.h"
#include "pimhe_dpu.h"

/* Widest coefficient, in words (128 bits). */
#define MW_MAX_WORDS 4u
/* Words of the modulus record: q (w), a zero word, mu (w + 1); 2w + 2, always even. */
#define MW_RECORD_WORDS(w) (2u * (w) + 2u)
/* Work-area words reserved for the record ahead of the chunks (an even count: 8-aligned). */
#define MW_RECORD_RESERVE (MW_RECORD_WORDS(MW_MAX_WORDS) + 2u)
/* Words of MW_CONV's longest a-block: a window (at most two blocks) is then at most 1024 bytes,
 * one DMA on either side of its wrap. */
#define MW_CONV_BLOCK_WORDS 128u

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

/* The command's operands are sound: w = src[3] is 1, 2 or 4; count even, no flags; the
 * record 8-aligned; every operand inside the 32-bit MRAM address space. MW_CONV also: n =
 * scalar a power of two in [4, 2^20], lo = scalar_shoup even, lo + count <= n, and its operands
 * are n coefficients long. */
static uint32_t multiword_check(const ctx_t *c) {
    const pimhe_command_t *cmd = c->cmd;
    const uint32_t w = cmd->src[3];
    COST(16 * COST_ALU);
    if ((w != 1u && w != 2u && w != 4u) || (cmd->count & 1u) != 0u || cmd->flags != 0u ||
        (cmd->src[2] & 7u) != 0u) {
        return PIMHE_ERR_OPERAND;
    }
    uint64_t src_coefficients = cmd->count;
    COST(COST_BRANCH);
    if (cmd->opcode == PIMHE_OP_MW_CONV) {
        const uint32_t n = cmd->scalar, lo = cmd->scalar_shoup;
        COST(8 * COST_ALU);
        if (n < 4u || n > (1u << 20) || (n & (n - 1u)) != 0u || (lo & 1u) != 0u || (uint64_t)lo + cmd->count > n) {
            return PIMHE_ERR_OPERAND;
        }
        src_coefficients = n;
    }
    const uint64_t src_bytes = 4ull * w * src_coefficients, bytes = 4ull * w * cmd->count, limit = 0x100000000ull;
    if ((uint64_t)cmd->src[0] + src_bytes > limit || (uint64_t)cmd->src[1] + src_bytes > limit ||
        (uint64_t)cmd->dst[0] + bytes > limit || (uint64_t)cmd->src[2] + 4u * MW_RECORD_WORDS(w) > limit) {
        return PIMHE_ERR_OPERAND;
    }
    return PIMHE_STATUS_OK;
}

/* The record is a modulus of w words and its Barrett constant: q's top word nonzero, its
 * padding word zero, and 0 <= b^(2w) - mu q < q (mu = floor(b^(2w) / q)). */
static uint32_t multiword_check_record(const uint32_t *record, uint32_t w) {
    const uint32_t *q = record, *mu = record + w + 1u;
    uint32_t y[2u * MW_MAX_WORDS + 1u], e[2u * MW_MAX_WORDS + 1u], t[MW_MAX_WORDS + 1u];
    COST(4 * COST_ALU + 2 * COST_LOAD + 2 * COST_BRANCH);
    if (q[w - 1u] == 0u || q[w] != 0u) {
        return PIMHE_ERR_OPERAND;
    }
    mw_mul_school(y, mu, w + 1u, q, w, 2u * w + 1u);
    COST((2u * w + 1u) * (COST_STORE + COST_LOOP));
    for (uint32_t i = 0; i <= 2u * w; i++) {
        e[i] = i == 2u * w; /* b^(2w) */
    }
    if (mw_sub(e, e, y, 2u * w + 1u) != 0u) {
        return PIMHE_ERR_OPERAND; /* mu q > b^(2w) */
    }
    COST(w * (COST_LOAD + COST_ALU + COST_LOOP) + COST_BRANCH);
    uint32_t high = 0;
    for (uint32_t i = w + 1u; i <= 2u * w; i++) {
        high |= e[i];
    }
    if (high != 0u || mw_sub(t, e, q, w + 1u) == 0u) {
        return PIMHE_ERR_OPERAND; /* b^(2w) - mu q >= q */
    }
    return PIMHE_STATUS_OK;
}

/* MW_ADD or MW_MUL on `len` coefficients of w words: a (overwritten by the result) and b. */
static void multiword_chunk(uint32_t op, uint32_t *a, const uint32_t *b, const uint32_t *record, uint32_t w,
                            uint32_t len, int best) {
    for (uint32_t j = 0; j < len; j++) {
        uint32_t *aj = a + j * w;
        const uint32_t *bj = b + j * w;
        COST(COST_LOOP + 2 * COST_ALU);
        if (op == PIMHE_OP_MW_ADD) {
            mw_add_mod(aj, aj, bj, record, w);
        } else {
            mw_mul_mod(aj, aj, bj, record, w, best);
        }
    }
}

/* MW_CONV's a-block for polynomial length n and w words: MW_CONV_BLOCK_WORDS / w coefficients,
 * halved until the record, a block, a window (two blocks) and the sums (four blocks' words: two
 * 2w-word sums an output) fit the tasklet's work area and a block is at most n / 2 (a window
 * then wraps at most once). */
static uint32_t mw_conv_block(const ctx_t *c, uint32_t n, uint32_t w) {
    uint32_t block = MW_CONV_BLOCK_WORDS / w;
    COST(4 * COST_ALU);
    while (28u * block * w + 4u * MW_RECORD_RESERVE > c->area_bytes || block > n / 2u) {
        COST(COST_LOOP + 2 * COST_ALU);
        block >>= 1;
    }
    return block;
}

/* Reads coefficients [first, first + count) of the n-coefficient polynomial of w words at MRAM
 * offset `poly`, wrapping at n, into buf: one DMA on each side of the wrap (count <= n). */
static void mw_read_wrapped(uint32_t poly, uint32_t n, uint32_t first, uint32_t count, uint32_t w, uint32_t *buf) {
    COST(5 * COST_ALU + COST_BRANCH);
    const uint32_t head = n - first < count ? n - first : count;
    dma_read(poly + 4u * w * first, buf, 4u * w * head);
    if (head < count) {
        dma_read(poly, buf + w * head, 4u * w * (count - head));
    }
}

/* Terms MW_CONV sums unreduced between folds, T: a fold leaves a residue below q in the added
 * terms' sum, so T (q - 1)^2 + q < b^(2w) must hold. T = 1 when q's top word has no leading zero
 * bit (q (q - 1) < b^(2w)); else T = 2^(2h - 1) for h leading zeros, h at most 11 (T = 2^21 is
 * beyond n): q < 2^(32 w - h) gives T (q - 1)^2 < 2^(64 w - 1), and q < 2^(64 w - 1). */
static uint32_t mw_conv_lazy_terms(const uint32_t *q, uint32_t w) {
    const uint32_t top = q[w - 1u];
    uint32_t h = 0;
    COST(COST_LOAD + 2 * COST_ALU);
    while (h < 11u && (top >> (31u - h)) == 0u) {
        COST(COST_LOOP + 2 * COST_ALU);
        h++;
    }
    COST(2 * COST_ALU + COST_BRANCH);
    return h == 0u ? 1u : 1u << (2u * h - 1u);
}

/* An output's two sums (4w words: the added terms', the subtracted terms') folded: the first's
 * low w words := (first mod q - second mod q) mod q, every other word zeroed. */
static void mw_conv_fold(uint32_t *sums, const uint32_t *record, uint32_t w) {
    uint32_t plus[MW_MAX_WORDS], minus[MW_MAX_WORDS];
    mw_barrett(plus, sums, record, w);
    mw_barrett(minus, sums + 2u * w, record, w);
    mw_sub_mod(sums, plus, minus, record, w);
    COST(3u * w * (COST_STORE + COST_LOOP));
    for (uint32_t i = w; i < 4u * w; i++) {
        sums[i] = 0;
    }
}

/* One output chunk of MW_CONV: c_k for k in [k0, k0 + len), written to dst at byte `at`; the
 * sums folded every `lazy` terms (mw_conv_lazy_terms, a power of two). */
static void mw_conv_chunk(ctx_t *c, const uint32_t *record, uint32_t w, uint32_t k0, uint32_t len, uint32_t block,
                          uint32_t lazy, uint32_t at, int best) {
    const pimhe_command_t *cmd = c->cmd;
    const uint32_t n = cmd->scalar, run = lazy < block ? lazy : block;
    uint32_t *a = c->area + MW_RECORD_RESERVE, *window = a + block * w, *sums = window + (len + block) * w;
    uint32_t x[2u * MW_MAX_WORDS];
    COST(12 * COST_ALU + 4u * len * w * (COST_STORE + COST_LOOP));
    for (uint32_t j = 0; j < 4u * len * w; j++) {
        sums[j] = 0;
    }
    for (uint32_t i0 = 0; i0 < n; i0 += block) {
        COST(COST_LOOP + 8 * COST_ALU);
        dma_read(cmd->src[0] + 4u * w * i0, a, 4u * w * block);
        const uint32_t first = (k0 + 2u * n - i0 - block) & (n - 1u);
        mw_read_wrapped(cmd->src[1], n, first, len + block, w, window);
        /* Every run of `run` terms ends a fold's worth when run < block; else the block does
         * every lazy / block blocks, and the last block always does. */
        const int fold = ((i0 + block) & (lazy - 1u)) == 0u || i0 + block == n;
        for (uint32_t j = 0; j < len; j++) {
            /* Terms with i <= k (added) are i - i0 < split; the rest wrap (subtracted). */
            const uint32_t k = k0 + j;
            const uint32_t split = k < i0 ? 0u : (k - i0 + 1u < block ? k - i0 + 1u : block);
            const uint32_t *wj = window + (j + block) * w; /* wj - i w: b_{(k - i0 - i) mod n} */
            uint32_t *plus = sums + 4u * w * j, *minus = plus + 2u * w;
            COST(COST_LOOP + 9 * COST_ALU);
            for (uint32_t r = 0; r < block; r += run) {
                const uint32_t end = r + run, mid = split < r ? r : (split < end ? split : end);
                COST(COST_LOOP + 6 * COST_ALU + COST_BRANCH);
                for (uint32_t i = r; i < mid; i++) {
                    COST(COST_LOOP + 2 * COST_ALU);
                    mw_product(x, a + i * w, wj - i * w, w, best);
                    (void)mw_add(plus, plus, x, 2u * w);
                }
                for (uint32_t i = mid; i < end; i++) {
                    COST(COST_LOOP + 2 * COST_ALU);
                    mw_product(x, a + i * w, wj - i * w, w, best);
                    (void)mw_add(minus, minus, x, 2u * w);
                }
                if (fold) {
                    mw_conv_fold(plus, record, w);
                }
            }
        }
    }
    /* The residues, the low w words of each output's sums, gathered into the a-block's words
     * (len <= block) for one DMA. */
    COST(len * w * (COST_LOAD + COST_STORE + COST_LOOP));
    for (uint32_t j = 0; j < len; j++) {
        for (uint32_t i = 0; i < w; i++) {
            a[j * w + i] = sums[4u * w * j + i];
        }
    }
    dma_write(a, cmd->dst[0] + at, 4u * w * len);
}

/* MW_CONV after its checks: the output chunks dealt round-robin to the tasklets. */
static void mw_conv(ctx_t *c, const uint32_t *record, uint32_t w, int best) {
    const pimhe_command_t *cmd = c->cmd;
    const uint32_t block = mw_conv_block(c, cmd->scalar, w), lazy = mw_conv_lazy_terms(record, w);
    uint32_t unit = block;
    COST(4 * COST_ALU);
    while (unit > 2u && (cmd->count + unit - 1u) / unit < c->nt) {
        COST(COST_LOOP + 3 * COST_ALU);
        unit >>= 1;
    }
    for (uint32_t chunk = c->me; chunk * unit < cmd->count; chunk += c->nt) {
        COST(COST_LOOP + 4 * COST_ALU);
        const uint32_t first = chunk * unit;
        const uint32_t len = cmd->count - first < unit ? cmd->count - first : unit;
        mw_conv_chunk(c, record, w, cmd->scalar_shoup + first, len, block, lazy, 4u * w * first, best);
    }
}

/* MW_ADD or MW_MUL: the command's status. Chunks of at most 2048 bytes of each operand (fewer
 * coefficients where that gives every tasklet one), dealt round-robin to the tasklets. */
static uint32_t multiword_command(ctx_t *c) {
    uint32_t status = multiword_check(c);
    if (status != PIMHE_STATUS_OK) {
        return status;
    }
    const pimhe_command_t *cmd = c->cmd;
    const uint32_t w = cmd->src[3], op = cmd->opcode;
    const int best = c->variant == PIMHE_VARIANT_BEST;
    KERNEL_PHASE(op == PIMHE_OP_MW_ADD ? "mw_add" : op == PIMHE_OP_MW_MUL ? "mw_mul" : "mw_conv");
    uint32_t *record = c->area;
    dma_read(cmd->src[2], record, 4u * MW_RECORD_WORDS(w));
    status = multiword_check_record(record, w);
    if (status != PIMHE_STATUS_OK) {
        return status;
    }
    COST(COST_BRANCH);
    if (op == PIMHE_OP_MW_CONV) {
        mw_conv(c, record, w, best);
        return PIMHE_STATUS_OK;
    }
    uint32_t chunk = DMA_MAX_BYTES / (4u * w);
    COST(8 * COST_ALU);
    while (2u * 4u * w * chunk + 4u * MW_RECORD_RESERVE > c->area_bytes) {
        COST(COST_LOOP + 3 * COST_ALU);
        chunk >>= 1;
    }
    while (chunk > 2u && (cmd->count + chunk - 1u) / chunk < c->nt) {
        COST(COST_LOOP + 3 * COST_ALU);
        chunk >>= 1;
    }
    uint32_t *a = c->area + MW_RECORD_RESERVE, *b = a + w * chunk;
    const uint32_t chunks = (cmd->count + chunk - 1u) / chunk;
    for (uint32_t k = c->me; k < chunks; k += c->nt) {
        COST(COST_LOOP + 6 * COST_ALU);
        const uint32_t first = k * chunk;
        const uint32_t len = cmd->count - first < chunk ? cmd->count - first : chunk;
        const uint32_t bytes = 4u * w * len, at = 4u * w * first;
        dma_read(cmd->src[0] + at, a, bytes);
        dma_read(cmd->src[1] + at, b, bytes);
        multiword_chunk(op, a, b, record, w, len, best);
        dma_write(a, cmd->dst[0] + at, bytes);
    }
    return PIMHE_STATUS_OK;
}

#endif /* PIMHE_MULTIWORD_H */
