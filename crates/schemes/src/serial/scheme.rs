//! [`SerialScheme`]: what the format needs from each scheme (its identifier, the encoding of its
//! parameters, of a batch's tag and of a plaintext), implemented for BGV, BFV and CKKS. Keys and
//! ciphertexts are encoded once over it.

use crate::bfv::{BfvContext, BfvParameters};
use crate::bgv::{BgvContext, BgvParameters};
use crate::ckks::{CkksContext, CkksParameters, CkksPlaintext, CkksTag};
use crate::encoder::{PlainContext, Plaintext};
use crate::error::Result;
use crate::rlwe::RlweScheme;
use crate::serial::format::{malformed, Reader, Writer};
use crate::serial::params::{read_ckks, read_integer, write_ckks, write_integer};
use crate::serial::plaintext::{
    read_ckks_plaintext, read_integer_plaintext, write_ckks_plaintext, write_integer_plaintext,
};

/// The scheme-specific part of the format; see docs/SERIALIZATION.md for the fields.
pub trait SerialScheme: RlweScheme {
    /// The header's scheme byte: 1 BGV, 2 BFV, 3 CKKS.
    const SCHEME_ID: u8;

    /// Writes the canonical encoding of a parameter set (the digest's input).
    fn write_params(params: &Self::Params, w: &mut Writer);

    /// Reads a parameter set, validated as the scheme's constructors validate.
    fn read_params(r: &mut Reader<'_>) -> Result<Self::Params>;

    /// Writes a ciphertext batch's tag.
    fn write_tag(tag: Self::Tag, w: &mut Writer);

    /// Reads a tag, checked against this context (BGV: correction factor in 1..t; CKKS: scale
    /// finite and positive, slots a power of two up to N/2).
    fn read_tag(&self, r: &mut Reader<'_>) -> Result<Self::Tag>;

    /// Writes a plaintext, or errors if it does not belong to this context.
    fn write_plaintext(&self, plain: &Self::Plaintext, w: &mut Writer) -> Result<()>;

    /// Reads a plaintext of this context.
    fn read_plaintext(&self, r: &mut Reader<'_>) -> Result<Self::Plaintext>;
}

impl SerialScheme for BgvContext {
    const SCHEME_ID: u8 = 1;

    fn write_params(params: &BgvParameters, w: &mut Writer) {
        write_integer(params.rlwe(), params.plain_modulus(), w);
    }

    fn read_params(r: &mut Reader<'_>) -> Result<BgvParameters> {
        read_integer(r)
    }

    fn write_tag(tag: u32, w: &mut Writer) {
        w.u32(tag);
    }

    fn read_tag(&self, r: &mut Reader<'_>) -> Result<u32> {
        let factor = r.u32("the correction factor")?;
        let t = self.plain_modulus().value();
        if !(1..t).contains(&factor) {
            return Err(malformed(format!("correction factor {factor} is not invertible modulo t; allowed 1..{t}")));
        }
        Ok(factor)
    }

    fn write_plaintext(&self, plain: &Plaintext, w: &mut Writer) -> Result<()> {
        write_integer_plaintext(self.plain_space(), plain, w)
    }

    fn read_plaintext(&self, r: &mut Reader<'_>) -> Result<Plaintext> {
        read_integer_plaintext(self.plain_space(), r)
    }
}

impl SerialScheme for BfvContext {
    const SCHEME_ID: u8 = 2;

    fn write_params(params: &BfvParameters, w: &mut Writer) {
        write_integer(params.rlwe(), params.plain_modulus(), w);
    }

    fn read_params(r: &mut Reader<'_>) -> Result<BfvParameters> {
        read_integer(r).map(BfvParameters::from)
    }

    /// BFV's tag is empty: nothing is written.
    fn write_tag(_: (), _: &mut Writer) {}

    fn read_tag(&self, _: &mut Reader<'_>) -> Result<()> {
        Ok(())
    }

    fn write_plaintext(&self, plain: &Plaintext, w: &mut Writer) -> Result<()> {
        write_integer_plaintext(self.plain_space(), plain, w)
    }

    fn read_plaintext(&self, r: &mut Reader<'_>) -> Result<Plaintext> {
        read_integer_plaintext(self.plain_space(), r)
    }
}

impl SerialScheme for CkksContext {
    const SCHEME_ID: u8 = 3;

    fn write_params(params: &CkksParameters, w: &mut Writer) {
        write_ckks(params, w);
    }

    fn read_params(r: &mut Reader<'_>) -> Result<CkksParameters> {
        read_ckks(r)
    }

    fn write_tag(tag: CkksTag, w: &mut Writer) {
        w.f64(tag.scale);
        w.len32(tag.slots);
    }

    fn read_tag(&self, r: &mut Reader<'_>) -> Result<CkksTag> {
        let scale = r.f64("the scale")?;
        let slots = r.u32("the slot count")? as usize;
        check_scale_and_slots(self, scale, slots)?;
        Ok(CkksTag { scale, slots })
    }

    fn write_plaintext(&self, plain: &CkksPlaintext, w: &mut Writer) -> Result<()> {
        write_ckks_plaintext(self, plain, w)
    }

    fn read_plaintext(&self, r: &mut Reader<'_>) -> Result<CkksPlaintext> {
        read_ckks_plaintext(self, r)
    }
}

/// A CKKS scale must be finite and positive, a slot count a power of two up to N/2.
pub(crate) fn check_scale_and_slots(ctx: &CkksContext, scale: f64, slots: usize) -> Result<()> {
    if !(scale.is_finite() && scale > 0.0) {
        return Err(malformed(format!("the scale {scale} is not allowed; it must be finite and positive")));
    }
    if !slots.is_power_of_two() || slots > ctx.max_slots() {
        return Err(malformed(format!("{slots} slots is not allowed; a power of two up to N/2 = {}", ctx.max_slots())));
    }
    Ok(())
}
