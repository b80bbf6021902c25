//! The vector kernels (AVX2, AVX-512) against the scalar reference: NTT and inverse NTT for
//! every N = 2^4..2^15 and primes of 17..30 bits, element-wise kernels against plain `%`
//! arithmetic on lengths that leave remainders. Outputs are compared exactly. Instruction sets
//! this CPU lacks are skipped with a note.

use std::mem::MaybeUninit;

use pimhe_math::simd::elementwise as ew;
use pimhe_math::{ntt_primes, Isa, Modulus, NttTable};
use pimhe_testkit::inputs::{random_residues, rng};

/// The instruction sets to compare with the scalar path, announcing the ones skipped.
fn vector_isas() -> Vec<Isa> {
    Isa::ALL
        .into_iter()
        .filter(|&isa| isa != Isa::Scalar)
        .filter(|&isa| {
            let ok = isa.available();
            if !ok {
                eprintln!("note: this CPU has no {isa}; its kernels are not tested here");
            }
            ok
        })
        .collect()
}

/// Random residues, all zero, all q - 1, and random values with every fourth set to 0 or q - 1.
fn inputs(seed: u64, n: usize, q: u32) -> Vec<Vec<u32>> {
    let mut rng = rng(seed);
    let mut mixed = random_residues(&mut rng, n, q);
    for (i, x) in mixed.iter_mut().enumerate().step_by(4) {
        *x = if i % 8 == 0 { 0 } else { q - 1 };
    }
    vec![random_residues(&mut rng, n, q), vec![0; n], vec![q - 1; n], mixed]
}

/// Primes of the sizes the tests cover for degree n: 17, 22, 25, 29 and 30 bits (the largest
/// 30-bit one, just below 2^30), where one exists.
fn primes(n: usize) -> Vec<u32> {
    [17, 22, 25, 29, 30].into_iter().filter_map(|bits| ntt_primes(bits, n, 1, &[]).ok()).map(|p| p[0]).collect()
}

#[test]
fn ntt_matches_scalar_on_every_isa_degree_and_prime_size() {
    let isas = vector_isas();
    for log_n in 4..=15 {
        let n = 1usize << log_n;
        let primes = primes(n);
        assert!(primes.len() >= 4, "n={n}: too few primes {primes:?}");
        for p in primes {
            let table = NttTable::new(Modulus::new(p as u64).unwrap(), n).unwrap();
            for (k, input) in inputs(u64::from(p) ^ n as u64, n, p).into_iter().enumerate() {
                let mut expected = input.clone();
                table.forward_on(Isa::Scalar, &mut expected);
                let mut expected_inverse = input.clone();
                table.inverse_on(Isa::Scalar, &mut expected_inverse);
                for &isa in &isas {
                    let mut a = input.clone();
                    table.forward_on(isa, &mut a);
                    assert_eq!(a, expected, "forward differs: {isa} n={n} p={p} input {k}");
                    let mut a = input.clone();
                    table.inverse_on(isa, &mut a);
                    assert_eq!(a, expected_inverse, "inverse differs: {isa} n={n} p={p} input {k}");
                }
            }
        }
    }
}

#[test]
fn vector_ntt_round_trips() {
    for &isa in &vector_isas() {
        for log_n in [4, 5, 9, 13, 15] {
            let n = 1usize << log_n;
            let p = ntt_primes(30, n, 1, &[]).unwrap()[0];
            let table = NttTable::new(Modulus::new(p as u64).unwrap(), n).unwrap();
            let input = random_residues(&mut rng(7), n, p);
            let mut a = input.clone();
            table.forward_on(isa, &mut a);
            assert_ne!(a, input);
            table.inverse_on(isa, &mut a);
            assert_eq!(a, input, "{isa} n={n}");
        }
    }
}

/// Lengths around the vector widths and a polynomial-sized one, so every remainder path runs.
const LENGTHS: [usize; 9] = [0, 1, 7, 8, 9, 16, 17, 31, 4096 + 13];

/// Runs `check(isa, q, inputs...)` for every ISA (scalar included), prime size and length.
fn for_each_case(mut check: impl FnMut(Isa, &Modulus, &[Vec<u32>; 3])) {
    let mut isas = vector_isas();
    isas.insert(0, Isa::Scalar);
    for p in primes(1 << 12).into_iter().chain([3, 97]) {
        let q = Modulus::new(p as u64).unwrap();
        for len in LENGTHS {
            for (k, x) in inputs(u64::from(p) + len as u64, len, p).iter().enumerate() {
                // The second and third operands: shifted edge-laden data and fresh randoms.
                let y: Vec<u32> = x.iter().rev().copied().collect();
                let z = random_residues(&mut rng(k as u64 + len as u64), len, p);
                for &isa in &isas {
                    check(isa, &q, &[x.clone(), y.clone(), z.clone()]);
                }
            }
        }
    }
}

fn expect(q: &Modulus, f: impl Fn(u64, u64, u64) -> u64, [x, y, z]: &[Vec<u32>; 3]) -> Vec<u32> {
    let p = u64::from(q.value());
    x.iter().zip(y).zip(z).map(|((&x, &y), &z)| (f(x as u64, y as u64, z as u64) % p) as u32).collect()
}

#[test]
fn binary_kernels_match_plain_arithmetic() {
    for_each_case(|isa, q, v| {
        let p = u64::from(q.value());
        let [x, y, _] = v;
        let mut out = vec![u32::MAX; x.len()];
        ew::add(isa, q, &mut out, x, y);
        assert_eq!(out, expect(q, |a, b, _| a + b, v), "add {isa} q={p}");
        ew::sub(isa, q, &mut out, x, y);
        assert_eq!(out, expect(q, |a, b, _| a + p - b, v), "sub {isa} q={p}");
        ew::mul(isa, q, &mut out, x, y);
        assert_eq!(out, expect(q, |a, b, _| a * b, v), "mul {isa} q={p}");
        let mut acc = x.clone();
        ew::add_assign(isa, q, &mut acc, y);
        assert_eq!(acc, expect(q, |a, b, _| a + b, v), "add_assign {isa} q={p}");
    });
}

#[test]
fn streamed_kernels_match_plain_arithmetic_at_every_alignment() {
    type Streamed = fn(Isa, &Modulus, &mut [MaybeUninit<u32>], &[u32], &[u32]);
    for_each_case(|isa, q, v| {
        let p = u64::from(q.value());
        let [x, y, _] = v;
        let cases: [(&str, Streamed, Vec<u32>); 3] = [
            ("add", ew::add_streamed, expect(q, |a, b, _| a + b, v)),
            ("sub", ew::sub_streamed, expect(q, |a, b, _| a + p - b, v)),
            ("mul", ew::mul_streamed, expect(q, |a, b, _| a * b, v)),
        ];
        // Outputs starting at every offset from a 64-byte boundary (16 residues), so the
        // values before the first aligned vector take every count from none to a whole vector.
        let mut buffer: Vec<MaybeUninit<u32>> = Vec::with_capacity(x.len() + 32);
        let aligned = buffer.as_ptr().align_offset(64);
        for offset in aligned..aligned + 16 {
            for (name, kernel, expected) in &cases {
                buffer.clear();
                buffer.resize(offset + x.len(), MaybeUninit::new(u32::MAX));
                kernel(isa, q, &mut buffer[offset..], x, y);
                let out: Vec<u32> = buffer[offset..].iter().map(|value| unsafe { value.assume_init() }).collect();
                assert_eq!(&out, expected, "{name}_streamed {isa} q={p} offset {offset}");
            }
        }
    });
}

#[test]
fn unary_kernels_match_plain_arithmetic() {
    for_each_case(|isa, q, v| {
        let p = u64::from(q.value());
        let mut data = v[0].clone();
        ew::neg(isa, q, &mut data);
        assert_eq!(data, expect(q, |a, _, _| p - a, v), "neg {isa} q={p}");
        for c in [0, 1, q.value() - 1, q.value() / 3] {
            let mut data = v[0].clone();
            ew::mul_scalar(isa, q, &mut data, c);
            assert_eq!(data, expect(q, |a, _, _| a * u64::from(c), v), "mul_scalar by {c} {isa} q={p}");
        }
    });
}

#[test]
fn mac_and_tensor_match_plain_arithmetic() {
    for_each_case(|isa, q, v| {
        let p = u64::from(q.value());
        let [x, y, z] = v;
        let mut acc = z.clone();
        ew::mac(isa, q, &mut acc, x, y);
        assert_eq!(acc, expect(q, |a, b, c| a * b + c, v), "mac {isa} q={p}");
        let w = z.iter().map(|&c| q.value() - 1 - c).collect::<Vec<_>>();
        let mut out = [vec![0; x.len()], vec![0; x.len()], vec![0; x.len()]];
        let [o0, o1, o2] = &mut out;
        ew::tensor(isa, q, [o0, o1, o2], [x, y], [z, &w]);
        let pairs = |f: &dyn Fn(usize) -> u64| (0..x.len()).map(|i| (f(i) % p) as u32).collect::<Vec<_>>();
        let (x, y, z, w) =
            (|i: usize| x[i] as u64, |i: usize| y[i] as u64, |i: usize| z[i] as u64, |i: usize| w[i] as u64);
        assert_eq!(out[0], pairs(&|i| x(i) * z(i)), "tensor d0 {isa} q={p}");
        assert_eq!(out[1], pairs(&|i| x(i) * w(i) + y(i) * z(i)), "tensor d1 {isa} q={p}");
        assert_eq!(out[2], pairs(&|i| y(i) * w(i)), "tensor d2 {isa} q={p}");
    });
}

#[test]
fn fused_kernels_match_plain_arithmetic() {
    for_each_case(|isa, q, v| {
        let p = u64::from(q.value());
        let [x, y, z] = v;
        let mut out = [vec![0; x.len()], vec![0; x.len()], vec![0; x.len()]];
        let [o0, o1, o2] = &mut out;
        ew::tensor_square(isa, q, [o0, o1, o2], [x, y]);
        assert_eq!(out[0], expect(q, |a, _, _| a * a, v), "tensor_square d0 {isa} q={p}");
        assert_eq!(out[1], expect(q, |a, b, _| 2 * (a * b % p), v), "tensor_square d1 {isa} q={p}");
        assert_eq!(out[2], expect(q, |_, b, _| b * b, v), "tensor_square d2 {isa} q={p}");
        for c in [0, 1, q.value() - 1, q.value() / 3] {
            let mut acc = z.clone();
            ew::mac_scalar(isa, q, &mut acc, x, c);
            assert_eq!(acc, expect(q, |a, _, s| a * u64::from(c) + s, v), "mac_scalar by {c} {isa} q={p}");
            let mut out = vec![u32::MAX; x.len()];
            ew::sub_mul_scalar(isa, q, &mut out, x, y, c);
            assert_eq!(out, expect(q, |a, b, _| (a + p - b) * u64::from(c), v), "sub_mul_scalar by {c} {isa} q={p}");
            let mut acc = x.clone();
            ew::sub_mul_scalar_assign(isa, q, &mut acc, y, c);
            assert_eq!(acc, out, "sub_mul_scalar_assign by {c} {isa} q={p}");
        }
    });
}

#[test]
fn division_kernels_match_plain_arithmetic() {
    for_each_case(|isa, q, v| {
        let p = i128::from(q.value());
        let [x, y, z] = v;
        for c in [0, 1, q.value() - 1, q.value() / 3] {
            let mut acc = x.clone();
            ew::mul_scalar_add_assign(isa, q, &mut acc, y, c);
            assert_eq!(acc, expect(q, |a, b, _| a * u64::from(c) + b, v), "mul_scalar_add_assign by {c} {isa} q={p}");
            // Multiplicands up to 2^30 (residues of another prime) and corrections of either sign.
            let a: Vec<u32> = z.iter().map(|&r| r.wrapping_mul(2_654_435_761) >> 2).collect();
            let shifts: Vec<i32> = y
                .iter()
                .map(|&r| (i64::from(r) % (2 * i64::from(q.value()) - 1) - i64::from(q.value()) + 1) as i32)
                .collect();
            let mut out = vec![u32::MAX; x.len()];
            ew::mul_scalar_add_signed(isa, q, &mut out, &a, c, &shifts.iter().map(|&s| s as u32).collect::<Vec<_>>());
            let want: Vec<u32> = a
                .iter()
                .zip(&shifts)
                .map(|(&a, &s)| (i128::from(a) * i128::from(c) + i128::from(s)).rem_euclid(p) as u32)
                .collect();
            assert_eq!(out, want, "mul_scalar_add_signed by {c} {isa} q={p}");
        }
    });
}

/// The corrections define delta = r_c - p m (r_c = r centred modulo p): without t, m = 0; with
/// t, m is the one value in [-(t-1)/2, (t-1)/2] that makes delta divisible by t.
#[test]
fn division_corrections_make_delta_a_centred_multiple_of_t() {
    let mut isas = vector_isas();
    isas.insert(0, Isa::Scalar);
    let plain_moduli = [None, Some(65537u32), Some(3), Some(257), Some((1 << 20) + 7)];
    for bits in [17, 25, 30] {
        let p = Modulus::new(u64::from(ntt_primes(bits, 1 << 12, 1, &[]).unwrap()[0])).unwrap();
        for len in LENGTHS {
            for r in inputs(u64::from(p.value()) + len as u64, len, p.value())
                .iter()
                .chain([&vec![p.value() / 2; len], &vec![p.value() / 2 + 1; len]])
            {
                for t in plain_moduli {
                    let t = t.map(|t| Modulus::new(u64::from(t)).unwrap());
                    let plain = t.as_ref().map(|t| (t, t.inv(p.value() % t.value()).unwrap()));
                    for &isa in &isas {
                        let mut out = vec![u32::MAX; len];
                        ew::division_corrections(isa, &p, plain, &mut out, r);
                        for (&s, &r) in out.iter().zip(r) {
                            let above = i64::from(r > p.value() / 2);
                            let m = i64::from(s as i32) - above;
                            let delta = i64::from(r) - i64::from(p.value()) * above - i64::from(p.value()) * m;
                            match t {
                                None => assert_eq!(m, 0, "{isa} p={} r={r}", p.value()),
                                Some(t) => {
                                    let t = i64::from(t.value());
                                    assert_eq!(delta.rem_euclid(t), 0, "{isa} p={} t={t} r={r}", p.value());
                                    assert!(2 * m.abs() < t, "{isa} p={} t={t} r={r}: m = {m}", p.value());
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn the_scalar_path_can_be_pinned() {
    assert!(Isa::detected().available());
    Isa::pin(Isa::Scalar).unwrap();
    assert_eq!(Isa::active(), Isa::Scalar);
    // Pinned or not, the transforms agree (the pin is process-wide; other tests may run).
    let n = 1 << 10;
    let p = ntt_primes(30, n, 1, &[]).unwrap()[0];
    let table = NttTable::new(Modulus::new(p as u64).unwrap(), n).unwrap();
    let input = random_residues(&mut rng(3), n, p);
    let mut pinned = input.clone();
    table.forward(&mut pinned);
    for isa in Isa::ALL.into_iter().filter(|isa| !isa.available()) {
        assert!(Isa::pin(isa).is_err(), "pinning an absent {isa} must fail");
    }
    Isa::pin(Isa::detected()).unwrap();
    assert_eq!(Isa::active(), Isa::detected());
    let mut detected = input;
    table.forward(&mut detected);
    assert_eq!(pinned, detected);
}

#[test]
fn isa_names_parse() {
    for isa in Isa::ALL {
        assert_eq!(isa.name().parse::<Isa>(), Ok(isa));
        assert_eq!(isa.to_string().to_uppercase().parse::<Isa>(), Ok(isa));
    }
    assert!("sse2".parse::<Isa>().is_err());
}

#[test]
fn base_conversion_matches_scalar_on_every_isa() {
    let isas = vector_isas();
    let mut rng = rng(11);
    for (n, from_len, to_len, bits) in [
        (5usize, 2usize, 3usize, 30),
        (4096 + 3, 3, 4, 30),
        (300, 20, 2, 30),
        (700, 4, 3, 17),
        (129, 3, 3, 24),
        (96, 3, 2, 16),
        (64, 33, 2, 30),
        // One and four source limbs at 30 bits: the Shoup sums (up to four) at their widest.
        (257, 1, 3, 30),
        (1000, 4, 3, 30),
    ] {
        let moduli: Vec<Modulus> = ntt_primes(bits, 16, from_len + to_len, &[])
            .unwrap()
            .iter()
            .map(|&p| Modulus::new(p as u64).unwrap())
            .collect();
        let from = pimhe_math::RnsBase::new(&moduli[..from_len]).unwrap();
        let to = pimhe_math::RnsBase::new(&moduli[from_len..]).unwrap();
        let converter = pimhe_math::BaseConverter::new(&from, &to).unwrap();
        // Unreduced words included: the converter accepts any u32.
        let mut input: Vec<u32> = random_residues(&mut rng, from_len * n, u32::MAX);
        input[0] = u32::MAX;
        input[1] = 0;
        // One coefficient whose every source residue scales to its largest value, q_i - 1: the
        // 64-bit sums at their bound (16 products of (2^30 - 1)^2 before each fold).
        for (i, q) in from.moduli().iter().enumerate() {
            let w_inv = q.inv(from.q_hat_inv()[i]).unwrap();
            input[i * n + 2] = q.mul(q.value() - 1, w_inv);
        }
        let mut expected = vec![0; to_len * n];
        converter.convert_on(Isa::Scalar, &input, &mut expected).unwrap();
        for &isa in &isas {
            let mut got = vec![u32::MAX; to_len * n];
            converter.convert_on(isa, &input, &mut got).unwrap();
            assert_eq!(got, expected, "{isa} n={n} from={from_len} to={to_len} bits={bits}");
        }
        // The split form: scale each (reduced) source limb once, then one target at a time.
        let reduced: Vec<u32> = input
            .chunks_exact(n)
            .zip(from.moduli())
            .flat_map(|(limb, q)| limb.iter().map(move |&x| q.reduce_u64(x as u64)))
            .collect();
        for isa in std::iter::once(Isa::Scalar).chain(isas.iter().copied()) {
            let mut scaled = reduced.clone();
            for (i, limb) in scaled.chunks_exact_mut(n).enumerate() {
                converter.scale_on(isa, i, limb).unwrap();
            }
            for j in 0..to_len {
                let mut got = vec![u32::MAX; n];
                converter.accumulate_on(isa, j, &scaled, &mut got).unwrap();
                assert_eq!(got, expected[j * n..(j + 1) * n], "accumulate {isa} n={n} bits={bits} target {j}");
                // The centred form against i128 arithmetic: residues above q_i / 2 read as s - q_i.
                let target = to.moduli()[j].value() as i128;
                let factors = converter.q_hat_mod_target(j).unwrap();
                let centred: Vec<u32> = (0..n)
                    .map(|c| {
                        let sum: i128 = (0..from_len)
                            .map(|i| {
                                let (s, q) = (scaled[i * n + c] as i128, from.moduli()[i].value() as i128);
                                (if s > q / 2 { s - q } else { s }) * factors[i] as i128
                            })
                            .sum();
                        sum.rem_euclid(target) as u32
                    })
                    .collect();
                converter.accumulate_centred_on(isa, j, &scaled, &mut got).unwrap();
                assert_eq!(got, centred, "accumulate_centred {isa} n={n} bits={bits} target {j}");
            }
        }
    }
}

/// The slot permutation of X -> X^k in NTT form (bit-reversed evaluation order), from its
/// definition: slot j holds a(psi^(2 bitrev(j) + 1)) and takes the value at that exponent times k.
fn ntt_automorphism_indices(n: usize, k: usize) -> Vec<u32> {
    let log_n = n.trailing_zeros();
    (0..n)
        .map(|j| {
            let exponent = (2 * pimhe_math::bit_reverse(j, log_n) + 1) * k % (2 * n);
            pimhe_math::bit_reverse((exponent - 1) / 2, log_n) as u32
        })
        .collect()
}

/// The vector gather equals the scalar one and the plain definition, on the NTT-form
/// automorphisms of every degree 2^4..2^15 (all block-local) and on random block-local
/// indices that are no permutation (blocks read twice, others never); indices that leave a
/// block of 8 or 16, lie out of range or have a length not a multiple of 16 are refused.
#[test]
fn block_local_gather_matches_the_definition_on_every_isa() {
    use pimhe_math::simd::gather::BlockLocalIndices;
    use rand_chacha::rand_core::Rng;
    let mut rng = rng(12);
    let mut cases: Vec<Vec<u32>> = Vec::new();
    for log_n in 4..=15 {
        let n = 1usize << log_n;
        for k in [1, 3, 5, 25, 5usize.pow(7) % (2 * n), 2 * n - 1, n + 1] {
            cases.push(ntt_automorphism_indices(n, k | 1));
        }
    }
    for n in [16usize, 64, 4096] {
        // Each block of 16 reads a random block of 16 (several may read the same), each of its
        // halves the same half there, in random order with repeats.
        let blocks16: Vec<u32> = (0..n / 16).map(|_| rng.next_u32() % (n as u32 / 16)).collect();
        cases.push((0..n).map(|j| blocks16[j / 16] * 16 + (j as u32 & 8) + rng.next_u32() % 8).collect());
    }
    for indices in &cases {
        let local = BlockLocalIndices::new(indices).expect("NTT automorphisms and the random cases are block-local");
        assert_eq!(local.as_slice(), &indices[..]);
        let n = indices.len();
        let input = random_residues(&mut rng, n, u32::MAX);
        let expected: Vec<u32> = indices.iter().map(|&i| input[i as usize]).collect();
        for isa in std::iter::once(Isa::Scalar).chain(vector_isas()) {
            let mut out = vec![0; n];
            local.gather(isa, &mut out, &input);
            assert_eq!(out, expected, "{isa} n={n}");
        }
    }
    let identity: Vec<u32> = (0..64).collect();
    assert!(BlockLocalIndices::new(&identity).is_some());
    let mut crossing = identity.clone();
    crossing.swap(7, 8); // leaves its block of 8 (inside one block of 16)
    assert!(BlockLocalIndices::new(&crossing).is_none());
    let mut crossing16 = identity.clone();
    crossing16[..8].copy_from_slice(&identity[16..24]);
    crossing16[16..24].copy_from_slice(&identity[..8]); // blocks of 8 stay local, of 16 not
    assert!(BlockLocalIndices::new(&crossing16).is_none());
    let mut out_of_range = identity.clone();
    out_of_range[3] = 64;
    assert!(BlockLocalIndices::new(&out_of_range).is_none());
    assert!(BlockLocalIndices::new(&identity[..8]).is_none());
    assert!(BlockLocalIndices::new(&[]).is_none());
}
