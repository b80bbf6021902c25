//! The near-bank backend against the CPU backend on random programs: the same generators and
//! interpreters as the UPMEM differential test (`crates/pim/tests/differential_support`,
//! included here by path, so one generator serves every backend): every `Backend` operation
//! on random shapes, BGV and BFV programs at real parameters, CKKS programs with rotations,
//! hoisting, linear transforms and polynomials. Every step must give bit-identical results or
//! the same refusal, and every recorded trace must plan into a program.

#[path = "../../pim/tests/differential_support/mod.rs"]
#[allow(dead_code)] // the UPMEM test uses parts of the support this one does not
mod differential_support;

use differential_support::backend_programs::{self, BackendProgram};
use differential_support::ckks_programs::{self, CkksFixture, CkksProgram};
use differential_support::scheme_programs::{self, Fixture, SchemeKind, SchemeProgram};
use differential_support::{compare, Event, Verdict};
use pimhe_exec::CpuBackend;
use pimhe_nearbank::isa::Kernel;
use pimhe_nearbank::planner::plan;
use pimhe_nearbank::NearbankBackend;
use pimhe_schemes::bfv::BfvContext;
use pimhe_schemes::bgv::BgvContext;

/// Programs per kind in CI (`PIMHE_DIFF_PROGRAMS` overrides, for a longer run).
fn programs(default: u64) -> u64 {
    std::env::var("PIMHE_DIFF_PROGRAMS").map_or(default, |v| v.parse().expect("PIMHE_DIFF_PROGRAMS is a number"))
}

fn check(what: &str, seed: u64, reference: &[Event], candidate: &[Event], backend: &NearbankBackend) {
    match compare(reference, candidate, |_| false) {
        Verdict::Same => {}
        verdict => panic!("{what} program {seed}: {verdict:?}"),
    }
    let trace = backend.take_trace();
    let program = plan(&trace);
    // Whatever ran element-wise work reached the PIM side.
    if trace
        .steps
        .iter()
        .any(|s| matches!(s.op, pimhe_nearbank::trace::StepOp::Mul | pimhe_nearbank::trace::StepOp::Tensor))
    {
        assert!(program.iter().any(|k| matches!(k, Kernel::Pim(_))), "{what} program {seed}: no PIM instruction");
    }
}

#[test]
fn random_backend_programs_agree_with_the_cpu_backend() {
    let cpu = CpuBackend::new(Some(2)).unwrap();
    let nearbank = NearbankBackend::new(Some(2)).unwrap();
    for seed in 0..programs(200) {
        let program = BackendProgram::generate(seed);
        let reference = backend_programs::run(&cpu, &program);
        let candidate = backend_programs::run(&nearbank, &program);
        check("backend", seed, &reference, &candidate, &nearbank);
    }
}

#[test]
fn random_bgv_and_bfv_programs_agree_with_the_cpu_backend() {
    let cpu = CpuBackend::new(Some(2)).unwrap();
    let nearbank = NearbankBackend::new(Some(2)).unwrap();
    let mut bgv = std::collections::HashMap::new();
    let mut bfv = std::collections::HashMap::new();
    for seed in 0..programs(12) {
        let (reference, candidate) = match SchemeProgram::kind(seed) {
            (SchemeKind::Bgv, degree) => {
                let fixture: &Fixture<BgvContext> = bgv.entry(degree).or_insert_with(|| Fixture::new(degree, 7));
                let program = SchemeProgram::generate(seed, &fixture.preset);
                (scheme_programs::run(&cpu, fixture, &program), scheme_programs::run(&nearbank, fixture, &program))
            }
            (SchemeKind::Bfv, degree) => {
                let fixture: &Fixture<BfvContext> = bfv.entry(degree).or_insert_with(|| Fixture::new(degree, 7));
                let program = SchemeProgram::generate(seed, &fixture.preset);
                (scheme_programs::run(&cpu, fixture, &program), scheme_programs::run(&nearbank, fixture, &program))
            }
        };
        assert!(reference.plain.wrong.is_empty(), "program {seed}: {:?}", reference.plain.wrong);
        check("scheme", seed, &reference.events, &candidate.events, &nearbank);
    }
}

#[test]
fn random_ckks_programs_agree_with_the_cpu_backend() {
    let cpu = CpuBackend::new(Some(2)).unwrap();
    let nearbank = NearbankBackend::new(Some(2)).unwrap();
    let mut fixtures = std::collections::HashMap::new();
    for seed in 0..programs(12) {
        let set = CkksProgram::set_of(seed);
        let fixture = fixtures.entry(set).or_insert_with(|| CkksFixture::new(set, 7));
        let program = CkksProgram::generate(seed, fixture);
        let reference = ckks_programs::run(&cpu, fixture, &program);
        let candidate = ckks_programs::run(&nearbank, fixture, &program);
        assert!(reference.plain.wrong.is_empty(), "program {seed}: {:?}", reference.plain.wrong);
        check("CKKS", seed, &reference.events, &candidate.events, &nearbank);
    }
}
