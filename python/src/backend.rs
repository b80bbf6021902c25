//! `Backend`: where ciphertexts live and operations run: the CPU (`CpuBackend`), emulated
//! UPMEM DPUs (`PimBackend`, with the modeled report) or Anaheim's GPU + near-bank PIM
//! (`NearbankBackend`: computed on the host, the recorded program priced by the model).

use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};

use pyo3::prelude::*;

use pimhe_bench::target::nearbank::NearbankOutcome;
use pimhe_bench::target::upmem::DEFAULT_DPUS;
use pimhe_bench::target::{BackendKind, NearbankTarget, Target, UpmemTarget};
use pimhe_exec::CpuBackend;
use pimhe_nearbank::model::Model;
use pimhe_nearbank::NearbankBackend;
use pimhe_pim::layout::Variant;
use pimhe_pim::model::ModelVersion;
use pimhe_pim::runtime::placement::Mode;
use pimhe_pim::runtime::{OffloadReport, PimBackend, PimConfig, MAX_DPUS};
use pimhe_schemes::rlwe::RlweScheme;

use crate::by_scheme;
use crate::context::AnyContext;
use crate::errors::{error, parameter, IntoPy, Kind};
use crate::family::{DevFamily, OnDev};

/// `Arc<B>`: a backend.
pub struct ArcF;
impl DevFamily for ArcF {
    type On<B: crate::family::Dev> = Arc<B>;
}

/// A backend ready to run a context's operations.
pub type DevHandle = OnDev<ArcF>;

/// The backend keygen and every object made without `backend=` use: all cores.
pub fn default_cpu() -> PyResult<Arc<CpuBackend>> {
    static DEFAULT: OnceLock<Arc<CpuBackend>> = OnceLock::new();
    if let Some(cpu) = DEFAULT.get() {
        return Ok(cpu.clone());
    }
    let cpu = Arc::new(CpuBackend::new(None).py_err()?);
    Ok(DEFAULT.get_or_init(|| cpu).clone())
}

/// Every prime a backend must serve for a context's operations (BFV's BEHZ primes included),
/// so that a PIM backend is built with all of them resident.
pub fn backend_primes(ctx: &AnyContext) -> Vec<u32> {
    by_scheme!(ctx, S, c => c.backend_primes())
}

/// A PIM backend: its configuration, and the device once a context has set it up (a
/// `PimBackend` serves one ring degree and set of primes).
pub struct PimSlot {
    pub config: PimConfig,
    bound: Mutex<Option<BoundPim>>,
}

/// The ring degree and primes a PIM backend was set up for, and the backend.
type BoundPim = (usize, Vec<u32>, Arc<PimBackend>);

// The slot's lock is only ever waited for with the GIL released: a thread setting the device up
// holds it while it runs without the GIL, and needs the GIL back to return.
impl PimSlot {
    /// The device, set up now for ring degree `n` and `primes` if no context has set it up yet,
    /// with what it was set up for. Call it with the GIL released.
    fn bind(&self, n: usize, primes: &[u32]) -> pimhe_exec::Result<BoundPim> {
        let mut bound = self.lock();
        if let Some(set_up) = bound.as_ref() {
            return Ok(set_up.clone());
        }
        let pim = Arc::new(PimBackend::new(self.config.clone(), n, primes)?);
        *bound = Some((n, primes.to_vec(), pim.clone()));
        Ok((n, primes.to_vec(), pim))
    }

    /// The device, if a context has set it up (waiting for a setup under way without the GIL).
    fn device(&self, py: Python<'_>) -> Option<Arc<PimBackend>> {
        py.allow_threads(|| self.lock().as_ref().map(|(_, _, pim)| pim.clone()))
    }

    fn lock(&self) -> MutexGuard<'_, Option<BoundPim>> {
        // A setup that panicked left nothing bound, so the state is whole: use it as it is.
        self.bound.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

enum Inner {
    Cpu(Arc<CpuBackend>),
    Pim(Box<PimSlot>),
    Nearbank(Arc<NearbankBackend>, Box<Model>),
}

/// Where ciphertexts live and operations run.
///
/// `Backend.cpu(threads)` runs on the host's cores. `Backend.upmem_emu(dpus, mode, variant)`
/// runs the UPMEM DPU kernels on an emulator and models what real DPUs would take
/// (`report()`); it is set up for the first context it serves (its ring degree and primes) and
/// refuses others. `Backend.nearbank(system, buffer_entries)` computes on the host and models
/// what a GPU with near-bank PIM (Anaheim) would take for the work run on it (`report()`).
#[pyclass(frozen, module = "pimhe._pimhe")]
pub struct Backend {
    /// Where it computes, as the library's commands take it (`pimhe_bench::target`): what the
    /// workloads (`pimhe.stats`, the benchmarks) run on.
    target: Target,
    /// The live device the context-level objects (keys, ciphertexts, evaluators) use.
    inner: Inner,
}

/// The kernel arithmetic of a variant name.
fn variant(name: &str) -> PyResult<Variant> {
    match name {
        "best" => Ok(Variant::Best),
        "barrett" => Ok(Variant::Barrett),
        other => Err(parameter(format!("variant {other:?} is not known; choose best or barrett"))),
    }
}

impl Backend {
    /// A backend by name, as the CLI spells them (`upmem_emu` too), with its defaults.
    pub fn named(name: &str) -> PyResult<Self> {
        let kind = BackendKind::parse(&name.replace('_', "-"), &BackendKind::ALL).py_err()?;
        match kind {
            BackendKind::Cpu => Self::cpu(None),
            BackendKind::UpmemEmu => {
                Self::upmem_emu(DEFAULT_DPUS, "parallel", "best", None, ModelVersion::default().name())
            }
            BackendKind::Nearbank => Self::nearbank(pimhe_bench::target::nearbank::DEFAULT_SYSTEM, None, None),
        }
    }

    /// Where it computes, for the library's workloads.
    pub fn target(&self) -> &Target {
        &self.target
    }

    /// The backend for `ctx`'s operations (setting up the PIM device on first use).
    pub fn handle(&self, py: Python<'_>, ctx: &AnyContext) -> PyResult<DevHandle> {
        match &self.inner {
            Inner::Cpu(cpu) => Ok(OnDev::Cpu(cpu.clone())),
            Inner::Nearbank(nearbank, _) => Ok(OnDev::Nearbank(nearbank.clone())),
            Inner::Pim(slot) => {
                let n = ctx.rlwe().degree();
                let primes = backend_primes(ctx);
                let (bn, bprimes, pim) = py.allow_threads(|| slot.bind(n, &primes)).py_err()?;
                if bn != n || bprimes != primes {
                    return Err(crate::errors::mismatch(format!(
                        "this upmem-emu backend was set up for N = {bn} and primes {bprimes:?}; the {} context has N = \
                         {n} and primes {primes:?}: make another Backend.upmem_emu() for it",
                        by_scheme!(ctx, S, _c => S::NAME)
                    )));
                }
                Ok(OnDev::Pim(pim))
            }
        }
    }

    /// The configuration of a PIM backend (None for the CPU).
    pub fn pim_config(&self) -> Option<&PimConfig> {
        match &self.inner {
            Inner::Pim(slot) => Some(&slot.config),
            _ => None,
        }
    }

    /// The near-bank backend and its model, if this is one.
    pub fn nearbank_backend(&self) -> Option<(Arc<NearbankBackend>, Model)> {
        match &self.inner {
            Inner::Nearbank(nearbank, model) => Some((nearbank.clone(), (**model).clone())),
            _ => None,
        }
    }

    /// The CPU backend, if this is one.
    pub fn cpu_backend(&self) -> Option<Arc<CpuBackend>> {
        match &self.inner {
            Inner::Cpu(cpu) => Some(cpu.clone()),
            _ => None,
        }
    }
}

/// A backend argument: a `Backend`, a name ("cpu", "upmem-emu"), or None (the default CPU).
pub fn resolve(py: Python<'_>, backend: Option<&Bound<'_, PyAny>>, ctx: &AnyContext) -> PyResult<DevHandle> {
    match backend {
        None => Ok(OnDev::Cpu(default_cpu()?)),
        Some(b) if b.is_none() => Ok(OnDev::Cpu(default_cpu()?)),
        Some(b) => {
            if let Ok(backend) = b.downcast::<Backend>() {
                backend.get().handle(py, ctx)
            } else if let Ok(name) = b.extract::<String>() {
                Backend::named(&name)?.handle(py, ctx)
            } else {
                Err(parameter(format!(
                    "backend must be a pimhe.Backend or a name (cpu, upmem-emu, nearbank), not {}",
                    b.get_type().name()?
                )))
            }
        }
    }
}

/// A report as a Python `UpmemReport` (defined in `pimhe/_reports.py`).
pub fn report_object(py: Python<'_>, report: &OffloadReport, config: &PimConfig) -> PyResult<PyObject> {
    let mut value = serde_json::to_value(report).map_err(|e| error(Kind::Base, e.to_string()))?;
    if let Some(map) = value.as_object_mut() {
        map.insert("model_name".into(), config.model.name.into());
        map.insert("model_version".into(), config.model.version.into());
        map.insert("dpus".into(), config.dpus.into());
        map.insert("mode".into(), config.mode.name().into());
        map.insert("variant".into(), variant_name(config.variant).into());
        map.insert("total_s".into(), report.total_s().into());
    }
    let json = value.to_string();
    Ok(py.import("pimhe._reports")?.getattr("UpmemReport")?.call_method1("_from_json", (json,))?.unbind())
}

fn variant_name(variant: Variant) -> &'static str {
    match variant {
        Variant::Barrett => "barrett",
        Variant::Best => "best",
    }
}

#[pymethods]
impl Backend {
    /// The CPU backend with `threads` worker threads (all cores when None).
    #[staticmethod]
    #[pyo3(signature = (threads=None))]
    pub fn cpu(threads: Option<usize>) -> PyResult<Self> {
        Ok(Self { target: Target::Cpu { threads }, inner: Inner::Cpu(Arc::new(CpuBackend::new(threads).py_err()?)) })
    }

    /// Emulated UPMEM DPUs (`PimConfig`): `dpus` (1..=2560), `mode` "parallel" (a DPU group per
    /// prime), "sequential" (all DPUs, one prime after another), "ciphertext-major" (each DPU
    /// whole polynomials with all their limbs: key and modulus switching run on the DPUs, no CPU
    /// fallback) or "hybrid" (a DPU group per prime, the conversions on coefficient slices over
    /// every DPU, no CPU fallback; the CLI's `--mode auto` picks among these by modeled cost),
    /// kernel `variant` "best" or
    /// "barrett" (DRAMatic's), `tasklets` per DPU (default 16), `model` "upmem-v1b@1" or
    /// "upmem-v1b@2" (launches priced per barrier interval, transfers parallel across ranks).
    /// Times and energy in `report()` are modeled (by that model), not measured.
    #[staticmethod]
    #[pyo3(signature = (dpus=64, mode="parallel", variant="best", tasklets=None, model="upmem-v1b@2"))]
    pub fn upmem_emu(dpus: usize, mode: &str, variant: &str, tasklets: Option<u32>, model: &str) -> PyResult<Self> {
        // Checked here, where the arguments are given, rather than when a context first sets the
        // device up (only the DPUs each prime needs depend on the context).
        if !(1..=MAX_DPUS).contains(&dpus) {
            return Err(parameter(format!("dpus={dpus} is not allowed: an UPMEM system has 1 ..= {MAX_DPUS} DPUs")));
        }
        let mode: Mode = mode.parse().map_err(|e: String| parameter(e))?;
        let version =
            ModelVersion::parse(model).map_err(|e| parameter(format!("model={model:?} is not allowed: {e}")))?;
        let mut config = PimConfig::new(dpus, mode);
        config.model = version.model();
        config.variant = self::variant(variant)?;
        if let Some(t) = tasklets {
            let (generation, max) = (config.emulator.generation, config.emulator.generation.max_tasklets());
            if !(1..=max).contains(&t) {
                return Err(parameter(format!("tasklets={t} is not allowed: a {generation} DPU runs 1 ..= {max}")));
            }
            config.emulator.tasklets = t;
            config.model.tasklets = t;
        }
        let target = Target::UpmemEmu(UpmemTarget {
            mode: Some(mode),
            variant: config.variant,
            tasklets,
            model: version,
            ..UpmemTarget::new(dpus)
        });
        Ok(Self { target, inner: Inner::Pim(Box::new(PimSlot { config, bound: Mutex::new(None) })) })
    }

    /// Anaheim's GPU with near-bank PIM: `system` "a100-nearbank", "a100-custom-hbm" or
    /// "rtx4090-nearbank" (Table III), `buffer_entries` B of each PIM unit (the system's by
    /// default), `threads` of the host computing the results (all cores when None). Results are
    /// the CPU backend's, bit for bit; `report()` gives the recorded program's cost, **modeled**
    /// by the anaheim-nb model, beside the same program on the GPU alone.
    #[staticmethod]
    #[pyo3(signature = (system="a100-nearbank", buffer_entries=None, threads=None))]
    pub fn nearbank(system: &str, buffer_entries: Option<usize>, threads: Option<usize>) -> PyResult<Self> {
        let model = pimhe_bench::target::nearbank::model(Some(system), buffer_entries).py_err()?;
        let backend = NearbankBackend::new(threads).py_err()?;
        let target = Target::Nearbank(NearbankTarget { model: model.clone(), threads });
        Ok(Self { target, inner: Inner::Nearbank(Arc::new(backend), Box::new(model)) })
    }

    /// A backend by name: "cpu", "upmem-emu" or "nearbank" (with its defaults).
    #[staticmethod]
    fn from_name(name: &str) -> PyResult<Self> {
        Self::named(name)
    }

    /// "cpu", "upmem-emu" or "nearbank".
    #[getter]
    fn name(&self) -> &'static str {
        self.target.name()
    }

    /// CPU worker threads (the host threads of the emulator's fallbacks for upmem-emu).
    #[getter]
    fn threads(&self, py: Python<'_>) -> usize {
        use pimhe_exec::Backend as _;
        match &self.inner {
            Inner::Cpu(cpu) => cpu.threads(),
            Inner::Nearbank(nearbank, _) => nearbank.threads(),
            Inner::Pim(slot) => match slot.device(py) {
                Some(pim) => pim.threads(),
                None => std::thread::available_parallelism().map_or(1, |n| n.get()),
            },
        }
    }

    /// Number of DPUs (upmem-emu); None for the CPU.
    #[getter]
    fn dpus(&self) -> Option<usize> {
        self.pim_config().map(|c| c.dpus)
    }

    /// What everything run on it cost so far, modeled. upmem-emu: an `UpmemReport` (transfer,
    /// compute and retrieve seconds, energy, launches, fallbacks to the host, bytes, kernel
    /// counts; pending DPU commands run first). nearbank: a `NearbankReport` (GPU, PIM and
    /// switching seconds, energy, EDP, beside "w/o PIM"; the instructions by kind). None for the
    /// CPU backend (it measures nothing).
    fn report(&self, py: Python<'_>) -> PyResult<Option<PyObject>> {
        if let Inner::Nearbank(nearbank, model) = &self.inner {
            let outcome = py.allow_threads(|| NearbankOutcome::of(model, &nearbank.trace()));
            let json = serde_json::to_string(&outcome).map_err(|e| error(Kind::Base, e.to_string()))?;
            let reports = py.import("pimhe._reports")?;
            return Ok(Some(reports.getattr("NearbankReport")?.call_method1("_from_json", (json,))?.unbind()));
        }
        let Inner::Pim(slot) = &self.inner else { return Ok(None) };
        let report = match slot.device(py) {
            Some(pim) => py.allow_threads(|| pim.report()).py_err()?,
            None => OffloadReport { model: slot.config.model.label(), ..OffloadReport::default() },
        };
        Ok(Some(report_object(py, &report, &slot.config)?))
    }

    /// Clears the accumulated report (upmem-emu: pending commands run and are counted first;
    /// nearbank: the recorded program is dropped).
    fn reset_report(&self, py: Python<'_>) -> PyResult<()> {
        match &self.inner {
            // Its trace is behind a lock too: waited for without the GIL.
            Inner::Nearbank(nearbank, _) => py.allow_threads(|| {
                nearbank.take_trace();
            }),
            Inner::Pim(slot) => {
                if let Some(pim) = slot.device(py) {
                    py.allow_threads(|| pim.reset_report()).py_err()?;
                }
            }
            Inner::Cpu(_) => {}
        }
        Ok(())
    }

    fn __repr__(&self) -> String {
        match &self.inner {
            Inner::Cpu(cpu) => {
                use pimhe_exec::Backend as _;
                format!("Backend.cpu(threads={})", cpu.threads())
            }
            Inner::Nearbank(nearbank, model) => {
                use pimhe_exec::Backend as _;
                format!(
                    "Backend.nearbank(system={:?}, buffer_entries={}, threads={})",
                    model.system.name,
                    model.buffer_entries,
                    nearbank.threads()
                )
            }
            Inner::Pim(slot) => format!(
                "Backend.upmem_emu(dpus={}, mode={:?}, variant={:?}, tasklets={})",
                slot.config.dpus,
                slot.config.mode.name(),
                variant_name(slot.config.variant),
                slot.config.emulator.tasklets
            ),
        }
    }
}
