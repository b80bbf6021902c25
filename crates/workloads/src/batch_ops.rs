//! Element-wise operations over a large ciphertext set, one shard at a time (what
//! `pimhe.distributed.batch_map` runs on Ray): a worker receives the parameters and one public
//! evaluation key once, and per shard the serialized ciphertext batch (or two, for a product),
//! and returns the serialized result. Each shard is computed on its own, so a worker holds one
//! shard's ciphertexts at a time, and the results are the one-process ones bit for bit (the
//! operations are deterministic: no randomness on the server's side).

use std::sync::Arc;

use pimhe_exec::Backend;
use pimhe_schemes::bfv::{BfvContext, BfvParameters};
use pimhe_schemes::bgv::{BgvContext, BgvParameters};
use pimhe_schemes::ckks::{CkksContext, CkksParameters};
use pimhe_schemes::rlwe::{CiphertextBatch, Evaluator, GaloisKeys, RelinKey};
use pimhe_schemes::serial::{SerialScheme, HEADER_LEN};
use pimhe_schemes::SchemeError;

/// The header byte that names the scheme of an encoding.
const SCHEME_BYTE: usize = 8;

/// An element-wise operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BatchOp {
    /// `a[i] * b[i]`, relinearized (the key: a relinearization key).
    MultiplyRelinearize,
    /// The automorphism `X -> X^k` of every ciphertext (a rotation; the key: Galois keys that
    /// hold `k`).
    Automorphism(usize),
}

impl BatchOp {
    /// `multiply` (needs no element) or `rotate` with a Galois element.
    pub fn parse(name: &str, element: Option<usize>) -> Result<Self, SchemeError> {
        match (name, element) {
            ("multiply", None) => Ok(BatchOp::MultiplyRelinearize),
            ("rotate", Some(k)) => Ok(BatchOp::Automorphism(k)),
            ("rotate", None) => Err(SchemeError::InvalidParameters("rotate needs a Galois element".into())),
            ("multiply", Some(_)) => Err(SchemeError::InvalidParameters("multiply takes no Galois element".into())),
            (other, _) => Err(SchemeError::InvalidParameters(format!("operation '{other}': allowed multiply, rotate"))),
        }
    }

    /// How many input batches a shard of this operation holds.
    pub fn inputs(self) -> usize {
        match self {
            BatchOp::MultiplyRelinearize => 2,
            BatchOp::Automorphism(_) => 1,
        }
    }
}

/// One shard: `op` on the batches `inputs` (each [`CiphertextBatch::to_bytes`]; two of the same
/// count for a product) with the parameters `params` (their binary encoding, of any scheme) and
/// the evaluation key `key` (the relinearization key or the Galois keys, full or compressed),
/// on `backend`; the result's bytes.
pub fn apply_shard<B: Backend>(
    backend: &B,
    params: &[u8],
    key: &[u8],
    op: BatchOp,
    inputs: &[&[u8]],
) -> Result<Vec<u8>, SchemeError> {
    if inputs.len() != op.inputs() {
        return Err(SchemeError::InvalidParameters(format!(
            "{op:?} takes {} input batches per shard; {} given",
            op.inputs(),
            inputs.len()
        )));
    }
    let scheme = params.get(SCHEME_BYTE).copied().filter(|_| params.len() >= HEADER_LEN);
    match scheme {
        Some(BfvContext::SCHEME_ID) => {
            apply::<BfvContext, B>(backend, BfvContext::new(BfvParameters::from_bytes(params)?)?, key, op, inputs)
        }
        Some(CkksContext::SCHEME_ID) => {
            apply::<CkksContext, B>(backend, CkksContext::new(CkksParameters::from_bytes(params)?)?, key, op, inputs)
        }
        // BGV's loader also reports what is wrong with anything else.
        _ => apply::<BgvContext, B>(backend, BgvContext::new(BgvParameters::from_bytes(params)?)?, key, op, inputs),
    }
}

fn apply<S: SerialScheme, B: Backend>(
    backend: &B,
    ctx: Arc<S>,
    key: &[u8],
    op: BatchOp,
    inputs: &[&[u8]],
) -> Result<Vec<u8>, SchemeError> {
    let batches = inputs
        .iter()
        .map(|bytes| CiphertextBatch::<B, S>::from_bytes(backend, &ctx, bytes))
        .collect::<Result<Vec<_>, _>>()?;
    let evaluator = Evaluator::new(backend, &ctx);
    let result = match op {
        BatchOp::MultiplyRelinearize => {
            let evaluator = evaluator.with_relin_key(&RelinKey::from_bytes(&ctx, key)?)?;
            if batches[0].count() != batches[1].count() {
                return Err(SchemeError::InvalidParameters(format!(
                    "a product of batches of {} and {} ciphertexts",
                    batches[0].count(),
                    batches[1].count()
                )));
            }
            evaluator.relinearize(&evaluator.multiply(&batches[0], &batches[1])?)?
        }
        BatchOp::Automorphism(k) => {
            let evaluator = evaluator.with_galois_keys(&GaloisKeys::from_bytes(&ctx, key)?)?;
            if !evaluator.has_galois_key(k) {
                return Err(SchemeError::InvalidParameters(format!("the Galois keys hold no key for element {k}")));
            }
            evaluator.automorphism(&batches[0], k)?
        }
    };
    result.to_bytes(backend)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pimhe_exec::CpuBackend;
    use pimhe_math::Sampler;
    use pimhe_schemes::encoder::{BatchEncoder, ExactScheme};
    use pimhe_schemes::rlwe::{Encryptor, KeyGenerator, RlweScheme};

    #[test]
    fn shards_give_the_one_process_ciphertexts_bit_for_bit() {
        let cpu = CpuBackend::new(Some(1)).unwrap();
        let ctx = BgvContext::from_params(BgvContext::preset_with_plain_modulus(4096, 65537).unwrap()).unwrap();
        let mut keygen = KeyGenerator::with_sampler(&cpu, &ctx, Sampler::from_seed_u64(1));
        let secret = keygen.secret_key().unwrap();
        let public = keygen.public_key(&secret).unwrap();
        let relin = keygen.relin_key(&secret).unwrap();
        let galois = keygen.galois_keys(&secret, &[3]).unwrap();
        let encoder = BatchEncoder::new(&ctx);
        let plains: Vec<_> = (0..5u64).map(|i| encoder.encode(&[i, i + 1, 7]).unwrap()).collect();
        let mut encryptor = Encryptor::with_public_key(&cpu, &public).unwrap().with_sampler(Sampler::from_seed_u64(2));
        let (a, b) = (encryptor.encrypt(&plains).unwrap(), encryptor.encrypt(&plains).unwrap());
        let params = ctx.params().to_bytes();
        let (relin_bytes, galois_bytes) = (relin.to_bytes(), galois.to_bytes());

        let evaluator = Evaluator::new(&cpu, &ctx).with_relin_key(&relin).unwrap().with_galois_keys(&galois).unwrap();
        let product = evaluator.relinearize(&evaluator.multiply(&a, &b).unwrap()).unwrap().to_bytes(&cpu).unwrap();
        let rotated = evaluator.automorphism(&a, 3).unwrap().to_bytes(&cpu).unwrap();
        let (a, b) = (a.to_bytes(&cpu).unwrap(), b.to_bytes(&cpu).unwrap());
        let op = BatchOp::parse("multiply", None).unwrap();
        assert_eq!(apply_shard(&cpu, &params, &relin_bytes, op, &[&a, &b]).unwrap(), product);
        let op = BatchOp::parse("rotate", Some(3)).unwrap();
        assert_eq!(apply_shard(&cpu, &params, &galois_bytes, op, &[&a]).unwrap(), rotated);
        // Refusals: a missing element, a wrong arity, an unknown operation.
        let message = apply_shard(&cpu, &params, &galois_bytes, BatchOp::Automorphism(5), &[&a]).unwrap_err();
        assert!(message.to_string().contains("no key for element 5"), "{message}");
        assert!(apply_shard(&cpu, &params, &relin_bytes, BatchOp::MultiplyRelinearize, &[&a]).is_err());
        assert!(BatchOp::parse("divide", None).is_err());
    }
}
