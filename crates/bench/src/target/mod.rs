//! Where a run computes, as one type: [`Target`] is the CPU, the emulated UPMEM system
//! ([`upmem`], with DRAMatic's hardware [`what_if`]s) or the GPU + near-bank PIM system
//! ([`nearbank`]). Every command takes the same flag group ([`TargetFlags`]: `--backend`,
//! `--threads`, `--dpus`, `--mode`, `--kernel`, `--emulate`, `--what-if`, `--system`,
//! `--buffer-entries`), and [`TargetFlags::parse`] is the one place that turns it into a
//! [`Target`]: a backend name is compared as a string there and nowhere else, and a flag the
//! chosen backend (or the command) has no use for is refused, naming it.
//!
//! [`Target::run`] runs a [`Job`] — a computation written once, generic over the backend — on
//! the target's backend and returns what it computed with what it cost ([`Cost`]: measured on
//! the CPU, modeled on the PIM systems). Adding a backend is a variant here, its arm in the
//! exhaustive matches of this module (and of the few consumers that read a backend's own
//! report), and its crate.
//!
//! ```
//! use pimhe_bench::target::{BackendKind, Target, TargetFlags, TargetRules};
//! let flags = TargetFlags { backend: Some("upmem-emu".into()), dpus: Some(8), ..TargetFlags::default() };
//! let target = flags.parse(&TargetRules::SERVER).unwrap();
//! assert_eq!(target.kind(), BackendKind::UpmemEmu);
//! // A flag the backend has no use for is refused, naming it.
//! let flags = TargetFlags { dpus: Some(8), ..TargetFlags::default() };
//! let refused = flags.parse(&TargetRules::SERVER).unwrap_err().to_string();
//! assert_eq!(refused, "--dpus applies to --backend upmem-emu only (this run uses --backend cpu)");
//! ```

pub mod nearbank;
pub mod planner;
pub mod upmem;
pub mod what_if;

use std::cell::RefCell;

use pimhe_exec::{Backend, CpuBackend};
use pimhe_nearbank::model::Model;
use pimhe_pim::layout::Variant;
use pimhe_pim::model::ModelVersion;
use pimhe_pim::runtime::placement::Mode;
use pimhe_pim::runtime::OffloadReport;

use crate::error::{check_threads, BenchError, Result};
use nearbank::NearbankOutcome;
use planner::PlanChoice;
use upmem::{Emulate, PimSettings, DEFAULT_DPUS};
use what_if::WhatIf;

/// The kinds of backend, as `--backend` names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BackendKind {
    /// The host's cores ([`CpuBackend`]).
    Cpu,
    /// Emulated UPMEM DPUs, modeled ([`PimBackend`]).
    UpmemEmu,
    /// A GPU with near-bank PIM, recorded on the host and modeled
    /// ([`NearbankBackend`](pimhe_nearbank::NearbankBackend)).
    Nearbank,
}

impl BackendKind {
    /// Every kind, in the order usage messages list them.
    pub const ALL: [BackendKind; 3] = [BackendKind::Cpu, BackendKind::UpmemEmu, BackendKind::Nearbank];

    /// The name `--backend` takes and reports print.
    pub fn name(self) -> &'static str {
        match self {
            BackendKind::Cpu => "cpu",
            BackendKind::UpmemEmu => "upmem-emu",
            BackendKind::Nearbank => "nearbank",
        }
    }

    /// The kind `name` spells, if it is one of `allowed`; the error lists them.
    pub fn parse(name: &str, allowed: &[BackendKind]) -> Result<Self> {
        BackendKind::ALL
            .into_iter()
            .find(|kind| kind.name() == name && allowed.contains(kind))
            .ok_or_else(|| BenchError::usage(format!("--backend {name} is not allowed: choose {}", list(allowed))))
    }
}

/// `a`, `a or b`, `a, b or c`.
fn list(kinds: &[BackendKind]) -> String {
    let names: Vec<&str> = kinds.iter().map(|k| k.name()).collect();
    match names.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => names.join(""),
    }
}

/// The flag group of every command that runs on a backend, as given (`None`: not given). The
/// CLI flattens one argument struct of these flags into each command; the Python package
/// builds it from keyword arguments.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TargetFlags {
    /// `--backend`: cpu, upmem-emu or nearbank [default: the command's].
    pub backend: Option<String>,
    /// `--threads`: worker threads of the CPU backend (and of the client where the command
    /// has one) [default: all cores].
    pub threads: Option<usize>,
    /// `--dpus`: DPUs of the emulated system [default: [`DEFAULT_DPUS`]].
    pub dpus: Option<usize>,
    /// `--mode`: auto, parallel, sequential, ciphertext-major or hybrid [default: auto].
    pub mode: Option<String>,
    /// `--kernel`: barrett or best [default: best].
    pub kernel: Option<String>,
    /// `--emulate`: full, subset or auto [default: the command's].
    pub emulate: Option<String>,
    /// `--what-if`: DRAMatic's hardware what-ifs ([`WhatIf::parse`]).
    pub what_if: Vec<String>,
    /// `--model`: upmem-v1b@1 or upmem-v1b@2 [default: upmem-v1b@2].
    pub model: Option<String>,
    /// `--system`: the near-bank system of Anaheim's Table III.
    pub system: Option<String>,
    /// `--buffer-entries`: the near-bank PIM data-buffer entries B.
    pub buffer_entries: Option<usize>,
}

/// Which UPMEM flags beyond `--dpus` a command takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UpmemFlags {
    /// `--mode` (otherwise parallel mode).
    pub mode: bool,
    /// `--kernel` (otherwise the best kernel).
    pub kernel: bool,
    /// `--emulate` (otherwise the command's own emulation).
    pub emulate: bool,
    /// `--what-if`.
    pub what_if: bool,
}

/// What a command accepts of the flag group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TargetRules {
    /// The backends it runs on.
    pub backends: &'static [BackendKind],
    /// The backend without `--backend`.
    pub default: BackendKind,
    /// The UPMEM flags it takes besides `--dpus`.
    pub upmem: UpmemFlags,
    /// Whether `--threads` may go with upmem-emu (the command then has a CPU client or a CPU
    /// run beside the emulated one); otherwise it is refused there, since the emulator uses
    /// every core.
    pub threads_beside_upmem: bool,
}

impl TargetRules {
    /// Refuses a target (built elsewhere, e.g. a Python `Backend`) of a backend these rules
    /// do not run on, with [`TargetFlags::parse`]'s message.
    pub fn check(&self, target: &Target) -> Result<()> {
        BackendKind::parse(target.name(), self.backends).map(drop)
    }

    /// A server computation on any backend with `--dpus` only (`stats`, `eval`: parallel mode,
    /// the best kernel, the client's `--threads`).
    pub const SERVER: TargetRules = TargetRules {
        backends: &BackendKind::ALL,
        default: BackendKind::Cpu,
        upmem: UpmemFlags { mode: false, kernel: false, emulate: false, what_if: false },
        threads_beside_upmem: true,
    };
}

/// The emulated UPMEM system of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UpmemTarget {
    /// DPUs of the system.
    pub dpus: usize,
    /// The placement mode; `None` for `--mode auto`, the [`planner`]'s choice by modeled cost.
    pub mode: Option<Mode>,
    /// Kernel arithmetic.
    pub variant: Variant,
    /// How much of the system to emulate; `None` where the command has its own default.
    pub emulate: Option<Emulate>,
    /// Hardware what-ifs applied to the model.
    pub what_if: WhatIf,
    /// Threads of the command's CPU client or CPU run beside the emulated one.
    pub threads: Option<usize>,
    /// Whether the command has `--mode`, so that advice about the DPU count may point to it.
    pub mode_flag: bool,
    /// Tasklets per DPU; `None` for the model's (no CLI flag sets it; the Python package's
    /// `Backend.upmem_emu(tasklets=...)` does).
    pub tasklets: Option<u32>,
    /// The version of `upmem-v1b` that prices the run.
    pub model: ModelVersion,
}

/// The GPU + near-bank PIM system of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct NearbankTarget {
    /// The `anaheim-nb` model of the system and its buffer.
    pub model: Model,
    /// Threads of the host computing the results.
    pub threads: Option<usize>,
}

/// Where a run computes.
#[derive(Debug, Clone, PartialEq)]
pub enum Target {
    /// The host's cores (`None`: all of them).
    Cpu {
        /// Worker threads.
        threads: Option<usize>,
    },
    /// Emulated UPMEM DPUs.
    UpmemEmu(UpmemTarget),
    /// A GPU with near-bank PIM.
    Nearbank(NearbankTarget),
}

impl TargetFlags {
    /// The target these flags name under `rules`: the backend, each flag checked, and every
    /// flag the backend or the command has no use for refused, naming it.
    pub fn parse(&self, rules: &TargetRules) -> Result<Target> {
        let kind = match &self.backend {
            Some(name) => BackendKind::parse(name, rules.backends)?,
            None => rules.default,
        };
        check_threads(self.threads)?;
        let upmem_flags = [
            ("--dpus", self.dpus.is_some(), true),
            ("--mode", self.mode.is_some(), rules.upmem.mode),
            ("--kernel", self.kernel.is_some(), rules.upmem.kernel),
            ("--emulate", self.emulate.is_some(), rules.upmem.emulate),
            ("--what-if", !self.what_if.is_empty(), rules.upmem.what_if),
            ("--model", self.model.is_some(), true),
        ];
        let nearbank_flags =
            [("--system", self.system.is_some(), true), ("--buffer-entries", self.buffer_entries.is_some(), true)];
        // A flag the command does not have at all, then one of another backend's.
        for (flag, given, taken) in upmem_flags.iter().chain(&nearbank_flags) {
            if *given && !taken {
                return Err(BenchError::usage(format!("{flag} does not apply to this command")));
            }
        }
        let off = |applies_to: BackendKind, flags: &[(&str, bool, bool)]| match flags.iter().find(|f| f.1) {
            Some((flag, _, _)) if kind != applies_to => Err(BenchError::usage(format!(
                "{flag} applies to --backend {} only (this run uses --backend {})",
                applies_to.name(),
                kind.name()
            ))),
            _ => Ok(()),
        };
        off(BackendKind::UpmemEmu, &upmem_flags)?;
        off(BackendKind::Nearbank, &nearbank_flags)?;
        Ok(match kind {
            BackendKind::Cpu => Target::Cpu { threads: self.threads },
            BackendKind::UpmemEmu => {
                if self.threads.is_some() && !rules.threads_beside_upmem {
                    return Err(BenchError::usage(
                        "--threads applies to --backend cpu only (the emulator uses every core of this host)",
                    ));
                }
                let dpus = self.dpus.unwrap_or(DEFAULT_DPUS);
                // The range now; the DPUs each prime needs once the job's primes are known.
                PimSettings::checked(dpus, Mode::Sequential, Variant::Best, 1, rules.upmem.mode)?;
                Target::UpmemEmu(UpmemTarget {
                    dpus,
                    mode: self.mode.as_deref().map(upmem::parse_mode).transpose()?.flatten(),
                    variant: self.kernel.as_deref().map(upmem::parse_kernel).transpose()?.unwrap_or(Variant::Best),
                    emulate: self.emulate.as_deref().map(upmem::parse_emulate).transpose()?,
                    what_if: WhatIf::parse(&self.what_if)?,
                    threads: self.threads,
                    mode_flag: rules.upmem.mode,
                    tasklets: None,
                    model: self.model.as_deref().map(upmem::parse_model).transpose()?.unwrap_or_default(),
                })
            }
            BackendKind::Nearbank => Target::Nearbank(NearbankTarget {
                model: nearbank::model(self.system.as_deref(), self.buffer_entries)?,
                threads: self.threads,
            }),
        })
    }
}

/// What a [`Job`] needs of a device: the ring degree and every prime it computes with (a PIM
/// backend holds them all resident).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceNeeds {
    /// Ring degree N.
    pub n: usize,
    /// Every prime the job computes with.
    pub primes: Vec<u32>,
}

/// A computation written once, generic over the backend it runs on (a closure cannot be
/// generic; a trait method can).
pub trait Job {
    /// What it computes.
    type Output;

    /// Runs on `device`; what runs before [`Device::start_pricing`] (keys, inputs) and after
    /// [`Device::stop_pricing`] (the client's checks) is not priced.
    fn run<B: Backend>(self, device: &Device<'_, B>) -> Result<Self::Output>;

    /// The same computation for a pricing run of `--mode auto` ([`planner`]): it prints nothing
    /// and reports no progress. `None` for a job that must run once (it writes files): the
    /// planner then takes parallel mode unpriced, and says so.
    fn pricing_copy(&self) -> Option<Self>
    where
        Self: Sized;

    /// Takes the cheapest candidate's pricing run (its `output`) as this job's own run: `Ok`
    /// once whatever the job would have shown is shown from the output, `Err(self)` when the job
    /// must run again (the default, for a job whose run shows what its output does not keep,
    /// such as progress).
    fn adopt(self, output: &Self::Output) -> std::result::Result<(), Self>
    where
        Self: Sized,
    {
        let _ = output;
        Err(self)
    }
}

/// The backend a [`Job`] runs on.
pub struct Device<'a, B: Backend> {
    /// The backend.
    pub backend: &'a B,
    /// What the target prices from its start to now (the UPMEM report, the near-bank trace),
    /// and a restart of it.
    meter: &'a dyn Meter,
    /// The cost at [`Device::stop_pricing`], if it was called.
    stopped: RefCell<Option<Cost>>,
}

/// A target's account of what ran on its backend.
trait Meter {
    /// Forgets what ran so far.
    fn restart(&self) -> Result<()>;
    /// What ran since the last restart.
    fn cost(&self) -> Result<Cost>;
    /// Pricing stopped (see [`Device::stop_pricing`]).
    fn stop(&self) -> Result<()>;
}

impl<F: Fn() -> Result<()>, G: Fn() -> Result<Cost>> Meter for (F, G) {
    fn restart(&self) -> Result<()> {
        (self.0)()
    }

    fn cost(&self) -> Result<Cost> {
        (self.1)()
    }

    fn stop(&self) -> Result<()> {
        Ok(())
    }
}

impl<F: Fn() -> Result<()>, G: Fn() -> Result<Cost>, H: Fn() -> Result<()>> Meter for (F, G, H) {
    fn restart(&self) -> Result<()> {
        (self.0)()
    }

    fn cost(&self) -> Result<Cost> {
        (self.1)()
    }

    fn stop(&self) -> Result<()> {
        (self.2)()
    }
}

impl<'a, B: Backend> Device<'a, B> {
    fn new(backend: &'a B, meter: &'a dyn Meter) -> Self {
        Self { backend, meter, stopped: RefCell::new(None) }
    }

    /// Everything from here on is what the run's [`Cost`] prices (earlier work was setup: key
    /// uploads, encrypting the inputs).
    pub fn start_pricing(&self) -> Result<()> {
        self.stopped.replace(None);
        self.meter.restart()
    }

    /// Nothing from here on is priced (the client's decryption and checks).
    pub fn stop_pricing(&self) -> Result<()> {
        self.stopped.replace(Some(self.meter.cost()?));
        self.meter.stop()
    }

    /// What was priced from [`Device::start_pricing`] to now: a step's cost as the difference
    /// of two calls. On emulated DPUs the pending commands run first (a launch boundary).
    pub fn priced_so_far(&self) -> Result<Cost> {
        self.meter.cost()
    }

    /// The cost at [`Device::stop_pricing`], or of everything priced so far.
    fn into_cost(self) -> Result<Cost> {
        match self.stopped.into_inner() {
            Some(cost) => Ok(cost),
            None => self.meter.cost(),
        }
    }
}

/// What a run on a target cost.
#[derive(Debug, Clone)]
pub enum Cost {
    /// On the CPU: timed by the job itself, with this many threads.
    Cpu {
        /// Worker threads of the backend.
        threads: usize,
    },
    /// On emulated DPUs: the modeled report of what ran after [`Device::start_pricing`].
    Upmem(OffloadReport),
    /// On the GPU + near-bank PIM system: the recorded program planned and modeled.
    Nearbank(NearbankOutcome),
}

/// A job's output and its cost.
#[derive(Debug)]
pub struct Ran<T> {
    /// What the job computed.
    pub output: T,
    /// What it cost.
    pub cost: Cost,
    /// On emulated DPUs with `--mode auto`: the placement chosen and every candidate's price.
    pub plan: Option<PlanChoice>,
}

impl Target {
    /// The kind of backend.
    pub fn kind(&self) -> BackendKind {
        match self {
            Target::Cpu { .. } => BackendKind::Cpu,
            Target::UpmemEmu(_) => BackendKind::UpmemEmu,
            Target::Nearbank(_) => BackendKind::Nearbank,
        }
    }

    /// The backend's name, as `--backend` spells it.
    pub fn name(&self) -> &'static str {
        self.kind().name()
    }

    /// The threads of the CPU backend, or of the CPU client beside a PIM backend.
    pub fn threads(&self) -> Option<usize> {
        match self {
            Target::Cpu { threads } => *threads,
            Target::UpmemEmu(upmem) => upmem.threads,
            Target::Nearbank(nearbank) => nearbank.threads,
        }
    }

    /// Runs `job` on a backend of this target made for `needs`, and returns its output with
    /// what it cost.
    pub fn run<J: Job>(&self, needs: &DeviceNeeds, job: J) -> Result<Ran<J::Output>> {
        match self {
            Target::Cpu { threads } => {
                let backend = CpuBackend::new(*threads)?;
                let meter = (|| Ok(()), || Ok(Cost::Cpu { threads: backend.threads() }));
                on(&backend, &meter, job)
            }
            Target::UpmemEmu(upmem) => match upmem.mode {
                Some(mode) => upmem.run_in(needs, mode, job),
                None => upmem.run_planned(needs, job),
            },
            Target::Nearbank(nearbank) => Ok(nearbank.record(job)?.0),
        }
    }
}

/// Runs `job` on `backend`, priced by `meter`.
fn on<B: Backend, J: Job>(backend: &B, meter: &dyn Meter, job: J) -> Result<Ran<J::Output>> {
    let device = Device::new(backend, meter);
    let output = job.run(&device)?;
    Ok(Ran { output, cost: device.into_cost()?, plan: None })
}

impl UpmemTarget {
    /// `dpus` DPUs with every default: the command's mode and emulation, the best kernel, no
    /// what-if, all cores for the CPU beside it.
    pub fn new(dpus: usize) -> Self {
        Self {
            dpus,
            mode: None,
            variant: Variant::Best,
            emulate: None,
            what_if: WhatIf::NONE,
            threads: None,
            mode_flag: true,
            tasklets: None,
            model: ModelVersion::default(),
        }
    }

    /// The placement a run used: `--mode`'s, or the one the planner chose.
    pub fn mode_of<T>(&self, ran: &Ran<T>) -> Mode {
        match (self.mode, &ran.plan) {
            (Some(mode), _) => mode,
            (None, Some(plan)) => plan.mode,
            (None, None) => unreachable!("an auto run carries its plan"),
        }
    }

    /// The settings of a system in `mode` serving `primes` primes, checked (parallel mode needs
    /// a DPU per prime), with the what-ifs.
    pub fn settings_in(&self, mode: Mode, primes: usize) -> Result<PimSettings> {
        let settings = PimSettings::checked(self.dpus, mode, self.variant, primes, self.mode_flag)?;
        Ok(PimSettings { tasklets: self.tasklets, ..settings.with_what_if(self.what_if).with_model(self.model) })
    }
}

#[cfg(test)]
mod tests {
    use pimhe_ring::{PolyBatch, Representation, RingBasis};

    use super::*;

    fn flags(backend: &str) -> TargetFlags {
        TargetFlags { backend: Some(backend.into()), ..TargetFlags::default() }
    }

    const BENCH: TargetRules = TargetRules {
        backends: &BackendKind::ALL,
        default: BackendKind::Cpu,
        upmem: UpmemFlags { mode: true, kernel: true, emulate: true, what_if: true },
        threads_beside_upmem: false,
    };

    #[test]
    fn every_backend_parses_with_its_flags_and_defaults() {
        assert_eq!(TargetFlags::default().parse(&BENCH).unwrap(), Target::Cpu { threads: None });
        let upmem = TargetFlags {
            dpus: Some(128),
            mode: Some("sequential".into()),
            kernel: Some("barrett".into()),
            what_if: vec!["zero-copy".into()],
            ..flags("upmem-emu")
        };
        let Target::UpmemEmu(u) = upmem.parse(&BENCH).unwrap() else { panic!("upmem-emu") };
        assert_eq!((u.dpus, u.mode, u.variant, u.emulate), (128, Some(Mode::Sequential), Variant::Barrett, None));
        assert!(u.what_if.zero_copy);
        let nearbank = TargetFlags { system: Some("rtx4090-nearbank".into()), ..flags("nearbank") };
        let Target::Nearbank(n) = nearbank.parse(&BENCH).unwrap() else { panic!("nearbank") };
        assert_eq!(n.model.system.name, "rtx4090-nearbank");
        for kind in BackendKind::ALL {
            assert_eq!(flags(kind.name()).parse(&BENCH).unwrap().kind(), kind);
        }
    }

    #[test]
    fn flags_of_another_backend_or_command_and_bad_values_are_refused() {
        let refused = |f: TargetFlags, rules: &TargetRules| f.parse(rules).unwrap_err().to_string();
        assert_eq!(refused(flags("gpu"), &BENCH), "--backend gpu is not allowed: choose cpu, upmem-emu or nearbank");
        let two = TargetRules { backends: &[BackendKind::Cpu, BackendKind::UpmemEmu], ..BENCH };
        assert!(refused(flags("nearbank"), &two).ends_with("choose cpu or upmem-emu"));
        assert!(refused(TargetFlags { mode: Some("parallel".into()), ..flags("cpu") }, &BENCH)
            .starts_with("--mode applies to --backend upmem-emu only"));
        assert!(refused(TargetFlags { system: Some("a100-nearbank".into()), ..flags("upmem-emu") }, &BENCH)
            .starts_with("--system applies to --backend nearbank only (this run uses --backend upmem-emu)"));
        assert_eq!(
            refused(TargetFlags { mode: Some("parallel".into()), ..flags("upmem-emu") }, &TargetRules::SERVER),
            "--mode does not apply to this command"
        );
        assert!(refused(TargetFlags { threads: Some(2), ..flags("upmem-emu") }, &BENCH).contains("every core"));
        assert!(TargetFlags { threads: Some(2), ..flags("upmem-emu") }.parse(&TargetRules::SERVER).is_ok());
        assert!(refused(TargetFlags { threads: Some(0), ..flags("cpu") }, &BENCH).starts_with("--threads 0"));
        assert!(refused(TargetFlags { kernel: Some("fast".into()), ..flags("upmem-emu") }, &BENCH).contains("barrett"));
    }

    #[test]
    fn a_job_runs_on_every_target_and_reports_its_cost() {
        struct Square;
        impl Job for Square {
            type Output = Vec<u32>;
            fn pricing_copy(&self) -> Option<Self> {
                Some(Square)
            }
            fn run<B: Backend>(self, device: &Device<'_, B>) -> Result<Vec<u32>> {
                let basis = RingBasis::new(16, &[97])?;
                let batch = PolyBatch::from_data(&basis, 1, Representation::Ntt, (0..16).collect())?;
                let a = device.backend.upload(batch)?;
                device.start_pricing()?;
                let product = device.backend.mul(&a, &a)?;
                let result = device.backend.download(&product)?.data().to_vec();
                device.stop_pricing()?;
                // Work after the pricing stopped is not counted: one launch, not two.
                device.backend.download(&device.backend.mul(&a, &a)?)?;
                Ok(result)
            }
        }
        let needs = DeviceNeeds { n: 16, primes: vec![97] };
        let expected: Vec<u32> = (0u32..16).map(|x| x * x % 97).collect();
        for kind in BackendKind::ALL {
            let target = TargetFlags { dpus: (kind == BackendKind::UpmemEmu).then_some(1), ..flags(kind.name()) }
                .parse(&BENCH)
                .unwrap();
            let ran = target.run(&needs, Square).unwrap();
            assert_eq!(ran.output, expected, "{}", kind.name());
            match (kind, ran.cost) {
                (BackendKind::Cpu, Cost::Cpu { threads }) => assert!(threads >= 1),
                (BackendKind::UpmemEmu, Cost::Upmem(report)) => assert_eq!(report.launches, 1),
                (BackendKind::Nearbank, Cost::Nearbank(outcome)) => assert!(outcome.cost.total_s > 0.0),
                (kind, cost) => panic!("{}: {cost:?}", kind.name()),
            }
        }
    }
}
