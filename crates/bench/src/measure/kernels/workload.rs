//! What `bench OP` runs, and the timed part written once against the [`Backend`] trait: the
//! operations ([`Op`]), a run's ring, batch and seed ([`Workload`]), its generated inputs, the
//! memory guard, and [`execute`] / [`run_op`].

use std::sync::Arc;
use std::time::Instant;

use pimhe_exec::Backend;
use pimhe_math::{ntt_primes, MathError, Sampler};
use pimhe_ring::{memory, PolyBatch, Representation, RingBasis};
use serde::Serialize;

use crate::error::{BenchError, Result};
use crate::measure::inputs::random_batch;

/// Smallest and largest ring degree the benchmark accepts (log2).
const LOG_N_RANGE: std::ops::RangeInclusive<u32> = 4..=20;

/// The operation to time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Op {
    /// `ntt` ([`Op::description`] says what each operation times).
    Ntt,
    /// `intt`.
    Intt,
    /// `bgv-mul`.
    BgvMul,
    /// `pipeline`.
    Pipeline,
    /// `bfv-mul`.
    BfvMul,
    /// `bfv-add`.
    BfvAdd,
    /// `bgv-mul-relin`.
    BgvMulRelin,
}

impl Op {
    /// Every operation, in the order `bench` lists them.
    pub const ALL: [Op; 7] = [Op::Ntt, Op::Intt, Op::BgvMul, Op::Pipeline, Op::BfvMul, Op::BfvAdd, Op::BgvMulRelin];

    /// The operation `name` spells (`ntt`, `bgv-mul`, ...), if any.
    pub fn from_name(name: &str) -> Option<Op> {
        Op::ALL.into_iter().find(|op| op.name() == name)
    }

    /// The name `bench` takes and reports.
    pub fn name(self) -> &'static str {
        match self {
            Op::Ntt => "ntt",
            Op::Intt => "intt",
            Op::BgvMul => "bgv-mul",
            Op::Pipeline => "pipeline",
            Op::BfvMul => "bfv-mul",
            Op::BfvAdd => "bfv-add",
            Op::BgvMulRelin => "bgv-mul-relin",
        }
    }

    /// What the operation times, as `bench OP --help` lists it.
    pub fn description(self) -> &'static str {
        match self {
            Op::Ntt => "Forward NTT of the 2C input polynomials",
            Op::Intt => "Inverse NTT of the 2C input polynomials",
            Op::BgvMul => "C/2 ciphertext products (BGV tensor, NTT form in and out)",
            Op::Pipeline => "NTT of the inputs, the C/2 tensor products, inverse NTT of the outputs",
            Op::BfvMul => "C/2 BFV products of real ciphertexts at the preset of N: BEHZ multiply + relinearize",
            Op::BfvAdd => "C/2 BFV sums of real ciphertexts at the preset of N",
            Op::BgvMulRelin => "C/2 BGV products of real ciphertexts at the preset of N: multiply + relinearize",
        }
    }

    /// Whether the operation multiplies ciphertexts in pairs (needs an even batch).
    pub fn pairs(self) -> bool {
        matches!(self, Op::BgvMul | Op::Pipeline | Op::BfvMul | Op::BfvAdd | Op::BgvMulRelin)
    }

    /// Resident polynomials per input polynomial, as a fraction (numerator, denominator):
    /// the inputs, plus for products the three outputs of C/2 polynomials each (3.5C in all).
    fn memory_factor(self) -> (u128, u128) {
        if self.pairs() {
            (7, 4)
        } else {
            (1, 1)
        }
    }

    /// What the throughput counts: polynomials transformed, or ciphertext products.
    pub fn unit(self) -> &'static str {
        if self.pairs() {
            "products"
        } else {
            "polys"
        }
    }
}

/// What to run: an operation over a basis, on a batch of ciphertexts generated from a seed.
#[derive(Debug, Clone)]
pub struct Workload {
    /// The operation.
    pub op: Op,
    /// Ring degree and primes.
    pub basis: Arc<RingBasis>,
    /// Number C of input ciphertexts.
    pub batch: usize,
    /// Seed of the input generator.
    pub seed: u64,
}

impl Workload {
    /// Validates the parameters and finds the primes. Every error names the offending flag.
    pub fn new(op: Op, n: usize, primes: usize, prime_bits: u32, batch: usize, seed: u64) -> Result<Self> {
        if !n.is_power_of_two() || !LOG_N_RANGE.contains(&n.trailing_zeros()) {
            return Err(BenchError::usage(format!(
                "--n {n} is not allowed: the ring degree must be a power of two from {} (2^{}) to {} (2^{})",
                1usize << LOG_N_RANGE.start(),
                LOG_N_RANGE.start(),
                1usize << LOG_N_RANGE.end(),
                LOG_N_RANGE.end()
            )));
        }
        if primes == 0 {
            return Err(BenchError::usage("--primes 0 is not allowed: at least 1 prime is needed"));
        }
        if !(2..=30).contains(&prime_bits) {
            return Err(BenchError::usage(format!(
                "--prime-bits {prime_bits} is not allowed: primes must have 2..=30 bits"
            )));
        }
        if batch == 0 {
            return Err(BenchError::usage("--batch 0 is not allowed: at least 1 ciphertext is needed"));
        }
        if op.pairs() && !batch.is_multiple_of(2) {
            return Err(BenchError::usage(format!(
                "--batch {batch} is not allowed for {}: ciphertexts are multiplied in pairs, so the \
                 batch must be even and at least 2",
                op.name()
            )));
        }
        if batch.checked_mul(2).and_then(|p| p.checked_mul(primes)).and_then(|r| r.checked_mul(n)).is_none() {
            return Err(BenchError::usage(format!(
                "--batch {batch} with --primes {primes} and --n {n} is too large to address"
            )));
        }
        let moduli = ntt_primes(prime_bits, n, primes, &[]).map_err(|e| match e {
            MathError::NotEnoughPrimes { found, step, .. } => BenchError::usage(format!(
                "--primes {primes} is not available: only {found} primes of {prime_bits} bits with \
                 p = 1 mod {step} (2N) exist; lower --primes or --n, or raise --prime-bits"
            )),
            other => BenchError::usage(format!("cannot choose primes: {other}")),
        })?;
        let basis = RingBasis::new(n, &moduli)?;
        Ok(Self { op, basis, batch, seed })
    }

    /// Ring degree N.
    pub fn n(&self) -> usize {
        self.basis.degree()
    }

    /// Number K of primes.
    pub fn primes(&self) -> usize {
        self.basis.len()
    }

    /// Input polynomials: two per ciphertext.
    pub fn input_polys(&self) -> usize {
        2 * self.batch
    }

    /// Residues of the input polynomials (2C x N x K).
    pub fn input_residues(&self) -> u128 {
        (self.input_polys() * self.n() * self.primes()) as u128
    }

    /// Estimated bytes of the device buffers a run holds at once: 4 bytes a residue, inputs
    /// plus outputs.
    pub fn estimated_bytes(&self) -> u128 {
        let (num, den) = self.op.memory_factor();
        4 * self.input_residues() * num / den
    }
}

/// The host inputs of a workload, in the order [`execute`] takes them: one batch of 2C
/// polynomials for `ntt`/`intt`; a0, a1, b0, b1 (C/2 polynomials each: the two components of
/// ciphertexts 0..C/2, then of C/2..C) for `bgv-mul` and `pipeline`.
pub fn generate_inputs(workload: &Workload) -> Result<Vec<PolyBatch>> {
    let mut sampler = Sampler::from_seed_u64(workload.seed);
    let basis = &workload.basis;
    let polys = workload.input_polys();
    match workload.op {
        Op::Ntt => Ok(vec![random_batch(basis, polys, Representation::Coefficient, &mut sampler)?]),
        Op::Intt => Ok(vec![random_batch(basis, polys, Representation::Ntt, &mut sampler)?]),
        Op::BfvMul | Op::BfvAdd | Op::BgvMulRelin => Err(BenchError::Failed(format!(
            "internal error: {} encrypts real inputs (kernels::exact), it has no random ones",
            workload.op.name()
        ))),
        Op::BgvMul | Op::Pipeline => {
            let representation =
                if workload.op == Op::BgvMul { Representation::Ntt } else { Representation::Coefficient };
            (0..4).map(|_| random_batch(basis, workload.batch / 2, representation, &mut sampler)).collect()
        }
    }
}

/// Refuses workloads whose buffers would fill more than [`memory::MEMORY_SHARE`] of
/// `available` bytes (no check when the available memory is unknown).
pub fn check_memory(workload: &Workload, available: Option<u64>) -> Result<()> {
    let what = format!(
        "the buffers of this run ({} ciphertexts of N={} over {} primes, {})",
        workload.batch,
        workload.n(),
        workload.primes(),
        workload.op.name()
    );
    memory::ensure_fits_in(&what, workload.estimated_bytes(), available)
        .map_err(|e| BenchError::usage(format!("{e}; lower --batch, --primes or --n")))
}

/// The timed work of `op` on uploaded inputs (see [`generate_inputs`]). Transforms run in
/// place on the inputs; products return their outputs (d0, d1, d2).
pub fn execute<B: Backend>(backend: &B, op: Op, inputs: &mut [B::Buffer]) -> Result<Vec<B::Buffer>> {
    match (op, inputs) {
        (Op::Ntt, [a]) => {
            backend.ntt(a)?;
            Ok(Vec::new())
        }
        (Op::Intt, [a]) => {
            backend.intt(a)?;
            Ok(Vec::new())
        }
        (Op::BgvMul, [a0, a1, b0, b1]) => Ok(backend.tensor(a0, a1, b0, b1)?.into()),
        (Op::Pipeline, [a0, a1, b0, b1]) => {
            for x in [&mut *a0, &mut *a1, &mut *b0, &mut *b1] {
                backend.ntt(x)?;
            }
            let mut outputs = backend.tensor(a0, a1, b0, b1)?;
            for d in &mut outputs {
                backend.intt(d)?;
            }
            Ok(outputs.into())
        }
        (op, inputs) => Err(BenchError::Failed(format!(
            "internal error: {} takes {} input batches, got {}",
            op.name(),
            if op.pairs() { 4 } else { 1 },
            inputs.len()
        ))),
    }
}

/// Brings inputs transformed in place by [`execute`] back to their initial representation
/// (untimed, between repeats).
pub fn restore<B: Backend>(backend: &B, op: Op, inputs: &mut [B::Buffer]) -> Result<()> {
    match op {
        Op::Ntt => inputs.iter_mut().try_for_each(|a| backend.intt(a))?,
        Op::Intt => inputs.iter_mut().try_for_each(|a| backend.ntt(a))?,
        Op::BgvMul | Op::BfvMul | Op::BfvAdd | Op::BgvMulRelin => {}
        Op::Pipeline => inputs.iter_mut().try_for_each(|a| backend.intt(a))?,
    }
    Ok(())
}

/// Generates and uploads the inputs, then times `repeats` runs of [`execute`]; returns the
/// seconds of each.
pub fn run_op<B: Backend>(backend: &B, workload: &Workload, repeats: usize) -> Result<Vec<f64>> {
    let mut inputs = generate_inputs(workload)?
        .into_iter()
        .map(|batch| backend.upload(batch))
        .collect::<pimhe_exec::Result<Vec<_>>>()?;
    let mut times = Vec::with_capacity(repeats);
    for repeat in 0..repeats {
        if repeat > 0 {
            restore(backend, workload.op, &mut inputs)?;
        }
        let start = Instant::now();
        let outputs = execute(backend, workload.op, &mut inputs)?;
        times.push(start.elapsed().as_secs_f64());
        drop(outputs);
    }
    Ok(times)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pimhe_exec::CpuBackend;

    fn backend() -> CpuBackend {
        CpuBackend::new(Some(2)).unwrap()
    }

    fn upload_all(backend: &CpuBackend, batches: &[PolyBatch]) -> Vec<PolyBatch> {
        batches.iter().map(|b| backend.upload(b.clone()).unwrap()).collect()
    }

    /// Negacyclic product of two polynomials modulo q, by the schoolbook formula.
    fn schoolbook(a: &[u32], b: &[u32], q: u64) -> Vec<u64> {
        let n = a.len();
        let mut out = vec![0u64; n];
        for (i, &x) in a.iter().enumerate() {
            for (j, &y) in b.iter().enumerate() {
                let product = x as u64 * y as u64 % q;
                let k = (i + j) % n;
                out[k] = if i + j < n { (out[k] + product) % q } else { (out[k] + q - product) % q };
            }
        }
        out
    }

    #[test]
    fn bgv_mul_matches_a_per_element_oracle() {
        let workload = Workload::new(Op::BgvMul, 16, 2, 20, 6, 7).unwrap();
        let host = generate_inputs(&workload).unwrap();
        assert_eq!(host.len(), 4);
        assert!(host.iter().all(|b| b.count() == 3 && b.representation() == Representation::Ntt));
        let backend = backend();
        let mut inputs = upload_all(&backend, &host);
        let outputs = execute(&backend, Op::BgvMul, &mut inputs).unwrap();
        assert_eq!(outputs.len(), 3);
        let outputs: Vec<PolyBatch> = outputs.iter().map(|d| backend.download(d).unwrap()).collect();
        let (a0, a1, b0, b1) = (&host[0], &host[1], &host[2], &host[3]);
        let mut nonzero = 0;
        for limb in 0..workload.primes() {
            let q = workload.basis.modulus(limb).value() as u64;
            for poly in 0..3 {
                for i in 0..16 {
                    let x0 = a0.poly_limb(limb, poly)[i] as u64;
                    let x1 = a1.poly_limb(limb, poly)[i] as u64;
                    let y0 = b0.poly_limb(limb, poly)[i] as u64;
                    let y1 = b1.poly_limb(limb, poly)[i] as u64;
                    let expected = [x0 * y0 % q, (x0 * y1 + x1 * y0) % q, x1 * y1 % q];
                    for (d, e) in outputs.iter().zip(expected) {
                        assert_eq!(d.representation(), Representation::Ntt);
                        assert_eq!(d.poly_limb(limb, poly)[i] as u64, e, "limb {limb} poly {poly} slot {i}");
                        nonzero += (e != 0) as usize;
                    }
                }
            }
        }
        assert!(nonzero > 0, "random inputs should give nonzero products");
    }

    #[test]
    fn pipeline_computes_negacyclic_ciphertext_products() {
        let workload = Workload::new(Op::Pipeline, 16, 2, 20, 4, 3).unwrap();
        let host = generate_inputs(&workload).unwrap();
        let backend = backend();
        let mut inputs = upload_all(&backend, &host);
        let outputs = execute(&backend, Op::Pipeline, &mut inputs).unwrap();
        let outputs: Vec<PolyBatch> = outputs.iter().map(|d| backend.download(d).unwrap()).collect();
        let (a0, a1, b0, b1) = (&host[0], &host[1], &host[2], &host[3]);
        for limb in 0..workload.primes() {
            let q = workload.basis.modulus(limb).value() as u64;
            for poly in 0..2 {
                let p = |b: &PolyBatch| b.poly_limb(limb, poly).to_vec();
                let d0 = schoolbook(&p(a0), &p(b0), q);
                let d1: Vec<u64> = schoolbook(&p(a0), &p(b1), q)
                    .iter()
                    .zip(schoolbook(&p(a1), &p(b0), q))
                    .map(|(x, y)| (x + y) % q)
                    .collect();
                let d2 = schoolbook(&p(a1), &p(b1), q);
                for (out, expected) in outputs.iter().zip([d0, d1, d2]) {
                    assert_eq!(out.representation(), Representation::Coefficient);
                    let got: Vec<u64> = out.poly_limb(limb, poly).iter().map(|&x| x as u64).collect();
                    assert_eq!(got, expected, "limb {limb} poly {poly}");
                }
            }
        }
    }

    #[test]
    fn restore_brings_transformed_inputs_back() {
        let backend = backend();
        for op in [Op::Ntt, Op::Intt, Op::BgvMul, Op::Pipeline] {
            let workload = Workload::new(op, 32, 2, 30, 4, 5).unwrap();
            let host = generate_inputs(&workload).unwrap();
            let mut inputs = upload_all(&backend, &host);
            execute(&backend, op, &mut inputs).unwrap();
            restore(&backend, op, &mut inputs).unwrap();
            let back: Vec<PolyBatch> = inputs.iter().map(|b| backend.download(b).unwrap()).collect();
            assert_eq!(back, host, "{}", op.name());
            assert_eq!(run_op(&backend, &workload, 3).unwrap().len(), 3);
        }
    }

    #[test]
    fn ntt_transforms_every_polynomial() {
        let workload = Workload::new(Op::Ntt, 64, 3, 30, 5, 1).unwrap();
        let host = generate_inputs(&workload).unwrap();
        assert_eq!(host[0].count(), 10);
        let backend = backend();
        let mut inputs = upload_all(&backend, &host);
        execute(&backend, Op::Ntt, &mut inputs).unwrap();
        let mut expected = host[0].clone();
        expected.to_ntt().unwrap();
        assert_eq!(backend.download(&inputs[0]).unwrap(), expected);
    }

    #[test]
    fn inputs_depend_on_the_seed_only() {
        let a = Workload::new(Op::Intt, 16, 1, 30, 2, 9).unwrap();
        let b = Workload::new(Op::Intt, 16, 1, 30, 2, 10).unwrap();
        assert_eq!(generate_inputs(&a).unwrap(), generate_inputs(&a).unwrap());
        assert_ne!(generate_inputs(&a).unwrap(), generate_inputs(&b).unwrap());
    }

    #[test]
    fn invalid_parameters_name_their_flag() {
        let message = |r: Result<Workload>| match r {
            Err(BenchError::Usage(m)) => m,
            other => panic!("expected a usage error, got {other:?}"),
        };
        assert!(message(Workload::new(Op::Ntt, 1000, 1, 30, 1, 1)).starts_with("--n 1000"));
        assert!(message(Workload::new(Op::Ntt, 8, 1, 30, 1, 1)).starts_with("--n 8"));
        assert!(message(Workload::new(Op::Ntt, 1 << 21, 1, 30, 1, 1)).starts_with("--n 2097152"));
        assert!(message(Workload::new(Op::Ntt, 16, 0, 30, 1, 1)).starts_with("--primes 0"));
        assert!(message(Workload::new(Op::Ntt, 16, 1, 31, 1, 1)).starts_with("--prime-bits 31"));
        assert!(message(Workload::new(Op::Ntt, 16, 1, 1, 1, 1)).starts_with("--prime-bits 1"));
        assert!(message(Workload::new(Op::Ntt, 16, 1, 30, 0, 1)).starts_with("--batch 0"));
        assert!(message(Workload::new(Op::BgvMul, 16, 1, 30, 3, 1)).starts_with("--batch 3"));
        assert!(message(Workload::new(Op::Pipeline, 16, 1, 30, 1, 1)).contains("even"));
        assert!(message(Workload::new(Op::Ntt, 4096, 1000, 20, 1, 1)).starts_with("--primes 1000"));
        assert!(Workload::new(Op::Ntt, 16, 1, 30, 1, 1).is_ok());
    }

    #[test]
    fn memory_guard_refuses_oversized_runs() {
        let workload = Workload::new(Op::BgvMul, 4096, 3, 30, 1024, 1).unwrap();
        // 2C x N x K residues of 4 bytes, times 7/4 for the three outputs.
        assert_eq!(workload.estimated_bytes(), 4 * 2048 * 4096 * 3 * 7 / 4);
        let needed = workload.estimated_bytes() as u64;
        assert!(check_memory(&workload, None).is_ok());
        assert!(check_memory(&workload, Some(needed * 2)).is_ok());
        let refused = check_memory(&workload, Some(needed)).unwrap_err();
        assert!(matches!(refused, BenchError::Usage(_)));
        assert!(refused.to_string().contains("--batch"));
    }
}
