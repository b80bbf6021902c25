//! Parameter sets: the canonical encoding of the shared RLWE part and of each scheme's own
//! fields, which is both a parameter set's payload and the input of the digest that every other
//! object's header carries.

use crate::bfv::{BfvContext, BfvParameters};
use crate::bgv::{BgvContext, BgvParameters};
use crate::ckks::{CkksContext, CkksParameters};
use crate::error::{Result, SchemeError};
use crate::rlwe::{RlweParameters, SecretDistribution};
use crate::serial::format::{check_self_digest, header, malformed, read_header, Kind, Reader, Writer, HEADER_LEN};
use crate::serial::SerialScheme;

/// Writes the RLWE part: degree, data primes, special primes, dnum, secret distribution and the
/// insecure flag.
pub(crate) fn write_rlwe(params: &RlweParameters, w: &mut Writer) {
    w.len32(params.degree());
    for primes in [params.data_primes(), params.special_primes()] {
        w.u16(u16::try_from(primes.len()).expect("a parameter set has fewer than 2^16 primes"));
        primes.iter().for_each(|&p| w.u32(p));
    }
    w.u16(u16::try_from(params.dnum()).expect("dnum is at most the number of data primes"));
    match params.secret() {
        SecretDistribution::Ternary => {
            w.u8(0);
            w.u32(0);
        }
        SecretDistribution::SparseTernary { hamming_weight } => {
            w.u8(1);
            w.len32(hamming_weight);
        }
    }
    w.u8(u8::from(params.insecure_allowed()));
}

/// Reads what [`write_rlwe`] wrote, unchecked: the scheme's constructor validates it.
pub(crate) fn read_rlwe(r: &mut Reader<'_>) -> Result<RlweParameters> {
    let degree = r.u32("the ring degree")? as usize;
    let mut lists = [Vec::new(), Vec::new()];
    for (list, what) in lists.iter_mut().zip(["the data primes", "the special primes"]) {
        let len = r.u16(what)? as usize;
        // Taken whole first, so that the allocation is bounded by the input.
        let bytes = r.take(4 * len, what)?;
        *list = bytes.chunks_exact(4).map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes"))).collect();
    }
    let [data, special] = lists;
    let dnum = r.u16("dnum")? as usize;
    let secret = match (r.u8("the secret distribution")?, r.u32("the Hamming weight")?) {
        (0, 0) => SecretDistribution::Ternary,
        (1, weight) => SecretDistribution::SparseTernary { hamming_weight: weight as usize },
        (kind, weight) => {
            return Err(malformed(format!(
                "secret distribution {kind} with Hamming weight {weight} is not defined; allowed 0 (ternary, weight 0) \
                 or 1 (sparse ternary)"
            )))
        }
    };
    let params = RlweParameters::from_primes(degree, data, special, dnum).with_secret(secret);
    match r.u8("the insecure flag")? {
        0 => Ok(params),
        1 => Ok(params.allow_insecure()),
        flag => Err(malformed(format!("the insecure flag is {flag}; allowed 0 or 1"))),
    }
}

/// BGV's and BFV's own field, after the RLWE part: t.
pub(crate) fn write_integer(rlwe: &RlweParameters, plain_modulus: u32, w: &mut Writer) {
    write_rlwe(rlwe, w);
    w.u32(plain_modulus);
}

/// Reads [`write_integer`]'s fields and validates them as a BGV set (BFV's is the same set).
pub(crate) fn read_integer(r: &mut Reader<'_>) -> Result<BgvParameters> {
    let rlwe = read_rlwe(r)?;
    let t = r.u32("the plaintext modulus")?;
    BgvParameters::from_rlwe(rlwe, t)
}

/// CKKS's own fields, after the RLWE part: depth, scale bits, base primes.
pub(crate) fn write_ckks(params: &CkksParameters, w: &mut Writer) {
    write_rlwe(params.rlwe(), w);
    w.u16(u16::try_from(params.depth()).expect("the depth is below the number of primes"));
    w.u8(params.scale_bits() as u8);
    w.u8(params.base_primes() as u8);
}

/// Reads [`write_ckks`]'s fields and validates them.
pub(crate) fn read_ckks(r: &mut Reader<'_>) -> Result<CkksParameters> {
    let rlwe = read_rlwe(r)?;
    let depth = r.u16("the depth")? as usize;
    let scale_bits = r.u8("the scale bits")? as u32;
    let base_primes = r.u8("the number of base primes")? as usize;
    CkksParameters::from_parts(rlwe, depth, scale_bits, base_primes)
}

/// The encoding of a parameter set of scheme `S`: its header (whose digest is that of the
/// payload) and its canonical encoding.
fn encode<S: SerialScheme>(params: &S::Params) -> Vec<u8> {
    let mut w = Writer::with_capacity(HEADER_LEN + 128);
    header::<S>(&mut w, Kind::Parameters, false, params);
    S::write_params(params, &mut w);
    w.into_bytes()
}

/// Loads a parameter set of scheme `S`: header, fields (validated as the scheme's constructors
/// validate), no trailing bytes, and the digest against the payload.
fn decode<S: SerialScheme>(bytes: &[u8]) -> Result<S::Params> {
    let mut r = Reader::new(bytes);
    let header = read_header::<S>(&mut r, Kind::Parameters)?;
    let params = S::read_params(&mut r)?;
    r.finish()?;
    check_self_digest::<S>(&header, &bytes[HEADER_LEN..])?;
    Ok(params)
}

/// `to_bytes` and `from_bytes` of each scheme's parameter type, over its context's
/// [`SerialScheme`] implementation.
macro_rules! parameter_encoding {
    ($($params:ty => $scheme:ty),*) => {$(
        impl $params {
            /// The binary encoding (docs/SERIALIZATION.md): header and canonical fields,
            /// including the secret distribution and the insecure flag.
            pub fn to_bytes(&self) -> Vec<u8> {
                encode::<$scheme>(self)
            }

            /// Loads an encoding made by `to_bytes`, validated as the constructors validate
            /// (the 128-bit check included, unless the encoding allows insecure parameters).
            pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
                decode::<$scheme>(bytes)
            }
        }
    )*};
}
parameter_encoding!(BgvParameters => BgvContext, BfvParameters => BfvContext, CkksParameters => CkksContext);

/// The fields of the RLWE part in a serde configuration (JSON): the same fields as the binary
/// encoding, by name.
#[derive(serde::Serialize, serde::Deserialize)]
pub(crate) struct RlweFields {
    degree: usize,
    data_primes: Vec<u32>,
    special_primes: Vec<u32>,
    dnum: usize,
    #[serde(default)]
    secret: SecretDistribution,
    #[serde(default)]
    allow_insecure: bool,
}

impl From<&RlweParameters> for RlweFields {
    fn from(params: &RlweParameters) -> Self {
        Self {
            degree: params.degree(),
            data_primes: params.data_primes().to_vec(),
            special_primes: params.special_primes().to_vec(),
            dnum: params.dnum(),
            secret: params.secret(),
            allow_insecure: params.insecure_allowed(),
        }
    }
}

impl From<RlweFields> for RlweParameters {
    fn from(fields: RlweFields) -> Self {
        let params = RlweParameters::from_primes(fields.degree, fields.data_primes, fields.special_primes, fields.dnum)
            .with_secret(fields.secret);
        if fields.allow_insecure {
            params.allow_insecure()
        } else {
            params
        }
    }
}

/// BGV's and BFV's serde configuration: the RLWE fields and t.
#[derive(serde::Serialize, serde::Deserialize)]
pub(crate) struct IntegerFields {
    #[serde(flatten)]
    rlwe: RlweFields,
    plain_modulus: u32,
}

impl From<BgvParameters> for IntegerFields {
    fn from(params: BgvParameters) -> Self {
        Self { rlwe: params.rlwe().into(), plain_modulus: params.plain_modulus() }
    }
}

/// Validated as a set loaded from bytes is.
impl TryFrom<IntegerFields> for BgvParameters {
    type Error = SchemeError;

    fn try_from(fields: IntegerFields) -> Result<Self> {
        BgvParameters::from_rlwe(fields.rlwe.into(), fields.plain_modulus)
    }
}

/// CKKS's serde configuration: the RLWE fields, the depth, the scale and the base.
#[derive(serde::Serialize, serde::Deserialize)]
pub(crate) struct CkksFields {
    #[serde(flatten)]
    rlwe: RlweFields,
    depth: usize,
    scale_bits: u32,
    base_primes: usize,
}

impl From<CkksParameters> for CkksFields {
    fn from(params: CkksParameters) -> Self {
        Self {
            rlwe: params.rlwe().into(),
            depth: params.depth(),
            scale_bits: params.scale_bits(),
            base_primes: params.base_primes(),
        }
    }
}

/// Checked as the builder checks.
impl TryFrom<CkksFields> for CkksParameters {
    type Error = SchemeError;

    fn try_from(fields: CkksFields) -> Result<Self> {
        CkksParameters::from_parts(fields.rlwe.into(), fields.depth, fields.scale_bits, fields.base_primes)
    }
}
