//! Decryption (RNS only, no big integers) and noise-budget measurement (exact).

use pimhe_exec::Backend;
use zeroize::Zeroizing;

use crate::bgv::context::BgvContext;
use crate::encoder::Plaintext;
use crate::error::{Result, SchemeError};
use crate::rlwe::phase::noise_budgets;
use crate::rlwe::{CiphertextBatch, Decryptor};

/// Decryption refuses a phase v with |v / Q| at or above this: less than one bit of budget is
/// left (|v| >= Q/4), too close to wrapping around Q/2 to trust. The exact budget of
/// [`noise_budget`] reads 0 there.
const REFUSED_FRACTION: f64 = 0.25;

/// Residues a decryption thread takes at least: spawning one costs tens of microseconds, about
/// as long as reconstructing 2^16 residues, so a ciphertext at N = 8192 (5 primes) is decrypted
/// on the calling thread and large batches on the backend's thread count.
const MIN_RESIDUES_PER_THREAD: usize = 1 << 18;

/// Decrypts every ciphertext of the batch. Fails with [`SchemeError::NoiseBudgetExhausted`]
/// (naming the first such ciphertext) rather than return a wrong message.
///
/// The phase v = c0 + c1 s (+ c2 s^2) is reconstructed modulo t straight from its residues
/// ([`pimhe_math::CrtToSmall`]: f64 and word arithmetic, no big integers), with v / Q alongside
/// to refuse phases whose noise has used up the budget.
pub(crate) fn decrypt<B: Backend>(
    decryptor: &Decryptor<'_, B, BgvContext>,
    batch: &CiphertextBatch<B, BgvContext>,
) -> Result<Vec<Plaintext>> {
    let v = decryptor.phase_on_host(batch)?;
    let ctx = decryptor.context();
    let t = ctx.plain_modulus();
    let correction_inverse = t.inv(batch.tag())?;
    let crt = &ctx.decryption_tables(batch.level())?.0;
    let (n, count, limbs) = (v.degree(), batch.count(), v.basis().len());
    // The batch's count x N coefficients in ranges, one per thread (this host loop would
    // otherwise run on one core); v / Q of each coefficient is kept, wiped when dropped, for the
    // largest per ciphertext.
    let mut messages = vec![0u32; count * n];
    let mut fractions = Zeroizing::new(vec![0f64; count * n]);
    let threads = decryptor.backend.threads().min(count * n * limbs / MIN_RESIDUES_PER_THREAD).max(1);
    let per_thread = (count * n).div_ceil(threads);
    // Reconstructs the coefficients from `start` on into `out` and `fraction`, ciphertext by
    // ciphertext.
    let reconstruct = |start: usize, out: &mut [u32], fraction: &mut [f64]| {
        let mut done = 0;
        while done < out.len() {
            let (index, c) = ((start + done) / n, (start + done) % n);
            let len = (n - c).min(out.len() - done);
            let residues: Vec<&[u32]> = (0..limbs).map(|limb| &v.poly_limb(limb, index)[c..c + len]).collect();
            crt.reduce(&residues, &mut out[done..done + len], &mut fraction[done..done + len]);
            done += len;
        }
    };
    std::thread::scope(|scope| {
        let mut ranges = messages.chunks_mut(per_thread).zip(fractions.chunks_mut(per_thread)).enumerate();
        // The first range on this thread, the others on threads of their own.
        let first = ranges.next();
        for (k, (out, fraction)) in ranges {
            let reconstruct = &reconstruct;
            scope.spawn(move || reconstruct(k * per_thread, out, fraction));
        }
        if let Some((_, (out, fraction))) = first {
            reconstruct(0, out, fraction);
        }
    });
    // No early exit: the time must not depend on where the noise is largest.
    let largest: Vec<f64> =
        fractions.chunks(n).map(|fraction| fraction.iter().fold(0.0, |max: f64, f| max.max(f.abs()))).collect();
    if let Some(index) = largest.iter().position(|&largest| largest >= REFUSED_FRACTION) {
        return Err(SchemeError::NoiseBudgetExhausted { index });
    }
    for message in &mut messages {
        *message = t.mul(*message, correction_inverse);
    }
    Ok(messages.chunks(n).map(|message| Plaintext::from_coefficients(message.to_vec())).collect())
}

/// The remaining noise budget of each ciphertext in bits (0 when exhausted): how many more
/// bits the noise may grow before decryption fails, log2(Q/2) - log2(max |v|), measured
/// exactly with big integers (a diagnostic, not on the decryption path).
pub(crate) fn noise_budget<B: Backend>(
    decryptor: &Decryptor<'_, B, BgvContext>,
    batch: &CiphertextBatch<B, BgvContext>,
) -> Result<Vec<u32>> {
    let rns = &decryptor.context().decryption_tables(batch.level())?.1;
    noise_budgets(&*decryptor.phase_on_host(batch)?, rns, 1)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use num_bigint::BigInt;
    use num_traits::ToPrimitive;
    use pimhe_exec::CpuBackend;
    use pimhe_math::{RnsBase, Sampler};
    use pimhe_ring::{PolyBatch, Representation};

    use super::*;
    use crate::bgv::{BgvParameters, KeyGenerator};

    /// A batch whose phase is exactly `phases[k]` (c0 = v, c1 = 0), with a correction factor.
    fn batch_with_phases(
        ctx: &Arc<BgvContext>,
        level: usize,
        phases: &[Vec<BigInt>],
        correction: u32,
    ) -> CiphertextBatch<CpuBackend, BgvContext> {
        let basis = ctx.level_basis(level).unwrap();
        let rns = RnsBase::new(&basis.moduli()).unwrap();
        let n = ctx.degree();
        let mut data = vec![0u32; basis.len() * phases.len() * n];
        for (k, phase) in phases.iter().enumerate() {
            for (c, v) in phase.iter().enumerate() {
                for (limb, r) in rns.decompose_signed(v).into_iter().enumerate() {
                    data[(limb * phases.len() + k) * n + c] = r;
                }
            }
        }
        let mut c0 = PolyBatch::from_data(basis, phases.len(), Representation::Coefficient, data).unwrap();
        c0.to_ntt().unwrap();
        let c1 = PolyBatch::zeros(basis, phases.len(), Representation::Ntt);
        CiphertextBatch { ctx: ctx.clone(), parts: vec![c0, c1], level, count: phases.len(), tag: correction }
    }

    /// Fast decryption against the exact phase (big integers): the message is v / correction
    /// mod t whenever |v| < Q/4 - 2^-40 Q, and an error from Q/4 on; in between it may refuse,
    /// never return a wrong message. The noise budget (exact up to its final f64 logarithm)
    /// agrees away from the boundary: 0 when decryption refuses, at least 1 bit when it succeeds.
    #[test]
    fn fast_decryption_matches_the_exact_phase_and_refuses_at_a_quarter() {
        let backend = CpuBackend::new(Some(2)).unwrap();
        let ctx = BgvContext::new(BgvParameters::preset(4096).unwrap()).unwrap();
        let secret = KeyGenerator::with_sampler(&backend, &ctx, Sampler::from_seed_u64(5)).secret_key().unwrap();
        let decryptor = Decryptor::new(&backend, &secret).unwrap();
        let t = *ctx.plain_modulus();
        let t_big = BigInt::from(t.value());
        let mut sampler = Sampler::from_seed_u64(6);
        let mut random_u64 = || {
            let words = sampler.uniform_vec(&pimhe_math::Modulus::new((1 << 30) - 35).unwrap(), 3);
            words.iter().fold(0u64, |acc, &w| (acc << 30) ^ u64::from(w))
        };
        for level in [ctx.max_level(), 0] {
            let q = BigInt::from(RnsBase::new(&ctx.level_basis(level).unwrap().moduli()).unwrap().product().clone());
            let quarter = &q / 4u32;
            let margin = (&q >> 40u32).max(BigInt::from(1));
            let n = ctx.degree();
            // Random phases anywhere below Q/4 - margin, both signs, and a few tiny ones.
            let random: Vec<BigInt> = (0..n)
                .map(|c| {
                    let bound = if c % 7 == 0 { BigInt::from(1u64 << 20) } else { &quarter - &margin };
                    let v = (BigInt::from(random_u64()) * BigInt::from(random_u64())) % bound;
                    if random_u64() % 2 == 0 {
                        v
                    } else {
                        -v
                    }
                })
                .collect();
            // The same phases with one coefficient moved next to the boundary, on each side.
            let with = |c: usize, v: BigInt| {
                let mut phase = random.clone();
                phase[c] = v;
                phase
            };
            // (phase, decrypts?: None where either answer is right, budget exact in f64?)
            let cases: Vec<(Vec<BigInt>, Option<bool>, bool)> = vec![
                (random.clone(), Some(true), true),
                (with(3, &quarter - &margin), Some(true), true),
                (with(5, -(&quarter - &margin)), Some(true), true),
                (with(9, &quarter - 1u32), None, false),
                (with(11, &quarter + 1u32), Some(false), false),
                (with(13, -(&quarter + &margin)), Some(false), true),
                (with(17, &q / 2u32), Some(false), true),
            ];
            let phases: Vec<Vec<BigInt>> = cases.iter().map(|(p, _, _)| p.clone()).collect();
            let correction = 3;
            let batch = batch_with_phases(&ctx, level, &phases, correction);
            let budgets = decryptor.noise_budget(&batch).unwrap();
            let inverse = BigInt::from(t.inv(correction).unwrap());
            for (k, (phase, decrypts, budget_exact)) in cases.iter().enumerate() {
                let single = batch_with_phases(&ctx, level, std::slice::from_ref(phase), correction);
                match (decryptor.decrypt(&single), decrypts) {
                    (Ok(plain), Some(true) | None) => {
                        let expected: Vec<u32> = phase
                            .iter()
                            .map(|v| (((v * &inverse) % &t_big + &t_big) % &t_big).to_u32().unwrap())
                            .collect();
                        assert_eq!(plain[0].coefficients(), &expected[..], "level {level} case {k}: wrong message");
                        assert!(budgets[k] >= 1 || !budget_exact, "level {level} case {k}");
                    }
                    (Err(SchemeError::NoiseBudgetExhausted { index: 0 }), Some(false) | None) => {
                        assert!(budgets[k] == 0 || !budget_exact, "level {level} case {k}");
                    }
                    (other, _) => {
                        let got = other.map(|_| "a message");
                        panic!("level {level} case {k}: expected decrypts = {decrypts:?}, got {got:?}")
                    }
                }
            }
            // A batch names its first exhausted ciphertext.
            assert!(matches!(decryptor.decrypt(&batch), Err(SchemeError::NoiseBudgetExhausted { index: 3 | 4 })));
        }
    }
}
