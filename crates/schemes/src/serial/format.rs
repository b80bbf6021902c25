//! The primitives of the format (docs/SERIALIZATION.md): the header, a little-endian writer,
//! a reader that checks every length against the input left before it allocates, the
//! bit-packing of residues, and the parameter digest.

use std::sync::Arc;

use pimhe_ring::{PolyBatch, Representation, RingBasis};
use sha2::{Digest, Sha256};
use zeroize::Zeroize;

use crate::error::{Result, SchemeError};
use crate::serial::SerialScheme;

/// The first bytes of every encoding.
pub const MAGIC: [u8; 5] = *b"PIMHE";
/// The format version this crate writes and reads.
pub const VERSION: u16 = 1;
/// Bytes of the header: magic, version, kind, scheme, flags, digest.
pub const HEADER_LEN: usize = 5 + 2 + 1 + 1 + 1 + 32;
/// Flag bit: the uniform parts are stored as 32-byte seeds (a compressed encoding).
const FLAG_COMPRESSED: u8 = 1;

/// What an encoding holds: the header's kind byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A parameter set.
    Parameters = 1,
    /// A secret key.
    SecretKey = 2,
    /// A public key.
    PublicKey = 3,
    /// A relinearization key.
    RelinKey = 4,
    /// Galois keys.
    GaloisKeys = 5,
    /// A plaintext.
    Plaintext = 6,
    /// A batch of ciphertexts.
    Ciphertext = 7,
    /// CKKS bootstrapping's sparse-secret encapsulation keys.
    EncapsulationKeys = 8,
}

impl Kind {
    const ALL: [Kind; 8] = [
        Kind::Parameters,
        Kind::SecretKey,
        Kind::PublicKey,
        Kind::RelinKey,
        Kind::GaloisKeys,
        Kind::Plaintext,
        Kind::Ciphertext,
        Kind::EncapsulationKeys,
    ];

    /// How the kind reads in messages.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Parameters => "parameter set",
            Kind::SecretKey => "secret key",
            Kind::PublicKey => "public key",
            Kind::RelinKey => "relinearization key",
            Kind::GaloisKeys => "Galois keys",
            Kind::Plaintext => "plaintext",
            Kind::Ciphertext => "ciphertext batch",
            Kind::EncapsulationKeys => "encapsulation keys",
        }
    }

    /// Whether the kind has a compressed (seeded) form.
    fn compressible(self) -> bool {
        matches!(self, Kind::PublicKey | Kind::RelinKey | Kind::GaloisKeys | Kind::Ciphertext | Kind::EncapsulationKeys)
    }
}

/// Shorthand for a [`SchemeError::Format`].
pub(crate) fn malformed(message: impl Into<String>) -> SchemeError {
    SchemeError::Format(message.into())
}

/// The 32-byte digest of a parameter set: SHA-256 of its scheme's byte followed by its
/// canonical encoding (the payload of its [`Kind::Parameters`] encoding).
pub fn parameter_digest<S: SerialScheme>(params: &S::Params) -> [u8; 32] {
    let mut w = Writer::with_capacity(128);
    S::write_params(params, &mut w);
    digest_of::<S>(&w.bytes)
}

fn digest_of<S: SerialScheme>(canonical: &[u8]) -> [u8; 32] {
    let mut hash = Sha256::new();
    hash.update([S::SCHEME_ID]);
    hash.update(canonical);
    hash.finalize().into()
}

/// The first 8 bytes of a digest in hex, for messages.
fn short(digest: &[u8; 32]) -> String {
    digest[..8].iter().map(|b| format!("{b:02x}")).collect()
}

/// Appends little-endian fields to a byte vector.
pub struct Writer {
    bytes: Vec<u8>,
}

impl Writer {
    /// An empty writer with room for `capacity` bytes (reserved once, so that an encoding of
    /// secret residues is never copied by a reallocation that leaves the old copy behind).
    pub fn with_capacity(capacity: usize) -> Self {
        Self { bytes: Vec::with_capacity(capacity) }
    }

    /// A byte.
    pub fn u8(&mut self, x: u8) {
        self.bytes.push(x);
    }

    /// A little-endian u16.
    pub fn u16(&mut self, x: u16) {
        self.bytes.extend_from_slice(&x.to_le_bytes());
    }

    /// A little-endian u32.
    pub fn u32(&mut self, x: u32) {
        self.bytes.extend_from_slice(&x.to_le_bytes());
    }

    /// A little-endian IEEE 754 binary64.
    pub fn f64(&mut self, x: f64) {
        self.bytes.extend_from_slice(&x.to_le_bytes());
    }

    /// Raw bytes.
    pub fn bytes(&mut self, x: &[u8]) {
        self.bytes.extend_from_slice(x);
    }

    /// A count or size as a u32: every count this format writes is far below 2^32 (the
    /// polynomials behind it would not fit in memory otherwise).
    pub(crate) fn len32(&mut self, x: usize) {
        self.u32(u32::try_from(x).expect("counts of in-memory objects fit in 32 bits"));
    }

    /// Every residue of `batch`, limb by limb, each limb's residues bit-packed at its prime's
    /// bit width ([`pack`]).
    pub(crate) fn residues(&mut self, batch: &PolyBatch) {
        for limb in 0..batch.basis().len() {
            self.packed(batch.limb(limb), bit_width(batch.basis().modulus(limb).value()));
        }
    }

    /// `values` packed at `bits` bits each ([`pack`]).
    pub(crate) fn packed(&mut self, values: &[u32], bits: u32) {
        pack(values, bits, &mut self.bytes);
    }

    /// A bit stream written by `write` (values of any width, [`BitWriter`]), padded to a byte.
    pub(crate) fn with_bits(&mut self, write: impl FnOnce(&mut BitWriter<'_>)) {
        let mut bits = BitWriter::new(&mut self.bytes);
        write(&mut bits);
        bits.finish();
    }

    /// The bytes written.
    pub fn into_bytes(self) -> Vec<u8> {
        self.bytes
    }
}

/// Bytes of [`Writer::residues`] of `batch`.
pub(crate) fn residues_len(batch: &PolyBatch) -> usize {
    let per_limb = batch.count() * batch.degree();
    batch.basis().primes().iter().map(|&q| packed_len(per_limb, bit_width(q)).expect("an in-memory batch")).sum()
}

/// Bit width of a prime (30 for a prime of 30 bits).
pub(crate) fn bit_width(q: u32) -> u32 {
    32 - q.leading_zeros()
}

/// Bytes of `count` residues packed at `bits` bits, or `None` where that overflows.
pub(crate) fn packed_len(count: usize, bits: u32) -> Option<usize> {
    count.checked_mul(bits as usize).map(|b| b.div_ceil(8))
}

/// Appends `values` at `bits` bits each (1..=32), as one [`BitWriter`] stream.
pub(crate) fn pack(values: &[u32], bits: u32, out: &mut Vec<u8>) {
    let mut bits_out = BitWriter::new(out);
    values.iter().for_each(|&x| bits_out.put(x, bits));
    bits_out.finish();
}

/// Writes values of 1..=32 bits as one stream of bits, least significant bit first: bit k of the
/// stream is bit k mod 8 of byte k / 8, and the last byte is padded with zero bits.
pub(crate) struct BitWriter<'a> {
    out: &'a mut Vec<u8>,
    acc: u64,
    filled: u32,
}

impl<'a> BitWriter<'a> {
    pub(crate) fn new(out: &'a mut Vec<u8>) -> Self {
        Self { out, acc: 0, filled: 0 }
    }

    /// The low `bits` bits of `x` (the others must be zero).
    pub(crate) fn put(&mut self, x: u32, bits: u32) {
        self.acc |= u64::from(x) << self.filled;
        self.filled += bits;
        while self.filled >= 8 {
            self.out.push(self.acc as u8);
            self.acc >>= 8;
            self.filled -= 8;
        }
    }

    /// Flushes the last partial byte; the accumulator, which may hold secret bits, is wiped.
    pub(crate) fn finish(mut self) {
        if self.filled > 0 {
            self.out.push(self.acc as u8);
        }
        self.acc.zeroize();
    }
}

/// Reads what a [`BitWriter`] wrote, from bytes whose length the caller has checked.
pub(crate) struct BitReader<'a> {
    source: std::slice::Iter<'a, u8>,
    acc: u64,
    filled: u32,
}

impl<'a> BitReader<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        Self { source: bytes.iter(), acc: 0, filled: 0 }
    }

    /// The next `bits` (1..=32) bits; the bytes must hold them.
    pub(crate) fn get(&mut self, bits: u32) -> u32 {
        while self.filled < bits {
            self.acc |= u64::from(*self.source.next().expect("the packed length was checked")) << self.filled;
            self.filled += 8;
        }
        let x = (self.acc & ((1u64 << bits) - 1)) as u32;
        self.acc >>= bits;
        self.filled -= bits;
        x
    }
}

impl Drop for BitReader<'_> {
    /// The accumulator may hold secret bits.
    fn drop(&mut self) {
        self.acc.zeroize();
    }
}

/// Reads little-endian fields, refusing any that the input left does not hold.
pub struct Reader<'a> {
    bytes: &'a [u8],
    position: usize,
}

impl<'a> Reader<'a> {
    /// A reader of `bytes`, from the start.
    pub fn new(bytes: &'a [u8]) -> Self {
        Self { bytes, position: 0 }
    }

    /// Bytes not read yet.
    pub fn remaining(&self) -> usize {
        self.bytes.len() - self.position
    }

    /// The next `len` bytes, or an error naming `what` they were to hold.
    pub fn take(&mut self, len: usize, what: &str) -> Result<&'a [u8]> {
        if len > self.remaining() {
            return Err(malformed(format!(
                "truncated: {what} needs {len} bytes at offset {}, only {} are left",
                self.position,
                self.remaining()
            )));
        }
        let slice = &self.bytes[self.position..self.position + len];
        self.position += len;
        Ok(slice)
    }

    /// A byte.
    pub fn u8(&mut self, what: &str) -> Result<u8> {
        Ok(self.take(1, what)?[0])
    }

    /// A little-endian u16.
    pub fn u16(&mut self, what: &str) -> Result<u16> {
        Ok(u16::from_le_bytes(self.take(2, what)?.try_into().expect("2 bytes")))
    }

    /// A little-endian u32.
    pub fn u32(&mut self, what: &str) -> Result<u32> {
        Ok(u32::from_le_bytes(self.take(4, what)?.try_into().expect("4 bytes")))
    }

    /// A little-endian IEEE 754 binary64.
    pub fn f64(&mut self, what: &str) -> Result<f64> {
        Ok(f64::from_le_bytes(self.take(8, what)?.try_into().expect("8 bytes")))
    }

    /// 32 raw bytes (a seed).
    pub fn seed(&mut self, what: &str) -> Result<[u8; 32]> {
        Ok(self.take(32, what)?.try_into().expect("32 bytes"))
    }

    /// A u32 count that must lie in `allowed`.
    pub(crate) fn count(&mut self, what: &str, allowed: std::ops::RangeInclusive<usize>) -> Result<usize> {
        let x = self.u32(what)? as usize;
        if !allowed.contains(&x) {
            return Err(malformed(format!("{what} is {x}; allowed {}..={}", allowed.start(), allowed.end())));
        }
        Ok(x)
    }

    /// `count` polynomials over `basis` in NTT form, as [`Writer::residues`] wrote them. The
    /// packed length is checked against the input left before anything is allocated, and every
    /// residue against its prime. The residues read so far are wiped when a later one is
    /// refused (they may be a secret's).
    pub(crate) fn residues(&mut self, basis: &Arc<RingBasis>, count: usize, what: &str) -> Result<PolyBatch> {
        let per_limb = count
            .checked_mul(basis.degree())
            .ok_or_else(|| malformed(format!("{what}: {count} polynomials overflow the address space")))?;
        let mut total = 0usize;
        for q in basis.primes() {
            let len = packed_len(per_limb, bit_width(q)).and_then(|len| total.checked_add(len));
            total = len.ok_or_else(|| malformed(format!("{what}: {count} polynomials overflow the address space")))?;
        }
        if total > self.remaining() {
            return Err(malformed(format!(
                "truncated: {what} ({count} polynomial(s) over {} primes at N = {}) needs {total} bytes at offset {}, \
                 only {} are left",
                basis.len(),
                basis.degree(),
                self.position,
                self.remaining()
            )));
        }
        let mut data = Vec::with_capacity(per_limb * basis.len());
        for (limb, q) in basis.primes().into_iter().enumerate() {
            let bits = bit_width(q);
            let bytes = self.take(packed_len(per_limb, bits).expect("checked above"), what)?;
            if let Err(index) = unpack(bytes, bits, q, per_limb, &mut data) {
                let value = data[data.len() - 1];
                data.zeroize();
                return Err(malformed(format!(
                    "{what}: residue {index} of limb {limb} is {value}, not below its prime {q}"
                )));
            }
        }
        Ok(PolyBatch::from_data(basis, count, Representation::Ntt, data)?)
    }

    /// `len` values packed at `bits` bits, each below `bound` ("what" names them in errors); the
    /// packed length is checked against the input left before anything is allocated.
    pub(crate) fn packed(&mut self, len: usize, bits: u32, bound: u32, what: &str) -> Result<Vec<u32>> {
        let bytes = packed_len(len, bits).ok_or_else(|| malformed(format!("{what}: {len} values overflow")))?;
        let bytes = self.take(bytes, what)?;
        let mut values = Vec::with_capacity(len);
        unpack(bytes, bits, bound, len, &mut values)
            .map_err(|index| malformed(format!("{what}: value {index} is {}, not below {bound}", values[index])))?;
        Ok(values)
    }

    /// Errors unless every byte was read.
    pub fn finish(self) -> Result<()> {
        match self.remaining() {
            0 => Ok(()),
            left => Err(malformed(format!(
                "{left} trailing byte(s) after the object (it ends at offset {})",
                self.position
            ))),
        }
    }
}

/// Appends `len` values of `bits` bits from `bytes` (as [`pack`] wrote them) to `out`, each
/// checked below `q`: `Err(i)` names the first that is not (it is the last one pushed).
fn unpack(bytes: &[u8], bits: u32, q: u32, len: usize, out: &mut Vec<u32>) -> std::result::Result<(), usize> {
    let mut bits_in = BitReader::new(bytes);
    for i in 0..len {
        let x = bits_in.get(bits);
        out.push(x);
        if x >= q {
            return Err(i);
        }
    }
    Ok(())
}

/// Writes the header of an object of `kind` made under `params`.
pub(crate) fn header<S: SerialScheme>(w: &mut Writer, kind: Kind, compressed: bool, params: &S::Params) {
    w.bytes(&MAGIC);
    w.u16(VERSION);
    w.u8(kind as u8);
    w.u8(S::SCHEME_ID);
    w.u8(if compressed { FLAG_COMPRESSED } else { 0 });
    w.bytes(&parameter_digest::<S>(params));
}

/// The fields of a header, checked except for the digest.
pub(crate) struct Header {
    pub(crate) compressed: bool,
    pub(crate) digest: [u8; 32],
}

/// Reads and checks the header of an encoding that should hold a `kind` of scheme `S`: magic,
/// version, kind, scheme and flags. The digest is the caller's to check.
pub(crate) fn read_header<S: SerialScheme>(r: &mut Reader<'_>, kind: Kind) -> Result<Header> {
    let magic = r.take(MAGIC.len(), "the magic bytes")?;
    if magic != MAGIC {
        return Err(malformed(format!("not a pimhe encoding: it starts with {magic:02x?}, not b\"PIMHE\"")));
    }
    let version = r.u16("the format version")?;
    if version != VERSION {
        return Err(malformed(format!(
            "format version {version} is not supported; this build reads version {VERSION}"
        )));
    }
    let found = r.u8("the object kind")?;
    if found != kind as u8 {
        let name = Kind::ALL.iter().find(|k| **k as u8 == found).map_or("an unknown kind", |k| k.name());
        return Err(malformed(format!("expected a {}, found {name} (kind byte {found})", kind.name())));
    }
    let scheme = r.u8("the scheme")?;
    if scheme != S::SCHEME_ID {
        let name = match scheme {
            1 => "bgv",
            2 => "bfv",
            3 => "ckks",
            _ => "an unknown scheme",
        };
        return Err(malformed(format!("the {} is for {name} (scheme byte {scheme}), not {}", kind.name(), S::NAME)));
    }
    let flags = r.u8("the flags")?;
    let allowed = if kind.compressible() { FLAG_COMPRESSED } else { 0 };
    if flags & !allowed != 0 {
        return Err(malformed(format!(
            "flags {flags:#04x} are not defined for a {}; allowed {allowed:#04x}",
            kind.name()
        )));
    }
    Ok(Header { compressed: flags & FLAG_COMPRESSED != 0, digest: r.seed("the parameter digest")? })
}

/// Opens an encoding of a `kind` made under the parameters of `ctx`: the header checked, its
/// digest compared with the context's. Returns the reader at the payload and whether the
/// encoding is compressed.
pub(crate) fn open<'a, S: SerialScheme>(ctx: &S, bytes: &'a [u8], kind: Kind) -> Result<(Reader<'a>, bool)> {
    let mut r = Reader::new(bytes);
    let header = read_header::<S>(&mut r, kind)?;
    let mine = parameter_digest::<S>(ctx.params());
    if header.digest != mine {
        return Err(SchemeError::ParameterMismatch(format!(
            "the {} was made for other parameters (digest {}), the context is [{}] (digest {})",
            kind.name(),
            short(&header.digest),
            ctx.params(),
            short(&mine)
        )));
    }
    Ok((r, header.compressed))
}

/// Checks that a parameter set's digest matches its payload (`canonical`, all of it).
pub(crate) fn check_self_digest<S: SerialScheme>(header: &Header, canonical: &[u8]) -> Result<()> {
    let digest = digest_of::<S>(canonical);
    if header.digest != digest {
        return Err(malformed(format!(
            "the parameter set's digest {} does not match its contents (digest {}): it was altered",
            short(&header.digest),
            short(&digest)
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packing_round_trips_at_every_width_and_is_dense() {
        for bits in [1u32, 7, 12, 27, 30, 31] {
            let max = (1u32 << bits) - 1;
            let values: Vec<u32> = (0..37u32).map(|i| max.wrapping_sub(i.wrapping_mul(2654435761)) & max).collect();
            let mut bytes = Vec::new();
            pack(&values, bits, &mut bytes);
            assert_eq!(bytes.len(), packed_len(values.len(), bits).unwrap());
            let mut back = Vec::new();
            unpack(&bytes, bits, u32::MAX, values.len(), &mut back).unwrap();
            assert_eq!(back, values, "{bits} bits");
        }
    }
}
