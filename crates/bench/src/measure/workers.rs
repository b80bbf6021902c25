//! The modeled cost of a run spread over workers (`pimhe.distributed` on Ray): each worker's
//! backend models its own tasks ([`task_cost_json`], what a task returns beside its partial),
//! and the driver adds them up ([`sum_task_costs`]) into the entry `pimhe eval --json` prints
//! for one process (`upmem` or `nearbank`), with how the sum was made.
//!
//! Workers run on separate machines at once, so the sum of their modeled seconds is modeled
//! *work*, not the run's modeled time: the entry says so, and gives each worker's own sum and
//! the largest of them (what the busiest worker modeled; with tasks spread evenly, about the
//! run's modeled time).

use std::collections::BTreeMap;

use pimhe_pim::runtime::OffloadReport;
use serde::{Deserialize, Serialize};

use crate::error::{BenchError, Result};
use crate::target::nearbank::NearbankOutcome;
use crate::target::Cost;

/// What a summed entry says of its figures.
pub const SUM_BASIS: &str = "sum over the workers' tasks of their modeled seconds and joules (separate machines \
                             running at once: modeled work, not the run's modeled time; max_worker_total_s is the \
                             busiest worker's)";

/// One task's modeled cost, as it travels from a worker to the driver.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "backend", content = "report", rename_all = "kebab-case")]
pub enum TaskCost {
    /// On emulated DPUs: the report `pimhe eval --json` prints as `upmem`.
    UpmemEmu(OffloadReport),
    /// On the GPU + near-bank PIM model: the outcome printed as `nearbank`.
    Nearbank(NearbankOutcome),
}

/// A task's modeled cost as JSON ([`TaskCost`]), `None` on the CPU (timed, not modeled).
pub fn task_cost_json(cost: &Cost) -> Result<Option<String>> {
    let task = match cost {
        Cost::Cpu { .. } => return Ok(None),
        Cost::Upmem(report) => TaskCost::UpmemEmu(report.clone()),
        Cost::Nearbank(outcome) => TaskCost::Nearbank(outcome.clone()),
    };
    serde_json::to_string(&task)
        .map(Some)
        .map_err(|e| BenchError::Failed(format!("a task's modeled cost did not serialize: {e}")))
}

/// A modeled report that adds up over tasks.
trait Summable: Clone {
    fn model(&self) -> &str;
    /// Modeled seconds of the task.
    fn total_s(&self) -> f64;
    fn accumulate(&mut self, other: &Self);
}

impl Summable for OffloadReport {
    fn model(&self) -> &str {
        &self.model
    }
    fn total_s(&self) -> f64 {
        OffloadReport::total_s(self)
    }
    fn accumulate(&mut self, other: &Self) {
        OffloadReport::accumulate(self, other)
    }
}

impl Summable for NearbankOutcome {
    fn model(&self) -> &str {
        &self.model
    }
    fn total_s(&self) -> f64 {
        self.cost.total_s
    }
    fn accumulate(&mut self, other: &Self) {
        NearbankOutcome::accumulate(self, other)
    }
}

/// A report added up over a run's tasks, and how.
#[derive(Debug, Clone, Serialize)]
pub struct Summed<R> {
    /// Every task's report added: the same fields as one process's report.
    #[serde(flatten)]
    pub sum: R,
    /// How the figures were made, and per worker.
    pub distributed: WorkersBreakdown,
}

/// The per-worker side of [`Summed`].
#[derive(Debug, Clone, Serialize)]
pub struct WorkersBreakdown {
    /// [`SUM_BASIS`].
    pub basis: &'static str,
    /// Tasks whose reports were added (shards and combinations).
    pub tasks: usize,
    /// Per worker (by the identifier the driver gave), its tasks' modeled seconds added.
    pub worker_total_s: BTreeMap<String, f64>,
    /// The largest of `worker_total_s`.
    pub max_worker_total_s: f64,
}

/// The summed entry of a run: `upmem` or `nearbank`, as one process's output names it.
#[derive(Debug, Clone, Serialize)]
pub struct WorkersCost {
    /// upmem-emu's reports added.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub upmem: Option<Summed<OffloadReport>>,
    /// nearbank's outcomes added (the ratios recomputed from the sums).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nearbank: Option<Summed<NearbankOutcome>>,
}

/// Adds up the costs `(worker, JSON)` of every task of a run ([`task_cost_json`]'s); `None` for
/// none (a CPU run). Errors on JSON that is not a task's cost, and on costs of different
/// backends or models (a sum across models would mean nothing).
///
/// ```
/// use pimhe_bench::measure::workers::{sum_task_costs, TaskCost};
/// use pimhe_pim::runtime::OffloadReport;
///
/// let task = |compute_s: f64| {
///     let report = OffloadReport { model: "m (modeled)".into(), transfer_s: 1.0, compute_s, launches: 3, ..Default::default() };
///     serde_json::to_string(&TaskCost::UpmemEmu(report)).unwrap()
/// };
/// let costs = [("w1".to_string(), task(1.0)), ("w2".to_string(), task(2.0)), ("w1".to_string(), task(4.0))];
/// let upmem = sum_task_costs(&costs).unwrap().unwrap().upmem.unwrap();
/// assert_eq!((upmem.sum.compute_s, upmem.sum.launches, upmem.distributed.tasks), (7.0, 9, 3));
/// assert_eq!(upmem.distributed.max_worker_total_s, 7.0); // w1: (1 + 1) + (1 + 4)
/// assert!(sum_task_costs(&[("w1".into(), "{}".into())]).is_err());
/// ```
pub fn sum_task_costs(costs: &[(String, String)]) -> Result<Option<WorkersCost>> {
    let mut upmem: Vec<(&str, OffloadReport)> = Vec::new();
    let mut nearbank: Vec<(&str, NearbankOutcome)> = Vec::new();
    for (i, (worker, json)) in costs.iter().enumerate() {
        let task: TaskCost = serde_json::from_str(json).map_err(|e| {
            BenchError::usage(format!("task cost {i} (worker {worker}) is not a task's modeled cost: {e}"))
        })?;
        match task {
            TaskCost::UpmemEmu(report) => upmem.push((worker, report)),
            TaskCost::Nearbank(outcome) => nearbank.push((worker, outcome)),
        }
    }
    if !upmem.is_empty() && !nearbank.is_empty() {
        return Err(BenchError::usage(format!(
            "{} tasks modeled by upmem-emu and {} by nearbank: one run's tasks run on one backend",
            upmem.len(),
            nearbank.len()
        )));
    }
    Ok(match (sum(upmem)?, sum(nearbank)?) {
        (None, None) => None,
        (upmem, nearbank) => Some(WorkersCost { upmem, nearbank }),
    })
}

/// The reports of `tasks` added, with the per-worker breakdown; `None` for no tasks.
fn sum<R: Summable>(tasks: Vec<(&str, R)>) -> Result<Option<Summed<R>>> {
    let count = tasks.len();
    let mut total: Option<R> = None;
    let mut worker_total_s: BTreeMap<String, f64> = BTreeMap::new();
    for (worker, report) in tasks {
        *worker_total_s.entry(worker.to_string()).or_default() += report.total_s();
        match &mut total {
            None => total = Some(report),
            Some(t) if t.model() == report.model() => t.accumulate(&report),
            Some(t) => {
                return Err(BenchError::usage(format!(
                    "a task on worker {worker} was modeled by {}, another by {}: reports of different models do not \
                     add up",
                    report.model(),
                    t.model()
                )))
            }
        }
    }
    Ok(total.map(|sum| {
        let max_worker_total_s = worker_total_s.values().copied().fold(0.0, f64::max);
        Summed {
            sum,
            distributed: WorkersBreakdown { basis: SUM_BASIS, tasks: count, worker_total_s, max_worker_total_s },
        }
    }))
}
