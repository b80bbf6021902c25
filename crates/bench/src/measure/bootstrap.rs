//! `pimhe bench bootstrap`: one CKKS bootstrapping timed on a target, its result decrypted and
//! measured in bits of precision against the input, with the levels before and after and the
//! keys it needs (count and bytes).
//!
//! N = 2^16 is the 128-bit preset ([`secure_parameters`]: a dense secret, sparse-secret
//! encapsulation, 9 rescalings left after the bootstrapping); N = 2^10 to 2^14 are the INSECURE
//! presets ([`insecure_parameters`], two rescalings left), and the report says so in its first
//! line.
//!
//! ```
//! use pimhe_bench::measure::bootstrap::{self, BootstrapBenchConfig};
//! let report = bootstrap::run(&BootstrapBenchConfig::new(1024)).unwrap();
//! assert!(report.insecure && report.precision.min_bits > 10.0);
//! assert!(report.level_after > report.level_before && report.rescalings_left >= 2);
//! // One key per rotation step the transforms use, and one for the conjugation.
//! assert_eq!(report.galois_keys, report.rotations + 1);
//! ```

use std::time::Instant;

use num_complex::Complex64;
use pimhe_exec::Backend;
use pimhe_math::Sampler;
use pimhe_nearbank::isa::Kernel;
use pimhe_schemes::ckks::bootstrap::{
    insecure_parameters, secure_parameters, BootstrapConfig, BootstrapPlan, Bootstrapper, EncapsulationKeys,
    PRESET_LEVELS_AFTER, TEST_LEVELS_AFTER,
};
use pimhe_schemes::ckks::precision::{precision, PrecisionStats};
use pimhe_schemes::ckks::{CkksContext, CkksParameters, Decryptor, Encoder, Encryptor, Evaluator, KeyGenerator};
use pimhe_schemes::rlwe::RlweScheme;
use serde::Serialize;

use crate::error::{check_repeat, BenchError, Result};
use crate::format::{format_seconds, Render};
use crate::target::nearbank::NearbankOutcome;
use crate::target::upmem::ModeledServer;
use crate::target::{BackendKind, Cost, Device, DeviceNeeds, Job, Ran, Target, TargetRules, UpmemFlags};

/// The ring degrees `--n` takes: the insecure presets' and the 128-bit preset's (2^16).
pub const DEGREES: [usize; 6] = [1024, 2048, 4096, 8192, 16384, 65536];

/// `bench bootstrap`'s targets: the CPU, the emulated UPMEM system (every DPU emulated; its
/// results are the CPU's bit for bit, crates/schemes/tests/ckks_bootstrap.rs) and the near-bank
/// system.
pub const RULES: TargetRules = TargetRules {
    backends: &BackendKind::ALL,
    default: BackendKind::Cpu,
    upmem: UpmemFlags { mode: true, kernel: true, emulate: false, what_if: true },
    threads_beside_upmem: false,
};

/// What a run takes.
#[derive(Debug, Clone)]
pub struct BootstrapBenchConfig {
    /// Ring degree, one of [`DEGREES`].
    pub n: usize,
    /// Slots: the full packing N/2 (`None`), or a power of two below it (sparse packing).
    pub slots: Option<usize>,
    /// Where it runs.
    pub target: Target,
    /// Timed bootstrappings on the CPU (the best is reported); a modeled target runs once.
    pub repeat: usize,
    /// Seed of the keys and the input.
    pub seed: u64,
    /// Real inputs (imaginary parts zero, the error measured on the real parts, as OpenFHE's
    /// bootstrapping examples and `bench/compare/boot_openfhe.py` measure) instead of complex
    /// ones with both parts uniform in [-1, 1].
    pub real: bool,
}

impl BootstrapBenchConfig {
    /// N on the CPU with every default.
    pub fn new(n: usize) -> Self {
        Self { n, slots: None, target: Target::Cpu { threads: None }, repeat: 1, seed: 1, real: false }
    }
}

/// What a run measured.
#[derive(Debug, Clone, Serialize)]
pub struct BootstrapReport {
    /// Ring degree.
    pub n: usize,
    /// Slots bootstrapped.
    pub slots: usize,
    /// Whether the inputs were real (the error on the real parts only).
    pub real: bool,
    /// The parameters, as `pimhe params` prints them.
    pub params: String,
    /// Whether the parameters fall short of 128-bit security (the test presets do).
    pub insecure: bool,
    /// The backend.
    pub backend: &'static str,
    /// The secret's Hamming weight.
    pub hamming_weight: usize,
    /// The input's level (the lowest), as the context numbers levels (by primes).
    pub level_before: usize,
    /// The output's level.
    pub level_after: usize,
    /// The top level.
    pub max_level: usize,
    /// Rescalings left to the output: the depth a program has after the bootstrapping.
    pub rescalings_left: usize,
    /// Rotation steps the transforms use.
    pub rotations: usize,
    /// Galois keys made (one per rotation the transforms use, plus the conjugation).
    pub galois_keys: usize,
    /// Their size, bytes.
    pub galois_key_bytes: usize,
    /// The ephemeral secret's Hamming weight under sparse-secret encapsulation (the 128-bit
    /// preset), `None` without.
    pub encapsulation_weight: Option<usize>,
    /// The encapsulation keys' size, bytes (0 without).
    pub encapsulation_key_bytes: usize,
    /// Key generation (relinearization and Galois keys), seconds, measured.
    pub keygen_s: f64,
    /// The bootstrapping, seconds: measured on the CPU (best of `repeat`), wall time of the
    /// host otherwise.
    pub bootstrap_s: f64,
    /// Timed runs.
    pub repeat: usize,
    /// The output against the input, slot by slot.
    pub precision: PrecisionStats,
    /// The modeled cost on nearbank.
    pub nearbank: Option<NearbankOutcome>,
    /// The modeled cost on upmem-emu: the input ciphertext's upload, the pipeline's transfers,
    /// DPU compute and retrieval.
    pub upmem: Option<ModeledServer>,
    /// upmem-emu: operations that fell back to the host CPU, and their measured seconds.
    pub host_fallbacks: Option<(u64, f64)>,
}

/// The parameters and the bootstrapping configuration of ring degree `n`, one of [`DEGREES`]:
/// the 128-bit preset at N = 2^16 (sparse-secret encapsulation, [`PRESET_LEVELS_AFTER`]
/// rescalings left), an INSECURE preset below it ([`TEST_LEVELS_AFTER`] left, a sparse secret).
/// `flag` names the option `n` came from in the error.
pub fn parameters(n: usize, flag: &str) -> Result<(CkksParameters, BootstrapConfig)> {
    if !DEGREES.contains(&n) {
        return Err(BenchError::usage(format!(
            "{flag} {n} is not allowed: bootstrapping runs on the 128-bit preset (N = 65536) or the insecure presets \
             (N = 1024 to 16384, a power of two)"
        )));
    }
    Ok(if n == 1 << 16 {
        secure_parameters(PRESET_LEVELS_AFTER)?
    } else {
        (insecure_parameters(n, TEST_LEVELS_AFTER)?, BootstrapConfig::default())
    })
}

/// Runs one bootstrapping benchmark: keys made on this host's CPU (the client), the input
/// encrypted and brought to the lowest level, bootstrapped on the target (priced there), and
/// the result decrypted against the input.
pub fn run(config: &BootstrapBenchConfig) -> Result<BootstrapReport> {
    Ok(run_with(config, |needs, job| Ok((config.target.run(needs, job)?, ())))?.0)
}

/// [`run`] on the near-bank backend (`config.target` must be nearbank), returning the planned
/// program of the bootstrapping beside the report (priced on the target's system), for pricing
/// one recording on every system (Anaheim's Boot row).
pub fn record(config: &BootstrapBenchConfig) -> Result<(BootstrapReport, Vec<Kernel>)> {
    let Target::Nearbank(nearbank) = &config.target else {
        return Err(BenchError::usage(format!(
            "recording a bootstrapping's program needs the nearbank backend, not {}",
            config.target.name()
        )));
    };
    run_with(config, |_, job| nearbank.record(job))
}

/// [`run`] with the job executed by `execute`, which returns its result, its cost and what else
/// it keeps of the run.
fn run_with<T>(
    config: &BootstrapBenchConfig,
    execute: impl FnOnce(&DeviceNeeds, Bootstrap<'_>) -> Result<(Ran<Bootstrapped>, T)>,
) -> Result<(BootstrapReport, T)> {
    let n = config.n;
    let (params, bootstrap_config) = parameters(n, "--n")?;
    if let Some(slots) = config.slots.filter(|&s| !s.is_power_of_two() || s > n / 2) {
        return Err(BenchError::usage(format!(
            "--slots {slots} is not allowed: a power of two from 1 to N/2 = {} (N/2: full packing)",
            n / 2
        )));
    }
    let bootstrap_config = BootstrapConfig { slots: config.slots, ..bootstrap_config };
    check_repeat(config.repeat, "bootstrapping")?;
    RULES.check(&config.target)?;
    let params_text = params.to_string();
    let ctx = CkksContext::new(params)?;
    let plan = BootstrapPlan::new(&ctx, &bootstrap_config)?;

    // The client's keys, on this host's CPU whatever the target.
    let cpu = pimhe_exec::CpuBackend::new(config.target.threads())?;
    let start = Instant::now();
    let mut keygen = KeyGenerator::with_sampler(&cpu, &ctx, Sampler::from_seed_u64(config.seed));
    let secret = keygen.secret_key()?;
    let relin = keygen.relin_key(&secret)?;
    let galois = keygen.galois_keys(&secret, &plan.galois_elements())?;
    let encapsulation = match plan.uses_encapsulation() {
        true => Some(keygen.encapsulation_keys(&secret, plan.hamming_weight())?),
        false => None,
    };
    let keygen_s = start.elapsed().as_secs_f64();

    let values = input_values(config.seed, plan.slots(), config.real);
    let repeat = if config.target.kind() == BackendKind::Cpu { config.repeat } else { 1 };
    let needs = DeviceNeeds { n, primes: ctx.backend_primes() };
    let job = Bootstrap {
        ctx: &ctx,
        plan: &plan,
        secret: &secret,
        relin: &relin,
        galois: &galois,
        encapsulation: encapsulation.as_ref(),
        values: &values,
        real: config.real,
        repeat,
    };
    let (ran, kept) = execute(&needs, job)?;
    let mode = match &config.target {
        Target::UpmemEmu(target) => Some(target.mode_of(&ran)),
        Target::Cpu { .. } | Target::Nearbank(_) => None,
    };
    let (mut nearbank, mut upmem, mut host_fallbacks) = (None, None, None);
    match ran.cost {
        Cost::Cpu { .. } => {}
        Cost::Nearbank(outcome) => nearbank = Some(outcome),
        Cost::Upmem(report) => {
            let Target::UpmemEmu(target) = &config.target else { unreachable!("an upmem-emu cost") };
            let settings = target.settings_in(mode.expect("an upmem-emu run"), needs.primes.len())?;
            // The input: one ciphertext (two polynomials) over the base primes.
            let base: Vec<usize> = (0..ctx.level_basis(ctx.min_level())?.len()).collect();
            upmem = Some(ModeledServer::new(
                &settings.config(settings.dpus, settings.mode),
                &report,
                needs.primes.len(),
                (2, &base, 1, n),
                "one bootstrapping",
            )?);
            host_fallbacks = Some((report.fallbacks, report.host_fallback_s));
        }
    }
    let report = BootstrapReport {
        n,
        slots: plan.slots(),
        real: config.real,
        params: params_text,
        insecure: ctx.params().rlwe().security_bits().is_none(),
        backend: config.target.name(),
        hamming_weight: plan.hamming_weight(),
        level_before: ctx.min_level(),
        level_after: plan.output_level(),
        max_level: ctx.max_level(),
        rescalings_left: plan.depth_after(),
        rotations: plan.rotations().len(),
        galois_keys: galois.elements().count(),
        galois_key_bytes: galois.size_bytes(),
        encapsulation_weight: encapsulation.as_ref().map(EncapsulationKeys::hamming_weight),
        encapsulation_key_bytes: encapsulation.as_ref().map_or(0, EncapsulationKeys::size_bytes),
        keygen_s,
        bootstrap_s: ran.output.seconds,
        repeat,
        precision: ran.output.precision,
        nearbank,
        upmem,
        host_fallbacks,
    };
    Ok((report, kept))
}

/// `slots` values with real parts uniform in [-1, 1], imaginary parts too unless `real`, from
/// `seed`.
fn input_values(seed: u64, slots: usize, real: bool) -> Vec<Complex64> {
    let mut sampler = Sampler::from_seed_u64(seed ^ 0x5EED);
    let mut uniform = || 2.0 * f64::from(sampler.next_u32()) / f64::from(u32::MAX) - 1.0;
    (0..slots).map(|_| Complex64::new(uniform(), if real { 0.0 } else { uniform() })).collect()
}

/// The bootstrapping on the target's backend.
#[derive(Clone, Copy)]
struct Bootstrap<'a> {
    ctx: &'a std::sync::Arc<CkksContext>,
    plan: &'a BootstrapPlan,
    secret: &'a pimhe_schemes::ckks::SecretKey,
    relin: &'a pimhe_schemes::ckks::RelinKey,
    galois: &'a pimhe_schemes::ckks::GaloisKeys,
    encapsulation: Option<&'a EncapsulationKeys>,
    values: &'a [Complex64],
    real: bool,
    repeat: usize,
}

/// What the job measured.
struct Bootstrapped {
    seconds: f64,
    precision: PrecisionStats,
}

impl Job for Bootstrap<'_> {
    type Output = Bootstrapped;
    fn pricing_copy(&self) -> Option<Self> {
        Some(*self)
    }

    fn adopt(self, _: &Self::Output) -> std::result::Result<(), Self> {
        Ok(()) // it shows nothing while it runs
    }

    fn run<B: Backend>(self, device: &Device<'_, B>) -> Result<Bootstrapped> {
        let backend = device.backend;
        let evaluator = Evaluator::new(backend, self.ctx).with_relin_key(self.relin)?.with_galois_keys(self.galois)?;
        let bootstrapper = match self.encapsulation {
            Some(keys) => Bootstrapper::with_encapsulation(&evaluator, self.plan.clone(), keys)?,
            None => Bootstrapper::new(&evaluator, self.plan.clone())?,
        };
        let encoder = Encoder::new(self.ctx);
        let mut encryptor = Encryptor::with_secret_key(backend, self.secret)?;
        let plain = encoder.encode_sparse(self.values, self.plan.slots(), self.ctx.default_scale())?;
        let fresh = encryptor.encrypt(&[plain])?;
        let low = evaluator.drop_to_level(&fresh, self.ctx.min_level())?;
        device.start_pricing()?;
        let mut best = f64::INFINITY;
        let mut out = None;
        for _ in 0..self.repeat {
            let start = Instant::now();
            out = Some(bootstrapper.bootstrap(&evaluator, &low)?);
            best = best.min(start.elapsed().as_secs_f64());
        }
        device.stop_pricing()?;
        let out = out.expect("at least one bootstrapping (repeat >= 1)");
        let decoded = encoder.decode(&Decryptor::new(backend, self.secret)?.decrypt(&out)?[0])?;
        let stats = if self.real {
            let real_parts = |v: &[Complex64]| v.iter().map(|z| Complex64::new(z.re, 0.0)).collect::<Vec<_>>();
            precision(&real_parts(&decoded), &real_parts(self.values))
        } else {
            precision(&decoded, self.values)
        };
        Ok(Bootstrapped { seconds: best, precision: stats })
    }
}

impl Render for BootstrapReport {
    fn render(&self) -> String {
        let mut out = format!(
            "pimhe bench bootstrap: CKKS, N = {}, {} {} slots, {} backend{}\n  parameters: {}\n  {}; level {} -> {} of {} ({} \
             rescalings left)\n  keys: {} Galois keys ({:.1} MiB){}, made in {} on this host\n  bootstrapping: {} \
             ({})\n  precision against the input: {}",
            self.n,
            self.slots,
            if self.real { "real" } else { "complex" },
            self.backend,
            if self.insecure { "; INSECURE test preset (not 128-bit secure)" } else { "; 128-bit preset" },
            self.params,
            match self.encapsulation_weight {
                Some(h) => format!("dense secret, sparse-secret encapsulation through an ephemeral secret of Hamming weight {h}"),
                None => format!("secret Hamming weight {}", self.hamming_weight),
            },
            self.level_before,
            self.level_after,
            self.max_level,
            self.rescalings_left,
            self.galois_keys,
            self.galois_key_bytes as f64 / (1 << 20) as f64,
            match self.encapsulation_weight {
                Some(_) => format!(" and 2 encapsulation keys ({:.1} MiB)", self.encapsulation_key_bytes as f64 / (1 << 20) as f64),
                None => String::new(),
            },
            format_seconds(self.keygen_s),
            format_seconds(self.bootstrap_s),
            match (&self.nearbank, &self.upmem) {
                (None, None) => format!("best of {}, measured", self.repeat),
                _ => "this host's wall time".to_string(),
            },
            self.precision,
        );
        if let Some(outcome) = &self.nearbank {
            out += &format!("\n  server on {} (modeled):\n{}", outcome.system, outcome.render());
        }
        if let Some(modeled) = &self.upmem {
            out += &format!("\n{}", modeled.render());
        }
        if let Some((count, seconds)) = self.host_fallbacks {
            out += &format!("\n    host fallbacks {count} ({} on the host, measured)", format_seconds(seconds));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn degrees_slots_and_repeats_out_of_range_are_refused_naming_the_flag() {
        let refused = |config: BootstrapBenchConfig| run(&config).unwrap_err().to_string();
        assert!(refused(BootstrapBenchConfig::new(32768)).starts_with("--n 32768 is not allowed"));
        for slots in [48, 1024] {
            let wrong = BootstrapBenchConfig { slots: Some(slots), ..BootstrapBenchConfig::new(1024) };
            assert!(refused(wrong)
                .starts_with(&format!("--slots {slots} is not allowed: a power of two from 1 to N/2 = 512")));
        }
        let none = BootstrapBenchConfig { repeat: 0, ..BootstrapBenchConfig::new(1024) };
        assert!(refused(none).contains("--repeat 0"));
        // One DPU per prime, or a clear refusal: the preset has 68 primes.
        let parallel = crate::target::UpmemTarget {
            mode: Some(pimhe_pim::runtime::placement::Mode::Parallel),
            ..crate::target::UpmemTarget::new(8)
        };
        let upmem = BootstrapBenchConfig { target: Target::UpmemEmu(parallel), ..BootstrapBenchConfig::new(1024) };
        assert!(refused(upmem).contains("--dpus 8 is too few for --mode parallel with 68 primes"));
        // Only the near-bank backend records a program.
        let cpu = record(&BootstrapBenchConfig::new(1024)).unwrap_err().to_string();
        assert!(cpu.starts_with("recording a bootstrapping's program needs the nearbank backend"), "{cpu}");
    }
}
