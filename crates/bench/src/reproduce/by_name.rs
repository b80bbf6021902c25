//! Every paper's reproduction by its name, with its options as JSON: what a shell that names
//! the paper at run time calls (Python's `pimhe.reproduce(name, **options)`).
//!
//! ```
//! use pimhe_bench::reproduce::by_name;
//! use pimhe_bench::NoProgress;
//!
//! assert_eq!(by_name::NAMES, ["dramatic", "mhy", "gupta", "anaheim", "ceram"]);
//! let json = by_name::run("ceram", serde_json::json!({"skip_cpu": true}), &NoProgress).unwrap();
//! let report: serde_json::Value = serde_json::from_str(&json).unwrap();
//! assert_eq!((report["paper"].as_str(), report["model"].as_str()), (Some("ceram"), Some("ceram@1 (modeled)")));
//!
//! // Unknown papers and options are usage errors naming the allowed ones.
//! let error = by_name::run("ceram", serde_json::json!({"skip": true}), &NoProgress).unwrap_err();
//! assert!(error.is_usage() && error.to_string().contains("expected one of `skip_cpu`, `repeat`"), "{error}");
//! let error = by_name::run("sealpir", serde_json::json!({}), &NoProgress).unwrap_err();
//! assert_eq!(error.to_string(), "no reproduction is named \"sealpir\": choose one of dramatic, mhy, gupta, anaheim, ceram");
//! ```

use pimhe_workloads::progress::Progress;

use super::anaheim::Anaheim;
use super::ceram::Ceram;
use super::dramatic::Dramatic;
use super::gupta::Gupta;
use super::mhy::Mhy;
use super::{run_with_options, Reproduction};
use crate::error::{BenchError, Result};

/// The papers, in the seeds' order.
pub const NAMES: [&str; 5] = [Dramatic::NAME, Mhy::NAME, Gupta::NAME, Anaheim::NAME, Ceram::NAME];

/// Runs the paper `name` with `options` (see [`run_with_options`]) and returns its whole
/// report as JSON ([`super::report_json`]).
pub fn run(name: &str, options: serde_json::Value, progress: &dyn Progress) -> Result<String> {
    match name {
        Dramatic::NAME => run_with_options::<Dramatic>(options, progress),
        Mhy::NAME => run_with_options::<Mhy>(options, progress),
        Gupta::NAME => run_with_options::<Gupta>(options, progress),
        Anaheim::NAME => run_with_options::<Anaheim>(options, progress),
        Ceram::NAME => run_with_options::<Ceram>(options, progress),
        _ => Err(BenchError::usage(format!("no reproduction is named {name:?}: choose one of {}", NAMES.join(", ")))),
    }
}
