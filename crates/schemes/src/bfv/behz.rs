//! The integer-only RNS tools of full-RNS BFV (Bajard, Eynard, Hasan and Zucca, "A Full RNS
//! Variant of FV like Somewhat Homomorphic Encryption Schemes", SAC 2016; seed 004): the choice
//! of the auxiliary bases, the product's plan ([`BehzPlan`]: base extension with the small
//! Montgomery reduction, the fast floor, the Shenoy-Kumaresan conversion back to q, run by
//! [`Backend::behz_multiply`], see [`pimhe_exec::behz`]), and the gamma-corrected decryption
//! scaling. Every step is integer-only, with no floating point, so the whole BFV product can run
//! on cores without an FPU.
//!
//! Bases (all NTT-friendly primes below 2^30, distinct from q, P and t):
//! - q: the ciphertext primes;
//! - B: auxiliary primes with log2(M_B) >= log2(q t N) + [`EXTRA_BITS`], where the tensor product
//!   scaled by t/q lives (see [`Behz::new`]);
//! - m_sk: one more prime, Bsk = B u {m_sk}; it lets Shenoy-Kumaresan recover the exact
//!   overflow of FastBConv from B;
//! - m~: the Montgomery prime that removes FastBConv's overflow on the way into Bsk;
//! - gamma: the decryption prime that corrects FastBConv's error in Algorithm 1.
//!
//! Lifts of a single residue (the Montgomery quotient r and the SK overflow alpha) are FastBConv
//! from a one-prime base, i.e. the representative in [0, p): non-negative, which the bounds
//! below allow for (the paper centres r; ours costs at most one extra q in the extension).

use std::sync::Arc;

use num_bigint::BigUint;
use pimhe_exec::{Backend, BehzPlan};
use pimhe_math::{ntt_primes, Modulus, RnsBase};
use pimhe_ring::RingBasis;
use zeroize::Zeroizing;

use crate::error::{Result, SchemeError};
use crate::rlwe::noise::{upload_signed, WipeOnDrop};

/// Bits of M_B beyond log2(q t N): the tensor product of extended ciphertexts is at most
/// 2N (2.01 q)^2 in absolute value, so after scaling by t/q it is below 8.1 N t q
/// (2^3.02 N t q, the bound the tests check); Shenoy-Kumaresan needs |x| < M_B. About three
/// bits for the bound, two of slack.
const EXTRA_BITS: f64 = 5.0;

/// Precomputed bases and constants for one BFV parameter set: the product's plan (owned by the
/// execution layer, whose backends run the product) and what encoding and decryption need.
#[derive(Debug)]
pub(crate) struct Behz {
    plan: BehzPlan,
    t_gamma: Arc<RingBasis>,
    t: Modulus,
    gamma: Modulus,
    /// -q^{-1} modulo t and gamma, and gamma^{-1} mod t (decryption).
    neg_q_inv_t_gamma: Vec<u64>,
    gamma_inv_t: u32,
    /// floor(q/t) modulo each prime of q, and q mod t (encoding).
    delta_q: Vec<u64>,
    q_mod_t: u64,
}

/// x mod p for every modulus of `base`, as u64 constants for [`Backend::mul_limb_constants`].
fn residues(base: &RnsBase, x: &BigUint) -> Vec<u64> {
    base.decompose(x).into_iter().map(u64::from).collect()
}

/// Per limb, the inverse of x modulo that limb's prime.
fn inverses(base: &RnsBase, x: &BigUint) -> Result<Vec<u64>> {
    base.moduli().iter().zip(base.decompose(x)).map(|(p, r)| Ok(p.inv(r)? as u64)).collect()
}

impl Behz {
    /// The auxiliary bases for ciphertext basis `q` (degree N), plaintext modulus `t`, avoiding
    /// the primes in `taken` (q, P and t).
    pub(crate) fn new(q: &Arc<RingBasis>, t: u32, taken: &[u32]) -> Result<Self> {
        let n = q.degree();
        let needed_bits = q.log_modulus() + (t as f64).log2() + (n as f64).log2() + EXTRA_BITS;
        // 30-bit primes carry more than 29 bits each: enough candidates for B, then as few as
        // reach the bound.
        let candidates = (needed_bits / 29.0).ceil() as usize;
        let aux = ntt_primes(30, n, candidates + 3, taken).map_err(|e| {
            SchemeError::InvalidParameters(format!(
                "BFV needs up to {} auxiliary 30-bit primes = 1 mod 2N = {} for its base extension: {e}",
                candidates + 3,
                2 * n
            ))
        })?;
        let (mtilde_prime, msk_prime, gamma_prime) = (aux[0], aux[1], aux[2]);
        let mut b_primes = Vec::with_capacity(candidates + 1);
        let mut bits = 0.0;
        for &p in &aux[3..] {
            if bits >= needed_bits {
                break;
            }
            b_primes.push(p);
            bits += (p as f64).log2();
        }
        let plan = BehzPlan::new(q, t, &b_primes, msk_prime, mtilde_prime)?;
        let t_gamma = RingBasis::new(n, &[t, gamma_prime])?;
        let q_rns = RnsBase::new(&q.moduli())?;
        let q_big = q_rns.product().clone();
        let (t_mod, gamma) = (*t_gamma.modulus(0), *t_gamma.modulus(1));
        let neg_q_inv_t_gamma = inverses(&RnsBase::new(&t_gamma.moduli())?, &q_big)?
            .into_iter()
            .zip(t_gamma.moduli())
            .map(|(inv, p)| p.neg(inv as u32) as u64)
            .collect();
        Ok(Self {
            plan,
            neg_q_inv_t_gamma,
            gamma_inv_t: t_mod.inv(gamma_prime % t)?,
            delta_q: residues(&q_rns, &(&q_big / t)),
            q_mod_t: residues(&RnsBase::new(&[t_mod])?, &q_big)[0],
            t: t_mod,
            gamma,
            t_gamma,
        })
    }

    /// The product's bases and constants, for [`Backend::behz_multiply`].
    pub(crate) fn plan(&self) -> &BehzPlan {
        &self.plan
    }

    /// The auxiliary primes: m~, m_sk, gamma and the primes of B.
    pub(crate) fn auxiliary_primes(&self) -> Vec<u32> {
        let plan = &self.plan;
        let mut primes = vec![plan.mtilde().modulus(0).value(), plan.msk().modulus(0).value(), self.gamma.value()];
        primes.extend(plan.b().primes());
        primes
    }

    /// round(q m / t) for each plaintext (coefficients m in [0, t)), over q in NTT form: the
    /// message as BFV carries it. This is floor(q/t) m, one constant per prime on the device,
    /// plus round([q]_t m / t), a small integer computed here; rounding instead of floor(q/t) m
    /// alone keeps the invariant noise t v - q m of a fresh encryption near t e instead of up to
    /// [q]_t t (which would eat log2(t) bits of budget).
    pub(crate) fn upload_scaled<B: Backend>(&self, backend: &B, plains: &[&[u32]]) -> Result<B::Buffer> {
        let t = self.t.value() as u64;
        let mut values: Vec<Vec<i64>> = plains.iter().map(|m| m.iter().map(|&m| m as i64).collect()).collect();
        let mut rounding: Vec<Vec<i64>> = plains
            .iter()
            .map(|m| m.iter().map(|&m| ((2 * self.q_mod_t * m as u64 + t) / (2 * t)) as i64).collect())
            .collect();
        // Both are the message in the clear: the host copies and device temporaries are wiped.
        let mut plain = upload_signed(backend, self.plan.q(), &mut values)?;
        let scaled = backend.mul_limb_constants(&plain, &self.delta_q);
        backend.zeroize(&mut plain);
        let mut scaled = scaled?;
        let mut correction = upload_signed(backend, self.plan.q(), &mut rounding)?;
        let added = backend.add_assign(&mut scaled, &correction);
        backend.zeroize(&mut correction);
        added?;
        Ok(scaled)
    }

    /// Algorithm 1 (decryption with the gamma correction): `v` = c0 + c1 s (coefficient form
    /// over q) to [round(t v / q)]_t for every coefficient, one [`Scaled`] per polynomial.
    ///
    /// Per coefficient, with t v = q M + r (r = [t v]_q centred, the invariant noise), the
    /// residues of s = floor(gamma t v / q) - alpha modulo t and gamma are gamma M + e with
    /// e = floor(gamma r / q) - alpha: removing e (the centred residue modulo gamma) and dividing by
    /// gamma modulo t gives M, exactly while |r| < q (1/2 - (L + 1)/gamma). The same e measures
    /// the noise to 30 bits: |e| = gamma |r| / q up to L + 1.
    pub(crate) fn scale_to_plain<B: Backend>(&self, backend: &B, v: &B::Buffer) -> Result<Vec<Scaled>> {
        let t = self.t;
        // Every step still carries the phase's noise (which, with the ciphertext, gives the
        // secret away): each temporary is wiped, on the device and on the host.
        let scaled = WipeOnDrop::new(backend, backend.mul_scalar(v, self.gamma.value() as u64 * t.value() as u64)?);
        let converted = WipeOnDrop::new(backend, backend.base_convert(&scaled, &self.t_gamma)?);
        let s = WipeOnDrop::new(backend, backend.mul_limb_constants(&converted, &self.neg_q_inv_t_gamma)?);
        let s = Zeroizing::new(backend.download(&s)?);
        Ok((0..s.count())
            .map(|k| {
                let mut largest_error = 0;
                let message = s
                    .poly_limb(0, k)
                    .iter()
                    .zip(s.poly_limb(1, k))
                    .map(|(&s_t, &s_gamma)| {
                        let error = self.gamma.center(s_gamma);
                        largest_error = largest_error.max(error.unsigned_abs());
                        t.mul(t.sub(s_t, t.reduce_i64(error)), self.gamma_inv_t)
                    })
                    .collect();
                Scaled { message, largest_error }
            })
            .collect())
    }

    /// Whether a [`Scaled`] had less than one bit of noise budget left, |r| > q/4 (the bound
    /// the exact measurement uses): too close to wrapping to trust its message.
    pub(crate) fn exhausted(&self, scaled: &Scaled) -> bool {
        scaled.largest_error > self.gamma.value() as u64 / 4
    }
}

/// Algorithm 1's result for one polynomial.
pub(crate) struct Scaled {
    /// [round(t v / q)]_t per coefficient.
    pub(crate) message: Vec<u32>,
    /// max |e| = gamma max |[t v]_q| / q, up to L + 1: the invariant noise, to 30 bits.
    largest_error: u64,
}

#[cfg(test)]
mod tests {
    use num_bigint::{BigInt, Sign};
    use num_integer::Integer;
    use num_traits::Signed;
    use pimhe_exec::CpuBackend;
    use pimhe_math::Sampler;
    use pimhe_ring::{PolyBatch, Representation};
    use pimhe_testkit::bigint::crt_centred;
    use pimhe_testkit::inputs::residues_at;

    use super::*;

    const N: usize = 1024;
    const T: u32 = 65537;

    fn setup(limbs: usize) -> (CpuBackend, Arc<RingBasis>, Behz) {
        let q_primes = ntt_primes(30, N, limbs, &[T]).unwrap();
        let q = RingBasis::new(N, &q_primes).unwrap();
        let mut taken = q_primes.clone();
        taken.push(T);
        let behz = Behz::new(&q, T, &taken).unwrap();
        (CpuBackend::new(Some(2)).unwrap(), q, behz)
    }

    fn product(basis: &RingBasis) -> BigInt {
        pimhe_testkit::bigint::product(&basis.primes())
    }

    /// The batch over `basis` (coefficient form) holding the integers `values`.
    fn batch_of(basis: &Arc<RingBasis>, values: &[BigInt]) -> PolyBatch {
        let mut data = Vec::with_capacity(basis.len() * values.len());
        for p in basis.primes() {
            data.extend(values.iter().map(|v| u32::try_from(v.mod_floor(&BigInt::from(p))).unwrap()));
        }
        PolyBatch::from_data(basis, 1, Representation::Coefficient, data).unwrap()
    }

    /// The integers of a batch, CRT-composed and centred by the test kit's big-integer oracle.
    fn values_of(batch: &PolyBatch) -> Vec<BigInt> {
        let primes = batch.basis().primes();
        (0..batch.degree()).map(|c| crt_centred(&residues_at(batch, 0, c), &primes)).collect()
    }

    /// N random integers in [-bound, bound).
    fn random_values(sampler: &mut Sampler, bound: &BigInt) -> Vec<BigInt> {
        let words = (bound.bits() / 32 + 2) as usize;
        (0..N)
            .map(|_| {
                let digits: Vec<u32> = (0..words).map(|_| sampler.next_u32()).collect();
                BigInt::from_slice(Sign::Plus, &digits).mod_floor(&(bound * 2)) - bound
            })
            .collect()
    }

    #[test]
    fn b_holds_the_scaled_tensor_of_every_preset_size() {
        // The tensor of extended ciphertexts is below 2N (2.01 q)^2, so t/q times it is below
        // 8.1 N t q; Shenoy-Kumaresan needs it below M_B, and B has no prime to spare.
        for (n, limbs) in [(1024, 1), (4096, 3), (8192, 6), (32768, 28)] {
            let q_primes = ntt_primes(30, n, limbs, &[T]).unwrap();
            let q = RingBasis::new(n, &q_primes).unwrap();
            let behz = Behz::new(&q, T, &[q_primes.as_slice(), &[T]].concat()).unwrap();
            let bound = product(&q) * T * n * 81u32 / 10u32;
            let m_b = product(behz.plan.b());
            assert!(m_b > bound, "N={n}: M_B has {} bits, the bound {}", m_b.bits(), bound.bits());
            let smaller = &m_b / BigInt::from(*behz.plan.b().primes().last().unwrap());
            assert!(smaller < &bound << 8u32, "N={n}: B has a prime to spare");
            let all = [q_primes, behz.auxiliary_primes(), vec![T]].concat();
            assert!(all.iter().enumerate().all(|(i, p)| !all[..i].contains(p)), "N={n}: a prime is used twice");
        }
    }

    #[test]
    fn extension_to_bsk_keeps_the_value_modulo_q_with_a_small_multiple() {
        let (backend, q, behz) = setup(3);
        let q_big = product(&q);
        let mut sampler = Sampler::from_seed_u64(1);
        let x: Vec<BigInt> = random_values(&mut sampler, &q_big).into_iter().map(|v| v.mod_floor(&q_big)).collect();
        let mut device = batch_of(&q, &x);
        backend.ntt(&mut device).unwrap();
        let mut extended = pimhe_exec::behz::extend(&backend, &behz.plan, &device).unwrap();
        backend.intt(&mut extended).unwrap();
        assert_eq!(extended.basis().primes(), behz.plan.bsk().primes());
        for (got, want) in values_of(&extended).iter().zip(&x) {
            let (u, rest) = (got - want).div_rem(&q_big);
            assert_eq!(rest, BigInt::from(0), "{got} is not {want} modulo q");
            assert!((0..=1).contains(&i32::try_from(u).unwrap()), "{got} = {want} + u q with u out of range");
        }
    }

    #[test]
    fn fast_floor_is_floor_of_t_d_over_q_minus_a_small_alpha() {
        let (backend, q, behz) = setup(3);
        let (q_big, limbs) = (product(&q), q.len() as i64);
        let mut sampler = Sampler::from_seed_u64(2);
        // As large as a tensor product gets: 2N q^2.
        let d = random_values(&mut sampler, &(&q_big * &q_big * (2 * N)));
        let floor =
            pimhe_exec::behz::fast_floor(&backend, &behz.plan, &batch_of(&q, &d), &batch_of(behz.plan.bsk(), &d))
                .unwrap();
        for (got, d) in values_of(&floor).iter().zip(&d) {
            let alpha = (d * T).div_floor(&q_big) - got;
            assert!((0..limbs).contains(&i64::try_from(&alpha).unwrap()), "alpha {alpha} for D = {d}");
        }
    }

    #[test]
    fn shenoy_kumaresan_recovers_the_exact_value_modulo_q() {
        let (backend, q, behz) = setup(4);
        let q_big = product(&q);
        let mut sampler = Sampler::from_seed_u64(3);
        let x = random_values(&mut sampler, &(product(behz.plan.b()) / 2));
        let converted = pimhe_exec::behz::to_q(&backend, &behz.plan, &batch_of(behz.plan.bsk(), &x)).unwrap();
        assert_eq!(converted.basis().primes(), q.primes());
        for (got, x) in values_of(&converted).iter().zip(&x) {
            assert_eq!((got - x).mod_floor(&q_big), BigInt::from(0), "{got} differs from {x} modulo q");
        }
    }

    #[test]
    fn gamma_corrected_scaling_rounds_t_v_over_q_and_measures_the_noise() {
        let (backend, q, behz) = setup(3);
        let (q_big, t_big) = (product(&q), BigInt::from(T));
        let gamma = BigInt::from(behz.gamma.value());
        let mut sampler = Sampler::from_seed_u64(4);
        let delta = &q_big / T;
        // Polynomial 0: v = delta m + e with |e| below delta / 8, so |[t v]_q| < q / 4 and
        // rounding is unambiguous. Polynomial 1: v uniform modulo q (noise of every size).
        let errors = random_values(&mut sampler, &(&delta / 8));
        let quiet: Vec<BigInt> =
            errors.into_iter().map(|e| (&delta * BigInt::from(sampler.next_u32() % T) + e).mod_floor(&q_big)).collect();
        let uniform: Vec<BigInt> =
            random_values(&mut sampler, &q_big).into_iter().map(|v| v.mod_floor(&q_big)).collect();
        let mut batch = batch_of(&q, &quiet);
        batch = PolyBatch::concat(&[batch, batch_of(&q, &uniform)]).unwrap();
        let scaled = behz.scale_to_plain(&backend, &batch).unwrap();
        for (k, v) in [quiet, uniform].iter().enumerate() {
            let mut largest_noise = BigInt::from(0);
            for (c, v) in v.iter().enumerate() {
                let noise = pimhe_testkit::bigint::centre_big(&(v * T), &q_big);
                let rounded = (v * T * 2u32 + &q_big).div_floor(&(&q_big * 2u32)).mod_floor(&t_big);
                // Algorithm 1 is exact below q (1/2 - (L + 1)/gamma); 2^-20 of margin is plenty.
                let magnitude = noise.abs();
                if &magnitude * 2u32 < &q_big - (&q_big >> 20) {
                    assert_eq!(BigInt::from(scaled[k].message[c]), rounded, "k={k} v={v}");
                }
                largest_noise = largest_noise.max(magnitude);
            }
            let estimate = BigInt::from(scaled[k].largest_error);
            let exact = (&gamma * &largest_noise).div_floor(&q_big);
            assert!((estimate - &exact).abs() <= BigInt::from(q.len() + 2), "k={k}: noise {exact}");
            assert_eq!(behz.exhausted(&scaled[k]), largest_noise * 4u32 > q_big, "k={k}");
        }
        assert_eq!((behz.exhausted(&scaled[0]), behz.exhausted(&scaled[1])), (false, true));
    }
}
