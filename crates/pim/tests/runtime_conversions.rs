//! Conversions across primes (FastBConv, ModDown, the division by the last prime) on the DPUs
//! in the modes that run them there: hybrid (limbs on their primes' DPU groups, conversions on
//! coefficient slices over every DPU) and sequential (every limb of a share on one DPU, one
//! launch per prime, a conversion's terms onto a prime in that prime's launch). They must
//! equal the CPU backend's bit for bit and run with no CPU fallback; the hybrid mode prices the
//! re-slicing as the transfers it is. And the parallel mode's ModUp, whole on the host.

use pimhe_exec::{Backend, CpuBackend, KeySwitchPlan};
use pimhe_math::Modulus;
use pimhe_pim::layout::Variant;
use pimhe_pim::runtime::placement::Mode;
use pimhe_pim::runtime::{slice_degree, PimBackend, PimConfig};
use pimhe_ring::{PolyBatch, Representation};
use pimhe_testkit::inputs::{basis_of, distinct_primes, random_batch, rng};

const N: usize = 256;

fn words(batch: &PolyBatch) -> Vec<u32> {
    (0..batch.basis().len()).flat_map(|limb| batch.limb(limb).to_vec()).collect()
}

/// The (mode, DPUs, kernels) each conversion runs on: odd DPU counts that do not divide the
/// batches, both kernels.
fn configurations(primes: usize) -> Vec<(Mode, usize, Variant)> {
    vec![
        (Mode::Hybrid, primes, Variant::Best),
        (Mode::Hybrid, 2 * primes + 1, Variant::Barrett),
        (Mode::Hybrid, 23, Variant::Best),
        (Mode::Sequential, 1, Variant::Barrett),
        (Mode::Sequential, 3, Variant::Best),
        (Mode::Sequential, 7, Variant::Barrett),
    ]
}

/// Runs `op` on the CPU and on every configuration, checks the results agree bit for bit and
/// that the DPUs did the conversion (no fallback).
fn agrees(
    primes: &[u32],
    input: &PolyBatch,
    cpu_op: impl Fn(&CpuBackend, &<CpuBackend as Backend>::Buffer) -> <CpuBackend as Backend>::Buffer,
    pim_op: impl Fn(&PimBackend, &<PimBackend as Backend>::Buffer) -> <PimBackend as Backend>::Buffer,
) {
    let cpu = CpuBackend::new(Some(1)).unwrap();
    let expected = cpu.download(&cpu_op(&cpu, &cpu.upload(input.clone()).unwrap())).unwrap();
    for (mode, dpus, variant) in configurations(primes.len()) {
        let what = format!("{mode:?}, {dpus} DPUs, {variant:?} kernels");
        let mut config = PimConfig::new(dpus, mode);
        config.variant = variant;
        let pim = PimBackend::new(config, N, primes).unwrap();
        let a = pim.upload(input.clone()).unwrap();
        pim.reset_report().unwrap();
        let out = pim.download(&pim_op(&pim, &a)).unwrap();
        assert_eq!(out.basis().primes(), expected.basis().primes());
        assert_eq!(out.representation(), expected.representation());
        assert_eq!(words(&out), words(&expected), "{what}");
        let report = pim.report().unwrap();
        assert_eq!(report.fallbacks, 0, "the conversion ran on the DPUs: {what}");
        match mode {
            Mode::Hybrid => {
                assert!(report.launches >= 2, "the groups' launch and the slices' launch: {what}");
                assert!(report.bytes_to_dpus > 0 && report.bytes_from_dpus > 0 && report.transfer_s > 0.0);
            }
            // At least one launch per prime of the output; nothing crossed the bus but the result.
            Mode::Sequential => {
                assert!(report.launches >= out.basis().len() as u64, "{what}: {report:?}");
                assert_eq!(report.bytes_to_dpus, 0, "{what}: {report:?}");
            }
            Mode::Parallel | Mode::CiphertextMajor => unreachable!("not among the configurations"),
        }
    }
}

#[test]
fn base_conversions_equal_the_cpu_backend() {
    let primes = distinct_primes(N, &[28, 29, 30, 27, 26]);
    let mut r = rng(11);
    let from = basis_of(N, &primes[1..3]);
    let target = basis_of(N, &primes);
    let a = random_batch(&mut r, &from, 3, Representation::Coefficient);
    agrees(&primes, &a, |cpu, x| cpu.base_convert(x, &target).unwrap(), |pim, x| pim.base_convert(x, &target).unwrap());
    agrees(
        &primes,
        &a,
        |cpu, x| {
            let mut ntt = cpu.copy(x).unwrap();
            cpu.ntt(&mut ntt).unwrap();
            cpu.base_convert_ntt(x, &ntt, &target).unwrap()
        },
        |pim, x| {
            let mut ntt = pim.copy(x).unwrap();
            pim.ntt(&mut ntt).unwrap();
            pim.base_convert_ntt(x, &ntt, &target).unwrap()
        },
    );
}

#[test]
fn mod_down_and_division_by_the_last_prime_equal_the_cpu_backend() {
    let primes = distinct_primes(N, &[28, 29, 30, 27, 26]);
    let basis = basis_of(N, &primes);
    let mut r = rng(12);
    let t = Modulus::new(65537).unwrap();
    for representation in [Representation::Coefficient, Representation::Ntt] {
        let a = random_batch(&mut r, &basis, 2, representation);
        for plain in [None, Some(t)] {
            agrees(
                &primes,
                &a,
                |cpu, x| cpu.mod_down(x, 2, plain).unwrap(),
                |pim, x| pim.mod_down(x, 2, plain).unwrap(),
            );
            agrees(
                &primes,
                &a,
                |cpu, x| cpu.mod_down_last(x, plain).unwrap(),
                |pim, x| pim.mod_down_last(x, plain).unwrap(),
            );
        }
    }
}

/// In the parallel mode ModUp runs whole on the host: the input is pulled once, in NTT form,
/// nothing runs on the DPUs before it, and the digits (and the switch built on them) equal the
/// CPU backend's.
#[test]
fn parallel_mode_runs_mod_up_whole_on_the_host() {
    let primes = distinct_primes(N, &[28, 29, 30, 27, 26]);
    let (input, extended) = (basis_of(N, &primes[..3]), basis_of(N, &primes));
    let digits = [basis_of(N, &primes[..2]), basis_of(N, &primes[2..3])];
    let t = Modulus::new(65537).unwrap();
    let plan = KeySwitchPlan { digits: &digits, extended: &extended, plain_modulus: Some(t) };
    let mut r = rng(13);
    let c = random_batch(&mut r, &input, 3, Representation::Ntt);
    let keys: Vec<(PolyBatch, PolyBatch)> = (0..2)
        .map(|_| {
            let mut key = || random_batch(&mut r, &extended, 1, Representation::Ntt);
            (key(), key())
        })
        .collect();
    let cpu = CpuBackend::new(Some(1)).unwrap();
    let (cpu_c, cpu_keys) = (cpu.upload(c.clone()).unwrap(), upload_keys(&cpu, &keys));
    let expected_digits: Vec<PolyBatch> = cpu.mod_up(&cpu_c, &plan).unwrap();
    let (b, a) = cpu.key_switch(&cpu_c, &cpu_keys, &plan).unwrap();
    for dpus in [5, 11] {
        let pim = PimBackend::new(PimConfig::new(dpus, Mode::Parallel), N, &primes).unwrap();
        let (pim_c, pim_keys) = (pim.upload(c.clone()).unwrap(), upload_keys(&pim, &keys));
        pim.reset_report().unwrap();
        let pim_digits = pim.mod_up(&pim_c, &plan).unwrap();
        let report = pim.report().unwrap();
        assert_eq!((report.fallbacks, report.launches), (1, 0), "{dpus} DPUs: {report:?}");
        let bytes = |batch: &PolyBatch| (batch.basis().len() * batch.count() * N * 4) as u64;
        assert_eq!(report.bytes_from_dpus, bytes(&c), "the input, once: {report:?}");
        assert_eq!(report.bytes_to_dpus, expected_digits.iter().map(bytes).sum::<u64>(), "{report:?}");
        for (digit, expected) in pim_digits.iter().zip(&expected_digits) {
            assert_eq!(&pim.download(digit).unwrap(), expected, "{dpus} DPUs");
        }
        let (pb, pa) = pim.key_switch(&pim_c, &pim_keys, &plan).unwrap();
        assert_eq!(pim.download(&pb).unwrap(), b, "{dpus} DPUs");
        assert_eq!(pim.download(&pa).unwrap(), a, "{dpus} DPUs");
    }
}

fn upload_keys<B: Backend>(backend: &B, keys: &[(PolyBatch, PolyBatch)]) -> Vec<(B::Buffer, B::Buffer)> {
    keys.iter().map(|(b, a)| (backend.upload(b.clone()).unwrap(), backend.upload(a.clone()).unwrap())).collect()
}

#[test]
fn slices_cover_every_dpu_down_to_the_smallest_kernel_degree() {
    for (n, dpus, slice) in [(8192, 64, 128), (8192, 65, 64), (256, 5, 32), (256, 64, 16), (16, 3, 16)] {
        assert_eq!(slice_degree(n, dpus), slice, "N = {n}, {dpus} DPUs");
    }
}
