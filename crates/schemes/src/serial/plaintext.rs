//! Plaintexts: BGV's and BFV's ([`Plaintext`], N coefficients modulo t packed at t's bit width)
//! and CKKS's ([`CkksPlaintext`], its scale and slot count, and N signed coefficients packed at
//! the smallest width that holds them all).

use std::sync::Arc;

use crate::ckks::{from_coefficients, CkksContext, CkksPlaintext};
use crate::encoder::{PlainSpace, Plaintext};
use crate::error::{Result, SchemeError};
use crate::serial::format::{bit_width, header, malformed, open, packed_len, BitReader, Kind, Writer};
use crate::serial::format::{Reader, HEADER_LEN};
use crate::serial::scheme::check_scale_and_slots;
use crate::serial::SerialScheme;

/// N coefficients at t's bit width.
pub(crate) fn write_integer_plaintext(space: &PlainSpace, plain: &Plaintext, w: &mut Writer) -> Result<()> {
    plain.check(space)?;
    w.packed(plain.coefficients(), bit_width(space.modulus().value()));
    Ok(())
}

/// Reads what [`write_integer_plaintext`] wrote: N coefficients, each below t.
pub(crate) fn read_integer_plaintext(space: &PlainSpace, r: &mut Reader<'_>) -> Result<Plaintext> {
    let t = space.modulus().value();
    let coefficients = r.packed(space.degree(), bit_width(t), t, "the plaintext coefficients")?;
    Ok(Plaintext::from_coefficients(coefficients))
}

/// The scale, the slot count, the width w of the coefficients (1..=128 bits) and the N
/// coefficients in w-bit two's complement, each as ceil(w / 32) pieces of 32 bits (the last
/// one w mod 32 bits where that is not 0), least significant piece first.
pub(crate) fn write_ckks_plaintext(ctx: &CkksContext, plain: &CkksPlaintext, w: &mut Writer) -> Result<()> {
    if plain.coefficients().len() != ctx.degree() {
        return Err(SchemeError::ParameterMismatch(format!(
            "plaintext of {} coefficients does not belong to parameters with N = {}",
            plain.coefficients().len(),
            ctx.degree()
        )));
    }
    w.f64(plain.scale());
    w.len32(plain.slots());
    // The fewest bits whose two's complement holds every coefficient: the sign bit and the
    // magnitude bits of the largest (x ^ (x >> 127) maps a negative x to -x - 1).
    let width = plain.coefficients().iter().map(|&x| 129 - (x ^ (x >> 127)).leading_zeros()).max().unwrap_or(1);
    w.u8(width as u8);
    w.with_bits(|bits| {
        for &x in plain.coefficients() {
            let mut left = width;
            let mut value = x as u128;
            while left > 0 {
                let piece = left.min(32);
                bits.put((value & ((1u128 << piece) - 1)) as u32, piece);
                value >>= piece;
                left -= piece;
            }
        }
    });
    Ok(())
}

/// Reads what [`write_ckks_plaintext`] wrote, checking the scale, the slot count and the width.
pub(crate) fn read_ckks_plaintext(ctx: &CkksContext, r: &mut Reader<'_>) -> Result<CkksPlaintext> {
    let scale = r.f64("the scale")?;
    let slots = r.u32("the slot count")? as usize;
    check_scale_and_slots(ctx, scale, slots)?;
    let width = u32::from(r.u8("the coefficient width")?);
    if !(1..=128).contains(&width) {
        return Err(malformed(format!("a coefficient width of {width} bits is not allowed; allowed 1..=128")));
    }
    let n = ctx.degree();
    let bytes = r.take(packed_len(n, width).expect("N x 128 bits fits"), "the plaintext coefficients")?;
    let mut bits = BitReader::new(bytes);
    let coefficients = (0..n)
        .map(|_| {
            let mut value = 0u128;
            let mut read = 0;
            while read < width {
                let piece = (width - read).min(32);
                value |= u128::from(bits.get(piece)) << read;
                read += piece;
            }
            // Sign extension from `width` bits.
            ((value << (128 - width)) as i128) >> (128 - width)
        })
        .collect();
    Ok(from_coefficients(coefficients, scale, slots))
}

/// The encoding of a plaintext of `ctx`: header and the scheme's plaintext fields.
fn encode<S: SerialScheme>(ctx: &S, plain: &S::Plaintext) -> Result<Vec<u8>> {
    let mut w = Writer::with_capacity(HEADER_LEN + 32 + ctx.rlwe().degree() * 4);
    header::<S>(&mut w, Kind::Plaintext, false, ctx.params());
    ctx.write_plaintext(plain, &mut w)?;
    Ok(w.into_bytes())
}

/// Loads a plaintext of `ctx`.
fn decode<S: SerialScheme>(ctx: &S, bytes: &[u8]) -> Result<S::Plaintext> {
    let (mut r, _) = open(ctx, bytes, Kind::Plaintext)?;
    let plain = ctx.read_plaintext(&mut r)?;
    r.finish()?;
    Ok(plain)
}

impl Plaintext {
    /// The binary encoding of this plaintext of `ctx` (BGV's or BFV's context); errors if it
    /// does not belong to `ctx` (wrong length, a coefficient not below t).
    pub fn to_bytes<S: SerialScheme<Plaintext = Plaintext>>(&self, ctx: &Arc<S>) -> Result<Vec<u8>> {
        encode(&**ctx, self)
    }

    /// Loads a plaintext of `ctx` from [`Plaintext::to_bytes`]'s encoding.
    pub fn from_bytes<S: SerialScheme<Plaintext = Plaintext>>(ctx: &Arc<S>, bytes: &[u8]) -> Result<Self> {
        decode(&**ctx, bytes)
    }
}

impl CkksPlaintext {
    /// The binary encoding of this plaintext of `ctx`; errors if it was made for another
    /// ring degree.
    pub fn to_bytes(&self, ctx: &Arc<CkksContext>) -> Result<Vec<u8>> {
        encode(&**ctx, self)
    }

    /// Loads a plaintext of `ctx` from [`CkksPlaintext::to_bytes`]'s encoding.
    pub fn from_bytes(ctx: &Arc<CkksContext>, bytes: &[u8]) -> Result<Self> {
        decode(&**ctx, bytes)
    }
}
