//! The binary encodings of every object of every scheme: round trips through bytes and files,
//! loaded objects checked against the originals (decryption with the plaintext as oracle,
//! loaded keys relinearizing and rotating bit for bit as the generated ones), compressed forms,
//! sizes against the packed size of the residues, and malformed input refused without panics.

use std::sync::Arc;

use num_complex::Complex64;
use pimhe_exec::CpuBackend;
use pimhe_math::Sampler;
use pimhe_schemes::bfv::{BfvContext, BfvParameters};
use pimhe_schemes::bgv::{BgvContext, BgvParameters};
use pimhe_schemes::ckks::{CkksContext, CkksParameters, CkksPlaintext};
use pimhe_schemes::encoder::{BatchEncoder, Plaintext};
use pimhe_schemes::rlwe::{
    CiphertextBatch, Decryptor, Encryptor, Evaluator, GaloisKeys, KeyGenerator, PublicKey, RelinKey, SecretKey,
};
use pimhe_schemes::serial::{self, SerialScheme, HEADER_LEN};
use pimhe_schemes::SchemeError;

/// What the generic round trip needs of a scheme: plaintexts from values, and values back.
struct Case<S: SerialScheme> {
    ctx: Arc<S>,
    encode: fn(&Arc<S>, &[f64]) -> S::Plaintext,
    decode: fn(&Arc<S>, &S::Plaintext) -> Vec<f64>,
    /// Largest distance allowed between a decoded value and the expected one.
    tolerance: f64,
    /// A Galois element to make a key for.
    element: usize,
}

fn bgv() -> Case<BgvContext> {
    let params = BgvParameters::new(2048, 12289, &[30; 3], Some(30)).unwrap().allow_insecure();
    Case {
        ctx: BgvContext::new(BgvParameters::from_bytes(&params.to_bytes()).unwrap()).unwrap(),
        encode: |ctx, v| {
            BatchEncoder::new(ctx).encode_signed(&v.iter().map(|&x| x as i64).collect::<Vec<_>>()).unwrap()
        },
        decode: |ctx, p| BatchEncoder::new(ctx).decode_signed(p).unwrap().into_iter().map(|x| x as f64).collect(),
        tolerance: 0.0,
        element: 3,
    }
}

fn bfv() -> Case<BfvContext> {
    let params = BfvParameters::new(2048, 12289, &[30; 3], Some(30)).unwrap().allow_insecure();
    Case {
        ctx: BfvContext::new(BfvParameters::from_bytes(&params.to_bytes()).unwrap()).unwrap(),
        encode: |ctx, v| {
            BatchEncoder::new(ctx).encode_signed(&v.iter().map(|&x| x as i64).collect::<Vec<_>>()).unwrap()
        },
        decode: |ctx, p| BatchEncoder::new(ctx).decode_signed(p).unwrap().into_iter().map(|x| x as f64).collect(),
        tolerance: 0.0,
        element: 3,
    }
}

fn ckks() -> Case<CkksContext> {
    let params = CkksParameters::builder(2048).depth(2).scale_bits(25).allow_insecure().build().unwrap();
    let ctx = CkksContext::new(CkksParameters::from_bytes(&params.to_bytes()).unwrap()).unwrap();
    let element = ctx.rotation_element(1);
    Case {
        ctx,
        encode: |ctx, v| pimhe_schemes::ckks::Encoder::new(ctx).encode_real(v, ctx.default_scale()).unwrap(),
        decode: |ctx, p| pimhe_schemes::ckks::Encoder::new(ctx).decode_real(p).unwrap(),
        tolerance: 1e-2,
        element,
    }
}

fn backend() -> CpuBackend {
    CpuBackend::new(Some(2)).unwrap()
}

/// A file in the temporary directory, unique to this process and `name`, removed when dropped.
struct TempFile(std::path::PathBuf);

impl TempFile {
    fn new(name: &str) -> Self {
        Self(std::env::temp_dir().join(format!("pimhe-serial-{}-{name}", std::process::id())))
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Writes `bytes` to a file and reads them back.
fn through_file(name: &str, bytes: &[u8]) -> Vec<u8> {
    let file = TempFile::new(name);
    serial::save(&file.0, bytes).unwrap();
    serial::load(&file.0).unwrap().to_vec()
}

fn assert_close(got: &[f64], expected: &[f64], tolerance: f64, what: &str) {
    for (i, (g, e)) in got.iter().zip(expected).enumerate() {
        assert!((g - e).abs() <= tolerance, "{what}: slot {i} is {g}, expected {e}");
    }
}

/// Every object of a scheme through bytes and files, the loaded ones used.
fn round_trip_every_object<S: SerialScheme>(case: Case<S>) {
    let backend = backend();
    let ctx = &case.ctx;
    let name = S::NAME;
    let mut keygen = KeyGenerator::with_sampler(&backend, ctx, Sampler::from_seed_u64(1));
    let secret = keygen.secret_key().unwrap();
    let public = keygen.public_key(&secret).unwrap();
    let relin = keygen.relin_key(&secret).unwrap();
    let galois = keygen.galois_keys(&secret, &[case.element, 2 * ctx.rlwe().degree() - 1]).unwrap();

    // Keys: the full encoding re-encodes to itself; the compressed one loads to the same key
    // (its full encoding is the original's) at about half the size.
    let sk_bytes = through_file(&format!("{name}.sk"), &secret.to_bytes());
    let loaded_secret = SecretKey::from_bytes(ctx, &sk_bytes).unwrap();
    assert_eq!(loaded_secret.to_bytes(), sk_bytes);
    let full = public.to_bytes();
    let compressed = public.to_compressed_bytes().unwrap();
    let loaded_public = PublicKey::from_bytes(ctx, &through_file(&format!("{name}.pk"), &compressed)).unwrap();
    assert_eq!(loaded_public.to_bytes(), full);
    assert_eq!(loaded_public.to_compressed_bytes().unwrap(), compressed);
    assert_eq!(PublicKey::from_bytes(ctx, &full).unwrap().to_bytes(), full);
    assert!(compressed.len() * 100 < full.len() * 52, "{name} public key: {} vs {}", compressed.len(), full.len());
    let err = PublicKey::from_bytes(ctx, &full).unwrap().to_compressed_bytes().unwrap_err();
    assert!(err.to_string().contains("has no seeds"), "{err}");

    let full = relin.to_bytes();
    let compressed = relin.to_compressed_bytes().unwrap();
    let loaded_relin = RelinKey::from_bytes(ctx, &through_file(&format!("{name}.rk"), &compressed)).unwrap();
    assert_eq!(loaded_relin.to_bytes(), full);
    assert_eq!(RelinKey::from_bytes(ctx, &full).unwrap().to_bytes(), full);
    assert!(compressed.len() * 100 < full.len() * 52, "{name} relin key: {} vs {}", compressed.len(), full.len());

    let full = galois.to_bytes();
    let compressed = galois.to_compressed_bytes().unwrap();
    let loaded_galois = GaloisKeys::from_bytes(ctx, &through_file(&format!("{name}.gk"), &compressed)).unwrap();
    assert_eq!(loaded_galois.to_bytes(), full);
    assert_eq!(loaded_galois.elements().collect::<Vec<_>>(), galois.elements().collect::<Vec<_>>());
    assert_eq!(GaloisKeys::from_bytes(ctx, &full).unwrap().to_bytes(), full);
    assert!(compressed.len() * 100 < full.len() * 52, "{name} Galois keys: {} vs {}", compressed.len(), full.len());

    // Ciphertexts: encrypted with the loaded public key, written, loaded, decrypted with the
    // loaded secret key.
    let values: Vec<Vec<f64>> =
        (0..2).map(|k| (0..16).map(|i| ((i * 7 + k * 5) % 31) as f64 - 15.0).collect()).collect();
    let plains: Vec<S::Plaintext> = values.iter().map(|v| (case.encode)(ctx, v)).collect();
    let decryptor = Decryptor::new(&backend, &loaded_secret).unwrap();
    let check = |batch: &CiphertextBatch<CpuBackend, S>, expected: &[Vec<f64>], what: &str| {
        let decrypted = decryptor.decrypt(batch).unwrap();
        assert_eq!(decrypted.len(), expected.len(), "{name} {what}");
        for (plain, values) in decrypted.iter().zip(expected) {
            assert_close(&(case.decode)(ctx, plain)[..values.len()], values, case.tolerance, &format!("{name} {what}"));
        }
    };
    let mut encryptor = Encryptor::with_public_key(&backend, &loaded_public).unwrap();
    let batch = encryptor.encrypt(&plains).unwrap();
    let bytes = batch.to_bytes(&backend).unwrap();
    let loaded = CiphertextBatch::from_bytes(&backend, ctx, &through_file(&format!("{name}.ct"), &bytes)).unwrap();
    assert_eq!((loaded.count(), loaded.level(), loaded.size()), (2, batch.level(), 2));
    assert_eq!(loaded.tag(), batch.tag());
    assert_eq!(loaded.to_bytes(&backend).unwrap(), bytes);
    check(&loaded, &values, "public-key ciphertexts");
    let err = encryptor.encrypt_seeded(&plains).err().unwrap();
    assert!(err.to_string().contains("needs the secret key"), "{err}");

    // Seeded ciphertexts from the loaded secret key: half the size, the same decryption.
    let mut encryptor = Encryptor::with_secret_key(&backend, &loaded_secret).unwrap();
    let seeded = encryptor.encrypt_seeded(&plains).unwrap();
    let compressed = seeded.to_bytes();
    let loaded = CiphertextBatch::from_bytes(&backend, ctx, &compressed).unwrap();
    let full = loaded.to_bytes(&backend).unwrap();
    assert_eq!(seeded.expand(&backend).unwrap().to_bytes(&backend).unwrap(), full);
    assert!(compressed.len() * 100 < full.len() * 52, "{name} seeded: {} vs {}", compressed.len(), full.len());
    check(&loaded, &values, "seeded ciphertexts");

    // The loaded relinearization and Galois keys give bit for bit what the generated ones give;
    // a 3-component product round-trips too.
    let evaluator = |relin: &RelinKey<S>, galois: &GaloisKeys<S>| {
        Evaluator::new(&backend, ctx).with_relin_key(relin).unwrap().with_galois_keys(galois).unwrap()
    };
    let (generated, loaded_keys) = (evaluator(&relin, &galois), evaluator(&loaded_relin, &loaded_galois));
    let product = generated.multiply(&loaded, &loaded).unwrap();
    assert_eq!(product.size(), 3);
    let product_bytes = product.to_bytes(&backend).unwrap();
    let product = CiphertextBatch::from_bytes(&backend, ctx, &product_bytes).unwrap();
    assert_eq!(product.to_bytes(&backend).unwrap(), product_bytes);
    let squares: Vec<Vec<f64>> = values.iter().map(|v| v.iter().map(|x| x * x).collect()).collect();
    check(&product, &squares, "3-component product");
    let relinearized = loaded_keys.relinearize(&product).unwrap();
    assert_eq!(
        relinearized.to_bytes(&backend).unwrap(),
        generated.relinearize(&product).unwrap().to_bytes(&backend).unwrap()
    );
    check(&relinearized, &squares, "relinearized with a loaded key");
    let rotated = loaded_keys.automorphism(&loaded, case.element).unwrap();
    assert_eq!(
        rotated.to_bytes(&backend).unwrap(),
        generated.automorphism(&loaded, case.element).unwrap().to_bytes(&backend).unwrap()
    );
}

#[test]
fn bgv_objects_round_trip() {
    round_trip_every_object(bgv());
}

#[test]
fn bfv_objects_round_trip() {
    round_trip_every_object(bfv());
}

#[test]
fn ckks_objects_round_trip() {
    round_trip_every_object(ckks());
}

#[test]
fn parameters_round_trip_with_their_flags_and_secret() {
    for params in BgvParameters::presets() {
        assert_eq!(BgvParameters::from_bytes(&params.to_bytes()).unwrap(), params);
        let insecure = params.clone().allow_insecure();
        assert_eq!(BgvParameters::from_bytes(&insecure.to_bytes()).unwrap(), insecure);
        assert_ne!(insecure.to_bytes(), params.to_bytes());
    }
    for params in BfvParameters::presets() {
        let bytes = through_file("bfv.params", &params.to_bytes());
        assert_eq!(BfvParameters::from_bytes(&bytes).unwrap(), params);
        // A BFV set is not a BGV set, though the fields are the same.
        let err = BgvParameters::from_bytes(&bytes).unwrap_err().to_string();
        assert!(err.contains("is for bfv"), "{err}");
    }
    let sparse = pimhe_schemes::rlwe::SecretDistribution::SparseTernary { hamming_weight: 64 };
    for params in CkksParameters::presets().into_iter().chain([CkksParameters::builder(1024)
        .depth(3)
        .scale_bits(40)
        .secret(sparse)
        .dnum(2)
        .allow_insecure()
        .build()
        .unwrap()])
    {
        let loaded = CkksParameters::from_bytes(&params.to_bytes()).unwrap();
        assert_eq!(loaded, params);
        assert_eq!(loaded.rlwe().secret(), params.rlwe().secret());
    }
}

#[test]
fn parameters_read_from_json_configurations_are_validated() {
    let bgv = BgvParameters::preset(4096).unwrap();
    let json = serde_json::to_string(&bgv).unwrap();
    assert!(json.contains("\"plain_modulus\":65537") && json.contains("\"secret\":\"ternary\""), "{json}");
    assert_eq!(serde_json::from_str::<BgvParameters>(&json).unwrap(), bgv);
    let bfv = BfvParameters::from(bgv.clone().allow_insecure());
    assert_eq!(serde_json::from_str::<BfvParameters>(&serde_json::to_string(&bfv).unwrap()).unwrap(), bfv);
    let sparse = pimhe_schemes::rlwe::SecretDistribution::SparseTernary { hamming_weight: 32 };
    let ckks = CkksParameters::builder(2048).depth(2).scale_bits(25).secret(sparse).allow_insecure().build().unwrap();
    let json = serde_json::to_string(&ckks).unwrap();
    assert!(json.contains("{\"sparse_ternary\":{\"hamming_weight\":32}}"), "{json}");
    assert_eq!(serde_json::from_str::<CkksParameters>(&json).unwrap(), ckks);
    // A configuration that names a non-prime t, or an insecure chain without the flag, is
    // refused with the validation's message.
    let bad = json_with(&bgv, "\"plain_modulus\":65537", "\"plain_modulus\":65536");
    let err = serde_json::from_str::<BgvParameters>(&bad).unwrap_err().to_string();
    assert!(err.contains("plaintext modulus 65536 must be a prime"), "{err}");
    let insecure = BgvParameters::new(4096, 65537, &[30; 5], Some(30)).unwrap().allow_insecure();
    let bad = json_with(&insecure, "\"allow_insecure\":true", "\"allow_insecure\":false");
    assert!(serde_json::from_str::<BgvParameters>(&bad).unwrap_err().to_string().contains("insecure parameters"));
}

fn json_with(params: &BgvParameters, from: &str, to: &str) -> String {
    let json = serde_json::to_string(params).unwrap();
    assert!(json.contains(from), "{json}");
    json.replace(from, to)
}

#[test]
fn plaintexts_round_trip() {
    let case = bgv();
    let plain: Plaintext = (case.encode)(&case.ctx, &[1.0, -2.0, 3.0]);
    let bytes = through_file("bgv.pt", &plain.to_bytes(&case.ctx).unwrap());
    assert_eq!(Plaintext::from_bytes(&case.ctx, &bytes).unwrap(), plain);
    // The same plaintext belongs to a BFV context of the same N and t, but its encoding names
    // BGV.
    let bfv = bfv();
    assert!(Plaintext::from_bytes(&bfv.ctx, &bytes).is_err());
    let again = plain.to_bytes(&bfv.ctx).unwrap();
    assert_eq!(Plaintext::from_bytes(&bfv.ctx, &again).unwrap(), plain);

    let case = ckks();
    let encoder = pimhe_schemes::ckks::Encoder::new(&case.ctx);
    let values = [Complex64::new(1.5, -2.0), Complex64::new(-1e6, 3.25)];
    for plain in [
        encoder.encode(&values, case.ctx.default_scale()).unwrap(),
        encoder.encode_sparse(&values, 4, 2f64.powi(80)).unwrap(),
        encoder.encode(&[], CkksParameters::MIN_SCALE).unwrap(),
    ] {
        let bytes = plain.to_bytes(&case.ctx).unwrap();
        assert_eq!(CkksPlaintext::from_bytes(&case.ctx, &bytes).unwrap(), plain);
    }
}

/// The packed size of `count` ciphertexts of `size` components at `level`: every residue at
/// its prime's bit width, computed from the primes alone.
fn packed_size(primes: &[u32], n: usize, count: usize, size: usize) -> usize {
    let bits: usize = primes.iter().map(|&q| (32 - q.leading_zeros()) as usize).sum();
    size * count * n * bits / 8
}

#[test]
fn full_ciphertexts_are_within_five_percent_of_their_packed_residues() {
    let backend = backend();
    for n in [1024, 4096, 8192] {
        let ctx = BgvContext::new(BgvParameters::preset(n).unwrap()).unwrap();
        let mut keygen = KeyGenerator::with_sampler(&backend, &ctx, Sampler::from_seed_u64(2));
        let secret = keygen.secret_key().unwrap();
        let plain = BatchEncoder::new(&ctx).encode(&[1, 2, 3]).unwrap();
        let mut encryptor = Encryptor::with_secret_key(&backend, &secret).unwrap();
        for count in [1, 3] {
            let batch = encryptor.encrypt(&vec![plain.clone(); count]).unwrap();
            let bytes = batch.to_bytes(&backend).unwrap();
            let packed = packed_size(ctx.params().data_primes(), n, count, 2);
            assert!(bytes.len() as f64 <= 1.05 * packed as f64, "N = {n}: {} bytes for {packed}", bytes.len());
        }
    }
}

/// The sizes docs/SERIALIZATION.md reports, at the N = 8192 BGV preset (run with --nocapture to
/// see them).
#[test]
fn sizes_at_the_8192_preset() {
    let backend = backend();
    let ctx = BgvContext::new(BgvParameters::preset(8192).unwrap()).unwrap();
    let params = ctx.params();
    let n = 8192;
    let mut keygen = KeyGenerator::with_sampler(&backend, &ctx, Sampler::from_seed_u64(3));
    let secret = keygen.secret_key().unwrap();
    let public = keygen.public_key(&secret).unwrap();
    let relin = keygen.relin_key(&secret).unwrap();
    let galois = keygen.galois_keys(&secret, &[3]).unwrap();
    let plain = BatchEncoder::new(&ctx).encode(&[1, 2, 3]).unwrap();
    let mut encryptor = Encryptor::with_secret_key(&backend, &secret).unwrap();
    let seeded = encryptor.encrypt_seeded(std::slice::from_ref(&plain)).unwrap().to_bytes();
    let full = encryptor.encrypt(&[plain]).unwrap().to_bytes(&backend).unwrap();
    let data = params.data_primes();
    let all = params.primes();
    let rows = [
        ("ciphertext", full.len(), seeded.len(), packed_size(data, n, 1, 2)),
        (
            "public key",
            public.to_bytes().len(),
            public.to_compressed_bytes().unwrap().len(),
            packed_size(data, n, 1, 2),
        ),
        (
            "relin key",
            relin.to_bytes().len(),
            relin.to_compressed_bytes().unwrap().len(),
            packed_size(&all, n, params.dnum(), 2),
        ),
        (
            "Galois key (1)",
            galois.to_bytes().len(),
            galois.to_compressed_bytes().unwrap().len(),
            packed_size(&all, n, params.dnum(), 2),
        ),
        ("secret key", secret.to_bytes().len(), secret.to_bytes().len(), packed_size(&all, n, 1, 1)),
    ];
    eprintln!(
        "| object | full (bytes) | compressed (bytes) | packed residues (bytes) | full / packed | compressed / full |"
    );
    for (what, full, compressed, packed) in rows {
        let (ratio, saving) = (full as f64 / packed as f64, compressed as f64 / full as f64);
        eprintln!("| {what} | {full} | {compressed} | {packed} | {ratio:.4} | {saving:.3} |");
        assert!(ratio <= 1.05, "{what}");
        if what != "secret key" {
            assert!(saving < 0.52, "{what}");
        }
    }
}

/// A small BGV setting for malformed input: N = 1024, one prime, so every prefix and every bit
/// can be tried.
struct Small {
    backend: CpuBackend,
    ctx: Arc<BgvContext>,
    params: Vec<u8>,
    secret: Vec<u8>,
    plaintext: Vec<u8>,
    ciphertext: Vec<u8>,
}

fn small() -> Small {
    let backend = backend();
    let params = BgvParameters::preset(1024).unwrap();
    let ctx = BgvContext::new(params.clone()).unwrap();
    let mut keygen = KeyGenerator::with_sampler(&backend, &ctx, Sampler::from_seed_u64(4));
    let secret = keygen.secret_key().unwrap();
    let plain = BatchEncoder::new(&ctx).encode(&[5, 6, 7]).unwrap();
    let batch = Encryptor::with_secret_key(&backend, &secret).unwrap().encrypt(std::slice::from_ref(&plain)).unwrap();
    let ciphertext = batch.to_bytes(&backend).unwrap();
    Small {
        params: params.to_bytes(),
        secret: secret.to_bytes(),
        plaintext: plain.to_bytes(&ctx).unwrap(),
        ciphertext,
        backend,
        ctx,
    }
}

impl Small {
    /// Tries every loader on `bytes`, each as the kind it is: `true` where it loaded. A panic
    /// fails the test.
    fn loads(&self, kind: usize, bytes: &[u8]) -> bool {
        match kind {
            0 => BgvParameters::from_bytes(bytes).is_ok(),
            1 => SecretKey::<BgvContext>::from_bytes(&self.ctx, bytes).is_ok(),
            2 => Plaintext::from_bytes(&self.ctx, bytes).is_ok(),
            _ => CiphertextBatch::<CpuBackend, BgvContext>::from_bytes(&self.backend, &self.ctx, bytes).is_ok(),
        }
    }

    fn objects(&self) -> [&[u8]; 4] {
        [&self.params, &self.secret, &self.plaintext, &self.ciphertext]
    }
}

#[test]
fn every_truncation_is_refused() {
    let small = small();
    for (kind, bytes) in small.objects().into_iter().enumerate() {
        assert!(small.loads(kind, bytes));
        for len in 0..bytes.len() {
            assert!(!small.loads(kind, &bytes[..len]), "kind {kind}: a prefix of {len} bytes loaded");
        }
        let mut longer = bytes.to_vec();
        longer.push(0);
        assert!(!small.loads(kind, &longer), "kind {kind}: a trailing byte was accepted");
    }
}

#[test]
fn every_bit_flip_is_refused_or_loads_without_panicking() {
    let small = small();
    for (kind, bytes) in small.objects().into_iter().enumerate() {
        let mut loaded = 0;
        for bit in 0..8 * bytes.len() {
            let mut flipped = bytes.to_vec();
            flipped[bit / 8] ^= 1 << (bit % 8);
            let ok = small.loads(kind, &flipped);
            // The header (and a parameter set's digest of itself) catches every flip there.
            assert!(!(ok && (bit < 8 * HEADER_LEN || kind == 0)), "kind {kind}: bit {bit} flipped loaded");
            loaded += usize::from(ok);
        }
        // Payload flips that keep a residue below its prime load as another object.
        assert!(kind == 0 || loaded > 0, "kind {kind}: no payload flip loaded");
    }
}

fn format_error(result: Result<impl Sized, SchemeError>) -> String {
    match result {
        Err(SchemeError::Format(message)) => message,
        Err(other) => panic!("expected a format error, got {other}"),
        Ok(_) => panic!("expected a format error, it loaded"),
    }
}

#[test]
fn malformed_headers_and_fields_are_refused_with_what_is_wrong() {
    let small = small();
    let load = |bytes: &[u8]| CiphertextBatch::<CpuBackend, BgvContext>::from_bytes(&small.backend, &small.ctx, bytes);
    let with = |offset: usize, replacement: &[u8]| {
        let mut bytes = small.ciphertext.clone();
        bytes[offset..offset + replacement.len()].copy_from_slice(replacement);
        bytes
    };
    assert!(format_error(load(&with(0, b"SEAL!"))).contains("not a pimhe encoding"));
    assert!(format_error(load(&with(5, &2u16.to_le_bytes()))).contains("version 2 is not supported"));
    assert!(format_error(load(&with(7, &[3]))).contains("expected a ciphertext batch, found public key"));
    assert!(format_error(load(&with(8, &[3]))).contains("is for ckks"));
    assert!(format_error(load(&with(9, &[2]))).contains("flags 0x02"));
    // The shape: level, count, size, correction factor.
    assert!(format_error(load(&with(HEADER_LEN, &1u16.to_le_bytes()))).contains("level 1 does not exist"));
    assert!(format_error(load(&with(HEADER_LEN + 2, &0u32.to_le_bytes()))).contains("allowed 1..="));
    assert!(format_error(load(&with(HEADER_LEN + 6, &[4]))).contains("4 components"));
    assert!(format_error(load(&with(HEADER_LEN + 7, &12289u32.to_le_bytes()))).contains("allowed 1..12289"));
    // A count claiming 2^32 - 1 ciphertexts (gigabytes of residues) is refused before anything
    // is allocated for them.
    let err = format_error(load(&with(HEADER_LEN + 2, &u32::MAX.to_le_bytes())));
    assert!(err.contains("truncated") && err.contains("4294967295 polynomial(s)"), "{err}");
    // A residue equal to its prime: the first residue of component 0 (27 bits, LSB first).
    let q = small.ctx.params().data_primes()[0];
    let start = HEADER_LEN + 11;
    let mut bytes = small.ciphertext.clone();
    let word = u32::from_le_bytes(bytes[start..start + 4].try_into().unwrap());
    bytes[start..start + 4].copy_from_slice(&((word & !((1 << 27) - 1)) | q).to_le_bytes());
    let err = format_error(load(&bytes));
    assert!(err.contains(&format!("residue 0 of limb 0 is {q}, not below its prime {q}")), "{err}");

    // Other parameters: the digest names them.
    let other = BgvContext::new(BgvParameters::preset(2048).unwrap()).unwrap();
    match CiphertextBatch::<CpuBackend, BgvContext>::from_bytes(&small.backend, &other, &small.ciphertext) {
        Err(SchemeError::ParameterMismatch(message)) => {
            assert!(message.contains("made for other parameters") && message.contains("N=2048"), "{message}")
        }
        other => panic!("expected a parameter mismatch, got {:?}", other.map(|b| b.count())),
    }
    // A parameter set claiming 65535 primes, and one whose contents no longer match its digest.
    let mut params = small.params.clone();
    params[HEADER_LEN + 4..HEADER_LEN + 6].copy_from_slice(&u16::MAX.to_le_bytes());
    assert!(format_error(BgvParameters::from_bytes(&params)).contains("truncated"));
    let mut params = BgvParameters::preset(2048).unwrap().to_bytes();
    let last = params.len() - 1;
    params[last - 3] ^= 1; // the plaintext modulus 12289 -> 12288: caught by the structure check
    assert!(BgvParameters::from_bytes(&params).is_err());
}

#[test]
fn galois_and_relinearization_fields_are_checked() {
    let case = bgv();
    let backend = backend();
    let mut keygen = KeyGenerator::with_sampler(&backend, &case.ctx, Sampler::from_seed_u64(5));
    let secret = keygen.secret_key().unwrap();
    let galois = keygen.galois_keys(&secret, &[3, 5]).unwrap().to_compressed_bytes().unwrap();
    let load = |bytes: &[u8]| GaloisKeys::<BgvContext>::from_bytes(&case.ctx, bytes);
    assert!(load(&galois).is_ok());
    let with = |offset: usize, replacement: &[u8]| {
        let mut bytes = galois.clone();
        bytes[offset..offset + replacement.len()].copy_from_slice(replacement);
        bytes
    };
    let count = HEADER_LEN;
    let first = HEADER_LEN + 4;
    assert!(format_error(load(&with(count, &u32::MAX.to_le_bytes()))).contains("allowed 0..=2048"));
    assert!(format_error(load(&with(count, &3u32.to_le_bytes()))).contains("truncated"));
    assert!(format_error(load(&with(first, &4u32.to_le_bytes()))).contains("must be odd"));
    assert!(format_error(load(&with(first, &4097u32.to_le_bytes()))).contains("below 2N = 4096"));
    // The second element repeated (5 -> 3): not strictly increasing.
    let second = first + (galois.len() - HEADER_LEN - 4) / 2;
    assert_eq!(u32::from_le_bytes(galois[second..second + 4].try_into().unwrap()), 5);
    assert!(format_error(load(&with(second, &3u32.to_le_bytes()))).contains("strictly increasing"));
    assert!(format_error(load(&with(first + 4, &7u32.to_le_bytes()))).contains("key-switching digits is 7"));
    // A key-switching object for parameters without special primes is refused as such.
    let small = small();
    let mut relin = small.secret.clone();
    relin[7] = 4;
    let err = RelinKey::<BgvContext>::from_bytes(&small.ctx, &relin).err().unwrap();
    assert!(matches!(err, SchemeError::KeySwitchingUnavailable(_)), "{err}");
}
