//! Compressed (seeded) ciphertexts, as SEAL's: a secret-key encryption `(M + e - a s, a)` whose
//! uniform component a is written as the 32-byte seed it was expanded from, so that its encoding
//! is about half the size of a full one. The expansion is [`crate::rlwe`]'s, specified in
//! docs/SERIALIZATION.md.

use crate::rlwe::SeededCiphertexts;
use crate::serial::ciphertext::begin;
use crate::serial::format::residues_len;
use crate::serial::SerialScheme;

impl<S: SerialScheme> SeededCiphertexts<S> {
    /// The compressed encoding: the batch's shape and tag, the seed, and component 0.
    pub fn to_bytes(&self) -> Vec<u8> {
        let payload = 32 + residues_len(&self.c0);
        let mut w = begin(&*self.ctx, true, (self.level, self.count, 2), self.tag, payload);
        w.bytes(&self.seed);
        w.residues(&self.c0);
        w.into_bytes()
    }
}
