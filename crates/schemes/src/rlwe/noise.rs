//! The randomness of keys and encryptions, shared by every scheme: ternary (or sparse) secrets, Gaussian
//! errors, uniform polynomials, the upload of signed polynomials that wipes the host copy, and
//! [`WipeOnDrop`], which wipes secret device buffers on every path.

use std::ops::{Deref, DerefMut};
use std::sync::Arc;

use pimhe_exec::Backend;
use pimhe_math::{GaussianTable, Sampler};
use pimhe_ring::{memory, PolyBatch, Representation, RingBasis};
use zeroize::Zeroize;

use crate::error::Result;
use crate::rlwe::params::SecretDistribution;

/// Randomness for one encryption or key: ternary secrets and Gaussian errors.
pub(crate) struct Noise {
    pub(crate) sampler: Sampler,
    gaussian: GaussianTable,
}

impl Noise {
    pub(crate) fn new(sampler: Sampler) -> Self {
        Self { sampler, gaussian: GaussianTable::default() }
    }

    pub(crate) fn ternary(&mut self, n: usize) -> Vec<i64> {
        self.sampler.ternary(n)
    }

    /// Exactly `weight` coefficients in {-1, 1} at uniformly random distinct positions, the rest
    /// 0 (a partial Fisher-Yates shuffle of the positions; `weight` <= n, checked by the
    /// parameters).
    pub(crate) fn sparse_ternary(&mut self, n: usize, weight: usize) -> Vec<i64> {
        let mut positions: Vec<usize> = (0..n).collect();
        let mut s = vec![0i64; n];
        for i in 0..weight.min(n) {
            let j = i + self.below(n - i);
            positions.swap(i, j);
            s[positions[i]] = if self.sampler.next_u32() & 1 == 0 { 1 } else { -1 };
        }
        positions.zeroize();
        s
    }

    /// A uniform integer in [0, bound), bound >= 1, by rejection (no modulo bias).
    fn below(&mut self, bound: usize) -> usize {
        let bound = bound as u64;
        let limit = u64::MAX - u64::MAX % bound;
        loop {
            let x = self.sampler.next_u64();
            if x < limit {
                return (x % bound) as usize;
            }
        }
    }

    /// `scale * e` for a fresh Gaussian e (t for BGV, 1 for BFV).
    pub(crate) fn scaled_error(&mut self, n: usize, scale: u32) -> Vec<i64> {
        let mut e = self.sampler.gaussian(&self.gaussian, n);
        e.iter_mut().for_each(|x| *x *= scale as i64);
        e
    }

    /// `count` fresh errors times `scale` over `basis`, NTT form on the device (not wiped:
    /// the caller wraps it), through the bounded conversion: the Gaussian's tail cut times
    /// `scale` bounds every coefficient.
    pub(crate) fn upload_errors<B: Backend>(
        &mut self,
        backend: &B,
        basis: &Arc<RingBasis>,
        count: usize,
        scale: u32,
    ) -> Result<B::Buffer> {
        let mut errors: Vec<Vec<i64>> = (0..count).map(|_| self.scaled_error(basis.degree(), scale)).collect();
        upload_bounded(backend, basis, &mut errors, self.error_bound(scale))
    }

    /// The largest magnitude of a coefficient of [`Noise::scaled_error`]`(_, scale)`: the
    /// Gaussian's tail cut times `scale`.
    pub(crate) fn error_bound(&self, scale: u32) -> u64 {
        self.gaussian.bound().unsigned_abs() * u64::from(scale)
    }

    /// A fresh 32-byte seed of uniform polynomials.
    pub(crate) fn fresh_seed(&mut self) -> Seed {
        let mut seed = [0u8; 32];
        self.sampler.fill_bytes(&mut seed);
        seed
    }

    /// `count` uniform polynomials over `basis` in NTT form (uniform in NTT form is uniform, so
    /// they are sampled there directly), expanded from a fresh 32-byte seed that is returned
    /// with them: the polynomials are public, and a compressed encoding stores the seed instead
    /// ([`expand_uniform`]).
    pub(crate) fn uniform_seeded(&mut self, basis: &Arc<RingBasis>, count: usize) -> Result<(Seed, PolyBatch)> {
        let seed = self.fresh_seed();
        Ok((seed, expand_uniform(&seed, basis, count)?))
    }
}

/// The 32-byte seed of a uniform polynomial (public: the polynomial it expands to is public).
pub(crate) type Seed = [u8; 32];

/// The `count` uniform polynomials (NTT form) a seed stands for, as docs/SERIALIZATION.md
/// specifies so that another implementation can expand it: one ChaCha20 stream keyed by the
/// seed, read limb by limb (limb 0's `count * N` residues first, polynomial-major inside a limb,
/// which is [`PolyBatch`]'s layout), each residue by Lemire's multiply-and-reject below its
/// prime ([`Sampler::uniform`]). Since the stream is read limb by limb, the expansion over a
/// prefix of a basis is the prefix of the expansion over the basis.
pub(crate) fn expand_uniform(seed: &Seed, basis: &Arc<RingBasis>, count: usize) -> Result<PolyBatch> {
    let mut sampler = Sampler::from_seed(*seed);
    let per_limb = count * basis.degree();
    let mut data = pimhe_ring::recycle::take(basis.len() * per_limb);
    for q in basis.moduli() {
        sampler.extend_uniform(&q, per_limb, &mut data);
    }
    // Lemire's method gives residues below each prime: no pass to check them.
    Ok(PolyBatch::from_reduced_data(basis, count, Representation::Ntt, data)?)
}

/// A device buffer of secret material (a secret, a product a s, encryption errors) that is
/// overwritten with zeros ([`Backend::zeroize`]) when dropped, so that every path wipes it, the
/// early returns of `?` included. [`WipeOnDrop::into_inner`] takes the buffer out unwiped, for
/// a result handed to the caller.
pub(crate) struct WipeOnDrop<'a, B: Backend> {
    backend: &'a B,
    /// `None` only once [`WipeOnDrop::into_inner`] has taken it.
    buffer: Option<B::Buffer>,
}

impl<'a, B: Backend> WipeOnDrop<'a, B> {
    pub(crate) fn new(backend: &'a B, buffer: B::Buffer) -> Self {
        Self { backend, buffer: Some(buffer) }
    }

    /// The buffer, no longer wiped on drop.
    pub(crate) fn into_inner(mut self) -> B::Buffer {
        self.buffer.take().expect("the buffer is present until into_inner")
    }
}

impl<B: Backend> Deref for WipeOnDrop<'_, B> {
    type Target = B::Buffer;

    fn deref(&self) -> &B::Buffer {
        self.buffer.as_ref().expect("the buffer is present until into_inner")
    }
}

impl<B: Backend> DerefMut for WipeOnDrop<'_, B> {
    fn deref_mut(&mut self) -> &mut B::Buffer {
        self.buffer.as_mut().expect("the buffer is present until into_inner")
    }
}

impl<B: Backend> Drop for WipeOnDrop<'_, B> {
    fn drop(&mut self) {
        if let Some(buffer) = &mut self.buffer {
            self.backend.zeroize(buffer);
        }
    }
}

/// Uploads signed polynomials over `basis` and transforms them to NTT form on the device, then
/// wipes the host copies (they are secrets or encryption randomness).
pub(crate) fn upload_signed<B: Backend>(
    backend: &B,
    basis: &Arc<RingBasis>,
    polys: &mut [Vec<i64>],
) -> Result<B::Buffer> {
    upload_bounded(backend, basis, polys, u64::MAX)
}

/// [`upload_signed`] of coefficients at most `bound` in magnitude (a public bound: a tail cut),
/// converted by [`PolyBatch::from_bounded_signed`].
pub(crate) fn upload_bounded<B: Backend>(
    backend: &B,
    basis: &Arc<RingBasis>,
    polys: &mut [Vec<i64>],
    bound: u64,
) -> Result<B::Buffer> {
    let refs: Vec<&[i64]> = polys.iter().map(|p| p.as_slice()).collect();
    let batch = PolyBatch::from_bounded_signed(basis, &refs, bound);
    polys.iter_mut().for_each(|p| p.zeroize());
    let mut buffer = WipeOnDrop::new(backend, backend.upload(batch?)?);
    backend.ntt(&mut buffer)?;
    Ok(buffer.into_inner())
}

/// A fresh secret over `basis` drawn from `distribution`, in NTT form on the host (the device
/// copy is wiped).
pub(crate) fn secret_key<B: Backend>(
    backend: &B,
    noise: &mut Noise,
    basis: &Arc<RingBasis>,
    distribution: SecretDistribution,
) -> Result<PolyBatch> {
    let n = basis.degree();
    let coefficients = match distribution {
        SecretDistribution::Ternary => noise.ternary(n),
        SecretDistribution::SparseTernary { hamming_weight } => noise.sparse_ternary(n, hamming_weight),
    };
    let mut buffer = upload_signed(backend, basis, &mut [coefficients])?;
    let s = backend.download(&buffer);
    backend.zeroize(&mut buffer);
    Ok(s?)
}

/// A public key `(-a s + error_scale * e, a)` over `basis` (a prefix of the secret's basis),
/// NTT form: t for BGV, whose errors must vanish modulo t, 1 for BFV; with the seed of a.
pub(crate) fn public_pair<B: Backend>(
    backend: &B,
    noise: &mut Noise,
    secret: &PolyBatch,
    basis: &Arc<RingBasis>,
    error_scale: u32,
) -> Result<(PolyBatch, PolyBatch, Seed)> {
    let (seed, a) = noise.uniform_seeded(basis, 1)?;
    // The error, s and a s (which gives s away, a being public) are wiped on every path.
    let error = WipeOnDrop::new(backend, noise.upload_errors(backend, basis, 1, error_scale)?);
    let a_device = backend.upload(a)?;
    let s = WipeOnDrop::new(backend, backend.upload(secret.clone())?);
    let a_times_s = WipeOnDrop::new(backend, backend.mul(&a_device, &s)?);
    let b = backend.sub(&error, &a_times_s)?;
    Ok((backend.download_owned(b)?, backend.download_owned(a_device)?, seed))
}

/// Refuses, before anything is allocated, an encryption of `count` plaintexts over `basis`
/// that would not fit in memory: the two components on the device, and while they are made,
/// a device buffer and a host copy (64-bit) of each of u, e0 and e1.
pub(crate) fn ensure_encryption_fits(basis: &RingBasis, count: usize) -> Result<()> {
    let words_per_coefficient = 5 * basis.len() + 3 * 2;
    let needed = memory::bytes(&[count, basis.degree(), words_per_coefficient], 4);
    memory::ensure_fits(&format!("{count} encryptions at N = {} over {} primes", basis.degree(), basis.len()), needed)
        .map_err(|e| pimhe_ring::RingError::from(e).into())
}

/// The key of an encryptor, on the device.
pub(crate) enum EncryptionKey<Buffer> {
    Public { b: Buffer, a: Buffer },
    Secret { s: Buffer },
}

/// Completes `count` encryptions over `basis` (NTT form) whose component 0 so far holds
/// `part0`, the key-independent term (message and e0): with the public key
/// `(part0 + b u, error_scale * e1 + a u)`, u ternary; with the secret key `(part0 - a s, a)`,
/// a uniform, whose seed is returned too (a compressed encoding stores it instead of a). The
/// secret-derived buffers are wiped on every path: u and a s always, part0 and the errors e1
/// whenever they are not returned.
pub(crate) fn encrypt_with<B: Backend>(
    backend: &B,
    noise: &mut Noise,
    key: &EncryptionKey<B::Buffer>,
    basis: &Arc<RingBasis>,
    part0: B::Buffer,
    count: usize,
    error_scale: u32,
) -> Result<(Vec<B::Buffer>, Option<Seed>)> {
    let n = basis.degree();
    let mut part0 = WipeOnDrop::new(backend, part0);
    match key {
        EncryptionKey::Public { b, a } => {
            let mut u: Vec<Vec<i64>> = (0..count).map(|_| noise.ternary(n)).collect();
            let u = WipeOnDrop::new(backend, upload_signed(backend, basis, &mut u)?);
            let mut errors: Vec<Vec<i64>> = (0..count).map(|_| noise.scaled_error(n, error_scale)).collect();
            let mut part1 = WipeOnDrop::new(backend, upload_signed(backend, basis, &mut errors)?);
            backend.mac(&mut part0, &u, b)?;
            backend.mac(&mut part1, &u, a)?;
            Ok((vec![part0.into_inner(), part1.into_inner()], None))
        }
        EncryptionKey::Secret { s } => {
            let (seed, a) = noise.uniform_seeded(basis, count)?;
            let a = backend.upload(a)?;
            let a_times_s = WipeOnDrop::new(backend, backend.mul(&a, s)?);
            Ok((vec![backend.sub(&part0, &a_times_s)?, a], Some(seed)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// docs/SERIALIZATION.md's expansion: ChaCha20 keyed by the seed, Lemire's
    /// multiply-and-reject per residue, limb after limb.
    #[test]
    fn seeds_expand_as_specified() {
        let basis = RingBasis::new(1024, &pimhe_math::ntt_primes(27, 1024, 2, &[]).unwrap()).unwrap();
        let a = expand_uniform(&[0; 32], &basis, 2).unwrap();
        // The first keystream word of ChaCha20 under the zero key and nonce (RFC 7539, A.1).
        let (x, q) = (0xade0_b876u64, u64::from(basis.modulus(0).value()));
        assert!((x * q) % (1 << 32) >= ((1u64 << 32) - q) % q, "the first word is accepted");
        assert_eq!(u64::from(a.limb(0)[0]), (x * q) >> 32);
        // The expansion over a prefix of the primes is the prefix of the expansion.
        let prefix = expand_uniform(&[0; 32], &basis.prefix(1).unwrap(), 2).unwrap();
        assert_eq!(prefix.limb(0), a.limb(0));
        assert_ne!(expand_uniform(&[1; 32], &basis, 2).unwrap(), a);
    }

    #[test]
    fn encryptions_that_cannot_fit_are_refused_before_allocating() {
        let basis = RingBasis::new(1024, &pimhe_math::ntt_primes(27, 1024, 2, &[]).unwrap()).unwrap();
        assert!(ensure_encryption_fits(&basis, 1).is_ok());
        let refused = ensure_encryption_fits(&basis, usize::MAX).unwrap_err().to_string();
        assert!(
            refused.contains(&format!("{} encryptions at N = 1024 over 2 primes need about", usize::MAX)),
            "{refused}"
        );
    }
}
