//! The polynomial-level vocabulary ([`Step`]) and the programs of the homomorphic operations.
//!
//! A [`Program`] is what a B/FV operation does on CE-RAM, step by step; [`crate::lowering`]
//! turns each step into micro-ops and [`crate::model`] prices them. The generators here follow
//! the CE-RAM B/FV paper (seed 004): encryption and addition of section 2.2 in RNS form,
//! decryption per Algorithm 1, multiplication per Algorithm 2 followed by the RNS
//! relinearization of section 2.3, and the textbook scheme of Reis et al. for the comparison
//! of Table 2. The special-moduli BFV evaluator (`pimhe_schemes::bfv::special`) is a separate
//! implementation; pimhe-bench's tests/ceram_counts.rs checks that the products, base
//! conversions and digits counted here equal its own counts on a run (Karatsuba's tensor aside).

use serde::Serialize;

use crate::params::{Design, Modulus, Params, Residues};

/// Direction of a DDR4 transfer between DRAM and the CE-RAM bank.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Direction {
    /// DRAM to CE-RAM.
    In,
    /// CE-RAM to DRAM.
    Out,
}

/// One polynomial-level step. `moduli` are the residues it covers (each coefficient's residues
/// sit side by side in a row, [`crate::machine`]); `polys` how many polynomials.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum Step {
    /// Coefficient-wise modular addition (ADD, then each kind's reduction).
    PolyAdd { moduli: Residues, polys: usize },
    /// Coefficient-wise modular subtraction.
    PolySub { moduli: Residues, polys: usize },
    /// Coefficient-wise modular product of two polynomials (NTT domain): MODMULT.
    PointwiseMul { moduli: Residues, polys: usize },
    /// Product with a constant per modulus: WRITE the constant row, MODMULT.
    MulByConstant { moduli: Residues, polys: usize },
    /// Product with a power of two: a modular shift for special moduli (Algorithms 5, 6; a shift
    /// and a mask for 2^g), WRITE + MODMULT otherwise.
    MulByPowerOfTwo { moduli: Residues, polys: usize },
    /// A standalone reduction by kind.
    Reduce { moduli: Residues, polys: usize },
    /// Centered representative ([x]_m): compare, subtract, select.
    Center { moduli: Residues, polys: usize },
    /// Forward NTT (section 3.1, Algorithm 7).
    Ntt { moduli: Residues, polys: usize },
    /// Inverse NTT (the same stages in reverse, then the scaling by N^-1).
    Intt { moduli: Residues, polys: usize },
    /// Negacyclic schoolbook products (the no-NTT polynomial product) of `products` pairs.
    SchoolbookMul { moduli: Residues, products: usize },
    /// The textbook design's schoolbook products over the integers: operands of
    /// `operand_bits`, accumulated in `acc_bits`.
    IntegerSchoolbookMul { operand_bits: u32, acc_bits: u32, products: usize },
    /// The textbook design's rounding round(t * x / q) mod q of an `acc_bits` integer: t's bits
    /// as shift-and-add steps, then + q/2, a right shift by log q and a mask.
    Rescale { acc_bits: u32, t_bits: u32, polys: usize },
    /// The textbook design's base-T digits: a shift and a mask per digit.
    DigitDecompose { width: u32, digits: usize, polys: usize },
    /// D_RNS of section 2.3 (|x q_i / q|_{q_i} per modulus): FastBConv's first phase.
    RnsDecompose { moduli: Residues, polys: usize, special: bool },
    /// FastBConv (equation 1) from one base to another; `special` enables section 3.4.
    FastBConv { from: Residues, to: Residues, polys: usize, special: bool },
    /// Move a word into other residue positions (a value mod one modulus used under others).
    Realign { moduli: Residues, polys: usize },
    /// Write rows of constants.
    Write { moduli: Residues, polys: usize },
    /// Copy rows.
    Move { moduli: Residues, polys: usize },
    /// DDR4 transfer between DRAM and the bank (priced by the model, no micro-ops).
    Transfer { direction: Direction, bytes: f64 },
}

/// The homomorphic operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum HomOp {
    /// Public-key encryption.
    Encrypt,
    /// Decryption.
    Decrypt,
    /// Addition of two ciphertexts.
    Add,
    /// Subtraction of two ciphertexts.
    Sub,
    /// Multiplication with relinearization.
    Multiply,
}

impl HomOp {
    /// All of them.
    pub const ALL: [HomOp; 5] = [HomOp::Encrypt, HomOp::Decrypt, HomOp::Add, HomOp::Sub, HomOp::Multiply];

    /// Lower-case name.
    pub fn name(&self) -> &'static str {
        match self {
            HomOp::Encrypt => "encrypt",
            HomOp::Decrypt => "decrypt",
            HomOp::Add => "add",
            HomOp::Sub => "sub",
            HomOp::Multiply => "multiply",
        }
    }
}

/// Data resident in the bank at an operation's peak: polynomials over some moduli.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Live {
    /// What it is.
    pub what: &'static str,
    /// Residues per coefficient.
    pub moduli: Residues,
    /// Polynomials.
    pub polys: usize,
}

/// A homomorphic operation as steps, with what it keeps in the bank at its peak.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Program {
    /// Which operation.
    pub op: HomOp,
    /// Ring degree.
    pub n: usize,
    /// The steps, in order.
    pub steps: Vec<Step>,
    /// Polynomials resident at the peak (checked against the bank's capacity).
    pub peak: Vec<Live>,
    /// Scratch slot-rows at the peak (the NTT's twiddle row).
    pub scratch_slots: usize,
}

fn cat(a: &[Modulus], b: &[Modulus]) -> Vec<Modulus> {
    a.iter().chain(b).copied().collect()
}

/// Polynomial products c = a * b over `moduli`, `products` of them: NTT, pointwise, iNTT when
/// `ntt` (with `forward` polynomials to transform: the others are stored in NTT form), a
/// schoolbook product otherwise.
fn products(steps: &mut Vec<Step>, p: &Params, moduli: &Residues, forward: usize, products: usize, results: usize) {
    if p.ntt {
        steps.push(Step::Ntt { moduli: moduli.clone(), polys: forward });
        steps.push(Step::PointwiseMul { moduli: moduli.clone(), polys: products });
        if products > results {
            steps.push(Step::PolyAdd { moduli: moduli.clone(), polys: products - results });
        }
        steps.push(Step::Intt { moduli: moduli.clone(), polys: results });
    } else {
        steps.push(Step::SchoolbookMul { moduli: moduli.clone(), products });
        if products > results {
            steps.push(Step::PolyAdd { moduli: moduli.clone(), polys: products - results });
        }
    }
}

/// Multiplication by t over `moduli`: a modular shift when t is a power of two and the
/// optimizations are on, a constant MODMULT otherwise.
fn scale_by_t(p: &Params, moduli: &Residues, polys: usize) -> Step {
    if p.special && p.t.kind == crate::params::ModulusKind::PowerOfTwo {
        Step::MulByPowerOfTwo { moduli: moduli.clone(), polys }
    } else {
        Step::MulByConstant { moduli: moduli.clone(), polys }
    }
}

/// Bytes of the plaintext (N coefficients of |t| bits).
fn plaintext_bytes(p: &Params) -> f64 {
    p.n as f64 * p.t.width() as f64 / 8.0
}

/// Add or sub, the same in every design: two ciphertexts in, one pass over their components,
/// one ciphertext out.
fn additive(op: HomOp, q: &Residues, ct: f64, steps: &mut Vec<Step>, peak: &mut Vec<Live>) {
    steps.push(Step::Transfer { direction: Direction::In, bytes: 2.0 * ct });
    steps.push(if op == HomOp::Add {
        Step::PolyAdd { moduli: q.clone(), polys: 2 }
    } else {
        Step::PolySub { moduli: q.clone(), polys: 2 }
    });
    steps.push(Step::Transfer { direction: Direction::Out, bytes: ct });
    peak.push(Live { what: "two ciphertexts", moduli: q.clone(), polys: 4 });
}

/// The program of one homomorphic operation for these parameters.
pub fn program(op: HomOp, p: &Params) -> Program {
    match p.design {
        Design::FullRns => full_rns(op, p),
        Design::Textbook { relin_digit_bits } => textbook(op, p, relin_digit_bits),
    }
}

/// Full-RNS B/FV (Bajard et al., as the CE-RAM B/FV paper uses it).
///
/// Layout (section 4.1): a polynomial over Q U Bsk U {m~} takes the slot of base Q with m_sk and
/// m~ in its spare bits, and the slot(s) of base B; the decryption's residues mod t and gamma
/// take a slot of their own.
///
/// Transfers (a modeling choice, documented in docs/PIM.md): add, sub and multiply bring two
/// ciphertexts in and one out; decryption one ciphertext in and the plaintext out; encryption
/// the plaintext and its randomness (u, e1, e2 at 2 bits per coefficient: **assumption**) in and
/// one ciphertext out. Keys (public, secret, relinearization; NTT form when `ntt`) are resident.
fn full_rns(op: HomOp, p: &Params) -> Program {
    let qv = p.q_effective();
    let q = Residues::from(qv.clone());
    let ct = p.ciphertext_bytes();
    let mut s = Vec::new();
    let mut peak = Vec::new();
    let mut scratch = 0;
    match op {
        HomOp::Add | HomOp::Sub => additive(op, &q, ct, &mut s, &mut peak),
        HomOp::Encrypt => {
            let randomness = 3.0 * p.n as f64 * 2.0 / 8.0;
            s.push(Step::Transfer { direction: Direction::In, bytes: plaintext_bytes(p) + randomness });
            // Delta * m in every q_i.
            s.push(Step::MulByConstant { moduli: q.clone(), polys: 1 });
            // p0 * u, p1 * u (public key in NTT form: one forward transform, of u).
            products(&mut s, p, &q, 1, 2, 2);
            // c0 = Delta m + p0 u + e1, c1 = p1 u + e2.
            s.push(Step::PolyAdd { moduli: q.clone(), polys: 3 });
            s.push(Step::Transfer { direction: Direction::Out, bytes: ct });
            peak.push(Live { what: "m, u, e1, e2 and the ciphertext", moduli: q.clone(), polys: 6 });
            scratch = usize::from(p.ntt);
        }
        HomOp::Decrypt => {
            let tg = Residues::from(vec![p.t, p.gamma]);
            let t = Residues::from(vec![p.t]);
            s.push(Step::Transfer { direction: Direction::In, bytes: ct });
            // c0 + c1 * s (s in NTT form).
            products(&mut s, p, &q, 1, 1, 1);
            s.push(Step::PolyAdd { moduli: q.clone(), polys: 1 });
            // |gamma t x|_q.
            s.push(scale_by_t(p, &q, 1));
            // Algorithm 1, lines 2-3: FastBConv to {t, gamma}, times |-q^-1|.
            s.push(Step::FastBConv { from: q.clone(), to: tg.clone(), polys: 1, special: p.special });
            s.push(Step::MulByConstant { moduli: tg.clone(), polys: 1 });
            // Line 4: (s_t - [s_gamma]_gamma) * |gamma^-1|_t.
            s.push(Step::Center { moduli: vec![p.gamma].into(), polys: 1 });
            s.push(Step::Realign { moduli: t.clone(), polys: 1 });
            s.push(Step::PolySub { moduli: t.clone(), polys: 1 });
            s.push(Step::MulByConstant { moduli: t, polys: 1 });
            s.push(Step::Transfer { direction: Direction::Out, bytes: plaintext_bytes(p) });
            peak.push(Live { what: "the ciphertext and c1 * s", moduli: q.clone(), polys: 3 });
            peak.push(Live { what: "the result mod t, gamma", moduli: tg, polys: 1 });
            scratch = usize::from(p.ntt);
        }
        HomOp::Multiply => {
            let extra = [p.msk, p.m_tilde];
            let msk = Residues::from(vec![p.msk]);
            let bsk = Residues::grouped(vec![vec![p.msk], p.b.clone()]);
            let ext = Residues::grouped(vec![cat(&qv, &extra), p.b.clone()]);
            let q_bsk = Residues::grouped(vec![cat(&qv, &[p.msk]), p.b.clone()]);
            let to_ext = Residues::grouped(vec![extra.to_vec(), p.b.clone()]);
            let b = Residues::from(p.b.clone());
            let k = qv.len();
            s.push(Step::Transfer { direction: Direction::In, bytes: 2.0 * ct });
            // Algorithm 2, line 2: Q -> Bsk U {m~} for c0, c1, c0', c1'.
            s.push(Step::FastBConv { from: q.clone(), to: to_ext, polys: 4, special: p.special });
            // Line 3: small Montgomery reduction: r = -c_m~ q^-1 mod m~, (c + q r) m~^-1 in Bsk.
            s.push(Step::MulByConstant { moduli: vec![p.m_tilde].into(), polys: 4 });
            s.push(Step::Realign { moduli: bsk.clone(), polys: 4 });
            s.push(Step::MulByConstant { moduli: bsk.clone(), polys: 4 });
            s.push(Step::PolyAdd { moduli: bsk.clone(), polys: 4 });
            s.push(Step::MulByConstant { moduli: bsk.clone(), polys: 4 });
            // Line 4: the tensor in Q U Bsk (c0c0', c0c1' + c1c0', c1c1'), scaled by t.
            products(&mut s, p, &q_bsk, 4, 4, 3);
            s.push(scale_by_t(p, &q_bsk, 3));
            // Line 5: fast floor Q U Bsk -> Bsk: (x_Bsk - FastBConv(x_Q)) * q^-1.
            s.push(Step::FastBConv { from: q.clone(), to: bsk.clone(), polys: 3, special: p.special });
            s.push(Step::PolySub { moduli: bsk.clone(), polys: 3 });
            s.push(Step::MulByConstant { moduli: bsk.clone(), polys: 3 });
            // Line 6: Shenoy-Kumaresan Bsk -> Q: FastBConv(B -> Q U {m_sk}), alpha from m_sk,
            // subtract alpha |B|_q.
            let q_msk = Residues::from(cat(&qv, &[p.msk]));
            s.push(Step::FastBConv { from: b, to: q_msk, polys: 3, special: false });
            s.push(Step::PolySub { moduli: msk.clone(), polys: 3 });
            s.push(Step::MulByConstant { moduli: msk.clone(), polys: 3 });
            s.push(Step::Center { moduli: msk, polys: 3 });
            s.push(Step::Realign { moduli: q.clone(), polys: 3 });
            s.push(Step::MulByConstant { moduli: q.clone(), polys: 3 });
            s.push(Step::PolySub { moduli: q.clone(), polys: 3 });
            // Relinearization (section 2.3): D_RNS(c~2), each digit into every q_j, the inner
            // products with rlk[0], rlk[1] (NTT form), added to c~0, c~1.
            s.push(Step::RnsDecompose { moduli: q.clone(), polys: 1, special: p.special });
            s.push(Step::Realign { moduli: q.clone(), polys: k });
            s.push(Step::Reduce { moduli: q.clone(), polys: k });
            products(&mut s, p, &q, k, 2 * k, 2);
            s.push(Step::PolyAdd { moduli: q.clone(), polys: 2 });
            s.push(Step::Transfer { direction: Direction::Out, bytes: ct });
            // Peak: the tensor. Inputs c, c' over Q U Bsk U {m~} and one new product (d1)
            // in place: d0 overwrites c0 and d2 overwrites c1' once no longer needed.
            peak.push(Live { what: "c, c' over Q U Bsk U {m~}", moduli: ext.clone(), polys: 4 });
            peak.push(Live { what: "c0 c1' + c1 c0'", moduli: ext, polys: 1 });
            scratch = usize::from(p.ntt);
        }
    }
    Program { op, n: p.n, steps: s, peak, scratch_slots: scratch }
}

/// The textbook design of Reis et al.: one power-of-two q, no RNS, schoolbook products.
fn textbook(op: HomOp, p: &Params, digit_bits: u32) -> Program {
    let q = Residues::from(p.q.clone());
    let log_q = p.log_q();
    let log_n = p.n.trailing_zeros();
    let ct = p.ciphertext_bytes();
    let mut s = Vec::new();
    let mut peak = vec![];
    match op {
        HomOp::Add | HomOp::Sub => additive(op, &q, ct, &mut s, &mut peak),
        HomOp::Encrypt => {
            s.push(Step::Transfer {
                direction: Direction::In,
                bytes: plaintext_bytes(p) + 3.0 * p.n as f64 * 2.0 / 8.0,
            });
            s.push(Step::MulByConstant { moduli: q.clone(), polys: 1 });
            s.push(Step::SchoolbookMul { moduli: q.clone(), products: 2 });
            s.push(Step::PolyAdd { moduli: q.clone(), polys: 3 });
            s.push(Step::Transfer { direction: Direction::Out, bytes: ct });
            peak.push(Live { what: "m, u, e1, e2 and the ciphertext", moduli: q.clone(), polys: 6 });
        }
        HomOp::Decrypt => {
            s.push(Step::Transfer { direction: Direction::In, bytes: ct });
            s.push(Step::SchoolbookMul { moduli: q.clone(), products: 1 });
            s.push(Step::PolyAdd { moduli: q.clone(), polys: 1 });
            s.push(Step::Rescale { acc_bits: log_q, t_bits: p.t.width(), polys: 1 });
            s.push(Step::Transfer { direction: Direction::Out, bytes: plaintext_bytes(p) });
            peak.push(Live { what: "the ciphertext and c1 * s", moduli: q.clone(), polys: 3 });
        }
        HomOp::Multiply => {
            let acc = 2 * log_q + log_n + 1;
            let digits = log_q.div_ceil(digit_bits) as usize;
            s.push(Step::Transfer { direction: Direction::In, bytes: 2.0 * ct });
            s.push(Step::IntegerSchoolbookMul { operand_bits: log_q, acc_bits: acc, products: 4 });
            s.push(Step::PolyAdd { moduli: vec![Modulus::integer(acc)].into(), polys: 1 });
            s.push(Step::Rescale { acc_bits: acc, t_bits: p.t.width(), polys: 3 });
            s.push(Step::DigitDecompose { width: log_q, digits, polys: 1 });
            s.push(Step::SchoolbookMul { moduli: q.clone(), products: 2 * digits });
            s.push(Step::PolyAdd { moduli: q.clone(), polys: 2 * digits });
            s.push(Step::Transfer { direction: Direction::Out, bytes: ct });
            peak.push(Live { what: "c, c'", moduli: q.clone(), polys: 4 });
            peak.push(Live { what: "the integer products", moduli: vec![Modulus::integer(acc)].into(), polys: 3 });
        }
    }
    Program { op, n: p.n, steps: s, peak, scratch_slots: 0 }
}
