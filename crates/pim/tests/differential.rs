//! The randomized differential test: random programs of backend operations and of BGV/BFV
//! operations run on the CPU backend (the reference) and on emulated DPUs of a random
//! configuration each (parallel, sequential, ciphertext-major or hybrid mode, either kernel
//! variant, odd DPU counts, 1 to 16 tasklets, all primes served or only some, and MRAM now and
//! then so small that buffers are evicted to the host and large batches run in rounds). Every
//! step must give bit-identical results or the same refusal, word for word; scheme programs
//! must also decrypt to the same computation on the plaintexts. No program may be cut short for
//! lack of MRAM: the runtime evicts what is in the way, and the squeezed MRAM always holds one
//! operation's operands.
//!
//! The default is the quick run of CI. The same test is the long run (docs/TESTING.md):
//! `PIMHE_DIFF_PROGRAMS` backend programs and `PIMHE_DIFF_SCHEME_PROGRAMS` scheme programs from
//! `PIMHE_DIFF_SEED`, starting at program `PIMHE_DIFF_FIRST`. A failure prints the program and
//! the variables that replay it alone.

mod differential_support;

use std::collections::HashMap;
use std::ops::Range;
use std::sync::mpsc;
use std::time::Duration;

use differential_support::backend_programs::{self, BackendProgram};
use differential_support::ckks_programs::{self, CkksCheck, CkksFixture, CkksProgram};
use differential_support::scheme_programs::{self, Fixture, ProgramScheme, SchemeKind, SchemeProgram};
use differential_support::{compare, unexpected, Event, Verdict};
use pimhe_exec::{Backend, CpuBackend};
use pimhe_pim::emulator::EmulatorConfig;
use pimhe_pim::layout::Variant;
use pimhe_pim::runtime::placement::Mode;
use pimhe_pim::runtime::{PimBackend, PimConfig};
use pimhe_ring::PolyBatch;
use pimhe_ring::Representation::Ntt;
use pimhe_schemes::bfv::BfvContext;
use pimhe_schemes::bgv::BgvContext;
use pimhe_schemes::rlwe::RlweScheme;
use pimhe_testkit::inputs::{basis_of, distinct_primes, random_batch, rng};
use rand_chacha::rand_core::Rng;
use rand_chacha::ChaCha20Rng;

/// The run's parameters, from the environment.
struct Run {
    seed: u64,
    first: u64,
    programs: u64,
}

impl Run {
    fn from_env(programs_variable: &str, default_programs: u64) -> Self {
        let var = |name: &str, default: u64| {
            std::env::var(name).map_or(default, |v| v.parse().unwrap_or_else(|_| panic!("{name}={v} is not a number")))
        };
        Self {
            seed: var("PIMHE_DIFF_SEED", 16),
            first: var("PIMHE_DIFF_FIRST", 0),
            programs: var(programs_variable, default_programs),
        }
    }

    /// Program `index`'s seed: replayable from (seed, index) alone.
    fn program_seed(&self, index: u64) -> u64 {
        (self.seed << 32) ^ index
    }

    fn indices(&self) -> Range<u64> {
        self.first..self.first + self.programs
    }

    fn replay(&self, index: u64, programs_variable: &str) -> String {
        format!("replay: PIMHE_DIFF_SEED={} PIMHE_DIFF_FIRST={index} {programs_variable}=1", self.seed)
    }
}

/// What the programs of a run came to.
#[derive(Debug, Default)]
struct Tally {
    programs: u64,
    steps: usize,
    /// Steps both backends refused (with the same words).
    refusals: usize,
    /// Programs cut short where the DPUs ran out of MRAM (each also a failure).
    exhausted: u64,
    rounds: u64,
    /// Buffers evicted from MRAM, and pushed back, by mode (in `Mode::ALL`'s order).
    evictions: [u64; Mode::ALL.len()],
    restores: [u64; Mode::ALL.len()],
    failures: Vec<String>,
}

impl Tally {
    /// Compares `events` (the trace of `pim`) with `cpu` and counts; a failure is recorded with
    /// `context()`.
    fn add(&mut self, cpu: &[Event], events: &[Event], pim: &PimBackend, context: impl Fn() -> String) {
        self.programs += 1;
        let report = pim.report().unwrap_or_default();
        let mode = Mode::ALL.iter().position(|&m| m == pim.config().mode).expect("a mode of Mode::ALL");
        self.rounds += report.rounds;
        self.evictions[mode] += report.evictions;
        self.restores[mode] += report.restores;
        self.steps += cpu.len() - 1;
        self.refusals += cpu.iter().filter(|e| e.outcome.is_err()).count();
        let failure = match compare(cpu, events, out_of_mram) {
            Verdict::Same => unexpected(cpu),
            Verdict::Exhausted { step, reason } => {
                self.exhausted += 1;
                Some(format!("step {step}: cut short for lack of MRAM where the CPU backend ran on: {reason}"))
            }
            Verdict::Differ(difference) => Some(difference),
        };
        if self.programs.is_multiple_of(1000) {
            // Progress of a long run (failures are printed as they happen, below).
            eprintln!(
                "{} programs, {} failures ({} cut short for MRAM), evictions {:?}",
                self.programs,
                self.failures.len(),
                self.exhausted,
                self.evictions
            );
        }
        if let Some(failure) = failure {
            let report = format!("{failure}\n{}", context());
            eprintln!("MISMATCH {report}");
            self.failures.push(report);
        }
    }

    fn finish(&self, what: &str) {
        eprintln!("{what}: {self:?}");
        if let Some(first) = self.failures.first() {
            panic!("{} of {} {what} failed; the first:\n{first}", self.failures.len(), self.programs);
        }
    }
}

/// The refusals of a PIM backend for lack of MRAM (the CPU has no such limit). The runtime evicts
/// buffers to make room, so only an operation whose own operands do not fit in an empty MRAM
/// can get one, and the squeezed configurations below leave room for those: each is a failure.
fn out_of_mram(text: &str) -> bool {
    text.contains("not even one polynomial") || text.contains("no MRAM left")
}

/// Mixed into a program's seed for the draws of its PIM configuration ("PIM" in ASCII).
const PIM_DRAWS: u64 = 0x50_49_4d;

fn below(r: &mut ChaCha20Rng, bound: usize) -> usize {
    (r.next_u64() % bound as u64) as usize
}

fn pick<T: Copy>(r: &mut ChaCha20Rng, items: &[T]) -> T {
    items[below(r, items.len())]
}

/// A random PIM backend for degree `n` over `primes`: the mode, kernel variant, tasklets and an
/// odd DPU count; all primes served or (one time in five) a random part, so that buffers over
/// the others live on the host; and one time in four, room in MRAM for only `tight` polynomials
/// per DPU beside the tables, so that buffers are evicted and large batches run in rounds
/// (`normal` otherwise). `tight` must leave room for the operands of any one operation of the
/// programs (as rounds of one polynomial): less is a capacity refusal the CPU does not have.
/// Returns it with its description.
fn pim_backend(
    r: &mut ChaCha20Rng,
    n: usize,
    primes: &[u32],
    normal: usize,
    tight: Range<usize>,
) -> (PimBackend, String) {
    let mut served = primes.to_vec();
    if below(r, 5) == 0 {
        for i in (1..served.len()).rev() {
            served.swap(i, below(r, i + 1));
        }
        served.truncate(1 + below(r, served.len()));
    }
    let mode = pick(r, &Mode::ALL);
    let dpus = match mode {
        // At least one DPU per prime, odd, and sometimes groups of several.
        Mode::Parallel | Mode::Hybrid => (served.len() | 1) + pick(r, &[0, 0, 2, 4, 10]),
        Mode::Sequential | Mode::CiphertextMajor => pick(r, &[1, 3, 5, 7, 11, 13]),
    };
    let mut config = PimConfig::new(dpus, mode);
    config.variant = pick(r, &Variant::ALL);
    config.emulator = EmulatorConfig::default().with_tasklets(pick(r, &[1, 3, 11, 16]));
    let polynomial = n * 4;
    config.emulator.mram_bytes = (1 << 20) + normal * polynomial;
    let squeeze = below(r, 4) == 0;
    let room = if squeeze { tight.start + below(r, tight.len()) } else { normal };
    let describe = |config: &PimConfig| {
        format!(
            "PIM: {:?}, {:?} kernels, {} DPUs, {} tasklets, serving {served:?}, room for {room} polynomials per DPU",
            config.mode, config.variant, config.dpus, config.emulator.tasklets
        )
    };
    let backend = PimBackend::new(config.clone(), n, &served).expect("a valid configuration");
    if !squeeze {
        return (backend, describe(&config));
    }
    // The tables and command lists take the rest: measured on the roomy backend.
    let overhead = config.emulator.mram_bytes - backend.mram_free_bytes();
    drop(backend);
    config.emulator.mram_bytes = (overhead + room * polynomial).next_multiple_of(8);
    let backend = PimBackend::new(config.clone(), n, &served).expect("a valid configuration");
    (backend, describe(&config))
}

#[test]
fn random_backend_programs_agree_on_the_cpu_and_the_emulated_dpus() {
    const PROGRAMS: &str = "PIMHE_DIFF_PROGRAMS";
    let run = Run::from_env(PROGRAMS, 300);
    let cpus = [CpuBackend::new(Some(1)).unwrap(), CpuBackend::new(Some(3)).unwrap()];
    let mut tally = Tally::default();
    for index in run.indices() {
        let seed = run.program_seed(index);
        let program = BackendProgram::generate(seed);
        let cpu = backend_programs::run(&cpus[index as usize % 2], &program);
        let mut r = rng(seed ^ PIM_DRAWS);
        // From 64 polynomials: a tensor's seven buffers over seven primes on one DPU (49) and
        // key switching's accumulations fit as rounds of one; with less, some operations could
        // not run at all.
        let (pim, description) = pim_backend(&mut r, program.n, &program.primes, 1024, 64..128);
        let events = backend_programs::run(&pim, &program);
        tally.add(&cpu, &events, &pim, || format!("{}\n{description}\n{program}", run.replay(index, PROGRAMS)));
    }
    tally.finish("backend programs");
    if run.programs >= 100 {
        // The quick run covers what it claims: rounds ran, refusals were compared, and buffers
        // were evicted in every mode and pushed back.
        assert!(tally.rounds > 0 && tally.refusals > 0, "{tally:?}");
        assert!(tally.evictions.iter().all(|&e| e > 0) && tally.restores.iter().sum::<u64>() > 0, "{tally:?}");
    }
}

/// Keys per preset, made on first use (the same seed for every run: keys are not what varies).
struct Fixtures<S: ProgramScheme>(HashMap<usize, Fixture<S>>);

impl<S: ProgramScheme> Fixtures<S> {
    fn get(&mut self, degree: usize) -> &Fixture<S> {
        self.0.entry(degree).or_insert_with(|| Fixture::new(degree, 7))
    }
}

/// Runs one scheme program on the CPU and on a random PIM backend, and tallies it.
fn scheme_program<S: ProgramScheme>(
    fixture: &Fixture<S>,
    cpu: &CpuBackend,
    seed: u64,
    tally: &mut Tally,
    plain: &mut scheme_programs::PlainCheck,
    context: impl Fn(&str, &SchemeProgram) -> String,
) {
    let program = SchemeProgram::generate(seed, &fixture.preset);
    let reference = scheme_programs::run(cpu, fixture, &program);
    let mut r = rng(seed ^ PIM_DRAWS);
    // From 48 polynomials: a tensor's seven buffers over five primes on one DPU (35) fit as
    // rounds of one; with less, some multiplications could not run at all.
    let (pim, description) = pim_backend(&mut r, program.degree, &fixture.keys.ctx.backend_primes(), 96, 48..96);
    let candidate = scheme_programs::run(&pim, fixture, &program);
    tally.add(&reference.events, &candidate.events, &pim, || context(&description, &program));
    plain.agreed += reference.plain.agreed;
    plain.exhausted += reference.plain.exhausted;
    for wrong in reference.plain.wrong {
        tally.failures.push(format!(
            "the CPU's decryption differs from the plaintexts: {wrong}\n{}",
            context(&description, &program)
        ));
    }
}

#[test]
fn random_scheme_programs_agree_on_the_cpu_and_the_emulated_dpus_and_decrypt_right() {
    const PROGRAMS: &str = "PIMHE_DIFF_SCHEME_PROGRAMS";
    let run = Run::from_env(PROGRAMS, 20);
    let cpu = CpuBackend::new(Some(2)).unwrap();
    let (mut bgv, mut bfv) = (Fixtures::<BgvContext>(HashMap::new()), Fixtures::<BfvContext>(HashMap::new()));
    let mut tally = Tally::default();
    let mut plain = scheme_programs::PlainCheck::default();
    for index in run.indices() {
        let seed = run.program_seed(index);
        let context = |description: &str, program: &SchemeProgram| {
            format!("{}\n{description}\n{program}", run.replay(index, PROGRAMS))
        };
        match SchemeProgram::kind(seed) {
            (SchemeKind::Bgv, degree) => scheme_program(bgv.get(degree), &cpu, seed, &mut tally, &mut plain, context),
            (SchemeKind::Bfv, degree) => scheme_program(bfv.get(degree), &cpu, seed, &mut tally, &mut plain, context),
        }
    }
    eprintln!("plaintext checks: {plain:?}");
    tally.finish("scheme programs");
    // Most decryptions are checked against the plaintexts, not only compared across backends.
    assert!(plain.agreed > 2 * plain.exhausted, "{plain:?}");
}

/// Random CKKS programs (`PIMHE_DIFF_CKKS_PROGRAMS` of them in a long run): bit-identical
/// traces on the CPU and on a random PIM backend serving the data and special primes, and
/// every decryption whose message fits its modulus within the error estimated for its history.
#[test]
fn random_ckks_programs_agree_on_the_cpu_and_the_emulated_dpus_and_decrypt_close() {
    const PROGRAMS: &str = "PIMHE_DIFF_CKKS_PROGRAMS";
    let run = Run::from_env(PROGRAMS, 24);
    let cpu = CpuBackend::new(Some(2)).unwrap();
    let mut fixtures: HashMap<usize, CkksFixture> = HashMap::new();
    let mut tally = Tally::default();
    let mut check = CkksCheck::default();
    for index in run.indices() {
        let seed = run.program_seed(index);
        let set = CkksProgram::set_of(seed);
        let fixture = fixtures.entry(set).or_insert_with(|| CkksFixture::new(set, 7));
        let program = CkksProgram::generate(seed, fixture);
        let context = |description: &str| format!("{}\n{description}\n{program}", run.replay(index, PROGRAMS));
        let reference = ckks_programs::run(&cpu, fixture, &program);
        let mut r = rng(seed ^ PIM_DRAWS);
        // Room for the evaluation keys on one DPU, and more; squeezed, little more.
        let keys = fixture.key_polynomials();
        let (pim, description) =
            pim_backend(&mut r, fixture.set.degree, &fixture.ctx().backend_primes(), keys + 512, keys + 32..keys + 256);
        let candidate = ckks_programs::run(&pim, fixture, &program);
        tally.add(&reference.events, &candidate.events, &pim, || context(&description));
        for wrong in &reference.plain.wrong {
            tally
                .failures
                .push(format!("the CPU's decryption differs from the plaintexts: {wrong}\n{}", context(&description)));
        }
        check.absorb(reference.plain);
    }
    eprintln!("plaintext checks: {check:?}");
    tally.finish("CKKS programs");
    // Most decryptions are checked against the plaintexts, not only compared across backends,
    // and refusals were compared too.
    assert!(check.agreed > 2 * check.out_of_depth, "{check:?}");
    assert!(tally.refusals > 0 || run.programs < 20, "{tally:?}");
}

/// Reduced from a random backend program: add_assign and mac onto a resident accumulator with an
/// operand kept on the host (over a prime the DPUs do not serve) ran on the CPU, then replaced
/// the accumulator while holding the runtime's lock, which dropping the old one takes again: a
/// deadlock. The steps run on another thread so that a regression fails instead of hanging.
#[test]
fn in_place_operations_with_an_operand_on_the_host_finish_and_match_the_cpu_backend() {
    let primes = distinct_primes(64, &[30, 29]);
    let (served, all) = (basis_of(64, &primes[..1]), basis_of(64, &primes));
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        let pim = PimBackend::new(PimConfig::new(1, Mode::Sequential), 64, &primes[..1]).unwrap();
        let cpu = CpuBackend::new(Some(1)).unwrap();
        let mut r = rng(1);
        let [acc, a] = [0; 2].map(|_| random_batch(&mut r, &served, 3, Ntt));
        let b = random_batch(&mut r, &all, 1, Ntt);
        let (mut on_pim, b_on_host) = (pim.upload(acc.clone()).unwrap(), pim.upload(b.clone()).unwrap());
        pim.add_assign(&mut on_pim, &b_on_host).unwrap();
        pim.mac(&mut on_pim, &pim.upload(a.clone()).unwrap(), &b_on_host).unwrap();
        let mut expected = acc;
        cpu.add_assign(&mut expected, &b).unwrap();
        cpu.mac(&mut expected, &a, &b).unwrap();
        sender.send(pim.download(&on_pim).unwrap() == expected).unwrap();
    });
    let same = receiver.recv_timeout(Duration::from_secs(60)).expect("add_assign and mac did not finish: deadlock");
    assert!(same, "add_assign and mac differ from the CPU backend's");
}

/// Reduced from a random backend program: an operation on a batch of no polynomials with a
/// streamed operand (one too large for the MRAM) panicked in the runtime's rounds, whose size was
/// 0; the empty round must not need room for the broadcast operand it never reads either.
#[test]
fn an_empty_batch_with_a_streamed_operand_gives_an_empty_result() {
    let primes = distinct_primes(64, &[30, 29, 28]);
    let basis = basis_of(64, &primes);
    let mut config = PimConfig::new(1, Mode::Sequential);
    config.emulator.mram_bytes = 1 << 20;
    let probe = PimBackend::new(config.clone(), 64, &primes).unwrap();
    // Room for two polynomials of one prime beside the tables: a polynomial over three primes
    // never fits.
    config.emulator.mram_bytes = config.emulator.mram_bytes - probe.mram_free_bytes() + 2 * 64 * 4;
    let pim = PimBackend::new(config, 64, &primes).unwrap();
    let cpu = CpuBackend::new(Some(1)).unwrap();
    let b = random_batch(&mut rng(2), &basis, 1, Ntt);
    let empty = PolyBatch::zeros(&basis, 0, Ntt);
    let streamed = pim.upload(b.clone()).unwrap();
    let mut acc = pim.upload(empty.clone()).unwrap();
    let sum = pim.add(&acc, &streamed).unwrap();
    assert_eq!(pim.download(&sum).unwrap(), cpu.add(&empty, &b).unwrap());
    pim.mac(&mut acc, &pim.upload(empty.clone()).unwrap(), &streamed).unwrap();
    assert_eq!(pim.download(&acc).unwrap(), empty);
    assert!(pim.report().unwrap().rounds >= 2, "the operand was streamed");
}
