//! The evaluator's own operation counts: what [`super::evaluator`] ran on a context, counted as
//! it runs, so that a model of the same operations (the `ceram` crate's programs, generated
//! separately from the paper's algorithms) can be checked against a run.

use std::sync::atomic::{AtomicU64, Ordering};

/// Polynomial-level operations the evaluator has run on one context since it was made or
/// [`SpecialBfvContext::reset_op_counts`](super::SpecialBfvContext::reset_op_counts). Key
/// generation is not counted. A polynomial "over Q" has one residue per modulus of Q.
///
/// ```
/// use pimhe_math::{special::SpecialBase, Sampler};
/// use pimhe_schemes::bfv::special::*;
/// use pimhe_schemes::encoder::BatchEncoder;
/// let params = SpecialBfvParameters::new(16, 97, SpecialBase::balanced(40).unwrap(), true).unwrap().allow_insecure();
/// let ctx = SpecialBfvContext::new(params).unwrap();
/// let mut sampler = Sampler::from_seed_u64(7);
/// let secret = SecretKey::generate(&ctx, &mut sampler);
/// let public = secret.public_key(&mut sampler);
/// let plain = BatchEncoder::new(&ctx).encode(&[1, 2]).unwrap();
/// let x = encrypt(&public, &plain, &mut sampler).unwrap();
/// ctx.reset_op_counts();
/// add(&x, &x).unwrap();
/// assert_eq!(ctx.op_counts(), OpCounts { componentwise: 2, ..OpCounts::default() });
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OpCounts {
    /// Ring products over Q outside the tensor: encryption's p0 u and p1 u, decryption's
    /// products by s, relinearization's digit-key products.
    pub products_q: u64,
    /// Ring products of a multiplication's tensor over Q.
    pub tensor_products_q: u64,
    /// Ring products of a multiplication's tensor over Bsk.
    pub tensor_products_bsk: u64,
    /// Polynomials converted from Q to Bsk u {m~} and Montgomery-reduced (BEHZ's Algorithm 2,
    /// lines 2-3).
    pub extended: u64,
    /// Polynomials fast-floored from Q u Bsk to Bsk (line 5).
    pub floored: u64,
    /// Polynomials converted from Bsk to Q by Shenoy-Kumaresan (line 6).
    pub converted_to_q: u64,
    /// Relinearization digits D_i (one polynomial modulo one q_i each).
    pub digits: u64,
    /// Polynomials added or subtracted component-wise over Q (addition, subtraction).
    pub componentwise: u64,
    /// Polynomials scaled from Q to the plaintext by Algorithm 1 (decryption).
    pub scaled_to_t: u64,
}

/// One field of [`OpCounts`].
#[derive(Debug, Clone, Copy)]
pub(crate) enum Counted {
    ProductsQ,
    TensorProductsQ,
    TensorProductsBsk,
    Extended,
    Floored,
    ConvertedToQ,
    Digits,
    Componentwise,
    ScaledToT,
}

/// The running counts of a context: relaxed atomics, one increment per polynomial operation
/// (negligible beside the operation), shared by the threads evaluating on the context.
#[derive(Debug, Default)]
pub(crate) struct OpCounter([AtomicU64; 9]);

impl OpCounter {
    pub(crate) fn add(&self, what: Counted, k: usize) {
        self.0[what as usize].fetch_add(k as u64, Ordering::Relaxed);
    }

    pub(crate) fn snapshot(&self) -> OpCounts {
        let get = |what: Counted| self.0[what as usize].load(Ordering::Relaxed);
        OpCounts {
            products_q: get(Counted::ProductsQ),
            tensor_products_q: get(Counted::TensorProductsQ),
            tensor_products_bsk: get(Counted::TensorProductsBsk),
            extended: get(Counted::Extended),
            floored: get(Counted::Floored),
            converted_to_q: get(Counted::ConvertedToQ),
            digits: get(Counted::Digits),
            componentwise: get(Counted::Componentwise),
            scaled_to_t: get(Counted::ScaledToT),
        }
    }

    pub(crate) fn reset(&self) {
        for c in &self.0 {
            c.store(0, Ordering::Relaxed);
        }
    }
}
