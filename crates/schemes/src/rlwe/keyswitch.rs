//! Key switching, shared by every scheme (BGV, BFV, CKKS): turns a component `c` that decrypts under
//! a source secret `s'` (s^2 for relinearization, a rotated s for rotations) into a pair
//! `(c0', c1')` with `c0' + c1' s ~ c s'`, which the caller adds to its ciphertext.
//!
//! # API
//!
//! - [`KeySwitchBasis::new`]`(key_basis, data_primes, dnum)`: `key_basis` holds the `data_primes`
//!   data primes q_0..q_{L-1} first, then the special primes whose product is P; the data
//!   primes are grouped into `dnum` digits of consecutive primes.
//! - [`SwitchingKey::generate`]`(backend, basis, noise, secret, source, error_scale)`: the key from
//!   `source` (s') to `secret` (s), both over the key basis in NTT form on the device. One
//!   pair per digit j, `(b_j, a_j) = (-a_j s + error_scale * e_j + P g_j s', a_j)` with `g_j` 1
//!   modulo the primes of digit j and 0 modulo the other data primes. `error_scale` is t for
//!   BGV (errors must vanish mod t) and 1 for BFV.
//! - [`relinearization_key`]`(backend, basis, noise, secret, error_scale)`: the key from s^2 to
//!   s, for both schemes' relinearization.
//! - [`SwitchingKey::upload`] puts the key on a backend ([`DeviceSwitchingKey`]).
//! - [`DeviceSwitchingKey::switch`]`(backend, basis, c, plain_modulus)`: `c` in NTT form over a
//!   prefix q_0..q_l of the data primes (any level) to `(c0', c1')` over the same primes, NTT
//!   form. The division by P drops the digits' noise; `plain_modulus = Some(t)` (BGV) makes it
//!   exact modulo t, so `c0' + c1' s = c s' + t e` (no message factor); `None` (BFV) gives
//!   `c s' + e`, e small.
//!
//! - [`KeySwitchBasis::decompose`] and [`DeviceSwitchingKey::switch_decomposed`] split the switch
//!   in two for hoisting: the decomposition (ModUp) of `c` is made once and reused by the switches
//!   of several keys, each applied after an automorphism of the decomposed digits (Halevi and
//!   Shoup's hoisted rotations; an automorphism commutes with the per-coefficient base
//!   conversion up to the multiple of Q_j it adds, which the switch tolerates anyway). They are
//!   the backend's [`Backend::mod_up`] and [`Backend::key_switch_decomposed`] (which maps the
//!   digits itself, so a backend can permute them on the fly instead of copying them).
//!
//! - [`DeviceSwitchingKey::switch_decomposed_lazy`] stops before the division by P, leaving the
//!   pair over the extended basis ([`KeySwitchBasis::extended`]) for callers that add several
//!   up and divide once ([`KeySwitchBasis::mod_down`]; double hoisting, [`super::lazy`]).
//!
//! Keys are made at the top level and work at every level (the switch uses the key's limbs of
//! the primes it needs).

use std::sync::Arc;

use pimhe_exec::{Backend, KeySwitchPlan};
use pimhe_math::Modulus;
use pimhe_ring::{PolyBatch, RingBasis};

use rayon::prelude::*;
use zeroize::Zeroizing;

use crate::error::{Result, SchemeError};
use crate::rlwe::noise::{expand_uniform, upload_bounded, Noise, Seed, WipeOnDrop};

/// The primes of key switching and how the data primes are grouped into digits.
#[derive(Debug)]
pub(crate) struct KeySwitchBasis {
    key_basis: Arc<RingBasis>,
    /// Number of data primes L (the first L limbs of the key basis).
    data: usize,
    /// The data-prime limbs of each digit: digit j is `digits[j].0 .. digits[j].1`.
    digits: Vec<(usize, usize)>,
    /// P mod q_i for every data prime.
    p_mod_data: Vec<u32>,
    /// Per level, the bases a switch at that level works over.
    levels: Vec<LevelBases>,
}

/// At one level l: q_0..q_l followed by the special primes, and the primes of each digit that
/// is not empty at this level.
#[derive(Debug)]
struct LevelBases {
    extended: Arc<RingBasis>,
    digits: Vec<Arc<RingBasis>>,
}

impl KeySwitchBasis {
    /// Groups the first `data` primes of `key_basis` into `dnum` digits of at most
    /// alpha = ceil(L / dnum) consecutive primes (sizes differ by one at most); the remaining
    /// primes of `key_basis` are the special primes. Needs 1 <= dnum <= L and at least alpha
    /// special primes (P must be about as large as a digit, or the switch adds the digit's
    /// size to the noise).
    pub(crate) fn new(key_basis: &Arc<RingBasis>, data: usize, dnum: usize) -> Result<Self> {
        let special = key_basis.len().saturating_sub(data);
        if data == 0 || special == 0 {
            return Err(SchemeError::KeySwitchingUnavailable(format!(
                "key switching needs at least one data prime and one special prime; got {data} data and {special} special"
            )));
        }
        if dnum == 0 || dnum > data {
            return Err(SchemeError::InvalidParameters(format!(
                "dnum = {dnum} digits is not possible with {data} data primes; allowed 1..={data}"
            )));
        }
        let alpha = data.div_ceil(dnum);
        if special < alpha {
            return Err(SchemeError::InvalidParameters(format!(
                "dnum = {dnum} makes digits of {alpha} of the {data} data primes, so the special modulus needs at least \
                 {alpha} primes; got {special} (use more special primes or a larger dnum)"
            )));
        }
        // Exactly dnum digits, balanced: the first L mod dnum digits take one prime more.
        let (small, larger) = (data / dnum, data % dnum);
        let digits: Vec<(usize, usize)> =
            (0..dnum).map(|j| (j * small + j.min(larger), (j + 1) * small + (j + 1).min(larger))).collect();
        let special_basis = key_basis.select(&(data..key_basis.len()).collect::<Vec<_>>())?;
        let levels = (0..data)
            .map(|level| {
                let extended = key_basis.prefix(level + 1)?.concat(&special_basis)?;
                let digits = digits
                    .iter()
                    .filter(|&&(start, _)| start <= level)
                    .map(|&(start, end)| key_basis.select(&(start..end.min(level + 1)).collect::<Vec<_>>()))
                    .collect::<pimhe_ring::Result<Vec<_>>>()?;
                Ok(LevelBases { extended, digits })
            })
            .collect::<Result<Vec<_>>>()?;
        let p_mod_data = (0..data)
            .map(|i| {
                let q = key_basis.modulus(i);
                (data..key_basis.len())
                    .fold(1u32, |acc, j| q.mul(acc, q.reduce_u64(key_basis.modulus(j).value() as u64)))
            })
            .collect();
        Ok(Self { key_basis: key_basis.clone(), data, digits, p_mod_data, levels })
    }

    /// Number of digits (dnum): the pairs of a switching key.
    pub(crate) fn digit_count(&self) -> usize {
        self.digits.len()
    }

    /// The basis switching keys are made over: the data primes, then the special primes.
    pub(crate) fn key_basis(&self) -> &Arc<RingBasis> {
        &self.key_basis
    }

    /// The level of a component over `basis`: its primes must be q_0..q_l of the data primes.
    fn level_of(&self, basis: &RingBasis) -> Result<usize> {
        let len = basis.len();
        if len == 0 || len > self.data || basis.primes()[..] != self.key_basis.primes()[..len] {
            return Err(SchemeError::InvalidParameters(format!(
                "key switching needs a component over a prefix of the data primes {:?}; got {:?}",
                &self.key_basis.primes()[..self.data],
                basis.primes()
            )));
        }
        Ok(len - 1)
    }
}

/// The digits of a component `c` at some level, each extended (ModUp) to the level's primes and
/// the special primes, NTT form: the part of a key switch that does not depend on the key.
pub(crate) struct Decomposition<B: Backend> {
    pub(crate) level: usize,
    pub(crate) digits: Vec<B::Buffer>,
}

impl KeySwitchBasis {
    /// ModUp of every digit of `c` (NTT form over a prefix of the data primes): the backend's
    /// [`Backend::mod_up`] with the plan of a switch at `c`'s level.
    pub(crate) fn decompose<B: Backend>(&self, backend: &B, c: &B::Buffer) -> Result<Decomposition<B>> {
        let level = self.level_of(&backend.shape(c).basis)?;
        let digits = backend.mod_up(c, &self.plan(level, None))?;
        Ok(Decomposition { level, digits })
    }

    /// The basis a switch of a component over `basis` (a prefix of the data primes) works
    /// over: its primes followed by the special primes.
    pub(crate) fn extended(&self, basis: &RingBasis) -> Result<&Arc<RingBasis>> {
        Ok(&self.levels[self.level_of(basis)?].extended)
    }

    /// The division by P of a sum over an extended basis ([`KeySwitchBasis::extended`]), back to
    /// the component's primes: the ModDown a lazy switch left out.
    pub(crate) fn mod_down<B: Backend>(
        &self,
        backend: &B,
        sum: &B::Buffer,
        plain_modulus: Option<Modulus>,
    ) -> Result<B::Buffer> {
        Ok(backend.mod_down(sum, self.key_basis.len() - self.data, plain_modulus)?)
    }

    /// The bases of a switch at `level`.
    fn plan(&self, level: usize, plain_modulus: Option<Modulus>) -> KeySwitchPlan<'_> {
        let bases = &self.levels[level];
        KeySwitchPlan { digits: &bases.digits, extended: &bases.extended, plain_modulus }
    }
}

/// A switching key on the host: one `(b_j, a_j)` pair per digit over the key basis, NTT form,
/// and the seed each a_j was expanded from where it is known (a generated key, or one loaded
/// from its compressed encoding; not one loaded from its full encoding).
#[derive(Clone)]
pub(crate) struct SwitchingKey {
    pub(crate) pairs: Vec<(PolyBatch, PolyBatch)>,
    pub(crate) seeds: Option<Vec<Seed>>,
}

impl SwitchingKey {
    /// The key from `source` (s') to `secret` (s); see the module documentation. The digits
    /// are made in parallel: their randomness is drawn first, in digit order (the seed of a_j,
    /// then e_j), so the key is the same on any number of threads.
    pub(crate) fn generate<B: Backend>(
        backend: &B,
        basis: &KeySwitchBasis,
        noise: &mut Noise,
        secret: &B::Buffer,
        source: &B::Buffer,
        error_scale: u32,
    ) -> Result<Self> {
        let key_basis = &basis.key_basis;
        let draws: Vec<(Seed, Zeroizing<Vec<i64>>)> = basis
            .digits
            .iter()
            .map(|_| (noise.fresh_seed(), Zeroizing::new(noise.scaled_error(key_basis.degree(), error_scale))))
            .collect();
        let bound = noise.error_bound(error_scale);
        // -s once per key, so that -a_j s is one multiply-accumulate of a_j as it is sampled.
        let minus_s = WipeOnDrop::new(backend, backend.neg(secret)?);
        let digits = draws
            .into_par_iter()
            .zip(&basis.digits)
            .map(|((seed, mut error), &(start, end))| {
                let a = backend.upload(expand_uniform(&seed, key_basis, 1)?)?;
                // b_j = e_j - a_j s + P g_j s', accumulated in place: e_j, then a_j (-s) by one
                // multiply-accumulate, then P g_j s'. e_j and e_j - a_j s + ... are secret until
                // the last term, and P g_j s' always: they are wiped on every path.
                let mut b = WipeOnDrop::new(
                    backend,
                    upload_bounded(backend, key_basis, std::slice::from_mut(&mut *error), bound)?,
                );
                backend.mac(&mut b, &a, &minus_s)?;
                // P g_j s' is P s' on the limbs of digit j and zero on every other limb (the
                // special primes included), computed on the device: s' never leaves it.
                let constants: Vec<u64> = (0..key_basis.len())
                    .map(|limb| if (start..end).contains(&limb) { u64::from(basis.p_mod_data[limb]) } else { 0 })
                    .collect();
                let term = WipeOnDrop::new(backend, backend.mul_limb_constants(source, &constants)?);
                backend.add_assign(&mut b, &term)?;
                // The whole b_j is the public half of the key: no longer wiped.
                Ok(((backend.download_owned(b.into_inner())?, backend.download_owned(a)?), seed))
            })
            .collect::<Result<Vec<_>>>()?;
        let (pairs, seeds) = digits.into_iter().unzip();
        Ok(Self { pairs, seeds: Some(seeds) })
    }

    /// Size in bytes of the key material.
    pub(crate) fn size_bytes(&self) -> usize {
        self.pairs.iter().map(|(b, a)| 4 * (b.data().len() + a.data().len())).sum()
    }

    /// The key on `backend`.
    pub(crate) fn upload<B: Backend>(&self, backend: &B) -> Result<DeviceSwitchingKey<B>> {
        let pairs = self
            .pairs
            .iter()
            .map(|(b, a)| Ok((backend.upload(b.clone())?, backend.upload(a.clone())?)))
            .collect::<Result<Vec<_>>>()?;
        Ok(DeviceSwitchingKey { pairs })
    }
}

/// The relinearization key of `secret` (NTT form over the key basis): the switching key from
/// s^2 to s, `error_scale` as in [`SwitchingKey::generate`] (t for BGV, 1 for BFV). s and s^2
/// live on the device only while the key is made, and are wiped on every path.
pub(crate) fn relinearization_key<B: Backend>(
    backend: &B,
    basis: &KeySwitchBasis,
    noise: &mut Noise,
    secret: &PolyBatch,
    error_scale: u32,
) -> Result<SwitchingKey> {
    let s = WipeOnDrop::new(backend, backend.upload(secret.clone())?);
    let s_squared = WipeOnDrop::new(backend, backend.mul(&s, &s)?);
    SwitchingKey::generate(backend, basis, noise, &s, &s_squared, error_scale)
}

/// A switching key resident on a backend.
pub(crate) struct DeviceSwitchingKey<B: Backend> {
    pairs: Vec<(B::Buffer, B::Buffer)>,
}

impl<B: Backend> DeviceSwitchingKey<B> {
    /// `(c0', c1')` with `c0' + c1' s ~ c s'`; see the module documentation.
    pub(crate) fn switch(
        &self,
        backend: &B,
        basis: &KeySwitchBasis,
        c: &B::Buffer,
        plain_modulus: Option<Modulus>,
    ) -> Result<(B::Buffer, B::Buffer)> {
        let plan = basis.plan(basis.level_of(&backend.shape(c).basis)?, plain_modulus);
        Ok(backend.key_switch(c, &self.pairs, &plan)?)
    }

    /// The switch of sigma_k(c), sigma_k: X -> X^k (`galois_element = Some(k)`), or of `c`
    /// itself (`None`), given the decomposition of `c` ([`KeySwitchBasis::decompose`]): the
    /// inner product of the digits, mapped by sigma_k, with the key's pairs and the ModDown, in
    /// one backend call ([`Backend::key_switch_decomposed`]). The same result as
    /// [`DeviceSwitchingKey::switch`] of that component, up to the tolerated multiples of Q_j in
    /// the digits.
    pub(crate) fn switch_decomposed(
        &self,
        backend: &B,
        basis: &KeySwitchBasis,
        decomposition: &Decomposition<B>,
        galois_element: Option<usize>,
        plain_modulus: Option<Modulus>,
    ) -> Result<(B::Buffer, B::Buffer)> {
        let plan = basis.plan(decomposition.level, plain_modulus);
        Ok(backend.key_switch_decomposed(&decomposition.digits, &self.pairs, galois_element, &plan)?)
    }

    /// [`DeviceSwitchingKey::switch_decomposed`] without the division by P: the pair over the
    /// extended basis, P times the switch plus the digits' noise
    /// ([`Backend::key_switch_decomposed_lazy`]).
    pub(crate) fn switch_decomposed_lazy(
        &self,
        backend: &B,
        basis: &KeySwitchBasis,
        decomposition: &Decomposition<B>,
        galois_element: Option<usize>,
    ) -> Result<(B::Buffer, B::Buffer)> {
        let plan = basis.plan(decomposition.level, None);
        Ok(backend.key_switch_decomposed_lazy(&decomposition.digits, &self.pairs, galois_element, &plan)?)
    }
}

#[cfg(test)]
mod tests {
    use num_bigint::BigInt;
    use pimhe_exec::CpuBackend;
    use pimhe_math::{ntt_primes, RnsBase, Sampler};

    use super::*;
    use crate::rlwe::noise::upload_signed;

    const T: u32 = 65537;

    /// c0' + c1' s - c s' over the primes of c, every coefficient centred (big-integer CRT).
    fn switch_error(
        backend: &CpuBackend,
        (c0, c1): &(PolyBatch, PolyBatch),
        c: &PolyBatch,
        s: &PolyBatch,
        source: &PolyBatch,
    ) -> Vec<BigInt> {
        let mut d = c0.clone();
        backend.mac(&mut d, c1, s).unwrap();
        let c_source = backend.mul(c, source).unwrap();
        d = backend.sub(&d, &c_source).unwrap();
        backend.intt(&mut d).unwrap();
        let rns = RnsBase::new(&d.basis().moduli()).unwrap();
        (0..d.degree())
            .map(|i| {
                let residues: Vec<u32> = (0..d.basis().len()).map(|limb| d.limb(limb)[i]).collect();
                rns.compose_centered(&residues).unwrap()
            })
            .collect()
    }

    /// For every grouping of the data primes and every level, the switched pair decrypts under
    /// s to c s' plus an error far below Q, divisible by t when the BGV correction is asked for.
    #[test]
    fn switched_pair_decrypts_to_c_times_the_source_secret() {
        let backend = CpuBackend::new(Some(2)).unwrap();
        let n = 1024;
        let data = 5usize;
        for dnum in [5, 3, 2, 1] {
            let alpha = data.div_ceil(dnum);
            // Special primes first in the search (the largest); the key basis puts them last.
            let primes = ntt_primes(30, n, data + alpha, &[T]).unwrap();
            let key_basis = RingBasis::new(n, &[&primes[alpha..], &primes[..alpha]].concat()).unwrap();
            let basis = KeySwitchBasis::new(&key_basis, data, dnum).unwrap();
            let mut noise = Noise::new(Sampler::from_seed_u64(dnum as u64));
            let s = upload_signed(&backend, &key_basis, &mut [noise.ternary(n)]).unwrap();
            let source = upload_signed(&backend, &key_basis, &mut [noise.ternary(n)]).unwrap();
            for (scale, plain) in [(T, Some(Modulus::new(T as u64).unwrap())), (1, None)] {
                let key = SwitchingKey::generate(&backend, &basis, &mut noise, &s, &source, scale).unwrap();
                let device = key.upload(&backend).unwrap();
                for level in [data - 1, 2, 0] {
                    let level_basis = key_basis.prefix(level + 1).unwrap();
                    let c = noise.uniform_seeded(&level_basis, 2).unwrap().1;
                    let pair = device.switch(&backend, &basis, &c, plain).unwrap();
                    assert_eq!(pair.0.basis().primes(), level_basis.primes());
                    let errors = switch_error(&backend, &pair, &c, &s, &source);
                    let largest = errors.iter().map(|e| e.bits()).max().unwrap();
                    // The switch adds about log2(scale) + 9 bits (at most 25 here); a wrong
                    // switch leaves values spread over all of Q_l, of 30 (level + 1) - 1 bits
                    // (primes of 30 bits), so the bound sits below that at every level, level 0
                    // with scale t included.
                    let bound = (u64::from(32 - scale.leading_zeros()) + 12).min(30 * (level as u64 + 1) - 2);
                    assert!(largest < bound, "dnum {dnum} level {level} scale {scale}: error of {largest} bits");
                    if plain.is_some() {
                        assert!(errors.iter().all(|e| (e % T) == BigInt::from(0)), "error not divisible by t");
                    }
                }
            }
        }
    }

    #[test]
    fn bad_digits_and_bases_are_refused() {
        let backend = CpuBackend::new(Some(1)).unwrap();
        let primes = ntt_primes(30, 64, 4, &[T]).unwrap();
        let key_basis = RingBasis::new(64, &primes).unwrap();
        for dnum in [0, 4] {
            let err = KeySwitchBasis::new(&key_basis, 3, dnum).unwrap_err();
            assert!(err.to_string().contains("allowed 1..=3"), "{err}");
        }
        assert!(matches!(KeySwitchBasis::new(&key_basis, 4, 1), Err(SchemeError::KeySwitchingUnavailable(_))));
        // One digit of 3 primes needs 3 special primes, not 1.
        let err = KeySwitchBasis::new(&key_basis, 3, 1).unwrap_err();
        assert!(err.to_string().contains("at least 3 primes; got 1"), "{err}");
        let basis = KeySwitchBasis::new(&key_basis, 3, 3).unwrap();
        let mut noise = Noise::new(Sampler::from_seed_u64(1));
        let s = upload_signed(&backend, &key_basis, &mut [noise.ternary(64)]).unwrap();
        let key = SwitchingKey::generate(&backend, &basis, &mut noise, &s, &s, 1).unwrap().upload(&backend).unwrap();
        // Not a prefix of the data primes: the special prime, or q_1 alone.
        for limbs in [vec![3], vec![1]] {
            let c = noise.uniform_seeded(&key_basis.select(&limbs).unwrap(), 1).unwrap().1;
            let err = key.switch(&backend, &basis, &c, None).err().unwrap();
            assert!(err.to_string().contains("prefix of the data primes"), "{err}");
        }
    }
}
