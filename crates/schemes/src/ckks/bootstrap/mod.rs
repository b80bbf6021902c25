//! CKKS bootstrapping (Cheon, Han, Kim, Kim and Song; the sine-based EvalMod of Han and Ki):
//! a ciphertext at the lowest level becomes one at a high level with the same slots, up to a
//! small error, so computation can go on past the chain's depth.
//!
//! The pipeline, one file per step:
//!
//! 1. **ModRaise** ([`mod_raise`](Bootstrapper::mod_raise)): the lowest-level ciphertext's
//!    residues modulo q0 lifted, centred, to every prime of the chain. Its phase becomes
//!    t = m + q0 I for a small integer polynomial I. Under sparse-secret encapsulation
//!    ([`encapsulation`]) the ciphertext passes to an ephemeral sparse secret first and back
//!    after, so that a dense secret keeps I small.
//! 2. **CoeffToSlot** ([`coeff_to_slot`](Bootstrapper::coeff_to_slot)): the encoder's inverse
//!    special DFT V^-1, factorized into a level budget of sparse transforms, so the slots hold
//!    t's coefficients (divided by q0 K, in bit-reversed order), then real and imaginary parts
//!    separated with a conjugation.
//! 3. **EvalMod** ([`EvalMod`]): (q0 / 2 pi) sin(2 pi t / q0) = m up to a small error, as a
//!    Chebyshev series of a scaled cosine on [-1, 1] and r double-angle steps; the range K
//!    comes from the (ephemeral) secret's Hamming weight ([`minimum_range`]).
//! 4. **SlotToCoeff** ([`slot_to_coeff`](Bootstrapper::slot_to_coeff)): the special DFT V
//!    itself, factorized the same way, mapping the recombined coefficients back to the slots.
//!
//! Full packing (N/2 slots) by default; sparse packing (n < N/2 slots, [`BootstrapConfig::slots`])
//! first takes the trace to the subring the slots live in (log2(N/2n) rotations, no level) and
//! evaluates EvalMod once on the real and imaginary parts side by side in 2n slots
//! ([`Coefficients::Packed`]). [`secure_parameters`] is the 128-bit preset (N = 2^16, 9 levels
//! after); [`insecure_parameters`] and [`insecure_test_parameters`] are small insecure ones for
//! tests.
//!
//! ```
//! use pimhe_exec::CpuBackend;
//! use pimhe_schemes::ckks::bootstrap::{insecure_test_parameters, BootstrapConfig, BootstrapPlan, Bootstrapper};
//! use pimhe_schemes::ckks::*;
//! let backend = CpuBackend::new(Some(2)).unwrap();
//! let ctx = CkksContext::new(insecure_test_parameters(1024).unwrap()).unwrap();
//! let plan = BootstrapPlan::new(&ctx, &BootstrapConfig::default()).unwrap();
//! let mut keygen = KeyGenerator::new(&backend, &ctx).unwrap();
//! let secret = keygen.secret_key().unwrap();
//! let relin = keygen.relin_key(&secret).unwrap();
//! let galois = keygen.galois_keys(&secret, &plan.galois_elements()).unwrap();
//! let evaluator = Evaluator::new(&backend, &ctx).with_relin_key(&relin).unwrap().with_galois_keys(&galois).unwrap();
//! let bootstrapper = Bootstrapper::new(&evaluator, plan).unwrap();
//!
//! let encoder = Encoder::new(&ctx);
//! let mut encryptor = Encryptor::with_secret_key(&backend, &secret).unwrap();
//! let x = encryptor.encrypt(&[encoder.encode_real(&[0.5, -0.25], ctx.default_scale()).unwrap()]).unwrap();
//! let low = evaluator.drop_to_level(&x, ctx.min_level()).unwrap();
//! let fresh = bootstrapper.bootstrap(&evaluator, &low).unwrap();
//! assert_eq!(fresh.level(), bootstrapper.plan().output_level());
//! ```

mod bootstrapper;
mod dft;
pub mod encapsulation;
mod eval_mod;
mod mod_raise;
mod range;

pub use bootstrapper::{BootstrapConfig, BootstrapPlan, Bootstrapper, Coefficients, MIN_MESSAGE_RATIO_BITS};
pub use encapsulation::{EncapsulationKeys, EPHEMERAL_HAMMING_WEIGHT};
pub use eval_mod::EvalMod;
pub use range::{minimum_range, probabilistic_range, worst_case_range, MAX_RANGE, RANGE_SIGMAS};

use crate::ckks::CkksParameters;
use crate::error::{Result, SchemeError};
use crate::rlwe::SecretDistribution;

/// The Hamming weight of the test presets' secret: small, so that the worst-case range
/// (h + 1) / 2 = 8.5 holds for every ciphertext.
pub const TEST_HAMMING_WEIGHT: usize = 16;

/// Levels a bootstrapped ciphertext keeps under [`insecure_test_parameters`].
pub const TEST_LEVELS_AFTER: usize = 2;

/// Rescalings the 128-bit preset leaves after each bootstrapping by default: 9, the lower end
/// of Anaheim's L_eff = 9-11.
pub const PRESET_LEVELS_AFTER: usize = 9;

/// The 128-bit bootstrapping preset: N = 2^16 with a uniform ternary secret (the
/// HomomorphicEncryption.org tables' distribution; the builder checks the bound), sparse-secret
/// encapsulation through an ephemeral secret of weight [`EPHEMERAL_HAMMING_WEIGHT`], scale
/// 2^50 (two primes per level), a 57-bit base, level budgets 3 and 3, and `levels_after`
/// rescalings left after each bootstrapping (1 to 12: the chain must fit the 128-bit bound).
/// Returns the parameters and the configuration to plan with.
///
/// ```no_run
/// use pimhe_schemes::ckks::bootstrap::{secure_parameters, BootstrapPlan, PRESET_LEVELS_AFTER};
/// use pimhe_schemes::ckks::CkksContext;
/// let (params, config) = secure_parameters(PRESET_LEVELS_AFTER).unwrap();
/// assert_eq!(params.rlwe().security_bits(), Some(128));
/// let plan = BootstrapPlan::new(&CkksContext::new(params).unwrap(), &config).unwrap();
/// assert_eq!(plan.depth_after(), PRESET_LEVELS_AFTER);
/// ```
pub fn secure_parameters(levels_after: usize) -> Result<(CkksParameters, BootstrapConfig)> {
    if !(1..=12).contains(&levels_after) {
        return Err(SchemeError::InvalidParameters(format!(
            "the 128-bit bootstrapping preset leaves 1 to 12 levels after each bootstrapping; got {levels_after}"
        )));
    }
    let config = BootstrapConfig { encapsulation: Some(EPHEMERAL_HAMMING_WEIGHT), ..BootstrapConfig::default() };
    let depth = config.levels_consumed(EPHEMERAL_HAMMING_WEIGHT)? + levels_after;
    // q0 / Delta = 2^7: the bootstrapping's noise reaches the output multiplied by q0 / Delta,
    // while EvalMod's sine errs by (2 pi x)^2 / 6 relative to x = m / q0, which at 2^7 stays
    // below that noise for slots of magnitude up to 1. Measured with a dense secret at N = 2^12:
    // 15.6 bits with a 60-bit base, 18.5 with 57 bits, 18.7 with 56.
    let params = CkksParameters::builder(1 << 16).depth(depth).scale_bits(50).first_prime_bits(57).build()?;
    Ok((params, config))
}

/// INSECURE parameters for tests and experiments, N = 2^10 or 2^11: a sparse ternary secret of
/// Hamming weight 16, scale 2^50 (two primes per level), a 60-bit base (q0 / Delta = 2^10), and
/// exactly the depth [`BootstrapConfig::default`] consumes plus [`TEST_LEVELS_AFTER`]. A
/// modulus of hundreds of bits at this ring degree offers no security at all.
pub fn insecure_test_parameters(degree: usize) -> Result<CkksParameters> {
    if degree != 1024 && degree != 2048 {
        return Err(SchemeError::InvalidParameters(format!(
            "the insecure bootstrapping test presets have N = 1024 or 2048; got {degree}"
        )));
    }
    insecure_parameters(degree, TEST_LEVELS_AFTER)
}

/// INSECURE parameters for experiments with programs deeper than the test presets (HELR's
/// iterations between bootstrappings): as [`insecure_test_parameters`] but for any N from 2^10
/// to 2^14 and `levels_after` rescalings left after each bootstrapping (1 to 30).
///
/// ```
/// use pimhe_schemes::ckks::bootstrap::{insecure_parameters, BootstrapConfig, BootstrapPlan};
/// use pimhe_schemes::ckks::CkksContext;
/// let ctx = CkksContext::new(insecure_parameters(1024, 5).unwrap()).unwrap();
/// let plan = BootstrapPlan::new(&ctx, &BootstrapConfig::default()).unwrap();
/// assert_eq!(plan.depth_after(), 5);
/// assert!(insecure_parameters(1 << 15, 5).is_err());
/// ```
pub fn insecure_parameters(degree: usize, levels_after: usize) -> Result<CkksParameters> {
    if !(1024..=16384).contains(&degree) || !degree.is_power_of_two() {
        return Err(SchemeError::InvalidParameters(format!(
            "the insecure bootstrapping presets have N = 2^10 to 2^14; got {degree}"
        )));
    }
    if !(1..=30).contains(&levels_after) {
        return Err(SchemeError::InvalidParameters(format!(
            "levels left after bootstrapping must be 1 to 30; got {levels_after}"
        )));
    }
    let depth = BootstrapConfig::default().levels_consumed(TEST_HAMMING_WEIGHT)? + levels_after;
    CkksParameters::builder(degree)
        .depth(depth)
        .scale_bits(50)
        .first_prime_bits(60)
        .secret(SecretDistribution::SparseTernary { hamming_weight: TEST_HAMMING_WEIGHT })
        .allow_insecure()
        .build()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ckks::CkksContext;

    /// The preset is 128-bit by the builder's check, and its chain covers the bootstrapping
    /// and the promised levels exactly; 13 levels after no longer fit the bound.
    #[test]
    fn the_secure_preset_fits_the_bound_and_its_levels() {
        let (params, config) = secure_parameters(PRESET_LEVELS_AFTER).unwrap();
        assert_eq!(params.rlwe().security_bits(), Some(128));
        assert!(params.rlwe().total_bits() <= 1747);
        assert_eq!(BootstrapConfig::for_parameters(&params), config);
        let sparse = insecure_test_parameters(1024).unwrap();
        assert_eq!(BootstrapConfig::for_parameters(&sparse), BootstrapConfig::default());
        let ctx = CkksContext::new(params).unwrap();
        let plan = BootstrapPlan::new(&ctx, &config).unwrap();
        assert_eq!(plan.depth_after(), PRESET_LEVELS_AFTER);
        assert!(plan.uses_encapsulation());
        assert!(secure_parameters(13).is_err());
    }
}
