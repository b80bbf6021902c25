//! Shared by the model tests that check against DRAMatic's published measurements.

use pimhe_pim::model::reference::{self, ReferenceRow};

/// The rows of shared/reference/dramatic_calibration.csv, or `None` (test skipped, reason
/// printed) when the file is absent — unless `PIMHE_REQUIRE_REFERENCE` is set, which makes a
/// missing file a failure.
pub fn rows() -> Option<Vec<ReferenceRow>> {
    match reference::load_default() {
        Ok(rows) => Some(rows),
        Err(e) if std::env::var_os("PIMHE_REQUIRE_REFERENCE").is_none() => {
            eprintln!("skipped: {e}");
            None
        }
        Err(e) => panic!("{e}"),
    }
}
