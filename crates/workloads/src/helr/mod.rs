//! HELR: logistic-regression training on encrypted data (Han, Hong, Cheon and Park, "Logistic
//! Regression on Homomorphic Encrypted Data at Scale", AAAI 2019; the HELR workload of seed 003,
//! Anaheim: 32 iterations on 1024-sample batches of 14x14 MNIST), its data and plaintext side.
//!
//! - [`data`]: a CSV of numeric feature columns and a 0/1 label column read into
//!   [`LabeledData`] (with the CSV reader and limits of [`crate::stats::Dataset`]), and
//!   synthetic separable data from a seed;
//! - [`split`]: the seeded train/test split and the standardization fitted on the training split
//!   only;
//! - [`sigmoid`]: the degree-3 least-squares sigmoid that CKKS can evaluate;
//! - [`train`]: the plaintext reference trainer, mini-batch Nesterov accelerated gradient, in
//!   the arithmetic the encrypted trainer will perform, and the held-out evaluation;
//! - [`packing`]: how a batch sits in CKKS slots so that one iteration is a few rotations and
//!   multiplications (the design the encrypted trainer follows), with a slot-level simulation
//!   of one gradient;
//! - [`encrypted`]: the trainer on encrypted batches and weights, on any backend, with
//!   bootstrapping (INSECURE parameters for now).
//!
//! ```
//! use pimhe_workloads::helr::{run, ConstantFeatures, LabeledData, RunConfig};
//! let data = LabeledData::synthetic_separable(400, 4, 7).unwrap().data;
//! let config = RunConfig { constant_features: ConstantFeatures::Refuse, ..RunConfig::default() };
//! let report = run(&data, &config).unwrap();
//! assert!(report.test.accuracy > 0.9);
//! ```

pub mod data;
pub mod encrypted;
pub mod packing;
pub mod sigmoid;
pub mod split;
pub mod train;

pub use data::{LabeledData, Synthetic};
pub use packing::Packing;
pub use sigmoid::{Sigmoid, SigmoidPoly};
pub use split::{ConstantFeatures, Split, Standardization};
pub use train::{evaluate, run, train, Evaluation, Nesterov, RunConfig, RunReport, Step, TrainConfig, TrainReport};

use crate::stats::StatsError;

/// Why HELR data could not be read, split or trained on.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum HelrError {
    /// Bad input data or arguments: what is wrong, where, and what is allowed.
    #[error("{0}")]
    Input(String),
    /// More than the memory or the slots of a ciphertext hold.
    #[error("{0}")]
    Capacity(String),
    /// The weights stopped being finite numbers (the polynomial sigmoid outside its interval).
    #[error("{0}")]
    Diverged(String),
    /// The encrypted computation failed (keys, parameters, levels): the scheme's message.
    #[error("the encrypted computation failed: {0}")]
    Encrypted(String),
}

impl From<StatsError> for HelrError {
    fn from(e: StatsError) -> Self {
        match e {
            StatsError::Capacity(m) => HelrError::Capacity(m),
            other => HelrError::Input(other.to_string()),
        }
    }
}

/// Column names a message lists, so that a header of thousands is not echoed whole.
const LISTED_NAMES: usize = 16;

/// `names` quoted and joined for a message, cut after [`LISTED_NAMES`] with the total.
fn listed<S: AsRef<str>>(names: &[S]) -> String {
    let mut shown: Vec<String> = names.iter().take(LISTED_NAMES).map(|n| format!("'{}'", n.as_ref())).collect();
    if names.len() > LISTED_NAMES {
        shown.push(format!("... ({} in all)", names.len()));
    }
    shown.join(", ")
}
