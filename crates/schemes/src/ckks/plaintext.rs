//! CKKS plaintexts: vectors of real or complex numbers encoded at a scale, their upload to a
//! level's primes, and decryption back to them.

use std::sync::Arc;

use num_complex::Complex64;
use pimhe_exec::Backend;
use pimhe_ring::{PolyBatch, RingBasis};

use crate::ckks::context::{CkksContext, CkksTag};
use crate::ckks::encoder::to_poly_batch;
use crate::ckks::precision::{precision, PrecisionStats};
use crate::error::{Result, SchemeError};
use crate::rlwe::{CiphertextBatch, Decryptor};

/// An encoded vector: the integer coefficients of round(scale x the canonical embedding's
/// inverse), with the scale and the slot count they were made for. Decryption gives one back
/// (the coefficients of the phase).
#[derive(Debug, Clone, PartialEq)]
pub struct CkksPlaintext {
    coefficients: Vec<i128>,
    scale: f64,
    slots: usize,
}

impl CkksPlaintext {
    /// The integer coefficients.
    pub fn coefficients(&self) -> &[i128] {
        &self.coefficients
    }

    /// The scale the values are multiplied by.
    pub fn scale(&self) -> f64 {
        self.scale
    }

    /// Number of slots.
    pub fn slots(&self) -> usize {
        self.slots
    }

    pub(crate) fn tag(&self) -> CkksTag {
        CkksTag { scale: self.scale, slots: self.slots }
    }
}

/// Encodes vectors into [`CkksPlaintext`]s and decodes them back, for one context.
///
/// ```
/// use pimhe_schemes::ckks::{CkksContext, CkksParameters, Encoder};
/// let ctx = CkksContext::new(CkksParameters::preset(8192).unwrap()).unwrap();
/// let encoder = Encoder::new(&ctx);
/// let plain = encoder.encode_real(&[0.5, -1.25, 3.0], ctx.default_scale()).unwrap();
/// assert_eq!(plain.slots(), 4096);
/// let back = encoder.decode_real(&plain).unwrap();
/// assert!((back[1] + 1.25).abs() < 1e-9 && back[3].abs() < 1e-9);
/// ```
pub struct Encoder {
    ctx: Arc<CkksContext>,
}

impl Encoder {
    /// An encoder for `ctx`.
    pub fn new(ctx: &Arc<CkksContext>) -> Self {
        Self { ctx: ctx.clone() }
    }

    /// Complex values into a full packing (N/2 slots; missing values are 0) at `scale`.
    pub fn encode(&self, values: &[Complex64], scale: f64) -> Result<CkksPlaintext> {
        self.encode_sparse(values, self.ctx.max_slots(), scale)
    }

    /// Real values into a full packing at `scale`.
    pub fn encode_real(&self, values: &[f64], scale: f64) -> Result<CkksPlaintext> {
        let complex: Vec<Complex64> = values.iter().map(|&x| Complex64::new(x, 0.0)).collect();
        self.encode(&complex, scale)
    }

    /// Complex values into `slots` slots (a power of two up to N/2: sparse packing, whose
    /// rotations act on the `slots`-vector). Refuses a scale below
    /// [`crate::ckks::CkksParameters::MIN_SCALE`], which would leave the values no precision.
    pub fn encode_sparse(&self, values: &[Complex64], slots: usize, scale: f64) -> Result<CkksPlaintext> {
        self.ctx.params().check_min_scale(scale, "the encoding")?;
        let coefficients = self.ctx.encoder().encode(values, slots, scale)?;
        Ok(CkksPlaintext { coefficients, scale, slots })
    }

    /// The slot values of a plaintext (divided by its scale).
    pub fn decode(&self, plain: &CkksPlaintext) -> Result<Vec<Complex64>> {
        let coefficients: Vec<f64> = plain.coefficients.iter().map(|&c| c as f64).collect();
        self.ctx.encoder().decode(&coefficients, plain.slots, plain.scale)
    }

    /// The real parts of [`Encoder::decode`].
    pub fn decode_real(&self, plain: &CkksPlaintext) -> Result<Vec<f64>> {
        Ok(self.decode(plain)?.into_iter().map(|z| z.re).collect())
    }

    /// Decodes `plain` and measures it against the values it should hold: the bits of precision
    /// as OpenFHE and Lattigo report them.
    pub fn precision(&self, plain: &CkksPlaintext, expected: &[Complex64]) -> Result<PrecisionStats> {
        let decoded = self.decode(plain)?;
        if expected.len() > decoded.len() {
            return Err(SchemeError::TooManyValues { len: expected.len(), slots: decoded.len() });
        }
        Ok(precision(&decoded[..expected.len()], expected))
    }
}

/// The plaintexts (one, or one per ciphertext of a batch) over `basis` in NTT form on the
/// device, after checking each was encoded for this context's degree.
pub(crate) fn upload_plaintexts<B: Backend>(
    backend: &B,
    ctx: &CkksContext,
    plains: &[CkksPlaintext],
    basis: &Arc<RingBasis>,
) -> Result<B::Buffer> {
    if let Some(index) = plains.iter().position(|p| p.coefficients.len() != ctx.degree()) {
        return Err(SchemeError::InvalidParameters(format!(
            "plaintext {index} has {} coefficients; this context's ring degree is {}",
            plains[index].coefficients.len(),
            ctx.degree()
        )));
    }
    let coefficients: Vec<&[i128]> = plains.iter().map(|p| p.coefficients.as_slice()).collect();
    let mut buffer = backend.upload(to_poly_batch(&coefficients, basis)?)?;
    backend.ntt(&mut buffer)?;
    Ok(buffer)
}

/// The phase of every ciphertext, read as centred integers (exact CRT to f64, word arithmetic
/// only), with the batch's scale and slots. The phase is wiped on the device and the host.
pub(crate) fn decrypt<B: Backend>(
    decryptor: &Decryptor<'_, B, CkksContext>,
    batch: &CiphertextBatch<B, CkksContext>,
) -> Result<Vec<CkksPlaintext>> {
    let v = decryptor.phase_on_host(batch)?;
    let crt = decryptor.context().crt(batch.level())?;
    let (n, count) = (v.degree(), batch.count());
    let mut values = zeroize::Zeroizing::new(vec![0f64; count * n]);
    // Blocks of coefficients of one ciphertext each, spread over the backend's threads: the CRT
    // streams over each limb's slice of the block.
    let threads = decryptor.backend.threads().max(1);
    // A power of two at most N (itself one), so blocks tile every ciphertext exactly.
    let share = (count * n).div_ceil(threads);
    let block = (1usize << (usize::BITS - 1 - share.leading_zeros())).min(n);
    let v: &PolyBatch = &v;
    let convert = |k: usize, out: &mut [f64]| {
        // A block never straddles two ciphertexts: the block divides N.
        let (index, start) = ((k * block) / n, (k * block) % n);
        let limbs: Vec<&[u32]> =
            (0..v.basis().len()).map(|limb| &v.poly_limb(limb, index)[start..start + out.len()]).collect();
        crt.centered_into(&limbs, out)
    };
    let mut blocks = values.chunks_mut(block).enumerate();
    let first = blocks.next();
    std::thread::scope(|scope| -> Result<()> {
        let workers: Vec<_> = blocks.map(|(k, out)| scope.spawn(move || convert(k, out))).collect();
        // The first block on this thread: one thread fewer to start (a single block, batch 1
        // on one thread, starts none).
        let own = first.map_or(Ok(()), |(k, out)| convert(k, out));
        for worker in workers {
            worker.join().expect("a decryption thread panicked")?;
        }
        Ok(own?)
    })?;
    let tag = batch.tag();
    Ok(values
        .chunks(n)
        .map(|phase| CkksPlaintext {
            coefficients: phase.iter().map(|&x| x.round() as i128).collect(),
            scale: tag.scale,
            slots: tag.slots,
        })
        .collect())
}

/// A plaintext made of given coefficients (constants and diagonals built in place).
pub(crate) fn from_coefficients(coefficients: Vec<i128>, scale: f64, slots: usize) -> CkksPlaintext {
    CkksPlaintext { coefficients, scale, slots }
}
