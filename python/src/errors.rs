//! The exception hierarchy: `PimheError` and one subclass per kind of error the library
//! distinguishes, those caused by bad arguments also subclasses of `ValueError`. The Rust
//! error's message is the exception's message.

use pimhe_schemes::SchemeError;
use pimhe_workloads::stats::StatsError;
use pyo3::exceptions::{PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::GILOnceCell;
use pyo3::types::{PyDict, PyTuple, PyType};

/// The exception classes, made when the module is imported.
struct Classes {
    base: Py<PyType>,
    parameter: Py<PyType>,
    plaintext: Py<PyType>,
    mismatch: Py<PyType>,
    level: Py<PyType>,
    noise: Py<PyType>,
    missing_key: Py<PyType>,
    backend: Py<PyType>,
    capacity: Py<PyType>,
    format: Py<PyType>,
}

static CLASSES: GILOnceCell<Classes> = GILOnceCell::new();

/// Which class an error raises.
#[derive(Clone, Copy)]
pub enum Kind {
    /// Anything else from the library.
    Base,
    /// Parameters that cannot work, insecure parameters, bad arguments.
    Parameter,
    /// Values the plaintext space cannot hold (too many, out of range).
    Plaintext,
    /// Objects of different contexts, schemes, backends, levels, batch sizes combined.
    Mismatch,
    /// No level left to switch to or rescale into.
    Level,
    /// The noise budget is used up.
    Noise,
    /// Relinearization or rotation without its key.
    MissingKey,
    /// The backend failed (setup, device).
    Backend,
    /// A workload too large for exact results or for memory.
    Capacity,
    /// Serialized data that is malformed or made for other parameters.
    Format,
}

const CLASS_DOCS: [(&str, &str, bool); 9] = [
    ("ParameterError", "Parameters or arguments that cannot work (also a ValueError).", true),
    ("PlaintextError", "Values the plaintext space cannot hold: too many, or out of range (also a ValueError).", true),
    (
        "MismatchError",
        "Objects of different contexts, schemes, backends, levels or batch sizes combined (also a ValueError).",
        true,
    ),
    ("LevelError", "No level left: modulus switching or rescaling at the last level.", false),
    ("NoiseBudgetError", "The noise budget is exhausted: the decryption would be wrong.", false),
    ("MissingKeyError", "Relinearization or an automorphism without its evaluation key.", false),
    ("BackendError", "The backend failed (setup, device, shapes).", false),
    ("CapacityError", "A workload too large for exact results with these parameters, or for memory.", false),
    (
        "FormatError",
        "Serialized data that is malformed (truncated, damaged, another version) or made for other parameters \
         (also a ValueError).",
        true,
    ),
];

/// Makes the classes and adds them to the module.
pub fn register(py: Python<'_>, m: &Bound<'_, PyModule>) -> PyResult<()> {
    let builtins = py.import("builtins")?;
    let type_ = builtins.getattr("type")?;
    let exception = builtins.getattr("Exception")?;
    let value_error = py.get_type::<PyValueError>();
    let make = |name: &str, bases: Bound<'_, PyTuple>, doc: &str| -> PyResult<Py<PyType>> {
        let dict = PyDict::new(py);
        dict.set_item("__doc__", doc)?;
        dict.set_item("__module__", "pimhe")?;
        let class = type_.call1((name, bases, dict))?;
        m.add(name, &class)?;
        Ok(class.downcast_into::<PyType>()?.unbind())
    };
    let base = make(
        "PimheError",
        PyTuple::new(py, [exception])?,
        "Base class of every error pimhe raises; the message is the Rust library's.",
    )?;
    let mut made = Vec::new();
    for (name, doc, is_value_error) in CLASS_DOCS {
        let bases = if is_value_error {
            PyTuple::new(py, [base.bind(py).clone().into_any(), value_error.clone().into_any()])?
        } else {
            PyTuple::new(py, [base.bind(py).clone().into_any()])?
        };
        made.push(make(name, bases, doc)?);
    }
    let mut made = made.into_iter();
    let mut next = || made.next().expect("one class per entry");
    let classes = Classes {
        base,
        parameter: next(),
        plaintext: next(),
        mismatch: next(),
        level: next(),
        noise: next(),
        missing_key: next(),
        backend: next(),
        capacity: next(),
        format: next(),
    };
    let _ = CLASSES.set(py, classes);
    Ok(())
}

/// An exception of `kind` with `message`.
pub fn error(kind: Kind, message: impl Into<String>) -> PyErr {
    let message = message.into();
    Python::with_gil(|py| match CLASSES.get(py) {
        Some(c) => {
            let class = match kind {
                Kind::Base => &c.base,
                Kind::Parameter => &c.parameter,
                Kind::Plaintext => &c.plaintext,
                Kind::Mismatch => &c.mismatch,
                Kind::Level => &c.level,
                Kind::Noise => &c.noise,
                Kind::MissingKey => &c.missing_key,
                Kind::Backend => &c.backend,
                Kind::Capacity => &c.capacity,
                Kind::Format => &c.format,
            };
            PyErr::from_type(class.bind(py).clone(), message)
        }
        None => PyRuntimeError::new_err(message),
    })
}

/// The exception of a scheme error.
pub fn scheme_error(e: SchemeError) -> PyErr {
    let kind = match &e {
        SchemeError::InvalidParameters(_) | SchemeError::Insecure { .. } | SchemeError::Math(_) => Kind::Parameter,
        SchemeError::TooManyValues { .. } | SchemeError::PlaintextOverflow { .. } => Kind::Plaintext,
        SchemeError::ParameterMismatch(_)
        | SchemeError::LevelMismatch { .. }
        | SchemeError::CountMismatch { .. }
        | SchemeError::WrongSize { .. } => Kind::Mismatch,
        SchemeError::LevelExhausted => Kind::Level,
        SchemeError::NoiseBudgetExhausted { .. } => Kind::Noise,
        SchemeError::KeySwitchingUnavailable(_) => Kind::MissingKey,
        SchemeError::Exec(_) | SchemeError::Ring(_) => Kind::Backend,
        SchemeError::Format(_) => Kind::Format,
        SchemeError::Io(message) => return PyOSError::new_err(message.clone()),
    };
    error(kind, e.to_string())
}

/// The exception of a backend error.
pub fn exec_error(e: pimhe_exec::ExecError) -> PyErr {
    error(Kind::Backend, e.to_string())
}

/// The exception of a statistics error.
pub fn stats_error(e: StatsError) -> PyErr {
    match e {
        StatsError::Input(m) => error(Kind::Parameter, python_names(&m)),
        StatsError::Capacity(m) => error(Kind::Capacity, python_names(&m)),
        StatsError::Integrity(m) => error(Kind::Base, m),
        StatsError::Scheme(e) => scheme_error(e),
    }
}

/// A benchmark library error as the exception of its kind: the caller's (ParameterError) or a
/// failure.
pub fn bench_error(e: pimhe_bench::BenchError) -> PyErr {
    let kind = if e.is_usage() { Kind::Parameter } else { Kind::Base };
    error(kind, python_names(&e.to_string()))
}

/// The Python argument of each CLI flag that Python does not spell as the flag with `_` for `-`.
const RENAMED_FLAGS: [(&str, &str); 1] = [("what-if", "what_ifs")];

/// The words that follow a flag given without its value in the library's messages ("--threads
/// applies to ...", "lower --primes or --n"); any other word after a flag is the flag's value.
const AFTER_A_BARE_FLAG: [&str; 4] = ["applies", "does", "must", "or"];

/// A message of the statistics and benchmark libraries, which word their errors for the CLI that
/// prints them ("--batch 0 is not allowed"), with the Python arguments named instead ("batch=0 is
/// not allowed"; "lower primes or n"). The CLI must keep printing its flags, so the translation is
/// made here, for the functions that pass these messages on to Python.
fn python_names(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(at) = rest.find("--") {
        let (before, from) = rest.split_at(at);
        let after_dashes = &from[2..];
        let flag_len = after_dashes
            .find(|c: char| !(c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'))
            .unwrap_or(after_dashes.len());
        let flag = &after_dashes[..flag_len];
        out.push_str(before);
        // A flag starts a word and with a letter ("--n"; not a range "1--2" or a rule "----").
        let starts_word = !before.ends_with(|c: char| c.is_alphanumeric());
        if !starts_word || !flag.starts_with(|c: char| c.is_ascii_lowercase()) {
            out.push_str("--");
            rest = after_dashes;
            continue;
        }
        match RENAMED_FLAGS.iter().find(|(cli, _)| *cli == flag) {
            Some((_, python)) => out.push_str(python),
            None => out.push_str(&flag.replace('-', "_")),
        }
        rest = &after_dashes[flag_len..];
        let value = rest.strip_prefix(' ').and_then(|r| r.split_whitespace().next()).filter(|word| {
            let word = word.trim_end_matches([',', ';', ':', ')']);
            !word.is_empty() && !word.starts_with('(') && !AFTER_A_BARE_FLAG.contains(&word)
        });
        if value.is_some() {
            out.push('=');
            rest = &rest[1..];
        }
    }
    out.push_str(rest);
    out
}

/// Shorthand: a `ParameterError`.
pub fn parameter(message: impl Into<String>) -> PyErr {
    error(Kind::Parameter, message)
}

/// Shorthand: a `MismatchError`.
pub fn mismatch(message: impl Into<String>) -> PyErr {
    error(Kind::Mismatch, message)
}

/// Maps library results to Python results.
pub trait IntoPy<T> {
    fn py_err(self) -> PyResult<T>;
}

impl<T> IntoPy<T> for Result<T, SchemeError> {
    fn py_err(self) -> PyResult<T> {
        self.map_err(scheme_error)
    }
}

impl<T> IntoPy<T> for Result<T, pimhe_exec::ExecError> {
    fn py_err(self) -> PyResult<T> {
        self.map_err(exec_error)
    }
}

impl<T> IntoPy<T> for Result<T, StatsError> {
    fn py_err(self) -> PyResult<T> {
        self.map_err(stats_error)
    }
}

impl<T> IntoPy<T> for Result<T, pimhe_bench::BenchError> {
    fn py_err(self) -> PyResult<T> {
        self.map_err(bench_error)
    }
}
