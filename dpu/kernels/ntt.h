/*
 * ntt.h: the NTT and INTT commands: coarse-grained (tasklet t transforms sub-polynomials t,
 * t + T, ... in place, the round-robin continuing from the previous transform command), each
 * sub-polynomial transformed by its variant's kernels (ntt_barrett.h, ntt_best.h); the best
 * variant shares each sub-polynomial among all tasklets when a command has fewer
 * sub-polynomials than tasklets (a DPU holding few polynomials per limb, as in the
 * ciphertext-major mode).
 *
 * Not a standalone header: main.c includes it after BARRIER_INIT (ntt_best.h); run_command
 * (main.c) calls transform_command.
 */
#ifndef PIMHE_NTT_H
#define PIMHE_NTT_H

#include <stdint.h>

#include "context.h"
#include "cost.h"
#include "dma.h"
#include "ntt_barrett.h"
#include "ntt_best.h"
#include "pimhe_dpu.h"

/* The INTT's last stage uses psi^-bitrev(1) N^-1 (consumption-order slot N - 1 times N^-1);
 * derived on the first INTT of a launch. */
static void prepare_last_twiddle(ctx_t *c) {
    if (c->last_ready) {
        return;
    }
    COST(COST_ALU + COST_BRANCH);
    const uint32_t w = *fetch_words(c->itw, c->n - 1u, 1u, c->aux);
    if (c->variant != PIMHE_VARIANT_BEST) {
        c->bar_last = bar_mulmod(w, c->bar_n_inv, &c->bar);
    } else {
        const uint32_t ws = csub(best_mulmod_lazy(w, &c->best_n_inv, &c->best), c->q);
        COST(COST_DIV64);
        c->best_last = best_tw(ws, (uint32_t)(((uint64_t)ws << 32) / c->q));
    }
    c->last_ready = 1;
}

/* Coarse-grained dealing: sub-polynomial i of an NTT/INTT command goes to tasklet
 * (i + rotation) mod nt, so this tasklet's first one is (me - rotation) mod nt. */
static uint32_t first_of_mine(const ctx_t *c) {
    COST(3 * COST_ALU);
    return (c->me + c->nt - c->rotation) % c->nt;
}

static void advance_rotation(ctx_t *c, uint32_t count) {
    COST(3 * COST_ALU);
    c->rotation = (c->rotation + count % c->nt) % c->nt;
}

/* An NTT (inverse = 0) or INTT command: coarse-grained, each tasklet transforms whole
 * sub-polynomials in place, dealt round-robin continuing from the previous transform command;
 * with the best variant and fewer sub-polynomials than tasklets, all tasklets transform each
 * sub-polynomial together (ntt_best.h's work items), one after another. */
static void transform_command(ctx_t *c, const pimhe_command_t *cmd, int inverse, int best) {
    if (c->use_tables && cmd->count > 0u) {
        load_tables(c, inverse ? 2u : 1u);
    }
    COST(COST_ALU + COST_BRANCH);
    if (best && cmd->count < c->nt) {
        if (inverse && cmd->count > 0u) {
            prepare_last_twiddle(c);
        }
        c->deal_first = c->me;
        c->deal_step = c->nt;
        for (uint32_t i = 0; i < cmd->count; i++) {
            COST(COST_LOOP + 2 * COST_ALU);
            const uint32_t poly = cmd->src[0] + 4u * i * c->n;
            inverse ? best_intt(c, poly) : best_ntt(c, poly);
        }
        c->deal_first = 0;
        c->deal_step = 1;
        return;
    }
    const uint32_t first = first_of_mine(c);
    if (inverse && first < cmd->count) {
        prepare_last_twiddle(c);
    }
    for (uint32_t i = first; i < cmd->count; i += c->nt) {
        COST(COST_LOOP + 2 * COST_ALU);
        const uint32_t poly = cmd->src[0] + 4u * i * c->n;
        if (best) {
            inverse ? best_intt(c, poly) : best_ntt(c, poly);
        } else {
            inverse ? bar_intt(c, poly) : bar_ntt(c, poly);
        }
    }
    advance_rotation(c, cmd->count);
}

#endif /* PIMHE_NTT_H */
