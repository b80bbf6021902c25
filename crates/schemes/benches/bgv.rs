//! Criterion benchmarks of BGV operations on the CPU backend, per preset ring degree.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use pimhe_exec::CpuBackend;
use pimhe_math::Sampler;
use pimhe_schemes::bgv::*;

fn bgv(c: &mut Criterion) {
    let backend = CpuBackend::new(None).unwrap();
    for n in [4096usize, 8192, 16384] {
        let ctx = BgvContext::new(BgvParameters::preset(n).unwrap()).unwrap();
        let mut keygen = KeyGenerator::with_sampler(&backend, &ctx, Sampler::from_seed_u64(1));
        let secret = keygen.secret_key().unwrap();
        let public = keygen.public_key(&secret).unwrap();
        let relin = keygen.relin_key(&secret).unwrap();
        let encoder = BatchEncoder::new(&ctx);
        let values: Vec<u64> = (0..n as u64).collect();
        let plain = encoder.encode(&values).unwrap();
        let mut encryptor =
            Encryptor::with_public_key(&backend, &public).unwrap().with_sampler(Sampler::from_seed_u64(2));
        let decryptor = Decryptor::new(&backend, &secret).unwrap();
        let evaluator = Evaluator::new(&backend, &ctx).with_relin_key(&relin).unwrap();
        let x = encryptor.encrypt(std::slice::from_ref(&plain)).unwrap();
        let y = encryptor.encrypt(std::slice::from_ref(&plain)).unwrap();
        let product = evaluator.multiply(&x, &y).unwrap();
        let relinearized = evaluator.relinearize(&product).unwrap();
        let label = |op: &str| BenchmarkId::new(format!("bgv/{op}"), format!("n={n}/primes={}", ctx.max_level() + 1));

        let mut group = c.benchmark_group(format!("bgv-n{n}"));
        group.sample_size(10);
        group.bench_function(label("encrypt"), |b| {
            b.iter(|| encryptor.encrypt(black_box(std::slice::from_ref(&plain))).unwrap())
        });
        group.bench_function(label("decrypt"), |b| b.iter(|| decryptor.decrypt(black_box(&x)).unwrap()));
        group.bench_function(label("multiply"), |b| {
            b.iter(|| evaluator.multiply(black_box(&x), black_box(&y)).unwrap())
        });
        group.bench_function(label("relinearize"), |b| b.iter(|| evaluator.relinearize(black_box(&product)).unwrap()));
        group.bench_function(label("mod_switch"), |b| {
            b.iter(|| evaluator.mod_switch_to_next(black_box(&relinearized)).unwrap())
        });
        group.bench_function(label("add"), |b| b.iter(|| evaluator.add(black_box(&x), black_box(&y)).unwrap()));
        group.finish();
    }
}

criterion_group!(benches, bgv);
criterion_main!(benches);
