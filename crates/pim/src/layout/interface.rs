//! The binary interface shared with `dpu/include/pimhe_dpu.h`: the header, the commands, the
//! opcodes, flags, variants and status codes, the limits, and their byte serialization (each
//! cross-checked against the C side by the tests below).

use pimhe_math::{MathError, Modulus};
use serde::{Deserialize, Serialize};

/// `PIMHE_MAGIC`: "PIMH" read as a little-endian u32.
pub const PIMHE_MAGIC: u32 = 0x5049_4d48;
/// Smallest ring degree the kernel supports.
pub const N_MIN: usize = 16;
/// Largest ring degree the kernel supports.
pub const N_MAX: usize = 1 << 20;
/// Primes are below this bound (lazy values in [0, 4q) fit a word).
pub const Q_LIMIT: u32 = 1 << 30;
/// Ring degree from which the twiddle sections carry multiplication tables (the `best` kernel's
/// `TABLE_MIN_N`).
pub const TABLE_MIN_N: usize = 2048;
/// Multiplication tables per twiddle section (the `best` kernel's `TABLE_COUNT`).
pub const MUL_TABLES: usize = 7;
/// Words of one multiplication table: 4 x 256 (`TABLE_WORDS`).
pub const MUL_TABLE_WORDS: usize = 1024;

/// Words of one twiddle section at degree n: N twiddles, N Shoup constants and, from
/// [`TABLE_MIN_N`], [`MUL_TABLES`] multiplication tables.
pub fn table_words(n: usize) -> usize {
    2 * n + if n >= TABLE_MIN_N { MUL_TABLES * MUL_TABLE_WORDS } else { 0 }
}

/// `sizeof(pimhe_header_t)`.
pub const HEADER_BYTES: usize = 64;
/// `sizeof(pimhe_command_t)`.
pub const COMMAND_BYTES: usize = 48;
/// Command flag: `src[1]` is a single sub-polynomial combined with every sub-polynomial of
/// `src[0]` (a key or a plaintext against a batch). Element-wise operations only.
pub const FLAG_BROADCAST_SRC1: u32 = 1;
/// Command flag of [`Opcode::Automorphism`] and [`Opcode::CAdd`]: the operands are in NTT form
/// (bit-reversed evaluations) rather than coefficients.
pub const FLAG_NTT_FORM: u32 = 2;
/// Command flag of [`Opcode::BConv`]: add to `dst0` instead of overwriting it.
pub const FLAG_ACCUMULATE: u32 = 4;
/// Command flag of [`Opcode::BConv`]: the source residue is taken centred, in (-p/2, p/2].
pub const FLAG_CENTRED: u32 = 8;
/// Byte offset of `header.status` (the kernel writes bytes 48..56: command_count and status).
pub const STATUS_OFFSET: usize = 52;

/// Which arithmetic the kernel uses (`header.variant`).
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Variant {
    /// DRAMatic's published method: Barrett reduction, custom 32-bit multiplies, radix-2.
    Barrett = 0,
    /// Shoup twiddles with a truncated quotient, lazy reduction, radix-4, WRAM-resident blocks.
    Best = 1,
}

impl Variant {
    /// Both variants, barrett first.
    pub const ALL: [Variant; 2] = [Variant::Barrett, Variant::Best];
}

/// `command.opcode`.
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Opcode {
    /// `src0[i] := NTT(src0[i])` in place (natural -> bit-reversed).
    Ntt = 1,
    /// `src0[i] := INTT(src0[i])` in place, scaled by N^-1.
    Intt = 2,
    /// `dst0[i] := src0[i] + src1[i]`.
    Add = 3,
    /// `dst0[i] := src0[i] - src1[i]`.
    Sub = 4,
    /// `dst0[i] := src0[i] * src1[i]`.
    Mul = 5,
    /// `dst0[i] := dst0[i] + src0[i] * src1[i]`.
    Mac = 6,
    /// `dst0[i] := src0[i] * scalar`.
    MulC = 7,
    /// `dst0 := a0 b0, dst1 := a0 b1 + a1 b0, dst2 := a1 b1` with `(a0, a1, b0, b1) = src0..3`.
    Tensor = 8,
    /// `dst0[i] := src0[i](X^k)` with the Galois element k (odd, below 2N) in `scalar`, in NTT
    /// form under [`FLAG_NTT_FORM`], else in coefficient form. `dst0` must not overlap `src0`.
    Automorphism = 9,
    /// `dst0 := a0^2, dst1 := 2 a0 a1, dst2 := a1^2` with `(a0, a1) = src0..1` (Anaheim's TensorSq).
    TensorSq = 10,
    /// `dst0[i] := dst0[i] + src0[i] * scalar`: one term of a constant linear combination
    /// (Anaheim's CAccum is MULC, then CMAC per further term, then CADD for the offset).
    CMac = 11,
    /// `dst0[i] := src0[i] + scalar`, the constant polynomial: every residue under
    /// [`FLAG_NTT_FORM`], else coefficient 0 of each sub-polynomial (one word pair per
    /// sub-polynomial when in place).
    CAdd = 12,
    /// `dst0[i] := (src0[i] - src1[i]) * scalar` (Anaheim's ModDownEp), `src1` broadcast under
    /// [`FLAG_BROADCAST_SRC1`].
    SubMulC = 13,
    /// One term of FastBConv onto this launch's prime q: `dst0[i] := [dst0[i]] + y * scalar`
    /// with `y = src0[i]` a residue modulo the source prime `src[1]`, centred under
    /// [`FLAG_CENTRED`] (adding `src[2] = (-src[1] scalar) mod q` where it is above half),
    /// accumulated under [`FLAG_ACCUMULATE`] ([`PimheCommand::bconv`]).
    BConv = 14,
    /// The correction term of dividing by the last prime p = `src[1]`:
    /// `dst0[i] := s - r p^-1 (mod q)` for `r = src0[i]` in [0, p), with BGV's t-correction in s
    /// when `src[2] = t` is nonzero ([`PimheCommand::divide_last`]).
    DivideLast = 15,
    /// The following commands work modulo the prime of the 64-byte prime record at `src[0]`
    /// (a [`PimheHeader`], checked as the launch's header).
    SetPrime = 16,
    /// `dst0[j] := src0[j] + src1[j]` for `j < count` words (`count` even): one coefficient
    /// range of a raw polynomial (MHY+ IV-A; the header's N plays no part).
    RawAdd = 17,
    /// `dst0[j] := src0[j] * src1[j]` for `j < count` words, as [`Opcode::RawAdd`].
    RawMul = 18,
    /// The textbook negacyclic product of the n-word polynomials `src0` and `src1` in
    /// Z_q[x]/(x^n + 1), output coefficients `[lo, lo + count)` into `dst0`, with `lo = src[2]`
    /// (even) and `n = src[3]` ([`PimheCommand::raw_conv`]).
    RawConv = 19,
    /// One Cooley-Tukey stage of the forward NTT (the header's N, q and twiddles) over the
    /// butterflies `[lo, lo + count)` of the stage of gap t, x's at `src0`, y's at `src1`, in
    /// place, with `lo = src[2]` and `t = src[3]` (MHY+'s per-stage offload;
    /// [`PimheCommand::ntt_stage`]).
    NttStage = 20,
    /// `dst0[j] := src0[j] + src1[j] mod q` for `count` (even) coefficients of `w = src[3]`
    /// (1, 2 or 4) 32-bit words each, q and its Barrett constant in the record at `src[2]`
    /// ([`PimheCommand::mw_add`]; Gupta et al.'s non-RNS coefficients, `dpu/kernels/multiword.h`).
    MwAdd = 21,
    /// `dst0[j] := src0[j] * src1[j] mod q`, as [`Opcode::MwAdd`]: schoolbook (barrett variant)
    /// or Karatsuba (best) products of 32-bit words, then Barrett's reduction.
    MwMul = 22,
    /// The textbook negacyclic product of the n-coefficient polynomials `src0` and `src1` of
    /// [`Opcode::MwMul`]'s coefficients, output coefficients `[lo, lo + count)` into `dst0`, with
    /// `n = scalar` and `lo = scalar_shoup` ([`PimheCommand::mw_conv`]).
    MwConv = 23,
}

impl Opcode {
    /// Every opcode, in numeric order.
    pub const ALL: [Opcode; 23] = [
        Opcode::Ntt,
        Opcode::Intt,
        Opcode::Add,
        Opcode::Sub,
        Opcode::Mul,
        Opcode::Mac,
        Opcode::MulC,
        Opcode::Tensor,
        Opcode::Automorphism,
        Opcode::TensorSq,
        Opcode::CMac,
        Opcode::CAdd,
        Opcode::SubMulC,
        Opcode::BConv,
        Opcode::DivideLast,
        Opcode::SetPrime,
        Opcode::RawAdd,
        Opcode::RawMul,
        Opcode::RawConv,
        Opcode::NttStage,
        Opcode::MwAdd,
        Opcode::MwMul,
        Opcode::MwConv,
    ];
}

/// `header.status` values written by the kernel (`PIMHE_STATUS_OK`, `PIMHE_ERR_*`).
pub mod status {
    /// Every command ran.
    pub const OK: u32 = 0;
    /// `header.magic != PIMHE_MAGIC`.
    pub const ERR_MAGIC: u32 = 1;
    /// `n` not a power of two in 16..=2^20, or `log_n != log2(n)`.
    pub const ERR_DEGREE: u32 = 2;
    /// `q >= 2^30` or `q != 1 mod 2N`.
    pub const ERR_MODULUS: u32 = 3;
    /// Unknown `header.variant`.
    pub const ERR_VARIANT: u32 = 4;
    /// Unknown `command.opcode`.
    pub const ERR_OPCODE: u32 = 5;
    /// MULC, CMAC, CADD, SUB_MULC: `scalar >= q` or `scalar_shoup != floor(scalar 2^32 / q)`.
    pub const ERR_SCALAR: u32 = 6;
    /// `barrett_lo/hi != floor(2^64 / q)`.
    pub const ERR_BARRETT: u32 = 7;
    /// `n_inv != N^-1 mod q` or `n_inv_shoup != floor(n_inv 2^32 / q)`.
    pub const ERR_N_INV: u32 = 8;
    /// An operand's `offset + count * N * 4` overflows the 32-bit MRAM address space.
    pub const ERR_OPERAND: u32 = 9;
    /// AUTOMORPHISM: the Galois element is even or not below 2N.
    pub const ERR_GALOIS: u32 = 10;
    /// AUTOMORPHISM: the output overlaps the input.
    pub const ERR_ALIAS: u32 = 11;
    /// BCONV, DIVIDE_LAST: a parameter out of range (the source prime, the centring
    /// correction, the plain modulus or its constants; `pimhe_dpu.h` lists them).
    pub const ERR_CONVERSION: u32 = 12;

    /// What a status code means.
    pub fn describe(status: u32) -> &'static str {
        match status {
            OK => "ok",
            ERR_MAGIC => "bad magic",
            ERR_DEGREE => "unsupported ring degree",
            ERR_MODULUS => "modulus not below 2^30 or not 1 mod 2N",
            ERR_VARIANT => "unknown arithmetic variant",
            ERR_OPCODE => "unknown opcode",
            ERR_SCALAR => "scalar of MULC/CMAC/CADD/SUB_MULC not reduced or wrong Shoup constant",
            ERR_BARRETT => "wrong Barrett constant",
            ERR_N_INV => "wrong N^-1 or its Shoup constant",
            ERR_OPERAND => "operand overflows the MRAM address space",
            ERR_GALOIS => "automorphism Galois element even or not below 2N",
            ERR_ALIAS => "automorphism output overlaps its input",
            ERR_CONVERSION => "BCONV/DIVIDE_LAST parameter out of range",
            _ => "unknown status",
        }
    }
}

/// Errors building tables, headers or images.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LayoutError {
    /// The ring degree is not a power of two in 16..=2^20.
    #[error("ring degree {0} unsupported by the DPU kernel (powers of two 16..=2^20)")]
    Degree(usize),
    /// The prime is not below 2^30 or not 1 mod 2N.
    #[error("modulus {q} unsupported for N = {n}: needs q < 2^30 and q = 1 mod 2N")]
    Modulus {
        /// The prime.
        q: u32,
        /// The ring degree.
        n: usize,
    },
    /// More commands than the layout has room for.
    #[error("{count} commands do not fit the layout's {capacity} command slots")]
    TooManyCommands {
        /// Commands given.
        count: usize,
        /// Slots in the layout.
        capacity: u32,
    },
    /// Tables and layout disagree on N.
    #[error("tables for N = {tables} used with a layout for N = {layout}")]
    DegreeMismatch {
        /// The tables' degree.
        tables: usize,
        /// The layout's degree.
        layout: usize,
    },
    /// A byte slice of the wrong length.
    #[error("expected {expected} bytes, got {got}")]
    Bytes {
        /// Expected length.
        expected: usize,
        /// Given length.
        got: usize,
    },
    /// The arithmetic layer rejected the prime or degree.
    #[error(transparent)]
    Math(#[from] MathError),
}

pub(super) fn words_to_bytes(words: &[u32], out: &mut [u8]) {
    for (chunk, w) in out.chunks_exact_mut(4).zip(words) {
        chunk.copy_from_slice(&w.to_le_bytes());
    }
}

fn bytes_to_words<const W: usize>(bytes: &[u8]) -> Result<[u32; W], LayoutError> {
    if bytes.len() != 4 * W {
        return Err(LayoutError::Bytes { expected: 4 * W, got: bytes.len() });
    }
    let mut words = [0u32; W];
    for (w, chunk) in words.iter_mut().zip(bytes.chunks_exact(4)) {
        *w = u32::from_le_bytes(chunk.try_into().expect("chunks of 4"));
    }
    Ok(words)
}

/// Mirror of `pimhe_header_t` (64 bytes).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct PimheHeader {
    /// [`PIMHE_MAGIC`].
    pub magic: u32,
    /// Ring degree N.
    pub n: u32,
    /// log2(N).
    pub log_n: u32,
    /// This DPU's prime.
    pub q: u32,
    /// Low word of floor(2^64 / q).
    pub barrett_lo: u32,
    /// High word of floor(2^64 / q).
    pub barrett_hi: u32,
    /// N^-1 mod q.
    pub n_inv: u32,
    /// floor(N^-1 2^32 / q).
    pub n_inv_shoup: u32,
    /// [`Variant`] as u32.
    pub variant: u32,
    /// MRAM offset of the forward twiddles (then their Shoup constants).
    pub twiddle_offset: u32,
    /// MRAM offset of the inverse twiddles (then their Shoup constants).
    pub inv_twiddle_offset: u32,
    /// MRAM offset of the command list.
    pub command_offset: u32,
    /// Number of commands to run.
    pub command_count: u32,
    /// Written by the kernel: [`status::OK`] or an error code.
    pub status: u32,
    /// Padding to 64 bytes.
    pub reserved: [u32; 2],
}

impl PimheHeader {
    fn words(&self) -> [u32; 16] {
        let r = self.reserved;
        [
            self.magic,
            self.n,
            self.log_n,
            self.q,
            self.barrett_lo,
            self.barrett_hi,
            self.n_inv,
            self.n_inv_shoup,
            self.variant,
            self.twiddle_offset,
            self.inv_twiddle_offset,
            self.command_offset,
            self.command_count,
            self.status,
            r[0],
            r[1],
        ]
    }

    /// The 64 bytes the DPU reads.
    pub fn to_bytes(&self) -> [u8; HEADER_BYTES] {
        let mut out = [0u8; HEADER_BYTES];
        words_to_bytes(&self.words(), &mut out);
        out
    }

    /// Parses 64 bytes (e.g. read back from MRAM).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, LayoutError> {
        let w = bytes_to_words::<16>(bytes)?;
        Ok(Self {
            magic: w[0],
            n: w[1],
            log_n: w[2],
            q: w[3],
            barrett_lo: w[4],
            barrett_hi: w[5],
            n_inv: w[6],
            n_inv_shoup: w[7],
            variant: w[8],
            twiddle_offset: w[9],
            inv_twiddle_offset: w[10],
            command_offset: w[11],
            command_count: w[12],
            status: w[13],
            reserved: [w[14], w[15]],
        })
    }
}

/// Mirror of `pimhe_command_t` (48 bytes).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct PimheCommand {
    /// [`Opcode`] as u32.
    pub opcode: u32,
    /// Sub-polynomials per operand.
    pub count: u32,
    /// Source operand offsets (unused = 0).
    pub src: [u32; 4],
    /// Destination operand offsets (unused = 0).
    pub dst: [u32; 3],
    /// MULC/CMAC/CADD/SUB_MULC constant, reduced mod q; AUTOMORPHISM's Galois element.
    pub scalar: u32,
    /// floor(scalar 2^32 / q).
    pub scalar_shoup: u32,
    /// [`FLAG_BROADCAST_SRC1`], [`FLAG_NTT_FORM`].
    pub flags: u32,
}

impl PimheCommand {
    fn new(opcode: Opcode, count: u32, src: [u32; 4], dst: [u32; 3]) -> Self {
        Self { opcode: opcode as u32, count, src, dst, ..Self::default() }
    }

    /// NTT of `count` sub-polynomials at `data`, in place.
    pub fn ntt(data: u32, count: u32) -> Self {
        Self::new(Opcode::Ntt, count, [data, 0, 0, 0], [0; 3])
    }

    /// Inverse NTT of `count` sub-polynomials at `data`, in place.
    pub fn intt(data: u32, count: u32) -> Self {
        Self::new(Opcode::Intt, count, [data, 0, 0, 0], [0; 3])
    }

    /// `dst := a + b`.
    pub fn add(dst: u32, a: u32, b: u32, count: u32) -> Self {
        Self::new(Opcode::Add, count, [a, b, 0, 0], [dst, 0, 0])
    }

    /// `dst := a - b`.
    pub fn sub(dst: u32, a: u32, b: u32, count: u32) -> Self {
        Self::new(Opcode::Sub, count, [a, b, 0, 0], [dst, 0, 0])
    }

    /// `dst := a * b` (element-wise).
    pub fn mul(dst: u32, a: u32, b: u32, count: u32) -> Self {
        Self::new(Opcode::Mul, count, [a, b, 0, 0], [dst, 0, 0])
    }

    /// `dst := dst + a * b`.
    pub fn mac(dst: u32, a: u32, b: u32, count: u32) -> Self {
        Self::new(Opcode::Mac, count, [a, b, 0, 0], [dst, 0, 0])
    }

    /// `dst := src * scalar`; `scalar` is reduced mod q and its Shoup constant computed here.
    pub fn mulc(dst: u32, src: u32, scalar: u32, modulus: &Modulus, count: u32) -> Self {
        let scalar = modulus.reduce_u64(scalar as u64);
        Self {
            scalar,
            scalar_shoup: modulus.shoup(scalar),
            ..Self::new(Opcode::MulC, count, [src, 0, 0, 0], [dst, 0, 0])
        }
    }

    /// `dst[0] := a0 b0, dst[1] := a0 b1 + a1 b0, dst[2] := a1 b1` with `src = [a0, a1, b0, b1]`.
    pub fn tensor(dst: [u32; 3], src: [u32; 4], count: u32) -> Self {
        Self::new(Opcode::Tensor, count, src, dst)
    }

    /// `dst[0] := a0^2, dst[1] := 2 a0 a1, dst[2] := a1^2`.
    pub fn tensor_square(dst: [u32; 3], a0: u32, a1: u32, count: u32) -> Self {
        Self::new(Opcode::TensorSq, count, [a0, a1, 0, 0], dst)
    }

    /// `dst := dst + src * scalar`; `scalar` is reduced mod q and its Shoup constant computed here.
    pub fn cmac(dst: u32, src: u32, scalar: u32, modulus: &Modulus, count: u32) -> Self {
        Self::new(Opcode::CMac, count, [src, 0, 0, 0], [dst, 0, 0]).with_scalar(scalar, modulus)
    }

    /// `dst := src + scalar` (the constant polynomial: every residue when `ntt_form`, else
    /// coefficient 0); `scalar` is reduced mod q.
    pub fn cadd(dst: u32, src: u32, scalar: u32, ntt_form: bool, modulus: &Modulus, count: u32) -> Self {
        Self {
            flags: if ntt_form { FLAG_NTT_FORM } else { 0 },
            ..Self::new(Opcode::CAdd, count, [src, 0, 0, 0], [dst, 0, 0]).with_scalar(scalar, modulus)
        }
    }

    /// `dst := (a - b) * scalar`, `b` one sub-polynomial for all of `a` when `broadcast`; `scalar`
    /// is reduced mod q.
    pub fn sub_mulc(dst: u32, a: u32, b: u32, scalar: u32, broadcast: bool, modulus: &Modulus, count: u32) -> Self {
        Self {
            flags: if broadcast { FLAG_BROADCAST_SRC1 } else { 0 },
            ..Self::new(Opcode::SubMulC, count, [a, b, 0, 0], [dst, 0, 0]).with_scalar(scalar, modulus)
        }
    }

    fn with_scalar(self, scalar: u32, modulus: &Modulus) -> Self {
        let scalar = modulus.reduce_u64(scalar as u64);
        Self { scalar, scalar_shoup: modulus.shoup(scalar), ..self }
    }

    /// `dst := src(X^k)` for the Galois element `k` (odd, below 2N), in NTT form when `ntt_form`.
    pub fn automorphism(dst: u32, src: u32, k: u32, ntt_form: bool, count: u32) -> Self {
        Self {
            scalar: k,
            flags: if ntt_form { FLAG_NTT_FORM } else { 0 },
            ..Self::new(Opcode::Automorphism, count, [src, 0, 0, 0], [dst, 0, 0])
        }
    }

    /// One term of FastBConv onto this launch's prime q: `dst := [dst +] y * scalar` for `y`, the
    /// residues at `src` modulo `source` (< 2^30), taken centred when `centred` (the constant
    /// `(-source scalar) mod q` added where `y > source / 2`), added to `dst` when
    /// `accumulate`. `scalar` is reduced mod q.
    pub fn bconv(
        dst: u32,
        src: u32,
        source: u32,
        scalar: u32,
        centred: bool,
        accumulate: bool,
        modulus: &Modulus,
        count: u32,
    ) -> Self {
        let command = Self::new(Opcode::BConv, count, [src, source, 0, 0], [dst, 0, 0]).with_scalar(scalar, modulus);
        let correction = modulus.neg(modulus.mul(modulus.reduce_u64(source.into()), command.scalar));
        Self {
            src: [src, source, correction, 0],
            flags: if centred { FLAG_CENTRED } else { 0 } | if accumulate { FLAG_ACCUMULATE } else { 0 },
            ..command
        }
    }

    /// The correction term of dividing by the last prime `p`: `dst := s - r p^-1 mod q` for
    /// the residues `r` at `src` modulo `p`, with BGV's correction modulo `plain_modulus`
    /// (`pimhe_dpu.h`: `s = (r > p/2) + [r p^-1 - (r > p/2)]_t` centred). Fails when p has no
    /// inverse modulo q or t.
    pub fn divide_last(
        dst: u32,
        src: u32,
        p: u32,
        plain_modulus: Option<&Modulus>,
        modulus: &Modulus,
        count: u32,
    ) -> Result<Self, MathError> {
        let minus_p_inv = modulus.neg(modulus.inv(modulus.reduce_u64(p.into()))?);
        let (t, p_inv_t, p_inv_t_shoup) = match plain_modulus {
            Some(t) => {
                let inv = t.inv(t.reduce_u64(p.into()))?;
                (t.value(), inv, t.shoup(inv))
            }
            None => (0, 0, 0),
        };
        Ok(Self {
            src: [src, p, t, p_inv_t],
            dst: [dst, p_inv_t_shoup, 0],
            ..Self::new(Opcode::DivideLast, count, [0; 4], [0; 3]).with_scalar(minus_p_inv, modulus)
        })
    }

    /// The following commands work modulo the prime of the record at `record`.
    pub fn set_prime(record: u32) -> Self {
        Self::new(Opcode::SetPrime, 0, [record, 0, 0, 0], [0; 3])
    }

    /// `dst[j] := a[j] + b[j]` for `j < words` (even): a coefficient range of a raw polynomial.
    pub fn raw_add(dst: u32, a: u32, b: u32, words: u32) -> Self {
        Self::new(Opcode::RawAdd, words, [a, b, 0, 0], [dst, 0, 0])
    }

    /// `dst[j] := a[j] * b[j]` for `j < words` (even).
    pub fn raw_mul(dst: u32, a: u32, b: u32, words: u32) -> Self {
        Self::new(Opcode::RawMul, words, [a, b, 0, 0], [dst, 0, 0])
    }

    /// Coefficients `[lo, lo + words)` of the negacyclic product of the `n`-word polynomials
    /// at `a` and `b` into `dst` (`lo` and `words` even, `lo + words <= n`, n a power of two),
    /// dealt to the tasklets in chunks of `chunk` words (even, at most the kernel's a-block:
    /// `raw_poly::conv_chunk_words`).
    pub fn raw_conv(dst: u32, a: u32, b: u32, lo: u32, n: u32, words: u32, chunk: u32) -> Self {
        Self { scalar: chunk, ..Self::new(Opcode::RawConv, words, [a, b, lo, n], [dst, 0, 0]) }
    }

    /// Butterflies `[lo, lo + count)` of the forward NTT's stage of gap `gap` (a power of two
    /// in `[1, N/2]`; butterfly b's twiddle is psi^bitrev(N / (2 gap) + b / gap)), their x's at
    /// `x` and y's at `y`, in place (`lo` and `count` even, `lo + count <= N / 2`).
    pub fn ntt_stage(x: u32, y: u32, lo: u32, gap: u32, count: u32) -> Self {
        Self::new(Opcode::NttStage, count, [x, y, lo, gap], [0; 3])
    }

    /// `dst[j] := a[j] + b[j] mod q` for `count` (even) coefficients of `w` words each, the
    /// modulus record (q, a zero word, mu: `multiword::ModulusRecord`) at `record`.
    pub fn mw_add(dst: u32, a: u32, b: u32, record: u32, w: u32, count: u32) -> Self {
        Self::new(Opcode::MwAdd, count, [a, b, record, w], [dst, 0, 0])
    }

    /// `dst[j] := a[j] * b[j] mod q`, as [`PimheCommand::mw_add`].
    pub fn mw_mul(dst: u32, a: u32, b: u32, record: u32, w: u32, count: u32) -> Self {
        Self::new(Opcode::MwMul, count, [a, b, record, w], [dst, 0, 0])
    }

    /// Coefficients `[lo, lo + count)` of the negacyclic product of the `n`-coefficient
    /// polynomials at `a` and `b` (`w` words a coefficient, the record as
    /// [`PimheCommand::mw_add`]'s) into `dst`: `n` a power of two in `[4, 2^20]`, `lo` and `count`
    /// even, `lo + count <= n`. The kernel cuts the range into chunks for its tasklets itself.
    #[allow(clippy::too_many_arguments)]
    pub fn mw_conv(dst: u32, a: u32, b: u32, record: u32, w: u32, n: u32, lo: u32, count: u32) -> Self {
        Self { scalar: n, scalar_shoup: lo, ..Self::new(Opcode::MwConv, count, [a, b, record, w], [dst, 0, 0]) }
    }

    fn words(&self) -> [u32; 12] {
        let (s, d) = (self.src, self.dst);
        [self.opcode, self.count, s[0], s[1], s[2], s[3], d[0], d[1], d[2], self.scalar, self.scalar_shoup, self.flags]
    }

    /// The 48 bytes the DPU reads.
    pub fn to_bytes(&self) -> [u8; COMMAND_BYTES] {
        let mut out = [0u8; COMMAND_BYTES];
        words_to_bytes(&self.words(), &mut out);
        out
    }

    /// Parses 48 bytes.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, LayoutError> {
        let w = bytes_to_words::<12>(bytes)?;
        Ok(Self {
            opcode: w[0],
            count: w[1],
            src: [w[2], w[3], w[4], w[5]],
            dst: [w[6], w[7], w[8]],
            scalar: w[9],
            scalar_shoup: w[10],
            flags: w[11],
        })
    }
}

/// A command list as the bytes of consecutive `pimhe_command_t`.
pub fn commands_to_bytes(commands: &[PimheCommand]) -> Vec<u8> {
    commands.iter().flat_map(|c| c.to_bytes()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::{prime_tables, MramLayout};
    use std::mem::{offset_of, size_of};

    #[test]
    fn header_and_command_match_the_c_layout() {
        let mut c = [0u32; 32];
        let entries = crate::emulator::c_header_layout(&mut c);
        let rust = [
            offset_of!(PimheHeader, magic),
            offset_of!(PimheHeader, n),
            offset_of!(PimheHeader, log_n),
            offset_of!(PimheHeader, q),
            offset_of!(PimheHeader, barrett_lo),
            offset_of!(PimheHeader, barrett_hi),
            offset_of!(PimheHeader, n_inv),
            offset_of!(PimheHeader, n_inv_shoup),
            offset_of!(PimheHeader, variant),
            offset_of!(PimheHeader, twiddle_offset),
            offset_of!(PimheHeader, inv_twiddle_offset),
            offset_of!(PimheHeader, command_offset),
            offset_of!(PimheHeader, command_count),
            offset_of!(PimheHeader, status),
            offset_of!(PimheHeader, reserved),
            size_of::<PimheHeader>(),
        ];
        assert_eq!(entries, rust.len());
        assert_eq!(c[..entries].iter().map(|&x| x as usize).collect::<Vec<_>>(), rust);
        assert_eq!(size_of::<PimheHeader>(), HEADER_BYTES);
        assert_eq!(offset_of!(PimheHeader, status), STATUS_OFFSET);

        let entries = crate::emulator::c_command_layout(&mut c);
        let rust = [
            offset_of!(PimheCommand, opcode),
            offset_of!(PimheCommand, count),
            offset_of!(PimheCommand, src),
            offset_of!(PimheCommand, dst),
            offset_of!(PimheCommand, scalar),
            offset_of!(PimheCommand, scalar_shoup),
            offset_of!(PimheCommand, flags),
            size_of::<PimheCommand>(),
        ];
        assert_eq!(entries, rust.len());
        assert_eq!(c[..entries].iter().map(|&x| x as usize).collect::<Vec<_>>(), rust);
        assert_eq!(size_of::<PimheCommand>(), COMMAND_BYTES);
    }

    #[test]
    fn opcodes_flags_variants_and_statuses_match_the_c_header() {
        let mut c = [0u32; 64];
        let entries = crate::emulator::c_opcodes(&mut c);
        let mut rust: Vec<u32> = Opcode::ALL.iter().map(|&op| op as u32).collect();
        let last = Opcode::ALL[Opcode::ALL.len() - 1];
        rust.extend([Opcode::Ntt as u32, last as u32, FLAG_BROADCAST_SRC1, FLAG_NTT_FORM]);
        rust.extend([FLAG_ACCUMULATE, FLAG_CENTRED]);
        rust.extend(Variant::ALL.iter().map(|&v| v as u32));
        rust.extend([
            status::OK,
            status::ERR_MAGIC,
            status::ERR_DEGREE,
            status::ERR_MODULUS,
            status::ERR_VARIANT,
            status::ERR_OPCODE,
            status::ERR_SCALAR,
            status::ERR_BARRETT,
            status::ERR_N_INV,
            status::ERR_OPERAND,
            status::ERR_GALOIS,
            status::ERR_ALIAS,
            status::ERR_CONVERSION,
        ]);
        assert!(entries <= c.len(), "the probe has more entries than the buffer");
        assert_eq!(&c[..entries], &rust[..]);
        assert!(Opcode::ALL.windows(2).all(|w| w[1] as u32 == w[0] as u32 + 1), "contiguous, in order");
    }

    #[test]
    fn magic_limits_and_table_sizes_match_the_kernel() {
        let mut c = [0u32; 16];
        let entries = crate::emulator::c_limits(&mut c);
        // The C side has log2 of the degree bounds where Rust derives them from N_MIN and N_MAX.
        let rust = [
            PIMHE_MAGIC,
            N_MIN as u32,
            N_MAX as u32,
            N_MIN.trailing_zeros(),
            N_MAX.trailing_zeros(),
            Q_LIMIT,
            TABLE_MIN_N as u32,
            MUL_TABLES as u32,
            MUL_TABLE_WORDS as u32,
            (4 * MUL_TABLES * MUL_TABLE_WORDS) as u32,
        ];
        assert!(entries <= c.len(), "the probe has more entries than the buffer");
        assert_eq!(&c[..entries], &rust[..]);
        // The kernel reads a section's TABLE_BYTES of multiplication tables right after its N
        // twiddles and N Shoup constants, and only from TABLE_MIN_N on: the section the host lays
        // out must be exactly that long on both sides of the threshold.
        let table_bytes = c[9] as usize;
        assert_eq!(4 * table_words(TABLE_MIN_N), 8 * TABLE_MIN_N + table_bytes);
        assert_eq!(4 * table_words(TABLE_MIN_N / 2), 8 * (TABLE_MIN_N / 2));
    }

    #[test]
    fn bytes_round_trip_in_field_order() {
        let tables = prime_tables(7681, 16).unwrap();
        let layout = MramLayout::new(16, 3);
        let h = tables.header(Variant::Best, &layout, 2);
        let bytes = h.to_bytes();
        assert_eq!(PimheHeader::from_bytes(&bytes).unwrap(), h);
        assert_eq!(&bytes[0..4], b"HMIP"); // "PIMH" as a little-endian word
        assert_eq!(u32::from_le_bytes(bytes[12..16].try_into().unwrap()), 7681);
        let c = PimheCommand::tensor([1, 2, 3], [4, 5, 6, 7], 9);
        let cb = c.to_bytes();
        assert_eq!(PimheCommand::from_bytes(&cb).unwrap(), c);
        assert_eq!(u32::from_le_bytes(cb[4..8].try_into().unwrap()), 9);
        assert_eq!(u32::from_le_bytes(cb[24..28].try_into().unwrap()), 1);
        assert!(PimheHeader::from_bytes(&bytes[..60]).is_err());
    }
}
