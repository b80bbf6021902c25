//! Randomness for key generation and encryption, on a ChaCha20 CSPRNG.
//!
//! A [`Sampler`] is seeded from the operating system by default; tests and reproducible
//! benchmarks seed it explicitly. Every sampler here runs in time independent of the values it
//! produces: the Gaussian scans its whole table, the ternary and binomial samplers are
//! arithmetic only. Uniform residues use rejection, whose loop count depends only on discarded
//! random words, never on the kept value.

use rand_chacha::rand_core::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use zeroize::Zeroize;

use crate::error::{MathError, Result};
use crate::modular::Modulus;

/// Standard deviation of the error distribution in the HomomorphicEncryption.org standard.
pub const DEFAULT_SIGMA: f64 = 3.19;

/// A seeded ChaCha20 stream with the samplers HE needs.
///
/// ```
/// use pimhe_math::{Modulus, Sampler};
/// let mut a = Sampler::from_seed_u64(7);
/// let mut b = Sampler::from_seed_u64(7);
/// let q = Modulus::new(65537).unwrap();
/// assert_eq!(a.uniform_vec(&q, 8), b.uniform_vec(&q, 8)); // same seed, same stream
/// assert!(a.ternary(64).iter().all(|&x| (-1..=1).contains(&x)));
/// ```
pub struct Sampler {
    rng: ChaCha20Rng,
}

/// 2^32 mod q: products r q whose low half falls below it would over-represent some results.
fn lemire_threshold(q: u32) -> u32 {
    q.wrapping_neg() % q
}

/// Lemire's method on one 32-bit word r: the high half of r q, or `None` (the word is
/// rejected) when the product's low half is below `threshold`.
#[inline(always)]
fn lemire_step(word: u32, q: u32, threshold: u32) -> Option<u32> {
    let product = word as u64 * q as u64;
    ((product as u32) >= threshold).then_some((product >> 32) as u32)
}

impl Sampler {
    /// A sampler seeded with 256 bits from the operating system.
    pub fn from_os() -> Result<Self> {
        let mut seed = [0u8; 32];
        getrandom::fill(&mut seed).map_err(|e| MathError::Entropy(e.to_string()))?;
        let sampler = Self::from_seed(seed);
        seed.zeroize();
        Ok(sampler)
    }

    /// A sampler with an explicit 256-bit seed (reproducible).
    pub fn from_seed(seed: [u8; 32]) -> Self {
        Self { rng: ChaCha20Rng::from_seed(seed) }
    }

    /// A sampler seeded from a small integer: for tests and benchmarks only.
    pub fn from_seed_u64(seed: u64) -> Self {
        Self { rng: ChaCha20Rng::seed_from_u64(seed) }
    }

    /// An independent sampler seeded from this one's output: one stream per consumer (key
    /// generation, encryption, ...), all reproducible from one seed.
    ///
    /// ```
    /// use pimhe_math::Sampler;
    /// let (mut a, mut b) = (Sampler::from_seed_u64(1), Sampler::from_seed_u64(1));
    /// assert_eq!(a.fork().next_u64(), b.fork().next_u64());
    /// assert_ne!(a.fork().next_u64(), a.next_u64());
    /// ```
    pub fn fork(&mut self) -> Self {
        let mut seed = [0u8; 32];
        self.fill_bytes(&mut seed);
        let child = Self::from_seed(seed);
        seed.zeroize();
        child
    }

    /// A uniformly random 32-bit word.
    pub fn next_u32(&mut self) -> u32 {
        self.rng.next_u32()
    }

    /// A uniformly random 64-bit word.
    pub fn next_u64(&mut self) -> u64 {
        self.rng.next_u64()
    }

    /// Fills `dest` with random bytes.
    pub fn fill_bytes(&mut self, dest: &mut [u8]) {
        self.rng.fill_bytes(dest)
    }

    /// A uniform residue in [0, q) (Lemire's multiply-and-reject, unbiased).
    pub fn uniform(&mut self, q: &Modulus) -> u32 {
        self.lemire(q.value(), lemire_threshold(q.value()))
    }

    /// `len` uniform residues in [0, q).
    pub fn uniform_vec(&mut self, q: &Modulus, len: usize) -> Vec<u32> {
        let mut out = Vec::with_capacity(len);
        self.extend_uniform(q, len, &mut out);
        out
    }

    /// Appends `len` uniform residues in [0, q) to `out`: the same words of the stream and the
    /// same residues as `len` calls of [`Sampler::uniform`], with the rejection threshold (a
    /// division) computed once instead of per residue.
    pub fn extend_uniform(&mut self, q: &Modulus, len: usize, out: &mut Vec<u32>) {
        /// Words drawn from the stream at a time.
        const BLOCK: usize = 1024;
        let (q, threshold) = (q.value(), lemire_threshold(q.value()));
        out.reserve(len);
        // Words are drawn in blocks of at most the residues still missing (each residue takes
        // at least one word), so the stream is read exactly as one residue at a time reads
        // it, without the generator's per-word bookkeeping (perf put this function at about a
        // tenth of key generation's time at N = 2^16).
        let mut words = [0u8; 4 * BLOCK];
        let mut missing = len;
        while missing > 0 {
            let bytes = &mut words[..4 * missing.min(BLOCK)];
            self.rng.fill_bytes(bytes);
            for word in bytes.chunks_exact(4) {
                if let Some(residue) =
                    lemire_step(u32::from_le_bytes([word[0], word[1], word[2], word[3]]), q, threshold)
                {
                    out.push(residue);
                    missing -= 1;
                }
            }
        }
    }

    /// One residue by Lemire's method: the high half of r q for the first 32-bit word r of the
    /// stream whose product's low half is at least `threshold`.
    #[inline(always)]
    fn lemire(&mut self, q: u32, threshold: u32) -> u32 {
        loop {
            if let Some(residue) = lemire_step(self.rng.next_u32(), q, threshold) {
                return residue;
            }
        }
    }

    /// `len` values uniform in {-1, 0, 1} (the ternary secret distribution).
    pub fn ternary(&mut self, len: usize) -> Vec<i64> {
        // floor(3 r / 2^64) for a 64-bit r is uniform on {0, 1, 2} up to a 2^-64 bias.
        (0..len).map(|_| ((self.rng.next_u64() as u128 * 3) >> 64) as i64 - 1).collect()
    }

    /// `len` samples of the centered binomial distribution with parameter `eta`
    /// (variance eta/2, support [-eta, eta]).
    pub fn centered_binomial(&mut self, len: usize, eta: u32) -> Vec<i64> {
        assert!((1..=32).contains(&eta), "centered binomial needs 1 <= eta <= 32");
        let mask = if eta == 32 { u32::MAX } else { (1u32 << eta) - 1 };
        (0..len)
            .map(|_| {
                let a = self.rng.next_u32() & mask;
                let b = self.rng.next_u32() & mask;
                a.count_ones() as i64 - b.count_ones() as i64
            })
            .collect()
    }

    /// `len` samples of the discrete Gaussian with parameter `table.sigma()`.
    pub fn gaussian(&mut self, table: &GaussianTable, len: usize) -> Vec<i64> {
        (0..len).map(|_| table.sample(self.rng.next_u64())).collect()
    }
}

impl Drop for Sampler {
    /// Overwrites the ChaCha20 key and counter: a dropped sampler must not leave the state that
    /// produced secret keys and encryption randomness in memory. (rand_chacha's state does not
    /// implement `Zeroize`, so it is replaced in place with the all-zero-seed state.)
    fn drop(&mut self) {
        self.rng = ChaCha20Rng::from_seed([0u8; 32]);
        std::hint::black_box(&self.rng);
    }
}

/// Cumulative distribution table of a discrete Gaussian truncated at six sigma.
///
/// Sampling compares a uniform 64-bit word with every threshold and counts how many it passes,
/// so the time taken does not depend on the sample.
#[derive(Debug, Clone)]
pub struct GaussianTable {
    sigma: f64,
    bound: i64,
    /// thresholds[k] = 2^64 * P(X <= k - bound), for k = 0 .. 2*bound.
    thresholds: Vec<u64>,
}

impl GaussianTable {
    /// The table for standard deviation `sigma` (> 0), support [-ceil(6 sigma), ceil(6 sigma)].
    pub fn new(sigma: f64) -> Self {
        assert!(sigma > 0.0 && sigma.is_finite(), "sigma must be positive and finite");
        let bound = (6.0 * sigma).ceil() as i64;
        let weights: Vec<f64> = (-bound..=bound).map(|x| (-((x * x) as f64) / (2.0 * sigma * sigma)).exp()).collect();
        let total: f64 = weights.iter().sum();
        let mut cumulative = 0.0;
        let thresholds = weights[..weights.len() - 1]
            .iter()
            .map(|w| {
                cumulative += w / total;
                (cumulative * 2f64.powi(64)).min(u64::MAX as f64) as u64
            })
            .collect();
        Self { sigma, bound, thresholds }
    }

    /// The standard deviation.
    pub fn sigma(&self) -> f64 {
        self.sigma
    }

    /// Largest magnitude a sample can have.
    pub fn bound(&self) -> i64 {
        self.bound
    }

    fn sample(&self, uniform: u64) -> i64 {
        let passed: i64 = self.thresholds.iter().map(|&t| (uniform >= t) as i64).sum();
        passed - self.bound
    }
}

impl Default for GaussianTable {
    fn default() -> Self {
        Self::new(DEFAULT_SIGMA)
    }
}
