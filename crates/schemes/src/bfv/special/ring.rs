//! Polynomials over bases of wide moduli: N residues per modulus, limb-major like the rest of
//! pimhe, and the ring operations BFV needs on them (sums, products in Z_m[X]/(X^N + 1),
//! products by constants, signed small polynomials in, uniform polynomials).

use num_bigint::BigUint;
use pimhe_math::special::{
    wide::{select, wide_from_u64_words, wide_to_u64_words},
    BarrettModulus, NegacyclicMultiplier, SpecialModulus, Wide, WideArith, WideNtt,
};
use pimhe_math::Sampler;
use rayon::prelude::*;

use super::params::ProductMethod;
use crate::error::Result;

/// Seed of the root search of the wide NTT tables (public constants, not secrets).
const ROOT_SEED: u64 = 0x0053_5045_4349_414c;

/// A wide word from a big integer below 2^256 (precomputation only).
pub(crate) fn to_wide(x: &BigUint) -> Wide {
    wide_from_u64_words(&x.to_u64_digits())
}

/// A big integer from a wide word (precomputation and tests).
pub(crate) fn to_big(x: &Wide) -> BigUint {
    wide_to_u64_words(x).iter().rev().fold(BigUint::from(0u32), |acc, &w| (acc << 64u32) + w)
}

/// One modulus of a basis: a special modulus reduced by shifts and adds, or any modulus reduced
/// by Barrett (the extended base, t, gamma, and Q itself when the optimizations are off).
#[derive(Debug, Clone)]
pub(crate) enum WideModulus {
    Special(SpecialModulus),
    Barrett(BarrettModulus),
}

impl WideModulus {
    fn arith(&self) -> &dyn WideArith {
        match self {
            WideModulus::Special(m) => m,
            WideModulus::Barrett(m) => m,
        }
    }

    /// The modulus value.
    pub(crate) fn value(&self) -> &Wide {
        self.arith().modulus()
    }

    /// (a + b) mod m.
    pub(crate) fn add(&self, a: &Wide, b: &Wide) -> Wide {
        self.arith().add(a, b)
    }

    /// (a - b) mod m.
    pub(crate) fn sub(&self, a: &Wide, b: &Wide) -> Wide {
        self.arith().sub(a, b)
    }

    /// (a * b) mod m.
    pub(crate) fn mul(&self, a: &Wide, b: &Wide) -> Wide {
        self.arith().mul(a, b)
    }

    /// Any 256-bit word reduced modulo m.
    pub(crate) fn reduce(&self, x: &Wide) -> Wide {
        self.arith().reduce(x)
    }

    /// A signed integer modulo m.
    pub(crate) fn signed(&self, x: i64) -> Wide {
        let magnitude = self.reduce(&Wide::from_u64(x.unsigned_abs()));
        // Both are computed and one selected by a mask: x is secret for keys and errors.
        select(x < 0, &self.arith().neg(&magnitude), &magnitude)
    }

    /// A big integer modulo m (precomputation only).
    pub(crate) fn residue_of(&self, x: &BigUint) -> Wide {
        to_wide(&(x % to_big(self.value())))
    }
}

/// How ring products modulo one modulus are computed.
#[derive(Debug, Clone)]
enum ProductTable {
    /// An NTT modulo a prime of the extended base.
    Prime(Box<WideNtt<BarrettModulus>>),
    /// An NTT directly modulo a special modulus (where one exists).
    Special(Box<WideNtt<SpecialModulus>>),
    /// The exact integer product through auxiliary primes, reduced modulo a special modulus.
    Exact(Box<NegacyclicMultiplier>),
}

/// The moduli of one RNS basis with their product tables.
#[derive(Debug, Clone)]
pub(crate) struct WideBasis {
    moduli: Vec<WideModulus>,
    products: Vec<ProductTable>,
    degree: usize,
}

/// A polynomial over a [`WideBasis`]: `limbs[i][c]` is coefficient c modulo the i-th modulus.
pub(crate) type WidePoly = Vec<Vec<Wide>>;

impl WideBasis {
    /// A basis of special moduli (Q): reduced by shifts and adds when `optimized`, by Barrett
    /// otherwise; products by `method`.
    pub(crate) fn special(
        moduli: &[SpecialModulus],
        degree: usize,
        optimized: bool,
        method: ProductMethod,
    ) -> Result<Self> {
        let products = moduli
            .iter()
            .map(|m| {
                Ok(match method {
                    ProductMethod::ExactThroughPrimes => {
                        ProductTable::Exact(Box::new(NegacyclicMultiplier::new(m.clone(), degree)?))
                    }
                    ProductMethod::NttModuloQ => {
                        ProductTable::Special(Box::new(WideNtt::for_special(m.clone(), degree)?))
                    }
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let moduli = moduli
            .iter()
            .map(
                |m| if optimized { WideModulus::Special(m.clone()) } else { WideModulus::Barrett(m.barrett().clone()) },
            )
            .collect();
        Ok(Self { moduli, products, degree })
    }

    /// A basis of NTT-friendly primes (the extended base).
    pub(crate) fn primes(primes: &[Wide], degree: usize) -> Result<Self> {
        let barrett = primes.iter().map(|&p| BarrettModulus::new(p)).collect::<std::result::Result<Vec<_>, _>>()?;
        let products = barrett
            .iter()
            .map(|p| Ok(ProductTable::Prime(Box::new(WideNtt::for_prime(p.clone(), degree, ROOT_SEED)?))))
            .collect::<Result<Vec<_>>>()?;
        Ok(Self { moduli: barrett.into_iter().map(WideModulus::Barrett).collect(), products, degree })
    }

    /// The moduli.
    pub(crate) fn moduli(&self) -> &[WideModulus] {
        &self.moduli
    }

    /// Number of moduli.
    pub(crate) fn len(&self) -> usize {
        self.moduli.len()
    }

    /// The zero polynomial.
    pub(crate) fn zero(&self) -> WidePoly {
        vec![vec![Wide::ZERO; self.degree]; self.moduli.len()]
    }

    /// A polynomial of small signed integers.
    pub(crate) fn small(&self, values: &[i64]) -> WidePoly {
        self.moduli.iter().map(|m| values.iter().map(|&v| m.signed(v)).collect()).collect()
    }

    /// A uniformly random polynomial (rejection sampling per residue).
    pub(crate) fn uniform(&self, sampler: &mut Sampler) -> WidePoly {
        self.moduli
            .iter()
            .map(|m| {
                let bits = m.value().bit_width_vartime();
                let top = Wide::ONE.shl_vartime(bits).wrapping_sub(&Wide::ONE);
                (0..self.degree)
                    .map(|_| loop {
                        let words = [sampler.next_u64(), sampler.next_u64(), sampler.next_u64(), sampler.next_u64()];
                        let x = Wide::from_words(words).bitand(&top);
                        if x < *m.value() {
                            break x;
                        }
                    })
                    .collect()
            })
            .collect()
    }

    /// a + b.
    pub(crate) fn add(&self, a: &WidePoly, b: &WidePoly) -> WidePoly {
        self.zip(a, b, WideModulus::add)
    }

    /// a - b.
    pub(crate) fn sub(&self, a: &WidePoly, b: &WidePoly) -> WidePoly {
        self.zip(a, b, WideModulus::sub)
    }

    /// acc += b.
    pub(crate) fn add_assign(&self, acc: &mut WidePoly, b: &WidePoly) {
        for ((m, x), y) in self.moduli.iter().zip(acc.iter_mut()).zip(b) {
            for (x, y) in x.iter_mut().zip(y) {
                *x = m.add(x, y);
            }
        }
    }

    /// -a.
    pub(crate) fn neg(&self, a: &WidePoly) -> WidePoly {
        self.zip(&self.zero(), a, WideModulus::sub)
    }

    /// a times one constant per modulus (`constants[i]` reduced modulo the i-th modulus).
    pub(crate) fn mul_constants(&self, a: &WidePoly, constants: &[Wide]) -> WidePoly {
        self.moduli.iter().zip(a).zip(constants).map(|((m, x), c)| x.iter().map(|x| m.mul(x, c)).collect()).collect()
    }

    /// a * b in Z_m[X]/(X^N + 1) for every modulus m.
    pub(crate) fn mul(&self, a: &WidePoly, b: &WidePoly) -> WidePoly {
        // One product per modulus, each tens of milliseconds at N = 2^14: worth a thread each.
        self.products
            .par_iter()
            .zip(a.par_iter().zip(b.par_iter()))
            .map(|(table, (x, y))| match table {
                ProductTable::Prime(ntt) => ntt.multiply(x, y),
                ProductTable::Special(ntt) => ntt.multiply(x, y),
                ProductTable::Exact(exact) => exact.multiply(x, y),
            })
            .collect()
    }

    fn zip(&self, a: &WidePoly, b: &WidePoly, op: fn(&WideModulus, &Wide, &Wide) -> Wide) -> WidePoly {
        self.moduli
            .iter()
            .zip(a.iter().zip(b))
            .map(|(m, (x, y))| x.iter().zip(y).map(|(x, y)| op(m, x, y)).collect())
            .collect()
    }
}
