//! The one-process statistics run of `pimhe stats` and `pimhe.stats`: the estimates equal the
//! plaintext column, on the CPU, on emulated DPUs and on the near-bank recorder, with the
//! modeled cost reported for the latter two only.

use pimhe_bench::measure::stats::{self, StatsOutput};
use pimhe_bench::target::{Target, TargetFlags, TargetRules};
use pimhe_bench::Render;
use pimhe_exec::CpuBackend;
use pimhe_math::Sampler;
use pimhe_workloads::stats::{Dataset, Statistic, StatsError, StatsPlan};

#[test]
fn the_mean_is_the_plaintext_mean_on_the_cpu_on_emulated_dpus_and_on_nearbank() {
    let n = 4096;
    let cpu = CpuBackend::new(Some(2)).unwrap();
    let server = |backend: &str, dpus: Option<usize>| -> Target {
        let flags = TargetFlags { backend: Some(backend.into()), threads: Some(2), dpus, ..TargetFlags::default() };
        flags.parse(&TargetRules::SERVER).unwrap()
    };
    let servers = [
        (server("cpu", None), "cpu"),
        (server("upmem-emu", Some(16)), "upmem-emu"),
        (server("nearbank", None), "nearbank"),
    ];
    for (server, backend) in servers {
        let data = Dataset::from_csv("a,b\n1.5,-2\n2.25,7\n-4,0.5\n".as_bytes(), &["a", "b"], None).unwrap();
        let plan = StatsPlan::new(Statistic::Mean, data, n, stats::max_plain_bits("bfv", n).unwrap()).unwrap();
        let result = stats::run("bfv", &plan, n, &cpu, &server, &mut Sampler::from_seed_u64(3)).unwrap();
        let output = StatsOutput::new("bfv", backend, n, result, true);
        assert!(output.report.aggregates_exact);
        for (estimate, expected) in output.report.estimates.iter().zip([-0.25 / 3.0, 5.5 / 3.0]) {
            assert!((estimate.encrypted - expected).abs() < 1e-12, "{backend}: {estimate:?}");
        }
        assert_eq!(output.upmem.is_some(), backend == "upmem-emu");
        if let Some(upmem) = &output.upmem {
            assert!(upmem.model.contains("modeled") && upmem.launches > 0, "{upmem:?}");
        }
        assert_eq!(output.nearbank.is_some(), backend == "nearbank");
        if let Some(outcome) = &output.nearbank {
            // The server adds the users' ciphertexts: element-wise work, all on the PIM side.
            assert!(outcome.model.contains("modeled") && outcome.cost.pim_instructions > 0, "{outcome:?}");
            assert!(outcome.cost.kinds.iter().any(|k| k.kind == "Add"), "{outcome:?}");
        }
        assert!(output.render().contains("insecure"), "a seeded run says so");
    }
}

#[test]
fn unknown_schemes_and_ring_degrees_are_input_errors() {
    assert!(matches!(stats::max_plain_bits("ckks", 8192), Err(StatsError::Input(m)) if m.contains("bgv, bfv")));
    assert!(matches!(stats::max_plain_bits("bgv", 1000), Err(StatsError::Input(m)) if m.starts_with("--n 1000")));
}
