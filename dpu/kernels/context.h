/*
 * context.h: the per-tasklet context every kernel takes (ctx_t: the tasklet's WRAM, the header's
 * per-launch constants and each variant's arithmetic state) and the WRAM block sizes.
 *
 * Included by main.c (one translation unit, as UPMEM's build compiles it); setup and main
 * (main.c) fill the context.
 */
#ifndef PIMHE_CONTEXT_H
#define PIMHE_CONTEXT_H

#include <stdint.h>

#include "arith_barrett.h"
#include "arith_best.h"
#include "pimhe_dpu.h"

#define BLOCK_BYTES_LARGE 2048u
#define BLOCK_BYTES_SMALL 1024u
#define LARGE_BLOCK_MAX_TASKLETS 16u
/* best, table stages: the first three forward and last three inverse stages (7 distinct
 * twiddles each) multiply through shared WRAM tables of 4 x 256 words per twiddle (28 KiB),
 * which the host writes after each twiddle table's Shoup constants (twiddle_offset + 8N,
 * inv_twiddle_offset + 8N). The per-tasklet block shrinks to 1 KiB to make room; the three
 * table stages must stream from MRAM (N / 8 >= block), hence N >= 2048. The host lays the tables
 * out with its mirrors of these (crates/pim/src/layout.rs: TABLE_MIN_N, MUL_TABLES,
 * MUL_TABLE_WORDS), which its tests compare with these values. */
#define TABLE_STAGES 3u
#define TABLE_COUNT 7u
#define TABLE_WORDS 1024u
#define TABLE_BYTES (TABLE_COUNT * TABLE_WORDS * 4u)
#define TABLE_MIN_N 2048u
#define TABLE_BLOCK_BYTES 1024u

typedef struct {
    uint32_t me, nt;
    pimhe_header_t *hdr;
    pimhe_command_t *cmd;
    uint32_t *area;       /* block_elems + aux_words words */
    uint32_t *blk;        /* = area: the data block */
    uint32_t *aux;        /* = area + block_elems: twiddle buffers */
    uint32_t block_elems; /* BLOCK / 4 */
    uint32_t aux_words;   /* block_elems / 2 + 4 */
    uint32_t area_bytes;
    uint32_t tb;          /* best: groups per twiddle batch (block_elems / 16) */
    uint32_t n, log_n, q, variant;
    uint32_t tw, tws, itw, itws; /* MRAM offsets of the four tables */
    bar_ctx_t bar;
    best_ctx_t best;
    uint32_t use_tables;  /* best, N >= TABLE_MIN_N, <= 16 tasklets: table stages (arith_best.h) */
    uint32_t loaded;      /* which table set is in WRAM: 0 none, 1 forward, 2 inverse */
    uint32_t *tables;     /* the shared WRAM table region (TABLE_BYTES), all tasklets */
    uint32_t last_ready;  /* the INTT's scaled last twiddle has been derived */
    uint32_t rotation;    /* sub-polynomials dealt so far by NTT/INTT commands, mod nt: each
                           * command continues the round-robin where the last one stopped, so
                           * a list of commands is as balanced as one long command */
    uint32_t bar_n_inv, bar_last;
    best_tw_t best_n_inv, best_last;
    uint32_t deal_first, deal_step; /* best NTT/INTT work items of this tasklet: all (0, 1) when
                                     * it transforms a sub-polynomial alone, every nt-th from me
                                     * when the tasklets share one (ntt_best.h) */
    uint32_t bitrev_ready; /* AUTOMORPHISM's bit-reversal table is in the work area (any other
                            * command overwrites it) */
} ctx_t;

#endif /* PIMHE_CONTEXT_H */
