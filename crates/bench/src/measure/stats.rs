//! The encrypted statistics of seed 002 run in one process (`pimhe stats`, `pimhe.stats`):
//! one scheme per plaintext modulus of a [`StatsPlan`], the client on the CPU, the server on
//! the CPU, on emulated UPMEM DPUs or on the near-bank recorder, and the report with the
//! server's modeled costs.

use std::sync::Arc;

use pimhe_exec::{Backend, CpuBackend};
use pimhe_math::Sampler;
use pimhe_nearbank::NearbankBackend;
use pimhe_pim::runtime::placement::Mode;
use pimhe_pim::runtime::{OffloadReport, PimBackend};
use pimhe_schemes::bfv::BfvContext;
use pimhe_schemes::bgv::BgvContext;
use pimhe_schemes::encoder::ExactScheme;
use pimhe_workloads::progress::Progress;
use pimhe_workloads::stats::{Dataset, ModulusRun, SchemeStats, Statistic, StatsError, StatsPlan, StatsReport};
use serde::Serialize;

use crate::format::{Render, FIXED_SEED_KEYS};
use crate::target::nearbank::NearbankOutcome;
use crate::target::upmem::server_cost_line;
use crate::target::Target;

/// What a PIM server's work cost, modeled.
#[derive(Debug, Clone)]
pub enum ServerCost {
    /// Emulated UPMEM DPUs, every server added up.
    Upmem(OffloadReport),
    /// The GPU + near-bank PIM system.
    Nearbank(NearbankOutcome),
}

/// The largest plaintext modulus, in bits, of `scheme` ("bgv" or "bfv") at ring degree `n`.
pub fn max_plain_bits(scheme: &str, n: usize) -> Result<u32, StatsError> {
    let bits = match scheme {
        "bgv" => BgvContext::max_plain_bits(n),
        "bfv" => BfvContext::max_plain_bits(n),
        other => return Err(StatsError::Input(format!("--scheme {other}: allowed: bgv, bfv"))),
    };
    bits.map_err(|e| StatsError::Input(format!("--n {n}: {e}")))
}

/// A whole run as `pimhe stats` and `pimhe.stats` make it: `statistic` over `data` with
/// `scheme` ("bgv" or "bfv") at ring degree `n`, the plaintext moduli planned for the scheme's
/// largest, keys and randomness from `seed` (or the OS), the client on `client` and the server
/// on `server`, progress reported to `progress`.
#[allow(clippy::too_many_arguments)]
pub fn run_statistic(
    statistic: Statistic,
    data: Dataset,
    scheme: &str,
    n: usize,
    client: &CpuBackend,
    server: &Target,
    seed: Option<u64>,
    progress: Option<Arc<dyn Progress>>,
) -> Result<StatsOutput, StatsError> {
    let mut plan = StatsPlan::new(statistic, data, n, max_plain_bits(scheme, n)?)?;
    if let Some(progress) = progress {
        plan = plan.with_progress(progress);
    }
    let mut sampler = match seed {
        Some(seed) => Sampler::from_seed_u64(seed),
        None => Sampler::from_os().map_err(pimhe_schemes::SchemeError::from)?,
    };
    let result = run(scheme, &plan, n, client, server, &mut sampler)?;
    Ok(StatsOutput::new(scheme, server.name(), n, result, seed.is_some()))
}

/// Runs `plan` with `scheme` ("bgv" or "bfv") at ring degree `n`: keys, encryption and
/// decryption on `client`, the aggregation on `server` (upmem-emu: one emulated system per
/// plaintext modulus, in parallel mode unless set); with a PIM server, also the modeled cost of
/// its work.
pub fn run(
    scheme: &str,
    plan: &StatsPlan,
    n: usize,
    client: &CpuBackend,
    server: &Target,
    sampler: &mut Sampler,
) -> Result<(StatsReport, Option<ServerCost>), StatsError> {
    match scheme {
        "bgv" => run_with::<BgvContext>(plan, n, client, server, sampler),
        "bfv" => run_with::<BfvContext>(plan, n, client, server, sampler),
        other => Err(StatsError::Input(format!("--scheme {other}: allowed: bgv, bfv"))),
    }
}

fn run_with<S: ExactScheme>(
    plan: &StatsPlan,
    n: usize,
    client: &CpuBackend,
    server: &Target,
    sampler: &mut Sampler,
) -> Result<(StatsReport, Option<ServerCost>), StatsError> {
    let contexts = plan
        .plain_moduli()
        .iter()
        .map(|&t| S::from_params(S::preset_with_plain_modulus(n, t)?))
        .collect::<Result<Vec<_>, _>>()?;
    let input = |e: crate::BenchError| StatsError::Input(e.to_string());
    match server {
        Target::Cpu { .. } => Ok((on_one_server::<S, _>(plan, client, client, contexts, sampler)?, None)),
        Target::Nearbank(nearbank) => {
            let backend = NearbankBackend::new(nearbank.threads).map_err(|e| StatsError::Scheme(e.into()))?;
            // The keys' generation is the client's: only what runs from here on is planned.
            backend.take_trace();
            let report = on_one_server::<S, _>(plan, client, &backend, contexts, sampler)?;
            Ok((report, Some(ServerCost::Nearbank(NearbankOutcome::of(&nearbank.model, &backend.take_trace())))))
        }
        Target::UpmemEmu(upmem) => {
            let make = |primes: &[u32]| {
                let settings = upmem.settings_in(upmem.mode.unwrap_or(Mode::Parallel), primes.len()).map_err(input)?;
                settings.backend(n, primes).map_err(input)
            };
            let servers = contexts.iter().map(|ctx| make(&ctx.backend_primes())).collect::<Result<Vec<_>, _>>()?;
            let mut schemes = contexts
                .into_iter()
                .zip(&servers)
                .map(|(ctx, server)| SchemeStats::<S, _, _>::with_context(client, server, ctx, sampler.fork()))
                .collect::<Result<Vec<_>, _>>()?;
            let report = plan.execute(&mut schemes)?;
            drop(schemes);
            // Added up onto the first report, which names the model.
            let costs = servers.iter().map(PimBackend::report).collect::<Result<Vec<_>, _>>();
            let total = costs.map_err(pimhe_schemes::SchemeError::from)?.into_iter().reduce(|mut total, r| {
                total.accumulate(&r);
                total
            });
            Ok((report, total.map(ServerCost::Upmem)))
        }
    }
}

/// `plan` with every plaintext modulus's server on the one backend `server`.
fn on_one_server<S: ExactScheme, B: Backend>(
    plan: &StatsPlan,
    client: &CpuBackend,
    server: &B,
    contexts: Vec<std::sync::Arc<S>>,
    sampler: &mut Sampler,
) -> Result<StatsReport, StatsError> {
    let mut schemes = contexts
        .into_iter()
        .map(|ctx| SchemeStats::<S, _, _>::with_context(client, server, ctx, sampler.fork()))
        .collect::<Result<Vec<_>, _>>()?;
    plan.execute(&mut schemes)
}

/// What a statistics run reports: the plan's report, the times summed over plaintext moduli,
/// and the modeled cost of a PIM server.
#[derive(Debug, Serialize)]
pub struct StatsOutput {
    /// "bgv" or "bfv".
    pub scheme: String,
    /// The server's backend.
    pub backend: String,
    /// Ring degree.
    pub n: usize,
    /// The statistic, its estimates beside the plaintext ones, and per modulus the runs.
    #[serde(flatten)]
    pub report: StatsReport,
    /// Client: encoding + encryption, and decryption, summed over plaintext moduli (measured).
    pub client_encrypt_s: f64,
    /// Client: decryption, summed over plaintext moduli (measured).
    pub client_decrypt_s: f64,
    /// Server wall time (measured; on upmem-emu the emulator's).
    pub server_wall_s: f64,
    /// upmem-emu: the server's modeled transfer, compute and retrieval, summed over moduli.
    pub upmem: Option<OffloadReport>,
    /// nearbank: the server's modeled cost on the GPU + near-bank PIM system, beside the GPU
    /// alone.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nearbank: Option<NearbankOutcome>,
    /// What the user must know about this run's security ([`FIXED_SEED_KEYS`] with a seed).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<&'static str>,
}

impl StatsOutput {
    /// The output of a run; `seeded` when its keys came from a fixed seed.
    pub fn new(
        scheme: &str,
        backend: &str,
        n: usize,
        (report, cost): (StatsReport, Option<ServerCost>),
        seeded: bool,
    ) -> Self {
        let (upmem, nearbank) = match cost {
            Some(ServerCost::Upmem(report)) => (Some(report), None),
            Some(ServerCost::Nearbank(outcome)) => (None, Some(outcome)),
            None => (None, None),
        };
        let sum = |f: fn(&ModulusRun) -> f64| report.runs.iter().map(f).sum::<f64>();
        Self {
            scheme: scheme.to_string(),
            backend: backend.to_string(),
            n,
            client_encrypt_s: sum(|r| r.client_encrypt_s),
            client_decrypt_s: sum(|r| r.client_decrypt_s),
            server_wall_s: sum(|r| r.server_s),
            upmem,
            nearbank,
            report,
            warnings: if seeded { vec![FIXED_SEED_KEYS] } else { Vec::new() },
        }
    }
}

impl Render for StatsOutput {
    fn render(&self) -> String {
        let r = &self.report;
        let moduli: Vec<String> = r.plain_moduli.iter().map(u32::to_string).collect();
        let mut out = format!(
            "pimhe stats {}: {} users, columns {}, fixed point 10^-{}, {} N={} t={}{}, server on {}\n",
            r.statistic.name(),
            r.users,
            r.columns.join(","),
            r.decimals,
            self.scheme,
            self.n,
            moduli.join("*"),
            if moduli.len() > 1 { " (CRT)" } else { "" },
            self.backend
        );
        out += &format!("  {:<20} {:>20} {:>20} {:>12}\n", "", "encrypted", "plaintext", "|error|");
        for e in &r.estimates {
            out += &format!("  {:<20} {:>20.10} {:>20.10} {:>12.3e}\n", e.name, e.encrypted, e.plaintext, e.abs_error);
        }
        let budget = r.runs.iter().map(|run| run.noise_budget_bits).min().unwrap_or(0);
        out += &format!(
            "  every decrypted aggregate equals the plaintext sum: {}; noise budget left {budget} bits\n",
            if r.aggregates_exact { "yes" } else { "NO" }
        );
        out += &format!(
            "  client (cpu, measured): encode + encrypt {:.3} s, decrypt {:.3} s\n  server wall time: {:.3} s{}",
            self.client_encrypt_s,
            self.client_decrypt_s,
            self.server_wall_s,
            if self.upmem.is_some() {
                " (emulator)"
            } else if self.nearbank.is_some() {
                " (this host)"
            } else {
                ""
            }
        );
        for warning in &self.warnings {
            out += &format!("\n  {warning} (--seed): anyone with the seed can make the secret key");
        }
        if let Some(u) = &self.upmem {
            out += &format!("{}, host steps {:.3} s measured", server_cost_line(u), u.host_fallback_s);
        }
        if let Some(outcome) = &self.nearbank {
            out += &format!("\n  server on {} (modeled):\n{}", outcome.system, outcome.render());
        }
        out
    }
}
