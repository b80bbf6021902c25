//! Forward/inverse NTT for N = 2^10..2^16 over a 30-bit prime, and FastBConv.
//!
//! Run with `cargo bench -p pimhe-math --bench ntt`; ids look like `ntt_forward/n=4096/bits=30`
//! and `fastbconv/n=4096/from=3/to=4`.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use pimhe_math::{ntt_primes, BaseConverter, Modulus, NttTable, RnsBase, Sampler};

const BITS: u32 = 30;

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
        forward.bench_with_input(BenchmarkId::new(format!("n={n}"), format!("bits={BITS}")), input, |b, input| {
            let mut a = input.clone();
            // The transform stays in range, so repeating it in place measures the same work.
            b.iter(|| table.forward(black_box(&mut a)));
        });
    }
    forward.finish();

    let mut inverse = c.benchmark_group("ntt_inverse");
    for (table, input) in &tables {
        let n = table.degree();
        inverse.throughput(Throughput::Elements(n as u64));
        inverse.bench_with_input(BenchmarkId::new(format!("n={n}"), format!("bits={BITS}")), input, |b, input| {
            let mut a = input.clone();
            b.iter(|| table.inverse(black_box(&mut a)));
        });
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
        group.bench_function(BenchmarkId::new(format!("n={n}"), format!("from={from_len}/to={to_len}")), |b| {
            b.iter(|| converter.convert(black_box(&input), black_box(&mut output)).unwrap())
        });
    }
    group.finish();
}

criterion_group!(benches, bench_ntt, bench_fastbconv);
criterion_main!(benches);
