/*
 * ew_fused.h: the fused element-wise kernels of Anaheim's instruction set, on a chunk of words
 * in WRAM (docs/PIM.md):
 *   TENSOR_SQ  (TensorSq)  dst0 := a0^2, dst1 := 2 a0 a1, dst2 := a1^2: three products where
 *                          TENSOR(a0, a1, a0, a1) takes four (barrett) or three and two extra
 *                          subtractions (best's Karatsuba), and two operands read instead of four;
 *   CMAC       (CAccum)    dst0 += src0 * scalar: one term of a constant linear combination. A
 *                          K-term CAccum is a command list MULC, CMAC x (K - 1) [, CADD], one
 *                          launch with the accumulator resident in MRAM throughout;
 *   CADD                   dst0 := src0 + scalar, the constant polynomial (CAccum's offset):
 *                          every residue in NTT form, coefficient 0 in coefficient form;
 *   SUB_MULC   (ModDownEp) dst0 := (src0 - src1) * scalar, src1 broadcast as for SUB.
 *
 * Not a standalone header: elementwise.h includes it after ctx_t (context.h), the DMA helpers
 * (dma.h), EW_COST and ew_chunk; ew_command (elementwise.h) reads and writes the chunks.
 * Results are fully reduced in both variants, so they equal the CPU's bit for bit.
 *
 * Costs follow the other element-wise kernels: EW_COST (loads, stores and loop of the words
 * moved between the DMA buffers and registers) plus what each arithmetic primitive charges
 * itself (cost.h); the best variant's loops are specialized on the prime's form (one branch
 * per chunk, as MULC and TENSOR).
 */
#ifndef PIMHE_EW_FUSED_H
#define PIMHE_EW_FUSED_H

/* Whether op is one of this file's kernels. */
static inline int ew_fused_op(uint32_t op) {
    return op >= PIMHE_OP_TENSOR_SQ && op <= PIMHE_OP_SUB_MULC;
}

/* WRAM buffers of one chunk: TENSOR_SQ a0, a1 and the third output; CMAC src0 and the
 * accumulator; CADD src0; SUB_MULC src0, src1. */
static inline uint32_t ew_fused_buffers(uint32_t op) {
    return op == PIMHE_OP_TENSOR_SQ ? 3u : op == PIMHE_OP_CADD ? 1u : 2u;
}

/* CADD in coefficient form on the words [first, first + len) of the operand, in buf: scalar is
 * added to the words at multiples of N (coefficient 0 of each sub-polynomial); the rest is a
 * copy (DMA in, DMA out, no instruction per word). */
static void cadd_coefficient_chunk(const ctx_t *c, uint32_t *buf, uint32_t len, uint32_t first) {
    const uint32_t q = c->q, s = c->cmd->scalar, mask = c->n - 1u;
    COST(3 * COST_ALU); /* the first multiple of N in the chunk: and, sub, and */
    for (uint32_t j = (c->n - (first & mask)) & mask; j < len; j += c->n) {
        COST(COST_LOOP + COST_LOAD + COST_STORE);
        buf[j] = bar_addmod(buf[j], s, q);
    }
}

/* One chunk of a fused kernel; first: the index of the chunk's first word in the operand. */
static void ew_fused_chunk(ctx_t *c, uint32_t op, uint32_t *buf0, uint32_t *buf1, uint32_t *buf2, uint32_t len,
                           uint32_t first) {
    const uint32_t q = c->q;
    const int best = c->variant == PIMHE_VARIANT_BEST;
    const bar_ctx_t *bm = &c->bar;
    const best_ctx_t *m = &c->best;
    const uint32_t scalar = c->cmd->scalar;
    switch (op) {
    case PIMHE_OP_TENSOR_SQ:
        COST(EW_COST(len, 2u, 3u, best) + (best ? COST_BRANCH : 0));
        for (uint32_t j = 0; j < len; j++) {
            const uint32_t a0 = buf0[j], a1 = buf1[j];
            uint32_t d0, d2, e;
            if (best) {
                /* Every product is of two residues (< q^2): best_reduce_sq. */
                d0 = best_reduce_sq(mul32_64(a0, a0), m);
                e = best_reduce_sq(mul32_64(a0, a1), m);
                d2 = best_reduce_sq(mul32_64(a1, a1), m);
            } else {
                d0 = bar_mulmod(a0, a0, bm);
                e = bar_mulmod(a0, a1, bm);
                d2 = bar_mulmod(a1, a1, bm);
            }
            buf0[j] = d0;
            buf1[j] = bar_addmod(e, e, q);
            buf2[j] = d2;
        }
        break;
    case PIMHE_OP_CMAC:
        COST(EW_COST(len, 2u, 1u, best));
        if (best) {
            COST(COST_BRANCH);
            const best_tw_t s = best_tw(scalar, c->cmd->scalar_shoup);
            const uint32_t q2 = m->q2;
            for (uint32_t j = 0; j < len; j++) {
                /* acc < q plus a lazy product < 2q: below 3q, two conditional subtractions. */
                COST(COST_ALU);
                buf1[j] = csub(csub(buf1[j] + best_mulmod_lazy(buf0[j], &s, m), q2), q);
            }
        } else {
            for (uint32_t j = 0; j < len; j++) {
                buf1[j] = bar_addmod(buf1[j], bar_mulmod(buf0[j], scalar, bm), q);
            }
        }
        break;
    case PIMHE_OP_CADD:
        if (c->cmd->flags & PIMHE_FLAG_NTT_FORM) {
            COST(EW_COST(len, 1u, 1u, best));
            for (uint32_t j = 0; j < len; j++) {
                buf0[j] = bar_addmod(buf0[j], scalar, q);
            }
        } else {
            cadd_coefficient_chunk(c, buf0, len, first);
        }
        break;
    case PIMHE_OP_SUB_MULC:
        COST(EW_COST(len, 2u, 1u, best));
        if (best) {
            COST(COST_BRANCH);
            const best_tw_t s = best_tw(scalar, c->cmd->scalar_shoup);
            for (uint32_t j = 0; j < len; j++) {
                /* a + q - b < 2q: any word is a valid input of the lazy Shoup product. */
                COST(2 * COST_ALU);
                buf0[j] = csub(best_mulmod_lazy(buf0[j] + q - buf1[j], &s, m), q);
            }
        } else {
            for (uint32_t j = 0; j < len; j++) {
                buf0[j] = bar_mulmod(bar_submod(buf0[j], buf1[j], q), scalar, bm);
            }
        }
        break;
    default:
        break;
    }
}

/* CADD in coefficient form in place (dst0 = src0): only coefficient 0 of each sub-polynomial
 * changes, so each is one 8-byte read and write of its first word pair; the sub-polynomials are
 * dealt round-robin to the tasklets. */
static void cadd_coefficient_in_place(ctx_t *c) {
    const pimhe_command_t *cmd = c->cmd;
    uint32_t *pair = c->area;
    COST(2 * COST_ALU);
    for (uint32_t i = c->me; i < cmd->count; i += c->nt) {
        COST(COST_LOOP + 2 * COST_ALU + COST_LOAD + COST_STORE); /* the offset (lsl, add) */
        const uint32_t at = cmd->dst[0] + (i << (c->log_n + 2u));
        dma_read(at, pair, 8u);
        pair[0] = bar_addmod(pair[0], cmd->scalar, c->q);
        dma_write(pair, at, 8u);
    }
}

#endif /* PIMHE_EW_FUSED_H */
