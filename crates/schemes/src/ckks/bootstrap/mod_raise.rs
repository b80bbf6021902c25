//! ModRaise: a ciphertext at the lowest level read modulo the whole chain.
//!
//! At the lowest level a ciphertext (c0, c1) lives modulo q0, the product of the base primes
//! (pimhe's primes are below 2^30, so q0 is one to three primes). Each coefficient of c0 and c1
//! is brought to its centred representative in (-q0/2, q0/2] (exact CRT in i128: q0 < 2^90) and
//! reduced modulo every prime of the top level. Over the full modulus Q the pair then decrypts
//! to t = c0 + c1 s = m + q0 I with a small integer polynomial I (see [`super::range`]): the
//! message plus a multiple of q0 that EvalMod removes. The centred lift keeps I as small as
//! the bound of the range module says; a lift to [0, q0) would double it.
//!
//! The conversion runs on the host (download, inverse NTT, lift, NTT on upload): it is a
//! once-per-bootstrapping base extension, small next to the transforms and the key switches.

use pimhe_exec::Backend;
use pimhe_math::inverse_mod;

use crate::ckks::context::{CkksContext, CkksTag};
use crate::ckks::encoder::to_poly_batch;
use crate::error::{Result, SchemeError};
use crate::rlwe::{CiphertextBatch, Evaluator};

/// The centred CRT of a few primes into i128: mixed-radix digits (Garner), then the sum.
pub(crate) struct CenteredLift {
    primes: Vec<u64>,
    /// `inverses[i][j]` = q_j^-1 mod q_i for j < i.
    inverses: Vec<Vec<u64>>,
    modulus: i128,
}

impl CenteredLift {
    /// The lift for `primes` (distinct primes below 2^32, product below 2^126).
    pub(crate) fn new(primes: &[u32]) -> Result<Self> {
        let primes: Vec<u64> = primes.iter().map(|&q| u64::from(q)).collect();
        let bits: f64 = primes.iter().map(|&q| (q as f64).log2()).sum();
        if primes.is_empty() || primes.len() > 4 || bits >= 126.0 {
            return Err(SchemeError::InvalidParameters(format!(
                "ModRaise lifts through a base of 1 to 4 primes below 2^126 in all; got {} primes of {bits:.1} bits",
                primes.len()
            )));
        }
        let inverses = (0..primes.len())
            .map(|i| {
                (0..i).map(|j| inverse_mod(primes[j] % primes[i], primes[i])).collect::<std::result::Result<_, _>>()
            })
            .collect::<std::result::Result<_, _>>()?;
        let modulus = primes.iter().map(|&q| i128::from(q)).product();
        Ok(Self { primes, inverses, modulus })
    }

    /// The integer in (-q/2, q/2] with the given residues.
    pub(crate) fn lift(&self, residues: &[u32]) -> i128 {
        let mut digits = [0u64; 4];
        for (i, &q) in self.primes.iter().enumerate() {
            let mut x = u64::from(residues[i]) % q;
            for (j, &inverse) in self.inverses[i].iter().enumerate() {
                x = (x + q - digits[j] % q) % q * inverse % q;
            }
            digits[i] = x;
        }
        let (mut value, mut radix) = (0i128, 1i128);
        for (i, &q) in self.primes.iter().enumerate() {
            value += i128::from(digits[i]) * radix;
            radix *= i128::from(q);
        }
        if value > self.modulus / 2 {
            value - self.modulus
        } else {
            value
        }
    }
}

/// `a` brought to the lowest level, then every component lifted centred from q0 to the top
/// level's primes. The result's tag says `scale` (bootstrapping reads the raised phase t at
/// the default scale; see [`super::Bootstrapper`]), so that its slots are V (t / scale).
pub(crate) fn mod_raise<B: Backend>(
    evaluator: &Evaluator<'_, B, CkksContext>,
    a: &CiphertextBatch<B, CkksContext>,
    scale: f64,
) -> Result<CiphertextBatch<B, CkksContext>> {
    let ctx = evaluator.context().clone();
    if a.size() != 2 {
        return Err(SchemeError::WrongSize { operation: "ModRaise", expected: 2, found: a.size() });
    }
    let low = evaluator.drop_to_level(a, ctx.min_level())?;
    let base = ctx.level_basis(ctx.min_level())?;
    let top = ctx.level_basis(ctx.max_level())?;
    let lift = CenteredLift::new(&base.primes())?;
    let backend = evaluator.backend();
    let n = ctx.degree();
    let parts = low
        .parts()
        .iter()
        .map(|part| -> Result<B::Buffer> {
            let mut coefficients = backend.copy(part)?;
            backend.intt(&mut coefficients)?;
            let host = backend.download(&coefficients)?;
            let lifted: Vec<Vec<i128>> = (0..host.count())
                .map(|k| {
                    let limbs: Vec<&[u32]> = (0..base.len()).map(|limb| host.poly_limb(limb, k)).collect();
                    (0..n)
                        .map(|i| {
                            let residues: Vec<u32> = limbs.iter().map(|limb| limb[i]).collect();
                            lift.lift(&residues)
                        })
                        .collect()
                })
                .collect();
            let mut raised = backend.upload(to_poly_batch(&lifted, top)?)?;
            backend.ntt(&mut raised)?;
            Ok(raised)
        })
        .collect::<Result<Vec<_>>>()?;
    ctx.check_scale(scale, ctx.max_level(), "the raised ciphertext")?;
    Ok(low.derive(parts, ctx.max_level(), CkksTag { scale, ..low.tag() }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lift_is_the_centred_crt() {
        let primes = [998_244_353u32, 1_000_000_007, 1_000_000_009];
        let lift = CenteredLift::new(&primes).unwrap();
        let q: i128 = primes.iter().map(|&p| i128::from(p)).product();
        for value in [0i128, 1, -1, 12345678901234567, -(q / 2) + 1, q / 2, -98765432109876543210] {
            let residues: Vec<u32> = primes.iter().map(|&p| value.rem_euclid(i128::from(p)) as u32).collect();
            assert_eq!(lift.lift(&residues), value, "{value}");
        }
        assert!(CenteredLift::new(&[]).is_err());
    }
}
