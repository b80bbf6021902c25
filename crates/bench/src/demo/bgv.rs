//! The BGV demo: [`BgvPipeline`] on the target; on emulated DPUs the server's modeled cost
//! beside the same computation measured on the CPU backend.

use std::time::Duration;

use pimhe_exec::{Backend, CpuBackend};
use pimhe_pim::runtime::placement::Mode;
use pimhe_ring::memory;
use pimhe_schemes::bgv::{BgvParameters, CiphertextBatch};
use pimhe_workloads::bgv_pipeline::{BgvPipeline, Checked};

use super::{placement, step, step_line, DemoConfig};
use crate::error::{BenchError, Result};
use crate::format::format_seconds;
use crate::target::upmem::ModeledServer;
use crate::target::{BackendKind, Cost, Device, DeviceNeeds, Job, Target};

/// Runs the BGV demo (the configuration is checked by the caller).
pub(super) fn run(config: &DemoConfig, out: &mut dyn FnMut(&str)) -> Result<()> {
    let (n, batch) = (config.n, config.batch);
    let params = BgvParameters::preset(n).map_err(|e| BenchError::usage(e.to_string()))?;
    let on_upmem = matches!(config.target, Target::UpmemEmu(_));
    // On upmem-emu the emulated MRAM holds a copy, and the same computation runs on the CPU.
    let bytes = BgvPipeline::estimated_bytes(&params, batch, if on_upmem { 2 } else { 1 });
    memory::ensure_fits(&format!("the buffers of --batch {batch} at --n {n}"), bytes)
        .map_err(|e| BenchError::usage(format!("{e}; lower --batch")))?;
    let cpu = CpuBackend::new(config.target.threads())?;
    let needs = DeviceNeeds { n, primes: params.primes() };
    match &config.target {
        Target::UpmemEmu(upmem) => {
            out(&format!(
                "pimhe demo: BGV multiplication of two encrypted batches on the upmem-emu backend ({} emulated \
                 DPUs, {}, best kernel), beside the cpu backend",
                upmem.dpus,
                upmem.mode.map_or("placement chosen by modeled cost", Mode::name)
            ));
        }
        Target::Cpu { .. } | Target::Nearbank(_) => out(&format!(
            "pimhe demo: BGV multiplication of two encrypted batches on the {} backend",
            config.target.name()
        )),
    }
    out(&format!("  parameters: {params}"));
    out(&format!("  batch: {batch} ciphertext pairs x {n} slots, {} CPU threads", cpu.threads()));
    let (pipeline, _) = step(out, "key generation (cpu)", || {
        BgvPipeline::new(&cpu, params.clone(), batch, config.seed).map_err(|e| match e {
            pimhe_schemes::SchemeError::InvalidParameters(m) => BenchError::usage(format!("--n {n}: {m}")),
            e => e.into(),
        })
    })?;
    let ran = config.target.run(&needs, Serve { pipeline: &pipeline, kind: config.target.kind(), out: Some(out) })?;
    let mode = placement(&config.target, &ran, out);
    let served = ran.output;
    match ran.cost {
        Cost::Nearbank(outcome) => {
            out(&format!(
                "  server on {} (multiply + relinearize + modulus switch):\n{}",
                outcome.system,
                outcome.render()
            ));
            out(&format!("  remaining noise budget {} bits", served.budget));
        }
        Cost::Cpu { .. } => out(&format!(
            "  server time: {:.3} ms for {batch} products ({:.3} ms each); remaining noise budget {} bits",
            served.time.as_secs_f64() * 1e3,
            served.time.as_secs_f64() * 1e3 / batch as f64,
            served.budget
        )),
        Cost::Upmem(report) => {
            let Target::UpmemEmu(upmem) = &config.target else { unreachable!("an upmem-emu cost") };
            out("  server on cpu (same computation, measured):");
            let cpu_time = side_by_side(&pipeline, &cpu, out)?;
            // The input ciphertexts: 2 batches x 2 components at the top level, as a server
            // would receive them; they were made on the device here, so their upload is modeled.
            let data_slots: Vec<usize> = (0..params.data_primes().len()).collect();
            let settings = upmem.settings_in(mode.expect("an upmem-emu run"), needs.primes.len())?;
            let modeled = ModeledServer::new(
                &settings.config(settings.dpus, settings.mode),
                &report,
                needs.primes.len(),
                (4, &data_slots, batch, n),
                "multiply + relinearize + modulus switch, result retrieved",
            )?;
            out(&modeled.render());
            let fallback_note = if report.fallbacks > 0 {
                format!(
                    " (base conversion, ModDown and modulus switching on the host: {} measured; {} by {})",
                    format_seconds(report.host_fallback_s),
                    format_seconds(report.host_fallback_modeled_s),
                    settings.config(settings.dpus, settings.mode).host.label()
                )
            } else {
                String::new()
            };
            out(&format!(
                "    launches {}, fallbacks {}{fallback_note}{}",
                report.launches,
                report.fallbacks,
                report.eviction_note()
            ));
            if settings.mode == Mode::CiphertextMajor {
                out(&format!(
                    "    (ciphertext-major: each DPU holds whole ciphertexts, so at most --batch of the {} DPUs work; \
                     --mode parallel spreads the limbs and runs the conversions on the host; `pimhe advise --mode` \
                     compares both at scale)",
                    settings.dpus
                ));
            }
            out(&format!(
                "  side by side: upmem-emu {} modeled (+ {} host fallback) vs cpu {} measured ({} threads); emulator \
                 wall time {}",
                format_seconds(modeled.total_s),
                format_seconds(report.host_fallback_s),
                format_seconds(cpu_time.as_secs_f64()),
                cpu.threads(),
                format_seconds((served.time + served.download).as_secs_f64())
            ));
            out(&format!("  remaining noise budget {} bits", served.budget));
        }
    }
    out(&format!("OK: all {batch} x {} slot products match the plaintext computation", pipeline.context().slots()));
    Ok(())
}

/// What the server's run gave: the noise budget left after the check, the computation's time,
/// (emulated DPUs) the result's download time, and a pricing run's step lines.
struct Served {
    budget: u32,
    time: Duration,
    download: Duration,
    lines: Vec<String>,
}

/// The client's encryption, the server's computation (priced) and the client's check on one
/// backend, each step's line sent to `out` (kept in [`Served`] by a pricing run, which has no
/// `out`, and shown by [`Job::adopt`] when the planner takes that run as the job's).
struct Serve<'p, 'o> {
    pipeline: &'p BgvPipeline,
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
        let encrypt = if kind == BackendKind::UpmemEmu {
            "encode + encrypt (both batches, upmem-emu)"
        } else {
            "encode + encrypt (both batches)"
        };
        let ((x, y), _) = step(out, encrypt, || Ok(pipeline.encrypt(device.backend)?))?;
        // The key upload is setup, not part of the server computation.
        let evaluator = pipeline.evaluator(device.backend)?;
        device.start_pricing()?;
        let indent = match kind {
            BackendKind::Cpu => "",
            BackendKind::UpmemEmu => {
                out("  server on upmem-emu (emulator wall time; commands are deferred until data must come back):");
                "  "
            }
            BackendKind::Nearbank => {
                // Only the server computation is planned (keys and inputs resident, as in Anaheim).
                out("  server (computed on this host, recorded):");
                "  "
            }
        };
        let (product, time) = serve(pipeline, &evaluator, &x, &y, indent, out)?;
        let download = match kind {
            BackendKind::UpmemEmu => {
                step(out, "  download the result", || {
                    product.parts().iter().try_for_each(|p| device.backend.download(p).map(drop))?;
                    Ok(())
                })?
                .1
            }
            BackendKind::Cpu | BackendKind::Nearbank => Duration::ZERO,
        };
        device.stop_pricing()?;
        let name = if kind == BackendKind::UpmemEmu { "  decrypt + decode (upmem-emu)" } else { "decrypt + decode" };
        let budget = check(pipeline, device.backend, &product, name, out)?;
        Ok(Served { budget, time, download, lines })
    }
}

/// The same computation on the CPU, its steps indented under the emulated run's: its time.
fn side_by_side(pipeline: &BgvPipeline, cpu: &CpuBackend, out: &mut dyn FnMut(&str)) -> Result<Duration> {
    let (x, y) = pipeline.encrypt(cpu)?;
    let (product, time) = serve(pipeline, &pipeline.evaluator(cpu)?, &x, &y, "  ", out)?;
    check(pipeline, cpu, &product, "  decrypt + decode (cpu)", out)?;
    Ok(time)
}

/// The server's steps, each line indented by `indent`: the product and the computation's time.
fn serve<B: Backend>(
    pipeline: &BgvPipeline,
    evaluator: &pimhe_schemes::bgv::Evaluator<'_, B>,
    x: &CiphertextBatch<B>,
    y: &CiphertextBatch<B>,
    indent: &str,
    out: &mut dyn FnMut(&str),
) -> Result<(CiphertextBatch<B>, Duration)> {
    let mut time = Duration::ZERO;
    let served = pipeline.serve_with(evaluator, x, y, |name, elapsed| {
        time += elapsed;
        out(&step_line(&format!("{indent}{name}"), elapsed));
    })?;
    if !served.switched {
        out(&format!("  {indent}(no special prime at N={}: relinearization skipped)", pipeline.context().degree()));
    }
    Ok((served.product, time))
}

/// The client's check, timed as step `name`: the noise budget left, or the mismatch as a
/// failure.
fn check<B: Backend>(
    pipeline: &BgvPipeline,
    backend: &B,
    product: &CiphertextBatch<B>,
    name: &str,
    out: &mut dyn FnMut(&str),
) -> Result<u32> {
    match step(out, name, || Ok(pipeline.check(backend, product)?))?.0 {
        Checked::Match { noise_budget_bits } => Ok(noise_budget_bits),
        Checked::Mismatch { ciphertext } => Err(BenchError::Failed(format!(
            "MISMATCH ({}): ciphertext {ciphertext} decrypted to a different product",
            name.trim()
        ))),
    }
}
