//! CKKS bootstrapping on the CPU backend, N = 2^10 (insecure test preset): the decrypted output
//! against the plaintext input (the oracle), slot by slot, for real and complex inputs, at the
//! promised level and with levels still usable after it; and that each part matters: a missing
//! or wrong Galois key, a skipped step, a too small EvalMod range, bad inputs are refused or
//! visibly break the result.

use std::sync::Arc;
use std::time::Instant;

use num_complex::Complex64;
use pimhe_exec::CpuBackend;
use pimhe_math::Sampler;
use pimhe_schemes::ckks::bootstrap::{
    insecure_test_parameters, BootstrapConfig, BootstrapPlan, Bootstrapper, Coefficients, TEST_LEVELS_AFTER,
};
use pimhe_schemes::ckks::precision::precision;
use pimhe_schemes::ckks::*;
use pimhe_schemes::rlwe::RlweScheme;
use pimhe_schemes::SchemeError;

/// The precision every slot must keep through one bootstrapping, in bits: the worst slot
/// measured 22.3 bits (real and complex inputs, mean 23.9); 2 bits of margin for other seeds.
/// With CoeffToSlot over one level instead of two it measured 6.9, so this bound tells them
/// apart.
const MIN_BITS: f64 = 20.0;

const DEGREE: usize = 1024;

struct Fixture {
    backend: CpuBackend,
    ctx: Arc<CkksContext>,
    secret: SecretKey,
    relin: RelinKey,
    galois: GaloisKeys,
    plan: BootstrapPlan,
}

impl Fixture {
    fn new() -> Self {
        let backend = CpuBackend::new(Some(2)).unwrap();
        let ctx = CkksContext::new(insecure_test_parameters(DEGREE).unwrap()).unwrap();
        let plan = BootstrapPlan::new(&ctx, &BootstrapConfig::default()).unwrap();
        let mut keygen = KeyGenerator::with_sampler(&backend, &ctx, Sampler::from_seed_u64(11));
        let secret = keygen.secret_key().unwrap();
        let relin = keygen.relin_key(&secret).unwrap();
        let galois = keygen.galois_keys(&secret, &plan.galois_elements()).unwrap();
        Self { backend, ctx, secret, relin, galois, plan }
    }

    fn evaluator(&self) -> Evaluator<'_, CpuBackend> {
        Evaluator::new(&self.backend, &self.ctx)
            .with_relin_key(&self.relin)
            .unwrap()
            .with_galois_keys(&self.galois)
            .unwrap()
    }

    /// N/2 values with real and imaginary parts uniform in [-1, 1] (imaginary 0 when `real`),
    /// from a sampler of the given seed.
    fn values(&self, seed: u64, real: bool) -> Vec<Complex64> {
        let mut sampler = Sampler::from_seed_u64(seed);
        let mut uniform = || 2.0 * f64::from(sampler.next_u32()) / f64::from(u32::MAX) - 1.0;
        (0..self.ctx.max_slots())
            .map(|_| {
                let re = uniform();
                Complex64::new(re, if real { 0.0 } else { uniform() })
            })
            .collect()
    }

    /// `values` encrypted at the default scale and brought to the lowest level.
    fn encrypt_low(&self, values: &[Complex64]) -> CiphertextBatch<CpuBackend> {
        let encoder = Encoder::new(&self.ctx);
        let mut encryptor = Encryptor::with_secret_key(&self.backend, &self.secret).unwrap();
        let ct = encryptor.encrypt(&[encoder.encode(values, self.ctx.default_scale()).unwrap()]).unwrap();
        Evaluator::new(&self.backend, &self.ctx).drop_to_level(&ct, self.ctx.min_level()).unwrap()
    }

    fn decrypt(&self, ct: &CiphertextBatch<CpuBackend>) -> Vec<Complex64> {
        let plain = Decryptor::new(&self.backend, &self.secret).unwrap().decrypt(ct).unwrap();
        Encoder::new(&self.ctx).decode(&plain[0]).unwrap()
    }
}

fn check_bootstrap(real: bool) {
    let f = Fixture::new();
    let evaluator = f.evaluator();
    let start = Instant::now();
    let bootstrapper = Bootstrapper::new(&evaluator, f.plan.clone()).unwrap();
    let setup = start.elapsed();
    let values = f.values(5, real);
    let low = f.encrypt_low(&values);
    let start = Instant::now();
    let fresh = bootstrapper.bootstrap(&evaluator, &low).unwrap();
    let time = start.elapsed();

    assert_eq!(fresh.level(), f.plan.output_level());
    assert_eq!(f.ctx.depth_left(fresh.level()), TEST_LEVELS_AFTER);
    // The input's scale, up to the f64 rounding of scale bookkeeping.
    assert!((fresh.tag().scale / low.tag().scale - 1.0).abs() < 1e-12, "scale 2^{}", fresh.tag().scale.log2());
    let stats = precision(&f.decrypt(&fresh), &values);
    eprintln!(
        "N = {DEGREE} {} input: {stats}; {} Galois keys ({} rotations + conjugation, {:.1} MiB), EvalMod degree {} \
         (K = {}, r = {}), output level {} of {}, setup {setup:.2?}, bootstrap {time:.2?}",
        if real { "real" } else { "complex" },
        f.plan.galois_elements().len(),
        f.plan.rotations().len(),
        f.galois.size_bytes() as f64 / (1 << 20) as f64,
        f.plan.eval_mod().series().degree(),
        f.plan.eval_mod().range(),
        f.plan.eval_mod().double_angles(),
        fresh.level(),
        f.ctx.max_level(),
    );
    assert!(stats.min_bits >= MIN_BITS, "{stats}");
    assert_eq!(f.plan.galois_key_bytes(), f.galois.size_bytes());

    // The refreshed ciphertext computes on: its square against the squared input.
    let square = evaluator.multiply_relin_rescale(&fresh, &fresh).unwrap();
    let expected: Vec<Complex64> = values.iter().map(|z| z * z).collect();
    let stats = precision(&f.decrypt(&square), &expected);
    assert!(stats.min_bits >= MIN_BITS - 1.0, "after a product: {stats}");
}

#[test]
fn bootstrapping_restores_real_slots_at_the_promised_level() {
    check_bootstrap(true);
}

#[test]
fn bootstrapping_restores_complex_slots_at_the_promised_level() {
    check_bootstrap(false);
}

/// Sparse packing, n = 32 and n = N/4 slots: the trace to the slots' subring, one EvalMod over
/// the real and imaginary parts side by side, the same precision bound; the trace's rotations
/// are among the plan's keys, and without them the plan refuses to start. (Fewer slots spread
/// the same values over fewer coefficients, each larger against q0, where the sine departs
/// from x mod 1 by (2 pi x)^2 / 6: 8 slots measured 20.0 bits, 32 slots 21.8.)
#[test]
fn sparse_packing_bootstraps_with_one_eval_mod() {
    let f = Fixture::new();
    for slots in [32, DEGREE / 4] {
        let plan = BootstrapPlan::new(&f.ctx, &BootstrapConfig { slots: Some(slots), ..BootstrapConfig::default() });
        let plan = plan.unwrap();
        assert_eq!((plan.slots(), plan.output_level()), (slots, f.plan.output_level()));
        let trace: Vec<i64> = std::iter::successors(Some(slots), |s| Some(2 * s))
            .take_while(|&s| s < DEGREE / 2)
            .map(|s| s as i64)
            .collect();
        assert!(trace.iter().all(|s| plan.rotations().contains(s)), "{:?}", plan.rotations());
        let mut keygen = KeyGenerator::with_sampler(&f.backend, &f.ctx, Sampler::from_seed_u64(11));
        let secret = keygen.secret_key().unwrap();
        let without_trace: Vec<usize> = plan
            .galois_elements()
            .into_iter()
            .filter(|&k| k != f.ctx.rotation_element(*trace.last().unwrap()))
            .collect();
        let partial = keygen.galois_keys(&secret, &without_trace).unwrap();
        let evaluator =
            Evaluator::new(&f.backend, &f.ctx).with_relin_key(&f.relin).unwrap().with_galois_keys(&partial).unwrap();
        assert!(Bootstrapper::new(&evaluator, plan.clone()).is_err(), "a missing trace key went unnoticed");

        let galois = keygen.galois_keys(&secret, &plan.galois_elements()).unwrap();
        let evaluator =
            Evaluator::new(&f.backend, &f.ctx).with_relin_key(&f.relin).unwrap().with_galois_keys(&galois).unwrap();
        let bootstrapper = Bootstrapper::new(&evaluator, plan.clone()).unwrap();
        let values: Vec<Complex64> = f.values(13, false)[..slots].to_vec();
        let encoder = Encoder::new(&f.ctx);
        let mut encryptor = Encryptor::with_secret_key(&f.backend, &f.secret).unwrap();
        let ct = encryptor.encrypt(&[encoder.encode_sparse(&values, slots, f.ctx.default_scale()).unwrap()]).unwrap();
        let low = evaluator.drop_to_level(&ct, f.ctx.min_level()).unwrap();
        let raised = bootstrapper.mod_raise(&evaluator, &low).unwrap();
        assert!(matches!(bootstrapper.coeff_to_slot(&evaluator, &raised).unwrap(), Coefficients::Packed(_)));
        let fresh = bootstrapper.bootstrap(&evaluator, &low).unwrap();
        assert_eq!((fresh.level(), fresh.tag().slots), (plan.output_level(), slots));
        let stats = precision(&f.decrypt(&fresh), &values);
        eprintln!("N = {DEGREE}, {slots} slots: {stats}; {} Galois keys", plan.galois_elements().len());
        assert!(stats.min_bits >= MIN_BITS, "{slots} slots: {stats}");
    }
}

#[test]
fn a_missing_or_wrong_galois_key_is_refused_or_breaks_it() {
    let f = Fixture::new();
    // Missing: every key but one.
    let mut keygen = KeyGenerator::with_sampler(&f.backend, &f.ctx, Sampler::from_seed_u64(11));
    let secret = keygen.secret_key().unwrap();
    let elements = f.plan.galois_elements();
    let partial = keygen.galois_keys(&secret, &elements[1..]).unwrap();
    let evaluator =
        Evaluator::new(&f.backend, &f.ctx).with_relin_key(&f.relin).unwrap().with_galois_keys(&partial).unwrap();
    match Bootstrapper::new(&evaluator, f.plan.clone()) {
        Err(SchemeError::KeySwitchingUnavailable(message)) => assert!(message.contains("lacks 1"), "{message}"),
        other => panic!("expected a refusal, got {:?}", other.err()),
    }

    // Wrong: keys for the right elements, but of another secret.
    let mut other = KeyGenerator::with_sampler(&f.backend, &f.ctx, Sampler::from_seed_u64(99));
    let other_secret = other.secret_key().unwrap();
    let wrong = other.galois_keys(&other_secret, &elements).unwrap();
    let evaluator =
        Evaluator::new(&f.backend, &f.ctx).with_relin_key(&f.relin).unwrap().with_galois_keys(&wrong).unwrap();
    let bootstrapper = Bootstrapper::new(&evaluator, f.plan.clone()).unwrap();
    let values = f.values(6, true);
    let out = bootstrapper.bootstrap(&evaluator, &f.encrypt_low(&values)).unwrap();
    let stats = precision(&f.decrypt(&out), &values);
    assert!(stats.max_error > 0.5, "wrong keys went unnoticed: {stats}");
}

#[test]
fn skipping_a_step_breaks_it() {
    let f = Fixture::new();
    let evaluator = f.evaluator();
    let bootstrapper = Bootstrapper::new(&evaluator, f.plan.clone()).unwrap();
    let values = f.values(7, true);
    let low = f.encrypt_low(&values);
    let scale = low.tag().scale;

    // Without EvalMod the multiples of q0 stay: brought to SlotToCoeff's level directly.
    let raised = bootstrapper.mod_raise(&evaluator, &low).unwrap();
    let coefficients = bootstrapper.coeff_to_slot(&evaluator, &raised).unwrap();
    let level = f.plan.slot_to_coeff_level();
    let dropped = coefficients.try_map(|x| evaluator.drop_to_level(x, level)).unwrap();
    let out = bootstrapper.slot_to_coeff(&evaluator, &dropped, scale).unwrap();
    let stats = precision(&f.decrypt(&out), &values);
    assert!(stats.max_error > 0.5, "EvalMod skipped went unnoticed: {stats}");

    // Without ModRaise the transform is at the wrong level: refused.
    assert!(bootstrapper.coeff_to_slot(&evaluator, &low).unwrap_err().to_string().contains("prepared for level"));

    // The full pipeline on the same input is fine (so the breakage above is the skipped step).
    let stats = precision(&f.decrypt(&bootstrapper.bootstrap(&evaluator, &low).unwrap()), &values);
    assert!(stats.min_bits >= MIN_BITS, "{stats}");
}

#[test]
fn bad_ranges_parameters_and_inputs_are_refused() {
    let f = Fixture::new();
    // A range K the secret's Hamming weight can exceed.
    let small = BootstrapConfig { range: Some(2.0), ..BootstrapConfig::default() };
    let err = BootstrapPlan::new(&f.ctx, &small).unwrap_err().to_string();
    assert!(err.contains("cannot hold"), "{err}");

    // A dense secret.
    let dense = CkksParameters::builder(DEGREE).depth(14).scale_bits(50).first_prime_bits(60).allow_insecure().build();
    let dense = CkksContext::new(dense.unwrap()).unwrap();
    let err = BootstrapPlan::new(&dense, &BootstrapConfig::default()).unwrap_err().to_string();
    assert!(err.contains("sparse ternary secret"), "{err}");

    // Too few levels for the pipeline.
    let shallow = CkksParameters::builder(DEGREE)
        .depth(4)
        .scale_bits(50)
        .first_prime_bits(60)
        .secret(pimhe_schemes::rlwe::SecretDistribution::SparseTernary { hamming_weight: 16 })
        .allow_insecure()
        .build()
        .unwrap();
    let err = BootstrapPlan::new(&CkksContext::new(shallow).unwrap(), &BootstrapConfig::default()).unwrap_err();
    assert!(err.to_string().contains("build the parameters with a larger depth"), "{err}");

    // Inputs: a scale too close to q0, a sparse packing under a full-packing plan.
    let evaluator = f.evaluator();
    let bootstrapper = Bootstrapper::new(&evaluator, f.plan.clone()).unwrap();
    let encoder = Encoder::new(&f.ctx);
    let mut encryptor = Encryptor::with_secret_key(&f.backend, &f.secret).unwrap();
    let big = encryptor.encrypt(&[encoder.encode_real(&[0.5], 2f64.powi(57)).unwrap()]).unwrap();
    let err = bootstrapper.bootstrap(&evaluator, &big).unwrap_err().to_string();
    assert!(err.contains("q0 / Delta"), "{err}");
    let sparse = encryptor
        .encrypt(&[encoder.encode_sparse(&[Complex64::new(0.5, 0.0)], 8, f.ctx.default_scale()).unwrap()])
        .unwrap();
    let err = bootstrapper.bootstrap(&evaluator, &sparse).unwrap_err().to_string();
    assert!(err.contains("plan is for 512"), "{err}");
    let err = BootstrapPlan::new(&f.ctx, &BootstrapConfig { slots: Some(24), ..BootstrapConfig::default() });
    assert!(err.unwrap_err().to_string().contains("power-of-two slot count"));
}

/// Values too large for EvalMod cannot be told from the ciphertext (bootstrapping runs and is
/// wrong), so the plan gives the client a check with the secret key.
#[test]
fn values_beyond_eval_mods_range_are_told_by_the_clients_check() {
    let f = Fixture::new();
    let evaluator = f.evaluator();
    let bootstrapper = Bootstrapper::new(&evaluator, f.plan.clone()).unwrap();
    let decryptor = Decryptor::new(&f.backend, &f.secret).unwrap();
    let values = f.values(5, false);
    f.plan.check_message_range(&decryptor, &f.encrypt_low(&values)).unwrap();

    let large: Vec<Complex64> = values.iter().map(|z| z * 512.0).collect();
    let low = f.encrypt_low(&large);
    let err = f.plan.check_message_range(&decryptor, &low).unwrap_err().to_string();
    assert!(err.contains("outside bootstrapping's range") && err.contains("scale the values down"), "{err}");
    // What the check prevents: the bootstrapping itself runs, and its result is wrong.
    let wrong = precision(&f.decrypt(&bootstrapper.bootstrap(&evaluator, &low).unwrap()), &large);
    eprintln!("{err}\nbootstrapped anyway: {wrong}");
    assert!(wrong.min_bits < 0.0, "{wrong}");
}

#[test]
fn the_bootstrapping_keys_travel_compressed_and_bootstrap_the_same() {
    let f = Fixture::new();
    let compressed = f.galois.to_compressed_bytes().unwrap();
    let full = f.galois.to_bytes();
    // Each a_j is stored as its 32-byte seed: about half of the full encoding.
    assert!(compressed.len() * 2 < full.len() + full.len() / 20, "{} vs {} bytes", compressed.len(), full.len());
    let loaded = GaloisKeys::from_bytes(&f.ctx, &compressed).unwrap();
    let mut wanted = f.plan.galois_elements();
    wanted.sort_unstable();
    assert_eq!(loaded.elements().collect::<Vec<_>>(), wanted, "the keys are stored by increasing element");
    assert_eq!(loaded.size_bytes(), f.plan.galois_key_bytes());
    let relin = RelinKey::from_bytes(&f.ctx, &f.relin.to_compressed_bytes().unwrap()).unwrap();
    let evaluator =
        Evaluator::new(&f.backend, &f.ctx).with_relin_key(&relin).unwrap().with_galois_keys(&loaded).unwrap();
    let bootstrapper = Bootstrapper::new(&evaluator, f.plan.clone()).unwrap();
    let low = f.encrypt_low(&f.values(9, false));
    // The loaded keys are the generated ones: the same ciphertext out, residue for residue.
    let original = Bootstrapper::new(&f.evaluator(), f.plan.clone()).unwrap().bootstrap(&f.evaluator(), &low).unwrap();
    let again = bootstrapper.bootstrap(&evaluator, &low).unwrap();
    assert_eq!(again.to_bytes(&f.backend).unwrap(), original.to_bytes(&f.backend).unwrap());
}

/// The emulated UPMEM system bootstraps the same ciphertext to the same residues as the CPU:
/// every operation of the pipeline is exact integer arithmetic on both (the emulator runs the
/// DPU kernels' arithmetic), so any difference is a bug in one of them.
#[test]
fn the_emulated_upmem_system_bootstraps_bit_identically() {
    use pimhe_pim::runtime::placement::Mode;
    use pimhe_pim::runtime::{PimBackend, PimConfig};
    let f = Fixture::new();
    let low = f.encrypt_low(&f.values(12, false));
    let on_cpu = Bootstrapper::new(&f.evaluator(), f.plan.clone()).unwrap().bootstrap(&f.evaluator(), &low).unwrap();

    let primes = f.ctx.backend_primes();
    let pim = PimBackend::new(PimConfig::new(primes.len(), Mode::Parallel), DEGREE, &primes).unwrap();
    let evaluator = Evaluator::new(&pim, &f.ctx).with_relin_key(&f.relin).unwrap().with_galois_keys(&f.galois).unwrap();
    let bootstrapper = Bootstrapper::new(&evaluator, f.plan.clone()).unwrap();
    let low_on_pim = CiphertextBatch::from_bytes(&pim, &f.ctx, &low.to_bytes(&f.backend).unwrap()).unwrap();
    let on_pim = bootstrapper.bootstrap(&evaluator, &low_on_pim).unwrap();
    assert_eq!(on_pim.to_bytes(&pim).unwrap(), on_cpu.to_bytes(&f.backend).unwrap());
}

/// Sparse-secret encapsulation: a dense (uniform ternary) secret, which the plan alone refuses,
/// bootstraps through an ephemeral secret of weight 32 to the same precision bound; without
/// the switch back to the dense secret (the encapsulation keys of another ephemeral secret) the
/// result is garbage, and a plan with encapsulation refuses to run without its keys.
#[test]
fn a_dense_secret_bootstraps_through_an_ephemeral_sparse_one() {
    use pimhe_schemes::ckks::bootstrap::{EncapsulationKeys, EPHEMERAL_HAMMING_WEIGHT};
    let config = BootstrapConfig { encapsulation: Some(EPHEMERAL_HAMMING_WEIGHT), ..BootstrapConfig::default() };
    let depth = config.levels_consumed(EPHEMERAL_HAMMING_WEIGHT).unwrap() + TEST_LEVELS_AFTER;
    let params = CkksParameters::builder(DEGREE)
        .depth(depth)
        .scale_bits(50)
        .first_prime_bits(60)
        .allow_insecure()
        .build()
        .unwrap();
    let ctx = CkksContext::new(params).unwrap();
    assert!(BootstrapPlan::new(&ctx, &BootstrapConfig::default()).is_err(), "a dense secret needs encapsulation");
    let plan = BootstrapPlan::new(&ctx, &config).unwrap();
    assert!(plan.uses_encapsulation() && plan.depth_after() == TEST_LEVELS_AFTER);

    let backend = CpuBackend::new(Some(2)).unwrap();
    let mut keygen = KeyGenerator::with_sampler(&backend, &ctx, Sampler::from_seed_u64(21));
    let secret = keygen.secret_key().unwrap();
    let relin = keygen.relin_key(&secret).unwrap();
    let galois = keygen.galois_keys(&secret, &plan.galois_elements()).unwrap();
    let keys = keygen.encapsulation_keys(&secret, EPHEMERAL_HAMMING_WEIGHT).unwrap();
    let evaluator = Evaluator::new(&backend, &ctx).with_relin_key(&relin).unwrap().with_galois_keys(&galois).unwrap();
    let err = Bootstrapper::new(&evaluator, plan.clone()).err().expect("refused without encapsulation keys");
    assert!(err.to_string().contains("with_encapsulation"), "{err}");
    let wrong_weight = keygen.encapsulation_keys(&secret, 16).unwrap();
    assert!(Bootstrapper::with_encapsulation(&evaluator, plan.clone(), &wrong_weight).is_err());

    let values: Vec<Complex64> =
        (0..ctx.max_slots()).map(|i| Complex64::new(((i * 7 % 13) as f64 - 6.0) / 6.5, (i % 5) as f64 / 5.0)).collect();
    let encoder = Encoder::new(&ctx);
    let mut encryptor = Encryptor::with_secret_key(&backend, &secret).unwrap();
    let ct = encryptor.encrypt(&[encoder.encode(&values, ctx.default_scale()).unwrap()]).unwrap();
    let low = evaluator.drop_to_level(&ct, ctx.min_level()).unwrap();
    let decrypt = |c: &CiphertextBatch<CpuBackend>| {
        encoder.decode(&Decryptor::new(&backend, &secret).unwrap().decrypt(c).unwrap()[0]).unwrap()
    };
    // The keys travel compressed (about half the size) and load back to the same keys.
    let compressed = keys.to_compressed_bytes().unwrap();
    assert!(compressed.len() * 2 < keys.to_bytes().len() + keys.to_bytes().len() / 20);
    let keys = EncapsulationKeys::from_bytes(&ctx, &compressed).unwrap();
    assert_eq!(keys.to_bytes(), EncapsulationKeys::from_bytes(&ctx, &keys.to_bytes()).unwrap().to_bytes());
    assert!(EncapsulationKeys::from_bytes(&ctx, &compressed[..compressed.len() - 1]).is_err());
    let bootstrapper = Bootstrapper::with_encapsulation(&evaluator, plan.clone(), &keys).unwrap();
    let fresh = bootstrapper.bootstrap(&evaluator, &low).unwrap();
    assert_eq!(fresh.level(), plan.output_level());
    let stats = precision(&decrypt(&fresh), &values);
    eprintln!(
        "N = {DEGREE} dense secret, encapsulation h' = 32: {stats}; EvalMod degree {}, K = {:.1}",
        plan.eval_mod().series().degree(),
        plan.eval_mod().range()
    );
    // 18.6 bits measured: the dense secret's rescaling and key-switching noise is about
    // sqrt(2N/3 / 16) = 6.5 times the sparse one's (2.7 bits), and K = 13.3 instead of 8.5.
    assert!(stats.min_bits >= MIN_BITS - 3.0, "{stats}");

    // Keys of another ephemeral secret: the switch to s' and back no longer meet.
    let mut other = KeyGenerator::with_sampler(&backend, &ctx, Sampler::from_seed_u64(22));
    let other_secret = other.secret_key().unwrap();
    let foreign = other.encapsulation_keys(&other_secret, EPHEMERAL_HAMMING_WEIGHT).unwrap();
    let broken =
        Bootstrapper::with_encapsulation(&evaluator, plan, &foreign).unwrap().bootstrap(&evaluator, &low).unwrap();
    assert!(precision(&decrypt(&broken), &values).max_error > 0.5, "foreign encapsulation keys went unnoticed");
}
