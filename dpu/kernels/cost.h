/*
 * cost.h: what each primitive the kernel uses costs on a UPMEM DPU, in issued instructions.
 *
 * One table, used in two ways:
 *  - on hardware, COST(n) expands to nothing: the numbers only document the code;
 *  - in the emulator (-DPIMHE_EMULATOR), COST(n) charges n instructions to the calling tasklet.
 *    The timing model (docs/PIM.md, "Counting") turns those counts into cycles.
 *
 * Every arithmetic primitive in arith_*.h charges its entry here; every loop charges
 * COST_LOOP per iteration; WRAM loads/stores are charged where the kernel does them. The
 * runtime calls (mram_read/mram_write, barrier_wait, mem_alloc, me) are charged by the
 * emulator's shim with the COST_RT_* entries below.
 *
 * Sources:
 *  [D211] DRAMatic (shared/seeds/000_*), 2.1: DPUs are 32-bit RISC cores; the hardware
 *         multiplier is 8x8 -> 16 bits; wider products are built from it in software.
 *  [D311] DRAMatic 3.1.1: custom 32x32->64 multiply (Listing 1: four 16x16 products, combined
 *         in hand-written assembly) measured at 35 cycles; custom 32x32->32 at 21 cycles.
 *  [ISA]  UPMEM DPU instruction set: one instruction issues per tasklet turn; add/sub/logic/
 *         shift/compare, WRAM loads/stores (lw/sw 32-bit, ld/sd 64-bit pairs), jumps, the
 *         shift-and-add forms lsl_add/lsr_add, conditional jumps that fuse a compare, and the
 *         byte-selecting 8x8 multiplies mul_ul_ul/mul_uh_ul/mul_ul_uh/mul_uh_uh (byte 0 or 1
 *         of each operand).
 * Anything that is not a single instruction or a DRAMatic measurement is derived below from
 * those, and cross-checked against [D311] where both exist.
 */
#ifndef PIMHE_COST_H
#define PIMHE_COST_H

#ifdef PIMHE_EMULATOR
#include <pimhe_emu.h>
#define COST(n) PIMHE_EMU_CHARGE(n)
/* A multiply routine: charged like COST(n) and tallied by result width (32 or 64). */
#define COST_MUL(width, n) PIMHE_EMU_CHARGE_MUL(width, n)
/* Names the kernel phase that the emulator reports in limit violations ("pimhe_main/ntt"). */
#define KERNEL_PHASE(name) pimhe_emu_kernel_phase(name)
#else
#define COST(n) ((void)0)
#define COST_MUL(width, n) ((void)0)
#define KERNEL_PHASE(name) ((void)0)
#endif

/* ---- single instructions [ISA], 1 each ---- */
#define COST_ALU 1    /* add, sub, and, or, xor, lsl, lsr, lsl_add, lsr_add, compare, clz */
#define COST_BRANCH 1 /* jump; a compare fused into a conditional jump is one instruction */
#define COST_LOAD 1   /* WRAM load: lw (one word) or ld (an 8-aligned pair of words) */
#define COST_STORE 1  /* WRAM store: sw or sd */
#define COST_MUL8 1   /* native 8x8 -> 16 multiply [D211] */

/* ---- composites of single instructions ---- */
/* if (x >= m) x -= m: compare-and-jump + sub. */
#define COST_CSUB (COST_BRANCH + COST_ALU) /* 2 */
/* (a + b) mod q for a, b < q: add + COST_CSUB. (a - b) mod q: sub + (compare-and-jump + add). */
#define COST_ADDMOD (COST_ALU + COST_CSUB) /* 3 */
#define COST_SUBMOD (COST_ALU + COST_CSUB) /* 3 */
/* 64-bit add of a register pair: add + addc. */
#define COST_ADD64 (2 * COST_ALU)
/* (hi:lo) >> s for a run-time 0 < s < 32 whose complement 32 - s is precomputed: lsr, lsl, or. */
#define COST_SHIFT64 (3 * COST_ALU)
/* One loop iteration: an induction/pointer update + the fused compare-and-jump. */
#define COST_LOOP (COST_ALU + COST_BRANCH) /* 2 */

/* ---- multiplies built from the 8x8 multiplier ----
 * A 16-bit operand needs no extraction: mul_ul_* / mul_uh_* read its bytes 0 and 1 directly.
 * Splitting a word into 16-bit halves costs one lsr for the high half (COST_ALU).         */
/* 16x16 -> 32: four byte products, combined with three lsl_add. */
#define COST_MUL16 (4 * COST_MUL8 + 3 * COST_ALU) /* 7 */
/* Low 16 bits of a 16x16 product: the high*high byte product only reaches bit 16 and is
 * skipped; the two cross products are added and shifted in with add + lsl_add. */
#define COST_MUL16_LO (3 * COST_MUL8 + 2 * COST_ALU) /* 5 */
/* Custom 32x32 -> 64 [D311], measured 35. Cross-check: 2 splits + 4 COST_MUL16 (28) + 5 ALU to
 * add m1 + m2 with carry and shift it into (hi:lo) = 35. */
#define COST_MUL32_64 35
/* Custom 32x32 -> 32 [D311], measured 21. Cross-check: 2 splits + COST_MUL16 (a0 b0) +
 * 2 COST_MUL16_LO (a0 b1, a1 b0) + add + lsl_add = 21. */
#define COST_MUL32_32 21
/* 32x32 -> 32 when both operands' high halves are already split (twiddles and q are split once,
 * not per product): COST_MUL32_32 less its two splits. */
#define COST_MUL32_LO_SPLIT (COST_MUL16 + 2 * COST_MUL16_LO + 2 * COST_ALU) /* 19 */
/* Truncated high word for Shoup quotients: a1 b1 + (a1 b0 >> 16) + (a0 b1 >> 16) with split
 * operands = floor(a b / 2^32) minus 0, 1 or 2 (the a0 b0 product and two carries are dropped):
 * three COST_MUL16 + two lsr_add. The caller absorbs the error with one COST_CSUB. */
#define COST_MULHI_TRUNC (3 * COST_MUL16 + 2 * COST_ALU) /* 23 */
/* Truncated high word from 11 byte products (pimhe_mulhi11): with a = A3A2A1A0 and b = B3B2B1B0
 * (bytes; the high halves a >> 16 and b >> 16 are split already), keep every byte product of
 * weight >= 2^24 and A2 B0 of weight 2^16, drop A0B0, A0B1, A1B0, A0B2, A1B1:
 *   est = a1 b1 + A1B3 + A3B1 + floor(((A0B3 + A1B2 + A2B1 + A3B0) 2^8 + A2B0) / 2^16),
 * a1 b1 being the 16x16 product of the high halves (four byte products, three lsl_add). The
 * partial sum in the floor is < 2^27, so no carry is lost: est = floor(S / 2^32) exactly, S the
 * kept part of a b, and a b / 2^32 - est < 65025 (1 + 2 * 2^8 + 2 * 2^16) / 2^32 + 1 < 2.9922.
 * 11 MUL8 + 10 combining instructions (3 lsl_add in a1 b1, 2 add for A1B3 and A3B1, 3 add for
 * the weight-2^24 products, one lsl_add and one lsr_add). */
#define COST_MULHI11 (11 * COST_MUL8 + 10 * COST_ALU) /* 21 */
/* r - Q q (mod 2^32) for a prime of the form q = 2^b + 1 - k 2^s with k < 2^8 and 8 <= s < b
 * (every ntt_primes(30, N >= 128, ...) prime we use: 2^30 + 1 - 3*2^14, 2^30 + 1 - 9*2^13,
 * 2^30 + 1 - 11*2^13): Q q = Q + (Q << b) - ((Q k) << s), where only Q k mod 2^(32-s), i.e.
 * Q's bytes 0..2 times the byte k, matters: split Q >> 16 (1), Q0 k, Q1 k, Q2 k (3 MUL8), two
 * lsl_add, then lsl + add (the k term, run-time s), lsl + add (Q + (Q << b), run-time b) and
 * the final sub: 1 + 3 + 2 + 5 = 11. */
#define COST_QQ_FORM (COST_ALU + 3 * COST_MUL8 + 2 * COST_ALU + 5 * COST_ALU) /* 11 */
/* The same for any other prime: split Q >> 16, COST_MUL32_LO_SPLIT (q split once), sub. */
#define COST_QQ_GENERIC (COST_ALU + COST_MUL32_LO_SPLIT + COST_ALU) /* 21 */
/* Multiplication by a constant w through four shared WRAM tables R_i[x] = x w 2^(8i) mod q
 * (x < 256, i < 4; written by the host): a w = sum_i R_i[byte i of a] (mod q), a sum < 4q.
 * Per byte: the byte, one lsl_add for the entry's address (table base + 4 x; the table's
 * 1024 i offset is lw's immediate), one lw; then three adds.
 * _WRAM: a is in WRAM, its bytes are read with lbu (one load each): 4 + 4 + 4 + 3 = 15.
 * _REG:  a is in a register: and, lsr + and, lsr + and, lsr (6 ALU): 6 + 4 + 4 + 3 = 17. */
#define COST_TMUL_WRAM (4 * COST_LOAD + 4 * COST_ALU + 4 * COST_LOAD + 3 * COST_ALU) /* 15 */
#define COST_TMUL_REG (6 * COST_ALU + 4 * COST_ALU + 4 * COST_LOAD + 3 * COST_ALU)  /* 17 */
/* x 2^-L mod q for x < 4q, q = 1 mod 2^(L+1), 11 <= L <= 20 (N^-1 = 2^-log N, the table
 * stages' N >= 2048): m = -x mod 2^L (sub from zero, and), y = ((x + m) >> L) + m t with
 * t = (q - 1) >> L: add, lsr, m t from 2 x 3 byte products (6 MUL8, 5 combining), add:
 * 2 + 1 + 1 + 11 + 1 = 16. m < 2^L and t < 2^(30-L), so one of them has at most two bytes
 * and the other at most three for every such L (m t < 2^30). x + m < 2^32: q < 2^30 and
 * q = 1 mod 2^(L+1) give 4q + 2^L < 2^32. (x + m q) is divisible by 2^L,
 * y = (x + m q) / 2^L < q (1 + 4 / 2^L) < 2q. */
#define COST_MUL_POW2INV (2 * COST_ALU + 2 * COST_ALU + 6 * COST_MUL8 + 5 * COST_ALU + COST_ALU) /* 16 */
/* multiword.h's steps over words of a multi-word (non-RNS) coefficient:
 * one word of an add or subtract: two lw, add/addc (sub/subc) [ISA], a sw, a loop iteration; */
#define COST_MW_WORD (2 * COST_LOAD + COST_ALU + COST_STORE + COST_LOOP) /* 6 */
/* one product of a schoolbook column, besides the COST_MUL32_64 product itself: the two words
 * and the running column word loaded, product + word + carry (add, addc, add, addc), the word
 * stored, a loop iteration. */
#define COST_MW_PRODUCT (3 * COST_LOAD + 4 * COST_ALU + COST_STORE + COST_LOOP) /* 10 */
/* MW_CONV's lazy term over one leaf pair (multiword.h): the two leaf words loaded, their
 * 32x32->64 product (COST_MUL32_64, charged apart), the product's two words xor'ed with the
 * term's sign mask (0 or all ones: ~p = -p - 1), added into the three-word accumulator (add,
 * addc, addc, the mask as the top word), the negative-term count updated (sub), a loop
 * iteration. A signed leaf also loads both leaves' sign bytes (lbs: 0 or -1) and xors them
 * into the range's mask. */
#define COST_MW_LEAF_TERM (2 * COST_LOAD + 2 * COST_ALU + 3 * COST_ALU + COST_ALU + COST_LOOP) /* 10 */
#define COST_MW_LEAF_SIGN (2 * COST_LOAD + 2 * COST_ALU)                                      /* 4 */
/* 64-bit division (constants checked or derived once per launch, never in a loop): one
 * div_step instruction per quotient bit (64) + setup and sign handling. */
#define COST_DIV64 80

/* ---- runtime calls (charged by the emulator's shim) ---- */
/* mram_read / mram_write: MRAM address arithmetic + the ldma/sdma instruction. The transfer
 * itself is DMA time (alpha + beta * bytes in the model), not instructions. */
#define COST_RT_DMA (2 * COST_ALU)
/* barrier_wait: acquire, decrement, compare, stop or resume the waiters, release. */
#define COST_RT_BARRIER 12
/* mem_alloc: acquire, align, bump, compare with the heap end, release. */
#define COST_RT_MEM_ALLOC 8
/* me(): read the thread-id register. */
#define COST_RT_ME 1

#endif /* PIMHE_COST_H */
