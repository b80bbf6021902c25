/*
 * ntt_stage.h: NTT_STAGE, one Cooley-Tukey stage of the forward negacyclic NTT over a range of
 * its butterflies, the data sent in and read back around every stage: MHY+'s per-stage NTT
 * offload through OpenFHE's HAL (shared/seeds/001_*, section IV-B, Figs. 6-7), which pimhe
 * reproduces beside its own whole-NTT-resident mode (NTT, ntt.h).
 *
 * A stage of gap t (t = N/2, N/4, ..., 1) has N/2 butterflies; butterfly b pairs coefficients
 * x = a[2 t (b / t) + b % t] and y = a[that + t] with the twiddle psi^bitrev(N / (2t) + b / t)
 * of the header's forward table, and computes x' = x + w y, y' = x - w y (mod q, fully
 * reduced, as NTT's stages do). The host gathers each DPU's butterflies [lo, lo + count) into
 * two arrays, the x's at src0 and the y's at src1, and reads them back after the launch
 * (raw_poly's neighbour crates/pim/src/ntt_stage.rs); the twiddles stay resident.
 *
 * Work split: chunks of L = block_elems / 4 - 2 butterflies (even) dealt round-robin to the
 * tasklets. WRAM per chunk, all in the tasklet's block: the x's (L words), the y's (L), the
 * chunk's twiddles and (best) their Shoup constants (at most L + 2 words each: fetch_words
 * widens to even bounds), 4 L + 4 words.
 *
 * Included by main.c after ntt.h (bar_ct_span, best_ct2_span); run_command calls
 * ntt_stage_command. Both variants.
 */
#ifndef PIMHE_NTT_STAGE_H
#define PIMHE_NTT_STAGE_H

#include <stdint.h>

#include "arith_barrett.h"
#include "arith_best.h"
#include "context.h"
#include "cost.h"
#include "dma.h"
#include "ntt_barrett.h"
#include "ntt_best.h"
#include "pimhe_dpu.h"

/* log2 of the gap, or 32 when the gap is not a power of two in [1, n / 2]. */
static uint32_t ntt_stage_log_gap(uint32_t gap, uint32_t n) {
    COST(3 * COST_ALU + COST_BRANCH);
    if (gap == 0u || gap > n / 2u || (gap & (gap - 1u)) != 0u) {
        return 32u;
    }
    uint32_t lg = 0;
    while ((1u << lg) != gap) {
        COST(COST_LOOP + COST_ALU);
        lg++;
    }
    return lg;
}

/* The command is sound: count and lo even, count > 0, lo + count <= n / 2, the gap a power of
 * two in [1, n / 2], no flags, both operands inside the 32-bit MRAM address space. */
static uint32_t ntt_stage_check(const ctx_t *c, uint32_t lg) {
    const pimhe_command_t *cmd = c->cmd;
    const uint32_t lo = cmd->src[2];
    COST(12 * COST_ALU);
    if (lg == 32u || cmd->count == 0u || ((cmd->count | lo) & 1u) != 0u || cmd->flags != 0u ||
        (uint64_t)lo + cmd->count > c->n / 2u) {
        return PIMHE_ERR_OPERAND;
    }
    const uint64_t bytes = 4u * (uint64_t)cmd->count, limit = 0x100000000ull;
    if ((uint64_t)cmd->src[0] + bytes > limit || (uint64_t)cmd->src[1] + bytes > limit) {
        return PIMHE_ERR_OPERAND;
    }
    return PIMHE_STATUS_OK;
}

/* Butterflies per chunk: four arrays of at most L + 2 words fill the block. */
static uint32_t ntt_stage_unit(const ctx_t *c) {
    COST(2 * COST_ALU);
    return c->block_elems / 4u - 2u;
}

/* Butterflies [b, b + len) of the stage of gap 2^lg, len <= unit: x's and y's at word `at` of
 * the operands. */
static void ntt_stage_chunk(ctx_t *c, uint32_t b, uint32_t len, uint32_t unit, uint32_t lg, uint32_t at, int best) {
    const pimhe_command_t *cmd = c->cmd;
    uint32_t *x = c->blk, *y = c->blk + unit;
    const uint32_t groups = c->n >> (lg + 1u), g0 = b >> lg, g1 = (b + len - 1u) >> lg;
    COST(10 * COST_ALU);
    dma_read(cmd->src[0] + 4u * at, x, 4u * len);
    dma_read(cmd->src[1] + 4u * at, y, 4u * len);
    const uint32_t *tw = fetch_words(c->tw, groups + g0, g1 - g0 + 1u, c->blk + 2u * unit);
    const uint32_t *tws = best ? fetch_words(c->tws, groups + g0, g1 - g0 + 1u, c->blk + 3u * unit + 2u) : tw;
    /* One span per group the chunk meets: the butterflies of a group share a twiddle. */
    for (uint32_t j = 0; j < len;) {
        const uint32_t g = (b + j) >> lg;
        const uint32_t group_end = ((g + 1u) << lg) - b;
        const uint32_t end = group_end < len ? group_end : len;
        COST(COST_LOOP + 6 * COST_ALU + COST_LOAD);
        if (best) {
            COST(COST_LOAD);
            const best_tw_t t = best_tw(tw[g - g0], tws[g - g0]);
            best_ct2_span(x + j, y + j, end - j, &t, &c->best, 1);
        } else {
            bar_ct_span(x + j, y + j, end - j, tw[g - g0], &c->bar);
        }
        j = end;
    }
    dma_write(x, cmd->src[0] + 4u * at, 4u * len);
    dma_write(y, cmd->src[1] + 4u * at, 4u * len);
}

/* NTT_STAGE: the command's status. */
static uint32_t ntt_stage_command(ctx_t *c) {
    const pimhe_command_t *cmd = c->cmd;
    const uint32_t lg = ntt_stage_log_gap(cmd->src[3], c->n);
    const uint32_t status = ntt_stage_check(c, lg);
    if (status != PIMHE_STATUS_OK) {
        return status;
    }
    KERNEL_PHASE("ntt_stage");
    const int best = c->variant == PIMHE_VARIANT_BEST;
    const uint32_t unit = ntt_stage_unit(c), lo = cmd->src[2];
    COST(2 * COST_ALU);
    for (uint32_t chunk = c->me; chunk * unit < cmd->count; chunk += c->nt) {
        COST(COST_LOOP + 4 * COST_ALU);
        const uint32_t first = chunk * unit;
        const uint32_t len = cmd->count - first < unit ? cmd->count - first : unit;
        ntt_stage_chunk(c, lo + first, len, unit, lg, first, best);
    }
    return PIMHE_STATUS_OK;
}

#endif /* PIMHE_NTT_STAGE_H */
