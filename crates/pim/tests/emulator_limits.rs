//! The hardware's limits as hard errors: every violation names the kernel and the limit, ends
//! the DPU cleanly (no deadlock at barriers), and the emulated DPUs stay usable. Violations
//! come from deliberately bad headers/commands run by the real kernel, or from the emulator's
//! self-test programs where the real kernel cannot produce them (DMA sizes, WRAM).

mod emulator_support;

use emulator_support::{residues, set, Dpu};
use pimhe_pim::emulator::{DpuGeneration, DpuSet, EmulatorConfig, EmulatorError, LimitKind, SelfTest, MRAM_BYTES};
use pimhe_pim::layout::{status, PimheCommand, PimheHeader, Variant, HEADER_BYTES, N_MAX, N_MIN, PIMHE_MAGIC, Q_LIMIT};

fn limit(err: EmulatorError) -> (LimitKind, String, String) {
    match err {
        EmulatorError::Limit { kind, kernel, details, .. } => (kind, kernel, details),
        other => panic!("expected a limit violation, got {other:?}"),
    }
}

fn selftest(test: SelfTest) -> EmulatorError {
    let mut dpus = set(1, EmulatorConfig::default());
    dpus.launch_selftest(&[0], test).unwrap_err()
}

#[test]
fn dma_size() {
    let (kind, kernel, details) = limit(selftest(SelfTest::DmaSize));
    assert_eq!(kind, LimitKind::DmaSize);
    assert_eq!(kernel, "pimhe_selftest/dma_size");
    assert!(details.contains("DMA size 12 bytes: must be 8..=2048 and a multiple of 8"), "{details}");
    let (kind, _, details) = limit(selftest(SelfTest::DmaTooLarge));
    assert_eq!(kind, LimitKind::DmaSize);
    assert!(details.contains("4096 bytes"), "{details}");
}

#[test]
fn dma_alignment() {
    let (kind, _, details) = limit(selftest(SelfTest::MramAlign));
    assert_eq!(kind, LimitKind::DmaAlignment);
    assert!(details.contains("MRAM offset 4 is not 8-byte aligned"), "{details}");
    let (kind, _, details) = limit(selftest(SelfTest::WramAlign));
    assert_eq!(kind, LimitKind::DmaAlignment);
    assert!(details.contains("WRAM address"), "{details}");
}

#[test]
fn wram_limits() {
    let (kind, kernel, details) = limit(selftest(SelfTest::WramOverflow));
    assert_eq!(kind, LimitKind::WramOverflow);
    assert_eq!(kernel, "pimhe_selftest/wram_overflow");
    assert!(details.contains("16 tasklets x 512 stack"), "{details}");
    let (kind, _, details) = limit(selftest(SelfTest::WramRange));
    assert_eq!(kind, LimitKind::WramRange);
    assert!(details.contains("not in the DPU's WRAM"), "{details}");
    // Stacks alone can exhaust a small WRAM.
    let config = EmulatorConfig { wram_bytes: 4096, ..EmulatorConfig::default() };
    let mut dpus = set(1, config);
    let (kind, _, details) = limit(dpus.launch(&[0]).unwrap_err());
    assert_eq!(kind, LimitKind::WramOverflow);
    assert!(details.contains("exceed"), "{details}");
}

#[test]
fn mram_range_from_selftest_and_from_a_bad_command() {
    let (kind, _, details) = limit(selftest(SelfTest::MramRange));
    assert_eq!(kind, LimitKind::MramRange);
    assert!(details.contains("outside the DPU's 67108864 bytes of MRAM"), "{details}");

    // The real kernel, told to transform data past the end of MRAM.
    let n = 256;
    let q = pimhe_math::ntt_primes(30, n, 1, &[]).unwrap()[0];
    let d = Dpu::new(q, n, 1);
    for variant in Variant::ALL {
        let mut dpus = set(1, EmulatorConfig::default());
        d.load(&mut dpus, 0, variant, &[PimheCommand::ntt((MRAM_BYTES - 512) as u32, 1)]);
        let (kind, kernel, details) = limit(dpus.launch(&[0]).unwrap_err());
        assert_eq!(kind, LimitKind::MramRange, "{variant:?}");
        assert_eq!(kernel, "pimhe_main/ntt");
        assert!(details.contains("outside the DPU's"), "{details}");
    }
    // An element-wise command whose destination runs past a smaller MRAM.
    let config = EmulatorConfig { mram_bytes: 1 << 20, ..EmulatorConfig::default() };
    let mut dpus = set(1, config);
    d.load(&mut dpus, 0, Variant::Best, &[PimheCommand::add((1 << 20) - 512, d.at(0), d.at(1), 1)]);
    let (kind, kernel, _) = limit(dpus.launch(&[0]).unwrap_err());
    assert_eq!((kind, kernel.as_str()), (LimitKind::MramRange, "pimhe_main/add"));
}

#[test]
fn misaligned_operand_is_a_dma_alignment_error() {
    let n = 64;
    let q = pimhe_math::ntt_primes(30, n, 1, &[]).unwrap()[0];
    let d = Dpu::new(q, n, 1);
    for (variant, command, phase) in [
        (Variant::Barrett, PimheCommand::ntt(d.at(0) + 4, 1), "pimhe_main/ntt"),
        (Variant::Best, PimheCommand::intt(d.at(0) + 4, 2), "pimhe_main/intt"),
        (Variant::Best, PimheCommand::mul(d.at(0), d.at(1) + 4, d.at(2), 1), "pimhe_main/mul"),
    ] {
        let mut dpus = set(1, EmulatorConfig::default());
        d.load(&mut dpus, 0, variant, &[command]);
        let (kind, kernel, details) = limit(dpus.launch(&[0]).unwrap_err());
        assert_eq!(kind, LimitKind::DmaAlignment, "{details}");
        assert_eq!(kernel, phase);
    }
}

#[test]
fn a_violation_between_barriers_does_not_deadlock() {
    // Tasklet 1 breaks a limit; the others are waiting at or reaching barriers.
    let err = selftest(SelfTest::BarrierAbort);
    match err {
        EmulatorError::Limit { kind, tasklet, .. } => {
            assert_eq!(kind, LimitKind::DmaSize);
            assert_eq!(tasklet, 1);
        }
        other => panic!("{other:?}"),
    }
    // A tasklet that returns while others wait would hang a DPU: reported, not hung.
    let (kind, _, details) = limit(selftest(SelfTest::BarrierExit));
    assert_eq!(kind, LimitKind::Barrier);
    assert!(details.contains("would hang"), "{details}");
    // With the real kernel: one DPU of three fails mid command list, the others complete.
    let n = 128;
    let q = pimhe_math::ntt_primes(30, n, 1, &[]).unwrap()[0];
    let d = Dpu::new(q, n, 3);
    let mut dpus = set(3, EmulatorConfig::default());
    let good = [
        PimheCommand::ntt(d.at(0), 20),
        PimheCommand::intt(d.at(0), 20),
        PimheCommand::add(d.at(0), d.at(0), d.at(0), 20),
    ];
    let bad = [
        PimheCommand::ntt(d.at(0), 20),
        PimheCommand::intt(d.at(0) + 4, 20),
        PimheCommand::add(d.at(0), d.at(0), d.at(0), 20),
    ];
    let data = residues(20 * n, q, 5);
    for dpu in 0..3 {
        d.load(&mut dpus, dpu, Variant::Best, if dpu == 1 { &bad } else { &good });
        d.put(&mut dpus, dpu, 0, &data);
    }
    match dpus.launch(&[0, 1, 2]).unwrap_err() {
        EmulatorError::Limit { dpu, kind, kernel, .. } => {
            assert_eq!((dpu, kind, kernel.as_str()), (1, LimitKind::DmaAlignment, "pimhe_main/intt"));
        }
        other => panic!("{other:?}"),
    }
    let doubled: Vec<u32> = data.iter().map(|&x| d.tables.modulus.add(x, x)).collect();
    assert_eq!(d.get(&dpus, 0, 0, 20 * n), doubled);
    assert_eq!(d.get(&dpus, 2, 0, 20 * n), doubled);
    // The failed DPU can be reloaded and used again.
    d.load(&mut dpus, 1, Variant::Best, &good);
    d.put(&mut dpus, 1, 0, &data);
    dpus.launch(&[1]).unwrap();
    assert_eq!(d.get(&dpus, 1, 0, 20 * n), doubled);
}

#[test]
fn tasklet_limits_per_generation() {
    for (generation, max) in [(DpuGeneration::V1A, 24), (DpuGeneration::V1B, 16)] {
        assert_eq!(generation.max_tasklets(), max);
        let ok = EmulatorConfig { generation, tasklets: max, ..EmulatorConfig::default() };
        assert!(DpuSet::new(2, ok).is_ok());
        for bad in [0, max + 1] {
            let config = EmulatorConfig { generation, tasklets: bad, ..EmulatorConfig::default() };
            let err = DpuSet::new(2, config).unwrap_err();
            assert_eq!(err, EmulatorError::Tasklets { generation, tasklets: bad, max });
            assert!(err.to_string().contains(&format!("1..={max}")), "{err}");
        }
    }
    let too_big = EmulatorConfig { mram_bytes: MRAM_BYTES + 8, ..EmulatorConfig::default() };
    assert!(matches!(DpuSet::new(1, too_big), Err(EmulatorError::Config(_))));
    let too_big = EmulatorConfig { wram_bytes: (64 << 10) + 8, ..EmulatorConfig::default() };
    assert!(matches!(DpuSet::new(1, too_big), Err(EmulatorError::Config(_))));
}

#[test]
fn host_transfers_follow_the_host_api_rules() {
    let mut dpus = set(2, EmulatorConfig::default());
    assert_eq!(dpus.len(), 2);
    assert!(matches!(dpus.write(2, 0, &[0; 8]), Err(EmulatorError::NoSuchDpu { dpu: 2, len: 2 })));
    assert!(matches!(dpus.write(0, 4, &[0; 8]), Err(EmulatorError::TransferAlignment { .. })));
    assert!(matches!(dpus.write_u32s(0, 0, &[1, 2, 3]), Err(EmulatorError::TransferAlignment { .. })));
    assert!(matches!(dpus.write(0, MRAM_BYTES - 8, &[0; 16]), Err(EmulatorError::MramOutOfRange { .. })));
    let mut out = [0u8; 8];
    assert!(matches!(dpus.read(1, MRAM_BYTES, &mut out), Err(EmulatorError::MramOutOfRange { .. })));
    // MRAM is lazily grown: the last 8 bytes of 64 MiB cost 64 MiB only when written.
    dpus.read(0, MRAM_BYTES - 8, &mut out).unwrap();
    assert_eq!(out, [0; 8]);
    assert_eq!(dpus.resident_bytes(0).unwrap(), 0);
    dpus.write(0, 1024, &[7; 16]).unwrap();
    assert_eq!(dpus.resident_bytes(0).unwrap(), 1040);
    assert_eq!(dpus.resident_bytes(1).unwrap(), 0);
    assert!(matches!(dpus.launch(&[0, 0]), Err(EmulatorError::DuplicateDpu { dpu: 0 })));
    assert!(matches!(dpus.launch(&[5]), Err(EmulatorError::NoSuchDpu { dpu: 5, .. })));
}

#[test]
fn bad_headers_and_commands_are_rejected_by_the_kernel() {
    let n = 64;
    let q = pimhe_math::ntt_primes(30, n, 1, &[]).unwrap()[0];
    let d = Dpu::new(q, n, 1);
    // Never-written MRAM: magic 0.
    let mut dpus = set(1, EmulatorConfig::default());
    assert!(matches!(dpus.launch(&[0]), Err(EmulatorError::BadMagic { dpu: 0, magic: 0, .. })));

    let header = d.tables.header(Variant::Best, &d.layout, 1);
    let cases: Vec<(PimheHeader, u32)> = vec![
        (PimheHeader { magic: 0x1234_5678, ..header }, status::ERR_MAGIC),
        (PimheHeader { n: 48, ..header }, status::ERR_DEGREE),
        (PimheHeader { n: 8, log_n: 3, ..header }, status::ERR_DEGREE),
        (PimheHeader { log_n: 7, ..header }, status::ERR_DEGREE),
        (PimheHeader { q: q + 2, ..header }, status::ERR_MODULUS),
        (PimheHeader { q: (1 << 30) + 1, ..header }, status::ERR_MODULUS),
        (PimheHeader { variant: 2, ..header }, status::ERR_VARIANT),
        (PimheHeader { barrett_lo: header.barrett_lo ^ 1, ..header }, status::ERR_BARRETT),
        (PimheHeader { n_inv: header.n_inv + 1, ..header }, status::ERR_N_INV),
        (PimheHeader { n_inv_shoup: header.n_inv_shoup + 1, ..header }, status::ERR_N_INV),
    ];
    for (bad, code) in cases {
        let mut dpus = set(1, EmulatorConfig::default());
        d.load(&mut dpus, 0, Variant::Best, &[PimheCommand::ntt(d.at(0), 1)]);
        dpus.write(0, 0, &bad.to_bytes()).unwrap();
        let err = dpus.launch(&[0]).unwrap_err();
        match (code, &err) {
            (status::ERR_MAGIC, EmulatorError::BadMagic { magic, .. }) => assert_eq!(*magic, 0x1234_5678),
            (_, EmulatorError::KernelStatus { status, .. }) => assert_eq!(*status, code, "{err}"),
            _ => panic!("status {code}: {err:?}"),
        }
        let mut back = [0u8; HEADER_BYTES];
        dpus.read(0, 0, &mut back).unwrap();
        assert_eq!(PimheHeader::from_bytes(&back).unwrap().status, code);
    }
    let m = d.tables.modulus;
    let mut bad_scalar = PimheCommand::mulc(d.at(0), d.at(0), 5, &m, 1);
    bad_scalar.scalar_shoup += 1;
    let mut bad_opcode = PimheCommand::ntt(d.at(0), 1);
    bad_opcode.opcode = 99;
    for (command, code) in [
        (bad_opcode, status::ERR_OPCODE),
        (bad_scalar, status::ERR_SCALAR),
        (PimheCommand::add(d.at(0), d.at(0), u32::MAX - 64, 1), status::ERR_OPERAND),
        (PimheCommand::automorphism(d.at(1), d.at(0), 4, true, 1), status::ERR_GALOIS),
        (PimheCommand::automorphism(d.at(1), d.at(0), 2 * n as u32 + 1, false, 1), status::ERR_GALOIS),
        (PimheCommand::automorphism(d.at(0), d.at(0), 5, false, 1), status::ERR_ALIAS),
        (PimheCommand::automorphism(d.at(1), d.at(0), 5, true, 2), status::ERR_ALIAS),
        (PimheCommand::automorphism(d.at(0), d.at(1), 5, true, 2), status::ERR_ALIAS),
        (PimheCommand::automorphism(d.at(0), u32::MAX - 64, 5, true, 1), status::ERR_OPERAND),
    ] {
        for variant in Variant::ALL {
            let mut dpus = set(1, EmulatorConfig::default());
            d.load(&mut dpus, 0, variant, &[command]);
            let err = dpus.launch(&[0]).unwrap_err();
            assert!(matches!(err, EmulatorError::KernelStatus { status, .. } if status == code), "{err:?}");
        }
    }
    // A good launch afterwards resets the status.
    let mut dpus = set(1, EmulatorConfig::default());
    d.load(&mut dpus, 0, Variant::Best, &[PimheCommand::ntt(d.at(0), 1)]);
    dpus.launch(&[0]).unwrap();
}

/// A header with no commands for degree `n` and an odd modulus `q`, its constants computed as
/// the kernel checks them: `setup` tests the congruences, not primality, so any odd q with
/// q = 1 mod 2n passes, which lets the test sit on the exact edges of the kernel's ranges.
fn bare_header(n: u32, q: u32, variant: Variant) -> PimheHeader {
    let q64 = q as u64;
    let half = q64.div_ceil(2); // 2^-1 mod q
    let n_inv = (0..n.trailing_zeros()).fold(1, |x, _| x * half % q64);
    let barrett = u64::MAX / q64;
    PimheHeader {
        magic: PIMHE_MAGIC,
        n,
        log_n: n.trailing_zeros(),
        q,
        barrett_lo: barrett as u32,
        barrett_hi: (barrett >> 32) as u32,
        n_inv: n_inv as u32,
        n_inv_shoup: ((n_inv << 32) / q64) as u32,
        variant: variant as u32,
        twiddle_offset: HEADER_BYTES as u32,
        inv_twiddle_offset: HEADER_BYTES as u32,
        command_offset: HEADER_BYTES as u32,
        command_count: 0,
        status: status::OK,
        reserved: [0; 2],
    }
}

/// The kernel accepts exactly the degrees and moduli the host's constants promise (layout.rs:
/// N_MIN ..= N_MAX, q < Q_LIMIT with q = 1 mod 2N): the first and last value inside each range
/// run, the first outside is refused. The C constants themselves are cross-checked in layout.rs;
/// this checks that the kernel's tests use them as the host does.
#[test]
fn the_kernel_accepts_exactly_the_hosts_degree_and_modulus_range() {
    let top = |n: u32| Q_LIMIT - 2 * n + 1; // the largest q below Q_LIMIT that is 1 mod 2n
    let (n_min, n_max) = (N_MIN as u32, N_MAX as u32);
    let cases = [
        (n_min, top(n_min), status::OK),
        (n_max, top(n_max), status::OK),
        (n_min, 2 * n_min + 1, status::OK),
        (n_min, 1, status::ERR_MODULUS),
        (n_min, Q_LIMIT + 1, status::ERR_MODULUS),
        (n_max, Q_LIMIT + 1, status::ERR_MODULUS),
        (n_min / 2, top(n_min / 2), status::ERR_DEGREE),
        (2 * n_max, top(2 * n_max), status::ERR_DEGREE),
    ];
    for variant in Variant::ALL {
        for (n, q, code) in cases {
            let mut dpus = set(1, EmulatorConfig::default());
            dpus.write(0, 0, &bare_header(n, q, variant).to_bytes()).unwrap();
            let got = match dpus.launch(&[0]) {
                Ok(_) => status::OK,
                Err(EmulatorError::KernelStatus { status, .. }) => status,
                Err(other) => panic!("n = {n}, q = {q}: {other:?}"),
            };
            assert_eq!(got, code, "{variant:?}, n = {n}, q = {q}");
        }
    }
}
