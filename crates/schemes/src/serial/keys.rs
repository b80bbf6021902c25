//! Keys: the secret key, the public key, and the switching keys of relinearization and
//! rotations, in full form (every residue) or compressed (the seed of each uniform part).

use std::collections::BTreeMap;
use std::sync::Arc;

use pimhe_ring::{PolyBatch, RingBasis};

use crate::ckks::bootstrap::encapsulation::{small_basis, EncapsulationKeys};
use crate::ckks::CkksContext;
use crate::error::{Result, SchemeError};
use crate::rlwe::keyswitch::{KeySwitchBasis, SwitchingKey};
use crate::rlwe::noise::{expand_uniform, Seed};
use crate::rlwe::{key_switch_basis, GaloisKeys, PublicKey, RelinKey, SecretKey};
use crate::serial::format::{header, malformed, open, residues_len, Kind, Reader, Writer, HEADER_LEN};
use crate::serial::SerialScheme;

/// The error of writing a compressed key whose seeds are unknown.
fn no_seed(what: &str) -> SchemeError {
    SchemeError::Format(format!(
        "this {what} was loaded from its full encoding, which has no seeds, so it cannot be written compressed; \
         write it with to_bytes, or keep the compressed encoding it came from"
    ))
}

impl<S: SerialScheme> SecretKey<S> {
    /// The binary encoding: s in NTT form over the data and special primes. The bytes are the
    /// secret: keep them as such (the buffer is sized once, so no stray copy is left behind).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut w = Writer::with_capacity(HEADER_LEN + residues_len(&self.s));
        header::<S>(&mut w, Kind::SecretKey, false, self.ctx.params());
        w.residues(&self.s);
        w.into_bytes()
    }

    /// Loads a secret key of `ctx`. Its residues are wiped when it is dropped, and on every
    /// error path.
    pub fn from_bytes(ctx: &Arc<S>, bytes: &[u8]) -> Result<Self> {
        let (mut r, _) = open(&**ctx, bytes, Kind::SecretKey)?;
        let s = r.residues(ctx.rlwe().key_basis(), 1, "the secret")?;
        // Owned by the key from here on, so that a refusal below wipes it.
        let key = SecretKey { ctx: ctx.clone(), s };
        r.finish()?;
        Ok(key)
    }
}

impl<S: SerialScheme> PublicKey<S> {
    /// The full binary encoding: b and a over the data primes.
    pub fn to_bytes(&self) -> Vec<u8> {
        self.encode(None)
    }

    /// The compressed encoding: b and the seed of a (about half the size). Errors for a key
    /// loaded from its full encoding, whose seed is unknown.
    pub fn to_compressed_bytes(&self) -> Result<Vec<u8>> {
        Ok(self.encode(Some(self.a_seed.ok_or_else(|| no_seed("public key"))?)))
    }

    fn encode(&self, seed: Option<Seed>) -> Vec<u8> {
        let mut w = Writer::with_capacity(HEADER_LEN + residues_len(&self.b) + residues_len(&self.a));
        header::<S>(&mut w, Kind::PublicKey, seed.is_some(), self.ctx.params());
        w.residues(&self.b);
        match seed {
            Some(seed) => w.bytes(&seed),
            None => w.residues(&self.a),
        }
        w.into_bytes()
    }

    /// Loads a public key of `ctx` from either encoding (a compressed one's seed is expanded).
    pub fn from_bytes(ctx: &Arc<S>, bytes: &[u8]) -> Result<Self> {
        let (mut r, compressed) = open(&**ctx, bytes, Kind::PublicKey)?;
        let basis = ctx.rlwe().top_basis();
        let b = r.residues(basis, 1, "the public key's b")?;
        let (a, a_seed) = read_uniform(&mut r, basis, compressed, "the public key's a")?;
        r.finish()?;
        Ok(PublicKey { ctx: ctx.clone(), b, a, a_seed })
    }
}

/// A uniform polynomial over `basis`: its seed, expanded, when `compressed`, else its residues.
fn read_uniform(
    r: &mut Reader<'_>,
    basis: &Arc<RingBasis>,
    compressed: bool,
    what: &str,
) -> Result<(PolyBatch, Option<Seed>)> {
    if compressed {
        let seed = r.seed(what)?;
        Ok((expand_uniform(&seed, basis, 1)?, Some(seed)))
    } else {
        Ok((r.residues(basis, 1, what)?, None))
    }
}

/// A switching key: its digit count, then per digit b_j and a_j, or a_j's seed where `seeds`
/// (the key's, one per digit) are given.
fn write_switching(key: &SwitchingKey, seeds: Option<&[Seed]>, w: &mut Writer) {
    w.len32(key.pairs.len());
    for (j, (b, a)) in key.pairs.iter().enumerate() {
        w.residues(b);
        match seeds {
            Some(seeds) => w.bytes(&seeds[j]),
            None => w.residues(a),
        }
    }
}

/// Bytes of [`write_switching`].
fn switching_len(key: &SwitchingKey, compressed: bool) -> usize {
    let a_len = |a| if compressed { 32 } else { residues_len(a) };
    4 + key.pairs.iter().map(|(b, a)| residues_len(b) + a_len(a)).sum::<usize>()
}

/// Reads a switching key of `ctx` (which must have key switching), its digit count checked.
fn read_switching<S: SerialScheme>(ctx: &S, r: &mut Reader<'_>, compressed: bool) -> Result<SwitchingKey> {
    read_switching_over(key_switch_basis(ctx)?, r, compressed)
}

/// Reads a switching key over `basis`, its digit count checked.
fn read_switching_over(basis: &KeySwitchBasis, r: &mut Reader<'_>, compressed: bool) -> Result<SwitchingKey> {
    let digits = basis.digit_count();
    r.count("the number of key-switching digits", digits..=digits)?;
    let key_basis = basis.key_basis();
    let mut pairs = Vec::with_capacity(digits);
    let mut seeds = Vec::with_capacity(digits);
    for _ in 0..digits {
        let b = r.residues(key_basis, 1, "a switching key's b_j")?;
        let (a, seed) = read_uniform(r, key_basis, compressed, "a switching key's a_j")?;
        pairs.push((b, a));
        seeds.extend(seed);
    }
    Ok(SwitchingKey { pairs, seeds: compressed.then_some(seeds) })
}

impl<S: SerialScheme> RelinKey<S> {
    /// The full binary encoding: every pair (b_j, a_j).
    pub fn to_bytes(&self) -> Vec<u8> {
        self.encode(None)
    }

    /// The compressed encoding: each b_j and the seed of each a_j (about half the size).
    /// Errors for a key loaded from its full encoding, whose seeds are unknown.
    pub fn to_compressed_bytes(&self) -> Result<Vec<u8>> {
        Ok(self.encode(Some(self.key.seeds.as_deref().ok_or_else(|| no_seed("relinearization key"))?)))
    }

    fn encode(&self, seeds: Option<&[Seed]>) -> Vec<u8> {
        let compressed = seeds.is_some();
        let mut w = Writer::with_capacity(HEADER_LEN + switching_len(&self.key, compressed));
        header::<S>(&mut w, Kind::RelinKey, compressed, self.ctx.params());
        write_switching(&self.key, seeds, &mut w);
        w.into_bytes()
    }

    /// Loads a relinearization key of `ctx` from either encoding.
    pub fn from_bytes(ctx: &Arc<S>, bytes: &[u8]) -> Result<Self> {
        let (mut r, compressed) = open(&**ctx, bytes, Kind::RelinKey)?;
        let key = read_switching(&**ctx, &mut r, compressed)?;
        r.finish()?;
        Ok(RelinKey { ctx: ctx.clone(), key })
    }
}

impl<S: SerialScheme> GaloisKeys<S> {
    /// The full binary encoding: the number of elements, then per element (increasing) the
    /// element and its switching key.
    pub fn to_bytes(&self) -> Vec<u8> {
        self.encode(None)
    }

    /// The compressed encoding (each a_j as its seed). Errors for keys loaded from their full
    /// encoding, whose seeds are unknown.
    pub fn to_compressed_bytes(&self) -> Result<Vec<u8>> {
        let seeds = self.keys.values().map(|key| key.seeds.as_deref()).collect::<Option<Vec<_>>>();
        Ok(self.encode(Some(seeds.ok_or_else(|| no_seed("set of Galois keys"))?)))
    }

    /// The encoding; `seeds`, one list per element, make it compressed.
    fn encode(&self, seeds: Option<Vec<&[Seed]>>) -> Vec<u8> {
        let compressed = seeds.is_some();
        let len = 4 + self.keys.values().map(|key| 4 + switching_len(key, compressed)).sum::<usize>();
        let mut w = Writer::with_capacity(HEADER_LEN + len);
        header::<S>(&mut w, Kind::GaloisKeys, compressed, self.ctx.params());
        w.len32(self.keys.len());
        for (i, (&element, key)) in self.keys.iter().enumerate() {
            w.len32(element);
            write_switching(key, seeds.as_ref().map(|seeds| seeds[i]), &mut w);
        }
        w.into_bytes()
    }

    /// Loads Galois keys of `ctx` from either encoding: the elements must be odd, below 2N and
    /// strictly increasing (so none repeats).
    pub fn from_bytes(ctx: &Arc<S>, bytes: &[u8]) -> Result<Self> {
        let (mut r, compressed) = open(&**ctx, bytes, Kind::GaloisKeys)?;
        let n = ctx.rlwe().degree();
        // At most the N odd elements below 2N; nothing is reserved for them, each key's bytes
        // are checked before its residues are allocated.
        let count = r.count("the number of Galois elements", 0..=n)?;
        let mut keys = BTreeMap::new();
        let mut previous = None;
        for _ in 0..count {
            let element = r.u32("a Galois element")? as usize;
            if element.is_multiple_of(2) || element >= 2 * n || previous.is_some_and(|p| element <= p) {
                return Err(malformed(format!(
                    "Galois element {element} is not allowed here: elements must be odd, below 2N = {} and strictly \
                     increasing{}",
                    2 * n,
                    previous.map_or(String::new(), |p| format!(" (the previous one is {p})"))
                )));
            }
            previous = Some(element);
            keys.insert(element, read_switching(&**ctx, &mut r, compressed)?);
        }
        r.finish()?;
        Ok(GaloisKeys { ctx: ctx.clone(), keys })
    }
}

impl EncapsulationKeys {
    /// The full binary encoding: the ephemeral Hamming weight, then the switching key to the
    /// sparse secret (over q0 and as many special primes) and the one back (over every prime).
    pub fn to_bytes(&self) -> Vec<u8> {
        self.encode(None)
    }

    /// The compressed encoding (each a_j as its seed, about half the size). Errors for keys
    /// loaded from their full encoding, whose seeds are unknown.
    pub fn to_compressed_bytes(&self) -> Result<Vec<u8>> {
        match (self.to_sparse.seeds.as_deref(), self.to_dense.seeds.as_deref()) {
            (Some(to_sparse), Some(to_dense)) => Ok(self.encode(Some([to_sparse, to_dense]))),
            _ => Err(no_seed("set of encapsulation keys")),
        }
    }

    fn encode(&self, seeds: Option<[&[Seed]; 2]>) -> Vec<u8> {
        let compressed = seeds.is_some();
        let len = 4 + switching_len(&self.to_sparse, compressed) + switching_len(&self.to_dense, compressed);
        let mut w = Writer::with_capacity(HEADER_LEN + len);
        header::<CkksContext>(&mut w, Kind::EncapsulationKeys, compressed, self.ctx.params());
        w.len32(self.hamming_weight);
        write_switching(&self.to_sparse, seeds.map(|s| s[0]), &mut w);
        write_switching(&self.to_dense, seeds.map(|s| s[1]), &mut w);
        w.into_bytes()
    }

    /// Loads the encapsulation keys of `ctx` from either encoding; the weight must be 1 to N.
    pub fn from_bytes(ctx: &Arc<CkksContext>, bytes: &[u8]) -> Result<Self> {
        let (mut r, compressed) = open(&**ctx, bytes, Kind::EncapsulationKeys)?;
        let hamming_weight = r.count("the ephemeral secret's Hamming weight", 1..=ctx.degree())?;
        let to_sparse = read_switching_over(&small_basis(ctx)?, &mut r, compressed)?;
        let to_dense = read_switching(&**ctx, &mut r, compressed)?;
        r.finish()?;
        Ok(EncapsulationKeys { ctx: ctx.clone(), hamming_weight, to_sparse, to_dense })
    }
}
