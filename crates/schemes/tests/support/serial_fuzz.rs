//! The mutation fuzzer of the serial loaders, shared by `tests/serial_fuzz.rs` (a short run) and
//! `examples/serial_fuzz.rs` (the long run): valid encodings of every object kind of every
//! scheme, mutated deterministically from a ChaCha20 seed (bit flips, byte overwrites,
//! truncations, insertions, length-field blasts, splices between objects), each fed to its
//! loader under `catch_unwind`, with the peak of live heap bytes during the load measured by a
//! counting global allocator.
//!
//! The bound checked: the peak allocation of one load is at most
//! `ALLOCATION_FACTOR * max(input length, legit) + ALLOCATION_SLACK`, where `legit` is the largest
//! valid encoding of that loader's kind in the context (a compressed encoding expands its seeds
//! to at most the size of the full object, and a plaintext or parameter set is decoded to a
//! size fixed by the context; the slack covers the error messages and fixed-size state).

use std::alloc::{GlobalAlloc, Layout, System};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use pimhe_exec::CpuBackend;
use pimhe_math::Sampler;
use pimhe_schemes::bfv::{BfvContext, BfvParameters};
use pimhe_schemes::bgv::{BgvContext, BgvParameters};
use pimhe_schemes::ckks::{CkksContext, CkksParameters, CkksPlaintext};
use pimhe_schemes::encoder::{BatchEncoder, Plaintext};
use pimhe_schemes::rlwe::{
    CiphertextBatch, Encryptor, Evaluator, GaloisKeys, KeyGenerator, PublicKey, RelinKey, SecretKey,
};
use pimhe_schemes::serial::{Bundle, SerialScheme, HEADER_LEN};

/// The factor of the allocation bound (see the module documentation).
pub const ALLOCATION_FACTOR: usize = 8;
/// The constant of the allocation bound: error messages and fixed-size state.
pub const ALLOCATION_SLACK: usize = 16 * 1024;

/// A global allocator over [`System`] that counts the live heap bytes and their peak.
pub struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grew(bytes: usize) {
    let live = LIVE.fetch_add(bytes, Ordering::Relaxed) + bytes;
    PEAK.fetch_max(live, Ordering::Relaxed);
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
        unsafe { System.dealloc(p, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    unsafe fn realloc(&self, p: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let q = unsafe { System.realloc(p, layout, new_size) };
        if !q.is_null() {
            // Counted as the new block allocated before the old one is freed, as a copy does.
            grew(new_size);
            LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        }
        q
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Runs `f` and returns its result and the peak of live heap bytes above those live before.
fn measured<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let base = LIVE.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let result = f();
    (result, PEAK.load(Ordering::Relaxed).saturating_sub(base))
}

/// A loader: `true` where the input loaded.
type Load = Box<dyn Fn(&[u8]) -> bool>;

/// One loader: its name, the valid encodings mutations start from, and the load itself
/// (`true` where the input loaded).
pub struct Target {
    pub name: String,
    pub valid: Vec<Vec<u8>>,
    load: Load,
}

impl Target {
    fn new(name: String, valid: Vec<Vec<u8>>, load: impl Fn(&[u8]) -> bool + 'static) -> Self {
        Self { name, valid, load: Box::new(load) }
    }

    /// The largest valid encoding: the context's largest legitimate object of this kind.
    fn legit(&self) -> usize {
        self.valid.iter().map(Vec::len).max().unwrap_or(0)
    }
}

/// What a scheme's targets need: plaintexts to encrypt, and Galois elements.
struct Scheme<S: SerialScheme> {
    ctx: Arc<S>,
    plains: Vec<S::Plaintext>,
    elements: Vec<usize>,
    params: Vec<u8>,
    load_params: fn(&[u8]) -> bool,
    plaintext_bytes: fn(&Arc<S>, &S::Plaintext) -> Vec<u8>,
    load_plaintext: fn(&Arc<S>, &[u8]) -> bool,
}

/// The seven loaders of one scheme, each with its valid encodings (full and compressed).
fn scheme_targets<S: SerialScheme>(scheme: Scheme<S>) -> Vec<Target> {
    let backend = Arc::new(CpuBackend::new(Some(1)).unwrap());
    let ctx = scheme.ctx.clone();
    let name = S::NAME;
    let mut keygen = KeyGenerator::with_sampler(&*backend, &ctx, Sampler::from_seed_u64(11));
    let secret = keygen.secret_key().unwrap();
    let public = keygen.public_key(&secret).unwrap();
    let relin = keygen.relin_key(&secret).unwrap();
    let galois = keygen.galois_keys(&secret, &scheme.elements).unwrap();
    // Seeded too, so that a run is reproducible from its seed alone.
    let mut encryptor =
        Encryptor::with_secret_key(&*backend, &secret).unwrap().with_sampler(Sampler::from_seed_u64(12));
    let one = encryptor.encrypt(&scheme.plains[..1]).unwrap();
    let two = encryptor.encrypt(&scheme.plains).unwrap();
    let product = Evaluator::new(&*backend, &ctx).multiply(&one, &one).unwrap();
    let ciphertexts = vec![
        one.to_bytes(&backend).unwrap(),
        two.to_bytes(&backend).unwrap(),
        product.to_bytes(&backend).unwrap(),
        encryptor.encrypt_seeded(&scheme.plains).unwrap().to_bytes(),
    ];
    let plaintexts = scheme.plains.iter().map(|p| (scheme.plaintext_bytes)(&ctx, p)).collect();
    let c = ctx.clone();
    let load_plaintext = scheme.load_plaintext;
    let b = backend.clone();
    vec![
        Target::new(format!("{name} parameters"), vec![scheme.params], scheme.load_params),
        Target::new(format!("{name} secret key"), vec![secret.to_bytes()], {
            let ctx = ctx.clone();
            move |bytes| SecretKey::from_bytes(&ctx, bytes).is_ok()
        }),
        Target::new(format!("{name} public key"), vec![public.to_bytes(), public.to_compressed_bytes().unwrap()], {
            let ctx = ctx.clone();
            move |bytes| PublicKey::from_bytes(&ctx, bytes).is_ok()
        }),
        Target::new(format!("{name} relin key"), vec![relin.to_bytes(), relin.to_compressed_bytes().unwrap()], {
            let ctx = ctx.clone();
            move |bytes| RelinKey::from_bytes(&ctx, bytes).is_ok()
        }),
        Target::new(format!("{name} Galois keys"), vec![galois.to_bytes(), galois.to_compressed_bytes().unwrap()], {
            let ctx = ctx.clone();
            move |bytes| GaloisKeys::from_bytes(&ctx, bytes).is_ok()
        }),
        Target::new(format!("{name} plaintext"), plaintexts, move |bytes| load_plaintext(&c, bytes)),
        Target::new(format!("{name} ciphertext"), ciphertexts, move |bytes| {
            CiphertextBatch::<CpuBackend, S>::from_bytes(&b, &ctx, bytes).is_ok()
        }),
    ]
}

/// Every loader of every scheme, at N = 1024 with key switching (insecure: small and fast).
pub fn targets() -> Vec<Target> {
    let bgv = BgvParameters::new(1024, 12289, &[27; 2], Some(27)).unwrap().allow_insecure();
    let bgv_ctx = BgvContext::new(bgv.clone()).unwrap();
    let values = |k: i64| (0..64).map(|i| (i * 7 + k) % 100 - 50).collect::<Vec<i64>>();
    let integer_plains = |encoder: BatchEncoder| {
        vec![encoder.encode_signed(&values(1)).unwrap(), encoder.encode_signed(&values(2)).unwrap()]
    };
    let bfv = BfvParameters::from(bgv.clone());
    let bfv_ctx = BfvContext::new(bfv.clone()).unwrap();
    let ckks = CkksParameters::builder(1024).depth(1).scale_bits(25).allow_insecure().build().unwrap();
    let ckks_ctx = CkksContext::new(ckks.clone()).unwrap();
    let encoder = pimhe_schemes::ckks::Encoder::new(&ckks_ctx);
    let reals = |k: i64| values(k).into_iter().map(|x| x as f64 / 7.0).collect::<Vec<f64>>();
    let ckks_plains = vec![
        encoder.encode_real(&reals(1), ckks_ctx.default_scale()).unwrap(),
        encoder.encode_real(&reals(2), ckks_ctx.default_scale()).unwrap(),
    ];
    let ckks_elements = vec![ckks_ctx.rotation_element(1), ckks_ctx.conjugation_element()];
    let mut all = scheme_targets(Scheme {
        plains: integer_plains(BatchEncoder::new(&bgv_ctx)),
        ctx: bgv_ctx,
        elements: vec![3, 2047],
        params: bgv.to_bytes(),
        load_params: |bytes| BgvParameters::from_bytes(bytes).is_ok(),
        plaintext_bytes: |ctx, p| p.to_bytes(ctx).unwrap(),
        load_plaintext: |ctx, bytes| Plaintext::from_bytes(ctx, bytes).is_ok(),
    });
    all.extend(scheme_targets(Scheme {
        plains: integer_plains(BatchEncoder::new(&bfv_ctx)),
        ctx: bfv_ctx,
        elements: vec![3, 2047],
        params: bfv.to_bytes(),
        load_params: |bytes| BfvParameters::from_bytes(bytes).is_ok(),
        plaintext_bytes: |ctx, p| p.to_bytes(ctx).unwrap(),
        load_plaintext: |ctx, bytes| Plaintext::from_bytes(ctx, bytes).is_ok(),
    }));
    all.extend(scheme_targets(Scheme {
        ctx: ckks_ctx,
        plains: ckks_plains,
        elements: ckks_elements,
        params: ckks.to_bytes(),
        load_params: |bytes| CkksParameters::from_bytes(bytes).is_ok(),
        plaintext_bytes: |ctx, p| p.to_bytes(ctx).unwrap(),
        load_plaintext: |ctx, bytes| CkksPlaintext::from_bytes(ctx, bytes).is_ok(),
    }));
    // The bundle framing, over bundles of real encodings (their entries' own loaders are the
    // targets above).
    let bundles = [vec![], all[0].valid.clone(), all[2].valid.clone()]
        .into_iter()
        .map(|entries| {
            let mut bundle = Bundle::new();
            for (i, bytes) in entries.into_iter().enumerate() {
                bundle.push(format!("entry/{i}"), bytes).unwrap();
            }
            bundle.to_bytes()
        })
        .collect();
    all.push(Target::new("bundle".into(), bundles, |bytes| Bundle::from_bytes(bytes).is_ok()));
    all
}

/// A uniform integer in [0, bound), bound >= 1 (the tiny modulo bias does not matter here).
fn below(rng: &mut Sampler, bound: usize) -> usize {
    (rng.next_u64() % bound.max(1) as u64) as usize
}

/// Values that stress length and count fields.
const BLASTS: [u32; 9] = [0, 1, 2, 3, 0x7f, 0xffff, 0x4000_0000, 0x8000_0000, u32::MAX];

/// One to four stacked mutations of `input`; `pool` is every valid encoding (for splices).
fn mutate(rng: &mut Sampler, input: &[u8], pool: &[&[u8]]) -> Vec<u8> {
    let mut bytes = input.to_vec();
    for _ in 0..1 + below(rng, 4) {
        let len = bytes.len();
        // Half of the positions fall in the header and the fields right after it, where the
        // counts and shapes live; the rest anywhere.
        let position =
            if rng.next_u32() & 1 == 0 { below(rng, (HEADER_LEN + 24).min(len + 1)) } else { below(rng, len + 1) };
        match below(rng, 7) {
            0 if len > 0 => {
                let bit = below(rng, 8 * len);
                bytes[bit / 8] ^= 1 << (bit % 8);
            }
            1 if position < len => bytes[position] = [0, 0xff, 0x7f, 0x80, rng.next_u32() as u8][below(rng, 5)],
            2 => bytes.truncate(below(rng, len + 1)),
            3 => {
                let insert: Vec<u8> = (0..1 + below(rng, 16)).map(|_| rng.next_u32() as u8).collect();
                bytes.splice(position..position, insert);
            }
            4 if position + 4 <= len => {
                let value = BLASTS[below(rng, BLASTS.len())];
                bytes[position..position + 4].copy_from_slice(&value.to_le_bytes());
            }
            5 if position + 2 <= len => {
                let value = BLASTS[below(rng, BLASTS.len())] as u16;
                bytes[position..position + 2].copy_from_slice(&value.to_le_bytes());
            }
            _ => {
                // A splice: this input's prefix, another valid object's suffix.
                let other = pool[below(rng, pool.len())];
                let from = below(rng, other.len() + 1);
                bytes.truncate(position.min(bytes.len()));
                bytes.extend_from_slice(&other[from..]);
            }
        }
    }
    bytes
}

/// What a run over one loader found.
pub struct Report {
    pub name: String,
    pub inputs: usize,
    pub loaded: usize,
    pub panics: usize,
    /// The first panic's input length and message.
    pub first_panic: Option<String>,
    /// The largest peak / max(input length, legit) seen.
    pub worst_ratio: f64,
    /// The largest peak allocation of one load, in bytes.
    pub worst_peak: usize,
    pub legit: usize,
    pub violations: usize,
    pub wall: Duration,
}

/// Feeds `inputs` inputs to `target`'s loader: its valid encodings first, then mutations from a
/// ChaCha20 stream seeded by `seed` and the target's name.
pub fn run(target: &Target, pool: &[&[u8]], inputs: usize, seed: u64) -> Report {
    let tag = target.name.bytes().fold(seed, |h, b| h.wrapping_mul(0x100000001b3).wrapping_add(u64::from(b)));
    let mut rng = Sampler::from_seed_u64(tag);
    let legit = target.legit();
    let mut report = Report {
        name: target.name.clone(),
        inputs,
        loaded: 0,
        panics: 0,
        first_panic: None,
        worst_ratio: 0.0,
        worst_peak: 0,
        legit,
        violations: 0,
        wall: Duration::ZERO,
    };
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let start = Instant::now();
    for i in 0..inputs {
        let input = match target.valid.get(i) {
            Some(valid) => valid.clone(),
            None => {
                let start = below(&mut rng, target.valid.len());
                mutate(&mut rng, &target.valid[start], pool)
            }
        };
        let (outcome, peak) = measured(|| catch_unwind(AssertUnwindSafe(|| (target.load)(&input))));
        match outcome {
            Ok(loaded) => report.loaded += usize::from(loaded),
            Err(panic) => {
                report.panics += 1;
                if report.first_panic.is_none() {
                    let message = panic
                        .downcast_ref::<String>()
                        .cloned()
                        .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                        .unwrap_or_default();
                    report.first_panic = Some(format!("input of {} bytes: {message}", input.len()));
                }
            }
        }
        let scale = input.len().max(legit);
        report.worst_ratio = report.worst_ratio.max(peak as f64 / scale as f64);
        report.worst_peak = report.worst_peak.max(peak);
        if peak > ALLOCATION_FACTOR * scale + ALLOCATION_SLACK {
            report.violations += 1;
        }
    }
    report.wall = start.elapsed();
    std::panic::set_hook(hook);
    report
}

/// Runs every target; `only` keeps those whose name contains it.
pub fn run_all(inputs: usize, seed: u64, only: Option<&str>) -> Vec<Report> {
    let targets = targets();
    let pool: Vec<&[u8]> = targets.iter().flat_map(|t| t.valid.iter().map(Vec::as_slice)).collect();
    targets.iter().filter(|t| only.is_none_or(|o| t.name.contains(o))).map(|t| run(t, &pool, inputs, seed)).collect()
}

/// The reports as a Markdown table.
pub fn table(reports: &[Report]) -> String {
    let mut out = String::from(
        "| loader | inputs | loaded | panics | bound violations | largest valid (bytes) | worst peak (bytes) | worst peak / max(input, valid) | wall (s) |\n|---|---|---|---|---|---|---|---|---|\n",
    );
    for r in reports {
        out += &format!(
            "| {} | {} | {} | {} | {} | {} | {} | {:.2} | {:.1} |\n",
            r.name,
            r.inputs,
            r.loaded,
            r.panics,
            r.violations,
            r.legit,
            r.worst_peak,
            r.worst_ratio,
            r.wall.as_secs_f64()
        );
    }
    out
}
