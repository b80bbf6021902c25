//! The kernels across primes on one emulated DPU (dpu/kernels/conversion.h and SET_PRIME):
//! BCONV and DIVIDE_LAST against the same integers computed here in u64, with every flag, the
//! BGV t-correction and the barrett variant; SET_PRIME switching the prime mid-launch and
//! refusing a bad record; parameter checks; and each kernel's counted cost against a hand
//! count of its charges (cost.h) on 16 sub-polynomials of N = 4096.

mod emulator_support;

use emulator_support::{model_cycles, primes_for, residues, set, Dpu};
use pimhe_math::Modulus;
use pimhe_pim::emulator::{EmulatorConfig, EmulatorError};
use pimhe_pim::layout::{status, MramLayout, PimheCommand, Variant};

/// Runs `commands` on one DPU of prime `d` with operand slot 0 holding `input`; returns slots
/// 1 and 2 (`len` words each).
fn run(d: &Dpu, variant: Variant, commands: &[PimheCommand], input: &[u32], accumulator: &[u32]) -> [Vec<u32>; 2] {
    let mut dpus = set(1, EmulatorConfig::default().with_tasklets(11));
    d.load(&mut dpus, 0, variant, commands);
    d.put(&mut dpus, 0, 0, input);
    d.put(&mut dpus, 0, 1, accumulator);
    d.put(&mut dpus, 0, 2, accumulator);
    dpus.launch(&[0]).unwrap();
    [d.get(&dpus, 0, 1, input.len()), d.get(&dpus, 0, 2, input.len())]
}

fn mulmod(a: u64, b: u64, m: u64) -> u64 {
    a % m * (b % m) % m
}

#[test]
fn bconv_adds_the_centred_or_plain_source_times_the_constant() {
    let n = 64;
    let primes = primes_for(n);
    let (q, source) = (primes[0], primes[1]);
    let m = Modulus::new(q as u64).unwrap();
    let d = Dpu::new(q, n, 2);
    // Residues of the source prime: above q too, around half the source, the extremes.
    let mut y = residues(n, source, 3);
    y[..4].copy_from_slice(&[0, source - 1, source / 2, source / 2 + 1]);
    let acc = residues(n, q, 4);
    let c = 987_654_321 % q;
    for variant in Variant::ALL {
        let commands = [
            PimheCommand::bconv(d.at(1), d.at(0), source, c, false, true, &m, 1),
            PimheCommand::bconv(d.at(2), d.at(0), source, c, true, false, &m, 1),
        ];
        let [plain, centred] = run(&d, variant, &commands, &y, &acc);
        for j in 0..n {
            let (yq, qq) = (y[j] as u64, q as u64);
            assert_eq!(plain[j] as u64, (acc[j] as u64 + mulmod(yq, c as u64, qq)) % qq, "{variant:?} plain {j}");
            // y - source when y > source / 2, as an integer, times c modulo q.
            let signed = if y[j] > source / 2 { y[j] as i64 - source as i64 } else { y[j] as i64 };
            let expected = (signed.rem_euclid(q as i64) as u64 * c as u64) % qq;
            assert_eq!(centred[j] as u64, expected, "{variant:?} centred {j}");
        }
    }
}

/// What DIVIDE_LAST computes, from its definition (pimhe_dpu.h): s - r p^-1 mod q.
fn divide_last_term(r: u32, p: u32, t: Option<u32>, q: u32) -> u32 {
    let above = (r > p / 2) as i64;
    let m = t.map_or(0, |t| {
        let p_inv_t = Modulus::new(t as u64).unwrap().inv(p % t).unwrap() as i64;
        let x = (r as i64 * p_inv_t - above).rem_euclid(t as i64);
        if x > t as i64 / 2 {
            x - t as i64
        } else {
            x
        }
    });
    let p_inv_q = Modulus::new(q as u64).unwrap().inv(p % q).unwrap() as i64;
    ((above + m) - (r as i64 % q as i64) * p_inv_q).rem_euclid(q as i64) as u32
}

#[test]
fn divide_last_gives_the_signed_shift_minus_r_over_p_with_and_without_t() {
    let n = 64;
    let primes = primes_for(n);
    let (q, p) = (primes[0], primes[2]);
    let m = Modulus::new(q as u64).unwrap();
    let d = Dpu::new(q, n, 2);
    let mut r = residues(n, p, 7);
    r[..4].copy_from_slice(&[0, p - 1, p / 2, p / 2 + 1]);
    for (t, variant) in [(65537, Variant::Best), (257, Variant::Barrett), (65537, Variant::Barrett)] {
        let t_modulus = Modulus::new(t as u64).unwrap();
        let commands = [
            PimheCommand::divide_last(d.at(1), d.at(0), p, Some(&t_modulus), &m, 1).unwrap(),
            PimheCommand::divide_last(d.at(2), d.at(0), p, None, &m, 1).unwrap(),
        ];
        let [with_t, without] = run(&d, variant, &commands, &r, &vec![0; n]);
        for j in 0..n {
            assert_eq!(with_t[j], divide_last_term(r[j], p, Some(t), q), "{variant:?} t={t} {j}");
            assert_eq!(without[j], divide_last_term(r[j], p, None, q), "{variant:?} {j}");
        }
    }
}

#[test]
fn set_prime_switches_the_prime_mid_launch_and_refuses_a_bad_record() {
    let n = 64;
    let primes = primes_for(n);
    let (a, b) = (Dpu::new(primes[0], n, 3), Dpu::new(primes[1], n, 3));
    // B's record in operand slot 4 (its twiddle offsets are A's: no transform runs under it).
    let record_at = a.at(4);
    let record = |variant, n_override: Option<u32>| {
        let mut header = b.tables.header(variant, &MramLayout::new(n, 3), 0);
        header.n = n_override.unwrap_or(header.n);
        header.to_bytes()
    };
    let x = residues(n, primes[0].min(primes[1]), 9);
    for variant in Variant::ALL {
        let commands = [
            PimheCommand::mulc(a.at(1), a.at(0), 3, &a.tables.modulus, 1),
            PimheCommand::set_prime(record_at),
            PimheCommand::mulc(a.at(2), a.at(0), 5, &b.tables.modulus, 1),
        ];
        let mut dpus = set(1, EmulatorConfig::default().with_tasklets(5));
        a.load(&mut dpus, 0, variant, &commands);
        a.put(&mut dpus, 0, 0, &x);
        dpus.write(0, record_at as usize, &record(variant, None)).unwrap();
        dpus.launch(&[0]).unwrap();
        let (under_a, under_b) = (a.get(&dpus, 0, 1, n), a.get(&dpus, 0, 2, n));
        for j in 0..n {
            assert_eq!(under_a[j] as u64, 3 * x[j] as u64 % primes[0] as u64, "{variant:?}");
            assert_eq!(under_b[j] as u64, 5 * x[j] as u64 % primes[1] as u64, "{variant:?}");
        }
        // A record of another degree, or of the other variant, stops the launch.
        let other = if variant == Variant::Best { Variant::Barrett } else { Variant::Best };
        for (bytes, expected) in
            [(record(variant, Some(2 * n as u32)), status::ERR_DEGREE), (record(other, None), status::ERR_VARIANT)]
        {
            a.load(&mut dpus, 0, variant, &commands);
            dpus.write(0, record_at as usize, &bytes).unwrap();
            match dpus.launch(&[0]) {
                Err(EmulatorError::KernelStatus { status: s, .. }) => assert_eq!(s, expected),
                other => panic!("expected status {expected}, got {other:?}"),
            }
        }
    }
}

#[test]
fn out_of_range_conversion_parameters_are_refused() {
    let n = 64;
    let primes = primes_for(n);
    let q = primes[0];
    let m = Modulus::new(q as u64).unwrap();
    let t = Modulus::new(65537).unwrap();
    let d = Dpu::new(q, n, 1);
    let bconv = PimheCommand::bconv(d.at(1), d.at(0), primes[1], 5, true, false, &m, 1);
    let divide = PimheCommand::divide_last(d.at(1), d.at(0), primes[1], Some(&t), &m, 1).unwrap();
    let mut bad_shoup = divide;
    bad_shoup.dst[1] ^= 1;
    for (command, expected) in [
        (PimheCommand { src: [bconv.src[0], 1 << 30, bconv.src[2], 0], ..bconv }, status::ERR_CONVERSION),
        (PimheCommand { src: [bconv.src[0], bconv.src[1], q, 0], ..bconv }, status::ERR_CONVERSION),
        (bad_shoup, status::ERR_CONVERSION),
        (PimheCommand { scalar: q, ..bconv }, status::ERR_SCALAR),
    ] {
        let mut dpus = set(1, EmulatorConfig::default());
        d.load(&mut dpus, 0, Variant::Best, &[command]);
        match dpus.launch(&[0]) {
            Err(EmulatorError::KernelStatus { status: s, .. }) => assert_eq!(s, expected, "{command:?}"),
            other => panic!("{command:?}: expected status {expected}, got {other:?}"),
        }
    }
}

/// Whether q = 2^b + 1 - k 2^s with k < 2^8 and 8 <= s < b (the best variant's cheap Q q).
fn has_known_form(q: u32) -> bool {
    let b = 32 - q.leading_zeros();
    let kk = (1u64 << b) + 1 - q as u64;
    let s = kk.trailing_zeros();
    (kk >> s) < 256 && s >= 8 && s < b
}

#[test]
fn conversion_kernels_count_what_the_hand_count_says() {
    // 16 sub-polynomials of N = 4096 on 16 tasklets, less the same launch with none.
    let (n, count) = (4096usize, 16u32);
    let primes = pimhe_math::ntt_primes(30, n, 2, &[]).unwrap();
    let (q, source) = (primes[0], primes[1]);
    let m = Modulus::new(q as u64).unwrap();
    let t = Modulus::new(65537).unwrap();
    let d = Dpu::new(q, n, 1);
    let k = count as usize;
    let words = (n * k) as f64;
    // Per element, from cost.h: the best variant's foreign product is Shoup's lazy product
    // (1 + 21 + 19 + Q q + 2) and a conditional subtraction (2), Q q = 11 for a prime of known
    // form, else 21; centring is a compare and negate (2), an and (1) and an addmod (3); an
    // accumulation one addmod (3); DIVIDE_LAST's t-correction the exact Shoup product (35 + 1 +
    // 21 + 21 + 2), a submod (3), an add and the centring's compare, negate (3), the [s]_q
    // mask (2) and the final addmod (3). Loads, stores and the loop per element pair (EW_COST).
    let qq = if has_known_form(q) { 11.0 } else { 21.0 };
    let best_product = 1.0 + 21.0 + 19.0 + qq + 2.0 + 2.0;
    let barrett_product = (6.0 + 1.0 + 35.0 + 21.0 + 4.0) + (35.0 + 6.0 + 1.0 + 35.0 + 21.0 + 4.0);
    let cases = [
        (
            "BCONV",
            Variant::Best,
            PimheCommand::bconv(d.at(k), d.at(0), source, 77, true, true, &m, count),
            (2.0 + 1.0 + 2.0) / 2.0 + best_product + 6.0 + 3.0,
            (8.0, 4.0),
        ),
        (
            "BCONV",
            Variant::Barrett,
            PimheCommand::bconv(d.at(k), d.at(0), source, 77, true, true, &m, count),
            2.0 + 1.0 + 2.0 + barrett_product + 6.0 + 3.0,
            (8.0, 4.0),
        ),
        (
            "BCONV-1",
            Variant::Best,
            PimheCommand::bconv(d.at(k), d.at(0), source, 77, false, false, &m, count),
            (1.0 + 1.0 + 2.0) / 2.0 + best_product,
            (4.0, 4.0),
        ),
        (
            "DIVIDE",
            Variant::Best,
            PimheCommand::divide_last(d.at(k), d.at(0), source, None, &m, count).unwrap(),
            (1.0 + 1.0 + 2.0) / 2.0 + 2.0 + 2.0 + best_product + 3.0,
            (4.0, 4.0),
        ),
        (
            "DIVIDE-T",
            Variant::Best,
            PimheCommand::divide_last(d.at(k), d.at(0), source, Some(&t), &m, count).unwrap(),
            (1.0 + 1.0 + 2.0) / 2.0 + 2.0 + 80.0 + 3.0 + 1.0 + 2.0 + 2.0 + best_product + 3.0,
            (4.0, 4.0),
        ),
    ];
    for (name, variant, command, per_element, (read, written)) in cases {
        let launch = |command: PimheCommand| {
            let mut dpus = set(1, EmulatorConfig::default());
            d.load(&mut dpus, 0, variant, &[command]);
            d.put(&mut dpus, 0, 0, &residues(2 * k * n, source.min(q), 5));
            dpus.launch(&[0]).unwrap().dpus[0].1.clone()
        };
        let (full, idle) = (launch(command), launch(PimheCommand { count: 0, ..command }));
        let (total, none) = (full.total(), idle.total());
        let moved = (total.dma_read_bytes - none.dma_read_bytes, total.dma_write_bytes - none.dma_write_bytes);
        assert_eq!(moved, ((read * words) as u64, (written * words) as u64), "{name} {variant:?}: DMA bytes");
        let counted = (total.instructions - none.instructions) as f64 / words;
        // Above the per-element count only by the per-chunk overhead (a few instructions per
        // chunk of 128 or more words).
        assert!(
            counted >= per_element && counted < per_element + 0.25,
            "{name} {variant:?}: {counted:.3} instructions per element, hand count {per_element}"
        );
        assert!(model_cycles(&full) > model_cycles(&idle));
    }
}
