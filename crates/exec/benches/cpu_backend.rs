//! Criterion benchmarks of every bulk operation of the CPU backend.
//!
//! Per ring degree N in {4096, 16384}: three 30-bit primes and batches of 8 polynomials
//! (each operand of `tensor` is such a batch), on every instruction set the CPU has, pinned in
//! turn with `Isa::pin`. Ids read `cpu/<op>/n=<N>/primes=3/batch=8/<isa>`; throughput is in
//! residues (8 x N x 3 per operand batch). The backend uses all cores, or
//! `PIMHE_BENCH_THREADS` threads when that variable is set.
//!
//! `mod_down` and `key_switch` work over the three primes plus one key-switching prime
//! (`key_switch` with one digit per prime; `key_switch_composed` is the same switch as
//! batch-wide calls, the PIM backends' path).
//!
//! `add_chain` (`cpu/add_chain/mib=<M>/<stores>`) times three adds, each reading the output
//! of the one before, on batches of 8 primes at N = 16384 whose outputs are M MiB, every output
//! written with streaming stores or with ordinary ones: where a streamed output's reader loses
//! more than the streaming writer gains (cpu/streaming.rs sets its threshold from this).
//!
//! `cargo bench -p pimhe-exec --bench cpu_backend -- tensor` runs one operation.

use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion, Throughput};
use pimhe_exec::{key_switch, Backend, CpuBackend, KeySwitchPlan};
use pimhe_math::{ntt_primes, Isa, Modulus, Sampler};
use pimhe_ring::{PolyBatch, Representation, RingBasis};

const DEGREES: [usize; 2] = [4096, 16384];
const PRIMES: usize = 3;
const PRIME_BITS: u32 = 30;
const BATCH: usize = 8;
/// Plain modulus of the BGV rescaling benchmarked by `mod_down_last`.
const PLAIN_MODULUS: u64 = 65537;

fn backend() -> CpuBackend {
    let threads = std::env::var("PIMHE_BENCH_THREADS")
        .ok()
        .map(|t| t.parse().expect("PIMHE_BENCH_THREADS must be a positive integer"));
    CpuBackend::new(threads).expect("the CPU backend starts")
}

/// `count` uniformly random polynomials (uniform residues are valid in either representation).
fn random(basis: &Arc<RingBasis>, count: usize, representation: Representation, sampler: &mut Sampler) -> PolyBatch {
    let len = count * basis.degree();
    let data = (0..basis.len()).flat_map(|limb| sampler.uniform_vec(basis.modulus(limb), len)).collect();
    PolyBatch::from_data(basis, count, representation, data).expect("reduced residues")
}

fn cpu_backend(c: &mut Criterion) {
    let backend = backend();
    let mut group = c.benchmark_group("cpu");
    for n in DEGREES {
        let primes = ntt_primes(PRIME_BITS, n, PRIMES, &[]).expect("enough primes");
        let special = ntt_primes(PRIME_BITS, n, 1, &primes).expect("a key-switching prime");
        let basis = RingBasis::new(n, &primes).expect("a basis");
        let special = RingBasis::new(n, &special).expect("a basis");
        let mut sampler = Sampler::from_seed_u64(42);
        let coefficients = random(&basis, BATCH, Representation::Coefficient, &mut sampler);
        let [x, y, z, w] = [(); 4].map(|_| random(&basis, BATCH, Representation::Ntt, &mut sampler));
        let [x, y, z, w] = [x, y, z, w].map(|b| backend.upload(b).expect("upload"));
        let coefficients = backend.upload(coefficients).expect("upload");
        let plain = Modulus::new(PLAIN_MODULUS).expect("a modulus");
        // Key switching of x with one digit per prime and the special prime: keys of one
        // polynomial per digit, as relinearization has.
        let extended = basis.concat(&special).expect("a basis");
        let x_extended = backend.upload(random(&extended, BATCH, Representation::Ntt, &mut sampler)).expect("upload");
        let digits: Vec<_> = (0..PRIMES).map(|limb| basis.select(&[limb]).expect("a digit")).collect();
        let mut key = || backend.upload(random(&extended, 1, Representation::Ntt, &mut sampler)).expect("upload");
        let keys: Vec<_> = (0..PRIMES).map(|_| (key(), key())).collect();
        let plan = KeySwitchPlan { digits: &digits, extended: &extended, plain_modulus: Some(plain) };

        group.throughput(Throughput::Elements((BATCH * n * PRIMES) as u64));
        for isa in Isa::ALL.into_iter().filter(|isa| isa.available()) {
            Isa::pin(isa).expect("an available instruction set");
            let id = |op: &str| BenchmarkId::new(op, format!("n={n}/primes={PRIMES}/batch={BATCH}/{isa}"));

            group.bench_function(id("ntt"), |b| {
                b.iter_batched_ref(
                    || backend.copy(&coefficients).expect("copy"),
                    |a| backend.ntt(black_box(a)).expect("ntt"),
                    BatchSize::LargeInput,
                )
            });
            group.bench_function(id("intt"), |b| {
                b.iter_batched_ref(
                    || backend.copy(&x).expect("copy"),
                    |a| backend.intt(black_box(a)).expect("intt"),
                    BatchSize::LargeInput,
                )
            });
            group.bench_function(id("add"), |b| b.iter(|| backend.add(black_box(&x), black_box(&y)).expect("add")));
            group.bench_function(id("sub"), |b| b.iter(|| backend.sub(black_box(&x), black_box(&y)).expect("sub")));
            group.bench_function(id("neg"), |b| b.iter(|| backend.neg(black_box(&x)).expect("neg")));
            group.bench_function(id("mul"), |b| b.iter(|| backend.mul(black_box(&x), black_box(&y)).expect("mul")));
            group.bench_function(id("mul_scalar"), |b| {
                b.iter(|| backend.mul_scalar(black_box(&x), 1 << 40).expect("mul_scalar"))
            });
            group.bench_function(id("sum"), |b| b.iter(|| backend.sum(black_box(&x)).expect("sum")));
            // A rotation's X -> X^5 in NTT form (a permutation) and in coefficient form (with
            // negations); the index tables are cached after the first call.
            group.bench_function(id("automorphism_ntt"), |b| {
                b.iter(|| backend.automorphism(black_box(&x), 5).expect("automorphism"))
            });
            group.bench_function(id("automorphism_coefficient"), |b| {
                b.iter(|| backend.automorphism(black_box(&coefficients), 5).expect("automorphism"))
            });
            group.bench_function(id("mac"), |b| {
                let mut acc = backend.copy(&z).expect("copy");
                b.iter(|| backend.mac(black_box(&mut acc), black_box(&x), black_box(&y)).expect("mac"))
            });
            group.bench_function(id("tensor"), |b| {
                b.iter(|| backend.tensor(black_box(&x), black_box(&y), black_box(&z), black_box(&w)).expect("tensor"))
            });
            group.bench_function(id("base_convert"), |b| {
                b.iter(|| backend.base_convert(black_box(&coefficients), &special).expect("base_convert"))
            });
            group.bench_function(id("mod_down_last"), |b| {
                b.iter(|| backend.mod_down_last(black_box(&x), Some(plain)).expect("mod_down_last"))
            });
            group.bench_function(id("mod_down"), |b| {
                b.iter(|| backend.mod_down(black_box(&x_extended), 1, Some(plain)).expect("mod_down"))
            });
            group.bench_function(id("key_switch"), |b| {
                b.iter(|| backend.key_switch(black_box(&x), &keys, &plan).expect("key_switch"))
            });
            // The same switch as batch-wide calls: what fusing it saves.
            group.bench_function(id("key_switch_composed"), |b| {
                b.iter(|| key_switch::composed(&backend, black_box(&x), &keys, &plan).expect("key_switch"))
            });
        }
    }
    Isa::pin(Isa::detected()).expect("the detected instruction set");
    group.finish();
}

/// Output sizes of `add_chain`, in MiB.
const CHAIN_MIB: [usize; 6] = [1, 2, 4, 8, 16, 32];

fn add_chain(c: &mut Criterion) {
    const N: usize = 16384;
    const LIMBS: usize = 8;
    let primes = ntt_primes(PRIME_BITS, N, LIMBS, &[]).expect("enough primes");
    let basis = RingBasis::new(N, &primes).expect("a basis");
    let mut sampler = Sampler::from_seed_u64(7);
    let stores = [
        ("streamed", backend().with_streaming_threshold(0)),
        ("cached", backend().with_streaming_threshold(usize::MAX)),
    ];
    let mut group = c.benchmark_group("cpu");
    for mib in CHAIN_MIB {
        let count = (mib << 20) / (4 * N * LIMBS);
        let [x, y] = [(); 2].map(|_| random(&basis, count, Representation::Ntt, &mut sampler));
        group.throughput(Throughput::Bytes(((3 * mib) << 20) as u64));
        for (name, backend) in &stores {
            group.bench_function(BenchmarkId::new("add_chain", format!("mib={mib}/{name}")), |b| {
                b.iter(|| {
                    let s = backend.add(black_box(&x), black_box(&y)).expect("add");
                    let u = backend.add(&s, &s).expect("add");
                    backend.add(&u, &x).expect("add")
                })
            });
        }
    }
    group.finish();
}

criterion_group! {
    name = benches;
    // Short runs: every operation on up to 3 instruction sets would take long at the defaults.
    config = Criterion::default().warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(2));
    targets = cpu_backend, add_chain
}
criterion_main!(benches);
