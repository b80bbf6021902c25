/*
 * automorphism.h: the AUTOMORPHISM command X -> X^k, fine-grained over output blocks; the
 * derivation and its costs below.
 *
 * Included by main.c (one translation unit, as UPMEM's build compiles it); run_command (main.c)
 * calls automorphism_command.
 */
#ifndef PIMHE_AUTOMORPHISM_H
#define PIMHE_AUTOMORPHISM_H

#include <stdint.h>

#include "context.h"
#include "cost.h"
#include "dma.h"
#include "pimhe_dpu.h"

/* ------------------------------------------------------------------------------------------ */
/* automorphism X -> X^k (fine-grained over output blocks)                                     */
/*
 * A DPU holds whole sub-polynomials, so each image is computed where its input lies. The output
 * is produced in blocks of B = 2^t words (B <= 256, B <= N, two blocks and a B-byte table fit
 * the tasklet's work area: 256 words, or 128 with the NTT's shared tables or above 16
 * tasklets); the blocks of all sub-polynomials are dealt round-robin to the tasklets. With
 * N = 2^L:
 *
 * NTT form (slot j holds a(psi^(2 bitrev(j) + 1))): slot j of the image is slot
 * s(j) = bitrev(u) of the input, u = (bitrev(j) k + (k - 1) / 2) mod N. For j = m B + r,
 * bitrev_L(j) = bitrev_{L-t}(m) + bitrev_t(r) N / B, so with u0 = u(m B) = hi N / B + lo
 * (lo < N / B),  u = ((hi + bitrev_t(r) k) mod B) N / B + lo  and
 *     s(j) = bitrev_{L-t}(lo) B + bitrev_t((hi + bitrev_t(r) k) mod B):
 * output block m is a permutation of the single input block bitrev_{L-t}(lo). So a block costs
 * one DMA read of B words, a permutation inside WRAM through a table of bitrev_t (B bytes, kept
 * while consecutive commands are automorphisms) and one DMA write: 2N words of DMA per
 * sub-polynomial, as ADD, and about 13 instructions per word.
 *
 * Coefficient form: out[p] = a[i] for i = p k^-1 mod 2N below N, else -a[i - N] (X^N = -1).
 * Multiplication by k^-1 spreads every output block over the whole input (consecutive outputs
 * read k^-1 apart), the limb (up to 4 MiB) does not fit the 64 KiB WRAM, and re-reading it for
 * every output block costs N / B passes over MRAM. So each word is gathered with one 8-byte DMA
 * (the aligned pair holding it, the smallest DMA) into the output block, written back per
 * block: N reads of 8 bytes, about N (alpha + 4) = 81 N DMA cycles per sub-polynomial, 18 times
 * the NTT form's DMA and 6 times its modeled time (about 13 cycles a word, issue-bound).
 * Rotations should therefore run on NTT-form data (as the schemes keep it).
 *
 * B and N are powers of two, so block indices and offsets are shifts and masks: the DPU
 * multiplies and divides in software.
 */

/* The low `bits` bits of x in reverse order. */
static uint32_t bit_reverse(uint32_t x, uint32_t bits) {
    COST(COST_ALU + bits * (COST_LOOP + 4 * COST_ALU));
    uint32_t r = 0;
    for (uint32_t b = 0; b < bits; b++) {
        r = (r << 1) | (x & 1u);
        x >>= 1;
    }
    return r;
}

/* rev[i] = bitrev_t(i) for i < B = 2^t: bitrev(2i) = bitrev(i) / 2 and bitrev(2i + 1) =
 * bitrev(2i) + B / 2, filled in increasing i (entry i is written at step i / 2). */
static void bitrev_table(uint8_t *rev, uint32_t block) {
    COST(COST_STORE + (block / 2u) * (COST_LOOP + COST_LOAD + 3 * COST_ALU + 2 * COST_STORE));
    rev[0] = 0;
    for (uint32_t i = 0; i < block / 2u; i++) {
        const uint32_t even = (uint32_t)rev[i] >> 1;
        rev[2u * i] = (uint8_t)even;
        rev[2u * i + 1u] = (uint8_t)(even | block / 2u);
    }
}

/* k^-1 mod 2^32 for odd k: k k = 1 mod 8, and each Newton step x (2 - k x) doubles the correct
 * low bits: 3, 6, 12, 24 bits, enough for any 2N <= 2^24 (the kernel's 2N <= 2^21). */
static uint32_t inverse_mod_pow2(uint32_t k) {
    uint32_t x = k;
    for (uint32_t step = 0; step < 3u; step++) {
        COST(COST_LOOP + COST_ALU);
        x = mul32_32(x, 2u - mul32_32(k, x));
    }
    return x;
}

/* NTT form: output block m (B = 2^t words) of the sub-polynomial at src into the one at dst. */
static void automorphism_ntt_block(ctx_t *c, uint32_t src, uint32_t dst, uint32_t m, uint32_t t) {
    const uint32_t k = c->cmd->scalar, high_bits = c->log_n - t, block = 1u << t;
    uint32_t *out = c->area, *in = c->area + block;
    const uint8_t *rev = (const uint8_t *)(c->area + 2u * block);
    /* high_bits, B, (k - 1) / 2, the add and mask of u0, hi, lo's mask and and, both offsets */
    COST(12 * COST_ALU);
    const uint32_t u0 = (mul32_32(bit_reverse(m, high_bits), k) + (k >> 1)) & (c->n - 1u);
    const uint32_t hi = u0 >> high_bits, lo = u0 & ((1u << high_bits) - 1u);
    dma_read(src + (bit_reverse(lo, high_bits) << (t + 2u)), in, 4u * block);
    /* per word: a loop step, x's add and mask, two table loads with their address adds, the
     * source load and the destination store with their lsl_add */
    COST(block * (COST_LOOP + 6 * COST_ALU + 3 * COST_LOAD + COST_STORE));
    uint32_t x = hi;
    for (uint32_t rho = 0; rho < block; rho++) {
        out[rev[rho]] = in[rev[x]];
        x = (x + k) & (block - 1u);
    }
    dma_write(out, dst + (m << (t + 2u)), 4u * block);
}

/* Coefficient form: output block m (B = 2^t words from p = m B) gathered word by word. */
static void automorphism_coefficient_block(ctx_t *c, uint32_t src, uint32_t dst, uint32_t m, uint32_t t,
                                           uint32_t k_inv) {
    const uint32_t n = c->n, q = c->q, two_n_mask = 2u * c->n - 1u, block = 1u << t;
    uint32_t *out = c->area, *pair = c->area + block;
    /* the masks, B, m B, i's mask, the output's offset */
    COST(7 * COST_ALU);
    uint32_t i = mul32_32(m << t, k_inv) & two_n_mask;
    /* per word: a loop step, the sign mask (lsr, sub), the fold (and), the pair's offset (and;
     * the DMA call charges the rest), the word's address (and, lsl_add) and load, q - v (csub
     * charges its own), the select (and, andn, or), the store, i's add and mask */
    COST(block * (COST_LOOP + 11 * COST_ALU + COST_LOAD + COST_STORE));
    for (uint32_t r = 0; r < block; r++) {
        const uint32_t flip = 0u - (i >> c->log_n); /* all ones when i >= N */
        const uint32_t f = i & (n - 1u);
        dma_read(src + 4u * (f & ~1u), pair, 8u);
        const uint32_t v = pair[f & 1u];
        out[r] = (csub(q - v, q) & flip) | (v & ~flip);
        i = (i + k_inv) & two_n_mask;
    }
    dma_write(out, dst + (m << (t + 2u)), 4u * block);
}

static void automorphism_command(ctx_t *c) {
    const pimhe_command_t *cmd = c->cmd;
    const int ntt_form = (cmd->flags & PIMHE_FLAG_NTT_FORM) != 0u;
    /* Blocks of B = 2^t words: at most 256 (byte-sized table entries) and N, and two blocks and
     * the B-byte table within the work area. */
    uint32_t t = 8u;
    COST(8 * COST_ALU);
    while ((1u << t) > c->n || (9u << t) > c->area_bytes) {
        COST(COST_LOOP + 3 * COST_ALU);
        t--;
    }
    const uint32_t blocks_per_poly_bits = c->log_n - t, blocks = cmd->count << blocks_per_poly_bits;
    uint32_t k_inv = 0;
    if (ntt_form) {
        if (!c->bitrev_ready && c->me < blocks) {
            bitrev_table((uint8_t *)(c->area + (2u << t)), 1u << t);
            c->bitrev_ready = 1;
        }
    } else {
        k_inv = inverse_mod_pow2(cmd->scalar);
    }
    for (uint32_t b = c->me; b < blocks; b += c->nt) {
        COST(COST_LOOP + 6 * COST_ALU);
        const uint32_t poly = b >> blocks_per_poly_bits, m = b & ((1u << blocks_per_poly_bits) - 1u);
        const uint32_t src = cmd->src[0] + (poly << (c->log_n + 2u)), dst = cmd->dst[0] + (poly << (c->log_n + 2u));
        if (ntt_form) {
            automorphism_ntt_block(c, src, dst, m, t);
        } else {
            automorphism_coefficient_block(c, src, dst, m, t, k_inv);
        }
    }
}

#endif /* PIMHE_AUTOMORPHISM_H */
