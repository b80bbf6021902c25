//! Ciphertext batches: the shape (level, count, size), the scheme's tag, then every component's
//! residues at the batch's level, or for a compressed (seeded) batch the seed of the uniform
//! component and the other component.

use std::sync::Arc;

use pimhe_exec::Backend;
use pimhe_ring::PolyBatch;

use crate::error::Result;
use crate::rlwe::noise::expand_uniform;
use crate::rlwe::CiphertextBatch;
use crate::serial::format::{header, malformed, open, residues_len, Kind, Writer, HEADER_LEN};
use crate::serial::SerialScheme;

/// Bytes of the shape and tag, at most (CKKS's tag is the largest: 12 bytes).
const SHAPE_LEN: usize = 2 + 4 + 1 + 12;

/// The header and shape of a batch; the caller appends the components.
pub(crate) fn begin<S: SerialScheme>(
    ctx: &S,
    compressed: bool,
    (level, count, size): (usize, usize, usize),
    tag: S::Tag,
    payload: usize,
) -> Writer {
    let mut w = Writer::with_capacity(HEADER_LEN + SHAPE_LEN + payload);
    header::<S>(&mut w, Kind::Ciphertext, compressed, ctx.params());
    w.u16(u16::try_from(level).expect("levels are below the number of primes"));
    w.len32(count);
    w.u8(size as u8);
    S::write_tag(tag, &mut w);
    w
}

impl<B: Backend, S: SerialScheme> CiphertextBatch<B, S> {
    /// The binary encoding of the batch (its components are downloaded from `backend`): any
    /// count, level, size 2 or 3, and the tag.
    pub fn to_bytes(&self, backend: &B) -> Result<Vec<u8>> {
        let parts = self.parts.iter().map(|p| backend.download(p)).collect::<pimhe_exec::Result<Vec<_>>>()?;
        let payload = parts.iter().map(residues_len).sum();
        let mut w = begin(&*self.ctx, false, (self.level, self.count, parts.len()), self.tag, payload);
        parts.iter().for_each(|part| w.residues(part));
        Ok(w.into_bytes())
    }

    /// Loads a batch of `ctx` onto `backend` from a full or a compressed encoding (whose seed is
    /// expanded into the uniform component). Everything is checked before anything is
    /// uploaded: the header and the parameter digest, level <= the top level, count >= 1, size 2
    /// or 3 (2 when compressed), the tag, every residue below its prime, no trailing bytes.
    pub fn from_bytes(backend: &B, ctx: &Arc<S>, bytes: &[u8]) -> Result<Self> {
        let (mut r, compressed) = open(&**ctx, bytes, Kind::Ciphertext)?;
        let max_level = ctx.rlwe().max_level();
        let level = r.u16("the level")? as usize;
        if level > max_level {
            return Err(malformed(format!("level {level} does not exist; allowed 0..={max_level}")));
        }
        let count = r.count("the number of ciphertexts", 1..=u32::MAX as usize)?;
        let size = r.u8("the number of components")? as usize;
        let allowed = if compressed { 2..=2 } else { 2..=3 };
        if !allowed.contains(&size) {
            return Err(malformed(format!(
                "{size} components per ciphertext is not allowed; allowed {}..={}{}",
                allowed.start(),
                allowed.end(),
                if compressed { " in a compressed batch" } else { "" }
            )));
        }
        let tag = ctx.read_tag(&mut r)?;
        let basis = ctx.rlwe().level_basis(level)?;
        let parts: Vec<PolyBatch> = if compressed {
            let seed = r.seed("the seed of the uniform component")?;
            // c0 first: its residues bound the count, so the expansion below is no larger than
            // the input.
            let c0 = r.residues(basis, count, "component 0")?;
            r.finish()?;
            vec![c0, expand_uniform(&seed, basis, count)?]
        } else {
            let parts =
                (0..size).map(|j| r.residues(basis, count, &format!("component {j}"))).collect::<Result<Vec<_>>>()?;
            r.finish()?;
            parts
        };
        let parts = parts.into_iter().map(|p| backend.upload(p)).collect::<pimhe_exec::Result<Vec<_>>>()?;
        Ok(CiphertextBatch { ctx: ctx.clone(), parts, level, count, tag })
    }
}
