//! The decryption phase shared by BGV and BFV: v = c0 + c1 s (+ c2 s^2) with the secret and
//! its square resident on the device, wiped when the holder is dropped; and the exact noise
//! budget measured from it.

use num_bigint::BigUint;
use num_traits::{ToPrimitive, Zero};
use pimhe_exec::Backend;
use pimhe_math::RnsBase;
use pimhe_ring::PolyBatch;

use crate::error::{Result, SchemeError};
use crate::noise::WipeOnDrop;

/// s and s^2 (NTT form) uploaded once for a decryptor's lifetime.
pub(crate) struct DeviceSecret<'a, B: Backend> {
    backend: &'a B,
    s: B::Buffer,
    s_squared: B::Buffer,
}

impl<'a, B: Backend> DeviceSecret<'a, B> {
    /// Uploads the secret `s` (NTT form) and squares it on the device (the uploaded s is wiped
    /// if the squaring fails).
    pub(crate) fn upload(backend: &'a B, s: &PolyBatch) -> Result<Self> {
        let s = WipeOnDrop::new(backend, backend.upload(s.clone())?);
        let s_squared = backend.mul(&s, &s)?;
        Ok(Self { backend, s: s.into_inner(), s_squared })
    }

    /// v = c0 + c1 s (+ c2 s^2) of a ciphertext batch's components (2 or 3 of them, NTT form),
    /// in coefficient form on the device.
    pub(crate) fn phase(&self, parts: &[B::Buffer]) -> Result<B::Buffer> {
        if !(2..=3).contains(&parts.len()) {
            return Err(SchemeError::WrongSize { operation: "decrypt", expected: 2, found: parts.len() });
        }
        let backend = self.backend;
        let mut v = backend.copy(&parts[0])?;
        backend.mac(&mut v, &parts[1], &self.s)?;
        if let Some(c2) = parts.get(2) {
            backend.mac(&mut v, c2, &self.s_squared)?;
        }
        backend.intt(&mut v)?;
        Ok(v)
    }
}

/// The remaining noise budget in bits of each polynomial of the phase `v` (coefficient form on
/// the host, over the primes of `rns`, whose product is Q): log2(Q/2) - log2(max |[factor v]_Q|)
/// with [x]_Q the centred residue, floored, 0 when exhausted. `factor` is 1 for BGV (the noise
/// is the phase itself) and t for BFV (the invariant noise [t v]_q; decryption rounds t v / q
/// correctly while it stays below q/2). Exact: big-integer CRT, a diagnostic off the
/// decryption path.
pub(crate) fn noise_budgets(v: &PolyBatch, rns: &RnsBase, factor: u32) -> Result<Vec<u32>> {
    let q = rns.product();
    let factor = BigUint::from(factor);
    let log_half_q = v.basis().log_modulus() - 1.0;
    let mut residues = vec![0u32; v.basis().len()];
    (0..v.count())
        .map(|k| {
            let mut largest = BigUint::zero();
            for c in 0..v.degree() {
                for (limb, r) in residues.iter_mut().enumerate() {
                    *r = v.poly_limb(limb, k)[c];
                }
                let noise = (rns.compose(&residues)? * &factor) % q;
                // |[factor v]_Q|: the distance to the nearer multiple of Q.
                let magnitude = if &noise * 2u32 > *q { q - noise } else { noise };
                largest = largest.max(magnitude);
            }
            // Values stay below Q < 2^900, well inside f64's range.
            let used = if largest.is_zero() { 0.0 } else { largest.to_f64().map_or(f64::INFINITY, f64::log2) };
            Ok((log_half_q - used).max(0.0).floor() as u32)
        })
        .collect()
}

impl<B: Backend> Drop for DeviceSecret<'_, B> {
    fn drop(&mut self) {
        self.backend.zeroize(&mut self.s);
        self.backend.zeroize(&mut self.s_squared);
    }
}
