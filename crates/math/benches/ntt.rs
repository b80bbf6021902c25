//! Forward/inverse NTT for N = 2^10..2^16 over a 30-bit prime on every instruction set this
//! CPU has (scalar, avx2, avx512, in the same run so the ratios show), the element-wise kernels
//! likewise, and FastBConv.
//!
//! Run with `cargo bench -p pimhe-math --bench ntt`; ids look like
//! `ntt_forward/n=4096/bits=30/avx2`, `elementwise/mul/n=4096/bits=30/scalar` and
//! `fastbconv/n=4096/from=3/to=4/avx2`. `-- ntt_` runs the transforms only.

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use pimhe_math::simd::elementwise as ew;
use pimhe_math::{ntt_primes, BaseConverter, Isa, Modulus, NttTable, RnsBase, Sampler};

const BITS: u32 = 30;

/// The instruction sets to compare: every one this CPU runs.
fn isas() -> Vec<Isa> {
    Isa::ALL.into_iter().filter(|isa| isa.available()).collect()
}

fn bench_ntt(c: &mut Criterion) {
    let mut sampler = Sampler::from_seed_u64(1);
    let mut forward = c.benchmark_group("ntt_forward");
    let tables: Vec<(NttTable, Vec<u32>)> = (10..=16)
        .map(|log_n| {
            let n = 1usize << log_n;
            let q = Modulus::new(ntt_primes(BITS, n, 1, &[]).unwrap()[0] as u64).unwrap();
            let table = NttTable::new(q, n).unwrap();
            let input = sampler.uniform_vec(&q, n);
            (table, input)
        })
        .collect();
    for (table, input) in &tables {
        let n = table.degree();
        forward.throughput(Throughput::Elements(n as u64));
        for isa in isas() {
            let id = BenchmarkId::new(format!("n={n}"), format!("bits={BITS}/{isa}"));
            forward.bench_with_input(id, input, |b, input| {
                let mut a = input.clone();
                // The transform stays in range, so repeating it in place measures the same work.
                b.iter(|| table.forward_on(isa, black_box(&mut a)));
            });
        }
    }
    forward.finish();

    let mut inverse = c.benchmark_group("ntt_inverse");
    for (table, input) in &tables {
        let n = table.degree();
        inverse.throughput(Throughput::Elements(n as u64));
        for isa in isas() {
            let id = BenchmarkId::new(format!("n={n}"), format!("bits={BITS}/{isa}"));
            inverse.bench_with_input(id, input, |b, input| {
                let mut a = input.clone();
                b.iter(|| table.inverse_on(isa, black_box(&mut a)));
            });
        }
    }
    inverse.finish();
}

fn bench_fastbconv(c: &mut Criterion) {
    let mut sampler = Sampler::from_seed_u64(2);
    let mut group = c.benchmark_group("fastbconv");
    for (n, from_len, to_len) in [(4096usize, 3usize, 4usize), (1 << 14, 8, 9), (1 << 16, 24, 25)] {
        let primes = ntt_primes(BITS, n, from_len + to_len, &[]).unwrap();
        let moduli: Vec<Modulus> = primes.iter().map(|&p| Modulus::new(p as u64).unwrap()).collect();
        let from = RnsBase::new(&moduli[..from_len]).unwrap();
        let to = RnsBase::new(&moduli[from_len..]).unwrap();
        let converter = BaseConverter::new(&from, &to).unwrap();
        let input: Vec<u32> = from.moduli().iter().flat_map(|q| sampler.uniform_vec(q, n)).collect();
        let mut output = vec![0u32; to_len * n];
        group.throughput(Throughput::Elements((n * from_len * to_len) as u64));
        for isa in isas() {
            let id = BenchmarkId::new(format!("n={n}"), format!("from={from_len}/to={to_len}/{isa}"));
            group.bench_function(id, |b| {
                b.iter(|| converter.convert_on(isa, black_box(&input), black_box(&mut output)).unwrap())
            });
        }
    }
    group.finish();
}

fn bench_elementwise(c: &mut Criterion) {
    let mut sampler = Sampler::from_seed_u64(3);
    let mut group = c.benchmark_group("elementwise");
    for (n, bits) in [(4096usize, 30u32), (4096, 22), (32768, 30)] {
        let q = Modulus::new(ntt_primes(bits, n, 1, &[]).unwrap()[0] as u64).unwrap();
        let [x, y, z, w] = [(); 4].map(|_| sampler.uniform_vec(&q, n));
        group.throughput(Throughput::Elements(n as u64));
        for isa in isas() {
            let id = |op: &str| BenchmarkId::new(op, format!("n={n}/bits={bits}/{isa}"));
            let mut out = vec![0u32; n];
            group.bench_function(id("add"), |b| b.iter(|| ew::add(isa, &q, black_box(&mut out), &x, &y)));
            group.bench_function(id("sub"), |b| b.iter(|| ew::sub(isa, &q, black_box(&mut out), &x, &y)));
            group.bench_function(id("neg"), |b| b.iter(|| ew::neg(isa, &q, black_box(&mut out))));
            group.bench_function(id("mul"), |b| b.iter(|| ew::mul(isa, &q, black_box(&mut out), &x, &y)));
            group.bench_function(id("mul_scalar"), |b| b.iter(|| ew::mul_scalar(isa, &q, black_box(&mut out), 12345)));
            group.bench_function(id("mac"), |b| b.iter(|| ew::mac(isa, &q, black_box(&mut out), &x, &y)));
            let mut outs = [vec![0u32; n], vec![0u32; n], vec![0u32; n]];
            group.bench_function(id("tensor"), |b| {
                b.iter(|| {
                    let [o0, o1, o2] = &mut outs;
                    ew::tensor(isa, &q, [o0, o1, o2], [&x, &y], [&z, &w])
                })
            });
        }
    }
    group.finish();
}

criterion_group! {
    name = benches;
    // Short runs: every kernel on up to 3 instruction sets would take long at the defaults.
    config = Criterion::default().warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(2));
    targets = bench_ntt, bench_elementwise, bench_fastbconv
}
criterion_main!(benches);
