//! The batch encoder: N integers mod t in, one plaintext polynomial out (and back). Shared by
//! every scheme with an integer plaintext space `Z_t[X]/(X^N + 1)` (BGV and BFV): they differ in
//! how a plaintext enters a ciphertext, not in how slots map to coefficients.

use std::sync::Arc;

use pimhe_math::{bit_reverse, Modulus, NttTable};

use crate::error::{Result, SchemeError};
use crate::rlwe::RlweScheme;

/// The plaintext space of a parameter set: t, the NTT table modulo t and where each slot sits
/// in the (bit-reversed) NTT vector. Built once per context.
#[derive(Debug)]
pub struct PlainSpace {
    plain: Modulus,
    table: NttTable,
    slot_positions: Vec<usize>,
}

impl PlainSpace {
    /// The space of degree `n` modulo `t` (a prime with t = 1 mod 2n, checked by the parameters).
    pub(crate) fn new(n: usize, t: u32) -> Result<Arc<Self>> {
        let plain = Modulus::new(t as u64)?;
        let table = NttTable::new(plain, n)?;
        Ok(Arc::new(Self { plain, table, slot_positions: slot_positions(n) }))
    }

    /// The plaintext modulus t.
    pub fn modulus(&self) -> &Modulus {
        &self.plain
    }

    /// Ring degree N (also the number of slots).
    pub fn degree(&self) -> usize {
        self.slot_positions.len()
    }
}

/// A scheme context with an integer plaintext space, so one [`BatchEncoder`] serves them all.
pub trait PlainContext {
    /// The plaintext space of the context's parameters.
    fn plain_space(&self) -> &Arc<PlainSpace>;
}

/// An exact scheme on the integer plaintext space (BGV, BFV): decryption is exact while the
/// noise stays under a budget ([`crate::rlwe::Decryptor::noise_budget`]), and a plaintext
/// modulus t is a choice of the parameters, which code generic over these schemes (the
/// statistics, which pick t for the size of their results) makes through this trait.
///
/// ```
/// use pimhe_schemes::bfv::BfvContext;
/// use pimhe_schemes::bgv::BgvContext;
/// use pimhe_schemes::encoder::ExactScheme;
/// use pimhe_schemes::rlwe::RlweScheme;
///
/// /// The context of the preset of `n` with the largest plaintext modulus it allows (a prime
/// /// t = 1 mod 2n, so that slots can be packed).
/// fn widest<S: ExactScheme>(n: usize) -> std::sync::Arc<S> {
///     let t = pimhe_math::ntt_primes(S::max_plain_bits(n).unwrap(), n, 1, &[]).unwrap()[0];
///     S::from_params(S::preset_with_plain_modulus(n, t).unwrap()).unwrap()
/// }
/// let (bgv, bfv) = (widest::<BgvContext>(4096), widest::<BfvContext>(4096));
/// assert_eq!(bgv.plain_modulus().value(), bfv.plain_modulus().value());
/// assert_eq!(bgv.plain_modulus().value().ilog2() + 1, BgvContext::max_plain_bits(4096).unwrap());
/// // One bit more is refused.
/// let above = pimhe_math::ntt_primes(BgvContext::max_plain_bits(4096).unwrap() + 1, 4096, 1, &[]).unwrap()[0];
/// assert!(BgvContext::preset_with_plain_modulus(4096, above).and_then(BgvContext::from_params).is_err());
/// ```
pub trait ExactScheme: RlweScheme<Plaintext = Plaintext> + PlainContext {
    /// The parameters of the 128-bit preset of ring degree `n` with plaintext modulus `t`
    /// instead of the preset's: primes of the preset's sizes (and its dnum), searched anew so
    /// that none is t. Validated when the context is made ([`RlweScheme::from_params`]).
    fn preset_with_plain_modulus(n: usize, t: u32) -> Result<Self::Params>;

    /// The largest size, in bits, of a plaintext modulus t that
    /// [`ExactScheme::preset_with_plain_modulus`] accepts for the preset of `n`.
    fn max_plain_bits(n: usize) -> Result<u32>;
}

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
    pub(crate) fn centered(&self, space: &PlainSpace) -> Vec<i64> {
        let t = space.modulus();
        self.coefficients.iter().map(|&c| t.center(c)).collect()
    }

    pub(crate) fn check(&self, space: &PlainSpace) -> Result<()> {
        let t = space.modulus().value();
        if self.coefficients.len() != space.degree() || self.coefficients.iter().any(|&c| c >= t) {
            return Err(SchemeError::ParameterMismatch(format!(
                "plaintext of {} coefficients does not belong to parameters with N={} and t={t}",
                self.coefficients.len(),
                space.degree()
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
    space: Arc<PlainSpace>,
}

impl BatchEncoder {
    /// The encoder of a context (BGV's or BFV's).
    pub fn new<C: PlainContext>(ctx: &Arc<C>) -> Self {
        Self { space: ctx.plain_space().clone() }
    }

    /// Encodes up to N values, each in [0, t); missing slots are zero.
    pub fn encode(&self, values: &[u64]) -> Result<Plaintext> {
        let t = self.space.modulus().value() as u64;
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
        let t = self.space.modulus();
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
        plain.check(&self.space)?;
        let mut evaluations = plain.coefficients.clone();
        self.space.table.forward(&mut evaluations);
        Ok(self.space.slot_positions.iter().map(|&p| evaluations[p] as u64).collect())
    }

    /// Decodes the N slot values as signed integers in (-t/2, t/2].
    pub fn decode_signed(&self, plain: &Plaintext) -> Result<Vec<i64>> {
        let t = self.space.modulus();
        Ok(self.decode(plain)?.into_iter().map(|v| t.center(v as u32)).collect())
    }

    fn check_len(&self, len: usize) -> Result<()> {
        if len > self.space.degree() {
            return Err(SchemeError::TooManyValues { len, slots: self.space.degree() });
        }
        Ok(())
    }

    fn encode_reduced(&self, values: impl Iterator<Item = u32>) -> Plaintext {
        let mut evaluations = vec![0u32; self.space.degree()];
        for (&position, value) in self.space.slot_positions.iter().zip(values) {
            evaluations[position] = value;
        }
        self.space.table.inverse(&mut evaluations);
        Plaintext::from_coefficients(evaluations)
    }
}

/// Position in the (bit-reversed) NTT vector mod t of each slot, in SEAL's 2 x N/2 layout:
/// slot i of row 0 is the evaluation at psi^(3^i), slot i of row 1 at psi^(-3^i). The Galois
/// automorphism X -> X^3 then rotates both rows by one, which is what rotations will use.
fn slot_positions(n: usize) -> Vec<usize> {
    let log_n = n.trailing_zeros();
    let two_n = 2 * n;
    let mut positions = vec![0; n];
    let mut power = 1usize; // 3^i mod 2N
    for i in 0..n / 2 {
        positions[i] = bit_reverse((power - 1) / 2, log_n);
        positions[n / 2 + i] = bit_reverse((two_n - power - 1) / 2, log_n);
        power = power * 3 % two_n;
    }
    positions
}
