//! The client/server study: users encrypting independently with the public keys, a server with
//! no secret adding up, the analyst decrypting. Against the in-process plan's plaintext column
//! (an independent f64 computation from the values), on the CPU and the emulated DPUs.

use pimhe_exec::{Backend, CpuBackend};
use pimhe_math::Sampler;
use pimhe_pim::runtime::placement::Mode;
use pimhe_pim::runtime::{PimBackend, PimConfig};
use pimhe_schemes::bfv::BfvContext;
use pimhe_schemes::bgv::BgvContext;
use pimhe_schemes::encoder::ExactScheme;
use pimhe_schemes::serial::SerialScheme;
use pimhe_workloads::stats::study::{
    Identifier, Study, StudyKeys, StudyResult, StudyScheme, StudySecret, StudySpec, Submission,
};
use pimhe_workloads::stats::{Dataset, Statistic, StatsPlan};

const N: usize = 8192;

/// A study of `spec` under scheme `S` with an identifier from `seed`.
fn declare<S: ExactScheme>(spec: &StudySpec, seed: u64) -> Study {
    Study::new::<S>(spec, Identifier::random(&mut Sampler::from_seed_u64(seed))).unwrap()
}

/// The declaration of `statistic` over `data`'s columns with these bounds.
fn spec_of(statistic: Statistic, data: &Dataset, max_value: u64, max_users: usize) -> StudySpec {
    let columns: Vec<&str> = data.columns().iter().map(String::as_str).collect();
    StudySpec::new(statistic, &columns, data.decimals(), max_value, max_users, N)
}

/// Every party on its own: the analyst makes the keys on the CPU, each user loads the public
/// keys and encrypts their row, the server loads the public keys and the submissions onto
/// `server` and adds them up, the analyst loads the aggregates and decrypts. Everything that
/// passes between them goes through bytes.
fn run_study<S: StudyScheme + SerialScheme, B: Backend>(study: &Study, data: &Dataset, server: &B) -> StudyResult {
    let cpu = CpuBackend::new(Some(2)).unwrap();
    let study = Study::from_json(&study.to_json()).unwrap();
    let (secret, keys) = study.keygen::<S, _>(&cpu, Sampler::from_seed_u64(7)).unwrap();
    let (public_bytes, secret_bytes) = (keys.to_bytes().unwrap(), secret.to_bytes().unwrap());
    drop((secret, keys));

    let submissions: Vec<Vec<u8>> = data
        .rows()
        .iter()
        .enumerate()
        .map(|(user, row)| {
            let keys = study.keys_from_bytes::<S>(&public_bytes).unwrap();
            let sampler = Sampler::from_seed_u64(100 + user as u64);
            study.encrypt_row::<S, _>(&cpu, &keys, row, sampler).unwrap().to_bytes(&cpu).unwrap()
        })
        .collect();

    let server_keys = study.keys_from_bytes::<S>(&public_bytes).unwrap();
    let loaded: Vec<_> =
        submissions.iter().map(|bytes| study.submission_from_bytes(server, &server_keys, bytes).unwrap()).collect();
    let aggregates = study.aggregate::<S, _>(server, &server_keys, loaded.iter()).unwrap().to_bytes(server).unwrap();

    let keys = study.keys_from_bytes::<S>(&public_bytes).unwrap();
    let secret = study.secret_from_bytes::<S>(&secret_bytes).unwrap();
    let aggregates = study.aggregates_from_bytes(&cpu, &keys, &aggregates).unwrap();
    study.decrypt::<S, _>(&cpu, &secret, &aggregates).unwrap()
}

/// The plaintext estimates of the same statistic over the same data.
fn plaintext<S: ExactScheme>(statistic: Statistic, data: &Dataset) -> Vec<f64> {
    let plan = StatsPlan::new(statistic, data.clone(), N, S::max_plain_bits(N).unwrap()).unwrap();
    let cpu = CpuBackend::new(Some(2)).unwrap();
    let mut schemes = plan
        .plain_moduli()
        .iter()
        .map(|&t| {
            pimhe_workloads::stats::SchemeStats::<S, _, _>::new(
                &cpu,
                &cpu,
                S::preset_with_plain_modulus(N, t).unwrap(),
                Sampler::from_seed_u64(1),
            )
        })
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    plan.execute(&mut schemes).unwrap().estimates.iter().map(|e| e.plaintext).collect()
}

fn assert_matches(result: &StudyResult, expected: &[f64]) {
    assert_eq!(result.estimates.len(), expected.len());
    for (estimate, &plain) in result.estimates.iter().zip(expected) {
        assert!((estimate.value - plain).abs() <= 1e-9 * plain.abs().max(1.0), "{estimate:?} vs {plain}");
    }
}

fn every_statistic<S: StudyScheme + SerialScheme>() {
    // Synthetic features are tenths in [-200, 200] (fixed point 2 decimals: |v| <= 20000 for
    // features; the response a little more).
    let data = Dataset::synthetic(30, 3, &["x1", "x2", "y"]).unwrap();
    for statistic in [Statistic::Mean, Statistic::Variance, Statistic::Linreg] {
        let study = declare::<S>(&spec_of(statistic, &data, 100_000, 1000), 1);
        let cpu = CpuBackend::new(Some(2)).unwrap();
        let result = run_study::<S, _>(&study, &data, &cpu);
        assert_eq!(result.users, 30);
        assert_matches(&result, &plaintext::<S>(statistic, &data));
    }
}

#[test]
fn every_statistic_matches_the_plaintext_with_bgv() {
    every_statistic::<BgvContext>();
}

#[test]
fn every_statistic_matches_the_plaintext_with_bfv() {
    every_statistic::<BfvContext>();
}

#[test]
fn large_declared_bounds_use_several_moduli_and_stay_exact() {
    // Values up to 10^9 (fixed point) squared and summed over 10^5 users need ~77 bits.
    let data = Dataset::from_csv("v\n999999.999\n-123456.789\n5\n".as_bytes(), &["v"], Some(3)).unwrap();
    let study = declare::<BgvContext>(&spec_of(Statistic::Variance, &data, 1_000_000_000, 100_000), 1);
    assert!(study.plain_moduli.len() > 1, "{:?}", study.plain_moduli);
    let cpu = CpuBackend::new(Some(2)).unwrap();
    let result = run_study::<BgvContext, _>(&study, &data, &cpu);
    assert_matches(&result, &plaintext::<BgvContext>(Statistic::Variance, &data));
}

#[test]
fn a_server_on_emulated_dpus_gives_the_cpu_servers_result() {
    let data = Dataset::synthetic(12, 9, &["x1", "y"]).unwrap();
    let study = declare::<BgvContext>(&spec_of(Statistic::Linreg, &data, 100_000, 64), 1);
    let pim = PimBackend::new(PimConfig::new(8, Mode::Parallel), N, &study.backend_primes().unwrap()).unwrap();
    let cpu = CpuBackend::new(Some(2)).unwrap();
    let on_pim = run_study::<BgvContext, _>(&study, &data, &pim);
    let on_cpu = run_study::<BgvContext, _>(&study, &data, &cpu);
    assert!(pim.report().unwrap().launches > 0);
    assert_eq!(on_pim.estimates, on_cpu.estimates);
}

#[test]
fn the_bounds_are_enforced_on_both_sides() {
    let cpu = CpuBackend::new(Some(2)).unwrap();
    let study = declare::<BgvContext>(&StudySpec::new(Statistic::Mean, &["a", "b"], 0, 100, 2, N), 1);
    let (_secret, keys) = study.keygen::<BgvContext, _>(&cpu, Sampler::from_seed_u64(1)).unwrap();
    let message = study.encrypt_row::<BgvContext, _>(&cpu, &keys, &[5, -101], Sampler::from_seed_u64(2)).err().unwrap();
    assert!(message.to_string().contains("column 'b'"), "{message}");
    let message = study.encrypt_row::<BgvContext, _>(&cpu, &keys, &[5], Sampler::from_seed_u64(2)).err().unwrap();
    assert!(message.to_string().contains("2 columns"), "{message}");
    let submissions: Vec<_> = (0..3)
        .map(|i| {
            study.encrypt_row::<BgvContext, _>(&cpu, &keys, &[i, i], Sampler::from_seed_u64(3 + i as u64)).unwrap()
        })
        .collect();
    let message = study.aggregate::<BgvContext, _>(&cpu, &keys, submissions.iter()).err().unwrap();
    assert!(message.to_string().contains("more than the 2 users"), "{message}");
}

#[test]
fn a_tampered_study_is_refused() {
    let mut study = declare::<BfvContext>(&StudySpec::new(Statistic::Mean, &["a"], 0, 100, 10, N), 1);
    assert!(study.validate::<BfvContext>().is_ok());
    assert!(study.validate::<BgvContext>().is_err(), "declared for BFV");
    study.max_users = 1 << 40;
    let message = study.validate::<BfvContext>().unwrap_err().to_string();
    assert!(message.contains("plaintext moduli"), "{message}");
    let cpu = CpuBackend::new(Some(1)).unwrap();
    assert!(study.keygen::<BfvContext, _>(&cpu, Sampler::from_seed_u64(1)).is_err());
}

#[test]
fn files_of_another_study_or_damaged_files_are_refused() {
    let cpu = CpuBackend::new(Some(2)).unwrap();
    let spec = StudySpec::new(Statistic::Variance, &["a"], 0, 1000, 10, N);
    let study = declare::<BgvContext>(&spec, 1);
    let (_, keys) = study.keygen::<BgvContext, _>(&cpu, Sampler::from_seed_u64(1)).unwrap();
    let submission = study.encrypt_row::<BgvContext, _>(&cpu, &keys, &[3], Sampler::from_seed_u64(2)).unwrap();
    let bytes = submission.to_bytes(&cpu).unwrap();
    assert!(study.submission_from_bytes(&cpu, &keys, &bytes).is_ok());
    for cut in [0, 10, bytes.len() / 2, bytes.len() - 1] {
        assert!(study.submission_from_bytes(&cpu, &keys, &bytes[..cut]).is_err(), "cut at {cut}");
    }
    let mut flipped = bytes.clone();
    flipped[bytes.len() / 2] ^= 4;
    let message = study.submission_from_bytes(&cpu, &keys, &flipped).err().unwrap().to_string();
    assert!(message.contains("damaged"), "{message}");
    // A study of the same declaration is another study all the same: its keys, submissions
    // and aggregates are refused by name.
    let other = declare::<BgvContext>(&spec, 2);
    assert_eq!(other.plain_moduli, study.plain_moduli);
    let (_, other_keys) = other.keygen::<BgvContext, _>(&cpu, Sampler::from_seed_u64(1)).unwrap();
    let message = other.submission_from_bytes(&cpu, &other_keys, &bytes).err().unwrap().to_string();
    assert!(message.contains(&study.id.to_string()) && message.contains("another study"), "{message}");
    assert!(other.keys_from_bytes::<BgvContext>(&keys.to_bytes().unwrap()).is_err());
    let foreign = other.encrypt_row::<BgvContext, _>(&cpu, &other_keys, &[3], Sampler::from_seed_u64(2)).unwrap();
    let message = study.aggregate::<BgvContext, _>(&cpu, &keys, [&submission, &foreign]).err().unwrap().to_string();
    assert!(message.contains("submission 1") && message.contains("another study"), "{message}");
    // Aggregates (two per modulus for a variance, and a user count) are not a submission.
    let aggregates = study.aggregate::<BgvContext, _>(&cpu, &keys, [&submission]).unwrap();
    let aggregate_bytes = aggregates.to_bytes(&cpu).unwrap();
    assert!(study.aggregates_from_bytes(&cpu, &keys, &aggregate_bytes).is_ok());
    assert!(study.submission_from_bytes(&cpu, &keys, &aggregate_bytes).is_err());
    assert!(other.aggregates_from_bytes(&cpu, &other_keys, &aggregate_bytes).is_err());
}

/// A study's keys on the CPU, for the tests of what decryption detects.
struct Setup {
    cpu: CpuBackend,
    study: Study,
    secret: StudySecret<BgvContext>,
    keys: StudyKeys<BgvContext>,
}

impl Setup {
    fn new(spec: &StudySpec) -> Self {
        let cpu = CpuBackend::new(Some(2)).unwrap();
        let study = declare::<BgvContext>(spec, 1);
        let (secret, keys) = study.keygen::<BgvContext, _>(&cpu, Sampler::from_seed_u64(1)).unwrap();
        Self { cpu, study, secret, keys }
    }

    fn submit(&self, study: &Study, row: &[i64], seed: u64) -> Submission<CpuBackend, BgvContext> {
        study.encrypt_row::<BgvContext, _>(&self.cpu, &self.keys, row, Sampler::from_seed_u64(seed)).unwrap()
    }

    fn decrypt(
        &self,
        submissions: &[&Submission<CpuBackend, BgvContext>],
        stated_users: Option<usize>,
    ) -> Result<StudyResult, String> {
        let mut aggregates =
            self.study.aggregate::<BgvContext, _>(&self.cpu, &self.keys, submissions.iter().copied()).unwrap();
        if let Some(users) = stated_users {
            aggregates.users = users;
        }
        self.study.decrypt::<BgvContext, _>(&self.cpu, &self.secret, &aggregates).map_err(|e| e.to_string())
    }
}

#[test]
fn a_rewritten_user_count_is_caught_by_the_count_the_aggregates_carry() {
    let setup = Setup::new(&StudySpec::new(Statistic::Variance, &["a"], 0, 100, 10, N));
    let rows = [[10], [20], [-30]];
    let submissions: Vec<_> =
        rows.iter().enumerate().map(|(i, row)| setup.submit(&setup.study, row, 10 + i as u64)).collect();
    let refs: Vec<_> = submissions.iter().collect();
    let honest = setup.decrypt(&refs, None).unwrap();
    // The plaintext variance of 10, 20, -30: mean 0, mean of squares 1400/3.
    assert!((honest.estimates[0].value - 1400.0 / 3.0).abs() < 1e-9, "{honest:?}");
    for stated in [2, 4, 10] {
        let message = setup.decrypt(&refs, Some(stated)).unwrap_err();
        assert!(message.contains("counts 3 users") && message.contains(&format!("states {stated}")), "{message}");
    }
}

#[test]
fn values_past_the_declared_bound_are_detected_not_printed() {
    let setup = Setup::new(&StudySpec::new(Statistic::Variance, &["a"], 0, 100, 10, N));
    // A client that skips its own bound check (an edited declaration): 300 > 100, whose square
    // wraps around the plaintext modulus.
    let mut careless = setup.study.clone();
    careless.max_value = 1_000_000;
    let submissions = [setup.submit(&setup.study, &[50], 1), setup.submit(&careless, &[300], 2)];
    let message = setup.decrypt(&[&submissions[0], &submissions[1]], None).unwrap_err();
    assert!(message.contains("beyond") && message.contains("no statistic is printed"), "{message}");
}

#[test]
fn slots_no_submission_uses_must_decrypt_to_zero() {
    use pimhe_schemes::encoder::BatchEncoder;
    use pimhe_schemes::rlwe::Encryptor;
    let setup = Setup::new(&StudySpec::new(Statistic::Mean, &["a"], 0, 100, 10, N));
    let honest = setup.submit(&setup.study, &[7], 1);
    // A submission made by other software: the value, the count, and garbage in slot 9.
    let key = &setup.keys.public[0];
    let mut slots = vec![0u64; 10];
    (slots[0], slots[1], slots[9]) = (8, 1, 12345);
    let plain = BatchEncoder::new(key.context()).encode(&slots).unwrap();
    let fresh = Encryptor::with_public_key(&setup.cpu, key).unwrap().encrypt(&[plain]).unwrap();
    // At the primes the study's submissions keep (a fresh one is refused for its primes).
    let level = setup.study.submission_primes - 1;
    let ciphertext = BgvContext::switch_down(&setup.cpu, key.context(), fresh, level).unwrap();
    let forged = Submission {
        study: setup.study.id,
        id: Identifier::random(&mut Sampler::from_seed_u64(99)),
        ciphertexts: vec![vec![ciphertext]],
    };
    let message = setup.decrypt(&[&honest, &forged], None).unwrap_err();
    assert!(message.contains("slot 9") && message.contains("12345"), "{message}");
}

#[test]
fn a_submission_counts_once_and_a_statistic_needs_the_declared_fewest_users() {
    let setup = Setup::new(&StudySpec::new(Statistic::Mean, &["a"], 0, 100, 10, N));
    let one = setup.submit(&setup.study, &[7], 1);
    let message =
        setup.study.aggregate::<BgvContext, _>(&setup.cpu, &setup.keys, [&one, &one]).err().unwrap().to_string();
    assert!(message.contains("submissions 0 and 1 are the same submission"), "{message}");
    // One user's mean is that user's value: refused under the default minimum of 2.
    let message = setup.decrypt(&[&one], None).unwrap_err();
    assert!(message.contains("at least 2"), "{message}");
    let two = setup.submit(&setup.study, &[9], 2);
    assert_eq!(setup.decrypt(&[&one, &two], None).unwrap().estimates[0].value, 8.0);
}

#[test]
fn decryption_refuses_a_public_declaration_other_than_the_one_kept() {
    let setup = Setup::new(&StudySpec::new(Statistic::Mean, &["a"], 1, 1000, 10, N));
    let submissions = [setup.submit(&setup.study, &[75], 1), setup.submit(&setup.study, &[25], 2)];
    let aggregates = setup.study.aggregate::<BgvContext, _>(&setup.cpu, &setup.keys, submissions.iter()).unwrap();
    // The server edits decimals: the mean would print 10 times too small.
    let mut edited = setup.study.clone();
    edited.decimals = 2;
    let message = edited.decrypt::<BgvContext, _>(&setup.cpu, &setup.secret, &aggregates).err().unwrap().to_string();
    assert!(message.contains("decimals 1 (kept) vs 2 (public)"), "{message}");
    assert_eq!(
        setup.study.decrypt::<BgvContext, _>(&setup.cpu, &setup.secret, &aggregates).unwrap().estimates[0].value,
        5.0
    );
}
