//! The PIM backend above N = 2^15: at N = 2^16 an NTT round trip and a product over two primes
//! bit-identical to the CPU backend in both kernel variants; a DPU whose primes' twiddle tables
//! (about 1 MiB per prime at 2^16) exceed its MRAM is refused up front with the bytes needed and
//! available, while the parallel mode (one prime per DPU) takes the same primes.

use pimhe_exec::{Backend, CpuBackend};
use pimhe_pim::emulator::MRAM_BYTES;
use pimhe_pim::layout::Variant;
use pimhe_pim::runtime::placement::Mode;
use pimhe_pim::runtime::{PimBackend, PimConfig};
use pimhe_ring::Representation;
use pimhe_testkit::inputs::{basis_of, distinct_primes, random_batch, rng};

const N: usize = 1 << 16;

#[test]
fn ntt_round_trip_and_product_at_2_16_match_the_cpu_backend() {
    let primes = distinct_primes(N, &[30, 28]);
    let basis = basis_of(N, &primes);
    let cpu = CpuBackend::new(Some(1)).unwrap();
    let mut r = rng(71);
    let a = random_batch(&mut r, &basis, 2, Representation::Coefficient);
    let b = random_batch(&mut r, &basis, 2, Representation::Coefficient);
    let (mut ca, mut cb) = (a.clone(), b.clone());
    cpu.ntt(&mut ca).unwrap();
    cpu.ntt(&mut cb).unwrap();
    let mut product = cpu.mul(&ca, &cb).unwrap();
    cpu.intt(&mut product).unwrap();
    for variant in Variant::ALL {
        let mut config = PimConfig::new(2, Mode::Parallel);
        config.variant = variant;
        let pim = PimBackend::new(config, N, &primes).unwrap();
        let (mut pa, mut pb) = (pim.upload(a.clone()).unwrap(), pim.upload(b.clone()).unwrap());
        pim.ntt(&mut pa).unwrap();
        pim.ntt(&mut pb).unwrap();
        assert!(pim.download(&pa).unwrap() == ca, "NTT {variant:?}");
        let mut pp = pim.mul(&pa, &pb).unwrap();
        pim.intt(&mut pp).unwrap();
        assert!(pim.download(&pp).unwrap() == product, "NTT, MUL, INTT {variant:?}");
        assert_eq!(pim.report().unwrap().fallbacks, 0, "{variant:?}");
    }
}

#[test]
fn primes_whose_tables_exceed_a_dpus_mram_are_refused_with_the_bytes() {
    // 66 primes, the CKKS N = 2^16 preset's count: 2 x (8N + 28 KiB) bytes of tables each.
    let primes = pimhe_math::ntt_primes(30, N, 66, &[]).unwrap();
    let tables = 66 * 2 * (8 * N + 7 * 1024 * 4);
    assert!(tables > MRAM_BYTES);
    let message = match PimBackend::new(PimConfig::new(4, Mode::CiphertextMajor), N, &primes) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("66 primes' tables cannot fit one DPU"),
    };
    assert!(message.contains("serves 66 primes at N = 65536"), "{message}");
    assert!(message.contains(&format!("more than the {MRAM_BYTES} bytes it has")), "{message}");
    let needed: usize = message.split("need ").nth(1).and_then(|s| s.split(' ').next()).unwrap().parse().unwrap();
    // The tables, 66 prime records and the header with the command slots (under 64 KiB).
    assert!(needed >= tables + 66 * 64 && needed < tables + 66 * 64 + 65536, "{message}");
    // One prime per DPU fits.
    let parallel = PimBackend::new(PimConfig::new(66, Mode::Parallel), N, &primes).unwrap();
    assert!(parallel.mram_free_bytes() > MRAM_BYTES - 2 * (8 * N + 7 * 1024 * 4) - 65536);
}
