//! Parameter descriptions: moduli by kind and width, the bases of full-RNS B/FV, and the
//! design flags (full-RNS vs the textbook design of Reis et al., NTT vs schoolbook products,
//! the special-moduli optimizations on or off). Cases A, B and C of Table 1 and the textbook
//! design are choices of these, not tables.

use serde::Serialize;

/// How residues modulo a modulus are reduced (and so which micro-ops that takes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum ModulusKind {
    /// 2^g - 1: Algorithm 3 (shift, mask, add, conditional subtract).
    Mersenne,
    /// 2^g: a mask (section 3.3).
    PowerOfTwo,
    /// 2^g + 1: Algorithm 4.
    FermatLike,
    /// Any other modulus: Barrett reduction (section 3.5), two shift-and-add multiplications.
    Generic,
    /// No modulus: plain integers (the textbook design's products before rounding).
    Integer,
}

/// One modulus, by kind and size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct Modulus {
    /// How it is reduced.
    pub kind: ModulusKind,
    /// g for the special kinds (2^g - 1, 2^g, 2^g + 1); the bit width for Generic / Integer.
    pub g: u32,
}

impl Modulus {
    /// 2^g - 1.
    pub const fn mersenne(g: u32) -> Self {
        Modulus { kind: ModulusKind::Mersenne, g }
    }
    /// 2^g.
    pub const fn power_of_two(g: u32) -> Self {
        Modulus { kind: ModulusKind::PowerOfTwo, g }
    }
    /// 2^g + 1.
    pub const fn fermat(g: u32) -> Self {
        Modulus { kind: ModulusKind::FermatLike, g }
    }
    /// A modulus of `bits` bits reduced with Barrett.
    pub const fn generic(bits: u32) -> Self {
        Modulus { kind: ModulusKind::Generic, g: bits }
    }
    /// Plain integers of `bits` bits.
    pub const fn integer(bits: u32) -> Self {
        Modulus { kind: ModulusKind::Integer, g: bits }
    }

    /// Bits a residue takes: g for 2^g - 1 and 2^g, g + 1 for 2^g + 1, the width otherwise.
    pub fn width(&self) -> u32 {
        match self.kind {
            ModulusKind::FermatLike => self.g + 1,
            _ => self.g,
        }
    }

    /// The same size reduced without the special optimizations: a special modulus becomes a
    /// Generic one of its width (case A: "Barrett reduction ... without our novel
    /// optimizations").
    pub fn without_special(&self) -> Self {
        match self.kind {
            ModulusKind::Integer => *self,
            _ => Modulus::generic(self.width()),
        }
    }
}

/// The residues a step covers, grouped by the slot they live in (the layout of section 4.1:
/// base Q with m_sk and m~ in its spare bits in one slot, base B in another, ...). A group wider
/// than a slot spills into more slots ([`crate::machine::Machine::pack`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Residues {
    /// Groups of residues, one slot (or more) each.
    pub groups: Vec<Vec<Modulus>>,
}

impl Residues {
    /// Groups given explicitly.
    pub fn grouped(groups: Vec<Vec<Modulus>>) -> Self {
        Residues { groups: groups.into_iter().filter(|g| !g.is_empty()).collect() }
    }

    /// All residues, in order.
    pub fn all(&self) -> Vec<Modulus> {
        self.groups.iter().flatten().copied().collect()
    }

    /// Number of residues.
    pub fn len(&self) -> usize {
        self.groups.iter().map(Vec::len).sum()
    }

    /// No residues.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl From<Vec<Modulus>> for Residues {
    /// One group.
    fn from(moduli: Vec<Modulus>) -> Self {
        Residues::grouped(vec![moduli])
    }
}

/// Shape of a source base for the FastBConv optimizations of section 3.4.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum SpecialBase {
    /// {2^g - 1, 2^g, 2^g + 1} (S1): Theorem 1, Lemma 2, Theorem 2.
    Balanced,
    /// Mersenne / Fermat-like coprimes (S2): the factors are powers of two, Algorithms 5 and 6.
    MersenneFermat,
    /// Neither: generic modular multiplications.
    None,
}

impl SpecialBase {
    /// Classifies a base.
    pub fn classify(moduli: &[Modulus]) -> Self {
        use ModulusKind::*;
        let mut kinds: Vec<ModulusKind> = moduli.iter().map(|m| m.kind).collect();
        kinds.sort();
        if moduli.len() == 3 && kinds == [Mersenne, PowerOfTwo, FermatLike] && moduli.iter().all(|m| m.g == moduli[0].g)
        {
            return SpecialBase::Balanced;
        }
        if !moduli.is_empty() && moduli.iter().all(|m| matches!(m.kind, Mersenne | FermatLike)) {
            return SpecialBase::MersenneFermat;
        }
        SpecialBase::None
    }
}

/// Full-RNS (Bajard et al., the CE-RAM B/FV paper) or the textbook scheme of Reis et al.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Design {
    /// Algorithms 1 and 2 with relinearization over base Q.
    FullRns,
    /// One power-of-two q, products over the integers, rounding by shifts, base-T
    /// relinearization (Reis et al. [33]).
    Textbook {
        /// log2 of the relinearization base T.
        relin_digit_bits: u32,
    },
}

/// Everything a program generator needs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Params {
    /// Ring degree N.
    pub n: usize,
    /// Base Q as given (special kinds; made Generic when `special` is off).
    pub q: Vec<Modulus>,
    /// Base B (Generic: "no special optimizations ... are available", section 3.5).
    pub b: Vec<Modulus>,
    /// m_sk.
    pub msk: Modulus,
    /// m~.
    pub m_tilde: Modulus,
    /// Plaintext modulus t.
    pub t: Modulus,
    /// gamma of Algorithm 1.
    pub gamma: Modulus,
    /// Full-RNS or textbook.
    pub design: Design,
    /// NTT-based products (else schoolbook).
    pub ntt: bool,
    /// The special-moduli optimizations of section 3 (fast reductions, fast FastBConv).
    pub special: bool,
}

/// Section 4.1's g.
pub const G_BALANCED: u32 = 146;

impl Params {
    /// The full-RNS parameters of section 4.1 with base Q and its extended-base moduli "slightly
    /// larger than the largest modulus" (section 3.5: 2^g + c with |c| < g, the same number of bits
    /// as the largest modulus of Q).
    ///
    /// **Assumptions** (the paper does not give them): |B| = |Q| (as Bajard et al.); m_sk and m~
    /// fit in the spare bits beside Q in a 512-bit slot (section 4.1) as a 36-bit prime and
    /// m~ = 2^32 (Bajard et al.'s m~), both reduced generically; t = 65537 and gamma a 32-bit
    /// odd number, both Generic (the special reductions are for base Q only, section 3.3).
    pub fn full_rns(q: Vec<Modulus>, ntt: bool, special: bool) -> Self {
        let widest = q.iter().map(Modulus::width).max().unwrap_or(1);
        let b = vec![Modulus::generic(widest); q.len()];
        Params {
            n: 1 << 14,
            q,
            b,
            msk: Modulus::generic(36),
            m_tilde: Modulus::generic(32),
            t: Modulus::generic(17),
            gamma: Modulus::generic(32),
            design: Design::FullRns,
            ntt,
            special,
        }
    }

    /// Case A of Table 1: {2^146 - 1, 2^146, 2^146 + 1} without the special optimizations.
    pub fn case_a(ntt: bool) -> Self {
        Self::full_rns(balanced(), ntt, false)
    }

    /// Case B: the balanced set with them.
    pub fn case_b(ntt: bool) -> Self {
        Self::full_rns(balanced(), ntt, true)
    }

    /// Case C: {2^220 + 1, 2^110 + 1, 2^110 - 1} with them.
    pub fn case_c(ntt: bool) -> Self {
        Self::full_rns(vec![Modulus::fermat(220), Modulus::fermat(110), Modulus::mersenne(110)], ntt, true)
    }

    /// The textbook design of Reis et al.: one q = 2^log_q, no RNS, no NTT.
    /// **Assumption**: relinearization digits of 64 bits (the base T is not in the CE-RAM B/FV
    /// paper).
    pub fn textbook(n: usize, log_q: u32) -> Self {
        Params {
            n,
            q: vec![Modulus::power_of_two(log_q)],
            b: vec![],
            msk: Modulus::generic(1),
            m_tilde: Modulus::generic(1),
            t: Modulus::generic(17),
            gamma: Modulus::generic(1),
            design: Design::Textbook { relin_digit_bits: 64 },
            ntt: false,
            special: true,
        }
    }

    /// Base Q as the programs use it: the given kinds with `special`, all Generic without.
    pub fn q_effective(&self) -> Vec<Modulus> {
        if self.special {
            self.q.clone()
        } else {
            self.q.iter().map(Modulus::without_special).collect()
        }
    }

    /// |q| in bits: the sum of log2 of the moduli (g for 2^g - 1, 2^g, 2^g + 1 — the paper's
    /// |q| = 438 for the balanced set — and the width for the others).
    pub fn log_q(&self) -> u32 {
        self.q.iter().map(|m| m.g).sum()
    }

    /// Bytes of one ciphertext over Q (two polynomials of N coefficients of |q| bits).
    pub fn ciphertext_bytes(&self) -> f64 {
        2.0 * self.n as f64 * self.log_q() as f64 / 8.0
    }
}

/// {2^146 - 1, 2^146, 2^146 + 1}.
pub fn balanced() -> Vec<Modulus> {
    vec![Modulus::mersenne(G_BALANCED), Modulus::power_of_two(G_BALANCED), Modulus::fermat(G_BALANCED)]
}
