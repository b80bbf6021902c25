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
 *  - MW_CONV: the textbook negacyclic product of two polynomials (multiword_conv.h).
 *
 * The word arithmetic is multiword_arith.h's. WRAM: the modulus record (at most 10 words) and
 * the a and b chunks in the tasklet's work area.
 *
 * Included by main.c after raw_poly.h; run_command calls multiword_command.
 */
#ifndef PIMHE_MULTIWORD_H
#define PIMHE_MULTIWORD_H

#include <stdint.h>

#include "context.h"
#include "cost.h"
#include "dma.h"
#include "multiword_arith.h"
#include "multiword_conv.h"
#include "pimhe_dpu.h"

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

