//! The CKKS demo: [`CkksPipeline`] (sigmoid(rot(x y, 1))) on the target, measured in bits of
//! precision against the plaintext computation; on emulated DPUs the server's modeled cost
//! beside the same computation measured on the CPU backend.

use std::time::Duration;

use pimhe_exec::{Backend, CpuBackend};
use pimhe_pim::runtime::OffloadReport;
use pimhe_schemes::ckks::precision::PrecisionStats;
use pimhe_schemes::ckks::CkksParameters;
use pimhe_workloads::ckks_pipeline::CkksPipeline;

use super::{placement, DemoConfig};
use crate::error::{BenchError, Result};
use crate::format::format_seconds;
use crate::target::upmem::ModeledServer;
use crate::target::{BackendKind, Cost, Device, DeviceNeeds, Job, Target};

/// Bits of precision below which the demo fails: far below what any preset gives (about 20 bits
/// after the sigmoid's approximation), far above what a wrong computation gives (none).
const REQUIRED_BITS: f64 = 8.0;

/// Runs the CKKS demo (the configuration is checked by the caller).
pub(super) fn run(config: &DemoConfig, out: &mut dyn FnMut(&str)) -> Result<()> {
    let (n, batch) = (config.n, config.batch);
    let params = CkksParameters::preset(n).map_err(|e| BenchError::usage(format!("--n {n}: {e}")))?;
    let cpu = CpuBackend::new(config.target.threads())?;
    out(&format!(
        "pimhe demo: CKKS sigmoid(rot(x y, 1)) on two encrypted batches of real vectors, {} backend",
        config.target.name()
    ));
    out(&format!("  parameters: {params}"));
    let pipeline = CkksPipeline::new(&cpu, params, batch, config.seed)?;
    out(&format!(
        "  batch: {batch} vector pairs x {} slots, sigmoid of degree {} on [-1, 1], {} CPU threads",
        pipeline.context().max_slots(),
        pipeline.sigmoid_degree(),
        cpu.threads()
    ));
    let needs = DeviceNeeds { n, primes: pipeline.primes() };
    let ran = config.target.run(&needs, Serve { pipeline: &pipeline, kind: config.target.kind(), out: Some(out) })?;
    let mode = placement(&config.target, &ran, out);
    let precision = ran.output.precision;
    match ran.cost {
        Cost::Cpu { .. } => {}
        Cost::Nearbank(outcome) => {
            out(&format!("  server on {} (product, rotation, polynomial):\n{}", outcome.system, outcome.render()))
        }
        Cost::Upmem(report) => {
            let Target::UpmemEmu(upmem) = &config.target else { unreachable!("an upmem-emu cost") };
            out("  server on cpu (same computation, measured):");
            let (x, y) = pipeline.encrypt(&cpu)?;
            let mut cpu_time = Duration::ZERO;
            let result = pipeline.serve(&cpu, &x, &y, |name, time| {
                cpu_time += time;
                out(&step_line("  ", name, time));
            })?;
            pipeline.check(&cpu, &result)?;
            let data_slots: Vec<usize> = (0..pipeline.context().params().rlwe().data_primes().len()).collect();
            let settings = upmem.settings_in(mode.expect("an upmem-emu run"), needs.primes.len())?;
            let modeled = ModeledServer::new(
                &settings.config(settings.dpus, settings.mode),
                &report,
                needs.primes.len(),
                (4, &data_slots, batch, n),
                "product, rotation, polynomial, result retrieved",
            )?;
            out(&modeled.render());
            out(&step_costs(&ran.output.steps));
            out(&format!(
                "    launches {}, fallbacks {} ({} on the host, measured){}",
                report.launches,
                report.fallbacks,
                format_seconds(report.host_fallback_s),
                report.eviction_note()
            ));
            out(&format!(
                "  side by side: upmem-emu {} modeled (+ {} host fallback) vs cpu {} measured ({} threads)",
                format_seconds(modeled.total_s),
                format_seconds(report.host_fallback_s),
                format_seconds(cpu_time.as_secs_f64()),
                cpu.threads()
            ));
        }
    }
    out(&format!("  precision against the plaintext computation: {precision}"));
    if precision.min_bits < REQUIRED_BITS {
        return Err(BenchError::Failed(format!(
            "MISMATCH: the decrypted result has {:.1} bits of precision at worst, below the {REQUIRED_BITS} expected",
            precision.min_bits
        )));
    }
    out(&format!("OK: all {batch} x {} slots match the plaintext computation", pipeline.context().max_slots()));
    Ok(())
}

/// The modeled cost of each server step, the difference of the reports priced at its end and
/// at the previous step's (the first includes nothing of the inputs' upload, the last nothing of
/// the result's download: the totals above do).
fn step_costs(steps: &[(String, OffloadReport)]) -> String {
    let mut lines =
        vec!["    per step (modeled; the inputs' upload and the result's download not included):".to_string()];
    let mut before = OffloadReport::default();
    for (name, after) in steps {
        lines.push(format!(
            "      {name:<38} {:>11}  (transfer {}, compute {}, retrieve {}; launches {}, fallbacks {}, {} on the host, measured)",
            format_seconds(
                after.transfer_s + after.compute_s + after.retrieve_s
                    - (before.transfer_s + before.compute_s + before.retrieve_s)
            ),
            format_seconds(after.transfer_s - before.transfer_s),
            format_seconds(after.compute_s - before.compute_s),
            format_seconds(after.retrieve_s - before.retrieve_s),
            after.launches - before.launches,
            after.fallbacks - before.fallbacks,
            format_seconds(after.host_fallback_s - before.host_fallback_s),
        ));
        before = after.clone();
    }
    lines.join("\n")
}

/// A step's line under `indent` (the CKKS demo pads the name after its indentation).
fn step_line(indent: &str, name: &str, time: Duration) -> String {
    format!("  {indent}{name:<40} {:>10.3} ms", time.as_secs_f64() * 1e3)
}

/// What the server's run gave: the result's precision after the client's check, on emulated
/// DPUs the report priced up to the end of each step (name, report), and a pricing run's step
/// lines.
struct Served {
    precision: PrecisionStats,
    steps: Vec<(String, OffloadReport)>,
    lines: Vec<String>,
}

/// The client's encryption, the server's computation (priced) and the client's check on one
/// backend, each step's line sent to `out` (kept in [`Served`] by a pricing run, which has no
/// `out`, and shown by [`Job::adopt`] when the planner takes that run as the job's).
struct Serve<'p, 'o> {
    pipeline: &'p CkksPipeline,
    kind: BackendKind,
    out: Option<&'o mut dyn FnMut(&str)>,
}

impl Job for Serve<'_, '_> {
    type Output = Served;

    fn pricing_copy(&self) -> Option<Self> {
        Some(Serve { pipeline: self.pipeline, kind: self.kind, out: None })
    }

    fn adopt(self, served: &Served) -> std::result::Result<(), Self> {
        if let Some(out) = self.out {
            served.lines.iter().for_each(|line| out(line));
        }
        Ok(())
    }

    fn run<B: Backend>(self, device: &Device<'_, B>) -> Result<Served> {
        let Serve { pipeline, kind, out } = self;
        let mut lines = Vec::new();
        let mut keep = |line: &str| lines.push(line.to_string());
        let out: &mut dyn FnMut(&str) = match out {
            Some(out) => out,
            None => &mut keep,
        };
        let (x, y) = pipeline.encrypt(device.backend)?;
        let evaluator = pipeline.evaluator(device.backend)?;
        device.start_pricing()?;
        let indent = match kind {
            BackendKind::Cpu => "",
            BackendKind::UpmemEmu => {
                out("  server on upmem-emu (emulator wall time):");
                "  "
            }
            BackendKind::Nearbank => {
                // Only the server computation is planned (keys and inputs resident, as in Anaheim).
                out("  server (computed on this host, recorded):");
                "  "
            }
        };
        let mut priced = Vec::new();
        let result = pipeline.serve_with(&evaluator, &x, &y, |name, time| {
            out(&step_line(indent, name, time));
            if kind == BackendKind::UpmemEmu {
                priced.push((name.to_string(), device.priced_so_far()));
            }
        })?;
        let mut steps = Vec::new();
        for (name, cost) in priced {
            if let Cost::Upmem(report) = cost? {
                steps.push((name, report));
            }
        }
        if kind == BackendKind::UpmemEmu {
            result.parts().iter().try_for_each(|p| device.backend.download(p).map(drop))?;
        }
        device.stop_pricing()?;
        Ok(Served { precision: pipeline.check(device.backend, &result)?, steps, lines })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn step_costs_are_the_differences_of_the_reports_priced_at_each_step_end() {
        let report = |transfer_s, compute_s, retrieve_s, launches, fallbacks| OffloadReport {
            transfer_s,
            compute_s,
            retrieve_s,
            launches,
            fallbacks,
            host_fallback_s: 0.5 * fallbacks as f64,
            ..OffloadReport::default()
        };
        let steps =
            [("first".to_string(), report(0.25, 1.0, 0.125, 2, 1)), ("second".into(), report(0.5, 4.0, 0.125, 5, 1))];
        let lines: Vec<String> =
            step_costs(&steps).lines().map(|l| l.split_whitespace().collect::<Vec<_>>().join(" ")).collect();
        // first: 0.25 + 1 + 0.125; second: (0.5 - 0.25) + (4 - 1) + 0, 3 more launches, no fallback.
        assert_eq!(lines[1], "first 1.375 s (transfer 250.000 ms, compute 1.000 s, retrieve 125.000 ms; launches 2, fallbacks 1, 500.000 ms on the host, measured)");
        assert_eq!(lines[2], "second 3.250 s (transfer 250.000 ms, compute 3.000 s, retrieve 0.000 us; launches 3, fallbacks 0, 0.000 us on the host, measured)");
    }
}
