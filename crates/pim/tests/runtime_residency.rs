//! The MRAM residency manager: with MRAM for only a few buffers, the least recently used are
//! evicted to the host to make room and pushed back when used, in every mode, and every result
//! is the CPU backend's bit for bit.

use std::sync::Arc;

use pimhe_exec::{Backend, CpuBackend};
use pimhe_pim::runtime::placement::Mode;
use pimhe_pim::runtime::{PimBackend, PimConfig};
use pimhe_ring::{PolyBatch, Representation, RingBasis};
use pimhe_testkit::inputs::{random_batch, rng};

mod runtime_support;

use runtime_support::{configs, setup, N};

/// Polynomials per buffer in these tests (not a multiple of the DPU counts).
const COUNT: usize = 5;

/// A backend of `config` whose MRAM, beside its tables, holds `buffers` buffers of COUNT
/// polynomials over `basis` (on its busiest DPU), and no more.
fn with_room_for(mut config: PimConfig, primes: &[u32], basis: &Arc<RingBasis>, buffers: usize) -> PimBackend {
    let probe = PimBackend::new(config.clone(), N, primes).unwrap();
    let (overhead, free) = (config.emulator.mram_bytes - probe.mram_free_bytes(), probe.mram_free_bytes());
    let one = probe.upload(PolyBatch::zeros(basis, COUNT, Representation::Ntt)).unwrap();
    let footprint = free - probe.mram_free_bytes();
    drop(one);
    config.emulator.mram_bytes = overhead + buffers * footprint;
    PimBackend::new(config, N, primes).unwrap()
}

/// The (DPUs, mode) pairs of the every-mode test (with both kernel variants).
const CONFIG_SHAPES: [(usize, Mode); 3] = [(4, Mode::Parallel), (1, Mode::Sequential), (3, Mode::CiphertextMajor)];

#[test]
fn evicted_buffers_come_back_for_every_operation_and_give_the_cpu_backends_results_in_every_mode() {
    let (primes, data, _) = setup();
    let cpu = CpuBackend::new(Some(1)).unwrap();
    for config in configs(&CONFIG_SHAPES) {
        let mode = config.mode;
        // Room for three buffers; the program keeps six alive.
        let pim = with_room_for(config, &primes, &data, 3);
        let mut r = rng(7);
        let host: Vec<PolyBatch> = (0..4).map(|_| random_batch(&mut r, &data, COUNT, Representation::Ntt)).collect();
        let coefficients = random_batch(&mut r, &data, COUNT, Representation::Coefficient);
        let on_pim: Vec<_> = host.iter().map(|b| pim.upload(b.clone()).unwrap()).collect();
        let check = |x: &<PimBackend as Backend>::Buffer, expected: &PolyBatch, what: &str| {
            assert_eq!(&pim.download(x).unwrap(), expected, "{what} in {mode:?} mode");
        };
        let sum = pim.add(&on_pim[0], &on_pim[1]).unwrap();
        check(&sum, &cpu.add(&host[0], &host[1]).unwrap(), "add");
        let product = pim.mul(&on_pim[2], &on_pim[3]).unwrap();
        check(&product, &cpu.mul(&host[2], &host[3]).unwrap(), "mul");
        let mut acc = pim.copy(&on_pim[0]).unwrap();
        let mut expected = host[0].clone();
        pim.mac(&mut acc, &on_pim[1], &on_pim[2]).unwrap();
        cpu.mac(&mut expected, &host[1], &host[2]).unwrap();
        check(&acc, &expected, "mac");
        let mut transformed = pim.upload(coefficients.clone()).unwrap();
        let mut cpu_transformed = coefficients.clone();
        pim.ntt(&mut transformed).unwrap();
        cpu.ntt(&mut cpu_transformed).unwrap();
        let difference = pim.sub(&transformed, &on_pim[3]).unwrap();
        check(&difference, &cpu.sub(&cpu_transformed, &host[3]).unwrap(), "ntt then sub");
        pim.intt(&mut transformed).unwrap();
        check(&transformed, &coefficients, "intt round trip");
        check(&pim.automorphism(&on_pim[1], 3).unwrap(), &cpu.automorphism(&host[1], 3).unwrap(), "automorphism");
        check(&pim.sum(&on_pim[2]).unwrap(), &cpu.sum(&host[2]).unwrap(), "sum");
        for (buffer, expected) in on_pim.iter().zip(&host) {
            check(buffer, expected, "an input, after all that");
        }
        let report = pim.report().unwrap();
        assert!(report.evictions >= 4 && report.restores >= 2, "{mode:?}: {report:?}");
        // Every operation's buffers fit together: nothing had to be streamed.
        assert_eq!(report.rounds, 0, "{mode:?}: {report:?}");
    }
}

#[test]
fn the_least_recently_used_buffer_goes_first_and_an_evicted_one_downloads_without_the_dpus() {
    let (primes, data, _) = setup();
    let pim = with_room_for(PimConfig::new(1, Mode::Sequential), &primes, &data, 3);
    let mut r = rng(8);
    let host: Vec<PolyBatch> = (0..4).map(|_| random_batch(&mut r, &data, COUNT, Representation::Ntt)).collect();
    let [a, b, c, d] = [0, 1, 2, 3].map(|i| pim.upload(host[i].clone()).unwrap());
    // The fourth upload evicted `a`; negating `b` needs room for its output: `c` is now the
    // least recently used (`b` is in use, `d` newer).
    let negated = pim.neg(&b).unwrap();
    let report = pim.report().unwrap();
    assert_eq!((report.evictions, report.restores), (2, 0), "{report:?}");
    let pulled = |x: &<PimBackend as Backend>::Buffer, expected: &PolyBatch| {
        let before = pim.report().unwrap().bytes_from_dpus;
        assert_eq!(&pim.download(x).unwrap(), expected);
        pim.report().unwrap().bytes_from_dpus - before
    };
    let bytes = (COUNT * 3 * N * 4) as u64;
    assert_eq!(pulled(&a, &host[0]), 0, "evicted: on the host already");
    assert_eq!(pulled(&c, &host[2]), 0, "evicted: on the host already");
    assert_eq!(pulled(&d, &host[3]), bytes, "resident");
    assert_eq!(pulled(&b, &host[1]), bytes, "resident");
    // Using `a` pushes it back, evicting the least recently used resident buffer.
    let cpu = CpuBackend::new(Some(1)).unwrap();
    assert_eq!(pim.download(&pim.neg(&a).unwrap()).unwrap(), cpu.neg(&host[0]).unwrap());
    assert_eq!(pim.download(&negated).unwrap(), cpu.neg(&host[1]).unwrap());
    let report = pim.report().unwrap();
    assert_eq!(report.restores, 1, "{report:?}");
    // Each eviction pulled a buffer and zeroed its MRAM, each upload and restore pushed one.
    assert_eq!(report.bytes_to_dpus, (4 + 1 + report.evictions) * bytes, "{report:?}");
}

#[test]
fn an_operation_whose_buffers_do_not_fit_together_runs_in_rounds_and_keeps_its_operands() {
    let (primes, data, _) = setup();
    // Room for two buffers: `x + y` needs three at once, so it streams rounds of fewer
    // polynomials through the MRAM that evicting both operands leaves.
    let pim = with_room_for(PimConfig::new(1, Mode::Sequential), &primes, &data, 2);
    let cpu = CpuBackend::new(Some(1)).unwrap();
    let mut r = rng(9);
    let [x, y] = [0; 2].map(|_| random_batch(&mut r, &data, COUNT, Representation::Ntt));
    let (px, py) = (pim.upload(x.clone()).unwrap(), pim.upload(y.clone()).unwrap());
    assert_eq!(pim.download(&pim.add(&px, &py).unwrap()).unwrap(), cpu.add(&x, &y).unwrap());
    let report = pim.report().unwrap();
    assert!(report.rounds >= 2 && report.evictions >= 1, "{report:?}");
    assert_eq!(pim.download(&px).unwrap(), x);
    assert_eq!(pim.download(&py).unwrap(), y);
}
