//! `--mode auto`: the UPMEM placement of a job chosen by modeled cost, not by rule.
//!
//! The candidates are every placement: parallel (DRAMatic's limb-major groups, the conversions
//! of key and modulus switching on the host), sequential (DRAMatic's other mode: all DPUs on
//! one prime after another, a conversion's terms onto a prime in that prime's launch; it wins
//! where the DPUs do not divide into the primes, e.g. 7 DPUs for 4 primes leave 3 idle in
//! parallel mode), hybrid (the
//! groups of parallel mode, the conversions on coefficient slices over every DPU, re-sliced
//! through the host) and ciphertext-major (every DPU whole ciphertexts; everything on the DPUs).
//!
//! Each candidate runs the job's pricing copy ([`Job::pricing_copy`]) on its own emulated
//! system, in the order above, and is priced by [`OffloadReport::planned_s`]: every modeled
//! transfer, launch and retrieval of the priced part of the job, plus its host fallbacks
//! priced by the host model (`seal-host`), so the choice is the same on every run. A
//! candidate whose cost passes the cheapest so far is stopped there ([`PimBackend::set_budget`]):
//! it cannot win, and its emulation need not finish. The cheapest wins (the earlier on a tie);
//! its pricing run is the job's run where the job can adopt it ([`Job::adopt`]: its output
//! keeps what the job shows), else the job itself runs on it. [`PlanChoice`] says what each candidate cost and why the
//! winner won.

use serde::Serialize;

use pimhe_pim::runtime::placement::Mode;
use pimhe_pim::runtime::PimBackend;

use super::{on, Cost, DeviceNeeds, Job, Ran, UpmemTarget};
use crate::error::Result;
use crate::format::format_seconds;

/// The placements `--mode auto` weighs, in the order it prices them (the cheaper to emulate
/// first, so that the dearer ones meet a budget early).
pub const CANDIDATES: [Mode; 4] = [Mode::Parallel, Mode::Sequential, Mode::Hybrid, Mode::CiphertextMajor];

/// What the planner chose and why (`--json`: `plan`).
#[derive(Debug, Clone, Serialize)]
pub struct PlanChoice {
    /// The placement the job ran on.
    #[serde(skip)]
    pub mode: Mode,
    /// Its name.
    pub chosen: &'static str,
    /// Every candidate, in the order priced.
    pub candidates: Vec<Priced>,
}

/// One candidate placement and its price.
#[derive(Debug, Clone, Serialize)]
pub struct Priced {
    /// The placement.
    pub mode: &'static str,
    /// Modeled seconds (DPU side plus host fallbacks), when the run finished.
    pub planned_s: Option<f64>,
    /// Of which the host fallbacks, priced by the host model.
    pub host_fallback_modeled_s: Option<f64>,
    /// Operations that fell back to the host.
    pub fallbacks: Option<u64>,
    /// Why the run did not finish: stopped past the best's cost, or refused.
    pub stopped: Option<String>,
}

impl PlanChoice {
    /// One line: the choice and every candidate's price.
    pub fn summary(&self) -> String {
        let priced: Vec<String> = self
            .candidates
            .iter()
            .map(|c| match (c.planned_s, &c.stopped) {
                (Some(s), _) => format!("{} {} ({} fallbacks)", c.mode, format_seconds(s), c.fallbacks.unwrap_or(0)),
                (None, Some(why)) => format!("{} {why}", c.mode),
                (None, None) => format!("{} not run", c.mode),
            })
            .collect();
        format!(
            "placement auto: {} is the cheapest, modeled with host fallbacks priced by seal-host@1 ({})",
            self.chosen,
            priced.join("; ")
        )
    }
}

impl Priced {
    /// A candidate with no price (yet).
    fn unfinished(mode: Mode) -> Self {
        Priced { mode: mode.name(), planned_s: None, host_fallback_modeled_s: None, fallbacks: None, stopped: None }
    }

    /// A candidate priced at `planned_s`, of which `host_fallback_modeled_s` on the host.
    pub fn finished(mode: Mode, planned_s: f64, host_fallback_modeled_s: f64, fallbacks: u64) -> Self {
        Priced {
            planned_s: Some(planned_s),
            host_fallback_modeled_s: Some(host_fallback_modeled_s),
            fallbacks: Some(fallbacks),
            ..Priced::unfinished(mode)
        }
    }

    /// A candidate not priced, and why.
    pub fn stopped(mode: Mode, why: String) -> Self {
        Priced { stopped: Some(why), ..Priced::unfinished(mode) }
    }
}

/// Prices `candidates` in order with `price(mode, budget)`, each bounded by the cheapest price so
/// far (a candidate past it comes back stopped), and returns the cheapest (the earlier on a
/// tie; `None` when none finished), every candidate's price, and the first refusal.
pub fn cheapest<E>(
    candidates: &[Mode],
    mut price: impl FnMut(Mode, Option<f64>) -> std::result::Result<Priced, E>,
) -> (Option<Mode>, Vec<Priced>, Option<E>) {
    let mut priced = Vec::with_capacity(candidates.len());
    let mut best: Option<(f64, Mode)> = None;
    let mut first_error = None;
    for &mode in candidates {
        let outcome = price(mode, best.map(|(s, _)| s)).unwrap_or_else(|e| {
            let refused = Priced::stopped(mode, "refused".into());
            first_error.get_or_insert(e);
            refused
        });
        if let Some(s) = outcome.planned_s {
            if best.is_none_or(|(b, _)| s < b) {
                best = Some((s, mode));
            }
        }
        priced.push(outcome);
    }
    (best.map(|(_, mode)| mode), priced, first_error)
}

impl UpmemTarget {
    /// Runs `job` on the placement [`CANDIDATES`] price cheapest (see the module
    /// documentation); its [`Ran::plan`] says why.
    pub(super) fn run_planned<J: Job>(&self, needs: &DeviceNeeds, job: J) -> Result<Ran<J::Output>> {
        if job.pricing_copy().is_none() {
            // A job that must run once (it writes files) is not priced: parallel mode, the
            // placement with no ciphertext-major memory cost, runs it.
            let mut ran = self.run_in(needs, Mode::Parallel, job)?;
            let why = "not priced: the job writes files, so it runs once, in parallel mode".to_string();
            let unpriced = Priced::stopped(Mode::Parallel, why);
            ran.plan =
                Some(PlanChoice { mode: Mode::Parallel, chosen: Mode::Parallel.name(), candidates: vec![unpriced] });
            return Ok(ran);
        }
        // The run of the cheapest candidate so far, kept in case it is the job's own.
        let mut kept = None;
        let (best, candidates, first_error) = cheapest(&CANDIDATES, |mode, budget_s| {
            let copy = job.pricing_copy().expect("a job with one pricing copy has them all");
            let (priced, ran) = self.price(needs, mode, copy, budget_s)?;
            if priced.planned_s.is_some_and(|s| budget_s.is_none_or(|b| s < b)) {
                kept = ran.map(|ran| (mode, ran));
            }
            Ok(priced)
        });
        let Some(chosen) = best else {
            return Err(first_error.expect("a candidate that did not finish says why"));
        };
        let mut ran = match kept {
            Some((mode, ran)) if mode == chosen => match job.adopt(&ran.output) {
                Ok(()) => ran,
                Err(job) => self.run_in(needs, chosen, job)?,
            },
            Some(_) | None => self.run_in(needs, chosen, job)?,
        };
        ran.plan = Some(PlanChoice { mode: chosen, chosen: chosen.name(), candidates });
        Ok(ran)
    }

    /// Runs `job` on `mode`'s backend.
    pub(super) fn run_in<J: Job>(&self, needs: &DeviceNeeds, mode: Mode, job: J) -> Result<Ran<J::Output>> {
        let backend = self.settings_in(mode, needs.primes.len())?.backend(needs.n, &needs.primes)?;
        let meter = (|| Ok(backend.reset_report()?), || Ok(Cost::Upmem(backend.report()?)));
        on(&backend, &meter, job)
    }

    /// Prices `job` on `mode`, stopped once dearer than `budget_s` (see [`PimBackend::set_budget`]);
    /// with the run when it finished.
    fn price<J: Job>(
        &self,
        needs: &DeviceNeeds,
        mode: Mode,
        job: J,
        budget_s: Option<f64>,
    ) -> Result<(Priced, Option<Ran<J::Output>>)> {
        let backend: PimBackend = self.settings_in(mode, needs.primes.len())?.backend(needs.n, &needs.primes)?;
        // The budget bounds the priced part only: set when pricing starts, lifted when it stops.
        let meter = (
            || {
                backend.reset_report()?;
                backend.set_budget(budget_s);
                Ok(())
            },
            || Ok(Cost::Upmem(backend.report()?)),
            || {
                backend.set_budget(None);
                Ok(())
            },
        );
        match on(&backend, &meter, job) {
            Ok(ran) => {
                let Cost::Upmem(report) = &ran.cost else { unreachable!("an upmem-emu run is priced by its report") };
                let priced =
                    Priced::finished(mode, report.planned_s(), report.host_fallback_modeled_s, report.fallbacks);
                Ok((priced, Some(ran)))
            }
            Err(_) if backend.over_budget() => {
                let why = format!("stopped past {}", format_seconds(budget_s.unwrap_or(0.0)));
                Ok((Priced::stopped(mode, why), None))
            }
            Err(e) => Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// On every assignment of synthetic prices 0..5 to the candidates (0: refused; small
    /// integers make ties common), the pruned search picks what brute force over every
    /// candidate's full price picks.
    #[test]
    fn the_pruned_search_agrees_with_brute_force() {
        for code in 0..5u64.pow(CANDIDATES.len() as u32) {
            let costs: Vec<u64> = (0..CANDIDATES.len() as u32).map(|i| code / 5u64.pow(i) % 5).collect();
            let full = |mode: Mode| costs[CANDIDATES.iter().position(|&m| m == mode).unwrap()];
            let (chosen, priced, error) = cheapest(&CANDIDATES, |mode, budget| match full(mode) {
                0 => Err("refused"),
                c if budget.is_some_and(|b| c as f64 > b) => {
                    Ok(Priced { stopped: Some("stopped".into()), ..Priced::unfinished(mode) })
                }
                c => Ok(Priced { planned_s: Some(c as f64), ..Priced::unfinished(mode) }),
            });
            let brute = CANDIDATES.iter().copied().filter(|&m| full(m) > 0).min_by_key(|&m| full(m));
            assert_eq!(chosen, brute, "{costs:?}");
            assert_eq!(priced.len(), CANDIDATES.len());
            assert_eq!(error.is_some(), costs.contains(&0), "{costs:?}");
        }
    }
}
