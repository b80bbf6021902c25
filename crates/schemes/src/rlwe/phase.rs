//! The decryption phase shared by BGV and BFV: v = c0 + c1 s (+ c2 s^2) with the secret and
//! its square resident on the device, wiped when the holder is dropped; and the exact noise
//! budget measured from it.
//!
//! The phase is as secret as the key: with the ciphertext, its noise gives s away by linear
//! algebra. So it only ever exists wiped on drop, on the device ([`WipeOnDrop`]) and on the
//! host (`Zeroizing`), on every backend, the CPU's (whose freed memory the process keeps for
//! reuse) included.

use num_bigint::BigUint;
use num_traits::{ToPrimitive, Zero};
use pimhe_exec::Backend;
use pimhe_math::RnsBase;
use pimhe_ring::PolyBatch;
use zeroize::Zeroizing;

use crate::error::{Result, SchemeError};
use crate::rlwe::noise::WipeOnDrop;

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
    /// in coefficient form on the device, wiped when dropped.
    pub(crate) fn phase(&self, parts: &[B::Buffer]) -> Result<WipeOnDrop<'a, B>> {
        if !(2..=3).contains(&parts.len()) {
            return Err(SchemeError::WrongSize { operation: "decrypt", expected: 2, found: parts.len() });
        }
        let backend = self.backend;
        let mut v = WipeOnDrop::new(backend, backend.copy(&parts[0])?);
        backend.mac(&mut v, &parts[1], &self.s)?;
        if let Some(c2) = parts.get(2) {
            backend.mac(&mut v, c2, &self.s_squared)?;
        }
        backend.intt(&mut v)?;
        Ok(v)
    }

    /// [`DeviceSecret::phase`] downloaded to the host, wiped when dropped.
    pub(crate) fn phase_on_host(&self, parts: &[B::Buffer]) -> Result<Zeroizing<PolyBatch>> {
        Ok(Zeroizing::new(self.backend.download(&*self.phase(parts)?)?))
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

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use pimhe_exec::{Backend, CpuBackend};
    use pimhe_math::Sampler;
    use pimhe_pim::emulator::{DpuSet, EmulatorConfig};
    use pimhe_pim::runtime::placement::Mode;
    use pimhe_pim::runtime::{PimBackend, PimConfig};
    use pimhe_ring::PolyBatch;

    use crate::encoder::Plaintext;
    use crate::rlwe::RlweScheme;
    use crate::{bfv, bgv};

    const N: usize = 1024;

    /// Emulated DPUs whose MRAM the test can read after the backend is done with it.
    fn observed_backend(primes: &[u32]) -> (PimBackend, Arc<Mutex<DpuSet>>) {
        let config = PimConfig::new(primes.len(), Mode::Parallel);
        let dpus = Arc::new(Mutex::new(DpuSet::new(primes.len(), EmulatorConfig::default()).unwrap()));
        (PimBackend::with_device(config, Box::new(dpus.clone()), N, primes).unwrap(), dpus)
    }

    /// The phase c0 + c1 s of a ciphertext's parts, computed apart on the CPU backend.
    fn phase_on_cpu(pim: &PimBackend, parts: &[<PimBackend as Backend>::Buffer], s: &PolyBatch) -> PolyBatch {
        let cpu = CpuBackend::new(Some(1)).unwrap();
        let part = |k: usize| cpu.upload(pim.download(&parts[k]).unwrap()).unwrap();
        let mut v = part(0);
        cpu.mac(&mut v, &part(1), &cpu.upload(s.clone()).unwrap()).unwrap();
        cpu.intt(&mut v).unwrap();
        cpu.download(&v).unwrap()
    }

    /// How many runs of 16 consecutive residues of `v`'s first limb some DPU's MRAM still holds.
    fn runs_left(dpus: &Mutex<DpuSet>, v: &PolyBatch) -> usize {
        let set = dpus.lock().unwrap();
        let words: Vec<Vec<u32>> = (0..set.len())
            .map(|dpu| {
                let mut bytes = vec![0u8; set.resident_bytes(dpu).unwrap() / 8 * 8];
                set.read(dpu, 0, &mut bytes).unwrap();
                bytes.chunks_exact(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect()
            })
            .collect();
        v.limb(0).chunks_exact(16).filter(|run| words.iter().any(|mram| mram.windows(16).any(|w| w == *run))).count()
    }

    fn message(t: u32) -> Plaintext {
        let mut sampler = Sampler::from_seed_u64(5);
        Plaintext::from_coefficients(sampler.uniform_vec(&pimhe_math::Modulus::new(u64::from(t)).unwrap(), N))
    }

    #[test]
    fn bgv_decryption_leaves_no_phase_in_device_memory() {
        let cpu = CpuBackend::new(Some(1)).unwrap();
        let ctx = bgv::BgvContext::new(bgv::BgvParameters::preset(N).unwrap()).unwrap();
        let mut keygen = bgv::KeyGenerator::with_sampler(&cpu, &ctx, Sampler::from_seed_u64(1));
        let secret = keygen.secret_key().unwrap();
        let (pim, dpus) = observed_backend(&ctx.backend_primes());
        let mut encryptor = bgv::Encryptor::with_secret_key(&pim, &secret).unwrap();
        let ciphertext = encryptor.encrypt(&[message(ctx.plain_modulus().value())]).unwrap();
        let v = phase_on_cpu(&pim, ciphertext.parts(), &secret.s);
        {
            let decryptor = bgv::Decryptor::new(&pim, &secret).unwrap();
            decryptor.decrypt(&ciphertext).unwrap();
            decryptor.noise_budget(&ciphertext).unwrap();
        }
        assert_eq!(runs_left(&dpus, &v), 0, "the phase is wiped from MRAM");
    }

    #[test]
    fn bfv_decryption_leaves_no_phase_in_device_memory() {
        let cpu = CpuBackend::new(Some(1)).unwrap();
        let ctx = bfv::BfvContext::new(bfv::BfvParameters::preset(N).unwrap()).unwrap();
        let mut keygen = bfv::KeyGenerator::with_sampler(&cpu, &ctx, Sampler::from_seed_u64(2));
        let secret = keygen.secret_key().unwrap();
        let (pim, dpus) = observed_backend(&ctx.backend_primes());
        let mut encryptor = bfv::Encryptor::with_secret_key(&pim, &secret).unwrap();
        let ciphertext = encryptor.encrypt(&[message(ctx.plain_modulus().value())]).unwrap();
        let v = phase_on_cpu(&pim, ciphertext.parts(), &secret.s);
        {
            let decryptor = bfv::Decryptor::new(&pim, &secret).unwrap();
            decryptor.decrypt(&ciphertext).unwrap();
            decryptor.noise_budget(&ciphertext).unwrap();
        }
        assert_eq!(runs_left(&dpus, &v), 0, "the phase is wiped from MRAM");
    }
}
