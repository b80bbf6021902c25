//! The ciphertext products of a CKKS polynomial evaluation, counted from the near-bank
//! backend's trace of the operations it ran: the degree-31 sigmoid on [-8, 8] takes 12 in its
//! least depth (the leading quotients split again) and 10 with one level more
//! (`Evaluator::evaluate_polynomial_in_levels`), the numbers its documentation gives.

use num_complex::Complex64;
use pimhe_nearbank::trace::StepOp;
use pimhe_nearbank::NearbankBackend;
use pimhe_schemes::ckks::polynomial::ChebyshevSeries;
use pimhe_schemes::ckks::*;

/// The ciphertext products among the steps `backend` recorded since its last take.
fn products(backend: &NearbankBackend) -> usize {
    let steps = backend.take_trace().steps;
    steps.iter().filter(|s| matches!(s.op, StepOp::Tensor | StepOp::TensorSquare)).count()
}

#[test]
fn a_spare_level_saves_the_sigmoid_two_products() {
    let backend = NearbankBackend::new(Some(2)).unwrap();
    let params = CkksParameters::builder(2048).depth(8).scale_bits(40).allow_insecure().build().unwrap();
    let ctx = CkksContext::new(params).unwrap();
    let mut keygen = KeyGenerator::new(&backend, &ctx).unwrap();
    let secret = keygen.secret_key().unwrap();
    let relin = keygen.relin_key(&secret).unwrap();
    let values: Vec<Complex64> = (0..8).map(|i| Complex64::new(i as f64 - 4.0, 0.0)).collect();
    let plain = Encoder::new(&ctx).encode(&values, ctx.default_scale()).unwrap();
    let x = Encryptor::with_secret_key(&backend, &secret).unwrap().encrypt(&[plain]).unwrap();
    let evaluator = Evaluator::new(&backend, &ctx).with_relin_key(&relin).unwrap();
    let sigmoid = ChebyshevSeries::sigmoid((-8.0, 8.0), 31).unwrap();
    products(&backend);

    evaluator.evaluate_polynomial(&x, &sigmoid).unwrap();
    let least = products(&backend);
    evaluator.evaluate_polynomial_in_levels(&x, &sigmoid, sigmoid.depth() + 1).unwrap();
    let spared = products(&backend);
    // The powers T_2, T_3, T_4, T_5, T_7, T_8, T_16 (the even coefficients vanish, so T_6 is
    // never made), then the products q T_M: 5 in the least depth, 3 with the spare level.
    assert_eq!((least, spared), (12, 10));
}
