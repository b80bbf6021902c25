//! The batch encoder: N integers mod t in, one plaintext polynomial out (and back).

use std::sync::Arc;

use crate::bgv::context::BgvContext;
use crate::error::{Result, SchemeError};

/// A plaintext polynomial: N coefficients modulo t, in coefficient form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plaintext {
    coefficients: Vec<u32>,
}

impl Plaintext {
    /// The coefficients modulo t.
    pub fn coefficients(&self) -> &[u32] {
        &self.coefficients
    }

    pub(crate) fn from_coefficients(coefficients: Vec<u32>) -> Self {
        Self { coefficients }
    }

    /// The coefficients as signed integers in (-t/2, t/2]: lifted like this, a plaintext adds
    /// the least noise.
    pub(crate) fn centered(&self, ctx: &BgvContext) -> Vec<i64> {
        let t = ctx.plain_modulus();
        self.coefficients.iter().map(|&c| t.center(c)).collect()
    }

    pub(crate) fn check(&self, ctx: &BgvContext) -> Result<()> {
        let t = ctx.plain_modulus().value();
        if self.coefficients.len() != ctx.degree() || self.coefficients.iter().any(|&c| c >= t) {
            return Err(SchemeError::ParameterMismatch(format!(
                "plaintext of {} coefficients does not belong to parameters with N={} and t={t}",
                self.coefficients.len(),
                ctx.degree()
            )));
        }
        Ok(())
    }
}

/// Packs vectors of N integers modulo t into plaintexts, slot-wise: adding or multiplying
/// plaintexts (and so ciphertexts) adds or multiplies the slots independently.
///
/// ```
/// use pimhe_schemes::bgv::{BatchEncoder, BgvContext, BgvParameters};
/// let ctx = BgvContext::new(BgvParameters::preset(4096).unwrap()).unwrap();
/// let encoder = BatchEncoder::new(&ctx);
/// let plain = encoder.encode(&[1, 2, 3]).unwrap();
/// assert_eq!(&encoder.decode(&plain).unwrap()[..4], &[1, 2, 3, 0]);
/// assert!(encoder.encode(&[65537]).is_err()); // not below t
/// let negative = encoder.encode_signed(&[-5]).unwrap();
/// assert_eq!(encoder.decode_signed(&negative).unwrap()[0], -5);
/// ```
#[derive(Debug, Clone)]
pub struct BatchEncoder {
    ctx: Arc<BgvContext>,
}

impl BatchEncoder {
    /// The encoder of a context.
    pub fn new(ctx: &Arc<BgvContext>) -> Self {
        Self { ctx: ctx.clone() }
    }

    /// Encodes up to N values, each in [0, t); missing slots are zero.
    pub fn encode(&self, values: &[u64]) -> Result<Plaintext> {
        let t = self.ctx.plain_modulus().value() as u64;
        self.check_len(values.len())?;
        if let Some((index, &value)) = values.iter().enumerate().find(|(_, &v)| v >= t) {
            return Err(SchemeError::PlaintextOverflow {
                index,
                value: value as i128,
                allowed: format!("0 <= value < t = {t}"),
            });
        }
        Ok(self.encode_reduced(values.iter().map(|&v| v as u32)))
    }

    /// Encodes up to N signed values, each in [-(t-1)/2, (t-1)/2].
    pub fn encode_signed(&self, values: &[i64]) -> Result<Plaintext> {
        let t = self.ctx.plain_modulus();
        let half = (t.value() as i64 - 1) / 2;
        self.check_len(values.len())?;
        if let Some((index, &value)) = values.iter().enumerate().find(|(_, &v)| !(-half..=half).contains(&v)) {
            return Err(SchemeError::PlaintextOverflow {
                index,
                value: value as i128,
                allowed: format!("{} <= value <= {half} (t = {})", -half, t.value()),
            });
        }
        Ok(self.encode_reduced(values.iter().map(|&v| t.reduce_i64(v))))
    }

    /// Decodes the N slot values, each in [0, t).
    pub fn decode(&self, plain: &Plaintext) -> Result<Vec<u64>> {
        plain.check(&self.ctx)?;
        let mut evaluations = plain.coefficients.clone();
        self.ctx.plain_table().forward(&mut evaluations);
        Ok(self.ctx.slot_positions().iter().map(|&p| evaluations[p] as u64).collect())
    }

    /// Decodes the N slot values as signed integers in (-t/2, t/2].
    pub fn decode_signed(&self, plain: &Plaintext) -> Result<Vec<i64>> {
        let t = self.ctx.plain_modulus();
        Ok(self.decode(plain)?.into_iter().map(|v| t.center(v as u32)).collect())
    }

    fn check_len(&self, len: usize) -> Result<()> {
        if len > self.ctx.slots() {
            return Err(SchemeError::TooManyValues { len, slots: self.ctx.slots() });
        }
        Ok(())
    }

    fn encode_reduced(&self, values: impl Iterator<Item = u32>) -> Plaintext {
        let mut evaluations = vec![0u32; self.ctx.degree()];
        for (&position, value) in self.ctx.slot_positions().iter().zip(values) {
            evaluations[position] = value;
        }
        self.ctx.plain_table().inverse(&mut evaluations);
        Plaintext::from_coefficients(evaluations)
    }
}
