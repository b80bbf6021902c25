//! DRAMatic's published rows of MHY+ (its Table 2: MHY+'s NTT and iNTT on 128 DPUs) and of SEAL
//! (its Table 3: 16 CPU threads), beside DRAMatic's own row of the same operation, degree and
//! ciphertext count, as shared/reference/dramatic_calibration.csv holds them (the DRAMatic
//! reproduction keeps only DRAMatic's). Published only: pimhe models DRAMatic's rows there.

use pimhe_pim::model::reference::{self, ReferenceRow};
use serde::Serialize;

use crate::format::format_seconds;

/// One peer's published row and DRAMatic's of the same operation, degree and ciphertexts.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PeerRow {
    /// The peer's row (`MHY⁺` or `SEAL`).
    pub peer: ReferenceRow,
    /// DRAMatic's row.
    pub dramatic: ReferenceRow,
}

impl PeerRow {
    /// The peer's total (compute + transfer + retrieve) over DRAMatic's.
    pub fn total_ratio(&self) -> f64 {
        let total = |r: &ReferenceRow| r.compute_s + r.transfer_s + r.retrieve_s;
        total(&self.peer) / total(&self.dramatic)
    }
}

/// The peers' rows, or why they could not be read.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Peers {
    /// Every MHY+ and SEAL row with DRAMatic's beside it.
    Rows(Vec<PeerRow>),
    /// The reference CSV could not be read (the rest of the reproduction runs without it).
    Missing(String),
}

/// The MHY+ and SEAL rows of `rows`, each with DRAMatic's row of the same table, operation,
/// degree and ciphertext count (SEAL's modulus sizes at N >= 2^14 differ from DRAMatic's by a
/// few bits: 389 vs 377, 825 vs 812; they are paired by degree).
pub fn pair(rows: &[ReferenceRow]) -> Vec<PeerRow> {
    rows.iter()
        .filter(|r| !r.is_dramatic())
        .filter_map(|peer| {
            let dramatic = rows.iter().find(|d| {
                d.is_dramatic()
                    && (d.table, &d.operation, d.degree, d.ciphertexts)
                        == (peer.table, &peer.operation, peer.degree, peer.ciphertexts)
            })?;
            Some(PeerRow { peer: peer.clone(), dramatic: dramatic.clone() })
        })
        .collect()
}

/// The peers' rows from the reference CSV ([`reference::load_default`]).
pub fn load() -> Peers {
    match reference::load_default() {
        Ok(rows) => Peers::Rows(pair(&rows)),
        Err(e) => Peers::Missing(e.to_string()),
    }
}

/// The text: one line per peer row, DRAMatic's beside it.
pub fn text(peers: &Peers) -> String {
    let mut text =
        "\n\nDRAMatic's Tables 2 and 3 (published, shared/reference/dramatic_calibration.csv): MHY+ and SEAL \
                    beside DRAMatic (compute + transfer + retrieve)"
            .to_string();
    let rows = match peers {
        Peers::Rows(rows) => rows,
        Peers::Missing(why) => return text + &format!("\n  not printed: {why}"),
    };
    text += &format!(
        "\n  {:<6} {:<5} {:<5} {:>6} {:>11} {:>11} {:>6} {:>11} {:>9}",
        "table", "peer", "op", "N", "ciphertexts", "peer", "cores", "DRAMatic", "peer/DRA"
    );
    for r in rows {
        let total = |r: &ReferenceRow| format_seconds(r.compute_s + r.transfer_s + r.retrieve_s);
        text += &format!(
            "\n  {:<6} {:<5} {:<5} {:>6} {:>11} {:>11} {:>6} {:>11} {:>9.2}",
            r.peer.table,
            r.peer.implementation,
            r.peer.operation,
            r.peer.degree,
            r.peer.ciphertexts,
            total(&r.peer),
            r.peer.cores,
            total(&r.dramatic),
            r.total_ratio()
        );
    }
    text + "\n  cores: DPUs for MHY+, CPU threads for SEAL; DRAMatic's DPUs are in its own reproduction"
}
