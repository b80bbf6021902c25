//! A bundle: several encodings in one file, each under a name, for what travels together (a
//! user's ciphertexts under every plaintext modulus, a key set). Its entries are whole
//! encodings of this format, loaded and checked by their own `from_bytes`; the bundle frames
//! them and ends with a SHA-256 of everything before it, so that a damaged file (flipped or
//! lost bytes) is refused as damaged, not decrypted into noise (docs/SERIALIZATION.md,
//! "Bundles").

use sha2::{Digest, Sha256};
use zeroize::Zeroizing;

use crate::error::Result;
use crate::serial::format::{malformed, Reader, Writer};

/// The first bytes of a bundle.
pub const BUNDLE_MAGIC: [u8; 8] = *b"PIMHEBDL";
/// The bundle framing version this crate writes; it also reads version 1 (no checksum).
pub const BUNDLE_VERSION: u16 = 2;
/// Bytes of the checksum that ends a bundle of version 2.
const CHECKSUM_LEN: usize = 32;
/// Longest entry name, in bytes.
const MAX_NAME: usize = 255;
/// Bytes an entry takes besides its name and payload: the name's length and the payload's.
const ENTRY_OVERHEAD: usize = 1 + 4;

/// Named encodings, in order. Entry bytes are wiped when the bundle is dropped (an entry may be
/// a secret key).
///
/// ```
/// use pimhe_schemes::bgv::BgvParameters;
/// use pimhe_schemes::serial::Bundle;
/// let mut bundle = Bundle::new();
/// bundle.push("params", BgvParameters::preset(4096).unwrap().to_bytes()).unwrap();
/// let loaded = Bundle::from_bytes(&bundle.to_bytes()).unwrap();
/// let params = BgvParameters::from_bytes(loaded.get("params").unwrap()).unwrap();
/// assert_eq!(params.degree(), 4096);
/// assert!(loaded.get("keys").is_err());
/// ```
#[derive(Default)]
pub struct Bundle {
    entries: Vec<(String, Zeroizing<Vec<u8>>)>,
}

/// Names and sizes only: an entry may be a secret key.
impl std::fmt::Debug for Bundle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map().entries(self.entries.iter().map(|(name, bytes)| (name, bytes.len()))).finish()
    }
}

impl Bundle {
    /// An empty bundle.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends an entry; names are unique, non-empty and at most 255 bytes, encodings below
    /// 4 GiB.
    pub fn push(&mut self, name: impl Into<String>, bytes: Vec<u8>) -> Result<()> {
        let name = name.into();
        self.check_name(&name)?;
        if u32::try_from(bytes.len()).is_err() {
            return Err(malformed(format!(
                "entry '{name}' has {} bytes; a bundle entry holds below 4 GiB",
                bytes.len()
            )));
        }
        self.entries.push((name, Zeroizing::new(bytes)));
        Ok(())
    }

    /// The encoding named `name`.
    pub fn get(&self, name: &str) -> Result<&[u8]> {
        self.entries.iter().find(|(n, _)| n == name).map(|(_, bytes)| bytes.as_slice()).ok_or_else(|| {
            malformed(format!("the bundle has no entry '{name}'; it has {:?}", self.names().collect::<Vec<_>>()))
        })
    }

    /// The entries' names, in order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|(n, _)| n.as_str())
    }

    /// The framing: magic, version, entry count (u32), then per entry its name (length u8,
    /// UTF-8) and its encoding (length u32, bytes), then the SHA-256 of all the bytes before
    /// it; little-endian.
    pub fn to_bytes(&self) -> Vec<u8> {
        let payload: usize = self.entries.iter().map(|(n, b)| ENTRY_OVERHEAD + n.len() + b.len()).sum();
        let mut w = Writer::with_capacity(BUNDLE_MAGIC.len() + 2 + 4 + payload + CHECKSUM_LEN);
        w.bytes(&BUNDLE_MAGIC);
        w.u16(BUNDLE_VERSION);
        w.u32(self.entries.len() as u32);
        for (name, bytes) in &self.entries {
            w.u8(name.len() as u8);
            w.bytes(name.as_bytes());
            w.u32(bytes.len() as u32);
            w.bytes(bytes);
        }
        let mut bytes = w.into_bytes();
        let checksum = Sha256::digest(&bytes);
        bytes.extend_from_slice(&checksum);
        bytes
    }

    /// Reads a bundle, checking the checksum first (a damaged file is refused as such), then
    /// the framing (magic, version, every length against the input left, names, no trailing
    /// bytes); the entries are checked when each is loaded.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        let framed = match bytes.get(BUNDLE_MAGIC.len()..BUNDLE_MAGIC.len() + 2) {
            Some(&[low, high]) if bytes.starts_with(&BUNDLE_MAGIC) && u16::from_le_bytes([low, high]) >= 2 => {
                let split =
                    bytes.len().checked_sub(CHECKSUM_LEN).ok_or_else(|| malformed("the bundle is truncated"))?;
                let (framed, checksum) = bytes.split_at(split);
                if Sha256::digest(framed).as_slice() != checksum {
                    return Err(malformed(
                        "the file is damaged: its checksum does not match its contents (bytes flipped, lost or added \
                         after it was written)",
                    ));
                }
                framed
            }
            _ => bytes,
        };
        let mut r = Reader::new(framed);
        if r.take(BUNDLE_MAGIC.len(), "the bundle's magic bytes")? != BUNDLE_MAGIC {
            return Err(malformed("not a pimhe bundle (its first bytes are not 'PIMHEBDL')"));
        }
        let version = r.u16("the bundle's version")?;
        if !(1..=BUNDLE_VERSION).contains(&version) {
            return Err(malformed(format!(
                "bundle version {version}; this build reads versions 1 ..= {BUNDLE_VERSION}"
            )));
        }
        let count = r.u32("the bundle's entry count")? as usize;
        // Each entry takes at least its two lengths and a one-byte name, so a count the input
        // cannot hold is refused before anything is allocated for it.
        if count > r.remaining() / (ENTRY_OVERHEAD + 1) {
            return Err(malformed(format!(
                "the bundle claims {count} entries; the {} bytes left hold at most {}",
                r.remaining(),
                r.remaining() / (ENTRY_OVERHEAD + 1)
            )));
        }
        // Grown as entries are read rather than reserved from the claimed count: each entry
        // costs more in memory than its 6 framing bytes, so only real ones get room.
        let mut bundle = Self::new();
        for index in 0..count {
            let len = usize::from(r.u8("an entry name's length")?);
            let name = std::str::from_utf8(r.take(len, "an entry name")?)
                .map_err(|_| malformed(format!("entry {index}'s name is not UTF-8")))?
                .to_string();
            let len = r.u32("an entry's length")? as usize;
            let payload = r.take(len, "an entry's encoding")?;
            bundle.push(name, payload.to_vec())?;
        }
        r.finish()?;
        Ok(bundle)
    }

    fn check_name(&self, name: &str) -> Result<()> {
        if name.is_empty() || name.len() > MAX_NAME {
            return Err(malformed(format!("entry name '{name}' has {} bytes; allowed 1..={MAX_NAME}", name.len())));
        }
        if self.entries.iter().any(|(n, _)| n == name) {
            return Err(malformed(format!("the bundle already has an entry '{name}'; names are unique")));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Bundle {
        let mut bundle = Bundle::new();
        bundle.push("a", vec![1, 2, 3]).unwrap();
        bundle.push("b/0", vec![]).unwrap();
        bundle
    }

    #[test]
    fn round_trip_keeps_names_order_and_bytes() {
        let loaded = Bundle::from_bytes(&sample().to_bytes()).unwrap();
        assert_eq!(loaded.names().collect::<Vec<_>>(), ["a", "b/0"]);
        assert_eq!(loaded.get("a").unwrap(), [1, 2, 3]);
        assert_eq!(loaded.get("b/0").unwrap(), [0u8; 0]);
    }

    #[test]
    fn damaged_framing_is_refused_with_a_reason() {
        let bytes = sample().to_bytes();
        for cut in 0..bytes.len() {
            assert!(Bundle::from_bytes(&bytes[..cut]).is_err(), "truncated at {cut}");
        }
        let mut long = bytes.clone();
        long.push(0);
        assert!(Bundle::from_bytes(&long).unwrap_err().to_string().contains("damaged"));
        // Every flipped bit of the framing, the entries or the checksum is caught.
        for bit in 8 * BUNDLE_MAGIC.len() + 16..8 * bytes.len() {
            let mut flipped = bytes.clone();
            flipped[bit / 8] ^= 1 << (bit % 8);
            assert!(Bundle::from_bytes(&flipped).unwrap_err().to_string().contains("damaged"), "bit {bit}");
        }
        let mut magic = bytes;
        magic[0] ^= 1;
        assert!(Bundle::from_bytes(&magic).unwrap_err().to_string().contains("PIMHEBDL"));
    }

    /// Version 1 (no checksum) as an earlier build wrote it.
    fn version_1(bundle: &Bundle) -> Vec<u8> {
        let mut bytes = bundle.to_bytes();
        bytes.truncate(bytes.len() - CHECKSUM_LEN);
        bytes[8..10].copy_from_slice(&1u16.to_le_bytes());
        bytes
    }

    #[test]
    fn version_1_still_reads_and_its_framing_is_checked() {
        let bytes = version_1(&sample());
        assert_eq!(Bundle::from_bytes(&bytes).unwrap().get("a").unwrap(), [1, 2, 3]);
        let mut long = bytes.clone();
        long.push(0);
        assert!(Bundle::from_bytes(&long).unwrap_err().to_string().contains("trailing"));
        // An entry count of 2^32 - 1 in a short input is refused before allocating.
        let mut huge = bytes;
        huge[10..14].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(Bundle::from_bytes(&huge).unwrap_err().to_string().contains("at most"));
    }

    #[test]
    fn names_must_be_unique_and_short() {
        let mut bundle = sample();
        assert!(bundle.push("a", vec![]).is_err());
        assert!(bundle.push("", vec![]).is_err());
        assert!(bundle.push("x".repeat(256), vec![]).is_err());
    }
}
