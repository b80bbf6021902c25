//! The client/server study: users encrypting independently with the public keys, a server with
//! no secret adding up, the analyst decrypting. Against the in-process plan's plaintext column
//! (an independent f64 computation from the values), on the CPU and the emulated DPUs.

use pimhe_exec::{Backend, CpuBackend};
use pimhe_math::Sampler;
use pimhe_pim::runtime::placement::Mode;
use pimhe_pim::runtime::{PimBackend, PimConfig};
use pimhe_workloads::stats::study::{Study, StudyResult};

use pimhe_workloads::stats::{Bfv, Bgv, Dataset, HeScheme, Statistic, StatsPlan};

const N: usize = 8192;

fn columns(names: &[&str]) -> Vec<String> {
    names.iter().map(|c| c.to_string()).collect()
}

/// Every party on its own: the analyst makes the keys on the CPU, each user loads the public
/// keys and encrypts their row, the server loads the public keys and the submissions onto
/// `server` and adds them up, the analyst loads the aggregates and decrypts. Everything that
/// passes between them goes through bytes.
fn run_study<S: HeScheme, B: Backend>(study: &Study, data: &Dataset, server: &B) -> StudyResult {
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
    let secret = study.secret_from_bytes(&keys, &secret_bytes).unwrap();
    let aggregates = study.aggregates_from_bytes(&cpu, &keys, &aggregates).unwrap();
    study.decrypt::<S, _>(&cpu, &secret, &aggregates).unwrap()
}

/// The plaintext estimates of the same statistic over the same data.
fn plaintext<S: HeScheme>(statistic: Statistic, data: &Dataset) -> Vec<f64> {
    let plan = StatsPlan::new(statistic, data.clone(), N, S::max_plain_bits(N).unwrap()).unwrap();
    let cpu = CpuBackend::new(Some(2)).unwrap();
    let mut schemes = plan
        .plain_moduli()
        .iter()
        .map(|&t| {
            pimhe_workloads::stats::SchemeStats::<S, _, _>::new(
                &cpu,
                &cpu,
                S::parameters(N, t).unwrap(),
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

fn every_statistic<S: HeScheme>() {
    // Synthetic features are tenths in [-200, 200] (fixed point 2 decimals: |v| <= 20000 for
    // features; the response a little more).
    let data = Dataset::synthetic(30, 3, &["x1", "x2", "y"]).unwrap();
    for statistic in [Statistic::Mean, Statistic::Variance, Statistic::Linreg] {
        let study = Study::new::<S>(statistic, data.columns(), data.decimals(), 100_000, 1000, N).unwrap();
        let cpu = CpuBackend::new(Some(2)).unwrap();
        let result = run_study::<S, _>(&study, &data, &cpu);
        assert_eq!(result.users, 30);
        assert_matches(&result, &plaintext::<S>(statistic, &data));
    }
}

#[test]
fn every_statistic_matches_the_plaintext_with_bgv() {
    every_statistic::<Bgv>();
}

#[test]
fn every_statistic_matches_the_plaintext_with_bfv() {
    every_statistic::<Bfv>();
}

#[test]
fn large_declared_bounds_use_several_moduli_and_stay_exact() {
    // Values up to 10^9 (fixed point) squared and summed over 10^5 users need ~77 bits.
    let data = Dataset::from_csv("v\n999999.999\n-123456.789\n5\n".as_bytes(), &["v"], Some(3)).unwrap();
    let study = Study::new::<Bgv>(Statistic::Variance, data.columns(), 3, 1_000_000_000, 100_000, N).unwrap();
    assert!(study.plain_moduli.len() > 1, "{:?}", study.plain_moduli);
    let cpu = CpuBackend::new(Some(2)).unwrap();
    let result = run_study::<Bgv, _>(&study, &data, &cpu);
    assert_matches(&result, &plaintext::<Bgv>(Statistic::Variance, &data));
}

#[test]
fn a_server_on_emulated_dpus_gives_the_cpu_servers_result() {
    let data = Dataset::synthetic(12, 9, &["x1", "y"]).unwrap();
    let study = Study::new::<Bgv>(Statistic::Linreg, data.columns(), data.decimals(), 100_000, 64, N).unwrap();
    let ctx = &study.contexts::<Bgv>().unwrap()[0];
    let pim = PimBackend::new(PimConfig::new(8, Mode::Parallel), N, &Bgv::backend_primes(ctx)).unwrap();
    let cpu = CpuBackend::new(Some(2)).unwrap();
    let on_pim = run_study::<Bgv, _>(&study, &data, &pim);
    let on_cpu = run_study::<Bgv, _>(&study, &data, &cpu);
    assert!(pim.report().unwrap().launches > 0);
    assert_eq!(on_pim.estimates, on_cpu.estimates);
}

#[test]
fn the_bounds_are_enforced_on_both_sides() {
    let cpu = CpuBackend::new(Some(2)).unwrap();
    let study = Study::new::<Bgv>(Statistic::Mean, &columns(&["a", "b"]), 0, 100, 2, N).unwrap();
    let (_secret, keys) = study.keygen::<Bgv, _>(&cpu, Sampler::from_seed_u64(1)).unwrap();
    let message = study.encrypt_row::<Bgv, _>(&cpu, &keys, &[5, -101], Sampler::from_seed_u64(2)).err().unwrap();
    assert!(message.to_string().contains("column 'b'"), "{message}");
    let message = study.encrypt_row::<Bgv, _>(&cpu, &keys, &[5], Sampler::from_seed_u64(2)).err().unwrap();
    assert!(message.to_string().contains("2 columns"), "{message}");
    let submissions: Vec<_> =
        (0..3).map(|i| study.encrypt_row::<Bgv, _>(&cpu, &keys, &[i, i], Sampler::from_seed_u64(3)).unwrap()).collect();
    let message = study.aggregate::<Bgv, _>(&cpu, &keys, submissions.iter()).err().unwrap();
    assert!(message.to_string().contains("more than the 2 users"), "{message}");
}

#[test]
fn a_tampered_study_is_refused() {
    let mut study = Study::new::<Bfv>(Statistic::Mean, &columns(&["a"]), 0, 100, 10, N).unwrap();
    assert!(study.validate::<Bfv>().is_ok());
    assert!(study.validate::<Bgv>().is_err(), "declared for BFV");
    study.max_users = 1 << 40;
    let message = study.validate::<Bfv>().unwrap_err().to_string();
    assert!(message.contains("plaintext moduli"), "{message}");
    let cpu = CpuBackend::new(Some(1)).unwrap();
    assert!(study.keygen::<Bfv, _>(&cpu, Sampler::from_seed_u64(1)).is_err());
}

#[test]
fn files_of_another_study_or_damaged_files_are_refused() {
    let cpu = CpuBackend::new(Some(2)).unwrap();
    let study = Study::new::<Bgv>(Statistic::Variance, &columns(&["a"]), 0, 1000, 10, N).unwrap();
    let (_, keys) = study.keygen::<Bgv, _>(&cpu, Sampler::from_seed_u64(1)).unwrap();
    let submission = study.encrypt_row::<Bgv, _>(&cpu, &keys, &[3], Sampler::from_seed_u64(2)).unwrap();
    let bytes = submission.to_bytes(&cpu).unwrap();
    assert!(study.submission_from_bytes(&cpu, &keys, &bytes).is_ok());
    for cut in [0, 10, bytes.len() / 2, bytes.len() - 1] {
        assert!(study.submission_from_bytes(&cpu, &keys, &bytes[..cut]).is_err(), "cut at {cut}");
    }
    // A study of larger values needs other plaintext moduli: its keys do not load this
    // study's files, nor this study's keys its.
    let other = Study::new::<Bgv>(Statistic::Variance, &columns(&["a"]), 0, 1 << 40, 10, N).unwrap();
    assert_ne!(other.plain_moduli, study.plain_moduli);
    let (_, other_keys) = other.keygen::<Bgv, _>(&cpu, Sampler::from_seed_u64(1)).unwrap();
    assert!(other.submission_from_bytes(&cpu, &other_keys, &bytes).is_err());
    assert!(other.keys_from_bytes::<Bgv>(&keys.to_bytes().unwrap()).is_err());
    // Aggregates (two per modulus for a variance, and a user count) are not a submission.
    let aggregates = study.aggregate::<Bgv, _>(&cpu, &keys, [&submission]).unwrap();
    let aggregate_bytes = aggregates.to_bytes(&cpu).unwrap();
    assert!(study.aggregates_from_bytes(&cpu, &keys, &aggregate_bytes).is_ok());
    assert!(study.submission_from_bytes(&cpu, &keys, &aggregate_bytes).is_err());
}
