//! The PIM backend against the CPU backend: every operation, both modes, both kernel variants,
//! odd DPU counts and batches that do not divide evenly must give bit-identical results.

use std::sync::Arc;

use pimhe_exec::{Backend, CpuBackend};
use pimhe_pim::layout::Variant;
use pimhe_pim::runtime::placement::Mode;
use pimhe_pim::runtime::{OffloadReport, PimBackend, PimConfig};
use pimhe_ring::{PolyBatch, Representation, RingBasis};
use pimhe_testkit::inputs::{distinct_primes, random_batch, rng};

mod runtime_support;

use runtime_support::{configs, setup, N};

/// The (DPUs, mode) pairs every configuration test runs on.
const CONFIG_SHAPES: [(usize, Mode); 2] = [(7, Mode::Parallel), (5, Mode::Sequential)];

fn same(pim: &PimBackend, cpu: &CpuBackend, x: &<PimBackend as Backend>::Buffer, y: &PolyBatch, what: &str) {
    let from_pim = pim.download(x).unwrap();
    assert_eq!(&from_pim, &cpu.download(y).unwrap(), "{what} on {:?}", pim.config().mode);
}

#[test]
fn every_operation_matches_the_cpu_backend() {
    for config in configs(&CONFIG_SHAPES) {
        // 11 is not a multiple of any DPU count used.
        let mode = config.mode;
        let (report, conversion_fallbacks) = every_operation_on(config, 11, 11);
        assert_eq!(report.rounds, 0, "11 polynomials fit in MRAM: {report:?}");
        // The four conversions fall back to the CPU in parallel mode only: in sequential mode
        // a DPU holds every limb of its share, and they run in the target primes' launches.
        match mode {
            Mode::Parallel => assert!(conversion_fallbacks >= 4, "{report:?}"),
            Mode::Sequential | Mode::CiphertextMajor | Mode::Hybrid => {
                assert_eq!(conversion_fallbacks, 0, "{mode:?}: {report:?}")
            }
        }
    }
}

#[test]
fn batches_larger_than_mram_run_in_rounds_and_match_the_cpu_backend() {
    let (primes, _, _) = setup();
    for mut config in configs(&CONFIG_SHAPES) {
        // Room for 26 polynomials of N = 256 per DPU. A 50-polynomial operand takes 50 per DPU in
        // parallel mode (groups of one DPU) and 3 limbs x 10 = 30 in sequential mode (5 DPUs),
        // so every such operand is streamed, while a tensor round of two (7 buffers of 3 limbs
        // on one DPU, beside the resident broadcast polynomial's 4 limbs) still fits.
        let probe = PimBackend::new(config.clone(), N, &primes).unwrap();
        let overhead = config.emulator.mram_bytes - probe.mram_free_bytes();
        config.emulator.mram_bytes = overhead + 26 * N * 4;
        let (report, conversion_fallbacks) = every_operation_on(config, 50, 12);
        assert!(report.rounds >= 2 * 8, "every operation runs in several rounds: {report:?}");
        assert!(conversion_fallbacks >= 4, "conversions of streamed operands run on the CPU: {report:?}");
    }
}

#[test]
fn an_operation_whose_single_polynomial_does_not_fit_is_an_error_that_keeps_the_inputs() {
    let (primes, data, _) = setup();
    let mut config = PimConfig::new(4, Mode::Parallel);
    // The header, command slots and one prime's twiddles, as a roomy backend leaves them; then
    // room for 2 polynomials.
    let overhead = config.emulator.mram_bytes - PimBackend::new(config.clone(), N, &primes).unwrap().mram_free_bytes();
    config.emulator.mram_bytes = overhead + 2 * N * 4;
    let pim = PimBackend::new(config, N, &primes).unwrap();
    let a = random_batch(&mut rng(3), &data, 1, Representation::Ntt);
    let (pa, pb) = (pim.upload(a.clone()).unwrap(), pim.upload(a.clone()).unwrap());
    let message = match pim.add(&pa, &pb) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("a third polynomial cannot fit"),
    };
    assert!(message.contains("upmem rounds") && message.contains("not even one polynomial"), "{message}");
    assert_eq!(pim.download(&pa).unwrap(), a);
    assert_eq!(pim.download(&pb).unwrap(), a);
}

/// Runs every backend operation on `count`-polynomial batches on a backend built from `config`,
/// checks each against the CPU backend, and returns the offload report with the CPU fallbacks
/// of the four conversions (base_convert, base_convert_ntt, mod_down_last, mod_down).
fn every_operation_on(config: PimConfig, count: usize, seed: u64) -> (OffloadReport, u64) {
    let (primes, data, all) = setup();
    let cpu = CpuBackend::new(Some(2)).unwrap();
    let mut r = rng(seed);
    {
        let label = format!("{:?} {:?} {} DPUs", config.mode, config.variant, config.dpus);
        let pim = PimBackend::new(config, N, &primes).unwrap();
        let a = random_batch(&mut r, &data, count, Representation::Ntt);
        let b = random_batch(&mut r, &data, count, Representation::Ntt);
        let single = random_batch(&mut r, &all, 1, Representation::Ntt); // broadcast over polys and primes
        let coefficients = random_batch(&mut r, &data, count, Representation::Coefficient);
        let (pa, pb, ps) =
            (pim.upload(a.clone()).unwrap(), pim.upload(b.clone()).unwrap(), pim.upload(single.clone()).unwrap());
        same(&pim, &cpu, &pa, &a, &format!("upload/download {label}"));
        same(&pim, &cpu, &pim.add(&pa, &pb).unwrap(), &cpu.add(&a, &b).unwrap(), &format!("add {label}"));
        same(&pim, &cpu, &pim.sub(&pa, &pb).unwrap(), &cpu.sub(&a, &b).unwrap(), &format!("sub {label}"));
        same(&pim, &cpu, &pim.neg(&pa).unwrap(), &cpu.neg(&a).unwrap(), &format!("neg {label}"));
        same(&pim, &cpu, &pim.mul(&pa, &pb).unwrap(), &cpu.mul(&a, &b).unwrap(), &format!("mul {label}"));
        same(
            &pim,
            &cpu,
            &pim.mul(&pa, &ps).unwrap(),
            &cpu.mul(&a, &single).unwrap(),
            &format!("broadcast mul {label}"),
        );
        same(
            &pim,
            &cpu,
            &pim.add(&pa, &ps).unwrap(),
            &cpu.add(&a, &single).unwrap(),
            &format!("broadcast add {label}"),
        );
        same(
            &pim,
            &cpu,
            &pim.mul_scalar(&pa, 123_456_789_012).unwrap(),
            &cpu.mul_scalar(&a, 123_456_789_012).unwrap(),
            &format!("mul_scalar {label}"),
        );
        let constants: Vec<u64> = (0..a.basis().len() as u64).map(|i| 987_654_321_987 * (i + 2)).collect();
        same(
            &pim,
            &cpu,
            &pim.mul_limb_constants(&pa, &constants).unwrap(),
            &cpu.mul_limb_constants(&a, &constants).unwrap(),
            &format!("mul_limb_constants {label}"),
        );
        same(&pim, &cpu, &pim.sum(&pa).unwrap(), &cpu.sum(&a).unwrap(), &format!("sum {label}"));
        same(&pim, &cpu, &pim.sum(&ps).unwrap(), &cpu.sum(&single).unwrap(), &format!("sum of one {label}"));
        let (mut acc, mut cpu_acc) = (pim.copy(&pa).unwrap(), a.clone());
        pim.mac(&mut acc, &pb, &ps).unwrap();
        cpu.mac(&mut cpu_acc, &b, &single).unwrap();
        pim.add_assign(&mut acc, &pb).unwrap();
        cpu.add_assign(&mut cpu_acc, &b).unwrap();
        same(&pim, &cpu, &acc, &cpu_acc, &format!("mac + add_assign {label}"));

        let [d0, d1, d2] = pim.tensor(&pa, &pb, &pb, &pa).unwrap();
        let [e0, e1, e2] = cpu.tensor(&a, &b, &b, &a).unwrap();
        for (x, y) in [(&d0, &e0), (&d1, &e1), (&d2, &e2)] {
            same(&pim, &cpu, x, y, &format!("tensor {label}"));
        }

        let (mut pc, mut cc) = (pim.upload(coefficients.clone()).unwrap(), coefficients.clone());
        pim.ntt(&mut pc).unwrap();
        cpu.ntt(&mut cc).unwrap();
        same(&pim, &cpu, &pc, &cc, &format!("ntt {label}"));
        pim.intt(&mut pc).unwrap();
        same(&pim, &cpu, &pc, &coefficients, &format!("intt round trip {label}"));

        for k in [5, 2 * N - 1, 3 * 2 * N + 7] {
            same(
                &pim,
                &cpu,
                &pim.automorphism(&pa, k).unwrap(),
                &cpu.automorphism(&a, k).unwrap(),
                &format!("automorphism {k} {label}"),
            );
            same(
                &pim,
                &cpu,
                &pim.automorphism(&pc, k).unwrap(),
                &cpu.automorphism(&coefficients, k).unwrap(),
                &format!("coefficient-form automorphism {k} {label}"),
            );
        }

        let lower = data.prefix(2).unwrap();
        same(
            &pim,
            &cpu,
            &pim.restrict(&pa, &lower).unwrap(),
            &cpu.restrict(&a, &lower).unwrap(),
            &format!("restrict {label}"),
        );
        // Conversions: on the DPUs where a DPU holds every limb of its share, else CPU
        // fallbacks; either way they must agree.
        let before_conversions = pim.report().unwrap().fallbacks;
        let (pcoeff, other) = (pim.upload(coefficients.clone()).unwrap(), RingBasis::new(N, &primes[3..]).unwrap());
        same(
            &pim,
            &cpu,
            &pim.base_convert(&pcoeff, &other).unwrap(),
            &cpu.base_convert(&coefficients, &other).unwrap(),
            &format!("base_convert {label}"),
        );
        // Over the source's primes and beyond: shared limbs come from the NTT-form copy.
        let extended = data.concat(&other).unwrap();
        let mut transformed = coefficients.clone();
        cpu.ntt(&mut transformed).unwrap();
        same(
            &pim,
            &cpu,
            &pim.base_convert_ntt(&pcoeff, &pim.upload(transformed.clone()).unwrap(), &extended).unwrap(),
            &cpu.base_convert_ntt(&coefficients, &transformed, &extended).unwrap(),
            &format!("base_convert_ntt {label}"),
        );
        let t = pimhe_math::Modulus::new(65537).unwrap();
        same(
            &pim,
            &cpu,
            &pim.mod_down_last(&pa, Some(t)).unwrap(),
            &cpu.mod_down_last(&a, Some(t)).unwrap(),
            &format!("mod_down_last {label}"),
        );
        same(
            &pim,
            &cpu,
            &pim.mod_down(&pa, 2, Some(t)).unwrap(),
            &cpu.mod_down(&a, 2, Some(t)).unwrap(),
            &format!("mod_down {label}"),
        );
        let report = pim.report().unwrap();
        assert!(report.compute_s > 0.0 && report.transfer_s > 0.0 && report.retrieve_s > 0.0);
        assert!(report.model.contains("modeled"), "{}", report.model);
        let conversion_fallbacks = report.fallbacks - before_conversions;
        (report, conversion_fallbacks)
    }
}

#[test]
fn a_pipeline_runs_in_one_launch_with_transfers_only_at_its_ends() {
    let (primes, data, _) = setup();
    let cpu = CpuBackend::new(Some(2)).unwrap();
    let mut r = rng(5);
    let pim = PimBackend::new(PimConfig::new(9, Mode::Parallel), N, &primes).unwrap();
    let inputs: Vec<PolyBatch> = (0..4).map(|_| random_batch(&mut r, &data, 6, Representation::Coefficient)).collect();
    let mut device: Vec<_> = inputs.iter().map(|b| pim.upload(b.clone()).unwrap()).collect();
    let mut host = inputs.clone();
    for (d, h) in device.iter_mut().zip(host.iter_mut()) {
        pim.ntt(d).unwrap();
        cpu.ntt(h).unwrap();
    }
    let outputs = pim.tensor(&device[0], &device[1], &device[2], &device[3]).unwrap();
    let expected = cpu.tensor(&host[0], &host[1], &host[2], &host[3]).unwrap();
    let mut outputs = outputs;
    let mut expected = expected;
    for (d, h) in outputs.iter_mut().zip(expected.iter_mut()) {
        pim.intt(d).unwrap();
        cpu.intt(h).unwrap();
    }
    let before = pim.report().unwrap();
    assert_eq!(before.launches, 1, "NTT, tensor and inverse NTT share one launch");
    assert_eq!(before.bytes_from_dpus, 0, "nothing comes back before the end");
    for (d, h) in outputs.iter().zip(&expected) {
        assert_eq!(&pim.download(d).unwrap(), h);
    }
    let after = pim.report().unwrap();
    assert_eq!(after.launches, 1);
    assert_eq!(after.bytes_from_dpus, 3 * 6 * 3 * N as u64 * 4);
}

#[test]
fn automorphisms_run_on_the_dpus_within_a_pipeline_in_both_modes() {
    // X -> X^k in coefficient form, NTT, X -> X^k' in NTT form, inverse NTT: one launch, no
    // fallback, bit-identical to the CPU backend, on odd DPU counts (groups of 3 in parallel
    // mode, 11 DPUs for each prime in turn in sequential mode) and 13 polynomials.
    let (primes, data, _) = setup();
    let cpu = CpuBackend::new(Some(2)).unwrap();
    let a = random_batch(&mut rng(7), &data, 13, Representation::Coefficient);
    for (dpus, mode) in [(9, Mode::Parallel), (11, Mode::Sequential)] {
        for variant in Variant::ALL {
            let what = format!("{dpus} DPUs {mode:?} {variant:?}");
            let mut config = PimConfig::new(dpus, mode);
            config.variant = variant;
            let pim = PimBackend::new(config, N, &primes).unwrap();
            let mut on_dpus = pim.automorphism(&pim.upload(a.clone()).unwrap(), 2 * N - 1).unwrap();
            let mut on_cpu = cpu.automorphism(&a, 2 * N - 1).unwrap();
            pim.ntt(&mut on_dpus).unwrap();
            cpu.ntt(&mut on_cpu).unwrap();
            let mut on_dpus = pim.automorphism(&on_dpus, 25).unwrap();
            let mut on_cpu = cpu.automorphism(&on_cpu, 25).unwrap();
            pim.intt(&mut on_dpus).unwrap();
            cpu.intt(&mut on_cpu).unwrap();
            let before = pim.report().unwrap();
            assert_eq!(before.bytes_from_dpus, 0, "nothing comes back before the end: {what}");
            assert_eq!(pim.download(&on_dpus).unwrap(), on_cpu, "{what}");
            let report = pim.report().unwrap();
            assert_eq!(report.fallbacks, 0, "the automorphisms are kernels: {what}");
            let launches = if mode == Mode::Parallel { 1 } else { data.len() as u64 };
            assert_eq!(report.launches, launches, "one launch (per prime in sequential mode): {what}");
            assert!(report.counted.instructions > 0 && report.compute_s > 0.0, "{what}");
        }
    }
}

#[test]
fn an_automorphism_over_unserved_primes_is_a_counted_fallback_and_even_elements_are_refused() {
    let (primes, data, _) = setup();
    let pim = PimBackend::new(PimConfig::new(4, Mode::Parallel), N, &primes[..3]).unwrap();
    let cpu = CpuBackend::new(Some(2)).unwrap();
    let foreign = RingBasis::new(N, &primes[3..]).unwrap();
    let a = random_batch(&mut rng(8), &foreign, 3, Representation::Ntt);
    let image = pim.automorphism(&pim.upload(a.clone()).unwrap(), 5).unwrap();
    assert_eq!(pim.download(&image).unwrap(), cpu.automorphism(&a, 5).unwrap());
    assert_eq!(pim.report().unwrap().fallbacks, 1);
    // The same refusal, word for word, as the CPU backend's; the input is kept.
    let b = random_batch(&mut rng(9), &data, 2, Representation::Coefficient);
    let on_dpus = pim.upload(b.clone()).unwrap();
    for k in [0, 6, 2 * N] {
        let refused = pim.automorphism(&on_dpus, k).err().expect("even elements are refused");
        assert_eq!(refused, cpu.automorphism(&b, k).unwrap_err());
    }
    assert_eq!(pim.download(&on_dpus).unwrap(), b);
}

#[test]
fn bgv_end_to_end_on_the_emulated_dpus_decrypts_to_the_plaintext_product() {
    use pimhe_schemes::bgv::*;
    let params = BgvParameters::preset(4096).unwrap();
    let primes = params.primes();
    let ctx = BgvContext::new(params).unwrap();
    for mode in [Mode::Parallel, Mode::Sequential] {
        let pim = PimBackend::new(PimConfig::new(8, mode), 4096, &primes).unwrap();
        let mut keygen = KeyGenerator::with_sampler(&pim, &ctx, pimhe_math::Sampler::from_seed_u64(1));
        let secret = keygen.secret_key().unwrap();
        let public = keygen.public_key(&secret).unwrap();
        let relin = keygen.relin_key(&secret).unwrap();
        let encoder = BatchEncoder::new(&ctx);
        let t = ctx.params().plain_modulus() as u64;
        let x: Vec<u64> = (0..4096).map(|i| i * 7 % t).collect();
        let y: Vec<u64> = (0..4096).map(|i| (i * i + 3) % t).collect();
        let mut encryptor = Encryptor::with_public_key(&pim, &public).unwrap();
        let cx = encryptor.encrypt(&[encoder.encode(&x).unwrap(), encoder.encode(&y).unwrap()]).unwrap();
        let cy = encryptor.encrypt(&[encoder.encode(&y).unwrap(), encoder.encode(&x).unwrap()]).unwrap();
        let evaluator = Evaluator::new(&pim, &ctx).with_relin_key(&relin).unwrap();
        let product = evaluator
            .mod_switch_to_next(&evaluator.relinearize(&evaluator.multiply(&cx, &cy).unwrap()).unwrap())
            .unwrap();
        let decrypted = Decryptor::new(&pim, &secret).unwrap().decrypt(&product).unwrap();
        let expected: Vec<u64> = x.iter().zip(&y).map(|(a, b)| a * b % t).collect();
        for plain in &decrypted {
            assert_eq!(encoder.decode(plain).unwrap(), expected, "{mode:?}");
        }
        let report = pim.report().unwrap();
        // Relinearization's key switching and the modulus switch: CPU fallbacks in parallel
        // mode, on the DPUs in sequential mode.
        let fallbacks = if mode == Mode::Parallel { report.fallbacks > 0 } else { report.fallbacks == 0 };
        assert!(report.launches > 0 && fallbacks, "{mode:?}: {report:?}");
    }
}

#[test]
fn an_upload_into_memory_freed_under_a_pending_command_does_not_corrupt_it() {
    // The operand is dropped right after its (not yet launched) kernel is queued; an upload of
    // other data and a kernel output are then placed: neither may overwrite what the queued
    // kernel still has to read. (Sequential mode, where the lower primes' commands run first,
    // is exercised end to end by the BFV test below.)
    let (primes, data, _) = setup();
    let cpu = CpuBackend::new(Some(1)).unwrap();
    let mut r = rng(21);
    let [a, b, c] = [0; 3].map(|_| random_batch(&mut r, &data, 2, Representation::Coefficient));
    for config in configs(&CONFIG_SHAPES) {
        let pim = PimBackend::new(config, N, &primes).unwrap();
        let pb = pim.upload(b.clone()).unwrap();
        let scaled = pim.mul_scalar(&pim.upload(a.clone()).unwrap(), 12345).unwrap();
        let _reusing = pim.upload(c.clone()).unwrap();
        let doubled = pim.add(&pb, &pb).unwrap();
        same(&pim, &cpu, &scaled, &cpu.mul_scalar(&a, 12345).unwrap(), "mul_scalar of a dropped operand");
        same(&pim, &cpu, &doubled, &cpu.add(&b, &b).unwrap(), "add into released memory");
    }
}

#[test]
fn bfv_on_the_emulated_dpus_matches_the_cpu_backend_bit_for_bit() {
    use pimhe_schemes::bfv::*;
    use pimhe_schemes::rlwe::RlweScheme;
    let ctx = BfvContext::new(BfvParameters::preset(4096).unwrap()).unwrap();
    let t = ctx.params().plain_modulus() as u64;
    let x: Vec<u64> = (0..4096).map(|i| i * 7 % t).collect();
    let y: Vec<u64> = (0..4096).map(|i| (i * i + 3) % t).collect();
    let expected: Vec<u64> = x.iter().zip(&y).map(|(a, b)| (a * b + a) % t).collect();
    let encoder = BatchEncoder::new(&ctx);
    let plains = [encoder.encode(&x).unwrap(), encoder.encode(&y).unwrap()];
    let swapped = [plains[1].clone(), plains[0].clone()];
    // The same seeded keys and encryptions on both backends; (x * y + x), relinearized.
    fn run<B: Backend>(
        backend: &B,
        ctx: &Arc<BfvContext>,
        plains: &[Plaintext],
        swapped: &[Plaintext],
    ) -> (Vec<PolyBatch>, Vec<Plaintext>) {
        let mut keygen = KeyGenerator::with_sampler(backend, ctx, pimhe_math::Sampler::from_seed_u64(1));
        let secret = keygen.secret_key().unwrap();
        let public = keygen.public_key(&secret).unwrap();
        let relin = keygen.relin_key(&secret).unwrap();
        let mut encryptor =
            Encryptor::with_public_key(backend, &public).unwrap().with_sampler(pimhe_math::Sampler::from_seed_u64(2));
        let (cx, cy) = (encryptor.encrypt(plains).unwrap(), encryptor.encrypt(swapped).unwrap());
        let evaluator = Evaluator::new(backend, ctx).with_relin_key(&relin).unwrap();
        let product = evaluator.relinearize(&evaluator.multiply(&cx, &cy).unwrap()).unwrap();
        let result = evaluator.add(&product, &cx).unwrap();
        let parts = result.parts().iter().map(|p| backend.download(p).unwrap()).collect();
        (parts, Decryptor::new(backend, &secret).unwrap().decrypt(&result).unwrap())
    }
    let cpu = CpuBackend::new(Some(2)).unwrap();
    let (cpu_parts, cpu_plain) = run(&cpu, &ctx, &plains, &swapped);
    assert_eq!(encoder.decode(&cpu_plain[0]).unwrap(), expected);
    // Parallel mode needs a DPU per prime: 12 here (q, P, m~, m_sk, gamma, B and t).
    for (dpus, mode) in [(16, Mode::Parallel), (8, Mode::Sequential)] {
        // Every prime BFV uses is resident, so the BEHZ steps with kernels run on the DPUs.
        let pim = PimBackend::new(PimConfig::new(dpus, mode), 4096, &ctx.backend_primes()).unwrap();
        let (pim_parts, pim_plain) = run(&pim, &ctx, &plains, &swapped);
        assert_eq!(pim_parts, cpu_parts, "{mode:?}: ciphertexts differ from the CPU backend's");
        assert_eq!(pim_plain, cpu_plain, "{mode:?}");
        let report = pim.report().unwrap();
        // Relinearization's key switching: CPU fallbacks in parallel mode, on the DPUs in
        // sequential mode.
        let fallbacks = if mode == Mode::Parallel { report.fallbacks > 0 } else { report.fallbacks == 0 };
        assert!(report.launches > 0 && fallbacks, "{mode:?}: {report:?}");
    }
}

#[test]
fn large_odd_dpu_counts_match_the_cpu_backend() {
    // DRAMatic's machine: 383 DPUs in parallel mode (3 groups of 127), 509 in sequential mode.
    let n = 64;
    let primes = distinct_primes(n, &[30, 29, 28]);
    let basis = RingBasis::new(n, &primes).unwrap();
    let cpu = CpuBackend::new(Some(2)).unwrap();
    let mut r = rng(383);
    for (dpus, mode) in [(383, Mode::Parallel), (509, Mode::Sequential)] {
        let pim = PimBackend::new(PimConfig::new(dpus, mode), n, &primes).unwrap();
        // 1001 polynomials: every DPU gets work, unevenly (1001 = 7 x 11 x 13).
        let inputs: Vec<PolyBatch> =
            (0..4).map(|_| random_batch(&mut r, &basis, 1001, Representation::Coefficient)).collect();
        let mut device: Vec<_> = inputs.iter().map(|b| pim.upload(b.clone()).unwrap()).collect();
        let mut host = inputs;
        for (d, h) in device.iter_mut().zip(host.iter_mut()) {
            pim.ntt(d).unwrap();
            cpu.ntt(h).unwrap();
        }
        let mut out = pim.tensor(&device[0], &device[1], &device[2], &device[3]).unwrap();
        let mut expected = cpu.tensor(&host[0], &host[1], &host[2], &host[3]).unwrap();
        for (d, h) in out.iter_mut().zip(expected.iter_mut()) {
            pim.intt(d).unwrap();
            cpu.intt(h).unwrap();
        }
        let rotated = pim.automorphism(&out[1], 5).unwrap();
        for (d, h) in out.iter().zip(&expected) {
            assert_eq!(&pim.download(d).unwrap(), h, "{dpus} DPUs {mode:?}");
        }
        let expected_rotated = cpu.automorphism(&expected[1], 5).unwrap();
        assert_eq!(pim.download(&rotated).unwrap(), expected_rotated, "automorphism on {dpus} DPUs {mode:?}");
        let launches = pim.report().unwrap().launches;
        // A sum over the batch adds one partial per DPU on the host.
        let total = pim.download(&pim.sum(&out[0]).unwrap()).unwrap();
        assert_eq!(total, cpu.sum(&expected[0]).unwrap(), "sum on {dpus} DPUs {mode:?}");
        let expected_launches = if mode == Mode::Parallel { 1 } else { 3 };
        assert_eq!(launches, expected_launches, "{dpus} DPUs {mode:?}");
    }
}

/// A device that reports wall time the way real hardware does, over emulated DPUs: the path
/// `hardware::UpmemDpus` takes through the runtime, short of libdpu itself.
struct ClockedDpus(pimhe_pim::emulator::DpuSet);

impl pimhe_pim::device::DpuDevice for ClockedDpus {
    fn len(&self) -> usize {
        self.0.len()
    }
    fn measures_time(&self) -> bool {
        true
    }
    fn write(&mut self, dpu: usize, offset: usize, bytes: &[u8]) -> Result<(), pimhe_pim::device::DeviceError> {
        Ok(self.0.write(dpu, offset, bytes)?)
    }
    fn read(&mut self, dpu: usize, offset: usize, out: &mut [u8]) -> Result<(), pimhe_pim::device::DeviceError> {
        Ok(self.0.read(dpu, offset, out)?)
    }
    fn launch(&mut self, dpus: &[usize]) -> Result<pimhe_pim::device::LaunchCost, pimhe_pim::device::DeviceError> {
        let start = std::time::Instant::now();
        self.0.launch(dpus)?;
        Ok(pimhe_pim::device::LaunchCost::Measured { seconds: start.elapsed().as_secs_f64() })
    }
}

#[test]
fn a_device_that_measures_time_runs_the_same_runtime_and_reports_measured_seconds() {
    let (primes, data, _) = setup();
    let config = PimConfig::new(4, Mode::Parallel);
    let dpus = pimhe_pim::emulator::DpuSet::new(4, config.emulator.clone()).unwrap();
    let pim = PimBackend::with_device(config, Box::new(ClockedDpus(dpus)), N, &primes).unwrap();
    let cpu = CpuBackend::new(Some(1)).unwrap();
    let mut r = rng(21);
    let (mut a, b) = (
        random_batch(&mut r, &data, 5, Representation::Coefficient),
        random_batch(&mut r, &data, 5, Representation::Ntt),
    );
    let (mut pa, pb) = (pim.upload(a.clone()).unwrap(), pim.upload(b.clone()).unwrap());
    pim.ntt(&mut pa).unwrap();
    cpu.ntt(&mut a).unwrap();
    same(&pim, &cpu, &pim.mul(&pa, &pb).unwrap(), &cpu.mul(&a, &b).unwrap(), "ntt then mul on a clocked device");
    let report = pim.report().unwrap();
    assert!(report.model.starts_with("measured"), "{}", report.model);
    assert!(report.compute_s > 0.0 && report.launches == 1, "{report:?}");
    assert_eq!(report.counted.instructions, 0, "a measuring device counts nothing: {report:?}");

    let too_few = pimhe_pim::emulator::DpuSet::new(2, PimConfig::new(4, Mode::Parallel).emulator).unwrap();
    let message = PimBackend::with_device(PimConfig::new(4, Mode::Parallel), Box::new(too_few), N, &primes)
        .err()
        .expect("a plan of 4 DPUs cannot run on 2")
        .to_string();
    assert!(message.contains("uses 4 DPUs; the device has 2"), "{message}");
}
