//! The library as the CLI and the Python package call it: configurations in, reports out, and
//! progress reported on the long runs.

use pimhe_bench::measure::kernels::{self, KernelConfig, KernelReport, Op};
use pimhe_bench::measure::scheme::{self, SchemeBenchReport, SchemeConfig};
use pimhe_bench::reproduce::dramatic::{self, DramaticConfig, DramaticRun};
use pimhe_bench::target::{Target, TargetFlags};
use pimhe_bench::{BenchError, NoProgress, Render};
use pimhe_workloads::progress::Recorded as Recorder;

/// The target of `bench OP`'s flags `flags` (the CLI's `--backend upmem-emu --dpus 4` ...).
fn target(flags: TargetFlags) -> Result<Target, BenchError> {
    flags.parse(&kernels::RULES)
}

fn upmem(dpus: usize) -> TargetFlags {
    TargetFlags { backend: Some("upmem-emu".into()), dpus: Some(dpus), ..TargetFlags::default() }
}

#[test]
fn scheme_rounds_are_reported_and_the_report_renders() {
    let config = SchemeConfig {
        batch: 1,
        target: Target::Cpu { threads: Some(1) },
        repeat: 2,
        ..SchemeConfig::new("bgv", 4096)
    };
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
    let gpu = target(TargetFlags { backend: Some("gpu".into()), ..TargetFlags::default() }).unwrap_err();
    assert_eq!(gpu.to_string(), "--backend gpu is not allowed: choose cpu, upmem-emu or nearbank");
    kernel.primes = Some(1);
    kernel.target = target(upmem(4)).unwrap();
    kernel.repeat = Some(2);
    assert!(kernels::run(&kernel).unwrap_err().to_string().starts_with("--repeat applies to --backend cpu only"));
    let rows = DramaticConfig { rows: Some("nothing".into()), ..DramaticConfig::default() };
    assert!(DramaticRun::new(&rows).err().unwrap().to_string().starts_with("--rows nothing selects no row"));
}

#[test]
fn kernels_run_on_the_emulated_backend() {
    let config = KernelConfig { target: target(upmem(4)).unwrap(), ..KernelConfig::new(Op::Ntt, 1024, Some(2), 4) };
    let report = kernels::run(&config).unwrap();
    let KernelReport::Pim(pim) = &report else { panic!("a PIM report") };
    let json: serde_json::Value = serde_json::from_str(&pimhe_bench::format::to_json(pim).unwrap()).unwrap();
    assert_eq!(json["dpus"], 4);
    assert_eq!(json["emulation"], "full");
    assert!(report.render().contains("(modeled, upmem-v1b"), "{}", report.render());
}

#[test]
fn reproduction_rows_are_counted_and_render_as_the_table() {
    let config = DramaticConfig { rows: Some("t2-ntt-1,t2-intt-4".into()), ..DramaticConfig::default() };
    let recorder = Recorder::default();
    let report = dramatic::reproduce(&config, &recorder).unwrap();
    assert_eq!(recorder.calls(), ["start 2 rows", "advance 1", "advance 1", "finish"]);
    assert_eq!(report.rows.len(), 2);
    assert!(report.target.is_none());
    let text = report.render();
    assert!(text.starts_with("DRAMatic (Tables 2-5) on the emulated UPMEM backend, kernel barrett"), "{text}");
    assert!(text.lines().any(|l| l.starts_with("2     ntt       2048  2      1    2 par")), "{text}");
    assert!(text.ends_with("s on this host)"), "{text}");
}

#[test]
fn what_ifs_lower_the_modeled_compute_and_remove_the_transfers() {
    let base = TargetFlags { kernel: Some("barrett".into()), ..upmem(2) };
    let with =
        |what_if: &[&str]| TargetFlags { what_if: what_if.iter().map(|s| s.to_string()).collect(), ..base.clone() };
    let run = |what_if: &[&str]| {
        let config =
            KernelConfig { target: target(with(what_if)).unwrap(), ..KernelConfig::new(Op::Ntt, 1024, Some(2), 4) };
        let report = kernels::run(&config).unwrap();
        let text = report.render();
        let KernelReport::Pim(pim) = report else { panic!("a PIM report") };
        let json: serde_json::Value = serde_json::from_str(&pimhe_bench::format::to_json(&pim).unwrap()).unwrap();
        (json, text)
    };
    let (plain, _) = run(&[]);
    let (fast, text) = run(&["mul-cycles=1"]);
    let (both, _) = run(&["mul-cycles=1", "zero-copy"]);
    let compute = |v: &serde_json::Value| v["compute_s"].as_f64().unwrap();
    assert!(compute(&fast) < compute(&plain), "{fast} vs {plain}");
    assert_eq!(
        fast["counted_instructions"], plain["counted_instructions"],
        "the counts do not change, their cost does"
    );
    assert!(plain["transfer_s"].as_f64().unwrap() > 0.0);
    assert_eq!((both["transfer_s"].as_f64(), both["retrieve_s"].as_f64()), (Some(0.0), Some(0.0)));
    assert_eq!(compute(&both), compute(&fast));
    assert_eq!(fast["model"], "upmem-v1b@2+mul=1/2 (modeled)");
    assert_eq!(both["what_if"], "mul-cycles=1/2,zero-copy");
    assert!(text.contains("(modeled, upmem-v1b@2+mul=1/2)"), "{text}");
    assert!(plain.get("what_if").is_none());

    // Usage errors name the flag; what-ifs belong to upmem-emu.
    let error = target(with(&["mul-cycles=0"])).unwrap_err();
    assert!(error.is_usage() && error.to_string().starts_with("--what-if mul-cycles=0 is not allowed"), "{error}");
    let error = target(TargetFlags { what_if: vec!["zero-copy".into()], ..TargetFlags::default() }).unwrap_err();
    assert!(error.is_usage() && error.to_string().contains("--what-if applies to --backend upmem-emu only"), "{error}");
}

#[test]
fn section5_rows_render_beside_what_the_text_states() {
    let config = DramaticConfig { rows: Some("s5-bgv-mul".into()), max_emulation_s: 2.0, ..DramaticConfig::default() };
    let report = dramatic::reproduce(&config, &NoProgress).unwrap();
    let ids: Vec<String> =
        report.rows.iter().map(|r| serde_json::to_value(r).unwrap()["id"].as_str().unwrap().to_string()).collect();
    assert_eq!(
        ids,
        ["s5-bgv-mul-4096-base", "s5-bgv-mul-4096-dummy", "s5-bgv-mul-4096-dummy-zc", "s5-bgv-mul-4096-1cycle"]
    );
    let rows: Vec<serde_json::Value> = report.rows.iter().map(|r| serde_json::to_value(r).unwrap()).collect();
    assert!(rows[0].get("claims").is_none() && rows[0]["reference"].as_str().unwrap().starts_with("no published"));
    let speedup = &rows[1]["claims"][0];
    assert_eq!(speedup["quantity"], "speed-up over s5-bgv-mul-4096-base");
    assert_eq!(speedup["published"], 3.3);
    assert!(speedup["ours"].as_f64().unwrap() > 1.0);
    assert_eq!(rows[2]["transfer_s"], 0.0);
    assert_eq!(rows[2]["model"], "upmem-v1b@2+mul=4/6+zero-copy (modeled)");
    assert_eq!(rows[1]["compute_s"], rows[2]["compute_s"]);
    let text = report.render();
    assert!(text.lines().any(|l| l.starts_with("s5    bgv-mul   4096  3  32768  509 seq")), "{text}");
    assert!(text.contains("s5-bgv-mul-4096-dummy: speed-up over s5-bgv-mul-4096-base"), "{text}");
    assert!(text.contains("section 5: ") && text.contains("figures the text states"), "{text}");
}
