//! Table 6: CE-RAM (modeled) against the CPUs measured here and the paper's.

use pimhe_ceram::model::CeramModel;
use pimhe_schemes::bfv::special::SpecialCase;
use serde::{Deserialize, Serialize};

use super::cpu::CpuColumn;
use super::model::{model_params, price};
use super::published::{PUBLISHED_TABLE_6, PUBLISHED_TABLE_7_ACTUAL, TABLE_6_OPS};
use crate::error::Result;

/// A published Table 6 speedup with the CPU time it implies.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PublishedSpeedup {
    /// CPU-Server, CPU-Laptop, CPU-Workstation.
    pub cpu: String,
    /// Table 6.
    pub speedup: f64,
    /// Table 6's speedup / Table 7's actual operations per second: the paper's CPU time.
    pub implied_cpu_s: f64,
}

/// A measured speedup.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MeasuredSpeedup {
    /// The CPU column's label.
    pub cpu: String,
    /// CPU time / CE-RAM time; `None` where the CPU was not measured.
    pub speedup: Option<f64>,
}

/// One case and operation of Table 6.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Table6Row {
    /// Row id, e.g. `t6-A-multiply`.
    pub id: String,
    /// The case.
    pub case: String,
    /// The operation.
    pub op: String,
    /// CE-RAM's modeled time with NTT and the actual transfer.
    pub ceram_s: f64,
    /// The paper's CE-RAM time (1 / Table 7's actual operations per second).
    pub published_ceram_s: f64,
    /// Speedups over the CPUs measured here.
    pub measured: Vec<MeasuredSpeedup>,
    /// The paper's, per CPU.
    pub published: Vec<PublishedSpeedup>,
}

/// pimhe's cpu backend against SEAL on one operation, the same run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CpuComparison {
    /// The operation.
    pub op: String,
    /// pimhe's median per ciphertext.
    pub pimhe_s: f64,
    /// Per SEAL column: its median and SEAL / pimhe (above 1: pimhe is faster).
    pub seal: Vec<(String, Option<f64>, Option<f64>)>,
}

/// Table 6.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Table6 {
    /// The CPU columns measured in this run (empty when skipped).
    pub cpus: Vec<CpuColumn>,
    /// Why the CPU side was not measured, if it was not.
    pub skipped: Option<String>,
    /// Rows per case and operation.
    pub rows: Vec<Table6Row>,
    /// pimhe vs SEAL per operation.
    pub pimhe_vs_seal: Vec<CpuComparison>,
}

/// Table 6 from the modeled CE-RAM times and the CPU columns.
pub fn table_6(model: &CeramModel, cpus: Vec<CpuColumn>, skipped: Option<String>) -> Result<Table6> {
    let mut rows = Vec::new();
    for case in SpecialCase::ALL {
        let params = model_params(case, true);
        for (i, op) in TABLE_6_OPS.into_iter().enumerate() {
            let ceram_s = price(model, op, &params)?.total_actual_s();
            let actual = PUBLISHED_TABLE_7_ACTUAL.iter().find(|(c, _)| *c == case).map(|r| r.1[i]).unwrap();
            let measured = cpus
                .iter()
                .map(|c| MeasuredSpeedup {
                    cpu: c.label.clone(),
                    speedup: c.measured.as_ref().and_then(|m| m.median_s.get(op.name())).map(|s| s / ceram_s),
                })
                .collect();
            let published = PUBLISHED_TABLE_6
                .iter()
                .filter(|(_, c, _)| *c == case)
                .map(|(cpu, _, v)| PublishedSpeedup {
                    cpu: cpu.to_string(),
                    speedup: v[i],
                    implied_cpu_s: v[i] / actual,
                })
                .collect();
            rows.push(Table6Row {
                id: format!("t6-{}-{}", case.letter(), op.name()),
                case: case.letter().into(),
                op: op.name().into(),
                ceram_s,
                published_ceram_s: 1.0 / actual,
                measured,
                published,
            });
        }
    }
    let mut pimhe_vs_seal = Vec::new();
    if let Some(pimhe) = cpus.first().and_then(|c| c.measured.as_ref()) {
        for op in TABLE_6_OPS {
            let Some(&pimhe_s) = pimhe.median_s.get(op.name()) else { continue };
            let seal = cpus
                .iter()
                .filter(|c| c.label.starts_with("SEAL"))
                .map(|c| {
                    let s = c.measured.as_ref().and_then(|m| m.median_s.get(op.name()).copied());
                    (c.label.clone(), s, s.map(|s| s / pimhe_s))
                })
                .collect();
            pimhe_vs_seal.push(CpuComparison { op: op.name().into(), pimhe_s, seal });
        }
    }
    Ok(Table6 { cpus, skipped, rows, pimhe_vs_seal })
}
