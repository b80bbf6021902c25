//! `pimhe demo --scheme ckks`: the CKKS pipeline of [`pimhe_workloads::ckks_pipeline`] —
//! encrypted real vectors, sigmoid(rot(x y, 1)) on the server, decrypted and measured in bits of
//! precision against the plaintext computation — on `cpu`, on emulated DPUs (with the modeled
//! times beside the CPU backend's measured ones) or on `nearbank` (the modeled GPU + near-bank
//! PIM times beside "w/o PIM").

use pimhe_exec::{Backend, CpuBackend};
use pimhe_nearbank::NearbankBackend;
use pimhe_pim::runtime::PimBackend;
use pimhe_schemes::ckks::CkksParameters;
use pimhe_workloads::ckks_pipeline::CkksPipeline;

use pimhe_bench::format::format_seconds;
use pimhe_bench::target::nearbank::NearbankOutcome;
use pimhe_bench::target::upmem::{ModeledServer, DEFAULT_DPUS};

use crate::demo::DemoArgs;
use crate::error::{CliError, Result};

/// Bits of precision below which the demo fails: far below what any preset gives (about 20 bits
/// after the sigmoid's approximation), far above what a wrong computation gives (none).
const REQUIRED_BITS: f64 = 8.0;

/// Runs the CKKS demo (the common flags are checked by the caller).
pub fn run(args: &DemoArgs, n: usize) -> Result<()> {
    let params = CkksParameters::preset(n).map_err(|e| CliError::usage(format!("--n {n}: {e}")))?;
    let cpu = CpuBackend::new(args.threads)?;
    println!(
        "pimhe demo: CKKS sigmoid(rot(x y, 1)) on two encrypted batches of real vectors, {} backend",
        args.backend
    );
    println!("  parameters: {params}");
    let pipeline = CkksPipeline::new(&cpu, params, args.batch, args.seed)?;
    println!(
        "  batch: {} vector pairs x {} slots, sigmoid of degree {} on [-1, 1], {} CPU threads",
        args.batch,
        pipeline.context().max_slots(),
        pipeline.sigmoid_degree(),
        cpu.threads()
    );
    let show = |indent: &'static str| {
        move |name: &str, time: std::time::Duration| {
            println!("  {indent}{name:<40} {:>10.3} ms", time.as_secs_f64() * 1e3)
        }
    };
    let precision = if args.backend == "nearbank" {
        let model = pimhe_bench::target::nearbank::model(args.system.as_deref(), args.buffer_entries)?;
        let nearbank = NearbankBackend::new(args.threads)?;
        let (x, y) = pipeline.encrypt(&nearbank)?;
        let evaluator = pipeline.evaluator(&nearbank)?;
        // Only the server computation is planned (keys and inputs resident, as in Anaheim).
        nearbank.take_trace();
        println!("  server (computed on this host, recorded):");
        let result = pipeline.serve_with(&evaluator, &x, &y, show("  "))?;
        let outcome = NearbankOutcome::of(&model, &nearbank.take_trace());
        println!("  server on {} (product, rotation, polynomial):\n{}", outcome.system, outcome.render());
        pipeline.check(&nearbank, &result)?
    } else if args.backend == "cpu" {
        let (x, y) = pipeline.encrypt(&cpu)?;
        let result = pipeline.serve(&cpu, &x, &y, show(""))?;
        pipeline.check(&cpu, &result)?
    } else {
        let dpus = args.dpus.unwrap_or(DEFAULT_DPUS);
        let primes = pipeline.primes();
        // The product relinearizes and rescales, the rotation switches keys.
        let pim = PimBackend::new(crate::demo::upmem_config(args, dpus, primes.len(), true)?, n, &primes)?;
        let (x, y) = pipeline.encrypt(&pim)?;
        let evaluator = pipeline.evaluator(&pim)?;
        pim.reset_report()?;
        println!("  server on upmem-emu (emulator wall time):");
        let result = pipeline.serve_with(&evaluator, &x, &y, show("  "))?;
        result.parts().iter().try_for_each(|p| pim.download(p).map(drop))?;
        let report = pim.report()?;
        let precision = pipeline.check(&pim, &result)?;
        println!("  server on cpu (same computation, measured):");
        let (cx, cy) = pipeline.encrypt(&cpu)?;
        let mut cpu_time = std::time::Duration::ZERO;
        let cpu_result = pipeline.serve(&cpu, &cx, &cy, |name, time| {
            cpu_time += time;
            show("  ")(name, time)
        })?;
        pipeline.check(&cpu, &cpu_result)?;
        let data_slots: Vec<usize> = (0..pipeline.context().params().rlwe().data_primes().len()).collect();
        let modeled = ModeledServer::new(
            &pim,
            &report,
            dpus,
            primes.len(),
            (4, &data_slots, args.batch, n),
            "product, rotation, polynomial, result retrieved",
        )?;
        println!("{}", modeled.render());
        let total_s = modeled.total_s;
        println!(
            "    launches {}, fallbacks {} ({} on the host, measured)",
            report.launches,
            report.fallbacks,
            format_seconds(report.host_fallback_s)
        );
        println!(
            "  side by side: upmem-emu {} modeled (+ {} host fallback) vs cpu {} measured ({} threads)",
            format_seconds(total_s),
            format_seconds(report.host_fallback_s),
            format_seconds(cpu_time.as_secs_f64()),
            cpu.threads()
        );
        precision
    };
    println!("  precision against the plaintext computation: {precision}");
    if precision.min_bits < REQUIRED_BITS {
        return Err(CliError::Failed(format!(
            "MISMATCH: the decrypted result has {:.1} bits of precision at worst, below the {REQUIRED_BITS} expected",
            precision.min_bits
        )));
    }
    println!("OK: all {} x {} slots match the plaintext computation", args.batch, pipeline.context().max_slots());
    Ok(())
}
