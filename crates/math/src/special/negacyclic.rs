//! Exact negacyclic products modulo a special modulus through NTT-friendly wide primes.
//!
//! The paper's Q moduli admit no negacyclic NTT at N = 2^14 (see
//! [`ntt_params`](super::special_ntt_params)), so a ring product a * b mod (x^N + 1, q_i) is
//! computed here as the exact integer negacyclic product, recovered by CRT from NTT products
//! modulo primes P_j = 1 mod 2N whose product exceeds 2 N q_i^2, then reduced mod q_i.

use super::arith::WideArith;
use super::barrett::BarrettModulus;
use super::modulus::SpecialModulus;
use super::ntt::WideNtt;
use super::primes::{ntt_primes_above, PRIME_SEARCH_SEED};
use super::wide::{Wide, MAX_MODULUS_BITS};
use crate::error::{MathError, Result};

/// Width of the auxiliary primes (2^247 < P < 2^248).
const AUX_BITS: u32 = MAX_MODULUS_BITS;

/// Precomputed NTTs and CRT (Garner) constants for products modulo one special modulus.
///
/// Each coefficient c of the integer negacyclic product of residue vectors satisfies
/// |c| <= N (q-1)^2; adding K = N q^2 (a multiple of q) makes it lie in [0, 2 N q^2), so no
/// centring is needed: Garner's mixed-radix digits a_j give c + K = sum_j a_j prod_{l<j} P_l, and
/// c mod q = sum_j (a_j mod q)(prod_{l<j} P_l mod q) mod q.
///
/// ```
/// use pimhe_math::special::{NegacyclicMultiplier, SpecialModulus, Wide};
/// let q = SpecialModulus::fermat_like(146).unwrap();
/// let mul = NegacyclicMultiplier::new(q, 4).unwrap();
/// let x = vec![Wide::ZERO, Wide::ONE, Wide::ZERO, Wide::ZERO]; // x
/// let x3 = vec![Wide::ZERO, Wide::ZERO, Wide::ZERO, Wide::ONE]; // x^3
/// let c = mul.multiply(&x, &x3); // x^4 = -1
/// assert_eq!(c[0], Wide::ONE.shl_vartime(146)); // -1 = 2^146 mod 2^146 + 1
/// ```
#[derive(Clone, Debug)]
pub struct NegacyclicMultiplier {
    q: SpecialModulus,
    n: usize,
    ntts: Vec<WideNtt<BarrettModulus>>,
    /// K mod P_j.
    offset: Vec<Wide>,
    /// garner[j][l] = P_l^-1 mod P_j for l < j.
    garner: Vec<Vec<Wide>>,
    /// prod_{l<j} P_l mod q.
    radix_mod_q: Vec<Wide>,
}

impl NegacyclicMultiplier {
    /// The primes and tables for q and N (q below 2^246 so that residues fit the primes).
    pub fn new(q: SpecialModulus, n: usize) -> Result<Self> {
        let q_bits = q.value().bit_width_vartime();
        if q_bits > AUX_BITS - 2 {
            return Err(MathError::InvalidSpecial(format!(
                "{q} is too wide for exact products through {AUX_BITS}-bit primes: use g <= {}",
                AUX_BITS - 3
            )));
        }
        // prod P_j > 2^(count (AUX_BITS - 1)) must exceed 2 N q^2 < 2^(2 q_bits + log N + 1).
        let needed = 2 * q_bits + n.trailing_zeros() + 1;
        let count = needed.div_ceil(AUX_BITS - 1) as usize;
        let primes = ntt_primes_above(AUX_BITS - 1, n, count, &[])?;
        let moduli = primes.iter().map(|&p| BarrettModulus::new(p)).collect::<Result<Vec<_>>>()?;
        let ntts =
            moduli.iter().map(|p| WideNtt::for_prime(p.clone(), n, PRIME_SEARCH_SEED)).collect::<Result<Vec<_>>>()?;
        let nq = Wide::from_u64(n as u64);
        let offset = moduli
            .iter()
            .map(|p| {
                let qp = p.reduce(q.value());
                p.mul(&p.mul(&qp, &qp), &p.reduce(&nq))
            })
            .collect();
        let garner = moduli
            .iter()
            .enumerate()
            .map(|(j, pj)| {
                let exp = pj.value().wrapping_sub(&Wide::from_u64(2)); // Fermat: x^(p-2) = x^-1
                moduli[..j].iter().map(|pl| pj.pow(&pj.reduce(pl.value()), &exp)).collect()
            })
            .collect();
        let mut radix_mod_q = Vec::with_capacity(count);
        let mut acc = q.reduce(&Wide::ONE);
        for p in &moduli {
            radix_mod_q.push(acc);
            acc = q.mul(&acc, &q.reduce(p.value()));
        }
        Ok(Self { q, n, ntts, offset, garner, radix_mod_q })
    }

    /// The special modulus.
    pub fn modulus(&self) -> &SpecialModulus {
        &self.q
    }

    /// The auxiliary primes.
    pub fn primes(&self) -> Vec<Wide> {
        self.ntts.iter().map(|t| *t.modulus().value()).collect()
    }

    /// a * b mod (x^N + 1, q) for residue vectors a, b (entries in [0, q)).
    pub fn multiply(&self, a: &[Wide], b: &[Wide]) -> Vec<Wide> {
        assert!(a.len() == self.n && b.len() == self.n, "polynomials must have N coefficients");
        let residues: Vec<Vec<Wide>> = self
            .ntts
            .iter()
            .zip(&self.offset)
            .map(|(ntt, k)| {
                let mut c = ntt.multiply(a, b);
                let p = ntt.modulus();
                for x in c.iter_mut() {
                    *x = p.add(x, k);
                }
                c
            })
            .collect();
        let moduli: Vec<&BarrettModulus> = self.ntts.iter().map(|t| t.modulus()).collect();
        let mut digits = vec![Wide::ZERO; moduli.len()];
        (0..self.n)
            .map(|c| {
                for j in 0..moduli.len() {
                    let pj = moduli[j];
                    let mut v = residues[j][c];
                    for (digit, inv) in digits[..j].iter().zip(&self.garner[j]) {
                        v = pj.mul(&pj.sub(&v, &pj.reduce(digit)), inv);
                    }
                    digits[j] = v;
                }
                digits
                    .iter()
                    .zip(&self.radix_mod_q)
                    .fold(Wide::ZERO, |acc, (d, r)| self.q.add(&acc, &self.q.mul(&self.q.reduce(d), r)))
            })
            .collect()
    }
}

/// One-shot exact negacyclic product modulo a special modulus (builds the tables each call;
/// keep a [`NegacyclicMultiplier`] for repeated products).
pub fn negacyclic_mul(q: &SpecialModulus, a: &[Wide], b: &[Wide]) -> Result<Vec<Wide>> {
    if a.len() != b.len() {
        return Err(MathError::LengthMismatch { what: "second factor", expected: a.len(), got: b.len() });
    }
    Ok(NegacyclicMultiplier::new(q.clone(), a.len())?.multiply(a, b))
}
