//! BEHZ's product ([`Backend::behz_multiply`], [`Backend::behz_square`]): the CPU's fused form
//! against the composed one ([`behz::composed`], each step a batch-wide backend call, computed
//! on the scalar instruction set) on random inputs, on every instruction set this CPU has, for
//! a product, a square, and a product whose two operands are the same batches; and the
//! refusals, alike in both forms.
//!
//! The composed steps themselves are checked against big-integer oracles in
//! `pimhe-schemes` (`bfv::behz`), and the whole product against the plaintext computation by
//! the BFV tests.

use pimhe_exec::{behz, Backend, BehzPlan, CpuBackend, ExecError};
use pimhe_math::{ntt_primes, Isa};
use pimhe_ring::{PolyBatch, Representation, RingBasis};
use pimhe_testkit::inputs::{random_batch, rng};
use proptest::prelude::*;

const T: u32 = 65537;

/// A plan over `limbs` primes of `q_bits` bits for q, with `b_count` 30-bit primes in B and
/// 30-bit m_sk and m~ (so with 20-bit q primes the lifts from m_sk to q need a full
/// reduction, with 30-bit ones one conditional subtraction).
fn plan(n: usize, q_bits: u32, limbs: usize, b_count: usize) -> BehzPlan {
    let q_primes = ntt_primes(q_bits, n, limbs, &[T]).unwrap();
    let aux = ntt_primes(30, n, b_count + 2, &[q_primes.as_slice(), &[T]].concat()).unwrap();
    let q = RingBasis::new(n, &q_primes).unwrap();
    BehzPlan::new(&q, T, &aux[2..], aux[0], aux[1]).unwrap()
}

/// The fused product (or square) on every available instruction set, each compared with
/// `expected`.
fn assert_fused_everywhere(backend: &CpuBackend, plan: &BehzPlan, x: [&PolyBatch; 4], square: bool) {
    Isa::pin(Isa::Scalar).unwrap();
    let b = (!square).then_some([x[2], x[3]]);
    let expected = behz::composed(backend, plan, [x[0], x[1]], b).unwrap();
    for isa in Isa::ALL {
        if Isa::pin(isa).is_err() {
            continue;
        }
        let got = match b {
            Some(b) => backend.behz_multiply(plan, [x[0], x[1]], b).unwrap(),
            None => backend.behz_square(plan, [x[0], x[1]]).unwrap(),
        };
        assert_eq!(got, expected, "{isa}, square {square}");
        if square {
            // The same batches as both operands of a product: the inputs alias.
            assert_eq!(backend.behz_multiply(plan, [x[0], x[1]], [x[0], x[1]]).unwrap(), expected, "{isa}");
        }
    }
    Isa::pin(Isa::detected()).unwrap();
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]

    #[test]
    fn the_fused_product_is_the_composed_one_on_every_isa(
        log_n in 4usize..=10,
        q_bits in prop::sample::select(vec![20u32, 30]),
        limbs in 1usize..=4,
        b_count in 1usize..=5,
        count in 1usize..=3,
        threads in 1usize..=3,
        square in any::<bool>(),
        seed in any::<u64>(),
    ) {
        let backend = CpuBackend::new(Some(threads)).unwrap();
        let plan = plan(1 << log_n, q_bits, limbs, b_count);
        let mut rng = rng(seed);
        let x = [(); 4].map(|_| random_batch(&mut rng, plan.q(), count, Representation::Ntt));
        assert_fused_everywhere(&backend, &plan, [&x[0], &x[1], &x[2], &x[3]], square);
    }
}

#[test]
fn the_fused_product_is_the_composed_one_at_preset_sizes() {
    // BFV's presets at N = 4096 and 8192: 3 and 5 ciphertext primes, B as large as
    // `pimhe-schemes` makes it (log2 q t N + 5 bits), batches of 1 and 2 (pool and no pool).
    let backend = CpuBackend::new(Some(2)).unwrap();
    let mut rng = rng(7);
    for (n, limbs, b_count, count) in [(4096, 3, 5, 2), (8192, 5, 7, 1)] {
        let plan = plan(n, 30, limbs, b_count);
        let x = [(); 4].map(|_| random_batch(&mut rng, plan.q(), count, Representation::Ntt));
        for square in [false, true] {
            assert_fused_everywhere(&backend, &plan, [&x[0], &x[1], &x[2], &x[3]], square);
        }
    }
}

#[test]
fn misuse_is_refused_alike_by_the_fused_and_composed_products() {
    let backend = CpuBackend::new(Some(2)).unwrap();
    let plan = plan(64, 30, 2, 3);
    let mut rng = rng(8);
    let good = random_batch(&mut rng, plan.q(), 2, Representation::Ntt);
    let coefficients = random_batch(&mut rng, plan.q(), 2, Representation::Coefficient);
    let fewer = random_batch(&mut rng, plan.q(), 1, Representation::Ntt);
    let other_basis = random_batch(&mut rng, plan.bsk(), 2, Representation::Ntt);
    for bad in [&coefficients, &fewer, &other_basis] {
        for operands in [[bad, &good, &good, &good], [&good, &good, &good, bad]] {
            let fused = backend.behz_multiply(&plan, [operands[0], operands[1]], [operands[2], operands[3]]);
            let composed =
                behz::composed(&backend, &plan, [operands[0], operands[1]], Some([operands[2], operands[3]]));
            let (fused, composed) = (fused.unwrap_err(), composed.unwrap_err());
            assert_eq!(fused, composed);
        }
        if !std::ptr::eq(bad, &fewer) {
            let error = backend.behz_square(&plan, [bad, bad]).unwrap_err();
            assert!(matches!(error, ExecError::Ring(_) | ExecError::Shape { .. }), "{error}");
        }
    }
    let message = backend.behz_multiply(&plan, [&other_basis; 2], [&other_basis; 2]).unwrap_err().to_string();
    assert!(message.contains("the plan's ciphertext basis"), "{message}");
}

#[test]
fn a_plan_refuses_a_prime_used_twice() {
    let primes = ntt_primes(30, 16, 5, &[]).unwrap();
    let q = RingBasis::new(16, &primes[..2]).unwrap();
    for (b, msk, mtilde) in [(&primes[1..3], primes[3], primes[4]), (&primes[2..4], primes[3], primes[4])] {
        let message = BehzPlan::new(&q, T, b, msk, mtilde).unwrap_err().to_string();
        assert!(message.contains("used twice"), "{message}");
    }
    assert!(BehzPlan::new(&q, T, &[], primes[3], primes[4]).unwrap_err().to_string().contains("at least one prime"));
}
