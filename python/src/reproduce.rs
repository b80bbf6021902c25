//! `reproduce_dramatic`: the library's reproduction of DRAMatic's tables
//! (`pimhe_bench::reproduce`, what `pimhe bench reproduce dramatic` prints), as plain Python
//! data for `pimhe.plots`.

use pyo3::prelude::*;

use pimhe_bench::reproduce::{reproduce, ReproduceConfig};
use pimhe_bench::NoProgress;

use crate::errors::{error, Kind};

/// The modeled rows (and the target summary when selected) beside the published values, as a
/// JSON string that `pimhe.plots` reads: one object per row with `id`, `table`, `op`, `n`,
/// `ciphertexts`, `dpus`, `compute_s`, `transfer_s`, `retrieve_s`, `energy_j`, `model` and
/// the `published_*` values where the paper has them.
#[pyfunction]
#[pyo3(signature = (kernel="barrett", rows=None))]
pub fn reproduce_dramatic(py: Python<'_>, kernel: &str, rows: Option<String>) -> PyResult<String> {
    let config = ReproduceConfig { kernel: kernel.to_string(), rows, ..ReproduceConfig::default() };
    let report = py.allow_threads(|| reproduce(&config, &NoProgress)).map_err(|e| {
        let kind = if e.is_usage() { Kind::Parameter } else { Kind::Base };
        error(kind, e.to_string())
    })?;
    serde_json::to_string(&report).map_err(|e| error(Kind::Base, e.to_string()))
}
