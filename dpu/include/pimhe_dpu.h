/*
 * pimhe_dpu.h: the MRAM interface between the host and pimhe's DPU program.
 *
 * Shared verbatim by the DPU kernel (dpu/kernels/main.c), the emulator shim and the Rust
 * mirrors in crates/pim/src/layout.rs. The contract is docs/PIM.md; this file is its C form.
 * layout.rs's tests compare the struct offsets and every constant here with the Rust mirrors
 * through the emulator's probes (dpu/emulator/shim.c, kernel_entry.c): change both together.
 * Plain C11, <stdint.h> and <stddef.h> only, so that UPMEM's dpu-upmem-dpurte-clang and the
 * host compiler see the same layout.
 *
 * MRAM image of one DPU (offsets in bytes from DPU_MRAM_HEAP_POINTER, all 8-aligned):
 *   0                          pimhe_header_t
 *   header.twiddle_offset      psi^bitrev(k), k < N (u32), then their Shoup constants (u32),
 *                              then for N >= 2048 seven multiplication tables (psi^bitrev(1..7))
 *   header.inv_twiddle_offset  inverse twiddles in consumption order (slot 0 unused), then
 *                              their Shoup constants, then for N >= 2048 seven tables (slots
 *                              N-7 .. N-1, the last times N^-1)
 *   A multiplication table of w: 4 x 256 u32, R_i[x] = x w 2^(8i) mod q (28 KiB per section;
 *   written by the host, read by the best variant only).
 *   header.command_offset      command_count x pimhe_command_t
 *   anything after             operands: `count` sub-polynomials = count * N u32, contiguous
 */
#ifndef PIMHE_DPU_H
#define PIMHE_DPU_H

#include <stddef.h>
#include <stdint.h>

/* "PIMH" read as a little-endian u32. */
#define PIMHE_MAGIC 0x50494d48u

/* Ring degrees the kernel supports (powers of two). At N = 2^20 a sub-polynomial is 4 MiB and
 * one prime's two twiddle sections 16 MiB of the 64 MiB MRAM; WRAM use does not depend on N
 * (main.c). */
#define PIMHE_N_MIN 16u
#define PIMHE_N_MAX 1048576u
#define PIMHE_LOG_N_MIN 4u
#define PIMHE_LOG_N_MAX 20u

/* Primes are below 2^30: lazy values in [0, 4q) still fit a 32-bit word. */
#define PIMHE_Q_LIMIT (1u << 30)

/* header.variant: which arithmetic the kernel uses. */
#define PIMHE_VARIANT_BARRETT 0u /* DRAMatic 3.1: Barrett + custom 32-bit multiplies */
#define PIMHE_VARIANT_BEST 1u    /* Shoup twiddles, lazy reduction, merged stages */

/* command.opcode */
#define PIMHE_OP_NTT 1u    /* src0[i] := NTT(src0[i]) in place, natural -> bit-reversed */
#define PIMHE_OP_INTT 2u   /* src0[i] := INTT(src0[i]) in place, scaled by N^-1 */
#define PIMHE_OP_ADD 3u    /* dst0[i] := src0[i] + src1[i] */
#define PIMHE_OP_SUB 4u    /* dst0[i] := src0[i] - src1[i] */
#define PIMHE_OP_MUL 5u    /* dst0[i] := src0[i] * src1[i] */
#define PIMHE_OP_MAC 6u    /* dst0[i] := dst0[i] + src0[i] * src1[i] */
#define PIMHE_OP_MULC 7u   /* dst0[i] := src0[i] * scalar */
#define PIMHE_OP_TENSOR 8u /* dst0 := a0 b0, dst1 := a0 b1 + a1 b0, dst2 := a1 b1 */
/* dst0[i] := src0[i](X^k), k = scalar (odd, < 2N), in NTT form when flags has
 * PIMHE_FLAG_NTT_FORM, else in coefficient form; dst0 must not overlap src0. */
#define PIMHE_OP_AUTOMORPHISM 9u
/* Fused element-wise kernels (Anaheim's TensorSq, CAccum, ModDownEp; dpu/kernels/ew_fused.h).
 * scalar / scalar_shoup as for MULC, checked the same way. */
#define PIMHE_OP_TENSOR_SQ 10u /* dst0 := a0^2, dst1 := 2 a0 a1, dst2 := a1^2 with (a0, a1) = src0..1 */
#define PIMHE_OP_CMAC 11u      /* dst0[i] := dst0[i] + src0[i] * scalar */
/* dst0[i] := src0[i] + scalar, the constant polynomial: under PIMHE_FLAG_NTT_FORM added to every
 * residue, else to coefficient 0 only (other coefficients copied; in place when dst0 = src0,
 * which touches one word pair per sub-polynomial). */
#define PIMHE_OP_CADD 12u
#define PIMHE_OP_SUB_MULC 13u /* dst0[i] := (src0[i] - src1[i]) * scalar */
/* Kernels across primes (dpu/kernels/conversion.h): the work of key switching and modulus
 * switching on a DPU that holds every limb of its polynomials (the ciphertext-major layout).
 * BCONV, one term of FastBConv onto this launch's prime q:
 *   dst0[i] := [dst0[i] under PIMHE_FLAG_ACCUMULATE] + y * scalar  (mod q)
 * where y = src0[i] is a residue modulo the source prime src[1] (< 2^30), taken as y - src[1]
 * when above src[1] / 2 under PIMHE_FLAG_CENTRED, which adds src[2] = (-src[1] * scalar) mod q
 * (the host's constant) instead of a second product. */
#define PIMHE_OP_BCONV 14u
/* DIVIDE_LAST, the correction term of dividing by the last prime p = src[1] (< 2^30):
 *   dst0[i] := s - r * p^-1  (mod q), scalar = (-p^-1) mod q,
 * for r = src0[i] = [a]_p in [0, p) (coefficient form), s = (r > p/2) + m with m = 0 when the
 * plain modulus t = src[2] is 0, else m = [r p^-1 - (r > p/2)]_t centred (BGV's correction, so
 * the result stays congruent to a p^-1 modulo t); src[3] = p^-1 mod t and dst[1] = its Shoup
 * quotient floor(src[3] 2^32 / t). The quotient is then a * p^-1 + dst0 (CMAC). */
#define PIMHE_OP_DIVIDE_LAST 15u
/* SET_PRIME: the following commands work modulo the prime of the 64-byte prime record at MRAM
 * offset src[0] (8-aligned): a pimhe_header_t whose magic, n, log_n, q, barrett, n_inv,
 * variant and twiddle offsets are checked as the header's (same statuses; n and variant must
 * equal the header's), its command fields ignored. */
#define PIMHE_OP_SET_PRIME 16u
/* Raw polynomial operations in Z_q[x]/(x^n + 1) over a coefficient range (MHY+ IV-A;
 * dpu/kernels/raw_poly.h), q the header's prime. `count` is a number of words here (even), not
 * of sub-polynomials, and the header's n plays no part.
 * RAW_ADD: dst0[j] := src0[j] + src1[j], j < count.  RAW_MUL: dst0[j] := src0[j] * src1[j].
 * RAW_CONV: the textbook negacyclic product of the n-word polynomials a = src0 and b = src1,
 * output coefficients [lo, lo + count) with lo = src[2] (even), n = src[3] (a power of two
 * in [4, 2^30)): dst0[j] := sum_i a_i b_{(lo+j-i) mod n}, negated where lo + j - i < 0; the
 * outputs dealt to the tasklets in chunks of scalar words (even, 2 .. the kernel's a-block).
 * Bad operands (odd count or lo, lo + count > n, flags set, an operand past 2^32, a bad
 * chunk): ERR_OPERAND. */
#define PIMHE_OP_RAW_ADD 17u
#define PIMHE_OP_RAW_MUL 18u
#define PIMHE_OP_RAW_CONV 19u
/* NTT_STAGE: one Cooley-Tukey stage of the forward NTT (the header's N, q and forward twiddles)
 * over butterflies [lo, lo + count) of the stage of gap t (MHY+'s per-stage offload, section
 * IV-B; dpu/kernels/ntt_stage.h): butterfly b pairs x = src0[b - lo] and y = src1[b - lo], in
 * place, with w = psi^bitrev(N / (2t) + b / t): x := x + w y, y := x - w y. lo = src[2],
 * t = src[3]. Bad operands (count 0 or odd, lo odd, lo + count > N / 2, t not a power of two in
 * [1, N / 2], flags set, an operand past 2^32): ERR_OPERAND. */
#define PIMHE_OP_NTT_STAGE 20u
/* Multi-word (non-RNS) coefficients (Gupta et al.; dpu/kernels/multiword.h): `count` (even)
 * coefficients of w = src[3] (1, 2 or 4) little-endian 32-bit words each, modulo the q of the
 * record at src[2] (8-aligned, 2w + 2 words): q (w words, top word nonzero), a zero word, then
 * mu = floor(2^(64 w) / q) (w + 1 words). The header only heads the launch; its q plays no
 * part. Operands below q.
 * MW_ADD: dst0[j] := src0[j] + src1[j] mod q.  MW_MUL: dst0[j] := src0[j] * src1[j] mod q
 * (barrett variant: schoolbook product; best: Karatsuba; both reduced by Barrett with mu).
 * Bad operands (w, odd count, flags set, an operand past 2^32, a bad record): ERR_OPERAND. */
#define PIMHE_OP_MW_ADD 21u
#define PIMHE_OP_MW_MUL 22u
/* MW_CONV: the textbook negacyclic product of the n-coefficient polynomials a = src0 and
 * b = src1 (w = src[3] words a coefficient, the record at src[2], as MW_MUL) in Z_q[x]/(x^n + 1),
 * output coefficients [lo, lo + count) into dst0, with n = scalar (a power of two in [4, 2^20])
 * and lo = scalar_shoup (even, lo + count <= n): dst0[j] := sum_i a_i b_{(lo+j-i) mod n} mod q,
 * negated where lo + j - i < 0; each product as MW_MUL's. Bad n or lo: ERR_OPERAND. */
#define PIMHE_OP_MW_CONV 23u
#define PIMHE_OP_FIRST PIMHE_OP_NTT
#define PIMHE_OP_LAST PIMHE_OP_MW_CONV

/* header.status, written by the kernel at the end of every launch. */
#define PIMHE_STATUS_OK 0u
#define PIMHE_ERR_MAGIC 1u   /* header.magic != PIMHE_MAGIC */
#define PIMHE_ERR_DEGREE 2u  /* n not a power of two in [PIMHE_N_MIN, PIMHE_N_MAX] or log_n != log2(n) */
#define PIMHE_ERR_MODULUS 3u /* q >= 2^30, or q != 1 mod 2N */
#define PIMHE_ERR_VARIANT 4u /* unknown header.variant */
#define PIMHE_ERR_OPCODE 5u  /* unknown command.opcode */
#define PIMHE_ERR_SCALAR 6u  /* MULC, CMAC, CADD, SUB_MULC: scalar >= q or scalar_shoup != floor(scalar 2^32 / q) */
#define PIMHE_ERR_BARRETT 7u /* barrett_lo/hi != floor(2^64 / q) */
#define PIMHE_ERR_N_INV 8u   /* n_inv != N^-1 mod q or n_inv_shoup != floor(n_inv 2^32 / q) */
#define PIMHE_ERR_OPERAND 9u /* offset + count * N * 4 overflows the 32-bit MRAM address space */
#define PIMHE_ERR_GALOIS 10u /* AUTOMORPHISM: the Galois element (scalar) is even or >= 2N */
#define PIMHE_ERR_ALIAS 11u  /* AUTOMORPHISM: dst0 overlaps src0 */
/* BCONV, DIVIDE_LAST: the source prime src[1] is not in [2, 2^30) (barrett variant: not at most
 * 2^(2k), k the bit length of q, the range of its reduction); BCONV: src[2] >= q;
 * DIVIDE_LAST: t = src[2] not below 2^30, or q <= t/2 + 1 (|s| <= t/2 + 1 must stay below q),
 * or src[3] >= t or dst[1] not its Shoup quotient. */
#define PIMHE_ERR_CONVERSION 12u

/* Command flags. BROADCAST_SRC1: src[1] is one sub-polynomial, combined with every
 * sub-polynomial of src[0] (a key or plaintext against a batch). Element-wise ops only. */
#define PIMHE_FLAG_BROADCAST_SRC1 1u
/* AUTOMORPHISM and CADD: the operands are in NTT form (bit-reversed evaluations), not coefficients. */
#define PIMHE_FLAG_NTT_FORM 2u
/* BCONV: add to dst0 instead of overwriting it. */
#define PIMHE_FLAG_ACCUMULATE 4u
/* BCONV: take the source residue centred, in (-src[1]/2, src[1]/2]. */
#define PIMHE_FLAG_CENTRED 8u

typedef struct {
    uint32_t magic;                  /* PIMHE_MAGIC */
    uint32_t n, log_n;               /* ring degree N (16 .. 2^20) and log2(N) */
    uint32_t q;                      /* this DPU's prime (< 2^30, = 1 mod 2N) */
    uint32_t barrett_lo, barrett_hi; /* floor(2^64 / q), for the barrett variant */
    uint32_t n_inv, n_inv_shoup;     /* N^-1 mod q and floor(N^-1 2^32 / q) */
    uint32_t variant;                /* PIMHE_VARIANT_* */
    uint32_t twiddle_offset, inv_twiddle_offset;
    uint32_t command_offset, command_count;
    uint32_t status;                 /* written by the kernel: PIMHE_STATUS_OK or PIMHE_ERR_* */
    uint32_t reserved[2];            /* pads to 64 bytes */
} pimhe_header_t;

typedef struct {
    uint32_t opcode;               /* PIMHE_OP_* */
    uint32_t count;                /* sub-polynomials per operand */
    uint32_t src[4];               /* operand offsets (unused = 0) */
    uint32_t dst[3];
    uint32_t scalar, scalar_shoup; /* MULC/CMAC/CADD/SUB_MULC/BCONV/DIVIDE_LAST constant (reduced mod
                                    * q), its Shoup quotient; AUTOMORPHISM: scalar = the Galois
                                    * element k. BCONV and DIVIDE_LAST carry parameters in the
                                    * unused src/dst words (see their opcodes) */
    uint32_t flags;                /* PIMHE_FLAG_*; pads to 48 bytes */
} pimhe_command_t;

_Static_assert(sizeof(pimhe_header_t) == 64, "pimhe_header_t must be 64 bytes (docs/PIM.md)");
_Static_assert(sizeof(pimhe_command_t) == 48, "pimhe_command_t must be 48 bytes (docs/PIM.md)");
_Static_assert(offsetof(pimhe_header_t, status) == 52, "header.status at byte 52");
_Static_assert(offsetof(pimhe_command_t, scalar) == 36, "command.scalar at byte 36");

#endif /* PIMHE_DPU_H */
