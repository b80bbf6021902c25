//! CKKS parameter sets in full RNS with pimhe's primes below 2^30: the base primes that hold a
//! result at the last level, the primes of each rescaling level (one, or two whose product is
//! near the scale when the scale is larger than a prime), the special primes of hybrid key
//! switching, and the 128-bit check.

use std::fmt;

use pimhe_math::is_prime;

use crate::error::{Result, SchemeError};
use crate::rlwe::{check_degree, degree_error, RlweParameters, SecretDistribution};

/// Ring degrees CKKS supports (N/2 slots). Below 2^13 no 128-bit set has room for a useful
/// chain; those degrees serve tests and experiments with `allow_insecure`.
pub const DEGREES: [usize; 7] = [1024, 2048, 4096, 8192, 16384, 32768, 65536];

/// The largest prime pimhe's residues hold: primes are below 2^30.
const PRIME_BITS: u32 = 30;

/// The smallest scale a parameter set may have, 2^20: the noise of an encryption and of a
/// product's relinearization and rescaling reaches about N/2 units of the scale in the worst
/// slot (2^10.5 measured at N = 2^11), so 2^20 keeps about 10 bits of a value at N = 2^11,
/// fewer at larger N, and a smaller scale next to nothing.
const MIN_SCALE_BITS: u32 = 20;

/// A CKKS parameter set. Build one with [`CkksParameters::builder`] or take a
/// [`CkksParameters::preset`].
///
/// The data primes are, in order: the base primes q_0.. (their product holds the message at the
/// last level, `first_prime_bits` in all), then `depth` levels of `primes_per_level()` primes
/// each, whose product is close to 2^scale_bits. A scale of at most 29 bits takes one prime per
/// level; a larger one (up to 58 bits, as Anaheim's 2^48-2^55 scales on primes below 2^28) takes
/// two, and each rescaling drops both. Scales are tracked exactly per ciphertext, so the small
/// distance of a level's primes from 2^scale_bits costs nothing.
///
/// ```
/// use pimhe_schemes::ckks::CkksParameters;
/// let p = CkksParameters::builder(8192).depth(3).scale_bits(40).first_prime_bits(60).build().unwrap();
/// assert_eq!(p.rlwe().dnum(), 8); // one special prime: the only way 8 data primes fit 218 bits
/// assert_eq!(p.depth(), 3);
/// assert_eq!(p.primes_per_level(), 2);
/// assert_eq!(p.rlwe().data_primes().len(), 2 + 3 * 2);
/// assert!(p.rlwe().total_bits() <= 218);
/// // Depth 6 at N = 8192 exceeds the 128-bit bound...
/// assert!(CkksParameters::builder(8192).depth(6).scale_bits(40).build().is_err());
/// // ...unless explicitly allowed.
/// assert!(CkksParameters::builder(8192).depth(6).scale_bits(40).allow_insecure().build().is_ok());
/// ```
///
/// With serde (a JSON configuration), the fields are the primes' (`degree`, `data_primes`,
/// `special_primes`, `dnum`, optional `secret` and `allow_insecure`) and `depth`,
/// `scale_bits`, `base_primes`; a deserialized set is checked as the builder checks.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(into = "crate::serial::CkksFields", try_from = "crate::serial::CkksFields")]
pub struct CkksParameters {
    rlwe: RlweParameters,
    depth: usize,
    scale_bits: u32,
    base_primes: usize,
}

/// Builds [`CkksParameters`] from N, the multiplicative depth, the scale, the size of the base,
/// dnum and the secret's distribution.
#[derive(Debug, Clone)]
pub struct CkksParametersBuilder {
    degree: usize,
    depth: usize,
    scale_bits: u32,
    first_prime_bits: u32,
    dnum: Option<usize>,
    secret: SecretDistribution,
    insecure: bool,
}

impl CkksParametersBuilder {
    /// Multiplicative depth: the number of rescalings a fresh ciphertext allows (default 1).
    pub fn depth(mut self, depth: usize) -> Self {
        self.depth = depth;
        self
    }

    /// log2 of the scale, 20..=58 (default 40).
    pub fn scale_bits(mut self, bits: u32) -> Self {
        self.scale_bits = bits;
        self
    }

    /// Bits of the base modulus, which holds scale x message at the last level: at least two
    /// more than the scale, at most 90 (default 60: two primes of 30 bits). Two bits, because
    /// the last product, scale^2 x message over the base and one level, must hold a message of
    /// magnitude 1 with its sign ([`CkksParameters::MIN_SCALE`] tells the rule products keep).
    pub fn first_prime_bits(mut self, bits: u32) -> Self {
        self.first_prime_bits = bits;
        self
    }

    /// Key-switching digits (default: the fewest whose special primes fit the 128-bit bound
    /// beside the data primes: fewer digits make key switching faster).
    pub fn dnum(mut self, dnum: usize) -> Self {
        self.dnum = Some(dnum);
        self
    }

    /// The secret key's distribution (default uniform ternary).
    pub fn secret(mut self, secret: SecretDistribution) -> Self {
        self.secret = secret;
        self
    }

    /// Accept parameters below 128-bit security (tests, experiments). Never the default.
    pub fn allow_insecure(mut self) -> Self {
        self.insecure = true;
        self
    }

    /// Finds the primes and checks the set (structure and 128-bit bound).
    pub fn build(self) -> Result<CkksParameters> {
        let n = self.degree;
        check_degree(n, &DEGREES)?;
        let s = self.scale_bits;
        if !(MIN_SCALE_BITS..=2 * (PRIME_BITS - 1)).contains(&s) {
            return Err(SchemeError::InvalidParameters(format!(
                "a scale of 2^{s} is not supported; allowed 2^{MIN_SCALE_BITS}..=2^58 (one prime per level up to \
                 2^29, two above)"
            )));
        }
        if self.depth == 0 {
            return Err(SchemeError::InvalidParameters(
                "depth 0 leaves no multiplication; the depth must be at least 1".into(),
            ));
        }
        let first = self.first_prime_bits;
        if first < s + 2 || first > 3 * PRIME_BITS {
            return Err(SchemeError::InvalidParameters(format!(
                "first_prime_bits = {first} must exceed the scale's {s} bits by at least 2 (the base and one level \
                 hold the last product, scale^2 x message, which needs room for a message of magnitude 1 and its \
                 sign) and be at most {} (three primes)",
                3 * PRIME_BITS
            )));
        }
        let mut search = PrimeSearch::new(n);
        // The base: as few primes as hold `first` bits, as equal as possible.
        let base_count = first.div_ceil(PRIME_BITS) as usize;
        let mut base = (0..base_count)
            .map(|i| {
                let bits = first / base_count as u32 + u32::from((i as u32) < first % base_count as u32);
                search.largest_below(bits)
            })
            .collect::<Result<Vec<_>>>()?;
        let per_level = if s < PRIME_BITS { 1 } else { 2 };
        // The levels, last-dropped last: each level's product stays near 2^s, so the scale after
        // every rescaling stays near 2^s.
        for _ in 0..self.depth {
            if per_level == 1 {
                let p = search.nearest(2f64.powi(s as i32))?;
                search.take(u64::from(p));
                base.push(p);
            } else {
                let (low, high) = search.pair_near(s)?;
                base.extend([low, high]);
            }
        }
        let data = base;
        let data_count = data.len();
        // Special primes of 30 bits, alpha = ceil(L / dnum) of them; without a dnum, the fewest
        // digits whose special primes still fit the 128-bit bound (fewer digits, faster key
        // switching), else one digit per prime (one special prime, the most room).
        let dnums: Vec<usize> = match self.dnum {
            Some(dnum) => vec![dnum],
            None => (1..=data_count).collect(),
        };
        let mut last = None;
        for dnum in dnums {
            if dnum == 0 || dnum > data_count {
                return Err(SchemeError::InvalidParameters(format!(
                    "dnum = {dnum} key-switching digits is not possible with {data_count} data primes; allowed 1..={data_count}"
                )));
            }
            let mut search = search.clone();
            let alpha = data_count.div_ceil(dnum);
            let special = (0..alpha).map(|_| search.largest_below(PRIME_BITS)).collect::<Result<Vec<_>>>()?;
            let mut rlwe = RlweParameters::from_primes(n, data.clone(), special, dnum).with_secret(self.secret);
            if self.insecure {
                rlwe = rlwe.allow_insecure();
            }
            rlwe.check_structure(None)?;
            match rlwe.check_security() {
                Ok(()) => {
                    return Ok(CkksParameters { rlwe, depth: self.depth, scale_bits: s, base_primes: base_count })
                }
                Err(e) => last = Some(e),
            }
        }
        Err(last.expect("at least one dnum was tried"))
    }
}

impl CkksParameters {
    /// The smallest scale a plaintext or ciphertext may carry: 2^19, one bit below the smallest
    /// scale a parameter set may have (2^20, which keeps about 10 bits of a value above the
    /// noise at N = 2^11, and fewer at larger N). The bit of slack is for the legitimate drift
    /// of exactly tracked scales: a level's primes multiply to within a few hundredths of a
    /// bit of 2^scale_bits (a chain of products at 2^20 ends near 2^19.9), and polynomial
    /// evaluation keeps its powers within a factor 1.5 of the default. What it
    /// refuses loses a whole level at once: rescaling what was not multiplied (an integer
    /// `mul_const` keeps the scale and costs no level), rescaling a product twice, encoding
    /// at a scale like 1.
    ///
    /// The other bound every ciphertext keeps: its scale stays below Q_level / 2, half the
    /// modulus of its level, so that the centred range (-Q/2, Q/2) holds scale x m for a
    /// message m of magnitude 1 (products that would break it are refused; the builder's base
    /// of at least scale_bits + 2 bits keeps it for the last product of the chain).
    ///
    /// ```
    /// use pimhe_schemes::ckks::{CkksParameters, Encoder, CkksContext};
    /// assert_eq!(CkksParameters::MIN_SCALE, 2f64.powi(19));
    /// let ctx = CkksContext::new(CkksParameters::preset(8192).unwrap()).unwrap();
    /// let encoder = Encoder::new(&ctx);
    /// assert!(encoder.encode_real(&[1.0, 2.0], 1.0).unwrap_err().to_string().contains("too small"));
    /// assert!(encoder.encode_real(&[1.0, 2.0], CkksParameters::MIN_SCALE).is_ok());
    /// ```
    pub const MIN_SCALE: f64 = (1u64 << (MIN_SCALE_BITS - 1)) as f64;

    /// Refuses a scale below [`CkksParameters::MIN_SCALE`]; `what` names whose scale it is
    /// (the encoding, the rescaling's result) for the message.
    pub(crate) fn check_min_scale(&self, scale: f64, what: &str) -> Result<()> {
        if scale.is_nan() || scale < Self::MIN_SCALE {
            let shown = if scale > 0.0 { format!("2^{:.2}", scale.log2()) } else { scale.to_string() };
            return Err(SchemeError::InvalidParameters(format!(
                "{what} has scale {shown}, too small for CKKS precision: allowed scales are at least 2^{} (these \
                 parameters' scale is 2^{}); a rescaling divides the scale by about 2^{}, so rescale only a product \
                 (of ciphertexts, a plaintext or a non-integer constant; an integer mul_const keeps the scale), once",
                MIN_SCALE_BITS - 1,
                self.scale_bits,
                self.scale_bits
            )));
        }
        Ok(())
    }

    /// A builder for ring degree `degree` with the defaults: depth 1, scale 2^40, a 60-bit base,
    /// the fewest digits that fit, a ternary secret.
    pub fn builder(degree: usize) -> CkksParametersBuilder {
        CkksParametersBuilder {
            degree,
            depth: 1,
            scale_bits: 40,
            first_prime_bits: 60,
            dnum: None,
            secret: SecretDistribution::Ternary,
            insecure: false,
        }
    }

    /// The 128-bit preset of ring degree `degree` (2^13 .. 2^16), chosen as BGV's are: the
    /// deepest chain at the preset's scale has D levels with one digit per prime (dnum = L, the
    /// slowest key switching); the preset takes the fewest digits that keep at least 85% of D,
    /// and the deepest chain with those digits. `pimhe params --scheme ckks` prints the table.
    ///
    /// The scales are OpenFHE's default 2^50 (two primes near 2^25 per level), but 2^40 at
    /// N = 2^13, whose 218 bits hold two levels of 2^50 only. Scales near 2^40 are not
    /// available deep at N >= 2^14: too few NTT-friendly primes (p = 1 mod 2N) lie below 2^20.
    pub fn preset(degree: usize) -> Result<Self> {
        let scale = match PRESETS.iter().find(|&&(n, _)| n == degree) {
            Some(&(_, scale)) => scale,
            None => return Err(degree_error(degree, &PRESETS.map(|(n, _)| n))),
        };
        let build = |depth: usize, dnum: Option<usize>| {
            let builder = Self::builder(degree).depth(depth).scale_bits(scale);
            match dnum {
                Some(dnum) => builder.dnum(dnum).build(),
                None => builder.build(),
            }
        };
        // The deepest chain with any dnum, then the fewest digits that keep 85% of it.
        let deepest = (1..).take_while(|&depth| build(depth, None).is_ok()).last().ok_or_else(|| {
            SchemeError::InvalidParameters(format!("no 128-bit CKKS set of depth 1 or more exists at N = {degree}"))
        })?;
        let wanted = (deepest * 85).div_ceil(100);
        let dnum = (1..)
            .find(|&dnum| build(wanted, Some(dnum)).is_ok())
            .expect("the deepest chain's dnum keeps the wanted depth");
        let depth = (wanted..).take_while(|&depth| build(depth, Some(dnum)).is_ok()).last().expect("wanted fits");
        build(depth, Some(dnum))
    }

    /// A set from its fields (a loaded encoding's), checked as the builder checks what it
    /// builds: the degree, the scale, depth >= 1, the data primes exactly `base_primes` (1..=3)
    /// plus `depth` levels of [`CkksParameters::primes_per_level`], the structure and the
    /// 128-bit bound (unless allowed).
    pub(crate) fn from_parts(rlwe: RlweParameters, depth: usize, scale_bits: u32, base_primes: usize) -> Result<Self> {
        check_degree(rlwe.degree(), &DEGREES)?;
        if !(MIN_SCALE_BITS..=2 * (PRIME_BITS - 1)).contains(&scale_bits) {
            return Err(SchemeError::InvalidParameters(format!(
                "a scale of 2^{scale_bits} is not supported; allowed 2^{MIN_SCALE_BITS}..=2^58"
            )));
        }
        let params = Self { rlwe, depth, scale_bits, base_primes };
        let data = params.rlwe.data_primes().len();
        let expected = depth.checked_mul(params.primes_per_level()).and_then(|levels| levels.checked_add(base_primes));
        if depth == 0 || !(1..=3).contains(&base_primes) || expected != Some(data) {
            return Err(SchemeError::InvalidParameters(format!(
                "depth {depth} with {base_primes} base primes and {} prime(s) per level does not match {data} data \
                 primes; allowed depth >= 1, 1..=3 base primes, data primes = base + depth x primes per level",
                params.primes_per_level()
            )));
        }
        params.rlwe.check_structure(None)?;
        params.rlwe.check_security()?;
        Ok(params)
    }

    /// All presets, smallest first.
    pub fn presets() -> Vec<Self> {
        PRESETS.iter().map(|&(n, _)| Self::preset(n).expect("presets are valid")).collect()
    }

    /// The modulus chain and key-switching structure.
    pub fn rlwe(&self) -> &RlweParameters {
        &self.rlwe
    }

    /// Ring degree N.
    pub fn degree(&self) -> usize {
        self.rlwe.degree()
    }

    /// Number of complex slots of a full packing (N/2).
    pub fn max_slots(&self) -> usize {
        self.rlwe.degree() / 2
    }

    /// The multiplicative depth (rescalings a fresh ciphertext allows).
    pub fn depth(&self) -> usize {
        self.depth
    }

    /// log2 of the default scale.
    pub fn scale_bits(&self) -> u32 {
        self.scale_bits
    }

    /// The default scale 2^scale_bits.
    pub fn default_scale(&self) -> f64 {
        2f64.powi(self.scale_bits as i32)
    }

    /// Primes per rescaling level: 1 for scales up to 2^29, 2 above.
    pub fn primes_per_level(&self) -> usize {
        if self.scale_bits < PRIME_BITS {
            1
        } else {
            2
        }
    }

    /// Number of base primes (the primes left at the last level).
    pub fn base_primes(&self) -> usize {
        self.base_primes
    }

    /// `Some(128)` when the secret is ternary and the modulus within the standard's bound.
    pub fn security_bits(&self) -> Option<u32> {
        self.rlwe.security_bits()
    }
}

impl fmt::Display for CkksParameters {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "CKKS N={} depth={} scale=2^{} ({} prime{}/level) base={} prime{} {}",
            self.degree(),
            self.depth,
            self.scale_bits,
            self.primes_per_level(),
            if self.primes_per_level() == 1 { "" } else { "s" },
            self.base_primes,
            if self.base_primes == 1 { "" } else { "s" },
            self.rlwe
        )
    }
}

/// The presets: (N, scale bits).
const PRESETS: [(usize, u32); 4] = [(8192, 40), (16384, 50), (32768, 50), (65536, 50)];

/// NTT-friendly primes (p = 1 mod 2N, p < 2^30) for one parameter set, each handed out once.
#[derive(Clone)]
struct PrimeSearch {
    two_n: u64,
    taken: Vec<u32>,
}

impl PrimeSearch {
    fn new(n: usize) -> Self {
        Self { two_n: 2 * n as u64, taken: Vec::new() }
    }

    fn usable(&self, p: u64) -> bool {
        p > self.two_n && p < 1 << PRIME_BITS && is_prime(p) && !self.taken.contains(&(p as u32))
    }

    fn take(&mut self, p: u64) -> u32 {
        self.taken.push(p as u32);
        p as u32
    }

    fn exhausted(&self, what: String) -> SchemeError {
        SchemeError::InvalidParameters(format!(
            "not enough NTT-friendly primes (p = 1 mod 2N = {}) {what}; choose a larger scale or a smaller depth",
            self.two_n
        ))
    }

    /// The largest free prime of at most `bits` bits.
    fn largest_below(&mut self, bits: u32) -> Result<u32> {
        self.largest_below_value(2f64.powi(bits as i32))
    }

    /// The largest free prime below `limit`.
    fn largest_below_value(&mut self, limit: f64) -> Result<u32> {
        let mut k = ((limit.min((1u64 << PRIME_BITS) as f64) - 1.0) / self.two_n as f64).floor() as u64;
        while k > 0 {
            let p = k * self.two_n + 1;
            if (p as f64) < limit && self.usable(p) {
                return Ok(self.take(p));
            }
            k -= 1;
        }
        Err(self.exhausted(format!("below {limit:.3e}")))
    }

    /// The free prime nearest to `target`, below 2^30 (not taken yet).
    fn nearest(&self, target: f64) -> Result<u32> {
        let center = (target / self.two_n as f64).round().max(1.0) as u64;
        let limit = ((1u64 << PRIME_BITS) - 1) / self.two_n;
        for distance in 0..=limit {
            for k in [center.checked_add(distance), center.checked_sub(distance)].into_iter().flatten() {
                if k > 0 && k <= limit && self.usable(k * self.two_n + 1) {
                    return Ok((k * self.two_n + 1) as u32);
                }
            }
        }
        Err(self.exhausted(format!("near {target:.3e}")))
    }

    /// Two free primes whose product is nearest 2^bits: the best of a few candidates just below
    /// 2^(bits/2), each with the free prime nearest its complement.
    fn pair_near(&mut self, bits: u32) -> Result<(u32, u32)> {
        /// Candidates tried for the smaller prime: enough to find a product within a few
        /// thousandths of a bit, few enough to leave primes for the later levels.
        const CANDIDATES: usize = 8;
        let target = 2f64.powi(bits as i32);
        let mut probe = self.clone();
        let mut best: Option<(f64, u32, u32)> = None;
        for _ in 0..CANDIDATES {
            // Each call takes its candidate in the probe, so the next one is the next prime down.
            let Ok(low) = probe.largest_below_value(2f64.powf(f64::from(bits) / 2.0)) else { break };
            let Ok(high) = probe.nearest(target / f64::from(low)) else { continue };
            let distance = (f64::from(low) * f64::from(high) / target).log2().abs();
            if best.is_none_or(|(d, _, _)| distance < d) {
                best = Some((distance, low, high));
            }
        }
        let (_, low, high) = best.ok_or_else(|| self.exhausted(format!("for a level of 2^{bits}")))?;
        self.take(u64::from(low));
        self.take(u64::from(high));
        Ok((low, high))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_are_128_bit_and_as_deep_as_their_dnum_allows() {
        for params in CkksParameters::presets() {
            assert_eq!(params.security_bits(), Some(128), "{params}");
            let deeper = CkksParameters::builder(params.degree())
                .depth(params.depth() + 1)
                .scale_bits(params.scale_bits())
                .dnum(params.rlwe().dnum())
                .build();
            assert!(deeper.is_err(), "{params}: depth + 1 also passes");
        }
    }

    #[test]
    fn every_level_multiplies_to_about_the_scale() {
        for (n, scale) in [(8192, 40), (16384, 27), (32768, 50), (65536, 55)] {
            let p = CkksParameters::builder(n).depth(4).scale_bits(scale).allow_insecure().build().unwrap();
            let data = p.rlwe().data_primes();
            for level in data[p.base_primes()..].chunks(p.primes_per_level()) {
                let bits: f64 = level.iter().map(|&q| f64::from(q).log2()).sum();
                assert!((bits - f64::from(scale)).abs() < 0.05, "N = {n}: level of {bits} bits for 2^{scale}");
            }
            let primes = p.rlwe().primes();
            for (i, &q) in primes.iter().enumerate() {
                assert_eq!((q as u64 - 1) % (2 * n as u64), 0);
                assert!(!primes[..i].contains(&q));
            }
        }
    }

    #[test]
    fn bad_choices_are_refused_with_what_is_allowed() {
        let err = |b: CkksParametersBuilder| b.build().unwrap_err().to_string();
        assert!(err(CkksParameters::builder(8192).scale_bits(60)).contains("allowed 2^20..=2^58"));
        assert!(err(CkksParameters::builder(8192).depth(0)).contains("at least 1"));
        assert!(err(CkksParameters::builder(8192).first_prime_bits(40)).contains("must exceed the scale"));
        assert!(err(CkksParameters::builder(8192).dnum(0)).contains("allowed 1..="));
        assert!(err(CkksParameters::builder(3000)).contains("not supported"));
        assert!(err(CkksParameters::builder(8192).depth(9)).contains("insecure parameters"));
        let sparse = CkksParameters::builder(16384).secret(SecretDistribution::SparseTernary { hamming_weight: 192 });
        assert!(err(sparse.clone()).contains("sparse secret"), "{}", err(sparse.clone()));
        assert!(sparse.allow_insecure().build().is_ok());
    }
}
