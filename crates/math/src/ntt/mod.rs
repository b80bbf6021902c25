//! Negacyclic number-theoretic transform over `Z_q[X]/(X^N + 1)`.
//!
//! Forward: Cooley-Tukey butterflies, natural-order input, bit-reversed output. Inverse:
//! Gentleman-Sande butterflies, bit-reversed input, natural-order output, scaled by N^{-1}. No
//! reordering pass is ever made: the element-wise work in between does not care about order
//! (DRAMatic 3.2). Both use Harvey's lazy butterflies with Shoup precomputation, keeping values
//! in [0, 4q) (forward) or [0, 2q) (inverse) and reducing only once at the end, which is why
//! moduli are below 2^30.
//!
//! [`NttTable::forward`] and [`NttTable::inverse`] run on the instruction set of
//! [`Isa::active`]: the vector transforms of `vector` (AVX2, AVX-512) from N = 16 up, the
//! scalar ones here otherwise. Both give the same output, bit for bit.

#[cfg(target_arch = "x86_64")]
mod tail512;
#[cfg(target_arch = "x86_64")]
mod vector;

use crate::error::{MathError, Result};
use crate::modular::{bit_reverse, csub, Modulus};
use crate::primes::{check_degree, minimal_primitive_root};
use crate::simd::{dispatch, Isa, Kernel, Lanes};

/// Twiddle factors of one prime and one ring degree, computed once and shared.
///
/// ```
/// use pimhe_math::{Modulus, NttTable};
/// let q = Modulus::new(7681).unwrap(); // 7681 = 1 mod 32
/// let table = NttTable::new(q, 16).unwrap();
/// let original: Vec<u32> = (0..16).collect();
/// let mut a = original.clone();
/// table.forward(&mut a);
/// table.inverse(&mut a);
/// assert_eq!(a, original);
/// ```
#[derive(Debug, Clone)]
pub struct NttTable {
    modulus: Modulus,
    n: usize,
    root: u32,
    /// psi^{bitrev(k)} at index k, the order in which Cooley-Tukey stages read them.
    forward_twiddles: Vec<u32>,
    forward_shoup: Vec<u32>,
    /// psi^{-bitrev(k)} stored in the order the Gentleman-Sande stages consume them, so the
    /// inverse reads its twiddles sequentially (the "scrambled" order of DRAMatic 3.4).
    inverse_twiddles: Vec<u32>,
    inverse_shoup: Vec<u32>,
    n_inv: u32,
    n_inv_shoup: u32,
    /// psi^{-bitrev(1)} * N^{-1}: the last inverse stage folds the scaling into its twiddle.
    last_twiddle_scaled: u32,
    last_twiddle_scaled_shoup: u32,
    /// The twiddles of the vector transforms' merged last stages.
    #[cfg(target_arch = "x86_64")]
    tail: vector::TailTwiddles,
}

impl NttTable {
    /// Precomputes the tables for prime `modulus` (= 1 mod 2N) and degree `n` (a power of two).
    pub fn new(modulus: Modulus, n: usize) -> Result<Self> {
        check_degree(n)?;
        let q = modulus;
        let root = minimal_primitive_root(&q, n)?;
        let root_inv = q.inv(root)?;
        let log_n = n.trailing_zeros();

        let powers = |base: u32| {
            let mut table = vec![0u32; n];
            let mut power = 1u32;
            for i in 0..n {
                table[bit_reverse(i, log_n)] = power;
                power = q.mul(power, base);
            }
            table
        };
        let forward_twiddles = powers(root);
        let inverse_by_index = powers(root_inv);
        // Consumption order of the inverse: stages with h = N/2, N/4, ..., 1 groups, each
        // reading indices h..2h in turn.
        let mut inverse_twiddles = Vec::with_capacity(n);
        inverse_twiddles.push(0); // unused slot keeps index arithmetic simple
        let mut h = n / 2;
        while h >= 1 {
            inverse_twiddles.extend_from_slice(&inverse_by_index[h..2 * h]);
            h /= 2;
        }
        let n_inv = q.inv(n as u32 % q.value())?;
        let last_twiddle_scaled = q.mul(inverse_by_index[1], n_inv);
        let shoup_all = |t: &[u32]| t.iter().map(|&w| q.shoup(w)).collect::<Vec<_>>();
        Ok(Self {
            #[cfg(target_arch = "x86_64")]
            tail: vector::TailTwiddles::new(&q, &forward_twiddles, &inverse_twiddles),
            modulus: q,
            n,
            root,
            forward_shoup: shoup_all(&forward_twiddles),
            inverse_shoup: shoup_all(&inverse_twiddles),
            forward_twiddles,
            inverse_twiddles,
            n_inv,
            n_inv_shoup: q.shoup(n_inv),
            last_twiddle_scaled,
            last_twiddle_scaled_shoup: q.shoup(last_twiddle_scaled),
        })
    }

    /// The prime of this table.
    pub fn modulus(&self) -> &Modulus {
        &self.modulus
    }

    /// The ring degree N.
    pub fn degree(&self) -> usize {
        self.n
    }

    /// The primitive 2N-th root of unity psi the transform evaluates at.
    pub fn root(&self) -> u32 {
        self.root
    }

    /// Forward twiddles psi^{bitrev(k)}, k = 0..N (for kernels that run elsewhere, e.g. DPUs).
    pub fn forward_twiddles(&self) -> &[u32] {
        &self.forward_twiddles
    }

    /// Inverse twiddles in consumption order (index 0 unused).
    pub fn inverse_twiddles(&self) -> &[u32] {
        &self.inverse_twiddles
    }

    /// N^{-1} mod q.
    pub fn n_inv(&self) -> u32 {
        self.n_inv
    }

    fn check_len(&self, a: &[u32]) -> Result<()> {
        if a.len() == self.n {
            Ok(())
        } else {
            Err(MathError::LengthMismatch { what: "NTT input", expected: self.n, got: a.len() })
        }
    }

    /// In-place forward NTT of a polynomial with coefficients in [0, q); output in [0, q),
    /// bit-reversed order. Panics if `a.len() != N`; see [`NttTable::try_forward`].
    pub fn forward(&self, a: &mut [u32]) {
        self.forward_on(Isa::active(), a)
    }

    /// [`NttTable::forward`] on instruction set `isa` (or the best available below it).
    pub fn forward_on(&self, isa: Isa, a: &mut [u32]) {
        assert_eq!(a.len(), self.n, "NTT input length must equal the ring degree");
        dispatch(isa, Transform { table: self, a, forward: true });
    }

    /// In-place inverse NTT of a bit-reversed NTT-form polynomial with values in [0, q);
    /// output in natural order, in [0, q), scaled by N^{-1}.
    pub fn inverse(&self, a: &mut [u32]) {
        self.inverse_on(Isa::active(), a)
    }

    /// [`NttTable::inverse`] on instruction set `isa` (or the best available below it).
    pub fn inverse_on(&self, isa: Isa, a: &mut [u32]) {
        assert_eq!(a.len(), self.n, "inverse NTT input length must equal the ring degree");
        dispatch(isa, Transform { table: self, a, forward: false });
    }

    /// The scalar forward transform, the reference of the vector one.
    fn forward_scalar(&self, a: &mut [u32]) {
        let q = self.modulus.value();
        let two_q = 2 * q;
        let mut gap = self.n;
        let mut groups = 1;
        while groups < self.n {
            gap >>= 1;
            for i in 0..groups {
                let w = self.forward_twiddles[groups + i];
                let w_shoup = self.forward_shoup[groups + i];
                let (lo, hi) = a[2 * i * gap..2 * (i + 1) * gap].split_at_mut(gap);
                for (x, y) in lo.iter_mut().zip(hi.iter_mut()) {
                    // Invariant: inputs in [0, 4q); outputs in [0, 4q).
                    let u = csub(*x, two_q);
                    let v = self.modulus.mul_shoup_lazy(*y, w, w_shoup);
                    *x = u + v;
                    *y = u + two_q - v;
                }
            }
            groups <<= 1;
        }
        for x in a.iter_mut() {
            *x = csub(csub(*x, two_q), q);
        }
    }

    /// The scalar inverse transform, the reference of the vector one.
    fn inverse_scalar(&self, a: &mut [u32]) {
        let q = self.modulus.value();
        let two_q = 2 * q;
        let mut gap = 1;
        let mut groups = self.n / 2;
        let mut next_twiddle = 1;
        // All stages but the last; values stay in [0, 2q).
        while groups > 1 {
            for i in 0..groups {
                let w = self.inverse_twiddles[next_twiddle + i];
                let w_shoup = self.inverse_shoup[next_twiddle + i];
                let (lo, hi) = a[2 * i * gap..2 * (i + 1) * gap].split_at_mut(gap);
                for (x, y) in lo.iter_mut().zip(hi.iter_mut()) {
                    let u = *x;
                    let v = *y;
                    *x = csub(u + v, two_q);
                    *y = self.modulus.mul_shoup_lazy(u + two_q - v, w, w_shoup);
                }
            }
            next_twiddle += groups;
            groups >>= 1;
            gap <<= 1;
        }
        // Last stage (N >= 2 always) folds in N^{-1}.
        let (lo, hi) = a.split_at_mut(gap);
        for (x, y) in lo.iter_mut().zip(hi.iter_mut()) {
            let u = *x;
            let v = *y;
            let sum = self.modulus.mul_shoup_lazy(u + v, self.n_inv, self.n_inv_shoup);
            let diff =
                self.modulus.mul_shoup_lazy(u + two_q - v, self.last_twiddle_scaled, self.last_twiddle_scaled_shoup);
            *x = csub(sum, q);
            *y = csub(diff, q);
        }
    }

    /// [`NttTable::forward`] with a length check instead of a panic.
    pub fn try_forward(&self, a: &mut [u32]) -> Result<()> {
        self.check_len(a)?;
        self.forward(a);
        Ok(())
    }

    /// [`NttTable::inverse`] with a length check instead of a panic.
    pub fn try_inverse(&self, a: &mut [u32]) -> Result<()> {
        self.check_len(a)?;
        self.inverse(a);
        Ok(())
    }
}

/// One transform of one polynomial, for [`dispatch`].
struct Transform<'a> {
    table: &'a NttTable,
    a: &'a mut [u32],
    forward: bool,
}

impl Kernel for Transform<'_> {
    fn scalar(self) {
        if self.forward {
            self.table.forward_scalar(self.a)
        } else {
            self.table.inverse_scalar(self.a)
        }
    }

    #[inline(always)]
    fn lanes<L: Lanes>(self, lanes: L) {
        #[cfg(target_arch = "x86_64")]
        if self.table.n >= vector::MIN_DEGREE {
            return if self.forward {
                vector::forward(lanes, self.table, self.a)
            } else {
                vector::inverse(lanes, self.table, self.a)
            };
        }
        let _ = lanes;
        self.scalar()
    }
}
