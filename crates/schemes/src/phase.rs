//! The decryption phase shared by BGV and BFV: v = c0 + c1 s (+ c2 s^2) with the secret and
//! its square resident on the device, wiped when the holder is dropped.

use pimhe_exec::Backend;
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

impl<B: Backend> Drop for DeviceSecret<'_, B> {
    fn drop(&mut self) {
        self.backend.zeroize(&mut self.s);
        self.backend.zeroize(&mut self.s_squared);
    }
}
