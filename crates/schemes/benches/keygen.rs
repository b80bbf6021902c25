//! Criterion benchmarks of key generation on the CPU backend at the CKKS presets, the part of a
//! bootstrapping setup that grows with its rotations: one relinearization key, and Galois keys
//! (one key-switching key each) four at a time, so that the keys are made in parallel as
//! `galois_keys` makes them. Keys per second = 4 / the Galois time.
//!
//! `cargo bench -p pimhe-schemes --bench keygen`

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use pimhe_exec::CpuBackend;
use pimhe_math::Sampler;
use pimhe_schemes::ckks::{CkksContext, CkksParameters};
use pimhe_schemes::rlwe::KeyGenerator;

fn keygen(c: &mut Criterion) {
    let backend = CpuBackend::new(None).unwrap();
    for n in [16384usize, 65536] {
        let ctx = CkksContext::new(CkksParameters::preset(n).unwrap()).unwrap();
        let mut keygen = KeyGenerator::with_sampler(&backend, &ctx, Sampler::from_seed_u64(1));
        let secret = keygen.secret_key().unwrap();
        let elements = ctx.galois_elements(&[1, 2, 4, 8], false);
        let mut group = c.benchmark_group(format!("ckks-keygen-n{n}"));
        group.sample_size(10);
        group.bench_function(BenchmarkId::new("relin-key", n), |b| b.iter(|| keygen.relin_key(&secret).unwrap()));
        group.bench_function(BenchmarkId::new("galois-keys-x4", n), |b| {
            b.iter(|| keygen.galois_keys(&secret, &elements).unwrap())
        });
        group.finish();
    }
}

criterion_group!(benches, keygen);
criterion_main!(benches);
