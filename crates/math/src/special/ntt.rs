//! A negacyclic NTT on wide words: Cooley-Tukey forward (bit-reversed output, Algorithm 7 of
//! the CE-RAM paper) and Gentleman-Sande inverse, over any [`WideArith`] modulus: Barrett for
//! the extended-base primes, the special reduction for 2^g + 1 where a root exists.

use super::arith::WideArith;
use super::barrett::BarrettModulus;
use super::modulus::SpecialModulus;
use super::ntt_params::{prime_ntt_params, special_ntt_params, NttParams};
use super::primes::check_wide_degree;
use super::wide::Wide;
use crate::error::{MathError, Result};
use crate::modular::bit_reverse;

/// Twiddles and constants for one modulus and degree N.
///
/// ```
/// use pimhe_math::special::{BarrettModulus, Wide, WideArith, WideNtt};
/// let p = BarrettModulus::new(Wide::from_u64(7681)).unwrap();
/// let ntt = WideNtt::for_prime(p, 8, 1).unwrap();
/// // x * x^7 = x^8 = -1 in Z_p[x]/(x^8 + 1).
/// let mut a = vec![Wide::ZERO; 8];
/// let mut b = vec![Wide::ZERO; 8];
/// a[1] = Wide::ONE;
/// b[7] = Wide::ONE;
/// let c = ntt.multiply(&a, &b);
/// assert_eq!(c[0], Wide::from_u64(7680));
/// ```
#[derive(Clone, Debug)]
pub struct WideNtt<M: WideArith> {
    modulus: M,
    n: usize,
    /// psi^bitrev(k).
    psi_br: Vec<Wide>,
    /// psi^-bitrev(k).
    psi_inv_br: Vec<Wide>,
    n_inv: Wide,
}

impl WideNtt<BarrettModulus> {
    /// The table for a prime p = 1 mod 2N (root drawn with `seed`).
    pub fn for_prime(p: BarrettModulus, n: usize, seed: u64) -> Result<Self> {
        let params = prime_ntt_params(&p, n, seed)?;
        Self::new(p, &params)
    }
}

impl WideNtt<SpecialModulus> {
    /// The table for a special modulus where a root exists (2^g + 1 with N | g or N | 2g, or
    /// a Fermat prime); the error of [`special_ntt_params`] otherwise.
    pub fn for_special(q: SpecialModulus, n: usize) -> Result<Self> {
        let params = special_ntt_params(&q, n)?;
        Self::new(q, &params)
    }
}

impl<M: WideArith> WideNtt<M> {
    /// A table from root data; checks psi^N = -1 and that the modulus is odd.
    pub fn new(modulus: M, params: &NttParams) -> Result<Self> {
        let n = params.n;
        check_wide_degree(n)?;
        let m = *modulus.modulus();
        let minus_one = m.wrapping_sub(&Wide::ONE);
        let psi = modulus.reduce(&params.psi);
        if !bool::from(m.is_odd()) || modulus.pow(&psi, &Wide::from_u64(n as u64)) != minus_one {
            return Err(MathError::NotNttFriendlyWide {
                modulus: m.to_string_radix_vartime(10),
                n,
                reason: "the given psi does not satisfy psi^N = -1 (or the modulus is even)".into(),
            });
        }
        let psi_inv = modulus.pow(&psi, &Wide::from_u64(2 * n as u64 - 1));
        let log_n = n.trailing_zeros();
        let mut pows = Vec::with_capacity(n);
        let mut inv_pows = Vec::with_capacity(n);
        let (mut a, mut b) = (modulus.reduce(&Wide::ONE), modulus.reduce(&Wide::ONE));
        for _ in 0..n {
            pows.push(a);
            inv_pows.push(b);
            a = modulus.mul(&a, &psi);
            b = modulus.mul(&b, &psi_inv);
        }
        let psi_br = (0..n).map(|k| pows[bit_reverse(k, log_n)]).collect();
        let psi_inv_br = (0..n).map(|k| inv_pows[bit_reverse(k, log_n)]).collect();
        // 2^-1 = (m + 1) / 2 for odd m; N^-1 = (2^-1)^log N.
        let half = m.wrapping_add(&Wide::ONE).shr_vartime(1);
        let n_inv = modulus.pow(&half, &Wide::from_u64(log_n as u64));
        Ok(Self { modulus, n, psi_br, psi_inv_br, n_inv })
    }

    /// The modulus.
    pub fn modulus(&self) -> &M {
        &self.modulus
    }

    /// The degree N.
    pub fn degree(&self) -> usize {
        self.n
    }

    /// In-place forward negacyclic NTT (natural order in, bit-reversed order out).
    pub fn forward(&self, a: &mut [Wide]) {
        assert_eq!(a.len(), self.n, "polynomial length must be N");
        let m = &self.modulus;
        let mut t = self.n;
        let mut groups = 1;
        while groups < self.n {
            t /= 2;
            for i in 0..groups {
                let s = &self.psi_br[groups + i];
                let j1 = 2 * i * t;
                for j in j1..j1 + t {
                    let u = a[j];
                    let v = m.mul(&a[j + t], s);
                    a[j] = m.add(&u, &v);
                    a[j + t] = m.sub(&u, &v);
                }
            }
            groups *= 2;
        }
    }

    /// In-place inverse negacyclic NTT (bit-reversed order in, natural order out), including
    /// the scaling by N^-1.
    pub fn inverse(&self, a: &mut [Wide]) {
        assert_eq!(a.len(), self.n, "polynomial length must be N");
        let m = &self.modulus;
        let mut t = 1;
        let mut groups = self.n;
        while groups > 1 {
            let h = groups / 2;
            for i in 0..h {
                let s = &self.psi_inv_br[h + i];
                let j1 = 2 * i * t;
                for j in j1..j1 + t {
                    let u = a[j];
                    let v = a[j + t];
                    a[j] = m.add(&u, &v);
                    a[j + t] = m.mul(&m.sub(&u, &v), s);
                }
            }
            t *= 2;
            groups = h;
        }
        for x in a.iter_mut() {
            *x = m.mul(x, &self.n_inv);
        }
    }

    /// a * b in Z_m[x]/(x^N + 1) (inputs and output in natural order, residues in [0, m)).
    pub fn multiply(&self, a: &[Wide], b: &[Wide]) -> Vec<Wide> {
        let (mut fa, mut fb) = (a.to_vec(), b.to_vec());
        self.forward(&mut fa);
        self.forward(&mut fb);
        for (x, y) in fa.iter_mut().zip(&fb) {
            *x = self.modulus.mul(x, y);
        }
        self.inverse(&mut fa);
        fa
    }
}
