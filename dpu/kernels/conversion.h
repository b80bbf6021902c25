/*
 * conversion.h: the kernels across primes, on a chunk of words in WRAM (docs/PIM.md):
 *   BCONV        one term of FastBConv (Bajard, Eynard, Hasan, Zucca): a residue y modulo a
 *                source prime, optionally centred, times (Q/q_i) mod q, added to the target
 *                limb. The host scales y first (MULC under the source prime), so a conversion
 *                from L primes onto one target prime is MULC x L, then BCONV x L;
 *   DIVIDE_LAST  the correction term of dividing by the last prime p: s - r p^-1 mod q, with
 *                BGV's t-correction in s.
 * With every limb of a polynomial on one DPU (the ciphertext-major layout) and SET_PRIME
 * switching the prime between commands, key switching's ModUp and ModDown and the modulus
 * switch are command lists of one launch, the data resident throughout.
 *
 * The source residue is below its own prime (< 2^30), not below q: the best variant's Shoup
 * product takes any word; the barrett variant first reduces it by a Barrett reduction, valid
 * below 2^(2k) (checked per command, PIMHE_ERR_CONVERSION). Centring and the t-correction are
 * masks, not branches: the residues are secret-dependent. Results are fully reduced, so they
 * equal the CPU backend's bit for bit.
 *
 * Not a standalone header: elementwise.h includes it after EW_COST and its helpers; ew_command
 * reads and writes the chunks.
 */
#ifndef PIMHE_CONVERSION_H
#define PIMHE_CONVERSION_H

/* Whether op is one of this file's kernels. */
static inline int conversion_op(uint32_t op) {
    return op == PIMHE_OP_BCONV || op == PIMHE_OP_DIVIDE_LAST;
}

/* WRAM buffers of one chunk: BCONV the source and the accumulator, DIVIDE_LAST the source. */
static inline uint32_t conversion_buffers(uint32_t op) {
    return op == PIMHE_OP_BCONV ? 2u : 1u;
}

/* y * scalar mod q for a residue y of another prime (y < 2^30). */
static inline uint32_t foreign_mulmod(uint32_t y, const best_tw_t *s, uint32_t scalar, const ctx_t *c, int best) {
    if (best) {
        return csub(best_mulmod_lazy(y, s, &c->best), c->q);
    }
    return bar_mulmod(bar_reduce(y, &c->bar), scalar, &c->bar);
}

/* All ones when x > bound, else 0, without a branch (sltu and a negation on the DPU). */
static inline uint32_t above_mask(uint32_t x, uint32_t bound) {
    COST(2 * COST_ALU);
    return 0u - (uint32_t)(x > bound);
}

/* The parameter checks of BCONV and DIVIDE_LAST (PIMHE_ERR_CONVERSION), beside the scalar's. */
static uint32_t conversion_check(const ctx_t *c) {
    const pimhe_command_t *cmd = c->cmd;
    const uint32_t source = cmd->src[1];
    COST(6 * COST_ALU + COST_BRANCH);
    if (source < 2u || source >= PIMHE_Q_LIMIT) {
        return PIMHE_ERR_CONVERSION;
    }
    if (c->variant != PIMHE_VARIANT_BEST && (uint64_t)source > (1ull << (2u * (c->bar.s_lo + 1u)))) {
        return PIMHE_ERR_CONVERSION;
    }
    if (cmd->opcode == PIMHE_OP_BCONV) {
        return cmd->src[2] < c->q ? PIMHE_STATUS_OK : PIMHE_ERR_CONVERSION;
    }
    const uint32_t t = cmd->src[2];
    if (t == 0u) {
        return PIMHE_STATUS_OK;
    }
    COST(COST_DIV64 + 4 * COST_ALU);
    if (t >= PIMHE_Q_LIMIT || c->q <= t / 2u + 1u || cmd->src[3] >= t ||
        cmd->dst[1] != (uint32_t)(((uint64_t)cmd->src[3] << 32) / t)) {
        return PIMHE_ERR_CONVERSION;
    }
    return PIMHE_STATUS_OK;
}

/* [r w]_t for r < 2^30 and w < t < 2^30 with w's Shoup quotient ws: exact products (the
 * quotient's error is below one, so the remainder is in [0, 2t)). */
static inline uint32_t mulmod_shoup_exact(uint32_t r, uint32_t w, uint32_t ws, uint32_t t) {
    const uint32_t quot = (uint32_t)(mul32_64(r, ws) >> 32);
    COST(COST_ALU);
    return csub(mul32_32(r, w) - mul32_32(quot, t), t);
}

static void conversion_chunk(ctx_t *c, uint32_t op, uint32_t *buf0, uint32_t *buf1, uint32_t len) {
    const pimhe_command_t *cmd = c->cmd;
    const uint32_t q = c->q;
    const int best = c->variant == PIMHE_VARIANT_BEST;
    const uint32_t scalar = cmd->scalar;
    const best_tw_t s = best_tw(scalar, cmd->scalar_shoup);
    const uint32_t source = cmd->src[1], half = source >> 1;
    COST(3 * COST_ALU + (best ? COST_BRANCH : 0));
    if (op == PIMHE_OP_BCONV) {
        const int centred = (cmd->flags & PIMHE_FLAG_CENTRED) != 0u;
        const int accumulate = (cmd->flags & PIMHE_FLAG_ACCUMULATE) != 0u;
        const uint32_t correction = cmd->src[2];
        COST(EW_COST(len, accumulate ? 2u : 1u, 1u, best));
        for (uint32_t j = 0; j < len; j++) {
            const uint32_t y = buf0[j];
            uint32_t v = foreign_mulmod(y, &s, scalar, c, best);
            if (centred) {
                COST(COST_ALU);
                v = bar_addmod(v, correction & above_mask(y, half), q);
            }
            buf1[j] = accumulate ? bar_addmod(buf1[j], v, q) : v;
        }
        return;
    }
    /* DIVIDE_LAST: s = above + m with |s| <= t/2 + 1 < q, so [s]_q is s plus q where s < 0. */
    const uint32_t t = cmd->src[2], w = cmd->src[3], ws = cmd->dst[1], t_half = t >> 1;
    COST(EW_COST(len, 1u, 1u, best));
    for (uint32_t j = 0; j < len; j++) {
        const uint32_t r = buf0[j];
        const uint32_t above = above_mask(r, half) & 1u;
        uint32_t shift = above;
        if (t != 0u) {
            const uint32_t x = bar_submod(mulmod_shoup_exact(r, w, ws, t), above, t);
            COST(COST_ALU);
            shift = above + x - (t & above_mask(x, t_half)); /* above + m, m = x or x - t */
        }
        COST(2 * COST_ALU);
        const uint32_t shift_q = shift + (q & (0u - (shift >> 31))); /* [above + m]_q */
        buf0[j] = bar_addmod(foreign_mulmod(r, &s, scalar, c, best), shift_q, q);
    }
}

#endif /* PIMHE_CONVERSION_H */
