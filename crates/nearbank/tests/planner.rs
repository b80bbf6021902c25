//! The fusion planner on the traces of real CKKS operations (the instructions section V of
//! Anaheim names appear where it says: KeyMult as PAccum(dnum), ModDown's tail as ModDownEp,
//! a linear transform's plaintext products as PAccum(K), a square as TensorSq, a polynomial's
//! sums as CAccum) and on hand-made traces (no fusion over an intermediate someone else reads).

use std::sync::Arc;

use num_complex::Complex64;
use pimhe_exec::Backend;
use pimhe_math::Sampler;
use pimhe_nearbank::isa::{GpuOp, Kernel, Opcode, Program};
use pimhe_nearbank::planner::plan;
use pimhe_nearbank::trace::{Step, StepOp, Trace};
use pimhe_nearbank::NearbankBackend;
use pimhe_ring::{PolyBatch, Representation};
use pimhe_schemes::ckks::linear::LinearTransform;
use pimhe_schemes::ckks::polynomial::ChebyshevSeries;
use pimhe_schemes::ckks::*;
use pimhe_testkit::fused;
use pimhe_testkit::inputs::{basis, random_batch, rng};

struct Fixture {
    backend: NearbankBackend,
    ctx: Arc<CkksContext>,
    public: PublicKey,
    relin: RelinKey,
    galois: GaloisKeys,
}

impl Fixture {
    /// N = 4096, depth 4, two digits (insecure: a test size).
    fn new() -> Self {
        let params = CkksParameters::builder(4096).depth(4).scale_bits(40).dnum(2).allow_insecure().build().unwrap();
        let backend = NearbankBackend::new(Some(2)).unwrap();
        let ctx = CkksContext::new(params).unwrap();
        let mut keygen = KeyGenerator::with_sampler(&backend, &ctx, Sampler::from_seed_u64(3));
        let secret = keygen.secret_key().unwrap();
        let public = keygen.public_key(&secret).unwrap();
        let relin = keygen.relin_key(&secret).unwrap();
        let galois = keygen.galois_keys(&secret, &ctx.galois_elements(&[1, 2, 3], false)).unwrap();
        backend.take_trace();
        Self { backend, ctx, public, relin, galois }
    }

    fn encrypt(&self, count: usize) -> CiphertextBatch<NearbankBackend> {
        let encoder = Encoder::new(&self.ctx);
        let values: Vec<Complex64> = (0..8).map(|i| Complex64::new(i as f64 / 10.0, 0.0)).collect();
        let plains: Vec<_> =
            (0..count).map(|_| encoder.encode_sparse(&values, 8, self.ctx.default_scale()).unwrap()).collect();
        let mut encryptor =
            Encryptor::with_public_key(&self.backend, &self.public).unwrap().with_sampler(Sampler::from_seed_u64(4));
        let batch = encryptor.encrypt(&plains).unwrap();
        self.backend.take_trace();
        batch
    }

    fn evaluator(&self) -> Evaluator<'_, NearbankBackend> {
        Evaluator::new(&self.backend, &self.ctx)
            .with_relin_key(&self.relin)
            .unwrap()
            .with_galois_keys(&self.galois)
            .unwrap()
    }

    fn dnum(&self) -> usize {
        self.ctx.params().rlwe().dnum()
    }
}

fn opcodes(program: &Program) -> Vec<Opcode> {
    program.iter().filter_map(|k| if let Kernel::Pim(p) = k { Some(p.opcode) } else { None }).collect()
}

fn count(program: &Program, opcode: Opcode) -> usize {
    opcodes(program).iter().filter(|&&o| o == opcode).count()
}

#[test]
fn a_relinearized_product_is_a_tensor_keymult_as_paccum_and_two_moddown_tails() {
    let fixture = Fixture::new();
    let (a, b) = (fixture.encrypt(3), fixture.encrypt(3));
    let evaluator = fixture.evaluator();
    evaluator.relinearize(&evaluator.multiply(&a, &b).unwrap()).unwrap();
    let program = plan(&fixture.backend.take_trace());
    assert_eq!(count(&program, Opcode::Tensor), 1, "{program:?}");
    assert_eq!(count(&program, Opcode::PAccum(fixture.dnum())), 1, "{program:?}");
    assert_eq!(count(&program, Opcode::ModDownEp), 2, "{program:?}");
    // No product or accumulation was left unfused.
    assert_eq!(count(&program, Opcode::Mult) + count(&program, Opcode::Mac), 0, "{program:?}");
    let paccum = program.iter().find_map(|k| match k {
        Kernel::Pim(p) if matches!(p.opcode, Opcode::PAccum(_)) => Some(*p),
        _ => None,
    });
    let paccum = paccum.unwrap();
    // One instance per ciphertext, over the data and special primes of the level.
    assert_eq!(paccum.instances, 3);
    assert_eq!(paccum.limbs, fixture.ctx.params().rlwe().primes().len());
    // ModUp and ModDown keep their transforms and conversions on the GPU.
    let gpu: Vec<GpuOp> =
        program.iter().filter_map(|k| if let Kernel::Gpu(g) = k { Some(g.op) } else { None }).collect();
    assert!(gpu.contains(&GpuOp::Intt) && gpu.contains(&GpuOp::Ntt), "{gpu:?}");
    assert!(gpu.iter().any(|op| matches!(op, GpuOp::BaseConvert { .. })), "{gpu:?}");
}

#[test]
fn a_square_is_tensorsq() {
    let fixture = Fixture::new();
    let a = fixture.encrypt(2);
    fixture.evaluator().multiply(&a, &a).unwrap();
    let program = plan(&fixture.backend.take_trace());
    assert_eq!(opcodes(&program), vec![Opcode::TensorSq]);
}

#[test]
fn a_double_hoisted_linear_transforms_switched_products_are_paccum_of_its_diagonals() {
    let fixture = Fixture::new();
    let a = fixture.encrypt(1);
    // Three diagonals: baby steps 0, 1, 2 of one giant step.
    let diagonals = (0..3).map(|d| (d, vec![Complex64::new(0.5, 0.0); 8])).collect();
    let transform = LinearTransform::from_diagonals(8, diagonals).unwrap();
    let evaluator = fixture.evaluator();
    let prepared = evaluator.prepare_linear_transform(&transform, a.level()).unwrap();
    fixture.backend.take_trace();
    evaluator.apply_linear_transform(&a, &prepared).unwrap();
    let program = plan(&fixture.backend.take_trace());
    // Double hoisting: the rotated baby steps' key switches stay over the extended basis, and
    // the diagonals multiply them there as two chains sharing every factor, one PAccum(2) over
    // the level's and the special primes (besides each rotation's KeyMult); the terms no key
    // switch touched (c0 and c1 of baby step 0, c0 of the rotated ones) stay over the level's
    // primes: c0's chain of three (a Mult and two MACs) and c1's single product, with no
    // partner of their length to fuse with.
    let extended_limbs = fixture.ctx.params().rlwe().primes().len();
    let level_limbs = fixture.ctx.level_basis(a.level()).unwrap().len();
    let on = |opcode: Opcode, limbs: usize| {
        program.iter().filter(|k| matches!(k, Kernel::Pim(p) if p.opcode == opcode && p.limbs == limbs)).count()
    };
    assert_eq!((on(Opcode::Mult, level_limbs), on(Opcode::Mac, level_limbs)), (2, 2), "{program:?}");
    // Two rotations' KeyMults and the diagonals' products over the extended basis.
    assert_eq!(on(Opcode::PAccum(2), extended_limbs), 3, "{program:?}");
}

#[test]
fn a_polynomials_sums_are_caccum() {
    let fixture = Fixture::new();
    let a = fixture.encrypt(2);
    let series = ChebyshevSeries::from_coefficients(vec![0.1, 0.5, 0.25, 0.125], (-1.0, 1.0)).unwrap();
    fixture.evaluator().evaluate_polynomial(&a, &series).unwrap();
    let program = plan(&fixture.backend.take_trace());
    assert!(opcodes(&program).iter().any(|o| matches!(o, Opcode::CAccum(_))), "{:?}", opcodes(&program));
}

fn step(op: StepOp, inputs: &[u64], output: u64) -> Step {
    Step { op, inputs: inputs.to_vec(), outputs: vec![output], degree: 16, limbs: 2, polys: 1 }
}

#[test]
fn nothing_fuses_over_an_intermediate_another_step_reads() {
    // (a - b) scaled: ModDownEp; with the difference also downloaded: Sub, then CMult.
    let fused = Trace { steps: vec![step(StepOp::Sub, &[0, 1], 2), step(StepOp::MulConstant(vec![3, 4]), &[2], 3)] };
    assert_eq!(opcodes(&plan(&fused)), vec![Opcode::ModDownEp]);
    let mut read = fused.clone();
    read.steps.push(Step { op: StepOp::Download, inputs: vec![2], outputs: vec![], degree: 16, limbs: 2, polys: 1 });
    assert_eq!(opcodes(&plan(&read)), vec![Opcode::Sub, Opcode::CMult]);
    // Two product chains that share no factor are not a PAccum.
    let unrelated = Trace { steps: vec![step(StepOp::Mul, &[0, 1], 10), step(StepOp::Mul, &[2, 3], 11)] };
    assert_eq!(opcodes(&plan(&unrelated)), vec![Opcode::Mult, Opcode::Mult]);
    let shared = Trace { steps: vec![step(StepOp::Mul, &[0, 1], 10), step(StepOp::Mul, &[2, 1], 11)] };
    assert_eq!(opcodes(&plan(&shared)), vec![Opcode::PMult]);
    // A copy only an inverse NTT reads is the transform's output, no kernel of its own.
    let copied = Trace { steps: vec![step(StepOp::Copy, &[0], 1), step(StepOp::Intt, &[1], 2)] };
    assert!(plan(&copied).len() == 1 && opcodes(&plan(&copied)).is_empty());
    // A constant product added: CMAC.
    let cmac = Trace { steps: vec![step(StepOp::MulConstant(vec![5, 6]), &[0], 1), step(StepOp::Add, &[2, 1], 3)] };
    assert_eq!(opcodes(&plan(&cmac)), vec![Opcode::CMac]);
}

/// The near-bank backend's fused operations equal their definitions and the unfused sequences
/// (as every backend's must).
#[test]
fn fused_operations_equal_their_unfused_sequences() {
    let backend = NearbankBackend::new(Some(1)).unwrap();
    let mut r = rng(5);
    let basis = basis(64, &[30, 28, 25]);
    let host: Vec<PolyBatch> = (0..3).map(|_| random_batch(&mut r, &basis, 2, Representation::Ntt)).collect();
    let [a, b, c] = [0, 1, 2].map(|i| backend.upload(host[i].clone()).unwrap());
    let squared = backend.tensor_square(&a, &b).unwrap();
    let unfused = backend.tensor(&a, &b, &a, &b).unwrap();
    for (part, expected) in fused::tensor_square(&host[0], &host[1]).iter().enumerate() {
        assert_eq!(&backend.download(&squared[part]).unwrap(), expected);
        assert_eq!(backend.download(&unfused[part]).unwrap(), *expected);
    }
    let constants: [&[u64]; 2] = [&[3, 1 << 40, 7], &[11, 13, u64::MAX]];
    let sum = backend.constant_accumulate(&[(&a, constants[0]), (&c, constants[1])], Some(&[1, 2, 3])).unwrap();
    let expected = fused::constant_accumulate(&[(&host[0], constants[0]), (&host[2], constants[1])], Some(&[1, 2, 3]));
    assert_eq!(backend.download(&sum).unwrap(), expected);
    let tail = backend.mod_down_epilogue(&a, &c, constants[1]).unwrap();
    let unfused = backend.mul_limb_constants(&backend.sub(&a, &c).unwrap(), constants[1]).unwrap();
    assert_eq!(backend.download(&tail).unwrap(), fused::mod_down_epilogue(&host[0], &host[2], constants[1]));
    assert_eq!(backend.download(&tail).unwrap(), backend.download(&unfused).unwrap());
}
