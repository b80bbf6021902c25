//! The Python bindings of pimhe: a thin shell over the Rust library (contexts and presets,
//! keys, backends, ciphertext batches, encryption, evaluation, decryption, the statistics
//! workload). Every computation and check is the library's; this crate converts arguments
//! (numpy arrays, names) and erases the library's generic types for Python (`family.rs`).

mod backend;
mod batch;
mod bootstrap;
mod context;
mod crypto;
mod errors;
mod evaluator;
mod family;
mod helr;
mod keys;
mod polynomial;
mod progress;
mod reproduce;
mod scheme;
mod serial;
mod sharded;
mod stats;
mod study;

use pyo3::prelude::*;

#[pymodule]
fn _pimhe(py: Python<'_>, m: &Bound<'_, PyModule>) -> PyResult<()> {
    errors::register(py, m)?;
    m.add_class::<context::Context>()?;
    m.add_class::<backend::Backend>()?;
    m.add_class::<keys::SecretKey>()?;
    m.add_class::<keys::PublicKey>()?;
    m.add_class::<keys::RelinKey>()?;
    m.add_class::<keys::GaloisKeys>()?;
    m.add_class::<keys::KeySet>()?;
    m.add_class::<batch::CiphertextBatch>()?;
    m.add_class::<crypto::Encryptor>()?;
    m.add_class::<crypto::Decryptor>()?;
    m.add_class::<evaluator::Evaluator>()?;
    m.add_class::<polynomial::Chebyshev>()?;
    m.add_class::<bootstrap::BootstrapPlan>()?;
    m.add_class::<bootstrap::EncapsulationKeys>()?;
    m.add_function(wrap_pyfunction!(context::presets, m)?)?;
    m.add_function(wrap_pyfunction!(stats::run_stats, m)?)?;
    m.add_class::<sharded::StatsDriver>()?;
    m.add_function(wrap_pyfunction!(sharded::stats_aggregate_shard, m)?)?;
    m.add_function(wrap_pyfunction!(sharded::stats_combine, m)?)?;
    m.add_function(wrap_pyfunction!(sharded::batch_apply_shard, m)?)?;
    m.add_function(wrap_pyfunction!(sharded::workers_cost, m)?)?;
    m.add_function(wrap_pyfunction!(study::study_keygen, m)?)?;
    m.add_function(wrap_pyfunction!(study::study_encrypt, m)?)?;
    m.add_function(wrap_pyfunction!(study::study_eval, m)?)?;
    m.add_function(wrap_pyfunction!(study::study_decrypt, m)?)?;
    m.add_function(wrap_pyfunction!(study::study_server_inputs, m)?)?;
    m.add_function(wrap_pyfunction!(study::study_read_submissions, m)?)?;
    m.add_function(wrap_pyfunction!(study::study_evaluate_shard, m)?)?;
    m.add_function(wrap_pyfunction!(study::study_combine, m)?)?;
    m.add_function(wrap_pyfunction!(study::study_write_aggregates, m)?)?;
    m.add_function(wrap_pyfunction!(reproduce::reproduce_json, m)?)?;
    m.add_function(wrap_pyfunction!(reproduce::bench_kernel, m)?)?;
    m.add_function(wrap_pyfunction!(reproduce::advise_json, m)?)?;
    m.add_function(wrap_pyfunction!(reproduce::bandwidth_json, m)?)?;
    m.add_function(wrap_pyfunction!(reproduce::bootstrap_json, m)?)?;
    m.add_function(wrap_pyfunction!(reproduce::scheme_json, m)?)?;
    m.add_function(wrap_pyfunction!(bootstrap::insecure_bootstrap_context, m)?)?;
    m.add_function(wrap_pyfunction!(bootstrap::secure_bootstrap_context, m)?)?;
    m.add_function(wrap_pyfunction!(helr::helr_json, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
