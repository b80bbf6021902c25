//! The library as the CLI and the Python package call it: configurations in, reports out, and
//! progress reported on the long runs.

use pimhe_bench::kernels::{self, KernelConfig, KernelReport, Op};
use pimhe_bench::reproduce::{self, ReproduceConfig, Reproduction};
use pimhe_bench::scheme::{self, SchemeBenchReport, SchemeConfig};
use pimhe_bench::{BenchError, NoProgress, Render};
use pimhe_workloads::progress::Recorded as Recorder;

#[test]
fn scheme_rounds_are_reported_and_the_report_renders() {
    let config = SchemeConfig { batch: 1, threads: Some(1), repeat: 2, ..SchemeConfig::new("bgv", 4096) };
    let recorder = Recorder::default();
    let report = scheme::measure(&config, &recorder).unwrap();
    assert!(matches!(report, SchemeBenchReport::Exact(_)));
    assert_eq!(recorder.calls(), ["start 3 rounds", "advance 1", "advance 1", "advance 1", "finish"]);
    let json: serde_json::Value = serde_json::from_str(&pimhe_bench::format::to_json(&report).unwrap()).unwrap();
    assert_eq!(json["scheme"], "bgv");
    assert_eq!(json["checked"], true);
    assert!(report.render().starts_with("bgv backend=cpu n=4096 batch=1 threads=1"));
}

#[test]
fn invalid_configurations_are_usage_errors_with_the_cli_messages() {
    let bad_scheme = SchemeConfig::new("rsa", 4096);
    match scheme::measure(&bad_scheme, &NoProgress) {
        Err(BenchError::Usage(m)) => assert!(m.starts_with("--scheme rsa is not known"), "{m}"),
        other => panic!("expected a usage error, got {other:?}"),
    }
    let mut kernel = KernelConfig::new(Op::Ntt, 1024, None, 2);
    assert_eq!(kernels::run(&kernel).unwrap_err(), BenchError::usage("ntt needs --primes"));
    kernel.primes = Some(1);
    kernel.backend = "gpu".into();
    assert!(kernels::run(&kernel).unwrap_err().to_string().starts_with("backend gpu is not available"));
    let rows = ReproduceConfig { rows: Some("nothing".into()), ..ReproduceConfig::default() };
    assert!(Reproduction::new(&rows).err().unwrap().to_string().starts_with("--rows nothing selects no row"));
}

#[test]
fn kernels_run_on_the_emulated_backend() {
    let config =
        KernelConfig { backend: "upmem-emu".into(), dpus: Some(4), ..KernelConfig::new(Op::Ntt, 1024, Some(2), 4) };
    let report = kernels::run(&config).unwrap();
    let KernelReport::Pim(pim) = &report else { panic!("a PIM report") };
    let json: serde_json::Value = serde_json::from_str(&pimhe_bench::format::to_json(pim).unwrap()).unwrap();
    assert_eq!(json["dpus"], 4);
    assert_eq!(json["emulation"], "full");
    assert!(report.render().contains("(modeled, upmem-v1b"), "{}", report.render());
}

#[test]
fn reproduction_rows_are_counted_and_render_as_the_table() {
    let config = ReproduceConfig { rows: Some("t2-ntt-1,t2-intt-4".into()), ..ReproduceConfig::default() };
    let recorder = Recorder::default();
    let report = reproduce::reproduce(&config, &recorder).unwrap();
    assert_eq!(recorder.calls(), ["start 2 rows", "advance 1", "advance 1", "finish"]);
    assert_eq!(report.rows.len(), 2);
    assert!(report.target.is_none());
    let text = report.render();
    assert!(text.starts_with("DRAMatic (Tables 2-5) on the emulated UPMEM backend, kernel barrett"), "{text}");
    assert!(text.lines().any(|l| l.starts_with("2     ntt       2048  2      1    2 par")), "{text}");
    assert!(text.ends_with("s on this host)"), "{text}");
}
