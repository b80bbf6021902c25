//! Shared helpers of the emulator tests: images, operands, CPU oracles, the PIM.md cycle model.
#![allow(dead_code, unused_imports)]

use pimhe_pim::counts::DpuCounts;
use pimhe_pim::emulator::{DpuSet, EmulatorConfig, EmulatorError};
use pimhe_pim::layout::{prime_image, prime_tables, MramLayout, PimheCommand, PrimeTables, Variant};

pub use pimhe_pim::raw_poly::residues;

/// Primes of several sizes (30 bits and smaller) that are 1 mod 2N.
pub fn primes_for(n: usize) -> Vec<u32> {
    let mut out = Vec::new();
    for bits in [30u32, 25, 18] {
        if (1u64 << (bits - 1)) > 4 * n as u64 {
            if let Ok(p) = pimhe_math::ntt_primes(bits, n, 1, &[]) {
                out.push(p[0]);
            }
        }
    }
    out
}

/// One DPU's setup: tables, layout and the image for a command list.
pub struct Dpu {
    pub tables: PrimeTables,
    pub layout: MramLayout,
}

impl Dpu {
    pub fn new(q: u32, n: usize, command_capacity: usize) -> Self {
        Self { tables: prime_tables(q, n).unwrap(), layout: MramLayout::new(n, command_capacity) }
    }

    pub fn n(&self) -> usize {
        self.layout.n
    }

    pub fn q(&self) -> u32 {
        self.tables.modulus.value()
    }

    /// Offset of sub-polynomial `index` of the operand area.
    pub fn at(&self, index: usize) -> u32 {
        self.layout.operand_offset(index)
    }

    /// Writes the header, tables and commands to DPU `dpu`.
    pub fn load(&self, set: &mut DpuSet, dpu: usize, variant: Variant, commands: &[PimheCommand]) {
        let image = prime_image(&self.tables, variant, &self.layout, commands).unwrap();
        set.write(dpu, 0, &image).unwrap();
    }

    pub fn put(&self, set: &mut DpuSet, dpu: usize, index: usize, words: &[u32]) {
        set.write_u32s(dpu, self.at(index) as usize, words).unwrap();
    }

    pub fn get(&self, set: &DpuSet, dpu: usize, index: usize, len: usize) -> Vec<u32> {
        let mut out = vec![0u32; len];
        set.read_u32s(dpu, self.at(index) as usize, &mut out).unwrap();
        out
    }

    pub fn cpu_ntt(&self, data: &[u32]) -> Vec<u32> {
        let mut v = data.to_vec();
        for c in v.chunks_mut(self.n()) {
            self.tables.table.forward(c);
        }
        v
    }

    pub fn cpu_intt(&self, data: &[u32]) -> Vec<u32> {
        let mut v = data.to_vec();
        for c in v.chunks_mut(self.n()) {
            self.tables.table.inverse(c);
        }
        v
    }
}

pub fn set(dpus: usize, config: EmulatorConfig) -> DpuSet {
    DpuSet::new(dpus, config).unwrap()
}

/// PIM.md's `upmem-v1b` cycle model with PrIM's DMA constants (alpha 77 cycles per read, 61 per
/// write, beta 0.5 cycles per byte): a local copy, so that these tests do not depend on the
/// model crate's evolution.
pub fn model_cycles(counts: &DpuCounts) -> f64 {
    let instr: Vec<f64> = counts.tasklets.iter().map(|t| t.instructions as f64).collect();
    let dma: Vec<f64> = counts
        .tasklets
        .iter()
        .map(|t| {
            t.dma_reads as f64 * 77.0 + t.dma_writes as f64 * 61.0 + 0.5 * (t.dma_read_bytes + t.dma_write_bytes) as f64
        })
        .collect();
    let sum_instr: f64 = instr.iter().sum();
    let pipeline = instr.iter().zip(&dma).map(|(i, d)| 11.0 * (i + d)).fold(0.0, f64::max);
    let compute = sum_instr.max(pipeline);
    compute.max(dma.iter().sum())
}

/// Butterflies of one NTT of degree n.
pub fn butterflies(n: usize) -> usize {
    n / 2 * n.trailing_zeros() as usize
}

/// Runs `command` alone on a fresh DPU of `d` (barrett variant) and asserts the kernel refuses
/// it with `expected` (a `layout::status` code).
pub fn assert_refused(d: &Dpu, command: PimheCommand, expected: u32) {
    let mut dpus = set(1, EmulatorConfig::default());
    d.load(&mut dpus, 0, Variant::Barrett, &[command]);
    match dpus.launch(&[0]) {
        Err(EmulatorError::KernelStatus { status, .. }) => assert_eq!(status, expected, "{command:?}"),
        other => panic!("{command:?}: {other:?}"),
    }
}
