//! The Backend trait: the operations a PIM device (or the CPU) can own.

use std::sync::Arc;

use pimhe_math::Modulus;
use pimhe_ring::{PolyBatch, Representation, RingBasis};

use crate::behz::BehzPlan;
use crate::error::Result;
use crate::key_switch::KeySwitchPlan;

/// The shape of a device-resident batch: its basis, how many polynomials, which representation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shape {
    /// RNS basis (ring degree and primes).
    pub basis: Arc<RingBasis>,
    /// Number of polynomials.
    pub count: usize,
    /// Coefficient or NTT.
    pub representation: Representation,
}

impl Shape {
    /// The shape of a host batch.
    pub fn of(batch: &PolyBatch) -> Self {
        Self { basis: batch.basis().clone(), count: batch.count(), representation: batch.representation() }
    }
}

/// A device that stores polynomial batches and runs the polynomial work of HE on them.
///
/// Data lives in backend-owned [`Backend::Buffer`]s: [`Backend::upload`] moves a host batch in,
/// [`Backend::download`] copies one out, and everything in between stays on the device. Schemes
/// are written only against this trait, so they run unchanged on every backend.
///
/// # Operand rules
///
/// Element-wise operations take their output shape from the first operand `a`. The second
/// operand `b` may *broadcast*:
/// - over polynomials: `b` holds either as many polynomials as `a` or exactly one, which is
///   then combined with every polynomial of `a` (a key or a plaintext against a batch);
/// - over primes: `b`'s basis must contain every prime of `a`'s basis; the matching limbs are
///   used (a key made at the top of the modulus chain, used at a lower level).
///
/// Additions need equal representations, products need [`Representation::Ntt`]. Violations are
/// errors that name the operation; inputs are never modified by a failing call.
pub trait Backend: Send + Sync {
    /// A batch of polynomials resident on the device.
    type Buffer: Send + Sync;

    /// Short name, as the CLI spells it (`cpu`, `upmem-emu`, ...).
    fn name(&self) -> &str;

    /// Number of host threads the backend uses.
    fn threads(&self) -> usize;

    /// Moves a host batch onto the device.
    fn upload(&self, batch: PolyBatch) -> Result<Self::Buffer>;

    /// Copies a device batch back to the host.
    fn download(&self, buffer: &Self::Buffer) -> Result<PolyBatch>;

    /// [`Backend::download`] of a buffer the caller gives up: a backend whose buffers are host
    /// batches hands the batch itself over instead of copying it (a Galois key at N = 2^16 is
    /// 264 MiB of such results).
    fn download_owned(&self, buffer: Self::Buffer) -> Result<PolyBatch> {
        self.download(&buffer)
    }

    /// The shape of a device batch.
    fn shape(&self, buffer: &Self::Buffer) -> Shape;

    /// A device-side copy.
    fn copy(&self, buffer: &Self::Buffer) -> Result<Self::Buffer>;

    /// Overwrites a buffer holding secret material with zeros.
    fn zeroize(&self, buffer: &mut Self::Buffer);

    /// `a + b`.
    fn add(&self, a: &Self::Buffer, b: &Self::Buffer) -> Result<Self::Buffer>;

    /// `acc += b`.
    fn add_assign(&self, acc: &mut Self::Buffer, b: &Self::Buffer) -> Result<()>;

    /// `a - b`.
    fn sub(&self, a: &Self::Buffer, b: &Self::Buffer) -> Result<Self::Buffer>;

    /// `-a`.
    fn neg(&self, a: &Self::Buffer) -> Result<Self::Buffer>;

    /// Element-wise product `a * b` (NTT form).
    fn mul(&self, a: &Self::Buffer, b: &Self::Buffer) -> Result<Self::Buffer>;

    /// Multiply-accumulate `acc += a * b` (NTT form; `acc` has `a`'s shape).
    fn mac(&self, acc: &mut Self::Buffer, a: &Self::Buffer, b: &Self::Buffer) -> Result<()>;

    /// `a * c` for an integer constant `c`, reduced modulo each prime.
    fn mul_scalar(&self, a: &Self::Buffer, c: u64) -> Result<Self::Buffer>;

    /// `a * c_i` on limb i: every residue modulo the i-th prime of `a`'s basis times that prime's
    /// own constant `constants[i]` (reduced modulo the prime), in either representation. This is
    /// the RNS form of multiplying by an integer too large for one word, given by its residues
    /// (BFV's q^{-1} modulo the primes of another base, or floor(Q/t)). `constants` holds exactly
    /// one value per limb.
    fn mul_limb_constants(&self, a: &Self::Buffer, constants: &[u64]) -> Result<Self::Buffer>;

    /// The BGV/BFV tensor product of ciphertext pairs (NTT form):
    /// `(a0 b0, a0 b1 + a1 b0, a1 b1)`. All four operands have the same shape.
    fn tensor(
        &self,
        a0: &Self::Buffer,
        a1: &Self::Buffer,
        b0: &Self::Buffer,
        b1: &Self::Buffer,
    ) -> Result<[Self::Buffer; 3]>;

    /// The tensor product of a ciphertext pair with itself (NTT form): `(a0^2, 2 a0 a1, a1^2)`,
    /// the residues of [`Backend::tensor`]`(a0, a1, a0, a1)` for three products instead of four
    /// and two operands read instead of four (Anaheim's TensorSq). Both operands have the same
    /// shape.
    ///
    /// The default calls [`Backend::tensor`]; the CPU and UPMEM backends fuse it.
    fn tensor_square(&self, a0: &Self::Buffer, a1: &Self::Buffer) -> Result<[Self::Buffer; 3]> {
        self.tensor(a0, a1, a0, a1)
    }

    /// BFV's product of ciphertext batches `a = (a0, a1)` and `b = (b0, b1)` (NTT form over
    /// `plan.q()`, all of one shape) by BEHZ's Algorithm 2: both extended to Bsk, the tensor
    /// product in q and in Bsk, scaled by t/q (fast floor) and brought back to q
    /// (Shenoy-Kumaresan): the three parts of the product ciphertext, NTT form over q. See
    /// [`crate::behz`] for the steps.
    ///
    /// The default runs [`crate::behz::composed`], each step a batch-wide backend call; the CPU
    /// backend runs the steps limb by limb in cache. Every implementation returns the same
    /// residues.
    fn behz_multiply(
        &self,
        plan: &BehzPlan,
        a: [&Self::Buffer; 2],
        b: [&Self::Buffer; 2],
    ) -> Result<[Self::Buffer; 3]> {
        crate::behz::composed(self, plan, a, Some(b))
    }

    /// [`Backend::behz_multiply`] of `a` by itself: `a` extended once and three products per
    /// tensor instead of four. The same residues as `behz_multiply(plan, a, a)`.
    ///
    /// The default runs [`crate::behz::composed`]; the CPU backend fuses it.
    fn behz_square(&self, plan: &BehzPlan, a: [&Self::Buffer; 2]) -> Result<[Self::Buffer; 3]> {
        crate::behz::composed(self, plan, a, None)
    }

    /// A constant linear combination `offset + sum_j c_j * a_j` (Anaheim's CAccum): `terms[j]`
    /// is `(a_j, c_j)` with `c_j` one constant per limb of `a_j`'s basis (as
    /// [`Backend::mul_limb_constants`]), and `offset`, one constant per limb, is the constant
    /// polynomial added (in NTT form to every residue, in coefficient form to the constant
    /// coefficient). Every term has the first's shape; at least one term. This is one pass over
    /// the terms where separate products and additions would write and read every partial sum
    /// (the accumulation of a polynomial evaluation, of hoisted rotations).
    ///
    /// The default composes [`Backend::mul_limb_constants`] and [`Backend::add_assign`] (the
    /// offset uploaded as a one-polynomial batch); the CPU and UPMEM backends fuse it.
    fn constant_accumulate(&self, terms: &[(&Self::Buffer, &[u64])], offset: Option<&[u64]>) -> Result<Self::Buffer> {
        let shape = crate::operands::check_constant_terms(self, terms, offset)?;
        let (first, constants) = terms[0];
        let mut acc = self.mul_limb_constants(first, constants)?;
        for &(a, constants) in &terms[1..] {
            let term = self.mul_limb_constants(a, constants)?;
            self.add_assign(&mut acc, &term)?;
        }
        if let Some(offset) = offset {
            self.add_assign(&mut acc, &self.upload(crate::operands::constant_polynomial(&shape, offset))?)?;
        }
        Ok(acc)
    }

    /// `(a - b) * c_i` on limb i, with `constants` one per limb of `a`'s basis (as
    /// [`Backend::mul_limb_constants`]) and `b` broadcast as for [`Backend::sub`]: the epilogue of
    /// a modulus reduction (Anaheim's ModDownEp), which subtracts the base-converted residue
    /// and multiplies by the inverse of the dropped primes' product in one pass.
    ///
    /// The default composes [`Backend::sub`] and [`Backend::mul_limb_constants`]; the CPU and
    /// UPMEM backends fuse it.
    fn mod_down_epilogue(&self, a: &Self::Buffer, b: &Self::Buffer, constants: &[u64]) -> Result<Self::Buffer> {
        crate::operands::check_constants("mod_down_epilogue", &self.shape(a), constants)?;
        self.mul_limb_constants(&self.sub(a, b)?, constants)
    }

    /// The sum of all polynomials of `a`, as a batch of one polynomial (the accumulation over a
    /// batch that encrypted aggregates need: a sum over users' ciphertexts).
    fn sum(&self, a: &Self::Buffer) -> Result<Self::Buffer>;

    /// Forward NTT of every polynomial, in place.
    fn ntt(&self, a: &mut Self::Buffer) -> Result<()>;

    /// Inverse NTT of every polynomial, in place.
    fn intt(&self, a: &mut Self::Buffer) -> Result<()>;

    /// The same polynomials over `target`'s primes (all present in `a`'s basis).
    fn restrict(&self, a: &Self::Buffer, target: &Arc<RingBasis>) -> Result<Self::Buffer>;

    /// Fast base conversion (FastBConv of Bajard, Eynard, Hasan and Zucca) of every polynomial of
    /// `a`, in coefficient form over base Q = q_0 ... q_{L-1}, to the primes of `target`:
    /// `sum_i [a_i (Q/q_i)^{-1}]_{q_i} (Q/q_i) mod p` for each prime p of `target`. Per
    /// coefficient this is `a + u Q` for some integer 0 <= u < L, so callers either tolerate the
    /// `u Q` (key switching's ModUp) or correct it (BFV's fast floor, Shenoy-Kumaresan).
    /// `target` may share primes with `a`'s basis (those limbs come out unchanged). Coefficient
    /// form in and out.
    fn base_convert(&self, a: &Self::Buffer, target: &Arc<RingBasis>) -> Result<Self::Buffer>;

    /// [`Backend::base_convert`] followed by [`Backend::ntt`], given `a` in both forms: `a` in
    /// coefficient form and `a_ntt` (the same polynomials over the same primes) in NTT form.
    /// The limbs of `target` whose prime is one of `a`'s are exactly `a`'s, so they are taken
    /// from `a_ntt` rather than converted and transformed again (key switching's ModUp, where
    /// the digit's own primes are a good part of the extended basis). NTT form out.
    fn base_convert_ntt(&self, a: &Self::Buffer, a_ntt: &Self::Buffer, target: &Arc<RingBasis>)
        -> Result<Self::Buffer>;

    /// Divides by the last prime p of `a`'s basis and drops it: `(a - delta) / p` with delta = a
    /// mod p (centred). With `plain_modulus = Some(t)` delta is also made divisible by t (the
    /// BGV correction), so the result stays congruent to `a * p^{-1}` modulo t. Works in either
    /// representation; the output keeps `a`'s.
    fn mod_down_last(&self, a: &Self::Buffer, plain_modulus: Option<Modulus>) -> Result<Self::Buffer>;

    /// [`Backend::mod_down_last`] into `a` itself: `a` becomes the quotient, over its basis
    /// without the last prime (the hot path of rescaling, where the input is not needed
    /// afterwards). Bit-identical to `*a = mod_down_last(a, plain_modulus)?`, which is the
    /// default; the CPU backend divides in place, without a second batch.
    fn mod_down_last_in_place(&self, a: &mut Self::Buffer, plain_modulus: Option<Modulus>) -> Result<()> {
        *a = self.mod_down_last(a, plain_modulus)?;
        Ok(())
    }

    /// Divides by the product P of the last `count` primes of `a`'s basis and drops them: the
    /// ModDown of hybrid key switching (and of BFV's rescaling by several primes). Computes
    /// `(a - delta) / P` with delta = `FastBConv([a]_P)` to the kept primes, FastBConv's scaled
    /// residues taken centred (in (-p_i/2, p_i/2)), so delta = a mod P, |delta| < count P / 2 and
    /// the division rounds without bias. With `plain_modulus = Some(t)` (BGV) delta is
    /// `t FastBConv([a t^{-1}]_P)` instead, a multiple of t below t count P / 2 in magnitude, so
    /// the result stays congruent to `a P^{-1}` modulo t. Needs 1 <= count < the number of primes; works in
    /// either representation and the output keeps `a`'s.
    fn mod_down(&self, a: &Self::Buffer, count: usize, plain_modulus: Option<Modulus>) -> Result<Self::Buffer>;

    /// [`Backend::mod_down`] into `a` itself: `a` becomes the quotient over its basis without
    /// the last `count` primes (rescaling by a level of several primes, where the input is not
    /// needed afterwards). Bit-identical to `*a = mod_down(a, count, plain_modulus)?`, which
    /// is the default; the CPU backend divides in place, without copying the input first.
    fn mod_down_in_place(&self, a: &mut Self::Buffer, count: usize, plain_modulus: Option<Modulus>) -> Result<()> {
        *a = self.mod_down(a, count, plain_modulus)?;
        Ok(())
    }

    /// The ring automorphism X -> X^k (the Galois element k odd, taken modulo 2N) of every
    /// polynomial of `a`, in either representation; the output keeps `a`'s representation and
    /// basis. Slot rotations and conjugation are such maps (CKKS's X -> X^(5^r), X -> X^-1). In
    /// coefficient form it is a permutation of the coefficients with negations (X^N = -1), in NTT
    /// form a plain permutation of the evaluation slots ([`pimhe_ring::GaloisPermutation`]). An
    /// even k is an error ([`crate::operands::galois_element`]).
    ///
    /// The default is the fallback the design allows a backend without its own kernel: a round
    /// trip through the host ([`PolyBatch::automorphism`]). The CPU and UPMEM backends run it
    /// where the data lives.
    fn automorphism(&self, a: &Self::Buffer, galois_element: usize) -> Result<Self::Buffer> {
        let image = self.download(a)?.automorphism(galois_element)?;
        self.upload(image)
    }

    /// Hybrid key switching of every polynomial of `c` (NTT form over q_0..q_l): the pair
    /// `(c0', c1')` over the same primes, NTT form, with `c0' + c1' s ~ c s'`, where `keys[j]` is
    /// the switching key's pair `(b_j, a_j)` of digit j (NTT form, over a basis holding every
    /// prime of `plan.extended`, one polynomial or one per polynomial of `c`; pairs beyond the
    /// plan's digits are not used). See [`crate::key_switch`] for the steps.
    ///
    /// The default runs [`crate::key_switch::composed`], the steps as batch-wide element-wise
    /// operations; a backend may fuse them (the CPU backend works limb by limb in cache). Every
    /// implementation returns the same residues.
    fn key_switch(
        &self,
        c: &Self::Buffer,
        keys: &[(Self::Buffer, Self::Buffer)],
        plan: &KeySwitchPlan,
    ) -> Result<(Self::Buffer, Self::Buffer)> {
        crate::key_switch::composed(self, c, keys, plan)
    }

    /// The first half of [`Backend::key_switch`] alone, for hoisting: the ModUp of every digit
    /// of `c` (NTT form over q_0..q_l), one batch per digit of `plan` in its order, each `c`'s
    /// digit `[c]_{Q_j}` extended by FastBConv to every prime of `plan.extended`, NTT form (the
    /// digit's own limbs are `c`'s). `plan.plain_modulus` is not used. Several
    /// [`Backend::key_switch_decomposed`] calls then share the digits, so rotations of one
    /// ciphertext by several elements pay the ModUp once (Halevi and Shoup).
    ///
    /// The default runs [`crate::key_switch::composed_mod_up`] (per digit a restriction and
    /// [`Backend::base_convert_ntt`]); the CPU backend shares the fused ModUp of its
    /// [`Backend::key_switch`]. Every implementation returns the same residues.
    fn mod_up(&self, c: &Self::Buffer, plan: &KeySwitchPlan) -> Result<Vec<Self::Buffer>> {
        crate::key_switch::composed_mod_up(self, c, plan)
    }

    /// The second half of [`Backend::key_switch`], on digits from [`Backend::mod_up`] with the
    /// same `plan`: `ModDown(sum_j sigma(digit_j) * (b_j, a_j))`, over the input's primes, NTT
    /// form, where sigma is the automorphism X -> X^k for `galois_element = Some(k)` (an even k
    /// is an error, as for [`Backend::automorphism`]) and the identity for `None`. With
    /// `Some(k)` the result is the switch of sigma(c) up to the multiples of Q_j the digits carry
    /// (so not the residues of `key_switch` of `automorphism(c, k)`): a hoisted rotation, whose
    /// caller adds sigma(c0). `keys` as for [`Backend::key_switch`] (one polynomial or one per
    /// polynomial of the digits, pairs beyond the digits unused).
    ///
    /// The default runs [`crate::key_switch::composed_decomposed`]: an automorphism of each
    /// digit (a fresh batch), batch-wide products with the key and [`Backend::mod_down`]. A
    /// backend may fuse them (the CPU backend permutes each digit's limb into cache and
    /// accumulates it against the key there). Every implementation returns the same residues.
    fn key_switch_decomposed(
        &self,
        digits: &[Self::Buffer],
        keys: &[(Self::Buffer, Self::Buffer)],
        galois_element: Option<usize>,
        plan: &KeySwitchPlan,
    ) -> Result<(Self::Buffer, Self::Buffer)> {
        crate::key_switch::composed_decomposed(self, digits, keys, galois_element, plan)
    }

    /// [`Backend::key_switch_decomposed`] without its ModDown: the inner product
    /// `sum_j sigma(digit_j) * (b_j, a_j)` over the extended basis (the input's primes and P),
    /// NTT form, which is P times the switch plus the digits' noise. Callers that add up several
    /// such sums (a linear transform's rotations: double hoisting, Bossuat et al. 2021, as
    /// Lattigo's lazy key switching) divide by P once, with [`Backend::mod_down`], instead of
    /// once per rotation. `plan.plain_modulus` is not used (the ModDown that needs it is the
    /// caller's).
    ///
    /// The default runs [`crate::key_switch::composed_decomposed_lazy`]; the CPU backend fuses
    /// it as it fuses [`Backend::key_switch_decomposed`]. Every implementation returns the same
    /// residues.
    fn key_switch_decomposed_lazy(
        &self,
        digits: &[Self::Buffer],
        keys: &[(Self::Buffer, Self::Buffer)],
        galois_element: Option<usize>,
        plan: &KeySwitchPlan,
    ) -> Result<(Self::Buffer, Self::Buffer)> {
        crate::key_switch::composed_decomposed_lazy(self, digits, keys, galois_element, plan)
    }
}
