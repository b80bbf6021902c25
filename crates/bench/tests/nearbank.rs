//! The nearbank backend as `pimhe bench` and `pimhe bench scheme` run it: the modeled report of
//! a recorded program beside "w/o PIM", the flags it takes and refuses, and Anaheim's
//! reproduction.

use pimhe_bench::measure::kernels::{self, KernelConfig, KernelReport, Op};
use pimhe_bench::measure::scheme::{self, SchemeConfig};
use pimhe_bench::reproduce::anaheim::{self, AnaheimConfig};
use pimhe_bench::target::{Target, TargetFlags};
use pimhe_bench::{BenchError, NoProgress, Render};

/// The target of `bench OP`'s flags: the near-bank backend with `flags`.
fn nearbank(flags: TargetFlags) -> Result<Target, BenchError> {
    TargetFlags { backend: Some("nearbank".into()), ..flags }.parse(&kernels::RULES)
}

fn json(report: &impl serde::Serialize) -> serde_json::Value {
    serde_json::from_str(&pimhe_bench::format::to_json(report).unwrap()).unwrap()
}

#[test]
fn a_kernel_is_planned_and_priced_beside_the_gpu_alone() {
    let flags = TargetFlags { threads: Some(1), system: Some("rtx4090-nearbank".into()), ..TargetFlags::default() };
    let config = KernelConfig {
        target: nearbank(flags).unwrap(),
        // Large enough that the GPU's DRAM traffic outweighs the switch to the PIM side.
        ..KernelConfig::new(Op::BgvMul, 8192, Some(8), 16)
    };
    let report = kernels::run(&config).unwrap();
    let KernelReport::Nearbank(nearbank) = &report else { panic!("a nearbank report") };
    let value = json(nearbank);
    assert_eq!(value["system"], "rtx4090-nearbank");
    assert_eq!(value["buffer_entries"], 32);
    assert_eq!(value["pim_instructions"], 1, "{value}");
    assert_eq!(value["kinds"][0]["kind"], "Tensor", "{value}");
    // The tensor is element-wise: PIM beats the GPU on it, and nothing ran on the GPU.
    assert!(value["speedup"].as_f64().unwrap() > 1.5, "{value}");
    assert_eq!(value["gpu_s"].as_f64().unwrap(), 0.0, "{value}");
    let text = report.render();
    assert!(text.contains("(modeled)") && text.contains("anaheim-nb@"), "{text}");
}

#[test]
fn near_bank_flags_are_checked_and_refused_elsewhere() {
    let error = nearbank(TargetFlags { system: Some("h100".into()), ..TargetFlags::default() }).unwrap_err();
    assert!(error.is_usage() && error.to_string().contains("a100-nearbank"), "{error}");
    let empty = nearbank(TargetFlags { buffer_entries: Some(0), ..TargetFlags::default() }).unwrap_err();
    assert!(empty.to_string().starts_with("--buffer-entries"));
    let on_cpu = TargetFlags { system: Some("a100-nearbank".into()), ..TargetFlags::default() };
    assert_eq!(
        on_cpu.parse(&kernels::RULES).unwrap_err(),
        BenchError::usage("--system applies to --backend nearbank only (this run uses --backend cpu)")
    );
    let dpus = nearbank(TargetFlags { dpus: Some(4), ..TargetFlags::default() }).unwrap_err();
    assert!(dpus.to_string().starts_with("--dpus applies to --backend upmem-emu only"));
    // A target built elsewhere (a Python Backend) is refused where the command does not run it.
    let upmem = Target::UpmemEmu(pimhe_bench::target::UpmemTarget::new(4));
    let config = SchemeConfig { target: upmem, ..SchemeConfig::new("bgv", 4096) };
    let error = scheme::measure(&config, &NoProgress).unwrap_err();
    assert_eq!(error.to_string(), "--backend upmem-emu is not allowed: choose cpu or nearbank");
}

#[test]
fn scheme_operations_are_modeled_one_by_one() {
    let config = SchemeConfig {
        target: nearbank(TargetFlags { threads: Some(1), ..TargetFlags::default() }).unwrap(),
        batch: 1,
        repeat: 1,
        ..SchemeConfig::new("bgv", 4096)
    };
    let report = scheme::measure(&config, &NoProgress).unwrap();
    let value = json(&report);
    assert_eq!(value["backend"], "nearbank");
    let ops: Vec<&str> =
        value["modeled"]["ops"].as_array().unwrap().iter().map(|o| o["op"].as_str().unwrap()).collect();
    assert!(ops.contains(&"relinearize") && ops.contains(&"multiply"), "{ops:?}");
    let relin = value["modeled"]["ops"].as_array().unwrap().iter().find(|o| o["op"] == "relinearize").unwrap();
    // Key switching keeps its transforms on the GPU and its products on the PIM units.
    assert!(relin["gpu_s"].as_f64().unwrap() > 0.0 && relin["pim_s"].as_f64().unwrap() > 0.0, "{relin}");
    assert!(relin["kinds"].as_array().unwrap().iter().any(|k| k["kind"].as_str().unwrap().starts_with("PAccum")));
    assert!(report.render().contains("w/o PIM"));
}

#[test]
fn the_anaheim_reproduction_has_every_instruction_system_and_buffer_size() {
    let config = AnaheimConfig { workload_n: 8192, threads: Some(2), ..AnaheimConfig::default() };
    let report = anaheim::reproduce(&config, &NoProgress).unwrap();
    assert_eq!(report.micro.len(), 3 * 17 * anaheim::BUFFER_SWEEP.len());
    // The six published speedups each have a row of ours at the default B.
    let compared: Vec<_> = report.micro.iter().filter(|r| r.published_speedup.is_some()).collect();
    assert_eq!(compared.len(), 6);
    assert!(compared.iter().all(|r| r.default_b && r.ratio.is_some()), "{compared:?}");
    // Every CKKS operation of the benchmark, priced on each system.
    assert_eq!(report.workloads.len() % 3, 0);
    assert!(report.workloads.iter().any(|w| w.workload == "rotate_hoisted_8"));
    // Without column partitioning the same programs' PIM instructions only get slower.
    assert_eq!(report.without_cp.len(), 3);
    assert!(report.without_cp.iter().all(|w| w.slowdown > 1.0), "{:?}", report.without_cp);
    let text = report.render();
    assert!(text.contains("PAccum(4)") && text.contains("Table V"), "{text}");
}
