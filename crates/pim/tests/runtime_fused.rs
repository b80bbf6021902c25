//! The fused operations (`tensor_square`, `constant_accumulate`, `mod_down_epilogue`) on the
//! PIM backend: against the testkit oracles and bit-identical to the CPU backend, in both
//! prime-group modes and both kernel variants, on odd DPU counts and batches that do not divide
//! evenly; on the DPUs within a pipeline (one launch), in rounds, and as a counted CPU fallback
//! over primes the DPUs do not serve.

use std::sync::Arc;

use pimhe_exec::{Backend, CpuBackend};
use pimhe_pim::layout::Variant;
use pimhe_pim::runtime::placement::Mode;
use pimhe_pim::runtime::{OffloadReport, PimBackend, PimConfig};
use pimhe_ring::{PolyBatch, Representation, RingBasis};
use pimhe_testkit::fused;
use pimhe_testkit::inputs::{random_batch, rng};
use rand_chacha::rand_core::Rng;

mod runtime_support;

use runtime_support::{configs, setup, N};

/// The (DPUs, mode) pairs every configuration test runs on.
const CONFIG_SHAPES: [(usize, Mode); 4] =
    [(7, Mode::Parallel), (5, Mode::Sequential), (9, Mode::Parallel), (11, Mode::Sequential)];

/// One constant per limb: a large one (reduced by the backend), 0 and one below the prime.
fn constants(r: &mut impl Rng, limbs: usize) -> Vec<u64> {
    (0..limbs).map(|i| [r.next_u64(), 0, r.next_u64() >> 40][i % 3]).collect()
}

fn check(pim: &PimBackend, x: &<PimBackend as Backend>::Buffer, oracle: &PolyBatch, cpu: &PolyBatch, what: &str) {
    let got = pim.download(x).unwrap();
    assert_eq!(&got, oracle, "{what}: against the oracle");
    assert_eq!(&got, cpu, "{what}: against the CPU backend");
}

/// Every fused operation on `count`-polynomial batches on a backend built from `config`.
fn fused_operations_on(config: PimConfig, count: usize, seed: u64) -> OffloadReport {
    let (primes, data, all) = setup();
    let cpu = CpuBackend::new(Some(2)).unwrap();
    let mut r = rng(seed);
    let label = format!("{:?} {:?} {} DPUs, {count} polynomials", config.mode, config.variant, config.dpus);
    let pim = PimBackend::new(config, N, &primes).unwrap();
    let batch =
        |r: &mut _, basis: &Arc<RingBasis>, count, representation| random_batch(r, basis, count, representation);

    // TensorSq.
    let (a0, a1) = (batch(&mut r, &data, count, Representation::Ntt), batch(&mut r, &data, count, Representation::Ntt));
    let (p0, p1) = (pim.upload(a0.clone()).unwrap(), pim.upload(a1.clone()).unwrap());
    let [d0, d1, d2] = pim.tensor_square(&p0, &p1).unwrap();
    let oracle = fused::tensor_square(&a0, &a1);
    let expected = cpu.tensor_square(&a0, &a1).unwrap();
    for (k, d) in [d0, d1, d2].iter().enumerate() {
        check(&pim, d, &oracle[k], &expected[k], &format!("tensor_square d{k} {label}"));
    }
    // The same buffer as both operands.
    let [s0, s1, s2] = pim.tensor_square(&p0, &p0).unwrap();
    let oracle = fused::tensor_square(&a0, &a0);
    for (k, d) in [s0, s1, s2].iter().enumerate() {
        assert_eq!(pim.download(d).unwrap(), oracle[k], "tensor_square(a, a) d{k} {label}");
    }

    // CAccum: one term without offset, three in NTT form and four in coefficient form with one
    // (the same buffer twice among them).
    for (terms, representation, offset) in
        [(1usize, Representation::Ntt, false), (3, Representation::Ntt, true), (4, Representation::Coefficient, true)]
    {
        let hosts: Vec<PolyBatch> = (0..terms.min(3)).map(|_| batch(&mut r, &data, count, representation)).collect();
        let hosts: Vec<&PolyBatch> = (0..terms).map(|j| &hosts[j % hosts.len()]).collect();
        let devices: Vec<_> = hosts.iter().map(|&h| pim.upload(h.clone()).unwrap()).collect();
        let cs: Vec<Vec<u64>> = (0..terms).map(|_| constants(&mut r, data.len())).collect();
        let offset = offset.then(|| constants(&mut r, data.len()).into_iter().rev().collect::<Vec<u64>>());
        let host_terms: Vec<(&PolyBatch, &[u64])> = hosts.iter().zip(&cs).map(|(&h, c)| (h, c.as_slice())).collect();
        let device_terms: Vec<_> = devices.iter().zip(&cs).map(|(d, c)| (d, c.as_slice())).collect();
        let got = pim.constant_accumulate(&device_terms, offset.as_deref()).unwrap();
        check(
            &pim,
            &got,
            &fused::constant_accumulate(&host_terms, offset.as_deref()),
            &cpu.constant_accumulate(&host_terms, offset.as_deref()).unwrap(),
            &format!("constant_accumulate of {terms} terms in {representation:?}, offset {offset:?}, {label}"),
        );
    }

    // ModDownEp: b with as many polynomials, in both representations, and b one polynomial over
    // a larger basis (broadcast over polynomials and primes).
    for representation in [Representation::Ntt, Representation::Coefficient] {
        let (a, b) = (batch(&mut r, &data, count, representation), batch(&mut r, &data, count, representation));
        let c = constants(&mut r, data.len());
        let got = pim.mod_down_epilogue(&pim.upload(a.clone()).unwrap(), &pim.upload(b.clone()).unwrap(), &c).unwrap();
        check(
            &pim,
            &got,
            &fused::mod_down_epilogue(&a, &b, &c),
            &cpu.mod_down_epilogue(&a, &b, &c).unwrap(),
            &format!("mod_down_epilogue {representation:?} {label}"),
        );
        let single = batch(&mut r, &all, 1, representation);
        let got =
            pim.mod_down_epilogue(&pim.upload(a.clone()).unwrap(), &pim.upload(single.clone()).unwrap(), &c).unwrap();
        check(
            &pim,
            &got,
            &fused::mod_down_epilogue(&a, &single.restrict(&data).unwrap(), &c),
            &cpu.mod_down_epilogue(&a, &single, &c).unwrap(),
            &format!("mod_down_epilogue broadcast {representation:?} {label}"),
        );
    }
    pim.report().unwrap()
}

#[test]
fn fused_operations_match_the_oracles_and_the_cpu_backend() {
    for (i, config) in configs(&CONFIG_SHAPES).into_iter().enumerate() {
        // 11 is not a multiple of any DPU count or group size used; 1 is replicated.
        for count in [11, 1] {
            let report = fused_operations_on(config.clone(), count, 100 + i as u64);
            assert_eq!((report.fallbacks, report.rounds), (0, 0), "all on the DPUs: {report:?}");
        }
    }
}

#[test]
fn fused_operations_on_batches_larger_than_mram_run_in_rounds() {
    let (primes, _, _) = setup();
    for (dpus, mode) in [(7, Mode::Parallel), (5, Mode::Sequential)] {
        for variant in Variant::ALL {
            let mut config = PimConfig::new(dpus, mode);
            config.variant = variant;
            // Room for 26 polynomials of N = 256 per DPU: a 50-polynomial operand is streamed.
            let probe = PimBackend::new(config.clone(), N, &primes).unwrap();
            let overhead = config.emulator.mram_bytes - probe.mram_free_bytes();
            config.emulator.mram_bytes = overhead + 26 * N * 4;
            let report = fused_operations_on(config, 50, 7);
            assert!(report.rounds >= 2 * 7, "every operation runs in several rounds: {report:?}");
            assert_eq!(report.fallbacks, 0, "{report:?}");
        }
    }
}

#[test]
fn a_constant_accumulation_runs_in_the_pipelines_launch_with_the_accumulator_resident() {
    // NTT of five terms, CAccum with an offset, inverse NTT: one launch per prime group
    // (one in parallel mode, one per prime in sequential mode), nothing back before the end.
    let (primes, data, _) = setup();
    let cpu = CpuBackend::new(Some(2)).unwrap();
    let mut r = rng(21);
    for (dpus, mode, launches) in [(9, Mode::Parallel, 1), (5, Mode::Sequential, 3)] {
        let pim = PimBackend::new(PimConfig::new(dpus, mode), N, &primes).unwrap();
        let mut hosts: Vec<PolyBatch> =
            (0..5).map(|_| random_batch(&mut r, &data, 13, Representation::Coefficient)).collect();
        let mut devices: Vec<_> = hosts.iter().map(|h| pim.upload(h.clone()).unwrap()).collect();
        pim.reset_report().unwrap();
        for (d, h) in devices.iter_mut().zip(hosts.iter_mut()) {
            pim.ntt(d).unwrap();
            cpu.ntt(h).unwrap();
        }
        let cs: Vec<Vec<u64>> = (0..5).map(|_| constants(&mut r, 3)).collect();
        let offset = constants(&mut r, 3);
        let device_terms: Vec<_> = devices.iter().zip(&cs).map(|(d, c)| (d, c.as_slice())).collect();
        let host_terms: Vec<_> = hosts.iter().zip(&cs).map(|(h, c)| (h, c.as_slice())).collect();
        let mut acc = pim.constant_accumulate(&device_terms, Some(&offset)).unwrap();
        let mut expected = cpu.constant_accumulate(&host_terms, Some(&offset)).unwrap();
        let [mut x, _, _] = pim.tensor_square(&acc, &devices[0]).unwrap();
        let [mut y, _, _] = cpu.tensor_square(&expected, &hosts[0]).unwrap();
        let mut z = pim.mod_down_epilogue(&acc, &devices[1], &offset).unwrap();
        let mut w = cpu.mod_down_epilogue(&expected, &hosts[1], &offset).unwrap();
        for (d, h) in [(&mut acc, &mut expected), (&mut x, &mut y), (&mut z, &mut w)] {
            pim.intt(d).unwrap();
            cpu.intt(h).unwrap();
        }
        let before = pim.report().unwrap();
        assert_eq!(before.launches, launches, "{mode:?}: one launch per prime group: {before:?}");
        assert_eq!((before.bytes_from_dpus, before.bytes_to_dpus, before.fallbacks), (0, 0, 0), "{before:?}");
        for (d, h) in [(&acc, &expected), (&x, &y), (&z, &w)] {
            assert_eq!(&pim.download(d).unwrap(), h, "{mode:?}");
        }
    }
}

#[test]
fn fused_operations_over_unserved_primes_are_counted_fallbacks() {
    // The backend serves three primes; batches over all four stay on the host.
    let (primes, _, all) = setup();
    let cpu = CpuBackend::new(Some(2)).unwrap();
    let mut r = rng(31);
    let pim = PimBackend::new(PimConfig::new(6, Mode::Parallel), N, &primes[..3]).unwrap();
    let (a, b) =
        (random_batch(&mut r, &all, 5, Representation::Ntt), random_batch(&mut r, &all, 5, Representation::Ntt));
    let (pa, pb) = (pim.upload(a.clone()).unwrap(), pim.upload(b.clone()).unwrap());
    let (c0, c1, offset) = (constants(&mut r, 4), constants(&mut r, 4), constants(&mut r, 4));
    let squares = pim.tensor_square(&pa, &pb).unwrap();
    for (d, h) in squares.iter().zip(&fused::tensor_square(&a, &b)) {
        assert_eq!(&pim.download(d).unwrap(), h);
    }
    let acc = pim.constant_accumulate(&[(&pa, &c0), (&pb, &c1)], Some(&offset)).unwrap();
    let expected = cpu.constant_accumulate(&[(&a, &c0), (&b, &c1)], Some(&offset)).unwrap();
    assert_eq!(pim.download(&acc).unwrap(), expected);
    let epilogue = pim.mod_down_epilogue(&pa, &pb, &c0).unwrap();
    assert_eq!(pim.download(&epilogue).unwrap(), fused::mod_down_epilogue(&a, &b, &c0));
    assert_eq!(pim.report().unwrap().fallbacks, 3);
}

#[test]
fn fused_operations_refuse_what_the_cpu_backend_refuses() {
    let (primes, data, _) = setup();
    let cpu = CpuBackend::new(Some(2)).unwrap();
    let mut r = rng(41);
    let pim = PimBackend::new(PimConfig::new(4, Mode::Parallel), N, &primes).unwrap();
    let ntt = random_batch(&mut r, &data, 3, Representation::Ntt);
    let coefficients = random_batch(&mut r, &data, 3, Representation::Coefficient);
    let other = random_batch(&mut r, &data, 2, Representation::Ntt);
    let (pn, pc, po) = (
        pim.upload(ntt.clone()).unwrap(),
        pim.upload(coefficients.clone()).unwrap(),
        pim.upload(other.clone()).unwrap(),
    );
    let c = [1u64, 2, 3];
    let message = |e: pimhe_exec::ExecError| e.to_string();
    let pairs = [
        (
            pim.tensor_square(&pc, &pc).err().map(message),
            cpu.tensor_square(&coefficients, &coefficients).err().map(message),
        ),
        (pim.tensor_square(&pn, &po).err().map(message), cpu.tensor_square(&ntt, &other).err().map(message)),
        (pim.constant_accumulate(&[], None).err().map(message), cpu.constant_accumulate(&[], None).err().map(message)),
        (
            pim.constant_accumulate(&[(&pn, &c), (&pc, &c)], None).err().map(message),
            cpu.constant_accumulate(&[(&ntt, &c), (&coefficients, &c)], None).err().map(message),
        ),
        (
            pim.constant_accumulate(&[(&pn, &c[..2])], None).err().map(message),
            cpu.constant_accumulate(&[(&ntt, &c[..2])], None).err().map(message),
        ),
        (
            pim.mod_down_epilogue(&pn, &pc, &c).err().map(message),
            cpu.mod_down_epilogue(&ntt, &coefficients, &c).err().map(message),
        ),
        (
            pim.mod_down_epilogue(&pn, &po, &c).err().map(message),
            cpu.mod_down_epilogue(&ntt, &other, &c).err().map(message),
        ),
        (
            pim.mod_down_epilogue(&pn, &pn, &c[..1]).err().map(message),
            cpu.mod_down_epilogue(&ntt, &ntt, &c[..1]).err().map(message),
        ),
    ];
    for (k, (from_pim, from_cpu)) in pairs.into_iter().enumerate() {
        assert!(from_pim.is_some(), "case {k} is refused");
        assert_eq!(from_pim, from_cpu, "case {k}");
    }
}
