//! Residue number system: bases of pairwise coprime word-size moduli, CRT composition and the
//! fast base conversion of Bajard, Eynard, Hasan and Zucca (FastBConv).
//!
//! An integer x modulo Q = q_0 q_1 ... q_{L-1} is held as its residues (x mod q_0, ..., x mod
//! q_{L-1}). [`RnsBase`] moves between that form and big integers (for tests, decoding and
//! parameter set-up); [`BaseConverter`] is the hot path that carries residues from one base to
//! another without ever leaving 64-bit words.

use num_bigint::{BigInt, BigUint, Sign};
use num_traits::{One, Zero};

use crate::error::{MathError, Result};
use crate::modular::Modulus;
use crate::simd::{dispatch, Isa};

mod kernels;
use kernels::{Accumulate, Convert};

/// A base of pairwise coprime moduli q_0, ..., q_{L-1} with the CRT constants of
/// Q = q_0 ... q_{L-1} precomputed.
///
/// ```
/// use num_bigint::BigUint;
/// use pimhe_math::{Modulus, RnsBase};
///
/// let moduli: Vec<Modulus> = [7681u64, 12289, 40961]
///     .iter()
///     .map(|&q| Modulus::new(q).unwrap())
///     .collect();
/// let base = RnsBase::new(&moduli).unwrap();
/// assert_eq!(base.len(), 3);
/// assert_eq!(*base.product(), BigUint::from(7681u64 * 12289 * 40961));
///
/// let x = BigUint::from(123_456_789_012u64);
/// let residues = base.decompose(&x);
/// assert_eq!(residues, vec![(123_456_789_012u64 % 7681) as u32,
///                           (123_456_789_012u64 % 12289) as u32,
///                           (123_456_789_012u64 % 40961) as u32]);
/// assert_eq!(base.compose(&residues).unwrap(), x);
///
/// // Moduli sharing a factor are rejected.
/// let bad = [Modulus::new(6).unwrap(), Modulus::new(35).unwrap(), Modulus::new(21).unwrap()];
/// assert!(RnsBase::new(&bad).is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RnsBase {
    moduli: Vec<Modulus>,
    /// Q, the product of all moduli.
    product: BigUint,
    /// Q / q_i.
    q_hat: Vec<BigUint>,
    /// [(Q / q_i)^{-1}]_{q_i}.
    q_hat_inv: Vec<u32>,
    /// Shoup constants of `q_hat_inv` modulo q_i.
    q_hat_inv_shoup: Vec<u32>,
}

fn gcd(mut a: u32, mut b: u32) -> u32 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// x mod q for a big unsigned integer, by Horner's rule over its 32-bit digits.
fn big_mod(x: &BigUint, q: &Modulus) -> u32 {
    x.iter_u32_digits().rev().fold(0u32, |acc, digit| q.reduce_u64(((acc as u64) << 32) | digit as u64))
}

impl RnsBase {
    /// Builds a base from `moduli` (in the order given).
    ///
    /// Fails with [`MathError::InvalidBase`] if `moduli` is empty or two of them share a
    /// factor (the message names the first offending pair).
    pub fn new(moduli: &[Modulus]) -> Result<Self> {
        if moduli.is_empty() {
            return Err(MathError::InvalidBase("a base needs at least one modulus".into()));
        }
        for (i, a) in moduli.iter().enumerate() {
            for b in &moduli[i + 1..] {
                let g = gcd(a.value(), b.value());
                if g != 1 {
                    return Err(MathError::InvalidBase(format!(
                        "moduli {} and {} are not coprime (common factor {g})",
                        a.value(),
                        b.value()
                    )));
                }
            }
        }
        let product = moduli.iter().fold(BigUint::one(), |acc, q| acc * q.value());
        let q_hat: Vec<BigUint> = moduli.iter().map(|q| &product / q.value()).collect();
        let q_hat_inv =
            moduli.iter().zip(&q_hat).map(|(q, hat)| q.inv(big_mod(hat, q))).collect::<Result<Vec<u32>>>()?;
        let q_hat_inv_shoup = moduli.iter().zip(&q_hat_inv).map(|(q, &w)| q.shoup(w)).collect();
        Ok(Self { moduli: moduli.to_vec(), product, q_hat, q_hat_inv, q_hat_inv_shoup })
    }

    /// The moduli, in base order.
    pub fn moduli(&self) -> &[Modulus] {
        &self.moduli
    }

    /// Number of moduli L.
    pub fn len(&self) -> usize {
        self.moduli.len()
    }

    /// Always `false`: a base has at least one modulus. Present for API symmetry with `len`.
    pub fn is_empty(&self) -> bool {
        self.moduli.is_empty()
    }

    /// Q, the product of the moduli.
    pub fn product(&self) -> &BigUint {
        &self.product
    }

    /// [(Q / q_i)^{-1}]_{q_i} for each i, in base order.
    pub fn q_hat_inv(&self) -> &[u32] {
        &self.q_hat_inv
    }

    /// The residues x mod q_i of a non-negative integer (any size; x >= Q is reduced).
    pub fn decompose(&self, x: &BigUint) -> Vec<u32> {
        self.moduli.iter().map(|q| big_mod(x, q)).collect()
    }

    /// The residues x mod q_i, each in [0, q_i), of a signed integer.
    pub fn decompose_signed(&self, x: &BigInt) -> Vec<u32> {
        let magnitude = self.decompose(x.magnitude());
        if x.sign() == Sign::Minus {
            self.moduli.iter().zip(magnitude).map(|(q, r)| q.neg(r)).collect()
        } else {
            magnitude
        }
    }

    fn check_residues(&self, residues: &[u32]) -> Result<()> {
        if residues.len() == self.len() {
            Ok(())
        } else {
            Err(MathError::LengthMismatch {
                what: "RNS residues (one per modulus of the base)",
                expected: self.len(),
                got: residues.len(),
            })
        }
    }

    /// The unique x in [0, Q) with x = `residues[i]` mod q_i (Chinese remaindering).
    ///
    /// Residues need not be reduced; fails with [`MathError::LengthMismatch`] unless there is
    /// exactly one residue per modulus.
    pub fn compose(&self, residues: &[u32]) -> Result<BigUint> {
        self.check_residues(residues)?;
        let mut sum = BigUint::zero();
        for (((q, &x), &inv), hat) in self.moduli.iter().zip(residues).zip(&self.q_hat_inv).zip(&self.q_hat) {
            sum += hat * q.mul(x, inv);
        }
        Ok(sum % &self.product)
    }

    /// The unique x in (-Q/2, Q/2] with x = `residues[i]` mod q_i.
    pub fn compose_centered(&self, residues: &[u32]) -> Result<BigInt> {
        let x = self.compose(residues)?;
        if &x << 1u32 > self.product {
            Ok(BigInt::from(x) - BigInt::from(self.product.clone()))
        } else {
            Ok(BigInt::from(x))
        }
    }
}

/// Fast base conversion from one RNS base to another (Bajard-Eynard-Hasan-Zucca FastBConv).
///
/// For x given by its residues x_i in the source base {q_i} (product Q), the converter computes
/// for every target modulus p_j
///
/// y_j = sum_i [x_i (Q/q_i)^{-1}]_{q_i} (Q/q_i) mod p_j,
///
/// which equals (x + a Q) mod p_j for one integer 0 <= a < L (the same a for every p_j), where x
/// is the representative in [0, Q). The error a Q is what RNS-friendly scheme algorithms
/// account for or correct afterwards.
///
/// ```
/// use num_bigint::BigUint;
/// use pimhe_math::{BaseConverter, Modulus, RnsBase};
///
/// let base = |qs: &[u64]| {
///     RnsBase::new(&qs.iter().map(|&q| Modulus::new(q).unwrap()).collect::<Vec<_>>()).unwrap()
/// };
/// let from = base(&[7681, 12289]);
/// let to = base(&[40961, 65537, 114689]);
/// let conv = BaseConverter::new(&from, &to).unwrap();
///
/// // Two coefficients, limb-major: [x0 mod q0, x1 mod q0, x0 mod q1, x1 mod q1].
/// let xs = [5u64, 94_000_000];
/// let input: Vec<u32> = from
///     .moduli()
///     .iter()
///     .flat_map(|q| xs.iter().map(move |&x| (x % q.value() as u64) as u32))
///     .collect();
/// let mut output = vec![0u32; to.len() * xs.len()];
/// conv.convert(&input, &mut output).unwrap();
///
/// let big_q = 7681u64 * 12289;
/// for (j, p) in to.moduli().iter().enumerate() {
///     let p = p.value() as u64;
///     for (c, &x) in xs.iter().enumerate() {
///         let y = output[j * xs.len() + c] as u64;
///         // y = x + a Q mod p with a in {0, 1}
///         assert!(y == x % p || y == (x + big_q) % p);
///     }
/// }
/// ```
#[derive(Debug, Clone)]
pub struct BaseConverter {
    from: RnsBase,
    to: RnsBase,
    /// [Q/q_i mod p_j] at index j * from.len() + i (one row per target modulus).
    q_hat_mod_p: Vec<u32>,
    /// Shoup's quotient of each of `q_hat_mod_p` by its target modulus (the vector sums).
    q_hat_mod_p_shoup: Vec<u32>,
    /// [-Q mod p_j] per target modulus: the correction per centred residue.
    minus_q_mod_p: Vec<u32>,
}

impl BaseConverter {
    /// Precomputes the conversion constants from base `from` to base `to`.
    ///
    /// The two bases may share moduli (the identity then holds trivially on those limbs).
    pub fn new(from: &RnsBase, to: &RnsBase) -> Result<Self> {
        let mut q_hat_mod_p = Vec::with_capacity(from.len() * to.len());
        for p in to.moduli() {
            for (i, _) in from.moduli().iter().enumerate() {
                // Q/q_i mod p as a product of word-size factors.
                let value = from
                    .moduli()
                    .iter()
                    .enumerate()
                    .filter(|&(k, _)| k != i)
                    .fold(1 % p.value(), |acc, (_, q)| p.mul(acc, p.reduce_u64(q.value() as u64)));
                q_hat_mod_p.push(value);
            }
        }
        // -Q mod p_j from the row's first constant: Q = q_0 (Q/q_0).
        let q_0 = from.moduli()[0].value() as u64;
        let minus_q_mod_p = to
            .moduli()
            .iter()
            .enumerate()
            .map(|(j, p)| p.neg(p.mul(q_hat_mod_p[j * from.len()], p.reduce_u64(q_0))))
            .collect();
        let q_hat_mod_p_shoup =
            q_hat_mod_p.iter().enumerate().map(|(k, &value)| to.moduli()[k / from.len()].shoup(value)).collect();
        Ok(Self { from: from.clone(), to: to.clone(), q_hat_mod_p, q_hat_mod_p_shoup, minus_q_mod_p })
    }

    /// The source base {q_i}.
    pub fn from_base(&self) -> &RnsBase {
        &self.from
    }

    /// The target base {p_j}.
    pub fn to_base(&self) -> &RnsBase {
        &self.to
    }

    /// The constants `Q/q_i mod p_j` of target limb j, one per source limb i: what a device
    /// computing FastBConv's second half itself multiplies by. Fails with
    /// [`MathError::LengthMismatch`] if `to_index` is not a limb of the target base.
    pub fn q_hat_mod_target(&self, to_index: usize) -> Result<&[u32]> {
        if to_index >= self.to.len() {
            return Err(MathError::LengthMismatch {
                what: "FastBConv target limb (below the target base size)",
                expected: self.to.len(),
                got: to_index,
            });
        }
        let l = self.from.len();
        Ok(&self.q_hat_mod_p[to_index * l..(to_index + 1) * l])
    }

    /// FastBConv (Bajard-Eynard-Hasan-Zucca): y_j = sum_i [x_i * q_hat_inv_i]_{q_i} * (Q/q_i)
    /// mod p_j, which equals x + a*Q mod p_j for some integer 0 <= a < from.len().
    ///
    /// Limb-major layout: `input` is from.len() slices of n residues back to back (all
    /// coefficients mod q_0, then mod q_1, ...); `output` is to.len() * n likewise, each value
    /// in [0, p_j). n is inferred from `input`; fails with [`MathError::LengthMismatch`] if
    /// `input.len()` is not a multiple of from.len() or `output.len() != to.len() * n`.
    /// Input residues need not be reduced (any u32 is accepted).
    pub fn convert(&self, input: &[u32], output: &mut [u32]) -> Result<()> {
        self.convert_on(Isa::active(), input, output)
    }

    /// [`BaseConverter::convert`] compiled for instruction set `isa` (or the best available
    /// below it). Under AVX2 or AVX-512 the multiply-accumulate and its reduction run in
    /// vector lanes (`rns/kernels.rs`); every ISA gives the same words.
    pub fn convert_on(&self, isa: Isa, input: &[u32], output: &mut [u32]) -> Result<()> {
        let l = self.from.len();
        let k = self.to.len();
        let n = input.len() / l;
        if input.len() != l * n {
            return Err(MathError::LengthMismatch {
                what: "FastBConv input (a multiple of the source base size)",
                expected: l * n,
                got: input.len(),
            });
        }
        if output.len() != k * n {
            return Err(MathError::LengthMismatch {
                what: "FastBConv output (target base size times coefficients)",
                expected: k * n,
                got: output.len(),
            });
        }
        if n > 0 {
            dispatch(isa, Convert { converter: self, input, output, n });
        }
        Ok(())
    }

    /// The first half of FastBConv for source limb i alone, in place: `data = [x (Q/q_i)^{-1}]_{q_i}`
    /// for residues x in [0, q_i). A caller converting one target prime at a time
    /// ([`BaseConverter::accumulate_on`]) scales each source limb once with this.
    ///
    /// Fails with [`MathError::LengthMismatch`] if `from_index` is not a limb of the source base.
    pub fn scale_on(&self, isa: Isa, from_index: usize, data: &mut [u32]) -> Result<()> {
        if from_index >= self.from.len() {
            return Err(MathError::LengthMismatch {
                what: "FastBConv source limb (below the source base size)",
                expected: self.from.len(),
                got: from_index,
            });
        }
        crate::simd::elementwise::mul_scalar(isa, &self.from.moduli[from_index], data, self.from.q_hat_inv[from_index]);
        Ok(())
    }

    /// The second half of FastBConv alone, for one target modulus p_j: `out[c] = sum_i s_i[c]
    /// (Q/q_i) mod p_j` for residues scaled by [`BaseConverter::scale_on`] (limb-major,
    /// from.len() slices of `out.len()` values). A caller converting to one target prime at a
    /// time scales each source limb once and calls this per target, so every converted limb can
    /// be used (transformed, multiplied) while it is still in cache. Output values are in
    /// [0, p_j), exactly those of [`BaseConverter::convert_on`].
    ///
    /// Each scaled value must be below its source prime (as `scale_on` leaves it): the u64
    /// accumulator folds only every 16 products, which is safe for values below 2^30 (checked in
    /// debug builds). Fails with [`MathError::LengthMismatch`] if `scaled.len() != from.len() *
    /// out.len()` or `to_index` is not a limb of the target base.
    pub fn accumulate_on(&self, isa: Isa, to_index: usize, scaled: &[u32], out: &mut [u32]) -> Result<()> {
        self.accumulate_checked(isa, to_index, scaled, out, false)
    }

    /// [`BaseConverter::accumulate_on`] of the centred scaled residues: each s_i above
    /// floor(q_i / 2) is read as s_i - q_i, so `out[c] = sum_i s_i[c] (Q/q_i) - a_c Q mod p_j`
    /// with a_c the number of such residues. The result is a representative of x + a Q with
    /// a in (-L/2, L/2] rather than [0, L): what a division by Q rounds to nearest with
    /// (ModDown, rescaling). The correction costs a count per coefficient, not a pass per
    /// source limb. Same requirements and errors as [`BaseConverter::accumulate_on`].
    pub fn accumulate_centred_on(&self, isa: Isa, to_index: usize, scaled: &[u32], out: &mut [u32]) -> Result<()> {
        self.accumulate_checked(isa, to_index, scaled, out, true)
    }

    /// [`BaseConverter::accumulate_on`] or its centred form, after checking the lengths.
    fn accumulate_checked(
        &self,
        isa: Isa,
        to_index: usize,
        scaled: &[u32],
        out: &mut [u32],
        centred: bool,
    ) -> Result<()> {
        if to_index >= self.to.len() {
            return Err(MathError::LengthMismatch {
                what: "FastBConv target limb (below the target base size)",
                expected: self.to.len(),
                got: to_index,
            });
        }
        let n = out.len();
        if scaled.len() != self.from.len() * n {
            return Err(MathError::LengthMismatch {
                what: "FastBConv scaled input (source base size times coefficients)",
                expected: self.from.len() * n,
                got: scaled.len(),
            });
        }
        debug_assert!(
            self.from.moduli.iter().zip(scaled.chunks(n.max(1))).all(|(q, limb)| limb.iter().all(|&x| x < q.value())),
            "accumulate_on needs scaled residues below their source primes"
        );
        if n > 0 {
            dispatch(isa, Accumulate { converter: self, to_index, scaled, out, centred });
        }
        Ok(())
    }
}
