//! Element-wise kernels on slices of residues modulo one prime: the CPU backend's add, sub,
//! neg, mul (and their streamed forms, for outputs larger than the caches), mac, mul_scalar, mul_limb_constants, tensor, tensor_square, constant_accumulate,
//! mod_down_epilogue and sum are these, on each (prime,
//! polynomial) chunk, and so are the steps of `mod_down_last` and the last steps of `mod_down`
//! and the key switch.
//!
//! Each operation is written once as a scalar formula and a lane formula side by side (an
//! `Op1` or `Op2`, or a kernel of its own); the drivers run the lane formula over whole
//! vectors and the scalar one over the remainder, or the scalar one throughout on
//! [`Isa::Scalar`]. Inputs are residues in [0, q); outputs are in [0, q) and equal the scalar
//! results bit for bit. Slices must have equal lengths (checked; a mismatch panics).

use std::mem::MaybeUninit;

use super::lanes::{add_mod, csub, mul_shoup_lazy, mul_wide, reduce_wide, sub_mod, widen, ModVec, ShoupVec};
use super::{dispatch, Isa, Kernel, Lanes};
use crate::Modulus;

/// out = a + b mod q.
pub fn add(isa: Isa, q: &Modulus, out: &mut [u32], a: &[u32], b: &[u32]) {
    dispatch(isa, Binary { q, out, a, b, op: Add });
}

/// acc = acc + b mod q.
pub fn add_assign(isa: Isa, q: &Modulus, acc: &mut [u32], b: &[u32]) {
    dispatch(isa, Assign { q, acc, b, op: Add });
}

/// out = a - b mod q.
pub fn sub(isa: Isa, q: &Modulus, out: &mut [u32], a: &[u32], b: &[u32]) {
    dispatch(isa, Binary { q, out, a, b, op: Sub });
}

/// out = a * b mod q.
pub fn mul(isa: Isa, q: &Modulus, out: &mut [u32], a: &[u32], b: &[u32]) {
    dispatch(isa, Binary { q, out, a, b, op: Mul });
}

/// out = a + b mod q, as [`add`], into memory nothing need have written: on a vector ISA with
/// streaming stores, which send the sums to memory without first reading `out`'s lines into
/// the caches (a third of an add's memory traffic) and without leaving them there. For outputs
/// far larger than the caches; a smaller one is better kept in cache for its next reader.
/// Every value of `out` is written.
pub fn add_streamed(isa: Isa, q: &Modulus, out: &mut [MaybeUninit<u32>], a: &[u32], b: &[u32]) {
    dispatch(isa, Streamed { q, out, a, b, op: Add });
}

/// out = a - b mod q, streamed as [`add_streamed`].
pub fn sub_streamed(isa: Isa, q: &Modulus, out: &mut [MaybeUninit<u32>], a: &[u32], b: &[u32]) {
    dispatch(isa, Streamed { q, out, a, b, op: Sub });
}

/// out = a * b mod q, streamed as [`add_streamed`].
pub fn mul_streamed(isa: Isa, q: &Modulus, out: &mut [MaybeUninit<u32>], a: &[u32], b: &[u32]) {
    dispatch(isa, Streamed { q, out, a, b, op: Mul });
}

/// data = -data mod q, in place.
pub fn neg(isa: Isa, q: &Modulus, data: &mut [u32]) {
    dispatch(isa, Unary { q, data, op: Neg });
}

/// data = c * data mod q, in place, for a constant c < q (Shoup multiplication).
pub fn mul_scalar(isa: Isa, q: &Modulus, data: &mut [u32], c: u32) {
    debug_assert!(c < q.value(), "the constant {c} must be reduced below q = {}", q.value());
    dispatch(isa, Unary { q, data, op: MulScalar { c, c_shoup: q.shoup(c) } });
}

/// acc = a * b + acc mod q.
pub fn mac(isa: Isa, q: &Modulus, acc: &mut [u32], a: &[u32], b: &[u32]) {
    dispatch(isa, Mac { q, acc, a, b });
}

/// The BGV/BFV tensor product of (x0, x1) and (y0, y1) in NTT form:
/// out = (x0 y0, x0 y1 + x1 y0, x1 y1) mod q.
pub fn tensor(isa: Isa, q: &Modulus, out: [&mut [u32]; 3], x: [&[u32]; 2], y: [&[u32]; 2]) {
    dispatch(isa, Tensor { q, out, x, y });
}

/// The tensor product of (x0, x1) with itself: out = (x0^2, 2 x0 x1, x1^2) mod q, three
/// products where [`tensor`] takes four.
pub fn tensor_square(isa: Isa, q: &Modulus, out: [&mut [u32]; 3], x: [&[u32]; 2]) {
    dispatch(isa, TensorSquare { q, out, x });
}

/// acc = acc + c * a mod q for a constant c < q (Shoup multiplication): one term of a constant
/// linear combination.
pub fn mac_scalar(isa: Isa, q: &Modulus, acc: &mut [u32], a: &[u32], c: u32) {
    debug_assert!(c < q.value(), "the constant {c} must be reduced below q = {}", q.value());
    dispatch(isa, Assign { q, acc, b: a, op: MacScalar { c, c_shoup: q.shoup(c) } });
}

/// out = (a - b) * c mod q for a constant c < q: the tail of a modulus reduction (ModDown
/// subtracts the converted residue, then divides by the dropped primes' product).
pub fn sub_mul_scalar(isa: Isa, q: &Modulus, out: &mut [u32], a: &[u32], b: &[u32], c: u32) {
    debug_assert!(c < q.value(), "the constant {c} must be reduced below q = {}", q.value());
    dispatch(isa, Binary { q, out, a, b, op: SubMulScalar { c, c_shoup: q.shoup(c) } });
}

/// acc = (acc - b) * c mod q for a constant c < q: [`sub_mul_scalar`] into its first operand.
pub fn sub_mul_scalar_assign(isa: Isa, q: &Modulus, acc: &mut [u32], b: &[u32], c: u32) {
    debug_assert!(c < q.value(), "the constant {c} must be reduced below q = {}", q.value());
    dispatch(isa, Assign { q, acc, b, op: SubMulScalar { c, c_shoup: q.shoup(c) } });
}

/// acc = c * acc + b mod q for a constant c < q: a division's quotient, the input times p^{-1}
/// plus the term [`mul_scalar_add_signed`] made.
pub fn mul_scalar_add_assign(isa: Isa, q: &Modulus, acc: &mut [u32], b: &[u32], c: u32) {
    debug_assert!(c < q.value(), "the constant {c} must be reduced below q = {}", q.value());
    dispatch(isa, Assign { q, acc, b, op: MulScalarAdd { c, c_shoup: q.shoup(c) } });
}

/// out = c * a + [s]_q mod q for a constant c < q, any a < 2^32 and small signed s (|s| < q,
/// two's complement in `s`): the term a division by a prime adds to each kept limb, `r (-p^{-1})`
/// plus its rounding correction.
pub fn mul_scalar_add_signed(isa: Isa, q: &Modulus, out: &mut [u32], a: &[u32], c: u32, s: &[u32]) {
    debug_assert!(c < q.value(), "the constant {c} must be reduced below q = {}", q.value());
    dispatch(isa, Binary { q, out, a, b: s, op: MulScalarAddSigned { c, c_shoup: q.shoup(c) } });
}

/// The rounding corrections of a division by a prime p, from its residues r in [0, p): with
/// `above` = (r > floor(p / 2)), out = `above` without a plain modulus, and with `Some((t,
/// p^{-1} mod t))` (BGV) out = above + centre_t([r p^{-1}]_t - above), a signed value of
/// magnitude at most t/2 + 1 in two's complement (see `mod_down_last` in the CPU backend).
/// Needs t below 2^31. Slices must have equal lengths.
pub fn division_corrections(isa: Isa, p: &Modulus, plain: Option<(&Modulus, u32)>, out: &mut [u32], r: &[u32]) {
    dispatch(isa, DivisionCorrections { half_p: p.value() / 2, plain, out, r });
}

/// A one-operand operation: its scalar and lane formulas.
trait Op1: Copy {
    fn scalar(self, q: &Modulus, x: u32) -> u32;
    fn lanes<L: Lanes>(self, l: L, m: &ModVec<L::V>, x: L::V) -> L::V;
}

/// A two-operand operation: its scalar and lane formulas.
trait Op2: Copy {
    fn scalar(self, q: &Modulus, x: u32, y: u32) -> u32;
    fn lanes<L: Lanes>(self, l: L, m: &ModVec<L::V>, x: L::V, y: L::V) -> L::V;
}

#[derive(Clone, Copy)]
struct Add;
impl Op2 for Add {
    fn scalar(self, q: &Modulus, x: u32, y: u32) -> u32 {
        q.add(x, y)
    }
    #[inline(always)]
    fn lanes<L: Lanes>(self, l: L, m: &ModVec<L::V>, x: L::V, y: L::V) -> L::V {
        add_mod(l, m, x, y)
    }
}

#[derive(Clone, Copy)]
struct Sub;
impl Op2 for Sub {
    fn scalar(self, q: &Modulus, x: u32, y: u32) -> u32 {
        q.sub(x, y)
    }
    #[inline(always)]
    fn lanes<L: Lanes>(self, l: L, m: &ModVec<L::V>, x: L::V, y: L::V) -> L::V {
        sub_mod(l, m, x, y)
    }
}

#[derive(Clone, Copy)]
struct Mul;
impl Op2 for Mul {
    fn scalar(self, q: &Modulus, x: u32, y: u32) -> u32 {
        q.mul(x, y)
    }
    #[inline(always)]
    fn lanes<L: Lanes>(self, l: L, m: &ModVec<L::V>, x: L::V, y: L::V) -> L::V {
        reduce_wide(l, m, mul_wide(l, x, y))
    }
}

#[derive(Clone, Copy)]
struct Neg;
impl Op1 for Neg {
    fn scalar(self, q: &Modulus, x: u32) -> u32 {
        q.neg(x)
    }
    #[inline(always)]
    fn lanes<L: Lanes>(self, l: L, m: &ModVec<L::V>, x: L::V) -> L::V {
        // q - x is q when x = 0; the conditional subtraction maps it to 0.
        csub(l, l.sub(m.q, x), m.q)
    }
}

#[derive(Clone, Copy)]
struct MulScalar {
    c: u32,
    c_shoup: u32,
}
impl Op1 for MulScalar {
    fn scalar(self, q: &Modulus, x: u32) -> u32 {
        q.mul_shoup(x, self.c, self.c_shoup)
    }
    #[inline(always)]
    fn lanes<L: Lanes>(self, l: L, m: &ModVec<L::V>, x: L::V) -> L::V {
        csub(l, mul_shoup_lazy(l, x, ShoupVec::splat(l, self.c, self.c_shoup), m.q), m.q)
    }
}

/// acc + c y, with acc in the first operand's place.
#[derive(Clone, Copy)]
struct MacScalar {
    c: u32,
    c_shoup: u32,
}
impl Op2 for MacScalar {
    fn scalar(self, q: &Modulus, acc: u32, y: u32) -> u32 {
        q.add(acc, q.mul_shoup(y, self.c, self.c_shoup))
    }
    #[inline(always)]
    fn lanes<L: Lanes>(self, l: L, m: &ModVec<L::V>, acc: L::V, y: L::V) -> L::V {
        let product = csub(l, mul_shoup_lazy(l, y, ShoupVec::splat(l, self.c, self.c_shoup), m.q), m.q);
        add_mod(l, m, acc, product)
    }
}

/// (x - y) c.
#[derive(Clone, Copy)]
struct SubMulScalar {
    c: u32,
    c_shoup: u32,
}
impl Op2 for SubMulScalar {
    fn scalar(self, q: &Modulus, x: u32, y: u32) -> u32 {
        q.mul_shoup(q.sub(x, y), self.c, self.c_shoup)
    }
    #[inline(always)]
    fn lanes<L: Lanes>(self, l: L, m: &ModVec<L::V>, x: L::V, y: L::V) -> L::V {
        let difference = sub_mod(l, m, x, y);
        csub(l, mul_shoup_lazy(l, difference, ShoupVec::splat(l, self.c, self.c_shoup), m.q), m.q)
    }
}

/// c x + y, for any x < 2^32.
#[derive(Clone, Copy)]
struct MulScalarAdd {
    c: u32,
    c_shoup: u32,
}
impl Op2 for MulScalarAdd {
    fn scalar(self, q: &Modulus, x: u32, y: u32) -> u32 {
        q.add(q.mul_shoup(x, self.c, self.c_shoup), y)
    }
    #[inline(always)]
    fn lanes<L: Lanes>(self, l: L, m: &ModVec<L::V>, x: L::V, y: L::V) -> L::V {
        add_mod(l, m, csub(l, mul_shoup_lazy(l, x, ShoupVec::splat(l, self.c, self.c_shoup), m.q), m.q), y)
    }
}

/// c x + [y]_q with y a small signed value in two's complement.
#[derive(Clone, Copy)]
struct MulScalarAddSigned {
    c: u32,
    c_shoup: u32,
}
impl Op2 for MulScalarAddSigned {
    fn scalar(self, q: &Modulus, x: u32, y: u32) -> u32 {
        let y_q = if (y as i32) < 0 { y.wrapping_add(q.value()) } else { y };
        MulScalarAdd { c: self.c, c_shoup: self.c_shoup }.scalar(q, x, y_q)
    }
    #[inline(always)]
    fn lanes<L: Lanes>(self, l: L, m: &ModVec<L::V>, x: L::V, y: L::V) -> L::V {
        // A negative y is above 2^31 as u32 and y + q wraps below it; a non-negative one (< q
        // < 2^31) stays below y + q: the minimum is [y]_q either way.
        MulScalarAdd { c: self.c, c_shoup: self.c_shoup }.lanes(l, m, x, l.min(y, l.add(y, m.q)))
    }
}

/// 1 in lanes where x > `half`, else 0 (x < 2^32 - 1): min(x, half + 1) exceeds min(x, half) by
/// one exactly there.
#[inline(always)]
fn above<L: Lanes>(l: L, x: L::V, half: u32) -> L::V {
    let capped = l.min(x, l.splat(half + 1));
    l.sub(capped, l.min(capped, l.splat(half)))
}

struct DivisionCorrections<'a> {
    half_p: u32,
    plain: Option<(&'a Modulus, u32)>,
    out: &'a mut [u32],
    r: &'a [u32],
}

impl Kernel for DivisionCorrections<'_> {
    fn scalar(self) {
        assert_eq!(self.r.len(), self.out.len(), "operand lengths differ");
        let plain = self.plain.map(|(t, p_inv)| (t, p_inv, t.shoup(p_inv)));
        for (s, &r) in self.out.iter_mut().zip(self.r) {
            let above = u32::from(r > self.half_p);
            let m = match plain {
                Some((t, p_inv, p_inv_shoup)) => t.center(t.sub(t.mul_shoup(r, p_inv, p_inv_shoup), above)),
                None => 0,
            };
            *s = (i64::from(above) + m) as i32 as u32;
        }
    }

    #[inline(always)]
    fn lanes<L: Lanes>(self, l: L) {
        assert_eq!(self.r.len(), self.out.len(), "operand lengths differ");
        let split = body_len(self.out.len(), L::WIDTH);
        let (body, out) = self.out.split_at_mut(split);
        let (r, r_rest) = self.r.split_at(split);
        let plain =
            self.plain.map(|(t, p_inv)| (ModVec::new(l, t), ShoupVec::splat(l, p_inv, t.shoup(p_inv)), t.value()));
        for (s, x) in body.chunks_exact_mut(L::WIDTH).zip(r.chunks_exact(L::WIDTH)) {
            let x = l.load(x);
            let above_p = above(l, x, self.half_p);
            let correction = match &plain {
                Some((t, p_inv, t_value)) => {
                    let y = sub_mod(l, t, csub(l, mul_shoup_lazy(l, x, *p_inv, t.q), t.q), above_p);
                    // centre_t(y) = y - t (y > t/2), wrapping to two's complement.
                    l.sub(y, l.mul_lo(above(l, y, t_value / 2), t.q))
                }
                None => l.splat(0),
            };
            l.store(s, l.add(above_p, correction));
        }
        DivisionCorrections { half_p: self.half_p, plain: self.plain, out, r: r_rest }.scalar();
    }
}

/// Splits `len` into the part covered by whole vectors of `width` lanes and the rest.
#[inline(always)]
fn body_len(len: usize, width: usize) -> usize {
    len - len % width
}

struct Unary<'a, O> {
    q: &'a Modulus,
    data: &'a mut [u32],
    op: O,
}

impl<O: Op1> Kernel for Unary<'_, O> {
    fn scalar(self) {
        for x in self.data.iter_mut() {
            *x = self.op.scalar(self.q, *x);
        }
    }

    #[inline(always)]
    fn lanes<L: Lanes>(self, l: L) {
        let m = ModVec::new(l, self.q);
        let (body, rest) = self.data.split_at_mut(body_len(self.data.len(), L::WIDTH));
        for x in body.chunks_exact_mut(L::WIDTH) {
            l.store(x, self.op.lanes(l, &m, l.load(x)));
        }
        Unary { q: self.q, data: rest, op: self.op }.scalar();
    }
}

struct Binary<'a, O> {
    q: &'a Modulus,
    out: &'a mut [u32],
    a: &'a [u32],
    b: &'a [u32],
    op: O,
}

impl<O: Op2> Kernel for Binary<'_, O> {
    fn scalar(self) {
        assert!(self.a.len() == self.out.len() && self.b.len() == self.out.len(), "operand lengths differ");
        for ((o, &x), &y) in self.out.iter_mut().zip(self.a).zip(self.b) {
            *o = self.op.scalar(self.q, x, y);
        }
    }

    #[inline(always)]
    fn lanes<L: Lanes>(self, l: L) {
        assert!(self.a.len() == self.out.len() && self.b.len() == self.out.len(), "operand lengths differ");
        let m = ModVec::new(l, self.q);
        let split = body_len(self.out.len(), L::WIDTH);
        let (body, out) = self.out.split_at_mut(split);
        let ((a, a_rest), (b, b_rest)) = (self.a.split_at(split), self.b.split_at(split));
        for ((o, x), y) in body.chunks_exact_mut(L::WIDTH).zip(a.chunks_exact(L::WIDTH)).zip(b.chunks_exact(L::WIDTH)) {
            l.store(o, self.op.lanes(l, &m, l.load(x), l.load(y)));
        }
        Binary { q: self.q, out, a: a_rest, b: b_rest, op: self.op }.scalar();
    }
}

/// [`Binary`] into unwritten memory with streaming stores: the lanes up to the first
/// vector-aligned value and those after the last whole vector are written one by one.
struct Streamed<'a, O> {
    q: &'a Modulus,
    out: &'a mut [MaybeUninit<u32>],
    a: &'a [u32],
    b: &'a [u32],
    op: O,
}

impl<O: Op2> Kernel for Streamed<'_, O> {
    fn scalar(self) {
        assert!(self.a.len() == self.out.len() && self.b.len() == self.out.len(), "operand lengths differ");
        for ((o, &x), &y) in self.out.iter_mut().zip(self.a).zip(self.b) {
            o.write(self.op.scalar(self.q, x, y));
        }
    }

    #[inline(always)]
    fn lanes<L: Lanes>(self, l: L) {
        assert!(self.a.len() == self.out.len() && self.b.len() == self.out.len(), "operand lengths differ");
        let Self { q, out, a, b, op } = self;
        // Values before the first address that is a multiple of the vector's size.
        let vector_bytes = L::WIDTH * std::mem::size_of::<u32>();
        let head = ((out.as_ptr() as usize).wrapping_neg() % vector_bytes / std::mem::size_of::<u32>()).min(out.len());
        let (out_head, out) = out.split_at_mut(head);
        let ((a_head, a), (b_head, b)) = (a.split_at(head), b.split_at(head));
        Streamed { q, out: out_head, a: a_head, b: b_head, op }.scalar();
        let m = ModVec::new(l, q);
        let split = body_len(out.len(), L::WIDTH);
        let (body, out) = out.split_at_mut(split);
        let ((a, a_rest), (b, b_rest)) = (a.split_at(split), b.split_at(split));
        for ((o, x), y) in body.chunks_exact_mut(L::WIDTH).zip(a.chunks_exact(L::WIDTH)).zip(b.chunks_exact(L::WIDTH)) {
            l.store_stream(o, op.lanes(l, &m, l.load(x), l.load(y)));
        }
        l.fence_streams();
        Streamed { q, out, a: a_rest, b: b_rest, op }.scalar();
    }
}

struct Assign<'a, O> {
    q: &'a Modulus,
    acc: &'a mut [u32],
    b: &'a [u32],
    op: O,
}

impl<O: Op2> Kernel for Assign<'_, O> {
    fn scalar(self) {
        assert_eq!(self.b.len(), self.acc.len(), "operand lengths differ");
        for (o, &y) in self.acc.iter_mut().zip(self.b) {
            *o = self.op.scalar(self.q, *o, y);
        }
    }

    #[inline(always)]
    fn lanes<L: Lanes>(self, l: L) {
        assert_eq!(self.b.len(), self.acc.len(), "operand lengths differ");
        let m = ModVec::new(l, self.q);
        let split = body_len(self.acc.len(), L::WIDTH);
        let (body, acc) = self.acc.split_at_mut(split);
        let (b, b_rest) = self.b.split_at(split);
        for (o, y) in body.chunks_exact_mut(L::WIDTH).zip(b.chunks_exact(L::WIDTH)) {
            l.store(o, self.op.lanes(l, &m, l.load(o), l.load(y)));
        }
        Assign { q: self.q, acc, b: b_rest, op: self.op }.scalar();
    }
}

struct Mac<'a> {
    q: &'a Modulus,
    acc: &'a mut [u32],
    a: &'a [u32],
    b: &'a [u32],
}

impl Kernel for Mac<'_> {
    fn scalar(self) {
        assert!(self.a.len() == self.acc.len() && self.b.len() == self.acc.len(), "operand lengths differ");
        for ((o, &x), &y) in self.acc.iter_mut().zip(self.a).zip(self.b) {
            *o = self.q.mul_add(x, y, *o);
        }
    }

    #[inline(always)]
    fn lanes<L: Lanes>(self, l: L) {
        assert!(self.a.len() == self.acc.len() && self.b.len() == self.acc.len(), "operand lengths differ");
        let m = ModVec::new(l, self.q);
        let split = body_len(self.acc.len(), L::WIDTH);
        let (body, acc) = self.acc.split_at_mut(split);
        let ((a, a_rest), (b, b_rest)) = (self.a.split_at(split), self.b.split_at(split));
        for ((o, x), y) in body.chunks_exact_mut(L::WIDTH).zip(a.chunks_exact(L::WIDTH)).zip(b.chunks_exact(L::WIDTH)) {
            // a b + acc < q^2 + q < 2 q^2: in the range of the wide reduction.
            let (even, odd) = mul_wide(l, l.load(x), l.load(y));
            let (acc_even, acc_odd) = widen(l, l.load(o));
            l.store(o, reduce_wide(l, &m, (l.add64(even, acc_even), l.add64(odd, acc_odd))));
        }
        Mac { q: self.q, acc, a: a_rest, b: b_rest }.scalar();
    }
}

struct Tensor<'a> {
    q: &'a Modulus,
    out: [&'a mut [u32]; 3],
    x: [&'a [u32]; 2],
    y: [&'a [u32]; 2],
}

impl Tensor<'_> {
    fn check(&self) -> usize {
        let n = self.x[0].len();
        let lens = [self.out[0].len(), self.out[1].len(), self.out[2].len(), self.x[1].len(), self.y[0].len()];
        assert!(lens.iter().chain([&self.y[1].len()]).all(|&len| len == n), "operand lengths differ");
        n
    }
}

impl Kernel for Tensor<'_> {
    fn scalar(self) {
        let n = self.check();
        let q = self.q;
        let ([o0, o1, o2], [x0, x1], [y0, y1]) = (self.out, self.x, self.y);
        for i in 0..n {
            o0[i] = q.mul(x0[i], y0[i]);
            // x0 y1 + x1 y0 < 2^61 fits a u64 before the one reduction.
            o1[i] = q.reduce_u64(x0[i] as u64 * y1[i] as u64 + x1[i] as u64 * y0[i] as u64);
            o2[i] = q.mul(x1[i], y1[i]);
        }
    }

    #[inline(always)]
    fn lanes<L: Lanes>(self, l: L) {
        let n = self.check();
        let m = ModVec::new(l, self.q);
        let split = body_len(n, L::WIDTH);
        let ([o0, o1, o2], [x0, x1], [y0, y1]) = (self.out, self.x, self.y);
        let (o0, r0) = o0.split_at_mut(split);
        let (o1, r1) = o1.split_at_mut(split);
        let (o2, r2) = o2.split_at_mut(split);
        for start in (0..split).step_by(L::WIDTH) {
            let end = start + L::WIDTH;
            let (a0, a1) = (l.load(&x0[start..end]), l.load(&x1[start..end]));
            let (b0, b1) = (l.load(&y0[start..end]), l.load(&y1[start..end]));
            l.store(&mut o0[start..end], reduce_wide(l, &m, mul_wide(l, a0, b0)));
            // x0 y1 + x1 y0 < 2 q^2: in the range of the wide reduction.
            let (p_even, p_odd) = mul_wide(l, a0, b1);
            let (r_even, r_odd) = mul_wide(l, a1, b0);
            l.store(&mut o1[start..end], reduce_wide(l, &m, (l.add64(p_even, r_even), l.add64(p_odd, r_odd))));
            l.store(&mut o2[start..end], reduce_wide(l, &m, mul_wide(l, a1, b1)));
        }
        let x = [&x0[split..], &x1[split..]];
        Tensor { q: self.q, out: [r0, r1, r2], x, y: [&y0[split..], &y1[split..]] }.scalar();
    }
}

struct TensorSquare<'a> {
    q: &'a Modulus,
    out: [&'a mut [u32]; 3],
    x: [&'a [u32]; 2],
}

impl TensorSquare<'_> {
    fn check(&self) -> usize {
        let n = self.x[0].len();
        let lens = [self.out[0].len(), self.out[1].len(), self.out[2].len(), self.x[1].len()];
        assert!(lens.iter().all(|&len| len == n), "operand lengths differ");
        n
    }
}

impl Kernel for TensorSquare<'_> {
    fn scalar(self) {
        let n = self.check();
        let q = self.q;
        let ([o0, o1, o2], [x0, x1]) = (self.out, self.x);
        for i in 0..n {
            o0[i] = q.mul(x0[i], x0[i]);
            let cross = q.mul(x0[i], x1[i]);
            o1[i] = q.add(cross, cross);
            o2[i] = q.mul(x1[i], x1[i]);
        }
    }

    #[inline(always)]
    fn lanes<L: Lanes>(self, l: L) {
        let n = self.check();
        let m = ModVec::new(l, self.q);
        let split = body_len(n, L::WIDTH);
        let ([o0, o1, o2], [x0, x1]) = (self.out, self.x);
        let (o0, r0) = o0.split_at_mut(split);
        let (o1, r1) = o1.split_at_mut(split);
        let (o2, r2) = o2.split_at_mut(split);
        for start in (0..split).step_by(L::WIDTH) {
            let end = start + L::WIDTH;
            let (a0, a1) = (l.load(&x0[start..end]), l.load(&x1[start..end]));
            l.store(&mut o0[start..end], reduce_wide(l, &m, mul_wide(l, a0, a0)));
            let cross = reduce_wide(l, &m, mul_wide(l, a0, a1));
            l.store(&mut o1[start..end], add_mod(l, &m, cross, cross));
            l.store(&mut o2[start..end], reduce_wide(l, &m, mul_wide(l, a1, a1)));
        }
        TensorSquare { q: self.q, out: [r0, r1, r2], x: [&x0[split..], &x1[split..]] }.scalar();
    }
}
