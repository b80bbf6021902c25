//! `--mode auto` on a real job: BGV multiply + relinearize + modulus switch (the demo's server)
//! on emulated DPUs. The placement the planner chooses is never dearer than any placement
//! forced (at 7 DPUs for 4 primes sequential mode beats parallel mode's three idle DPUs),
//! every placement's result decrypts to the plaintext product, and the plan lists every
//! candidate. A job that can adopt the cheapest pricing run is not run again.

use pimhe_bench::target::planner::CANDIDATES;
use pimhe_bench::target::{Cost, Device, DeviceNeeds, Job, Target, UpmemTarget};
use pimhe_bench::Result;
use std::cell::Cell;

use pimhe_exec::{Backend, CpuBackend};
use pimhe_math::ntt_primes;
use pimhe_ring::{PolyBatch, Representation, RingBasis};
use pimhe_schemes::bgv::BgvParameters;
use pimhe_workloads::bgv_pipeline::{BgvPipeline, Checked};

/// The demo's server computation, checked by decryption after the priced part.
#[derive(Clone, Copy)]
struct Product<'a> {
    pipeline: &'a BgvPipeline,
}

impl Job for Product<'_> {
    type Output = Checked;
    fn pricing_copy(&self) -> Option<Self> {
        Some(*self)
    }

    fn adopt(self, _: &Self::Output) -> std::result::Result<(), Self> {
        Ok(()) // it shows nothing while it runs
    }

    fn run<B: Backend>(self, device: &Device<'_, B>) -> Result<Checked> {
        let (x, y) = self.pipeline.encrypt(device.backend)?;
        device.start_pricing()?;
        let product = self.pipeline.serve(device.backend, &x, &y, |_, _| {})?;
        device.stop_pricing()?;
        Ok(self.pipeline.check(device.backend, &product)?)
    }
}

fn planned_s(cost: &Cost) -> f64 {
    match cost {
        Cost::Upmem(report) => report.planned_s(),
        Cost::Cpu { .. } | Cost::Nearbank(_) => panic!("an upmem-emu run: {cost:?}"),
    }
}

#[test]
fn the_chosen_placement_is_never_dearer_than_a_forced_one() {
    let cpu = CpuBackend::new(Some(2)).unwrap();
    for (n, batch, dpus) in [(4096, 2, 8), (4096, 9, 7)] {
        let params = BgvParameters::preset(n).unwrap();
        let pipeline = BgvPipeline::new(&cpu, params, batch, 5).unwrap();
        let needs = DeviceNeeds { n, primes: pipeline.primes() };
        let auto = Target::UpmemEmu(UpmemTarget::new(dpus)).run(&needs, Product { pipeline: &pipeline }).unwrap();
        assert!(matches!(auto.output, Checked::Match { .. }), "auto: {:?}", auto.output);
        let plan = auto.plan.as_ref().expect("an auto run carries its plan");
        assert_eq!(plan.candidates.len(), CANDIDATES.len());
        let chosen_s = planned_s(&auto.cost);
        for mode in CANDIDATES {
            let forced = UpmemTarget { mode: Some(mode), ..UpmemTarget::new(dpus) };
            let ran = Target::UpmemEmu(forced).run(&needs, Product { pipeline: &pipeline }).unwrap();
            assert!(matches!(ran.output, Checked::Match { .. }), "{}: {:?}", mode.name(), ran.output);
            let forced_s = planned_s(&ran.cost);
            assert!(
                chosen_s <= forced_s * (1.0 + 1e-12),
                "N = {n}, batch {batch}: auto ({}) {chosen_s} s > {} {forced_s} s",
                plan.chosen,
                mode.name()
            );
            if mode == plan.mode {
                assert_eq!(chosen_s, forced_s, "the chosen placement's run is the forced one's");
            }
        }
    }
}

/// A job that counts its runs (the planner's pricing copies share the counter) and whose
/// pricing run stands for its own when `adopts`.
struct Counted<'a> {
    runs: &'a Cell<usize>,
    adopts: bool,
    adopted: &'a Cell<bool>,
}

impl Job for Counted<'_> {
    type Output = usize;

    fn pricing_copy(&self) -> Option<Self> {
        Some(Counted { runs: self.runs, adopts: self.adopts, adopted: self.adopted })
    }

    fn adopt(self, _: &usize) -> std::result::Result<(), Self> {
        if !self.adopts {
            return Err(self);
        }
        self.adopted.set(true);
        Ok(())
    }

    fn run<B: Backend>(self, device: &Device<'_, B>) -> Result<usize> {
        self.runs.set(self.runs.get() + 1);
        let batch = PolyBatch::zeros(
            &RingBasis::new(1024, &ntt_primes(30, 1024, 2, &[]).unwrap()).unwrap(),
            2,
            Representation::Coefficient,
        );
        device.start_pricing()?;
        let mut x = device.backend.upload(batch)?;
        device.backend.ntt(&mut x)?;
        device.backend.download(&x)?;
        device.stop_pricing()?;
        Ok(self.runs.get())
    }
}

#[test]
fn a_job_that_adopts_its_pricing_run_is_not_run_again() {
    let needs = DeviceNeeds { n: 1024, primes: ntt_primes(30, 1024, 2, &[]).unwrap() };
    for adopts in [true, false] {
        let (runs, adopted) = (Cell::new(0), Cell::new(false));
        let ran = Target::UpmemEmu(UpmemTarget::new(4))
            .run(&needs, Counted { runs: &runs, adopts, adopted: &adopted })
            .unwrap();
        // Every candidate's pricing run, and the job's own only where it cannot adopt one.
        let expected = CANDIDATES.len() + usize::from(!adopts);
        assert_eq!((runs.get(), adopted.get()), (expected, adopts), "adopts: {adopts}");
        assert!(ran.plan.is_some());
    }
}
