//! What `bench scheme` reports of a run on the near-bank backend: each timed operation's
//! recorded program, planned and priced by the `anaheim-nb` model ([`ModeledOps`]).

use std::cell::RefCell;

use pimhe_nearbank::isa::Program;
use pimhe_nearbank::model::Model;
use pimhe_nearbank::planner::plan;
use pimhe_nearbank::NearbankBackend;
use serde::Serialize;

use super::rounds::OpObserver;
use crate::target::nearbank::NearbankOutcome;

/// Records the program of each operation a benchmark round times on a [`NearbankBackend`]
/// (the first time each runs: the model is deterministic) and plans it: the `bench scheme`
/// observer of [`super::rounds::Rounds`].
pub struct OpRecorder<'a> {
    backend: &'a NearbankBackend,
    programs: RefCell<Vec<(&'static str, Program)>>,
}

impl<'a> OpRecorder<'a> {
    /// A recorder of `backend`'s operations.
    pub fn new(backend: &'a NearbankBackend) -> Self {
        Self { backend, programs: RefCell::new(Vec::new()) }
    }

    /// Each operation's planned program, in the order they first ran.
    pub fn programs(self) -> Vec<(&'static str, Program)> {
        self.programs.into_inner()
    }
}

impl OpObserver for OpRecorder<'_> {
    fn before(&self, _op: &'static str) {
        // What ran between timed operations (keys, checks) is not theirs.
        self.backend.take_trace();
    }

    fn after(&self, op: &'static str) {
        let trace = self.backend.take_trace();
        let mut programs = self.programs.borrow_mut();
        if !programs.iter().any(|(name, _)| *name == op) {
            programs.push((op, plan(&trace)));
        }
    }
}

/// One benchmarked operation's modeled cost.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModeledOp {
    /// The operation, e.g. `multiply`.
    pub op: &'static str,
    /// Its cost, for the whole batch.
    #[serde(flatten)]
    pub outcome: NearbankOutcome,
}

/// The modeled costs of a scheme benchmark's operations on one system.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModeledOps {
    /// The model's label.
    pub model: String,
    /// One per operation.
    pub ops: Vec<ModeledOp>,
}

impl ModeledOps {
    /// The programs of [`OpRecorder::programs`] priced with `model`.
    pub fn of(model: &Model, programs: &[(&'static str, Program)]) -> Self {
        let ops =
            programs.iter().map(|(op, program)| ModeledOp { op, outcome: NearbankOutcome::of_program(model, program) });
        Self { model: model.label(), ops: ops.collect() }
    }

    /// A table to print below the timings (which are of the host computing the results): per
    /// operation the modeled GPU, PIM and total seconds, "w/o PIM" and the ratios.
    pub fn render(&self, name_width: usize) -> String {
        let mut text = format!(
            "\n  (times above: the results computed on this host)\n  {} per batch:\n  {}",
            self.model,
            NearbankOutcome::table_header(&format!("{:<name_width$}", "op"))
        );
        for m in &self.ops {
            text.push_str(&format!("\n  {}", m.outcome.table_row(&format!("{:<name_width$}", m.op))));
        }
        text
    }
}
