/*
 * multiword_conv.h: MW_CONV, the textbook negacyclic product of two polynomials of n
 * coefficients of w words (Gupta et al.'s multiplication, shared/seeds/002_*, 4.2: "We do not
 * incorporate NTT"; multiword.h says what the coefficients are) in Z_q[x]/(x^n + 1), output
 * coefficients [lo, lo + count) (RAW_CONV's multi-word analogue, raw_poly.h):
 *   c_k = sum_{i <= k} a_i b_{k-i} - sum_{i > k} a_i b_{n+k-i}   (mod q).
 * The terms are summed unreduced, as a textbook product is written for speed, and reduced only
 * every T terms ("folds", mw_conv_lazy_terms: once an output at the paper's 54 and 109 bits,
 * every 512 terms at 27). The output range is cut into chunks of L coefficients (the a-block's
 * length, halved until every tasklet gets one) dealt round-robin to the tasklets; for each
 * chunk a tasklet streams a in a-blocks of A coefficients and, per block, the window of b the
 * block meets (L + A coefficients), as RAW_CONV does, so that a window wraps at most once and
 * each of its DMAs is one.
 *
 * WRAM, a tasklet's work area (mw_conv_area_words): the record, the a-block (A w words), the
 * window (2 A w), per output of the chunk K three-word leaf sums and a w-word residue, and for
 * Karatsuba the leaves of the a-block and the window (3 K A words and as many sign bytes). At
 * 16 tasklets' 3088 bytes: A = 64, 16, 8 (Karatsuba) and 64, 32, 8 (schoolbook) at w = 1, 2, 4.
 *
 * The counts do not depend on the values (a sign is a mask, never a branch), so the emulator's
 * counts price any operands.
 *
 * Included by multiword.h, whose multiword_command runs mw_conv after the command's checks.
 */
#ifndef PIMHE_MULTIWORD_CONV_H
#define PIMHE_MULTIWORD_CONV_H

#include <stddef.h>
#include <stdint.h>

#include "context.h"
#include "cost.h"
#include "dma.h"
#include "multiword_arith.h"
#include "pimhe_dpu.h"

/*
 * Summing a term's product whole (its 2w-word product, then a 2w-word addition) spends most of
 * a term on the product's combination and on the additions' word loops. MW_CONV instead
 * expands every coefficient product into the 32x32 word products it is made of, its "leaves",
 * and sums each leaf over the terms apart, in a three-word accumulator: the combination is done
 * once per fold, on the leaves' sums. The schoolbook (barrett variant) has w^2 leaves, word u
 * of a times word v of b, of weight b^(u + v). Karatsuba (best) has 3^log2(w) leaves: with
 * a = a1 B + a0 and b = b1 B + b0 (halves of h words, B = b^h),
 *   a b = a0 b0 (1 + B) + a1 b1 (B + B^2) + (a0 - a1)(b1 - b0) B,
 * each h-word product expanded again down to single words. The middle product's operands are
 * the magnitudes |a0 - a1| and |b1 - b0| and its sign is carried by a sign byte (0 or -1) per
 * leaf and operand; a term's sign is the xor of its two leaves' bytes and of its range's (the
 * wrapped terms are subtracted). A signed term p is added as its one's complement ~p = -p - 1
 * (an xor with the sign mask) and the count of negative terms is added once per run.
 *
 * Karatsuba's leaves of a coefficient are built once per block (a-block and window) and used
 * by every output of the chunk; the schoolbook's leaves are the coefficient words themselves,
 * read in place.
 */

/* Words of MW_CONV's longest a-block: a window (at most two blocks) is then at most 1024 bytes,
 * one DMA on either side of its wrap. */
#define MW_CONV_BLOCK_WORDS 128u
/* Karatsuba's leaves at w = 2 and 4: the word offsets each leaf's sum is added at (a bit per
 * offset) and which leaves have sign bytes (a bit per leaf). From the identity above, w = 2:
 * {0, 1}, {1, 2} and the signed {1}; w = 4: those three at offsets {0, 2} (a0 b0), {2, 4}
 * (a1 b1) and, signed, {2} (the middle product). */
static const uint32_t MW_KARATSUBA_OFFSETS_2[3] = {0x3u, 0x6u, 0x2u};
static const uint32_t MW_KARATSUBA_OFFSETS_4[9] = {0xfu, 0x1eu, 0xau, 0x3cu, 0x78u, 0x28u, 0xcu, 0x18u, 0x8u};
#define MW_KARATSUBA_SIGNED_2 0x4u
#define MW_KARATSUBA_SIGNED_4 0x1e4u /* leaves 2, 5, 6, 7 and 8 */

/* One tasklet's MW_CONV: its shapes and its work area's parts. */
typedef struct {
    uint32_t w, n;
    uint32_t block;     /* A: coefficients of an a-block */
    uint32_t lazy, run; /* terms between folds; terms summed before a fold check (min(lazy, A)) */
    uint32_t leaves;    /* K: w^2 (schoolbook), 3^log2(w) (Karatsuba) */
    int built;          /* leaves built (Karatsuba, w >= 2), else read in place */
    uint32_t signed_leaves;
    const uint32_t *record;
    uint32_t *a, *window;     /* the a-block (A w words), the window ((L + A) w words, L <= A) */
    uint32_t *sums, *residue; /* per output: K three-word sums; a w-word residue */
    uint32_t *a_leaves, *w_leaves; /* built: K x A and K x 2A words */
    int8_t *a_signs, *w_signs;     /* built: K x A and K x 2A bytes */
} mw_conv_t;

/* Words of the work area MW_CONV needs for a-blocks (and chunks) of `block` coefficients. */
static uint32_t mw_conv_area_words(uint32_t w, uint32_t block, uint32_t leaves, int built) {
    COST(8 * COST_ALU);
    const uint32_t words = MW_RECORD_RESERVE + 4u * w * block + 3u * leaves * block;
    return built ? words + 3u * leaves * block + (3u * leaves * block + 3u) / 4u : words;
}

/* |x - y| and its sign byte: -1 when x < y. */
static uint32_t mw_absdiff(uint32_t x, uint32_t y, int8_t *sign) {
    COST(5 * COST_ALU);
    const uint32_t m = 0u - (uint32_t)(x < y);
    *sign = (int8_t)m;
    return ((x - y) ^ m) - m;
}

/* The three Karatsuba leaves of a two-word operand (x0, x1): x0, x1 and |x0 - x1| (a's side)
 * or |x1 - x0| (b's), `stride` words apart; the sign bytes of an operand that is itself a
 * middle product's (`outer`: its sign) on every leaf, else on the third only. */
static void mw_leaves2(uint32_t x0, uint32_t x1, int b_side, int outer_signed, int8_t outer, uint32_t *words,
                       int8_t *signs, uint32_t stride) {
    int8_t s;
    const uint32_t d = b_side ? mw_absdiff(x1, x0, &s) : mw_absdiff(x0, x1, &s);
    COST(4 * COST_STORE + COST_ALU);
    words[0] = x0;
    words[stride] = x1;
    words[2u * stride] = d;
    signs[2u * stride] = (int8_t)(outer ^ s);
    if (outer_signed) {
        COST(2 * COST_STORE);
        signs[0] = outer;
        signs[stride] = outer;
    }
}

/* The Karatsuba leaves of one coefficient of w = 2 or 4 words (mw_leaves2's layout). */
static void mw_leaves(const uint32_t *x, uint32_t w, int b_side, uint32_t *words, int8_t *signs, uint32_t stride) {
    COST(2 * COST_LOAD + COST_BRANCH);
    if (w == 2u) {
        mw_leaves2(x[0], x[1], b_side, 0, 0, words, signs, stride);
        return;
    }
    /* D = a's X0 - X1 or b's X1 - X0 over two words (sub, subc, the borrow), its magnitude
     * ((D ^ M) - M: two xor, sub, subc) and sign */
    COST(2 * COST_LOAD + 8 * COST_ALU);
    const uint64_t lo = (uint64_t)x[1] << 32 | x[0], hi = (uint64_t)x[3] << 32 | x[2];
    const uint64_t d = b_side ? hi - lo : lo - hi;
    const uint32_t m = 0u - (uint32_t)(b_side ? hi < lo : lo < hi);
    const uint64_t mask = ((uint64_t)m << 32) | m, mag = (d ^ mask) - mask;
    mw_leaves2(x[0], x[1], b_side, 0, 0, words, signs, stride);
    mw_leaves2(x[2], x[3], b_side, 0, 0, words + 3u * stride, signs + 3u * stride, stride);
    mw_leaves2((uint32_t)mag, (uint32_t)(mag >> 32), b_side, 1, (int8_t)m, words + 6u * stride,
               signs + 6u * stride, stride);
}

/* The leaves of `count` coefficients of w words at x (a's side or b's), leaf k of coefficient
 * i at words[k stride + i]. */
static void mw_leaves_of(const uint32_t *x, uint32_t count, uint32_t w, int b_side, uint32_t *words, int8_t *signs,
                         uint32_t stride) {
    for (uint32_t i = 0; i < count; i++) {
        COST(COST_LOOP + 3 * COST_ALU);
        mw_leaves(x + i * w, w, b_side, words + i, signs + i, stride);
    }
}

/* One term of a leaf sum: p = x y added into (s0, s1, s2) as p, or as ~p when m = -1 (the
 * caller counts the negative terms). */
static inline void mw_leaf_term(uint32_t x, uint32_t y, uint32_t m, uint32_t *s) {
    const uint64_t p = mul32_64(x, y);
    const uint64_t lo = (uint64_t)s[0] + ((uint32_t)p ^ m);
    const uint64_t mid = (uint64_t)s[1] + ((uint32_t)(p >> 32) ^ m) + (lo >> 32);
    s[0] = (uint32_t)lo;
    s[1] = (uint32_t)mid;
    s[2] += m + (uint32_t)(mid >> 32);
}

/* Adds the terms i in [r, end) of one leaf to its sum (three words, two's complement): a's leaf
 * words at xa[i step], b's at xb[-i step] (b_{k - i}); terms below `mid` added, the others (the
 * wrapped ones) subtracted; with sign bytes (sa, sb; NULL for a leaf without) the term's sign
 * also their xor. */
static void mw_leaf_sum(uint32_t *sum, const uint32_t *xa, const int8_t *sa, const uint32_t *xb, const int8_t *sb,
                        uint32_t step, uint32_t r, uint32_t mid, uint32_t end) {
    COST(3 * COST_LOAD + COST_ALU);
    uint32_t s[3] = {sum[0], sum[1], sum[2]}, negatives = 0;
    for (uint32_t part = 0; part < 2u; part++) {
        const uint32_t from = part ? mid : r, to = part ? end : mid, range = 0u - part;
        COST(COST_LOOP + 4 * COST_ALU);
        if (sa == NULL) {
            for (uint32_t i = from; i < to; i++) {
                COST(COST_MW_LEAF_TERM);
                mw_leaf_term(xa[i * step], xb[-(int32_t)(i * step)], range, s);
                negatives -= range;
            }
        } else {
            for (uint32_t i = from; i < to; i++) {
                COST(COST_MW_LEAF_TERM + COST_MW_LEAF_SIGN);
                const uint32_t m = range ^ (uint32_t)(int32_t)sa[i] ^ (uint32_t)(int32_t)sb[-(int32_t)i];
                mw_leaf_term(xa[i * step], xb[-(int32_t)(i * step)], m, s);
                negatives -= m;
            }
        }
    }
    /* the +1 of every negative term's two's complement */
    COST(3 * COST_ALU + 3 * COST_STORE);
    const uint64_t lo = (uint64_t)s[0] + negatives, mid2 = (uint64_t)s[1] + (lo >> 32);
    sum[0] = (uint32_t)lo;
    sum[1] = (uint32_t)mid2;
    sum[2] = s[2] + (uint32_t)(mid2 >> 32);
}

/* The word offsets (a bit each) at which leaf k's sum is added. */
static uint32_t mw_leaf_offsets(const mw_conv_t *p, uint32_t k) {
    COST(2 * COST_ALU + COST_LOAD + COST_BRANCH);
    if (!p->built) {
        return 1u << (k / p->w + k % p->w); /* word u = k / w of a, v = k % w of b */
    }
    return p->w == 2u ? MW_KARATSUBA_OFFSETS_2[k] : MW_KARATSUBA_OFFSETS_4[k];
}

/* t (tw words) += s, a three-word two's-complement value, sign-extended; tw >= 3. */
static void mw_add_signed(uint32_t *t, const uint32_t *s, uint32_t tw) {
    COST(COST_LOAD + COST_ALU + tw * COST_MW_WORD);
    const uint32_t ext = 0u - (s[2] >> 31);
    uint32_t carry = 0;
    for (uint32_t i = 0; i < tw; i++) {
        const uint64_t x = (uint64_t)t[i] + (i < 3u ? s[i] : ext) + carry;
        t[i] = (uint32_t)x;
        carry = (uint32_t)(x >> 32);
    }
}

/* An output's fold: its residue and every leaf sum at the leaf's offsets added into one
 * (2w + 2)-word two's-complement total, the sums zeroed; the total's magnitude (below b^(2w),
 * by the choice of `lazy`) reduced by Barrett, negated mod q if the total was negative; the
 * result is the new residue. */
static void mw_conv_fold(const mw_conv_t *p, uint32_t *sums, uint32_t *residue) {
    const uint32_t w = p->w, tw = 2u * w + 2u;
    uint32_t t[2u * MW_MAX_WORDS + 2u], zero[MW_MAX_WORDS], r[2][MW_MAX_WORDS];
    COST((tw + w) * (COST_STORE + COST_LOOP));
    for (uint32_t i = 0; i < tw; i++) {
        t[i] = 0;
    }
    for (uint32_t i = 0; i < w; i++) {
        zero[i] = 0;
    }
    COST(COST_STORE);
    t[w] = mw_add(t, t, residue, w);
    for (uint32_t k = 0; k < p->leaves; k++) {
        uint32_t *s = sums + 3u * k;
        COST(COST_LOOP);
        for (uint32_t offsets = mw_leaf_offsets(p, k); offsets != 0u; offsets &= offsets - 1u) {
            const uint32_t o = (uint32_t)__builtin_ctz(offsets);
            COST(COST_LOOP + 3 * COST_ALU); /* ctz, and the bit cleared (sub, and) */
            mw_add_signed(t + o, s, tw - o);
        }
        COST(3 * COST_STORE);
        s[0] = s[1] = s[2] = 0;
    }
    /* |t| = (t ^ m) - m over its low 2w words (the top two are its sign's): m = -1 adds 1 */
    COST(COST_LOAD + 3 * COST_ALU + 2u * w * (COST_LOAD + 2 * COST_ALU + COST_STORE + COST_LOOP));
    const uint32_t m = 0u - (t[tw - 1u] >> 31);
    uint32_t carry = m & 1u;
    for (uint32_t i = 0; i < 2u * w; i++) {
        const uint64_t x = (uint64_t)(t[i] ^ m) + carry;
        t[i] = (uint32_t)x;
        carry = (uint32_t)(x >> 32);
    }
    mw_barrett(r[0], t, p->record, w);
    mw_sub_mod(r[1], zero, r[0], p->record, w);
    COST(COST_ALU + w * (COST_LOAD + COST_STORE + COST_LOOP));
    const uint32_t *result = r[m & 1u];
    for (uint32_t i = 0; i < w; i++) {
        residue[i] = result[i];
    }
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

/* Terms MW_CONV sums between folds, T: a fold starts from a residue below q, so the total's
 * magnitude stays below T (q - 1)^2 + q, which must be below b^(2w). T = 1 when q's top word
 * has no leading zero bit (q (q - 1) < b^(2w)); else T = 2^(2h - 1) for h leading zeros, h at
 * most 11 (T = 2^21 is beyond n): q < 2^(32 w - h) gives T (q - 1)^2 < 2^(64 w - 1), and
 * q < 2^(64 w - 1). A leaf sum holds at most T products below 2^64, far inside its 96 bits. */
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

/* One output chunk of MW_CONV: c_k for k in [k0, k0 + len), written to dst at byte `at`. */
static void mw_conv_chunk(ctx_t *c, const mw_conv_t *p, uint32_t k0, uint32_t len, uint32_t at) {
    const pimhe_command_t *cmd = c->cmd;
    const uint32_t n = p->n, w = p->w, block = p->block, leaves = p->leaves, run = p->run;
    COST(12 * COST_ALU + len * (3u * leaves + w) * (COST_STORE + COST_LOOP));
    for (uint32_t j = 0; j < len * 3u * leaves; j++) {
        p->sums[j] = 0;
    }
    for (uint32_t j = 0; j < len * w; j++) {
        p->residue[j] = 0;
    }
    for (uint32_t i0 = 0; i0 < n; i0 += block) {
        COST(COST_LOOP + 8 * COST_ALU);
        dma_read(cmd->src[0] + 4u * w * i0, p->a, 4u * w * block);
        const uint32_t first = (k0 + 2u * n - i0 - block) & (n - 1u);
        mw_read_wrapped(cmd->src[1], n, first, len + block, w, p->window);
        if (p->built) {
            mw_leaves_of(p->a, block, w, 0, p->a_leaves, p->a_signs, block);
            mw_leaves_of(p->window, len + block, w, 1, p->w_leaves, p->w_signs, 2u * block);
        }
        /* Every run of `run` terms ends a fold's worth when run < block; else the block does
         * every lazy / block blocks, and the last block always does. */
        const int fold = ((i0 + block) & (p->lazy - 1u)) == 0u || i0 + block == n;
        for (uint32_t j = 0; j < len; j++) {
            /* Terms with i <= k (added) are i - i0 < split; the rest wrap (subtracted). */
            const uint32_t k = k0 + j;
            const uint32_t split = k < i0 ? 0u : (k - i0 + 1u < block ? k - i0 + 1u : block);
            uint32_t *sums = p->sums + 3u * leaves * j;
            COST(COST_LOOP + 6 * COST_ALU);
            for (uint32_t r = 0; r < block; r += run) {
                const uint32_t end = r + run, mid = split < r ? r : (split < end ? split : end);
                COST(COST_LOOP + 6 * COST_ALU + COST_BRANCH);
                for (uint32_t leaf = 0; leaf < leaves; leaf++) {
                    /* leaf's words of a_i and of b_{k - i} (window coefficient j + block - i) */
                    COST(COST_LOOP + 8 * COST_ALU + COST_BRANCH);
                    if (p->built) {
                        const int has_signs = (p->signed_leaves >> leaf) & 1u;
                        const uint32_t at_a = leaf * block, at_b = leaf * 2u * block + j + block;
                        mw_leaf_sum(sums + 3u * leaf, p->a_leaves + at_a, has_signs ? p->a_signs + at_a : NULL,
                                    p->w_leaves + at_b, has_signs ? p->w_signs + at_b : NULL, 1u, r, mid, end);
                    } else {
                        const uint32_t u = leaf / w, v = leaf % w;
                        mw_leaf_sum(sums + 3u * leaf, p->a + u, NULL, p->window + (j + block) * w + v, NULL, w, r,
                                    mid, end);
                    }
                }
                if (fold) {
                    mw_conv_fold(p, sums, p->residue + w * j);
                }
            }
        }
    }
    /* The residues, one after the other, out in one DMA (len w <= the a-block's words). */
    dma_write(p->residue, cmd->dst[0] + at, 4u * w * len);
}

/* MW_CONV after its checks: the tasklet's shapes and work area, then the output chunks dealt
 * round-robin to the tasklets. The a-block: MW_CONV_BLOCK_WORDS / w coefficients, halved until
 * the work area holds it (mw_conv_area_words, with chunks of as many outputs) and it is at most
 * n / 2 (a window then wraps at most once). */
static void mw_conv(ctx_t *c, const uint32_t *record, uint32_t w, int best) {
    const pimhe_command_t *cmd = c->cmd;
    mw_conv_t p;
    p.w = w;
    p.n = cmd->scalar;
    p.record = record;
    p.built = best && w > 1u;
    p.leaves = p.built ? (w == 2u ? 3u : 9u) : w * w;
    p.signed_leaves = p.built ? (w == 2u ? MW_KARATSUBA_SIGNED_2 : MW_KARATSUBA_SIGNED_4) : 0u;
    p.lazy = mw_conv_lazy_terms(record, w);
    p.block = MW_CONV_BLOCK_WORDS / w;
    COST(16 * COST_ALU);
    while (4u * mw_conv_area_words(w, p.block, p.leaves, p.built) > c->area_bytes || p.block > p.n / 2u) {
        COST(COST_LOOP + 2 * COST_ALU);
        p.block >>= 1;
    }
    const uint32_t block = p.block, leaves = p.leaves;
    p.run = p.lazy < block ? p.lazy : block;
    COST(12 * COST_ALU);
    p.a = c->area + MW_RECORD_RESERVE;
    p.window = p.a + block * w;
    p.sums = p.window + 2u * block * w;
    p.residue = p.sums + 3u * leaves * block;
    p.a_leaves = p.residue + block * w;
    p.w_leaves = p.a_leaves + leaves * block;
    p.a_signs = (int8_t *)(p.w_leaves + 2u * leaves * block);
    p.w_signs = p.a_signs + leaves * block;
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
        mw_conv_chunk(c, &p, cmd->scalar_shoup + first, len, 4u * w * first);
    }
}

#endif /* PIMHE_MULTIWORD_CONV_H */
